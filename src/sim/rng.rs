//! Seeded randomness: one master seed, and a ChaCha8 stream per named component derived from
//! it (SHA-256 of the seed and the name), so a new draw in one component never shifts another's.
//! All draws go through these helpers, in integers.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

pub struct Stream(ChaCha8Rng);

impl Stream {
    /// The stream `name` of master seed `seed`.
    pub fn derive(seed: u64, name: &str) -> Stream {
        let mut h = Sha256::new();
        h.update(b"cgsim-stream-v1\0");
        h.update(seed.to_le_bytes());
        h.update(name.as_bytes());
        Stream(ChaCha8Rng::from_seed(h.finalize().into()))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[lo, hi]` (inclusive), without modulo bias (Lemire's widening multiply with
    /// rejection).
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "empty range");
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        let n = span + 1;
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        // The threshold (2^64 mod n, below n) needs a division; a low half at or above n is
        // above it anyway, so it is worked out only in the rare case the draw may be rejected
        // (Lemire 2019): the same draws and the same answers as always computing it.
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        lo + (m >> 64) as u64
    }

    pub fn fill(&mut self, bytes: &mut [u8]) {
        self.0.fill_bytes(bytes);
    }
}

/// Derives named streams from the scenario's seed.
pub struct RngStreams {
    seed: u64,
}

impl RngStreams {
    pub fn new(seed: u64) -> Self {
        RngStreams { seed }
    }

    pub fn stream(&self, name: &str) -> Stream {
        Stream::derive(self.seed, name)
    }
}

/// A `java.util.UUID.randomUUID()`-shaped string (version 4, IETF variant) from `stream`, as
/// the classic coordinator appends to member ids.
pub fn random_uuid_string(stream: &mut Stream) -> String {
    let mut b = [0u8; 16];
    stream.fill(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..3)
            .map({
                let mut s = Stream::derive(7, "latency");
                move |_| s.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..3)
            .map({
                let mut s = Stream::derive(7, "latency");
                move |_| s.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(
            Stream::derive(7, "latency").next_u64(),
            Stream::derive(7, "member-ids").next_u64()
        );
        assert_ne!(
            Stream::derive(7, "latency").next_u64(),
            Stream::derive(8, "latency").next_u64()
        );
    }

    #[test]
    fn between_stays_in_range() {
        let mut s = Stream::derive(1, "t");
        for _ in 0..1000 {
            let x = s.between(3, 5);
            assert!((3..=5).contains(&x));
        }
        assert_eq!(s.between(4, 4), 4);
    }

    /// The threshold worked out only when a draw may be rejected gives every answer, and
    /// consumes every draw, as working it out each time does (what every snapshot was made
    /// with).
    #[test]
    fn between_draws_as_the_plain_rejection_method() {
        fn plain(s: &mut Stream, lo: u64, hi: u64) -> u64 {
            let n = hi - lo + 1;
            let threshold = n.wrapping_neg() % n;
            loop {
                let m = u128::from(s.next_u64()) * u128::from(n);
                if (m as u64) >= threshold {
                    return lo + (m >> 64) as u64;
                }
            }
        }
        // Spans just past a power of two reject about half the draws.
        for (lo, hi) in [(1, 5), (0, 9_999), (0, (1 << 63) + 1), (7, u64::MAX - 3)] {
            let (mut a, mut b) = (Stream::derive(3, "x"), Stream::derive(3, "x"));
            for _ in 0..10_000 {
                assert_eq!(a.between(lo, hi), plain(&mut b, lo, hi), "[{lo}, {hi}]");
            }
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn uuid_shape() {
        let u = random_uuid_string(&mut Stream::derive(1, "ids"));
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
    }
}
