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

/// Kafka's own KIP-848 client and coordinator on the handed-over scale-out (kip848.json): each
/// member's epoch changes (a heartbeat answer whose epoch differs from the member's) and the
/// first detection (the first answer after the trigger that gives a staying member a new
/// assignment), each as a delay from its cause (t = 0 before the trigger, the trigger after
/// it), within max(100 ms, 10% of Kafka's delay); as many epoch changes per member as Kafka's.
/// The member epochs are where the reconciliation's timing shows: the answer only records the
/// target, the application thread's poll event reconciles it, and the revocation and the
/// assignment run at separate polls (`tests` of `client::membership::consumer`).
#[test]
fn a_kip_848_scale_out_changes_member_epochs_when_kafkas_does() {
    use cgsim::facts::Fact;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/e2e/kip848.json");
    let all: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let kafka = &all["runs"][0];
    let scenario = load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/e2e/scaleout-848-P50.toml"),
        &LoadOptions::default(),
    )
    .expect("valid scenario");
    let out = run(
        &scenario,
        RunOptions {
            keep_facts: true,
            ..RunOptions::default()
        },
    );
    let name = |m: usize| scenario.members[m].name.clone();
    let ours: Vec<(u64, String, i64)> = out
        .facts
        .iter()
        .filter_map(|(at, f)| match f {
            Fact::MemberEpochChanged { member, epoch } => {
                Some((at.as_millis(), name(*member), i64::from(*epoch)))
            }
            _ => None,
        })
        .collect();
    let delay = |t: u64| t.checked_sub(TRIGGER_MS).unwrap_or(t);
    let close = |ours: u64, theirs: u64| ours.abs_diff(theirs) <= (theirs / 10).max(100);
    let mut differences = Vec::new();
    let theirs: Vec<(u64, String, i64)> = kafka["member_epochs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["t"].as_u64().unwrap(),
                e["member"].as_str().unwrap().to_string(),
                e["epoch"].as_i64().unwrap(),
            )
        })
        .collect();
    for (t, member, epoch) in &theirs {
        let Some((at, ..)) = ours.iter().find(|(_, m, e)| m == member && e == epoch) else {
            differences.push(format!("{member} never reaches epoch {epoch}"));
            continue;
        };
        if (*t < TRIGGER_MS) != (*at < TRIGGER_MS) || !close(delay(*at), delay(*t)) {
            differences.push(format!(
                "{member} epoch {epoch}: Kafka {t} ms, cgsim {at} ms"
            ));
        }
    }
    for member in ["c1", "c2", "c3", "c4", "c5"] {
        let count =
            |list: &[(u64, String, i64)]| list.iter().filter(|(_, m, _)| m == member).count();
        if count(&ours) != count(&theirs) {
            differences.push(format!(
                "{member}: Kafka {} epoch changes, cgsim {}",
                count(&theirs),
                count(&ours)
            ));
        }
    }
    // First detection: a staying member (c1..c4) handed a new assignment after the trigger.
    let staying: Vec<usize> = (0..4).collect();
    let detected = out
        .facts
        .iter()
        .find(|(at, f)| {
            at.as_millis() >= TRIGGER_MS
                && matches!(f, Fact::ReconcilingStarted { member } if staying.contains(member))
        })
        .map(|(at, _)| at.as_millis() - TRIGGER_MS)
        .expect("a staying member reconciles");
    let theirs_detected = kafka["metrics"]["first_detection_ms"].as_u64().unwrap();
    if !close(detected, theirs_detected) {
        differences.push(format!(
            "first detection: Kafka {theirs_detected} ms, cgsim {detected} ms"
        ));
    }
    assert!(differences.is_empty(), "{differences:#?}\ncgsim: {ours:?}");
}
