//! `cgsim fuzz --list-mutants`: the deliberately broken behaviours (`scenario::Mutant`), one
//! line each, its name first. Test-only: each exists to show that the fuzzer and the checkers
//! catch what it breaks (tests/fuzz.rs finds and shrinks each).

use crate::scenario::Mutant;

/// One line per mutant: `NAME  what it breaks`.
pub fn list() -> String {
    Mutant::ALL
        .iter()
        .map(|m| format!("{:<22}{}\n", m.name(), m.what()))
        .collect()
}
