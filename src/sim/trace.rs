//! The event trace: one line per event, simulated time first. Its digest (SHA-256 over the
//! canonical bytes of every line) identifies a run: same scenario and seed, same digest.

use super::SimTime;
use sha2::{Digest, Sha256};

pub struct Trace {
    hasher: Sha256,
    keep: bool,
    lines: Vec<String>,
    count: u64,
}

impl Trace {
    /// `keep`: store the lines for `--trace`; the digest is computed either way.
    pub fn new(keep: bool) -> Self {
        Trace {
            hasher: Sha256::new(),
            keep,
            lines: Vec::new(),
            count: 0,
        }
    }

    pub fn record(&mut self, at: SimTime, what: &str) {
        let line = format!("{at} {what}");
        self.hasher.update(line.as_bytes());
        self.hasher.update(b"\n");
        self.count += 1;
        if self.keep {
            self.lines.push(line);
        }
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Hex SHA-256 of the trace so far.
    pub fn digest(&self) -> String {
        self.hasher
            .clone()
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}
