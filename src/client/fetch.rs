//! The fetcher: batches of up to `max_poll_records` from the owned partitions' positions,
//! round-robin, records visible one fetch round trip (plus the partition's arrival lag) after
//! they are appended; and when an idle poll wakes.
//!
//! Each partition is read from the replica the brokers' selector picks (`cluster::replicas`):
//! the leader, or with fetch from follower (KIP-392) a replica in the member's rack, on which
//! records appear the replication delay later. Records read from another rack are reported.

use super::*;
use crate::workload::producer::NextAppend;

/// One owned partition's fetch position.
#[derive(Clone, Copy, Debug)]
pub(super) struct FetchPosition {
    pub(super) partition: usize,
    /// The next offset to fetch (and process).
    pub(super) offset: u64,
    /// When the record at `offset` is appended (µs; `u64::MAX` if never). The log is fixed,
    /// so this changes only with the offset, and a poll or a wake reads it instead of
    /// searching the log.
    record_at: u64,
    /// `record_at` is only a lower bound: the keyed records were generated up to it
    /// (`NextAppend::NotBefore`); it is read again before it could decide a wake.
    provisional: bool,
    /// How much later than on the leader records appear on the replica read from (µs).
    replica_delay_us: u64,
    /// The replica read from is in another rack than the member.
    cross_rack: bool,
}

/// The fetch positions of the owned partitions whose committed offset is known, by partition:
/// a dense vector (a poll walks them all, round-robin), changed only by assignments and
/// processed batches.
#[derive(Clone, Debug, Default)]
pub(super) struct FetchPositions {
    entries: Vec<FetchPosition>,
}

impl FetchPositions {
    fn find(&self, p: usize) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&p, |e| e.partition)
    }

    pub(super) fn get(&self, p: usize) -> Option<u64> {
        self.find(p).ok().map(|i| self.entries[i].offset)
    }

    fn set(&mut self, entry: FetchPosition) {
        match self.find(entry.partition) {
            Ok(i) => self.entries[i] = entry,
            Err(i) => self.entries.insert(i, entry),
        }
    }

    pub(super) fn remove(&mut self, p: usize) {
        if let Ok(i) = self.find(p) {
            self.entries.remove(i);
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// (partition, offset), by partition.
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.entries.iter().map(|e| (e.partition, e.offset))
    }
}

impl crate::app::join::Positions for FetchPositions {
    fn position(&self, p: usize) -> Option<u64> {
        self.get(p)
    }
}

impl Consumer {
    /// Each owned partition's fetch position, `(partition, offset)` by partition, while the
    /// process runs (a stopped or crashed one reads nothing more; a restart fetches anew).
    pub fn fetch_positions(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.positions.iter().filter(|_| self.alive)
    }

    /// The fetch position of an owned partition, and when its record there is appended.
    pub(super) fn set_position(&mut self, env: &ClientEnv, p: usize, offset: u64) {
        let (record_at, provisional) = next_record_at(env.logs, p, offset);
        let read = env.replicas.read_replica(
            p,
            self.spec.client_rack.as_deref(),
            env.scenario.group.fetch_from_follower,
        );
        self.positions.set(FetchPosition {
            partition: p,
            offset,
            record_at,
            provisional,
            replica_delay_us: if read.follower {
                env.scenario.cluster.replication_delay_us
            } else {
                0
            },
            cross_rack: read.cross_rack,
        });
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
        let entries = &self.positions.entries;
        let n = entries.len();
        let start = self.fetch_cursor % n;
        for e in entries[start..].iter().chain(&entries[..start]) {
            let (p, pos) = (e.partition, e.offset);
            if budget == 0 {
                break;
            }
            // Its leader is dead, moving or cut off from this member (`cluster::availability`).
            if self.task.is_paused(p)
                || env
                    .availability
                    .fetch_blocked_until(self.idx, p, now)
                    .is_some()
            {
                continue;
            }
            let visible_at = now
                .as_micros()
                .saturating_sub(rtt + env.arrival_lag_us[p] + e.replica_delay_us);
            // Nothing new there yet: the log need not be read.
            if e.record_at > visible_at {
                continue;
            }
            let end = env
                .logs
                .end_offset_from(p, pos, SimTime::from_micros(visible_at));
            if end > pos {
                let take = (end - pos).min(budget);
                budget -= take;
                batch.push((p, pos, pos + take));
                if e.cross_rack {
                    env.fact(Fact::CrossRackFetched {
                        member: self.idx,
                        partition: p,
                        records: take,
                    });
                }
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
    pub(super) fn next_wake(&mut self, env: &ClientEnv) -> SimTime {
        let now = env.now();
        let max_wait = now + Duration::from_millis(env.scenario.group.fetch_max_wait_ms);
        // A lower bound that could come before the max wait is read again: the world keeps
        // the keyed records generated past it (`world::KEYED_HORIZON`), so it is now exact or
        // a bound past the max wait.
        for e in &mut self.positions.entries {
            if e.provisional && e.record_at <= max_wait.as_micros() {
                (e.record_at, e.provisional) = next_record_at(env.logs, e.partition, e.offset);
            }
        }
        let rtt = Duration::from_micros(env.scenario.cluster.latency_max_us * 2);
        let next_record = self
            .positions
            .entries
            .iter()
            .filter(|e| e.record_at != u64::MAX)
            .map(|e| {
                let visible = SimTime::from_micros(
                    e.record_at + env.arrival_lag_us[e.partition] + e.replica_delay_us,
                );
                // A partition that cannot be fetched now wakes the member when it can again.
                match env
                    .availability
                    .fetch_blocked_until(self.idx, e.partition, now)
                {
                    Some(until) => visible.max(until),
                    None => visible,
                }
            })
            .min()
            .map(|t| (t + rtt).max(now + Duration::from_micros(1)));
        next_record.map_or(max_wait, |t| t.min(max_wait))
    }
}

/// When partition `p`'s record at `offset` is appended (µs; `u64::MAX` if never), and whether
/// that is only a lower bound (the keyed records are not generated that far yet).
fn next_record_at(logs: &Logs, p: usize, offset: u64) -> (u64, bool) {
    match logs.next_append(p, offset) {
        NextAppend::At(us) => (us, false),
        NextAppend::NotBefore(us) => (us, true),
        NextAppend::Never => (u64::MAX, false),
    }
}
