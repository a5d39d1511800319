//! Racks in a run: replicas placed over the brokers' racks, the classic leader's rack-aware
//! assignment, fetch from follower (KIP-392), and the records that cross racks.

use cgsim::cluster::Replicas;
use cgsim::report::Report;
use cgsim::scenario::{load, load_str, LoadOptions, Scenario};
use cgsim::sim::rng::RngStreams;
use cgsim::world::{run, RunOptions};
use std::path::Path;

/// Three zones, a broker in each, one topic on every zone (RF 3), a member per zone.
fn one_per_zone(fetch_from_follower: bool, extra_cluster: &str) -> String {
    format!(
        r#"name = "zones"
duration_ms = 120_000

[cluster]
brokers = 3
broker_racks = ["az-a", "az-b", "az-c"]
{extra_cluster}

[[topics]]
name = "orders"
partitions = 12
replication_factor = 3

[group]
record_processing_us = 500
fetch_from_follower = {fetch_from_follower}

[[members]]
name = "a"
client_rack = "az-a"

[[members]]
name = "b"
client_rack = "az-b"

[[members]]
name = "c"
client_rack = "az-c"

[[producers]]
topic = "orders"
records_per_sec = 300
"#
    )
}

fn run_text(text: &str, variant: &str) -> Report {
    let options = LoadOptions {
        variant: Some(variant.into()),
        ..LoadOptions::default()
    };
    let s = load_str("zones", text, &options).expect("valid scenario");
    run(&s, RunOptions::default()).report
}

fn scenario(file: &str, variant: &str) -> Scenario {
    let options = LoadOptions {
        variant: Some(variant.into()),
        ..LoadOptions::default()
    };
    load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(file),
        &options,
    )
    .expect(file)
}

#[test]
fn fetch_from_follower_keeps_every_record_in_its_zone() {
    for variant in ["eager", "cooperative", "consumer"] {
        let local = run_text(&one_per_zone(true, ""), variant);
        assert_eq!(local.records.cross_rack_fetched, Some(0), "{variant}");
        assert!(local.records.processed > 30_000, "{variant}");
        // From the leader only, two of every three partitions are led from another zone.
        let leader = run_text(&one_per_zone(false, ""), variant);
        let crossed = leader.records.cross_rack_fetched.unwrap();
        assert!(
            crossed * 2 > leader.records.processed,
            "{variant}: {crossed} of {} crossed",
            leader.records.processed
        );
        let per_member: u64 = leader
            .members
            .iter()
            .filter_map(|m| m.cross_rack_fetched)
            .sum();
        assert_eq!(
            per_member, crossed,
            "{variant}: members add up to the total"
        );
    }
}

/// A follower's log end trails the leader's: records appear there (and reach the member) the
/// replication delay later, so more are still unread when the run ends.
#[test]
fn a_follower_serves_records_the_replication_delay_later() {
    let quick = run_text(
        &one_per_zone(true, "replication_delay_ms = 1"),
        "cooperative",
    );
    let slow = run_text(
        &one_per_zone(true, "replication_delay_ms = 3000"),
        "cooperative",
    );
    assert!(
        slow.records.unconsumed_at_end >= quick.records.unconsumed_at_end + 300,
        "{} vs {}",
        slow.records.unconsumed_at_end,
        quick.records.unconsumed_at_end
    );
    // A member whose rack holds the leader reads from it, undelayed: with the leader selector
    // the delay changes nothing.
    let a = run_text(
        &one_per_zone(false, "replication_delay_ms = 1"),
        "cooperative",
    );
    let b = run_text(
        &one_per_zone(false, "replication_delay_ms = 3000"),
        "cooperative",
    );
    assert_eq!(a.records.unconsumed_at_end, b.records.unconsumed_at_end);
}

/// The classic leader sees rackId and the replica racks; the consumer protocol's server
/// assignors do not (KAFKA-16694), which is what losing rack-aware assignment costs.
#[test]
fn multi_az_shows_what_the_consumer_protocol_loses() {
    let crossed = |v: &str| {
        run(&scenario("multi-az.toml", v), RunOptions::default())
            .report
            .records
            .cross_rack_fetched
            .unwrap()
    };
    let cooperative = crossed("cooperative");
    let consumer = crossed("consumer");
    let leader_only = crossed("leader-only");
    assert_eq!(cooperative, 0);
    assert!(consumer > 10_000, "{consumer}");
    assert!(leader_only > consumer, "{leader_only} vs {consumer}");
}

#[test]
fn replicas_span_as_many_racks_as_they_can() {
    let s = scenario("multi-az.toml", "cooperative");
    let replicas = Replicas::place(&s, &mut RngStreams::new(s.seed).stream("placement"));
    let mut p = 0;
    for (topic, rf) in [("orders", 3), ("audit", 2)] {
        let t = s.topics.iter().find(|t| t.name == topic).unwrap();
        for _ in 0..t.partitions {
            let brokers = replicas.of(p);
            assert_eq!(brokers.len(), rf, "{topic}");
            let mut racks = replicas.racks_of(p);
            racks.sort();
            racks.dedup();
            assert_eq!(racks.len(), rf, "{topic} partition {p}: {brokers:?}");
            p += 1;
        }
    }
    // Leaders spread over the six brokers.
    let mut leaders: Vec<u32> = (0..p).map(|i| replicas.leader(i)).collect();
    leaders.sort_unstable();
    leaders.dedup();
    assert_eq!(leaders.len(), 6);
}

#[test]
fn a_cluster_without_racks_reports_no_cross_rack_figure() {
    let r = run(&scenario("scale-out.toml", "eager"), RunOptions::default()).report;
    assert_eq!(r.records.cross_rack_fetched, None);
    let json = serde_json::to_value(&r).unwrap();
    assert!(json["records"].get("cross_rack_fetched").is_none());
    assert!(json["members"][0].get("client_rack").is_none());
}

#[test]
fn rack_settings_that_kafka_refuses_are_errors() {
    let err = |text: String| {
        load_str("zones", &text, &LoadOptions::default())
            .expect_err("refused")
            .to_string()
    };
    let text = one_per_zone(true, "").replace(
        r#"broker_racks = ["az-a", "az-b", "az-c"]"#,
        r#"broker_racks = ["az-a", "az-b"]"#,
    );
    let e = err(text);
    assert!(
        e.contains("zones: line 6") && e.contains("lists 2 racks, the cluster has 3 brokers"),
        "{e}"
    );
    let e = err(one_per_zone(true, "").replace("replication_factor = 3", "replication_factor = 4"));
    assert!(
        e.contains("replication_factor 4 must be between 1 and the 3 brokers"),
        "{e}"
    );
    let e = err(one_per_zone(true, "").replace("client_rack = \"az-a\"", "client_rak = \"az-a\""));
    assert!(e.contains("client_rak"), "{e}");
}

#[test]
fn fetch_from_follower_without_broker_racks_is_noticed() {
    let text = one_per_zone(true, "").replace(r#"broker_racks = ["az-a", "az-b", "az-c"]"#, "");
    let s = load_str("zones", &text, &LoadOptions::default()).unwrap();
    assert!(s
        .notices
        .iter()
        .any(|n| n.contains("fetch_from_follower = true does nothing")));
}
