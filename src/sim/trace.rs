//! The trace: one line per step a model logs, simulated time first, kept only for `--trace`.
//! It is for people; the run's identity is its [`Digest`](super::Digest), over event records.

use super::SimTime;
use sha2::{Digest as _, Sha256};

pub struct Trace {
    hasher: Sha256,
    keep: bool,
    lines: Vec<String>,
}

impl Trace {
    /// `keep`: store the lines (`--trace`); otherwise nothing is formatted or kept.
    pub fn new(keep: bool) -> Self {
        Trace {
            hasher: Sha256::new(),
            keep,
            lines: Vec::new(),
        }
    }

    pub fn keeps(&self) -> bool {
        true
    }

    pub fn digest(&self) -> String {
        self.hasher
            .clone()
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    pub fn record(&mut self, at: SimTime, what: &str) {
        let line = format!("{at} {what}");
        self.hasher.update(line.as_bytes());
        self.hasher.update(b"\n");
        if self.keep {
            self.lines.push(line);
        }
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }
}
