//! The timeline's one vocabulary: what happens to a run at a point of its time, in the
//! scenario file's own words (members and topics by name, brokers by id or `"coordinator"`).
//! The loader reads each `[[timeline]]` table into an [`Entry`] ([`Entry::from_file`]), the
//! fuzzer draws and shrinks entries, the lab adds its faults as entries, and every one of them
//! writes an entry back as a `[[timeline]]` table through [`Entry::to_table`], the one writer.
//! `resolve.rs` checks entries against the scenario's members, topics and brokers and turns them
//! into the indexes the world runs ([`TimelineEvent`](super::TimelineEvent)); `lifecycle.rs`
//! checks that they make sense in order (only a running member crashes, only a stopped one
//! restarts, only a crashed broker restarts).
//!
//! A new action is a variant of [`Action`] with its arms here (read, write, in words), its
//! resolution in `resolve.rs`, and its handler in the world.

pub mod admit;
pub mod lifecycle;
pub mod resolve;

use super::file::{ActionKey, BrokerFile, BrokersFile, ConnectionsFile, TimelineFile};
use super::{BrokerRef, BrokerSet, Connections};
use toml_edit::{value, Array, Item, Table};

/// A rolling bounce's defaults: each member stops 30 s after the one before, for 5 s.
pub const ROLLING_BOUNCE_INTERVAL_MS: u64 = 30_000;
pub const ROLLING_BOUNCE_DOWNTIME_MS: u64 = 5_000;

/// One `[[timeline]]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub at_ms: u64,
    pub action: Action,
}

/// An entry of a loaded scenario's plan, and where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub entry: Entry,
    /// The line of the `[[timeline]]` table it comes from (a rolling bounce's, for each of its
    /// leaves and restarts).
    pub line: usize,
    /// That table's action (`rolling_bounce` for a bounce's leaves and restarts).
    pub written_as: &'static str,
}

/// What happens, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// The member's process starts and joins the group.
    Join { member: String },
    /// Clean close: revoke, then LeaveGroup (a static member sends none).
    Leave { member: String },
    /// The process dies: nothing more is sent.
    Crash { member: String },
    /// A new process for a member that left or crashed; `set` (`KEY=VALUE` over its entry's
    /// keys) configures it anew, an upgrade by restart.
    Restart { member: String, set: Vec<String> },
    /// Processing stalls (a long batch, a GC pause, a slow call).
    Stall { member: String, duration_ms: u64 },
    /// The member subscribes to `topics` instead.
    Subscribe { member: String, topics: Vec<String> },
    /// The topic grows to `partitions` (members notice on their next metadata refresh).
    AddPartitions { topic: String, partitions: u32 },
    /// Every member, in file order, closes and starts again `duration_ms` later, one every
    /// `interval_ms`, if it runs by its turn (not one a later join starts); `set` as a
    /// restart's. Expanded into its leaves and restarts when resolved.
    RollingBounce {
        interval_ms: u64,
        duration_ms: u64,
        set: Vec<String>,
    },
    /// A broker's process dies (`reset`) or its host vanishes (`hang`).
    BrokerCrash {
        broker: BrokerRef,
        connections: Connections,
    },
    /// A crashed broker starts again.
    BrokerRestart { broker: u32 },
    /// `members` cannot reach `brokers` (nor they them) for `duration_ms`.
    NetworkPartition {
        members: Vec<String>,
        brokers: BrokerSet,
        duration_ms: u64,
    },
    /// Every message takes `latency_ms` longer one way, for `duration_ms`.
    LatencySpike { latency_ms: u64, duration_ms: u64 },
}

impl Action {
    /// The `action` key's value.
    pub fn name(&self) -> &'static str {
        self.key().name()
    }

    fn key(&self) -> ActionKey {
        match self {
            Action::Join { .. } => ActionKey::Join,
            Action::Leave { .. } => ActionKey::Leave,
            Action::Crash { .. } => ActionKey::Crash,
            Action::Restart { .. } => ActionKey::Restart,
            Action::Stall { .. } => ActionKey::Stall,
            Action::Subscribe { .. } => ActionKey::Subscribe,
            Action::AddPartitions { .. } => ActionKey::AddPartitions,
            Action::RollingBounce { .. } => ActionKey::RollingBounce,
            Action::BrokerCrash { .. } => ActionKey::BrokerCrash,
            Action::BrokerRestart { .. } => ActionKey::BrokerRestart,
            Action::NetworkPartition { .. } => ActionKey::NetworkPartition,
            Action::LatencySpike { .. } => ActionKey::LatencySpike,
        }
    }

    /// The member it acts on, for a member's own action.
    pub fn member(&self) -> Option<&str> {
        match self {
            Action::Join { member }
            | Action::Leave { member }
            | Action::Crash { member }
            | Action::Restart { member, .. }
            | Action::Stall { member, .. }
            | Action::Subscribe { member, .. } => Some(member),
            _ => None,
        }
    }

    /// How long it lasts (a stall until its poll loop resumes, a network fault until it heals).
    pub fn duration_ms(&self) -> u64 {
        match self {
            Action::Stall { duration_ms, .. }
            | Action::NetworkPartition { duration_ms, .. }
            | Action::LatencySpike { duration_ms, .. } => *duration_ms,
            _ => 0,
        }
    }
}

impl Entry {
    /// A `[[timeline]]` table as written: only the keys its action takes, each well formed.
    /// Names are checked against the scenario when the entry is resolved.
    pub fn from_file(e: &TimelineFile) -> Result<Entry, String> {
        let name = e.action.name();
        // Only the keys an action uses may be given.
        let allowed: &[&str] = match e.action {
            ActionKey::Stall => &["duration_ms"],
            ActionKey::Subscribe => &["topics"],
            ActionKey::AddPartitions => &["topic", "partitions"],
            ActionKey::RollingBounce => &["interval_ms", "duration_ms", "set"],
            ActionKey::Restart => &["set"],
            ActionKey::BrokerCrash => &["broker", "connections"],
            ActionKey::BrokerRestart => &["broker"],
            ActionKey::NetworkPartition => &["members", "brokers", "duration_ms"],
            ActionKey::LatencySpike => &["latency_ms", "duration_ms"],
            ActionKey::Join | ActionKey::Leave | ActionKey::Crash => &[],
        };
        let given = [
            ("duration_ms", e.duration_ms.is_some()),
            ("topics", e.topics.is_some()),
            ("topic", e.topic.is_some()),
            ("partitions", e.partitions.is_some()),
            ("interval_ms", e.interval_ms.is_some()),
            ("set", e.set.is_some()),
            ("broker", e.broker.is_some()),
            ("connections", e.connections.is_some()),
            ("members", e.members.is_some()),
            ("brokers", e.brokers.is_some()),
            ("latency_ms", e.latency_ms.is_some()),
        ];
        if let Some((key, _)) = given.iter().find(|(k, g)| *g && !allowed.contains(k)) {
            return Err(format!("{key} does not apply to {name}"));
        }
        let member = || -> Result<String, String> {
            e.member
                .clone()
                .ok_or_else(|| format!("{name} needs a member"))
        };
        let positive = |d: Option<u64>, what: &str| match d {
            Some(d) if d > 0 => Ok(d),
            _ => Err(format!("{what} needs a positive duration_ms")),
        };
        let set = || e.set.clone().unwrap_or_default();
        let action = match e.action {
            ActionKey::Join => Action::Join { member: member()? },
            ActionKey::Leave => Action::Leave { member: member()? },
            ActionKey::Crash => Action::Crash { member: member()? },
            ActionKey::Restart => Action::Restart {
                member: member()?,
                set: set(),
            },
            ActionKey::Stall => {
                let duration_ms = positive(e.duration_ms, "a stall")?;
                Action::Stall {
                    member: member()?,
                    duration_ms,
                }
            }
            ActionKey::Subscribe => {
                let topics = e.topics.clone().ok_or("subscribe needs topics")?;
                Action::Subscribe {
                    member: member()?,
                    topics,
                }
            }
            // The keys that name no member refuse one (it would be read as nothing).
            _ if e.member.is_some() => {
                return Err(match e.action {
                    ActionKey::RollingBounce => {
                        "rolling_bounce restarts every member; it takes no member".into()
                    }
                    ActionKey::AddPartitions => "add_partitions takes a topic, not a member".into(),
                    ActionKey::NetworkPartition => {
                        "network_partition takes members, not a member".into()
                    }
                    ActionKey::BrokerCrash | ActionKey::BrokerRestart => {
                        format!("{name} takes a broker, not a member")
                    }
                    _ => format!("{name} takes no member"),
                });
            }
            ActionKey::RollingBounce => {
                let interval_ms = e.interval_ms.unwrap_or(ROLLING_BOUNCE_INTERVAL_MS);
                let duration_ms = e.duration_ms.unwrap_or(ROLLING_BOUNCE_DOWNTIME_MS);
                if interval_ms == 0 || duration_ms == 0 {
                    return Err(
                        "rolling_bounce needs a positive interval_ms and duration_ms".into(),
                    );
                }
                Action::RollingBounce {
                    interval_ms,
                    duration_ms,
                    set: set(),
                }
            }
            ActionKey::AddPartitions => Action::AddPartitions {
                topic: e.topic.clone().ok_or("add_partitions needs a topic")?,
                partitions: e
                    .partitions
                    .ok_or("add_partitions needs the new partition count")?,
            },
            ActionKey::BrokerCrash => Action::BrokerCrash {
                broker: match &e.broker {
                    None => return Err("broker_crash needs a broker (an id or \"coordinator\")".into()),
                    Some(b) => broker_named(b)?,
                },
                connections: match e.connections {
                    None | Some(ConnectionsFile::Reset) => Connections::Reset,
                    Some(ConnectionsFile::Hang) => Connections::Hang,
                },
            },
            ActionKey::BrokerRestart => match e.broker.as_ref().map(broker_named).transpose()? {
                None => return Err("broker_restart needs a broker id".into()),
                Some(BrokerRef::Id(broker)) => Action::BrokerRestart { broker },
                Some(BrokerRef::Coordinator) => return Err(
                    "broker_restart needs a broker id (the report's brokers[] names the broker a crash of \"coordinator\" stopped)".into(),
                ),
            },
            ActionKey::NetworkPartition => {
                let members = e.members.clone().unwrap_or_default();
                if members.is_empty() {
                    return Err("network_partition needs members (the members cut off)".into());
                }
                let brokers = match &e.brokers {
                    None => {
                        return Err(
                            "network_partition needs brokers (ids, or \"coordinator\")".into(),
                        )
                    }
                    Some(BrokersFile::Name(n)) if n == "coordinator" => BrokerSet::Coordinator,
                    Some(BrokersFile::Name(n)) => {
                        return Err(format!(
                            "brokers = {n:?}: a list of broker ids, or \"coordinator\""
                        ))
                    }
                    Some(BrokersFile::Ids(ids)) if ids.is_empty() => {
                        return Err("network_partition needs at least one broker".into())
                    }
                    Some(BrokersFile::Ids(ids)) => BrokerSet::Ids(ids.clone()),
                };
                Action::NetworkPartition {
                    members,
                    brokers,
                    duration_ms: positive(e.duration_ms, "a network_partition")?,
                }
            }
            ActionKey::LatencySpike => {
                let latency_ms = match e.latency_ms {
                    Some(l) if l > 0 && l <= super::limits::MAX_LATENCY_MS => l,
                    Some(l) if l > 0 => {
                        return Err(format!(
                            "latency_ms {l} is above the limit of {} ms",
                            super::limits::MAX_LATENCY_MS
                        ))
                    }
                    _ => return Err("a latency_spike needs a positive latency_ms".into()),
                };
                Action::LatencySpike {
                    latency_ms,
                    duration_ms: positive(e.duration_ms, "a latency_spike")?,
                }
            }
        };
        Ok(Entry {
            at_ms: e.at_ms,
            action,
        })
    }

    /// The entry as a `[[timeline]]` table, which [`Entry::from_file`] reads back as it is.
    pub fn to_table(&self) -> Table {
        let mut t = Table::new();
        t.insert("at_ms", value(self.at_ms as i64));
        t.insert("action", value(self.action.name()));
        let names = |list: &[String]| value(list.iter().map(String::as_str).collect::<Array>());
        let ms = |v: u64| value(v as i64);
        match &self.action {
            Action::Join { member } | Action::Leave { member } | Action::Crash { member } => {
                t.insert("member", value(member.as_str()));
            }
            Action::Restart { member, set } => {
                t.insert("member", value(member.as_str()));
                if !set.is_empty() {
                    t.insert("set", names(set));
                }
            }
            Action::Stall {
                member,
                duration_ms,
            } => {
                t.insert("member", value(member.as_str()));
                t.insert("duration_ms", ms(*duration_ms));
            }
            Action::Subscribe { member, topics } => {
                t.insert("member", value(member.as_str()));
                t.insert("topics", names(topics));
            }
            Action::AddPartitions { topic, partitions } => {
                t.insert("topic", value(topic.as_str()));
                t.insert("partitions", value(i64::from(*partitions)));
            }
            Action::RollingBounce {
                interval_ms,
                duration_ms,
                set,
            } => {
                t.insert("interval_ms", ms(*interval_ms));
                t.insert("duration_ms", ms(*duration_ms));
                if !set.is_empty() {
                    t.insert("set", names(set));
                }
            }
            Action::BrokerCrash {
                broker,
                connections,
            } => {
                t.insert("broker", broker_item(*broker));
                t.insert("connections", value(connections.name()));
            }
            Action::BrokerRestart { broker } => {
                t.insert("broker", value(i64::from(*broker)));
            }
            Action::NetworkPartition {
                members,
                brokers,
                duration_ms,
            } => {
                t.insert("members", names(members));
                t.insert(
                    "brokers",
                    match brokers {
                        BrokerSet::Coordinator => value("coordinator"),
                        BrokerSet::Ids(ids) => {
                            value(ids.iter().map(|&b| i64::from(b)).collect::<Array>())
                        }
                    },
                );
                t.insert("duration_ms", ms(*duration_ms));
            }
            Action::LatencySpike {
                latency_ms,
                duration_ms,
            } => {
                t.insert("latency_ms", ms(*latency_ms));
                t.insert("duration_ms", ms(*duration_ms));
            }
        }
        t
    }

    /// In words.
    pub fn describe(&self) -> String {
        let at = self.at_ms;
        match &self.action {
            Action::Join { member } => format!("a new member {member} joins at {at} ms"),
            Action::Leave { member } => format!("{member} leaves at {at} ms (close: LeaveGroup)"),
            Action::Crash { member } => format!("{member} crashes at {at} ms (no LeaveGroup)"),
            Action::Restart { member, set } if set.is_empty() => {
                format!("{member} restarts at {at} ms")
            }
            Action::Restart { member, set } => {
                format!("{member} restarts at {at} ms with {}", set.join(", "))
            }
            Action::Stall {
                member,
                duration_ms,
            } => format!("{member} stalls at {at} ms for {duration_ms} ms"),
            Action::Subscribe { member, topics } => {
                format!("{member} subscribes to {} at {at} ms", topics.join(", "))
            }
            Action::AddPartitions { topic, partitions } => {
                format!("{topic} grows to {partitions} partitions at {at} ms")
            }
            Action::RollingBounce {
                interval_ms,
                duration_ms,
                ..
            } => format!(
                "the rolling bounce from {at} ms (a member every {interval_ms} ms, each down {duration_ms} ms)"
            ),
            Action::BrokerCrash {
                broker: BrokerRef::Id(b),
                ..
            } => format!("broker {b} crashes at {at} ms"),
            Action::BrokerCrash {
                broker: BrokerRef::Coordinator,
                ..
            } => format!("the coordinator's broker crashes at {at} ms"),
            Action::BrokerRestart { broker } => format!("broker {broker} restarts at {at} ms"),
            Action::NetworkPartition {
                members,
                brokers,
                duration_ms,
            } => {
                let to = match brokers {
                    BrokerSet::Coordinator => "the coordinator".to_string(),
                    BrokerSet::Ids(ids) => format!(
                        "broker(s) {}",
                        ids.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                    ),
                };
                format!(
                    "{} {} cut off from {to} at {at} ms for {duration_ms} ms",
                    members.join(", "),
                    if members.len() == 1 { "is" } else { "are" }
                )
            }
            Action::LatencySpike {
                latency_ms,
                duration_ms,
            } => format!("every message takes {latency_ms} ms more from {at} ms for {duration_ms} ms"),
        }
    }
}

/// Entries as the `[[timeline]]` tables of a scenario file.
pub fn to_tables<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> toml_edit::ArrayOfTables {
    let mut tables = toml_edit::ArrayOfTables::new();
    for e in entries {
        tables.push(e.to_table());
    }
    tables
}

/// A broker as an entry names it; whether the id exists is the scenario's to say.
fn broker_named(b: &BrokerFile) -> Result<BrokerRef, String> {
    match b {
        BrokerFile::Id(id) => Ok(BrokerRef::Id(*id)),
        BrokerFile::Name(n) if n == "coordinator" => Ok(BrokerRef::Coordinator),
        BrokerFile::Name(n) => Err(format!("broker = {n:?}: a broker id, or \"coordinator\"")),
    }
}

fn broker_item(broker: BrokerRef) -> Item {
    match broker {
        BrokerRef::Id(b) => value(i64::from(b)),
        BrokerRef::Coordinator => value("coordinator"),
    }
}

#[cfg(test)]
mod tests;
