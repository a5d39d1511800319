//! The consumer's timing as Kafka's client code runs it (../shared/reference/CLIENT.md), and a
//! checker that flags only what Kafka could really do: each repro of issue 18 run as written.

use cgsim::report::Report;
use cgsim::scenario::{load, LoadOptions, Scenario};
use cgsim::world::{run, RunOptions};
use std::path::Path;

fn scenario(file: &str, variant: Option<&str>, seed: Option<u64>, sets: &[&str]) -> Scenario {
    let options = LoadOptions {
        seed,
        variant: variant.map(str::to_string),
        sets: sets.iter().map(|s| s.to_string()).collect(),
    };
    load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(file),
        &options,
    )
    .expect(file)
}

fn report(s: &Scenario) -> Report {
    run(s, RunOptions::default()).report
}

#[test]
fn requests_on_one_connection_arrive_in_order_so_a_later_commit_never_overtakes() {
    // A synchronous commit after every batch and auto-commit on the same connection: a
    // connection is a TCP stream, so no commit can overtake an older one.
    for seed in 1..=3 {
        for variant in ["eager", "cooperative"] {
            let s = scenario(
                "scale-out.toml",
                Some(variant),
                Some(seed),
                &[
                    "group.commit_after_batch=sync",
                    "group.record_processing_us=0",
                ],
            );
            let r = report(&s);
            assert!(
                r.invariants.violations.is_empty(),
                "{variant} seed {seed}: {:?}",
                r.invariants.violations
            );
        }
    }
}
