//! Pauses: stop-the-world time per member (owning nothing processable because of a rebalance)
//! and each partition's unavailability (from when it stops being processed until processing
//! resumes at its next owner), both after formation.

use super::*;

impl Metrics {
    pub(super) fn stop_processing(&mut self, now: SimTime, p: usize) {
        self.active[p] = None;
        self.mark(
            now,
            Mark::Processing {
                partition: p,
                member: None,
            },
        );
        if self.formed() {
            self.unavailable_since[p].get_or_insert(now);
        }
    }

    pub(super) fn start_processing(&mut self, now: SimTime, m: usize, p: usize) {
        self.active[p] = Some(m);
        self.mark(
            now,
            Mark::Processing {
                partition: p,
                member: Some(m),
            },
        );
        if let Some(since) = self.unavailable_since[p].take() {
            self.unavailable_us[p] += (now - since).as_micros();
        }
    }

    pub(super) fn end_pause(&mut self, now: SimTime, m: usize) {
        if let Some(since) = self.paused_since[m].take() {
            self.stop_the_world_us[m] += (now - since).as_micros();
        }
    }
}
