//! One member's reconciliation towards the target assignment, as Kafka's
//! `CurrentAssignmentBuilder` runs it on every heartbeat (ALGORITHMS.md 7.4): revoke first
//! (the member stays at its epoch in UNREVOKED_PARTITIONS until its heartbeat no longer reports
//! the revoked partitions), partitions still held by another member wait (UNRELEASED_PARTITIONS),
//! everything else moves at once. A pure function of the member, the target and who holds what.

use super::{AssignmentEpochs, ConsumerMember, MemberState, Partitions};
use crate::assignor::{TopicIdx, TopicPartition};

/// What one heartbeat reconciles a member against.
pub struct Towards<'a> {
    /// The target assignment epoch, and the member's target at it.
    pub target_epoch: i32,
    pub target: &'a Partitions,
    /// What the heartbeat reported owning (`None`: not sent).
    pub owned: Option<&'a Partitions>,
    /// Whether another member still holds a partition at an epoch (Kafka's
    /// `currentPartitionEpoch != -1`).
    pub held_elsewhere: &'a dyn Fn(TopicPartition) -> bool,
    /// Whether the member subscribes to a topic that exists (its subscription's `TopicIds`).
    pub subscribed: &'a dyn Fn(TopicIdx) -> bool,
    /// Whether this heartbeat changed the member's subscription.
    pub subscription_changed: bool,
}

/// The member after one reconciliation step (`CurrentAssignmentBuilder.build`).
pub fn reconcile(member: &ConsumerMember, towards: &Towards) -> ConsumerMember {
    let owned = towards.owned;
    match member.state {
        MemberState::Stable if member.member_epoch == towards.target_epoch => {
            if towards.subscription_changed {
                drop_unsubscribed(member, towards)
            } else {
                member.clone()
            }
        }
        MemberState::Stable | MemberState::UnreleasedPartitions => next_assignment(member, towards),
        // Once it no longer reports what it was revoking, it is reconciled like any other
        // member: if the newest target takes more away, it revokes that too, still at its own
        // epoch (Kafka's `CurrentAssignmentBuilderTest
        // .testUnrevokedPartitionsToUnrevokedPartitions`).
        MemberState::UnrevokedPartitions => {
            if !still_owns(owned, &member.pending_revocation) {
                next_assignment(member, towards)
            } else if towards.subscription_changed {
                drop_unsubscribed(member, towards)
            } else {
                member.clone()
            }
        }
    }
}

/// `updateCurrentAssignment`, for a member whose subscription changed while it has no newer
/// target to reach: the partitions of topics it no longer subscribes to leave its assignment at
/// once, without waiting for a new target. They stay held, pending revocation, while its
/// heartbeat still reports them (UNREVOKED_PARTITIONS): handing them on before would give them
/// two owners. What it was revoking already stays pending whatever the subscription. Either way
/// the member stays at its epoch, which becomes its previous one too (`updateMemberEpoch`).
fn drop_unsubscribed(member: &ConsumerMember, towards: &Towards) -> ConsumerMember {
    // An empty subscription (Kafka's `subscribedTopicIds.isEmpty()` counts names) with nothing
    // pending drops everything and always makes a new member: Kafka compares the assignment
    // maps by identity, and a fresh empty map is never the member's own (every member's
    // assignment comes from a replayed record).
    let drop_all = member.subscribed_topic_names.is_empty() && member.pending_revocation.is_empty();
    let dropped: AssignmentEpochs = member
        .assigned
        .iter()
        .filter(|(tp, _)| drop_all || !(towards.subscribed)(tp.topic))
        .map(|(&tp, &epoch)| (tp, epoch))
        .collect();
    if dropped.is_empty() && !drop_all {
        return member.clone();
    }
    let mut next = member.clone();
    next.assigned.retain(|tp, _| !dropped.contains_key(tp));
    next.set_epoch(member.member_epoch);
    let mut pending = member.pending_revocation.clone();
    pending.extend(dropped);
    if !pending.is_empty() && still_owns(towards.owned, &pending) {
        next.state = MemberState::UnrevokedPartitions;
        next.pending_revocation = pending;
    }
    // Otherwise it had revoked them already: only its assignment shrinks.
    next
}

/// Whether the member still reports any of `revoking` (a heartbeat without `owned` does).
fn still_owns(owned: Option<&Partitions>, revoking: &AssignmentEpochs) -> bool {
    match owned {
        None => true,
        Some(owned) => owned.iter().any(|tp| revoking.contains_key(tp)),
    }
}

/// `computeNextAssignment`: keep = current ∩ target, revoke = current - keep, assign = target -
/// keep - what others still hold. A member with something to revoke stays at its epoch (the
/// epoch becomes its previous one too); otherwise it moves to the target epoch. The target of a
/// topic the member no longer subscribes to counts as empty: a target computed before it
/// dropped the topic (the assignment interval not passed yet) neither keeps nor hands it that
/// topic's partitions.
fn next_assignment(member: &ConsumerMember, towards: &Towards) -> ConsumerMember {
    let Towards {
        target_epoch,
        target,
        owned,
        held_elsewhere,
        subscribed,
        ..
    } = *towards;
    let in_target = |tp: &TopicPartition| subscribed(tp.topic) && target.contains(tp);
    let keep: Partitions = member
        .assigned
        .keys()
        .filter(|tp| in_target(tp))
        .copied()
        .collect();
    // Pending revocation, each keeps the epoch it was assigned at.
    let revoke: AssignmentEpochs = member
        .assigned
        .iter()
        .filter(|(tp, _)| !keep.contains(tp))
        .map(|(&tp, &epoch)| (tp, epoch))
        .collect();
    let mut unreleased = false;
    let assign: Partitions = target
        .iter()
        .filter(|tp| subscribed(tp.topic) && !keep.contains(tp))
        .filter(|&&tp| {
            let held = held_elsewhere(tp);
            unreleased |= held;
            !held
        })
        .copied()
        .collect();
    let mut next = member.clone();
    next.assigned.retain(|tp, _| keep.contains(tp));
    if !revoke.is_empty() && still_owns(owned, &revoke) {
        next.state = MemberState::UnrevokedPartitions;
        next.set_epoch(member.member_epoch);
        next.pending_revocation = revoke;
        return next;
    }
    next.set_epoch(target_epoch);
    next.pending_revocation.clear();
    // A partition handed over now is assigned at the target epoch (4.3's per-partition epochs).
    for tp in assign {
        next.assigned.insert(tp, target_epoch);
    }
    next.state = if unreleased {
        MemberState::UnreleasedPartitions
    } else {
        MemberState::Stable
    };
    next
}
