//! Partition assignors: pure functions from a group's subscriptions (and previous ownership) to
//! an assignment, giving exactly what Apache Kafka 4.3.1 gives for the same input.
//!
//! One file per assignor; this module holds the shared input/output types, the trait, Kafka's
//! member ordering and the registry by name. `json` is the `cgsim assign` wire format.
//! `streams` is the other kind of assignor: Kafka Streams task assignment for streams groups
//! (KIP-1071), tasks to the members of processes rather than partitions to consumers.

pub mod co_partition;
pub mod json;
pub mod racks;
pub mod range;
pub mod roundrobin;
pub mod server_range;
pub mod sticky;
pub mod streams;
pub mod table;
pub mod uniform;

use crate::java::{str_order_is_java_order, string_compare, Uuid};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

/// Index of a topic in [`GroupSpec::topics`] (which is sorted by name, so index order is name
/// order).
pub type TopicIdx = u32;

/// A partition of a topic of the group's metadata.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct TopicPartition {
    pub topic: TopicIdx,
    pub partition: i32,
}

impl TopicPartition {
    pub fn new(topic: TopicIdx, partition: i32) -> Self {
        TopicPartition { topic, partition }
    }
}

/// A topic as the cluster metadata describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topic {
    pub name: String,
    pub partitions: i32,
    /// The topic id, used by the server-side uniform assignor (it orders and hashes topic ids).
    pub id: Option<Uuid>,
}

/// The rebalance protocol a client runs (KIP-429).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum RebalanceProtocol {
    Eager,
    Cooperative,
}

impl RebalanceProtocol {
    pub fn name(self) -> &'static str {
        match self {
            RebalanceProtocol::Eager => "eager",
            RebalanceProtocol::Cooperative => "cooperative",
        }
    }
}

/// One member's subscription as the assignor sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub member_id: String,
    /// `group.instance.id` of a static member (KIP-345).
    pub group_instance_id: Option<String>,
    /// Every subscribed topic name, sorted (Java order) and deduplicated, including topics missing
    /// from the metadata (the KIP-848 subscription type counts names).
    pub subscription: Vec<String>,
    /// The subscribed topics present in the metadata, ascending.
    pub topics: Vec<TopicIdx>,
    /// Previous ownership in input order (sticky family: owned partitions; uniform: previous
    /// target assignment). Partitions of topics missing from the metadata are left out.
    pub owned: Vec<TopicPartition>,
    /// Generation of that ownership (`memberData.generation`); `None` for a brand-new member
    /// (Kafka's -1).
    pub generation: Option<i32>,
    /// The Subscription's `generationId`, by which Kafka's sticky assignors weigh this
    /// member's claim when a later one competes with it (`allSubscriptionsEqual`). The same as
    /// `generation` but for a `sticky` member in a running group, whose userData keeps the
    /// generation of its last assignment while it joins from another (after a reset: none).
    pub subscription_generation: Option<i32>,
    /// `client.rack` (KIP-881), sent in the Subscription's `rackId`; an empty string is no rack,
    /// as Kafka's assignors drop it.
    pub rack: Option<String>,
}

impl Member {
    pub fn subscribes(&self, topic: TopicIdx) -> bool {
        self.topics.binary_search(&topic).is_ok()
    }
}

/// The input to one assignor run: metadata, members in the leader's (or broker's) map insertion
/// order, and the protocol the clients run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpec {
    /// Sorted by name in Java `String` order.
    pub topics: Vec<Topic>,
    pub members: Vec<Member>,
    pub protocol: RebalanceProtocol,
    /// The racks of every partition's replicas, as the cluster metadata gives them.
    pub racks: racks::PartitionRacks,
}

/// Every partition of `topics`, counted across topics.
pub fn total_partitions(topics: &[Topic]) -> i64 {
    topics.iter().map(|t| i64::from(t.partitions)).sum()
}

impl GroupSpec {
    /// Every partition of the group's topics (the size an input is judged by).
    pub fn total_partitions(&self) -> i64 {
        total_partitions(&self.topics)
    }

    pub fn topic_index(&self, name: &str) -> Option<TopicIdx> {
        self.topics
            .binary_search_by(|t| string_compare(&t.name, name))
            .ok()
            .map(|i| i as TopicIdx)
    }

    pub fn topic(&self, idx: TopicIdx) -> &Topic {
        &self.topics[idx as usize]
    }

    /// Every member subscribes to the same topics of the metadata. Compared by topic index,
    /// which is cheap; KIP-848's subscription type compares names ([`SubscriptionType::of`]).
    pub fn same_topics(&self) -> bool {
        self.members.windows(2).all(|w| w[0].topics == w[1].topics)
    }

    /// Topics at least one member subscribes to, ascending.
    pub fn subscribed_topics(&self) -> Vec<TopicIdx> {
        let mut all: Vec<TopicIdx> = self
            .members
            .iter()
            .flat_map(|m| m.topics.iter().copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// Per member (indexed like [`GroupSpec::members`]), the partitions it is given.
pub type MemberPartitions = Vec<Vec<TopicPartition>>;

/// KIP-848 subscription type, as the server-side assignors see it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SubscriptionType {
    Homogeneous,
    Heterogeneous,
}

impl SubscriptionType {
    /// HOMOGENEOUS iff every subscribed topic name is subscribed by every member
    /// (`ConsumerGroup.subscriptionType`).
    pub fn of(group: &GroupSpec) -> SubscriptionType {
        let first = group.members.first().map(|m| &m.subscription);
        if group.members.iter().all(|m| Some(&m.subscription) == first) {
            SubscriptionType::Homogeneous
        } else {
            SubscriptionType::Heterogeneous
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SubscriptionType::Homogeneous => "Homogeneous",
            SubscriptionType::Heterogeneous => "Heterogeneous",
        }
    }
}

/// What cooperative-sticky decided beyond the assignment itself (KIP-429): the full sticky target,
/// what was withheld because another member still owns it, and what each client revokes and adds.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CooperativeDetails {
    /// Which AbstractStickyAssignor builder ran: "constrained" or "general".
    pub algorithm: &'static str,
    pub target: MemberPartitions,
    pub withheld: MemberPartitions,
    pub revoked: MemberPartitions,
    pub added: MemberPartitions,
    /// Member indexes that revoked something and so call `requestRejoin`.
    pub rejoin_requested_by: Vec<usize>,
}

/// An assignor's answer.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AssignResult {
    pub assignment: MemberPartitions,
    /// Server-side assignors report the subscription type they ran with.
    pub subscription_type: Option<SubscriptionType>,
    pub cooperative: Option<CooperativeDetails>,
    /// Co-partition: partition indexes that exist in some subscribed topics but not all.
    pub unmatched: Option<Vec<i32>>,
}

impl AssignResult {
    pub fn plain(assignment: MemberPartitions) -> Self {
        AssignResult {
            assignment,
            ..AssignResult::default()
        }
    }
}

/// Why an assignor could not answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssignError(pub String);

/// Ends the message of an [`AssignError`] for an input on which Kafka's assignor never
/// returns (it loops): the model stops and says so where Kafka's leader would spin.
pub const NEVER_RETURNS: &str = "Kafka's assignor never returns on this input";

impl AssignError {
    /// Whether Kafka's own assignor would never return here (rather than throw).
    pub fn never_returns(message: &str) -> bool {
        message.ends_with(NEVER_RETURNS)
    }
}

impl fmt::Display for AssignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AssignError {}

/// A partition assignor, selected by name (`partition.assignment.strategy` /
/// `group.remote.assignor`).
pub trait Assignor: Sync {
    /// Kafka's protocol name for it ("range", "cooperative-sticky", "uniform", ...).
    fn name(&self) -> &'static str;
    /// Rebalance protocols it supports (`ConsumerPartitionAssignor.supportedProtocols`);
    /// EAGER-only unless it says otherwise, like Kafka's default.
    fn supported_protocols(&self) -> &'static [RebalanceProtocol] {
        &[RebalanceProtocol::Eager]
    }
    /// The protocol a client listing only this assignor runs: the highest supported.
    fn default_protocol(&self) -> RebalanceProtocol {
        *self
            .supported_protocols()
            .iter()
            .max()
            .expect("an assignor supports a protocol")
    }
    /// KIP-848 server-side assignors run on the broker and report the subscription type.
    fn is_server_side(&self) -> bool {
        false
    }
    fn assign(&self, group: &GroupSpec) -> Result<AssignResult, AssignError>;
}

/// Partitions (or a streams case's tasks) in all on one `cgsim assign` input line: far above
/// Kafka's largest groups (the 1,000,000 of the benchmarks), far below what would exhaust memory
/// (the assignors keep a few words each). Both line parsers (`json`, `streams::json`) hold to it.
pub const MAX_PARTITIONS: u64 = 10_000_000;

/// An assignment as Kafka's tools print it (`ConsumerGroupCommand.getAssignmentString`): per
/// topic `topic:p,p,...` with partitions ascending, the topics' strings sorted (Java's
/// `String.compareTo`) and joined by `;`; `-` when empty. Shared by `cgsim assign --table` and
/// the report's `--describe` tables.
pub fn assignment_text<'a>(parts: impl IntoIterator<Item = (&'a str, u32)>) -> String {
    let mut by_topic: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for (topic, p) in parts {
        by_topic.entry(topic).or_default().push(p);
    }
    if by_topic.is_empty() {
        return "-".to_string();
    }
    let mut entries: Vec<String> = by_topic
        .into_iter()
        .map(|(topic, mut ps)| {
            ps.sort_unstable();
            let list: Vec<String> = ps.iter().map(u32::to_string).collect();
            format!("{topic}:{}", list.join(","))
        })
        .collect();
    entries.sort_by(|a, b| string_compare(a, b));
    entries.join(";")
}

/// Every assignor name `cgsim` knows, built or not.
pub const ASSIGNOR_NAMES: &[&str] = &[
    "range",
    "roundrobin",
    "sticky",
    "cooperative-sticky",
    "uniform",
    "server-range",
    "co-partition",
];

/// The server assignors a KIP-848 member may ask for (`group.consumer.assignors`' defaults), by
/// the names members send in `ServerAssignor`.
pub const SERVER_ASSIGNORS: &[&str] = &["uniform", "range"];

/// The cgsim assignor for a server assignor's name (the server's `range` is cgsim's
/// `server-range`, its own class in Kafka beside the client's `RangeAssignor`).
pub fn server_assignor(remote: &str) -> &str {
    match remote {
        "range" => "server-range",
        other => other,
    }
}

static RANGE: range::RangeAssignor = range::RangeAssignor;
static ROUNDROBIN: roundrobin::RoundRobinAssignor = roundrobin::RoundRobinAssignor;
static SERVER_RANGE: server_range::ServerRangeAssignor = server_range::ServerRangeAssignor;
static CO_PARTITION: co_partition::CoPartitionAssignor = co_partition::CoPartitionAssignor;
static STICKY: sticky::StickyAssignor = sticky::StickyAssignor;
static COOPERATIVE_STICKY: sticky::CooperativeStickyAssignor = sticky::CooperativeStickyAssignor;
static UNIFORM: uniform::UniformAssignor = uniform::UniformAssignor;

/// The assignor of that name, or why there is none.
pub fn by_name(name: &str) -> Result<&'static dyn Assignor, AssignError> {
    match name {
        "range" => Ok(&RANGE),
        "roundrobin" => Ok(&ROUNDROBIN),
        "server-range" => Ok(&SERVER_RANGE),
        "co-partition" => Ok(&CO_PARTITION),
        "sticky" => Ok(&STICKY),
        "cooperative-sticky" => Ok(&COOPERATIVE_STICKY),
        "uniform" => Ok(&UNIFORM),
        _ => Err(AssignError(format!(
            "unknown assignor {name:?} (known: {})",
            ASSIGNOR_NAMES.join(", ")
        ))),
    }
}

/// `AbstractPartitionAssignor.MemberInfo` order, used by range, roundrobin, server-range and
/// co-partition: static members first by `group.instance.id`, then the rest by member id, both
/// in Java `String.compareTo` order. Returns member indexes.
pub fn member_info_order(members: &[Member]) -> Vec<usize> {
    // Ids are almost always ASCII; then byte order is Java's, checked once per id here rather
    // than on both ids of every comparison.
    let bytes_suffice = members.iter().all(|m| {
        str_order_is_java_order(&m.member_id)
            && m.group_instance_id
                .as_deref()
                .is_none_or(str_order_is_java_order)
    });
    if !bytes_suffice {
        let mut order: Vec<usize> = (0..members.len()).collect();
        order.sort_by(|&a, &b| member_info_cmp(&members[a], &members[b], string_compare));
        return order;
    }
    // Member ids share a long prefix ("consumer-<group>-<n>-"), so most comparisons of whole ids
    // walk it again. Sorting by the eight bytes after the prefix the sort keys share first, and
    // comparing whole ids only on a tie, makes almost every comparison one of two integers.
    let keys = MemberInfoKeys::new(members);
    let mut keyed: Vec<(u64, u32)> = (0..members.len())
        .map(|m| (keys.key(&members[m]), m as u32))
        .collect();
    // Pairs in their natural order (unstable, but the index makes every pair distinct): a
    // comparator that could fall back on the whole ids cost twice the instructions of the sort
    // itself on 2,000 members (`benches/data` T2). Equal keys are rare, and each run of them is
    // then put in whole-id order; the stable sort keeps index order among equal ids.
    keyed.sort_unstable();
    for tied in keyed.chunk_by_mut(|a, b| a.0 == b.0) {
        if tied.len() > 1 {
            tied.sort_by(|&(_, a), &(_, b)| {
                member_info_cmp(&members[a as usize], &members[b as usize], str::cmp)
            });
        }
    }
    keyed.into_iter().map(|(_, m)| m as usize).collect()
}

/// Integer sort keys consistent with [`member_info_cmp`] under byte order: the top bit says
/// dynamic (static members sort first), the rest are the 63 bits after the prefix every string
/// of the member's kind shares (its instance id if static, else its member id), zero-padded. A
/// smaller key means an earlier member; equal keys decide nothing. (Zero padding is sound: where
/// one string ends inside the key, it is a prefix of the other up to there, and sorts first.)
struct MemberInfoKeys {
    /// Shared prefix length of the static members' instance ids, of the dynamic members' ids.
    prefix: [usize; 2],
}

impl MemberInfoKeys {
    fn new(members: &[Member]) -> Self {
        let mut shared: [Option<&[u8]>; 2] = [None, None];
        for m in members {
            let (kind, id) = Self::kind_and_id(m);
            shared[kind] = Some(match shared[kind] {
                None => id,
                Some(p) => &p[..p.iter().zip(id).take_while(|(a, b)| a == b).count()],
            });
        }
        MemberInfoKeys {
            prefix: shared.map(|p| p.map_or(0, <[u8]>::len)),
        }
    }

    fn kind_and_id(m: &Member) -> (usize, &[u8]) {
        match &m.group_instance_id {
            Some(id) => (0, id.as_bytes()),
            None => (1, m.member_id.as_bytes()),
        }
    }

    fn key(&self, m: &Member) -> u64 {
        let (kind, id) = Self::kind_and_id(m);
        let mut bytes = [0u8; 8];
        let rest = &id[self.prefix[kind]..];
        let n = rest.len().min(8);
        bytes[..n].copy_from_slice(&rest[..n]);
        // 63 bits: the eighth byte loses its lowest bit, so keys differing only there tie.
        ((kind as u64) << 63) | (u64::from_be_bytes(bytes) >> 1)
    }
}

/// `MemberInfo.compareTo`, with `cmp` as the string order.
fn member_info_cmp(a: &Member, b: &Member, cmp: impl Fn(&str, &str) -> Ordering) -> Ordering {
    match (&a.group_instance_id, &b.group_instance_id) {
        (Some(x), Some(y)) => cmp(x, y).then_with(|| cmp(&a.member_id, &b.member_id)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => cmp(&a.member_id, &b.member_id),
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// A group with the given topics (name, partitions) and members (id, topics).
    pub fn group(topics: &[(&str, i32)], members: &[(&str, &[&str])]) -> GroupSpec {
        let mut topics: Vec<Topic> = topics
            .iter()
            .map(|(n, p)| Topic {
                name: n.to_string(),
                partitions: *p,
                id: None,
            })
            .collect();
        topics.sort_by(|a, b| string_compare(&a.name, &b.name));
        let mut spec = GroupSpec {
            topics,
            members: vec![],
            protocol: RebalanceProtocol::Eager,
            racks: racks::PartitionRacks::default(),
        };
        for (id, subs) in members {
            let mut subscription: Vec<String> = subs.iter().map(|s| s.to_string()).collect();
            subscription.sort_by(|a, b| string_compare(a, b));
            let topics = subscription
                .iter()
                .filter_map(|s| spec.topic_index(s))
                .collect();
            spec.members.push(Member {
                member_id: id.to_string(),
                group_instance_id: None,
                subscription,
                topics,
                owned: vec![],
                generation: None,
                subscription_generation: None,
                rack: None,
            });
        }
        spec
    }

    /// Member id -> "topic-partition" strings, sorted, for readable assertions.
    pub fn named(spec: &GroupSpec, a: &MemberPartitions) -> Vec<(String, Vec<String>)> {
        spec.members
            .iter()
            .zip(a)
            .map(|(m, parts)| {
                let mut ps = parts.clone();
                ps.sort();
                let names = ps
                    .iter()
                    .map(|tp| format!("{}-{}", spec.topic(tp.topic).name, tp.partition))
                    .collect();
                (m.member_id.clone(), names)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignment_text_is_kafkas() {
        let parts = [("orders", 8), ("orders", 0), ("audit", 2), ("orders", 12)];
        assert_eq!(assignment_text(parts), "audit:2;orders:0,8,12");
        // Entries sort as whole strings: `a-b:` before `a:` ('-' < ':').
        assert_eq!(assignment_text([("a", 1), ("a-b", 0)]), "a-b:0;a:1");
        assert_eq!(assignment_text([]), "-");
    }

    #[test]
    fn static_members_sort_first() {
        let mut g =
            test_support::group(&[("t", 1)], &[("a", &["t"]), ("b", &["t"]), ("c", &["t"])]);
        g.members[2].group_instance_id = Some("pod-1".into());
        g.members[1].group_instance_id = Some("pod-0".into());
        assert_eq!(member_info_order(&g.members), [1, 2, 0]);
    }

    /// The keyed sort against a plain stable sort with Java's `String.compareTo`, on ids that
    /// share long prefixes, end inside the key, differ only in the key's last bit, repeat, or
    /// hold characters outside the BMP (where byte order is not Java's).
    #[test]
    fn member_info_order_matches_a_plain_java_sort() {
        let ids = [
            "consumer-grp-1-b",
            "consumer-grp-10-a",
            "consumer-grp-1",
            "consumer-grp-1\0",
            "consumer-grp-12345678a",
            "consumer-grp-12345678b",
            "consumer-grp-12345679",
            "consumer-grp-2",
            "consumer-grp-1-b",
            "consumer-grp-",
            "c",
            "",
        ];
        let odd = ["consumer-\u{1F600}", "consumer-\u{FF5E}", "consumer-\u{E9}"];
        for with_odd in [false, true] {
            for statics in [0usize, 1, 3] {
                let names: Vec<&str> = ids
                    .iter()
                    .chain(if with_odd { &odd[..] } else { &[] })
                    .copied()
                    .collect();
                let mut g = test_support::group(
                    &[("t", 1)],
                    &names.iter().map(|&n| (n, &["t"][..])).collect::<Vec<_>>(),
                );
                for (i, m) in g.members.iter_mut().enumerate() {
                    if statics > 0 && i % 4 < statics {
                        m.group_instance_id = Some(format!("pod-{}", (i * 7) % 5));
                    }
                }
                let mut want: Vec<usize> = (0..g.members.len()).collect();
                want.sort_by(|&a, &b| {
                    member_info_cmp(&g.members[a], &g.members[b], string_compare)
                });
                assert_eq!(member_info_order(&g.members), want, "{with_odd} {statics}");
            }
        }
    }
}
