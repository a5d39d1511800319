//! Kafka's client `StickyAssignor` and `CooperativeStickyAssignor`, both built on one port of
//! `AbstractStickyAssignor` behaviour (ALGORITHMS.md section 4):
//!
//! * where ownership comes from: `sticky` reads the previous assignment and generation from its
//!   userData (EAGER: the Subscription's owned partitions are empty); `cooperative-sticky` reads
//!   the Subscription's owned partitions, which under COOPERATIVE are what the member still owns
//!   after `onJoinPrepare` (topics it no longer subscribes to revoked) and under EAGER are empty;
//! * generation conflicts between claims (`allSubscriptionsEqual`), [`validate`];
//! * the constrained builder for identical subscriptions ([`constrained`]) and the general one
//!   for mixed subscriptions ([`general`]);
//! * cooperative withholding of partitions that still have another owner, and the per-client
//!   revoke/add bookkeeping ([`CooperativeDetails`]).
//!
//! Internally members are indexes into [`GroupSpec::members`] and partitions are dense indexes
//! into the subscribed topics (`Space`), so no per-partition string work happens. Java `HashMap`
//! order of the member ids (which decides who keeps a max-quota slot and which claim is met
//! first) is computed once.

mod constrained;
mod general;

use super::{
    AssignError, AssignResult, Assignor, CooperativeDetails, GroupSpec, MemberPartitions,
    RebalanceProtocol, TopicIdx, TopicPartition,
};
use crate::java::{iteration_order, string_compare, string_hash, Capacity};
use std::collections::HashSet;

/// No member / no partition.
const NONE: u32 = u32::MAX;

/// Kafka's `StickyAssignor` (EAGER only): history travels in its userData.
pub struct StickyAssignor;

/// Kafka's `CooperativeStickyAssignor` (COOPERATIVE and EAGER): history is the Subscription's
/// owned partitions.
pub struct CooperativeStickyAssignor;

impl Assignor for StickyAssignor {
    fn name(&self) -> &'static str {
        "sticky"
    }

    fn assign(&self, group: &GroupSpec) -> Result<AssignResult, AssignError> {
        // The userData carries the member's whole previous assignment, even partitions of topics
        // it no longer subscribes to (EAGER never filters it).
        let claims = group
            .members
            .iter()
            .map(|m| m.owned.clone())
            .collect::<Vec<_>>();
        let run = run(group, claims)?;
        Ok(AssignResult::plain(
            run.space.to_member_partitions(&run.target),
        ))
    }
}

impl Assignor for CooperativeStickyAssignor {
    fn name(&self) -> &'static str {
        "cooperative-sticky"
    }

    fn supported_protocols(&self) -> &'static [RebalanceProtocol] {
        &[RebalanceProtocol::Eager, RebalanceProtocol::Cooperative]
    }

    fn assign(&self, group: &GroupSpec) -> Result<AssignResult, AssignError> {
        let claims: Vec<Vec<TopicPartition>> = match group.protocol {
            // EAGER revokes everything before joining: ownedPartitions is empty, so the
            // assignor has no history at all (README finding 4).
            RebalanceProtocol::Eager => vec![Vec::new(); group.members.len()],
            // onJoinPrepare revokes the partitions of topics the member left; the rest is sent
            // (serialization sorts by topic, then partition).
            RebalanceProtocol::Cooperative => group
                .members
                .iter()
                .map(|m| {
                    let mut owned: Vec<TopicPartition> = m
                        .owned
                        .iter()
                        .copied()
                        .filter(|tp| m.subscribes(tp.topic))
                        .collect();
                    owned.sort_unstable();
                    owned
                })
                .collect(),
        };
        let run = run(group, claims)?;
        let space = &run.space;
        let mut target = run.target;
        // adjustAssignment: a partition moving to a new owner while another member still claims
        // it is taken out of this generation's assignment.
        let transferring = match run.transferring {
            Some(t) => t,
            None => raw_transferring(space, &run.claims, &target),
        };
        let mut withheld: Vec<Vec<u32>> = vec![Vec::new(); target.len()];
        if !transferring.is_empty() {
            let drop: HashSet<u32> = transferring.iter().map(|&(g, _)| g).collect();
            for &(g, m) in &transferring {
                withheld[m as usize].push(g);
            }
            let mut affected: Vec<u32> = transferring.iter().map(|&(_, m)| m).collect();
            affected.sort_unstable();
            affected.dedup();
            for m in affected {
                target[m as usize].retain(|g| !drop.contains(g));
            }
        }
        let assignment_dense = target;
        let assignment = space.to_member_partitions(&assignment_dense);
        if group.protocol == RebalanceProtocol::Eager {
            return Ok(AssignResult::plain(assignment));
        }
        // Put the withheld partitions back to show the full target.
        let mut full = assignment_dense.clone();
        for (m, w) in withheld.iter().enumerate() {
            full[m].extend_from_slice(w);
        }
        let (revoked, added) = revoked_added(space, &run.claims, &assignment_dense, &assignment);
        let rejoin_requested_by = (0..revoked.len())
            .filter(|&m| !revoked[m].is_empty())
            .collect();
        let details = CooperativeDetails {
            algorithm: run.algorithm,
            target: space.to_member_partitions(&full),
            withheld: space.to_member_partitions(&withheld),
            revoked,
            added,
            rejoin_requested_by,
        };
        Ok(AssignResult {
            cooperative: Some(details),
            ..AssignResult::plain(assignment)
        })
    }
}

/// The partitions being assigned (`partitionsPerTopic`): topics someone subscribes to that exist
/// with at least one partition, laid out densely in topic-name order, so dense index order is
/// (topic name, partition) order.
pub(crate) struct Space {
    /// Per [`TopicIdx`] of the group: first dense index, or [`NONE`] when not assigned.
    offset: Vec<u32>,
    /// The assigned topics ascending, with their partition counts.
    topics: Vec<(TopicIdx, u32)>,
    /// Per assigned topic (position in `topics`): first dense index.
    topic_start: Vec<u32>,
    total: usize,
}

impl Space {
    fn new(group: &GroupSpec) -> Space {
        let mut offset = vec![NONE; group.topics.len()];
        let mut topics = Vec::new();
        let mut topic_start = Vec::new();
        let mut total: usize = 0;
        for t in group.subscribed_topics() {
            let n = group.topic(t).partitions;
            if n > 0 {
                offset[t as usize] = total as u32;
                topics.push((t, n as u32));
                topic_start.push(total as u32);
                total += n as usize;
            }
        }
        Space {
            offset,
            topics,
            topic_start,
            total,
        }
    }

    /// Dense index of a partition, if its topic is being assigned.
    fn dense(&self, tp: TopicPartition) -> Option<u32> {
        let off = *self.offset.get(tp.topic as usize)?;
        (off != NONE).then(|| off + tp.partition as u32)
    }

    /// Position in `topics` of the topic holding dense index `g`.
    fn topic_pos(&self, g: u32) -> usize {
        self.topic_start.partition_point(|&s| s <= g) - 1
    }

    /// Dense lists to [`TopicPartition`] lists, each sorted.
    fn to_member_partitions(&self, dense: &[Vec<u32>]) -> MemberPartitions {
        dense
            .iter()
            .map(|list| {
                let mut sorted = list.clone();
                sorted.sort_unstable();
                // Sorted dense indexes walk topics in order: one cursor instead of a search each.
                let mut out = Vec::with_capacity(sorted.len());
                let mut ti = 0usize;
                for g in sorted {
                    while ti + 1 < self.topics.len() && self.topic_start[ti + 1] <= g {
                        ti += 1;
                    }
                    out.push(TopicPartition::new(
                        self.topics[ti].0,
                        (g - self.topic_start[ti]) as i32,
                    ));
                }
                out
            })
            .collect()
    }
}

/// What the abstract assignor saw and decided.
pub(crate) struct Run {
    space: Space,
    /// memberData.partitions per member (the claims as sent).
    claims: Vec<Vec<TopicPartition>>,
    /// Per member, dense partitions of the sticky target.
    target: Vec<Vec<u32>>,
    /// Constrained path: (partition, new owner) pairs marked while dealing; general path: None
    /// (the cooperative assignor recomputes from the raw claims).
    transferring: Option<Vec<(u32, u32)>>,
    algorithm: &'static str,
}

/// Per-member facts the builders share.
pub(crate) struct Members {
    /// Java `HashMap<memberId, _>` iteration order (default capacity, filled in input order).
    pub hash_order: Vec<usize>,
    /// Position of each member in member-id order (`String.compareTo`).
    pub rank: Vec<u32>,
    /// Generation, -1 when absent.
    pub generation: Vec<i32>,
}

impl Members {
    fn new(group: &GroupSpec) -> Members {
        let hashes: Vec<i32> = group
            .members
            .iter()
            .map(|m| string_hash(&m.member_id))
            .collect();
        let hash_order = iteration_order(&hashes, Capacity::Default);
        let mut by_id: Vec<usize> = (0..group.members.len()).collect();
        by_id.sort_by(|&a, &b| {
            string_compare(&group.members[a].member_id, &group.members[b].member_id)
        });
        let mut rank = vec![0u32; by_id.len()];
        for (r, &m) in by_id.iter().enumerate() {
            rank[m] = r as u32;
        }
        let generation = group
            .members
            .iter()
            .map(|m| m.generation.unwrap_or(-1))
            .collect();
        Members {
            hash_order,
            rank,
            generation,
        }
    }
}

/// Ownership after generation-conflict resolution.
pub(crate) struct Validated {
    /// Per member, its surviving claims (dense), in claim order.
    pub owned: Vec<Vec<u32>>,
    /// Partitions claimed by two members of the same generation.
    pub multi: HashSet<u32>,
    pub max_generation: i32,
    /// Every Subscription lists the same topic names (Kafka's quirk included: the reference set
    /// is the first non-empty subscription met).
    pub all_equal: bool,
    pub any_claims: bool,
}

/// `allSubscriptionsEqual`: members in HashMap order; a claim on a partition someone already
/// holds goes to the higher generation; equal generations drop it from both and mark it, and a
/// later claimant is compared with the last one met. The competing claim's generation is read
/// from the Subscription (the same number our input gives both ways).
fn validate(
    group: &GroupSpec,
    space: &Space,
    members: &Members,
    claims: &[Vec<TopicPartition>],
) -> Validated {
    let n = group.members.len();
    let mut all_equal = true;
    let mut reference: Option<&Vec<String>> = None;
    let mut max_generation = -1;
    let any_claims = claims.iter().any(|c| !c.is_empty());
    let mut holder = if any_claims {
        vec![NONE; space.total]
    } else {
        Vec::new()
    };
    let mut last = holder.clone();
    let mut owned: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut multi = HashSet::new();
    let mut lost_any = false;
    for &m in &members.hash_order {
        let sub = &group.members[m].subscription;
        match reference {
            Some(r) if !r.is_empty() => {
                if all_equal && r != sub {
                    all_equal = false;
                }
            }
            _ => reference = Some(sub),
        }
        let gen = members.generation[m];
        max_generation = max_generation.max(gen);
        for &tp in &claims[m] {
            let Some(g) = space.dense(tp) else { continue };
            let gi = g as usize;
            let other = last[gi];
            if other == NONE {
                owned[m].push(g);
                holder[gi] = m as u32;
                last[gi] = m as u32;
                continue;
            }
            let other_gen = members.generation[other as usize];
            if gen == other_gen {
                multi.insert(g);
                holder[gi] = NONE;
                last[gi] = m as u32;
                lost_any = true;
            } else if gen > other_gen {
                owned[m].push(g);
                holder[gi] = m as u32;
                last[gi] = m as u32;
                lost_any = true;
            }
        }
    }
    if lost_any {
        for (m, list) in owned.iter_mut().enumerate() {
            list.retain(|&g| holder[g as usize] == m as u32);
        }
    }
    Validated {
        owned,
        multi,
        max_generation,
        all_equal,
        any_claims,
    }
}

fn run(group: &GroupSpec, claims: Vec<Vec<TopicPartition>>) -> Result<Run, AssignError> {
    let space = Space::new(group);
    let n = group.members.len();
    if n == 0 {
        return Ok(Run {
            space,
            claims,
            target: Vec::new(),
            transferring: Some(Vec::new()),
            algorithm: "constrained",
        });
    }
    let members = Members::new(group);
    let validated = validate(group, &space, &members, &claims);
    if validated.all_equal {
        let (target, transferring) = constrained::assign(&space, &members, &validated)?;
        Ok(Run {
            space,
            claims,
            target,
            transferring: Some(transferring),
            algorithm: "constrained",
        })
    } else {
        let target = general::assign(group, &space, &members, &validated, &claims)?;
        Ok(Run {
            space,
            claims,
            target,
            transferring: None,
            algorithm: "general",
        })
    }
}

/// `computePartitionsTransferringOwnership` (general path): partitions given to a member that
/// did not claim them while some claimant lost them, from the raw owned partitions.
fn raw_transferring(
    space: &Space,
    claims: &[Vec<TopicPartition>],
    target: &[Vec<u32>],
) -> Vec<(u32, u32)> {
    if claims.iter().all(|c| c.is_empty()) {
        return Vec::new();
    }
    let mut owner = vec![NONE; space.total];
    for (m, list) in target.iter().enumerate() {
        for &g in list {
            owner[g as usize] = m as u32;
        }
    }
    // 1: the owner claimed it (not added); 2: some other claimant lost it (revoked).
    let mut flags = vec![0u8; space.total];
    for (m, list) in claims.iter().enumerate() {
        for &tp in list {
            let Some(g) = space.dense(tp) else { continue };
            if owner[g as usize] == m as u32 {
                flags[g as usize] |= 1;
            } else {
                flags[g as usize] |= 2;
            }
        }
    }
    let mut out = Vec::new();
    for (g, &f) in flags.iter().enumerate() {
        if f == 2 && owner[g] != NONE {
            out.push((g as u32, owner[g]));
        }
    }
    out
}

/// What each client revokes (owned at join minus assignment) and newly receives (assignment
/// minus owned at join) in `onJoinComplete`.
fn revoked_added(
    space: &Space,
    claims: &[Vec<TopicPartition>],
    assignment_dense: &[Vec<u32>],
    assignment: &MemberPartitions,
) -> (MemberPartitions, MemberPartitions) {
    let n = claims.len();
    let mut revoked = vec![Vec::new(); n];
    let mut added = vec![Vec::new(); n];
    for m in 0..n {
        if claims[m].is_empty() {
            added[m] = assignment[m].clone();
            continue;
        }
        let mine: HashSet<u32> = assignment_dense[m].iter().copied().collect();
        let mut owned_dense = HashSet::new();
        for &tp in &claims[m] {
            match space.dense(tp) {
                Some(g) => {
                    owned_dense.insert(g);
                    if !mine.contains(&g) {
                        revoked[m].push(tp);
                    }
                }
                None => revoked[m].push(tp),
            }
        }
        revoked[m].sort_unstable();
        for &tp in &assignment[m] {
            let g = space
                .dense(tp)
                .expect("assigned partitions are in the space");
            if !owned_dense.contains(&g) {
                added[m].push(tp);
            }
        }
    }
    (revoked, added)
}

#[cfg(test)]
mod tests;
