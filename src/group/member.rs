//! A consumer group member (client side): the application thread's poll loop and the heartbeat
//! thread, timed as Kafka 4.3.1's classic `KafkaConsumer` runs them
//! (../shared/reference/CLIENT.md), with EAGER rebalancing (KIP-429's cooperative mode comes
//! with its own issue).
//!
//! - The poll loop processes batches of up to `max_poll_records`; a rebalance advances only
//!   inside `poll()`, so a long batch delays it.
//! - The heartbeat thread sends a heartbeat every `heartbeat_interval_ms` while enabled, and reads
//!   responses only on its passes (every `retry_backoff_ms`), so a REBALANCE_IN_PROGRESS is
//!   noticed on the pass after it arrives and acted on at the next `poll()`. It is disabled from
//!   the JoinGroup until the JoinGroup response, and it sends LeaveGroup when the poll interval
//!   (`max_poll_interval_ms`) expires.
//! - EAGER: before joining, the member commits (auto-commit) and revokes everything, so it owns
//!   nothing and reacts to each response as soon as it arrives.

use super::leader;
use super::messages::{ClientRef, ErrorCode, LeaveReason, Request, Response, Subscription};
use crate::engine::{Env, Event};
use crate::scenario::OffsetReset;
use crate::sim::queue::TimerId;
use crate::sim::time::Duration;
use crate::sim::SimTime;
use std::collections::BTreeMap;

#[derive(Debug)]
pub enum ClientTimer {
    /// The application thread calls `poll()` (an idle wake-up or the end of a stall).
    Poll,
    /// The batch in progress has been processed.
    BatchDone,
    /// The heartbeat thread sends a heartbeat.
    Heartbeat,
    /// The heartbeat thread's pass reads a heartbeat response.
    HeartbeatRead(ErrorCode),
    /// The heartbeat thread checks the poll timer (max.poll.interval.ms).
    PollTimer,
}

/// Where the member is in the group protocol (the client's `MemberState` plus the steps
/// `ConsumerCoordinator` waits on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Not in a generation: joins at the next `poll()`.
    Unjoined,
    /// `onJoinPrepare`'s synchronous auto-commit is in flight.
    CommittingBeforeJoin,
    AwaitingJoin,
    AwaitingSync,
    /// The assignment is in; committed offsets are being fetched.
    FetchingOffsets,
    Stable,
    /// `close()`'s synchronous auto-commit is in flight.
    CommittingBeforeClose,
}

#[derive(Debug)]
enum App {
    /// Blocked in `poll()` until the timer fires (or a response wakes it).
    Idle(Option<TimerId>),
    /// Processing a batch: (partition, from offset, to offset).
    Busy {
        timer: TimerId,
        until: SimTime,
        batch: Vec<(usize, u64, u64)>,
    },
}

pub struct Member {
    idx: usize,
    incarnation: u32,
    alive: bool,
    closing: bool,
    member_id: String,
    generation: Option<i32>,
    phase: Phase,
    rejoin_needed: bool,
    /// The generation was reset (LeaveGroup on poll timeout, or UNKNOWN_MEMBER_ID): owned
    /// partitions are lost at the next `poll()`.
    membership_lost: bool,
    /// The client's assignment (`SubscriptionState`).
    owned: Vec<usize>,
    /// The assignment before the last EAGER revocation: StickyAssignor's userData.
    previous_assignment: Vec<usize>,
    positions: BTreeMap<usize, u64>,
    app: App,
    stalled_until: Option<SimTime>,
    /// A stall that hit while the member had no batch: it applies to the next batch.
    pending_stall: Option<Duration>,
    heartbeat_enabled: bool,
    heartbeat_timer: Option<TimerId>,
    last_heartbeat_sent: SimTime,
    last_poll: SimTime,
    poll_timer: Option<TimerId>,
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
            member_id: String::new(),
            generation: None,
            phase: Phase::Unjoined,
            rejoin_needed: false,
            membership_lost: false,
            owned: Vec::new(),
            previous_assignment: Vec::new(),
            positions: BTreeMap::new(),
            app: App::Idle(None),
            stalled_until: None,
            pending_stall: None,
            heartbeat_enabled: false,
            heartbeat_timer: None,
            last_heartbeat_sent: SimTime::ZERO,
            last_poll: SimTime::ZERO,
            poll_timer: None,
            last_auto_commit: SimTime::ZERO,
            fetch_cursor: 0,
        }
    }

    fn me(&self) -> ClientRef {
        ClientRef {
            member: self.idx,
            incarnation: self.incarnation,
        }
    }

    fn name<'e>(&self, env: &'e Env) -> &'e str {
        &env.scenario.members[self.idx].name
    }

    /// In a rebalance, or about to start one: not settled.
    pub fn is_rebalancing(&self) -> bool {
        self.alive && (self.phase != Phase::Stable || self.rejoin_needed)
    }

    // ---- Lifecycle (timeline actions) ----

    /// A new process starts (first start or restart): a new consumer with no member id.
    pub fn start(&mut self, env: &mut Env) {
        let idx = self.idx;
        *self = Member::new(idx);
        self.incarnation = env.metrics.process_started(env.now(), idx);
        self.alive = true;
        self.last_poll = env.now();
        self.last_auto_commit = env.now();
        env.log(format!("{} process starts", env.scenario.members[idx].name));
        self.schedule_poll(env, env.now());
    }

    /// `wakeup()` + `close()`: the poll in progress ends after the batch, then close commits,
    /// revokes and leaves.
    pub fn close(&mut self, env: &mut Env) {
        if !self.alive {
            return;
        }
        self.closing = true;
        env.metrics.close_requested(env.now(), self.idx);
        env.log(format!(
            "{} close requested",
            env.scenario.members[self.idx].name
        ));
        if matches!(self.app, App::Idle(_)) && self.stalled_until.is_none() {
            self.schedule_poll(env, env.now());
        }
    }

    /// The process dies: nothing more is sent, ownership ends now.
    pub fn crash(&mut self, env: &mut Env) {
        if !self.alive {
            return;
        }
        self.alive = false;
        let now = env.now();
        env.metrics.crashed(now, self.idx, &self.owned);
        env.log(format!(
            "{} crashes owning {}",
            env.scenario.members[self.idx].name,
            env.partition_list(&self.owned)
        ));
    }

    /// The application's processing stalls for `duration` (a slow call, a GC pause): the batch
    /// in progress, or the next one the poll loop gets, ends that much later. The poll loop is
    /// blocked meanwhile, so a stall past `max_poll_interval_ms` makes the heartbeat thread leave
    /// the group, and the batch that finishes afterwards is zombie processing.
    pub fn stall(&mut self, env: &mut Env, duration: Duration) {
        if !self.alive {
            return;
        }
        env.log(format!(
            "{} processing stalls for {} ms",
            env.scenario.members[self.idx].name,
            duration.as_millis()
        ));
        match std::mem::replace(&mut self.app, App::Idle(None)) {
            App::Busy {
                timer,
                batch,
                until,
            } => {
                env.queue.cancel(timer);
                self.app = App::Busy {
                    timer,
                    until,
                    batch,
                };
                self.begin_stall(env, until + duration);
            }
            idle => {
                self.app = idle;
                self.pending_stall = Some(duration);
            }
        }
    }

    /// The poll loop is blocked until `until`, inside the batch in progress.
    fn begin_stall(&mut self, env: &mut Env, until: SimTime) {
        let App::Busy { timer, batch, .. } = std::mem::replace(&mut self.app, App::Idle(None))
        else {
            return;
        };
        env.queue.cancel(timer);
        let now = env.now();
        self.stalled_until = Some(until);
        env.metrics.stalled(now, self.idx, until);
        let timer = env
            .queue
            .schedule(until, self.event(ClientTimer::BatchDone));
        self.app = App::Busy {
            timer,
            until,
            batch,
        };
    }

    // ---- Events ----

    fn event(&self, timer: ClientTimer) -> Event {
        Event::ClientTimer {
            to: self.me(),
            timer,
        }
    }

    fn schedule_poll(&mut self, env: &mut Env, at: SimTime) {
        if let App::Idle(Some(t)) = self.app {
            env.queue.cancel(t);
        }
        let t = env.queue.schedule(at, self.event(ClientTimer::Poll));
        self.app = App::Idle(Some(t));
    }

    pub fn on_timer(&mut self, env: &mut Env, to: ClientRef, timer: ClientTimer) {
        if !self.alive || to.incarnation != self.incarnation {
            return;
        }
        match timer {
            ClientTimer::Poll => {
                self.app = App::Idle(None);
                self.poll(env)
            }
            ClientTimer::BatchDone => self.batch_done(env),
            ClientTimer::Heartbeat => self.send_heartbeat(env),
            ClientTimer::HeartbeatRead(error) => self.read_heartbeat(env, error),
            ClientTimer::PollTimer => self.check_poll_timer(env),
        }
    }

    pub fn on_response(&mut self, env: &mut Env, to: ClientRef, response: Response) {
        if !self.alive || to.incarnation != self.incarnation {
            return;
        }
        match response {
            Response::JoinGroup {
                error,
                member_id,
                generation,
                protocol,
                leader,
                members,
                skip_assignment,
            } => {
                if self.phase != Phase::AwaitingJoin {
                    return;
                }
                match error {
                    ErrorCode::None => {
                        self.member_id = member_id;
                        self.generation = Some(generation);
                        // Heartbeat thread enabled, its timers reset (AbstractCoordinator).
                        self.enable_heartbeat(env);
                        let name = self.name(env).to_string();
                        let is_leader = leader == self.member_id;
                        env.log({
                            format!(
                                "{name} JoinGroup response: generation {generation}{}",
                                if is_leader { " (leader)" } else { "" }
                            )
                        });
                        let assignments = if is_leader && !skip_assignment {
                            let protocol = protocol.unwrap_or_default();
                            let client_protocol = env.scenario.members[self.idx].rebalance_protocol;
                            match leader::assign(env.scenario, &protocol, client_protocol, &members)
                            {
                                Ok(a) => Some(a),
                                Err(e) => {
                                    env.log(format!("{name} assignor {protocol} failed: {e}"));
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
                        env.to_coordinator(self.me(), request);
                    }
                    ErrorCode::MemberIdRequired => {
                        self.member_id = member_id;
                        self.send_join(env);
                    }
                    ErrorCode::InconsistentGroupProtocol => {
                        // A configuration error: KafkaConsumer.poll throws and the application
                        // exits.
                        env.log(format!(
                            "{} JoinGroup: INCONSISTENT_GROUP_PROTOCOL, the consumer fails",
                            env.scenario.members[self.idx].name
                        ));
                        env.metrics
                            .fatal_error(env.now(), self.idx, "INCONSISTENT_GROUP_PROTOCOL");
                        self.alive = false;
                    }
                    _ => {
                        self.reset_generation(true);
                        self.send_join(env);
                    }
                }
            }
            Response::SyncGroup { error, assignment } => {
                if self.phase != Phase::AwaitingSync {
                    return;
                }
                match error {
                    ErrorCode::None => self.on_assignment(env, assignment),
                    ErrorCode::RebalanceInProgress => {
                        self.phase = Phase::Unjoined;
                        self.schedule_poll(env, env.now());
                    }
                    other => {
                        self.reset_generation(other == ErrorCode::UnknownMemberId);
                        self.phase = Phase::Unjoined;
                        self.schedule_poll(env, env.now());
                    }
                }
            }
            Response::OffsetFetch { committed } => {
                if self.phase != Phase::FetchingOffsets {
                    return;
                }
                let now = env.now();
                let reset = env.scenario.group.auto_offset_reset;
                for (p, offset) in committed {
                    if !self.owned.contains(&p) {
                        continue;
                    }
                    let position = offset.unwrap_or_else(|| match reset {
                        OffsetReset::Latest => env.logs.end_offset(p, now),
                        OffsetReset::Earliest => 0,
                    });
                    env.metrics.position_set(p, position);
                    self.positions.insert(p, position);
                }
                self.phase = Phase::Stable;
                env.metrics.processing_started(now, self.idx, &self.owned);
                self.schedule_poll(env, now);
            }
            Response::OffsetCommit { .. } => match self.phase {
                Phase::CommittingBeforeJoin => self.revoke_and_join(env),
                Phase::CommittingBeforeClose => self.finish_close(env),
                _ => {}
            },
            Response::Heartbeat { error } => {
                // Read on the heartbeat thread's next pass.
                let now = env.now();
                let backoff = Duration::from_millis(env.scenario.group.retry_backoff_ms);
                let at = next_pass(self.last_heartbeat_sent, backoff, now);
                env.queue
                    .schedule(at, self.event(ClientTimer::HeartbeatRead(error)));
            }
        }
    }

    // ---- The poll loop ----

    fn poll(&mut self, env: &mut Env) {
        let now = env.now();
        self.last_poll = now;
        if self.closing {
            self.begin_close(env);
            return;
        }
        if self.membership_lost {
            self.membership_lost = false;
            if !self.owned.is_empty() {
                let lost = std::mem::take(&mut self.owned);
                env.log(format!(
                    "{} onPartitionsLost {}",
                    env.scenario.members[self.idx].name,
                    env.partition_list(&lost)
                ));
                env.metrics.lost(now, self.idx, &lost);
                self.positions.clear();
            }
            self.phase = Phase::Unjoined;
        }
        match self.phase {
            Phase::Unjoined => return self.begin_join(env),
            Phase::Stable if self.rejoin_needed => return self.begin_join(env),
            Phase::Stable => {}
            // Waiting on the coordinator: a response wakes the member.
            _ => return,
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
            let timer = env
                .queue
                .schedule(until, self.event(ClientTimer::BatchDone));
            self.app = App::Busy {
                timer,
                until,
                batch,
            };
            if let Some(stall) = self.pending_stall.take() {
                self.begin_stall(env, until + stall);
            }
        }
    }

    /// Up to `max_poll_records` fetched records, round-robin over owned partitions.
    fn take_batch(&mut self, env: &mut Env) -> Vec<(usize, u64, u64)> {
        let now = env.now();
        // Records reach the consumer one fetch round trip after they are appended.
        let rtt = env.fetch.between(
            env.scenario.cluster.latency_min_us,
            env.scenario.cluster.latency_max_us,
        ) * 2;
        let visible_at = SimTime::from_micros(now.as_micros().saturating_sub(rtt));
        let mut budget = env.scenario.group.max_poll_records;
        let mut batch = Vec::new();
        let parts: Vec<usize> = self.positions.keys().copied().collect();
        if parts.is_empty() {
            return batch;
        }
        let n = parts.len();
        for k in 0..n {
            if budget == 0 {
                break;
            }
            let p = parts[(self.fetch_cursor + k) % n];
            let pos = self.positions[&p];
            let end = env.logs.end_offset(p, visible_at);
            if end > pos {
                let take = (end - pos).min(budget);
                budget -= take;
                batch.push((p, pos, pos + take));
            }
        }
        self.fetch_cursor = (self.fetch_cursor + 1) % n;
        batch
    }

    /// When a member with nothing to process wakes: the next record it could fetch, or the
    /// fetch's max wait, whichever is first.
    fn next_wake(&self, env: &Env) -> SimTime {
        let now = env.now();
        let max_wait = now + Duration::from_millis(env.scenario.group.fetch_max_wait_ms);
        let rtt = Duration::from_micros(env.scenario.cluster.latency_max_us * 2);
        let next_record = self
            .positions
            .iter()
            .filter_map(|(&p, &pos)| env.logs.time_of(p, pos))
            .min()
            .map(|t| (t + rtt).max(now + Duration::from_micros(1)));
        next_record.map_or(max_wait, |t| t.min(max_wait))
    }

    fn batch_done(&mut self, env: &mut Env) {
        let App::Busy { batch, .. } = std::mem::replace(&mut self.app, App::Idle(None)) else {
            return;
        };
        let now = env.now();
        for (p, from, to) in batch {
            env.metrics.processed(now, self.idx, p, from, to);
            if let Some(pos) = self.positions.get_mut(&p) {
                *pos = (*pos).max(to);
            }
        }
        if self.stalled_until.take().is_some() {
            env.metrics.stall_ended(now, self.idx);
        }
        self.poll(env);
    }

    fn maybe_auto_commit(&mut self, env: &mut Env) {
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

    fn send_commit(&mut self, env: &mut Env) {
        let Some(generation) = self.generation else {
            return;
        };
        let offsets = self.positions.iter().map(|(&p, &o)| (p, o)).collect();
        let request = Request::OffsetCommit {
            member_id: self.member_id.clone(),
            generation,
            offsets,
        };
        env.to_coordinator(self.me(), request);
    }

    // ---- Joining (EAGER) ----

    /// `onJoinPrepare`: auto-commit synchronously (if enabled), then revoke and join.
    fn begin_join(&mut self, env: &mut Env) {
        self.rejoin_needed = false;
        self.disable_heartbeat(env);
        if env.scenario.group.enable_auto_commit
            && !self.positions.is_empty()
            && self.generation.is_some()
        {
            self.phase = Phase::CommittingBeforeJoin;
            self.send_commit(env);
        } else {
            self.revoke_and_join(env);
        }
    }

    fn revoke_and_join(&mut self, env: &mut Env) {
        if !self.owned.is_empty() {
            let revoked = std::mem::take(&mut self.owned);
            env.log(format!(
                "{} onPartitionsRevoked {}",
                env.scenario.members[self.idx].name,
                env.partition_list(&revoked)
            ));
            env.metrics.revoked(env.now(), self.idx, &revoked);
            self.previous_assignment = revoked;
        }
        self.positions.clear();
        self.send_join(env);
    }

    fn send_join(&mut self, env: &mut Env) {
        let spec = &env.scenario.members[self.idx];
        self.phase = Phase::AwaitingJoin;
        let request = Request::JoinGroup {
            member_id: self.member_id.clone(),
            group_instance_id: spec.group_instance_id.clone(),
            client_id: spec.client_id.clone(),
            protocols: spec.assignors.clone(),
            subscription: Subscription {
                topics: spec.topics.clone(),
                owned: Vec::new(),
                previous_assignment: self.previous_assignment.clone(),
                generation: self.generation,
            },
            rebalance_timeout_ms: env.scenario.group.max_poll_interval_ms,
            session_timeout_ms: env.scenario.group.session_timeout_ms,
        };
        let name = spec.name.clone();
        let id = self.member_id.clone();
        if id.is_empty() {
            env.metrics.joining(env.now(), self.idx);
        }
        env.log(format!(
            "{name} JoinGroup (member id {})",
            if id.is_empty() { "none" } else { &id }
        ));
        env.to_coordinator(self.me(), request);
    }

    fn on_assignment(&mut self, env: &mut Env, assignment: Vec<usize>) {
        let now = env.now();
        env.log(format!(
            "{} onPartitionsAssigned {}",
            env.scenario.members[self.idx].name,
            env.partition_list(&assignment)
        ));
        env.metrics.assigned(now, self.idx, &assignment);
        self.owned = assignment;
        if self.owned.is_empty() {
            self.phase = Phase::Stable;
            env.metrics.processing_started(now, self.idx, &[]);
            self.schedule_poll(env, now);
        } else {
            self.phase = Phase::FetchingOffsets;
            let request = Request::OffsetFetch {
                partitions: self.owned.clone(),
            };
            env.to_coordinator(self.me(), request);
        }
    }

    fn reset_generation(&mut self, forget_member_id: bool) {
        self.generation = None;
        if forget_member_id {
            self.member_id.clear();
        }
    }

    // ---- Closing ----

    fn begin_close(&mut self, env: &mut Env) {
        self.closing = false;
        self.disable_heartbeat(env);
        if env.scenario.group.enable_auto_commit
            && !self.positions.is_empty()
            && self.generation.is_some()
        {
            self.phase = Phase::CommittingBeforeClose;
            self.send_commit(env);
        } else {
            self.finish_close(env);
        }
    }

    /// `onPartitionsRevoked` for everything, then LeaveGroup (a static member sends none).
    fn finish_close(&mut self, env: &mut Env) {
        let now = env.now();
        let revoked = std::mem::take(&mut self.owned);
        if !revoked.is_empty() {
            env.log(format!(
                "{} onPartitionsRevoked {} (close)",
                env.scenario.members[self.idx].name,
                env.partition_list(&revoked)
            ));
            env.metrics.revoked(now, self.idx, &revoked);
        }
        let is_static = env.scenario.members[self.idx].group_instance_id.is_some();
        if !is_static && !self.member_id.is_empty() {
            env.to_coordinator(
                self.me(),
                Request::LeaveGroup {
                    member_id: self.member_id.clone(),
                    reason: LeaveReason::Close,
                },
            );
        }
        env.log(format!("{} closed", env.scenario.members[self.idx].name));
        env.metrics.process_stopped(now, self.idx);
        self.alive = false;
    }

    // ---- The heartbeat thread ----

    fn enable_heartbeat(&mut self, env: &mut Env) {
        self.disable_heartbeat(env);
        self.heartbeat_enabled = true;
        let now = env.now();
        self.last_heartbeat_sent = now;
        self.last_poll = now;
        let at = now + Duration::from_millis(env.scenario.group.heartbeat_interval_ms);
        self.heartbeat_timer = Some(env.queue.schedule(at, self.event(ClientTimer::Heartbeat)));
        self.arm_poll_timer(env);
    }

    fn disable_heartbeat(&mut self, env: &mut Env) {
        self.heartbeat_enabled = false;
        if let Some(t) = self.heartbeat_timer.take() {
            env.queue.cancel(t);
        }
        if let Some(t) = self.poll_timer.take() {
            env.queue.cancel(t);
        }
    }

    fn send_heartbeat(&mut self, env: &mut Env) {
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
            env.to_coordinator(self.me(), request);
        }
        let at = now + Duration::from_millis(env.scenario.group.heartbeat_interval_ms);
        self.heartbeat_timer = Some(env.queue.schedule(at, self.event(ClientTimer::Heartbeat)));
    }

    fn read_heartbeat(&mut self, env: &mut Env, error: ErrorCode) {
        if !self.heartbeat_enabled {
            return;
        }
        match error {
            ErrorCode::None => {}
            ErrorCode::RebalanceInProgress => {
                if !self.rejoin_needed {
                    env.log(format!(
                        "{} heartbeat: REBALANCE_IN_PROGRESS",
                        env.scenario.members[self.idx].name
                    ));
                }
                self.rejoin_needed = true;
            }
            other => {
                env.log(format!(
                    "{} heartbeat: {}, membership lost",
                    env.scenario.members[self.idx].name,
                    other.name()
                ));
                self.reset_generation(other != ErrorCode::IllegalGeneration);
                self.membership_lost = true;
                self.rejoin_needed = true;
                self.disable_heartbeat(env);
            }
        }
    }

    fn arm_poll_timer(&mut self, env: &mut Env) {
        let deadline =
            self.last_poll + Duration::from_millis(env.scenario.group.max_poll_interval_ms);
        // The heartbeat thread notices on its first pass after the deadline.
        let backoff = Duration::from_millis(env.scenario.group.retry_backoff_ms);
        let at = next_pass(self.last_heartbeat_sent, backoff, deadline);
        self.poll_timer = Some(env.queue.schedule(at, self.event(ClientTimer::PollTimer)));
    }

    fn check_poll_timer(&mut self, env: &mut Env) {
        self.poll_timer = None;
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
        env.log(format!(
            "{} poll timeout: LeaveGroup from the heartbeat thread",
            env.scenario.members[self.idx].name
        ));
        env.to_coordinator(
            self.me(),
            Request::LeaveGroup {
                member_id: self.member_id.clone(),
                reason: LeaveReason::PollTimeout,
            },
        );
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
