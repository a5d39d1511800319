//! Finding the coordinator, and what the consumer does when a request to it fails (Kafka's
//! `AbstractCoordinator` / `ConsumerCoordinator`, and KIP-848's heartbeat manager):
//! - a disconnect, a request timeout, NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE marks the
//!   coordinator unknown (`markCoordinatorUnknown`; the classic consumer also closes its
//!   connection to it after an error answer); FindCoordinator is sent again, to any
//!   broker, every `retry.backoff.ms` until one names a coordinator the client can connect to
//!   (a classic poll in `ensureCoordinatorReady`: exponentially within that call; KIP-848's
//!   `CoordinatorRequestManager`: after its `RequestState`'s exponential backoff, one step per
//!   failed lookup in a row, the first step after a success);
//! - a Heartbeat that failed is retried after the backoff (`failHeartbeat`); a JoinGroup or
//!   SyncGroup that failed rejoins with a new JoinGroup, same member id and generation, without
//!   running `onJoinPrepare` again; a `commitSync` and an OffsetFetch are sent again once
//!   their backoff has passed (exponential over the failures of one call,
//!   `backoff::SyncRetry`) and the coordinator is known; an async commit is dropped (its
//!   callback gets a retriable error);
//! - KIP-848: the next ConsumerGroupHeartbeat is a full one (`resetHeartbeatState`);
//! - nothing gives up the member's partitions: it goes on fetching and processing them from
//!   the leaders it can reach, until an answer says it was fenced (a zombie, as in Kafka);
//! - each `poll()` with the coordinator unknown blocks in `ensureCoordinatorReady` until it is
//!   found or the poll's timeout (`poll_timeout_ms`) has passed, then fetches anyway.
//!
//! COORDINATOR_LOAD_IN_PROGRESS keeps the coordinator: no lookup, what failed goes again to
//! the same broker after its backoff (a Heartbeat after `failHeartbeat`'s, a JoinGroup after
//! the poll loop's `retry.backoff.ms` sleep in `joinGroupIfNeeded`, a `commitSync` and an
//! OffsetFetch after their calls' exponential one, the KIP-848 heartbeat at once while
//! JOINING and after its `RequestState`'s backoff otherwise; an async commit is dropped). A
//! SyncGroup answered COORDINATOR_LOAD_IN_PROGRESS is fatal to the classic consumer
//! (`SyncGroupResponseHandler` has no case for it: "Unexpected error from SyncGroup", poll()
//! throws).

use super::*;
use crate::messages::{FindCoordinatorRequest, OffsetFetchRequest};

impl Consumer {
    /// The coordinator this member would send to (`None`: unknown).
    pub fn coordinator(&self) -> Option<u32> {
        self.coordinator
    }

    /// `ensureCoordinatorReady`: whether the coordinator is known; if not, the poll waits while
    /// FindCoordinator looks for it.
    pub(super) fn ensure_coordinator(&mut self, env: &mut ClientEnv) -> bool {
        if self.coordinator.is_some() {
            return true;
        }
        self.lookup_coordinator(env);
        if self.waiting_for_coordinator.is_none() {
            // A new `ensureCoordinatorReady` call: its backoff starts over.
            self.poll_lookup_failures = 0;
            self.waiting_for_coordinator = Some(env.now());
        }
        self.app = App::Blocked;
        false
    }

    /// FindCoordinator, unless one is in flight. KIP-848's `CoordinatorRequestManager` sends
    /// none before the backoff of the last answer has passed (its `RequestState`): the lookup
    /// goes then.
    pub(super) fn lookup_coordinator(&mut self, env: &mut ClientEnv) {
        if self.membership.lookup_backs_off()
            && !self.finding_coordinator
            && env.now() < self.lookup_backoff.until
        {
            return self.retry_lookup(env, false);
        }
        if !self.finding_coordinator {
            self.finding_coordinator = true;
            log!(env, "{} FindCoordinator", self.name());
            env.send(FindCoordinatorRequest);
        }
    }

    /// A FindCoordinator answer named `broker`.
    pub(super) fn coordinator_named(&mut self, env: &mut ClientEnv, broker: u32) {
        if !self.finding_coordinator {
            return;
        }
        self.finding_coordinator = false;
        if self.membership.lookup_backs_off() {
            // The lookup succeeded, whatever connecting to the broker it names does next.
            self.lookup_backoff.succeeded(env);
        }
        // Taken on the lookup's word, as Kafka's FindCoordinator handler takes it: whether it
        // can be reached, down or cut off, the client finds out by connecting (refused at once,
        // or no answer to the SYN within `socket.connection.setup.timeout.ms`), fetching on
        // meanwhile. (Kafka starts connecting here, `client.tryConnect`; the model with the
        // first request that follows.)
        self.coordinator = Some(broker);
        self.membership_coordinator_found(env);
        self.resume_with_coordinator(env);
    }

    /// An answer from the coordinator: a coordinator lost is found once one comes (a lookup
    /// only names it).
    pub(super) fn coordinator_reached(&mut self, env: &mut ClientEnv) {
        let Some(broker) = self.coordinator.filter(|_| self.coordinator_lost) else {
            return;
        };
        self.coordinator_lost = false;
        log!(
            env,
            "{} reaches the coordinator on broker-{broker}",
            self.name()
        );
        env.fact(Fact::CoordinatorFound {
            member: self.idx,
            broker,
        });
    }

    /// What waited for the coordinator goes on: a lookup named it, or a retry's backoff has
    /// passed with it known.
    fn resume_with_coordinator(&mut self, env: &mut ClientEnv) {
        self.send_waiting_async_commits(env);
        let now = env.now();
        if self.commit_retry.take_due(now) && self.after_commit.is_some() && !self.send_commit(env)
        {
            return self.commit_answered(env);
        }
        if self.offsets_retry.take_due(now) && self.awaiting_offsets {
            let partitions = self.offsets_requested.clone();
            env.send(OffsetFetchRequest { partitions });
        }
        self.membership_resume_with_coordinator(env);
        if self.waiting_for_coordinator.take().is_some() {
            self.app = App::Idle;
            self.poll(env);
        } else if self.membership.wakes_when_coordinator_found() {
            self.wake(env);
        }
    }

    /// A FindCoordinator failed: KIP-848's next waits one more step of the exponential
    /// backoff (`RequestState.onFailedAttempt`).
    pub(super) fn lookup_failed(&mut self, env: &mut ClientEnv) {
        if self.membership.lookup_backs_off() {
            self.lookup_backoff.failed(env);
        }
        self.lookup_gave_nothing(env);
    }

    /// No coordinator to connect to yet: look again after the backoff; a poll waiting for it
    /// goes on without it once its timeout has passed.
    fn lookup_gave_nothing(&mut self, env: &mut ClientEnv) {
        self.finding_coordinator = false;
        // The asynchronous commits chained on this lookup fail (RetriableCommitFailedException).
        self.async_commits_waiting.clear();
        let now = env.now();
        self.retry_lookup(env, true);
        if let Some(since) = self.waiting_for_coordinator {
            let deadline = since + Duration::from_millis(env.scenario.group.poll_timeout_ms);
            if now >= deadline {
                self.stop_waiting_for_coordinator(env);
            } else if !self.coordinator_wait_armed {
                self.coordinator_wait_armed = true;
                env.after(deadline, ClientTimer::CoordinatorWait);
            }
        }
    }

    /// The poll's timeout passed while it looked for the coordinator: it fetches anyway.
    pub(super) fn stop_waiting_for_coordinator(&mut self, env: &mut ClientEnv) {
        self.coordinator_wait_armed = false;
        let Some(since) = self.waiting_for_coordinator.take() else {
            return;
        };
        env.fact(Fact::PollBlockedOnCoordinator {
            member: self.idx,
            ms: (env.now() - since).as_millis(),
        });
        self.app = App::Idle;
        self.skip_coordinator_once = true;
        self.poll(env);
    }

    /// A retry's backoff has passed: a synchronous commit or an OffsetFetch goes again, if the
    /// coordinator is known (else the lookup that finds one sends it), and a poll loop that
    /// slept before its next JoinGroup goes on.
    pub(super) fn retry_backoff_passed(&mut self, env: &mut ClientEnv) {
        let now = env.now();
        let due = self.commit_retry.is_due(now) || self.offsets_retry.is_due(now);
        if due && self.coordinator.is_some() {
            self.resume_with_coordinator(env);
        }
        if self.join_backoff_until.is_some_and(|at| at <= now) {
            self.join_backoff_until = None;
            if matches!(self.app, App::Blocked) {
                self.app = App::Idle;
                self.poll(env);
            }
        }
    }

    /// One lookup retry pending at a time: `retry.backoff.ms` from now; under KIP-848 once the
    /// lookup's own backoff has passed (at once when it has: the background thread sends
    /// FindCoordinator on its next pass after the coordinator is lost); for a classic poll
    /// waiting in `ensureCoordinatorReady` after a lookup that `found_nothing`, the call's
    /// `retryBackoff.backoff(attempts++)` (exponential within the call; the heartbeat thread,
    /// when enabled, still looks on its own passes).
    /// A KIP-848 retry armed before a success may fall after the next one is due: the new one
    /// replaces it (the old timer, when it fires, is stale).
    fn retry_lookup(&mut self, env: &mut ClientEnv, found_nothing: bool) {
        let now = env.now();
        let backs_off = self.membership.lookup_backs_off();
        let at = if backs_off {
            self.lookup_backoff.until.max(now)
        } else if found_nothing && self.waiting_for_coordinator.is_some() {
            let backoff = env.retry_backoff(self.poll_lookup_failures);
            self.poll_lookup_failures = self.poll_lookup_failures.saturating_add(1);
            now + backoff
        } else {
            now + Duration::from_millis(env.scenario.group.retry_backoff_ms)
        };
        if self
            .lookup_retry_at
            .is_none_or(|armed| armed > at && backs_off)
        {
            self.lookup_retry_at = Some(at);
            env.after(at, ClientTimer::FindCoordinator);
        }
    }

    pub(super) fn mark_coordinator_unknown(
        &mut self,
        env: &mut ClientEnv,
        error: ErrorCode,
        cause: &str,
    ) {
        if self.coordinator.take().is_none() {
            return;
        }
        log!(
            env,
            "{} marks the coordinator unknown ({cause})",
            self.name()
        );
        // Lost until it answers again: a lookup naming a broker it cannot reach ends nothing.
        if !self.coordinator_lost {
            self.coordinator_lost = true;
            env.fact(Fact::CoordinatorUnknown {
                member: self.idx,
                error,
            });
        }
    }

    /// A request got no answer from the group: see the module's comment.
    pub(super) fn request_failed(
        &mut self,
        env: &mut ClientEnv,
        kind: RequestKind,
        error: ErrorCode,
    ) {
        if kind == RequestKind::FindCoordinator {
            return self.lookup_failed(env);
        }
        log!(
            env,
            "{} {} failed: {}",
            self.name(),
            kind.name(),
            error.name()
        );
        // COORDINATOR_LOAD_IN_PROGRESS keeps the coordinator: the request goes again to it
        // after the backoff (the classic handlers "just retry" or back off, KIP-848's
        // heartbeat and commit managers likewise); every other error here loses it.
        let loading = error == ErrorCode::CoordinatorLoadInProgress;
        let coordinator = self.coordinator;
        if !loading {
            self.mark_coordinator_unknown(env, error, error.name());
        }
        // An error answer came on a live connection: the classic consumer's
        // `markCoordinatorUnknown` disconnects from the coordinator it knew, so what else is
        // in flight on it fails and the answers on their way back are lost (KIP-848's
        // `CoordinatorRequestManager` only forgets the coordinator).
        let answered = matches!(
            error,
            ErrorCode::NotCoordinator | ErrorCode::CoordinatorNotAvailable
        );
        if let Some(broker) =
            coordinator.filter(|_| answered && self.membership.disconnects_on_error_answer())
        {
            env.disconnect(broker);
        }
        // The coordinator is looked for again after the backoff (`joinGroupIfNeeded`,
        // `commitOffsetsSync` and the heartbeat thread sleep `retry.backoff.ms` first).
        if !loading {
            self.retry_lookup(env, false);
        }
        if kind == RequestKind::JoinGroup {
            self.membership_join_failed_while_reset(env);
        }
        if kind == RequestKind::OffsetCommit {
            self.commits_in_flight.pop_front();
        }
        let join_prepare_commit =
            kind == RequestKind::OffsetCommit && self.prepare_commit_done(env, true);
        match kind {
            // onJoinPrepare sends it again (its future failed with a retriable error).
            RequestKind::OffsetCommit if join_prepare_commit => {}
            // Only a synchronous commit (the poll loop waits on it) is sent again, after the
            // exponential backoff of one more failure in this call (`commitOffsetsSync`;
            // KIP-848's commit `RequestState`); `onJoinPrepare`'s is sent again by its next call
            // (above).
            RequestKind::OffsetCommit if self.after_commit.is_some() => {
                let backoff = env.retry_backoff(self.commit_retry.attempts);
                self.commit_retry.schedule(env, backoff);
            }
            RequestKind::OffsetCommit => self.auto_commit_failed(env),
            // `fetchCommittedOffsets` (and KIP-848's OffsetFetch `RequestState`) likewise.
            RequestKind::OffsetFetch if self.awaiting_offsets => {
                let backoff = env.retry_backoff(self.offsets_retry.attempts);
                self.offsets_retry.schedule(env, backoff);
            }
            // The membership's own requests (Heartbeat, JoinGroup, SyncGroup,
            // ConsumerGroupHeartbeat).
            _ => self.membership_request_failed(env, kind, error),
        }
    }
}
