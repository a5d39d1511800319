//! Offset commits: auto-commit on the interval and, synchronously, in `onJoinPrepare` and
//! `close()`; `commitSync`/`commitAsync` after a batch; the listener's commit before giving
//! partitions up.

use super::*;

impl Consumer {
    pub(super) fn maybe_auto_commit(&mut self, env: &mut ClientEnv) {
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

    /// Sends an OffsetCommit of the current positions; whether there was a generation to
    /// commit in.
    pub(super) fn send_commit(&mut self, env: &mut ClientEnv) -> bool {
        let Some(generation) = self.membership.generation else {
            return false;
        };
        let offsets = self.positions.iter().collect();
        let request = Request::OffsetCommit {
            member_id: self.membership.member_id.clone(),
            generation,
            offsets,
        };
        env.send(request);
        true
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
            && self.membership.generation.is_some();
        if commits {
            self.send_commit(env);
            self.block_on_commit(after);
        }
        commits
    }
}
