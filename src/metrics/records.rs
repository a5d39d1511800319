//! Record accounting: processed, processed twice (re-delivered from the last committed offset),
//! skipped by `auto.offset.reset`, fetched across racks.

use super::*;

impl Metrics {
    pub fn position_set(&mut self, p: usize, position: u64) {
        self.move_position(p, position);
        if position > self.accounted_upto[p] {
            self.skipped += position - self.accounted_upto[p];
            self.accounted_upto[p] = position;
        }
    }

    /// Records `[from, to)` of partition `p` were processed by member `m`.
    pub fn processed(&mut self, m: usize, p: usize, from: u64, to: u64) {
        let n = to - from;
        if self.owner[p] == Some(m) && to > self.position[p] {
            self.move_position(p, to);
        }
        self.processed += n;
        self.processed_twice += self.accounted_upto[p].min(to).saturating_sub(from);
        self.accounted_upto[p] = self.accounted_upto[p].max(to);
    }

    /// Member `m` fetched `records` from a replica outside its rack.
    pub fn cross_rack(&mut self, m: usize, records: u64) {
        if let Some(per_member) = &mut self.cross_rack_fetched {
            per_member[m] += records;
        }
    }
}
