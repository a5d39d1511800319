//! `ConstrainedAssignmentBuilder` behaviour (every member subscribes to the same topics;
//! ALGORITHMS.md 4.3): keep a prefix of each member's validated claims up to its quota, members
//! met in HashMap order deciding who keeps a max-quota slot, then deal the rest round-robin over
//! the members sorted by id.

use super::{AssignError, Bits, Members, Space, Validated};
use crate::assignor::{MemberPartitions, TopicPartition};
use std::collections::VecDeque;

/// Returns the target (sorted partitions per member) and the partitions whose ownership moves,
/// as (partition, new owner).
pub(super) fn assign(
    space: &Space,
    members: &Members,
    validated: &Validated,
) -> Result<(MemberPartitions, Vec<(TopicPartition, u32)>), AssignError> {
    let n = members.rank.len();
    let total = space.total;
    if !validated.any_claims {
        return Ok((fresh(space, members), Vec::new()));
    }
    let min_quota = total / n;
    let max_quota = total.div_ceil(n);
    let expected_over_min = total % n;
    let mut over_min = 0usize;

    let mut assignment: MemberPartitions = vec![Vec::new(); n];
    let mut under_min: Vec<usize> = Vec::new();
    let mut exactly_min: Vec<usize> = Vec::new();
    // Ownership only exists when someone claimed something; a fresh group skips the per-partition
    // bookkeeping entirely.
    let tracking = validated.any_claims;
    let mut kept = Bits::new(if tracking { total } else { 0 });
    let mut revoked = Bits::new(if tracking { total } else { 0 });
    let multi = |g: u32| !validated.multi.is_empty() && validated.multi[g as usize];

    for &m in &members.hash_order {
        // Owned partitions sorted by (partition number, topic name), double claims removed.
        let mut owned: Vec<TopicPartition> = if validated.multi.is_empty() {
            validated.owned[m].clone()
        } else {
            validated.owned[m]
                .iter()
                .copied()
                .filter(|&tp| !multi(space.dense(tp).expect("claims are in the space")))
                .collect()
        };
        let keep = if owned.len() < min_quota {
            under_min.push(m);
            owned.len()
        } else if owned.len() >= max_quota && over_min < expected_over_min {
            over_min += 1;
            if over_min == expected_over_min {
                exactly_min.clear();
            }
            max_quota
        } else {
            if over_min < expected_over_min {
                exactly_min.push(m);
            }
            min_quota
        };
        // Which prefix is kept only matters when some are given up.
        if keep < owned.len() {
            owned.sort_unstable_by_key(|tp| {
                (u64::from(tp.partition as u32) << 32) | u64::from(tp.topic)
            });
            for &tp in &owned[keep..] {
                revoked.set(space.dense(tp).expect("claims are in the space"));
            }
            owned.truncate(keep);
        }
        for &tp in &owned {
            kept.set(space.dense(tp).expect("claims are in the space"));
        }
        assignment[m] = owned;
    }

    under_min.sort_by_key(|&m| members.rank[m]);
    exactly_min.sort_by_key(|&m| members.rank[m]);
    let mut exactly_min: VecDeque<usize> = exactly_min.into();

    let mut transferring = Vec::new();
    // A cursor over the under-min list that restarts at its head when it runs out, as Kafka's
    // LinkedList iterator does; a member reaching minQuota leaves it for the exactly-min queue.
    let mut cursor = 0usize;
    // Unassigned partitions in (topic name, partition) order, which is dense order.
    for (ti, &(topic, count)) in space.topics.iter().enumerate() {
        let start = space.topic_start[ti];
        for p in 0..count {
            let g = start + p;
            if tracking && kept.get(g) {
                continue;
            }
            let (m, from_under) = if cursor < under_min.len() {
                cursor += 1;
                (under_min[cursor - 1], true)
            } else if under_min.is_empty() {
                match exactly_min.pop_front() {
                    Some(m) => (m, false),
                    None => {
                        return Err(AssignError(
                            "sticky: no more unfilled consumers to be assigned (Kafka throws \
                             IllegalStateException)"
                                .into(),
                        ))
                    }
                }
            } else {
                cursor = 1;
                (under_min[0], true)
            };
            let tp = TopicPartition::new(topic, p as i32);
            assignment[m].push(tp);
            // Dealt to someone else than the member that had to give it up, or claimed twice.
            if tracking && (revoked.get(g) || multi(g)) {
                transferring.push((tp, m as u32));
            }
            let count = assignment[m].len();
            if count == min_quota {
                if from_under {
                    cursor -= 1;
                    under_min.remove(cursor);
                }
                exactly_min.push_back(m);
            } else if count == max_quota {
                over_min += 1;
            }
        }
    }

    // verifyUnfilledMembers.
    if !under_min.is_empty() {
        if over_min != expected_over_min {
            return Err(AssignError(
                "sticky: members below minQuota but no partitions left (Kafka throws \
                 IllegalStateException)"
                    .into(),
            ));
        }
        if under_min.iter().any(|&m| assignment[m].len() != min_quota) {
            return Err(AssignError(
                "sticky: a member did not reach minQuota (Kafka throws IllegalStateException)"
                    .into(),
            ));
        }
    }
    // Kept partitions then dealt ones: usually two sorted runs, which the stable sort merges.
    for list in &mut assignment {
        if !list.is_sorted() {
            list.sort();
        }
    }
    Ok((assignment, transferring))
}

/// A group where nobody claims anything: every member is under minQuota (or, when there are
/// fewer partitions than members, waiting at minQuota 0 in id order), so the dealing above
/// reduces to RoundRobin over the members in id order: dense partition `i` goes to the member of
/// rank `i % n` (README: sticky on a fresh group lays partitions out exactly like roundrobin).
/// Building each member's list in one go keeps the writes local, which matters at 1,000,000
/// partitions.
fn fresh(space: &Space, members: &Members) -> MemberPartitions {
    let n = members.rank.len();
    let total = space.total;
    let mut by_rank = vec![0usize; n];
    for (m, &r) in members.rank.iter().enumerate() {
        by_rank[r as usize] = m;
    }
    let mut assignment: MemberPartitions = vec![Vec::new(); n];
    for (r, &m) in by_rank.iter().enumerate() {
        let mut list = Vec::with_capacity(total / n + usize::from(r < total % n));
        // Within a topic starting at dense index `start`, this member's partitions are those
        // congruent to its rank modulo n.
        for (ti, &(topic, len)) in space.topics.iter().enumerate() {
            let start = space.topic_start[ti] as usize;
            let first = (r + n - start % n) % n;
            list.extend(
                (first..len as usize)
                    .step_by(n)
                    .map(|p| TopicPartition::new(topic, p as i32)),
            );
        }
        assignment[m] = list;
    }
    assignment
}
