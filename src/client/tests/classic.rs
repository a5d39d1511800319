//! The classic membership (`ConsumerCoordinator`, its heartbeat thread) driven alone: JoinGroup
//! and SyncGroup, EAGER and COOPERATIVE revocation, `onJoinPrepare`'s commit, heartbeats and
//! their backoff, poll timeouts, closing, commit errors, the coordinator lost.

use super::*;
use crate::messages::{
    HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, OffsetCommitRequest,
    SyncGroupRequest,
};

#[test]
fn a_member_blocked_in_poll_handles_a_heartbeat_answer_at_once_and_rejoins_in_the_same_loop() {
    // No records: the member owns partitions but has nothing to process, so it is blocked in
    // the network client's poll and handles the answer as it arrives (CLIENT.md).
    let mut h = Harness::new("assignors = [\"range\"]", "");
    join_group(&mut h);
    // Enabled when the JoinGroup response was handled (20 ms): every 3000 ms from then.
    h.run_until(3019);
    assert!(h.take_sent().is_empty());
    h.run_until(3020);
    let sent = h.take_sent();
    assert!(
        matches!(
            &sent[..],
            [Request::Heartbeat(HeartbeatRequest { generation: 1, .. })]
        ),
        "{sent:?}"
    );
    h.respond(3025, heartbeat_answer(ErrorCode::RebalanceInProgress));
    assert!(h
        .pending_one_shot(|t| matches!(t, ClientTimer::HeartbeatRead))
        .is_none());
    // onJoinPrepare commits synchronously first (auto-commit), in the same iteration.
    let commit_at = commit_on_join_prepare(&mut h);
    assert_eq!(commit_at, 3025);
    // EAGER then revokes everything, and the JoinGroup carries no owned partitions.
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup(_)))
        .expect("rejoined");
    let (id, subscription, _) = join_subscription(join);
    assert_eq!(id, ID);
    assert!(subscription.owned.is_empty());
    assert_eq!(subscription.previous_assignment, vec![0, 1, 2, 3]);
    assert!(h.facts.contains(&Fact::Revoked {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
}

#[test]
fn a_busy_member_reads_a_heartbeat_answer_on_the_threads_next_pass_and_acts_at_its_next_poll() {
    // 5 ms a record against 400 records/s: always a batch in progress.
    let mut h = Harness::new(
        "assignors = [\"range\"]\nrecord_processing_us = 5000",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 400\n",
    );
    join_group(&mut h);
    hear_rebalance_in_progress(&mut h);
    // Read on the thread's next pass: every retry_backoff_ms (100) from the send.
    let read_at = h.pending_one_shot(|t| matches!(t, ClientTimer::HeartbeatRead));
    assert_eq!(read_at, Some(3120));
    assert!(!h.consumer.is_rebalancing());
    h.run_until(3120);
    assert!(h.consumer.is_rebalancing(), "rejoin needed");
    // Nothing is sent before the batch in progress ends and poll() runs.
    let sent = h.take_sent();
    assert!(
        !sent
            .iter()
            .any(|r| matches!(r, Request::OffsetCommit(_) | Request::JoinGroup(_))),
        "{sent:?}"
    );
}

#[test]
fn a_rebalance_in_progress_read_after_the_member_rejoined_is_ignored() {
    let mut h = Harness::new("assignors = [\"range\"]", "");
    join_group(&mut h);
    // The member rejoins for another reason before the answer comes (a subscription change).
    rejoin_on_subscription_change(&mut h);
    let sent = h.take_sent();
    assert!(
        sent.iter().any(|r| matches!(r, Request::JoinGroup(_))),
        "{sent:?}"
    );
    // The heartbeat sent in generation 1 is answered REBALANCE_IN_PROGRESS while it is
    // PREPARING_REBALANCE: Kafka ignores it (no second rejoin, nothing reset).
    h.respond(3040, heartbeat_answer(ErrorCode::RebalanceInProgress));
    h.respond(3045, join_ok(2, false, Subscription::default_for_test()));
    h.respond(3050, sync_ok(vec![0, 1, 2, 3]));
    h.run_until(3100);
    assert!(!h.consumer.is_rebalancing(), "settled in generation 2");
    // A stale UNKNOWN_MEMBER_ID for a heartbeat of generation 1 is ignored too.
    h.call(|c, env| {
        c.classic().heartbeats_in_flight.push_back(1);
        c.on_response(env, ME, heartbeat_answer(ErrorCode::UnknownMemberId))
    });
    assert_eq!(h.consumer.classic_ref().generation, Some(2));
    assert_eq!(h.consumer.membership.member_id(), ID);
}

/// One JoinGroup at a time (`joinFuture`): a heartbeat sent in generation 1 is answered
/// UNKNOWN_MEMBER_ID after the member's JoinGroup went out. Kafka resets the membership but
/// sends no second JoinGroup until the first is answered; that answer is then dropped and the
/// next poll joins anew, with no member id. (fuzz --cluster-faults seed 202545: two JoinGroups
/// in flight made two member ids for one consumer.)
#[test]
fn a_membership_reset_while_a_join_group_is_out_waits_for_its_answer() {
    let mut h = Harness::new("assignors = [\"range\"]", "");
    join_group(&mut h);
    rejoin_on_subscription_change(&mut h);
    let joins = |sent: &[Request]| -> Vec<String> {
        sent.iter()
            .filter_map(|r| match r {
                Request::JoinGroup(JoinGroupRequest { member_id, .. }) => Some(member_id.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(joins(&h.take_sent()), [ID]);
    h.respond(3040, heartbeat_answer(ErrorCode::UnknownMemberId));
    h.run_until(4000);
    assert_eq!(
        joins(&h.take_sent()),
        Vec::<String>::new(),
        "the first is still out"
    );
    h.respond(
        4000,
        JoinGroupResponse::error(ErrorCode::UnknownMemberId, ""),
    );
    h.run_until(4100);
    assert_eq!(joins(&h.take_sent()), [""], "then one, anew");
}

#[test]
fn heartbeats_go_on_during_on_join_prepare_until_the_join_group_is_sent() {
    // A 5 s onPartitionsRevoked: the heartbeat due at 3020 still goes out.
    let mut h = Harness::new(
        "assignors = [\"range\"]\non_partitions_revoked_ms = 5000\nenable_auto_commit = false",
        "",
    );
    join_group(&mut h);
    h.run_until(1000);
    h.take_sent();
    h.call(|c, env| c.subscribe(env, vec!["orders".into()]));
    h.run_until(3020);
    let sent = h.take_sent();
    assert!(
        matches!(
            &sent[..],
            [Request::Heartbeat(HeartbeatRequest { generation: 1, .. })]
        ),
        "the heartbeat thread is still enabled: {sent:?}"
    );
    h.run_until(6001);
    let sent = h.take_sent();
    assert!(
        sent.iter().any(|r| matches!(r, Request::JoinGroup(_))),
        "{sent:?}"
    );
    // Once the JoinGroup is out, no heartbeat until its answer.
    h.run_until(9100);
    assert!(h.take_sent().is_empty());
}

#[test]
fn a_cooperative_member_revokes_only_what_it_lost_and_rejoins_for_the_follow_up() {
    let mut h = Harness::new("assignors = [\"cooperative-sticky\"]", "");
    join_group(&mut h);
    rejoin_on_rebalance_in_progress(&mut h);
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup(_)))
        .unwrap();
    // COOPERATIVE keeps its partitions and says so.
    assert_eq!(join_subscription(join).1.owned, vec![0, 1, 2, 3]);
    assert!(!h.facts.iter().any(|f| matches!(f, Fact::Revoked { .. })));
    let rejoined_at = h.now.as_millis();
    h.respond(
        rejoined_at + 10,
        join_ok(2, false, Subscription::default_for_test()),
    );
    h.take_sent();
    h.respond(rejoined_at + 20, sync_ok(vec![0, 1]));
    assert!(h.facts.contains(&Fact::Revoked {
        member: 0,
        partitions: vec![2, 3]
    }));
    // It gave something up: it rejoins at its next poll for the follow-up (after
    // onJoinPrepare's commit), owning what it kept.
    commit_on_join_prepare(&mut h);
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup(_)))
        .expect("follow-up JoinGroup");
    let (_, subscription, reason) = join_subscription(join);
    assert_eq!(reason, JoinReason::FollowUp);
    assert_eq!(subscription.owned, vec![0, 1]);
    assert_eq!(subscription.generation, Some(2));
}

/// `generationIfStable`: a cooperative member goes on processing while its JoinGroup and then
/// its SyncGroup are unanswered (the join does not block `poll()`, after onJoinPrepare's
/// commit too), but Kafka fails its commits there before sending them
/// (RebalanceInProgressException); the first auto-commit after the SyncGroup answer goes out
/// in the new generation. Found by `cgsim fuzz --cluster-faults` (seed 182318): a static
/// member's commit sent between its JoinGroup and SyncGroup answers landed below its
/// successor's.
#[test]
fn a_member_commits_nothing_while_its_join_group_or_sync_group_is_unanswered() {
    let mut h = Harness::new(
        "assignors = [\"cooperative-sticky\"]\nauto_commit_interval_ms = 200",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 200",
    );
    join_group(&mut h);
    rejoin_on_rebalance_in_progress(&mut h);
    let joined_at = h.now.as_millis();
    let processed_before = h.facts.len();
    h.run_until(joined_at + 1000);
    // The poll that sent the JoinGroup after onJoinPrepare's commit went on fetching.
    assert!(h.facts[processed_before..]
        .iter()
        .any(|f| matches!(f, Fact::Processed { .. })));
    h.respond(
        joined_at + 1000,
        join_ok(2, false, Subscription::default_for_test()),
    );
    h.run_until(joined_at + 2000);
    let sent = h.take_sent();
    assert!(
        sent.iter().any(|r| matches!(r, Request::JoinGroup(_))),
        "{sent:?}"
    );
    assert!(sent.iter().any(|r| matches!(r, Request::SyncGroup(_))));
    assert_eq!(commit_generations(&sent), Vec::<i32>::new(), "{sent:?}");
    // It processed through both waits: the commits were due, not idle.
    assert!(h.facts[processed_before..]
        .iter()
        .any(|f| matches!(f, Fact::Processed { .. })));
    h.respond(joined_at + 2000, sync_ok(vec![0, 1, 2, 3]));
    h.run_until(joined_at + 2300);
    assert_eq!(commit_generations(&h.take_sent()), vec![2]);
}

#[test]
fn closing_commits_revokes_everything_and_leaves() {
    let mut h = closing_at_2000();
    h.run_until(2100);
    let sent = h.take_sent();
    // close(): a synchronous auto-commit first; the poll loop waits for its answer.
    let Some(Request::OffsetCommit(OffsetCommitRequest { offsets, .. })) = sent.last() else {
        panic!("{sent:?}")
    };
    assert_eq!(offsets.len(), 4);
    assert!(!h
        .facts
        .iter()
        .any(|f| matches!(f, Fact::RevokedOnClose { .. })));
    h.respond(2110, commit_answer(ErrorCode::None));
    assert!(h.facts.contains(&Fact::RevokedOnClose {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
    let sent = h.take_sent();
    assert!(
        matches!(&sent[..], [Request::LeaveGroup(LeaveGroupRequest { members, .. })]
            if members[..] == [LeavingMember { member_id: ID.into(), group_instance_id: None, reason: LeaveReason::Close }]),
        "{sent:?}"
    );
    assert!(h.facts.contains(&Fact::ProcessStopped { member: 0 }));
    // A closed consumer sends nothing more.
    h.run_until(60_000);
    assert!(h.take_sent().is_empty());
}

#[test]
fn a_stall_past_the_poll_interval_makes_the_heartbeat_thread_leave_and_the_partitions_are_lost() {
    // A batch is in progress (1 ms a record); the stall holds it for 20 s.
    let mut h = classic_member_stalled_past_its_poll_interval("range", "");
    // The heartbeat thread notices on its first pass after the last poll + 10 s.
    h.run_until(12_500);
    let sent = h.take_sent();
    let leave = sent.iter().position(|r| {
        matches!(
            r,
            Request::LeaveGroup(LeaveGroupRequest { members, .. })
                if members[0].reason == LeaveReason::PollTimeout
        )
    });
    assert!(leave.is_some(), "{sent:?}");
    // The application thread is still stuck: nothing is lost yet.
    assert!(!h.facts.iter().any(|f| matches!(f, Fact::Lost { .. })));
    h.run_until(25_000);
    assert!(h.facts.contains(&Fact::Lost {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
    // It rejoins as a new member (the generation and member id were reset).
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup(_)))
        .expect("rejoins");
    assert_eq!(join_subscription(join).0, "");
}

#[test]
fn a_static_member_past_its_poll_interval_sends_no_leave_group_and_rejoins_with_its_instance() {
    let mut h =
        classic_member_stalled_past_its_poll_interval("range", "group_instance_id = \"pod-1\"\n");
    h.run_until(25_000);
    let sent = h.take_sent();
    assert!(
        !sent.iter().any(|r| matches!(r, Request::LeaveGroup(_))),
        "{sent:?}"
    );
    // Its generation and member id were reset: it joins again with no id and its instance id,
    // which the coordinator answers as a static replacement.
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup(_)))
        .expect("rejoins");
    let Request::JoinGroup(JoinGroupRequest {
        member_id,
        group_instance_id,
        ..
    }) = join
    else {
        unreachable!()
    };
    assert_eq!(
        (member_id.as_str(), group_instance_id.as_deref()),
        ("", Some("pod-1"))
    );
}

#[test]
fn close_during_on_join_prepares_commit_closes_instead_of_rejoining() {
    // close()'s wakeup() ends the poll inside onJoinPrepare: ConsumerCoordinator
    // .maybeAutoCommitOffsetsSync rethrows the WakeupException, so no JoinGroup is sent and
    // close() goes on (its own commit, the revoke, the LeaveGroup).
    let mut h = Harness::new("assignors = [\"range\"]", "");
    join_group(&mut h);
    hear_rebalance_in_progress(&mut h);
    let mut t = 3025;
    while !h
        .sent
        .iter()
        .any(|(_, r)| matches!(r, Request::OffsetCommit(_)))
    {
        t += 1;
        assert!(t < 4000, "no onJoinPrepare commit: {:?}", h.sent);
        h.run_until(t);
    }
    h.take_sent();
    h.call(|c, env| c.close(env));
    h.respond(t + 5, commit_answer(ErrorCode::None));
    let sent = h.take_sent();
    assert!(
        !sent.iter().any(|r| matches!(r, Request::JoinGroup(_))),
        "{sent:?}"
    );
    assert!(
        matches!(sent.last(), Some(Request::OffsetCommit(_))),
        "{sent:?}"
    );
    h.respond(t + 10, commit_answer(ErrorCode::None));
    let sent = h.take_sent();
    assert!(matches!(&sent[..], [Request::LeaveGroup(_)]), "{sent:?}");
    assert!(h.facts.contains(&Fact::ProcessStopped { member: 0 }));
}

#[test]
fn a_returning_static_leader_that_skips_the_assignment_still_watches_the_metadata() {
    // KIP-814: ConsumerCoordinator.onLeaderElected with skipAssignment sets
    // `assignmentSnapshot = metadataSnapshot` before it returns no assignment, so a partition
    // count change after that makes rejoinNeededOrPending rejoin.
    let mut h = Harness::new(
        "assignors = [\"range\"]\nmetadata_max_age_ms = 5000",
        "group_instance_id = \"pod-1\"\n\n[[timeline]]\nat_ms = 10000\naction = \"add_partitions\"\ntopic = \"orders\"\npartitions = 6\n",
    );
    start_and_find_the_coordinator(&mut h);
    let sent = h.take_sent();
    let (id, subscription, _) = join_subscription(&sent[0]);
    assert_eq!(id, "", "a static member joins with its instance id alone");
    let mut answer = join_ok(1, true, subscription.clone());
    if let Response::JoinGroup(JoinGroupResponse {
        skip_assignment, ..
    }) = &mut answer
    {
        *skip_assignment = true;
    }
    h.respond(10, answer);
    let sent = h.take_sent();
    assert!(
        matches!(
            &sent[..],
            [Request::SyncGroup(SyncGroupRequest {
                assignments: None,
                ..
            })]
        ),
        "a skipped assignment sends none: {sent:?}"
    );
    assert!(h.facts.contains(&Fact::LeaderElected {
        member: 0,
        skip_assignment: true,
        partition_counts: vec![4],
    }));
    h.respond(20, sync_ok(vec![0, 1, 2, 3]));
    h.respond(30, nothing_committed(4));
    h.run_until(9000);
    assert!(!h
        .take_sent()
        .iter()
        .any(|r| matches!(r, Request::JoinGroup(_))));
    h.run_until(9500);
    h.take_sent();
    // The refresh at 10 s sees 6 partitions; onJoinPrepare commits, then the JoinGroup.
    commit_on_join_prepare(&mut h);
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup(_)))
        .unwrap_or_else(|| {
            panic!(
                "the leader sees t0 grow and rejoins: {sent:?} {:?}",
                h.facts
            )
        });
    assert_eq!(join_subscription(join).2, JoinReason::Metadata);
}

#[test]
fn a_sync_group_error_read_in_a_poll_loses_the_partitions_before_the_one_rejoin() {
    // SyncGroup UNKNOWN_MEMBER_ID: the member resets its generation and member id and rejoins
    // once, its partitions lost first (onJoinPrepare); not a JoinGroup in this poll and a
    // second one in the next (two member ids for one consumer).
    let mut h = Harness::new("assignors = [\"cooperative-sticky\"]", "");
    join_group(&mut h);
    rejoin_on_rebalance_in_progress(&mut h);
    h.take_sent();
    let t = h.now.as_millis();
    h.respond(t + 10, join_ok(2, false, Subscription::default_for_test()));
    h.take_sent();
    h.respond(t + 20, sync_answer(ErrorCode::UnknownMemberId, None));
    h.run_until(t + 2000);
    let joins: Vec<&str> = h
        .take_sent()
        .iter()
        .filter(|r| matches!(r, Request::JoinGroup(_)))
        .map(|r| join_subscription(r).0)
        .map(|id| if id.is_empty() { "" } else { "id" })
        .collect();
    assert_eq!(joins, [""], "one JoinGroup, with no member id");
    assert!(h.facts.contains(&Fact::Lost {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
}

/// A JoinGroup answered UNKNOWN_MEMBER_ID (the coordinator removed the member, e.g. past its
/// rebalance timeout while it was stalled): `resetStateOnResponseError` sets `needsJoinPrepare`,
/// so onJoinPrepare runs again with NO_GENERATION and the partitions still held are lost before
/// the one JoinGroup that follows, which claims none (AbstractCoordinator.joinGroupIfNeeded,
/// ConsumerCoordinator.onJoinPrepare). Keeping them silently made a later assignment of the same
/// partitions look like no change, with no onPartitionsAssigned (fuzz seed 6741).
#[test]
fn a_join_group_unknown_member_id_loses_the_partitions_before_joining_anew() {
    let mut h = Harness::new("assignors = [\"cooperative-sticky\"]", "");
    join_group(&mut h);
    rejoin_on_rebalance_in_progress(&mut h);
    let sent = h.take_sent();
    let (id, subscription, _) = join_subscription(&sent[0]);
    assert_eq!(id, ID);
    assert_eq!(
        subscription.owned,
        vec![0, 1, 2, 3],
        "cooperative: it keeps what it owns"
    );
    let t = h.now.as_millis();
    h.respond(
        t + 10,
        JoinGroupResponse::error(ErrorCode::UnknownMemberId, ""),
    );
    h.run_until(t + 2000);
    assert!(h.facts.contains(&Fact::Lost {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
    let joins: Vec<(String, Vec<usize>)> = h
        .take_sent()
        .iter()
        .filter(|r| matches!(r, Request::JoinGroup(_)))
        .map(|r| {
            let (id, subscription, _) = join_subscription(r);
            (id.to_string(), subscription.owned.clone())
        })
        .collect();
    assert_eq!(
        joins,
        [(String::new(), Vec::new())],
        "one JoinGroup, with no member id and nothing owned"
    );
}

#[test]
fn a_heartbeat_thread_with_no_answer_for_a_session_gives_up_on_the_coordinator() {
    // AbstractCoordinator.HeartbeatThread: "session timed out without receiving a heartbeat
    // response" marks the coordinator unknown and disconnects, so what was in flight to it
    // fails and goes out again once FindCoordinator names one.
    let group = "assignors = [\"range\"]\nsession_timeout_ms = 10000";
    let mut h = Harness::new(group, "");
    join_group(&mut h);
    // Enabled at 20 ms: the session timer runs to 10,020 unless a heartbeat is answered.
    h.run_until(10_019);
    let heartbeats = h
        .take_sent()
        .iter()
        .filter(|r| matches!(r, Request::Heartbeat(_)))
        .count();
    assert_eq!(heartbeats, 3, "at 3020, 6020 and 9020, none answered");
    assert!(h.disconnects.is_empty());
    assert_eq!(h.consumer.coordinator(), Some(0));
    h.run_until(10_020);
    assert_eq!(h.disconnects, [(SimTime::from_millis(10_020), 0)]);
    assert_eq!(h.consumer.coordinator(), None);
    assert!(h
        .facts
        .iter()
        .any(|f| matches!(f, Fact::CoordinatorUnknown { member: 0, .. })));

    // Answered heartbeats restart the timer: no check is even armed, nothing closes.
    let mut h = Harness::new(group, "");
    join_group(&mut h);
    for t in [3020, 6020, 9020, 12_020, 15_020, 18_020] {
        h.respond(t + 3, heartbeat_answer(ErrorCode::None));
    }
    // Up to the last heartbeat answered + the session (28,023), a check is never armed.
    h.run_until(27_000);
    let check = ClientTimer::SessionCheck.key().unwrap();
    assert!(h.keyed[check].is_none());
    assert!(h.disconnects.is_empty());
    assert_eq!(h.consumer.coordinator(), Some(0));
}

/// COOPERATIVE `onJoinPrepare` commits asynchronously (ConsumerCoordinator.onJoinPrepare,
/// KAFKA-13310): the poll that sent the commit goes on fetching and returns a batch, and the
/// JoinGroup goes out at the first poll after the answer, here the end of the batch that was
/// in progress when it came, not at the answer.
#[test]
fn a_busy_cooperative_member_joins_at_its_first_poll_after_on_join_prepares_commit_is_answered() {
    let mut h = busy_cooperative_member();
    join_group(&mut h);
    hear_rebalance_in_progress(&mut h);
    let sent_at = join_prepare_commit_sent(&mut h);
    let processed = h.facts.len();
    let answer = sent_at + 5;
    h.respond(answer, commit_answer(ErrorCode::None));
    // The poll that sent the commit returned a batch, still in progress.
    let (batch_end, _, _) = h.keyed[ClientTimer::BatchDone.key().unwrap()]
        .clone()
        .expect("a batch");
    assert!(batch_end.as_millis() >= sent_at + 900, "{batch_end}");
    h.run_until(batch_end.as_millis() - 1);
    assert_eq!(join_group_sent_at(&h), None, "{:?}", h.sent);
    h.run_until(batch_end.as_millis());
    assert_eq!(join_group_sent_at(&h), Some(batch_end.as_millis()));
    assert!(h.facts[processed..]
        .iter()
        .any(|f| matches!(f, Fact::Processed { .. })));
}

/// A cooperative member blocked in poll with nothing to process joins as the answer comes
/// (the network client's poll returns with it).
#[test]
fn an_idle_cooperative_member_joins_as_on_join_prepares_commit_is_answered() {
    let mut h = Harness::new(
        "assignors = [\"cooperative-sticky\"]",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 1",
    );
    join_group(&mut h);
    rejoin_on_rebalance_in_progress(&mut h);
    let answered = h.now.as_millis();
    assert_eq!(join_group_sent_at(&h), Some(answered), "{:?}", h.sent);
}

/// onJoinPrepare's commit failed with a retriable error (NOT_COORDINATOR): the member finds
/// the coordinator, sends the commit again (its future is cleared at the next call, sent at
/// the one after) and joins only after that one is answered.
#[test]
fn on_join_prepares_commit_is_sent_again_after_a_retriable_failure() {
    let mut h = busy_cooperative_member();
    join_group(&mut h);
    hear_rebalance_in_progress(&mut h);
    let sent_at = join_prepare_commit_sent(&mut h);
    commit_fails_until_the_coordinator_is_found(&mut h, sent_at + 5, sent_at + 200);
    let again = join_prepare_commit_sent(&mut h);
    assert!(again > sent_at + 200);
    h.respond(again + 5, commit_answer(ErrorCode::None));
    h.run_until(again + 3000);
    assert!(join_group_sent_at(&h).is_some_and(|at| at > again + 5));
}

/// `joinPrepareTimer`: with no answer within the rebalance timeout (max.poll.interval.ms), the
/// member joins anyway ("joinPrepare timeout. Will continue to join group").
#[test]
fn a_member_joins_without_on_join_prepares_answer_after_the_rebalance_timeout() {
    let mut h = Harness::new(
        "assignors = [\"cooperative-sticky\"]\nmax_poll_interval_ms = 4000",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 1",
    );
    join_group(&mut h);
    hear_rebalance_in_progress(&mut h);
    let sent_at = join_prepare_commit_sent(&mut h);
    h.run_until(sent_at + 3999);
    assert_eq!(join_group_sent_at(&h), None, "{:?}", h.sent);
    h.run_until(sent_at + 4600);
    // The first poll past the timeout (an idle member polls every fetch.max.wait.ms).
    assert!(join_group_sent_at(&h).is_some_and(|at| at >= sent_at + 4000));
}

/// EAGER `onJoinPrepare` commits asynchronously too, with every partition pending revocation
/// (`maybeMarkPartitionsPendingRevocation`): while the commit goes unanswered the member
/// processes nothing, but its poll is still called, so the poll interval does not run out (no
/// LeaveGroup); a rebalance timeout after the first call it revokes everything and joins. The
/// model had blocked the poll loop on the commit, and an unreachable coordinator cost the member
/// its membership at the poll timeout.
#[test]
fn an_eager_member_waiting_for_on_join_prepares_commit_polls_but_processes_nothing() {
    let mut h = Harness::new(
        "assignors = [\"range\"]\nmax_poll_interval_ms = 4000",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 200",
    );
    join_group(&mut h);
    hear_rebalance_in_progress(&mut h);
    let sent_at = join_prepare_commit_sent(&mut h);
    let facts = h.facts.len();
    h.run_until(sent_at + 3999);
    assert_eq!(join_group_sent_at(&h), None, "{:?}", h.sent);
    h.run_until(sent_at + 4600);
    let joined = join_group_sent_at(&h).expect("joins without the answer");
    assert!(joined >= sent_at + 4000, "{joined}");
    let leave = |r: &Request| matches!(r, Request::LeaveGroup(_));
    assert!(!h.sent.iter().any(|(_, r)| leave(r)), "{:?}", h.sent);
    let after = &h.facts[facts..];
    assert!(
        !after
            .iter()
            .any(|f| matches!(f, Fact::Processed { .. } | Fact::PollTimeout { .. })),
        "{after:?}"
    );
    assert!(after.iter().any(|f| matches!(f, Fact::Revoked { .. })));
}

/// `OffsetCommitResponseHandler`: UNKNOWN_MEMBER_ID on a commit resets the generation and the
/// member id (`resetStateOnResponseError`), so the next poll's onJoinPrepare gives everything
/// up as lost and the member joins as a new one; ILLEGAL_GENERATION keeps the member id. Before,
/// the member went on processing until a heartbeat told it the same.
#[test]
fn a_commit_answered_unknown_member_id_or_illegal_generation_loses_the_membership() {
    for (error, member_id) in [
        (ErrorCode::UnknownMemberId, ""),
        (ErrorCode::IllegalGeneration, ID),
    ] {
        let (h, sent) = first_auto_commit_answered(error);
        assert!(h.facts.contains(&Fact::RejoinNeeded {
            member: 0,
            cause: RejoinCause::CommitError(error),
        }));
        assert!(h.facts.contains(&Fact::Lost {
            member: 0,
            partitions: vec![0, 1, 2, 3]
        }));
        let join = sent
            .iter()
            .find(|r| matches!(r, Request::JoinGroup(_)))
            .expect("a JoinGroup");
        let (id, subscription, _) = join_subscription(join);
        assert_eq!(
            (id, subscription.generation),
            (member_id, None),
            "{error:?}"
        );
    }
}

/// REBALANCE_IN_PROGRESS on a commit asks to rejoin (`requestRejoin`), keeping the generation:
/// at its next poll the member runs onJoinPrepare (EAGER: commits, revokes everything) and
/// joins, without waiting for a heartbeat to tell it.
#[test]
fn a_commit_answered_rebalance_in_progress_rejoins() {
    let (mut h, sent) = first_auto_commit_answered(ErrorCode::RebalanceInProgress);
    assert!(h.facts.contains(&Fact::RejoinNeeded {
        member: 0,
        cause: RejoinCause::CommitRebalance,
    }));
    assert_eq!(
        commit_generations(&sent),
        vec![1],
        "onJoinPrepare's: {sent:?}"
    );
    let now = h.now.as_millis();
    h.respond(now, commit_answer(ErrorCode::None));
    assert!(h.facts.contains(&Fact::Revoked {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup(_)))
        .expect("a JoinGroup");
    let (id, subscription, reason) = join_subscription(join);
    assert_eq!((id, subscription.generation), (ID, Some(1)));
    assert_eq!(reason, JoinReason::Rebalance);
}

/// `markCoordinatorUnknown(error)`: a classic consumer answered NOT_COORDINATOR or
/// COORDINATOR_NOT_AVAILABLE disconnects from the coordinator it knew (`disconnectAsync`), so
/// what else is in flight on that connection fails; a request that got no answer (a
/// disconnect, a timeout) finds the connection closed already, and KIP-848's
/// `CoordinatorRequestManager` only forgets the coordinator.
#[test]
fn a_not_coordinator_answer_closes_the_classic_consumers_connection() {
    for (error, closes) in [
        (ErrorCode::NotCoordinator, true),
        (ErrorCode::CoordinatorNotAvailable, true),
        (ErrorCode::Disconnected, false),
    ] {
        let mut h = Harness::new("assignors = [\"range\"]", "");
        join_group(&mut h);
        h.run_until(3020);
        let now = h.now;
        h.respond(3025, failed_answer(RequestKind::Heartbeat, error));
        assert_eq!(h.consumer.coordinator(), None, "{error:?}");
        let expected = if closes {
            vec![(now + Duration::from_millis(5), 0)]
        } else {
            Vec::new()
        };
        assert_eq!(h.disconnects, expected, "{error:?}");
    }
    let mut h = Harness::new("protocol = \"consumer\"", "");
    kip_848_member_given(&mut h, vec![0, 1]);
    assert!(matches!(h.consumer.membership, Membership::Consumer(_)));
    h.respond(
        20,
        failed_answer(
            RequestKind::ConsumerGroupHeartbeat,
            ErrorCode::NotCoordinator,
        ),
    );
    assert_eq!(h.consumer.coordinator(), None);
    assert!(h.disconnects.is_empty());
}

#[test]
fn a_leader_whose_assignor_throws_sends_no_sync_group_and_fails() {
    // `onLeaderElected` turns the assignor's exception into a failed future that is not
    // retriable, so `joinGroupIfNeeded` throws it from poll(): no SyncGroup goes out and the
    // application's loop ends (AbstractCoordinator). Here the group chose an assignor this
    // member does not have.
    let mut h = Harness::new("assignors = [\"range\"]", "");
    start_and_find_the_coordinator(&mut h);
    let sent = h.take_sent();
    let subscription = join_subscription(&sent[0]).1.clone();
    let mut answer = join_ok(1, true, subscription);
    if let Response::JoinGroup(JoinGroupResponse { protocol_name, .. }) = &mut answer {
        *protocol_name = Some("no-such-assignor".into());
    }
    h.respond(10, answer);
    h.run_until(60_000);
    let sent = h.take_sent();
    assert!(
        !sent.iter().any(|r| matches!(
            r,
            Request::SyncGroup(_) | Request::Heartbeat(_) | Request::JoinGroup(_)
        )),
        "{sent:?}"
    );
    assert!(h.facts.contains(&Fact::FatalError {
        member: 0,
        error: FatalError::AssignorFailed,
    }));
    assert!(h
        .facts
        .iter()
        .any(|f| matches!(f, Fact::Crashed { member: 0, .. })));
}

/// COORDINATOR_LOAD_IN_PROGRESS keeps the coordinator (AbstractCoordinator's JoinGroup handler
/// "backoff and retry", `joinGroupIfNeeded` sleeping `retry.backoff.ms` in poll(); the KIP-848
/// heartbeat manager "will backoff and retry"): no FindCoordinator, and what failed goes again
/// to the same broker once the backoff has passed, not before: 100 ms for the JoinGroup, the
/// heartbeat manager's 80..120 ms (`retry.backoff.ms` with a fifth of jitter) for a member past
/// JOINING. A JOINING member sends its heartbeat again at once (`heartbeatNow`).
#[test]
fn a_coordinator_loading_the_group_is_kept_and_asked_again_after_the_backoff() {
    let mut h = Harness::new("assignors = [\"range\"]", "");
    start_and_find_the_coordinator(&mut h);
    let sent = h.take_sent();
    assert!(matches!(&sent[..], [Request::JoinGroup(_)]), "{sent:?}");
    let loading = |request| failed_answer(request, ErrorCode::CoordinatorLoadInProgress);
    h.respond(10, loading(RequestKind::JoinGroup));
    assert_eq!(h.consumer.coordinator(), Some(0));
    h.run_until(109);
    let sent = h.take_sent();
    assert!(sent.is_empty(), "asleep in joinGroupIfNeeded: {sent:?}");
    h.run_until(110);
    let sent = h.take_sent();
    assert!(matches!(&sent[..], [Request::JoinGroup(_)]), "{sent:?}");
    assert!(!h
        .facts
        .iter()
        .any(|f| matches!(f, Fact::CoordinatorUnknown { .. })));

    let mut h = Harness::new("protocol = \"consumer\"", "");
    kip_848_member_given(&mut h, vec![0, 1]);
    h.take_sent();
    h.respond(20, loading(RequestKind::ConsumerGroupHeartbeat));
    assert_eq!(h.consumer.coordinator(), Some(0));
    h.run_until(99);
    let sent = h.take_sent();
    assert!(sent.is_empty(), "{sent:?}");
    h.run_until(140);
    let sent = h.sent_at(|r| matches!(r, Request::ConsumerGroupHeartbeat(_)));
    assert!(
        matches!(sent[..], [t] if (100..140).contains(&t)),
        "{sent:?}"
    );
    assert!(!h
        .facts
        .iter()
        .any(|f| matches!(f, Fact::CoordinatorUnknown { .. })));

    let mut h = Harness::new("protocol = \"consumer\"", "");
    start_and_find_the_coordinator(&mut h);
    let joins = |h: &mut Harness| h.sent_at(|r| matches!(r, Request::ConsumerGroupHeartbeat(_)));
    assert_eq!(joins(&mut h), [0]);
    for at in [3, 7] {
        h.respond(at, loading(RequestKind::ConsumerGroupHeartbeat));
        assert_eq!(joins(&mut h), [at], "JOINING: at once");
    }
}

/// `Heartbeat.failHeartbeat`: after a failed heartbeat the next waits `retry.backoff.ms`,
/// doubled per failure in a row up to `retry.backoff.max.ms`, with a fifth of jitter
/// (KIP-580), sent on the heartbeat thread's first pass (every `retry.backoff.ms` from the
/// failure) after it; an answered heartbeat ends the run of failures.
#[test]
fn a_classic_heartbeat_backs_off_exponentially_after_failures_in_a_row() {
    let mut h = Harness::new("assignors = [\"range\"]", "");
    join_group(&mut h);
    let heartbeats = |h: &mut Harness| h.sent_at(|r| matches!(r, Request::Heartbeat(_)));
    h.run_until(3_100);
    let mut last = heartbeats(&mut h);
    assert_eq!(last.len(), 1, "{last:?}");
    let failed = || failed_answer(RequestKind::Heartbeat, ErrorCode::CoordinatorLoadInProgress);
    // 80..120 ms, 160..240, 320..480, 640..960, then at most the 1 s cap: on the 100 ms passes.
    for passes in [1..=2, 2..=3, 4..=5, 7..=10, 8..=10] {
        let failed_at = last[0] + 5;
        h.respond(failed_at, failed());
        h.run_until(failed_at + 1_100);
        last = heartbeats(&mut h);
        assert_eq!(last.len(), 1, "{last:?}");
        let gap = last[0] - failed_at;
        assert!(
            gap % 100 == 0 && passes.contains(&(gap / 100)),
            "{gap} ms, not {passes:?} passes"
        );
    }
    // Answered: the next failure backs off from the start again.
    h.respond(last[0] + 5, heartbeat_answer(ErrorCode::None));
    h.run_until(last[0] + 3_100);
    last = heartbeats(&mut h);
    h.respond(last[0] + 5, failed());
    h.run_until(last[0] + 300);
    let again = heartbeats(&mut h);
    assert!(
        matches!(again[..], [t] if t - (last[0] + 5) <= 200),
        "{again:?}"
    );
}

/// Kafka's own StickyAssignor never returns on this group (`a` moved from t0 to t1 and missed
/// generation 4): run on it, AbstractStickyAssignor's `performReassignments` hands t0-1 back to
/// `a` (its previous owner, no longer subscribed to t0), swaps that move for t0-2 and passes
/// t0-2 between c and b for good. The leader's poll
/// thread spins in it: no SyncGroup. The heartbeat thread, enabled with the JoinGroup answer,
/// heartbeats on until the poll timer expires (`max.poll.interval.ms` after that answer), then
/// sends the LeaveGroup; the thread in the assignor never gets to close().
#[test]
fn a_leader_whose_assignor_never_returns_heartbeats_until_its_poll_timeout_then_leaves() {
    let mut h = Harness::new(
        "assignors = [\"sticky\"]\nmax_poll_interval_ms = 20000",
        "topics = [\"t0\"]\n\n[[topics]]\nname = \"t0\"\npartitions = 5\n\n\
         [[topics]]\nname = \"t1\"\npartitions = 8",
    );
    start_and_find_the_coordinator(&mut h);
    let sent = h.take_sent();
    let template = join_subscription(&sent[0]).1.clone();
    let (t0, t1) = (
        h.scenario.topic_index("t0").unwrap(),
        h.scenario.topic_index("t1").unwrap(),
    );
    let member = |id: &str, topic: &str, owned: &[(usize, u32)], generation: i32| {
        let previous_assignment = owned
            .iter()
            .map(|&(t, p)| h.partitions.global(t, p))
            .collect();
        JoinedMember {
            member_id: id.into(),
            group_instance_id: None,
            subscription: Subscription {
                topics: vec![topic.into()],
                previous_assignment,
                generation: Some(generation),
                assigned_generation: Some(generation),
                ..template.clone()
            },
        }
    };
    let members = vec![
        member("c", "t0", &[(t0, 1), (t0, 3)], 4),
        member("a", "t1", &[(t0, 1), (t0, 4)], 3),
        member("b", "t0", &[(t0, 0), (t0, 2), (t0, 4)], 4),
        member("d", "t1", &(0..8).map(|p| (t1, p)).collect::<Vec<_>>(), 4),
    ];
    h.respond(10, joined("c", 5, "sticky", "c", members));
    assert!(h.facts.contains(&Fact::FatalError {
        member: 0,
        error: FatalError::AssignorSpins,
    }));
    h.call(|c, env| c.close(env));
    // The poll timer runs from the JoinGroup answer (10 ms): nothing but heartbeats before.
    h.run_until(20_000);
    let sent = h.take_sent();
    assert!(
        sent.iter().all(|r| matches!(r, Request::Heartbeat(_))),
        "{sent:?}"
    );
    assert!(sent.len() >= 5, "{sent:?}");
    h.run_until(40_000);
    let sent = h.take_sent();
    assert!(
        matches!(&sent[..], [Request::LeaveGroup(LeaveGroupRequest { members, .. })]
            if members[0].reason == LeaveReason::PollTimeout),
        "{sent:?}"
    );
    assert!(!h
        .facts
        .iter()
        .any(|f| matches!(f, Fact::Crashed { .. } | Fact::CloseRequested { .. })));
    assert!(!h.consumer.is_running());
}

/// StickyAssignor's userData is its last `onAssignment`: that assignment at that generation,
/// kept through a poll timeout that resets the generation and loses the partitions, and
/// replaced by the next assignment even when it is empty (the model used to send the last
/// revoked set at the member's current generation: none after a reset, so its claims counted
/// as no generation's, and an empty assignment left an older set claimed).
#[test]
fn a_sticky_members_user_data_is_its_last_assignment_at_that_generation() {
    let mut h = classic_member_stalled_past_its_poll_interval("sticky", "");
    h.run_until(25_000);
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup(_)))
        .expect("rejoins after its poll timeout");
    let subscription = join_subscription(join).1.clone();
    assert_eq!(
        (subscription.generation, subscription.assigned_generation),
        (None, Some(1))
    );
    assert_eq!(subscription.previous_assignment, [0, 1, 2, 3]);
    // Generation 2 gives it nothing; the next join carries that.
    h.respond(25_010, join_ok(2, false, subscription));
    h.take_sent();
    h.respond(25_020, sync_ok(Vec::new()));
    let heartbeat_at = 25_010 + 3000;
    h.run_until(heartbeat_at);
    assert!(
        h.take_sent().iter().any(|r| matches!(
            r,
            Request::Heartbeat(HeartbeatRequest { generation: 2, .. })
        )),
        "heartbeats in generation 2"
    );
    h.respond(
        heartbeat_at + 5,
        heartbeat_answer(ErrorCode::RebalanceInProgress),
    );
    h.run_until(heartbeat_at + 1000);
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup(_)))
        .expect("rejoins");
    let subscription = join_subscription(join).1;
    assert_eq!(
        (subscription.generation, subscription.assigned_generation),
        (Some(2), Some(2))
    );
    assert!(subscription.previous_assignment.is_empty());
}

/// The classic poll thread in `ensureCoordinatorReady` sleeps `retryBackoff.backoff(attempts++)`
/// after each lookup that found nothing: 100, 200, 400 ms (each within a fifth) within one
/// call, which the poll's timeout ends (the next poll's call starts over). With its heartbeat
/// thread not yet enabled (no generation), nothing else looks in between.
#[test]
fn a_classic_poll_waiting_for_the_coordinator_backs_off_exponentially_within_the_call() {
    let mut h = Harness::new("assignors = [\"range\"]\npoll_timeout_ms = 1000", "");
    h.call(|c, env| c.start(env, 1, None));
    let sent_at = lookups_failing(&mut h, 1000, usize::MAX);
    let gaps: Vec<u64> = sent_at.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps.len(), 3, "{sent_at:?}");
    for (k, &gap) in gaps.iter().enumerate() {
        let step = 100u64 << k;
        assert!(
            (step * 4 / 5..=step * 6 / 5).contains(&gap),
            "gap {k}: {gap} ms in {gaps:?}"
        );
    }
}

/// `checkAssignmentMatchedSubscription` (ConsumerCoordinator.onJoinComplete): a member whose
/// subscription dropped a topic while its JoinGroup was out is answered with an assignment
/// made for the old one. Kafka does not take it (no callback, no `onAssignment`, nothing
/// owned) and rejoins with the current subscription, in the generation the answer gave.
#[test]
fn an_assignment_naming_a_topic_no_longer_subscribed_is_not_taken_and_the_member_rejoins() {
    let mut h = Harness::new(
        "assignors = [\"cooperative-sticky\"]",
        "topics = [\"orders\", \"payments\"]\n\n[[topics]]\nname = \"payments\"\npartitions = 2\n",
    );
    start_and_find_the_coordinator(&mut h);
    h.respond(
        10,
        JoinGroupResponse::error(ErrorCode::MemberIdRequired, ID),
    );
    h.take_sent();
    // The application subscribes to `orders` alone while the JoinGroup is out.
    h.call(|c, env| c.subscribe(env, vec!["orders".into()]));
    h.respond(20, join_ok(1, false, Subscription::default_for_test()));
    assert!(matches!(&h.take_sent()[..], [Request::SyncGroup(_)]));
    // orders-0..3 and payments-0..1 (partitions 4 and 5).
    h.respond(30, sync_ok(vec![0, 1, 2, 3, 4, 5]));
    let callbacks = h.facts.iter().filter(|f| {
        matches!(
            f,
            Fact::Assigned { .. } | Fact::Revoked { .. } | Fact::Lost { .. }
        )
    });
    assert_eq!(callbacks.count(), 0, "{:?}", h.facts);
    assert!(h.consumer.owned.is_empty());
    h.run_until(200);
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup(_)))
        .unwrap_or_else(|| panic!("no rejoin: {sent:?}"));
    let (_, subscription, reason) = join_subscription(join);
    assert_eq!(reason, JoinReason::Subscription);
    assert_eq!(subscription.topics, vec!["orders".to_string()]);
    assert!(subscription.owned.is_empty());
    assert_eq!(subscription.generation, Some(1));
    assert!(!sent.iter().any(|r| matches!(r, Request::OffsetFetch(_))));
}
