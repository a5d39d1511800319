//! The `cgsim assign` wire format of KIP-1071 cases (DESIGN.md "Interfaces";
//! ../shared/reference/streams/README.md Part 1): a line with `subtopologies` and `members`.
//!
//! In: `{"id", "subtopologies": [{"id", "partitions", "stateful"}], "num_standby_replicas",
//! "members": [{"member_id", "process_id", "active", "standby", "warmup", "rack_id"}]}`, each
//! task map from subtopology id to partitions (the member's previous target assignment). The
//! members keep their order: it stands for the coordinator's `HashMap` insertion order. Unknown
//! top-level keys are ignored (the reference cases carry `family`, `chain`, `synthetic`); an
//! unknown key inside a member or subtopology is an error.
//!
//! Out: `{"id", "members": {MEMBER: {"active", "standby", "warmup"}}}`, tasks as
//! `"<subtopology>_<partition>"` sorted by `TaskId.compareTo`, every member present; or
//! `{"error", "id"}` when the assignor throws. Keys are sorted, as in the reference's expected
//! file.

use super::{
    assign, GroupAssignment, GroupSpec, MemberSpec, Subtopology, TaskAssignorError, TaskId,
    Topology,
};
use crate::assignor::MAX_PARTITIONS;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One parsed KIP-1071 line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsCase {
    pub id: String,
    pub group: GroupSpec,
}

impl StreamsCase {
    /// The tasks of the topology (active tasks, one per partition of each subtopology).
    pub fn task_count(&self) -> usize {
        self.group.topology.task_count()
    }

    /// Runs the assignor on this case.
    pub fn assign(&self) -> Result<GroupAssignment, TaskAssignorError> {
        assign(&self.group)
    }
}

#[derive(Deserialize)]
struct RawCase {
    id: String,
    subtopologies: Vec<RawSubtopology>,
    num_standby_replicas: i64,
    members: Vec<RawMember>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSubtopology {
    id: String,
    partitions: i64,
    stateful: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMember {
    member_id: String,
    process_id: String,
    #[serde(default)]
    active: Option<Map<String, Value>>,
    #[serde(default)]
    standby: Option<Map<String, Value>>,
    #[serde(default)]
    warmup: Option<Map<String, Value>>,
    #[serde(default)]
    rack_id: Option<String>,
}

/// Whether a parsed JSON line is a KIP-1071 case: it has `subtopologies` (the partition
/// assignors' lines have `topics`).
pub fn is_streams_case(value: &Value) -> bool {
    value.get("subtopologies").is_some()
}

/// Parses a line already read as a JSON object into a case, or says what is wrong with it.
pub fn parse_value(value: Value) -> Result<StreamsCase, String> {
    let raw: RawCase = serde_json::from_value(value).map_err(|e| e.to_string())?;

    let mut subtopologies = Vec::with_capacity(raw.subtopologies.len());
    let mut total = 0u64;
    for s in raw.subtopologies {
        if s.partitions < 0 {
            return Err(format!(
                "subtopology {:?}: negative partition count {}",
                s.id, s.partitions
            ));
        }
        total = total.saturating_add(s.partitions as u64);
        if total > MAX_PARTITIONS {
            return Err(format!(
                "subtopology {:?}: partition count {} makes {total} tasks in all, above the limit of {MAX_PARTITIONS}",
                s.id, s.partitions
            ));
        }
        subtopologies.push(Subtopology {
            id: s.id,
            partitions: i32::try_from(s.partitions).expect("below the limit"),
            stateful: s.stateful,
        });
    }
    let topology = Topology::new(subtopologies)?;

    // `num.standby.replicas` is an int of at least 0 (the broker's config validation). Kafka
    // counts tasks with their standbys in an int (`:92-100`): within that range its sums are
    // exact, as they are here.
    let replicas = raw.num_standby_replicas;
    if replicas < 0 {
        return Err(format!("num_standby_replicas {replicas} is negative"));
    }
    if replicas > i64::from(i32::MAX) {
        return Err(format!(
            "num_standby_replicas {replicas} is above Kafka's int range ({})",
            i32::MAX
        ));
    }
    let stateful: i64 = topology
        .subtopologies()
        .iter()
        .filter(|s| s.stateful)
        .map(|s| i64::from(s.partitions))
        .sum();
    let with_standbys =
        i128::from(topology.task_count() as i64) + i128::from(stateful) * i128::from(replicas);
    if with_standbys > i128::from(i32::MAX) {
        return Err(format!(
            "num_standby_replicas {replicas} makes {with_standbys} tasks with their standbys, \
             above Kafka's int range ({})",
            i32::MAX
        ));
    }
    let num_standby_replicas = u32::try_from(replicas).expect("within an int");

    let mut members = Vec::with_capacity(raw.members.len());
    let mut seen_ids = BTreeSet::new();
    for m in raw.members {
        let member = parse_member(&topology, m)?;
        if !seen_ids.insert(member.member_id.clone()) {
            return Err(format!("duplicate member_id {:?}", member.member_id));
        }
        members.push(member);
    }
    Ok(StreamsCase {
        id: raw.id,
        group: GroupSpec {
            topology,
            members,
            num_standby_replicas,
        },
    })
}

fn parse_member(topology: &Topology, raw: RawMember) -> Result<MemberSpec, String> {
    let who = &raw.member_id;
    // The coordinator refuses these in the heartbeat (`GCS:543`, `:546`).
    if who.is_empty() {
        return Err("a member has an empty member_id".into());
    }
    if raw.rack_id.as_deref() == Some("") {
        return Err(format!("member {who:?}: empty rack_id"));
    }
    let tasks = |role: &str, map: Option<Map<String, Value>>| {
        parse_tasks(topology, who, role, map.unwrap_or_default())
    };
    Ok(MemberSpec {
        active_tasks: tasks("active", raw.active)?,
        standby_tasks: tasks("standby", raw.standby)?,
        warmup_tasks: tasks("warmup", raw.warmup)?,
        member_id: raw.member_id,
        process_id: raw.process_id,
        rack_id: raw.rack_id,
    })
}

/// A member's task map (subtopology id -> partitions): every task in the topology, none twice
/// (Kafka holds them in sets).
fn parse_tasks(
    topology: &Topology,
    who: &str,
    role: &str,
    map: Map<String, Value>,
) -> Result<Vec<TaskId>, String> {
    let mut tasks = Vec::new();
    let mut seen = BTreeSet::new();
    for (id, parts) in &map {
        let parts = parts.as_array().ok_or_else(|| {
            format!("member {who:?}: {role}[{id:?}] must be a list of partitions")
        })?;
        let s = topology.subtopology_index(id).ok_or_else(|| {
            format!(
                "member {who:?}: {role} names subtopology {id:?}, which is not in subtopologies"
            )
        })?;
        let count = topology.subtopology(s).partitions;
        for p in parts {
            let p = p.as_i64().ok_or_else(|| {
                format!("member {who:?}: {role}[{id:?}] holds {p}, not a partition number")
            })?;
            if p < 0 {
                return Err(format!(
                    "member {who:?}: {role}[{id:?}] holds {p}; partitions are numbered from 0"
                ));
            }
            if p >= i64::from(count) {
                return Err(format!(
                    "member {who:?}: {role} task {id}_{p}, but subtopology {id:?} has {count} partitions"
                ));
            }
            let task = TaskId::new(s, p as i32);
            if !seen.insert(task) {
                return Err(format!("member {who:?}: {role} lists task {id}_{p} twice"));
            }
            tasks.push(task);
        }
    }
    Ok(tasks)
}

/// One member's tasks as printed.
#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct MemberOut {
    pub active: Vec<String>,
    pub standby: Vec<String>,
    pub warmup: Vec<String>,
}

// Fields in alphabetical order: the output has sorted keys.
#[derive(Serialize)]
struct CaseOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    members: Option<BTreeMap<&'a str, MemberOut>>,
}

/// Member id -> its tasks by name, every member present, each list in `TaskId.compareTo` order.
pub fn named_members<'a>(
    case: &'a StreamsCase,
    assignment: &GroupAssignment,
) -> BTreeMap<&'a str, MemberOut> {
    let topology = &case.group.topology;
    let names = |tasks: &[TaskId]| tasks.iter().map(|&t| topology.task_name(t)).collect();
    case.group
        .members
        .iter()
        .zip(&assignment.members)
        .map(|(spec, a)| {
            (
                spec.member_id.as_str(),
                MemberOut {
                    active: names(&a.active_tasks),
                    standby: names(&a.standby_tasks),
                    warmup: names(&a.warmup_tasks),
                },
            )
        })
        .collect()
}

/// The output line for a case and the assignor's answer (or its exception).
pub fn render(case: &StreamsCase, result: &Result<GroupAssignment, TaskAssignorError>) -> String {
    let out = match result {
        Ok(assignment) => CaseOut {
            error: None,
            id: &case.id,
            members: Some(named_members(case, assignment)),
        },
        Err(e) => CaseOut {
            error: Some(&e.0),
            id: &case.id,
            members: None,
        },
    };
    serde_json::to_string(&out).expect("streams output serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<StreamsCase, String> {
        let value: Value = serde_json::from_str(line).expect("test lines are JSON");
        assert!(is_streams_case(&value));
        parse_value(value)
    }

    fn line(subtopologies: &str, members: &str) -> String {
        format!(
            r#"{{"id":"x","family":"extra","num_standby_replicas":1,"subtopologies":[{subtopologies}],"members":[{members}]}}"#
        )
    }

    const TWO: &str =
        r#"{"id":"1","partitions":2,"stateful":true},{"id":"0","partitions":3,"stateful":false}"#;

    #[test]
    fn parses_sorts_subtopologies_and_renders_sorted_tasks() {
        let case = parse(&line(
            TWO,
            r#"{"member_id":"b","process_id":"p1","active":{"1":[1],"0":[2]},"rack_id":"r1"},
               {"member_id":"a","process_id":"p2","standby":{"1":[1]},"warmup":{}}"#,
        ))
        .unwrap();
        let t = &case.group.topology;
        assert_eq!(t.subtopologies()[0].id, "0");
        assert_eq!(case.group.members[0].member_id, "b", "member order is kept");
        assert_eq!(
            case.group.members[0].active_tasks,
            [TaskId::new(1, 1), TaskId::new(0, 2)]
        );
        // Kafka's answer (reference/streams/README.md's call, JDK 17).
        let result = case.assign();
        assert_eq!(
            render(&case, &result),
            r#"{"id":"x","members":{"a":{"active":["0_0","0_1"],"standby":["1_0","1_1"],"warmup":[]},"b":{"active":["0_2","1_0","1_1"],"standby":[],"warmup":[]}}}"#
        );
    }

    #[test]
    fn an_assignor_exception_is_an_error_line() {
        // No members but tasks to give: Kafka's "No process available" (`:223-226`).
        let case = parse(&line(TWO, "")).unwrap();
        assert_eq!(
            render(&case, &case.assign()),
            r#"{"error":"No process available to assign active task 0_0.","id":"x"}"#
        );
        // No tasks and no members is an empty answer.
        let case = parse(&line("", "")).unwrap();
        assert_eq!(render(&case, &case.assign()), r#"{"id":"x","members":{}}"#);
    }

    #[test]
    fn refuses_what_the_coordinator_could_not_have_sent() {
        let err = |subtopologies: &str, members: &str| {
            parse(&line(subtopologies, members))
                .err()
                .unwrap_or_else(|| panic!("{members} was accepted"))
        };
        let m = |tasks: &str| format!(r#"{{"member_id":"a","process_id":"p",{tasks}}}"#);
        assert_eq!(
            err(TWO, &m(r#""active":{"7":[0]}"#)),
            r#"member "a": active names subtopology "7", which is not in subtopologies"#
        );
        assert_eq!(
            err(TWO, &m(r#""standby":{"1":[2]}"#)),
            r#"member "a": standby task 1_2, but subtopology "1" has 2 partitions"#
        );
        assert_eq!(
            err(TWO, &m(r#""warmup":{"0":[-1]}"#)),
            r#"member "a": warmup["0"] holds -1; partitions are numbered from 0"#
        );
        assert_eq!(
            err(TWO, &m(r#""active":{"0":[1,1]}"#)),
            r#"member "a": active lists task 0_1 twice"#
        );
        assert_eq!(
            err(TWO, &m(r#""active":{"0":"1"}"#)),
            r#"member "a": active["0"] must be a list of partitions"#
        );
        assert_eq!(
            err(
                r#"{"id":"0","partitions":1,"stateful":true},{"id":"0","partitions":2,"stateful":true}"#,
                ""
            ),
            r#"subtopology id "0" given twice"#
        );
        assert_eq!(
            err(TWO, &format!("{},{}", m(""), m("")).replace(",}", "}")),
            r#"duplicate member_id "a""#
        );
        assert_eq!(
            err(r#"{"id":"0","partitions":-1,"stateful":true}"#, ""),
            r#"subtopology "0": negative partition count -1"#
        );
        assert_eq!(
            err(TWO, r#"{"member_id":"","process_id":"p"}"#),
            "a member has an empty member_id"
        );
        assert!(err(TWO, r#"{"member_id":"a","process_id":"p","owned":{}}"#).contains("owned"));
        assert!(err(TWO, r#"{"member_id":"a"}"#).contains("process_id"));
    }

    #[test]
    fn refuses_sizes_beyond_the_limits_before_allocating() {
        let big = r#"{"id":"0","partitions":6000000,"stateful":false},{"id":"1","partitions":6000000,"stateful":false}"#;
        assert_eq!(
            parse(&line(big, "")).unwrap_err(),
            r#"subtopology "1": partition count 6000000 makes 12000000 tasks in all, above the limit of 10000000"#
        );
        let many = line(r#"{"id":"0","partitions":1000,"stateful":true}"#, "").replace(
            r#""num_standby_replicas":1"#,
            r#""num_standby_replicas":3000000"#,
        );
        assert!(parse(&many)
            .unwrap_err()
            .starts_with("num_standby_replicas 3000000 makes 3000001000 tasks"));
        let negative = line(TWO, "").replace(r#"replicas":1"#, r#"replicas":-1"#);
        assert_eq!(
            parse(&negative).unwrap_err(),
            "num_standby_replicas -1 is negative"
        );
        // Beyond an int even without a stateful task to count them on (found by the parser
        // fuzz: it once panicked here).
        let stateless = r#"{"id":"0","partitions":1,"stateful":false}"#;
        let huge =
            line(stateless, "").replace(r#"replicas":1"#, r#"replicas":9223372036854775807"#);
        assert_eq!(
            parse(&huge).unwrap_err(),
            "num_standby_replicas 9223372036854775807 is above Kafka's int range (2147483647)"
        );
        let most = line(stateless, "").replace(r#"replicas":1"#, r#"replicas":2147483647"#);
        assert_eq!(
            parse(&most).unwrap().group.num_standby_replicas,
            i32::MAX as u32
        );
    }
}
