//! Rebalances: each rebalance from PreparingRebalance to Stable with its trigger, cause and
//! phases (as the group's history followed it), cooperative follow-ups folded into the
//! rebalance that caused them, and each one's window.

use super::*;
use crate::history::CompletedRebalance;
use crate::messages::Trigger;

impl Metrics {
    /// A rebalance of the formed group began: the last window closes, and the next one's lag
    /// before it is taken at its cause (a crash 45 s earlier, say), not its start.
    pub(super) fn rebalance_started(&mut self, cause: SimTime) {
        self.close_window();
        let cause_ms = ms(cause);
        self.window.lag_before = self
            .lag_series
            .iter()
            .rev()
            .find(|&&(at, _)| at <= cause_ms)
            .map_or(self.last_total_lag, |&(_, lag)| lag);
    }

    /// A rebalance of the formed group is Stable: its entry, and the window that is now its
    /// (`incremental_join`: KIP-848's, with no join and sync phases).
    pub(super) fn rebalance_completed(&mut self, r: &CompletedRebalance, incremental_join: bool) {
        let end = ms(r.end);
        if r.trigger == Trigger::FollowUp {
            // Chained follow-ups all belong to the first rebalance that was not one.
            if let Some(cause) = self
                .rebalances
                .iter_mut()
                .rev()
                .find(|e| e.trigger != Trigger::FollowUp.name())
            {
                cause.follow_up_ms = end - cause.end_ms;
            }
        }
        let join_end = r.join_end.unwrap_or(r.end);
        self.rebalances.push(RebalanceEntry {
            generation: r.generation,
            trigger: r.trigger.name().to_string(),
            member: r.member.map(|m| self.member_names[m].clone()),
            start_ms: ms(r.start),
            end_ms: end,
            duration_ms: end - ms(r.start),
            detect_ms: ms(r.start) - ms(r.cause),
            join_ms: (!incremental_join).then(|| ms(join_end) - ms(r.start)),
            sync_ms: (!incremental_join).then(|| end - ms(join_end)),
            follow_up_ms: 0,
            assignor: r.assignor.clone(),
            window: Window::default(),
        });
        self.window_entry = Some(self.rebalances.len() - 1);
    }
}
