//! `cgsim merge FILES... [--out FILE.jsonl] [--objective [max:]FIGURE]`: the shards of one
//! sweep joined (`cgsim::sweep::merge`), printing exactly the summary the unsharded run prints;
//! `--out` writes the merged lines, in the unsharded order: the unsharded run's file.

use cgsim::sweep::merge::merge;
use cgsim::sweep::objective::Objective;
use cgsim::sweep::text::summary_text;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn run_merge(files: &[PathBuf], out: Option<&Path>, objective: Option<Objective>) -> ExitCode {
    let mut texts = Vec::with_capacity(files.len());
    for f in files {
        match std::fs::read_to_string(f) {
            Ok(t) => texts.push((f.display().to_string(), t)),
            Err(e) => {
                eprintln!("{}: cannot read: {e}", f.display());
                return super::bad_input();
            }
        }
    }
    let merged = match merge(&texts) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return super::bad_input();
        }
    };
    if let Some(out) = out {
        let mut text = merged.plan.header_line() + "\n";
        for r in &merged.records {
            text.push_str(&merged.plan.record_line(r));
            text.push('\n');
        }
        if let Err(e) = std::fs::write(out, text) {
            eprintln!("{}: cannot write: {e}", out.display());
            return super::bad_input();
        }
    }
    let summary = summary_text(&merged.plan, &merged.records, objective);
    if !super::write_stdout(&summary) {
        return ExitCode::SUCCESS;
    }
    if merged.records.iter().any(|r| r.violation_count() > 0) {
        ExitCode::from(super::EXIT_VIOLATIONS)
    } else {
        ExitCode::SUCCESS
    }
}
