//! Each property fed facts directly, without a run: it fires when it should and only then.

use super::*;
use crate::messages::Trigger;

/// The last fault ends at 50 ms; settled by 100 ms and through 200 ms.
fn checks() -> Checks {
    Checks::new(
        Names {
            members: vec!["c1".into(), "c2".into()],
            partitions: vec!["t-0".into(), "t-1".into()],
        },
        SettleWindow {
            from: at(50),
            bound: at(100),
            until: at(200),
            bound_terms: "last fault's end + rebalance timeout + session timeout",
            coordinator_load: crate::sim::time::Duration::from_millis(20),
        },
    )
}

/// The coordinator reports the group `state` at `generation`.
fn group(state: &'static str, generation: i32, at_rest: bool, empty: bool) -> Fact {
    Fact::GroupState {
        state,
        generation,
        at_rest,
        empty,
    }
}

fn stable(generation: i32) -> Fact {
    group("Stable", generation, true, false)
}

fn rebalance_started(generation: i32) -> Fact {
    Fact::RebalanceStarted {
        generation,
        trigger: Trigger::MemberExpired,
        member: Some(1),
    }
}

fn at(ms: u64) -> SimTime {
    SimTime::from_millis(ms)
}

/// KIP-848: a member's heartbeat reported what it owns, as the coordinator received it.
fn reported(member: usize, partitions: &[usize]) -> Fact {
    Fact::OwnedReported {
        member,
        partitions: partitions.to_vec(),
    }
}

/// KIP-848: the coordinator's answer gave the member this whole assignment.
fn sent(member: usize, partitions: &[usize]) -> Fact {
    Fact::AssignmentSent {
        member,
        partitions: partitions.to_vec(),
    }
}

/// Each violation found, as (at ms, property).
fn kinds(inv: &Invariants) -> Vec<(u64, &str)> {
    inv.violations
        .iter()
        .map(|v| (v.at_ms, v.kind.as_str()))
        .collect()
}

/// The coordinator adds `member` under `member_id` (its first process's JoinGroup).
fn added(member: usize, member_id: &str) -> Fact {
    added_by(member, 0, member_id)
}

/// The coordinator adds `member` under `member_id`, by its process `incarnation`.
fn added_by(member: usize, incarnation: u32, member_id: &str) -> Fact {
    Fact::MemberAdded {
        member,
        incarnation,
        member_id: member_id.into(),
    }
}

/// The coordinator removes `member`'s id `member_id`.
fn removed(member: usize, member_id: &str) -> Fact {
    Fact::MemberRemoved {
        member,
        member_id: member_id.into(),
    }
}

/// `member` processed offsets `from..to` of partition `partition`.
fn processed(member: usize, partition: usize, from: u64, to: u64) -> Fact {
    Fact::Processed {
        member,
        partition,
        from,
        to,
    }
}

fn assigned(member: usize, partitions: &[usize]) -> Fact {
    Fact::Assigned {
        member,
        partitions: partitions.to_vec(),
    }
}

fn revoked(member: usize, partitions: &[usize]) -> Fact {
    Fact::Revoked {
        member,
        partitions: partitions.to_vec(),
    }
}

#[test]
fn double_ownership_fires_on_a_second_owner_and_not_after_a_revoke() {
    let mut c = checks();
    c.observe(at(1), &assigned(0, &[0, 1]));
    c.observe(at(2), &revoked(0, &[1]));
    // t-1 was revoked first: a clean hand-over.
    c.observe(at(3), &assigned(1, &[1]));
    assert!(c.violations.is_empty());
    // t-0 is still c1's.
    c.observe(at(4), &assigned(1, &[0]));
    let inv = c.finish();
    assert_eq!(inv.violations.len(), 1);
    let v = &inv.violations[0];
    assert_eq!((v.at_ms, v.kind.as_str()), (4, "double_ownership"));
    assert_eq!(v.detail, "t-0 owned by c1 and c2");
    assert_eq!(Property::DoubleOwnership.kind(), Kind::Always);
}

#[test]
fn ownership_ends_at_a_crash_or_removal_by_the_coordinator() {
    let mut c = checks();
    c.observe(at(1), &assigned(0, &[0]));
    c.observe(at(1), &assigned(1, &[1]));
    c.observe(
        at(2),
        &Fact::Crashed {
            member: 0,
            owned: vec![0],
        },
    );
    c.observe(at(3), &removed(1, "id"));
    c.observe(at(4), &added(1, "id-2"));
    c.observe(at(4), &assigned(1, &[0]));
    c.observe(at(4), &assigned(0, &[1]));
    assert!(c.finish().violations.is_empty());
}

/// KIP-848 (fuzz --cluster-faults seed 125583): an answer the coordinator sent before it
/// removed the member reaches it after its session expired (held on a cut connection). The
/// member runs onPartitionsAssigned for partitions already handed on, but the coordinator no
/// longer counts it: a zombie's claim, not a second owner. Once added again, it owns anew.
#[test]
fn an_assignment_taken_after_the_coordinator_removed_the_member_is_a_zombies() {
    let mut c = checks();
    c.observe(at(1), &added(0, "a"));
    c.observe(at(2), &removed(0, "a"));
    c.observe(at(3), &assigned(1, &[0, 1]));
    c.observe(at(4), &assigned(0, &[0, 1]));
    assert!(c.violations.is_empty());
    // Its batch of t-0 is a zombie's.
    c.observe(at(5), &processed(0, 0, 0, 3));
    c.observe(at(6), &added(0, "b"));
    c.observe(at(7), &assigned(0, &[1]));
    // A member removed in the memory of a coordinator that then failed is a member of the
    // loaded group again (fuzz --cluster-faults seed 138612).
    c.observe(at(8), &removed(0, "b"));
    c.observe(at(9), &Fact::CoordinatorLoaded);
    c.observe(at(10), &assigned(0, &[0]));
    let inv = c.finish();
    assert_eq!(
        kinds(&inv),
        [(7, "double_ownership"), (10, "double_ownership")]
    );
    assert_eq!(inv.zombie_processing.len(), 1);
    assert!(inv.covered.contains(&"zombie_assignment".to_string()));
}

/// KIP-848 (fuzz --cluster-faults seed 597078): c1's heartbeat answer giving it t-0 is held
/// by a latency spike; meanwhile c1 leaves on a poll timeout, the coordinator hands t-0 to c2,
/// and c1 rejoins with epoch 0. The old answer arrives then, and Kafka's client takes it
/// (`onHeartbeatSuccess` reads any answer while JOINING): a zombie's claim, fenced at its next
/// heartbeat, not a second owner. A partition the new membership was sent is owned as usual.
#[test]
fn an_answer_of_the_previous_membership_taken_after_rejoining_is_a_zombies() {
    let mut c = checks();
    c.observe(at(1), &added(0, "a"));
    c.observe(at(1), &sent(0, &[0, 1]));
    c.observe(at(2), &added(1, "b"));
    c.observe(at(3), &removed(0, "a"));
    c.observe(at(4), &sent(1, &[0, 1]));
    c.observe(at(4), &assigned(1, &[0, 1]));
    // c1's poll returns: it gives up what it held and rejoins, under the same id.
    c.observe(
        at(5),
        &Fact::Lost {
            member: 0,
            partitions: vec![0, 1],
        },
    );
    c.observe(at(6), &added(0, "a"));
    c.observe(at(6), &sent(0, &[]));
    c.observe(at(7), &assigned(0, &[0]));
    // Its batch of t-0 is a zombie's, not processing after its own callback.
    c.observe(at(8), &processed(0, 0, 0, 1));
    assert!(c.violations.is_empty());
    // The new membership is sent t-1 while c2 still holds it: that is double ownership.
    c.observe(at(9), &sent(0, &[1]));
    c.observe(at(10), &assigned(0, &[1]));
    let inv = c.finish();
    assert_eq!(kinds(&inv), [(10, "double_ownership")]);
    assert_eq!(inv.zombie_processing.len(), 1);
    assert!(inv.covered.contains(&"zombie_assignment".to_string()));
}

/// KIP-848 (fuzz --cluster-faults seed 803985): c1 left on a poll timeout, gave t-0 up as
/// lost and rejoined; an answer of its old membership, held by a network partition, gave it
/// t-0 and t-1 before the coordinator had added it again (a zombie's claim). The answer to its
/// rejoin then gives it t-0: its client, already holding t-0, runs no callback for it
/// (`revokeAndAssign` keeps what it owns) and processes it as its owner.
#[test]
fn a_zombies_claim_the_new_membership_is_given_is_owned() {
    let mut c = checks();
    c.observe(at(1), &added(0, "a"));
    c.observe(at(1), &sent(0, &[0]));
    c.observe(at(1), &assigned(0, &[0]));
    c.observe(at(2), &removed(0, "a"));
    c.observe(
        at(3),
        &Fact::Lost {
            member: 0,
            partitions: vec![0],
        },
    );
    c.observe(at(4), &assigned(0, &[0, 1]));
    c.observe(at(5), &added(0, "a"));
    c.observe(at(5), &sent(0, &[0]));
    c.observe(at(6), &revoked(0, &[1]));
    c.observe(at(7), &processed(0, 0, 0, 1));
    // Its own from the answer on: a second owner now is one.
    c.observe(at(8), &assigned(1, &[0]));
    let inv = c.finish();
    assert_eq!(kinds(&inv), [(8, "double_ownership")]);
    assert!(inv.zombie_processing.is_empty());
}

#[test]
fn an_injected_claim_is_caught() {
    let mut c = checks();
    c.observe(at(1), &assigned(0, &[0]));
    // An injected claim reaches the checkers as an assignment nobody made.
    c.observe(at(5), &assigned(1, &[0]));
    assert_eq!(c.finish().violations[0].kind, "double_ownership");
}

/// Kafka's coordinator accepts a commit on the member's generation alone: a static member
/// the join phase moved on from (`MissedRejoin`) commits what it processed meanwhile from its
/// revoke listener once it has rejoined, and the owner's next commit of its own, lower,
/// position goes below that (fuzz --cluster-faults seeds 5652545, 5850848). Not a violation;
/// a regression below the owner's own commit, or a zombie's commit below the owner's, is.
#[test]
fn an_owners_commit_below_a_zombies_commit_is_not_a_regression() {
    let commit = |member, offset| Fact::OffsetCommitted {
        member,
        partition: 0,
        offset,
    };
    let mut c = checks();
    c.observe(at(1), &assigned(1, &[0]));
    c.observe(at(2), &commit(1, 5));
    // c1, which the group moved on from, commits 7; the owner c2 commits its 5 again.
    c.observe(at(3), &commit(0, 7));
    c.observe(at(4), &commit(1, 5));
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    c.observe(at(5), &commit(1, 8));
    c.observe(at(6), &commit(1, 6));
    c.observe(at(7), &commit(0, 4));
    assert_eq!(
        kinds(&c.finish()),
        [(6, "offset_regression"), (7, "offset_regression")]
    );
}

#[test]
fn offset_regression_fires_only_when_a_commit_goes_backwards() {
    let mut c = checks();
    let commit = |offset| Fact::OffsetCommitted {
        member: 1,
        partition: 1,
        offset,
    };
    c.observe(at(1), &commit(10));
    c.observe(at(2), &commit(10));
    c.observe(at(3), &commit(12));
    assert!(c.violations.is_empty());
    c.observe(at(4), &commit(11));
    let inv = c.finish();
    assert_eq!(inv.violations.len(), 1);
    assert_eq!(inv.violations[0].kind, "offset_regression");
    assert_eq!(
        inv.violations[0].detail,
        "c2 committed 11 for t-1 below the committed 12"
    );
}

#[test]
fn not_settled_fires_when_the_group_is_not_stable_at_the_bound() {
    let mut c = checks();
    c.observe(at(60), &rebalance_started(3));
    c.observe(at(60), &group("PreparingRebalance", 3, false, false));
    c.settle_bound(at(100));
    let inv = c.finish();
    assert!(inv.settle_checked);
    assert_eq!(inv.violations[0].kind, "not_settled");
    assert_eq!(
        inv.violations[0].detail,
        "not settled by the bound (100 ms = last fault's end + rebalance timeout + session timeout): the group is PreparingRebalance (generation 3); 1 rebalance(s) since the last fault"
    );
    assert_eq!(Property::NotSettled.kind(), Kind::Eventually);
}

#[test]
fn not_settled_fires_on_a_rebalance_inside_the_quiet_window_even_if_stable_at_its_end() {
    let mut c = checks();
    c.observe(at(10), &stable(8));
    c.settle_bound(at(100));
    assert!(
        !c.settle.checked(),
        "settled at the bound, the window is still open"
    );
    c.observe(at(150), &rebalance_started(9));
    c.settle_window_closed(at(200));
    let inv = c.finish();
    assert_eq!(inv.violations.len(), 1);
    assert!(
        inv.violations[0]
            .detail
            .contains("a rebalance started at 150 ms (generation 9, member_expired by c2)"),
        "{}",
        inv.violations[0].detail
    );
}

fn step(member: usize, running: bool, step: Option<&'static str>) -> Fact {
    Fact::RebalanceStep {
        member,
        running,
        step,
    }
}

/// The not_settled verdict at the bound, in words, after `facts` (at 60 ms).
fn unsettled_after(facts: &[Fact]) -> Option<String> {
    let mut c = checks();
    c.observe(at(10), &stable(8));
    for f in facts {
        c.observe(at(60), f);
    }
    c.settle_bound(at(100));
    let inv = c.finish();
    inv.violations.first().map(|v| v.detail.clone())
}

/// Settled is read from the facts: the group at rest with every running member done; a
/// member's step names it; a coordinator failing over is no coordinator until the new one has
/// loaded the group; a group left empty by members that all stopped is settled too.
#[test]
fn settled_is_the_group_at_rest_with_every_member_done_as_the_facts_report_them() {
    assert_eq!(unsettled_after(&[step(0, true, None)]), None);
    let busy = unsettled_after(&[
        step(0, true, None),
        step(1, true, Some("waiting for its SyncGroup answer")),
        group("CompletingRebalance", 9, false, false),
    ])
    .expect("c2 still syncs");
    assert!(
        busy.contains(
            "the group is CompletingRebalance (generation 9); still rebalancing: c2 waiting for its SyncGroup answer"
        ),
        "{busy}"
    );
    // A stopped member reports no step: it keeps nobody waiting.
    let stopped = [step(1, true, Some("about to rejoin")), step(1, false, None)];
    assert_eq!(unsettled_after(&stopped), None);
    let failing_over =
        unsettled_after(&[Fact::CoordinatorFailed { broker: 1 }]).expect("no coordinator");
    assert!(failing_over.contains("the group has no coordinator (it is failing over)"));
    // Moved at 60 ms, the new coordinator has loaded the group by 80 ms: settled at 100 ms.
    let moved = Fact::CoordinatorMoved {
        from: Some(1),
        to: Some(2),
    };
    assert_eq!(
        unsettled_after(&[Fact::CoordinatorFailed { broker: 1 }, moved]),
        None
    );
    let nobody = [step(0, false, None), group("Empty", 9, false, true)];
    assert_eq!(unsettled_after(&nobody), None);
}

#[test]
fn settled_through_the_quiet_window_passes_and_an_unfinished_window_is_not_checked() {
    let mut c = checks();
    c.observe(at(10), &stable(8));
    c.settle_bound(at(100));
    c.settle_window_closed(at(200));
    let inv = c.finish();
    assert!(inv.settle_checked);
    assert!(inv.violations.is_empty());
    // The run ended inside the window: not checked, and no verdict.
    let mut c = checks();
    c.observe(at(10), &stable(8));
    c.settle_bound(at(100));
    let inv = c.finish();
    assert!(!inv.settle_checked);
    assert!(inv.violations.is_empty());
}

#[test]
fn a_batch_by_a_member_that_no_longer_owns_it_is_a_zombie_not_a_violation() {
    let mut c = checks();
    c.observe(at(1), &assigned(0, &[0]));
    let batch = |member| Fact::Processed {
        member,
        partition: 0,
        from: 0,
        to: 5,
    };
    c.observe(at(2), &batch(0));
    c.observe(at(3), &removed(0, "id"));
    c.observe(at(4), &assigned(1, &[0]));
    c.observe(at(5), &batch(0));
    let inv = c.finish();
    assert!(inv.violations.is_empty());
    assert_eq!(inv.zombie_processing.len(), 1);
    let z = &inv.zombie_processing[0];
    assert_eq!(
        (z.at_ms, z.member.as_str(), z.records, z.owner.as_deref()),
        (5, "c1", 5, Some("c2"))
    );
    assert_eq!(inv.covered, ["zombie_batch"]);
}

#[test]
fn coverage_lists_what_the_run_reached() {
    let mut c = checks();
    assert!(checks().finish().covered.is_empty());
    c.observe(at(1), &revoked(0, &[]));
    assert!(
        c.coverage.names().is_empty(),
        "an empty revoke is no revocation"
    );
    for trigger in [
        Trigger::FollowUp,
        Trigger::MemberExpired,
        Trigger::MemberJoined,
    ] {
        c.observe(
            at(2),
            &Fact::RebalanceStarted {
                generation: 2,
                trigger,
                member: None,
            },
        );
    }
    c.observe(
        at(3),
        &Fact::Lost {
            member: 1,
            partitions: vec![0],
        },
    );
    assert_eq!(c.finish().covered, ["follow_up", "lost", "session_expired"]);
}

#[test]
fn assigned_before_released_fires_only_while_another_member_still_reports_the_partition() {
    let mut c = checks();
    c.observe(at(1), &reported(0, &[0, 1]));
    // c2 is given t-1 while c1's last heartbeat still lists it: the KIP-848 rule is broken.
    c.observe(at(2), &sent(1, &[1]));
    // c1 reports it revoked t-1: handing t-1 over is fine now, and so is c1's own answer.
    c.observe(at(3), &reported(0, &[0]));
    c.observe(at(4), &sent(1, &[1]));
    c.observe(at(4), &sent(0, &[0]));
    // A member that left (or was fenced) releases everything at once.
    c.observe(at(5), &removed(0, "c1-id"));
    c.observe(at(6), &sent(1, &[0, 1]));
    let inv = c.finish();
    let kinds = kinds(&inv);
    assert_eq!(
        kinds,
        [(2, "assigned_before_released")],
        "{:?}",
        inv.violations
    );
    assert_eq!(
        inv.violations[0].detail,
        "t-1 given to c2 while c1 still reports owning it"
    );
}

/// KIP-848, KIP-345: a static member's temporary leave (epoch -2) keeps its assignment for its
/// next process but drops what it was revoking (`consumerGroupStaticMemberGroupLeave`), free
/// at once like everything of a member that leaves for good; what it keeps is not.
#[test]
fn assigned_before_released_frees_what_a_static_member_was_revoking_when_it_leaves() {
    use crate::facts::ConsumerRecord;
    let mut c = checks();
    c.observe(
        at(1),
        &Fact::MemberAdded {
            member: 0,
            incarnation: 0,
            member_id: "c1-id".into(),
        },
    );
    c.observe(at(1), &sent(0, &[0, 1]));
    c.observe(at(2), &reported(0, &[0, 1]));
    // t-1 leaves c1's assignment while c1 reports it: pending revocation.
    c.observe(at(3), &sent(0, &[0]));
    c.observe(
        at(4),
        &Fact::ConsumerGroupRecorded(ConsumerRecord::CurrentAssignment {
            member_id: "c1-id".into(),
            member_epoch: crate::messages::STATIC_LEAVE_EPOCH,
            stable: false,
            assigned: vec![0],
        }),
    );
    c.observe(at(5), &sent(1, &[1]));
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    // t-0 is still c1's, kept for its next process.
    c.observe(at(6), &sent(1, &[0, 1]));
    assert_eq!(kinds(&c.finish()), [(6, "assigned_before_released")]);
}

#[test]
fn committed_offset_lost_fires_when_a_read_is_below_the_last_commit() {
    let mut c = checks();
    let commit = |offset| Fact::OffsetCommitted {
        member: 0,
        partition: 1,
        offset,
    };
    let read = |offset| Fact::CommittedRead {
        partition: 1,
        offset,
    };
    // Nothing committed yet: nothing to lose.
    c.observe(at(1), &read(None));
    c.observe(at(2), &commit(40));
    c.observe(at(3), &read(Some(40)));
    c.observe(at(4), &read(Some(41)));
    assert!(c.violations.is_empty());
    // After a fail-over the new coordinator must still have 40.
    c.observe(at(5), &read(None));
    c.observe(at(6), &read(Some(39)));
    let inv = c.finish();
    let kinds = kinds(&inv);
    assert_eq!(
        kinds,
        [(5, "committed_offset_lost"), (6, "committed_offset_lost")]
    );
    assert_eq!(
        inv.violations[1].detail,
        "t-1 reads committed offset 39, below the 40 committed before"
    );
    assert_eq!(Property::CommittedOffsetLost.kind(), Kind::Always);
}

#[test]
fn the_removal_of_a_restarted_members_old_id_ends_nothing_of_the_new_process() {
    // c1 crashes and restarts under a new member id before its old id's session expires: to
    // the coordinator these are two members, and the expiry of the old one leaves the new one
    // its assignment (GroupMetadataManager removes the expired member id alone).
    let mut c = checks();
    c.observe(at(1), &added(0, "old"));
    c.observe(at(1), &assigned(0, &[0]));
    c.observe(
        at(2),
        &Fact::Crashed {
            member: 0,
            owned: vec![0],
        },
    );
    c.observe(at(3), &added(0, "new"));
    c.observe(at(4), &assigned(0, &[0]));
    c.observe(at(5), &removed(0, "old"));
    c.observe(at(6), &processed(0, 0, 0, 5));
    assert!(c.zombies.is_empty(), "the new process still owns t-0");
    // The new id's removal does end it.
    c.observe(at(7), &removed(0, "new"));
    c.observe(at(8), &assigned(1, &[0]));
    assert!(c.finish().violations.is_empty());
}

/// Kafka keeps a static member the join phase completed without (`completeClassicGroupJoin`
/// removes only the dynamic ones that did not rejoin) but moves the group to a new generation:
/// the member's commits are fenced (`ClassicGroup.validateOffsetCommit`: ILLEGAL_GENERATION)
/// and the leader may hand its partitions on. A stalled static member's own poll timeout can
/// come a little after that (it polled after the rebalance began), so its ownership ends at the
/// join's completion: its late batch is a zombie's, not a second owner's (seed 2050).
#[test]
fn a_static_member_the_join_completed_without_owns_nothing_after_it() {
    let mut c = checks();
    c.observe(at(1), &assigned(0, &[0]));
    c.observe(
        at(10),
        &Fact::MissedRejoin {
            member: 0,
            member_id: "pod-1-id".into(),
            generation: 3,
        },
    );
    c.observe(at(11), &assigned(1, &[0]));
    c.observe(
        at(12),
        &Fact::PollTimeout {
            member: 0,
            last_poll: at(5),
        },
    );
    c.observe(at(13), &processed(0, 0, 0, 1));
    let inv = c.finish();
    assert!(inv.violations.is_empty(), "{:?}", inv.violations);
    assert_eq!(inv.zombie_processing.len(), 1);
}

/// KIP-848: a member's heartbeat reports `currentAssignment`, which takes a reconciliation's
/// partitions only when its callbacks complete (AbstractMembershipManager.revokeAndAssign). A
/// new target that moves such a partition on finds nothing of it to revoke
/// (CurrentAssignmentBuilder.ownsRevokedPartitions) and frees it at once: the second member's
/// assignment while the first one's `onPartitionsAssigned` runs is Kafka's hand-over, not two
/// owners (seed 59943). Once the first member has processed the partition, it is two owners.
#[test]
fn a_partition_moved_on_during_its_assign_callback_is_not_two_owners_unless_processed() {
    let processed = |member: usize, partition: usize| Fact::Processed {
        member,
        partition,
        from: 0,
        to: 1,
    };
    let mut c = checks();
    c.observe(at(1), &assigned(0, &[0, 1]));
    // c1's callback for t-0 and t-1 runs: its heartbeat lists neither yet.
    c.observe(at(2), &reported(0, &[]));
    c.observe(at(3), &assigned(1, &[0]));
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    // c1 processes t-0 after all: it gave t-0 up when the coordinator moved it on.
    c.observe(at(4), &processed(0, 0));
    // t-1: its heartbeat lists it, it processes it: then a second owner is a violation.
    c.observe(at(5), &reported(0, &[1]));
    c.observe(at(6), &processed(0, 1));
    c.observe(at(7), &assigned(1, &[1]));
    let inv = c.finish();
    let kinds = kinds(&inv);
    assert_eq!(
        kinds,
        [(4, "processed_after_revoke"), (7, "double_ownership")],
        "{:?}",
        inv.violations
    );
    assert!(inv.covered.contains(&"moved_in_callback".to_string()));
}

/// A static member a join phase completed without (`MissedRejoin`) never gave its partitions
/// up: a later SyncGroup that hands them back keeps them (no callback) and it owns them again;
/// the ledger's final assignment says so too (seed 79306).
#[test]
fn a_kept_partition_after_a_missed_rejoin_is_owned_again() {
    let mut c = checks();
    c.observe(at(1), &assigned(0, &[0]));
    c.observe(
        at(10),
        &Fact::MissedRejoin {
            member: 0,
            member_id: "pod-1-id".into(),
            generation: 3,
        },
    );
    c.observe(
        at(20),
        &Fact::Kept {
            member: 0,
            partitions: vec![0],
        },
    );
    // Owned again: a second owner now is two owners.
    c.observe(at(30), &assigned(1, &[0]));
    let inv = c.finish();
    assert_eq!(inv.violations.len(), 1, "{:?}", inv.violations);
    assert_eq!(inv.violations[0].detail, "t-0 owned by c1 and c2");
}

/// An answer repeats the member's whole assignment: only what it adds is handed over then. A
/// partition already sent to c2 is not handed over again when c1, which the coordinator moved
/// on from it, reports it afterwards (seed 7010961).
#[test]
fn assigned_before_released_checks_only_what_an_answer_adds() {
    let mut c = checks();
    c.observe(at(1), &reported(0, &[]));
    c.observe(at(2), &sent(1, &[0]));
    c.observe(at(3), &reported(0, &[0, 1]));
    // t-0 was c2's already; t-1 is new to it while c1 reports it.
    c.observe(at(4), &sent(1, &[0, 1]));
    let inv = c.finish();
    let details: Vec<&str> = inv.violations.iter().map(|v| v.detail.as_str()).collect();
    assert_eq!(
        details,
        ["t-1 given to c2 while c1 still reports owning it"]
    );
}

/// KIP-848 (fuzz --cluster-faults seed 164757): the coordinator moved c1 on from t-1 while
/// c1's report left it out (its onPartitionsAssigned still ran), so t-1 was free; c1's report
/// of it once the callback is done is not read again (a STABLE member at the target epoch is
/// not reconciled), and handing t-1 to c2 then is Kafka's rule kept. A partition taken out of
/// an assignment while its report listed it is pending revocation until a report leaves it
/// out.
#[test]
fn assigned_before_released_reads_a_report_only_for_what_the_coordinator_still_gives() {
    let mut c = checks();
    c.observe(at(1), &sent(0, &[0, 1]));
    c.observe(at(2), &reported(0, &[0]));
    c.observe(at(3), &sent(0, &[0]));
    c.observe(at(4), &reported(0, &[0, 1]));
    c.observe(at(5), &sent(1, &[1]));
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    // t-0 leaves c1's assignment while c1 reports it: pending revocation.
    c.observe(at(6), &sent(0, &[]));
    c.observe(at(7), &sent(1, &[0, 1]));
    c.observe(at(8), &reported(0, &[]));
    c.observe(at(9), &sent(1, &[1]));
    c.observe(at(10), &sent(1, &[0, 1]));
    assert_eq!(kinds(&c.finish()), [(7, "assigned_before_released")]);
}

/// KIP-848: the heartbeat that lets the coordinator move a member on may come before the
/// member's `onPartitionsAssigned` starts (sent while the assignment waited, or held on the
/// wire): partitions sent to it and left out of that report count as reported unowned once it
/// takes them, as when the report comes during the callback (seed 73629). Processed, they are
/// two owners again.
#[test]
fn a_partition_reported_unowned_before_its_callback_started_may_move_on() {
    let mut c = checks();
    c.observe(at(1), &sent(0, &[0, 1]));
    // c1's heartbeat reports neither before its callback for them starts.
    c.observe(at(2), &reported(0, &[]));
    c.observe(at(3), &assigned(0, &[0, 1]));
    c.observe(at(4), &sent(1, &[0]));
    c.observe(at(4), &assigned(1, &[0]));
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    // t-1 was reported before it was sent to c1 again: that report does not count.
    c.observe(at(5), &sent(0, &[1]));
    c.observe(at(6), &processed(0, 1, 0, 1));
    c.observe(at(7), &assigned(1, &[1]));
    let inv = c.finish();
    let kinds = kinds(&inv);
    assert_eq!(kinds, [(7, "double_ownership")], "{:?}", inv.violations);
    assert!(inv.covered.contains(&"moved_in_callback".to_string()));
}

/// KIP-848 (fuzz --cluster-faults seed 5253944): c1's heartbeat, sent while its
/// `onPartitionsAssigned` for t-0 ran, was held on the wire until after the callback completed
/// and c1 had processed t-0; the coordinator read it with t-0 out of c1's new target and freed
/// it (`ownsRevokedPartitions`), and c1's next report listing t-0 does not take it back. c2's
/// assignment of t-0 makes c1 a zombie holder until its revocation, not a second owner; after
/// that revocation, processing t-0 again is a violation. Without the freeing (the report left
/// t-0 out while the target still held it, then listed it) a second owner is one.
#[test]
fn a_partition_freed_on_a_report_held_on_the_wire_past_the_take_is_a_zombies_hold() {
    let processed = |member: usize| Fact::Processed {
        member,
        partition: 0,
        from: 0,
        to: 1,
    };
    let mut c = checks();
    c.observe(at(1), &sent(0, &[0, 1]));
    c.observe(at(1), &assigned(0, &[0, 1]));
    c.observe(at(2), &processed(0));
    // The report sent during the callback, read now, and the answer without t-0.
    c.observe(at(3), &reported(0, &[1]));
    c.observe(at(3), &sent(0, &[1]));
    c.observe(at(4), &reported(0, &[0, 1]));
    c.observe(at(5), &sent(1, &[0]));
    c.observe(at(5), &assigned(1, &[0]));
    c.observe(at(6), &processed(0));
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    c.observe(at(7), &revoked(0, &[0]));
    c.observe(at(8), &processed(0));
    let inv = c.finish();
    assert_eq!(kinds(&inv), [(8, "processed_after_revoke")]);
    assert_eq!(
        inv.zombie_processing.len(),
        1,
        "{:?}",
        inv.zombie_processing
    );

    let mut c = checks();
    c.observe(at(1), &sent(0, &[0, 1]));
    c.observe(at(1), &assigned(0, &[0, 1]));
    c.observe(at(2), &processed(0));
    c.observe(at(3), &reported(0, &[1]));
    c.observe(at(4), &reported(0, &[0, 1]));
    c.observe(at(5), &sent(0, &[1]));
    c.observe(at(6), &assigned(1, &[0]));
    assert_eq!(kinds(&c.finish()), [(6, "double_ownership")]);
}

/// KIP-848 (fuzz --cluster-faults seed 6507884): t-0 was sent to c1 again after c1 had
/// revoked it; c1's report, before its callback took it (the reconciliation waited behind a
/// synchronous commit), left it out with t-0 out of c1's new target, so the coordinator freed
/// it. c1 takes it afterwards and reports it, which does not take it back: c2's take makes c1
/// a zombie holder. While c1's target still held t-0 at that report, the coordinator had to
/// wait for c1's revocation: then c2's take is a second owner.
#[test]
fn a_partition_freed_before_its_member_took_it_is_a_zombies_hold_once_handed_on() {
    let processed = Fact::Processed {
        member: 0,
        partition: 0,
        from: 0,
        to: 1,
    };
    // c1 took t-0, revoked it, and is sent it again; its report leaves it out.
    let sent_again = |c: &mut Checks| {
        c.observe(at(1), &sent(0, &[0]));
        c.observe(at(1), &assigned(0, &[0]));
        c.observe(at(2), &revoked(0, &[0]));
        c.observe(at(2), &reported(0, &[]));
        c.observe(at(2), &sent(0, &[]));
        c.observe(at(3), &sent(0, &[0]));
        c.observe(at(4), &reported(0, &[]));
    };
    let mut c = checks();
    sent_again(&mut c);
    c.observe(at(4), &sent(0, &[]));
    c.observe(at(5), &assigned(0, &[0]));
    c.observe(at(6), &reported(0, &[0]));
    c.observe(at(7), &sent(1, &[0]));
    c.observe(at(7), &assigned(1, &[0]));
    c.observe(at(8), &processed);
    let inv = c.finish();
    assert!(inv.violations.is_empty(), "{:?}", inv.violations);
    assert_eq!(inv.zombie_processing.len(), 1);

    let mut c = checks();
    sent_again(&mut c);
    c.observe(at(5), &assigned(0, &[0]));
    c.observe(at(6), &reported(0, &[0]));
    c.observe(at(6), &sent(0, &[]));
    c.observe(at(7), &sent(1, &[0]));
    c.observe(at(7), &assigned(1, &[0]));
    assert!(kinds(&c.finish()).contains(&(7, "double_ownership")));
}

/// KIP-848: a heartbeat that left out partitions sent to the member, before its assign
/// callback took them, let the coordinator free them on its word and hand them on
/// (`CurrentAssignmentBuilder.ownsRevokedPartitions`); the callback completes afterwards
/// (`revokeAndAssign` does not abort for a newer epoch): the late taker's claim is a zombie's,
/// not a second owner. A member that took a partition, gave it up and takes it again without
/// being sent it is one.
#[test]
fn a_partition_freed_on_its_members_word_before_it_took_it_is_a_zombies_claim() {
    let mut c = checks();
    c.observe(at(1), &sent(0, &[0, 1]));
    c.observe(at(2), &assigned(0, &[1]));
    // c1 reports t-1 (taken) but not t-0 (its callback has not run yet).
    c.observe(at(3), &reported(0, &[1]));
    c.observe(at(4), &sent(1, &[0]));
    c.observe(at(4), &assigned(1, &[0]));
    c.observe(at(5), &assigned(0, &[0]));
    let processed = |member| Fact::Processed {
        member,
        partition: 0,
        from: 0,
        to: 1,
    };
    c.observe(at(6), &processed(1));
    c.observe(at(6), &processed(0));
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    // t-1: c1 took it, gave it up (its report left it out then) and c2 was sent it; c1 taking
    // it again without an answer giving it is a second owner.
    c.observe(at(7), &revoked(0, &[1]));
    c.observe(at(8), &reported(0, &[]));
    c.observe(at(9), &sent(1, &[0, 1]));
    c.observe(at(9), &assigned(1, &[1]));
    c.observe(at(10), &assigned(0, &[1]));
    let inv = c.finish();
    assert_eq!(kinds(&inv), [(10, "double_ownership")]);
    assert_eq!(inv.zombie_processing.len(), 1);
    assert_eq!(inv.zombie_processing[0].member, "c1");
}

/// KIP-848 (fuzz --cluster-faults seed 11643602): the coordinator freed t-0 on c1's word (its
/// report, sent before its assign callback took t-0, left it out), moved c1 to a new epoch
/// without it and gave it to c2. c1, holding it as a zombie, commits its position of t-0 at
/// that current epoch after a batch, which the coordinator writes whatever it names
/// (KIP-1251 checks partitions at an older epoch only); under a latency spike that commit
/// lands after c2's own, lower. Kafka's own regression, not the model's: no violation, even
/// once c1 has revoked t-0 (the commit was on the wire). The owner going below its own commit
/// still is one, and so is c1's commit once it has left the group (fenced: the model's bug).
#[test]
fn a_commit_by_a_zombie_freed_on_its_own_word_may_go_below_the_owners() {
    let commit = |member, offset| Fact::OffsetCommitted {
        member,
        partition: 0,
        offset,
    };
    // c1 may have processed t-0 before c2 takes it (then it holds it on as a zombie) or not.
    let freed_and_handed_on = |c: &mut Checks, c1_processed: bool| {
        c.observe(at(1), &sent(0, &[0, 1]));
        c.observe(at(2), &reported(0, &[1]));
        c.observe(at(2), &sent(0, &[1]));
        c.observe(at(3), &assigned(0, &[0]));
        if c1_processed {
            c.observe(at(3), &processed(0, 0, 94, 95));
        }
        c.observe(at(4), &sent(1, &[0]));
        c.observe(at(4), &assigned(1, &[0]));
        c.observe(at(5), &commit(1, 99));
    };
    for c1_processed in [false, true] {
        let mut c = checks();
        freed_and_handed_on(&mut c, c1_processed);
        c.observe(at(6), &commit(0, 95));
        c.observe(at(7), &revoked(0, &[0]));
        c.observe(at(8), &commit(0, 94));
        // c2's next commit of its own position is not below a zombie's either.
        c.observe(at(9), &commit(1, 100));
        assert!(c.violations.is_empty(), "{:?}", c.violations);
        // The owner below its own commit still is a regression.
        c.observe(at(10), &commit(1, 98));
        assert_eq!(kinds(&c.finish()), [(10, "offset_regression")]);
    }

    let mut c = checks();
    freed_and_handed_on(&mut c, true);
    c.observe(at(6), &removed(0, "a"));
    c.observe(at(7), &commit(0, 95));
    assert_eq!(kinds(&c.finish()), [(7, "offset_regression")]);
}

/// KIP-848 keeps the member id across a rejoin: a leave the coordinator reads just before the
/// member's rejoin heartbeat removes it, and the answer to the rejoin gives it partitions its
/// process never stopped holding. Its client runs no callback for them; they are its own
/// again from that answer.
#[test]
fn partitions_held_through_a_removal_are_owned_again_once_the_next_membership_is_sent_them() {
    let mut c = checks();
    c.observe(at(1), &added(0, "a"));
    c.observe(at(1), &sent(0, &[0, 1]));
    c.observe(at(1), &assigned(0, &[0, 1]));
    c.observe(at(2), &removed(0, "a"));
    c.observe(at(2), &added(0, "a"));
    c.observe(at(2), &sent(0, &[0]));
    let processed = |partition| Fact::Processed {
        member: 0,
        partition,
        from: 0,
        to: 1,
    };
    c.observe(at(3), &processed(0));
    c.observe(at(3), &processed(1));
    // t-0 is c1's again: a second owner is one; t-1 was not given back, so c2 may take it.
    c.observe(at(4), &assigned(1, &[0, 1]));
    let inv = c.finish();
    assert_eq!(kinds(&inv), [(4, "double_ownership")]);
    let zombies: Vec<&str> = inv
        .zombie_processing
        .iter()
        .map(|z| z.partition.as_str())
        .collect();
    assert_eq!(zombies, ["t-1"]);
}

/// fuzz --cluster-faults seed 14071271: c3's JoinGroup, sent just before its process left, is
/// held by a latency spike past its restart. The coordinator adds the new process's id, then
/// the old one's (a second member, no process behind it), and the old process's LeaveGroup
/// removes that. Neither is the running process's: what its next generation gives it is its
/// own, and processing it is no processing after its own revoke.
#[test]
fn an_earlier_process_late_add_and_its_removal_leave_the_running_process_in_the_group() {
    let mut c = checks();
    c.observe(at(1), &added_by(0, 1, "new"));
    c.observe(at(2), &assigned(0, &[0]));
    c.observe(at(3), &added_by(0, 0, "old"));
    c.observe(at(4), &removed(0, "old"));
    // An eager rebalance: everything revoked, then given back.
    c.observe(at(5), &revoked(0, &[0]));
    c.observe(at(6), &assigned(0, &[0]));
    c.observe(at(7), &processed(0, 0, 0, 3));
    let inv = c.finish();
    assert!(inv.violations.is_empty(), "{:?}", inv.violations);
    assert!(inv.zombie_processing.is_empty());
}

/// The online upgrade records each classic member as owning its last classic assignment,
/// applied or not (`ConsumerGroup.fromClassicGroup`). A member that still holds what that
/// assignment moved away (its SyncGroup answer not yet read) and sees it handed on is Kafka's
/// own double ownership: reported, with why, and counted. One the record still gives it, a
/// downgrade's record, or a partition revoked first, is not that.
#[test]
fn a_partition_the_upgrade_recorded_away_from_its_holder_is_kafkas_double_ownership() {
    let converted = |to_consumer, recorded: &[usize]| Fact::GroupConverted {
        to_consumer,
        by: Some(1),
        replaced: false,
        epoch: 2,
        members: vec![0],
        assignments: vec![recorded.to_vec()],
    };
    // Generation 2 moved t-0 away from c1, which has not applied it yet; or a reset rebalance
    // emptied every stored assignment.
    for recorded in [&[1][..], &[]] {
        let mut c = checks();
        c.observe(at(1), &assigned(0, &[0, 1]));
        c.observe(at(2), &converted(true, recorded));
        c.observe(at(3), &assigned(1, &[0]));
        let inv = c.finish();
        assert_eq!(kinds(&inv), [(3, "double_ownership")]);
        assert_eq!(
            inv.violations[0].detail,
            format!(
                "t-0 owned by c1 and c2 (c1 still held it outside its recorded assignment: {UPGRADE_BEFORE_SYNC})"
            )
        );
        assert!(inv.covered.contains(&"upgrade_double_owned".to_string()));
        // Kafka's own, told by the verdict's field.
        assert_eq!(
            kafkas_own::Exempt::of_violation(&inv.violations[0].verdict),
            Some(kafkas_own::Exempt::UpgradeBeforeSync)
        );
    }
    // What the record still gives c1, or a downgrade's record: a plain second owner.
    for (to_consumer, recorded) in [(true, &[0, 1][..]), (false, &[1][..])] {
        let mut c = checks();
        c.observe(at(1), &assigned(0, &[0, 1]));
        c.observe(at(2), &converted(to_consumer, recorded));
        c.observe(at(3), &assigned(1, &[0]));
        let inv = c.finish();
        assert_eq!(inv.violations[0].detail, "t-0 owned by c1 and c2");
        assert!(!inv.covered.contains(&"upgrade_double_owned".to_string()));
        assert_eq!(
            kafkas_own::Exempt::of_violation(&inv.violations[0].verdict),
            None
        );
    }
    // Revoked before it moved on: a clean hand-over; taken back and moved on again later, a
    // plain second owner (the upgrade's record is spent).
    let mut c = checks();
    c.observe(at(1), &assigned(0, &[0, 1]));
    c.observe(at(2), &converted(true, &[1]));
    c.observe(at(3), &revoked(0, &[0]));
    c.observe(at(4), &assigned(1, &[0]));
    assert!(c.violations.is_empty());
    c.observe(at(5), &revoked(1, &[0]));
    c.observe(at(6), &assigned(0, &[0]));
    c.observe(at(7), &assigned(1, &[0]));
    let inv = c.finish();
    assert_eq!(kinds(&inv), [(7, "double_ownership")]);
    assert_eq!(inv.violations[0].detail, "t-0 owned by c1 and c2");
}

/// c2 refuses the assignment naming t-1 in generations 4 to 6 (a topic it does not subscribe
/// to): the group is not settled by the bound, and the verdict carries the loop, which is
/// Kafka's own; a single refusal is no loop.
#[test]
fn a_refusal_generation_after_generation_is_kafkas_own_loop() {
    let refused = |generation| Fact::AssignmentRefused {
        member: 1,
        generation,
        partitions: vec![1],
    };
    let verdict_after = |generations: &[i32]| {
        let mut c = checks();
        for &g in generations {
            c.observe(at(60), &refused(g));
        }
        c.observe(at(70), &group("PreparingRebalance", 7, false, false));
        c.settle_bound(at(100));
        c.finish().violations.remove(0).verdict
    };
    let looping = verdict_after(&[4, 5, 6]);
    let Verdict::NotSettled(n) = &looping else {
        panic!("{looping:?}")
    };
    assert_eq!(
        n.refused_again,
        [RefusedAgain {
            member: "c2".into(),
            first: 4,
            last: 6,
            partitions: vec!["t-1".into()],
        }]
    );
    assert_eq!(
        kafkas_own::Exempt::of_violation(&looping),
        Some(kafkas_own::Exempt::RefusedAgain)
    );
    assert_eq!(kafkas_own::Exempt::of_violation(&verdict_after(&[4])), None);
}
