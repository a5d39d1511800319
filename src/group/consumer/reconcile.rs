//! One member's reconciliation towards the target assignment, as Kafka's
//! `CurrentAssignmentBuilder` runs it on every heartbeat (ALGORITHMS.md 7.4): revoke first
//! (the member stays at its epoch in UNREVOKED_PARTITIONS until its heartbeat no longer reports
//! the revoked partitions), partitions still held by another member wait (UNRELEASED_PARTITIONS),
//! everything else moves at once. A pure function of the member, the target and who holds what.

use super::{AssignmentEpochs, ConsumerMember, MemberState, Partitions};
use crate::assignor::TopicPartition;

/// The member after one reconciliation step towards `target` at `target_epoch`. `held_elsewhere`
/// says whether another member still holds a partition at an epoch (Kafka's
/// `currentPartitionEpoch != -1`); `owned` is what the heartbeat reported (`None`: not sent).
pub fn reconcile(
    member: &ConsumerMember,
    target_epoch: i32,
    target: &Partitions,
    owned: Option<&Partitions>,
    held_elsewhere: &dyn Fn(TopicPartition) -> bool,
) -> ConsumerMember {
    match member.state {
        MemberState::Stable if member.member_epoch == target_epoch => member.clone(),
        MemberState::Stable | MemberState::UnreleasedPartitions => {
            next_assignment(member, target_epoch, target, owned, held_elsewhere)
        }
        // Once it no longer reports what it was revoking, it is reconciled like any other
        // member: if the newest target takes more away, it revokes that too, still at its own
        // epoch (Kafka's `CurrentAssignmentBuilderTest
        // .testUnrevokedPartitionsToUnrevokedPartitions`).
        MemberState::UnrevokedPartitions => {
            if still_owns(owned, &member.pending_revocation) {
                return member.clone();
            }
            next_assignment(member, target_epoch, target, owned, held_elsewhere)
        }
    }
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
/// epoch becomes its previous one too); otherwise it moves to the target epoch.
fn next_assignment(
    member: &ConsumerMember,
    target_epoch: i32,
    target: &Partitions,
    owned: Option<&Partitions>,
    held_elsewhere: &dyn Fn(TopicPartition) -> bool,
) -> ConsumerMember {
    let keep: Partitions = member
        .assigned
        .keys()
        .filter(|tp| target.contains(tp))
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
        .filter(|tp| !keep.contains(tp))
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
