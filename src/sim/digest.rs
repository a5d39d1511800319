//! The run digest: XXH3-128 (a fixed, specified algorithm: the same bytes give the same digest
//! on every machine) over the canonical bytes of every event the run processed (its time, its
//! sequence number and its fields, written by the world), never over trace wording, so
//! rewording a log line changes no digest. Bytes are buffered and hashed in blocks. A run
//! hashes every event (millions in a large group), so the hash must cost next to nothing: the
//! digest identifies a run for regression review, it is no security boundary, so a fast
//! non-cryptographic 128-bit hash fits (SHA-256 and BLAKE3 cost 5-8% of a small run).

use xxhash_rust::xxh3::Xxh3Default;

const FLUSH_AT: usize = 1 << 14;

pub struct Digest {
    hasher: Xxh3Default,
    buf: Vec<u8>,
}

impl Default for Digest {
    fn default() -> Self {
        Self::new()
    }
}

impl Digest {
    pub fn new() -> Self {
        Digest {
            hasher: Xxh3Default::new(),
            buf: Vec::with_capacity(FLUSH_AT + 1024),
        }
    }

    #[inline]
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    #[inline]
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    #[inline]
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    #[inline]
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    #[inline]
    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    /// A length-prefixed string.
    pub fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// A length-prefixed list of integers (partition indexes).
    pub fn usizes(&mut self, v: &[usize]) {
        self.u64(v.len() as u64);
        for &x in v {
            self.u64(x as u64);
        }
    }

    /// Ends one record; hashes the buffer once it is large.
    pub fn end_record(&mut self) {
        if self.buf.len() >= FLUSH_AT {
            self.hasher.update(&self.buf);
            self.buf.clear();
        }
    }

    /// Hex XXH3-128 of everything written so far.
    pub fn hex(&self) -> String {
        let mut h = self.hasher.clone();
        h.update(&self.buf);
        format!("{:032x}", h.digest128())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffering_does_not_change_the_digest() {
        let mut a = Digest::new();
        let mut b = Digest::new();
        for i in 0..10_000u64 {
            a.u64(i);
            a.str("x");
            a.end_record();
            b.u64(i);
            b.str("x");
        }
        let mut whole = Vec::new();
        for i in 0..10_000u64 {
            whole.extend_from_slice(&i.to_le_bytes());
            whole.extend_from_slice(&1u64.to_le_bytes());
            whole.extend_from_slice(b"x");
        }
        let expected = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&whole));
        assert_eq!(a.hex(), expected);
        assert_eq!(b.hex(), expected);
    }
}
