//! The `cgsim assign` wire format (DESIGN.md "Interfaces"): one JSON object per line in, one per
//! line out. Input members keep their order (it stands for the leader's HashMap insertion order);
//! unknown top-level keys are ignored because the reference cases carry extra ones. A line with
//! `subtopologies` is a KIP-1071 streams group case instead ([`parse_line`], `streams::json`).

use super::racks::PartitionRacks;
use super::streams::{self, classic::json::ClassicCase, json::StreamsCase};
use super::{
    by_name, AssignResult, Assignor, GroupSpec, Member, MemberPartitions, RebalanceProtocol, Topic,
    TopicPartition,
};
use crate::java::{string_compare, Uuid};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

pub use super::MAX_PARTITIONS;

/// One parsed input line.
pub struct AssignCase {
    pub id: String,
    pub assignor: &'static dyn Assignor,
    pub group: GroupSpec,
    /// Things Kafka would log and carry on with (a subscribed topic missing from metadata).
    pub warnings: Vec<String>,
}

#[derive(Deserialize)]
struct RawCase {
    id: String,
    assignor: String,
    topics: Map<String, Value>,
    #[serde(default)]
    topic_ids: Option<Map<String, Value>>,
    #[serde(default)]
    protocol: Option<String>,
    /// topic -> per partition, the racks of its replicas in replica order.
    #[serde(default)]
    partition_racks: Option<BTreeMap<String, Vec<Vec<String>>>>,
    members: Vec<RawMember>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMember {
    member_id: String,
    #[serde(default)]
    group_instance_id: Option<String>,
    topics: Vec<String>,
    #[serde(default)]
    owned: Option<Map<String, Value>>,
    #[serde(default)]
    generation: Option<i64>,
    #[serde(default)]
    rack: Option<String>,
}

/// One parsed input line of either kind.
pub enum AssignLine {
    /// A partition assignor's case (`assignor`, `topics`, `members`).
    Partitions(AssignCase),
    /// A KIP-1071 streams group case (`subtopologies`, `members`), `streams::json`.
    Streams(StreamsCase),
    /// A classic Kafka Streams case (`subtopologies`, `clients`, `assignor`),
    /// `streams::classic::json`.
    StreamsClassic(ClassicCase),
}

/// Parses one input line of either kind: a line with `subtopologies` is a KIP-1071 case, any
/// other a partition assignor's.
pub fn parse_line(line: &str) -> Result<AssignLine, String> {
    let value = parse_object(line)?;
    if streams::classic::json::is_classic_case(&value) {
        streams::classic::json::parse_value(value).map(AssignLine::StreamsClassic)
    } else if streams::json::is_streams_case(&value) {
        streams::json::parse_value(value).map(AssignLine::Streams)
    } else {
        parse_case_value(value).map(AssignLine::Partitions)
    }
}

fn parse_object(line: &str) -> Result<Value, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("malformed JSON: {e}"))?;
    if !value.is_object() {
        return Err("expected a JSON object".into());
    }
    Ok(value)
}

/// Parses one partition assignor's input line into a case, or says what is wrong with it.
pub fn parse_case(line: &str) -> Result<AssignCase, String> {
    parse_case_value(parse_object(line)?)
}

fn parse_case_value(value: Value) -> Result<AssignCase, String> {
    let raw: RawCase = serde_json::from_value(value).map_err(|e| e.to_string())?;
    let id = raw.id;
    let assignor = by_name(&raw.assignor).map_err(|e| e.0)?;

    let mut topics = Vec::with_capacity(raw.topics.len());
    let mut total = 0u64;
    for (name, count) in &raw.topics {
        let partitions = count.as_i64().ok_or_else(|| {
            format!("topic {name:?}: partition count must be an integer, got {count}")
        })?;
        if partitions < 0 {
            return Err(format!(
                "topic {name:?}: negative partition count {partitions}"
            ));
        }
        total = total.saturating_add(partitions as u64);
        if total > MAX_PARTITIONS {
            return Err(format!(
                "topic {name:?}: partition count {partitions} makes {total} partitions in all, above the limit of {MAX_PARTITIONS}"
            ));
        }
        let partitions = i32::try_from(partitions).expect("below the limit");
        topics.push(Topic {
            name: name.clone(),
            partitions,
            id: None,
        });
    }
    topics.sort_by(|a, b| string_compare(&a.name, &b.name));
    for (name, id) in raw.topic_ids.iter().flatten() {
        let text = id
            .as_str()
            .ok_or_else(|| format!("topic_ids: id of {name:?} must be a string"))?;
        let uuid = Uuid::parse(text).map_err(|e| format!("topic_ids: {e}"))?;
        if let Ok(i) = topics.binary_search_by(|t| string_compare(&t.name, name)) {
            topics[i].id = Some(uuid);
        }
    }

    let protocol = match raw.protocol.as_deref() {
        None => assignor.default_protocol(),
        Some("eager") => RebalanceProtocol::Eager,
        Some("cooperative") => RebalanceProtocol::Cooperative,
        Some(other) => {
            return Err(format!(
                "unknown protocol {other:?} (expected \"eager\" or \"cooperative\")"
            ))
        }
    };
    if !assignor.supported_protocols().contains(&protocol) {
        return Err(format!(
            "assignor {:?} does not support the {} protocol",
            assignor.name(),
            protocol.name()
        ));
    }

    let racks = parse_partition_racks(&topics, raw.partition_racks)?;
    let mut group = GroupSpec {
        topics,
        members: Vec::with_capacity(raw.members.len()),
        protocol,
        racks,
    };
    let mut warnings = Vec::new();
    let mut seen_ids = BTreeSet::new();
    let mut seen_instances = BTreeSet::new();
    for raw_member in raw.members {
        let member = parse_member(&group, raw_member, &mut warnings)?;
        if !seen_ids.insert(member.member_id.clone()) {
            return Err(format!("duplicate member_id {:?}", member.member_id));
        }
        // The coordinator keeps one member per static id (a second JoinGroup fences the first).
        if let Some(id) = &member.group_instance_id {
            if !seen_instances.insert(id.clone()) {
                return Err(format!(
                    "duplicate group_instance_id {id:?} (member {:?}): a static id belongs to one member",
                    member.member_id
                ));
            }
        }
        group.members.push(member);
    }
    if group.protocol == RebalanceProtocol::Cooperative && !assignor.is_server_side() {
        join_prepare(&mut group);
    }
    Ok(AssignCase {
        id,
        assignor,
        group,
        warnings,
    })
}

/// A client member's `owned` is what it owned before the rebalance; under COOPERATIVE its
/// `onJoinPrepare` revokes the partitions of topics it no longer subscribes to, so its
/// Subscription's ownedPartitions hold the rest (as the reference harness feeds them).
fn join_prepare(group: &mut GroupSpec) {
    for member in &mut group.members {
        let topics = &member.topics;
        member
            .owned
            .retain(|tp| topics.binary_search(&tp.topic).is_ok());
    }
}

/// `partition_racks`: every named topic must exist and list one entry per partition.
fn parse_partition_racks(
    topics: &[Topic],
    raw: Option<BTreeMap<String, Vec<Vec<String>>>>,
) -> Result<PartitionRacks, String> {
    let Some(raw) = raw else {
        return Ok(PartitionRacks::default());
    };
    let mut per_topic = vec![Vec::new(); topics.len()];
    for (name, lists) in raw {
        let t = topics
            .binary_search_by(|t| string_compare(&t.name, &name))
            .map_err(|_| format!("partition_racks names topic {name:?}, which is not in topics"))?;
        let count = topics[t].partitions;
        if lists.len() != count as usize {
            return Err(format!(
                "partition_racks[{name:?}] lists {} partitions, but {name:?} has {count}",
                lists.len()
            ));
        }
        per_topic[t] = lists;
    }
    PartitionRacks::from_names(&per_topic).map_err(|e| format!("partition_racks: {e}"))
}

fn parse_member(
    group: &GroupSpec,
    raw: RawMember,
    warnings: &mut Vec<String>,
) -> Result<Member, String> {
    let who = &raw.member_id;
    if who.is_empty() {
        return Err("a member has an empty member_id".into());
    }
    let mut subscription = raw.topics;
    subscription.sort_by(|a, b| string_compare(a, b));
    subscription.dedup();
    let mut topics = Vec::with_capacity(subscription.len());
    for name in &subscription {
        match group.topic_index(name) {
            Some(t) => topics.push(t),
            None => warnings.push(format!(
                "member {who:?} subscribes to topic {name:?}, which is not in topics: skipped, as \
                 Kafka skips topics missing from metadata"
            )),
        }
    }
    let mut owned = Vec::new();
    let mut seen = BTreeSet::new();
    for (name, parts) in raw.owned.iter().flatten() {
        let parts = parts.as_array().ok_or_else(|| {
            format!("member {who:?}: owned[{name:?}] must be a list of partitions")
        })?;
        let t = group.topic_index(name).ok_or_else(|| {
            format!("member {who:?}: owned names topic {name:?}, which is not in topics")
        })?;
        for p in parts {
            let p = p.as_i64().ok_or_else(|| {
                format!("member {who:?}: owned[{name:?}] holds {p}, not a partition number")
            })?;
            if p < 0 {
                return Err(format!(
                    "member {who:?}: owned[{name:?}] holds {p}; partitions are numbered from 0"
                ));
            }
            let count = group.topic(t).partitions;
            if p >= i64::from(count) {
                return Err(format!(
                    "member {who:?}: owns {name}-{p}, but {name:?} has {count} partitions"
                ));
            }
            let tp = TopicPartition::new(t, p as i32);
            if !seen.insert(tp) {
                return Err(format!("member {who:?}: owns {name}-{p} twice"));
            }
            owned.push(tp);
        }
    }
    // -1 is Kafka's DEFAULT_GENERATION: no generation. Any other negative value is fed where
    // Kafka feeds it (reference README, "How inputs are fed"): the Subscription turns it into
    // `Optional.empty()`, but each sticky assignor's userData keeps it, and `memberData` reads
    // it from there (`CooperativeStickyAssignor.memberData` falls back to the userData when the
    // Subscription has none; `StickyAssignor` reads only its userData). So a present -2 is
    // weighed as -2 against others' claims (`allSubscriptionsEqual`) and goes into
    // `prevAssignment` (`generation.get() < maxGeneration`), where an absent one would not.
    let generation = match raw.generation {
        None | Some(-1) => None,
        Some(g) => Some(i32::try_from(g).map_err(|_| {
            format!(
                "member {who:?}: generation {g} is outside Java's int range ({}..={})",
                i32::MIN,
                i32::MAX
            )
        })?),
    };
    Ok(Member {
        member_id: raw.member_id,
        group_instance_id: raw.group_instance_id,
        subscription,
        topics,
        owned,
        generation,
        // The Subscription's own: `ConsumerPartitionAssignor.Subscription` keeps only a
        // non-negative one.
        subscription_generation: generation.filter(|&g| g >= 0),
        rack: raw.rack,
    })
}

/// member id -> topic -> partitions: members and topics sorted, partitions ascending, topics
/// with no partitions left out, every member present.
pub type NamedAssignment = BTreeMap<String, BTreeMap<String, Vec<i32>>>;

/// Names an assignment; with `skip_empty`, members that get nothing are left out (the
/// cooperative `withheld`/`revoked`/`added` maps).
pub fn named_assignment(
    group: &GroupSpec,
    parts: &MemberPartitions,
    skip_empty: bool,
) -> NamedAssignment {
    let mut out = BTreeMap::new();
    for (member, tps) in group.members.iter().zip(parts) {
        if skip_empty && tps.is_empty() {
            continue;
        }
        let mut topics: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for tp in tps {
            topics
                .entry(group.topic(tp.topic).name.clone())
                .or_default()
                .push(tp.partition);
        }
        for ps in topics.values_mut() {
            ps.sort_unstable();
        }
        out.insert(member.member_id.clone(), topics);
    }
    out
}

#[derive(Serialize)]
struct CooperativeOut {
    added: NamedAssignment,
    algorithm: &'static str,
    rejoin_requested_by: Vec<String>,
    revoked: NamedAssignment,
    target: NamedAssignment,
    withheld: NamedAssignment,
    withheld_count: usize,
}

// Fields in alphabetical order: the output has sorted keys.
#[derive(Serialize)]
struct AssignOut<'a> {
    assignment: NamedAssignment,
    #[serde(skip_serializing_if = "Option::is_none")]
    cooperative: Option<CooperativeOut>,
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subscription_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unmatched: Option<Vec<i32>>,
}

/// The output line for a case and its result.
pub fn render(case: &AssignCase, result: &AssignResult) -> String {
    let group = &case.group;
    let cooperative = result.cooperative.as_ref().map(|c| {
        let mut rejoin: Vec<String> = c
            .rejoin_requested_by
            .iter()
            .map(|&m| group.members[m].member_id.clone())
            .collect();
        rejoin.sort();
        CooperativeOut {
            added: named_assignment(group, &c.added, true),
            algorithm: c.algorithm,
            rejoin_requested_by: rejoin,
            revoked: named_assignment(group, &c.revoked, true),
            target: named_assignment(group, &c.target, false),
            withheld: named_assignment(group, &c.withheld, true),
            withheld_count: c.withheld.iter().map(Vec::len).sum(),
        }
    });
    let out = AssignOut {
        assignment: named_assignment(group, &result.assignment, false),
        cooperative,
        id: &case.id,
        protocol: (group.protocol != case.assignor.default_protocol())
            .then(|| group.protocol.name()),
        subscription_type: result.subscription_type.map(|s| s.name()),
        unmatched: result.unmatched.clone(),
    };
    serde_json::to_string(&out).expect("assignment output serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_renders_a_range_case() {
        let line = r#"{"id":"x","assignor":"range","category":"extra","topics":{"t0":3},
            "members":[{"member_id":"m-2","topics":["t0"]},{"member_id":"m-1","topics":["t0","gone"]}]}"#;
        let case = parse_case(line).unwrap();
        assert_eq!(case.warnings.len(), 1);
        let result = case.assignor.assign(&case.group).unwrap();
        assert_eq!(
            render(&case, &result),
            r#"{"assignment":{"m-1":{"t0":[0,1]},"m-2":{"t0":[2]}},"id":"x"}"#
        );
    }

    #[test]
    fn a_cooperative_clients_owned_partitions_are_what_on_join_prepare_leaves() {
        // m-1 left u: as the reference harness feeds Kafka, its onJoinPrepare revoked u-0
        // before the JoinGroup, so nobody claims u-0 and m-2 gets it now. The server-side
        // assignors read `owned` as the previous target assignment, untouched.
        let line = r#"{"id":"x","assignor":"cooperative-sticky","topics":{"t":2,"u":1},
            "members":[{"member_id":"m-2","topics":["t","u"],"generation":1},
            {"member_id":"m-1","topics":["t"],"owned":{"t":[0,1],"u":[0]},"generation":1}]}"#;
        let case = parse_case(line).unwrap();
        let m1 = &case.group.members[1];
        assert_eq!(m1.owned.len(), 2);
        let result = case.assignor.assign(&case.group).unwrap();
        assert!(render(&case, &result)
            .starts_with(r#"{"assignment":{"m-1":{"t":[0,1]},"m-2":{"u":[0]}}"#));
        let server = line.replace("cooperative-sticky", "uniform");
        let case = parse_case(&server).unwrap();
        assert_eq!(case.group.members[1].owned.len(), 3);
    }

    #[test]
    fn rejects_bad_input_with_a_reason() {
        let err = |l: &str| parse_case(l).err().unwrap();
        assert!(err("{not json").starts_with("malformed JSON"));
        assert!(
            err(r#"{"id":"x","assignor":"nope","topics":{},"members":[]}"#)
                .contains("unknown assignor")
        );
        assert!(
            err(r#"{"id":"x","assignor":"range","topics":{"t":-1},"members":[]}"#)
                .contains("negative")
        );
        let dup = r#"{"id":"x","assignor":"range","topics":{"t":1},"members":[
            {"member_id":"a","topics":["t"]},{"member_id":"a","topics":["t"]}]}"#;
        assert!(err(dup).contains("duplicate member_id"));
        let typo = r#"{"id":"x","assignor":"range","topics":{"t":1},"members":[{"member_id":"a","topcs":["t"]}]}"#;
        assert!(err(typo).contains("topcs"));
        let coop =
            r#"{"id":"x","assignor":"range","protocol":"cooperative","topics":{},"members":[]}"#;
        assert!(err(coop).contains("does not support"));
    }

    #[test]
    fn refuses_ownership_kafka_could_not_have_sent() {
        let err = |members: &str| {
            parse_case(&format!(
                r#"{{"id":"x","assignor":"sticky","topics":{{"t":2}},"members":[{members}]}}"#
            ))
            .err()
            .unwrap_or_else(|| panic!("{members} was accepted"))
        };
        assert_eq!(
            err(r#"{"member_id":"a","topics":["t"],"owned":{"gone":[0]}}"#),
            r#"member "a": owned names topic "gone", which is not in topics"#
        );
        assert_eq!(
            err(r#"{"member_id":"a","topics":["t"],"owned":{"t":[-1]}}"#),
            r#"member "a": owned["t"] holds -1; partitions are numbered from 0"#
        );
        assert!(
            err(r#"{"member_id":"a","topics":["t"],"generation":-3000000000}"#)
                .contains("generation -3000000000 is outside Java's int range")
        );
        assert!(err(
            r#"{"member_id":"a","group_instance_id":"pod-1","topics":["t"]},
               {"member_id":"b","group_instance_id":"pod-1","topics":["t"]}"#
        )
        .starts_with(r#"duplicate group_instance_id "pod-1""#));
        // Kafka's DEFAULT_GENERATION is no generation, not an error.
        let ok = r#"{"id":"x","assignor":"sticky","topics":{"t":2},"members":[{"member_id":"a","topics":["t"],"generation":-1}]}"#;
        assert_eq!(parse_case(ok).unwrap().group.members[0].generation, None);
    }

    #[test]
    fn refuses_more_partitions_than_the_limit_before_allocating() {
        let line =
            r#"{"id":"x","assignor":"range","topics":{"a":6000000,"b":6000000},"members":[]}"#;
        assert_eq!(
            parse_case(line).err().unwrap(),
            r#"topic "b": partition count 6000000 makes 12000000 partitions in all, above the limit of 10000000"#
        );
    }
}
