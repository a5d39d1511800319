//! Simulated time: integer microseconds since the start of the run. Never the wall clock.

use std::fmt;
use std::ops::{Add, Sub};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct SimTime(u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_micros(us: u64) -> SimTime {
        SimTime(us)
    }

    /// Saturates at [`SimTime::MAX`]: a time from input never wraps (the scenario's limits
    /// keep real ones far below it).
    pub const fn from_millis(ms: u64) -> SimTime {
        SimTime(ms.saturating_mul(1000))
    }

    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// Whole milliseconds, floored: how every report shows time.
    pub const fn as_millis(self) -> u64 {
        self.0 / 1000
    }

    pub fn saturating_sub(self, other: SimTime) -> Duration {
        Duration(self.0.saturating_sub(other.0))
    }
}

/// A span of simulated time, in microseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Duration(u64);

impl Duration {
    pub const ZERO: Duration = Duration(0);

    pub const fn from_micros(us: u64) -> Duration {
        Duration(us)
    }

    /// Saturates, as [`SimTime::from_millis`] does.
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms.saturating_mul(1000))
    }

    pub const fn as_micros(self) -> u64 {
        self.0
    }

    pub const fn as_millis(self) -> u64 {
        self.0 / 1000
    }
}

impl Add<Duration> for SimTime {
    type Output = SimTime;
    fn add(self, d: Duration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}

impl Sub for SimTime {
    type Output = Duration;
    fn sub(self, other: SimTime) -> Duration {
        debug_assert!(self >= other, "time runs forward");
        Duration(self.0 - other.0)
    }
}

impl fmt::Display for SimTime {
    /// `12.345s`-style: seconds with millisecond precision, as the trace prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.as_millis();
        write!(f, "{}.{:03}s", ms / 1000, ms % 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_beyond_the_range_saturate_instead_of_wrapping() {
        // 2^62 ms * 1000 wraps a u64; a wrapped stall once printed as 0 ms.
        let huge = 1u64 << 62;
        assert_eq!(SimTime::from_millis(huge), SimTime::MAX);
        assert_eq!(Duration::from_millis(huge).as_micros(), u64::MAX);
        assert_eq!(SimTime::from_millis(7).as_micros(), 7_000);
        assert_eq!(SimTime::MAX + Duration::from_millis(1), SimTime::MAX);
    }
}
