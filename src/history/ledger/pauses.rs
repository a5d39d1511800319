//! Pauses: stop-the-world time per member (owning nothing processable because of a rebalance),
//! each partition's unavailability (from when it stops being processed until processing
//! resumes at its next owner), and each partition's time with no holder by the members'
//! callbacks, all after formation.

use super::faults::PauseCause;
use super::*;

impl Ledger {
    /// `p` stops being processed now, because of `cause`.
    pub(super) fn stop_processing(&mut self, now: SimTime, p: usize, cause: PauseCause) {
        self.active[p] = None;
        self.mark(
            now,
            Mark::Processing {
                partition: p,
                member: None,
            },
        );
        self.open_unavailable(now, p, cause);
    }

    /// `m` processes `p` from now: available, unless `m` cannot fetch it (a leader election
    /// or a network partition in progress).
    pub(super) fn start_processing(&mut self, now: SimTime, m: usize, p: usize) {
        self.active[p] = Some(m);
        self.mark(
            now,
            Mark::Processing {
                partition: p,
                member: Some(m),
            },
        );
        if !self.fetch_blocked(p, m) {
            self.close_unavailable(now, p);
        }
    }

    /// `onPartitionsAssigned` gave these partitions to a member.
    pub(super) fn hold(&mut self, now: SimTime, parts: &[usize]) {
        let t = &mut self.tallies;
        for &p in parts {
            t.holders[p] += 1;
            if let Some(since) = t.unowned_since[p].take() {
                t.unowned_us[p] += (now - since).as_micros();
            }
        }
    }

    /// A member's revoke or lost callback (or its crash) let these partitions go.
    pub(super) fn unhold(&mut self, now: SimTime, parts: &[usize]) {
        let formed = self.formed();
        let t = &mut self.tallies;
        for &p in parts {
            t.holders[p] = t.holders[p].saturating_sub(1);
            if t.holders[p] == 0 && formed {
                t.unowned_since[p].get_or_insert(now);
            }
        }
    }

    pub(super) fn end_pause(&mut self, now: SimTime, m: usize) {
        let t = &mut self.tallies;
        if let Some(since) = t.paused_since[m].take() {
            t.stop_the_world_us[m] += (now - since).as_micros();
        }
    }

    /// Partition `p` stops being available now, for `cause` (unless it already was not).
    pub(super) fn open_unavailable(&mut self, now: SimTime, p: usize, cause: PauseCause) {
        if self.formed() && self.tallies.unavailable_since[p].is_none() {
            self.tallies.unavailable_since[p] = Some(now);
            self.faults.cause[p] = cause;
        }
    }

    /// Partition `p` is available again now.
    pub(super) fn close_unavailable(&mut self, now: SimTime, p: usize) {
        let t = &mut self.tallies;
        if let Some(since) = t.unavailable_since[p].take() {
            let us = (now - since).as_micros();
            t.unavailable_us[p] += us;
            if t.longest_unavailable
                .is_none_or(|(_, _, longest)| us > longest)
            {
                t.longest_unavailable = Some((p, since, us));
            }
            self.faults.count_unavailable(p, us);
        }
    }
}
