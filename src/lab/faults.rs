//! Faults added in the page: each a short spec that travels in the page's address
//! (`faults=crash:c2@63153,stall:c1@90000/10000`), so a shared link reproduces the edited
//! scenario, and that becomes an ordinary `[[timeline]]` entry of the scenario's text (a join
//! also a `[[members]]` entry): the scenario the lab runs is a file `cgsim run` runs the same.
//!
//! A spec is `KIND:TARGET@AT_MS`, with `/DURATION_MS` for the kinds that last:
//!
//! | spec | timeline entry |
//! |---|---|
//! | `crash:c2@T`, `leave:c2@T`, `restart:c2@T` | `action = "crash"` (`leave`, `restart`), `member = "c2"` |
//! | `join:c6@T` | a new member `c6` (the last `[[members]]` entry's settings, dynamic), `action = "join"` |
//! | `stall:c1@T/D` | `action = "stall"`, `member`, `duration_ms = D` |
//! | `broker_crash:1@T`, `broker_restart:1@T` | `action = "broker_crash"` (`broker_restart`), `broker = 1` |
//! | `network_partition:c1@T/D` | `action = "network_partition"`, `members = ["c1"]`, `brokers = "coordinator"`, `duration_ms = D` |
//! | `latency_spike:200@T/D` | `action = "latency_spike"`, `latency_ms = 200`, `duration_ms = D` |

use super::limits::MAX_FAULTS;
use crate::scenario::timeline::{Action, Entry};
use crate::scenario::{BrokerRef, BrokerSet, Connections};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Crash,
    Leave,
    Restart,
    Join,
    Stall,
    BrokerCrash,
    BrokerRestart,
    NetworkPartition,
    LatencySpike,
}

impl Kind {
    pub const ALL: [Kind; 9] = [
        Kind::Crash,
        Kind::Leave,
        Kind::Restart,
        Kind::Join,
        Kind::Stall,
        Kind::BrokerCrash,
        Kind::BrokerRestart,
        Kind::NetworkPartition,
        Kind::LatencySpike,
    ];

    /// The timeline action's name, which is also the spec's.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Crash => "crash",
            Kind::Leave => "leave",
            Kind::Restart => "restart",
            Kind::Join => "join",
            Kind::Stall => "stall",
            Kind::BrokerCrash => "broker_crash",
            Kind::BrokerRestart => "broker_restart",
            Kind::NetworkPartition => "network_partition",
            Kind::LatencySpike => "latency_spike",
        }
    }

    fn lasts(self) -> bool {
        matches!(
            self,
            Kind::Stall | Kind::NetworkPartition | Kind::LatencySpike
        )
    }

    fn names_a_member(self) -> bool {
        matches!(
            self,
            Kind::Crash
                | Kind::Leave
                | Kind::Restart
                | Kind::Join
                | Kind::Stall
                | Kind::NetworkPartition
        )
    }
}

/// One fault added in the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: Kind,
    /// A member's name, a broker id, or (a latency spike) the added latency in ms.
    pub target: String,
    pub at_ms: u64,
    pub duration_ms: Option<u64>,
}

impl fmt::Display for Fault {
    /// The spec, as the address carries it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}@{}", self.kind.name(), self.target, self.at_ms)?;
        if let Some(d) = self.duration_ms {
            write!(f, "/{d}")?;
        }
        Ok(())
    }
}

impl Fault {
    pub fn parse(text: &str) -> Result<Fault, String> {
        let shape = || {
            format!(
                "fault {text:?}: expected KIND:TARGET@AT_MS (and /DURATION_MS for stall, network_partition, latency_spike), \
                 like crash:c2@63000 or stall:c1@90000/10000; KIND is one of {}",
                Kind::ALL.map(Kind::name).join(", ")
            )
        };
        let (head, when) = text.split_once('@').ok_or_else(shape)?;
        let (kind, target) = head.split_once(':').ok_or_else(shape)?;
        let kind = Kind::ALL
            .into_iter()
            .find(|k| k.name() == kind)
            .ok_or_else(shape)?;
        let number = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("fault {text:?}: {what} {s:?} is not a whole number"))
        };
        let (at, duration) = match when.split_once('/') {
            Some((at, d)) => (at, Some(number(d, "the duration")?)),
            None => (when, None),
        };
        let at_ms = number(at, "the time")?;
        match (kind.lasts(), duration) {
            (true, None) => {
                return Err(format!(
                    "fault {text:?}: {} needs a duration: {}:{target}@{at_ms}/DURATION_MS",
                    kind.name(),
                    kind.name()
                ))
            }
            (true, Some(0)) => return Err(format!("fault {text:?}: the duration must be above 0")),
            (false, Some(_)) => {
                return Err(format!("fault {text:?}: {} takes no duration", kind.name()))
            }
            _ => {}
        }
        let target_ok = !target.is_empty()
            && target.len() <= 100
            && target
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !target_ok {
            return Err(format!(
                "fault {text:?}: the target {target:?} must be a member name, a broker id or a latency"
            ));
        }
        if !kind.names_a_member() {
            number(target, "the target")?;
        }
        Ok(Fault {
            kind,
            target: target.to_string(),
            at_ms,
            duration_ms: duration,
        })
    }

    /// The timeline entry it adds.
    pub fn entry(&self) -> Entry {
        let member = || self.target.clone();
        let number = || self.target.parse::<u64>().expect("checked by parse");
        let duration_ms = self.duration_ms.unwrap_or(0);
        let action = match self.kind {
            Kind::Crash => Action::Crash { member: member() },
            Kind::Leave => Action::Leave { member: member() },
            Kind::Restart => Action::Restart {
                member: member(),
                set: Vec::new(),
            },
            Kind::Join => Action::Join { member: member() },
            Kind::Stall => Action::Stall {
                member: member(),
                duration_ms,
            },
            Kind::BrokerCrash => Action::BrokerCrash {
                broker: BrokerRef::Id(u32::try_from(number()).unwrap_or(u32::MAX)),
                connections: Connections::Reset,
            },
            Kind::BrokerRestart => Action::BrokerRestart {
                broker: u32::try_from(number()).unwrap_or(u32::MAX),
            },
            Kind::NetworkPartition => Action::NetworkPartition {
                members: vec![member()],
                brokers: BrokerSet::Coordinator,
                duration_ms,
            },
            Kind::LatencySpike => Action::LatencySpike {
                latency_ms: number(),
                duration_ms,
            },
        };
        Entry {
            at_ms: self.at_ms,
            action,
        }
    }

    /// In words, for the page's list of added faults.
    pub fn describe(&self) -> String {
        self.entry().describe()
    }
}

/// `SPEC,SPEC,...` (empty: none).
pub fn parse_list(text: &str) -> Result<Vec<Fault>, String> {
    let faults: Vec<Fault> = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(Fault::parse)
        .collect::<Result<_, _>>()?;
    if faults.len() > MAX_FAULTS {
        return Err(format!(
            "{} faults: the lab adds at most {MAX_FAULTS}",
            faults.len()
        ));
    }
    Ok(faults)
}

/// The list back as the address carries it.
pub fn list_spec(faults: &[Fault]) -> String {
    faults
        .iter()
        .map(Fault::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The name a new member takes: the last member's family (`c` of `c5`, `pod-` of `pod-4`) with
/// the next free number.
pub fn new_member_name(members: &[String]) -> String {
    let prefix = members
        .last()
        .map(|m| m.trim_end_matches(|c: char| c.is_ascii_digit()).to_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "new-".to_string());
    let next = members
        .iter()
        .filter_map(|m| m.strip_prefix(prefix.as_str())?.parse::<u64>().ok())
        .max()
        .unwrap_or(0)
        + 1;
    (next..)
        .map(|n| format!("{prefix}{n}"))
        .find(|name| !members.contains(name))
        .expect("a free name")
}

/// The scenario's text with the faults as timeline entries (and a member entry per join), after
/// the file's own. `members`: the scenario's members, in order (a join must name a new one).
pub fn apply(text: &str, faults: &[Fault], members: &[String]) -> Result<String, String> {
    if faults.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| format!("not valid TOML: {}", e.message()))?;
    let mut known: Vec<String> = members.to_vec();
    for f in faults {
        if f.kind == Kind::Join {
            if known.contains(&f.target) {
                return Err(format!(
                    "fault {f}: {:?} is a member already (a join adds a new member; restart brings back one that left or crashed)",
                    f.target
                ));
            }
            add_member(&mut doc, &f.target)?;
            known.push(f.target.clone());
        }
        let mut entry = f.entry().to_table();
        entry
            .decor_mut()
            .set_prefix(format!("\n# Added in cgsim lab: {}\n", f.describe()));
        push_entry(&mut doc, "timeline", entry)?;
    }
    Ok(doc.to_string())
}

/// Appends a table to the array of tables `key` (or inline array of tables), creating it.
fn push_entry(
    doc: &mut toml_edit::DocumentMut,
    key: &str,
    entry: toml_edit::Table,
) -> Result<(), String> {
    match doc.get_mut(key) {
        None => {
            let mut array = toml_edit::ArrayOfTables::new();
            array.push(entry);
            doc.insert(key, toml_edit::Item::ArrayOfTables(array));
        }
        Some(toml_edit::Item::ArrayOfTables(array)) => array.push(entry),
        Some(toml_edit::Item::Value(toml_edit::Value::Array(array))) => {
            array.push(entry.into_inline_table());
        }
        Some(_) => return Err(format!("{key} is not a list of entries")),
    }
    Ok(())
}

/// A `[[members]]` entry for a new member `name`: the last entry's settings, without its
/// `count` and `start_ms` (a join starts it); a static id template gets the new number, any
/// other static id is left out (the new member is dynamic).
fn add_member(doc: &mut toml_edit::DocumentMut, name: &str) -> Result<(), String> {
    let last: Option<toml_edit::Table> = match doc.get("members") {
        Some(toml_edit::Item::ArrayOfTables(a)) => a.iter().last().cloned(),
        Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => a
            .iter()
            .last()
            .and_then(|v| v.as_inline_table())
            .map(|t| t.clone().into_table()),
        _ => None,
    };
    let mut entry = toml_edit::Table::new();
    entry.insert("name", toml_edit::value(name));
    if let Some(last) = last {
        let number: String = name
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        for (k, v) in last.iter() {
            match k {
                "name" | "count" | "start_ms" => {}
                "group_instance_id" => {
                    if let Some(id) = v.as_str().filter(|id| id.contains("{n}")) {
                        if !number.is_empty() {
                            entry.insert(k, toml_edit::value(id.replace("{n}", &number)));
                        }
                    }
                }
                _ => {
                    let mut v = v.clone();
                    if let Some(value) = v.as_value_mut() {
                        value.decor_mut().clear();
                    }
                    entry.insert(k, v);
                }
            }
        }
    }
    entry
        .decor_mut()
        .set_prefix(format!("\n# Added in cgsim lab: a new member {name}\n"));
    push_entry(doc, "members", entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print_back() {
        for spec in [
            "crash:c2@63153",
            "join:c6@70000",
            "stall:c1@90000/10000",
            "broker_crash:1@5000",
            "network_partition:c3@1000/60000",
            "latency_spike:200@1000/30000",
        ] {
            assert_eq!(Fault::parse(spec).unwrap().to_string(), spec);
        }
        for bad in [
            "crash:c2",
            "crash@10",
            "explode:c2@10",
            "stall:c1@10",
            "crash:c2@10/5",
            "crash:../x@10",
            "broker_crash:one@10",
            "stall:c1@10/0",
            "crash:c2@-1",
        ] {
            assert!(Fault::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_list("").unwrap(), vec![]);
        assert_eq!(parse_list("crash:c1@5,leave:c2@6").unwrap().len(), 2);
        let many = vec!["crash:c1@5"; MAX_FAULTS + 1].join(",");
        assert!(parse_list(&many).unwrap_err().contains("at most"));
    }

    #[test]
    fn new_members_continue_the_family() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(new_member_name(&names(&["c1", "c2", "c5"])), "c6");
        assert_eq!(new_member_name(&names(&["pod-1", "pod-4"])), "pod-5");
        assert_eq!(new_member_name(&names(&["alice"])), "alice1");
        assert_eq!(new_member_name(&[]), "new-1");
    }

    #[test]
    fn faults_become_timeline_entries_the_loader_reads() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/scale-out.toml"
        ))
        .unwrap();
        let members: Vec<String> = (1..=5).map(|i| format!("c{i}")).collect();
        let faults = parse_list("crash:c2@63153,join:c6@70000,stall:c1@90000/10000").unwrap();
        let out = apply(&text, &faults, &members).unwrap();
        assert!(out.starts_with(&text[..200]), "the file's text is kept");
        let s = crate::scenario::load_str("x", &out, &Default::default()).unwrap();
        assert_eq!(s.members.len(), 6);
        assert_eq!(s.members[5].name, "c6");
        assert_eq!(s.timeline.len(), 4);
        let e = apply(&text, &parse_list("join:c3@1").unwrap(), &members).unwrap_err();
        assert!(e.contains("is a member already"), "{e}");
    }
}
