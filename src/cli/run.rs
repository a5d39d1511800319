//! `cgsim run SCENARIO [--seed N] [--variant NAME] [--set KEY=VALUE]... [--format text|json]
//! [--trace [FILE|-]] [--timeline OUT.svg] [--timeline-window START_MS..END_MS] [--chrome-trace OUT.json]
//! [--emit-scenario FILE] [--describe]`

use cgsim::cluster::PartitionSpace;
use cgsim::report::{
    render_chrome_trace, render_describe, render_text, render_timeline, ChromeTraceOptions,
    TimelineOptions,
};
use cgsim::scenario::Scenario;
use cgsim::scenario::{emit_scenario, load, LoadOptions};
use cgsim::world::{run_with_faults, RunOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// What the report is printed as: text or JSON, and with `--describe` Kafka's
/// `kafka-consumer-groups --describe` tables after the text.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    pub format: Format,
    pub describe: bool,
}

/// The pictures asked for: `--timeline`, `--timeline-window`, `--chrome-trace`.
#[derive(Clone, Debug, Default)]
pub struct Pictures {
    pub timeline: Option<PathBuf>,
    pub window: Option<String>,
    pub chrome_trace: Option<PathBuf>,
}

pub fn run(
    path: &Path,
    options: &LoadOptions,
    output: Output,
    trace: Option<&str>,
    faults: &[String],
    pictures: &Pictures,
    emit: Option<&Path>,
) -> ExitCode {
    let window_ms = match pictures.window.as_deref().map(parse_window).transpose() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("--timeline-window: {e}");
            return super::bad_input();
        }
    };
    if output.describe && output.format == Format::Json {
        eprintln!(
            "--describe: prints kafka-consumer-groups tables after the text report, not with --format json (the JSON report has Kafka's metric names under kafka_metrics)"
        );
        return super::bad_input();
    }
    if trace == Some("-") && output.format == Format::Json {
        eprintln!(
            "--trace: the trace and the JSON report would both go to stdout: give --trace FILE"
        );
        return super::bad_input();
    }
    let want_history = pictures.timeline.is_some() || pictures.chrome_trace.is_some();
    if window_ms.is_some() && !want_history {
        eprintln!("--timeline-window: needs --timeline or --chrome-trace");
        return super::bad_input();
    }
    let scenario = match load(path, options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return super::bad_input();
        }
    };
    if let Some((start, _)) = window_ms {
        if start >= scenario.duration_ms {
            eprintln!(
                "--timeline-window: starts at {start} ms, after the run ends ({} ms)",
                scenario.duration_ms
            );
            return super::bad_input();
        }
    }
    if let Some(out) = emit {
        let written = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|text| emit_scenario(&text, options, &scenario))
            .and_then(|toml| {
                std::fs::write(out, toml)
                    .map_err(|e| format!("cannot write {}: {e}", out.display()))
            });
        if let Err(e) = written {
            eprintln!("--emit-scenario: {e}");
            return super::bad_input();
        }
    }
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
            keep_trace: trace.is_some(),
            record_history: want_history,
            ..RunOptions::default()
        },
        &faults,
    );
    tracing::info!(events = out.events, "done");
    if let Some(history) = &out.history {
        if let Some(file) = &pictures.timeline {
            let svg = render_timeline(history, &out.report, &TimelineOptions { window_ms });
            if let Err(e) = std::fs::write(file, svg) {
                eprintln!("--timeline: cannot write {}: {e}", file.display());
                return super::bad_input();
            }
        }
        if let Some(file) = &pictures.chrome_trace {
            let json = render_chrome_trace(history, &out.report, &ChromeTraceOptions { window_ms });
            if let Err(e) = std::fs::write(file, json) {
                eprintln!("--chrome-trace: cannot write {}: {e}", file.display());
                return super::bad_input();
            }
        }
    }
    if let Some(dest) = trace {
        let mut text = String::new();
        for line in &out.trace {
            text.push_str(line);
            text.push('\n');
        }
        if dest == "-" {
            if !super::write_stdout(&text) {
                return ExitCode::SUCCESS;
            }
        } else if let Err(e) = std::fs::write(dest, text) {
            eprintln!("--trace: cannot write {dest}: {e}");
            return super::bad_input();
        }
    }
    let written = match output.format {
        Format::Text => super::write_stdout(&render_text(&out.report)),
        Format::Json => super::write_stdout_json(&out.report),
    };
    if !written {
        return ExitCode::SUCCESS;
    }
    if output.describe {
        // Each as the tool prints it: a state warning on stderr, then the table on stdout.
        for tool in render_describe(&out.report.group) {
            let title = format!(
                "\n{}  (at the run's end, {} ms)\n",
                tool.command, out.report.group.at_ms
            );
            if !super::write_stdout(&title) {
                return ExitCode::SUCCESS;
            }
            eprint!("{}", tool.stderr);
            if !super::write_stdout(&tool.stdout) {
                return ExitCode::SUCCESS;
            }
        }
    }
    let expectations = super::check::report_expectations(path, &scenario, &out.report);
    if expectations.is_err() {
        return super::bad_input();
    }
    if out.report.has_violations() {
        eprintln!(
            "invariant violations found (seed {}): see invariants.violations",
            scenario.seed
        );
        ExitCode::from(super::EXIT_VIOLATIONS)
    } else if !out.report.errors.is_empty() {
        // A fatal error (INCONSISTENT_GROUP_PROTOCOL, ...) stops a member: the run did not go
        // as the scenario meant, so it does not end as a success.
        eprintln!(
            "a member hit a fatal error (seed {}): see errors",
            scenario.seed
        );
        ExitCode::from(super::EXIT_VIOLATIONS)
    } else if expectations == Ok(false) {
        // Named on stderr above, each with its measured value.
        ExitCode::from(super::EXIT_VIOLATIONS)
    } else {
        ExitCode::SUCCESS
    }
}

/// `START_MS..END_MS` -> (start, end), start before end.
fn parse_window(text: &str) -> Result<(u64, u64), String> {
    let Some((a, b)) = text.split_once("..") else {
        return Err(format!(
            "{text:?}: expected START_MS..END_MS, e.g. 55000..75000"
        ));
    };
    let ms = |s: &str| {
        s.trim()
            .replace('_', "")
            .parse::<u64>()
            .map_err(|_| format!("{text:?}: {s:?} is not a time in ms"))
    };
    let (start, end) = (ms(a)?, ms(b)?);
    if start >= end {
        return Err(format!("{text:?}: the start must come before the end"));
    }
    Ok((start, end))
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
    if at >= scenario.duration_ms {
        return Err(format!(
            "{text:?}: {at} ms is not before the run's end ({} ms)",
            scenario.duration_ms
        ));
    }
    let member = scenario
        .members
        .iter()
        .position(|m| m.name == member)
        .ok_or_else(|| format!("{text:?}: no member {member:?}"))?;
    // The world's partition space: added partitions count too.
    if let Some(p) = PartitionSpace::new(scenario).find(partition) {
        return Ok((at, member, p));
    }
    Err(format!("{text:?}: no partition {partition:?}"))
}
