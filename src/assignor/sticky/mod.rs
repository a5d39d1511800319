//! Kafka's client `StickyAssignor` and `CooperativeStickyAssignor`, both built on one port of
//! `AbstractStickyAssignor` behaviour (ALGORITHMS.md section 4):
//!
//! * where ownership comes from: `sticky` reads the previous assignment and generation from its
//!   userData (EAGER: the Subscription's owned partitions are empty); `cooperative-sticky` reads
//!   the Subscription's owned partitions as sent, which under COOPERATIVE are what the member
//!   still owns after `onJoinPrepare` and under EAGER are empty. A member whose subscription
//!   changed after its `onJoinPrepare` (while a JoinGroup was retried) still claims the topics
//!   it left: the general builder drops those claims (`revocationRequired`) and
//!   `computePartitionsTransferringOwnership` withholds them from their new owner;
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

use super::racks::{member_racks, use_rack_aware, RackSet};
use super::{
    AssignError, AssignResult, Assignor, CooperativeDetails, GroupSpec, MemberPartitions,
    RebalanceProtocol, TopicIdx, TopicPartition,
};
use crate::java::{iteration_order, string_compare, string_hash, Capacity};

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
        let claims: Vec<&[TopicPartition]> =
            group.members.iter().map(|m| m.owned.as_slice()).collect();
        let run = run(group, &claims)?;
        Ok(AssignResult::plain(run.target))
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
            // ownedPartitions as sent (serialization sorts by topic, then partition).
            RebalanceProtocol::Cooperative => group
                .members
                .iter()
                .map(|m| {
                    let mut owned = m.owned.clone();
                    if !owned.is_sorted() {
                        owned.sort_unstable();
                    }
                    owned
                })
                .collect(),
        };
        let claims: Vec<&[TopicPartition]> = claims.iter().map(Vec::as_slice).collect();
        let run = run(group, &claims)?;
        // adjustAssignment: a partition moving to a new owner while another member still claims
        // it is taken out of this generation's assignment.
        let transferring = match run.transferring {
            Some(t) => t,
            None => raw_transferring(&run.space, &claims, &run.target),
        };
        let n = run.target.len();
        let mut withheld: MemberPartitions = vec![Vec::new(); n];
        for &(tp, m) in &transferring {
            withheld[m as usize].push(tp);
        }
        for w in &mut withheld {
            w.sort_unstable();
        }
        let target = run.target;
        if group.protocol == RebalanceProtocol::Eager {
            // Nobody claims anything under EAGER, so nothing is withheld.
            return Ok(AssignResult::plain(target));
        }
        let mut assignment = target.clone();
        for (m, w) in withheld.iter().enumerate() {
            if !w.is_empty() {
                assignment[m] = difference(&assignment[m], w);
            }
        }
        let revoked: MemberPartitions = (0..n)
            .map(|m| difference(claims[m], &assignment[m]))
            .collect();
        let added: MemberPartitions = (0..n)
            .map(|m| difference(&assignment[m], claims[m]))
            .collect();
        let rejoin_requested_by = (0..n).filter(|&m| !revoked[m].is_empty()).collect();
        let details = CooperativeDetails {
            algorithm: run.algorithm,
            target,
            withheld,
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

/// `a` minus `b`, both sorted.
fn difference(a: &[TopicPartition], b: &[TopicPartition]) -> Vec<TopicPartition> {
    if b.is_empty() {
        return a.to_vec();
    }
    let mut out = Vec::with_capacity(a.len());
    let mut j = 0;
    for &x in a {
        while j < b.len() && b[j] < x {
            j += 1;
        }
        if j >= b.len() || b[j] != x {
            out.push(x);
        }
    }
    out
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
        let mut subscribed = vec![false; group.topics.len()];
        for m in &group.members {
            for &t in &m.topics {
                subscribed[t as usize] = true;
            }
        }
        let mut offset = vec![NONE; group.topics.len()];
        let mut topics = Vec::new();
        let mut topic_start = Vec::new();
        let mut total: usize = 0;
        for (t, topic) in group.topics.iter().enumerate() {
            if subscribed[t] && topic.partitions > 0 {
                offset[t] = total as u32;
                topics.push((t as TopicIdx, topic.partitions as u32));
                topic_start.push(total as u32);
                total += topic.partitions as usize;
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
}

/// `AbstractStickyAssignor.RackInfo`: the racks it matches on, present only when
/// rack-aware assignment is on for the group (the gate over every partition being assigned).
pub(crate) struct RackInfo {
    /// Per member, its rack (empty when rack-aware assignment is off).
    consumer: Vec<Option<RackSet>>,
    /// Per dense partition, its replicas' racks.
    partition: Vec<RackSet>,
    /// Per dense partition, how many members sit in its replicas' racks.
    pub consumers_by_partition: Vec<u32>,
}

impl RackInfo {
    pub fn off() -> RackInfo {
        RackInfo {
            consumer: Vec::new(),
            partition: Vec::new(),
            consumers_by_partition: Vec::new(),
        }
    }

    fn new(group: &GroupSpec, space: &Space) -> RackInfo {
        if group.racks.is_empty() {
            return RackInfo::off();
        }
        let consumer = member_racks(group);
        if consumer.iter().all(Option::is_none) {
            return RackInfo::off();
        }
        let mut partition = Vec::with_capacity(space.total);
        for &(t, count) in &space.topics {
            partition.extend(group.racks.of_topic(t, count as i32));
        }
        if !use_rack_aware(
            consumer.iter().flatten().copied(),
            partition.iter().copied(),
        ) {
            return RackInfo::off();
        }
        let mut per_rack = [0u32; super::racks::MAX_RACKS];
        for r in consumer.iter().flatten() {
            if *r != 0 {
                per_rack[r.trailing_zeros() as usize] += 1;
            }
        }
        let consumers_by_partition = partition
            .iter()
            .map(|&set| {
                (0..super::racks::MAX_RACKS)
                    .filter(|&i| set & (1 << i) != 0)
                    .map(|i| per_rack[i])
                    .sum()
            })
            .collect();
        RackInfo {
            consumer,
            partition,
            consumers_by_partition,
        }
    }

    pub fn active(&self) -> bool {
        !self.consumer.is_empty()
    }

    /// `racksMismatch`: the member has a rack and no replica of the partition is in it.
    pub fn mismatch(&self, m: usize, g: u32) -> bool {
        self.active() && self.consumer[m].is_some_and(|r| self.partition[g as usize] & r == 0)
    }

    /// The member's rack holds a replica of the partition.
    pub fn matches(&self, m: usize, g: u32) -> bool {
        self.active() && self.consumer[m].is_some_and(|r| self.partition[g as usize] & r != 0)
    }

    /// `nextRackConsumer`: the first position at or after `first` (wrapping) whose member is in
    /// one of the partition's replicas' racks.
    pub fn next_rack_consumer(&self, g: u32, list: &[usize], first: usize) -> Option<usize> {
        if self.partition[g as usize] == 0 {
            return None;
        }
        (0..list.len())
            .map(|i| (first + i) % list.len())
            .find(|&i| self.matches(list[i], g))
    }
}

/// One bit per dense partition: eight times smaller than a `Vec<bool>`, so marking partitions
/// in member order (scattered over a million partitions) stays in cache.
pub(crate) struct Bits(Vec<u64>);

impl Bits {
    pub fn new(len: usize) -> Bits {
        Bits(vec![0; len.div_ceil(64)])
    }

    pub fn set(&mut self, i: u32) {
        self.0[i as usize / 64] |= 1 << (i % 64);
    }

    pub fn get(&self, i: u32) -> bool {
        self.0[i as usize / 64] & (1 << (i % 64)) != 0
    }
}

/// What the abstract assignor saw and decided.
pub(crate) struct Run {
    space: Space,
    /// Per member, the sticky target, each list sorted.
    target: MemberPartitions,
    /// Constrained path: (partition, new owner) pairs marked while dealing; general path: None
    /// (the cooperative assignor recomputes from the raw claims).
    transferring: Option<Vec<(TopicPartition, u32)>>,
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
    /// The Subscription's generation, -1 when absent: what a competing claim is weighed by.
    pub subscription_generation: Vec<i32>,
}

impl Members {
    /// `need_order`: whether the HashMap order can matter. Without claims it decides nothing
    /// but which member sets the reference subscription, and that only matters when some
    /// subscription is empty; hashing every member id is then skipped.
    fn new(group: &GroupSpec, need_order: bool) -> Members {
        let hash_order = if need_order {
            let hashes: Vec<i32> = group
                .members
                .iter()
                .map(|m| string_hash(&m.member_id))
                .collect();
            iteration_order(&hashes, Capacity::Default)
        } else {
            (0..group.members.len()).collect()
        };
        let ids: Vec<&str> = group.members.iter().map(|m| m.member_id.as_str()).collect();
        let mut by_id: Vec<usize> = (0..ids.len()).collect();
        // Member ids are unique, so an unstable sort is exact; ASCII ids compare as bytes.
        if ids.iter().all(|id| id.is_ascii()) {
            by_id.sort_unstable_by(|&a, &b| ids[a].cmp(ids[b]));
        } else {
            by_id.sort_unstable_by(|&a, &b| string_compare(ids[a], ids[b]));
        }
        let mut rank = vec![0u32; by_id.len()];
        for (r, &m) in by_id.iter().enumerate() {
            rank[m] = r as u32;
        }
        let generation = group
            .members
            .iter()
            .map(|m| m.generation.unwrap_or(-1))
            .collect();
        let subscription_generation = group
            .members
            .iter()
            .map(|m| m.subscription_generation.unwrap_or(-1))
            .collect();
        Members {
            hash_order,
            rank,
            generation,
            subscription_generation,
        }
    }
}

/// Ownership after generation-conflict resolution.
pub(crate) struct Validated {
    /// Per member, its surviving claims, in claim order.
    pub owned: Vec<Vec<TopicPartition>>,
    /// Per dense partition, claimed by two members of the same generation (empty when no such
    /// partition exists).
    pub multi: Vec<bool>,
    pub max_generation: i32,
    /// Every Subscription lists the same topic names (Kafka's quirk included: the reference set
    /// is the first non-empty subscription met).
    pub all_equal: bool,
    pub any_claims: bool,
}

/// `allSubscriptionsEqual`: members in HashMap order; a claim on a partition someone already
/// holds goes to the higher generation; equal generations drop it from both and mark it, and a
/// later claimant is compared with the last one met. The competing claim's generation is read
/// from the Subscription (`Member::subscription_generation`), the claimant's own from its
/// memberData.
fn validate(
    group: &GroupSpec,
    space: &Space,
    members: &Members,
    claims: &[&[TopicPartition]],
) -> Validated {
    let mut all_equal = true;
    let mut reference: Option<&super::Member> = None;
    let mut max_generation = -1;
    for &m in &members.hash_order {
        let member = &group.members[m];
        match reference {
            Some(r) if !r.subscription.is_empty() => {
                if all_equal && !same_subscription(r, member) {
                    all_equal = false;
                }
            }
            _ => reference = Some(member),
        }
        max_generation = max_generation.max(members.generation[m]);
    }
    let any_claims = claims.iter().any(|c| !c.is_empty());
    let (owned, multi) = if !any_claims {
        (vec![Vec::new(); claims.len()], Vec::new())
    } else if let Some(owned) = uncontested(space, claims) {
        (owned, Vec::new())
    } else {
        resolve_conflicts(space, members, claims)
    };
    Validated {
        owned,
        multi,
        max_generation,
        all_equal,
        any_claims,
    }
}

/// The usual case: no partition is claimed twice, so every claim on an assigned topic stands.
/// A bit per partition (small enough to stay in cache) tells; None when some claims collide.
fn uncontested(space: &Space, claims: &[&[TopicPartition]]) -> Option<Vec<Vec<TopicPartition>>> {
    let mut seen = Bits::new(space.total);
    let mut owned = Vec::with_capacity(claims.len());
    for list in claims {
        let mut mine = Vec::with_capacity(list.len());
        for &tp in list.iter() {
            let Some(g) = space.dense(tp) else { continue };
            if seen.get(g) {
                return None;
            }
            seen.set(g);
            mine.push(tp);
        }
        owned.push(mine);
    }
    Some(owned)
}

/// Claims met in HashMap order; a claim on a partition someone already claimed is compared with
/// the last claimant met: the higher generation takes it, equal generations drop it from both
/// and mark it. Returns the surviving claims per member and the marks.
fn resolve_conflicts(
    space: &Space,
    members: &Members,
    claims: &[&[TopicPartition]],
) -> (Vec<Vec<TopicPartition>>, Vec<bool>) {
    // Per dense partition, side by side as both are touched for every claim: the member holding
    // it now, and the last claimant met.
    let mut holder_last: Vec<(u32, u32)> = vec![(NONE, NONE); space.total];
    let mut owned: Vec<Vec<TopicPartition>> =
        claims.iter().map(|c| Vec::with_capacity(c.len())).collect();
    let mut multi = vec![false; space.total];
    for &m in &members.hash_order {
        let gen = members.generation[m];
        for &tp in claims[m] {
            let Some(g) = space.dense(tp) else { continue };
            let slot = &mut holder_last[g as usize];
            let other = slot.1;
            if other == NONE {
                owned[m].push(tp);
                *slot = (m as u32, m as u32);
                continue;
            }
            let other_gen = members.subscription_generation[other as usize];
            if gen == other_gen {
                *slot = (NONE, m as u32);
                multi[g as usize] = true;
            } else if gen > other_gen {
                owned[m].push(tp);
                *slot = (m as u32, m as u32);
            }
        }
    }
    for (m, list) in owned.iter_mut().enumerate() {
        list.retain(|&tp| {
            let g = space.dense(tp).expect("kept claims are in the space");
            holder_last[g as usize].0 == m as u32
        });
    }
    if !multi.contains(&true) {
        multi = Vec::new();
    }
    (owned, multi)
}

/// Same topic names subscribed (missing topics included, as Kafka compares the Subscription's
/// list). The dense topic lists settle most comparisons without touching strings.
fn same_subscription(a: &super::Member, b: &super::Member) -> bool {
    a.topics == b.topics
        && a.subscription.len() == b.subscription.len()
        && (a.subscription.len() == a.topics.len() || a.subscription == b.subscription)
}

/// memberData.partitions per member (the claims as sent) in, the abstract assignor's decision out.
fn run(group: &GroupSpec, claims: &[&[TopicPartition]]) -> Result<Run, AssignError> {
    let space = Space::new(group);
    if space.total >= NONE as usize {
        return Err(AssignError(format!(
            "{} partitions to assign: more than the sticky assignors can index",
            space.total
        )));
    }
    let n = group.members.len();
    if n == 0 {
        return Ok(Run {
            space,
            target: Vec::new(),
            transferring: Some(Vec::new()),
            algorithm: "constrained",
        });
    }
    let need_order = claims.iter().any(|c| !c.is_empty())
        || group.members.iter().any(|m| m.subscription.is_empty());
    decide(group, claims, space, need_order)
}

/// The decision proper, once the partitions are laid out and the group is known not empty.
fn decide(
    group: &GroupSpec,
    claims: &[&[TopicPartition]],
    space: Space,
    need_order: bool,
) -> Result<Run, AssignError> {
    let members = Members::new(group, need_order);
    let validated = validate(group, &space, &members, claims);
    let racks = RackInfo::new(group, &space);
    if validated.all_equal {
        let (target, transferring) = constrained::assign(&space, &members, &validated, &racks)?;
        Ok(Run {
            space,
            target,
            transferring: Some(transferring),
            algorithm: "constrained",
        })
    } else {
        let target = general::assign(group, &space, &members, &validated, claims, &racks)?;
        Ok(Run {
            space,
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
    claims: &[&[TopicPartition]],
    target: &MemberPartitions,
) -> Vec<(TopicPartition, u32)> {
    if claims.iter().all(|c| c.is_empty()) {
        return Vec::new();
    }
    let mut owner = vec![NONE; space.total];
    for (m, list) in target.iter().enumerate() {
        for &tp in list {
            owner[space
                .dense(tp)
                .expect("assigned partitions are in the space") as usize] = m as u32;
        }
    }
    // 1: the owner claimed it (not added); 2: some other claimant lost it (revoked).
    let mut flags = vec![0u8; space.total];
    for (m, list) in claims.iter().enumerate() {
        for &tp in list.iter() {
            let Some(g) = space.dense(tp) else { continue };
            flags[g as usize] |= if owner[g as usize] == m as u32 { 1 } else { 2 };
        }
    }
    let mut out = Vec::new();
    for (m, list) in target.iter().enumerate() {
        for &tp in list {
            let g = space
                .dense(tp)
                .expect("assigned partitions are in the space");
            if flags[g as usize] == 2 {
                out.push((tp, m as u32));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
