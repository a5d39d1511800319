//! One file per subcommand. Exit codes everywhere: 0 success, 1 the run found invariant
//! violations, 2 bad input (with file, line and what is wrong).

pub mod assign;
pub mod compare;
pub mod partition;
pub mod run;

use std::process::ExitCode;

pub const EXIT_VIOLATIONS: u8 = 1;
pub const EXIT_BAD_INPUT: u8 = 2;

pub fn bad_input() -> ExitCode {
    ExitCode::from(EXIT_BAD_INPUT)
}
