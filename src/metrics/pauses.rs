//! Pauses: stop-the-world time per member (owning nothing processable because of a rebalance),
//! each partition's unavailability (from when it stops being processed until processing
//! resumes at its next owner), and each partition's time with no holder by the members'
//! callbacks, all after formation.

use super::faults::PauseCause;
use super::*;

impl Metrics {
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
        for &p in parts {
            self.holders[p] += 1;
            if let Some(since) = self.unowned_since[p].take() {
                self.unowned_us[p] += (now - since).as_micros();
            }
        }
    }

    /// A member's revoke or lost callback (or its crash) let these partitions go.
    pub(super) fn unhold(&mut self, now: SimTime, parts: &[usize]) {
        for &p in parts {
            self.holders[p] = self.holders[p].saturating_sub(1);
            if self.holders[p] == 0 && self.formed() {
                self.unowned_since[p].get_or_insert(now);
            }
        }
    }

    pub(super) fn end_pause(&mut self, now: SimTime, m: usize) {
        if let Some(since) = self.paused_since[m].take() {
            self.stop_the_world_us[m] += (now - since).as_micros();
        }
    }
}
