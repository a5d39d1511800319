//! `--emit-scenario` and the fault plan: any run can be replayed from one file, and a plan can
//! be generated, printed back as a scenario and shrunk one entry at a time while staying valid.

use cgsim::scenario::{emit_scenario, load, load_str, FaultPlan, LoadOptions, Scenario};
use cgsim::sim::rng::Stream;
use cgsim::world::{run, RunOptions};
use std::path::{Path, PathBuf};

fn scenario_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Every variant a scenario can run: the built-in ones and its own.
fn variants(path: &Path) -> Vec<String> {
    let s = load(path, &LoadOptions::default()).unwrap();
    let mut v = vec!["eager".to_string(), "cooperative".to_string()];
    for name in s.snapshot_variants {
        if !v.contains(&name) {
            v.push(name);
        }
    }
    v
}

/// The scenario `text` with its timeline replaced by `plan`.
fn with_plan(text: &str, plan: &FaultPlan, scenario: &Scenario) -> String {
    let mut doc: toml_edit::DocumentMut = text.parse().unwrap();
    doc.remove("timeline");
    if !plan.entries.is_empty() {
        doc.insert(
            "timeline",
            toml_edit::Item::ArrayOfTables(plan.to_toml(scenario)),
        );
    }
    doc.to_string()
}

#[test]
fn an_emitted_scenario_replays_with_the_same_digest_for_every_scenario_and_variant() {
    for path in scenario_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        for variant in variants(&path) {
            {
                let sets = vec!["group.session_timeout_ms=20000".to_string()];
                let options = LoadOptions {
                    seed: Some(7),
                    variant: Some(variant.clone()),
                    sets,
                };
                let scenario = load(&path, &options).unwrap();
                let emitted = emit_scenario(&text, &options, &scenario).unwrap();
                let replayed = load_str("emitted.toml", &emitted, &LoadOptions::default())
                    .unwrap_or_else(|e| panic!("{}@{variant}: {e}\n{emitted}", path.display()));
                assert_eq!(replayed.seed, 7);
                assert_eq!(FaultPlan::of(&replayed), FaultPlan::of(&scenario));
                let a = run(&scenario, RunOptions::default()).report;
                let b = run(&replayed, RunOptions::default()).report;
                assert_eq!(a.digest, b.digest, "{}@{variant}", path.display());
                assert_eq!(a.events, b.events);
            }
        }
    }
}

#[test]
fn every_shrink_candidate_is_one_entry_smaller_and_loads() {
    for path in scenario_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let scenario = load(&path, &LoadOptions::default()).unwrap();
        let plan = FaultPlan::of(&scenario);
        assert!(plan.is_valid(&scenario), "{}", path.display());
        for candidate in plan.shrink_candidates(&scenario) {
            assert_eq!(candidate.entries.len() + 1, plan.entries.len());
            let shrunk = with_plan(&text, &candidate, &scenario);
            let loaded = load_str("shrunk.toml", &shrunk, &LoadOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}\n{shrunk}", path.display()));
            assert_eq!(FaultPlan::of(&loaded), candidate);
        }
    }
}

#[test]
fn a_plan_that_restarts_a_running_member_is_not_a_candidate() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/rolling-bounce.toml");
    let scenario = load(&path, &LoadOptions::default()).unwrap();
    let plan = FaultPlan::of(&scenario);
    // Leave, restart for each member: removing a leave alone would restart a running member.
    let candidates = plan.shrink_candidates(&scenario);
    assert_eq!(candidates.len(), plan.entries.len() / 2);
    assert!(!plan.without(0).is_valid(&scenario));
    // Shrinking all the way down ends at the empty plan.
    let mut p = plan;
    while let Some(smaller) = p.shrink_candidates(&scenario).into_iter().next() {
        p = smaller;
    }
    assert!(p.entries.is_empty());
}

#[test]
fn generated_plans_are_valid_and_print_back_as_scenarios() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/scale-out.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let scenario = load(&path, &LoadOptions::default()).unwrap();
    let mut stream = Stream::derive(42, "fault-plan");
    let mut total = 0;
    for _ in 0..50 {
        let plan = FaultPlan::generate(&scenario, &mut stream, 6, 5000);
        assert!(plan.is_valid(&scenario), "{plan:?}");
        total += plan.entries.len();
        let written = with_plan(&text, &plan, &scenario);
        let loaded = load_str("generated.toml", &written, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}\n{written}"));
        assert_eq!(FaultPlan::of(&loaded), plan);
    }
    assert!(total > 50, "plans have entries: {total}");
    // The same stream state gives the same plan.
    let a = FaultPlan::generate(&scenario, &mut Stream::derive(1, "p"), 4, 1000);
    let b = FaultPlan::generate(&scenario, &mut Stream::derive(1, "p"), 4, 1000);
    assert_eq!(a, b);
}
