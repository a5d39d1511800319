//! `cgsim explain SCENARIO [--seed N] [--variant NAME] [--set KEY=VALUE]... [--format
//! text|json]`: runs the scenario recording the group's history and prints each rebalance as a chain of
//! causes (`cgsim::explain`).

use super::run::Format;
use cgsim::explain::{explain, render_text};
use cgsim::scenario::{load, LoadOptions};
use cgsim::world::{run, RunOptions};
use std::path::Path;
use std::process::ExitCode;

pub fn run_explain(path: &Path, options: &LoadOptions, format: Format) -> ExitCode {
    let scenario = match load(path, options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return super::bad_input();
        }
    };
    let out = run(
        &scenario,
        RunOptions {
            record_history: true,
            ..RunOptions::default()
        },
    );
    let history = out.group_history.expect("recorded");
    let explanation = explain(&scenario, &history, &out.report);
    let text = match format {
        Format::Text => render_text(&explanation),
        Format::Json => {
            serde_json::to_string_pretty(&explanation).expect("explanation serializes") + "\n"
        }
    };
    // The explanation is the answer asked for, whatever the run found: exit 0 (`cgsim run`
    // reports violations by its exit code).
    super::write_stdout(&text);
    ExitCode::SUCCESS
}
