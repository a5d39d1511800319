//! One snapshot per scenario file: its text report, in the top-level `snapshots/`. A changed
//! snapshot is a behaviour change to review (`cargo insta review`); under CI=true a missing or
//! changed snapshot fails.

use cgsim::engine::{run, RunOptions};
use cgsim::report::render_text;
use cgsim::scenario::{load, LoadOptions};

#[test]
fn every_scenario_report() {
    insta::glob!("../scenarios", "*.toml", |path| {
        let scenario = load(path, &LoadOptions::default()).expect("scenario loads");
        let report = run(&scenario, RunOptions::default()).report;
        insta::with_settings!({
            snapshot_path => "../snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(render_text(&report));
        });
    });
}
