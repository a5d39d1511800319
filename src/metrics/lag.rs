//! Consumer lag: sampled every `lag_sample_ms` (finer while a rebalance runs and its window
//! catches up), the peak per partition and per rebalance window, and the catch-up time.
//!
//! A sample costs the same whatever the number of partitions: the total lag is every log end
//! offset summed (closed form for null-key producers, a cursor over the keyed appends) minus
//! every processed position summed (kept as positions move). A partition's lag only grows
//! between two moves of its position (appends add to it, nothing takes from it), so its peak
//! over the samples is its lag at the last sample before each move: that one value is worked
//! out when the position moves (at the next sample, which can read the logs), not every
//! partition at every sample.

use super::*;

/// What the lag samples keep between them.
#[derive(Debug, Default)]
pub(super) struct LagState {
    /// Samples taken so far; the last one at `last_sample_at`.
    samples: u64,
    last_sample_at: SimTime,
    /// The first sample taken once the group was formed (peaks count from it).
    first_counted: Option<u64>,
    /// Per partition: the last sample its peak has taken in.
    seen: Vec<u64>,
    /// Partitions whose position moved since the last sample, with their position at it.
    pending: Vec<(usize, u64)>,
    /// The sum of `Metrics::position`.
    position_sum: u64,
    /// Keyed appends counted by the last sample.
    keyed_cursor: u64,
}

impl LagState {
    pub(super) fn new(partitions: usize) -> Self {
        LagState {
            seen: vec![0; partitions],
            ..LagState::default()
        }
    }

    /// The last sample, if it counts for peaks.
    fn last_counted(&self) -> Option<u64> {
        self.first_counted
            .filter(|&first| first <= self.samples)
            .map(|_| self.samples)
    }
}

impl Metrics {
    /// Partition `p`'s processed position becomes `position`.
    pub(super) fn move_position(&mut self, p: usize, position: u64) {
        let old = self.position[p];
        if old == position {
            return;
        }
        // Its lag at the last sample, with the position it had then, is its peak since the
        // sample before its previous move.
        if let Some(k) = self.lag.last_counted() {
            if self.lag.seen[p] < k {
                self.lag.seen[p] = k;
                self.lag.pending.push((p, old));
            }
        }
        self.lag.position_sum = self.lag.position_sum - old + position;
        self.position[p] = position;
    }

    /// The peaks of the partitions that moved since the last sample, at that sample.
    fn take_in_pending_peaks(&mut self, logs: &Logs) {
        let at = self.lag.last_sample_at;
        // Drained in place: the list keeps its room for the next sample's moves.
        for (p, position) in self.lag.pending.drain(..) {
            let lag = logs.end_offset(p, at).saturating_sub(position);
            self.lag_peak[p] = self.lag_peak[p].max(lag);
        }
    }

    /// The peaks of the partitions that did not move since the last sample (at the end).
    pub(super) fn finish_lag_peaks(&mut self, logs: &Logs) {
        self.take_in_pending_peaks(logs);
        let Some(k) = self.lag.last_counted() else {
            return;
        };
        let at = self.lag.last_sample_at;
        for p in 0..self.position.len() {
            if self.lag.seen[p] < k {
                let lag = logs.end_offset(p, at).saturating_sub(self.position[p]);
                self.lag_peak[p] = self.lag_peak[p].max(lag);
            }
        }
    }

    /// Samples consumer lag: every existing partition's log end offset minus the processed
    /// position of its owner, summed.
    pub fn sample_lag(&mut self, now: SimTime, logs: &Logs, group: &Ledger) {
        self.take_in_pending_peaks(logs);
        // A position never passes its log end (it is what was processed, committed or reset
        // to, all read from the log), so the sum of the differences is the difference of the
        // sums; a partition added later has neither records nor a position before it exists.
        let end = logs.total_end_offset_at_cursor(&mut self.lag.keyed_cursor, now);
        debug_assert!(end >= self.lag.position_sum, "a position past its log end");
        let total = end.saturating_sub(self.lag.position_sum);
        #[cfg(debug_assertions)]
        self.check_total_lag(now, logs, total, group);
        self.lag.samples += 1;
        self.lag.last_sample_at = now;
        // Peaks count after formation: before it nobody consumes yet.
        if group.formed() && self.lag.first_counted.is_none() {
            self.lag.first_counted = Some(self.lag.samples);
        }
        self.last_total_lag = total;
        self.lag_series.push((ms(now), total));
        if !group.formed() {
            return;
        }
        // The window's peak: from the rebalance's start until lag has caught up.
        if (group.rebalance_running() || self.window_entry.is_some())
            && self.window.catch_up_ms.is_none()
        {
            self.window.lag_peak = self.window.lag_peak.max(total);
        }
        if let Some(i) = self.window_entry {
            let end = self.rebalances[i].end_ms;
            if self.window.catch_up_ms.is_none()
                && !group.rebalance_running()
                && total <= self.window.lag_before + self.batch_records
            {
                self.window.catch_up_ms = Some(ms(now).saturating_sub(end));
            }
        }
    }

    /// Debug builds (every test) check the kept total against every partition's lag.
    #[cfg(debug_assertions)]
    fn check_total_lag(&self, now: SimTime, logs: &Logs, total: u64, group: &Ledger) {
        let each: u64 = (0..self.position.len())
            .filter(|&p| group.partition_exists(p))
            .map(|p| logs.end_offset(p, now).saturating_sub(self.position[p]))
            .sum();
        assert_eq!(total, each, "the kept total lag at {now}");
    }

    /// How finely to sample lag now: up to 100 times finer while a rebalance runs, 10 while its
    /// window catches up (for at most a minute after its end), 1 otherwise; a group with many
    /// partitions samples less finely (each sample reads every partition).
    pub fn lag_sampling_factor(&self, now: SimTime, group: &Ledger) -> u64 {
        let partitions = self.position.len().max(1) as u64;
        let budget = |most: u64, per_sample: u64| (per_sample / partitions).clamp(1, most);
        if group.rebalance_running() {
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
