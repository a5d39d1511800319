//! `kafka_metrics`: Kafka's consumer metrics (AbstractCoordinator's coordinator sensors,
//! ConsumerRebalanceListenerInvoker's callback latencies, FetchCollector's records-lag) for a
//! whole run, per member and for the group, pinned to values worked out by hand from the
//! protocol's steps.

use cgsim::report::{ConsumerMetrics, Report};
use cgsim::scenario::{load, load_str, LoadOptions};
use cgsim::world::{run, RunOptions};
use std::path::Path;

/// Two members with every request taking exactly 2 ms each way, listener callbacks of 7 ms
/// (revoke) and 11 ms (assign), no records; c2 joins at 30 s.
const PIN: &str = r#"name = "pin"
seed = 1
duration_ms = 120_000

[cluster]
request_latency_ms = { min = 2, max = 2 }

[[topics]]
name = "orders"
partitions = 4

[group]
assignors = ["range"]
on_partitions_revoked_ms = 7
on_partitions_assigned_ms = 11

[[members]]
name = "c"
count = 2

[[timeline]]
at_ms = 30_000
action = "join"
member = "c2"
"#;

fn report(text: &str) -> Report {
    let scenario = load_str("s.toml", text, &LoadOptions::default()).expect("scenario loads");
    run(&scenario, RunOptions::default()).report
}

fn member<'a>(r: &'a Report, name: &str) -> &'a ConsumerMetrics {
    &r.kafka_metrics.per_member[name]
}

#[test]
fn pinned_to_hand_computed_values() {
    // c1 starts at 0: FindCoordinator 0 -> 4; JoinGroup without an id 4 -> MEMBER_ID_REQUIRED
    // at 8 (a failed attempt; the rebalance's clock started at 4); JoinGroup 8, at the
    // coordinator at 10, which waits the initial rebalance delay (3000 ms) and answers at 3012;
    // c1 leads, SyncGroup 3012 -> 3016: join 3004, sync 4, rebalance 3016 - 4 = 3012.
    //
    // c2 starts at 30000: FindCoordinator -> 30004, JoinGroup -> MEMBER_ID_REQUIRED at 30008,
    // JoinGroup 30008 reaches the coordinator at 30010: PreparingRebalance. c1's heartbeat (every
    // 3000 ms from 3012) goes at 30012 and its REBALANCE_IN_PROGRESS is back at 30016; c1 is idle
    // so it rejoins at once: a synchronous auto-commit (30016 -> 30020), onPartitionsRevoked
    // (7 ms), JoinGroup at 30027; every member has joined when it arrives at 30029, both answers
    // are back at 30031, both SyncGroups at 30033 (Stable), their answers at 30035.
    let r = report(PIN);
    let c1 = member(&r, "c1");
    assert_eq!(c1.rebalance_total, 2);
    assert_eq!(c1.rebalance_latency_max, Some(3012));
    // 3012 + (30035 - 30027).
    assert_eq!(c1.rebalance_latency_total, 3020);
    assert_eq!(c1.rebalance_latency_avg, Some(1510.0));
    assert_eq!(c1.failed_rebalance_total, 1);
    // JoinGroup round trips 3004 and 4; SyncGroup 4 and 4.
    assert_eq!(c1.join_total, 2);
    assert_eq!(c1.join_time_avg, Some(1504.0));
    assert_eq!(c1.join_time_max, Some(3004));
    assert_eq!((c1.sync_total, c1.sync_time_avg), (2, Some(4.0)));
    // One revocation (30020) and two assignments, each as long as the listener takes.
    assert_eq!(c1.partition_revoked_latency_avg, Some(7.0));
    assert_eq!(c1.partition_assigned_latency_max, Some(11));
    assert_eq!(c1.partition_lost_latency_avg, None);
    // (120000 - 30035) / 1000, truncated.
    assert_eq!(c1.last_rebalance_seconds_ago, 89);
    // Nothing is produced: every fetch is caught up.
    assert_eq!(c1.records_lag_max, Some(0));

    let c2 = member(&r, "c2");
    // From its first JoinGroup (30004) to its SyncGroup answer (30035).
    assert_eq!(c2.rebalance_latency_max, Some(31));
    assert_eq!(c2.rebalance_total, 1);
    assert_eq!(c2.failed_rebalance_total, 1);
    // 30008 -> 30031: the coordinator waited for c1.
    assert_eq!(c2.join_time_max, Some(23));
    assert_eq!(c2.sync_time_max, Some(4));
    // A new member revokes nothing (its first generation), and is assigned once.
    assert_eq!(c2.partition_revoked_latency_avg, None);
    assert_eq!(c2.partition_assigned_latency_avg, Some(11.0));

    // The group: every member's samples pooled.
    let g = &r.kafka_metrics.group;
    assert_eq!(g.rebalance_total, 3);
    assert_eq!(g.rebalance_latency_total, 3051);
    assert_eq!(g.rebalance_latency_avg, Some(1017.0));
    assert_eq!(g.rebalance_latency_max, Some(3012));
    assert_eq!(g.failed_rebalance_total, 2);
    assert_eq!(g.join_total, 3);
    assert_eq!(g.join_time_avg, Some((3004.0 + 4.0 + 23.0) / 3.0));
    assert_eq!(g.sync_time_avg, Some(4.0));
    assert_eq!(g.partition_revoked_latency_max, Some(7));
    assert_eq!(g.partition_assigned_latency_avg, Some(11.0));
    assert_eq!(g.last_rebalance_seconds_ago, 89);

    // cgsim's own figure for the same rebalance: c1 stood still from its revocation (30020)
    // until it could fetch again: revoke callback 7 + rebalance 8 + assign callback 11 + the
    // committed-offset fetch 4 = 30 ms.
    assert_eq!(r.pauses.stop_the_world_ms.per["c1"], 30);
    // The coordinator's rebalance: PreparingRebalance (30010) to Stable (30033).
    assert_eq!(r.rebalances.list[0].duration_ms, 23);
}

#[test]
fn records_lag_max_is_the_high_watermark_minus_the_position_after_each_poll() {
    // One member on one partition written at 1 record/ms, reading from the start 5 records per
    // poll at 1 ms each: it keeps pace but never catches up. Its first poll (after the SyncGroup
    // answer at 3016 and the committed-offset fetch, 3016 -> 3020) sees the records appended a
    // fetch round trip earlier (3016, the high watermark) and takes 5: lag 3011, and every poll
    // after it (each 5 ms later, 5 more records) the same.
    let r = report(
        r#"name = "lag"
seed = 1
duration_ms = 20_000

[cluster]
request_latency_ms = { min = 2, max = 2 }

[[topics]]
name = "orders"
partitions = 1

[group]
auto_offset_reset = "earliest"
max_poll_records = 5
record_processing_us = 1_000

[[members]]
name = "c1"

[[producers]]
topic = "orders"
records_per_sec = 1_000
"#,
    );
    assert_eq!(member(&r, "c1").records_lag_max, Some(3011));
    assert_eq!(r.kafka_metrics.group.records_lag_max, Some(3011));
    // cgsim's own lag counts what is appended but not yet processed, in flight included.
    assert!(r.lag.peak["orders-0"] > 3011);
}

fn scenario_report(file: &str, variant: Option<&str>) -> Report {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let options = LoadOptions {
        variant: variant.map(str::to_string),
        ..LoadOptions::default()
    };
    run(
        &load(&path, &options).expect("loads"),
        RunOptions::default(),
    )
    .report
}

#[test]
fn a_poll_timeout_records_one_lost_callback_and_a_member_that_never_ran_has_no_samples() {
    // slow-member: a stall past max.poll.interval.ms loses the member its partitions.
    let r = scenario_report("slow-member.toml", Some("eager"));
    assert!(r.lost.total > 0);
    let g = &r.kafka_metrics.group;
    // cgsim's onPartitionsLost takes no time: samples of 0 ms, not NaN.
    assert_eq!(g.partition_lost_latency_avg, Some(0.0));
    // scale-out: c5 joins a running group, so its first generation revokes nothing.
    let r = scenario_report("scale-out.toml", Some("eager"));
    let c5 = member(&r, "c5");
    assert_eq!(c5.partition_revoked_latency_avg, None);
    assert_eq!(c5.rebalance_total, 1);
    assert_eq!(c5.failed_rebalance_total, 1);
}

#[test]
fn cooperative_members_rebalance_twice_without_stopping() {
    // scale-out under cooperative-sticky: Kafka counts the first rebalance and the follow-up
    // for every old member (plus formation), while cgsim's stop-the-world stays 0: Kafka's
    // rebalance-latency is time in the protocol, not time stopped.
    let r = scenario_report("scale-out.toml", Some("cooperative"));
    for name in ["c1", "c2", "c3", "c4"] {
        let m = member(&r, name);
        assert_eq!(m.rebalance_total, 3, "{name}");
        assert_eq!(r.pauses.stop_the_world_ms.per[name], 0, "{name}");
        // A cooperative member goes on processing through the join phase (the JoinGroup does
        // not block `poll()`), so it has no backlog when its SyncGroup answer comes: it is
        // waiting in poll and handles the answer as it arrives. sync-time is the SyncGroup's
        // round trip, a few ms; had a batch been running, the heartbeat thread would have
        // read the answer on its next pass, retry.backoff.ms (100) later.
        let sync_time = m.sync_time_max.expect("synced");
        assert!((2..=10).contains(&sync_time), "{name}: {sync_time}");
    }
    assert_eq!(r.rebalances.count, 2);
}

#[test]
fn the_json_report_uses_kafkas_names() {
    let r = scenario_report("scale-out.toml", None);
    let json = serde_json::to_value(&r).unwrap();
    let k = &json["kafka_metrics"];
    let names: Vec<&str> = k["group"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        names,
        [
            "rebalance-latency-avg",
            "rebalance-latency-max",
            "rebalance-latency-total",
            "rebalance-total",
            "failed-rebalance-total",
            "last-rebalance-seconds-ago",
            "join-time-avg",
            "join-time-max",
            "join-total",
            "sync-time-avg",
            "sync-time-max",
            "sync-total",
            "partition-revoked-latency-avg",
            "partition-revoked-latency-max",
            "partition-assigned-latency-avg",
            "partition-assigned-latency-max",
            "partition-lost-latency-avg",
            "partition-lost-latency-max",
            "records-lag-max",
        ]
    );
    let members: Vec<&str> = k["per_member"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(members, ["c1", "c2", "c3", "c4", "c5"]);
    // No samples is Kafka's NaN: null.
    assert!(k["per_member"]["c5"]["partition-revoked-latency-avg"].is_null());
    // The group's describe record is for --describe, not a JSON key.
    assert!(json.get("group").is_none());
}

#[test]
fn consumer_protocol_rebalances_are_each_members_reconciliations() {
    // The same group under KIP-848 (requests 2 ms each way). c1's first heartbeat brings all
    // four partitions at 8 ms: JOINING -> RECONCILING; its idle poll loop (nothing owned: a
    // pass every retry.backoff.ms) reconciles at the 204 ms poll event, onPartitionsAssigned
    // runs at the 304 ms pass (11 ms), ACKNOWLEDGING at 315: 307 ms. c2 joins at 30 s with
    // nothing, and still reconciles it (onPartitionsAssigned([]), 30008 -> 30315: 307 ms).
    // c1's heartbeat answer at 30319 takes orders-2 and -3 away: RECONCILING; owning
    // partitions with no records it passes every fetch.max.wait.ms (500 ms): the poll event
    // at 30823 commits and queues the revocation, onPartitionsRevoked (7 ms) runs at 31323,
    // onPartitionsAssigned with nothing new (11) at 31830, ACKNOWLEDGING at 31841: 1522 ms.
    // c2's next heartbeat (35319) brings them: reconciled at 35415, assigned at 35515,
    // ACKNOWLEDGING at 35526: 207 ms.
    let r = report(&PIN.replace("assignors = [\"range\"]", "protocol = \"consumer\""));
    let c1 = member(&r, "c1");
    assert_eq!(c1.rebalance_total, 2);
    assert_eq!(c1.rebalance_latency_total, 1829);
    assert_eq!(c1.rebalance_latency_max, Some(1522));
    assert_eq!(c1.failed_rebalance_total, 0);
    // (120000 - 31841) / 1000, truncated.
    assert_eq!(c1.last_rebalance_seconds_ago, 88);
    // No JoinGroup or SyncGroup under this protocol: those sensors have no samples.
    assert_eq!((c1.join_total, c1.join_time_avg), (0, None));
    assert_eq!((c1.sync_total, c1.sync_time_max), (0, None));
    assert_eq!(c1.partition_revoked_latency_max, Some(7));
    assert_eq!(c1.partition_assigned_latency_avg, Some(11.0));
    let c2 = member(&r, "c2");
    assert_eq!(
        (c2.rebalance_total, c2.rebalance_latency_max),
        (2, Some(307))
    );
    assert_eq!(c2.partition_revoked_latency_avg, None);
    assert_eq!(c2.last_rebalance_seconds_ago, 84);
    let g = &r.kafka_metrics.group;
    assert_eq!((g.rebalance_total, g.rebalance_latency_total), (4, 2343));
    assert_eq!(g.last_rebalance_seconds_ago, 84);
}
