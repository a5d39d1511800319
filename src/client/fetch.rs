//! The fetcher: batches of up to `max_poll_records` from the owned partitions' positions,
//! round-robin, records visible one fetch round trip (plus the partition's arrival lag) after
//! they are appended; and when an idle poll wakes.

use super::*;

impl Consumer {
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
        for (&p, &pos) in self
            .positions
            .iter()
            .skip(start)
            .chain(self.positions.iter().take(start))
        {
            if budget == 0 {
                break;
            }
            if self.task.is_paused(p) {
                continue;
            }
            let visible_at = now.as_micros().saturating_sub(rtt + env.arrival_lag_us[p]);
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
            .positions
            .iter()
            .filter_map(|(&p, &pos)| {
                env.logs
                    .time_of(p, pos)
                    .map(|t| t + Duration::from_micros(env.arrival_lag_us[p]))
            })
            .min()
            .map(|t| (t + rtt).max(now + Duration::from_micros(1)));
        next_record.map_or(max_wait, |t| t.min(max_wait))
    }
}
