//! The fetcher: batches of up to `max_poll_records` from the owned partitions' positions,
//! round-robin, records visible one fetch round trip (plus the partition's arrival lag) after
//! they are appended; and when an idle poll wakes.

use super::*;

impl Consumer {
    /// The fetch position of an owned partition, and when its record there is appended.
    pub(super) fn set_position(&mut self, env: &ClientEnv, p: usize, position: u64) {
        self.positions.insert(p, position);
        let at = env
            .logs
            .time_of(p, position)
            .map_or(u64::MAX, SimTime::as_micros);
        self.record_at.insert(p, at);
    }

    /// Up to `max_poll_records` fetched records, round-robin over owned partitions.
    pub(super) fn take_batch(&mut self, env: &mut ClientEnv) -> Vec<(usize, u64, u64)> {
        if self.positions.is_empty() {
            return Vec::new();
        }
        let now = env.now();
        // Records reach the consumer one fetch round trip after they are appended.
        let rtt = env.fetch.between(
            env.scenario.cluster.latency_min_us,
            env.scenario.cluster.latency_max_us,
        ) * 2;
        let mut budget = self.settings().max_poll_records;
        let mut batch = Vec::new();
        let mut left_behind = None;
        let n = self.positions.len();
        let start = self.fetch_cursor % n;
        // `record_at` has the same keys as `positions`, in the same order.
        let entries = || self.positions.iter().zip(self.record_at.values());
        for ((&p, &pos), &record_at) in entries().skip(start).chain(entries().take(start)) {
            if budget == 0 {
                break;
            }
            if self.task.is_paused(p) {
                continue;
            }
            let visible_at = now.as_micros().saturating_sub(rtt + env.arrival_lag_us[p]);
            // Nothing new there yet: the log need not be read.
            if record_at > visible_at {
                continue;
            }
            let end = env
                .logs
                .end_offset_from(p, pos, SimTime::from_micros(visible_at));
            if end > pos {
                let take = (end - pos).min(budget);
                budget -= take;
                batch.push((p, pos, pos + take));
                // Only the partition that used up the budget can keep records back.
                if end > pos + take {
                    left_behind = Some((p, end - (pos + take)));
                }
            }
        }
        if let Some((partition, lag)) = left_behind {
            env.fact(Fact::FetchLag {
                member: self.idx,
                partition,
                lag,
            });
        }
        self.fetch_cursor = (start + 1) % n;
        batch
    }

    /// When a member with nothing to process wakes: the next record it could fetch, or the
    /// fetch's max wait, whichever is first.
    pub(super) fn next_wake(&self, env: &ClientEnv) -> SimTime {
        let now = env.now();
        let max_wait = now + Duration::from_millis(env.scenario.group.fetch_max_wait_ms);
        let rtt = Duration::from_micros(env.scenario.cluster.latency_max_us * 2);
        let next_record = self
            .record_at
            .iter()
            .filter(|&(_, &at)| at != u64::MAX)
            .map(|(&p, &at)| SimTime::from_micros(at + env.arrival_lag_us[p]))
            .min()
            .map(|t| (t + rtt).max(now + Duration::from_micros(1)));
        next_record.map_or(max_wait, |t| t.min(max_wait))
    }
}
