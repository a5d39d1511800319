//! Offset commits: auto-commit on the interval and, synchronously, in `onJoinPrepare` and
//! `close()`; `commitSync`/`commitAsync` after a batch; the listener's commit before giving
//! partitions up.

use super::*;

impl Consumer {
    pub(super) fn maybe_auto_commit(&mut self, env: &mut ClientEnv) {
        let g = &env.scenario.group;
        // A poll whose `onJoinPrepare` waits for its commit returns from the coordinator's
        // poll before the periodic auto-commit (ConsumerCoordinator.poll).
        if !g.enable_auto_commit
            || self.positions.is_empty()
            || self.membership.join_prepare.is_some()
        {
            return;
        }
        let now = env.now();
        if now - self.last_auto_commit >= Duration::from_millis(g.auto_commit_interval_ms) {
            self.last_auto_commit = now;
            self.commit_async(env);
        }
    }

    /// `commitAsync` of the current positions: sent now if the coordinator is known, else
    /// once the lookup finds it.
    pub(super) fn commit_async(&mut self, env: &mut ClientEnv) {
        if self.membership.coordinator.is_some() || self.generation_if_stable().is_none() {
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
        let classic = self.consumer_membership.is_none();
        if classic && self.membership.phase != Phase::Stable {
            return None;
        }
        self.membership.generation
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

    fn send_offsets(&self, env: &mut ClientEnv, generation: i32, offsets: Vec<(usize, u64)>) {
        env.send(Request::OffsetCommit {
            member_id: self.membership.member_id.clone(),
            generation,
            offsets,
        });
    }

    pub(super) fn block_on_commit(&mut self, after: AfterCommit) {
        self.after_commit = Some(after);
        self.app = App::Blocked;
    }

    /// The synchronous auto-commit of `onJoinPrepare` and `close()`: when auto-commit is on and
    /// there is something to commit, sends it and blocks the poll loop until the answer, then
    /// goes on with `after`. Returns whether it did.
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
