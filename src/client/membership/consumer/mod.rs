//! KIP-848's membership on the client (`group.protocol=consumer`): Kafka's
//! `ConsumerMembershipManager` and `ConsumerHeartbeatRequestManager` as one state machine.
//!
//! ```text
//!  UNSUBSCRIBED -> JOINING -> RECONCILING -> ACKNOWLEDGING -> STABLE
//!                    ^  ^                                       |  (a new assignment: RECONCILING)
//!                    |  +--- FENCED (onPartitionsLost) <--------+  FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID
//!                    +------ STALE (poll timeout: leave, onPartitionsLost at the next poll)
//!  close(): PREPARE_LEAVING (commit, onPartitionsRevoked) -> LEAVING (epoch -1, or -2 static)
//! ```
//!
//! The background thread heartbeats every `heartbeat_interval_ms` the broker hands out, at once
//! when joining, acknowledging or leaving; a heartbeat carries only what changed since the one
//! before (the full set while joining). An assignment received only moves the member to
//! RECONCILING; the reconciliation runs on the background thread when the application thread's
//! poll sends it an `AsyncPollEvent`, which goes with every other pass of the poll loop
//! (`AsyncKafkaConsumer.checkInflightPoll`): commit if auto-commit is on, then
//! `onPartitionsRevoked` for what it loses, queued for the application thread's next pass, then,
//! chained after it, `onPartitionsAssigned` for what it gains (even nothing: a joining member
//! runs it with an empty list), at the pass after, then ACKNOWLEDGING (the next heartbeat, sent
//! at once, reports what it owns, which lets the broker hand the revoked partitions on).
//!
//! `heartbeat.rs` is the heartbeat and its answers, `reconcile.rs` the reconciliation,
//! `leave.rs` how it leaves (close, poll timeout).

mod heartbeat;
mod leave;
mod reconcile;

use crate::client::poll::Listener;
use crate::client::*;

/// The client's `MemberState` under the consumer protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsumerMemberState {
    /// Not subscribed yet: a process before its first `poll()` (the model starts it JOINING,
    /// so only observers name this state).
    Unsubscribed,
    Joining,
    Reconciling,
    Acknowledging,
    Stable,
    /// The broker fenced it: its partitions are lost at the next poll, then it rejoins.
    Fenced,
    /// Its poll timer expired: it left; lost and rejoin at the next poll.
    Stale,
    Leaving,
}

impl ConsumerMemberState {
    /// Kafka's name (`MemberState`).
    pub fn name(self) -> &'static str {
        match self {
            ConsumerMemberState::Unsubscribed => "UNSUBSCRIBED",
            ConsumerMemberState::Joining => "JOINING",
            ConsumerMemberState::Reconciling => "RECONCILING",
            ConsumerMemberState::Acknowledging => "ACKNOWLEDGING",
            ConsumerMemberState::Stable => "STABLE",
            ConsumerMemberState::Fenced => "FENCED",
            ConsumerMemberState::Stale => "STALE",
            ConsumerMemberState::Leaving => "LEAVING",
        }
    }
}

/// A rebalance-listener callback the background thread queued for the application thread
/// (`ConsumerRebalanceListenerCallbackNeededEvent`), run by its next poll pass
/// (`processBackgroundEvents`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::client) enum QueuedCallback {
    /// `onPartitionsRevoked` with what the reconciliation takes away.
    Revoke(Vec<usize>),
    /// `onPartitionsAssigned` with what it adds (after the revocation completed).
    Assign(Vec<usize>),
}

/// One pass of the application thread's poll loop (`AsyncKafkaConsumer.poll`'s do-while), kept
/// while a callback, a commit or an OffsetFetch holds it: the pass goes on from where it
/// stopped, rather than a new one starting.
#[derive(Debug, Default)]
pub(in crate::client) struct Pass {
    /// This pass sent an `AsyncPollEvent` (the background thread handles it at its end).
    submitted: bool,
    /// The background events this pass drained, not run yet.
    events: std::collections::VecDeque<QueuedCallback>,
    /// The background thread has handled this pass's event.
    handled: bool,
}

/// The consumer protocol's membership state.
pub(in crate::client) struct ConsumerMembership {
    pub(in crate::client) state: ConsumerMemberState,
    /// The member id the client made (KIP-848: a base64 Uuid, chosen by the client).
    pub(in crate::client) member_id: String,
    /// The member epoch its heartbeats carry (0: joining).
    pub(in crate::client) member_epoch: i32,
    /// The member epoch its commits go out in: the last the broker gave it, while it is in
    /// the group (`None`: fenced, stale after a poll timeout, or rejoining).
    pub(in crate::client) commit_epoch: Option<i32>,
    /// From the broker's last answer (until then, the next heartbeat goes at once).
    heartbeat_interval_ms: u64,
    pub(in crate::client) in_flight: bool,
    /// A heartbeat failed or could not go (the coordinator unknown): send one as soon as the
    /// coordinator is found.
    pub(in crate::client) retry_heartbeat: bool,
    /// A heartbeat is wanted as soon as the one in flight is answered.
    send_when_answered: bool,
    /// The heartbeat manager's `RequestState`: a heartbeat that is not urgent (JOINING,
    /// ACKNOWLEDGING, LEAVING) goes only once the backoff since the last answer has passed,
    /// `retry.backoff.ms` (jittered) after a success, exponentially more after each failure
    /// in a row (`onSuccessfulAttempt`, `onFailedAttempt`, `canSendRequest`).
    backoff: backoff::Backoff,
    /// When its `heartbeatTimer` expires: the interval from the last heartbeat sent, restarted
    /// when an answer changes the interval (`updateAndReset`), expired at once by a failure.
    interval_due: SimTime,
    /// The assignment received and not reconciled yet.
    target: Option<Vec<usize>>,
    /// The last assignment the broker sent, reconciled or not (Kafka's
    /// `currentTargetAssignment`): an answer is a new target when it differs from this one,
    /// not from what the member owns now (`LocalAssignment.updateWith`).
    latest_target: Option<Vec<usize>>,
    /// Partitions being assigned once the revocation callback has run.
    assigning: Vec<usize>,
    /// An `AsyncPollEvent` was sent and handled and not cleared yet: the next pass clears it
    /// and sends none, the one after sends a new one (`checkInflightPoll`).
    inflight_poll: bool,
    /// Callbacks queued for the application thread, in order.
    queued: std::collections::VecDeque<QueuedCallback>,
    /// The pass in progress, while something holds it.
    pass: Option<Pass>,
    /// A reconciliation has run since the member (re)joined: Kafka's `currentAssignment` is no
    /// longer NONE, so a target equal to what it owns is acknowledged without callbacks.
    reconciled_once: bool,
    /// While a reconciliation runs, what it started from: Kafka's `currentAssignment`, which
    /// the heartbeat reports as owned, changes only when the revocation and the assignment
    /// have both completed (`AbstractMembershipManager.revokeAndAssign`), so a member between
    /// its revoke and assign callbacks still reports the partitions it is revoking, and never
    /// the ones a newer target no longer gives it.
    reconciling_from: Option<Vec<usize>>,
    // What the last heartbeat carried, for "only what changed".
    sent_topics: Option<Vec<String>>,
    sent_owned: Option<Vec<usize>>,
    sent_timeout: Option<i32>,
    sent_assignor: Option<String>,
}

impl ConsumerMembership {
    /// `RequestState.reset`: the next heartbeat goes without a backoff.
    pub(in crate::client) fn reset_backoff(&mut self) {
        self.backoff = backoff::Backoff::default();
        self.interval_due = SimTime::ZERO;
    }

    /// `onFailedAttempt`: the next heartbeat that is not urgent waits the backoff of one more
    /// failure in a row.
    pub(in crate::client) fn back_off(&mut self, env: &mut ClientEnv) {
        self.backoff.failed(env);
        self.interval_due = SimTime::ZERO;
    }

    pub(in crate::client) fn new() -> Self {
        ConsumerMembership {
            state: ConsumerMemberState::Joining,
            member_id: String::new(),
            member_epoch: 0,
            commit_epoch: None,
            heartbeat_interval_ms: 0,
            in_flight: false,
            retry_heartbeat: false,
            send_when_answered: false,
            backoff: backoff::Backoff::default(),
            interval_due: SimTime::ZERO,
            target: None,
            latest_target: None,
            assigning: Vec::new(),
            inflight_poll: false,
            queued: std::collections::VecDeque::new(),
            pass: None,
            reconciled_once: false,
            reconciling_from: None,
            sent_topics: None,
            sent_owned: None,
            sent_timeout: None,
            sent_assignor: None,
        }
    }

    pub(in crate::client) fn is_rebalancing(&self) -> bool {
        self.state != ConsumerMemberState::Stable || self.target.is_some()
    }

    /// After a failed heartbeat the next one carries every field (`resetHeartbeatState`).
    pub(in crate::client) fn forget_sent(&mut self) {
        self.sent_topics = None;
        self.sent_owned = None;
        self.sent_timeout = None;
        self.sent_assignor = None;
    }

    pub(in crate::client) fn rebalance_step(&self) -> Option<&'static str> {
        match self.state {
            ConsumerMemberState::Stable if self.target.is_some() => {
                Some("with an assignment to reconcile")
            }
            ConsumerMemberState::Stable => None,
            ConsumerMemberState::Unsubscribed => Some("not subscribed yet"),
            ConsumerMemberState::Joining => Some("joining (epoch 0)"),
            ConsumerMemberState::Reconciling => Some("reconciling its assignment"),
            ConsumerMemberState::Acknowledging => Some("acknowledging its assignment"),
            ConsumerMemberState::Fenced => Some("fenced, about to rejoin"),
            ConsumerMemberState::Stale => Some("stale after a poll timeout, about to rejoin"),
            ConsumerMemberState::Leaving => Some("leaving"),
        }
    }
}

impl Consumer {
    fn move_to(&mut self, env: &mut ClientEnv, state: ConsumerMemberState) {
        let from = self.kip848().state;
        if from != state {
            log!(env, "{} {} -> {}", self.name(), from.name(), state.name());
            self.kip848().state = state;
            let member = self.idx;
            env.fact(Fact::MemberStateChanged {
                member,
                state: state.name(),
            });
            // The consumer's rebalance sensor (`AbstractMembershipManager.transitionTo`).
            match (from, state) {
                (
                    ConsumerMemberState::Reconciling,
                    ConsumerMemberState::Stable | ConsumerMemberState::Acknowledging,
                ) => env.fact(Fact::ReconcilingEnded { member }),
                (_, ConsumerMemberState::Reconciling) => {
                    env.fact(Fact::ReconcilingStarted { member })
                }
                _ => {}
            }
        }
    }

    /// The member starts under the consumer protocol: a client-made member id (KIP-848: the
    /// client chooses it, a base64 Uuid), JOINING once the coordinator is known.
    pub(in crate::client) fn start_consumer_protocol(&mut self, env: &mut ClientEnv) {
        let mut ids = Stream::derive(
            env.scenario.seed,
            &format!("member-id-{}-{}", self.idx, self.incarnation),
        );
        let bytes: [u8; 16] = std::array::from_fn(|_| ids.between(0, 255) as u8);
        self.kip848().member_id = crate::java::Uuid::from_bytes(bytes).to_string();
        self.arm_consumer_poll_timer(env);
    }

    /// The background thread watches the application's polls (`max.poll.interval.ms`).
    fn arm_consumer_poll_timer(&mut self, env: &mut ClientEnv) {
        let at = self.last_poll + Duration::from_millis(self.settings().max_poll_interval_ms);
        env.set_timer(ClientTimer::PollTimer, at.max(env.now()));
    }

    /// The KIP-848 membership's part of a `poll()`: find the coordinator, then give up lost
    /// partitions and rejoin, or reconcile a new assignment. Returns whether the poll goes on
    /// to fetch and process.
    pub(in crate::client) fn poll_consumer_protocol(&mut self, env: &mut ClientEnv) -> bool {
        let skip = std::mem::take(&mut self.skip_coordinator_once);
        if !skip && !self.ensure_coordinator(env) {
            return false;
        }
        !(self.coordinator.is_some()
            && (!self.consumer_protocol_poll(env) || !matches!(self.app, App::Idle)))
    }

    /// The application thread's part, at each `poll()`: give up lost partitions and rejoin, or
    /// one pass of the poll loop. Returns whether the poll loop may go on.
    fn consumer_protocol_poll(&mut self, env: &mut ClientEnv) -> bool {
        match self.kip848().state {
            ConsumerMemberState::Fenced | ConsumerMemberState::Stale => {
                let lost = std::mem::take(&mut self.owned);
                if !lost.is_empty() {
                    self.listener(env, Listener::Lost, &lost);
                    self.drop_partitions(&lost, env);
                }
                self.rejoin(env);
                true
            }
            _ => self.application_pass(env),
        }
    }

    /// A pass of `AsyncKafkaConsumer.poll`, or the rest of one that a callback, a commit or an
    /// OffsetFetch held: `checkInflightPoll` sends an `AsyncPollEvent` when none is in flight
    /// (every other pass: the next one finds it complete and clears it), runs the callbacks
    /// queued for the application thread (`processBackgroundEvents`), and the background
    /// thread handles the event (`ApplicationEventProcessor`: `maybeReconcile`,
    /// `onConsumerPoll`). Returns whether the pass goes on to fetch and process.
    fn application_pass(&mut self, env: &mut ClientEnv) -> bool {
        let mut pass = match self.kip848().pass.take() {
            Some(pass) => pass,
            None => {
                let m = self.kip848();
                let submitted = !m.inflight_poll;
                m.inflight_poll = true;
                Pass {
                    submitted,
                    events: std::mem::take(&mut m.queued),
                    handled: false,
                }
            }
        };
        while let Some(callback) = pass.events.pop_front() {
            self.run_queued_callback(env, callback);
            if !matches!(self.app, App::Idle) {
                self.kip848().pass = Some(pass);
                return false;
            }
        }
        if !pass.submitted {
            // `maybeClearCurrentInflightPoll`: the event sent by the pass before is complete.
            self.kip848().inflight_poll = false;
        }
        if pass.submitted && !pass.handled {
            pass.handled = true;
            self.kip848().pass = Some(pass);
            self.handle_poll_event(env);
            if !matches!(self.app, App::Idle) {
                return false;
            }
            pass = self.kip848().pass.take().unwrap_or_default();
        }
        // Kept until the pass has fetched (an OffsetFetch holds it); [`end_pass`] drops it.
        self.kip848().pass = Some(pass);
        true
    }

    /// The background thread handles an `AsyncPollEvent`: a member not joined yet joins
    /// (`onConsumerPoll`), a RECONCILING one with no reconciliation running starts one
    /// (`maybeReconcile`).
    fn handle_poll_event(&mut self, env: &mut ClientEnv) {
        let m = self.kip848();
        let join =
            m.state == ConsumerMemberState::Joining && !m.in_flight && m.sent_topics.is_none();
        if join {
            env.fact(Fact::Joining { member: self.idx });
            self.send_consumer_heartbeat(env);
            return;
        }
        let m = self.kip848();
        if m.state == ConsumerMemberState::Reconciling && m.reconciling_from.is_none() {
            if let Some(target) = m.target.take() {
                self.reconcile(env, target);
            }
        }
    }

    /// The poll loop's pass is over (it processes a batch or waits for records): the next
    /// `poll()` starts a new one.
    pub(in crate::client) fn end_consumer_pass(&mut self) {
        if matches!(self.app, App::Busy { .. } | App::Idle) {
            self.kip848().pass = None;
        }
    }

    /// Rejoin with epoch 0 and the same member id (a fenced or stale member).
    fn rejoin(&mut self, env: &mut ClientEnv) {
        self.pending_revocation.clear();
        let m = self.kip848();
        m.member_epoch = 0;
        m.commit_epoch = None;
        m.target = None;
        m.latest_target = None;
        m.reconciling_from = None;
        m.assigning.clear();
        m.queued.clear();
        m.pass = None;
        m.reconciled_once = false;
        m.sent_topics = None;
        m.sent_owned = None;
        m.sent_timeout = None;
        m.sent_assignor = None;
        self.move_to(env, ConsumerMemberState::Joining);
        env.fact(Fact::Joining { member: self.idx });
        self.send_consumer_heartbeat(env);
        self.arm_consumer_poll_timer(env);
    }
}
