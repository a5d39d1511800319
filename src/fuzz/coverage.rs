//! The `sometimes` properties counted across a fuzz run: how many runs reached each coverage
//! path (`check::Coverage`), every path listed, so a fuzz run that never exercises one says so.

use crate::check::Coverage;
use std::fmt::Write;

#[derive(Clone, Debug, Default)]
pub struct Tally {
    runs: u64,
    /// Per [`Coverage::ALL`] entry: runs that reached it.
    reached: [u64; Coverage::ALL.len()],
}

impl Tally {
    /// One run's `invariants.covered`.
    pub fn add(&mut self, covered: &[String]) {
        self.runs += 1;
        for (i, c) in Coverage::ALL.iter().enumerate() {
            if covered.iter().any(|n| n == c.name()) {
                self.reached[i] += 1;
            }
        }
    }

    pub fn count(&self, c: Coverage) -> u64 {
        let i = Coverage::ALL.iter().position(|x| *x == c).expect("listed");
        self.reached[i]
    }

    /// `coverage: ...` then one line per path: its name, the runs that reached it, and
    /// `never reached` for a path no run exercised.
    pub fn render(&self) -> String {
        let mut s = format!(
            "coverage (runs that reached each path, of {}):\n",
            self.runs
        );
        let width = Coverage::ALL
            .iter()
            .map(|c| c.name().len())
            .max()
            .unwrap_or(0);
        for (i, c) in Coverage::ALL.iter().enumerate() {
            let n = self.reached[i];
            let note = if n == 0 { "  never reached" } else { "" };
            let _ = writeln!(s, "  {:<width$}{n:>8}{note}", c.name());
        }
        s
    }
}
