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
//! before (the full set while joining). An assignment is reconciled by the application thread's
//! `poll()`: commit if auto-commit is on, `onPartitionsRevoked` for what it loses, then
//! `onPartitionsAssigned` for what it gains, then ACKNOWLEDGING (the next heartbeat reports what
//! it owns, which is what lets the broker hand the revoked partitions to their new owners).
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

    /// The application thread's part, at each `poll()`: give up lost partitions and rejoin,
    /// or reconcile a new assignment. Returns whether the poll loop may go on.
    fn consumer_protocol_poll(&mut self, env: &mut ClientEnv) -> bool {
        let (state, idle_joining) = {
            let m = self.kip848();
            (m.state, !m.in_flight && m.sent_topics.is_none())
        };
        match state {
            ConsumerMemberState::Fenced | ConsumerMemberState::Stale => {
                let lost = std::mem::take(&mut self.owned);
                if !lost.is_empty() {
                    self.listener(env, Listener::Lost, &lost);
                    self.drop_partitions(&lost, env);
                }
                self.rejoin(env);
                true
            }
            ConsumerMemberState::Joining if idle_joining => {
                env.fact(Fact::Joining { member: self.idx });
                self.send_consumer_heartbeat(env);
                true
            }
            _ => match self.kip848().target.take() {
                Some(target) => {
                    self.reconcile(env, target);
                    matches!(self.app, App::Idle)
                }
                None => true,
            },
        }
    }

    /// Rejoin with epoch 0 and the same member id (a fenced or stale member).
    fn rejoin(&mut self, env: &mut ClientEnv) {
        let m = self.kip848();
        m.member_epoch = 0;
        m.commit_epoch = None;
        m.target = None;
        m.latest_target = None;
        m.reconciling_from = None;
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
