//! `cgsim run SCENARIO [--seed N] [--variant NAME] [--set KEY=VALUE]... [--format text|json]
//! [--trace]`

use cgsim::engine::{run_with_faults, RunOptions};
use cgsim::report::render_text;
use cgsim::scenario::Scenario;
use cgsim::scenario::{load, LoadOptions};
use std::path::Path;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn run(
    path: &Path,
    options: &LoadOptions,
    format: Format,
    trace: bool,
    faults: &[String],
) -> ExitCode {
    let scenario = match load(path, options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return super::bad_input();
        }
    };
    let faults = match faults
        .iter()
        .map(|f| parse_fault(&scenario, f))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(f) => f,
        Err(e) => {
            eprintln!("--inject-double-ownership: {e}");
            return super::bad_input();
        }
    };
    tracing::info!(scenario = %scenario.name, seed = scenario.seed, variant = %scenario.variant, "run");
    let out = run_with_faults(
        &scenario,
        RunOptions {
            keep_trace: trace,
            ..RunOptions::default()
        },
        &faults,
    );
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

/// `AT_MS:MEMBER:PARTITION` -> (at, member index, global partition index).
fn parse_fault(scenario: &Scenario, text: &str) -> Result<(u64, usize, usize), String> {
    let mut parts = text.splitn(3, ':');
    let (Some(at), Some(member), Some(partition)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("{text:?}: expected AT_MS:MEMBER:PARTITION"));
    };
    let at: u64 = at
        .parse()
        .map_err(|_| format!("{text:?}: {at:?} is not a time in ms"))?;
    let member = scenario
        .members
        .iter()
        .position(|m| m.name == member)
        .ok_or_else(|| format!("{text:?}: no member {member:?}"))?;
    let mut first = 0usize;
    for t in &scenario.topics {
        for p in 0..t.partitions {
            if format!("{}-{p}", t.name) == partition {
                return Ok((at, member, first + p as usize));
            }
        }
        first += t.partitions as usize;
    }
    Err(format!("{text:?}: no partition {partition:?}"))
}
