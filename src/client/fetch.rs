//! The fetcher: batches of up to `max_poll_records` from the owned partitions' positions,
//! round-robin, records visible one fetch round trip (plus the partition's arrival lag) after
//! they are appended; and when an idle poll wakes.
//!
//! Each partition is read from the replica the brokers' selector picks (`cluster::replicas`):
//! the leader, or with fetch from follower (KIP-392) a replica in the member's rack, on which
//! records appear the replication delay later. Records read from another rack are reported.
//!
//! A poll touches only the partitions with records to give: past a few partitions, the
//! positions keep a min-heap of when each one's next record becomes visible, so a poll pops
//! the ready ones and a wake reads the heap's top, whatever the number a member owns.

use super::*;
use crate::workload::producer::NextAppend;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    /// (`NextAppend::NotBefore`); it is read again before it could decide a wake or a batch.
    provisional: bool,
    /// The partition's arrival lag plus how much later than on the leader records appear on
    /// the replica read from (µs): its record is visible this long after it is appended,
    /// before the fetch round trip.
    delay_us: u64,
    /// The replica read from is in another rack than the member.
    cross_rack: bool,
    /// Tells this entry's heap key from the keys of what the partition's entry was before.
    version: u32,
}

impl FetchPosition {
    /// When its next record is visible, before the fetch round trip (µs).
    fn visible_us(&self) -> u64 {
        self.record_at.saturating_add(self.delay_us)
    }

    /// Its key in the ready heap when it is entry `index`: `visible_us << 64 | index << 32 |
    /// version`, one integer compared at once. Entries are in partition order, so ties go
    /// by partition.
    fn ready_key(&self, index: usize) -> u128 {
        let index = u32::try_from(index).expect("owned partitions fit in 32 bits");
        (u128::from(self.visible_us()) << 64) | (u128::from(index) << 32) | u128::from(self.version)
    }
}

/// A ready-heap key's (visible time, entry index, version).
fn unpack(key: u128) -> (u64, usize, u32) {
    ((key >> 64) as u64, (key >> 32) as u32 as usize, key as u32)
}

/// At most this many owned partitions are scanned at every poll; past it they are ordered in
/// the heap.
const SCAN_AT_MOST: usize = 8;

/// The fetch positions of the owned partitions whose committed offset is known: a dense vector
/// by partition (the round-robin order), changed only by assignments and processed batches,
/// and a min-heap of `(visible_us, entry index, version)` keys, a key left behind when its
/// entry changes (skipped when it surfaces). A key names its entry by index, so a lookup is
/// one read; an assignment that inserts or removes entries moves the indexes, and the heap is
/// built again before it is next read.
#[derive(Clone, Debug, Default)]
pub(super) struct FetchPositions {
    entries: Vec<FetchPosition>,
    ready: BinaryHeap<Reverse<u128>>,
    /// Entries were inserted or removed since the heap was built: its indexes are off.
    rebuild: bool,
    next_version: u32,
    /// The largest `delay_us` of any entry so far: a poll this close to the start of time
    /// reads every entry (the visibility cut-off saturates at 0 there).
    max_delay_us: u64,
    /// Scratch for the ready entries of one poll: (place in the round-robin order, index).
    candidates: Vec<(usize, usize)>,
    /// Tests set it to 0 to take the heap's path with a few partitions.
    #[cfg(test)]
    pub(super) scan_at_most: Option<usize>,
}

impl FetchPositions {
    fn find(&self, p: usize) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&p, |e| e.partition)
    }

    pub(super) fn get(&self, p: usize) -> Option<u64> {
        self.find(p).ok().map(|i| self.entries[i].offset)
    }

    /// Whether the heap is kept: a few partitions are cheaper to scan.
    fn heap_kept(&self) -> bool {
        #[cfg(test)]
        let scan_at_most = self.scan_at_most.unwrap_or(SCAN_AT_MOST);
        #[cfg(not(test))]
        let scan_at_most = SCAN_AT_MOST;
        self.entries.len() > scan_at_most
    }

    /// A newly owned partition's entry.
    fn set(&mut self, mut entry: FetchPosition) {
        self.next_version = self.next_version.wrapping_add(1);
        entry.version = self.next_version;
        self.max_delay_us = self.max_delay_us.max(entry.delay_us);
        match self.find(entry.partition) {
            Ok(i) => {
                self.entries[i] = entry;
                self.push_key(i);
            }
            Err(i) => {
                self.entries.insert(i, entry);
                self.rebuild = true;
            }
        }
    }

    /// Entry `i`'s key into the heap, if one is kept and up to date (else the rebuild makes
    /// it).
    fn push_key(&mut self, i: usize) {
        let e = &self.entries[i];
        if self.heap_kept() && !self.rebuild && e.record_at != u64::MAX {
            self.ready.push(Reverse(e.ready_key(i)));
        }
    }

    /// The heap as the entries stand, if they moved since it was built: every entry with a
    /// next record has its key. Asked at every poll, needed only after an assignment: the
    /// check is inlined, the rebuild is not.
    #[inline]
    fn rebuild_heap(&mut self) {
        if self.rebuild {
            self.build_heap();
        }
    }

    #[cold]
    fn build_heap(&mut self) {
        self.rebuild = false;
        self.ready.clear();
        if self.heap_kept() {
            let keys = self.entries.iter().enumerate();
            let keys = keys.filter(|(_, e)| e.record_at != u64::MAX);
            self.ready
                .extend(keys.map(|(i, e)| Reverse(e.ready_key(i))));
        }
    }

    /// Entry `i` changed in place: a new version, and its key in the heap if one is kept.
    fn restamp(&mut self, i: usize) {
        self.next_version = self.next_version.wrapping_add(1);
        self.entries[i].version = self.next_version;
        self.push_key(i);
    }

    /// Moves entry `i` to `offset`, reading when its record there is appended.
    fn move_to(&mut self, logs: &Logs, i: usize, offset: u64) {
        let e = &mut self.entries[i];
        e.offset = offset;
        (e.record_at, e.provisional) = next_record_at(logs, e.partition, offset);
        self.restamp(i);
    }

    /// A processed batch moves partition `p`'s position on to `to` (if it is still owned and
    /// not past it already).
    pub(super) fn advance(&mut self, logs: &Logs, p: usize, to: u64) {
        if let Ok(i) = self.find(p) {
            if to > self.entries[i].offset {
                self.move_to(logs, i, to);
            }
        }
    }

    /// The entries of `gone` (revoked or lost partitions) go, in one pass: one removal at a
    /// time moved the rest of the vector each time (a member revoking 10,000 of its 30,000
    /// partitions moved 8 GB).
    pub(super) fn remove_all(&mut self, gone: &PartitionLookup) {
        let before = self.entries.len();
        self.entries.retain(|e| !gone.contains(&e.partition));
        if self.entries.len() != before {
            self.rebuild = true;
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// (partition, offset), by partition.
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.entries.iter().map(|e| (e.partition, e.offset))
    }

    /// Whether a heap key for entry `index` at `version` is still that entry's.
    fn live(&self, index: usize, version: u32) -> bool {
        self.entries
            .get(index)
            .is_some_and(|e| e.version == version)
    }

    /// Reads entry `i`'s next record time again (it was a lower bound).
    fn refresh(&mut self, logs: &Logs, i: usize) {
        self.move_to(logs, i, self.entries[i].offset);
    }

    /// The live heap top: stale keys dropped, lower bounds that could come at or before
    /// `bound_us` read again. Returns its visible time.
    fn top(&mut self, logs: &Logs, bound_us: u64) -> Option<u64> {
        self.rebuild_heap();
        while let Some(&Reverse(key)) = self.ready.peek() {
            let (visible, i, version) = unpack(key);
            if !self.live(i, version) {
                self.ready.pop();
                continue;
            }
            if self.entries[i].provisional && self.entries[i].record_at <= bound_us {
                self.ready.pop();
                self.refresh(logs, i);
                continue;
            }
            return Some(visible);
        }
        None
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
        // The replica read from is fixed by the placement and the member's rack: worked out
        // when the partition comes, kept while it stays.
        if let Ok(i) = self.positions.find(p) {
            self.positions.move_to(env.logs, i, offset);
            return;
        }
        let read = env.replicas.read_replica(
            p,
            self.spec.client_rack.as_deref(),
            env.scenario.group.fetch_from_follower,
        );
        let replica_delay_us = if read.follower {
            env.scenario.cluster.replication_delay_us
        } else {
            0
        };
        let (record_at, provisional) = next_record_at(env.logs, p, offset);
        self.positions.set(FetchPosition {
            partition: p,
            offset,
            record_at,
            provisional,
            delay_us: env.arrival_lag_us[p] + replica_delay_us,
            cross_rack: read.cross_rack,
            version: 0,
        });
    }

    /// Up to `max_poll_records` fetched records, round-robin over owned partitions, into
    /// `batch` (empty when nothing is ready).
    pub(super) fn take_batch(&mut self, env: &mut ClientEnv, batch: &mut Vec<(usize, u64, u64)>) {
        batch.clear();
        if self.positions.is_empty() {
            return;
        }
        let now = env.now();
        // Records reach the consumer one fetch round trip after they are appended.
        let rtt = env.fetch.between(
            env.scenario.cluster.latency_min_us,
            env.scenario.cluster.latency_max_us,
        ) * 2;
        let n = self.positions.entries.len();
        let start = self.fetch_cursor % n;
        self.fetch_cursor = (start + 1) % n;
        // With the heap, the ready entries in round-robin order from `start`: those whose next
        // record is visible by now (`visible + rtt <= now`); this close to time zero, or with a
        // few partitions, every entry.
        let mut candidates = std::mem::take(&mut self.positions.candidates);
        candidates.clear();
        let place = |i: usize| (i + n - start) % n;
        let now_us = now.as_micros();
        let from_heap = self.positions.heap_kept() && now_us >= rtt + self.positions.max_delay_us;
        if from_heap {
            self.positions.rebuild_heap();
            let cutoff = now_us - rtt;
            while let Some(&Reverse(key)) = self.positions.ready.peek() {
                let (visible, i, version) = unpack(key);
                if visible > cutoff {
                    break;
                }
                self.positions.ready.pop();
                if !self.positions.live(i, version) {
                    continue;
                }
                if self.positions.entries[i].provisional {
                    // Its records are generated by now: the exact time goes back in the heap.
                    self.positions.refresh(env.logs, i);
                    continue;
                }
                candidates.push((place(i), i));
            }
            candidates.sort_unstable();
            for &(_, i) in &candidates {
                // Back in the heap: this entry changes only when its batch is done.
                let key = self.positions.entries[i].ready_key(i);
                self.positions.ready.push(Reverse(key));
            }
        }
        // The ready entries in that order, or (a few partitions, or close to time zero) every
        // entry in place, round-robin from `start`; plain indexes, no chained iterators.
        let visits = if from_heap { candidates.len() } else { n };
        let mut budget = self.settings().max_poll_records;
        let mut left_behind = None;
        let quiet = env.availability.is_quiet();
        let mut visited = 0;
        while visited < visits && budget > 0 {
            let i = if from_heap {
                candidates[visited].1
            } else if start + visited < n {
                start + visited
            } else {
                start + visited - n
            };
            visited += 1;
            let e = self.positions.entries[i];
            let (p, pos) = (e.partition, e.offset);
            // Its leader is dead, moving or cut off from this member (`cluster::availability`).
            if self.task.is_paused(p)
                || self.pending_revocation.binary_search(&p).is_ok()
                || (!quiet
                    && env
                        .availability
                        .fetch_blocked_until(self.idx, p, now)
                        .is_some())
            {
                continue;
            }
            let visible_at = now_us.saturating_sub(rtt + e.delay_us);
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
        self.positions.candidates = candidates;
        if let Some((partition, lag)) = left_behind {
            env.fact(Fact::FetchLag {
                member: self.idx,
                partition,
                lag,
            });
        }
    }

    /// When a member with nothing to process wakes: the next record it could fetch, or the
    /// fetch's max wait, whichever is first.
    pub(super) fn next_wake(&mut self, env: &ClientEnv) -> SimTime {
        let now = env.now();
        let max_wait = now + Duration::from_millis(env.scenario.group.fetch_max_wait_ms);
        let rtt = Duration::from_micros(env.scenario.cluster.latency_max_us * 2);
        // A lower bound that could come before the max wait is read again: the world keeps
        // the keyed records generated past it (`world::KEYED_HORIZON`), so it is now exact or
        // a bound past the max wait.
        let next_visible = if env.availability.is_quiet() && self.positions.heap_kept() {
            self.positions
                .top(env.logs, max_wait.as_micros())
                .map(SimTime::from_micros)
        } else {
            for i in 0..self.positions.entries.len() {
                let e = self.positions.entries[i];
                if e.provisional && e.record_at <= max_wait.as_micros() {
                    self.positions.refresh(env.logs, i);
                }
            }
            self.positions
                .entries
                .iter()
                .filter(|e| e.record_at != u64::MAX)
                .map(|e| {
                    let visible = SimTime::from_micros(e.visible_us());
                    // A partition that cannot be fetched now wakes the member when it can
                    // again.
                    match env
                        .availability
                        .fetch_blocked_until(self.idx, e.partition, now)
                    {
                        Some(until) => visible.max(until),
                        None => visible,
                    }
                })
                .min()
        };
        let next_record = next_visible.map(|t| (t + rtt).max(now + Duration::from_micros(1)));
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
