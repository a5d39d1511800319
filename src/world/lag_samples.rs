//! When lag is sampled and the keyed logs trimmed: on schedules of their own, outside the event
//! queue, so observers stay observers (how the metrics follow a rebalance, which sets how finely
//! lag is sampled, never moves a run's events or digest).
//!
//! A sample keeps the place in the run's order it would have as a queue event scheduled when it
//! was planned: after every event already scheduled for its instant, before every event
//! scheduled from then on (the queue orders events at one instant by when they were scheduled).

use crate::sim::time::Duration;
use crate::sim::SimTime;

/// The keyed logs are trimmed as the clock passes each multiple of this.
const TRIM_EVERY: Duration = Duration::from_millis(10_000);

pub(super) struct ObserverClock {
    /// The next lag sample's instant, and the queue's next sequence number when it was planned.
    sample_at: SimTime,
    sample_seq: u64,
    /// Whether samples are fine now (a rebalance runs, or its window catches up).
    fine: bool,
    /// The last sample taken: trimming forgets only appends the samples have counted past.
    last_sample: Option<SimTime>,
    /// The next trim boundary.
    trim_at: SimTime,
}

impl ObserverClock {
    /// The first sample at the start, after the events scheduled so far.
    pub(super) fn new(next_seq: u64) -> Self {
        ObserverClock {
            sample_at: SimTime::ZERO,
            sample_seq: next_seq,
            fine: false,
            last_sample: None,
            trim_at: SimTime::ZERO + TRIM_EVERY,
        }
    }

    /// The next sample's instant, if it comes before the queue event `(at, seq)` (or, with
    /// `seq` `None`, by `at`: the run's end, once every event is handled).
    pub(super) fn sample_due(&self, at: SimTime, seq: Option<u64>) -> Option<SimTime> {
        let before = match seq {
            Some(seq) => (self.sample_at, self.sample_seq) <= (at, seq),
            None => self.sample_at <= at,
        };
        before.then_some(self.sample_at)
    }

    /// The sample at `now` was taken; the next comes `every` later, after the events scheduled
    /// so far, and samples are `fine` until then.
    pub(super) fn sampled(&mut self, now: SimTime, every: Duration, fine: bool, next_seq: u64) {
        self.last_sample = Some(now);
        self.sample_at = now + every;
        self.sample_seq = next_seq;
        self.fine = fine;
    }

    /// A rebalance began since the last sample: the next one comes at once (after the events
    /// scheduled so far), and the samples after it finely. Whether it did.
    pub(super) fn refine(&mut self, now: SimTime, next_seq: u64) -> bool {
        if self.fine {
            return false;
        }
        self.sample_at = now;
        self.sample_seq = next_seq;
        self.fine = true;
        true
    }

    pub(super) fn is_fine(&self) -> bool {
        self.fine
    }

    /// When the clock has reached the next trim boundary at `now`: the instant up to which the
    /// logs may forget appends (the last sample), and the boundary moves past `now`.
    pub(super) fn trim_due(&mut self, now: SimTime) -> Option<SimTime> {
        if now < self.trim_at {
            return None;
        }
        while self.trim_at <= now {
            self.trim_at = self.trim_at + TRIM_EVERY;
        }
        self.last_sample
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    /// A sample planned when the queue's next sequence number was 5 comes after the events at
    /// its instant numbered below 5 and before those from 5 on, and anything later.
    #[test]
    fn a_sample_keeps_the_place_of_an_event_scheduled_when_it_was_planned() {
        let mut clock = ObserverClock::new(0);
        clock.sampled(SimTime::ZERO, Duration::from_millis(100), false, 5);
        assert_eq!(clock.sample_due(ms(100), Some(4)), None);
        assert_eq!(clock.sample_due(ms(100), Some(5)), Some(ms(100)));
        assert_eq!(clock.sample_due(ms(101), Some(0)), Some(ms(100)));
        assert_eq!(clock.sample_due(ms(99), Some(9)), None);
        assert_eq!(clock.sample_due(ms(100), None), Some(ms(100)));
    }

    /// Refining moves the next sample to now once, until a sample says samples are coarse again.
    #[test]
    fn a_rebalance_brings_the_next_sample_forward_once() {
        let mut clock = ObserverClock::new(0);
        clock.sampled(SimTime::ZERO, Duration::from_millis(1_000), false, 3);
        assert!(clock.refine(ms(10), 7));
        assert!(!clock.refine(ms(11), 8));
        assert_eq!(clock.sample_due(ms(10), Some(7)), Some(ms(10)));
        clock.sampled(ms(10), Duration::from_millis(10), true, 9);
        assert!(!clock.refine(ms(12), 10));
        clock.sampled(ms(20), Duration::from_millis(1_000), false, 11);
        assert!(clock.refine(ms(30), 12));
    }

    /// Trims fall at the first instant past each 10 s boundary, up to the last sample, and not
    /// before the first sample.
    #[test]
    fn trims_fall_as_the_clock_passes_each_boundary_up_to_the_last_sample() {
        let mut clock = ObserverClock::new(0);
        assert_eq!(clock.trim_due(ms(9_999)), None);
        assert_eq!(clock.trim_due(ms(10_000)), None, "nothing sampled yet");
        clock.sampled(ms(12_000), Duration::from_millis(1_000), false, 1);
        assert_eq!(
            clock.trim_due(ms(15_000)),
            None,
            "the 10 s boundary is passed"
        );
        assert_eq!(clock.trim_due(ms(35_000)), Some(ms(12_000)));
        assert_eq!(clock.trim_due(ms(39_999)), None);
        assert_eq!(clock.trim_due(ms(40_000)), Some(ms(12_000)));
    }
}
