//! The classic protocol's membership (`ConsumerCoordinator` / `AbstractCoordinator`): JoinGroup
//! and SyncGroup, the leader's assignment, EAGER and COOPERATIVE (KIP-429) revocation in
//! `onJoinPrepare` / `onJoinComplete`, rejoining on a metadata or subscription change, and
//! leaving on `close()`.
//!
//! - EAGER: before joining the member commits and revokes everything, so it owns nothing while
//!   the rebalance runs.
//! - COOPERATIVE: it keeps its partitions and processes them while the rebalance runs, joins
//!   with its owned partitions, revokes after SyncGroup only what it lost and, if it lost
//!   anything, rejoins at once: the follow-up rebalance hands those partitions out.
//!
//! `heartbeat.rs` is its heartbeat thread; `leave.rs`, how it leaves (close, poll timeout).

mod heartbeat;
mod leave;

pub(in crate::client) use heartbeat::next_pass;

use super::MembershipStep;
use crate::assignor::AssignError;
use crate::client::poll::Listener;
use crate::client::*;
use crate::facts::RejoinCause;
use crate::messages::{JoinGroupRequest, JoinGroupResponse, SyncGroupRequest, SyncGroupResponse};

/// Where the member is in the group protocol (the classic client's `MemberState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassicMemberState {
    /// Not in a generation, or told to rejoin: joins at the next `poll()`.
    Unjoined,
    AwaitingJoin,
    AwaitingSync,
    Stable,
}

impl ClassicMemberState {
    /// Kafka's name (`AbstractCoordinator.MemberState`).
    pub fn name(self) -> &'static str {
        match self {
            ClassicMemberState::Unjoined => "UNJOINED",
            ClassicMemberState::AwaitingJoin => "PREPARING_REBALANCE",
            ClassicMemberState::AwaitingSync => "COMPLETING_REBALANCE",
            ClassicMemberState::Stable => "STABLE",
        }
    }
}

/// The classic protocol's membership state (`AbstractCoordinator` / `ConsumerCoordinator`):
/// the member id and generation, where the member is in the join/sync steps, whether it must
/// rejoin and why, and the heartbeat thread's state. The poll loop reaches it through a few
/// questions (is a rebalance running, is a join due, is there a generation to commit in) and
/// the steps in this file and `heartbeat.rs`; KIP-848's membership (the
/// `ConsumerMembershipManager`, its own issue) is the other kind that will answer them.
///
/// In declaration order (`repr(C)`), what every poll asks first (see `Consumer`).
#[repr(C)]
pub(in crate::client) struct ClassicMembership {
    /// The generation was reset (LeaveGroup on poll timeout, or UNKNOWN_MEMBER_ID): owned
    /// partitions are lost at the next `poll()`.
    pub(in crate::client) membership_lost: bool,
    pub(in crate::client) rejoin_needed: bool,
    pub(in crate::client) phase: ClassicMemberState,
    /// A JoinGroup is in flight (`joinFuture`): no other goes out until it is answered or
    /// fails, even if a heartbeat error reset the membership meanwhile; its answer is then
    /// dropped and the next poll joins anew.
    pub(in crate::client) join_in_flight: bool,
    /// A JoinGroup or SyncGroup failed (a disconnect, NOT_COORDINATOR): the next join sends
    /// JoinGroup again without running `onJoinPrepare` (`needsJoinPrepare` stays false).
    pub(in crate::client) join_retry: bool,
    /// The heartbeat thread: enabled from a JoinGroup response until the next JoinGroup is
    /// sent, and when it last sent.
    pub(in crate::client) heartbeat_enabled: bool,
    /// EAGER or COOPERATIVE: what every assignor the member lists supports.
    pub(in crate::client) protocol: RebalanceProtocol,
    pub(in crate::client) generation: Option<i32>,
    /// JoinGroup and SyncGroup responses waiting for the application thread's next poll.
    pub(in crate::client) inbox: VecDeque<Response>,
    pub(in crate::client) member_id: String,
    /// Why the next JoinGroup is sent.
    pub(in crate::client) join_reason: JoinReason,
    /// The leader's metadata when it last assigned (`assignmentSnapshot`): a difference seen at
    /// a refresh makes it rejoin.
    pub(in crate::client) assignment_snapshot: Option<Vec<u32>>,
    pub(in crate::client) last_heartbeat_sent: SimTime,
    /// The heartbeat thread's session timer (`Heartbeat.sessionTimer`): when it passes with no
    /// heartbeat answered since, the thread gives up on the coordinator. Reset when the thread
    /// is enabled, when a heartbeat is answered (NONE or REBALANCE_IN_PROGRESS) and when the
    /// coordinator is found.
    pub(in crate::client) session_deadline: SimTime,
    /// `Heartbeat.failHeartbeat`: after a failed heartbeat the next one waits
    /// `retry.backoff.ms`, doubled per failure in a row up to `retry.backoff.max.ms`, with a
    /// fifth of jitter (KIP-580), until a heartbeat is answered (`receiveHeartbeat`).
    pub(in crate::client) heartbeat_backoff: super::backoff::Backoff,
    /// The generation each heartbeat in flight was sent with, oldest first (a connection
    /// answers in order): an error is acted on only if the generation has not changed since.
    pub(in crate::client) heartbeats_in_flight: VecDeque<i32>,
    /// Heartbeat answers received and not yet handled (error, generation sent with): handled
    /// at the heartbeat thread's next pass, or by the application thread's next poll if that
    /// comes first, always before any answer that arrived after them.
    pub(in crate::client) heartbeat_answers: VecDeque<(ErrorCode, i32)>,
    /// `onJoinPrepare` is waiting for its auto-commit (see [`JoinPrepare`]).
    pub(in crate::client) join_prepare: Option<JoinPrepare>,
}

/// `onJoinPrepare`'s auto-commit is asynchronous (ConsumerCoordinator.onJoinPrepare,
/// KAFKA-13310): the JoinGroup waits for its answer, the poll loop does not. Each `poll()` with a
/// join due calls `onJoinPrepare` again, which returns false until the commit is answered; the
/// JoinGroup goes out at the first poll after the answer (at once for a member blocked in
/// poll with nothing to process, later for one in a batch). COOPERATIVE's poll goes on fetching
/// and returning records of the partitions the member keeps. EAGER marks every partition pending
/// revocation at the first call (`maybeMarkPartitionsPendingRevocation`), so its poll returns
/// nothing until the answer, but it is still called: the poll interval does not run out while
/// the commit waits on an unreachable coordinator, and a rebalance timeout after the first call
/// the member joins without the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::client) struct JoinPrepare {
    /// `joinPrepareTimer`: a rebalance timeout after the first call, the member joins without
    /// the answer ("joinPrepare timeout. Will continue to join group").
    pub(in crate::client) since: SimTime,
    pub(in crate::client) commit: PrepareCommit,
}

/// Where `onJoinPrepare`'s commit is (`autoCommitOffsetRequestFuture`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::client) enum PrepareCommit {
    /// In flight. The member's next OffsetCommit answer is taken for its own, as for the
    /// commits the poll loop blocks on: an older asynchronous commit still in flight, answered
    /// first on the same connection, ends the wait that much early.
    InFlight,
    /// Answered, or failed for good: the next poll joins.
    Answered,
    /// Failed with a retriable error (a disconnect, NOT_COORDINATOR, a timeout): the next
    /// poll's `onJoinPrepare` sees it and waits once more, the one after sends it again.
    Failed,
    /// Sent again at the next poll.
    Retry,
}

impl ClassicMembership {
    pub(in crate::client) fn new() -> Self {
        ClassicMembership {
            protocol: RebalanceProtocol::Eager,
            member_id: String::new(),
            generation: None,
            phase: ClassicMemberState::Unjoined,
            rejoin_needed: false,
            join_reason: JoinReason::New,
            assignment_snapshot: None,
            membership_lost: false,
            inbox: VecDeque::new(),
            heartbeat_enabled: false,
            last_heartbeat_sent: SimTime::ZERO,
            session_deadline: SimTime::ZERO,
            heartbeat_backoff: super::backoff::Backoff::default(),
            heartbeats_in_flight: VecDeque::new(),
            heartbeat_answers: VecDeque::new(),
            join_retry: false,
            join_in_flight: false,
            join_prepare: None,
        }
    }

    /// In a rebalance, or about to start one.
    pub(in crate::client) fn is_rebalancing(&self) -> bool {
        self.phase != ClassicMemberState::Stable || self.rejoin_needed || !self.inbox.is_empty()
    }

    /// Where the member is in a rebalance, in words; `None` when settled.
    pub(in crate::client) fn rebalance_step(&self) -> Option<&'static str> {
        match self.phase {
            ClassicMemberState::Unjoined => Some("not in a generation"),
            ClassicMemberState::AwaitingJoin => Some("waiting for its JoinGroup answer"),
            ClassicMemberState::AwaitingSync => Some("waiting for its SyncGroup answer"),
            ClassicMemberState::Stable if self.join_prepare.is_some() => {
                Some("waiting for onJoinPrepare's commit before it rejoins")
            }
            ClassicMemberState::Stable if self.rejoin_needed => Some("about to rejoin"),
            ClassicMemberState::Stable if !self.inbox.is_empty() => {
                Some("with an answer to handle")
            }
            ClassicMemberState::Stable => None,
        }
    }

    /// The next `poll()` must (re)join: not in a generation, or told to rejoin, and no
    /// JoinGroup still in flight.
    pub(in crate::client) fn join_due(&self) -> bool {
        !self.join_in_flight
            && (self.phase == ClassicMemberState::Unjoined
                || (self.phase == ClassicMemberState::Stable && self.rejoin_needed))
    }
}

impl Consumer {
    /// The classic membership's part of a `poll()` (`ConsumerCoordinator.poll`): lost
    /// partitions, the answers received since the last poll, the coordinator, then the join
    /// if one is due. Returns whether the poll goes on to fetch and process.
    pub(in crate::client) fn poll_classic(&mut self, env: &mut ClientEnv) -> bool {
        let now = env.now();
        self.handle_membership_lost(env);
        // In a rebalance, `coordinator.poll()` polls the network client, which handles the
        // heartbeat answers received (they came before any JoinGroup or SyncGroup answer still
        // waiting); otherwise they wait for the heartbeat thread's pass. Then the responses
        // that arrived since the last poll, one rebalance step each.
        if self.classic().is_rebalancing() {
            self.read_heartbeat_answers(env);
        }
        while let Some(response) = self.classic().inbox.pop_front() {
            self.handle_group_response(env, response);
            if !matches!(self.app, App::Idle) || !self.alive {
                return false;
            }
        }
        // A SyncGroup error read just now lost the membership: its partitions go before the
        // one JoinGroup that follows (ConsumerCoordinator.onJoinPrepare: "the generation /
        // member-id can possibly be reset ... previously owned partitions would be lost"), not
        // at the next poll after a JoinGroup already went out (that poll would join a second
        // time and the consumer would hold two member ids).
        if self.classic().membership_lost {
            self.lose_membership(env);
            if !matches!(self.app, App::Idle) || !self.alive {
                return false;
            }
        }
        // `ensureCoordinatorReady` in every poll; a poll whose lookup timed out fetches
        // without it (and cannot join).
        let skip = std::mem::take(&mut self.skip_coordinator_once);
        if self.coordinator.is_none() && !skip && !self.ensure_coordinator(env) {
            return false;
        }
        if self.classic().join_due() && self.coordinator.is_some() {
            if self.join_backoff_until.is_some_and(|at| at > now) {
                // Asleep in `joinGroupIfNeeded` until the backoff after the last JoinGroup's
                // COORDINATOR_LOAD_IN_PROGRESS has passed (`retry_backoff_passed` wakes it).
                self.app = App::Blocked;
                return false;
            }
            self.begin_join(env);
            if !matches!(self.app, App::Idle) {
                return false;
            }
            if self.eager_awaits_join_prepare_commit(env) {
                return false;
            }
        }
        true
    }

    /// A classic membership request got no answer from the group (see `coordinator.rs`): a
    /// Heartbeat's failure backs the heartbeat thread off; a JoinGroup or SyncGroup that failed
    /// rejoins with a new JoinGroup, same member id and generation, without running
    /// `onJoinPrepare` again (after the poll loop's `retry.backoff.ms` sleep when the
    /// coordinator is loading); a SyncGroup answered COORDINATOR_LOAD_IN_PROGRESS is fatal.
    pub(in crate::client) fn classic_request_failed(
        &mut self,
        env: &mut ClientEnv,
        kind: RequestKind,
        error: ErrorCode,
    ) {
        let loading = error == ErrorCode::CoordinatorLoadInProgress;
        let now = env.now();
        let backoff = Duration::from_millis(env.scenario.group.retry_backoff_ms);
        match kind {
            RequestKind::Heartbeat => {
                self.classic().heartbeats_in_flight.pop_front();
                if self.classic_ref().heartbeat_enabled {
                    self.fail_heartbeat(env);
                }
            }
            RequestKind::JoinGroup
                if self.classic_ref().phase == ClassicMemberState::AwaitingJoin =>
            {
                let m = self.classic();
                m.phase = ClassicMemberState::Unjoined;
                m.join_retry = true;
                if loading {
                    // `joinGroupIfNeeded` sleeps the backoff in poll() before the next one.
                    self.join_backoff_until = Some(now + backoff);
                    env.after(now + backoff, ClientTimer::RetryBackoff);
                    self.wake(env);
                }
            }
            RequestKind::SyncGroup
                if self.classic_ref().phase == ClassicMemberState::AwaitingSync =>
            {
                if loading {
                    log!(
                        env,
                        "{} SyncGroup: COORDINATOR_LOAD_IN_PROGRESS, the consumer fails",
                        self.name()
                    );
                    return self.fail_fatally(env, FatalError::SyncGroupLoadInProgress);
                }
                let m = self.classic();
                m.phase = ClassicMemberState::Unjoined;
                m.join_retry = true;
            }
            _ => {}
        }
    }

    fn cooperative(&self) -> bool {
        self.classic_ref().protocol == RebalanceProtocol::Cooperative
    }

    /// A JoinGroup or SyncGroup answer: it waits in the inbox for the application thread's
    /// next poll (at once for a member blocked in poll with nothing to process).
    pub(in crate::client) fn on_join_or_sync_answer(
        &mut self,
        env: &mut ClientEnv,
        response: Response,
    ) {
        if matches!(response, Response::JoinGroup(_)) {
            self.classic().join_in_flight = false;
        }
        // For Kafka's sync-time and rebalance-latency: whichever thread polls the network
        // client first runs the SyncGroup answer's handler. An application thread waiting on a
        // commit or on offsets polls it now; one in its batch or in a listener callback does
        // not, but from the JoinGroup answer on the heartbeat thread does, on its next pass.
        // (An idle member handles the answer now.)
        let now = env.now();
        let read = match self.app {
            App::Idle => None,
            _ if self.after_commit.is_some() || self.awaiting_offsets => Some(now),
            _ if self.classic_ref().heartbeat_enabled => {
                let backoff = Duration::from_millis(env.scenario.group.retry_backoff_ms);
                let last = self.classic_ref().last_heartbeat_sent;
                Some(super::next_pass(last, backoff, now))
            }
            _ => None,
        };
        if let (Some(at), Response::SyncGroup(_)) = (read, &response) {
            env.fact(Fact::SyncGroupRead {
                member: self.idx,
                at,
            });
        }
        self.classic().inbox.push_back(response);
        self.wake(env);
    }

    /// An OffsetCommit was answered with `error`; `sent_generation` is the generation it went
    /// out in (`None`: not known). A classic member acts on it as `OffsetCommitResponseHandler`
    /// does: REBALANCE_IN_PROGRESS asks to rejoin; UNKNOWN_MEMBER_ID and ILLEGAL_GENERATION
    /// reset the generation (and, for UNKNOWN_MEMBER_ID, the member id), so the next poll
    /// gives up what it owns as lost and joins anew, unless the generation changed since the
    /// commit went out and the member is already rejoining (then it is only a stale answer).
    /// Kafka handles it in whichever thread polls the network client next; the model at its
    /// arrival.
    pub(in crate::client) fn classic_commit_error(
        &mut self,
        env: &mut ClientEnv,
        error: ErrorCode,
        sent_generation: Option<i32>,
    ) {
        match error {
            ErrorCode::RebalanceInProgress => {
                if !self.classic().rejoin_needed {
                    log!(env, "{} OffsetCommit: REBALANCE_IN_PROGRESS", self.name());
                    env.fact(Fact::RejoinNeeded {
                        member: self.idx,
                        cause: RejoinCause::CommitRebalance,
                    });
                }
                self.request_rejoin(JoinReason::Rebalance);
                self.wake(env);
            }
            ErrorCode::UnknownMemberId | ErrorCode::IllegalGeneration => {
                let unchanged =
                    sent_generation.is_some() && sent_generation == self.classic().generation;
                if !unchanged && self.classic().phase == ClassicMemberState::AwaitingJoin {
                    return;
                }
                self.reset_state_on_response_error(
                    env,
                    "OffsetCommit",
                    RejoinCause::CommitError(error),
                );
                self.wake(env);
            }
            _ => {}
        }
    }

    /// The membership was lost (a heartbeat or SyncGroup error, a poll timeout): what the
    /// member owned is lost (`onPartitionsLost`) and it joins anew. Asked at every poll: the
    /// check is inlined, the rest is not.
    #[inline]
    fn handle_membership_lost(&mut self, env: &mut ClientEnv) {
        if self.classic().membership_lost {
            self.lose_membership(env);
        }
    }

    #[cold]
    fn lose_membership(&mut self, env: &mut ClientEnv) {
        let m = self.classic();
        m.membership_lost = false;
        m.inbox.clear();
        if !self.owned.is_empty() {
            let lost = std::mem::take(&mut self.owned);
            self.listener(env, Listener::Lost, &lost);
            self.drop_partitions(&lost, env);
        }
        self.classic().phase = ClassicMemberState::Unjoined;
    }

    /// One JoinGroup or SyncGroup response, handled by the application thread.
    pub(in crate::client) fn handle_group_response(
        &mut self,
        env: &mut ClientEnv,
        response: Response,
    ) {
        // For Kafka's consumer metrics (join-time, sync-time, rebalance-latency, failed-rebalance).
        let member = self.idx;
        match &response {
            Response::JoinGroup(JoinGroupResponse { error, .. })
                if self.classic().phase == ClassicMemberState::AwaitingJoin =>
            {
                env.fact(Fact::JoinGroupAnswered {
                    member,
                    error: *error,
                })
            }
            Response::SyncGroup(SyncGroupResponse {
                error, assignment, ..
            }) if self.classic().phase == ClassicMemberState::AwaitingSync => {
                env.fact(Fact::SyncGroupAnswered {
                    member,
                    generation: self.classic().generation.unwrap_or(-1),
                    error: *error,
                    assignment: assignment.clone().unwrap_or_default(),
                })
            }
            _ => {}
        }
        match response {
            Response::JoinGroup(JoinGroupResponse {
                error,
                member_id,
                generation,
                protocol_type,
                protocol_name,
                leader,
                members,
                skip_assignment,
                ..
            }) if self.classic().phase == ClassicMemberState::AwaitingJoin => match error {
                ErrorCode::None => {
                    self.classic().member_id = member_id;
                    self.classic().generation = Some(generation);
                    // The heartbeat thread is enabled again, its timers reset (AbstractCoordinator).
                    self.enable_heartbeat(env);
                    let name = self.name().to_string();
                    let is_leader = leader == self.classic().member_id;
                    log!(
                        env,
                        "{name} JoinGroup response: generation {generation}{}",
                        if is_leader { " (leader)" } else { "" }
                    );
                    // Only the leader watches the metadata for partition changes, a returning
                    // static leader told to skip the assignment (KIP-814) too: Kafka's
                    // onLeaderElected takes `assignmentSnapshot = metadataSnapshot` before it
                    // returns the empty assignment, and onJoinComplete drops it on a member
                    // that is not the leader.
                    self.classic().assignment_snapshot = is_leader.then(|| self.metadata.clone());
                    if is_leader {
                        env.fact(Fact::LeaderElected {
                            member: self.idx,
                            skip_assignment,
                            partition_counts: self.metadata.clone(),
                        });
                    }
                    let assignments = if is_leader && !skip_assignment {
                        let protocol = protocol_name.clone().unwrap_or_default();
                        match leader::assign(
                            env.scenario,
                            env.partitions,
                            env.replicas,
                            &protocol,
                            &members,
                            &self.metadata,
                        ) {
                            Ok(a) => Some(a),
                            Err(e) if AssignError::never_returns(&e) => {
                                log!(
                                    env,
                                    "{name} assignor {protocol} never returns ({e}); the poll \
                                     thread spins in it, the heartbeat thread goes on"
                                );
                                return self.spin_in_assignor(env);
                            }
                            Err(e) => {
                                // The leader does not catch its assignor's exception:
                                // `onLeaderElected` returns it as a failed future, which is
                                // not retriable, so `joinGroupIfNeeded` throws it from poll()
                                // and no SyncGroup goes out (AbstractCoordinator).
                                log!(
                                    env,
                                    "{name} assignor {protocol} failed: {e}; poll() throws it, \
                                     the consumer fails"
                                );
                                return self.fail_fatally(env, leader::thrown(&e));
                            }
                        }
                    } else {
                        None
                    };
                    self.classic().phase = ClassicMemberState::AwaitingSync;
                    // SyncGroup v5 echoes the protocol the JoinGroup response named.
                    env.send(SyncGroupRequest {
                        member_id: self.classic().member_id.clone(),
                        generation,
                        group_instance_id: self.spec.group_instance_id.clone(),
                        protocol_type,
                        protocol_name,
                        assignments,
                    });
                }
                ErrorCode::MemberIdRequired => {
                    self.classic().member_id = member_id;
                    self.send_join(env);
                }
                ErrorCode::InconsistentGroupProtocol => {
                    // A configuration error: KafkaConsumer.poll throws and the application exits.
                    log!(
                        env,
                        "{} JoinGroup: INCONSISTENT_GROUP_PROTOCOL, the consumer fails",
                        self.name()
                    );
                    self.fail_fatally(
                        env,
                        FatalError::Coordinator(ErrorCode::InconsistentGroupProtocol),
                    );
                }
                ErrorCode::UnknownMemberId => {
                    // `resetStateOnResponseError` sets `needsJoinPrepare`: onJoinPrepare runs
                    // again, now with NO_GENERATION, and gives up everything owned as lost
                    // before the JoinGroup that follows (AbstractCoordinator.joinGroupIfNeeded,
                    // ConsumerCoordinator.onJoinPrepare). The next poll loses them and joins.
                    self.reset_generation(true);
                    self.classic().membership_lost = true;
                    self.classic().phase = ClassicMemberState::Unjoined;
                }
                _ => {
                    self.reset_generation(true);
                    self.send_join(env);
                }
            },
            Response::SyncGroup(SyncGroupResponse {
                error, assignment, ..
            }) if self.classic().phase == ClassicMemberState::AwaitingSync => {
                match error {
                    ErrorCode::None => {
                        // STABLE from here (SyncGroupResponseHandler), before onJoinComplete:
                        // the listener's commit goes out in the new generation.
                        self.classic().phase = ClassicMemberState::Stable;
                        // Empty bytes (a member the leader left out) is an empty assignment.
                        let assignment = assignment.unwrap_or_default();
                        let foreign: Vec<usize> = assignment
                            .iter()
                            .copied()
                            .filter(|&p| !self.subscribes(env, p))
                            .collect();
                        if !foreign.is_empty() {
                            // `checkAssignmentMatchedSubscription` (onJoinComplete): made for a
                            // subscription changed since the JoinGroup (or handed back by
                            // StickyAssignor's previous-owner rule), it is not taken (no
                            // callback, no `onAssignment`, nothing owned changes) and the member
                            // rejoins with its current one.
                            log!(
                                env,
                                "{} received assignment naming {}, of topics it no longer subscribes to: rejoins",
                                self.name(),
                                env.partitions.list(&foreign)
                            );
                            env.fact(Fact::AssignmentRefused {
                                member: self.idx,
                                generation: self.classic().generation.unwrap_or(-1),
                                partitions: foreign,
                            });
                            self.request_rejoin(JoinReason::Subscription);
                            return;
                        }
                        let assigned = PartitionLookup::of(&assignment);
                        let revokes = self.owned.iter().any(|p| !assigned.contains(p));
                        if revokes
                            && env.scenario.group.commit_on_revoke
                            && self.generation_if_stable().is_some()
                        {
                            // The rebalance listener commits before giving partitions up.
                            self.send_commit(env);
                            self.block_on_commit(AfterCommit::Membership(
                                MembershipStep::CompleteJoin(assignment),
                            ));
                            return;
                        }
                        self.complete_join(env, assignment);
                    }
                    ErrorCode::RebalanceInProgress => {
                        self.classic().phase = ClassicMemberState::Unjoined;
                    }
                    other => {
                        self.reset_generation(other == ErrorCode::UnknownMemberId);
                        self.classic().membership_lost = true;
                        self.classic().phase = ClassicMemberState::Unjoined;
                    }
                }
            }
            // A response for a step the member has left behind.
            _ => {}
        }
    }

    /// `onJoinComplete`: revoke what was lost (COOPERATIVE) and ask to rejoin, take the new
    /// assignment, fetch committed offsets for what was added.
    pub(in crate::client) fn complete_join(&mut self, env: &mut ClientEnv, assignment: Vec<usize>) {
        let (assigned, owned) = (
            PartitionLookup::of(&assignment),
            PartitionLookup::of(&self.owned),
        );
        let revoked: Vec<usize> = self
            .owned
            .iter()
            .copied()
            .filter(|p| !assigned.contains(p))
            .collect();
        let (added, kept): (Vec<usize>, Vec<usize>) =
            assignment.iter().copied().partition(|p| !owned.contains(p));
        if !kept.is_empty() {
            env.fact(Fact::Kept {
                member: self.idx,
                partitions: kept,
            });
        }
        // MUTANT(skip-revocation): a cooperative member skips the revocation it owes (no
        // onPartitionsRevoked, it goes on fetching), yet reports only its new assignment.
        let skip = self.cooperative() && env.scenario.mutant == Some(Mutant::SkipRevocation);
        if !revoked.is_empty() && !skip {
            self.listener(env, Listener::Revoked, &revoked);
            self.drop_partitions(&revoked, env);
        }
        for &p in &added {
            self.task.assigned(p, env.standby.last_owner(p));
        }
        self.listener(env, Listener::Assigned, &added);
        // `assignor.onAssignment`: StickyAssignor's userData is this assignment, at this
        // generation, until the next one (CooperativeStickyAssignor keeps the generation).
        self.assigned_generation = self.classic().generation;
        if !self.cooperative() {
            self.previous_assignment.clone_from(&assignment);
        }
        self.owned = assignment;
        self.classic().phase = ClassicMemberState::Stable;
        // "Reschedule the auto commit starting from now" (onJoinComplete).
        self.reset_auto_commit_timer(env);
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
            self.note_rejoin(env, RejoinCause::FollowUp);
            self.request_rejoin(JoinReason::FollowUp);
        }
        let g = self.settings();
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

    /// `onJoinPrepare`: auto-commit (if enabled; the JoinGroup waits for the answer, see
    /// [`JoinPrepare`]), then revoke and join.
    /// The heartbeat thread goes on until the JoinGroup is sent (PREPARING_REBALANCE), so a
    /// long `onPartitionsRevoked` does not cost the member its session.
    pub(in crate::client) fn begin_join(&mut self, env: &mut ClientEnv) {
        self.classic().rejoin_needed = false;
        if std::mem::take(&mut self.classic().join_retry) {
            return self.send_join(env);
        }
        if self.join_prepare_waits(env) {
            // Still needed: the next poll calls onJoinPrepare again.
            self.classic().rejoin_needed = true;
            return;
        }
        self.metadata = env.metadata();
        self.classic().inbox.clear();
        self.prepare_and_join(env);
    }

    /// `onJoinPrepare`'s asynchronous auto-commit ([`JoinPrepare`]): whether the join waits for
    /// it this poll. Sends it at the first call (and again after a retriable failure); nothing
    /// to commit, or no generation to commit in, fails it at once and the member joins.
    fn join_prepare_waits(&mut self, env: &mut ClientEnv) -> bool {
        if !env.scenario.group.enable_auto_commit {
            return false;
        }
        let now = env.now();
        let rebalance_timeout = Duration::from_millis(self.settings().max_poll_interval_ms);
        let prepare = *self.classic().join_prepare.get_or_insert(JoinPrepare {
            since: now,
            commit: PrepareCommit::Retry,
        });
        if now - prepare.since >= rebalance_timeout {
            log!(
                env,
                "{} onJoinPrepare: its auto-commit timed out, it joins anyway",
                self.name()
            );
            self.classic().join_prepare = None;
            return false;
        }
        let commit = match prepare.commit {
            PrepareCommit::InFlight => return true,
            PrepareCommit::Answered => None,
            PrepareCommit::Failed => Some(PrepareCommit::Retry),
            PrepareCommit::Retry => {
                let sent = !self.positions.is_empty() && self.send_commit(env);
                sent.then_some(PrepareCommit::InFlight)
            }
        };
        self.classic().join_prepare = commit.map(|commit| JoinPrepare { commit, ..prepare });
        self.classic().join_prepare.is_some()
    }

    /// EAGER `onJoinPrepare` waits for its commit with every partition pending revocation:
    /// whether it does. Then the poll returns nothing, and the loop polls again when the answer
    /// comes (`join_prepare_commit_done` wakes it), after `retry.backoff.ms` to send a failed
    /// commit again, or at the fetch's max wait.
    pub(in crate::client) fn eager_awaits_join_prepare_commit(
        &mut self,
        env: &mut ClientEnv,
    ) -> bool {
        let Some(prepare) = self
            .classic_ref()
            .join_prepare
            .filter(|_| !self.cooperative())
        else {
            return false;
        };
        let g = &env.scenario.group;
        let wait = match prepare.commit {
            PrepareCommit::Retry => g.retry_backoff_ms,
            _ => g.fetch_max_wait_ms,
        };
        let at = env.now() + Duration::from_millis(wait);
        self.schedule_poll(env, at);
        true
    }

    /// An OffsetCommit was answered (`failed`: it got no answer): whether it was the one
    /// `onJoinPrepare` waits for. A member blocked in poll with nothing to process goes on at
    /// once (the network client's poll returns with the answer).
    pub(in crate::client) fn join_prepare_commit_done(
        &mut self,
        env: &mut ClientEnv,
        failed: bool,
    ) -> bool {
        let Some(prepare) = self.classic().join_prepare.as_mut() else {
            return false;
        };
        if prepare.commit != PrepareCommit::InFlight {
            return false;
        }
        prepare.commit = if failed {
            PrepareCommit::Failed
        } else {
            PrepareCommit::Answered
        };
        self.wake(env);
        true
    }

    /// EAGER revokes everything; COOPERATIVE only the topics no longer subscribed. Then the
    /// JoinGroup, after the revoke callback's time.
    pub(in crate::client) fn prepare_and_join(&mut self, env: &mut ClientEnv) {
        let revoked: Vec<usize> = if self.cooperative() {
            let owned = self.owned.iter().copied();
            owned.filter(|&p| !self.subscribes(env, p)).collect()
        } else {
            self.owned.clone()
        };
        if !revoked.is_empty() {
            self.listener(env, Listener::Revoked, &revoked);
            let gone = PartitionLookup::of(&revoked);
            self.owned.retain(|p| !gone.contains(p));
            self.drop_partitions(&revoked, env);
            let ms = self.settings().on_partitions_revoked_ms;
            self.classic().phase = ClassicMemberState::AwaitingJoin;
            self.callback(env, ms, AfterCallback::Membership(MembershipStep::SendJoin));
        } else {
            self.send_join(env);
        }
    }

    pub(in crate::client) fn send_join(&mut self, env: &mut ClientEnv) {
        // PREPARING_REBALANCE: the heartbeat thread stops until the JoinGroup is answered.
        self.disable_heartbeat(env);
        self.classic().phase = ClassicMemberState::AwaitingJoin;
        let spec = &self.spec;
        let metadata = Subscription {
            topics: self.topics.clone(),
            owned: if self.cooperative() {
                self.owned.clone()
            } else {
                Vec::new()
            },
            previous_assignment: self.previous_assignment.clone(),
            generation: self.classic_ref().generation,
            assigned_generation: self.assigned_generation,
            user_data: None,
            rack_id: spec.client_rack.clone(),
        };
        let request = JoinGroupRequest {
            version: JOIN_GROUP_VERSION,
            member_id: self.classic_ref().member_id.clone(),
            group_instance_id: spec.group_instance_id.clone(),
            client_id: spec.client_id.clone(),
            protocol_type: CONSUMER_PROTOCOL_TYPE.to_string(),
            protocols: spec
                .assignors
                .iter()
                .map(|name| JoinProtocol {
                    name: name.clone(),
                    metadata: metadata.clone(),
                })
                .collect(),
            rebalance_timeout_ms: self.settings().max_poll_interval_ms,
            session_timeout_ms: self.settings().session_timeout_ms,
            reason: if self.classic().member_id.is_empty() {
                JoinReason::New
            } else {
                self.classic().join_reason
            },
        };
        let id = self.classic().member_id.clone();
        if id.is_empty() {
            env.fact(Fact::Joining { member: self.idx });
        }
        self.classic().join_in_flight = true;
        env.fact(Fact::JoinGroupSent { member: self.idx });
        log!(
            env,
            "{} JoinGroup (member id {})",
            self.name(),
            if id.is_empty() { "none" } else { &id }
        );
        env.send(request);
    }

    /// The fact of why the member will rejoin, unless a rejoin is already due (its first cause
    /// is the one that counts).
    pub(in crate::client) fn note_rejoin(&self, env: &mut ClientEnv, cause: RejoinCause) {
        if !self.classic_ref().rejoin_needed {
            env.fact(Fact::RejoinNeeded {
                member: self.idx,
                cause,
            });
        }
    }

    /// Whether the member subscribes to partition `p`'s topic now.
    fn subscribes(&self, env: &ClientEnv, p: usize) -> bool {
        let topic = &env.scenario.topics[env.partitions.topic(p)].name;
        self.topics.contains(topic)
    }

    pub(in crate::client) fn request_rejoin(&mut self, reason: JoinReason) {
        if !self.classic().rejoin_needed {
            self.classic().join_reason = reason;
        }
        self.classic().rejoin_needed = true;
    }

    /// A metadata refresh: the leader rejoins when partition counts differ from those it last
    /// assigned with (`ConsumerCoordinator.rejoinNeededOrPending`).
    pub(in crate::client) fn refresh_metadata(&mut self, env: &mut ClientEnv) {
        self.metadata = env.metadata();
        let changed = self
            .classic_ref()
            .assignment_snapshot
            .as_ref()
            .is_some_and(|s| *s != self.metadata);
        if changed && self.classic().phase == ClassicMemberState::Stable {
            log!(env, "{} (leader) sees new partitions: rejoin", self.name());
            self.classic().assignment_snapshot = None;
            self.note_rejoin(env, RejoinCause::Metadata);
            self.request_rejoin(JoinReason::Metadata);
            self.wake(env);
        }
        let next = env.now() + Duration::from_millis(env.scenario.group.metadata_max_age_ms);
        env.after(next, ClientTimer::MetadataRefresh);
    }

    /// `resetStateOnResponseError`: an answer to `request` said `cause`'s error
    /// (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, ...) and ended the membership. The generation
    /// goes (and the member id, but for ILLEGAL_GENERATION), the heartbeat thread stops, and
    /// the next poll gives up what the member owns as lost and joins anew.
    pub(in crate::client) fn reset_state_on_response_error(
        &mut self,
        env: &mut ClientEnv,
        request: &str,
        cause: RejoinCause,
    ) {
        let (RejoinCause::HeartbeatError(error) | RejoinCause::CommitError(error)) = cause else {
            return;
        };
        log!(
            env,
            "{} {request}: {}, membership lost",
            self.name(),
            error.name()
        );
        env.fact(Fact::RejoinNeeded {
            member: self.idx,
            cause,
        });
        self.reset_generation(error != ErrorCode::IllegalGeneration);
        self.classic().membership_lost = true;
        self.request_rejoin(JoinReason::New);
        self.disable_heartbeat(env);
    }

    pub(in crate::client) fn reset_generation(&mut self, forget_member_id: bool) {
        self.classic().generation = None;
        if forget_member_id {
            self.classic().member_id.clear();
        }
    }
}
