//! The KIP-848 rules of ../shared/reference/COORDINATOR.md 5.3 that the held-back reference
//! scripts check, each in a small script of the reference format replayed through the
//! simulator's consumer group coordinator.

use cgsim::conform::{self, Outcome};
use serde_json::{json, Value};

/// A script on `orders` (6 partitions, and `audit` with 2) with `broker_config` and `steps`.
fn run(broker_config: Value, steps: Value) -> Vec<Value> {
    let script = json!({
        "id": "k-rule", "group_id": "grp", "seed": 11,
        "broker_config": broker_config,
        "topics": [
            {"name": "orders", "id": "JOf3PyY7QSq-_xHk7RU6Iw", "partitions": 6},
            {"name": "audit", "id": "bZd1VvWWRqSc2h1Ww0EEqg", "partitions": 2}
        ],
        "steps": steps,
    });
    let scripts = conform::parse_scripts(&script.to_string()).expect("valid script");
    let Outcome::Replayed(trace) = conform::replay(&scripts[0], None).expect("replays") else {
        panic!("a KIP-848 script replays")
    };
    trace["events"].as_array().unwrap().clone()
}

fn request_at(events: &[Value], t: u64) -> &Value {
    events
        .iter()
        .rev()
        .find(|e| e["t"] == t && e["kind"] == "request")
        .unwrap_or_else(|| panic!("no request at {t}"))
}

fn member<'e>(event: &'e Value, label: &str) -> &'e Value {
    event["group"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["member_id"] == label)
        .unwrap_or_else(|| panic!("no member {label}: {event:#}"))
}

fn interval(ms: u64) -> Value {
    json!({"group.consumer.assignment.interval.ms": ms})
}

#[test]
fn the_target_is_recomputed_only_by_a_heartbeat_at_or_after_the_assignment_interval() {
    // k02: interval 1000. A's join computes at once (never assigned before); B joins at 500
    // and gets the current assignment epoch (2) and nothing; the heartbeat at 999 computes
    // nothing, the one at 1000 does.
    let events = run(
        interval(1000),
        json!([
            {"at": 0, "op": "consumer_heartbeat", "member": "A", "join": true, "subscribe": ["orders"]},
            {"at": 500, "op": "consumer_heartbeat", "member": "B", "join": true, "subscribe": ["orders"]},
            {"at": 999, "op": "consumer_heartbeat", "member": "A"},
            {"at": 1000, "op": "consumer_heartbeat", "member": "A"}
        ]),
    );
    let b = request_at(&events, 500);
    assert_eq!(b["response"]["member_epoch"], 2);
    assert_eq!(b["response"]["assignment"], json!({}));
    assert_eq!(b["group"]["state"], "Assigning");
    assert_eq!(b["group"]["group_epoch"], 3);
    assert_eq!(b["group"]["assignment_epoch"], 2);
    let early = request_at(&events, 999);
    assert_eq!(early["group"]["assignment_epoch"], 2);
    assert_eq!(early["records"], json!([]));
    let due = request_at(&events, 1000);
    assert_eq!(due["group"]["assignment_epoch"], 3);
    assert_eq!(due["group"]["assignment_t"], 1000);
    assert_eq!(
        due["response"]["assignment"]["orders"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn a_member_that_does_not_revoke_within_its_rebalance_timeout_is_fenced() {
    // k05: A owns everything, B joins at 1000; A's heartbeat at 1100 still reports all six
    // (revoking), so the rebalance-timeout of A (20 s here) fences it at 21100 and B gets
    // everything.
    let events = run(
        json!({"group.consumer.assignment.interval.ms": 0, "group.consumer.session.timeout.ms": 45000}),
        json!([
            {"at": 0, "op": "consumer_heartbeat", "member": "A", "join": true, "subscribe": ["orders"], "rebalance_timeout_ms": 20000},
            {"at": 50, "op": "consumer_heartbeat", "member": "A"},
            {"at": 1000, "op": "consumer_heartbeat", "member": "B", "join": true, "subscribe": ["orders"]},
            {"at": 1100, "op": "consumer_heartbeat", "member": "A", "apply_assignment": false},
            {"at": 21200, "op": "consumer_heartbeat", "member": "B"}
        ]),
    );
    let revoking = request_at(&events, 1100);
    assert_eq!(member(revoking, "A")["state"], "UNREVOKED_PARTITIONS");
    let timers: Vec<String> = revoking["timers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("{}@{}", t["timer"].as_str().unwrap(), t["deadline_t"]))
        .collect();
    assert!(
        timers.contains(&"rebalance-timeout:A@21100".to_string()),
        "{timers:?}"
    );
    let fired = events
        .iter()
        .find(|e| e["kind"] == "timer" && e["timer"] == "rebalance-timeout:A")
        .expect("fires");
    assert_eq!(fired["t"], 21100);
    assert!(fired["records"]
        .as_array()
        .unwrap()
        .contains(&json!("CONSUMER_GROUP_MEMBER_METADATA(tombstone)")));
    let after = request_at(&events, 21200);
    assert_eq!(
        after["response"]["assignment"]["orders"],
        json!([0, 1, 2, 3, 4, 5])
    );
}

#[test]
fn the_most_requested_server_assignor_wins_and_none_requested_means_uniform() {
    let events = run(
        interval(0),
        json!([
            {"at": 0, "op": "consumer_heartbeat", "member": "A", "join": true, "subscribe": ["orders"]},
            {"at": 100, "op": "consumer_heartbeat", "member": "B", "join": true, "subscribe": ["orders"], "server_assignor": "range"},
            {"at": 200, "op": "consumer_heartbeat", "member": "C", "join": true, "subscribe": ["orders"], "server_assignor": "range"},
            {"at": 300, "op": "consumer_heartbeat", "member": "D", "join": true, "subscribe": ["orders"], "server_assignor": "uniform"}
        ]),
    );
    assert_eq!(
        request_at(&events, 0)["group"]["preferred_server_assignor"],
        Value::Null
    );
    assert_eq!(
        request_at(&events, 300)["group"]["preferred_server_assignor"],
        "range"
    );
    // k08: uniform beats range 1:1 (HashMap order of the counts).
    let tie = run(
        interval(0),
        json!([
            {"at": 0, "op": "consumer_heartbeat", "member": "A", "join": true, "subscribe": ["orders"], "server_assignor": "range"},
            {"at": 100, "op": "consumer_heartbeat", "member": "B", "join": true, "subscribe": ["orders"], "server_assignor": "uniform"}
        ]),
    );
    assert_eq!(
        request_at(&tie, 100)["group"]["preferred_server_assignor"],
        "uniform"
    );
}

#[test]
fn a_stale_epoch_is_fenced_without_removing_the_member_and_a_rejoin_gets_its_partitions_back() {
    // k10: FENCED_MEMBER_EPOCH for an epoch above the member's; the member stays; its rejoin
    // with epoch 0 and the same id gets its epoch and partitions back.
    let events = run(
        interval(0),
        json!([
            {"at": 0, "op": "consumer_heartbeat", "member": "A", "join": true, "subscribe": ["orders"]},
            {"at": 50, "op": "consumer_heartbeat", "member": "A"},
            {"at": 100, "op": "consumer_heartbeat", "member": "A", "member_epoch": 7},
            {"at": 200, "op": "consumer_heartbeat", "member": "A"}
        ]),
    );
    let fenced = request_at(&events, 100);
    assert_eq!(fenced["response"]["error"], "FENCED_MEMBER_EPOCH");
    assert!(fenced["response"]["error_message"].is_string());
    assert_eq!(member(fenced, "A")["member_epoch"], 2);
    let rejoin = request_at(&events, 200);
    assert_eq!(rejoin["request"]["member_epoch"], 0);
    assert_eq!(rejoin["response"]["member_epoch"], 2);
    assert_eq!(
        rejoin["response"]["assignment"]["orders"],
        json!([0, 1, 2, 3, 4, 5])
    );
    assert_eq!(rejoin["records"], json!([]));
    // A heartbeat from an id the group does not know, not joining: UNKNOWN_MEMBER_ID.
    let unknown = run(
        interval(0),
        json!([
            {"at": 0, "op": "consumer_heartbeat", "member": "A", "join": true, "subscribe": ["orders"]},
            {"at": 10, "op": "consumer_heartbeat", "member": "Z", "member_id": "made-up", "member_epoch": 3}
        ]),
    );
    assert_eq!(
        request_at(&unknown, 10)["response"]["error"],
        "UNKNOWN_MEMBER_ID"
    );
}

#[test]
fn dropping_a_topic_trims_the_current_assignment_in_the_same_heartbeat() {
    // k11: with a long interval no new target is computed, yet the dropped topic's partitions
    // leave A's assignment at once.
    let events = run(
        interval(60_000),
        json!([
            {"at": 0, "op": "consumer_heartbeat", "member": "A", "join": true, "subscribe": ["orders", "audit"]},
            {"at": 50, "op": "consumer_heartbeat", "member": "A"},
            {"at": 100, "op": "consumer_heartbeat", "member": "A", "subscribe": ["orders"]}
        ]),
    );
    let e = request_at(&events, 100);
    assert_eq!(e["request"]["subscribed_topic_names"], json!(["orders"]));
    assert_eq!(e["group"]["group_epoch"], 3);
    assert_eq!(e["group"]["assignment_epoch"], 2);
    assert_eq!(
        member(e, "A")["assigned"],
        json!({"orders": [0, 1, 2, 3, 4, 5]})
    );
    assert_eq!(
        e["response"]["assignment"],
        json!({"orders": [0, 1, 2, 3, 4, 5]})
    );
}

#[test]
fn a_partition_count_change_bumps_the_epoch_on_the_next_heartbeat_only() {
    // k12/k14: the metadata image only marks the group; the next heartbeat bumps and assigns.
    let events = run(
        interval(0),
        json!([
            {"at": 0, "op": "consumer_heartbeat", "member": "A", "join": true, "subscribe": ["orders"]},
            {"at": 50, "op": "consumer_heartbeat", "member": "A"},
            {"at": 100, "op": "set_partitions", "topic": "orders", "partitions": 8},
            {"at": 100, "op": "set_partitions", "topic": "audit", "partitions": 4},
            {"at": 200, "op": "consumer_heartbeat", "member": "A"}
        ]),
    );
    let marked = events
        .iter()
        .find(|e| e["kind"] == "metadata" && e["topic"] == "orders")
        .unwrap();
    assert_eq!(marked["group"]["group_epoch"], 2);
    assert_eq!(marked["records"], json!([]));
    let e = request_at(&events, 200);
    // One bump: audit is subscribed by nobody.
    assert_eq!(e["group"]["group_epoch"], 3);
    assert_eq!(
        e["response"]["assignment"]["orders"],
        json!([0, 1, 2, 3, 4, 5, 6, 7])
    );
}
