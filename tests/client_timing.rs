//! The consumer's timing as Kafka's client code runs it (../shared/reference/CLIENT.md), and a
//! checker that flags only what Kafka could really do: each repro of issue 18 run as written.

use cgsim::report::Report;
use cgsim::scenario::expect::Comparison;
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
