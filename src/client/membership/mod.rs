//! The consumer's group membership, one value per protocol, as Kafka's consumer keeps the
//! classic `ConsumerCoordinator` (with its heartbeat thread) and KIP-848's
//! `ConsumerMembershipManager` apart behind the one `Consumer`:
//! - `classic/`: the classic membership (`mod.rs`: JoinGroup, SyncGroup, EAGER and COOPERATIVE
//!   revocation, rejoining; `heartbeat.rs`: its heartbeat thread; `leave.rs`: close and the poll
//!   timeout's LeaveGroup);
//! - `consumer/`: KIP-848's membership (`group.protocol=consumer`; `mod.rs`: its states, the
//!   poll's part, rejoining; `heartbeat.rs`: the heartbeat carrying what changed and its
//!   answers; `reconcile.rs`: reconciliation in `poll()`; `leave.rs`: leaving with epoch -1 or
//!   -2, on close or a poll timeout).
//!
//! The poll loop, the fetcher, the commit code and the coordinator lookup ask the membership a
//! few questions (what to do in this poll, what a commit is fenced by, whether a rebalance is
//! on, what a timer or an answer means to it, what to send on close) and never which protocol
//! runs: this file is the only place in the client that matches on it, so a third membership
//! (a Kafka Streams member under KIP-1071) fits beside the two without touching them.

mod classic;
mod consumer;

use classic::next_pass;
pub use classic::ClassicMemberState;
pub(super) use classic::ClassicMembership;
pub use consumer::ConsumerMemberState;
pub(super) use consumer::ConsumerMembership;

use super::*;

/// The member's group membership under the protocol it runs.
pub(super) enum Membership {
    /// `group.protocol=classic`: the `ConsumerCoordinator` and its heartbeat thread.
    Classic(ClassicMembership),
    /// `group.protocol=consumer` (KIP-848): the `ConsumerMembershipManager`.
    Consumer(ConsumerMembership),
}

/// A step of the membership that waits for a listener callback's time or a synchronous
/// commit's answer, then goes on.
#[derive(Debug)]
pub(super) enum MembershipStep {
    /// Classic: send the JoinGroup (after `onJoinPrepare`'s revocation callback).
    SendJoin,
    /// Classic: `onJoinComplete` with the assignment (its cooperative revocation committed
    /// first).
    CompleteJoin(Vec<usize>),
    /// KIP-848: queue the revocation of these (after the auto-commit before a
    /// reconciliation's revocation).
    Revoke(Vec<usize>),
    /// KIP-848: queue the assignment of what the reconciliation adds (after
    /// `onPartitionsRevoked` completed).
    Assign,
    /// KIP-848: acknowledge (after `onPartitionsAssigned` completed).
    Acknowledge,
}

impl Membership {
    /// A new process's membership, for the protocol its configuration names.
    pub(super) fn for_spec(spec: &MemberSpec) -> Self {
        match spec.protocol {
            Protocol::Consumer => Membership::Consumer(ConsumerMembership::new()),
            Protocol::Classic => {
                let mut m = ClassicMembership::new();
                m.protocol = spec.rebalance_protocol;
                Membership::Classic(m)
            }
        }
    }

    /// The classic membership, if that is the protocol.
    pub(super) fn as_classic(&self) -> Option<&ClassicMembership> {
        match self {
            Membership::Classic(m) => Some(m),
            Membership::Consumer(_) => None,
        }
    }

    /// In a rebalance, or about to start one.
    pub(super) fn is_rebalancing(&self) -> bool {
        match self {
            Membership::Classic(m) => m.is_rebalancing(),
            Membership::Consumer(m) => m.is_rebalancing(),
        }
    }

    /// Where the member is in a rebalance, in words; `None` when settled.
    pub(super) fn rebalance_step(&self) -> Option<&'static str> {
        match self {
            Membership::Classic(m) => m.rebalance_step(),
            Membership::Consumer(m) => m.rebalance_step(),
        }
    }

    /// The member id its requests carry (empty: none yet).
    pub(super) fn member_id(&self) -> &str {
        match self {
            Membership::Classic(m) => &m.member_id,
            Membership::Consumer(m) => &m.member_id,
        }
    }

    /// What fences its commits: the generation a classic member commits in once its
    /// JoinGroup and SyncGroup are answered (`generationIfStable`: a member between them
    /// commits nothing), or a KIP-848 member's epoch while it is in the group.
    pub(super) fn commit_generation(&self) -> Option<i32> {
        match self {
            Membership::Classic(m) if m.phase != ClassicMemberState::Stable => None,
            Membership::Classic(m) => m.generation,
            Membership::Consumer(m) => m.commit_epoch,
        }
    }

    /// Whether this poll reaches the periodic auto-commit: the classic coordinator's poll
    /// returns before it while the coordinator is unknown and while a rebalance is due or in
    /// progress (see `Consumer::maybe_auto_commit`); a KIP-848 member auto-commits on its
    /// interval whatever its reconciliation.
    pub(super) fn auto_commit_reached(&self, coordinator_known: bool) -> bool {
        match self {
            Membership::Classic(m) => coordinator_known && !m.is_rebalancing(),
            Membership::Consumer(_) => true,
        }
    }

    /// Whether FindCoordinator backs off on its own (KIP-848's `CoordinatorRequestManager`
    /// and its `RequestState`); a classic member looks on its callers' backoffs.
    pub(super) fn lookup_backs_off(&self) -> bool {
        matches!(self, Membership::Consumer(_))
    }

    /// Whether an error answer that loses the coordinator also closes the connection to it
    /// (the classic `markCoordinatorUnknown` disconnects; KIP-848's `CoordinatorRequestManager`
    /// only forgets the coordinator).
    pub(super) fn disconnects_on_error_answer(&self) -> bool {
        matches!(self, Membership::Classic(_))
    }

    /// Whether the poll loop is to run when a lookup has named the coordinator: a classic
    /// member with a join due; a KIP-848 member always (its poll's membership part acts with
    /// the coordinator known).
    pub(super) fn wakes_when_coordinator_found(&self) -> bool {
        match self {
            Membership::Classic(m) => m.join_due(),
            Membership::Consumer(_) => true,
        }
    }
}

impl Consumer {
    /// The classic membership, for the classic steps (`classic.rs`, `heartbeat.rs`).
    pub(super) fn classic(&mut self) -> &mut ClassicMembership {
        match &mut self.membership {
            Membership::Classic(m) => m,
            Membership::Consumer(_) => unreachable!("a classic step of a KIP-848 member"),
        }
    }

    /// The classic membership, read-only.
    pub(super) fn classic_ref(&self) -> &ClassicMembership {
        match &self.membership {
            Membership::Classic(m) => m,
            Membership::Consumer(_) => unreachable!("a classic step of a KIP-848 member"),
        }
    }

    /// KIP-848's membership, for its steps (`consumer.rs`).
    pub(super) fn kip848(&mut self) -> &mut ConsumerMembership {
        match &mut self.membership {
            Membership::Consumer(m) => m,
            Membership::Classic(_) => unreachable!("a KIP-848 step of a classic member"),
        }
    }

    /// A new process starts its membership (KIP-848: its member id, and the background
    /// thread's poll timer).
    pub(super) fn start_membership(&mut self, env: &mut ClientEnv) {
        if let Membership::Consumer(_) = self.membership {
            self.start_consumer_protocol(env);
        }
    }

    /// The membership's part of a `poll()`: the rebalance steps due (classic: lost partitions,
    /// the answers received, the join; KIP-848: lost partitions and rejoining, or the
    /// reconciliation), with the coordinator looked for first. Returns whether the poll goes
    /// on to fetch and process.
    pub(super) fn poll_membership(&mut self, env: &mut ClientEnv) -> bool {
        match self.membership {
            Membership::Classic(_) => self.poll_classic(env),
            Membership::Consumer(_) => self.poll_consumer_protocol(env),
        }
    }

    /// The poll loop's pass is over (the KIP-848 application thread's pass, see
    /// `consumer/mod.rs`): unless something holds it, the next `poll()` starts a new one.
    pub(super) fn membership_pass_done(&mut self) {
        if let Membership::Consumer(_) = self.membership {
            self.end_consumer_pass();
        }
    }

    /// How long an idle poll waits for records at most: a KIP-848 member that owns no
    /// partition waits `retry.backoff.ms` (`AsyncKafkaConsumer.pollForFetches`), so its poll
    /// loop passes, and its `AsyncPollEvent`s go, that often; a classic one waits for records.
    pub(super) fn membership_wait_cap(&self, env: &ClientEnv, wake: SimTime) -> SimTime {
        match self.membership {
            Membership::Consumer(_) if self.owned.is_empty() => {
                wake.min(env.now() + Duration::from_millis(env.scenario.group.retry_backoff_ms))
            }
            _ => wake,
        }
    }

    /// One of the membership's timers fires (the heartbeat, the poll timer, a metadata
    /// refresh, a heartbeat-thread pass).
    pub(super) fn on_membership_timer(&mut self, env: &mut ClientEnv, timer: ClientTimer) {
        match (&self.membership, timer) {
            (Membership::Classic(_), ClientTimer::Heartbeat) => self.send_heartbeat(env),
            (Membership::Classic(_), ClientTimer::HeartbeatRead) => {
                self.read_heartbeat_answers(env);
            }
            (Membership::Classic(_), ClientTimer::PollTimer) => self.check_poll_timer(env),
            (Membership::Classic(_), ClientTimer::MetadataRefresh) => self.refresh_metadata(env),
            (Membership::Classic(_), ClientTimer::SessionCheck) => self.check_session(env),
            (Membership::Consumer(_), ClientTimer::Heartbeat) => self.send_consumer_heartbeat(env),
            (Membership::Consumer(_), ClientTimer::PollTimer) => {
                self.consumer_check_poll_timer(env)
            }
            // The consumer protocol's broker watches the metadata itself.
            (Membership::Consumer(_), ClientTimer::MetadataRefresh) => {
                self.metadata = env.metadata();
            }
            // The classic heartbeat thread's passes: never armed under KIP-848.
            (Membership::Consumer(_), ClientTimer::HeartbeatRead | ClientTimer::SessionCheck) => {}
            (_, timer) => unreachable!("{timer:?} is not the membership's"),
        }
    }

    /// `subscribe()` changed the topic list: a classic member rejoins at its next poll; a
    /// KIP-848 member's next heartbeat carries it (the broker trims and reassigns).
    pub(super) fn membership_subscribed(&mut self, env: &mut ClientEnv) {
        if let Membership::Classic(_) = self.membership {
            self.note_rejoin(env, crate::facts::RejoinCause::Subscription);
            self.request_rejoin(JoinReason::Subscription);
            self.wake(env);
        }
    }

    /// A lookup named the coordinator: the classic heartbeat thread's session timer starts
    /// over (`Heartbeat.resetSessionTimeout`).
    pub(super) fn membership_coordinator_found(&mut self, env: &mut ClientEnv) {
        if let Membership::Classic(_) = self.membership {
            self.reset_session_timer(env);
        }
    }

    /// The coordinator is known again: a KIP-848 heartbeat that could not go, goes.
    pub(super) fn membership_resume_with_coordinator(&mut self, env: &mut ClientEnv) {
        if let Membership::Consumer(m) = &mut self.membership {
            if std::mem::take(&mut m.retry_heartbeat) {
                self.send_consumer_heartbeat(env);
            }
        }
    }

    /// A JoinGroup went out with no answer yet, and the membership was reset meanwhile: the
    /// next poll joins anew (classic only: nothing else is in flight that way).
    pub(super) fn membership_join_failed_while_reset(&mut self, env: &mut ClientEnv) {
        if let Membership::Classic(m) = &mut self.membership {
            if std::mem::take(&mut m.join_in_flight) && m.phase != ClassicMemberState::AwaitingJoin
            {
                self.wake(env);
            }
        }
    }

    /// A membership request got no answer from the group (see `coordinator.rs`):
    /// `loading` keeps the coordinator (COORDINATOR_LOAD_IN_PROGRESS).
    pub(super) fn membership_request_failed(
        &mut self,
        env: &mut ClientEnv,
        kind: RequestKind,
        error: ErrorCode,
    ) {
        match self.membership {
            Membership::Classic(_) => self.classic_request_failed(env, kind, error),
            Membership::Consumer(_) if kind == RequestKind::ConsumerGroupHeartbeat => {
                self.consumer_heartbeat_failed(env, error)
            }
            Membership::Consumer(_) => {}
        }
    }

    /// An OffsetCommit was answered with `error`, sent in `sent_generation`: what the classic
    /// `OffsetCommitResponseHandler` makes of it (KIP-848's commit errors are not modelled).
    pub(super) fn membership_commit_error(
        &mut self,
        env: &mut ClientEnv,
        error: ErrorCode,
        sent_generation: Option<i32>,
    ) {
        if let Membership::Classic(_) = self.membership {
            self.classic_commit_error(env, error, sent_generation);
        }
    }

    /// An OffsetCommit was answered (`failed`: it failed with a retriable error): whether it
    /// was the classic `onJoinPrepare`'s auto-commit, which the join was waiting for.
    pub(super) fn prepare_commit_done(&mut self, env: &mut ClientEnv, failed: bool) -> bool {
        match self.membership {
            Membership::Classic(_) => self.join_prepare_commit_done(env, failed),
            Membership::Consumer(_) => false,
        }
    }

    /// A group answer for the membership: JoinGroup, SyncGroup and Heartbeat for a classic
    /// member, ConsumerGroupHeartbeat for a KIP-848 one; an answer of the other protocol's
    /// (never sent by this process) is dropped.
    pub(super) fn on_membership_response(&mut self, env: &mut ClientEnv, response: Response) {
        match (&self.membership, response) {
            (Membership::Consumer(_), Response::ConsumerGroupHeartbeat(response)) => {
                self.on_consumer_heartbeat_response(env, response)
            }
            (
                Membership::Classic(_),
                response @ (Response::JoinGroup(_) | Response::SyncGroup(_)),
            ) => self.on_join_or_sync_answer(env, response),
            (Membership::Classic(_), Response::Heartbeat(response)) => {
                self.on_heartbeat_answer(env, response.error)
            }
            _ => {}
        }
    }

    /// A membership step that waited for a callback or a commit goes on.
    pub(super) fn membership_step(&mut self, env: &mut ClientEnv, step: MembershipStep) {
        match step {
            MembershipStep::SendJoin => self.send_join(env),
            MembershipStep::CompleteJoin(assignment) => self.complete_join(env, assignment),
            // `maybeAbortReconciliation`: a member that left RECONCILING while the commit or a
            // callback ran (fenced, stale, leaving) stops the reconciliation there: nothing more
            // is revoked, assigned or acknowledged, and its next poll acts on the new state.
            MembershipStep::Revoke(_) | MembershipStep::Assign | MembershipStep::Acknowledge
                if !self.still_reconciling() =>
            {
                self.abort_reconciliation();
            }
            MembershipStep::Revoke(revoked) => self.queue_revocation(env, revoked),
            MembershipStep::Assign => self.queue_assignment(env),
            MembershipStep::Acknowledge => self.acknowledge(env),
        }
    }

    /// `close()` begins: the heartbeats stop, then the auto-commit, then
    /// [`finish_close`](Consumer::finish_close).
    pub(super) fn begin_close(&mut self, env: &mut ClientEnv) {
        self.closing = false;
        match &mut self.membership {
            Membership::Classic(_) => self.disable_heartbeat(env),
            // The same timers go (the leave heartbeat is sent at the end).
            Membership::Consumer(_) => {
                env.cancel_timer(ClientTimer::Heartbeat);
                env.cancel_timer(ClientTimer::PollTimer);
                env.cancel_timer(ClientTimer::SessionCheck);
            }
        }
        if !self.auto_commit_sync(env, AfterCommit::Close) {
            self.finish_close(env);
        }
    }

    /// `close()` after its commit: `onPartitionsRevoked` for everything, then the leave.
    pub(super) fn finish_close(&mut self, env: &mut ClientEnv) {
        match self.membership {
            Membership::Classic(_) => self.classic_finish_close(env),
            Membership::Consumer(_) => self.consumer_finish_close(env),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load_str, LoadOptions};

    /// `c1`'s spec in a group of `group` TOML.
    fn spec(group: &str) -> MemberSpec {
        let toml = format!(
            "name = \"t\"\nduration_ms = 60000\n\n[[topics]]\nname = \"orders\"\npartitions = 4\n\n\
             [group]\n{group}\n\n[[members]]\nname = \"c1\"\n"
        );
        let scenario = load_str("t", &toml, &LoadOptions::default()).expect("valid scenario");
        scenario.members[0].clone()
    }

    fn classic(phase: ClassicMemberState, generation: Option<i32>) -> Membership {
        let mut m = ClassicMembership::new();
        m.phase = phase;
        m.generation = generation;
        Membership::Classic(m)
    }

    fn kip848(commit_epoch: Option<i32>) -> Membership {
        let mut m = ConsumerMembership::new();
        m.commit_epoch = commit_epoch;
        Membership::Consumer(m)
    }

    /// The protocol a process runs decides its membership; a classic one runs the rebalance
    /// protocol every assignor it lists supports (KIP-429).
    #[test]
    fn the_spec_names_the_membership() {
        assert!(matches!(
            Membership::for_spec(&spec("protocol = \"consumer\"")),
            Membership::Consumer(_)
        ));
        let cooperative = Membership::for_spec(&spec("assignors = [\"cooperative-sticky\"]"));
        let eager = Membership::for_spec(&spec("assignors = [\"range\", \"cooperative-sticky\"]"));
        assert_eq!(
            cooperative.as_classic().map(|m| m.protocol),
            Some(RebalanceProtocol::Cooperative)
        );
        assert_eq!(
            eager.as_classic().map(|m| m.protocol),
            Some(RebalanceProtocol::Eager)
        );
    }

    /// What fences a commit: a classic member's generation once its JoinGroup and SyncGroup
    /// are answered (`generationIfStable`), a KIP-848 member's epoch while it is in the group.
    #[test]
    fn a_commit_goes_out_in_a_stable_generation_or_the_member_epoch() {
        assert_eq!(
            classic(ClassicMemberState::Stable, Some(3)).commit_generation(),
            Some(3)
        );
        assert_eq!(
            classic(ClassicMemberState::AwaitingJoin, Some(3)).commit_generation(),
            None
        );
        assert_eq!(
            classic(ClassicMemberState::AwaitingSync, Some(3)).commit_generation(),
            None
        );
        assert_eq!(
            classic(ClassicMemberState::Stable, None).commit_generation(),
            None
        );
        assert_eq!(kip848(Some(7)).commit_generation(), Some(7));
        assert_eq!(kip848(None).commit_generation(), None, "fenced or stale");
    }

    /// The classic coordinator's poll reaches the periodic auto-commit only with the
    /// coordinator known and no rebalance due or running; a KIP-848 member's always does.
    #[test]
    fn the_auto_commit_is_reached_as_each_protocol_polls() {
        let stable = classic(ClassicMemberState::Stable, Some(1));
        assert!(stable.auto_commit_reached(true));
        assert!(!stable.auto_commit_reached(false));
        assert!(!classic(ClassicMemberState::AwaitingSync, Some(1)).auto_commit_reached(true));
        let mut rejoining = ClassicMembership::new();
        rejoining.phase = ClassicMemberState::Stable;
        rejoining.rejoin_needed = true;
        assert!(!Membership::Classic(rejoining).auto_commit_reached(true));
        assert!(kip848(None).auto_commit_reached(false));
    }

    /// KIP-848's `CoordinatorRequestManager` backs its lookups off on its own and only forgets
    /// a coordinator that answered with an error; the classic `markCoordinatorUnknown` also
    /// disconnects. A classic member is woken when the coordinator is found only to join; a
    /// KIP-848 member's poll always has its part to play.
    #[test]
    fn the_coordinator_lookup_follows_each_protocols_manager() {
        let stable = classic(ClassicMemberState::Stable, Some(1));
        let unjoined = classic(ClassicMemberState::Unjoined, None);
        let consumer = kip848(Some(1));
        assert!(!stable.lookup_backs_off() && consumer.lookup_backs_off());
        assert!(stable.disconnects_on_error_answer() && !consumer.disconnects_on_error_answer());
        assert!(!stable.wakes_when_coordinator_found());
        assert!(unjoined.wakes_when_coordinator_found());
        assert!(consumer.wakes_when_coordinator_found());
    }

    /// Each membership answers for its own member id, and says where a rebalance stands.
    #[test]
    fn the_member_id_and_the_rebalance_step_are_the_memberships() {
        let mut m = ClassicMembership::new();
        m.member_id = "c1-uuid".into();
        m.phase = ClassicMemberState::AwaitingSync;
        let classic = Membership::Classic(m);
        assert_eq!(classic.member_id(), "c1-uuid");
        assert!(classic.is_rebalancing());
        assert_eq!(
            classic.rebalance_step(),
            Some("waiting for its SyncGroup answer")
        );
        let mut m = ConsumerMembership::new();
        m.member_id = "base64-uuid".into();
        let consumer = Membership::Consumer(m);
        assert_eq!(consumer.member_id(), "base64-uuid");
        assert_eq!(consumer.rebalance_step(), Some("joining (epoch 0)"));
    }
}
