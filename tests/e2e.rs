//! Whole runs against Kafka's own: the end-to-end runs of Kafka 4.3.1's classic clients and
//! coordinator (../shared/reference/e2e/, copies in tests/data/e2e/), each configured alike in
//! cgsim's scenario format, agree on every figure the reference README defines: counts equal,
//! times within 10% or 100 ms.

use cgsim::report::Report;
use cgsim::scenario::{load, LoadOptions};
use cgsim::world::{run, RunOptions};
use serde_json::Value;
use std::path::Path;

const TRIGGER_MS: u64 = 60_000;

fn kafka_metrics(id: &str) -> Value {
    for file in ["classic.json", "classic2.json"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/e2e")
            .join(file);
        let all: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        if let Some(run) = all["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
        {
            return run["metrics"].clone();
        }
    }
    panic!("no Kafka run {id}")
}

fn cgsim_report(id: &str) -> Report {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/e2e")
        .join(format!("{id}.toml"));
    let scenario = load(&path, &LoadOptions::default()).expect("valid scenario");
    run(&scenario, RunOptions::default()).report
}

/// The figures of the reference README, section 2, from a cgsim report.
fn figures(r: &Report) -> Vec<(&'static str, u64)> {
    let unowned = &r.pauses.unowned_ms;
    let settle = r
        .rebalances
        .list
        .iter()
        .map(|e| e.end_ms)
        .max()
        .unwrap_or(TRIGGER_MS)
        - TRIGGER_MS;
    vec![
        ("rebalances_after_formation", r.rebalances.count),
        ("revoked_partitions_total", r.revocations.total),
        (
            "revoked_partitions_by_staying_members",
            r.revocations.by_staying_members,
        ),
        ("lost_partitions_total", r.lost.total),
        ("max_stop_the_world_ms", r.pauses.stop_the_world_ms.max),
        (
            "partitions_made_unavailable",
            unowned.per.values().filter(|&&ms| ms > 0).count() as u64,
        ),
        ("partition_unavailability_total_ms", unowned.total),
        ("partition_unavailability_max_ms", unowned.max),
        ("settle_time_after_trigger_ms", settle),
    ]
}

fn is_count(name: &str) -> bool {
    !name.ends_with("_ms")
}

fn agrees(id: &str) {
    let kafka = kafka_metrics(id);
    let report = cgsim_report(id);
    let mut differences = Vec::new();
    for (name, ours) in figures(&report) {
        let theirs = kafka[name]
            .as_u64()
            .unwrap_or_else(|| panic!("{id}: no {name}"));
        let ok = if is_count(name) {
            ours == theirs
        } else {
            ours.abs_diff(theirs) <= (theirs / 10).max(100)
        };
        if !ok {
            differences.push(format!("{name}: Kafka {theirs}, cgsim {ours}"));
        }
    }
    assert!(differences.is_empty(), "{id}: {differences:#?}");
    assert!(
        report.invariants.violations.is_empty(),
        "{id}: {:?}",
        report.invariants.violations
    );
}

#[test]
fn eager_scale_out_agrees_with_kafka() {
    agrees("scaleout-eager-P50");
}

#[test]
fn cooperative_scale_out_agrees_with_kafka() {
    agrees("scaleout-coop-P50");
}

#[test]
fn cooperative_scale_in_agrees_with_kafka() {
    agrees("scalein-coop-P50");
}

#[test]
fn a_member_past_its_poll_interval_agrees_with_kafka() {
    agrees("slow-eager-P50");
}

#[test]
fn an_out_of_phase_cooperative_scale_out_agrees_with_kafka() {
    // c1..c4 start at 0/700/1400/2100 ms and process 50/80/120/200 ms a batch: each member's own
    // start_ms and record_processing_us.
    agrees("phase-coop");
}

#[test]
fn a_kip_848_scale_out_agrees_with_kafka() {
    // Kafka's own ConsumerMembershipManager against its own GroupMetadataManager (kip848.json,
    // its metrics named for the consumer protocol): one epoch bump after the trigger, four
    // partitions revoked by staying members and handed to c5 after their release, no member
    // ever stopped.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/e2e/kip848.json");
    let all: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let kafka = &all["runs"][0]["metrics"];
    let r = cgsim_report("scaleout-848-P50");
    let unowned = &r.pauses.unowned_ms;
    let settle = r.rebalances.list.iter().map(|e| e.end_ms).max().unwrap() - TRIGGER_MS;
    let ours: Vec<(&str, u64)> = vec![
        ("epoch_bumps_after_trigger", r.rebalances.count),
        ("revoked_all", r.revocations.total),
        ("revoked_by_staying", r.revocations.by_staying_members),
        ("lost", r.lost.total),
        ("max_stw_ms", r.pauses.stop_the_world_ms.max),
        (
            "partitions_unavailable",
            unowned.per.values().filter(|&&ms| ms > 0).count() as u64,
        ),
        ("unavailability_total_partition_ms", unowned.total),
        ("unavailability_max_ms", unowned.max),
        ("settle_ms", settle),
    ];
    let mut differences = Vec::new();
    for (name, ours) in ours {
        let theirs = kafka[name].as_u64().unwrap_or_else(|| panic!("no {name}"));
        let ok = if is_count(name) {
            ours == theirs
        } else {
            ours.abs_diff(theirs) <= (theirs / 10).max(100)
        };
        if !ok {
            differences.push(format!("{name}: Kafka {theirs}, cgsim {ours}"));
        }
    }
    assert!(differences.is_empty(), "{differences:#?}");
    assert_eq!(r.rebalances.list[0].generation, 6, "the group epoch");
    assert_eq!(r.rebalances.list[0].join_ms, None);
    assert!(
        r.invariants.violations.is_empty(),
        "{:?}",
        r.invariants.violations
    );
}
