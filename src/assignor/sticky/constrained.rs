//! `ConstrainedAssignmentBuilder` behaviour (every member subscribes to the same topics;
//! ALGORITHMS.md 4.3): keep a prefix of each member's validated claims up to its quota, members
//! met in HashMap order deciding who keeps a max-quota slot, then deal the rest round-robin over
//! the members sorted by id.

use super::{AssignError, Bits, Members, RackInfo, Space, Validated, NONE};
use crate::assignor::{MemberPartitions, TopicPartition};
use std::collections::VecDeque;

/// Returns the target (sorted partitions per member) and the partitions whose ownership moves,
/// as (partition, new owner).
pub(super) fn assign(
    space: &Space,
    members: &Members,
    validated: &Validated,
    racks: &RackInfo,
) -> Result<(MemberPartitions, Vec<(TopicPartition, u32)>), AssignError> {
    let n = members.rank.len();
    let total = space.total;
    if !validated.any_claims && !racks.active() {
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
    // `maybeRevokedPartitions`: who gave each partition up (over quota, or rack-mismatched).
    let mut revoked_by = vec![NONE; if tracking { total } else { 0 }];
    let multi = |g: u32| !validated.multi.is_empty() && validated.multi[g as usize];

    for &m in &members.hash_order {
        // Owned partitions sorted by (partition number, topic name), double claims removed, and
        // with rack-aware assignment on, those no replica of which is in the member's rack.
        let mut owned: Vec<TopicPartition> = if validated.multi.is_empty() && !racks.active() {
            validated.owned[m].clone()
        } else {
            let mut owned = Vec::with_capacity(validated.owned[m].len());
            for &tp in &validated.owned[m] {
                let g = space.dense(tp).expect("claims are in the space");
                if racks.mismatch(m, g) {
                    revoked_by[g as usize] = m as u32;
                } else if !multi(g) {
                    owned.push(tp);
                }
            }
            owned
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
                revoked_by[space.dense(tp).expect("claims are in the space") as usize] = m as u32;
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
    let mut dealer = Dealer {
        assignment,
        under_min,
        exactly_min: exactly_min.into(),
        cursor: 0,
        over_min,
        min_quota,
        max_quota,
        expected_over_min,
        revoked_by,
        multi: &validated.multi,
        transferring: Vec::new(),
    };
    // Unassigned partitions in (topic name, partition) order, which is dense order.
    let unassigned = space
        .topics
        .iter()
        .enumerate()
        .flat_map(|(ti, &(topic, count))| {
            let start = space.topic_start[ti];
            (0..count).map(move |p| (start + p, TopicPartition::new(topic, p as i32)))
        });
    let unassigned = unassigned.filter(|&(g, _)| !tracking || !kept.get(g));
    if racks.active() {
        // Partitions whose racks hold the fewest members first (a stable sort), dealt within
        // racks first; what no member in a replica's rack can take within quota is dealt after.
        let mut list: Vec<(u32, TopicPartition)> = unassigned.collect();
        list.sort_by_key(|&(g, _)| racks.consumers_by_partition[g as usize]);
        let left = dealer.rack_aware_round_robin(list, racks);
        for (g, tp) in left {
            dealer.round_robin(g, tp)?;
        }
    } else {
        for (g, tp) in unassigned {
            dealer.round_robin(g, tp)?;
        }
    }
    let Dealer {
        mut assignment,
        under_min,
        over_min,
        transferring,
        ..
    } = dealer;

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

/// The constrained builder's dealing state: the members still under minQuota (sorted by id) and
/// those at exactly minQuota that may take one more.
struct Dealer<'a> {
    assignment: MemberPartitions,
    under_min: Vec<usize>,
    exactly_min: VecDeque<usize>,
    /// A cursor over the under-min list that restarts at its head when it runs out, as Kafka's
    /// LinkedList iterator does.
    cursor: usize,
    over_min: usize,
    min_quota: usize,
    max_quota: usize,
    expected_over_min: usize,
    revoked_by: Vec<u32>,
    multi: &'a [bool],
    transferring: Vec<(TopicPartition, u32)>,
}

impl Dealer<'_> {
    /// `assignNewPartition`: ownership moves when someone else gave the partition up, or two
    /// members claimed it.
    fn give(&mut self, g: u32, tp: TopicPartition, m: usize) -> usize {
        self.assignment[m].push(tp);
        let gave_up = self.revoked_by.get(g as usize).copied().unwrap_or(NONE);
        let multi = !self.multi.is_empty() && self.multi[g as usize];
        if (gave_up != NONE && gave_up != m as u32) || multi {
            self.transferring.push((tp, m as u32));
        }
        self.assignment[m].len()
    }

    /// `assignRoundRobin`, one partition: the next under-min member, else the first at exactly
    /// minQuota; a member reaching minQuota leaves the under-min list for the exactly-min queue.
    fn round_robin(&mut self, g: u32, tp: TopicPartition) -> Result<(), AssignError> {
        let (m, from_under) = if self.cursor < self.under_min.len() {
            self.cursor += 1;
            (self.under_min[self.cursor - 1], true)
        } else if self.under_min.is_empty() {
            match self.exactly_min.pop_front() {
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
            self.cursor = 1;
            (self.under_min[0], true)
        };
        let count = self.give(g, tp, m);
        if count == self.min_quota {
            if from_under {
                self.cursor -= 1;
                self.under_min.remove(self.cursor);
            }
            self.exactly_min.push_back(m);
        } else if count == self.max_quota {
            self.over_min += 1;
        }
        Ok(())
    }

    /// `assignRackAwareRoundRobin`: each partition to the next under-min member in one of its
    /// replicas' racks (the search resuming after the last one served), else to the first
    /// exactly-min member in such a rack; returns the partitions nobody in a rack could take.
    fn rack_aware_round_robin(
        &mut self,
        list: Vec<(u32, TopicPartition)>,
        racks: &RackInfo,
    ) -> Vec<(u32, TopicPartition)> {
        let mut left = Vec::new();
        let mut next = 0usize;
        for (g, tp) in list {
            let mut taker = None;
            if let Some(mut i) = racks.next_rack_consumer(g, &self.under_min, next) {
                let m = self.under_min[i];
                let count = self.assignment[m].len() + 1;
                if count >= self.min_quota {
                    self.under_min.remove(i);
                    // At minQuota a member can only take one more while max-quota slots remain.
                    if count < self.max_quota && self.over_min < self.expected_over_min {
                        self.exactly_min.push_back(m);
                    }
                } else {
                    i += 1;
                }
                next = if self.under_min.is_empty() {
                    0
                } else {
                    i % self.under_min.len()
                };
                taker = Some(m);
            } else if !self.exactly_min.is_empty() {
                let queue = self.exactly_min.make_contiguous();
                if let Some(i) = racks.next_rack_consumer(g, queue, 0) {
                    let m = queue[i];
                    if self.assignment[m].len() + 1 == self.max_quota {
                        self.exactly_min.remove(i);
                        self.over_min += 1;
                        if self.over_min == self.expected_over_min {
                            self.exactly_min.clear();
                        }
                    }
                    taker = Some(m);
                }
            }
            match taker {
                Some(m) => {
                    self.give(g, tp, m);
                }
                None => left.push((g, tp)),
            }
        }
        left
    }
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
