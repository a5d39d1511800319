//! Kafka 4.3.1's `UniformHomogeneousAssignmentBuilder`: every member subscribes to the same
//! topics, so the assignment is quotas (`P / M`, and `P % M` members one more) plus stickiness.
//!
//! The answer depends on three Java orders, emulated here:
//! - the topic set is the *first* member's (in `memberIds()` order) `TopicIds`, copied into a
//!   `HashSet<Uuid>`; its order decides the order of the unassigned partitions;
//! - members are visited in `memberIds()` order, so early members claim the extra partitions;
//! - a member over quota keeps the first partitions its previous assignment iterates (map order
//!   of topic ids, then `HashSet<Integer>` order) and gives up the rest, which go to the *end*
//!   of the unassigned list.

use super::{int_set_order, previous_topics_in_java_order, PreviousOwners};
use crate::assignor::{AssignError, GroupSpec, MemberPartitions, TopicIdx, TopicPartition};
use crate::java::{bucket_index, iteration_order, string_hash, Capacity, JavaHash, Uuid};
use std::ops::Range;

/// Room for any member's quota in a homogeneous group: the partitions of the topics every
/// member subscribes to over the members, plus one for the extras. `None` for no members.
pub(super) fn quota_bound(group: &GroupSpec) -> Option<usize> {
    let first = group.members.first()?;
    let total: usize = first
        .topics
        .iter()
        .map(|&t| group.topic(t).partitions.max(0) as usize)
        .sum();
    Some(total / group.members.len() + 1)
}

/// `order`: `memberIds()` order as indexes into `group.members` (non-empty). `kept`: empty, or
/// [`PreviousOwners`]'s copies of what each member held (asked for with a capacity of at least
/// [`quota_bound`]), which become the members' lists.
pub(super) fn assign(
    group: &GroupSpec,
    ids: &[Option<Uuid>],
    order: &[usize],
    previous: &PreviousOwners,
    kept: MemberPartitions,
) -> Result<MemberPartitions, AssignError> {
    let topics = subscribed_topic_set(group, ids, order[0]);
    if topics.is_empty() {
        // Kafka returns an empty GroupAssignment: every member gets nothing.
        return Ok(vec![Vec::new(); group.members.len()]);
    }
    let copied = !kept.is_empty();
    let mut out = if copied {
        kept
    } else {
        vec![Vec::new(); group.members.len()]
    };
    let mut in_set = vec![false; group.topics.len()];
    for &t in &topics {
        in_set[t as usize] = true;
    }
    // Homogeneous: every member subscribes to exactly the set, so `keeps_all` (a member held
    // only topics it subscribes to) means it held only topics of the set.
    debug_assert!(group
        .members
        .iter()
        .all(|m| m.topics.len() == topics.len() && m.topics.iter().all(|&t| in_set[t as usize])));

    // Partitions in nobody's previous target, topic by topic in the topic set's order; the
    // revoke pass appends those it takes from members over quota.
    let mut unassigned = Unassigned::default();
    let mut total: i64 = 0;
    for &t in &topics {
        let n = group.topic(t).partitions;
        total += i64::from(n);
        previous.for_each_unassigned_range(t, n, |range| unassigned.push(t, range));
    }

    let member_count = order.len() as i64;
    let min_quota = total / member_count;
    let mut extras_left = total % member_count;

    // Revoke pass, in memberIds() order.
    let mut unfilled: Vec<(usize, i64)> = Vec::new();
    for (idx, &m) in order.iter().enumerate() {
        let member = &group.members[m];
        let mut quota = min_quota;
        let mut takes_extra = extras_left > 0;
        if takes_extra {
            quota += 1;
        }
        let kept = &mut out[m];
        // What it held of the topic set: already there when copied (all of it).
        if !(copied && previous.keeps_all(m)) {
            kept.reserve_exact(quota as usize);
            if previous.keeps_all(m) && member.owned.len() as i64 <= quota {
                kept.extend_from_slice(&member.owned);
            } else {
                kept.extend(member.owned.iter().filter(|tp| in_set[tp.topic as usize]));
            }
        }
        // Keep everything still subscribed if it all fits: then the order Kafka walks it in
        // does not matter. Usually the member subscribes to all it held, and it is one copy.
        if kept.len() as i64 <= quota {
            quota -= kept.len() as i64;
        } else {
            // Over quota: Kafka walks the previous assignment in map order, keeps topics whole
            // while they fit, and from the first topic that does not fit keeps the first
            // partitions in HashSet order; the rest go to the end of the unassigned list.
            kept.clear();
            for (t, parts) in previous_topics_in_java_order(member, ids) {
                if !in_set[t as usize] {
                    // No longer subscribed: dropped.
                    continue;
                }
                if parts.len() as i64 <= quota {
                    quota -= parts.len() as i64;
                    kept.extend(parts.iter().map(|&p| TopicPartition::new(t, p)));
                } else {
                    for p in int_set_order(&parts) {
                        if quota > 0 {
                            quota -= 1;
                            kept.push(TopicPartition::new(t, p));
                        } else {
                            unassigned.push(t, p..p + 1);
                        }
                    }
                }
            }
        }
        // KAFKA-18688: a member that cannot fill the extra slot from what it already holds
        // leaves it to a later member, unless only the last `extras_left` members remain and each
        // of them must take one.
        let members_left = member_count - idx as i64;
        if quota > 0 && takes_extra && members_left > extras_left {
            quota -= 1;
            takes_extra = false;
        }
        if quota > 0 {
            unfilled.push((m, quota));
        }
        if takes_extra {
            extras_left -= 1;
        }
    }

    // Fill pass: unfilled members in the order above take from the front of the list.
    let mut ranges = unassigned.ranges.into_iter();
    let mut current: (TopicIdx, Range<i32>) = (0, 0..0);
    for (m, quota) in unfilled {
        let mut wanted = quota as usize;
        while wanted > 0 {
            if current.1.is_empty() {
                match ranges.next() {
                    Some(next) => current = next,
                    None => break,
                }
            }
            let (t, range) = &mut current;
            let take = wanted.min(range.len());
            let taken = range.start..range.start + take as i32;
            out[m].extend(taken.map(|p| TopicPartition::new(*t, p)));
            range.start += take as i32;
            wanted -= take;
        }
    }
    let left = current.1.len() + ranges.map(|(_, range)| range.len()).sum::<usize>();
    if left > 0 {
        return Err(AssignError(format!(
            "uniform: {left} partitions were left unassigned"
        )));
    }
    Ok(out)
}

/// Kafka's list of partitions waiting for a member, in its order, as ranges of consecutive
/// partitions of one topic: a topic nobody held is one range, where Kafka's list has an entry
/// per partition, and the fill pass copies ranges rather than single partitions.
#[derive(Default)]
struct Unassigned {
    ranges: Vec<(TopicIdx, Range<i32>)>,
}

impl Unassigned {
    /// Appends `range` of `topic`, joining it to the last range when it continues it.
    fn push(&mut self, topic: TopicIdx, range: Range<i32>) {
        if let Some((t, last)) = self.ranges.last_mut() {
            if *t == topic && last.end == range.start {
                last.end = range.end;
                return;
            }
        }
        self.ranges.push((topic, range));
    }
}

/// The builder's `subscribedTopicIds`: `new HashSet<>(first member's TopicIds)`. `TopicIds`
/// iterates the member's subscribed-name `HashSet<String>` (a `new HashSet<>(list)`), skipping
/// names missing from the metadata, but reports the size of the name set, which sizes the copy.
/// Returns topic indexes in the copy's iteration order.
///
/// A name is in the metadata when the member's `topics` has it: a topic the spec lists but the
/// member's topics leave out (the KIP-848 group's topic not created yet, 0 partitions) is
/// missing, as `TopicIds` skips a name the metadata image cannot resolve.
pub(super) fn subscribed_topic_set(
    group: &GroupSpec,
    ids: &[Option<Uuid>],
    first_member: usize,
) -> Vec<TopicIdx> {
    let member = &group.members[first_member];
    let names = &member.subscription;
    let name_hashes: Vec<i32> = names.iter().map(|n| string_hash(n)).collect();
    let resolved: Vec<TopicIdx> = iteration_order(&name_hashes, Capacity::CopyOfSet(names.len()))
        .into_iter()
        .filter_map(|i| group.topic_index(&names[i]))
        .filter(|&t| member.subscribes(t))
        .collect();
    let capacity = Capacity::CopyOfSet(names.len()).after_inserts(resolved.len());
    let mut order: Vec<usize> = (0..resolved.len()).collect();
    order.sort_by_key(|&i| {
        let id = ids[resolved[i] as usize].expect("subscribed topics have ids (checked)");
        (bucket_index(id.java_hash(), capacity), i)
    });
    order.into_iter().map(|i| resolved[i]).collect()
}
