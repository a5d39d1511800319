//! The coordinator against Kafka's own: the reference scripts replayed request by request
//! (`cgsim conform coordinator`), and the rules of ../shared/reference/COORDINATOR.md that the
//! held-back scripts check, each in a small script of the same format.

use cgsim::conform::{self, diff, Outcome};
use serde_json::{json, Value};
use std::process::Command;

/// Copies of ../shared/reference/coordinator/scripts.jsonl and traces.jsonl (Kafka 4.3.1).
const SCRIPTS: &str = include_str!("data/coordinator_scripts.jsonl");
const TRACES: &str = include_str!("data/coordinator_traces.jsonl");

fn replay_with_kafka_ids(script: &conform::Script, traces: &[Value]) -> Outcome {
    let ids = traces
        .iter()
        .find(|t| t["id"] == script.id)
        .map(conform::member_ids);
    conform::replay(script, ids.as_deref()).expect("replays")
}

#[test]
fn every_reference_request_classic_and_kip_848_is_answered_as_kafka_answered_it() {
    let scripts = conform::parse_scripts(SCRIPTS).expect("valid scripts");
    let traces: Vec<Value> = conform::parse_traces(TRACES)
        .expect("valid traces")
        .into_values()
        .collect();
    let mut replayed = 0;
    for script in &scripts {
        match replay_with_kafka_ids(script, &traces) {
            Outcome::Replayed(ours) => {
                replayed += 1;
                let kafka = traces.iter().find(|t| t["id"] == script.id).unwrap();
                let d = diff::compare(&ours, kafka);
                assert!(d.total > 0, "{}: no requests compared", d.id);
                assert_eq!(d.matched, d.total, "{}: {:?}", d.id, d.first_difference);
            }
            Outcome::NotSupported => panic!("{} is not replayed", script.id),
        }
    }
    assert_eq!(replayed, 12, "7 classic and 5 KIP-848 scripts");
}

#[test]
fn a_different_answer_timer_or_state_is_a_difference() {
    let scripts = conform::parse_scripts(SCRIPTS).unwrap();
    let traces: Vec<Value> = conform::parse_traces(TRACES)
        .unwrap()
        .into_values()
        .collect();
    let script = scripts.iter().find(|s| s.id.starts_with("c10")).unwrap();
    let Outcome::Replayed(ours) = replay_with_kafka_ids(script, &traces) else {
        panic!("classic")
    };
    let kafka = traces.iter().find(|t| t["id"] == script.id).unwrap();
    // B's restart: Kafka tells a follower not to skip the assignment.
    let mut changed = kafka.clone();
    let i = kafka["events"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e["client_restarted"] == json!(true))
        .unwrap();
    changed["events"][i]["response"]["skip_assignment"] = json!(true);
    let d = diff::compare(&ours, &changed);
    assert_eq!(d.matched, d.total - 1);
    assert!(
        d.first_difference
            .as_deref()
            .unwrap()
            .contains("response.skip_assignment: Kafka true, the replay false"),
        "{:?}",
        d.first_difference
    );
    let mut changed = kafka.clone();
    changed["events"][i]["timers"][0]["deadline_t"] = json!(1);
    assert_eq!(diff::compare(&ours, &changed).matched, d.total - 1);
    let mut changed = kafka.clone();
    changed["events"][i]["group"]["members"][0]["awaiting_join"] = json!(true);
    assert_eq!(diff::compare(&ours, &changed).matched, d.total - 1);
}

// ---- Rules behind the held-back scripts, in scripts of the same format ----

const RANGE: &str = r#"{"protocols": [{"name": "range", "topics": ["orders"]}], "session_timeout_ms": 10000, "rebalance_timeout_ms": 30000}"#;

/// A one-topic script (orders, 6 partitions) with clients `aliases` (all range) and `steps`.
fn script(aliases: &[&str], steps: &str) -> Value {
    let clients: serde_json::Map<String, Value> = aliases
        .iter()
        .map(|a| (a.to_string(), serde_json::from_str(RANGE).unwrap()))
        .collect();
    json!({
        "id": "rule", "group_id": "grp", "seed": 7,
        "broker_config": {"group.initial.rebalance.delay.ms": 3000},
        "topics": [{"name": "orders", "partitions": 6}],
        "clients": clients,
        "steps": serde_json::from_str::<Value>(steps).unwrap(),
    })
}

fn run(script: Value) -> Vec<Value> {
    let scripts = conform::parse_scripts(&script.to_string()).expect("valid script");
    let Outcome::Replayed(trace) = conform::replay(&scripts[0], None).expect("replays") else {
        panic!("classic script")
    };
    trace["events"].as_array().unwrap().clone()
}

/// The event at time `t` of kind `kind` (`request` or `timer`), the last one if several.
fn at<'e>(events: &'e [Value], t: u64, kind: &str) -> &'e Value {
    events
        .iter()
        .rev()
        .find(|e| e["t"] == t && e["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} event at {t}: {events:#?}"))
}

fn timer_names(event: &Value) -> Vec<String> {
    event["timers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("{}@{}", t["timer"].as_str().unwrap(), t["deadline_t"]))
        .collect()
}

/// A and B join (MEMBER_ID_REQUIRED first), the initial delay runs out at 6005 (extended once
/// for B), A (leader) syncs at 6100: Stable, generation 1.
const FORM_AB: &str = r#"
    {"at": 0, "op": "join", "member": "A", "member_id": "none"},
    {"at": 5, "op": "join", "member": "A"},
    {"at": 100, "op": "join", "member": "B", "member_id": "none"},
    {"at": 105, "op": "join", "member": "B"},
    {"at": 6100, "op": "sync", "member": "A"},
    {"at": 6110, "op": "sync", "member": "B"}"#;

#[test]
fn join_group_below_version_4_adds_a_dynamic_member_without_member_id_required() {
    let events = run(script(
        &["A"],
        r#"[{"at": 0, "op": "join", "member": "A", "member_id": "none", "version": 3}]"#,
    ));
    let e = at(&events, 0, "request");
    assert_eq!(e["pending"], json!(true), "{e}");
    assert_eq!(e["group"]["state"], "PreparingRebalance");
    assert_eq!(e["group"]["members"][0]["member_id"], "A");
}

#[test]
fn the_initial_rebalance_is_extended_by_each_new_member_up_to_the_rebalance_timeout() {
    // Rebalance timeout 10000, delay 3000: 3000 + 3000 + 3000 + 1000 after A's join at 5.
    let mut s = script(
        &["A", "B", "C", "D", "E"],
        r#"[
        {"at": 0, "op": "join", "member": "A", "member_id": "none"},
        {"at": 5, "op": "join", "member": "A"},
        {"at": 100, "op": "join", "member": "B", "member_id": "none"},
        {"at": 105, "op": "join", "member": "B"},
        {"at": 4000, "op": "join", "member": "C", "member_id": "none"},
        {"at": 4005, "op": "join", "member": "C"},
        {"at": 7000, "op": "join", "member": "D", "member_id": "none"},
        {"at": 7005, "op": "join", "member": "D"},
        {"at": 9500, "op": "join", "member": "E", "member_id": "none"},
        {"at": 9505, "op": "join", "member": "E"},
        {"at": 20000, "op": "advance"}]"#,
    );
    for alias in ["A", "B", "C", "D", "E"] {
        s["clients"][alias]["rebalance_timeout_ms"] = json!(10000);
    }
    let events = run(s);
    let joins: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "timer" && e["timer"] == "join")
        .collect();
    let times: Vec<&Value> = joins.iter().map(|e| &e["t"]).collect();
    assert_eq!(times, [3005, 6005, 9005, 10005]);
    let last = joins.last().unwrap();
    assert_eq!(last["group"]["state"], "CompletingRebalance");
    assert_eq!(last["completed"].as_array().unwrap().len(), 5);
}

#[test]
fn a_pending_member_that_never_returns_completes_the_join_phase_when_it_expires() {
    // A alone is Stable; C gets an id (pending) and never comes back; A's own JoinGroup (a
    // leader's rejoin rebalances) waits for C until C's session (10 s) expires at 14000.
    // A's session check at 13100 finds its JoinGroup parked: nothing, and it is not re-armed.
    let events = run(script(
        &["A", "C"],
        r#"[
        {"at": 0, "op": "join", "member": "A", "member_id": "none"},
        {"at": 5, "op": "join", "member": "A"},
        {"at": 3100, "op": "sync", "member": "A"},
        {"at": 4000, "op": "join", "member": "C", "member_id": "none"},
        {"at": 5000, "op": "join", "member": "A"},
        {"at": 20000, "op": "advance"}]"#,
    ));
    let e = at(&events, 5000, "request");
    assert_eq!(e["pending"], json!(true));
    assert!(timer_names(e).contains(&"join@35000".to_string()), "{e}");
    let check = at(&events, 13100, "timer");
    assert_eq!(check["timer"], "heartbeat:A");
    assert!(!timer_names(check)
        .iter()
        .any(|t| t.starts_with("heartbeat:A")));
    let expiry = at(&events, 14000, "timer");
    assert_eq!(expiry["timer"], "heartbeat:C");
    let completed = &expiry["completed"][0];
    assert_eq!(completed["member"], "A");
    assert_eq!(completed["response"]["generation_id"], 2);
    assert_eq!(expiry["group"]["state"], "CompletingRebalance");
    assert!(timer_names(expiry).contains(&"heartbeat:A@24000".to_string()));
}

#[test]
fn a_member_of_another_protocol_type_gets_inconsistent_group_protocol_and_no_member_id() {
    let events = run(script(
        &["A", "B"],
        &format!(
            "[{},{}]",
            FORM_AB.trim(),
            r#"{"at": 7000, "op": "join", "member": "B", "member_id": "none", "restart": true, "protocol_type": "connect"}"#
        ),
    ));
    let response = &at(&events, 7000, "request")["response"];
    assert_eq!(response["error"], "INCONSISTENT_GROUP_PROTOCOL");
    assert_eq!(response["member_id"], "");
}

#[test]
fn a_sync_group_naming_another_protocol_is_inconsistent_and_the_group_stays_completing() {
    let events = run(script(
        &["A"],
        r#"[
        {"at": 0, "op": "join", "member": "A", "member_id": "none"},
        {"at": 5, "op": "join", "member": "A"},
        {"at": 3100, "op": "sync", "member": "A", "protocol_name": "roundrobin"}]"#,
    ));
    let e = at(&events, 3100, "request");
    assert_eq!(e["response"]["error"], "INCONSISTENT_GROUP_PROTOCOL");
    assert_eq!(e["response"]["assignment"], Value::Null);
    assert_eq!(e["group"]["state"], "CompletingRebalance");
}

#[test]
fn leave_group_answers_each_member_of_the_batch() {
    let events = run(script(
        &["A", "B"],
        &format!(
            "[{},{}]",
            FORM_AB.trim(),
            r#"{"at": 7000, "op": "leave", "members": [{"member": "A"}, {"member": "B", "member_id": "bogus"}]}"#
        ),
    ));
    let e = at(&events, 7000, "request");
    assert_eq!(
        e["response"],
        json!({"error": "NONE", "members": [
            {"member_id": "A", "group_instance_id": null, "error": "NONE"},
            {"member_id": "?bogus", "group_instance_id": null, "error": "UNKNOWN_MEMBER_ID"}]})
    );
    assert_eq!(e["group"]["state"], "PreparingRebalance");
    assert_eq!(e["group"]["leader"], "B");
}

#[test]
fn the_sync_timer_removes_members_that_never_synced_even_once_the_group_is_stable() {
    let events = run(script(
        &["A", "B"],
        r#"[
        {"at": 0, "op": "join", "member": "A", "member_id": "none"},
        {"at": 5, "op": "join", "member": "A"},
        {"at": 100, "op": "join", "member": "B", "member_id": "none"},
        {"at": 105, "op": "join", "member": "B"},
        {"at": 6100, "op": "sync", "member": "A"},
        {"at": 9000, "op": "heartbeat", "member": "A"},
        {"at": 9010, "op": "heartbeat", "member": "B"},
        {"at": 18000, "op": "heartbeat", "member": "A"},
        {"at": 18010, "op": "heartbeat", "member": "B"},
        {"at": 27000, "op": "heartbeat", "member": "A"},
        {"at": 27010, "op": "heartbeat", "member": "B"},
        {"at": 36010, "op": "advance"}]"#,
    ));
    let stable = at(&events, 6100, "request");
    assert_eq!(stable["group"]["state"], "Stable");
    assert_eq!(stable["group"]["pending_sync_members"], json!(["B"]));
    let expiry = at(&events, 36005, "timer");
    assert_eq!(expiry["timer"], "sync");
    assert_eq!(expiry["group"]["state"], "PreparingRebalance");
    let members: Vec<&Value> = expiry["group"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["member_id"])
        .collect();
    assert_eq!(members, ["A"]);
    assert!(timer_names(expiry).contains(&"join@66005".to_string()));
}

#[test]
fn a_byte_identical_rejoin_in_stable_gets_the_current_generation_without_a_rebalance() {
    let events = run(script(
        &["A", "B"],
        &format!(
            "[{},{},{}]",
            FORM_AB.trim(),
            // The same metadata as B's first JoinGroup (generation -1 in the subscription).
            r#"{"at": 7000, "op": "join", "member": "B", "protocols": [{"name": "range", "topics": ["orders"], "generation": -1}]}"#,
            // With generation 1 in it, the metadata differs: a rebalance.
            r#"{"at": 8000, "op": "join", "member": "B"}"#
        ),
    ));
    let same = at(&events, 7000, "request");
    assert_eq!(same["response"]["error"], "NONE");
    assert_eq!(same["response"]["generation_id"], 1);
    assert_eq!(same["group"]["state"], "Stable");
    let changed = at(&events, 8000, "request");
    assert_eq!(changed["pending"], json!(true));
    assert_eq!(changed["group"]["state"], "PreparingRebalance");
}

#[test]
fn a_static_member_restarted_during_a_rebalance_fences_its_old_process_and_joins_the_phase() {
    // Static A, B, C (no MEMBER_ID_REQUIRED). A rejoins (a rebalance), B rejoins and waits for
    // C; B's process restarts: the old process's parked JoinGroup is answered
    // FENCED_INSTANCE_ID and the new one (B~2) joins the running phase, still waiting for C.
    let mut s = script(
        &["A", "B", "C"],
        r#"[
        {"at": 5, "op": "join", "member": "A"},
        {"at": 105, "op": "join", "member": "B"},
        {"at": 205, "op": "join", "member": "C"},
        {"at": 6100, "op": "sync", "member": "A"},
        {"at": 6110, "op": "sync", "member": "B"},
        {"at": 6120, "op": "sync", "member": "C"},
        {"at": 7000, "op": "join", "member": "A"},
        {"at": 7100, "op": "join", "member": "B"},
        {"at": 7200, "op": "join", "member": "B", "restart": true}]"#,
    );
    for (alias, pod) in [("A", "pod-a"), ("B", "pod-b"), ("C", "pod-c")] {
        s["clients"][alias]["group_instance_id"] = json!(pod);
    }
    let events = run(s);
    let e = at(&events, 7200, "request");
    assert_eq!(e["pending"], json!(true), "{e}");
    let completed = e["completed"].as_array().expect("the old join answered");
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0]["member"], "B");
    assert_eq!(completed[0]["response"]["error"], "FENCED_INSTANCE_ID");
    assert_eq!(e["group"]["state"], "PreparingRebalance");
    let b2 = &e["group"]["members"][1];
    assert_eq!(
        (b2["member_id"].as_str(), b2["awaiting_join"].as_bool()),
        (Some("B~2"), Some(true))
    );
}

#[test]
fn the_last_member_leaving_writes_an_empty_group() {
    let events = run(script(
        &["A"],
        r#"[
        {"at": 0, "op": "join", "member": "A", "member_id": "none"},
        {"at": 5, "op": "join", "member": "A"},
        {"at": 3100, "op": "sync", "member": "A"},
        {"at": 4000, "op": "leave", "members": [{"member": "A"}]}]"#,
    ));
    let e = at(&events, 4000, "request");
    assert_eq!(e["records"], json!(["GROUP_METADATA"]));
    assert_eq!(e["group"]["state"], "Empty");
    assert_eq!(e["group"]["generation_id"], 2);
    assert_eq!(e["timers"], json!([]));
}

// ---- The command ----

fn cgsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs")
}

#[test]
fn conform_coordinator_matches_every_classic_and_kip_848_request() {
    let out = cgsim(&[
        "conform",
        "coordinator",
        "tests/data/coordinator_scripts.jsonl",
        "--diff",
        "tests/data/coordinator_traces.jsonl",
        "--member-ids-from",
        "tests/data/coordinator_traces.jsonl",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("c10-static-member-restart-within-session: 15/15 requests match"));
    assert!(stdout.contains("k04-revocation-before-assignment: 12/12 requests match"));
    assert!(stdout.ends_with("coordinator conformance: 249/249 requests match over 12 scripts\n"));
}

#[test]
fn conform_coordinator_prints_a_trace_per_script_without_diff() {
    let out = cgsim(&[
        "conform",
        "coordinator",
        "tests/data/coordinator_scripts.jsonl",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let traces: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(traces.len(), 12);
    assert_eq!(traces[0]["id"], "c01-initial-delay-three-members");
    assert_eq!(
        traces[0]["events"][0]["response"]["error"],
        "MEMBER_ID_REQUIRED"
    );
}

#[test]
fn a_bad_script_line_is_exit_2_with_its_line_number() {
    let dir = std::env::temp_dir().join(format!("cgsim-conform-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.jsonl");
    let good = SCRIPTS.lines().next().unwrap();
    assert!(good.contains("\"op\":\"sync\""));
    std::fs::write(
        &path,
        format!(
            "{good}\n{}\n",
            good.replace("\"op\":\"sync\"", "\"op\":\"synk\"")
        ),
    )
    .unwrap();
    let out = cgsim(&["conform", "coordinator", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.jsonl:2:"), "{stderr}");
    assert!(stderr.contains("synk"), "{stderr}");
}

#[test]
fn a_difference_makes_conform_exit_1() {
    let dir = std::env::temp_dir().join(format!("cgsim-conform-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("traces.jsonl");
    assert!(TRACES.contains("\"deadline_t\":3005"));
    std::fs::write(
        &path,
        TRACES.replacen("\"deadline_t\":3005", "\"deadline_t\":3006", 1),
    )
    .unwrap();
    let out = cgsim(&[
        "conform",
        "coordinator",
        "tests/data/coordinator_scripts.jsonl",
        "--diff",
        path.to_str().unwrap(),
        "--member-ids-from",
        "tests/data/coordinator_traces.jsonl",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "c01-initial-delay-three-members: 14/15 requests match; first difference at request 2"
        ),
        "{stdout}"
    );
}

/// `AbstractCoordinator`'s Heartbeat and SyncGroup handlers reset the generation on
/// ILLEGAL_GENERATION only `if (generationUnchanged())`: the answer to a request sent with an
/// older generation than the consumer now holds is ignored. A's heartbeat with generation 0
/// (stale: it holds 1) is refused; A keeps generation 1, so its next heartbeat, at its own
/// generation, is answered NONE (reset, it would have carried -1 and been refused again).
#[test]
fn a_stale_requests_illegal_generation_keeps_the_generation_the_member_holds() {
    let steps = format!(
        r#"[{FORM_AB},
        {{"at": 7000, "op": "heartbeat", "member": "A", "generation": 0}},
        {{"at": 7010, "op": "heartbeat", "member": "A"}}]"#
    );
    let events = run(script(&["A", "B"], &steps));
    let stale = at(&events, 7000, "request");
    assert_eq!(stale["response"]["error"], "ILLEGAL_GENERATION", "{stale}");
    let next = at(&events, 7010, "request");
    assert_eq!(next["request"]["generation_id"], 1, "{next}");
    assert_eq!(next["response"]["error"], "NONE", "{next}");
}
