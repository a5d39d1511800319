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

use super::MembershipStep;
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

    /// `maybeReconcile` / `revokeAndAssign`: commit (auto-commit), revoke what it loses, then
    /// assign what it gains, then acknowledge.
    fn reconcile(&mut self, env: &mut ClientEnv, target: Vec<usize>) {
        let (targeted, owned) = (
            PartitionLookup::of(&target),
            PartitionLookup::of(&self.owned),
        );
        let revoked: Vec<usize> = self
            .owned
            .iter()
            .filter(|p| !targeted.contains(p))
            .copied()
            .collect();
        let added: Vec<usize> = target
            .iter()
            .filter(|p| !owned.contains(p))
            .copied()
            .collect();
        // Nothing to revoke or assign (a newer target gave back what an earlier reconciliation
        // ended with): acknowledge without callbacks (`maybeReconcile`: the resolved target's
        // partitions equal `currentAssignment`'s).
        if revoked.is_empty() && added.is_empty() {
            self.acknowledge(env);
            return;
        }
        self.kip848().assigning = added;
        let from = self.owned.clone();
        self.kip848().reconciling_from.get_or_insert(from);
        if revoked.is_empty() {
            self.assign_reconciled(env);
            return;
        }
        // Auto-commit before revoking (the revoked partitions' progress is committed first).
        if self.auto_commit_sync(
            env,
            AfterCommit::Membership(MembershipStep::Revoke(revoked.clone())),
        ) {
            return;
        }
        self.revoke_reconciled(env, revoked);
    }

    pub(in crate::client) fn revoke_reconciled(
        &mut self,
        env: &mut ClientEnv,
        revoked: Vec<usize>,
    ) {
        self.listener(env, Listener::Revoked, &revoked);
        let gone = PartitionLookup::of(&revoked);
        self.owned.retain(|p| !gone.contains(p));
        self.drop_partitions(&revoked, env);
        let ms = self.settings().on_partitions_revoked_ms;
        self.callback(env, ms, AfterCallback::Membership(MembershipStep::Assign));
    }

    /// The reconciliation in progress is still the member's own: it is RECONCILING, or
    /// ACKNOWLEDGING the one before (a newer target starts reconciling as soon as the last
    /// one is done, before the acknowledgement is answered).
    pub(in crate::client) fn still_reconciling(&mut self) -> bool {
        matches!(
            self.kip848().state,
            ConsumerMemberState::Reconciling | ConsumerMemberState::Acknowledging
        )
    }

    /// The reconciliation in progress stops: what it was to assign is not.
    pub(in crate::client) fn abort_reconciliation(&mut self) {
        self.kip848().assigning.clear();
    }

    pub(in crate::client) fn assign_reconciled(&mut self, env: &mut ClientEnv) {
        let added = std::mem::take(&mut self.kip848().assigning);
        self.owned.extend(added.iter().copied());
        self.owned.sort_unstable();
        self.listener(env, Listener::Assigned, &added);
        self.pending_fetch.extend(added.iter().copied());
        let ms = self.settings().on_partitions_assigned_ms;
        self.callback(
            env,
            ms,
            AfterCallback::Membership(MembershipStep::Acknowledge),
        );
    }

    /// The reconciliation is complete: the next heartbeat, sent at once, reports what it owns.
    pub(in crate::client) fn acknowledge(&mut self, env: &mut ClientEnv) {
        self.kip848().reconciling_from = None;
        self.move_to(env, ConsumerMemberState::Acknowledging);
        self.send_consumer_heartbeat(env);
    }

    /// The background thread's heartbeat (`ConsumerHeartbeatRequestManager`).
    pub(in crate::client) fn send_consumer_heartbeat(&mut self, env: &mut ClientEnv) {
        let topics = self.topics.clone();
        let owned = self.owned.clone();
        let owned = self.kip848().reconciling_from.clone().unwrap_or(owned);
        let timeout = self.settings().max_poll_interval_ms.min(i32::MAX as u64) as i32;
        let member_id = self.kip848().member_id.clone();
        let instance_id = self.spec.group_instance_id.clone();
        let is_static = instance_id.is_some();
        let assignor = self.spec.remote_assignor.clone();
        if self.coordinator.is_none() {
            // Nothing is sent while the coordinator is unknown; the heartbeat goes as soon as
            // it is found.
            self.lookup_coordinator(env);
            self.kip848().retry_heartbeat = true;
            return;
        }
        let m = self.kip848();
        if m.in_flight {
            m.send_when_answered = true;
            return;
        }
        if matches!(
            m.state,
            ConsumerMemberState::Fenced | ConsumerMemberState::Stale
        ) {
            return;
        }
        // `shouldHeartbeatNow` sends at once; any other heartbeat waits for `canSendRequest`.
        let urgent = matches!(
            m.state,
            ConsumerMemberState::Joining
                | ConsumerMemberState::Acknowledging
                | ConsumerMemberState::Leaving
        );
        let due = m.backoff.until.max(m.interval_due);
        if !urgent && env.now() < due {
            env.set_timer(ClientTimer::Heartbeat, due);
            return;
        }
        let request = match m.state {
            ConsumerMemberState::Leaving => Request::ConsumerGroupHeartbeat {
                member_id,
                member_epoch: if is_static { -2 } else { -1 },
                instance_id,
                rebalance_timeout_ms: -1,
                subscribed_topic_names: None,
                server_assignor: None,
                owned: None,
            },
            ConsumerMemberState::Joining if m.member_epoch == 0 => {
                m.sent_topics = Some(topics.clone());
                m.sent_owned = Some(owned.clone());
                m.sent_timeout = Some(timeout);
                m.sent_assignor = assignor.clone();
                Request::ConsumerGroupHeartbeat {
                    member_id,
                    member_epoch: 0,
                    instance_id,
                    rebalance_timeout_ms: timeout,
                    subscribed_topic_names: Some(topics),
                    server_assignor: assignor,
                    owned: Some(owned),
                }
            }
            _ => {
                let changed_topics = (m.sent_topics.as_ref() != Some(&topics)).then_some(topics);
                let changed_owned = (m.sent_owned.as_ref() != Some(&owned)).then_some(owned);
                let changed_timeout = (m.sent_timeout != Some(timeout)).then_some(timeout);
                let changed_assignor = assignor.filter(|a| m.sent_assignor.as_ref() != Some(a));
                if changed_assignor.is_some() {
                    m.sent_assignor = changed_assignor.clone();
                }
                if let Some(t) = &changed_topics {
                    m.sent_topics = Some(t.clone());
                }
                if let Some(o) = &changed_owned {
                    m.sent_owned = Some(o.clone());
                }
                if let Some(t) = changed_timeout {
                    m.sent_timeout = Some(t);
                }
                Request::ConsumerGroupHeartbeat {
                    member_id,
                    member_epoch: m.member_epoch,
                    instance_id,
                    rebalance_timeout_ms: changed_timeout.unwrap_or(-1),
                    subscribed_topic_names: changed_topics,
                    server_assignor: changed_assignor,
                    owned: changed_owned,
                }
            }
        };
        m.in_flight = true;
        let interval = m.heartbeat_interval_ms;
        m.interval_due = env.now() + Duration::from_millis(interval);
        let leaving = m.state == ConsumerMemberState::Leaving;
        env.send(request);
        if !leaving && interval > 0 {
            env.set_timer(
                ClientTimer::Heartbeat,
                env.now() + Duration::from_millis(interval),
            );
        }
    }

    /// A ConsumerGroupHeartbeat answer, handled by the background thread as it arrives.
    pub(in crate::client) fn on_consumer_heartbeat_response(
        &mut self,
        env: &mut ClientEnv,
        error: ErrorCode,
        member_epoch: i32,
        heartbeat_interval_ms: i32,
        assignment: Option<Vec<usize>>,
    ) {
        // The answer to the leave a poll timeout sent (epoch -1, or -2 for a static member):
        // Kafka sends that one with its answer ignored ("we can ignore the leave response
        // because we can join before or after receiving the response",
        // AbstractHeartbeatRequestManager), so a member that has rejoined meanwhile takes
        // neither its epoch nor the end of the join heartbeat in flight from it.
        if error == ErrorCode::None
            && member_epoch < 0
            && self.kip848().state != ConsumerMemberState::Leaving
        {
            return;
        }
        let owned = self.owned.clone();
        if error != ErrorCode::None {
            env.fact(Fact::HeartbeatFailed {
                member: self.idx,
                error,
            });
        }
        let m = self.kip848();
        m.in_flight = false;
        match error {
            ErrorCode::None => m.backoff.succeeded(env),
            // Rejoin at once (`heartbeatRequestState.reset()`).
            ErrorCode::FencedMemberEpoch | ErrorCode::UnknownMemberId => m.reset_backoff(),
            _ => {}
        }
        match error {
            ErrorCode::None => {
                // A leaving member, or one not in the group (stale after its poll timeout, or
                // fenced), ignores the answer to a heartbeat sent before: its epoch and any
                // assignment in it are for the membership it gave up
                // (ConsumerMembershipManager.onHeartbeatSuccess, isNotInGroup).
                if matches!(
                    m.state,
                    ConsumerMemberState::Leaving
                        | ConsumerMemberState::Stale
                        | ConsumerMemberState::Fenced
                ) {
                    return;
                }
                m.member_epoch = member_epoch;
                m.commit_epoch = Some(member_epoch);
                let interval = heartbeat_interval_ms.max(0) as u64;
                if interval != m.heartbeat_interval_ms {
                    m.heartbeat_interval_ms = interval;
                    m.interval_due = env.now + Duration::from_millis(interval);
                }
                let state = self.kip848().state;
                // Compared with the last target (Kafka's `currentTargetAssignment`), not with
                // what the member owns: an answer that takes back a target still waiting
                // behind the reconciliation in progress (equal to what that one ends with)
                // replaces it (`replaceTargetAssignmentWithNewAssignment`).
                let latest = self.kip848().latest_target.clone();
                let settled = {
                    let m = self.kip848();
                    m.target.is_none() && m.reconciling_from.is_none()
                };
                match assignment {
                    Some(a)
                        if latest.as_ref().unwrap_or(&owned) != &a
                            || state == ConsumerMemberState::Joining =>
                    {
                        self.kip848().latest_target = Some(a.clone());
                        if a == owned && settled {
                            self.move_to(env, ConsumerMemberState::Stable);
                        } else {
                            log!(
                                env,
                                "{} new assignment at epoch {member_epoch}: {}",
                                self.name(),
                                env.partitions.list(&a)
                            );
                            let m = self.kip848();
                            m.target = Some(a);
                            // A new target ends ACKNOWLEDGING (`processAssignmentReceived`):
                            // an acknowledgement that waited for this answer is not sent. A
                            // heartbeat goes at once only if its interval is up
                            // (`canSendRequest`), before the reconciliation, reporting what
                            // the member owned before this target; else once it is reconciled.
                            m.send_when_answered &= env.now() >= m.interval_due;
                            self.move_to(env, ConsumerMemberState::Reconciling);
                            self.wake(env);
                        }
                    }
                    _ => {
                        // The acknowledgement went out: STABLE, or RECONCILING again when a
                        // newer target is being reconciled (`onHeartbeatRequestGenerated`).
                        if state == ConsumerMemberState::Acknowledging {
                            let m = self.kip848();
                            let pending = m.target.is_some() || m.reconciling_from.is_some();
                            let next = if pending {
                                ConsumerMemberState::Reconciling
                            } else {
                                ConsumerMemberState::Stable
                            };
                            self.move_to(env, next);
                        }
                    }
                }
            }
            ErrorCode::FencedMemberEpoch | ErrorCode::UnknownMemberId => {
                let leaving = m.state == ConsumerMemberState::Leaving;
                log!(
                    env,
                    "{} heartbeat: {}, the member is fenced",
                    self.name(),
                    error.name()
                );
                if leaving {
                    return;
                }
                self.kip848().commit_epoch = None;
                self.move_to(env, ConsumerMemberState::Fenced);
                self.wake(env);
                return;
            }
            ErrorCode::UnreleasedInstanceId
            | ErrorCode::FencedInstanceId
            | ErrorCode::GroupIdNotFound => {
                // `ConsumerHeartbeatRequestManager`: a fatal error, poll() throws and the
                // application stops (UNRELEASED_INSTANCE_ID: the old process still holds the
                // static id, it crashed rather than leaving and its session has not expired
                // yet; FENCED_INSTANCE_ID: another process took the static id over;
                // GROUP_ID_NOT_FOUND: the group is classic and the migration policy keeps it
                // so).
                log!(
                    env,
                    "{} heartbeat: {}, the consumer fails",
                    self.name(),
                    error.name()
                );
                return self.fail_fatally(env, error.name());
            }
            _ => {}
        }
        let m = self.kip848();
        let at_once = std::mem::take(&mut m.send_when_answered)
            || m.state == ConsumerMemberState::Acknowledging;
        let (interval, due) = (m.heartbeat_interval_ms, m.interval_due.max(m.backoff.until));
        if at_once {
            self.send_consumer_heartbeat(env);
        } else if interval > 0 {
            env.set_timer(ClientTimer::Heartbeat, due.max(env.now()));
        }
    }

    /// A ConsumerGroupHeartbeat got no answer from the group (`Response::Failed`: an error that
    /// loses the coordinator, COORDINATOR_LOAD_IN_PROGRESS, a disconnect or a timeout).
    /// NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE go again as soon as a coordinator is
    /// found (`reset`); any other failure backs off (AbstractHeartbeatRequestManager's
    /// `onErrorResponse` and `onFailure`).
    pub(in crate::client) fn consumer_heartbeat_failed(
        &mut self,
        env: &mut ClientEnv,
        error: ErrorCode,
    ) {
        let m = self.kip848();
        m.in_flight = false;
        m.forget_sent();
        match error {
            ErrorCode::NotCoordinator | ErrorCode::CoordinatorNotAvailable => m.reset_backoff(),
            _ => m.back_off(env),
        }
        if error != ErrorCode::CoordinatorLoadInProgress {
            m.retry_heartbeat = true;
            return;
        }
        // The coordinator is kept, and the heartbeat manager's own state decides: a JOINING
        // member sends again at once (`heartbeatNow` skips `canSendRequest`), any other once
        // its backoff has passed (an acknowledgement is STABLE once sent,
        // `onHeartbeatRequestGenerated`).
        if m.state == ConsumerMemberState::Joining {
            self.send_consumer_heartbeat(env);
        } else {
            env.set_timer(ClientTimer::Heartbeat, m.backoff.until);
        }
    }

    /// The background thread checks the poll timer: past `max.poll.interval.ms` the member
    /// leaves (epoch -1) and is STALE; its partitions are lost at the next poll.
    pub(in crate::client) fn consumer_check_poll_timer(&mut self, env: &mut ClientEnv) {
        let deadline = self.last_poll + Duration::from_millis(self.settings().max_poll_interval_ms);
        if env.now() < deadline {
            self.arm_consumer_poll_timer(env);
            return;
        }
        if matches!(
            self.kip848().state,
            ConsumerMemberState::Stale | ConsumerMemberState::Leaving
        ) {
            return;
        }
        log!(env, "{} poll timeout: leaving the group", self.name());
        env.fact(Fact::PollTimeout {
            member: self.idx,
            last_poll: self.last_poll,
        });
        let member_id = self.kip848().member_id.clone();
        let epoch = if self.spec.group_instance_id.is_some() {
            -2
        } else {
            -1
        };
        env.send(Request::ConsumerGroupHeartbeat {
            member_id,
            member_epoch: epoch,
            instance_id: self.spec.group_instance_id.clone(),
            rebalance_timeout_ms: -1,
            subscribed_topic_names: None,
            server_assignor: None,
            owned: None,
        });
        let m = self.kip848();
        m.commit_epoch = None;
        m.in_flight = false;
        env.cancel_timer(ClientTimer::Heartbeat);
        self.move_to(env, ConsumerMemberState::Stale);
    }

    /// `close()` after the commit: revoke everything, then the leave heartbeat.
    pub(in crate::client) fn consumer_finish_close(&mut self, env: &mut ClientEnv) {
        let revoked = std::mem::take(&mut self.owned);
        self.kip848().reconciling_from = None;
        if !revoked.is_empty() {
            self.listener(env, Listener::RevokedOnClose, &revoked);
        }
        self.move_to(env, ConsumerMemberState::Leaving);
        self.kip848().in_flight = false;
        self.send_consumer_heartbeat(env);
        env.cancel_timer(ClientTimer::Heartbeat);
        env.cancel_timer(ClientTimer::PollTimer);
        log!(env, "{} closed", self.name());
        env.fact(Fact::ProcessStopped { member: self.idx });
        self.alive = false;
    }
}
