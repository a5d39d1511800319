//! The trace: one line per step a model logs, simulated time first, kept only for `--trace`.
//! It is for people; the run's identity is its [`Digest`](super::Digest), over event records.

use super::SimTime;

pub struct Trace {
    keep: bool,
    lines: Vec<String>,
}

impl Trace {
    /// `keep`: store the lines (`--trace`); otherwise nothing is formatted or kept.
    pub fn new(keep: bool) -> Self {
        Trace {
            keep,
            lines: Vec::new(),
        }
    }

    pub fn keeps(&self) -> bool {
        self.keep
    }

    pub fn record(&mut self, at: SimTime, what: &str) {
        if self.keep {
            self.lines.push(format!("{at} {what}"));
        }
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }
}
