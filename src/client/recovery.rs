//! The application on the records the poll loop processed, and the state it rebuilds after an
//! assignment: the consumer's side of `app::recovery` (facts, trace lines, the restore timer).

use super::*;
use crate::app::recovery::Owned;

impl Consumer {
    /// The application on records `[from, to)` of partition `p`.
    pub(super) fn run_app(&mut self, env: &mut ClientEnv, p: usize, from: u64, to: u64) {
        if env.scenario.app.is_none() {
            return;
        }
        let member = Owned {
            owned: &self.owned,
            positions: &self.positions,
        };
        let outcomes = self.task.process(
            env.scenario,
            env.partitions,
            env.logs,
            member,
            env.now().as_micros(),
            p,
            from,
            to,
        );
        for (outcome, latency_us) in outcomes {
            env.fact(Fact::Notification {
                outcome,
                latency_us,
            });
        }
    }

    /// A price partition was assigned and its start position is known: rebuild its state.
    pub(super) fn rebuild_state(&mut self, env: &mut ClientEnv, p: usize) {
        let Some(app) = env.scenario.app.as_ref() else {
            return;
        };
        let start = self.start_positions.get(&p).copied().unwrap_or(0);
        let Some(restore) = self.task.rebuild(
            app,
            env.partitions,
            env.logs,
            env.standby,
            self.idx,
            p,
            start,
        ) else {
            return;
        };
        let name = self.name().to_string();
        log!(
            env,
            "{name} restores {} ({} records{})",
            env.partitions.name(p),
            restore.records,
            if restore.standby {
                ", standby takeover"
            } else {
                ""
            }
        );
        env.fact(Fact::RestoreStarted {
            member: self.idx,
            partition: p,
            standby: restore.standby,
            records: restore.records,
            duration_us: restore.duration_us,
        });
        let at = env.now() + Duration::from_micros(restore.duration_us);
        env.after(at, ClientTimer::RestoreDone(p));
    }

    pub(super) fn restore_done(&mut self, env: &mut ClientEnv, p: usize) {
        let start = self.start_positions.get(&p).copied().unwrap_or(0);
        if !self.task.restore_done(env.partitions, env.logs, p, start) {
            return; // revoked meanwhile
        }
        log!(env, "{} restored {}", self.name(), env.partitions.name(p));
        self.wake(env);
    }
}
