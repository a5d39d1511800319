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

use super::{collect_owners, previous_assignment_in_java_order, PartitionOffsets};
use crate::assignor::{AssignError, GroupSpec, MemberPartitions, TopicIdx};
use crate::java::{bucket_index, iteration_order, string_hash, Capacity, JavaHash, Uuid};

/// `memberIds` order: indexes into `group.members` (non-empty).
pub(super) fn assign(
    group: &GroupSpec,
    ids: &[Option<Uuid>],
    order: &[usize],
) -> Result<MemberPartitions, AssignError> {
    let topics = subscribed_topic_set(group, ids, order[0]);
    if topics.is_empty() {
        // Kafka returns an empty GroupAssignment: every member gets nothing.
        return Ok(vec![Vec::new(); group.members.len()]);
    }
    let mut in_set = vec![false; group.topics.len()];
    for &t in &topics {
        in_set[t as usize] = true;
    }

    // owners[t][p]: index into `order` of the member that ends up with it, -1 while unassigned.
    let mut owners: Vec<Vec<i32>> = vec![Vec::new(); group.topics.len()];
    for &t in &topics {
        owners[t as usize] = vec![-1; group.topic(t).partitions as usize];
    }

    // "Is it in the previous target assignment?" (`GroupSpec.isPartitionAssigned`) looks at
    // every member's previous target, whether the member keeps the partition or not.
    let offsets = PartitionOffsets::new(group);
    let mut previously_assigned = vec![false; offsets.total()];
    for m in &group.members {
        for tp in &m.owned {
            previously_assigned[offsets.flat(tp.topic, tp.partition)] = true;
        }
    }

    // Partitions nobody held, topic by topic in the topic set's order, then (appended during
    // the revoke pass) those taken from members over quota.
    let mut unassigned: Vec<(TopicIdx, i32)> = Vec::new();
    let mut total: i64 = 0;
    for &t in &topics {
        let n = group.topic(t).partitions;
        total += i64::from(n);
        unassigned.extend(
            (0..n)
                .filter(|&p| !previously_assigned[offsets.flat(t, p)])
                .map(|p| (t, p)),
        );
    }

    let member_count = order.len() as i64;
    let min_quota = total / member_count;
    let mut extras_left = total % member_count;

    // Revoke pass, in memberIds() order.
    let mut unfilled: Vec<(usize, i64)> = Vec::new();
    for (idx, &m) in order.iter().enumerate() {
        let mut quota = min_quota;
        let mut takes_extra = extras_left > 0;
        if takes_extra {
            quota += 1;
        }
        let (parts, ranges) = previous_assignment_in_java_order(&group.members[m], ids);
        for (t, start, end) in ranges {
            if !in_set[t as usize] {
                // No longer subscribed: dropped.
                continue;
            }
            let held = &parts[start..end];
            let keep = (held.len() as i64).min(quota) as usize;
            quota -= keep as i64;
            for &p in &held[..keep] {
                owners[t as usize][p as usize] = idx as i32;
            }
            unassigned.extend(held[keep..].iter().map(|&p| (t, p)));
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
            unfilled.push((idx, quota));
        }
        if takes_extra {
            extras_left -= 1;
        }
    }

    // Fill pass: unfilled members in the order above take from the front of the list.
    let mut next = 0usize;
    for (idx, quota) in unfilled {
        let take = (quota as usize).min(unassigned.len() - next);
        for &(t, p) in &unassigned[next..next + take] {
            owners[t as usize][p as usize] = idx as i32;
        }
        next += take;
    }
    if next < unassigned.len() {
        return Err(AssignError(format!(
            "uniform: {} partitions were left unassigned",
            unassigned.len() - next
        )));
    }
    Ok(collect_owners(group, order, &owners))
}

/// The builder's `subscribedTopicIds`: `new HashSet<>(first member's TopicIds)`. `TopicIds`
/// iterates the member's subscribed-name `HashSet<String>` (a `new HashSet<>(list)`), skipping
/// names missing from the metadata, but reports the size of the name set, which sizes the copy.
/// Returns topic indexes in the copy's iteration order.
pub(super) fn subscribed_topic_set(
    group: &GroupSpec,
    ids: &[Option<Uuid>],
    first_member: usize,
) -> Vec<TopicIdx> {
    let names = &group.members[first_member].subscription;
    let name_hashes: Vec<i32> = names.iter().map(|n| string_hash(n)).collect();
    let resolved: Vec<TopicIdx> = iteration_order(&name_hashes, Capacity::CopyOfSet(names.len()))
        .into_iter()
        .filter_map(|i| group.topic_index(&names[i]))
        .collect();
    let capacity = Capacity::CopyOfSet(names.len()).after_inserts(resolved.len());
    let mut order: Vec<usize> = (0..resolved.len()).collect();
    order.sort_by_key(|&i| {
        let id = ids[resolved[i] as usize].expect("subscribed topics have ids (checked)");
        (bucket_index(id.java_hash(), capacity), i)
    });
    order.into_iter().map(|i| resolved[i]).collect()
}
