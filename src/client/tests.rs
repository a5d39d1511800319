//! The consumer driven alone: a harness plays the coordinator's part with scripted responses,
//! fires the consumer's timers in order and keeps what it sends and records, with no world
//! around it. Each test follows one path of CLIENT.md: the heartbeat thread's pass, a
//! cooperative revoke-and-rejoin, closing, a poll timeout.

use super::*;
use crate::app::standby::StandbyPlacement;
use crate::facts::RejoinCause;
use crate::group::messages::{JoinedMember, LeavingMember};
use crate::scenario::{load_str, LoadOptions};
use crate::sim::RngStreams;
use consumer_protocol::MemberState;

const ME: ClientRef = ClientRef {
    member: 0,
    incarnation: 1,
};
const ID: &str = "consumer-1-5f0c";

struct Harness {
    scenario: Scenario,
    partitions: PartitionSpace,
    logs: Logs,
    standby: StandbyPlacement,
    replicas: crate::cluster::Replicas,
    availability: crate::cluster::Availability,
    fetch: Stream,
    backoff: Stream,
    arrival_lag_us: Vec<u64>,
    consumer: Consumer,
    now: SimTime,
    /// Keyed timers (one per key) and one-shots, each with its arming order.
    keyed: [Option<(SimTime, u64, ClientTimer)>; ClientTimer::KEYS],
    one_shots: Vec<(SimTime, u64, ClientTimer)>,
    armed: u64,
    sent: Vec<(SimTime, Request)>,
    facts: Vec<Fact>,
    /// Connections the member closed (`ClientEffect::Disconnect`), when.
    disconnects: Vec<(SimTime, u32)>,
}

impl Harness {
    /// One member `c1` on topic `orders` (4 partitions), with `extra` TOML for the group and
    /// producers.
    fn new(group: &str, extra: &str) -> Self {
        let toml = format!(
            "name = \"t\"\nduration_ms = 600000\n\n[[topics]]\nname = \"orders\"\npartitions = 4\n\n\
             [group]\n{group}\n\n[[members]]\nname = \"c1\"\n{extra}"
        );
        let scenario = load_str("t", &toml, &LoadOptions::default()).expect("valid scenario");
        let partitions = PartitionSpace::new(&scenario);
        let streams = RngStreams::new(scenario.seed);
        let logs = Logs::new(&scenario, &partitions, &streams);
        Harness {
            replicas: crate::cluster::Replicas::place(&scenario, &mut streams.stream("placement")),
            availability: crate::cluster::Availability::default(),
            standby: StandbyPlacement::new(1, partitions.len()),
            arrival_lag_us: vec![0; partitions.len()],
            fetch: streams.stream("fetch"),
            backoff: streams.stream("retry-backoff"),
            consumer: Consumer::new(0, scenario.members[0].clone()),
            now: SimTime::ZERO,
            keyed: Default::default(),
            one_shots: Vec::new(),
            armed: 0,
            sent: Vec::new(),
            facts: Vec::new(),
            disconnects: Vec::new(),
            scenario,
            partitions,
            logs,
        }
    }

    /// Runs one handler at the harness's time and applies its effects.
    fn call(&mut self, handler: impl FnOnce(&mut Consumer, &mut ClientEnv)) {
        let mut out = Out::new(false);
        let mut env = ClientEnv {
            now: self.now,
            scenario: &self.scenario,
            partitions: &self.partitions,
            logs: &self.logs,
            arrival_lag_us: &self.arrival_lag_us,
            fetch: &mut self.fetch,
            backoff: &mut self.backoff,
            standby: &self.standby,
            replicas: &self.replicas,
            availability: &self.availability,
            out: &mut out,
        };
        handler(&mut self.consumer, &mut env);
        let (effects, _) = out.drain();
        for effect in effects {
            self.armed += 1;
            match effect {
                ClientEffect::Send(request) => self.sent.push((self.now, *request)),
                ClientEffect::SetTimer { timer, at } => {
                    assert!(at >= self.now);
                    let key = timer.key().unwrap();
                    self.keyed[key] = Some((at, self.armed, timer));
                }
                ClientEffect::CancelTimer(timer) => self.keyed[timer.key().unwrap()] = None,
                ClientEffect::After { timer, at } => self.one_shots.push((at, self.armed, timer)),
                ClientEffect::Fact(fact) => self.facts.push(fact),
                ClientEffect::Disconnect(broker) => self.disconnects.push((self.now, broker)),
            }
        }
    }

    /// Fires every timer due by `t_ms`, in (deadline, arming) order, then moves the clock.
    fn run_until(&mut self, t_ms: u64) {
        let t = SimTime::from_millis(t_ms);
        loop {
            let keyed = self
                .keyed
                .iter()
                .enumerate()
                .filter_map(|(k, e)| e.as_ref().map(|(at, seq, _)| (*at, *seq, Some(k))));
            let shots = self.one_shots.iter().map(|(at, seq, _)| (*at, *seq, None));
            let Some((at, seq, key)) = keyed.chain(shots).filter(|e| e.0 <= t).min() else {
                break;
            };
            let timer = match key {
                Some(k) => self.keyed[k].take().unwrap().2,
                None => {
                    let i = self.one_shots.iter().position(|e| e.1 == seq).unwrap();
                    self.one_shots.remove(i).2
                }
            };
            self.now = at;
            self.call(|c, env| c.on_timer(env, ME, timer));
        }
        self.now = t;
    }

    /// A response arrives at `t_ms` (timers due before it fire first).
    fn respond(&mut self, t_ms: u64, response: Response) {
        self.run_until(t_ms);
        self.call(|c, env| c.on_response(env, ME, response));
        self.run_until(t_ms);
    }

    fn take_sent(&mut self) -> Vec<Request> {
        std::mem::take(&mut self.sent)
            .into_iter()
            .map(|(_, r)| r)
            .collect()
    }

    /// When each request `kind` picks out was sent since the last look (in ms), taking every
    /// request sent.
    fn sent_at(&mut self, kind: impl Fn(&Request) -> bool) -> Vec<u64> {
        std::mem::take(&mut self.sent)
            .into_iter()
            .filter(|(_, r)| kind(r))
            .map(|(at, _)| at.as_millis())
            .collect()
    }

    fn pending_one_shot(&self, matches: impl Fn(&ClientTimer) -> bool) -> Option<u64> {
        self.one_shots
            .iter()
            .find(|(_, _, t)| matches(t))
            .map(|(at, _, _)| at.as_millis())
    }
}

/// Generation 1's member hears REBALANCE_IN_PROGRESS from its heartbeat at 3,025 ms and
/// rejoins: onJoinPrepare's commit is answered, and the JoinGroup goes out.
fn rejoin_on_rebalance_in_progress(h: &mut Harness) {
    hear_rebalance_in_progress(h);
    commit_on_join_prepare(h);
}

/// Generation 1's member hears REBALANCE_IN_PROGRESS from its heartbeat at 3,025 ms (what it
/// sent before is dropped).
fn hear_rebalance_in_progress(h: &mut Harness) {
    h.run_until(3020);
    h.take_sent();
    h.respond(
        3025,
        Response::Heartbeat {
            error: ErrorCode::RebalanceInProgress,
        },
    );
}

/// Generation 1's member subscribes anew at 3,020 ms and rejoins: onJoinPrepare's commit is
/// answered, and the JoinGroup goes out.
fn rejoin_on_subscription_change(h: &mut Harness) {
    h.run_until(3020);
    h.take_sent();
    h.call(|c, env| c.subscribe(env, vec!["orders".into()]));
    commit_on_join_prepare(h);
}

/// The process starts, looks for the coordinator (what it sent is dropped) and finds it on
/// broker 0 at time 0.
fn start_and_find_the_coordinator(h: &mut Harness) {
    h.call(|c, env| c.start(env, 1, None));
    h.run_until(0);
    h.take_sent();
    h.respond(0, Response::FindCoordinator { broker: 0 });
}

/// Runs until the poll loop's `onJoinPrepare` sends its synchronous commit, answers it, and
/// returns when it was sent.
fn commit_on_join_prepare(h: &mut Harness) -> u64 {
    let start = h.now.as_millis();
    for t in start..start + 1000 {
        h.run_until(t);
        if let Some(i) = h
            .sent
            .iter()
            .position(|(_, r)| matches!(r, Request::OffsetCommit { .. }))
        {
            let (at, _) = h.sent.remove(i);
            assert!(
                !h.sent
                    .iter()
                    .any(|(_, r)| matches!(r, Request::JoinGroup { .. })),
                "the JoinGroup waits for the commit"
            );
            h.respond(
                t + 5,
                Response::OffsetCommit {
                    error: ErrorCode::None,
                },
            );
            return at.as_millis();
        }
    }
    panic!("no commit: {:?}", h.sent);
}

fn join_ok(generation: i32, leader: bool, subscription: Subscription) -> Response {
    Response::JoinGroup {
        error: ErrorCode::None,
        member_id: ID.into(),
        generation,
        protocol_type: Some("consumer".into()),
        protocol_name: Some("range".into()),
        leader: if leader { ID.into() } else { "other".into() },
        members: if leader {
            vec![JoinedMember {
                member_id: ID.into(),
                group_instance_id: None,
                subscription,
            }]
        } else {
            Vec::new()
        },
        skip_assignment: false,
    }
}

fn sync_ok(assignment: Vec<usize>) -> Response {
    Response::SyncGroup {
        error: ErrorCode::None,
        protocol_type: Some("consumer".into()),
        protocol_name: Some("range".into()),
        assignment: Some(assignment),
    }
}

fn join_subscription(r: &Request) -> (&str, &Subscription, JoinReason) {
    match r {
        Request::JoinGroup {
            member_id,
            protocols,
            reason,
            ..
        } => (member_id, &protocols[0].metadata, *reason),
        other => panic!("not a JoinGroup: {other:?}"),
    }
}

/// Start, MEMBER_ID_REQUIRED, join as leader of generation 1, SyncGroup with all four
/// partitions, committed offsets fetched: the member is Stable at 40 ms.
fn join_group(h: &mut Harness) {
    h.call(|c, env| c.start(env, 1, None));
    h.run_until(0);
    // ensureCoordinatorReady: FindCoordinator first, and the poll waits for its answer.
    let sent = h.take_sent();
    assert!(matches!(&sent[..], [Request::FindCoordinator]), "{sent:?}");
    h.respond(0, Response::FindCoordinator { broker: 0 });
    let sent = h.take_sent();
    assert_eq!(join_subscription(&sent[0]).0, "", "a new member has no id");
    h.respond(10, Response::join_error(ErrorCode::MemberIdRequired, ID));
    let sent = h.take_sent();
    let (id, subscription, _) = join_subscription(&sent[0]);
    assert_eq!(id, ID);
    let subscription = subscription.clone();
    h.respond(20, join_ok(1, true, subscription));
    // The leader ran the assignor: range gives it everything.
    let sent = h.take_sent();
    let Request::SyncGroup { assignments, .. } = &sent[0] else {
        panic!("{sent:?}")
    };
    assert_eq!(
        assignments.as_deref(),
        Some(&[(ID.to_string(), vec![0, 1, 2, 3])][..])
    );
    h.respond(30, sync_ok(vec![0, 1, 2, 3]));
    let sent = h.take_sent();
    assert!(
        matches!(&sent[..], [Request::OffsetFetch { partitions }] if partitions == &[0, 1, 2, 3])
    );
    h.respond(
        40,
        Response::OffsetFetch {
            committed: (0..4).map(|p| (p, None)).collect(),
        },
    );
    assert!(!h.consumer.is_rebalancing());
    assert!(h.facts.contains(&Fact::Assigned {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
}

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
        matches!(&sent[..], [Request::Heartbeat { generation: 1, .. }]),
        "{sent:?}"
    );
    h.respond(
        3025,
        Response::Heartbeat {
            error: ErrorCode::RebalanceInProgress,
        },
    );
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
        .find(|r| matches!(r, Request::JoinGroup { .. }))
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
            .any(|r| matches!(r, Request::OffsetCommit { .. } | Request::JoinGroup { .. })),
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
        sent.iter().any(|r| matches!(r, Request::JoinGroup { .. })),
        "{sent:?}"
    );
    // The heartbeat sent in generation 1 is answered REBALANCE_IN_PROGRESS while it is
    // PREPARING_REBALANCE: Kafka ignores it (no second rejoin, nothing reset).
    h.respond(
        3040,
        Response::Heartbeat {
            error: ErrorCode::RebalanceInProgress,
        },
    );
    h.respond(3045, join_ok(2, false, Subscription::default_for_test()));
    h.respond(3050, sync_ok(vec![0, 1, 2, 3]));
    h.run_until(3100);
    assert!(!h.consumer.is_rebalancing(), "settled in generation 2");
    // A stale UNKNOWN_MEMBER_ID for a heartbeat of generation 1 is ignored too.
    h.call(|c, env| {
        c.membership.heartbeats_in_flight.push_back(1);
        c.on_response(
            env,
            ME,
            Response::Heartbeat {
                error: ErrorCode::UnknownMemberId,
            },
        )
    });
    assert_eq!(h.consumer.membership.generation, Some(2));
    assert_eq!(h.consumer.membership.member_id, ID);
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
                Request::JoinGroup { member_id, .. } => Some(member_id.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(joins(&h.take_sent()), [ID]);
    h.respond(
        3040,
        Response::Heartbeat {
            error: ErrorCode::UnknownMemberId,
        },
    );
    h.run_until(4000);
    assert_eq!(
        joins(&h.take_sent()),
        Vec::<String>::new(),
        "the first is still out"
    );
    h.respond(4000, Response::join_error(ErrorCode::UnknownMemberId, ""));
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
        matches!(&sent[..], [Request::Heartbeat { generation: 1, .. }]),
        "the heartbeat thread is still enabled: {sent:?}"
    );
    h.run_until(6001);
    let sent = h.take_sent();
    assert!(
        sent.iter().any(|r| matches!(r, Request::JoinGroup { .. })),
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
        .find(|r| matches!(r, Request::JoinGroup { .. }))
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
        .find(|r| matches!(r, Request::JoinGroup { .. }))
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
        sent.iter().any(|r| matches!(r, Request::JoinGroup { .. })),
        "{sent:?}"
    );
    assert!(sent.iter().any(|r| matches!(r, Request::SyncGroup { .. })));
    assert_eq!(commit_generations(&sent), Vec::<i32>::new(), "{sent:?}");
    // It processed through both waits: the commits were due, not idle.
    assert!(h.facts[processed_before..]
        .iter()
        .any(|f| matches!(f, Fact::Processed { .. })));
    h.respond(joined_at + 2000, sync_ok(vec![0, 1, 2, 3]));
    h.run_until(joined_at + 2300);
    assert_eq!(commit_generations(&h.take_sent()), vec![2]);
}

/// A member that processes records, told to close at 2000 ms (what it sent before dropped).
fn closing_at_2000() -> Harness {
    let mut h = Harness::new(
        "assignors = [\"range\"]",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 100\n",
    );
    join_group(&mut h);
    h.run_until(2000);
    h.take_sent();
    h.call(|c, env| c.close(env));
    h
}

#[test]
fn closing_commits_revokes_everything_and_leaves() {
    let mut h = closing_at_2000();
    h.run_until(2100);
    let sent = h.take_sent();
    // close(): a synchronous auto-commit first; the poll loop waits for its answer.
    let Some(Request::OffsetCommit { offsets, .. }) = sent.last() else {
        panic!("{sent:?}")
    };
    assert_eq!(offsets.len(), 4);
    assert!(!h
        .facts
        .iter()
        .any(|f| matches!(f, Fact::RevokedOnClose { .. })));
    h.respond(
        2110,
        Response::OffsetCommit {
            error: ErrorCode::None,
        },
    );
    assert!(h.facts.contains(&Fact::RevokedOnClose {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
    let sent = h.take_sent();
    assert!(
        matches!(&sent[..], [Request::LeaveGroup { members }]
            if members[..] == [LeavingMember { member_id: ID.into(), group_instance_id: None, reason: LeaveReason::Close }]),
        "{sent:?}"
    );
    assert!(h.facts.contains(&Fact::ProcessStopped { member: 0 }));
    // A closed consumer sends nothing more.
    h.run_until(60_000);
    assert!(h.take_sent().is_empty());
}

/// A classic member (`assignor`, `member` TOML for its entry) joined as in [`join_group`],
/// busy with 400 records/s at 1 ms each, that stalls at 1 s for 20 s with a 10 s poll
/// interval.
fn classic_member_stalled_past_its_poll_interval(assignor: &str, member: &str) -> Harness {
    let mut h = Harness::new(
        &format!(
            "assignors = [\"{assignor}\"]\nmax_poll_interval_ms = 10000\nrecord_processing_us = 1000"
        ),
        &format!("{member}\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 400\n"),
    );
    join_group(&mut h);
    h.run_until(1000);
    h.call(|c, env| c.stall(env, Duration::from_millis(20_000)));
    h
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
            Request::LeaveGroup { members }
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
        .find(|r| matches!(r, Request::JoinGroup { .. }))
        .expect("rejoins");
    assert_eq!(join_subscription(join).0, "");
}

impl Subscription {
    fn default_for_test() -> Self {
        Subscription {
            topics: vec!["orders".into()],
            owned: Vec::new(),
            previous_assignment: Vec::new(),
            generation: None,
            assigned_generation: None,
            user_data: None,
            rack_id: None,
        }
    }
}

#[test]
fn a_static_member_past_its_poll_interval_sends_no_leave_group_and_rejoins_with_its_instance() {
    let mut h =
        classic_member_stalled_past_its_poll_interval("range", "group_instance_id = \"pod-1\"\n");
    h.run_until(25_000);
    let sent = h.take_sent();
    assert!(
        !sent.iter().any(|r| matches!(r, Request::LeaveGroup { .. })),
        "{sent:?}"
    );
    // Its generation and member id were reset: it joins again with no id and its instance id,
    // which the coordinator answers as a static replacement.
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup { .. }))
        .expect("rejoins");
    let Request::JoinGroup {
        member_id,
        group_instance_id,
        ..
    } = join
    else {
        unreachable!()
    };
    assert_eq!(
        (member_id.as_str(), group_instance_id.as_deref()),
        ("", Some("pod-1"))
    );
}

fn consumer_heartbeat_ok(epoch: i32, assignment: Option<Vec<usize>>) -> Response {
    Response::ConsumerGroupHeartbeat {
        error: ErrorCode::None,
        member_id: None,
        member_epoch: epoch,
        heartbeat_interval_ms: 5000,
        assignment,
    }
}

#[test]
fn a_kip_848_member_sends_the_full_heartbeat_once_then_only_what_changed_and_acknowledges_at_once()
{
    // ConsumerHeartbeatRequestManager: the join carries every field; later heartbeats only what
    // changed since the last one; after a reconciliation the acknowledging heartbeat goes at
    // once (not at the next interval) and reports what the member now owns.
    let mut h = Harness::new("protocol = \"consumer\"", "");
    h.call(|c, env| c.start(env, 1, None));
    h.run_until(0);
    assert!(matches!(&h.take_sent()[..], [Request::FindCoordinator]));
    h.respond(0, Response::FindCoordinator { broker: 0 });
    let sent = h.take_sent();
    let [Request::ConsumerGroupHeartbeat {
        member_id,
        member_epoch: 0,
        rebalance_timeout_ms: 300_000,
        subscribed_topic_names: Some(topics),
        owned: Some(owned),
        ..
    }] = &sent[..]
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
    // The broker answers with all four partitions: onPartitionsAssigned, then the ack at once.
    h.respond(10, consumer_heartbeat_ok(2, Some(vec![0, 1, 2, 3])));
    assert!(h.facts.contains(&Fact::Assigned {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
    let sent = h.take_sent();
    let ack = sent
        .iter()
        .find(|r| matches!(r, Request::ConsumerGroupHeartbeat { .. }))
        .unwrap_or_else(|| panic!("{sent:?}"));
    let Request::ConsumerGroupHeartbeat {
        member_epoch: 2,
        rebalance_timeout_ms: -1,
        subscribed_topic_names: None,
        owned: Some(owned),
        ..
    } = ack
    else {
        panic!("{ack:?}")
    };
    assert_eq!(owned, &[0, 1, 2, 3]);
    h.respond(15, consumer_heartbeat_ok(2, None));
    h.respond(
        16,
        Response::OffsetFetch {
            committed: (0..4).map(|p| (p, None)).collect(),
        },
    );
    assert!(!h.consumer.is_rebalancing());
    // The next heartbeat, an interval after the ack, carries nothing new.
    h.take_sent();
    h.run_until(5_011);
    let beats: Vec<Request> = h
        .take_sent()
        .into_iter()
        .filter(|r| matches!(r, Request::ConsumerGroupHeartbeat { .. }))
        .collect();
    assert!(
        matches!(
            &beats[..],
            [Request::ConsumerGroupHeartbeat {
                member_epoch: 2,
                rebalance_timeout_ms: -1,
                subscribed_topic_names: None,
                owned: None,
                ..
            }]
        ),
        "{beats:?}"
    );
}

#[test]
fn a_fenced_kip_848_member_loses_its_partitions_and_rejoins_with_epoch_0_and_the_same_id() {
    let mut h = Harness::new("protocol = \"consumer\"", "");
    h.call(|c, env| c.start(env, 1, None));
    h.run_until(0);
    assert!(matches!(&h.take_sent()[..], [Request::FindCoordinator]));
    h.respond(0, Response::FindCoordinator { broker: 0 });
    let Request::ConsumerGroupHeartbeat { member_id, .. } = h.take_sent().remove(0) else {
        panic!("the join heartbeat")
    };
    h.respond(10, consumer_heartbeat_ok(2, Some(vec![0, 1])));
    h.respond(15, consumer_heartbeat_ok(2, None));
    h.respond(
        16,
        Response::OffsetFetch {
            committed: (0..2).map(|p| (p, None)).collect(),
        },
    );
    h.take_sent();
    h.run_until(5_011);
    h.respond(
        5_015,
        Response::ConsumerGroupHeartbeat {
            error: ErrorCode::FencedMemberEpoch,
            member_id: None,
            member_epoch: 0,
            heartbeat_interval_ms: 0,
            assignment: None,
        },
    );
    h.run_until(6_000);
    assert!(h.facts.contains(&Fact::Lost {
        member: 0,
        partitions: vec![0, 1]
    }));
    let rejoin = h
        .take_sent()
        .into_iter()
        .rfind(|r| matches!(r, Request::ConsumerGroupHeartbeat { .. }))
        .expect("a rejoin");
    let Request::ConsumerGroupHeartbeat {
        member_id: again,
        member_epoch: 0,
        owned: Some(owned),
        ..
    } = rejoin
    else {
        panic!("{rejoin:?}")
    };
    assert_eq!(again, member_id, "the same client-made id");
    assert!(owned.is_empty());
}

/// A KIP-848 member starts, finds the coordinator and is given `partitions` at epoch 2 by the
/// answer to its join heartbeat, at 10 ms.
fn kip_848_member_given(h: &mut Harness, partitions: Vec<usize>) {
    start_and_find_the_coordinator(h);
    h.take_sent();
    h.respond(10, consumer_heartbeat_ok(2, Some(partitions)));
}

/// What each KIP-848 heartbeat sent since the last look reported owned (`None`: unchanged).
fn heartbeats_owned(h: &mut Harness) -> Vec<Option<Vec<usize>>> {
    h.take_sent()
        .into_iter()
        .filter_map(|r| match r {
            Request::ConsumerGroupHeartbeat { owned, .. } => Some(owned),
            _ => None,
        })
        .collect()
}

/// `response` answers a KIP-848 heartbeat the member has in flight, now.
fn answer_a_heartbeat_in_flight(h: &mut Harness, response: Response) {
    h.call(|c, env| {
        c.kip848().in_flight = true;
        c.on_response(env, ME, response);
    });
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
    assert_eq!(h.consumer.kip848().state, MemberState::Reconciling);
    h.run_until(50);
    answer_a_heartbeat_in_flight(
        &mut h,
        Response::ConsumerGroupHeartbeat {
            error: ErrorCode::FencedMemberEpoch,
            member_id: None,
            member_epoch: 0,
            heartbeat_interval_ms: 0,
            assignment: None,
        },
    );
    h.take_sent();
    h.run_until(200);
    assert_ne!(h.consumer.kip848().state, MemberState::Acknowledging);
    assert!(h.facts.contains(&Fact::Lost {
        member: 0,
        partitions: vec![0, 1]
    }));
    let epochs: Vec<i32> = h
        .take_sent()
        .iter()
        .filter_map(|r| match r {
            Request::ConsumerGroupHeartbeat { member_epoch, .. } => Some(*member_epoch),
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
        "protocol = \"consumer\"\non_partitions_assigned_ms = 1000\non_partitions_revoked_ms = 1000",
        "",
    );
    kip_848_member_given(&mut h, vec![0, 1]);
    h.run_until(500);
    answer_a_heartbeat_in_flight(&mut h, consumer_heartbeat_ok(2, Some(vec![1])));
    h.take_sent();
    // The first reconciliation ends at 1,010 ms: acknowledged, and the newer one (revoke
    // orders-0) starts.
    h.run_until(1_020);
    assert!(h.facts.contains(&Fact::Revoked {
        member: 0,
        partitions: vec![0]
    }));
    h.respond(1_025, consumer_heartbeat_ok(2, None));
    assert_eq!(h.consumer.kip848().state, MemberState::Reconciling);
    h.take_sent();
    // The revocation's callback ends at 2,010 ms and the (empty) assign callback's at 3,010
    // ms: the newer target is acknowledged.
    h.run_until(3_020);
    let owned = heartbeats_owned(&mut h);
    assert_eq!(owned, [Some(vec![1])]);
    h.respond(3_030, consumer_heartbeat_ok(2, None));
    assert_eq!(h.consumer.kip848().state, MemberState::Stable);
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
    // onPartitionsAssigned [orders-0] runs from 10 ms to 110 ms, while a heartbeat is out.
    kip_848_member_given(&mut h, vec![0]);
    h.call(|c, _| c.kip848().in_flight = true);
    h.take_sent();
    h.run_until(150);
    let heartbeat = |r: &Request| matches!(r, Request::ConsumerGroupHeartbeat { .. });
    assert!(
        !h.take_sent().iter().any(heartbeat),
        "the acknowledgement waits for the answer"
    );
    h.respond(
        150,
        Response::OffsetFetch {
            committed: vec![(0, None)],
        },
    );
    h.respond(200, consumer_heartbeat_ok(3, Some(vec![0, 1])));
    h.run_until(1_000);
    let owned = heartbeats_owned(&mut h);
    assert_eq!(
        owned,
        [Some(vec![0, 1])],
        "one heartbeat, after reconciling"
    );
}

/// A KIP-848 member owning orders-0 and orders-1 at epoch 2, busy, that stalls at 1 s for 20 s
/// with a 10 s poll interval; its heartbeat of 5,011 ms is answered.
fn kip_848_member_stalled_past_its_poll_interval() -> Harness {
    let mut h = Harness::new(
        "protocol = \"consumer\"\nmax_poll_interval_ms = 10000\nrecord_processing_us = 1000",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 400\n",
    );
    h.call(|c, env| c.start(env, 1, None));
    h.run_until(0);
    h.respond(0, Response::FindCoordinator { broker: 0 });
    h.respond(10, consumer_heartbeat_ok(2, Some(vec![0, 1])));
    h.respond(15, consumer_heartbeat_ok(2, None));
    h.respond(
        16,
        Response::OffsetFetch {
            committed: (0..2).map(|p| (p, None)).collect(),
        },
    );
    h.run_until(1_000);
    h.call(|c, env| c.stall(env, Duration::from_millis(20_000)));
    h.run_until(5_011);
    h.respond(5_015, consumer_heartbeat_ok(2, None));
    h
}

#[test]
fn a_stale_kip_848_member_ignores_the_answer_to_a_heartbeat_sent_before_its_poll_timeout() {
    // A heartbeat in flight when the poll timer expires is answered with a new assignment; the
    // member is STALE by then (it left and gave up what it owned), and Kafka ignores the answer
    // (ConsumerMembershipManager.onHeartbeatSuccess: isNotInGroup), so it reconciles nothing and
    // rejoins with epoch 0 once it polls again.
    let mut h = kip_848_member_stalled_past_its_poll_interval();
    // The next heartbeat goes at 10,015 and is still unanswered when the poll timer expires.
    h.run_until(10_020);
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
            Request::ConsumerGroupHeartbeat {
                member_epoch: 0,
                ..
            }
        )
    });
    assert!(rejoin.is_some(), "rejoins with epoch 0 after the stall");
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
        .any(|(_, r)| matches!(r, Request::OffsetCommit { .. }))
    {
        t += 1;
        assert!(t < 4000, "no onJoinPrepare commit: {:?}", h.sent);
        h.run_until(t);
    }
    h.take_sent();
    h.call(|c, env| c.close(env));
    h.respond(
        t + 5,
        Response::OffsetCommit {
            error: ErrorCode::None,
        },
    );
    let sent = h.take_sent();
    assert!(
        !sent.iter().any(|r| matches!(r, Request::JoinGroup { .. })),
        "{sent:?}"
    );
    assert!(
        matches!(sent.last(), Some(Request::OffsetCommit { .. })),
        "{sent:?}"
    );
    h.respond(
        t + 10,
        Response::OffsetCommit {
            error: ErrorCode::None,
        },
    );
    let sent = h.take_sent();
    assert!(
        matches!(&sent[..], [Request::LeaveGroup { .. }]),
        "{sent:?}"
    );
    assert!(h.facts.contains(&Fact::ProcessStopped { member: 0 }));
}

#[test]
fn a_restart_of_a_process_still_running_ends_the_old_ones_ownership() {
    // The old process (a close still in progress, say) is killed before the new one starts:
    // what it owned is no longer owned, as after a crash.
    let mut h = Harness::new("assignors = [\"range\"]", "");
    join_group(&mut h);
    h.run_until(1000);
    h.facts.clear();
    h.call(|c, env| c.start(env, 2, None));
    assert_eq!(
        &h.facts[..2],
        &[
            Fact::Crashed {
                member: 0,
                owned: vec![0, 1, 2, 3]
            },
            Fact::ProcessStarted { member: 0 }
        ]
    );
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
    if let Response::JoinGroup {
        skip_assignment, ..
    } = &mut answer
    {
        *skip_assignment = true;
    }
    h.respond(10, answer);
    let sent = h.take_sent();
    assert!(
        matches!(
            &sent[..],
            [Request::SyncGroup {
                assignments: None,
                ..
            }]
        ),
        "a skipped assignment sends none: {sent:?}"
    );
    assert!(h.facts.contains(&Fact::LeaderElected {
        member: 0,
        skip_assignment: true,
        partition_counts: vec![4],
    }));
    h.respond(20, sync_ok(vec![0, 1, 2, 3]));
    h.respond(
        30,
        Response::OffsetFetch {
            committed: (0..4).map(|p| (p, None)).collect(),
        },
    );
    h.run_until(9000);
    assert!(!h
        .take_sent()
        .iter()
        .any(|r| matches!(r, Request::JoinGroup { .. })));
    h.run_until(9500);
    h.take_sent();
    // The refresh at 10 s sees 6 partitions; onJoinPrepare commits, then the JoinGroup.
    commit_on_join_prepare(&mut h);
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup { .. }))
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
    h.respond(
        t + 20,
        Response::SyncGroup {
            error: ErrorCode::UnknownMemberId,
            protocol_type: Some("consumer".into()),
            protocol_name: Some("range".into()),
            assignment: None,
        },
    );
    h.run_until(t + 2000);
    let joins: Vec<&str> = h
        .take_sent()
        .iter()
        .filter(|r| matches!(r, Request::JoinGroup { .. }))
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
    h.respond(t + 10, Response::join_error(ErrorCode::UnknownMemberId, ""));
    h.run_until(t + 2000);
    assert!(h.facts.contains(&Fact::Lost {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
    let joins: Vec<(String, Vec<usize>)> = h
        .take_sent()
        .iter()
        .filter(|r| matches!(r, Request::JoinGroup { .. }))
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
    h.respond(0, Response::FindCoordinator { broker: 0 });
    h.respond(10, consumer_heartbeat_ok(2, Some(vec![0, 1, 2, 3])));
    h.respond(15, consumer_heartbeat_ok(2, None));
    h.respond(
        16,
        Response::OffsetFetch {
            committed: (0..4).map(|p| (p, None)).collect(),
        },
    );
    h.run_until(5_011);
    // The answer to the interval's heartbeat takes t-2 and t-3 away: a 6 s revoke callback.
    h.respond(5_020, consumer_heartbeat_ok(3, Some(vec![0, 1])));
    h.take_sent();
    let revoked = Fact::Revoked {
        member: 0,
        partitions: vec![2, 3],
    };
    // Step the clock, answer every heartbeat, note what each reported and when.
    let mut revoked_at = None;
    let mut beats = Vec::new();
    for t in (5_100..20_000).step_by(100) {
        h.run_until(t);
        if revoked_at.is_none() && h.facts.contains(&revoked) {
            revoked_at = Some(t);
        }
        for r in h.take_sent() {
            if let Request::ConsumerGroupHeartbeat { owned, .. } = &r {
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

/// A poll every 3 ms for 3 s, each batch processed at once, from fetch positions at 0 on
/// `owned`; `change` may move the assignment before each poll. The batches by time.
type Batches = Vec<(u64, Vec<(usize, u64, u64)>)>;
fn batches_every_3_ms(
    group: &str,
    extra: &str,
    scan_at_most: usize,
    owned: &[usize],
    change: impl Fn(u64, &mut Consumer, &mut ClientEnv),
) -> Batches {
    let mut h = Harness::new(group, extra);
    h.consumer.positions.scan_at_most = Some(scan_at_most);
    h.call(|c, env| {
        for &p in owned {
            c.set_position(env, p, 0);
        }
    });
    let mut seen = Vec::new();
    let mut batch = Vec::new();
    for t_ms in (0..3_000).step_by(3) {
        h.now = SimTime::from_millis(t_ms);
        h.call(|c, env| {
            change(t_ms, c, env);
            c.take_batch(env, &mut batch);
            for &(p, _, to) in &batch {
                c.set_position(env, p, to);
            }
        });
        seen.push((t_ms, batch.clone()));
    }
    seen
}

/// A member with a few partitions scans them all at every poll; with many it pops the ready
/// ones from a heap. Both must give the same batches, round-robin from the same partition
/// (a scan that started at partition 0 every time once moved every join figure).
#[test]
fn scanning_the_positions_and_popping_the_ready_heap_give_the_same_batches() {
    let extra = "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 900\n";
    let group = "max_poll_records = 7";
    // The round-robin start moves on from poll to poll.
    let batches =
        |scan_at_most| batches_every_3_ms(group, extra, scan_at_most, &[0, 1, 2, 3], |_, _, _| {});
    let scanned = batches(usize::MAX);
    assert!(scanned.iter().filter(|(_, b)| b.len() > 1).count() > 10);
    assert_eq!(scanned, batches(0));
}

/// The heap names entries by index: an assignment that inserts or removes partitions in the
/// middle moves the indexes, and the heap must still give what a scan gives (a key left
/// pointing at the wrong entry would skip a partition or fetch one no longer owned).
#[test]
fn the_ready_heap_follows_partitions_inserted_and_removed_in_the_middle() {
    // A second topic: partitions 4-7.
    let extra = "\n[[topics]]\nname = \"more\"\npartitions = 4\n\
                 \n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 900\n\
                 \n[[producers]]\ntopic = \"more\"\nrecords_per_sec = 900\n";
    // Partitions come and go between and around the owned ones.
    let change = |t_ms: u64, c: &mut Consumer, env: &mut ClientEnv| match t_ms {
        600 => c.set_position(env, 1, 0),
        1200 => c.positions.remove_all(&PartitionLookup::of(&[3])),
        1500 => c.set_position(env, 4, 0),
        2100 => c.positions.remove_all(&PartitionLookup::of(&[0])),
        2400 => c.set_position(env, 3, 0),
        _ => {}
    };
    let batches = |scan_at_most| {
        batches_every_3_ms(
            "max_poll_records = 5",
            extra,
            scan_at_most,
            &[0, 3, 5],
            change,
        )
    };
    let scanned = batches(usize::MAX);
    for p in 0..6 {
        let fetched = scanned.iter().flat_map(|(_, b)| b).any(|&(q, _, _)| q == p);
        assert_eq!(fetched, p != 2, "partition {p} fetched: {fetched}");
    }
    assert_eq!(scanned, batches(0));
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
        .filter(|r| matches!(r, Request::Heartbeat { .. }))
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
        h.respond(
            t + 3,
            Response::Heartbeat {
                error: ErrorCode::None,
            },
        );
    }
    // Up to the last heartbeat answered + the session (28,023), a check is never armed.
    h.run_until(27_000);
    let check = ClientTimer::SessionCheck.key().unwrap();
    assert!(h.keyed[check].is_none());
    assert!(h.disconnects.is_empty());
    assert_eq!(h.consumer.coordinator(), Some(0));
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
            Request::ConsumerGroupHeartbeat {
                member_epoch: -1,
                ..
            }
        )
    };
    assert!(h.take_sent().iter().any(leave));
    // The stall ends at 21 s: the member polls and rejoins with epoch 0.
    h.run_until(22_000);
    let rejoined = h.take_sent().into_iter().any(|r| {
        matches!(
            r,
            Request::ConsumerGroupHeartbeat {
                member_epoch: 0,
                ..
            }
        )
    });
    assert!(rejoined);
    // The leave's answer arrives now; the join's is still to come.
    h.respond(22_100, consumer_heartbeat_ok(-1, None));
    h.run_until(30_000);
    let sent = h.take_sent();
    assert!(!sent.iter().any(leave), "left again: {sent:?}");
    h.respond(30_010, consumer_heartbeat_ok(4, Some(vec![0, 1, 2, 3])));
    assert!(h.facts.contains(&Fact::Assigned {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
}

/// Runs until the poll loop's COOPERATIVE `onJoinPrepare` sends its asynchronous commit,
/// takes it from what was sent and returns when (ms). Nothing else goes out with it: no
/// JoinGroup before the answer, and no periodic auto-commit while `onJoinPrepare` waits
/// (ConsumerCoordinator.poll returns before it).
fn join_prepare_commit_sent(h: &mut Harness) -> u64 {
    let start = h.now.as_millis();
    for t in start..start + 2000 {
        h.run_until(t);
        if let Some(i) = h
            .sent
            .iter()
            .position(|(_, r)| matches!(r, Request::OffsetCommit { .. }))
        {
            let (at, _) = h.sent.remove(i);
            let others = h.sent.iter().filter(|(_, r)| {
                matches!(r, Request::OffsetCommit { .. } | Request::JoinGroup { .. })
            });
            assert_eq!(others.count(), 0, "{:?}", h.sent);
            return at.as_millis();
        }
    }
    panic!("no commit: {:?}", h.sent);
}

/// When the member sent its JoinGroup (ms), if it did.
fn join_group_sent_at(h: &Harness) -> Option<u64> {
    h.sent
        .iter()
        .find(|(_, r)| matches!(r, Request::JoinGroup { .. }))
        .map(|(at, _)| at.as_millis())
}

/// A cooperative member that processes full batches of a second each (100 records of 10 ms).
fn busy_cooperative_member() -> Harness {
    Harness::new(
        "assignors = [\"cooperative-sticky\"]\nauto_commit_interval_ms = 200\n\
         record_processing_us = 10_000\nmax_poll_records = 100",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 200",
    )
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
    h.respond(
        answer,
        Response::OffsetCommit {
            error: ErrorCode::None,
        },
    );
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
    h.respond(
        again + 5,
        Response::OffsetCommit {
            error: ErrorCode::None,
        },
    );
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
    let leave = |r: &Request| matches!(r, Request::LeaveGroup { .. });
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

/// The generation of each OffsetCommit in `sent`.
fn commit_generations(sent: &[Request]) -> Vec<i32> {
    sent.iter()
        .filter_map(|r| match r {
            Request::OffsetCommit { generation, .. } => Some(*generation),
            _ => None,
        })
        .collect()
}

/// `onJoinComplete` restarts the auto-commit timer ("Reschedule the auto commit starting from
/// now"), and no periodic auto-commit goes out while a rebalance runs (ConsumerCoordinator.poll
/// returns before it): one was due all through this rebalance, yet the first after it comes a
/// full interval after the SyncGroup answer.
#[test]
fn the_auto_commit_interval_starts_over_when_a_rebalance_completes() {
    let mut h = Harness::new(
        "assignors = [\"cooperative-sticky\"]\nauto_commit_interval_ms = 1000",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 200",
    );
    join_group(&mut h);
    rejoin_on_rebalance_in_progress(&mut h);
    let joined_at = h.now.as_millis();
    h.respond(
        joined_at + 1500,
        join_ok(2, false, Subscription::default_for_test()),
    );
    let synced = joined_at + 3000;
    h.respond(synced, sync_ok(vec![0, 1, 2, 3]));
    h.run_until(synced + 999);
    assert_eq!(commit_generations(&h.take_sent()), Vec::<i32>::new());
    h.run_until(synced + 1100);
    assert_eq!(commit_generations(&h.take_sent()), vec![2]);
}

/// An auto-commit that failed with a retriable error sets the auto-commit timer to the retry
/// backoff (`autoCommitOffsetsAsync`'s callback): the next one goes out once the coordinator is
/// found again, not an interval later.
#[test]
fn a_retriable_auto_commit_failure_brings_the_next_one_to_the_retry_backoff() {
    let mut h = Harness::new(
        "assignors = [\"range\"]",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 200",
    );
    join_group(&mut h);
    let first = first_auto_commit_sent(&mut h);
    commit_fails_until_the_coordinator_is_found(&mut h, first + 5, first + 150);
    h.run_until(first + 400);
    assert_eq!(commit_generations(&h.take_sent()), vec![1]);
}

/// A range member of generation 1 whose first auto-commit (an interval after its SyncGroup
/// answer) is answered with `error`; returns what it sent after the answer, by 200 ms later.
fn first_auto_commit_answered(error: ErrorCode) -> (Harness, Vec<Request>) {
    let mut h = Harness::new(
        "assignors = [\"range\"]",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 200",
    );
    join_group(&mut h);
    let at = first_auto_commit_sent(&mut h);
    h.respond(at + 5, Response::OffsetCommit { error });
    h.run_until(at + 200);
    let sent = h.take_sent();
    (h, sent)
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
            .find(|r| matches!(r, Request::JoinGroup { .. }))
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
    h.respond(
        now,
        Response::OffsetCommit {
            error: ErrorCode::None,
        },
    );
    assert!(h.facts.contains(&Fact::Revoked {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup { .. }))
        .expect("a JoinGroup");
    let (id, subscription, reason) = join_subscription(join);
    assert_eq!((id, subscription.generation), (ID, Some(1)));
    assert_eq!(reason, JoinReason::Rebalance);
}

/// Runs past the first auto-commit (an interval after generation 1's SyncGroup answer), drops
/// what was sent and returns when it went out (ms).
fn first_auto_commit_sent(h: &mut Harness) -> u64 {
    h.run_until(5100);
    let at = h
        .sent
        .iter()
        .find(|(_, r)| matches!(r, Request::OffsetCommit { .. }))
        .map(|(at, _)| at.as_millis())
        .expect("the first auto-commit, an interval after the SyncGroup answer");
    h.take_sent();
    at
}

/// The commit in flight fails at `failed` ms (NOT_COORDINATOR: the coordinator is marked
/// unknown); the member looks for it and finds it at `found` ms.
fn commit_fails_until_the_coordinator_is_found(h: &mut Harness, failed: u64, found: u64) {
    h.respond(
        failed,
        Response::Failed {
            request: RequestKind::OffsetCommit,
            error: ErrorCode::NotCoordinator,
        },
    );
    h.run_until(found);
    let lookups = h.take_sent();
    assert!(
        lookups
            .iter()
            .any(|r| matches!(r, Request::FindCoordinator)),
        "{lookups:?}"
    );
    h.respond(found, Response::FindCoordinator { broker: 0 });
}

/// `commitOffsetsSync`: a synchronous commit that failed with a retriable error goes again
/// after `retryBackoff.backoff(attempts++)`: 100, 200, 400, 800 ms for the failures in a row
/// of one call, each with a fifth of jitter (KIP-580), and not before, even when the
/// coordinator it lost is found earlier. A new call backs off from the start.
#[test]
fn a_commit_sync_backs_off_exponentially_within_one_call() {
    let mut h = closing_at_2000();
    let commits = |h: &mut Harness| h.sent_at(|r| matches!(r, Request::OffsetCommit { .. }));
    h.run_until(2010);
    let last = commits(&mut h);
    assert_eq!(last.len(), 1, "close()'s commit: {last:?}");
    let gaps = [(80, 120), (160, 240), (320, 480), (640, 960)];
    let last = retried_after_loading(&mut h, RequestKind::OffsetCommit, last[0], &gaps);
    // NOT_COORDINATOR, the fifth failure: the coordinator is found within 130 ms, the commit
    // waits out its backoff (at least 800 ms) before it goes again.
    let failed_at = last + 5;
    commit_fails_until_the_coordinator_is_found(&mut h, failed_at, failed_at + 130);
    h.run_until(failed_at + 799);
    assert_eq!(commits(&mut h), [0u64; 0]);
    h.run_until(failed_at + 1_001);
    assert_eq!(commits(&mut h).len(), 1);

    // A commitSync after a batch is a new call: its first retry is 80..120 ms again.
    let mut h = Harness::new(
        "assignors = [\"range\"]\ncommit_after_batch = \"sync\"",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 100\n",
    );
    join_group(&mut h);
    for _ in 0..2 {
        h.run_until(h.now.as_millis() + 1_000);
        let sent = commits(&mut h);
        let failed_at = *sent.last().expect("a commit after a batch") + 1;
        h.respond(
            failed_at,
            Response::Failed {
                request: RequestKind::OffsetCommit,
                error: ErrorCode::CoordinatorLoadInProgress,
            },
        );
        h.run_until(failed_at + 200);
        let again = commits(&mut h);
        assert!(
            matches!(again[..], [t] if (80..120).contains(&(t - failed_at))),
            "{again:?}"
        );
        h.respond(
            again[0] + 1,
            Response::OffsetCommit {
                error: ErrorCode::None,
            },
        );
    }
}

/// `fetchCommittedOffsets` backs off the same way between failed OffsetFetches.
#[test]
fn an_offset_fetch_backs_off_exponentially() {
    let mut h = Harness::new("assignors = [\"range\"]", "");
    start_and_find_the_coordinator(&mut h);
    h.respond(10, Response::join_error(ErrorCode::MemberIdRequired, ID));
    let sent = h.take_sent();
    let subscription = join_subscription(&sent[0]).1.clone();
    h.respond(20, join_ok(1, true, subscription));
    h.take_sent();
    h.respond(30, sync_ok(vec![0, 1, 2, 3]));
    let sent = h.sent_at(|r| matches!(r, Request::OffsetFetch { .. }));
    assert_eq!(sent.len(), 1, "{sent:?}");
    let gaps = [(80, 120), (160, 240), (320, 480)];
    retried_after_loading(&mut h, RequestKind::OffsetFetch, sent[0], &gaps);
}

/// The request of `kind`, sent at `sent` ms, fails COORDINATOR_LOAD_IN_PROGRESS 5 ms later,
/// once per entry of `gaps`; each time it goes again (once) `low..high` ms after the failure.
/// Returns when it last went.
fn retried_after_loading(
    h: &mut Harness,
    kind: RequestKind,
    sent: u64,
    gaps: &[(u64, u64)],
) -> u64 {
    let mut last = sent;
    for &(low, high) in gaps {
        let failed_at = last + 5;
        h.respond(
            failed_at,
            Response::Failed {
                request: kind,
                error: ErrorCode::CoordinatorLoadInProgress,
            },
        );
        h.run_until(failed_at + 2 * high);
        let again = h.sent_at(|r| r.kind() == kind);
        assert_eq!(again.len(), 1, "{again:?}");
        let gap = again[0] - failed_at;
        assert!((low..high).contains(&gap), "{gap} ms, not in {low}..{high}");
        last = again[0];
    }
    last
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
        h.respond(
            3025,
            Response::Failed {
                request: RequestKind::Heartbeat,
                error,
            },
        );
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
    assert!(h.consumer.consumer_membership.is_some());
    h.respond(
        20,
        Response::Failed {
            request: RequestKind::ConsumerGroupHeartbeat,
            error: ErrorCode::NotCoordinator,
        },
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
    if let Response::JoinGroup { protocol_name, .. } = &mut answer {
        *protocol_name = Some("no-such-assignor".into());
    }
    h.respond(10, answer);
    h.run_until(60_000);
    let sent = h.take_sent();
    assert!(
        !sent.iter().any(|r| matches!(
            r,
            Request::SyncGroup { .. } | Request::Heartbeat { .. } | Request::JoinGroup { .. }
        )),
        "{sent:?}"
    );
    assert!(h.facts.contains(&Fact::FatalError {
        member: 0,
        error: "the leader's assignor failed",
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
    assert!(matches!(&sent[..], [Request::JoinGroup { .. }]), "{sent:?}");
    let loading = |request| Response::Failed {
        request,
        error: ErrorCode::CoordinatorLoadInProgress,
    };
    h.respond(10, loading(RequestKind::JoinGroup));
    assert_eq!(h.consumer.coordinator(), Some(0));
    h.run_until(109);
    let sent = h.take_sent();
    assert!(sent.is_empty(), "asleep in joinGroupIfNeeded: {sent:?}");
    h.run_until(110);
    let sent = h.take_sent();
    assert!(matches!(&sent[..], [Request::JoinGroup { .. }]), "{sent:?}");
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
    let sent = h.sent_at(|r| matches!(r, Request::ConsumerGroupHeartbeat { .. }));
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
    let joins =
        |h: &mut Harness| h.sent_at(|r| matches!(r, Request::ConsumerGroupHeartbeat { .. }));
    assert_eq!(joins(&mut h), [0]);
    for at in [3, 7] {
        h.respond(at, loading(RequestKind::ConsumerGroupHeartbeat));
        assert_eq!(joins(&mut h), [at], "JOINING: at once");
    }
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
    h.respond(
        20,
        Response::OffsetFetch {
            committed: vec![(0, None)],
        },
    );
    let heartbeats =
        |h: &mut Harness| h.sent_at(|r| matches!(r, Request::ConsumerGroupHeartbeat { .. }));
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

/// `Heartbeat.failHeartbeat`: after a failed heartbeat the next waits `retry.backoff.ms`,
/// doubled per failure in a row up to `retry.backoff.max.ms`, with a fifth of jitter
/// (KIP-580), sent on the heartbeat thread's first pass (every `retry.backoff.ms` from the
/// failure) after it; an answered heartbeat ends the run of failures.
#[test]
fn a_classic_heartbeat_backs_off_exponentially_after_failures_in_a_row() {
    let mut h = Harness::new("assignors = [\"range\"]", "");
    join_group(&mut h);
    let heartbeats = |h: &mut Harness| h.sent_at(|r| matches!(r, Request::Heartbeat { .. }));
    h.run_until(3_100);
    let mut last = heartbeats(&mut h);
    assert_eq!(last.len(), 1, "{last:?}");
    let failed = || Response::Failed {
        request: RequestKind::Heartbeat,
        error: ErrorCode::CoordinatorLoadInProgress,
    };
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
    h.respond(
        last[0] + 5,
        Response::Heartbeat {
            error: ErrorCode::None,
        },
    );
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
    h.respond(
        10,
        Response::JoinGroup {
            error: ErrorCode::None,
            member_id: "c".into(),
            generation: 5,
            protocol_type: Some("consumer".into()),
            protocol_name: Some("sticky".into()),
            leader: "c".into(),
            members,
            skip_assignment: false,
        },
    );
    assert!(h.facts.contains(&Fact::FatalError {
        member: 0,
        error: leader::SPINS_IN_ASSIGNOR,
    }));
    h.call(|c, env| c.close(env));
    // The poll timer runs from the JoinGroup answer (10 ms): nothing but heartbeats before.
    h.run_until(20_000);
    let sent = h.take_sent();
    assert!(
        sent.iter().all(|r| matches!(r, Request::Heartbeat { .. })),
        "{sent:?}"
    );
    assert!(sent.len() >= 5, "{sent:?}");
    h.run_until(40_000);
    let sent = h.take_sent();
    assert!(
        matches!(&sent[..], [Request::LeaveGroup { members }]
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
        .find(|r| matches!(r, Request::JoinGroup { .. }))
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
        h.take_sent()
            .iter()
            .any(|r| matches!(r, Request::Heartbeat { generation: 2, .. })),
        "heartbeats in generation 2"
    );
    h.respond(
        heartbeat_at + 5,
        Response::Heartbeat {
            error: ErrorCode::RebalanceInProgress,
        },
    );
    h.run_until(heartbeat_at + 1000);
    let sent = h.take_sent();
    let join = sent
        .iter()
        .find(|r| matches!(r, Request::JoinGroup { .. }))
        .expect("rejoins");
    let subscription = join_subscription(join).1;
    assert_eq!(
        (subscription.generation, subscription.assigned_generation),
        (Some(2), Some(2))
    );
    assert!(subscription.previous_assignment.is_empty());
}

/// When each FindCoordinator went out before `until_ms` (one at a time), every one answered
/// COORDINATOR_NOT_AVAILABLE at once but the `last`-th, left unanswered.
fn lookups_failing(h: &mut Harness, until_ms: u64, last: usize) -> Vec<u64> {
    let mut sent_at = Vec::new();
    for t in 0..until_ms {
        h.run_until(t);
        let lookups = h
            .take_sent()
            .into_iter()
            .filter(|r| matches!(r, Request::FindCoordinator))
            .count();
        assert!(lookups <= 1, "one lookup at a time");
        if lookups == 1 {
            sent_at.push(t);
            if sent_at.len() == last {
                break;
            }
            h.respond(
                t,
                Response::Failed {
                    request: RequestKind::FindCoordinator,
                    error: ErrorCode::CoordinatorNotAvailable,
                },
            );
        }
    }
    sent_at
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
    h.respond(found, Response::FindCoordinator { broker: 0 });
    assert_eq!(h.consumer.coordinator(), Some(0));
    h.respond(
        found + 2,
        Response::Failed {
            request: RequestKind::ConsumerGroupHeartbeat,
            error: ErrorCode::NotCoordinator,
        },
    );
    let mut next = None;
    for t in found + 2..found + 200 {
        h.run_until(t);
        if h.take_sent()
            .iter()
            .any(|r| matches!(r, Request::FindCoordinator))
        {
            next = Some(t - found);
            break;
        }
    }
    let next = next.expect("looked for again");
    assert!((80..=120).contains(&next), "{next} ms after the answer");
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
    h.respond(10, Response::join_error(ErrorCode::MemberIdRequired, ID));
    h.take_sent();
    // The application subscribes to `orders` alone while the JoinGroup is out.
    h.call(|c, env| c.subscribe(env, vec!["orders".into()]));
    h.respond(20, join_ok(1, false, Subscription::default_for_test()));
    assert!(matches!(&h.take_sent()[..], [Request::SyncGroup { .. }]));
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
        .find(|r| matches!(r, Request::JoinGroup { .. }))
        .unwrap_or_else(|| panic!("no rejoin: {sent:?}"));
    let (_, subscription, reason) = join_subscription(join);
    assert_eq!(reason, JoinReason::Subscription);
    assert_eq!(subscription.topics, vec!["orders".to_string()]);
    assert!(subscription.owned.is_empty());
    assert_eq!(subscription.generation, Some(1));
    assert!(!sent
        .iter()
        .any(|r| matches!(r, Request::OffsetFetch { .. })));
}
