//! `cgsim compare SCENARIO [--seeds A..B] [--variants a,b,...] [--threads N] [--format text|json]
//! [--set KEY=VALUE]...`: every (variant, seed) run, spread over a rayon pool, collected in
//! (variant, seed) order (never completion order), then one table (`cgsim::report::compare`).

use super::run::Format;
use cgsim::report::compare::{render_text, to_json, Comparison, RunFigures};
use cgsim::scenario::{check_variant_names, load, load_str, LoadOptions, ScenarioError};
use cgsim::world::{run, RunOptions};
use rayon::prelude::*;
use std::path::Path;
use std::process::ExitCode;

/// An inclusive seed range, `A..B` (or one seed, `N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    pub first: u64,
    pub last: u64,
}

/// The most seeds one compare runs (a typo like `1..10000000` is refused, not run for hours).
pub const MAX_SEEDS: u64 = 1_000_000;

/// Parses one seed (`--seed`, each end of `--seeds`): an integer from 0 to 2^64 - 1.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let t = text.trim();
    t.parse::<u64>().map_err(|_| {
        let why = if t.starts_with('-') && t[1..].parse::<u128>().is_ok() {
            "is negative"
        } else if t.parse::<u128>().is_ok() {
            "is too large"
        } else {
            "is not a seed"
        };
        format!("{t:?} {why}: seeds are 0 to 2^64 - 1 ({})", u64::MAX)
    })
}

/// Parses `--seeds`: `A..B` with A <= B, both inclusive, or a single seed.
pub fn parse_seeds(text: &str) -> Result<SeedRange, String> {
    let number = parse_seed;
    let (first, last) = match text.split_once("..") {
        Some((a, b)) => (number(a)?, number(b.strip_prefix('=').unwrap_or(b))?),
        None => {
            let n = number(text)?;
            (n, n)
        }
    };
    if first > last {
        return Err(format!(
            "empty range: {first} is after {last} (A..B includes both ends and needs A <= B)"
        ));
    }
    if last - first >= MAX_SEEDS {
        return Err(format!(
            "{} seeds is more than {MAX_SEEDS}",
            u128::from(last - first) + 1
        ));
    }
    Ok(SeedRange { first, last })
}

pub struct Options {
    pub seeds: Option<SeedRange>,
    pub variants: Vec<String>,
    /// Worker threads; `None` for one per core.
    pub threads: Option<usize>,
    pub format: Format,
    pub sets: Vec<String>,
}

pub fn run_compare(path: &Path, options: Options) -> ExitCode {
    let base_options = LoadOptions {
        sets: options.sets.clone(),
        ..LoadOptions::default()
    };
    let base = match load(path, &base_options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return super::bad_input();
        }
    };
    let file = path.display().to_string();
    let text = match cgsim::scenario::input::read_text(path, cgsim::scenario::input::SCENARIO_BYTES)
    {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{file}: {e}");
            return super::bad_input();
        }
    };
    let seeds: Vec<u64> = match options.seeds {
        Some(r) => (r.first..=r.last).collect(),
        None => vec![base.seed],
    };
    let variants = if options.variants.is_empty() {
        base.snapshot_variants.clone()
    } else {
        options.variants.clone()
    };
    if let Err(e) = check_variant_names(&variants, "compare") {
        eprintln!("--variants: {e}");
        return super::bad_input();
    }
    let load_run = |variant: &str, seed: u64| -> Result<cgsim::scenario::Scenario, ScenarioError> {
        load_str(
            &file,
            &text,
            &LoadOptions {
                seed: Some(seed),
                variant: Some(variant.to_string()),
                sets: options.sets.clone(),
            },
        )
    };
    // Every variant must load before any run starts: an unknown one is bad input, not a panic
    // half-way through.
    for v in &variants {
        if let Err(e) = load_run(v, seeds[0]) {
            eprintln!("{e}");
            return super::bad_input();
        }
    }

    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.unwrap_or(0))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cannot start worker threads: {e}");
            return super::bad_input();
        }
    };
    let pairs: Vec<(&str, u64)> = variants
        .iter()
        .flat_map(|v| seeds.iter().map(move |&s| (v.as_str(), s)))
        .collect();
    let progress = super::progress_bar(pairs.len() as u64);
    tracing::info!(scenario = %base.name, runs = pairs.len(), threads = pool.current_num_threads(), "compare");
    // The figures never include the digest: no run hashes its events.
    let run_options = RunOptions {
        skip_digest: true,
        ..RunOptions::default()
    };
    // An indexed parallel collect keeps (variant, seed) order whatever finishes first.
    let results: Vec<Result<RunFigures, ScenarioError>> = pool.install(|| {
        pairs
            .par_iter()
            .map(|&(variant, seed)| {
                let scenario = load_run(variant, seed)?;
                let out = run(&scenario, run_options);
                progress.inc(1);
                Ok(RunFigures::of(&out.report))
            })
            .collect()
    });
    progress.finish_and_clear();

    let mut per_variant: Vec<(String, Vec<RunFigures>)> = Vec::with_capacity(variants.len());
    let mut results = results.into_iter();
    for v in &variants {
        let mut runs = Vec::with_capacity(seeds.len());
        for _ in &seeds {
            match results.next().expect("one result per run") {
                Ok(r) => runs.push(r),
                Err(e) => {
                    eprintln!("{e}");
                    return super::bad_input();
                }
            }
        }
        per_variant.push((v.clone(), runs));
    }
    let comparison = Comparison::new(&base.name, seeds, per_variant);
    let text = match options.format {
        Format::Text => render_text(&comparison),
        Format::Json => {
            serde_json::to_string_pretty(&to_json(&comparison)).expect("comparison serializes")
                + "\n"
        }
    };
    if !super::write_stdout(&text) {
        return ExitCode::SUCCESS;
    }
    let bad = comparison.violating_runs();
    if bad.is_empty() {
        ExitCode::SUCCESS
    } else {
        let runs: Vec<String> = bad
            .iter()
            .map(|(v, s, _)| format!("{v} seed {s}"))
            .collect();
        eprintln!(
            "invariant violations found in {} run(s): {} (reproduce with cgsim run --variant V --seed N)",
            bad.len(),
            runs.join(", ")
        );
        ExitCode::from(super::EXIT_VIOLATIONS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_ranges_are_inclusive() {
        assert_eq!(parse_seeds("1..6"), Ok(SeedRange { first: 1, last: 6 }));
        assert_eq!(parse_seeds("3..=3"), Ok(SeedRange { first: 3, last: 3 }));
        assert_eq!(parse_seeds("9"), Ok(SeedRange { first: 9, last: 9 }));
        assert!(parse_seeds("5..2").unwrap_err().contains("empty range"));
        assert_eq!(
            parse_seeds("-1..3").unwrap_err(),
            "\"-1\" is negative: seeds are 0 to 2^64 - 1 (18446744073709551615)"
        );
        assert_eq!(
            parse_seed("18446744073709551616").unwrap_err(),
            "\"18446744073709551616\" is too large: seeds are 0 to 2^64 - 1 (18446744073709551615)"
        );
        assert_eq!(parse_seed(" 7 "), Ok(7));
        assert!(parse_seeds("a..2")
            .unwrap_err()
            .contains("\"a\" is not a seed"));
        assert!(parse_seeds("1..").unwrap_err().contains("is not a seed"));
        assert!(parse_seeds("-1..3").unwrap_err().contains("is negative"));
        assert!(parse_seeds("0..99999999")
            .unwrap_err()
            .contains("more than"));
    }
}
