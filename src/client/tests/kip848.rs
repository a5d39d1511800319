//! KIP-848's membership (`ConsumerMembershipManager`, the heartbeat request manager) driven
//! alone: what each heartbeat carries, reconciliation in `poll()` and its callbacks, fencing,
//! a poll timeout's staleness, the heartbeat's and the lookup's backoffs.

use super::*;
use crate::messages::ConsumerGroupHeartbeatRequest;

#[test]
fn a_kip_848_member_sends_the_full_heartbeat_once_then_only_what_changed_and_acknowledges_at_once()
{
    // ConsumerHeartbeatRequestManager: the join carries every field; later heartbeats only what
    // changed since the last one; after a reconciliation the acknowledging heartbeat goes at
    // once (not at the next interval) and reports what the member now owns.
    let mut h = Harness::new("protocol = \"consumer\"", "");
    h.call(|c, env| c.start(env, 1, None));
    h.run_until(0);
    assert!(matches!(&h.take_sent()[..], [Request::FindCoordinator(_)]));
    h.respond(0, coordinator_found());
    let sent = h.take_sent();
    let [Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest {
        member_id,
        member_epoch: 0,
        rebalance_timeout_ms: 300_000,
        subscribed_topic_names: Some(topics),
        owned: Some(owned),
        ..
    })] = &sent[..]
    else {
        panic!("{sent:?}")
    };
    assert_eq!(
        member_id.len(),
        22,
        "a client-made base64 Uuid: {member_id}"
    );
    assert_eq!(topics, &["orders"]);
    assert!(owned.is_empty());
    assert!(h.consumer.is_rebalancing());
    // The broker answers with all four partitions: onPartitionsAssigned at the poll pass
    // that follows the reconciling one, then the ack at once.
    h.respond(10, consumer_heartbeat_ok(2, Some(vec![0, 1, 2, 3])));
    h.run_until(ASSIGNED_AT);
    assert!(h.facts.contains(&Fact::Assigned {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
    let sent = h.take_sent();
    let ack = sent
        .iter()
        .find(|r| matches!(r, Request::ConsumerGroupHeartbeat(_)))
        .unwrap_or_else(|| panic!("{sent:?}"));
    let Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest {
        member_epoch: 2,
        rebalance_timeout_ms: -1,
        subscribed_topic_names: None,
        owned: Some(owned),
        ..
    }) = ack
    else {
        panic!("{ack:?}")
    };
    assert_eq!(owned, &[0, 1, 2, 3]);
    kip_848_acknowledged_and_fetched(&mut h, 4);
    assert!(!h.consumer.is_rebalancing());
    // The next heartbeat, an interval after the ack, carries nothing new.
    h.take_sent();
    h.run_until(5_311);
    let beats: Vec<Request> = h
        .take_sent()
        .into_iter()
        .filter(|r| matches!(r, Request::ConsumerGroupHeartbeat(_)))
        .collect();
    assert!(
        matches!(
            &beats[..],
            [Request::ConsumerGroupHeartbeat(
                ConsumerGroupHeartbeatRequest {
                    member_epoch: 2,
                    rebalance_timeout_ms: -1,
                    subscribed_topic_names: None,
                    owned: None,
                    ..
                }
            )]
        ),
        "{beats:?}"
    );
}

#[test]
fn a_fenced_kip_848_member_loses_its_partitions_and_rejoins_with_epoch_0_and_the_same_id() {
    let mut h = Harness::new("protocol = \"consumer\"", "");
    h.call(|c, env| c.start(env, 1, None));
    h.run_until(0);
    assert!(matches!(&h.take_sent()[..], [Request::FindCoordinator(_)]));
    h.respond(0, coordinator_found());
    let Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest { member_id, .. }) =
        h.take_sent().remove(0)
    else {
        panic!("the join heartbeat")
    };
    h.respond(10, consumer_heartbeat_ok(2, Some(vec![0, 1])));
    h.run_until(ASSIGNED_AT);
    kip_848_acknowledged_and_fetched(&mut h, 2);
    h.take_sent();
    h.run_until(5_311);
    h.respond(5_315, consumer_heartbeat_fenced());
    h.run_until(6_000);
    assert!(h.facts.contains(&Fact::Lost {
        member: 0,
        partitions: vec![0, 1]
    }));
    let rejoin = h
        .take_sent()
        .into_iter()
        .rfind(|r| matches!(r, Request::ConsumerGroupHeartbeat(_)))
        .expect("a rejoin");
    let Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest {
        member_id: again,
        member_epoch: 0,
        owned: Some(owned),
        ..
    }) = rejoin
    else {
        panic!("{rejoin:?}")
    };
    assert_eq!(again, member_id, "the same client-made id");
    assert!(owned.is_empty());
}

/// `maybeAbortReconciliation`: a KIP-848 member fenced while its onPartitionsAssigned runs
/// does not acknowledge when the callback ends; its next poll loses what it holds and rejoins
/// with epoch 0. (fuzz --cluster-faults seed 128973: the member went FENCED -> ACKNOWLEDGING
/// and processed a partition the coordinator no longer gave it.)
#[test]
fn a_kip_848_member_fenced_during_its_assign_callback_does_not_acknowledge() {
    let mut h = Harness::new(
        "protocol = \"consumer\"\non_partitions_assigned_ms = 100",
        "",
    );
    kip_848_member_given(&mut h, vec![0, 1]);
    assert!(h.facts.contains(&Fact::Assigned {
        member: 0,
        partitions: vec![0, 1]
    }));
    assert_eq!(h.consumer.kip848().state, ConsumerMemberState::Reconciling);
    h.run_until(350);
    answer_a_heartbeat_in_flight(&mut h, consumer_heartbeat_fenced());
    h.take_sent();
    h.run_until(500);
    assert_ne!(
        h.consumer.kip848().state,
        ConsumerMemberState::Acknowledging
    );
    assert!(h.facts.contains(&Fact::Lost {
        member: 0,
        partitions: vec![0, 1]
    }));
    let epochs: Vec<i32> = h
        .take_sent()
        .iter()
        .filter_map(|r| match r {
            Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest {
                member_epoch, ..
            }) => Some(*member_epoch),
            _ => None,
        })
        .collect();
    assert_eq!(epochs, [0], "a rejoin, no acknowledgement at epoch 2");
}

/// `onHeartbeatRequestGenerated`: a newer target arrives while the member reconciles; once the
/// first reconciliation is done and acknowledged, the acknowledgement's answer leaves it
/// RECONCILING for the newer one (not STABLE), which then completes and is acknowledged in
/// turn. (Seed 312 of the fixed sweep never settled when the answer made it STABLE.)
#[test]
fn a_kip_848_acknowledgement_answered_while_a_newer_target_reconciles_keeps_reconciling() {
    let mut h = Harness::new(
        "protocol = \"consumer\"\non_partitions_assigned_ms = 1000\non_partitions_revoked_ms = 1000\nenable_auto_commit = false",
        "",
    );
    // onPartitionsAssigned [orders-0, orders-1] runs from 300 to 1,300 ms.
    kip_848_member_given(&mut h, vec![0, 1]);
    h.run_until(500);
    answer_a_heartbeat_in_flight(&mut h, consumer_heartbeat_ok(2, Some(vec![1])));
    h.take_sent();
    // The first reconciliation ends at 1,300 ms: acknowledged as it was.
    h.run_until(1_300);
    assert_eq!(heartbeats_owned(&mut h), [Some(vec![0, 1])]);
    h.respond(1_302, nothing_committed(2));
    h.respond(1_305, consumer_heartbeat_ok(2, None));
    assert_eq!(h.consumer.kip848().state, ConsumerMemberState::Reconciling);
    // The newer one (revoke orders-0) is reconciled at the next poll event: its revoke
    // callback takes a second, then the (empty) assign callback another, each at a later pass
    // (an idle member owning partitions passes every fetch.max.wait.ms, 500 ms, here).
    let mut acknowledged = None;
    for t in (1_400..10_000).step_by(100) {
        h.run_until(t);
        for owned in heartbeats_owned(&mut h) {
            if owned.as_deref() == Some(&[1][..]) {
                acknowledged = Some(t);
            }
            h.respond(t + 5, consumer_heartbeat_ok(2, None));
        }
        if acknowledged.is_some() {
            break;
        }
    }
    assert!(h.facts.contains(&Fact::Revoked {
        member: 0,
        partitions: vec![0]
    }));
    let at = acknowledged.expect("the newer target acknowledged");
    assert!((3_300..=5_000).contains(&at), "{at}");
    assert_eq!(h.consumer.kip848().state, ConsumerMemberState::Stable);
}

/// `LocalAssignment.updateWith` compares an answer with the last target received, not with
/// what the member owns: an answer taking back a target that waits behind the assign callback
/// in progress replaces it, and once the callback is done the member has nothing to
/// reconcile. (fuzz --cluster-faults seed 448470: the answer equalled what the member owned
/// and was dropped, and the stale target gave it a partition already handed on.)
#[test]
fn a_kip_848_answer_taking_back_a_waiting_target_replaces_it() {
    let mut h = Harness::new(
        "protocol = \"consumer\"\non_partitions_assigned_ms = 1000",
        "",
    );
    // onPartitionsAssigned [orders-0] runs from 10 ms to 1,010 ms.
    kip_848_member_given(&mut h, vec![0]);
    h.run_until(300);
    answer_a_heartbeat_in_flight(&mut h, consumer_heartbeat_ok(3, Some(vec![0, 1])));
    h.run_until(600);
    answer_a_heartbeat_in_flight(&mut h, consumer_heartbeat_ok(4, Some(vec![0])));
    h.take_sent();
    h.run_until(3_000);
    let took_orders_1 =
        |f: &Fact| matches!(f, Fact::Assigned { partitions, .. } if partitions.contains(&1));
    assert!(!h.facts.iter().any(took_orders_1), "{:?}", h.facts);
    let owned = heartbeats_owned(&mut h);
    assert_eq!(owned, [Some(vec![0])], "acknowledges epoch 4 as it is");
}

/// A new target ends ACKNOWLEDGING (`processAssignmentReceived`): an acknowledgement that
/// waited for the answer in flight is not sent when that answer brings a new target, unless
/// the heartbeat interval is up (`canSendRequest`); the member acknowledges once it has
/// reconciled, reporting what it owns then. (fuzz --cluster-faults seed 717014: the early
/// heartbeat reported the old owned set, the coordinator found nothing to revoke and handed
/// the partition on, and the member's commit at the next epoch took its offset back.)
#[test]
fn a_kip_848_acknowledgement_waiting_for_an_answer_that_brings_a_new_target_is_not_sent() {
    let mut h = Harness::new(
        "protocol = \"consumer\"\non_partitions_assigned_ms = 100",
        "",
    );
    // onPartitionsAssigned [orders-0] runs from 300 ms to 400 ms, while a heartbeat is out.
    kip_848_member_given(&mut h, vec![0]);
    h.call(|c, _| c.kip848().in_flight = true);
    h.take_sent();
    h.run_until(450);
    let heartbeat = |r: &Request| matches!(r, Request::ConsumerGroupHeartbeat(_));
    assert!(
        !h.take_sent().iter().any(heartbeat),
        "the acknowledgement waits for the answer"
    );
    h.respond(450, nothing_committed(1));
    h.respond(500, consumer_heartbeat_ok(3, Some(vec![0, 1])));
    h.run_until(3_000);
    let owned = heartbeats_owned(&mut h);
    assert_eq!(
        owned,
        [Some(vec![0, 1])],
        "one heartbeat, after reconciling"
    );
}

#[test]
fn a_stale_kip_848_member_ignores_the_answer_to_a_heartbeat_sent_before_its_poll_timeout() {
    // A heartbeat in flight when the poll timer expires is answered with a new assignment; the
    // member is STALE by then (it left and gave up what it owned), and Kafka ignores the answer
    // (ConsumerMembershipManager.onHeartbeatSuccess: isNotInGroup), so it reconciles nothing and
    // rejoins with epoch 0 once it polls again.
    let mut h = kip_848_member_stalled_past_its_poll_interval();
    // The next heartbeat goes at 10,300 and is still unanswered when the poll timer expires.
    h.run_until(10_320);
    h.take_sent();
    h.run_until(11_400);
    h.respond(11_500, consumer_heartbeat_ok(3, Some(vec![0, 1, 2, 3])));
    h.run_until(30_000);
    let got_more =
        |f: &Fact| matches!(f, Fact::Assigned { partitions, .. } if partitions.contains(&2));
    assert!(!h.facts.iter().any(got_more), "{:?}", h.facts);
    let rejoin = h.take_sent().into_iter().rfind(|r| {
        matches!(
            r,
            Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest {
                member_epoch: 0,
                ..
            })
        )
    });
    assert!(rejoin.is_some(), "rejoins with epoch 0 after the stall");
}

/// Kafka's heartbeat reports `currentAssignment` as owned (ConsumerHeartbeatRequestManager),
/// which `AbstractMembershipManager.revokeAndAssign` sets only once the revocation and the
/// assignment callbacks have both completed: a heartbeat sent during a long
/// onPartitionsRevoked still reports the partitions being revoked (or nothing new), never the
/// reconciliation's result; the acknowledging heartbeat after it does (seed 38303).
#[test]
fn a_kip_848_heartbeat_during_the_revoke_callback_still_reports_the_revoked_partitions() {
    let mut h = Harness::new(
        "protocol = \"consumer\"\non_partitions_revoked_ms = 6000\nenable_auto_commit = false",
        "",
    );
    h.call(|c, env| c.start(env, 1, None));
    h.run_until(0);
    h.respond(0, coordinator_found());
    h.respond(10, consumer_heartbeat_ok(2, Some(vec![0, 1, 2, 3])));
    h.run_until(ASSIGNED_AT);
    kip_848_acknowledged_and_fetched(&mut h, 4);
    h.run_until(5_311);
    // The answer to the interval's heartbeat takes t-2 and t-3 away: a 6 s revoke callback.
    h.respond(5_320, consumer_heartbeat_ok(3, Some(vec![0, 1])));
    h.take_sent();
    let revoked = Fact::Revoked {
        member: 0,
        partitions: vec![2, 3],
    };
    // Step the clock, answer every heartbeat, note what each reported and when.
    let mut revoked_at = None;
    let mut beats = Vec::new();
    for t in (5_400..20_000).step_by(100) {
        h.run_until(t);
        if revoked_at.is_none() && h.facts.contains(&revoked) {
            revoked_at = Some(t);
        }
        for r in h.take_sent() {
            if let Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest {
                owned, ..
            }) = &r
            {
                beats.push((t, owned.clone()));
                h.respond(t + 5, consumer_heartbeat_ok(3, None));
            }
        }
    }
    let revoked_at = revoked_at.unwrap_or_else(|| panic!("no revoke: {beats:?} {:?}", h.facts));
    let during: Vec<_> = beats
        .iter()
        .filter(|(t, _)| *t > revoked_at && *t < revoked_at + 5_900)
        .collect();
    assert!(
        !during.is_empty(),
        "a heartbeat went during the callback: {beats:?}"
    );
    assert!(
        during
            .iter()
            .all(|(_, o)| o.is_none() || o.as_deref() == Some(&[0, 1, 2, 3][..])),
        "{beats:?}"
    );
    assert!(
        beats
            .iter()
            .any(|(t, o)| *t >= revoked_at + 5_900 && o.as_deref() == Some(&[0, 1][..])),
        "the acknowledging heartbeat reports the result: {beats:?}"
    );
}

#[test]
fn a_rejoined_kip_848_member_ignores_the_answer_to_its_poll_timeout_leave() {
    // The poll timeout's leave (epoch -1) goes out with its answer ignored
    // (AbstractHeartbeatRequestManager: "we can ignore the leave response because we can join
    // before or after receiving the response"). Answered after the member has rejoined, it
    // changes nothing: its epoch stays the join's, and it heartbeats on as a joining member.
    let mut h = kip_848_member_stalled_past_its_poll_interval();
    // The poll timer expires at about 11 s: the leave goes out, unanswered for now.
    h.run_until(11_400);
    let leave = |r: &Request| {
        matches!(
            r,
            Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest {
                member_epoch: -1,
                ..
            })
        )
    };
    assert!(h.take_sent().iter().any(leave));
    // The stall ends at 21 s: the member polls and rejoins with epoch 0.
    h.run_until(22_000);
    let rejoined = h.take_sent().into_iter().any(|r| {
        matches!(
            r,
            Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest {
                member_epoch: 0,
                ..
            })
        )
    });
    assert!(rejoined);
    // The leave's answer arrives now; the join's is still to come.
    h.respond(22_100, consumer_heartbeat_ok(-1, None));
    h.run_until(30_000);
    let sent = h.take_sent();
    assert!(!sent.iter().any(leave), "left again: {sent:?}");
    h.respond(30_010, consumer_heartbeat_ok(4, Some(vec![0, 1, 2, 3])));
    h.run_until(30_500);
    assert!(h.facts.contains(&Fact::Assigned {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
}

/// The KIP-848 heartbeat manager's `RequestState`: a heartbeat that is not urgent goes only
/// once the heartbeat interval has passed since the last one was sent and the backoff since
/// the last answer: `retry.backoff.ms` with a fifth of jitter after a success (so an answer
/// that comes after the interval is due is not followed by a heartbeat at once), doubled
/// after each failure in a row up to `retry.backoff.max.ms`; an acknowledgement goes at once.
#[test]
fn a_kip_848_heartbeat_waits_out_the_backoff_after_each_answer() {
    let mut h = Harness::new("protocol = \"consumer\"", "");
    kip_848_member_given(&mut h, vec![0]);
    h.respond(20, nothing_committed(1));
    let heartbeats =
        |h: &mut Harness| h.sent_at(|r| matches!(r, Request::ConsumerGroupHeartbeat(_)));
    h.run_until(30);
    let ack = heartbeats(&mut h);
    assert_eq!(ack.len(), 1, "the acknowledgement goes at once: {ack:?}");
    h.respond(40, consumer_heartbeat_ok(2, None));
    // The next one goes at the interval from the acknowledgement, and is answered late.
    h.run_until(6_000);
    assert_eq!(heartbeats(&mut h), [ack[0] + 5_000]);
    h.respond(11_000, consumer_heartbeat_ok(2, None));
    h.run_until(11_079);
    assert!(
        heartbeats(&mut h).is_empty(),
        "not at once after the answer"
    );
    h.run_until(11_200);
    let after = heartbeats(&mut h);
    assert!(
        matches!(after[..], [t] if (11_080..11_120).contains(&t)),
        "{after:?}"
    );
    // COORDINATOR_LOAD_IN_PROGRESS four times in a row: 100, 200, 400, 800 ms, each with its
    // jitter.
    let gaps = [(80, 120), (160, 240), (320, 480), (640, 960)];
    retried_after_loading(&mut h, RequestKind::ConsumerGroupHeartbeat, after[0], &gaps);
}

/// KIP-848's `CoordinatorRequestManager` backs off between FindCoordinator requests by its
/// `RequestState`: `retry.backoff.ms` doubled per failure in a row up to `retry.backoff.max.ms`
/// (100 ms to 1 s, each within a fifth), and after a success the first step again before the
/// next lookup (a coordinator lost at once is looked for again about 100 ms after the answer).
/// Asking for the coordinator meanwhile (a heartbeat due) sends nothing more.
#[test]
fn a_kip_848_member_backs_off_exponentially_between_failed_lookups() {
    let mut h = Harness::new("protocol = \"consumer\"", "");
    h.call(|c, env| c.start(env, 1, None));
    // The seventh lookup is left unanswered: the coordinator is found with it below.
    let sent_at = lookups_failing(&mut h, 10_000, 7);
    let gaps: Vec<u64> = sent_at.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps.len(), 6, "{sent_at:?}");
    for (k, &gap) in gaps.iter().enumerate() {
        let step = (100u64 << k.min(4)).min(1000) as f64;
        let (lo, hi) = ((step * 0.8).floor() as u64, (step * 1.2).ceil() as u64);
        assert!(
            (lo..=hi.min(1000)).contains(&gap),
            "gap {k}: {gap} ms in {gaps:?}"
        );
    }
    // Found at last: a coordinator lost right after is looked for again a first step later.
    let found = *sent_at.last().unwrap();
    h.respond(found, coordinator_found());
    assert_eq!(h.consumer.coordinator(), Some(0));
    h.respond(
        found + 2,
        failed_answer(
            RequestKind::ConsumerGroupHeartbeat,
            ErrorCode::NotCoordinator,
        ),
    );
    let mut next = None;
    for t in found + 2..found + 200 {
        h.run_until(t);
        if h.take_sent()
            .iter()
            .any(|r| matches!(r, Request::FindCoordinator(_)))
        {
            next = Some(t - found);
            break;
        }
    }
    let next = next.expect("looked for again");
    assert!((80..=120).contains(&next), "{next} ms after the answer");
}

/// Names of the rebalance callbacks the member ran, with when (ms), in order.
fn callbacks_at(h: &Harness, since: usize) -> Vec<&'static str> {
    h.facts[since..]
        .iter()
        .filter_map(|f| match f {
            Fact::Assigned { .. } => Some("assigned"),
            Fact::Revoked { .. } => Some("revoked"),
            Fact::Lost { .. } => Some("lost"),
            _ => None,
        })
        .collect()
}

/// `AbstractMembershipManager.processAssignmentReceived` only records a new target and moves
/// to RECONCILING; `maybeReconcile(canCommit = true)` runs when the background thread handles
/// the application thread's `AsyncPollEvent`, which `AsyncKafkaConsumer.checkInflightPoll`
/// sends with every other pass of the poll loop. A member owning nothing passes every
/// `retry.backoff.ms` (`pollForFetches`): answered at 10 ms, it reconciles at the 200 ms pass
/// (the 100 ms one clears the event sent at 0) and its callback runs at the 300 ms pass.
#[test]
fn a_kip_848_target_waits_for_the_application_threads_poll_event() {
    let mut h = Harness::new("protocol = \"consumer\"", "");
    start_and_find_the_coordinator(&mut h);
    h.take_sent();
    h.respond(10, consumer_heartbeat_ok(2, Some(vec![0, 1])));
    assert_eq!(h.consumer.kip848().state, ConsumerMemberState::Reconciling);
    h.run_until(299);
    assert!(callbacks_at(&h, 0).is_empty(), "{:?}", h.facts);
    assert!(h
        .take_sent()
        .iter()
        .all(|r| !matches!(r, Request::ConsumerGroupHeartbeat(_))));
    h.run_until(300);
    assert_eq!(callbacks_at(&h, 0), ["assigned"]);
    let acks = h.sent_at(|r| matches!(r, Request::ConsumerGroupHeartbeat(_)));
    assert_eq!(acks, [300], "acknowledged at once after the callback");
}

/// `maybeReconcile(false)`, from the background thread's own loop, reconciles at once when it
/// neither commits (auto-commit off) nor revokes: only the callback waits for the application
/// thread's next pass (100 ms).
#[test]
fn without_auto_commit_an_addition_is_reconciled_in_the_background() {
    let mut h = Harness::new("protocol = \"consumer\"\nenable_auto_commit = false", "");
    start_and_find_the_coordinator(&mut h);
    h.take_sent();
    h.respond(10, consumer_heartbeat_ok(2, Some(vec![0, 1])));
    h.run_until(99);
    assert!(callbacks_at(&h, 0).is_empty());
    h.run_until(100);
    assert_eq!(callbacks_at(&h, 0), ["assigned"]);
}

/// `revokeAndAssign`: `onPartitionsRevoked` is queued for the application thread
/// (`enqueueConsumerRebalanceListenerCallback`) and the assignment is chained after it
/// (`thenCompose`), so `onPartitionsAssigned` (with nothing added, still run) comes at a later
/// pass than the revocation, and the acknowledgement after both.
#[test]
fn a_kip_848_revocation_and_its_assignment_run_at_separate_passes() {
    let mut h = Harness::new("protocol = \"consumer\"\nenable_auto_commit = false", "");
    kip_848_member_given(&mut h, vec![0, 1, 2, 3]);
    kip_848_acknowledged_and_fetched(&mut h, 4);
    let before = h.facts.len();
    h.run_until(5_311);
    h.take_sent();
    h.respond(5_320, consumer_heartbeat_ok(3, Some(vec![0, 1])));
    let mut seen: Vec<(u64, &str)> = Vec::new();
    let mut acked = None;
    for t in 5_321..8_000 {
        h.run_until(t);
        let names = callbacks_at(&h, before);
        if names.len() > seen.len() {
            seen.extend(names[seen.len()..].iter().map(|n| (t, *n)));
        }
        if acked.is_none() {
            let sent = h.sent_at(|r| {
                matches!(r, Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest { owned: Some(o), .. }) if o == &[0, 1])
            });
            acked = sent.first().copied();
        }
    }
    let [(revoked_at, "revoked"), (assigned_at, "assigned")] = seen[..] else {
        panic!("{seen:?}");
    };
    assert!(assigned_at > revoked_at, "{seen:?}");
    assert_eq!(acked, Some(assigned_at), "{seen:?}");
    assert!(h.facts.contains(&Fact::Assigned {
        member: 0,
        partitions: vec![]
    }));
}

/// `LocalAssignment.updateWith` bumps the epoch of an assignment from NONE, so a joining member
/// given nothing still reconciles: `onPartitionsAssigned([])` runs and an acknowledgement goes.
#[test]
fn a_joining_kip_848_member_given_nothing_runs_its_callback_and_acknowledges() {
    let mut h = Harness::new("protocol = \"consumer\"", "");
    kip_848_member_given(&mut h, vec![]);
    assert!(h.facts.contains(&Fact::Assigned {
        member: 0,
        partitions: vec![]
    }));
    let acks: Vec<Request> = h
        .take_sent()
        .into_iter()
        .filter(|r| matches!(r, Request::ConsumerGroupHeartbeat(_)))
        .collect();
    assert!(
        matches!(
            &acks[..],
            [Request::ConsumerGroupHeartbeat(
                ConsumerGroupHeartbeatRequest {
                    member_epoch: 2,
                    ..
                }
            )]
        ),
        "{acks:?}"
    );
    assert_eq!(
        h.consumer.kip848().state,
        ConsumerMemberState::Acknowledging
    );
}
