//! `cgsim fuzz [SCENARIO] --seeds A..B [--time SECS] [--variant NAME] [--set KEY=VALUE]...
//! [--mutant NAME] [--threads N] [--shrink] [--out DIR] [--digests FILE]`:
//! one generated case per seed (`cgsim::fuzz`), every property checked; per failure a line
//! `seed S: PROPERTY at T ms: DETAIL` and the command that replays it; with `--shrink` the
//! first failure of each property shrunk and written; the coverage paths counted; last line
//! `fuzz: F failures in N runs (R runs/s), seeds A..C`. With `--time` (or on Ctrl-C) no seed
//! starts after the deadline, the running ones finish and the summary covers the seeds run.
//! Exit 1 when any run failed, 130 when interrupted without a failure, 2 on bad input.

use super::compare::SeedRange;
use cgsim::fuzz::coverage::Tally;
use cgsim::fuzz::shrink::{shrink_with, size};
use cgsim::fuzz::{base_of, generate_with, run_case_with, Case, Failure, Faults};
use cgsim::scenario::{emit_scenario, load, load_str, LoadOptions, Mutant};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by `--time`'s deadline or by Ctrl-C: no seed starts after it.
static STOP: AtomicBool = AtomicBool::new(false);
/// Set by Ctrl-C only (exit 130 rather than 0).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The exit code of a Ctrl-C'd command (128 + SIGINT), as shells report it.
const EXIT_INTERRUPTED: u8 = 130;

pub struct Options {
    pub scenario: Option<PathBuf>,
    pub seeds: Option<SeedRange>,
    pub mutant: Option<String>,
    pub threads: Option<usize>,
    pub shrink: bool,
    pub out: Option<PathBuf>,
    pub list_mutants: bool,
    pub cluster_faults: bool,
    pub migration: bool,
    /// Where to write every run's `SEED DIGEST` line.
    pub digests: Option<PathBuf>,
    /// Start no seed after this many seconds.
    pub time_secs: Option<u64>,
    /// Applied to every generated scenario, as `cgsim run --variant` and `--set` do.
    pub variant: Option<String>,
    pub sets: Vec<String>,
}

/// Runs shrinking may take per failure.
const SHRINK_BUDGET: u64 = 3_000;

pub fn run_fuzz(options: Options) -> ExitCode {
    if options.list_mutants {
        super::write_stdout(&cgsim::fuzz::mutants::list());
        return ExitCode::SUCCESS;
    }
    // With a time budget and no range, seeds from 1 on, as many as the budget allows.
    let seeds = match (options.seeds, options.time_secs) {
        (Some(s), _) => s,
        (None, Some(_)) => SeedRange {
            first: 1,
            last: super::compare::MAX_SEEDS,
        },
        (None, None) => {
            eprintln!("cgsim fuzz: --seeds A..B (or --time SECS) is required");
            return super::bad_input();
        }
    };
    let load_options = LoadOptions {
        seed: None,
        variant: options.variant.clone(),
        sets: options.sets.clone(),
    };
    let mutant = match options.mutant.as_deref().map(Mutant::parse).transpose() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("--mutant: {e} (cgsim fuzz --list-mutants lists them)");
            return super::bad_input();
        }
    };
    let base: Option<Case> = match &options.scenario {
        None => None,
        Some(path) => match load(path, &LoadOptions::default()) {
            Ok(s) => Some(base_of(&s)),
            Err(e) => {
                eprintln!("{e}");
                return super::bad_input();
            }
        },
    };
    let out_dir = options
        .out
        .clone()
        .or_else(|| options.shrink.then(|| PathBuf::from("fuzz-out")));
    if let Some(dir) = &out_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("--out {}: cannot create: {e}", dir.display());
            return super::bad_input();
        }
    }
    let threads = options.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let replay_fuzz = |seed: u64| {
        let mut cmd = String::from("cgsim fuzz");
        if let Some(p) = &options.scenario {
            cmd.push_str(&format!(" {}", p.display()));
        }
        cmd.push_str(&format!(" --seeds {seed}..{seed}"));
        if let Some(m) = mutant {
            cmd.push_str(&format!(" --mutant {}", m.name()));
        }
        if options.cluster_faults {
            cmd.push_str(" --cluster-faults");
        }
        if options.migration {
            cmd.push_str(" --migration");
        }
        cmd.push_str(&run_flags(&load_options));
        cmd
    };
    let faults = Faults {
        cluster: options.cluster_faults,
        migration: options.migration,
    };
    let case_of = |seed: u64| generate_with(seed, base.as_ref(), mutant, faults);
    // A --variant or --set that cannot apply is bad input, found on the first seed's case
    // rather than reported as every seed's failure.
    if options.variant.is_some() || !options.sets.is_empty() {
        let case = case_of(seeds.first);
        if let Err(e) = load_str(
            &format!("{}.toml", case.name),
            &case.to_toml(),
            &load_options,
        ) {
            eprintln!(
                "cgsim fuzz: --variant/--set on the generated scenario of seed {}: {e}",
                seeds.first
            );
            return super::bad_input();
        }
    }
    if let Some(secs) = options.time_secs {
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(secs));
            STOP.store(true, Ordering::SeqCst);
        });
    }
    // Ctrl-C: stop starting seeds and print the summary of those run. A second Ctrl-C while
    // the running seeds finish is the default one (the process ends at once).
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        STOP.store(true, Ordering::SeqCst);
    });

    let list: Vec<u64> = (seeds.first..=seeds.last).collect();
    let bar = super::progress_bar(list.len() as u64);
    let mut tally = Tally::default();
    let mut failures: Vec<(u64, Failure)> = Vec::new();
    let mut digests = String::new();
    let mut write_error = None;
    let started = std::time::Instant::now();
    let mut last_run = None;
    cgsim::fuzz::runner::for_each_seed_until(
        &list,
        threads,
        &STOP,
        |seed| run_case_with(&case_of(seed), &load_options),
        |seed, verdict| {
            bar.inc(1);
            last_run = Some(seed);
            tally.add(&verdict.covered);
            if options.digests.is_some() {
                digests.push_str(&format!("{seed} {}\n", verdict.digest));
            }
            let Some(f) = verdict.failure else { return };
            let mut text = format!(
                "seed {seed}: {} at {} ms: {}\n  replay: {}\n",
                f.property,
                f.at_ms,
                f.detail,
                replay_fuzz(seed)
            );
            if let Some(dir) = &out_dir {
                match write_case(
                    dir,
                    &format!("fuzz-{seed}.toml"),
                    &case_of(seed),
                    &load_options,
                ) {
                    Ok(path) => text.push_str(&format!("  replay: cgsim run {}\n", path.display())),
                    Err(e) => write_error = Some(e),
                }
            }
            bar.suspend(|| super::write_stdout(&text));
            failures.push((seed, f));
        },
    );
    let elapsed = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    if let Some(e) = write_error {
        eprintln!("{e}");
        return super::bad_input();
    }
    if let Some(path) = &options.digests {
        if let Err(e) = std::fs::write(path, &digests) {
            eprintln!("--digests {}: cannot write: {e}", path.display());
            return super::bad_input();
        }
    }
    let runs = last_run.map_or(0, |last| last - seeds.first + 1);
    let covered = match last_run {
        Some(last) => format!("seeds {}..{last}", seeds.first),
        None => "no seeds".to_string(),
    };

    if options.shrink {
        let dir = out_dir.as_deref().expect("--shrink has an out dir");
        let mut shrunk_properties = BTreeSet::new();
        for (seed, f) in &failures {
            // The first failure of each property: shrinking every one would take long.
            if !shrunk_properties.insert(f.property.clone()) {
                continue;
            }
            let s = shrink_with(&case_of(*seed), f, SHRINK_BUDGET, &load_options);
            let path = match write_case(
                dir,
                &format!("fuzz-{seed}-shrunk.toml"),
                &s.case,
                &load_options,
            ) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("{e}");
                    return super::bad_input();
                }
            };
            let text = format!(
                "seed {seed}: shrunk in {} runs to {}: {} at {} ms: {}\n  replay: cgsim run {}\n",
                s.runs,
                size(&s.case),
                s.failure.property,
                s.failure.at_ms,
                s.failure.detail,
                path.display()
            );
            if !super::write_stdout(&text) {
                return ExitCode::SUCCESS;
            }
        }
    }
    let rate = if elapsed > 0.0 {
        (runs as f64 / elapsed).round() as u64
    } else {
        runs
    };
    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
    let last = format!(
        "{}fuzz: {} failures in {runs} runs ({rate} runs/s), {covered}{}\n",
        tally.render(),
        failures.len(),
        if interrupted { " (interrupted)" } else { "" }
    );
    super::write_stdout(&last);
    if !failures.is_empty() {
        ExitCode::from(super::EXIT_VIOLATIONS)
    } else if interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    }
}

/// The `cgsim run` flags that reproduce `options` (`--variant`, `--set`), each with a leading
/// space, shell-quoted.
fn run_flags(options: &LoadOptions) -> String {
    let mut flags = String::new();
    if let Some(v) = &options.variant {
        flags.push_str(&format!(" --variant {}", shell_quote(v)));
    }
    for set in &options.sets {
        flags.push_str(&format!(" --set {}", shell_quote(set)));
    }
    flags
}

/// `text` as one shell word: as it is when it is plain, else in single quotes.
fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.=/,:+@".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Writes `case` as `dir/name`, with `--variant` and `--set` applied (the scenario as run, which
/// `cgsim run` replays as it is); the path written.
fn write_case(
    dir: &Path,
    name: &str,
    case: &Case,
    options: &LoadOptions,
) -> Result<PathBuf, String> {
    let path = dir.join(name);
    let mut text = case.to_toml();
    if options.variant.is_some() || !options.sets.is_empty() {
        let file = format!("{}.toml", case.name);
        // A case that does not load under them is written as generated (its run said why).
        if let Ok(scenario) = load_str(&file, &text, options) {
            text = emit_scenario(&text, options, &scenario)?;
        }
    }
    std::fs::write(&path, text)
        .map_err(|e| format!("--out {}: cannot write: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replay_flags_are_shell_words() {
        let options = LoadOptions {
            seed: None,
            variant: Some("cooperative".into()),
            sets: vec![
                "group.session_timeout_ms=10000".into(),
                "group.assignors=[\"range\"]".into(),
                "x=it's".into(),
            ],
        };
        assert_eq!(
            run_flags(&options),
            r#" --variant cooperative --set group.session_timeout_ms=10000 --set 'group.assignors=["range"]' --set 'x=it'\''s'"#
        );
    }
}
