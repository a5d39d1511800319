//! One snapshot per scenario file and variant (the scenario's `snapshot_variants`, default
//! eager and cooperative): its text report, in the top-level `snapshots/` as
//! `SCENARIO@VARIANT.snap`. A changed snapshot is a behaviour change to review
//! (`cargo insta review`); under CI=true a missing or changed snapshot fails.

use cgsim::report::render_text;
use cgsim::scenario::{load, LoadOptions};
use cgsim::world::{run, RunOptions};
use std::path::Path;

#[test]
fn every_scenario_and_variant() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let variants = load(&path, &LoadOptions::default())
            .expect("scenario loads")
            .snapshot_variants;
        for variant in variants {
            let options = LoadOptions {
                variant: Some(variant.clone()),
                ..LoadOptions::default()
            };
            let scenario = load(&path, &options).expect("variant loads");
            let report = run(&scenario, RunOptions::default()).report;
            let name = format!("{stem}@{variant}");
            // Collect every failure so one run shows all changed snapshots.
            let outcome = std::panic::catch_unwind(|| {
                insta::with_settings!({
                    snapshot_path => "../snapshots",
                    prepend_module_to_snapshot => false,
                    omit_expression => true,
                    input_file => &path,
                }, {
                    insta::assert_snapshot!(name.clone(), render_text(&report));
                });
            });
            if outcome.is_err() {
                failures.push(name);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "snapshots changed or missing: {failures:?}"
    );
}
