//! The consumer's timing as Kafka's client code runs it (../shared/reference/CLIENT.md), and a
//! checker that flags only what Kafka could really do: each repro of issue 18 run as written.

use cgsim::facts::Fact;
use cgsim::messages::RequestKind;
use cgsim::report::Report;
use cgsim::scenario::expect::Comparison;
use cgsim::scenario::{load, load_str, LoadOptions, Scenario};
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

#[test]
fn an_idle_newcomer_sends_its_follow_up_join_as_its_heartbeat_answer_arrives() {
    // Cooperative scale-out: the newcomer c5 got nothing in the first round, so it is blocked in
    // poll; the REBALANCE_IN_PROGRESS of its next heartbeat is handled on arrival and its
    // JoinGroup goes out in the same loop iteration (CLIENT.md), not at a later poll.
    let s = scenario("scale-out.toml", Some("cooperative"), None, &[]);
    let out = run(
        &s,
        RunOptions {
            keep_trace: true,
            ..RunOptions::default()
        },
    );
    let at = |needle: &str| -> f64 {
        let line = out
            .trace
            .iter()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in the trace"));
        line.split('s').next().unwrap().parse().unwrap()
    };
    let answer = at("c5 heartbeat: REBALANCE_IN_PROGRESS");
    let rejoin = out
        .trace
        .iter()
        .filter(|l| l.contains("c5 JoinGroup (member id consumer"))
        .map(|l| l.split('s').next().unwrap().parse::<f64>().unwrap())
        .find(|&t| t >= answer)
        .expect("c5 rejoins");
    assert!(
        rejoin - answer < 0.002,
        "answer at {answer}, JoinGroup at {rejoin}"
    );
    let follow_up = &out.report.rebalances.list[1];
    assert_eq!(follow_up.trigger, "follow_up");
    assert!(follow_up.duration_ms < 3100, "{}", follow_up.duration_ms);
}

#[test]
fn heartbeats_go_on_through_a_long_eager_revoke_so_the_session_holds() {
    // onPartitionsRevoked of 5.9 s against a 6 s session: the heartbeat thread keeps going
    // until the JoinGroup is sent, so nobody expires and the group settles after one rebalance.
    let s = scenario(
        "scale-out.toml",
        Some("eager"),
        None,
        &[
            "group.session_timeout_ms=6000",
            "group.on_partitions_revoked_ms=5900",
        ],
    );
    let r = report(&s);
    assert_eq!(r.rebalances.count, 1, "{:?}", r.rebalances.list);
    assert!(r.invariants.settle_checked);
    assert!(
        r.invariants.violations.is_empty(),
        "{:?}",
        r.invariants.violations
    );
}

#[test]
fn a_stale_rebalance_in_progress_does_not_start_another_rebalance() {
    // A heartbeat pass (retry.backoff.ms) slower than the heartbeat interval: answers to
    // heartbeats sent before the rejoin are read after it, and Kafka ignores them.
    for variant in ["eager", "cooperative"] {
        let s = scenario(
            "scale-out.toml",
            Some(variant),
            None,
            &[
                "group.heartbeat_interval_ms=447",
                "group.retry_backoff_ms=738",
            ],
        );
        let r = report(&s);
        let expected = if variant == "eager" { 1 } else { 2 };
        assert_eq!(
            r.rebalances.count, expected,
            "{variant}: {:?}",
            r.rebalances.list
        );
        assert!(r.invariants.violations.is_empty(), "{variant}");
    }
}

#[test]
fn every_scenario_and_variant_runs_long_enough_to_check_that_it_settles() {
    // The settle property needs the settle bound and a quiet window of one session timeout
    // after it inside the run; a scenario that ends sooner would leave it unchecked.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut unchecked = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let variants = load(&path, &LoadOptions::default())
            .unwrap()
            .snapshot_variants;
        for variant in variants {
            let s = scenario(&name, Some(&variant), None, &[]);
            let r = report(&s);
            if !r.invariants.settle_checked {
                unchecked.push(format!("{name}@{variant}"));
            }
            // A scenario that demonstrates a violation says so in its `[[expect]]` entries
            // (poll-loop: a rebalance loop never settles); every other runs clean.
            let violation_expected = s.expects.iter().any(|e| {
                e.key == "invariants.violations"
                    && e.applies_to(&variant)
                    && e.comparison != Comparison::Eq(serde_json::json!(0))
            });
            assert!(
                violation_expected || r.invariants.violations.is_empty(),
                "{name}@{variant}: {:?}",
                r.invariants.violations
            );
        }
    }
    assert!(unchecked.is_empty(), "settle not checked: {unchecked:?}");
}

#[test]
fn overlapping_stalls_of_one_member_are_refused_at_load() {
    let toml = "name = \"s\"\nduration_ms = 600000\n\n[[topics]]\nname = \"t\"\npartitions = 2\n\n\
        [[members]]\nname = \"c\"\n\n\
        [[timeline]]\nat_ms = 1000\naction = \"stall\"\nmember = \"c\"\nduration_ms = 5000\n\n\
        [[timeline]]\nat_ms = 3000\naction = \"stall\"\nmember = \"c\"\nduration_ms = 5000\n";
    let err = cgsim::scenario::load_str("s.toml", toml, &LoadOptions::default()).unwrap_err();
    assert!(
        err.message
            .contains("cannot stall at 3000 ms (its stall until 6000 ms is still on"),
        "{}",
        err.message
    );
    // One after the other is fine.
    let ok = toml.replace("at_ms = 3000", "at_ms = 6000");
    assert!(cgsim::scenario::load_str("s.toml", &ok, &LoadOptions::default()).is_ok());
}

#[test]
fn a_member_entry_sets_its_own_settings_and_start_held_to_the_groups_rules() {
    let base = "name = \"s\"\nduration_ms = 100000\n\n[[topics]]\nname = \"t\"\npartitions = 2\n\n\
        [[members]]\nname = \"a\"\n\n[[members]]\nname = \"b\"\nstart_ms = 5000\nrecord_processing_us = 7000\n";
    let s = cgsim::scenario::load_str("s.toml", base, &LoadOptions::default()).expect("valid");
    assert_eq!(s.members[1].start_ms, Some(5000));
    assert_eq!(s.members[1].settings.record_processing_us, 7000);
    assert_eq!(
        s.members[0].settings.record_processing_us,
        s.group.record_processing_us
    );
    // b starts at 5 s with no timeline join.
    let r = report(&s);
    assert!(
        r.invariants.violations.is_empty(),
        "{:?}",
        r.invariants.violations
    );
    assert_eq!(r.final_assignment.len(), 2, "{:?}", r.final_assignment);
    // Its own heartbeat must stay below its own session timeout.
    let bad = base.replace(
        "start_ms = 5000",
        "session_timeout_ms = 6000\nheartbeat_interval_ms = 6000",
    );
    let err = cgsim::scenario::load_str("s.toml", &bad, &LoadOptions::default()).unwrap_err();
    assert!(err.message.contains("member \"b\": heartbeat_interval_ms = 6000 must be positive and below its session_timeout_ms (6000)"), "{}", err.message);
    // A member that starts itself is not joined again by the timeline.
    let twice = format!("{base}\n[[timeline]]\nat_ms = 8000\naction = \"join\"\nmember = \"b\"\n");
    assert!(cgsim::scenario::load_str("s.toml", &twice, &LoadOptions::default()).is_err());
}

#[test]
fn count_members_take_their_static_ids_from_a_template() {
    let toml = "name = \"s\"\nduration_ms = 100000\n\n[[topics]]\nname = \"t\"\npartitions = 3\n\n\
        [[members]]\nname = \"pod\"\ncount = 3\ngroup_instance_id = \"pod-{n}\"\n";
    let s = cgsim::scenario::load_str("s.toml", toml, &LoadOptions::default()).expect("valid");
    let ids: Vec<Option<&str>> = s
        .members
        .iter()
        .map(|m| m.group_instance_id.as_deref())
        .collect();
    assert_eq!(ids, [Some("pod-1"), Some("pod-2"), Some("pod-3")]);
    // One id for several members is refused, and the message shows the template.
    let shared = toml.replace("pod-{n}", "pod");
    let err = cgsim::scenario::load_str("s.toml", &shared, &LoadOptions::default()).unwrap_err();
    assert!(err.message.contains("\"pod-{n}\""), "{}", err.message);
}

/// Cooperative scale-out with batches of 500 records at 70 ms each (35 s): the old members read
/// their JoinGroup answers only at their next poll, so the leader's SyncGroup comes up to 35 s
/// after the join phase completes. With `faults`, a 1 ms latency spike at 1 s routes every
/// request through the broker and network faults' path.
fn slow_batches(request_timeout_ms: u64, faults: bool) -> Scenario {
    let timeout = format!("group.request_timeout_ms={request_timeout_ms}");
    let mut sets = vec![
        "group.record_processing_us=70000",
        "group.max_poll_records=500",
        "duration_ms=900000",
        timeout.as_str(),
    ];
    if faults {
        sets.push(
            "timeline=[{at_ms=60000, action=\"join\", member=\"c5\"}, \
             {at_ms=1000, action=\"latency_spike\", latency_ms=1, duration_ms=1000}]",
        );
    }
    scenario("scale-out.toml", Some("cooperative"), None, &sets)
}

#[test]
fn a_sync_group_held_past_the_request_timeout_fails_and_the_rejoin_starts_the_rebalance_anew() {
    // The newcomer c5, idle, sends its SyncGroup at once and the coordinator holds it for the
    // leader's. At request.timeout.ms the client closes the connection
    // (`NetworkClient.handleTimedOutRequests`): the SyncGroup fails with a disconnect, c5 marks
    // the coordinator unknown, finds it and joins again. Its subscription now names the
    // generation it was given, so the coordinator sees new metadata and starts another
    // rebalance, and the leader's late SyncGroup gets REBALANCE_IN_PROGRESS. Every round goes
    // the same way: Kafka's group never settles, and the run says why.
    for faults in [false, true] {
        let out = run(
            &slow_batches(30_000, faults),
            RunOptions {
                keep_facts: true,
                keep_trace: true,
                ..RunOptions::default()
            },
        );
        // Timed out at the deadline, not when the coordinator's answer comes.
        let timeouts: Vec<(u64, u64)> = out
            .facts
            .iter()
            .filter_map(|(at, f)| match f {
                Fact::RequestTimedOut {
                    member: 4,
                    request: RequestKind::SyncGroup,
                    waited_ms,
                } => Some((at.as_millis(), *waited_ms)),
                _ => None,
            })
            .collect();
        assert!(timeouts.len() >= 3, "faults {faults}: {timeouts:?}");
        assert!(timeouts.iter().all(|&(_, waited)| waited == 30_000));
        let reopened = out.trace.iter().any(|l| {
            l.contains("CompletingRebalance -> PreparingRebalance (trigger member_joined")
        });
        assert!(reopened, "faults {faults}: c5's rejoin starts no rebalance");
        let v = &out.report.invariants.violations;
        assert_eq!(v.len(), 1, "faults {faults}: {v:?}");
        assert_eq!(v[0].kind, "not_settled");
        assert!(
            v[0].detail.contains("c5's SyncGroup timed out"),
            "{}",
            v[0].detail
        );
        assert!(out.report.rebalances.list.is_empty());
    }
}

#[test]
fn with_a_request_timeout_longer_than_the_leaders_batch_the_same_group_settles() {
    // The same group with request.timeout.ms of 60 s: c5's SyncGroup waits out the leader's
    // 35 s batch, nothing times out, and the rebalance and its follow-up complete.
    let out = run(
        &slow_batches(60_000, false),
        RunOptions {
            keep_facts: true,
            ..RunOptions::default()
        },
    );
    let timed_out = out
        .facts
        .iter()
        .any(|(_, f)| matches!(f, Fact::RequestTimedOut { .. }));
    assert!(!timed_out);
    let r = &out.report;
    assert!(r.invariants.violations.is_empty(), "{:?}", r.invariants);
    assert!(r.invariants.settle_checked);
    assert_eq!(r.rebalances.list.len(), 2);
    assert!(r.rebalances.list[0].sync_ms >= Some(30_000));
}

#[test]
fn a_join_group_held_past_the_members_own_timeout_fails_and_it_rejoins_the_same_join_phase() {
    // The join phase waits up to the group's rebalance timeout, the longest of its members'
    // (slow's 300 s), for slow to finish its 35 s batch. quick's own JoinGroup times out at
    // request.timeout.ms (30 s; its rebalance timeout of 10 s and 5 s more is shorter): it
    // disconnects, finds the coordinator again and sends the same JoinGroup, which the
    // coordinator takes as the same member rejoining, with no new rebalance.
    let toml = r#"
name = "join-timeout"
duration_ms = 200_000

[[topics]]
name = "orders"
partitions = 12

[group]
assignors = ["cooperative-sticky"]
record_processing_us = 2_000
max_poll_records = 100

[[members]]
name = "quick"
max_poll_interval_ms = 10_000

[[members]]
name = "slow"
record_processing_us = 70_000
max_poll_records = 500

[[members]]
name = "late"
start_ms = 60_000

[[producers]]
topic = "orders"
records_per_sec = 60
"#;
    let s = load_str("join-timeout", toml, &LoadOptions::default()).expect("valid");
    let out = run(
        &s,
        RunOptions {
            keep_facts: true,
            keep_trace: true,
            ..RunOptions::default()
        },
    );
    let first = out.facts.iter().find_map(|(at, f)| match f {
        Fact::RequestTimedOut {
            member: 0,
            request: RequestKind::JoinGroup,
            waited_ms,
        } => Some((*at, *waited_ms)),
        _ => None,
    });
    let (at, waited_ms) = first.expect("quick's JoinGroup times out");
    assert_eq!(waited_ms, 30_000);
    let after = |l: &&String| {
        let t: f64 = l.split('s').next().unwrap().parse().unwrap();
        t * 1000.0 >= at.as_millis() as f64
    };
    // From the timeout to generation 2's join: quick rejoins, nothing starts a new rebalance.
    let until_join: Vec<&String> = out
        .trace
        .iter()
        .filter(after)
        .take_while(|l| !l.contains("join complete"))
        .collect();
    let rejoined = until_join
        .iter()
        .any(|l| l.contains("quick JoinGroup (member id consumer-"));
    assert!(rejoined, "{until_join:?}");
    assert!(!until_join
        .iter()
        .any(|l| l.contains("-> PreparingRebalance")));
    let completed = out
        .trace
        .iter()
        .find(|l| l.contains("join complete: generation 2"))
        .expect("generation 2");
    assert!(completed.ends_with("members 3"), "{completed}");
}
