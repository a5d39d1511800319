//! `ConstrainedAssignmentBuilder` behaviour (every member subscribes to the same topics;
//! ALGORITHMS.md 4.3): keep a prefix of each member's validated claims up to its quota, members
//! met in HashMap order deciding who keeps a max-quota slot, then deal the rest round-robin over
//! the members sorted by id.

use super::{AssignError, Members, Space, Validated};

/// Dense partitions per member, and the partitions whose ownership moves as (partition, new
/// owner).
type Target = (Vec<Vec<u32>>, Vec<(u32, u32)>);

/// Returns the target (dense partitions per member) and the partitions whose ownership moves,
/// as (partition, new owner).
pub(super) fn assign(
    space: &Space,
    members: &Members,
    validated: &Validated,
) -> Result<Target, AssignError> {
    let n = members.rank.len();
    let total = space.total;
    let min_quota = total / n;
    let max_quota = total.div_ceil(n);
    let expected_over_min = total % n;
    let mut over_min = 0usize;

    let mut assignment: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut under_min: Vec<usize> = Vec::new();
    let mut exactly_min: Vec<usize> = Vec::new();
    // Ownership only exists when someone claimed something; a fresh group skips the per-partition
    // bookkeeping entirely.
    let tracking = validated.any_claims;
    let mut kept = if tracking {
        vec![false; total]
    } else {
        Vec::new()
    };
    let mut revoked = if tracking {
        vec![false; total]
    } else {
        Vec::new()
    };

    for &m in &members.hash_order {
        // Owned partitions sorted by (partition number, topic name), double claims removed.
        let mut owned: Vec<(u32, u32)> = validated.owned[m]
            .iter()
            .filter(|g| !validated.multi.contains(g))
            .map(|&g| {
                let ti = space.topic_pos(g);
                (g - space.topic_start[ti], ti as u32)
            })
            .collect();
        owned.sort_unstable();
        let dense = |&(p, ti): &(u32, u32)| space.topic_start[ti as usize] + p;
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
        for tp in &owned[..keep] {
            let g = dense(tp);
            kept[g as usize] = true;
            assignment[m].push(g);
        }
        for tp in &owned[keep..] {
            revoked[dense(tp) as usize] = true;
        }
    }

    under_min.sort_by_key(|&m| members.rank[m]);
    exactly_min.sort_by_key(|&m| members.rank[m]);
    let mut exactly_min: std::collections::VecDeque<usize> = exactly_min.into();

    let mut transferring = Vec::new();
    // A cursor over the under-min list that restarts at its head when it runs out, as Kafka's
    // LinkedList iterator does; a member reaching minQuota leaves it for the exactly-min queue.
    let mut cursor = 0usize;
    for g in 0..total as u32 {
        if tracking && kept[g as usize] {
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
        assignment[m].push(g);
        if tracking && (revoked[g as usize] || validated.multi.contains(&g)) {
            transferring.push((g, m as u32));
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
    Ok((assignment, transferring))
}
