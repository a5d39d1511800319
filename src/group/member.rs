//! A consumer group member (client side): the application thread's poll loop and the heartbeat
//! thread, timed as Kafka 4.3.1's classic `KafkaConsumer` runs them
//! (../shared/reference/CLIENT.md), for both rebalance protocols (KIP-429).
//!
//! - The poll loop processes batches of up to `max_poll_records`. A rebalance advances only
//!   inside `poll()`: JoinGroup and SyncGroup responses are handled at the member's next poll (at
//!   once when it is blocked in poll with nothing to process), so a long batch delays it.
//! - The heartbeat thread sends a heartbeat every `heartbeat_interval_ms` while enabled and reads
//!   responses only on its passes (every `retry_backoff_ms`), so a REBALANCE_IN_PROGRESS is
//!   noticed on the pass after it arrives and acted on at the next `poll()`. It is disabled from
//!   the JoinGroup until the JoinGroup response is handled, and it sends LeaveGroup when the poll
//!   interval (`max_poll_interval_ms`) expires.
//! - EAGER: before joining (`onJoinPrepare`) the member commits and revokes everything, so it owns
//!   nothing while the rebalance runs.
//! - COOPERATIVE: it keeps its partitions and processes them while the rebalance runs, joins with
//!   its owned partitions, revokes after SyncGroup only what it lost (`onJoinComplete`) and, if it
//!   lost anything, rejoins at once: the follow-up rebalance hands those partitions out.

use super::leader;
use super::messages::{
    ClientRef, ErrorCode, JoinReason, LeaveReason, Request, Response, Subscription,
};
use crate::app::join::{JoinState, MemberView};
use crate::app::standby::StandbyPlacement;
use crate::assignor::RebalanceProtocol;
use crate::cluster::PartitionSpace;
use crate::facts::Fact;
use crate::log;
use crate::scenario::{CommitAfterBatch, OffsetReset, Recovery, Scenario};
use crate::sim::rng::Stream;
use crate::sim::time::Duration;
use crate::sim::{Out, SimTime};
use crate::workload::partitioner::default_partition;
use crate::workload::producer::Logs;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What a member wants done; the world carries it out.
#[derive(Debug)]
pub enum MemberEffect {
    /// A request to the group coordinator (over the network).
    /// Boxed: effects are moved around, and most are small.
    Send(Box<Request>),
    /// Arm a keyed timer ([`ClientTimer::key`]), replacing the pending one of that key.
    SetTimer {
        timer: ClientTimer,
        at: SimTime,
    },
    /// Cancel the pending keyed timer of that kind, if any.
    CancelTimer(ClientTimer),
    /// A one-shot timer: fires at `at`, never cancelled.
    After {
        timer: ClientTimer,
        at: SimTime,
    },
    Fact(Fact),
}

/// What a member reads of the world in one handler call, and where its effects go. Reads are
/// read-only, except the member's own fetch stream.
pub struct MemberEnv<'a> {
    pub now: SimTime,
    pub scenario: &'a Scenario,
    pub partitions: &'a PartitionSpace,
    pub logs: &'a Logs,
    /// Extra delay before each partition's records reach a consumer.
    pub arrival_lag_us: &'a [u64],
    /// Fetch round trips (a named stream of its own).
    pub fetch: &'a mut Stream,
    /// Previous owners and standby placement, for state recovery.
    pub standby: &'a StandbyPlacement,
    pub out: &'a mut Out<MemberEffect>,
}

impl MemberEnv<'_> {
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Partition counts of every topic as the cluster's metadata has them now.
    pub fn metadata(&self) -> Vec<u32> {
        let now_ms = self.now.as_millis();
        self.scenario
            .topics
            .iter()
            .map(|t| t.partitions_at(now_ms))
            .collect()
    }

    fn send(&mut self, request: Request) {
        self.out.push(MemberEffect::Send(Box::new(request)));
    }

    fn set_timer(&mut self, timer: ClientTimer, at: SimTime) {
        debug_assert!(timer.key().is_some(), "{timer:?} is a one-shot timer");
        self.out.push(MemberEffect::SetTimer { timer, at });
    }

    fn cancel_timer(&mut self, timer: ClientTimer) {
        self.out.push(MemberEffect::CancelTimer(timer));
    }

    fn after(&mut self, at: SimTime, timer: ClientTimer) {
        self.out.push(MemberEffect::After { timer, at });
    }

    fn fact(&mut self, fact: Fact) {
        self.out.push(MemberEffect::Fact(fact));
    }

    fn logging(&self) -> bool {
        self.out.logging()
    }

    fn log_line(&mut self, line: String) {
        self.out.log_line(line);
    }
}

#[derive(Debug)]
pub enum ClientTimer {
    /// The application thread calls `poll()` (an idle wake-up, the end of a stall or of a
    /// rebalance-listener callback).
    Poll,
    /// The batch in progress has been processed.
    BatchDone,
    /// The heartbeat thread sends a heartbeat.
    Heartbeat,
    /// The heartbeat thread's pass reads a heartbeat response.
    HeartbeatRead(ErrorCode),
    /// The heartbeat thread checks the poll timer (max.poll.interval.ms).
    PollTimer,
    /// A rebalance-listener callback has taken its time.
    CallbackDone,
    /// `metadata.max.age.ms` has passed: refresh the cluster metadata.
    MetadataRefresh,
    /// A price partition's state restore has finished.
    RestoreDone(usize),
}

impl ClientTimer {
    /// How many keyed timers a member has.
    pub const KEYS: usize = 4;

    /// The key of a cancellable timer (one pending per member and key); `None` for one-shots.
    pub fn key(&self) -> Option<usize> {
        match self {
            ClientTimer::Poll => Some(0),
            ClientTimer::BatchDone => Some(1),
            ClientTimer::Heartbeat => Some(2),
            ClientTimer::PollTimer => Some(3),
            ClientTimer::HeartbeatRead(_)
            | ClientTimer::CallbackDone
            | ClientTimer::MetadataRefresh
            | ClientTimer::RestoreDone(_) => None,
        }
    }
}

/// Where the member is in the group protocol (the client's `MemberState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Not in a generation, or told to rejoin: joins at the next `poll()`.
    Unjoined,
    AwaitingJoin,
    AwaitingSync,
    Stable,
}

/// What the poll loop does once the synchronous commit it waits on is answered.
#[derive(Debug)]
enum AfterCommit {
    /// `onJoinPrepare`: revoke (EAGER: everything) and send JoinGroup.
    Join,
    /// `close()`: revoke everything and leave.
    Close,
    /// `onJoinComplete` with a cooperative revocation (the listener commits first).
    CompleteJoin(Vec<usize>),
    /// A `commitSync` after a batch.
    Resume,
}

/// What the poll loop does after a rebalance-listener callback has taken its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AfterCallback {
    SendJoin,
    Resume,
}

#[derive(Debug)]
enum App {
    /// Blocked in `poll()` until its `Poll` timer fires (or a response wakes it).
    Idle,
    /// Processing a batch: (partition, from offset, to offset).
    Busy {
        until: SimTime,
        batch: Vec<(usize, u64, u64)>,
    },
    /// Inside a synchronous call: waiting for a commit or committed offsets, or inside a
    /// rebalance-listener callback.
    Blocked,
}

pub struct Member {
    idx: usize,
    incarnation: u32,
    alive: bool,
    closing: bool,
    protocol: RebalanceProtocol,
    /// The subscription (it can change during the run).
    topics: Vec<String>,
    member_id: String,
    generation: Option<i32>,
    phase: Phase,
    rejoin_needed: bool,
    /// Why the next JoinGroup is sent.
    join_reason: JoinReason,
    /// Partition counts per topic as this member's metadata has them.
    metadata: Vec<u32>,
    /// The leader's metadata when it last assigned (`assignmentSnapshot`): a difference seen at
    /// a refresh makes it rejoin.
    assignment_snapshot: Option<Vec<u32>>,
    /// The generation was reset (LeaveGroup on poll timeout, or UNKNOWN_MEMBER_ID): owned
    /// partitions are lost at the next `poll()`.
    membership_lost: bool,
    /// JoinGroup and SyncGroup responses waiting for the application thread's next poll.
    inbox: VecDeque<Response>,
    /// The client's assignment (`SubscriptionState`), ascending.
    owned: Vec<usize>,
    /// The assignment before the last EAGER revocation: StickyAssignor's userData.
    previous_assignment: Vec<usize>,
    /// Fetch positions of owned partitions whose committed offset is known.
    positions: BTreeMap<usize, u64>,
    /// Where processing of each owned partition started in its current assignment.
    start_positions: BTreeMap<usize, u64>,
    /// The local join's state (the latest price per symbol).
    join: JoinState,
    /// Price partitions whose state is being rebuilt.
    restoring: BTreeSet<usize>,
    /// Price partitions whose join state this member holds (processed or restored).
    state_partitions: BTreeSet<usize>,
    /// Partitions not processed while their task restores (`pause_during_restore`).
    paused_for_restore: BTreeSet<usize>,
    /// Each newly assigned partition's previous owner (who a standby replica follows).
    previous_owner: BTreeMap<usize, Option<usize>>,
    after_commit: Option<AfterCommit>,
    awaiting_offsets: bool,
    /// Newly assigned partitions whose committed offsets the next poll fetches.
    pending_fetch: Vec<usize>,
    after_callback: Option<AfterCallback>,
    app: App,
    stalled_until: Option<SimTime>,
    /// A stall that hit while the member had no batch: it applies to the next batch.
    pending_stall: Option<Duration>,
    heartbeat_enabled: bool,
    last_heartbeat_sent: SimTime,
    last_poll: SimTime,
    last_auto_commit: SimTime,
    /// Round-robin start over owned partitions when filling a batch.
    fetch_cursor: usize,
}

impl Member {
    pub fn new(idx: usize) -> Self {
        Member {
            idx,
            incarnation: 0,
            alive: false,
            closing: false,
            protocol: RebalanceProtocol::Eager,
            topics: Vec::new(),
            member_id: String::new(),
            generation: None,
            phase: Phase::Unjoined,
            rejoin_needed: false,
            join_reason: JoinReason::New,
            metadata: Vec::new(),
            assignment_snapshot: None,
            membership_lost: false,
            inbox: VecDeque::new(),
            owned: Vec::new(),
            previous_assignment: Vec::new(),
            positions: BTreeMap::new(),
            start_positions: BTreeMap::new(),
            join: JoinState::default(),
            restoring: BTreeSet::new(),
            state_partitions: BTreeSet::new(),
            paused_for_restore: BTreeSet::new(),
            previous_owner: BTreeMap::new(),
            after_commit: None,
            awaiting_offsets: false,
            pending_fetch: Vec::new(),
            after_callback: None,
            app: App::Idle,
            stalled_until: None,
            pending_stall: None,
            heartbeat_enabled: false,
            last_heartbeat_sent: SimTime::ZERO,
            last_poll: SimTime::ZERO,
            last_auto_commit: SimTime::ZERO,
            fetch_cursor: 0,
        }
    }

    fn name<'e>(&self, env: &'e MemberEnv) -> &'e str {
        &env.scenario.members[self.idx].name
    }

    fn cooperative(&self) -> bool {
        self.protocol == RebalanceProtocol::Cooperative
    }

    /// In a rebalance, or about to start one: not settled.
    pub fn is_rebalancing(&self) -> bool {
        self.alive && (self.phase != Phase::Stable || self.rejoin_needed || !self.inbox.is_empty())
    }

    // ---- Lifecycle (timeline actions) ----

    /// A new process starts (first start or restart): a new consumer with no member id.
    pub fn start(&mut self, env: &mut MemberEnv, incarnation: u32) {
        let idx = self.idx;
        *self = Member::new(idx);
        let spec = &env.scenario.members[idx];
        self.protocol = spec.rebalance_protocol;
        self.topics = spec.topics.clone();
        self.incarnation = incarnation;
        env.fact(Fact::ProcessStarted { member: idx });
        self.alive = true;
        self.last_poll = env.now();
        self.last_auto_commit = env.now();
        self.metadata = env.metadata();
        log!(env, "{} process starts", env.scenario.members[idx].name);
        self.schedule_poll(env, env.now());
        let refresh = env.now() + Duration::from_millis(env.scenario.group.metadata_max_age_ms);
        env.after(refresh, ClientTimer::MetadataRefresh);
    }

    /// `wakeup()` + `close()`: the poll in progress ends after the batch, then close commits,
    /// revokes and leaves.
    pub fn close(&mut self, env: &mut MemberEnv) {
        if !self.alive {
            return;
        }
        self.closing = true;
        env.fact(Fact::CloseRequested { member: self.idx });
        log!(
            env,
            "{} close requested",
            env.scenario.members[self.idx].name
        );
        self.wake(env);
    }

    /// The process dies: nothing more is sent, ownership ends now.
    pub fn crash(&mut self, env: &mut MemberEnv) {
        if !self.alive {
            return;
        }
        self.alive = false;
        env.fact(Fact::Crashed {
            member: self.idx,
            owned: self.owned.clone(),
        });
        log!(
            env,
            "{} crashes owning {}",
            env.scenario.members[self.idx].name,
            env.partitions.list(&self.owned)
        );
    }

    /// `subscribe()` with a new topic list: the member rejoins at its next poll, and (as
    /// `onJoinPrepare` does) a cooperative member first revokes the topics it dropped.
    pub fn subscribe(&mut self, env: &mut MemberEnv, topics: Vec<String>) {
        if !self.alive {
            return;
        }
        log!(
            env,
            "{} subscribes to [{}]",
            self.name(env),
            topics.join(" ")
        );
        self.topics = topics;
        self.request_rejoin(JoinReason::Subscription);
        self.wake(env);
    }

    /// The application's processing stalls for `duration` (a slow call, a GC pause): the batch
    /// in progress, or the next one the poll loop gets, ends that much later. The poll loop is
    /// blocked meanwhile, so a stall past `max_poll_interval_ms` makes the heartbeat thread leave
    /// the group, and the batch that finishes afterwards is zombie processing.
    pub fn stall(&mut self, env: &mut MemberEnv, duration: Duration) {
        if !self.alive {
            return;
        }
        log!(
            env,
            "{} processing stalls for {} ms",
            env.scenario.members[self.idx].name,
            duration.as_millis()
        );
        match &self.app {
            App::Busy { until, .. } => {
                let until = *until + duration;
                self.begin_stall(env, until);
            }
            _ => self.pending_stall = Some(duration),
        }
    }

    /// The poll loop is blocked until `until`, inside the batch in progress.
    fn begin_stall(&mut self, env: &mut MemberEnv, until: SimTime) {
        let App::Busy { batch, .. } = std::mem::replace(&mut self.app, App::Idle) else {
            return;
        };
        // The batch's BatchDone is re-armed (replaced) at the stall's end.
        self.stall_batch(env, until, batch);
    }

    /// `batch` ends at `until`, when the stall that holds it does.
    fn stall_batch(&mut self, env: &mut MemberEnv, until: SimTime, batch: Vec<(usize, u64, u64)>) {
        self.stalled_until = Some(until);
        env.fact(Fact::Stalled {
            member: self.idx,
            until,
        });
        self.busy_until(env, until, batch);
    }

    /// The application processes `batch` until `until`.
    fn busy_until(&mut self, env: &mut MemberEnv, until: SimTime, batch: Vec<(usize, u64, u64)>) {
        env.set_timer(ClientTimer::BatchDone, until);
        self.app = App::Busy { until, batch };
    }

    // ---- Events ----

    fn schedule_poll(&mut self, env: &mut MemberEnv, at: SimTime) {
        env.set_timer(ClientTimer::Poll, at);
        self.app = App::Idle;
    }

    /// A member blocked in `poll()` with nothing to process returns at once.
    fn wake(&mut self, env: &mut MemberEnv) {
        if matches!(self.app, App::Idle) {
            self.schedule_poll(env, env.now());
        }
    }

    pub fn on_timer(&mut self, env: &mut MemberEnv, to: ClientRef, timer: ClientTimer) {
        if !self.alive || to.incarnation != self.incarnation {
            return;
        }
        match timer {
            ClientTimer::Poll => {
                self.app = App::Idle;
                self.poll(env)
            }
            ClientTimer::CallbackDone => {
                self.app = App::Idle;
                if let Some(after) = self.after_callback.take() {
                    self.after_callback_done(env, after);
                }
                self.poll(env)
            }
            ClientTimer::BatchDone => self.batch_done(env),
            ClientTimer::Heartbeat => self.send_heartbeat(env),
            ClientTimer::HeartbeatRead(error) => self.read_heartbeat(env, error),
            ClientTimer::PollTimer => self.check_poll_timer(env),
            ClientTimer::MetadataRefresh => self.refresh_metadata(env),
            ClientTimer::RestoreDone(p) => self.restore_done(env, p),
        }
    }

    pub fn on_response(&mut self, env: &mut MemberEnv, to: ClientRef, response: Response) {
        if !self.alive || to.incarnation != self.incarnation {
            return;
        }
        match response {
            Response::JoinGroup { .. } | Response::SyncGroup { .. } => {
                self.inbox.push_back(response);
                self.wake(env);
            }
            Response::OffsetFetch { committed } => {
                if !self.awaiting_offsets {
                    return;
                }
                self.awaiting_offsets = false;
                let now = env.now();
                let reset = env.scenario.group.auto_offset_reset;
                let mut started = Vec::new();
                for (p, offset) in committed {
                    if !self.owned.contains(&p) {
                        continue;
                    }
                    let position = offset.unwrap_or_else(|| match reset {
                        OffsetReset::Latest => env.logs.end_offset(p, now),
                        OffsetReset::Earliest => 0,
                    });
                    env.fact(Fact::PositionSet {
                        partition: p,
                        position,
                    });
                    self.positions.insert(p, position);
                    self.start_positions.insert(p, position);
                    started.push(p);
                }
                env.fact(Fact::ProcessingStarted {
                    member: self.idx,
                    partitions: started.clone(),
                });
                for p in started {
                    self.rebuild_state(env, p);
                }
                self.app = App::Idle;
                self.poll(env);
            }
            Response::OffsetCommit { .. } => {
                let Some(after) = self.after_commit.take() else {
                    return;
                };
                self.app = App::Idle;
                match after {
                    AfterCommit::Join => self.prepare_and_join(env),
                    AfterCommit::Close => self.finish_close(env),
                    AfterCommit::CompleteJoin(assignment) => self.complete_join(env, assignment),
                    AfterCommit::Resume => self.poll(env),
                }
            }
            Response::Heartbeat { error } => {
                // Read on the heartbeat thread's next pass.
                let now = env.now();
                let backoff = Duration::from_millis(env.scenario.group.retry_backoff_ms);
                let at = next_pass(self.last_heartbeat_sent, backoff, now);
                env.after(at, ClientTimer::HeartbeatRead(error));
            }
        }
    }

    // ---- The poll loop ----

    fn poll(&mut self, env: &mut MemberEnv) {
        if !self.alive || matches!(self.app, App::Blocked | App::Busy { .. }) {
            return;
        }
        let now = env.now();
        self.last_poll = now;
        if self.closing {
            self.begin_close(env);
            return;
        }
        if self.membership_lost {
            self.membership_lost = false;
            self.inbox.clear();
            if !self.owned.is_empty() {
                let lost = std::mem::take(&mut self.owned);
                log!(
                    env,
                    "{} onPartitionsLost {}",
                    self.name(env),
                    env.partitions.list(&lost)
                );
                env.fact(Fact::Lost {
                    member: self.idx,
                    partitions: lost.clone(),
                });
                self.drop_partitions(&lost, env);
            }
            self.phase = Phase::Unjoined;
        }
        // Responses that arrived since the last poll: one rebalance step each.
        while let Some(response) = self.inbox.pop_front() {
            self.handle_group_response(env, response);
            if !matches!(self.app, App::Idle) || !self.alive {
                return;
            }
        }
        if self.phase == Phase::Unjoined || (self.phase == Phase::Stable && self.rejoin_needed) {
            self.begin_join(env);
            if !matches!(self.app, App::Idle) {
                return;
            }
        }
        if !self.pending_fetch.is_empty() {
            // `updateAssignmentMetadataIfNeeded`: the poll loop waits for committed offsets.
            let partitions = std::mem::take(&mut self.pending_fetch);
            self.awaiting_offsets = true;
            self.app = App::Blocked;
            env.send(Request::OffsetFetch { partitions });
            return;
        }
        self.maybe_auto_commit(env);
        let batch = self.take_batch(env);
        if batch.is_empty() {
            let wake = self.next_wake(env);
            self.schedule_poll(env, wake);
        } else {
            let records: u64 = batch.iter().map(|(_, a, b)| b - a).sum();
            let until =
                now + Duration::from_micros(records * env.scenario.group.record_processing_us);
            match self.pending_stall.take() {
                Some(stall) => self.stall_batch(env, until + stall, batch),
                None => self.busy_until(env, until, batch),
            }
        }
    }

    /// Up to `max_poll_records` fetched records, round-robin over owned partitions.
    fn take_batch(&mut self, env: &mut MemberEnv) -> Vec<(usize, u64, u64)> {
        if self.positions.is_empty() {
            return Vec::new();
        }
        let now = env.now();
        // Records reach the consumer one fetch round trip after they are appended.
        let rtt = env.fetch.between(
            env.scenario.cluster.latency_min_us,
            env.scenario.cluster.latency_max_us,
        ) * 2;
        let mut budget = env.scenario.group.max_poll_records;
        let mut batch = Vec::new();
        let n = self.positions.len();
        let start = self.fetch_cursor % n;
        for (&p, &pos) in self
            .positions
            .iter()
            .skip(start)
            .chain(self.positions.iter().take(start))
        {
            if budget == 0 {
                break;
            }
            if self.paused_for_restore.contains(&p) {
                continue;
            }
            let visible_at = now.as_micros().saturating_sub(rtt + env.arrival_lag_us[p]);
            let end = env
                .logs
                .end_offset_from(p, pos, SimTime::from_micros(visible_at));
            if end > pos {
                let take = (end - pos).min(budget);
                budget -= take;
                batch.push((p, pos, pos + take));
            }
        }
        self.fetch_cursor = (start + 1) % n;
        batch
    }

    /// When a member with nothing to process wakes: the next record it could fetch, or the
    /// fetch's max wait, whichever is first.
    fn next_wake(&self, env: &MemberEnv) -> SimTime {
        let now = env.now();
        let max_wait = now + Duration::from_millis(env.scenario.group.fetch_max_wait_ms);
        let rtt = Duration::from_micros(env.scenario.cluster.latency_max_us * 2);
        let next_record = self
            .positions
            .iter()
            .filter_map(|(&p, &pos)| {
                env.logs
                    .time_of(p, pos)
                    .map(|t| t + Duration::from_micros(env.arrival_lag_us[p]))
            })
            .min()
            .map(|t| (t + rtt).max(now + Duration::from_micros(1)));
        next_record.map_or(max_wait, |t| t.min(max_wait))
    }

    fn batch_done(&mut self, env: &mut MemberEnv) {
        let App::Busy { batch, .. } = std::mem::replace(&mut self.app, App::Idle) else {
            return;
        };
        for &(p, from, to) in &batch {
            self.run_app(env, p, from, to);
        }
        for (p, from, to) in batch {
            env.fact(Fact::Processed {
                member: self.idx,
                partition: p,
                from,
                to,
            });
            if let Some(pos) = self.positions.get_mut(&p) {
                *pos = (*pos).max(to);
            }
        }
        if self.stalled_until.take().is_some() {
            env.fact(Fact::StallEnded { member: self.idx });
        }
        match env.scenario.group.commit_after_batch {
            CommitAfterBatch::Sync if self.generation.is_some() => {
                self.send_commit(env);
                self.block_on_commit(AfterCommit::Resume);
                return;
            }
            CommitAfterBatch::Async => self.send_commit(env),
            _ => {}
        }
        self.poll(env);
    }

    /// The application on records `[from, to)` of partition `p`, in order: prices fill the local
    /// map, notifications look it up.
    fn run_app(&mut self, env: &mut MemberEnv, p: usize, from: u64, to: u64) {
        let Some(app) = env.scenario.app.as_ref() else {
            return;
        };
        let topic = env.partitions.topic(p);
        let now = env.now();
        for offset in from..to {
            let Some(&record) = env.logs.record(p, offset) else {
                continue;
            };
            if topic == app.prices {
                self.join.apply_price(record.key, p, offset);
            } else if topic == app.notifications {
                let latency_us = now.as_micros().saturating_sub(record.time_us);
                if self.join.has(record.key) {
                    env.fact(Fact::Notification {
                        outcome: Ok(()),
                        latency_us,
                    });
                    continue;
                }
                let count = env.scenario.topics[app.prices].partitions_at(record.time_us / 1000);
                let key_name = &env.logs.keys[record.key as usize];
                let home = env.partitions.first(app.prices)
                    + default_partition(key_name.as_bytes(), count) as usize;
                let view = MemberView {
                    owned: &self.owned,
                    positions: &self.positions,
                    restoring: &self.restoring,
                };
                let outcome =
                    self.join
                        .classify(app, env.logs, &view, record.key, record.time_us, home);
                env.fact(Fact::Notification {
                    outcome,
                    latency_us,
                });
            }
        }
    }

    /// Partitions leave this member (revoked or lost): their positions go, and so does their join
    /// state unless the member keeps state across revocations.
    fn drop_partitions(&mut self, parts: &[usize], env: &MemberEnv) {
        for p in parts {
            self.positions.remove(p);
            self.start_positions.remove(p);
            self.restoring.remove(p);
            self.paused_for_restore.remove(p);
        }
        let keep = env
            .scenario
            .app
            .as_ref()
            .is_some_and(|a| a.keep_state_on_revoke);
        if !keep {
            self.join.forget(parts);
            for p in parts {
                self.state_partitions.remove(p);
            }
        }
    }

    /// A price partition was assigned and its start position is known: rebuild its state as the
    /// app's recovery mode says (nothing to do when the member kept it).
    fn rebuild_state(&mut self, env: &mut MemberEnv, p: usize) {
        let Some(app) = env.scenario.app.as_ref() else {
            return;
        };
        if env.partitions.topic(p) != app.prices {
            return;
        }
        // Kept state is current only if nobody else owned the partition in between.
        let previous = self.previous_owner.get(&p).copied().flatten();
        if self.state_partitions.contains(&p) && previous == Some(self.idx) {
            return;
        }
        let now = env.now();
        let start = self.start_positions.get(&p).copied().unwrap_or(0);
        let state = env.logs.compacted(p, start);
        let standby = match app.recovery {
            Recovery::None => {
                // The map starts empty for this partition; only new prices fill it.
                self.state_partitions.insert(p);
                return;
            }
            Recovery::Changelog => false,
            Recovery::Standby => env.standby.standby_holder(previous) == Some(self.idx),
        };
        let records = if standby { 0 } else { state.len() as u64 };
        if records == 0 && !standby {
            // An empty changelog: nothing to replay.
            self.state_partitions.insert(p);
            return;
        }
        let duration = Duration::from_micros(
            (u128::from(records) * 1_000_000 / u128::from(app.restore_records_per_sec)) as u64,
        );
        let name = self.name(env).to_string();
        log!(
            env,
            "{name} restores {} ({} records{})",
            env.partitions.name(p),
            records,
            if standby { ", standby takeover" } else { "" }
        );
        env.fact(Fact::RestoreStarted {
            member: self.idx,
            partition: p,
            standby,
            records,
            duration_us: duration.as_micros(),
        });
        self.restoring.insert(p);
        if app.pause_during_restore {
            // Kafka Streams: the whole task (index p of both topics) waits for its state.
            let index = env.partitions.number(p) as usize;
            let partner = env.partitions.first(app.notifications) + index;
            self.paused_for_restore.insert(p);
            if partner < env.partitions.len() && env.partitions.topic(partner) == app.notifications
            {
                self.paused_for_restore.insert(partner);
            }
        }
        env.after(now + duration, ClientTimer::RestoreDone(p));
    }

    fn restore_done(&mut self, env: &mut MemberEnv, p: usize) {
        if !self.restoring.remove(&p) {
            return; // revoked meanwhile
        }
        let start = self.start_positions.get(&p).copied().unwrap_or(0);
        for (key, offset) in env.logs.compacted(p, start) {
            self.join.restore(key, p, offset);
        }
        self.state_partitions.insert(p);
        let paused: Vec<usize> = self.paused_for_restore.iter().copied().collect();
        let index = env.partitions.number(p);
        for q in paused {
            if env.partitions.number(q) == index {
                self.paused_for_restore.remove(&q);
            }
        }
        log!(
            env,
            "{} restored {}",
            self.name(env),
            env.partitions.name(p)
        );
        self.wake(env);
    }

    fn maybe_auto_commit(&mut self, env: &mut MemberEnv) {
        let g = &env.scenario.group;
        if !g.enable_auto_commit || self.positions.is_empty() {
            return;
        }
        let now = env.now();
        if now - self.last_auto_commit >= Duration::from_millis(g.auto_commit_interval_ms) {
            self.last_auto_commit = now;
            self.send_commit(env);
        }
    }

    fn send_commit(&mut self, env: &mut MemberEnv) {
        let Some(generation) = self.generation else {
            return;
        };
        let offsets = self.positions.iter().map(|(&p, &o)| (p, o)).collect();
        let request = Request::OffsetCommit {
            member_id: self.member_id.clone(),
            generation,
            offsets,
        };
        env.send(request);
    }

    fn block_on_commit(&mut self, after: AfterCommit) {
        self.after_commit = Some(after);
        self.app = App::Blocked;
    }

    /// A rebalance-listener callback takes `ms`: the poll loop is blocked, then goes on with
    /// `after`.
    fn callback(&mut self, env: &mut MemberEnv, ms: u64, after: AfterCallback) {
        if ms == 0 {
            self.after_callback_done(env, after);
            return;
        }
        self.after_callback = Some(after);
        self.app = App::Blocked;
        let at = env.now() + Duration::from_millis(ms);
        env.after(at, ClientTimer::CallbackDone);
    }

    fn after_callback_done(&mut self, env: &mut MemberEnv, after: AfterCallback) {
        match after {
            AfterCallback::SendJoin => self.send_join(env),
            AfterCallback::Resume => {}
        }
    }

    // ---- The rebalance ----

    /// One JoinGroup or SyncGroup response, handled by the application thread.
    fn handle_group_response(&mut self, env: &mut MemberEnv, response: Response) {
        match response {
            Response::JoinGroup {
                error,
                member_id,
                generation,
                protocol,
                leader,
                members,
                skip_assignment,
            } if self.phase == Phase::AwaitingJoin => match error {
                ErrorCode::None => {
                    self.member_id = member_id;
                    self.generation = Some(generation);
                    // The heartbeat thread is enabled again, its timers reset (AbstractCoordinator).
                    self.enable_heartbeat(env);
                    let name = self.name(env).to_string();
                    let is_leader = leader == self.member_id;
                    log!(
                        env,
                        "{name} JoinGroup response: generation {generation}{}",
                        if is_leader { " (leader)" } else { "" }
                    );
                    let assignments = if is_leader && !skip_assignment {
                        let protocol = protocol.unwrap_or_default();
                        self.assignment_snapshot = Some(self.metadata.clone());
                        match leader::assign(
                            env.scenario,
                            env.partitions,
                            &protocol,
                            self.protocol,
                            &members,
                            &self.metadata,
                        ) {
                            Ok(a) => Some(a),
                            Err(e) => {
                                log!(env, "{name} assignor {protocol} failed: {e}");
                                Some(Vec::new())
                            }
                        }
                    } else {
                        None
                    };
                    self.phase = Phase::AwaitingSync;
                    let request = Request::SyncGroup {
                        member_id: self.member_id.clone(),
                        generation,
                        assignments,
                    };
                    env.send(request);
                }
                ErrorCode::MemberIdRequired => {
                    self.member_id = member_id;
                    self.send_join(env);
                }
                ErrorCode::InconsistentGroupProtocol => {
                    // A configuration error: KafkaConsumer.poll throws and the application exits.
                    log!(
                        env,
                        "{} JoinGroup: INCONSISTENT_GROUP_PROTOCOL, the consumer fails",
                        self.name(env)
                    );
                    env.fact(Fact::FatalError {
                        member: self.idx,
                        error: "INCONSISTENT_GROUP_PROTOCOL",
                    });
                    env.fact(Fact::Crashed {
                        member: self.idx,
                        owned: self.owned.clone(),
                    });
                    self.alive = false;
                }
                _ => {
                    self.reset_generation(true);
                    self.send_join(env);
                }
            },
            Response::SyncGroup { error, assignment } if self.phase == Phase::AwaitingSync => {
                match error {
                    ErrorCode::None => {
                        let revokes = self.owned.iter().any(|p| !assignment.contains(p));
                        if revokes
                            && env.scenario.group.commit_on_revoke
                            && self.generation.is_some()
                        {
                            // The rebalance listener commits before giving partitions up.
                            self.send_commit(env);
                            self.block_on_commit(AfterCommit::CompleteJoin(assignment));
                            return;
                        }
                        self.complete_join(env, assignment);
                    }
                    ErrorCode::RebalanceInProgress => {
                        self.phase = Phase::Unjoined;
                    }
                    other => {
                        self.reset_generation(other == ErrorCode::UnknownMemberId);
                        self.membership_lost = true;
                        self.phase = Phase::Unjoined;
                    }
                }
            }
            // A response for a step the member has left behind.
            _ => {}
        }
    }

    /// `onJoinComplete`: revoke what was lost (COOPERATIVE) and ask to rejoin, take the new
    /// assignment, fetch committed offsets for what was added.
    fn complete_join(&mut self, env: &mut MemberEnv, assignment: Vec<usize>) {
        let revoked: Vec<usize> = self
            .owned
            .iter()
            .copied()
            .filter(|p| !assignment.contains(p))
            .collect();
        let added: Vec<usize> = assignment
            .iter()
            .copied()
            .filter(|p| !self.owned.contains(p))
            .collect();
        let name = self.name(env).to_string();
        if !revoked.is_empty() {
            log!(
                env,
                "{name} onPartitionsRevoked {}",
                env.partitions.list(&revoked)
            );
            env.fact(Fact::Revoked {
                member: self.idx,
                partitions: revoked.clone(),
            });
            self.drop_partitions(&revoked, env);
        }
        for &p in &added {
            self.previous_owner.insert(p, env.standby.last_owner(p));
        }
        log!(
            env,
            "{name} onPartitionsAssigned {}",
            env.partitions.list(&added)
        );
        env.fact(Fact::Assigned {
            member: self.idx,
            partitions: added.clone(),
        });
        self.owned = assignment;
        self.phase = Phase::Stable;
        if added.is_empty() {
            env.fact(Fact::ProcessingStarted {
                member: self.idx,
                partitions: Vec::new(),
            });
        }
        // Committed offsets for what was added are fetched by the next poll, after the callbacks
        // and after a cooperative member that gave something up has rejoined (`requestRejoin`).
        self.pending_fetch = added;
        if !revoked.is_empty() {
            self.request_rejoin(JoinReason::FollowUp);
        }
        let g = &env.scenario.group;
        let revoke_ms = if revoked.is_empty() {
            0
        } else {
            g.on_partitions_revoked_ms
        };
        self.callback(
            env,
            revoke_ms + g.on_partitions_assigned_ms,
            AfterCallback::Resume,
        );
    }

    /// `onJoinPrepare`: auto-commit synchronously (if enabled), then revoke and join.
    fn begin_join(&mut self, env: &mut MemberEnv) {
        self.rejoin_needed = false;
        self.metadata = env.metadata();
        self.inbox.clear();
        self.disable_heartbeat(env);
        if !self.auto_commit_sync(env, AfterCommit::Join) {
            self.prepare_and_join(env);
        }
    }

    /// The synchronous auto-commit of `onJoinPrepare` and `close()`: when auto-commit is on and
    /// there is something to commit, sends it and blocks the poll loop until the answer, then
    /// goes on with `after`. Returns whether it did.
    fn auto_commit_sync(&mut self, env: &mut MemberEnv, after: AfterCommit) -> bool {
        let commits = env.scenario.group.enable_auto_commit
            && !self.positions.is_empty()
            && self.generation.is_some();
        if commits {
            self.send_commit(env);
            self.block_on_commit(after);
        }
        commits
    }

    /// EAGER revokes everything; COOPERATIVE only the topics no longer subscribed. Then the
    /// JoinGroup, after the revoke callback's time.
    fn prepare_and_join(&mut self, env: &mut MemberEnv) {
        let revoked: Vec<usize> = if self.cooperative() {
            let topics = &self.topics;
            self.owned
                .iter()
                .copied()
                .filter(|&p| !topics.contains(&env.scenario.topics[env.partitions.topic(p)].name))
                .collect()
        } else {
            self.owned.clone()
        };
        if !revoked.is_empty() {
            log!(
                env,
                "{} onPartitionsRevoked {}",
                self.name(env),
                env.partitions.list(&revoked)
            );
            env.fact(Fact::Revoked {
                member: self.idx,
                partitions: revoked.clone(),
            });
            self.owned.retain(|p| !revoked.contains(p));
            self.drop_partitions(&revoked, env);
            if !self.cooperative() {
                self.previous_assignment = revoked;
            }
            let ms = env.scenario.group.on_partitions_revoked_ms;
            self.phase = Phase::AwaitingJoin;
            self.callback(env, ms, AfterCallback::SendJoin);
        } else {
            self.send_join(env);
        }
    }

    fn send_join(&mut self, env: &mut MemberEnv) {
        let spec = &env.scenario.members[self.idx];
        self.phase = Phase::AwaitingJoin;
        let request = Request::JoinGroup {
            member_id: self.member_id.clone(),
            group_instance_id: spec.group_instance_id.clone(),
            client_id: spec.client_id.clone(),
            protocols: spec.assignors.clone(),
            subscription: Subscription {
                topics: self.topics.clone(),
                owned: if self.cooperative() {
                    self.owned.clone()
                } else {
                    Vec::new()
                },
                previous_assignment: self.previous_assignment.clone(),
                generation: self.generation,
            },
            rebalance_timeout_ms: env.scenario.group.max_poll_interval_ms,
            session_timeout_ms: env.scenario.group.session_timeout_ms,
            reason: if self.member_id.is_empty() {
                JoinReason::New
            } else {
                self.join_reason
            },
        };
        let id = self.member_id.clone();
        if id.is_empty() {
            env.fact(Fact::Joining { member: self.idx });
        }
        log!(
            env,
            "{} JoinGroup (member id {})",
            self.name(env),
            if id.is_empty() { "none" } else { &id }
        );
        env.send(request);
    }

    fn request_rejoin(&mut self, reason: JoinReason) {
        if !self.rejoin_needed {
            self.join_reason = reason;
        }
        self.rejoin_needed = true;
    }

    /// A metadata refresh: the leader rejoins when partition counts differ from those it last
    /// assigned with (`ConsumerCoordinator.rejoinNeededOrPending`).
    fn refresh_metadata(&mut self, env: &mut MemberEnv) {
        self.metadata = env.metadata();
        let changed = self
            .assignment_snapshot
            .as_ref()
            .is_some_and(|s| *s != self.metadata);
        if changed && self.phase == Phase::Stable {
            log!(
                env,
                "{} (leader) sees new partitions: rejoin",
                self.name(env)
            );
            self.assignment_snapshot = None;
            self.request_rejoin(JoinReason::Metadata);
            self.wake(env);
        }
        let next = env.now() + Duration::from_millis(env.scenario.group.metadata_max_age_ms);
        env.after(next, ClientTimer::MetadataRefresh);
    }

    fn reset_generation(&mut self, forget_member_id: bool) {
        self.generation = None;
        if forget_member_id {
            self.member_id.clear();
        }
    }

    // ---- Closing ----

    fn begin_close(&mut self, env: &mut MemberEnv) {
        self.closing = false;
        self.disable_heartbeat(env);
        if !self.auto_commit_sync(env, AfterCommit::Close) {
            self.finish_close(env);
        }
    }

    /// `onPartitionsRevoked` for everything, then LeaveGroup (a static member sends none).
    fn finish_close(&mut self, env: &mut MemberEnv) {
        let revoked = std::mem::take(&mut self.owned);
        if !revoked.is_empty() {
            log!(
                env,
                "{} onPartitionsRevoked {} (close)",
                self.name(env),
                env.partitions.list(&revoked)
            );
            env.fact(Fact::RevokedOnClose {
                member: self.idx,
                partitions: revoked.clone(),
            });
        }
        let is_static = env.scenario.members[self.idx].group_instance_id.is_some();
        if !is_static && !self.member_id.is_empty() {
            env.send(Request::LeaveGroup {
                member_id: self.member_id.clone(),
                reason: LeaveReason::Close,
            });
        }
        log!(env, "{} closed", self.name(env));
        env.fact(Fact::ProcessStopped { member: self.idx });
        self.alive = false;
    }

    // ---- The heartbeat thread ----

    fn enable_heartbeat(&mut self, env: &mut MemberEnv) {
        self.disable_heartbeat(env);
        self.heartbeat_enabled = true;
        let now = env.now();
        self.last_heartbeat_sent = now;
        self.last_poll = now;
        let at = now + Duration::from_millis(env.scenario.group.heartbeat_interval_ms);
        env.set_timer(ClientTimer::Heartbeat, at);
        self.arm_poll_timer(env);
    }

    fn disable_heartbeat(&mut self, env: &mut MemberEnv) {
        self.heartbeat_enabled = false;
        env.cancel_timer(ClientTimer::Heartbeat);
        env.cancel_timer(ClientTimer::PollTimer);
    }

    fn send_heartbeat(&mut self, env: &mut MemberEnv) {
        if !self.heartbeat_enabled {
            return;
        }
        let now = env.now();
        self.last_heartbeat_sent = now;
        if let Some(generation) = self.generation {
            let request = Request::Heartbeat {
                member_id: self.member_id.clone(),
                generation,
            };
            env.send(request);
        }
        let at = now + Duration::from_millis(env.scenario.group.heartbeat_interval_ms);
        env.set_timer(ClientTimer::Heartbeat, at);
    }

    fn read_heartbeat(&mut self, env: &mut MemberEnv, error: ErrorCode) {
        if !self.heartbeat_enabled {
            return;
        }
        match error {
            ErrorCode::None => {}
            ErrorCode::RebalanceInProgress => {
                if !self.rejoin_needed {
                    log!(env, "{} heartbeat: REBALANCE_IN_PROGRESS", self.name(env));
                }
                self.rejoin_needed = true;
            }
            other => {
                log!(
                    env,
                    "{} heartbeat: {}, membership lost",
                    self.name(env),
                    other.name()
                );
                self.reset_generation(other != ErrorCode::IllegalGeneration);
                self.membership_lost = true;
                self.request_rejoin(JoinReason::New);
                self.disable_heartbeat(env);
            }
        }
    }

    fn arm_poll_timer(&mut self, env: &mut MemberEnv) {
        let deadline =
            self.last_poll + Duration::from_millis(env.scenario.group.max_poll_interval_ms);
        // The heartbeat thread notices on its first pass after the deadline.
        let backoff = Duration::from_millis(env.scenario.group.retry_backoff_ms);
        let at = next_pass(self.last_heartbeat_sent, backoff, deadline);
        env.set_timer(ClientTimer::PollTimer, at);
    }

    fn check_poll_timer(&mut self, env: &mut MemberEnv) {
        if !self.heartbeat_enabled {
            return;
        }
        let deadline =
            self.last_poll + Duration::from_millis(env.scenario.group.max_poll_interval_ms);
        if env.now() < deadline {
            self.arm_poll_timer(env);
            return;
        }
        // Poll timeout: the heartbeat thread sends LeaveGroup and resets the generation; the
        // partitions are lost when the application thread returns.
        log!(
            env,
            "{} poll timeout: LeaveGroup from the heartbeat thread",
            self.name(env)
        );
        env.send(Request::LeaveGroup {
            member_id: self.member_id.clone(),
            reason: LeaveReason::PollTimeout,
        });
        self.disable_heartbeat(env);
        self.reset_generation(true);
        self.membership_lost = true;
        self.phase = Phase::Unjoined;
    }
}

/// The first heartbeat-thread pass at or after `at`, passes falling every `backoff` from `from`.
fn next_pass(from: SimTime, backoff: Duration, at: SimTime) -> SimTime {
    if at <= from {
        return from;
    }
    let step = backoff.as_micros().max(1);
    let k = (at - from).as_micros().div_ceil(step);
    from + Duration::from_micros(k * step)
}
