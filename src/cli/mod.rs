//! One file per subcommand. Exit codes everywhere: 0 success, 1 the run found invariant
//! violations, 2 bad input (with file, line and what is wrong).

pub mod assign;
pub mod check;
pub mod compare;
pub mod conform;
pub mod explain;
pub mod fuzz;
pub mod lab;
pub mod merge;
pub mod new;
pub mod partition;
pub mod run;
pub mod shell;
pub mod sweep;

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::process::ExitCode;

pub const EXIT_VIOLATIONS: u8 = 1;
pub const EXIT_BAD_INPUT: u8 = 2;

pub fn bad_input() -> ExitCode {
    ExitCode::from(EXIT_BAD_INPUT)
}

/// Writes `text` to stdout. `false` when the reader has gone (a closed pipe, `| head -1`):
/// the caller stops writing and exits 0, as Unix tools do, never with a panic.
pub fn write_stdout(text: &str) -> bool {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    written(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

/// Whether a write to stdout went through; an error other than a closed pipe is printed.
fn written(result: std::io::Result<()>) -> bool {
    match result {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => false,
        Err(e) => {
            eprintln!("cannot write to stdout: {e}");
            false
        }
    }
}

/// Writes `value` as pretty JSON and a newline straight to stdout, without the whole text in
/// memory first (a long run's lag series is most of its report); false as [`write_stdout`].
pub fn write_stdout_json(value: &impl serde::Serialize) -> bool {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    written(
        serde_json::to_writer_pretty(&mut out, value)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush()),
    )
}

/// A bar on stderr when it is a terminal; nothing when piped (scripts, CI, tests).
pub fn progress_bar(len: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} runs, eta {eta}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
