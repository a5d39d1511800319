//! `--emit-scenario` and the timeline's one writer: any run can be replayed from one file, and
//! a scenario's plan written back one entry smaller loads as that plan, or is refused by the
//! loader's own checks.

use cgsim::scenario::timeline::{to_tables, Entry, Planned};
use cgsim::scenario::{emit_scenario, load, load_str, LoadOptions};
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
fn with_plan(text: &str, plan: &[Entry]) -> String {
    let mut doc: toml_edit::DocumentMut = text.parse().unwrap();
    doc.remove("timeline");
    if !plan.is_empty() {
        doc.insert("timeline", toml_edit::Item::ArrayOfTables(to_tables(plan)));
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
                assert_eq!(replayed.timeline, scenario.timeline);
                assert_eq!(entries(&replayed.plan), entries(&scenario.plan));
                let a = run(&scenario, RunOptions::default()).report;
                let b = run(&replayed, RunOptions::default()).report;
                assert_eq!(a.digest, b.digest, "{}@{variant}", path.display());
                assert_eq!(a.events, b.events);
            }
        }
    }
}

/// A plan's entries, without where they were written.
fn entries(plan: &[Planned]) -> Vec<Entry> {
    plan.iter().map(|p| p.entry.clone()).collect()
}

/// The plan without entry `i`.
fn without(plan: &[Entry], i: usize) -> Vec<Entry> {
    let mut smaller = plan.to_vec();
    smaller.remove(i);
    smaller
}

#[test]
fn a_plan_one_entry_smaller_loads_as_that_plan_or_is_refused_for_its_order() {
    for path in scenario_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let scenario = load(&path, &LoadOptions::default()).unwrap();
        let plan = entries(&scenario.plan);
        let whole = load_str("plan.toml", &with_plan(&text, &plan), &Default::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(whole.timeline, scenario.timeline, "{}", path.display());
        for i in 0..plan.len() {
            let smaller = without(&plan, i);
            match load_str(
                "smaller.toml",
                &with_plan(&text, &smaller),
                &Default::default(),
            ) {
                Ok(loaded) => assert_eq!(entries(&loaded.plan), smaller),
                Err(e) => assert!(
                    e.to_string().contains("cannot"),
                    "{} without entry {i}: {e}",
                    path.display()
                ),
            }
        }
    }
}

#[test]
fn a_rolling_bounce_without_a_leave_restarts_a_running_member_and_is_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/rolling-bounce.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let scenario = load(&path, &LoadOptions::default()).unwrap();
    // Leave, restart for each member: removing a restart leaves the member down, which loads;
    // removing a leave alone would restart a running member.
    let loads = |plan: &[Entry]| load_str("p.toml", &with_plan(&text, plan), &Default::default());
    let mut plan = entries(&scenario.plan);
    let refused: Vec<String> = (0..plan.len())
        .filter_map(|i| loads(&without(&plan, i)).err())
        .map(|e| e.to_string())
        .collect();
    assert_eq!(refused.len(), plan.len() / 2);
    assert!(refused[0].contains("cannot restart"), "{}", refused[0]);
    // Restarts first, from the last: every smaller plan down to none loads.
    while let Some(i) = (0..plan.len())
        .rev()
        .find(|&i| loads(&without(&plan, i)).is_ok())
    {
        plan.remove(i);
    }
    assert!(plan.is_empty(), "{plan:?}");
}
