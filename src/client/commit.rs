//! Offset commits: auto-commit on the interval, asynchronously in `onJoinPrepare`
//! (`classic::JoinPrepare`) and synchronously in `close()` and before a KIP-848 revocation;
//! `commitSync`/`commitAsync` after a batch; the listener's commit before giving partitions up.

use super::*;
use crate::messages::OffsetCommitRequest;

impl Consumer {
    /// `maybeAutoCommitOffsetsAsync`: once the auto-commit timer has passed, it is reset and
    /// the positions are committed asynchronously (none consumed: the commit of no offsets
    /// completes locally, nothing is sent).
    pub(super) fn maybe_auto_commit(&mut self, env: &mut ClientEnv) {
        let g = &env.scenario.group;
        let now = env.now();
        if !g.enable_auto_commit || !self.auto_commit_reached() || now < self.next_auto_commit {
            return;
        }
        self.next_auto_commit = now + Duration::from_millis(g.auto_commit_interval_ms);
        if !self.positions.is_empty() {
            self.commit_async(env);
        }
    }

    /// The auto-commit timer starts over from now (`nextAutoCommitTimer.updateAndReset`): at
    /// the process's start and in `onJoinComplete`.
    pub(super) fn reset_auto_commit_timer(&mut self, env: &ClientEnv) {
        let interval = Duration::from_millis(env.scenario.group.auto_commit_interval_ms);
        self.next_auto_commit = env.now() + interval;
    }

    /// An asynchronous commit failed with a retriable error: the auto-commit's callback sets
    /// its timer to the retry backoff (`autoCommitOffsetsAsync`). A member that also commits
    /// asynchronously after every batch is taken to have lost one of those (its callback is
    /// the application's), far more frequent than the auto-commit.
    pub(super) fn auto_commit_failed(&mut self, env: &ClientEnv) {
        let g = &env.scenario.group;
        if g.enable_auto_commit && g.commit_after_batch != CommitAfterBatch::Async {
            let retry = env.now() + Duration::from_millis(g.retry_backoff_ms);
            self.next_auto_commit = self.next_auto_commit.min(retry);
        }
    }

    /// Whether this poll reaches the classic coordinator's periodic auto-commit: its poll
    /// (ConsumerCoordinator.poll) returns before it while the coordinator is unknown
    /// (`coordinatorUnknownAndUnreadySync`) and while a rebalance is due or in progress
    /// (`ensureActiveGroup` with a zero timer returns false: `onJoinPrepare` waits for its
    /// commit, or the JoinGroup or SyncGroup is unanswered). The poll that completes the
    /// rebalance reaches it, with the timer just reset by `onJoinComplete`. A KIP-848 member
    /// auto-commits on its interval whatever its reconciliation.
    fn auto_commit_reached(&self) -> bool {
        self.membership
            .auto_commit_reached(self.coordinator.is_some())
    }

    /// `commitAsync` of the current positions: sent now if the coordinator is known, else
    /// once the lookup finds it.
    pub(super) fn commit_async(&mut self, env: &mut ClientEnv) {
        if self.coordinator.is_some() || self.generation_if_stable().is_none() {
            self.send_commit(env);
            return;
        }
        self.async_commits_waiting
            .push(self.positions.iter().collect());
        self.lookup_coordinator(env);
    }

    /// The coordinator is found: the asynchronous commits waiting for it go out, in order.
    pub(super) fn send_waiting_async_commits(&mut self, env: &mut ClientEnv) {
        let Some(generation) = self.generation_if_stable() else {
            self.async_commits_waiting.clear();
            return;
        };
        for offsets in std::mem::take(&mut self.async_commits_waiting) {
            self.send_offsets(env, generation, offsets);
        }
    }

    /// The generation a commit goes out in (`generationIfStable`). A classic member whose
    /// JoinGroup or SyncGroup is unanswered has none: Kafka fails its commit before sending
    /// it (RebalanceInProgressException), as it does a member out of every generation
    /// (CommitFailedException), so a member processing through a cooperative rebalance
    /// commits nothing until its SyncGroup is answered. A KIP-848 member commits in its epoch.
    pub(super) fn generation_if_stable(&self) -> Option<i32> {
        self.membership.commit_generation()
    }

    /// Sends an OffsetCommit of the current positions; whether there was a generation to
    /// commit in.
    pub(super) fn send_commit(&mut self, env: &mut ClientEnv) -> bool {
        let Some(generation) = self.generation_if_stable() else {
            return false;
        };
        let offsets = self.positions.iter().collect();
        self.send_offsets(env, generation, offsets);
        true
    }

    fn send_offsets(&mut self, env: &mut ClientEnv, generation: i32, offsets: Vec<(usize, u64)>) {
        self.commits_in_flight.push_back(generation);
        env.send(OffsetCommitRequest {
            member_id: self.membership.member_id().to_string(),
            generation,
            offsets,
        });
    }

    /// The poll loop waits on a synchronous commit just sent: a new call, whose retries back
    /// off from the start.
    pub(super) fn block_on_commit(&mut self, after: AfterCommit) {
        self.commit_retry = backoff::SyncRetry::default();
        self.after_commit = Some(after);
        self.app = App::Blocked;
    }

    /// The synchronous auto-commit of `close()` and of a KIP-848 revocation: when auto-commit
    /// is on and there is something to commit, sends it and blocks the poll loop until the
    /// answer, then goes on with `after`. Returns whether it did.
    pub(super) fn auto_commit_sync(&mut self, env: &mut ClientEnv, after: AfterCommit) -> bool {
        let commits = env.scenario.group.enable_auto_commit
            && !self.positions.is_empty()
            && self.generation_if_stable().is_some();
        if commits {
            self.send_commit(env);
            self.block_on_commit(after);
        }
        commits
    }
}
