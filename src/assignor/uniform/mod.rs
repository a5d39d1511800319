//! The KIP-848 server-side `UniformAssignor` (`group.remote.assignor = "uniform"`) as of Kafka
//! 4.3.1 (ALGORITHMS.md 7.2). It is sticky: each member's previous *target* assignment (`owned`)
//! is the starting point. It dispatches on the subscription type, like Kafka's `UniformAssignor`:
//! [`homogeneous`] when every member subscribes to the same topics, else [`heterogeneous`].
//!
//! Both builders break ties with Java collection order, so the input is resolved here into the
//! orders Kafka's broker would see (reference/README.md, "How inputs are fed"):
//! - `memberIds()` iterates the member-spec `HashMap` (default capacity, filled in `members`
//!   order), so member order is Java bucket order of the member id strings;
//! - a member's previous assignment is a `HashMap<Uuid, HashSet<Integer>>` (default capacity,
//!   topics in input order, each partition set a `new HashSet<>(list)`), whose iteration order
//!   the homogeneous builder follows when it trims a member down to its quota;
//! - topic ids are hashed and compared, so every topic the assignor touches needs one.
//!
//! Everything else is dense integers: topic indexes, member indexes, per-topic owner arrays.

mod heterogeneous;
mod homogeneous;

use super::{
    AssignError, AssignResult, Assignor, GroupSpec, Member, MemberPartitions, RebalanceProtocol,
    SubscriptionType, TopicIdx, TopicPartition,
};
use crate::java::{bucket_index, iteration_order, Capacity, JavaHash, Uuid};
use std::collections::BTreeMap;

pub struct UniformAssignor;

impl Assignor for UniformAssignor {
    fn name(&self) -> &'static str {
        "uniform"
    }

    fn supported_protocols(&self) -> &'static [RebalanceProtocol] {
        // Like server-range: the broker reconciles each member towards its target incrementally.
        &[RebalanceProtocol::Cooperative]
    }

    fn is_server_side(&self) -> bool {
        true
    }

    fn assign(&self, group: &GroupSpec) -> Result<AssignResult, AssignError> {
        let subscription_type = subscription_type(group);
        let previous = PreviousOwners::new(group)?;
        let ids = topic_ids(group, subscription_type, &previous)?;
        let assignment = if group.members.is_empty() {
            Vec::new()
        } else {
            let order = member_ids_order(&group.members);
            match subscription_type {
                SubscriptionType::Homogeneous => {
                    homogeneous::assign(group, &ids, &order, &previous)?
                }
                SubscriptionType::Heterogeneous => heterogeneous::assign(group, &ids, &order)?,
            }
        };
        Ok(AssignResult {
            subscription_type: Some(subscription_type),
            ..AssignResult::plain(assignment)
        })
    }
}

/// [`SubscriptionType::of`], without comparing topic names when every subscribed name is in the
/// metadata: then equal topic index lists mean equal name sets.
pub(crate) fn subscription_type(group: &GroupSpec) -> SubscriptionType {
    let Some(first) = group.members.first() else {
        return SubscriptionType::of(group);
    };
    if group
        .members
        .iter()
        .any(|m| m.topics.len() != m.subscription.len())
    {
        return SubscriptionType::of(group);
    }
    if group.members.iter().all(|m| m.topics == first.topics) {
        SubscriptionType::Homogeneous
    } else {
        SubscriptionType::Heterogeneous
    }
}

/// `groupSpec.memberIds()`: the key set of a `HashMap<String, MemberSpec>` built with the default
/// capacity and filled in `members` order (`TargetAssignmentBuilder.build()`). Returns member
/// indexes in Java iteration order.
pub(crate) fn member_ids_order(members: &[Member]) -> Vec<usize> {
    let hashes: Vec<i32> = members.iter().map(|m| m.member_id.java_hash()).collect();
    iteration_order(&hashes, Capacity::Default)
}

/// The id of every topic the assignor touches (subscribed or previously assigned), by topic
/// index; `None` for topics nobody touches. Kafka keys everything by topic id, so a touched topic
/// without one cannot be assigned, and two topics sharing an id would be one topic to Kafka.
fn topic_ids(
    group: &GroupSpec,
    subscription_type: SubscriptionType,
    previous: &PreviousOwners,
) -> Result<Vec<Option<Uuid>>, AssignError> {
    let mut touched = previous.owned_topics.clone();
    // Homogeneous: everybody subscribes to the first member's topics.
    let subscribers = match subscription_type {
        SubscriptionType::Homogeneous => group.members.len().min(1),
        SubscriptionType::Heterogeneous => group.members.len(),
    };
    for m in &group.members[..subscribers] {
        for &t in &m.topics {
            touched[t as usize] = true;
        }
    }
    let mut ids = vec![None; group.topics.len()];
    let mut seen: BTreeMap<(i64, i64), &str> = BTreeMap::new();
    for (t, topic) in group.topics.iter().enumerate() {
        if !touched[t] {
            continue;
        }
        let id = topic.id.ok_or_else(|| {
            AssignError(format!(
                "the uniform assignor needs topic ids: topic {:?} has none in topic_ids",
                topic.name
            ))
        })?;
        if let Some(other) = seen.insert((id.msb, id.lsb), &topic.name) {
            return Err(AssignError(format!(
                "topics {other:?} and {:?} share the topic id {id}",
                topic.name
            )));
        }
        ids[t] = Some(id);
    }
    Ok(ids)
}

/// Which partitions are in somebody's previous target assignment (Kafka's
/// `GroupSpec.isPartitionAssigned`), checked on the way: a KIP-848 target gives each partition to
/// one member at most, so `owned` claiming a partition twice cannot come from Kafka's
/// coordinator.
pub(crate) struct PreviousOwners {
    offsets: PartitionOffsets,
    /// One bit per flat partition.
    assigned: Vec<u64>,
    /// Per topic index: somebody previously held a partition of it.
    owned_topics: Vec<bool>,
}

impl PreviousOwners {
    fn new(group: &GroupSpec) -> Result<Self, AssignError> {
        let offsets = PartitionOffsets::new(group);
        let mut assigned = vec![0u64; offsets.total().div_ceil(64)];
        let mut owned_topics = vec![false; group.topics.len()];
        for m in &group.members {
            if m.topics.iter().any(|&t| t as usize >= group.topics.len()) {
                return Err(AssignError(format!(
                    "member {:?} subscribes to a topic index outside the metadata",
                    m.member_id
                )));
            }
            for tp in &m.owned {
                let in_metadata = group
                    .topics
                    .get(tp.topic as usize)
                    .is_some_and(|t| (0..t.partitions).contains(&tp.partition));
                if !in_metadata {
                    return Err(AssignError(format!(
                        "member {:?} was assigned {tp:?}, which is not in the metadata",
                        m.member_id
                    )));
                }
                let flat = offsets.flat(tp.topic, tp.partition);
                let (word, bit) = (flat / 64, 1u64 << (flat % 64));
                if assigned[word] & bit != 0 {
                    return Err(double_claim(group, *tp));
                }
                assigned[word] |= bit;
                owned_topics[tp.topic as usize] = true;
            }
        }
        Ok(PreviousOwners {
            offsets,
            assigned,
            owned_topics,
        })
    }

    /// `isPartitionAssigned`: in somebody's previous target, kept or not.
    /// Calls `f` with each partition of `topic` (of `n`) in nobody's previous assignment, in
    /// ascending order: 64 partitions a step where all are taken, as after most rebalances.
    pub(crate) fn for_each_unassigned(&self, topic: TopicIdx, n: i32, mut f: impl FnMut(i32)) {
        let start = self.offsets.flat(topic, 0);
        let end = start + n.max(0) as usize;
        let mut flat = start;
        while flat < end {
            let (word, bit) = (flat / 64, flat % 64);
            // The free slots of this word from `bit` on, cut at the topic's end.
            let mut free = !self.assigned[word] >> bit;
            let span = (64 - bit).min(end - flat);
            if span < 64 {
                free &= (1u64 << span) - 1;
            }
            while free != 0 {
                let i = free.trailing_zeros() as usize;
                f((flat + i - start) as i32);
                free &= free - 1;
            }
            flat += span;
        }
    }

    /// Whether a partition is in someone's previous assignment (the test's reference).
    #[cfg(test)]
    fn is_assigned(&self, topic: TopicIdx, partition: i32) -> bool {
        let flat = self.offsets.flat(topic, partition);
        self.assigned[flat / 64] & (1u64 << (flat % 64)) != 0
    }
}

#[cfg(test)]
#[test]
fn unassigned_partitions_come_word_by_word_in_order() {
    // Three topics of 70, 3 and 130 partitions; some owned across word boundaries.
    let assigned_flat = [0usize, 1, 63, 64, 69, 70, 72, 100, 127, 128, 199, 202];
    let offsets = PartitionOffsets {
        start: vec![0, 70, 73, 203],
    };
    let mut assigned = vec![0u64; 203usize.div_ceil(64)];
    for &f in &assigned_flat {
        assigned[f / 64] |= 1 << (f % 64);
    }
    let previous = PreviousOwners {
        offsets,
        assigned,
        owned_topics: vec![true; 3],
    };
    for (t, n) in [(0, 70), (1, 3), (2, 130)] {
        let mut got = Vec::new();
        previous.for_each_unassigned(t, n, |p| got.push(p));
        let want: Vec<i32> = (0..n).filter(|&p| !previous.is_assigned(t, p)).collect();
        assert_eq!(got, want, "topic {t}");
    }
}

fn double_claim(group: &GroupSpec, tp: TopicPartition) -> AssignError {
    let claimants: Vec<&str> = group
        .members
        .iter()
        .filter(|m| m.owned.contains(&tp))
        .map(|m| m.member_id.as_str())
        .collect();
    AssignError(format!(
        "partition {}-{} is in the previous target assignment of several members: {claimants:?}",
        group.topic(tp.topic).name,
        tp.partition
    ))
}

/// Dense numbering of every partition of the metadata: topic `t`, partition `p` is
/// `start[t] + p`.
pub(crate) struct PartitionOffsets {
    start: Vec<usize>,
}

impl PartitionOffsets {
    pub(crate) fn new(group: &GroupSpec) -> Self {
        let mut start = Vec::with_capacity(group.topics.len() + 1);
        let mut total = 0usize;
        for topic in &group.topics {
            start.push(total);
            total += topic.partitions.max(0) as usize;
        }
        start.push(total);
        PartitionOffsets { start }
    }

    pub(crate) fn total(&self) -> usize {
        *self.start.last().expect("offsets end with the total")
    }

    pub(crate) fn flat(&self, topic: TopicIdx, partition: i32) -> usize {
        self.start[topic as usize] + partition as usize
    }
}

/// A member's previous assignment as Kafka's `HashMap<Uuid, HashSet<Integer>>` iterates its
/// topics: bucket order of their ids (default-capacity map, input order within a bucket).
/// Returns `(topic, partitions in input order)` per topic, in that order; [`int_set_order`]
/// gives the order within a topic when it matters.
pub(crate) fn previous_topics_in_java_order(
    member: &Member,
    ids: &[Option<Uuid>],
) -> Vec<(TopicIdx, Vec<i32>)> {
    // Group the owned partitions by topic, topics in first-appearance (input) order. `owned`
    // comes topic by topic from the JSON object, so the last group is almost always the hit.
    let mut groups: Vec<(TopicIdx, Vec<i32>)> = Vec::new();
    for tp in &member.owned {
        let found = match groups.last() {
            Some((t, _)) if *t == tp.topic => Some(groups.len() - 1),
            _ => groups.iter().position(|(t, _)| *t == tp.topic),
        };
        match found {
            Some(g) => groups[g].1.push(tp.partition),
            None => groups.push((tp.topic, vec![tp.partition])),
        }
    }
    let map_capacity = Capacity::Default.after_inserts(groups.len());
    // Stable sort: input order within a bucket.
    groups.sort_by_key(|(t, _)| {
        let id = ids[*t as usize].expect("owned topics have ids (checked)");
        bucket_index(id.java_hash(), map_capacity)
    });
    groups
}

/// Iteration order of `new HashSet<>(list)` of partition numbers (JDK 17 sizing): by bucket of
/// the `Integer` hash (the value), list order within a bucket. Partitions below the table size
/// come out ascending; larger ones wrap around.
pub(crate) fn int_set_order(list: &[i32]) -> impl Iterator<Item = i32> + '_ {
    let capacity = Capacity::CopyOfSet(list.len()).after_inserts(list.len());
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.sort_by_key(|&i| (bucket_index(list[i], capacity), i));
    order.into_iter().map(move |i| list[i])
}

/// Turns per-topic owner arrays (member index in `memberIds()` order, or -1) into the result.
pub(crate) fn collect_owners(
    group: &GroupSpec,
    order: &[usize],
    owners: &[Vec<i32>],
) -> MemberPartitions {
    let mut out: MemberPartitions = vec![Vec::new(); group.members.len()];
    for (t, topic_owners) in owners.iter().enumerate() {
        for (p, &o) in topic_owners.iter().enumerate() {
            if o >= 0 {
                out[order[o as usize]].push(TopicPartition::new(t as TopicIdx, p as i32));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
