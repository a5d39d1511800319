//! `cgsim fuzz [SCENARIO] --seeds A..B [--mutant NAME] [--threads N] [--shrink] [--out DIR]
//! [--digests FILE]`:
//! one generated case per seed (`cgsim::fuzz`), every property checked; per failure a line
//! `seed S: PROPERTY at T ms: DETAIL` and the command that replays it; with `--shrink` the
//! first failure of each property shrunk and written; the coverage paths counted; last line
//! `fuzz: F failures in N runs (R runs/s)`. Exit 1 when any run failed, 2 on bad input.

use super::compare::SeedRange;
use cgsim::fuzz::coverage::Tally;
use cgsim::fuzz::shrink::{shrink, size};
use cgsim::fuzz::{base_of, generate_with, run_case, Case, Failure, Faults};
use cgsim::scenario::{load, LoadOptions, Mutant};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
}

/// Runs shrinking may take per failure.
const SHRINK_BUDGET: u64 = 3_000;

pub fn run_fuzz(options: Options) -> ExitCode {
    if options.list_mutants {
        super::write_stdout(&cgsim::fuzz::mutants::list());
        return ExitCode::SUCCESS;
    }
    let Some(seeds) = options.seeds else {
        eprintln!("cgsim fuzz: --seeds A..B is required");
        return super::bad_input();
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
        cmd
    };
    let faults = Faults {
        cluster: options.cluster_faults,
        migration: options.migration,
    };
    let case_of = |seed: u64| generate_with(seed, base.as_ref(), mutant, faults);

    let list: Vec<u64> = (seeds.first..=seeds.last).collect();
    let bar = super::progress_bar(list.len() as u64);
    let mut tally = Tally::default();
    let mut failures: Vec<(u64, Failure)> = Vec::new();
    let mut digests = String::new();
    let mut write_error = None;
    let started = std::time::Instant::now();
    cgsim::fuzz::runner::for_each_seed(
        &list,
        threads,
        |seed| run_case(&case_of(seed)),
        |seed, verdict| {
            bar.inc(1);
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
                match write_case(dir, &format!("fuzz-{seed}.toml"), &case_of(seed)) {
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
    let runs = list.len() as u64;

    if options.shrink {
        let dir = out_dir.as_deref().expect("--shrink has an out dir");
        let mut shrunk_properties = BTreeSet::new();
        for (seed, f) in &failures {
            // The first failure of each property: shrinking every one would take long.
            if !shrunk_properties.insert(f.property.clone()) {
                continue;
            }
            let s = shrink(&case_of(*seed), f, SHRINK_BUDGET);
            let path = match write_case(dir, &format!("fuzz-{seed}-shrunk.toml"), &s.case) {
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
    let last = format!(
        "{}fuzz: {} failures in {runs} runs ({rate} runs/s)\n",
        tally.render(),
        failures.len()
    );
    super::write_stdout(&last);
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_VIOLATIONS)
    }
}

/// Writes `case` as `dir/name`; the path written.
fn write_case(dir: &Path, name: &str, case: &Case) -> Result<PathBuf, String> {
    let path = dir.join(name);
    std::fs::write(&path, case.to_toml())
        .map_err(|e| format!("--out {}: cannot write: {e}", path.display()))?;
    Ok(path)
}
