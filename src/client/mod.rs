//! The consumer (client side): Kafka 4.3.1's `KafkaConsumer` as CLIENT.md times it, under both
//! group protocols (classic, with both rebalance protocols of KIP-429, and KIP-848's
//! consumer protocol), in the parts Kafka splits it into:
//! - `poll.rs`: the application thread's poll loop and the rebalance-listener callbacks;
//! - `membership/`: the group membership, one value per protocol (the classic
//!   `ConsumerCoordinator` with its heartbeat thread; KIP-848's membership manager), the only
//!   place that knows which protocol runs;
//! - `coordinator.rs`: finding the coordinator, and failed requests to it;
//! - `fetch.rs`: positions and batches; `commit.rs`: auto, sync, async and on-revoke commits;
//! - `recovery.rs`: the application on the records (the join) and its state recovery.
//!
//! Like the coordinator it is a state machine: each handler takes `(now, input)` through a
//! [`ClientEnv`] (read-only views of the world) and writes [`ClientEffect`]s (requests, keyed
//! timers, one-shot timers, facts) that the world applies.

mod backoff;
pub(crate) use backoff::exponential_backoff;
mod coordinator;
mod membership;

use crate::messages::{
    ClientRef, ErrorCode, JoinProtocol, JoinReason, LeaveReason, LeavingMember, Request,
    RequestKind, Response, Subscription, CONSUMER_PROTOCOL_TYPE, JOIN_GROUP_VERSION,
};
pub use membership::{ClassicMemberState, ConsumerMemberState};
use membership::{Membership, MembershipStep};

mod commit;
mod fetch;
pub mod leader;
mod poll;
mod recovery;
#[cfg(test)]
mod tests;

use crate::app::recovery::TaskState;
use crate::app::standby::StandbyPlacement;
use crate::assignor::RebalanceProtocol;
use crate::cluster::{PartitionLookup, PartitionSpace, Replicas};
use crate::facts::{Fact, FatalError};
use crate::log;
use crate::scenario::{
    ClientSettings, CommitAfterBatch, MemberSpec, Mutant, OffsetReset, Protocol, Scenario,
};
use crate::sim::rng::Stream;
use crate::sim::time::Duration;
use crate::sim::{Out, SimTime};
use crate::workload::producer::Logs;
use std::collections::{BTreeMap, VecDeque};

/// What a member wants done; the world carries it out.
#[derive(Debug)]
pub enum ClientEffect {
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
    /// Close the connection to this broker (`NetworkClient.disconnect`): what is in flight on
    /// it fails, answers on their way are lost.
    Disconnect(u32),
    Fact(Fact),
}

/// What a member reads of the world in one handler call, and where its effects go. Reads are
/// read-only, except the fetch stream, which every member draws from in event order.
pub struct ClientEnv<'a> {
    pub now: SimTime,
    pub scenario: &'a Scenario,
    pub partitions: &'a PartitionSpace,
    pub logs: &'a Logs,
    /// Extra delay before each partition's records reach a consumer.
    pub arrival_lag_us: &'a [u64],
    /// Fetch round trips: the one `fetch` stream all members share, a draw per poll, so the
    /// polls' order decides who gets which round trip.
    pub fetch: &'a mut Stream,
    /// The jitter of retry backoffs (`retry-backoff`, one stream all members share).
    pub backoff: &'a mut Stream,
    /// Previous owners and standby placement, for state recovery.
    pub standby: &'a StandbyPlacement,
    /// Where each partition's replicas are: the leader's metadata for the assignors, and the
    /// replica each fetch is served from.
    pub replicas: &'a Replicas,
    /// Which brokers are down, which partitions cannot be fetched, who is cut off: what a
    /// connection attempt or a fetch would find.
    pub availability: &'a crate::cluster::Availability,
    pub out: &'a mut Out<ClientEffect>,
}

impl ClientEnv<'_> {
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Partition counts of every topic as the cluster's metadata has them now.
    pub fn metadata(&self) -> Vec<u32> {
        self.scenario.partition_counts_at(self.now.as_millis())
    }

    fn send(&mut self, request: impl Into<Request>) {
        self.out.push(ClientEffect::Send(Box::new(request.into())));
    }

    fn set_timer(&mut self, timer: ClientTimer, at: SimTime) {
        debug_assert!(timer.key().is_some(), "{timer:?} is a one-shot timer");
        self.out.push(ClientEffect::SetTimer { timer, at });
    }

    fn cancel_timer(&mut self, timer: ClientTimer) {
        self.out.push(ClientEffect::CancelTimer(timer));
    }

    fn after(&mut self, at: SimTime, timer: ClientTimer) {
        self.out.push(ClientEffect::After { timer, at });
    }

    fn fact(&mut self, fact: Fact) {
        self.out.push(ClientEffect::Fact(fact));
    }

    fn disconnect(&mut self, broker: u32) {
        self.out.push(ClientEffect::Disconnect(broker));
    }

    /// Kafka's `ExponentialBackoff` after `attempts` failures in a row (0 after a success),
    /// its jitter drawn from the `retry-backoff` stream.
    fn retry_backoff(&mut self, attempts: u32) -> Duration {
        let g = &self.scenario.group;
        let ms = backoff::exponential_backoff(
            g.retry_backoff_ms,
            g.retry_backoff_max_ms,
            attempts,
            self.backoff,
        );
        Duration::from_millis(ms)
    }

    fn logging(&self) -> bool {
        self.out.logging()
    }

    fn log_line(&mut self, line: String) {
        self.out.log_line(line);
    }
}

#[derive(Clone, Debug)]
pub enum ClientTimer {
    /// The application thread calls `poll()` (an idle wake-up, the end of a stall or of a
    /// rebalance-listener callback).
    Poll,
    /// The batch in progress has been processed.
    BatchDone,
    /// The heartbeat thread sends a heartbeat.
    Heartbeat,
    /// The heartbeat thread's pass reads the heartbeat responses received.
    HeartbeatRead,
    /// The heartbeat thread checks the poll timer (max.poll.interval.ms).
    PollTimer,
    /// A rebalance-listener callback has taken its time.
    CallbackDone,
    /// `metadata.max.age.ms` has passed: refresh the cluster metadata.
    MetadataRefresh,
    /// A price partition's state restore has finished.
    RestoreDone(usize),
    /// The backoff after a failed coordinator lookup or request has passed: look again.
    FindCoordinator,
    /// The poll that looks for the coordinator reaches its timeout.
    CoordinatorWait,
    /// A retry's backoff has passed: a synchronous commit or an OffsetFetch that failed goes
    /// again (if the coordinator is known), a poll loop that slept before its next JoinGroup
    /// goes on.
    RetryBackoff,
    /// The heartbeat thread's pass that finds its session timer passed, unless a heartbeat is
    /// answered first.
    SessionCheck,
}

impl ClientTimer {
    /// How many keyed timers a member has.
    pub const KEYS: usize = 5;

    /// The key of a cancellable timer (one pending per member and key); `None` for one-shots.
    pub fn key(&self) -> Option<usize> {
        match self {
            ClientTimer::Poll => Some(0),
            ClientTimer::BatchDone => Some(1),
            ClientTimer::Heartbeat => Some(2),
            ClientTimer::PollTimer => Some(3),
            ClientTimer::SessionCheck => Some(4),
            ClientTimer::HeartbeatRead
            | ClientTimer::CallbackDone
            | ClientTimer::MetadataRefresh
            | ClientTimer::RestoreDone(_)
            | ClientTimer::FindCoordinator
            | ClientTimer::CoordinatorWait
            | ClientTimer::RetryBackoff => None,
        }
    }
}

/// What the poll loop does once the synchronous commit it waits on is answered.
#[derive(Debug)]
enum AfterCommit {
    /// `close()`: revoke everything and leave.
    Close,
    /// A `commitSync` after a batch.
    Resume,
    /// The membership's step the commit came before (`onJoinComplete`'s cooperative
    /// revocation, KIP-848's revocation).
    Membership(MembershipStep),
}

/// What the poll loop does after a rebalance-listener callback has taken its time.
#[derive(Debug)]
enum AfterCallback {
    Resume,
    /// The membership's step after the callback.
    Membership(MembershipStep),
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

/// One member's client. Laid out in declaration order (`repr(C)`), what every poll reads
/// first: with a thousand members, a member's state is out of the first-level cache by its next
/// event, and the poll loop's fields together take the first few of its 23 cache lines instead
/// of being spread over all of them (7% fewer first-level misses over the first 200 s of
/// `hour-1000x10k`, callgrind's cache model).
#[repr(C)]
pub struct Consumer {
    /// What the last [`Fact::RebalanceStep`] said: whether the process runs, and its step.
    reported_step: (bool, Option<&'static str>),
    alive: bool,
    incarnation: u32,
    closing: bool,
    /// The application thread is inside an assignor that never returns
    /// ([`Consumer::spin_in_assignor`]): it polls no more.
    spinning_in_assignor: bool,
    /// The poll's lookup timed out: this poll fetches without the coordinator.
    skip_coordinator_once: bool,
    awaiting_offsets: bool,
    coordinator_wait_armed: bool,
    /// The coordinator was marked unknown and has not been found since.
    coordinator_lost: bool,
    app: App,
    /// When the application thread last called `poll()` (the poll timer the heartbeat thread
    /// checks against `max_poll_interval_ms`).
    last_poll: SimTime,
    /// When the auto-commit timer (`nextAutoCommitTimer`) passes.
    next_auto_commit: SimTime,
    /// Round-robin start over owned partitions when filling a batch.
    fetch_cursor: usize,
    /// A stall that hit while the member had no batch: it applies to the next batch.
    /// A stall that began outside a batch: when it ends (the poll loop's next batch, if it
    /// starts before then, waits for it).
    pending_stall: Option<SimTime>,
    stalled_until: Option<SimTime>,
    /// The poll loop sleeps `retry.backoff.ms` before the next JoinGroup, until then
    /// (COORDINATOR_LOAD_IN_PROGRESS).
    join_backoff_until: Option<SimTime>,
    /// Fetch positions of owned partitions whose committed offset is known.
    positions: fetch::FetchPositions,
    /// The buffer the next batch is fetched into (handed back when a batch is done).
    batch_buffer: Vec<(usize, u64, u64)>,
    /// Newly assigned partitions whose committed offsets the next poll fetches.
    pending_fetch: Vec<usize>,
    /// Partitions a KIP-848 reconciliation is revoking, sorted: no longer fetched from
    /// (`markPendingRevocationToPauseFetching`) until its `onPartitionsRevoked` gives them up.
    pending_revocation: Vec<usize>,
    /// The group membership, of the protocol this process runs.
    membership: Membership,
    /// The coordinator's broker, once FindCoordinator has answered (`ensureCoordinatorReady`).
    coordinator: Option<u32>,
    /// A FindCoordinator is in flight.
    finding_coordinator: bool,
    /// The application's state: the join's map, restores, paused tasks.
    task: TaskState,
    idx: usize,
    /// Its configuration in this incarnation (a restart may bring a new one: an upgrade).
    spec: MemberSpec,
    /// The subscription (it can change during the run).
    topics: Vec<String>,
    /// Partition counts per topic as this member's metadata has them.
    metadata: Vec<u32>,
    /// The client's assignment (`SubscriptionState`), ascending.
    owned: Vec<usize>,
    /// StickyAssignor's userData: the assignment of the last `onAssignment` (EAGER members).
    previous_assignment: Vec<usize>,
    /// The generation of that `onAssignment`, which both sticky assignors' userData keep.
    assigned_generation: Option<i32>,
    /// Where processing of each owned partition started in its current assignment.
    start_positions: BTreeMap<usize, u64>,
    after_commit: Option<AfterCommit>,
    after_callback: Option<AfterCallback>,
    /// The poll loop is blocked looking for the coordinator, since then.
    waiting_for_coordinator: Option<SimTime>,
    /// Lookups that found nothing while the poll waits (`ensureCoordinatorReady`'s attempts).
    poll_lookup_failures: u32,
    /// When the pending lookup retry fires (its timer; an earlier one replaced is stale).
    lookup_retry_at: Option<SimTime>,
    /// KIP-848: the FindCoordinator `RequestState` (failures in a row, next send).
    lookup_backoff: backoff::Backoff,
    /// A synchronous commit or an OffsetFetch failed: sent again once its backoff has passed
    /// and the coordinator is known.
    commit_retry: backoff::SyncRetry,
    offsets_retry: backoff::SyncRetry,
    /// The generation each OffsetCommit in flight went out in, oldest first (a connection
    /// answers in order).
    commits_in_flight: VecDeque<i32>,
    /// Asynchronous commits made while the coordinator was unknown, oldest first: sent once
    /// FindCoordinator names one, dropped if the lookup fails (`commitOffsetsAsync` chains them
    /// on the lookup in progress).
    async_commits_waiting: Vec<Vec<(usize, u64)>>,
    /// The partitions of the OffsetFetch in flight.
    offsets_requested: Vec<usize>,
}

impl Consumer {
    pub fn new(idx: usize, spec: MemberSpec) -> Self {
        Consumer {
            reported_step: (false, None),
            idx,
            membership: Membership::for_spec(&spec),
            coordinator: None,
            finding_coordinator: false,
            spec,
            incarnation: 0,
            alive: false,
            closing: false,
            topics: Vec::new(),
            metadata: Vec::new(),
            owned: Vec::new(),
            previous_assignment: Vec::new(),
            assigned_generation: None,
            positions: fetch::FetchPositions::default(),
            start_positions: BTreeMap::new(),
            task: TaskState::default(),
            after_commit: None,
            awaiting_offsets: false,
            pending_fetch: Vec::new(),
            pending_revocation: Vec::new(),
            after_callback: None,
            app: App::Idle,
            spinning_in_assignor: false,
            stalled_until: None,
            pending_stall: None,
            last_poll: SimTime::ZERO,
            next_auto_commit: SimTime::ZERO,
            fetch_cursor: 0,
            batch_buffer: Vec::new(),
            waiting_for_coordinator: None,
            poll_lookup_failures: 0,
            coordinator_wait_armed: false,
            lookup_retry_at: None,
            lookup_backoff: backoff::Backoff::default(),
            join_backoff_until: None,
            skip_coordinator_once: false,
            coordinator_lost: false,
            commit_retry: backoff::SyncRetry::default(),
            commits_in_flight: VecDeque::new(),
            async_commits_waiting: Vec::new(),
            offsets_retry: backoff::SyncRetry::default(),
            offsets_requested: Vec::new(),
        }
    }

    fn name(&self) -> &str {
        &self.spec.name
    }

    /// Whether `incarnation` is its process, still running (a stopped or crashed one closed
    /// its sockets with it).
    pub fn runs_process(&self, incarnation: u32) -> bool {
        self.alive && self.incarnation == incarnation
    }

    /// Whether its process runs: started, and not stopped since (left, crashed, or failed for
    /// good on a fatal error or in an assignor that never returns).
    pub fn is_running(&self) -> bool {
        self.alive && !self.spinning_in_assignor
    }

    /// Under the classic protocol, a running process's membership as its heartbeats present
    /// it (member id, generation) and what it owns; `None` when it is not running, runs
    /// KIP-848, has no generation, or knows its membership lost.
    pub fn classic_membership(&self) -> Option<(&str, i32, &[usize])> {
        let m = self.membership.as_classic()?;
        if !self.alive || m.membership_lost {
            return None;
        }
        Some((m.member_id.as_str(), m.generation?, &self.owned))
    }

    /// In a rebalance, or about to start one: not settled.
    pub fn is_rebalancing(&self) -> bool {
        self.is_running() && self.membership.is_rebalancing()
    }

    /// This member's own consumer settings (the group's, with its entry's over them).
    fn settings(&self) -> ClientSettings {
        self.spec.settings
    }

    /// Where a live member is in a rebalance, in words (`None`: settled or not running).
    pub fn rebalance_step(&self) -> Option<&'static str> {
        if !self.is_running() {
            return None;
        }
        self.membership.rebalance_step()
    }

    /// After each input: a [`Fact::RebalanceStep`] if whether it runs, or its rebalance step,
    /// changed since the last one.
    pub fn report_rebalance_step(&mut self, env: &mut ClientEnv) {
        let now = (self.is_running(), self.rebalance_step());
        if now != self.reported_step {
            self.reported_step = now;
            env.fact(Fact::RebalanceStep {
                member: self.idx,
                running: now.0,
                step: now.1,
            });
        }
    }

    /// A new process starts (first start or restart): a new consumer with no member id,
    /// configured by `spec` when given (a restart with new settings), else as before.
    pub fn start(&mut self, env: &mut ClientEnv, incarnation: u32, spec: Option<&MemberSpec>) {
        let idx = self.idx;
        // A restart while the old process still runs (a close still in progress: a commit or a
        // callback it waits on) kills the old one first, as a supervisor replacing it does: its
        // ownership ends here, not silently with the object.
        if self.alive {
            self.crash(env);
        }
        let spec = spec.cloned().unwrap_or_else(|| self.spec.clone());
        let reported_step = self.reported_step;
        *self = Consumer::new(idx, spec);
        self.reported_step = reported_step;
        self.topics = self.spec.topics.clone();
        self.incarnation = incarnation;
        self.start_membership(env);
        env.fact(Fact::ProcessStarted { member: idx });
        self.alive = true;
        self.last_poll = env.now();
        self.reset_auto_commit_timer(env);
        self.metadata = env.metadata();
        log!(env, "{} process starts", self.name());
        self.schedule_poll(env, env.now());
        let refresh = env.now() + Duration::from_millis(env.scenario.group.metadata_max_age_ms);
        env.after(refresh, ClientTimer::MetadataRefresh);
    }

    /// `wakeup()` + `close()`: the poll in progress ends after the batch, then close commits,
    /// revokes and leaves.
    pub fn close(&mut self, env: &mut ClientEnv) {
        // A thread spinning in the assignor never gets to call close().
        if !self.alive || self.spinning_in_assignor {
            return;
        }
        self.closing = true;
        env.fact(Fact::CloseRequested { member: self.idx });
        log!(env, "{} close requested", self.name());
        self.wake(env);
    }

    /// `KafkaConsumer.poll` threw an exception the application does not survive: it exits
    /// without closing the consumer (no LeaveGroup, no commit), so ownership ends now as in a
    /// crash, and the coordinator finds out by the session or a join phase.
    pub(super) fn fail_fatally(&mut self, env: &mut ClientEnv, error: FatalError) {
        env.fact(Fact::FatalError {
            member: self.idx,
            error,
        });
        env.fact(Fact::Crashed {
            member: self.idx,
            owned: self.owned.clone(),
        });
        self.alive = false;
    }

    /// The leader's assignor never returns (Kafka's sticky assignors loop on some inputs): the
    /// application thread spins inside `poll()` for good, so no SyncGroup goes out and nothing
    /// more is processed, committed or closed. The heartbeat thread goes on (enabled with the
    /// JoinGroup answer), so the group waits for the leader until its poll timer expires; then
    /// the heartbeat thread leaves the group, as for any poll loop that stopped. The report
    /// lists the member among those Kafka stopped; a restart starts a new process.
    pub(super) fn spin_in_assignor(&mut self, env: &mut ClientEnv) {
        env.fact(Fact::FatalError {
            member: self.idx,
            error: FatalError::AssignorSpins,
        });
        self.spinning_in_assignor = true;
        self.app = App::Blocked;
    }

    /// The process dies: nothing more is sent, ownership ends now.
    pub fn crash(&mut self, env: &mut ClientEnv) {
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
            self.name(),
            env.partitions.list(&self.owned)
        );
    }

    /// `subscribe()` with a new topic list: the member rejoins at its next poll, and (as
    /// `onJoinPrepare` does) a cooperative member first revokes the topics it dropped.
    pub fn subscribe(&mut self, env: &mut ClientEnv, topics: Vec<String>) {
        if !self.alive || self.spinning_in_assignor {
            return;
        }
        log!(env, "{} subscribes to [{}]", self.name(), topics.join(" "));
        self.topics = topics;
        self.membership_subscribed(env);
    }

    /// The application's processing stalls for `duration` (a slow call, a GC pause): the batch
    /// in progress ends that much later; outside a batch (in `poll()`, a rebalance, a callback)
    /// the next batch, if the poll loop gets one before the stall's end, waits for that end.
    /// The stall stays inside its window `[now, now + duration]` (as the timeline and the settle
    /// bound read it): a stall that began while the member waited for a JoinGroup answer does
    /// not hold its first batch after the rebalance for the whole duration again. The poll loop
    /// is blocked meanwhile, so a stall past `max_poll_interval_ms` makes the heartbeat thread
    /// leave the group, and the batch that finishes afterwards is zombie processing.
    pub fn stall(&mut self, env: &mut ClientEnv, duration: Duration) {
        if !self.alive {
            return;
        }
        log!(
            env,
            "{} processing stalls for {} ms",
            self.name(),
            duration.as_millis()
        );
        match &self.app {
            App::Busy { until, .. } => {
                let until = *until + duration;
                self.begin_stall(env, until);
            }
            _ => self.pending_stall = Some(env.now() + duration),
        }
    }

    pub fn on_timer(&mut self, env: &mut ClientEnv, to: ClientRef, timer: ClientTimer) {
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
            ClientTimer::Heartbeat
            | ClientTimer::HeartbeatRead
            | ClientTimer::PollTimer
            | ClientTimer::MetadataRefresh
            | ClientTimer::SessionCheck => self.on_membership_timer(env, timer),
            ClientTimer::RestoreDone(p) => self.restore_done(env, p),
            ClientTimer::FindCoordinator => {
                if self.lookup_retry_at != Some(env.now()) {
                    return;
                }
                self.lookup_retry_at = None;
                if self.coordinator.is_none() {
                    self.lookup_coordinator(env);
                }
            }
            ClientTimer::CoordinatorWait => self.stop_waiting_for_coordinator(env),
            ClientTimer::RetryBackoff => self.retry_backoff_passed(env),
        }
    }

    pub fn on_response(&mut self, env: &mut ClientEnv, to: ClientRef, response: Response) {
        if !self.alive || to.incarnation != self.incarnation {
            return;
        }
        if response.from_the_coordinator() {
            self.coordinator_reached(env);
        }
        match response {
            // The consumer does not act on a LeaveGroup answer: it has left.
            Response::LeaveGroup(_) => {}
            Response::FindCoordinator(found) => self.coordinator_named(env, found.broker),
            Response::Failed(failed) => self.request_failed(env, failed.request, failed.error),
            response @ (Response::JoinGroup(_)
            | Response::SyncGroup(_)
            | Response::Heartbeat(_)
            | Response::ConsumerGroupHeartbeat(_)) => self.on_membership_response(env, response),
            Response::OffsetFetch(fetched) => {
                if !self.awaiting_offsets {
                    return;
                }
                self.awaiting_offsets = false;
                let now = env.now();
                let reset = env.scenario.group.auto_offset_reset;
                let mut started = Vec::new();
                let owned = PartitionLookup::of(&self.owned);
                for (p, offset) in fetched.committed {
                    if !owned.contains(&p) {
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
                    self.set_position(env, p, position);
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
            Response::OffsetCommit(committed) => {
                let sent_generation = self.commits_in_flight.pop_front();
                self.membership_commit_error(env, committed.error, sent_generation);
                if self.prepare_commit_done(env, false) {
                    return;
                }
                if self.commit_retry.due.is_none() {
                    self.commit_answered(env);
                }
            }
        }
    }

    /// The synchronous commit the poll loop waited on is done: it goes on.
    pub(super) fn commit_answered(&mut self, env: &mut ClientEnv) {
        let Some(after) = self.after_commit.take() else {
            return;
        };
        self.app = App::Idle;
        match after {
            AfterCommit::Close => self.finish_close(env),
            AfterCommit::Resume => self.poll(env),
            // The poll loop goes on after the step (a callback that takes time blocks it until
            // then; `poll` sees that).
            AfterCommit::Membership(step) => {
                self.membership_step(env, step);
                self.poll(env)
            }
        }
    }
}
