//! Keyed records are generated as the run reaches them and forgotten once nobody can read them
//! (issue 24): the report is the same byte for byte as when every record is kept, and memory
//! holds what is in flight, not the run's records.

use cgsim::scenario::{load_str, LoadOptions, Scenario};
use cgsim::world::{run, RunOptions};

/// A keyed group through joins, a leave, a crash, a restart and a stall.
const CHURN: &str = r#"
name = "keyed-churn"
seed = 7
duration_ms = 900000

[[topics]]
name = "events"
partitions = 120

[group]
record_processing_us = 300
max_poll_records = 200

[[members]]
name = "c"
count = 12

[[producers]]
topic = "events"
records_per_sec = 600
key_count = 5000
key_distribution = "uniform"

[[timeline]]
at_ms = 120000
action = "join"
member = "c12"

[[timeline]]
at_ms = 240000
action = "leave"
member = "c2"

[[timeline]]
at_ms = 300000
action = "crash"
member = "c3"

[[timeline]]
at_ms = 360000
action = "stall"
member = "c4"
duration_ms = 20000

[[timeline]]
at_ms = 420000
action = "restart"
member = "c3"
"#;

fn scenario(variant: &str, sets: &[&str]) -> Scenario {
    let options = LoadOptions {
        variant: Some(variant.to_string()),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..LoadOptions::default()
    };
    load_str("keyed-churn.toml", CHURN, &options).expect("the scenario loads")
}

#[test]
fn trimming_the_keyed_logs_changes_no_figure_and_bounds_memory() {
    for variant in ["eager", "cooperative", "consumer"] {
        for sets in [&[][..], &["group.auto_offset_reset=earliest"][..]] {
            let s = scenario(variant, sets);
            let trimmed = run(&s, RunOptions::default());
            let kept = run(
                &s,
                RunOptions {
                    keep_every_record: true,
                    ..RunOptions::default()
                },
            );
            let json = |r| serde_json::to_string_pretty(r).expect("serialises");
            assert_eq!(
                json(&trimmed.report),
                json(&kept.report),
                "{variant} {sets:?}: trimming changed the report"
            );
            assert_eq!(trimmed.report.records.never_processed, 0);
            let produced = trimmed.report.records.written as usize;
            assert!(produced > 500_000, "{produced}");
            // All of them twice (per partition and in time order) when nothing is trimmed;
            // about the last trim interval's and what is in flight when trimmed.
            assert_eq!(kept.keyed_appends_held, 2 * produced);
            assert!(
                trimmed.keyed_appends_held < produced / 20,
                "{variant} {sets:?}: {} of {produced} appends held",
                trimmed.keyed_appends_held
            );
        }
    }
}
