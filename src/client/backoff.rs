//! Kafka's `ExponentialBackoff` (KIP-580), as the clients use it between failed attempts:
//! `retry.backoff.ms` doubled per attempt up to `retry.backoff.max.ms`, with a random factor in
//! [0.8, 1.2) (`CommonClientConfigs.RETRY_BACKOFF_JITTER`), capped at the maximum. With a
//! maximum at or below the initial backoff it is the maximum, fixed and without jitter.

use super::{ClientEnv, ClientTimer};
use crate::sim::rng::Stream;
use crate::sim::time::Duration;
use crate::sim::SimTime;

/// Failures in a row, and when the next attempt may go: the state behind Kafka's
/// `RequestState` (the KIP-848 heartbeat manager) and `Heartbeat.failHeartbeat`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Backoff {
    pub(super) failures: u32,
    pub(super) until: SimTime,
}

impl Backoff {
    /// One more failure in a row: the next attempt waits its backoff from now.
    pub(super) fn failed(&mut self, env: &mut ClientEnv) {
        self.until = env.now() + env.retry_backoff(self.failures);
        self.failures = self.failures.saturating_add(1);
    }

    /// A success ends the failures; the next attempt waits the first step's backoff
    /// (`onSuccessfulAttempt`).
    pub(super) fn succeeded(&mut self, env: &mut ClientEnv) {
        self.failures = 0;
        self.until = env.now() + env.retry_backoff(0);
    }
}

/// A synchronous call's request that failed with a retriable error (a `commitSync`, an
/// OffsetFetch for committed offsets): it goes again once its backoff has passed and the
/// coordinator is known. The attempts count within one call: `commitOffsetsSync` and
/// `fetchCommittedOffsets` sleep `retryBackoff.backoff(attempts++)` between tries, and KIP-848's
/// commit manager keeps one `RequestState` per call.
#[derive(Debug, Default)]
pub(super) struct SyncRetry {
    /// Failed attempts in a row within this call.
    pub(super) attempts: u32,
    /// When it goes again (`None`: nothing waits to be retried).
    pub(super) due: Option<SimTime>,
}

impl SyncRetry {
    /// Whether a retry waits, and its backoff has passed by `now`.
    pub(super) fn is_due(&self, now: SimTime) -> bool {
        self.due.is_some_and(|at| at <= now)
    }

    /// One more failure in this call: the request goes again after `backoff`.
    pub(super) fn schedule(&mut self, env: &mut ClientEnv, backoff: Duration) {
        let at = env.now() + backoff;
        self.due = Some(at);
        self.attempts = self.attempts.saturating_add(1);
        env.after(at, ClientTimer::RetryBackoff);
    }

    /// The retry, if due by `now`: taken (it goes now).
    pub(super) fn take_due(&mut self, now: SimTime) -> bool {
        let due = self.is_due(now);
        if due {
            self.due = None;
        }
        due
    }
}

/// The backoff before attempt `attempts + 1` after `attempts` failures (0: the first retry),
/// in milliseconds; its jitter is drawn from `stream` (nothing is drawn when it has none).
pub fn exponential_backoff(
    initial_ms: u64,
    max_ms: u64,
    attempts: u32,
    stream: &mut Stream,
) -> u64 {
    if max_ms <= initial_ms {
        return max_ms;
    }
    // initial * 2^min(attempts, log2(max / initial)): doubled until it would pass the maximum,
    // which is where the exponent's cap puts it.
    let term = initial_ms
        .checked_shl(attempts)
        .filter(|t| t >> attempts == initial_ms && *t < max_ms)
        .unwrap_or(max_ms);
    // `(long) (randomFactor * term)`, the factor uniform in [0.8, 1.2), in millionths.
    let factor = stream.between(800_000, 1_199_999);
    (term * factor / 1_000_000).min(max_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_the_initial_backoff_with_a_fifth_of_jitter_up_to_the_maximum() {
        let mut stream = Stream::derive(1, "retry-backoff");
        for (attempts, low, high) in [(0, 80, 119), (1, 160, 239), (2, 320, 479), (3, 640, 959)] {
            let drawn: Vec<u64> = (0..200)
                .map(|_| exponential_backoff(100, 1_000, attempts, &mut stream))
                .collect();
            assert!(
                drawn.iter().all(|b| (low..=high).contains(b)),
                "{attempts}: {drawn:?}"
            );
            assert!(
                drawn.iter().min() < Some(&(low + 10)) && drawn.iter().max() > Some(&(high - 10))
            );
        }
        // From the fourth retry on the term is the maximum, and the jitter cannot pass it.
        for attempts in [4, 5, 31, 32, 64, u32::MAX] {
            let b = exponential_backoff(100, 1_000, attempts, &mut stream);
            assert!((800..=1_000).contains(&b), "{attempts}: {b}");
        }
    }

    #[test]
    fn a_maximum_at_or_below_the_initial_backoff_is_fixed_and_draws_nothing() {
        let mut stream = Stream::derive(1, "retry-backoff");
        let mut untouched = Stream::derive(1, "retry-backoff");
        assert_eq!(exponential_backoff(100, 100, 3, &mut stream), 100);
        assert_eq!(exponential_backoff(500, 200, 0, &mut stream), 200);
        assert_eq!(stream.next_u64(), untouched.next_u64());
    }
}
