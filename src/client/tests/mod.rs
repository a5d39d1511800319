//! The consumer driven alone: a harness plays the coordinator's part with scripted responses,
//! fires the consumer's timers in order and keeps what it sends and records, with no world
//! around it. Each test follows one path of CLIENT.md. Each membership has its own file:
//! `classic.rs` (the classic `ConsumerCoordinator` and its heartbeat thread: a heartbeat
//! thread's pass, a cooperative revoke-and-rejoin, closing, a poll timeout) and `kip848.rs`
//! (KIP-848's membership manager: the heartbeat's fields, reconciliation, fencing, staleness);
//! this file holds the harness, the helpers both use, and what neither membership owns (the
//! fetcher's batches, commit and offset-fetch retries, a restart).

use super::*;
use crate::app::standby::StandbyPlacement;
use crate::facts::RejoinCause;
use crate::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, FailedResponse,
    FindCoordinatorResponse, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, JoinedMember,
    LeavingMember, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
    OffsetFetchResponse, SyncGroupRequest, SyncGroupResponse,
};
use crate::scenario::{load_str, LoadOptions};
use crate::sim::RngStreams;
use membership::ConsumerMemberState;

mod classic;
mod kip848;

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
    fn respond(&mut self, t_ms: u64, response: impl Into<Response>) {
        let response = response.into();
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
    h.respond(3025, heartbeat_answer(ErrorCode::RebalanceInProgress));
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
    h.respond(0, coordinator_found());
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
            .position(|(_, r)| matches!(r, Request::OffsetCommit(_)))
        {
            let (at, _) = h.sent.remove(i);
            assert!(
                !h.sent
                    .iter()
                    .any(|(_, r)| matches!(r, Request::JoinGroup(_))),
                "the JoinGroup waits for the commit"
            );
            h.respond(t + 5, commit_answer(ErrorCode::None));
            return at.as_millis();
        }
    }
    panic!("no commit: {:?}", h.sent);
}

// The answers the tests give, each response built in one place here: a field added to a
// response touches only its constructor.

/// A JoinGroup answer naming `member_id` in `generation`, with the protocol chosen.
fn joined(
    member_id: &str,
    generation: i32,
    protocol: &str,
    leader: &str,
    members: Vec<JoinedMember>,
) -> Response {
    JoinGroupResponse {
        error: ErrorCode::None,
        member_id: member_id.into(),
        generation,
        protocol_type: Some("consumer".into()),
        protocol_name: Some(protocol.into()),
        leader: leader.into(),
        members,
        skip_assignment: false,
    }
    .into()
}

fn join_ok(generation: i32, leader: bool, subscription: Subscription) -> Response {
    if leader {
        let me = JoinedMember {
            member_id: ID.into(),
            group_instance_id: None,
            subscription,
        };
        joined(ID, generation, "range", ID, vec![me])
    } else {
        joined(ID, generation, "range", "other", Vec::new())
    }
}

/// A SyncGroup answer under range (`assignment` `None`: empty bytes).
fn sync_answer(error: ErrorCode, assignment: Option<Vec<usize>>) -> Response {
    SyncGroupResponse {
        error,
        protocol_type: Some("consumer".into()),
        protocol_name: Some("range".into()),
        assignment,
    }
    .into()
}

fn sync_ok(assignment: Vec<usize>) -> Response {
    sync_answer(ErrorCode::None, Some(assignment))
}

fn heartbeat_answer(error: ErrorCode) -> Response {
    HeartbeatResponse { error }.into()
}

fn commit_answer(error: ErrorCode) -> Response {
    OffsetCommitResponse { error }.into()
}

/// FindCoordinator's answer: broker 0.
fn coordinator_found() -> Response {
    FindCoordinatorResponse { broker: 0 }.into()
}

/// OffsetFetch's answer for partitions `0..n`, none of them committed.
fn nothing_committed(n: usize) -> Response {
    OffsetFetchResponse {
        committed: (0..n).map(|p| (p, None)).collect(),
    }
    .into()
}

/// The world's answer to a request of `kind` that reached no group.
fn failed_answer(kind: RequestKind, error: ErrorCode) -> Response {
    FailedResponse {
        request: kind,
        error,
    }
    .into()
}

fn join_subscription(r: &Request) -> (&str, &Subscription, JoinReason) {
    match r {
        Request::JoinGroup(JoinGroupRequest {
            member_id,
            protocols,
            reason,
            ..
        }) => (member_id, &protocols[0].metadata, *reason),
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
    assert!(
        matches!(&sent[..], [Request::FindCoordinator(_)]),
        "{sent:?}"
    );
    h.respond(0, coordinator_found());
    let sent = h.take_sent();
    assert_eq!(join_subscription(&sent[0]).0, "", "a new member has no id");
    h.respond(
        10,
        JoinGroupResponse::error(ErrorCode::MemberIdRequired, ID),
    );
    let sent = h.take_sent();
    let (id, subscription, _) = join_subscription(&sent[0]);
    assert_eq!(id, ID);
    let subscription = subscription.clone();
    h.respond(20, join_ok(1, true, subscription));
    // The leader ran the assignor: range gives it everything.
    let sent = h.take_sent();
    let Request::SyncGroup(SyncGroupRequest { assignments, .. }) = &sent[0] else {
        panic!("{sent:?}")
    };
    assert_eq!(
        assignments.as_deref(),
        Some(&[(ID.to_string(), vec![0, 1, 2, 3])][..])
    );
    h.respond(30, sync_ok(vec![0, 1, 2, 3]));
    let sent = h.take_sent();
    assert!(
        matches!(&sent[..], [Request::OffsetFetch(OffsetFetchRequest { partitions, .. })] if partitions == &[0, 1, 2, 3])
    );
    h.respond(40, nothing_committed(4));
    assert!(!h.consumer.is_rebalancing());
    assert!(h.facts.contains(&Fact::Assigned {
        member: 0,
        partitions: vec![0, 1, 2, 3]
    }));
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

fn consumer_heartbeat_answer(
    error: ErrorCode,
    epoch: i32,
    interval_ms: i32,
    assignment: Option<Vec<usize>>,
) -> Response {
    ConsumerGroupHeartbeatResponse {
        error,
        member_id: None,
        member_epoch: epoch,
        heartbeat_interval_ms: interval_ms,
        assignment,
    }
    .into()
}

fn consumer_heartbeat_ok(epoch: i32, assignment: Option<Vec<usize>>) -> Response {
    consumer_heartbeat_answer(ErrorCode::None, epoch, 5000, assignment)
}

/// FENCED_MEMBER_EPOCH, as the coordinator answers it (epoch 0, no interval).
fn consumer_heartbeat_fenced() -> Response {
    consumer_heartbeat_answer(ErrorCode::FencedMemberEpoch, 0, 0, None)
}

/// When a KIP-848 member given its partitions at 10 ms runs `onPartitionsAssigned`: the answer
/// only makes it RECONCILING; its idle poll loop passes every `retry.backoff.ms` (100 ms, it
/// owns nothing), the pass at 100 ms clears the `AsyncPollEvent` sent at 0, the one at 200 ms
/// sends the next, whose handling reconciles and queues the callback, and the pass at 300 ms
/// runs it.
const ASSIGNED_AT: u64 = 300;

/// A KIP-848 member starts, finds the coordinator and is given `partitions` at epoch 2 by the
/// answer to its join heartbeat, at 10 ms; the clock stops at [`ASSIGNED_AT`], when its
/// `onPartitionsAssigned` has begun.
fn kip_848_member_given(h: &mut Harness, partitions: Vec<usize>) {
    start_and_find_the_coordinator(h);
    h.take_sent();
    h.respond(10, consumer_heartbeat_ok(2, Some(partitions)));
    h.run_until(ASSIGNED_AT);
}

/// After [`kip_848_member_given`] `n` partitions: its acknowledgement is answered at 305 ms and
/// the committed offsets of orders-0..n at 306 ms, so its poll loop goes on processing.
fn kip_848_acknowledged_and_fetched(h: &mut Harness, n: usize) {
    h.respond(305, consumer_heartbeat_ok(2, None));
    h.respond(306, nothing_committed(n));
}

/// What each KIP-848 heartbeat sent since the last look reported owned (`None`: unchanged).
fn heartbeats_owned(h: &mut Harness) -> Vec<Option<Vec<usize>>> {
    h.take_sent()
        .into_iter()
        .filter_map(|r| match r {
            Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest { owned, .. }) => {
                Some(owned)
            }
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

/// A KIP-848 member owning orders-0 and orders-1 at epoch 2, busy, that stalls at 1 s for 20 s
/// with a 10 s poll interval; its heartbeat of 5,011 ms is answered.
fn kip_848_member_stalled_past_its_poll_interval() -> Harness {
    let mut h = Harness::new(
        "protocol = \"consumer\"\nmax_poll_interval_ms = 10000\nrecord_processing_us = 1000",
        "\n[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 400\n",
    );
    h.call(|c, env| c.start(env, 1, None));
    h.run_until(0);
    h.respond(0, coordinator_found());
    h.respond(10, consumer_heartbeat_ok(2, Some(vec![0, 1])));
    h.run_until(ASSIGNED_AT);
    kip_848_acknowledged_and_fetched(&mut h, 2);
    h.run_until(1_000);
    h.call(|c, env| c.stall(env, Duration::from_millis(20_000)));
    h.run_until(5_311);
    h.respond(5_315, consumer_heartbeat_ok(2, None));
    h
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
            .position(|(_, r)| matches!(r, Request::OffsetCommit(_)))
        {
            let (at, _) = h.sent.remove(i);
            let others = h
                .sent
                .iter()
                .filter(|(_, r)| matches!(r, Request::OffsetCommit(_) | Request::JoinGroup(_)));
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
        .find(|(_, r)| matches!(r, Request::JoinGroup(_)))
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

/// The generation of each OffsetCommit in `sent`.
fn commit_generations(sent: &[Request]) -> Vec<i32> {
    sent.iter()
        .filter_map(|r| match r {
            Request::OffsetCommit(OffsetCommitRequest { generation, .. }) => Some(*generation),
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
    h.respond(at + 5, commit_answer(error));
    h.run_until(at + 200);
    let sent = h.take_sent();
    (h, sent)
}

/// Runs past the first auto-commit (an interval after generation 1's SyncGroup answer), drops
/// what was sent and returns when it went out (ms).
fn first_auto_commit_sent(h: &mut Harness) -> u64 {
    h.run_until(5100);
    let at = h
        .sent
        .iter()
        .find(|(_, r)| matches!(r, Request::OffsetCommit(_)))
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
        failed_answer(RequestKind::OffsetCommit, ErrorCode::NotCoordinator),
    );
    h.run_until(found);
    let lookups = h.take_sent();
    assert!(
        lookups
            .iter()
            .any(|r| matches!(r, Request::FindCoordinator(_))),
        "{lookups:?}"
    );
    h.respond(found, coordinator_found());
}

/// `commitOffsetsSync`: a synchronous commit that failed with a retriable error goes again
/// after `retryBackoff.backoff(attempts++)`: 100, 200, 400, 800 ms for the failures in a row
/// of one call, each with a fifth of jitter (KIP-580), and not before, even when the
/// coordinator it lost is found earlier. A new call backs off from the start.
#[test]
fn a_commit_sync_backs_off_exponentially_within_one_call() {
    let mut h = closing_at_2000();
    let commits = |h: &mut Harness| h.sent_at(|r| matches!(r, Request::OffsetCommit(_)));
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
            failed_answer(
                RequestKind::OffsetCommit,
                ErrorCode::CoordinatorLoadInProgress,
            ),
        );
        h.run_until(failed_at + 200);
        let again = commits(&mut h);
        assert!(
            matches!(again[..], [t] if (80..120).contains(&(t - failed_at))),
            "{again:?}"
        );
        h.respond(again[0] + 1, commit_answer(ErrorCode::None));
    }
}

/// `fetchCommittedOffsets` backs off the same way between failed OffsetFetches.
#[test]
fn an_offset_fetch_backs_off_exponentially() {
    let mut h = Harness::new("assignors = [\"range\"]", "");
    start_and_find_the_coordinator(&mut h);
    h.respond(
        10,
        JoinGroupResponse::error(ErrorCode::MemberIdRequired, ID),
    );
    let sent = h.take_sent();
    let subscription = join_subscription(&sent[0]).1.clone();
    h.respond(20, join_ok(1, true, subscription));
    h.take_sent();
    h.respond(30, sync_ok(vec![0, 1, 2, 3]));
    let sent = h.sent_at(|r| matches!(r, Request::OffsetFetch(_)));
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
            failed_answer(kind, ErrorCode::CoordinatorLoadInProgress),
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

/// When each FindCoordinator went out before `until_ms` (one at a time), every one answered
/// COORDINATOR_NOT_AVAILABLE at once but the `last`-th, left unanswered.
fn lookups_failing(h: &mut Harness, until_ms: u64, last: usize) -> Vec<u64> {
    let mut sent_at = Vec::new();
    for t in 0..until_ms {
        h.run_until(t);
        let lookups = h
            .take_sent()
            .into_iter()
            .filter(|r| matches!(r, Request::FindCoordinator(_)))
            .count();
        assert!(lookups <= 1, "one lookup at a time");
        if lookups == 1 {
            sent_at.push(t);
            if sent_at.len() == last {
                break;
            }
            h.respond(
                t,
                failed_answer(
                    RequestKind::FindCoordinator,
                    ErrorCode::CoordinatorNotAvailable,
                ),
            );
        }
    }
    sent_at
}
