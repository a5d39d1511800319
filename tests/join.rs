//! Records, the KIP-837 sink partitioner, out-of-order arrival and the partition-local join
//! (seed 000), end to end.

use cgsim::report::Report;
use cgsim::scenario::{load, load_str, LoadOptions};
use cgsim::world::{run, RunOptions};
use std::path::{Path, PathBuf};

fn path(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file)
}

fn report_with(file: &str, variant: Option<&str>, sets: &[&str]) -> Report {
    let options = LoadOptions {
        variant: variant.map(String::from),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..LoadOptions::default()
    };
    let s = load(&path(file), &options).expect(file);
    run(&s, RunOptions::default()).report
}

#[test]
fn copartition_join_reproduces_the_seed() {
    // The seed's 30/30 with its co-partition assigner and 0/30 with round robin; range and
    // cooperative-sticky as a real client measured them.
    for (assignors, hits) in [
        (r#"group.assignors=["co-partition"]"#, 30),
        (r#"group.assignors=["range"]"#, 30),
        (r#"group.assignors=["roundrobin"]"#, 0),
        (r#"group.assignors=["cooperative-sticky"]"#, 0),
    ] {
        let r = report_with("copartition-join.toml", None, &[assignors]);
        assert_eq!(r.join.notifications, 30, "{assignors}");
        assert_eq!(r.join.local_hits, hits, "{assignors}");
        assert_eq!(r.join.misses.not_co_located, 30 - hits, "{assignors}");
        assert_eq!(r.records.never_processed, 0);
    }
}

#[test]
fn co_partitioned_topics_with_different_counts_are_refused() {
    let text = std::fs::read_to_string(path("copartition-join.toml")).unwrap();
    let bad = text.replacen("partitions = 6", "partitions = 8", 1);
    let err = load_str("copartition-join.toml", &bad, &LoadOptions::default()).unwrap_err();
    assert!(
        err.message.contains("market-updates has 8") && err.message.contains("notifications has 6"),
        "{err}"
    );
    assert!(
        err.to_string().starts_with("copartition-join.toml: line "),
        "{err}"
    );
}

#[test]
fn out_of_order_arrival_misses_and_the_wait_removes_them() {
    let skewed = report_with("out-of-order-join.toml", Some("co-partition"), &[]);
    assert!(skewed.join.misses.out_of_order > 0, "{:?}", skewed.join);
    let waited = report_with("out-of-order-join.toml", Some("wait"), &[]);
    assert_eq!(waited.join.misses.out_of_order, 0, "{:?}", waited.join);
    assert_eq!(waited.join.local_hits, 30);
    assert!(
        waited.join.latency_ms.p50 > skewed.join.latency_ms.p50,
        "waiting costs latency: {:?} vs {:?}",
        waited.join.latency_ms,
        skewed.join.latency_ms
    );
    // Without skew the same script is processed in order.
    let ordered = report_with(
        "out-of-order-join.toml",
        Some("co-partition"),
        &["arrival.partition_lag_ms={ min = 0, max = 0 }"],
    );
    assert_eq!(ordered.join.local_hits, 30);
}

#[test]
fn broadcast_prices_join_locally_under_roundrobin() {
    let r = report_with("broadcast-join.toml", Some("roundrobin"), &[]);
    // GOTO's three notifications were dropped by the sink's empty partition set.
    assert_eq!(r.records.dropped, 3);
    assert_eq!(r.join.notifications, 27);
    assert_eq!(r.join.local_hits, 27);
    // 10 prices x 6 partitions + 27 notifications: price write amplification = 6.
    assert_eq!(r.records.produced, 40);
    assert_eq!(r.records.written, 10 * 6 + 27);
    // Dropped records were never written, so never consumed.
    assert_eq!(r.records.processed, r.records.written);
    assert_eq!(r.records.never_processed, 0);
}

#[test]
fn never_processed_is_zero_in_every_scenario_and_variant() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(path(""))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    for file in files {
        let variants = load(&file, &LoadOptions::default())
            .unwrap()
            .snapshot_variants;
        for v in variants {
            let s = load(
                &file,
                &LoadOptions {
                    variant: Some(v.clone()),
                    ..Default::default()
                },
            )
            .unwrap();
            let r = run(&s, RunOptions::default()).report;
            assert_eq!(
                r.records.never_processed,
                0,
                "{} {v}: {:?}",
                file.display(),
                r.records
            );
        }
    }
}
