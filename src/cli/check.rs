//! `cgsim check DIR`: every scenario's `[[expect]]` entries over its variants (the one an entry
//! names, else the scenario's snapshot_variants), one line per expectation and variant; exit 1
//! if any failed, 2 on bad input (a scenario that does not load, a key the report lacks).
//! `cgsim run` checks the entries for the variant it runs with [`report_expectations`].

use cgsim::report::Report;
use cgsim::scenario::expect::Verdict;
use cgsim::scenario::{load, LoadOptions, Scenario, ScenarioError};
use cgsim::world::{run, RunOptions};
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `cgsim run` does with a run's expectations: each failure named on stderr with the
/// measured value. `Err` is bad input (a key the report does not have), already printed.
pub fn report_expectations(path: &Path, scenario: &Scenario, report: &Report) -> Result<bool, ()> {
    let mut applying = scenario
        .expects
        .iter()
        .filter(|e| e.applies_to(&scenario.variant))
        .peekable();
    // The report as a JSON value costs about 150 bytes a lag sample: built only when an
    // expectation reads it, so a long run without any holds just the report itself.
    if applying.peek().is_none() {
        return Ok(true);
    }
    let json = serde_json::to_value(report).expect("report serializes");
    let mut all_passed = true;
    let mut bad = false;
    for e in applying {
        match e.check(&json) {
            Verdict::Pass { .. } => {}
            Verdict::Fail { measured } => {
                all_passed = false;
                eprintln!(
                    "{}: line {}: expectation failed (variant {}): {e}: measured {measured}",
                    path.display(),
                    e.line,
                    scenario.variant
                );
            }
            Verdict::UnknownKey(m) => {
                bad = true;
                eprintln!("{}: line {}: [[expect]] {m}", path.display(), e.line);
            }
        }
    }
    if bad {
        Err(())
    } else {
        Ok(all_passed)
    }
}

/// The scenario files under `dir` (or `dir` itself, a file), in name order.
fn scenario_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("{}: cannot read: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

/// The loaded scenario of each variant `path`'s expectations run under, in the scenario's own
/// order of variants, then any others.
fn runs_of(path: &Path, sets: &[String]) -> Result<Vec<(PathBuf, Scenario)>, ScenarioError> {
    let options = |variant: Option<String>| LoadOptions {
        variant,
        sets: sets.to_vec(),
        ..LoadOptions::default()
    };
    let base = load(path, &options(None))?;
    let mut variants = BTreeSet::new();
    for e in &base.expects {
        match &e.variant {
            Some(v) => {
                variants.insert(v.clone());
            }
            None => variants.extend(base.snapshot_variants.iter().cloned()),
        }
    }
    let mut ordered: Vec<String> = base
        .snapshot_variants
        .iter()
        .filter(|v| variants.contains(*v))
        .cloned()
        .collect();
    let rest: Vec<String> = variants
        .into_iter()
        .filter(|v| !ordered.contains(v))
        .collect();
    ordered.extend(rest);
    ordered
        .into_iter()
        .map(|variant| Ok((path.to_path_buf(), load(path, &options(Some(variant)))?)))
        .collect()
}

/// `cgsim check DIR [--set KEY=VALUE]...`: a file that does not load is reported and the
/// others still run; the exit is 2 if any file failed to load or named a key the report lacks,
/// else 1 if an expectation failed.
pub fn run_check(dir: &Path, sets: &[String]) -> ExitCode {
    let files = match scenario_files(dir) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{e}");
            return super::bad_input();
        }
    };
    // Every (file, variant) run the expectations need; a file with a load error is named and
    // skipped, so one bad file does not hide another's error or the others' results.
    let mut runs: Vec<(PathBuf, Scenario)> = Vec::new();
    let mut not_loaded = 0;
    for path in &files {
        match runs_of(path, sets) {
            Ok(mut r) => runs.append(&mut r),
            Err(e) => {
                eprintln!("{e}");
                not_loaded += 1;
            }
        }
    }
    // Runs are independent: in parallel, the results in order.
    let reports: Vec<serde_json::Value> = runs
        .par_iter()
        .map(|(_, s)| {
            serde_json::to_value(run(s, RunOptions::default()).report).expect("report serializes")
        })
        .collect();
    let (mut passed, mut failed) = (0, 0);
    let mut unknown: BTreeSet<(PathBuf, usize)> = BTreeSet::new();
    let mut out = String::new();
    for path in &files {
        let here: Vec<(&Scenario, &serde_json::Value)> = runs
            .iter()
            .zip(&reports)
            .filter(|((p, _), _)| p == path)
            .map(|((_, s), r)| (s, r))
            .collect();
        let Some((first, _)) = here.first() else {
            continue;
        };
        for e in &first.expects {
            for (s, report) in &here {
                if !e.applies_to(&s.variant) {
                    continue;
                }
                let place = format!("{}:{}", path.display(), e.line);
                match e.check(report) {
                    Verdict::Pass { measured } => {
                        passed += 1;
                        out.push_str(&format!(
                            "pass  {place}  {}  {e}  (measured {measured})\n",
                            s.variant
                        ));
                    }
                    Verdict::Fail { measured } => {
                        failed += 1;
                        out.push_str(&format!(
                            "FAIL  {place}  {}  {e}  (measured {measured})\n",
                            s.variant
                        ));
                    }
                    Verdict::UnknownKey(m) => {
                        // Once per entry, not once per variant it runs under.
                        if unknown.insert((path.clone(), e.line)) {
                            eprintln!("{}: line {}: [[expect]] {m}", path.display(), e.line);
                        }
                    }
                }
            }
        }
    }
    let scenarios = files.len();
    let mut trouble = String::new();
    if !unknown.is_empty() {
        trouble.push_str(&format!(", {} with a key the report lacks", unknown.len()));
    }
    if not_loaded > 0 {
        trouble.push_str(&format!(", {not_loaded} not loaded"));
    }
    out.push_str(&format!(
        "check: {} expectation(s), {failed} failed, over {scenarios} scenario(s){trouble}\n",
        passed + failed
    ));
    if !super::write_stdout(&out) {
        return ExitCode::SUCCESS;
    }
    if !trouble.is_empty() {
        super::bad_input()
    } else if failed > 0 {
        ExitCode::from(super::EXIT_VIOLATIONS)
    } else {
        ExitCode::SUCCESS
    }
}
