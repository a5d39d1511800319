//! `cgsim run SCENARIO [--seed N] [--variant NAME] [--set KEY=VALUE]... [--format text|json]
//! [--trace]`

use cgsim::engine::{run as simulate, RunOptions};
use cgsim::report::render_text;
use cgsim::scenario::{load, LoadOptions};
use std::path::Path;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn run(path: &Path, options: &LoadOptions, format: Format, trace: bool) -> ExitCode {
    let scenario = match load(path, options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return super::bad_input();
        }
    };
    tracing::info!(scenario = %scenario.name, seed = scenario.seed, variant = %scenario.variant, "run");
    let out = simulate(&scenario, RunOptions { keep_trace: trace });
    tracing::info!(events = out.events, "done");
    if trace {
        for line in &out.trace {
            println!("{line}");
        }
    }
    match format {
        Format::Text => print!("{}", render_text(&out.report)),
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&out.report).expect("report serializes")
        ),
    }
    if out.report.has_violations() {
        eprintln!(
            "invariant violations found (seed {}): see invariants.violations",
            scenario.seed
        );
        ExitCode::from(super::EXIT_VIOLATIONS)
    } else {
        ExitCode::SUCCESS
    }
}
