//! Record accounting: processed, processed twice (re-delivered from the last committed offset),
//! skipped by `auto.offset.reset`, fetched across racks.

use super::*;

impl Metrics {
    pub(super) fn position_set(&mut self, p: usize, position: u64) {
        self.move_position(p, position);
        if position > self.accounted_upto[p] {
            self.skipped += position - self.accounted_upto[p];
            self.skipped_ranges[p].push((self.accounted_upto[p], position));
            self.accounted_upto[p] = position;
        }
    }

    /// Records `[from, to)` of partition `p` were processed (`by_owner`: by its owner, whose
    /// position moves with them). Records below what is accounted for were processed before
    /// (processed twice), unless an offset reset skipped them first: a zombie batch still processing them after the new owner's reset
    /// jumped past them (`auto.offset.reset = latest` with no commit) processes them once,
    /// and they are no longer skipped.
    pub(super) fn processed(&mut self, p: usize, from: u64, to: u64, by_owner: bool) {
        let n = to - from;
        if by_owner && to > self.position[p] {
            self.move_position(p, to);
        }
        self.processed += n;
        let below = self.accounted_upto[p].min(to).saturating_sub(from);
        let first_time = self.unskip(p, from, to);
        self.processed_twice += below - first_time;
        self.accounted_upto[p] = self.accounted_upto[p].max(to);
    }

    /// Takes `[from, to)` out of the ranges a reset skipped on `p`; how many records it took.
    fn unskip(&mut self, p: usize, from: u64, to: u64) -> u64 {
        let ranges = &mut self.skipped_ranges[p];
        // Most batches are past every skipped range: nothing to take.
        if !ranges.iter().any(|&(a, b)| a.max(from) < b.min(to)) {
            return 0;
        }
        let mut taken = 0;
        let mut left = Vec::with_capacity(ranges.len() + 1);
        for &(a, b) in ranges.iter() {
            let (lo, hi) = (a.max(from), b.min(to));
            if lo >= hi {
                left.push((a, b));
                continue;
            }
            taken += hi - lo;
            if a < lo {
                left.push((a, lo));
            }
            if hi < b {
                left.push((hi, b));
            }
        }
        *ranges = left;
        self.skipped -= taken;
        taken
    }

    /// Member `m` fetched `records` from a replica outside its rack.
    pub(super) fn cross_rack(&mut self, m: usize, records: u64) {
        if let Some(per_member) = &mut self.cross_rack_fetched {
            per_member[m] += records;
        }
    }
}
