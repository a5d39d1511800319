//! Consumer lag: sampled every `lag_sample_ms` (finer while a rebalance runs and its window
//! catches up), the peak per partition and per rebalance window, and the catch-up time.

use super::*;

impl Metrics {
    /// Samples consumer lag: every existing partition's log end offset minus the processed
    /// position of its owner.
    pub fn sample_lag(&mut self, now: SimTime, logs: &Logs) {
        let mut total = 0u64;
        for p in 0..self.position.len() {
            if !self.partition_exists[p] {
                continue;
            }
            // Sample times only grow: each partition's keyed cursor moves forward.
            let end = logs.end_offset_at_cursor(p, &mut self.lag_cursor[p], now);
            let lag = end.saturating_sub(self.position[p]);
            // Peaks count after formation: before it nobody consumes yet.
            if self.formation.is_some() {
                self.lag_peak[p] = self.lag_peak[p].max(lag);
            }
            total += lag;
        }
        self.last_total_lag = total;
        self.lag_series.push((ms(now), total));
        if !self.formed() {
            return;
        }
        // The window's peak: from the rebalance's start until lag has caught up.
        if (self.running.is_some() || self.window_entry.is_some())
            && self.window.catch_up_ms.is_none()
        {
            self.window.lag_peak = self.window.lag_peak.max(total);
        }
        if let Some(i) = self.window_entry {
            let end = self.rebalances[i].end_ms;
            if self.window.catch_up_ms.is_none()
                && self.running.is_none()
                && total <= self.window.lag_before + self.batch_records
            {
                self.window.catch_up_ms = Some(ms(now).saturating_sub(end));
            }
        }
    }

    /// How finely to sample lag now: up to 100 times finer while a rebalance runs, 10 while its
    /// window catches up (for at most a minute after its end), 1 otherwise; a group with many
    /// partitions samples less finely (each sample reads every partition).
    pub fn lag_sampling_factor(&self, now: SimTime) -> u64 {
        let partitions = self.position.len().max(1) as u64;
        let budget = |most: u64, per_sample: u64| (per_sample / partitions).clamp(1, most);
        if self.running.is_some() {
            return budget(100, 100_000);
        }
        match self.window_entry {
            Some(i)
                if self.window.catch_up_ms.is_none()
                    && ms(now) < self.rebalances[i].end_ms + 60_000 =>
            {
                budget(10, 10_000)
            }
            _ => 1,
        }
    }

    /// The current window's figures go to its rebalance's entry.
    pub(super) fn close_window(&mut self) {
        if let Some(i) = self.window_entry.take() {
            self.rebalances[i].window = std::mem::take(&mut self.window);
        }
    }
}
