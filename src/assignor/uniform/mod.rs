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
use std::ops::Range;

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
        let same_topics = group.same_topics();
        let subscription_type = subscription_type(group, same_topics);
        // A homogeneous group's lists start as copies of what each member held, made by the
        // claim pass while it has them in cache (`PreviousOwners::new`).
        let kept_capacity = match subscription_type {
            SubscriptionType::Homogeneous => homogeneous::quota_bound(group),
            SubscriptionType::Heterogeneous => None,
        };
        let (previous, kept) = PreviousOwners::new(group, same_topics, kept_capacity)?;
        let ids = topic_ids(group, subscription_type, &previous)?;
        let assignment = if group.members.is_empty() {
            Vec::new()
        } else {
            let order = member_ids_order(&group.members);
            match subscription_type {
                SubscriptionType::Homogeneous => {
                    homogeneous::assign(group, &ids, &order, &previous, kept)?
                }
                SubscriptionType::Heterogeneous => {
                    heterogeneous::assign(group, &ids, &order, &previous)?
                }
            }
        };
        Ok(AssignResult {
            subscription_type: Some(subscription_type),
            ..AssignResult::plain(assignment)
        })
    }
}

/// [`SubscriptionType::of`], without comparing topic names when every subscribed name is in the
/// metadata: then equal topic index lists mean equal name sets. `same_topics` is
/// [`GroupSpec::same_topics`].
pub(crate) fn subscription_type(group: &GroupSpec, same_topics: bool) -> SubscriptionType {
    if group
        .members
        .iter()
        .any(|m| m.topics.len() != m.subscription.len())
    {
        return SubscriptionType::of(group);
    }
    if same_topics {
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
    /// Per member: every partition it held is of a topic it still subscribes to, so it keeps
    /// them all (quotas aside) without a look at each.
    keeps_all: Vec<bool>,
}

impl PreviousOwners {
    /// One pass over every owned partition. On a million partitions (`benches/data` T2 after one
    /// member left) this pass is most of the assignor's work, so partitions are claimed by runs
    /// (consecutive partitions of one topic, as targets mostly hold them): one masked update of
    /// the bitmap per run, where one update per partition made each wait for the store before.
    ///
    /// `same_topics` is [`GroupSpec::same_topics`]. Also returns, with `kept_capacity`, per
    /// member a copy of `owned` if it keeps all it held, else nothing, with room for at least
    /// that many partitions (empty without): made right after the member's runs are claimed, the
    /// list is in cache then, where the homogeneous builder copying it later read it again from
    /// memory (on T2 after one member left, 8 MB read twice).
    fn new(
        group: &GroupSpec,
        same_topics: bool,
        kept_capacity: Option<usize>,
    ) -> Result<(Self, MemberPartitions), AssignError> {
        let offsets = PartitionOffsets::new(group);
        let topic_count = group.topics.len();
        let mut previous = PreviousOwners {
            assigned: vec![0u64; offsets.total().div_ceil(64)],
            offsets,
            owned_topics: vec![false; topic_count],
            keeps_all: Vec::with_capacity(group.members.len()),
        };
        let mut kept_lists = Vec::with_capacity(kept_capacity.map_or(0, |_| group.members.len()));
        // Per topic: the stamp of the last subscription that has it. A member's topics are
        // stamped before its partitions are read, so "still subscribed" is one comparison; when
        // every member has the same topics (in most groups), they are stamped once, and the pass
        // costs nothing per subscribed topic.
        let mut stamped = vec![0u32; topic_count];
        let mut stamp = 0u32;
        for (i, m) in group.members.iter().enumerate() {
            if i == 0 || !same_topics {
                stamp += 1;
                for &t in &m.topics {
                    let Some(s) = stamped.get_mut(t as usize) else {
                        return Err(AssignError(format!(
                            "member {:?} subscribes to a topic index outside the metadata",
                            m.member_id
                        )));
                    };
                    *s = stamp;
                }
            }
            let mut keeps = true;
            let mut rest = &m.owned[..];
            while !rest.is_empty() {
                let (run, tail) = rest.split_at(run_len(rest));
                rest = tail;
                if !previous.claim_run(run) {
                    // Part of the run is not in the metadata or already held: one by one, to
                    // name the first partition at fault.
                    for tp in run {
                        previous.claim(group, m, *tp)?;
                    }
                }
                let t = run[0].topic as usize;
                previous.owned_topics[t] = true;
                keeps &= stamped[t] == stamp;
            }
            previous.keeps_all.push(keeps);
            if let Some(capacity) = kept_capacity {
                let mut kept = Vec::with_capacity(capacity.max(m.owned.len()));
                if keeps {
                    kept.extend_from_slice(&m.owned);
                }
                kept_lists.push(kept);
            }
        }
        Ok((previous, kept_lists))
    }

    /// Marks `run` (consecutive partitions of one topic) as held, one masked update per bitmap
    /// word it spans; `false`, marking nothing, if part of it is outside the metadata or already
    /// held.
    fn claim_run(&mut self, run: &[TopicPartition]) -> bool {
        let Some(first) = self.offsets.flat_checked(run[0]) else {
            return false;
        };
        let end = first + run.len();
        if end > self.offsets.start[run[0].topic as usize + 1] {
            return false;
        }
        // The bits of `first..end` in word `w`.
        let mask = |w: usize| {
            let lo = first.max(w * 64) - w * 64;
            let hi = end.min(w * 64 + 64) - w * 64;
            u64::MAX >> (64 - (hi - lo)) << lo
        };
        let words = first / 64..=(end - 1) / 64;
        if words.clone().any(|w| self.assigned[w] & mask(w) != 0) {
            return false;
        }
        for w in words {
            self.assigned[w] |= mask(w);
        }
        true
    }

    /// Marks one partition of `member` as held, or says why it cannot be.
    fn claim(
        &mut self,
        group: &GroupSpec,
        member: &Member,
        tp: TopicPartition,
    ) -> Result<(), AssignError> {
        let Some(flat) = self.offsets.flat_checked(tp) else {
            return Err(AssignError(format!(
                "member {:?} was assigned {tp:?}, which is not in the metadata",
                member.member_id
            )));
        };
        let (word, bit) = (flat / 64, 1u64 << (flat % 64));
        if self.assigned[word] & bit != 0 {
            return Err(double_claim(group, tp));
        }
        self.assigned[word] |= bit;
        Ok(())
    }

    /// Every partition `member` (an index into `GroupSpec::members`) held is of a topic it
    /// subscribes to.
    pub(crate) fn keeps_all(&self, member: usize) -> bool {
        self.keeps_all[member]
    }

    /// The partitions for which `isPartitionAssigned` is false (in nobody's previous target,
    /// kept or not): calls `f` with those of `topic` (of `n`) in ascending order, as maximal
    /// ranges of consecutive partitions: one call for a topic nobody held, a word of 64
    /// partitions a step where all are taken (as after most rebalances).
    pub(crate) fn for_each_unassigned_range(
        &self,
        topic: TopicIdx,
        n: i32,
        mut f: impl FnMut(Range<i32>),
    ) {
        let start = self.offsets.flat(topic, 0);
        let end = start + n.max(0) as usize;
        let mut pending: Option<Range<i32>> = None;
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
                let i = free.trailing_zeros();
                let len = (!(free >> i)).trailing_zeros();
                let first = (flat - start) as i32 + i as i32;
                let range = first..first + len as i32;
                match &mut pending {
                    // Continues the range the last word ended with.
                    Some(p) if p.end == range.start => p.end = range.end,
                    _ => {
                        if let Some(done) = pending.replace(range) {
                            f(done);
                        }
                    }
                }
                free &= !(u64::MAX >> (64 - len) << i);
            }
            flat += span;
        }
        if let Some(p) = pending {
            f(p);
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
fn unassigned_partitions_come_in_maximal_ranges_in_order() {
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
        keeps_all: Vec::new(),
    };
    for (t, n) in [(0, 70), (1, 3), (2, 130)] {
        let mut ranges: Vec<Range<i32>> = Vec::new();
        previous.for_each_unassigned_range(t, n, |r| ranges.push(r));
        assert!(
            ranges.iter().all(|r| !r.is_empty()),
            "topic {t}: {ranges:?}"
        );
        assert!(
            ranges.windows(2).all(|w| w[0].end < w[1].start),
            "topic {t}: {ranges:?}"
        );
        let got: Vec<i32> = ranges.into_iter().flatten().collect();
        let want: Vec<i32> = (0..n).filter(|&p| !previous.is_assigned(t, p)).collect();
        assert_eq!(got, want, "topic {t}");
    }
    // Nobody held anything: one range per topic, across words.
    let previous = PreviousOwners {
        offsets: PartitionOffsets {
            start: vec![0, 130],
        },
        assigned: vec![0; 3],
        owned_topics: vec![false],
        keeps_all: Vec::new(),
    };
    let mut ranges = Vec::new();
    previous.for_each_unassigned_range(0, 130, |r| ranges.push(r));
    assert_eq!(ranges.len(), 1);
    assert_eq!(ranges[0], 0..130);
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

/// How many partitions `tps` (non-empty) starts with that are consecutive partitions of one
/// topic, as `chunk_by` on "same topic, next partition" would cut them. Targets hold long runs
/// (a member of T2 after one member left holds one run of 500), and a test per partition with
/// an exit cost ten instructions a partition: whole blocks are checked first without one, a
/// comparison of each partition with the one its place in the run calls for, which the compiler
/// vectorizes; the block that breaks the run, and what is left, go one by one.
fn run_len(tps: &[TopicPartition]) -> usize {
    const BLOCK: usize = 16;
    let first = tps[0];
    // Partition `k` of the run: same topic, partition number `k` more (wrapping, as `i32` adds).
    let at = |k: usize, tp: &TopicPartition| {
        tp.topic == first.topic && tp.partition == first.partition.wrapping_add(k as i32)
    };
    let mut len = 0;
    for block in tps.chunks_exact(BLOCK) {
        let whole = block
            .iter()
            .enumerate()
            .fold(true, |whole, (k, tp)| whole & at(len + k, tp));
        if !whole {
            break;
        }
        len += BLOCK;
    }
    len + tps[len..]
        .iter()
        .enumerate()
        .take_while(|&(k, tp)| at(len + k, tp))
        .count()
}

#[cfg(test)]
#[test]
fn run_len_cuts_where_chunk_by_does() {
    let tp = TopicPartition::new;
    let mut cases: Vec<Vec<TopicPartition>> = vec![
        vec![tp(0, 5)],
        vec![tp(0, 5), tp(0, 7)],
        vec![tp(0, 5), tp(1, 6)],
        vec![tp(2, i32::MAX), tp(2, i32::MIN), tp(2, i32::MIN + 1)],
    ];
    // Runs that break at every place in and around whole blocks, by topic or by partition.
    for len in [1usize, 15, 16, 17, 31, 32, 33, 40] {
        for broken in 0..=len {
            for by_topic in [false, true] {
                let mut v: Vec<TopicPartition> = (0..len as i32).map(|p| tp(3, 100 + p)).collect();
                if broken < len && broken > 0 {
                    if by_topic {
                        v[broken].topic = 4;
                    } else {
                        v[broken].partition += 1;
                    }
                }
                cases.push(v);
            }
        }
    }
    for v in cases {
        let mut rest = &v[..];
        let mut want =
            v.chunk_by(|a, b| a.topic == b.topic && a.partition.wrapping_add(1) == b.partition);
        while !rest.is_empty() {
            let (run, tail) = rest.split_at(run_len(rest));
            assert_eq!(Some(run), want.next(), "{v:?}");
            rest = tail;
        }
        assert_eq!(want.next(), None, "{v:?}");
    }
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

    /// [`Self::flat`] for a partition that may not be in the metadata: `None` if it is not.
    fn flat_checked(&self, tp: TopicPartition) -> Option<usize> {
        let t = tp.topic as usize;
        let (&start, &end) = (self.start.get(t)?, self.start.get(t + 1)?);
        let flat = start + usize::try_from(tp.partition).ok()?;
        (flat < end).then_some(flat)
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

/// Turns per-topic owner arrays (member index in `memberIds()` order, or -1) into the result;
/// `sizes` (by member index) is how many partitions each member ends up with.
pub(crate) fn collect_owners(
    group: &GroupSpec,
    order: &[usize],
    owners: &[Vec<i32>],
    sizes: &[i32],
) -> MemberPartitions {
    let mut out: MemberPartitions = vec![Vec::new(); group.members.len()];
    for (idx, &m) in order.iter().enumerate() {
        out[m].reserve_exact(sizes[idx] as usize);
    }
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
