//! The classic protocol with eager members, end to end: the figures issue 5 asks for, on the
//! scenarios in `scenarios/` and on small inline ones.

use cgsim::report::Report;
use cgsim::scenario::{load, load_str, LoadOptions, Scenario};
use cgsim::world::{run, run_with_faults, RunOptions};
use std::path::Path;

fn scenario(file: &str, variant: &str) -> Scenario {
    let options = LoadOptions {
        variant: Some(variant.to_string()),
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

fn report(s: &Scenario) -> Report {
    run(s, RunOptions::default()).report
}

#[test]
fn eager_scale_out_revokes_everything_once() {
    let r = report(&scenario("scale-out.toml", "eager"));
    assert_eq!(r.rebalances.count, 1);
    assert_eq!(r.rebalances.list[0].trigger, "member_joined");
    assert_eq!(r.rebalances.list[0].member.as_deref(), Some("c5"));
    assert_eq!(r.revocations.total, 24);
    assert_eq!(r.revocations.by_staying_members, 24);
    let stw = &r.pauses.stop_the_world_ms.per;
    for m in ["c1", "c2", "c3", "c4"] {
        assert!(
            stw.get(m).is_some_and(|&ms| ms > 0),
            "{m} has no stop-the-world interval: {stw:?}"
        );
    }
    // The newcomer was starting, not stopped.
    assert!(!stw.contains_key("c5"));
    assert!(
        r.invariants.violations.is_empty(),
        "{:?}",
        r.invariants.violations
    );
    assert!(r.invariants.settle_checked);
    assert_eq!(r.records.never_processed, 0);
}

#[test]
fn eager_scale_in_revokes_24_of_which_18_by_staying_members() {
    let r = report(&scenario("scale-in.toml", "eager"));
    assert_eq!(r.rebalances.count, 1);
    assert_eq!(r.rebalances.list[0].trigger, "member_left");
    assert_eq!(r.revocations.total, 24);
    assert_eq!(r.revocations.by_staying_members, 18);
    assert_eq!(r.revocations.per_member.get("c4"), Some(&6));
    assert!(r.invariants.violations.is_empty());
}

#[test]
fn crash_leaves_six_partitions_unavailable_for_about_a_session() {
    let s = scenario("crash.toml", "eager");
    let r = report(&s);
    assert_eq!(r.rebalances.count, 1);
    assert_eq!(r.rebalances.list[0].trigger, "member_expired");
    assert_eq!(r.revocations.by_staying_members, 18);
    assert_eq!(r.lost.by_crash, 6);
    let session = s.group.session_timeout_ms;
    let heartbeat = s.group.heartbeat_interval_ms;
    let (lo, hi) = (session - heartbeat, session + heartbeat + 1000);
    let long: Vec<(&String, &u64)> = r
        .pauses
        .unavailable_ms
        .per
        .iter()
        .filter(|(_, &ms)| ms >= lo)
        .collect();
    assert_eq!(long.len(), 6, "the crashed member's partitions: {long:?}");
    for (p, &ms) in &long {
        assert!(ms <= hi, "{p} unavailable {ms} ms, outside [{lo}, {hi}]");
    }
    // Detection is the session timeout less the time since the last heartbeat.
    let detect = r.rebalances.list[0].detect_ms;
    assert!((lo..=session).contains(&detect), "detect {detect}");
    assert!(r.invariants.violations.is_empty());
}

#[test]
fn slow_member_is_taken_out_by_its_poll_timer_and_finishes_as_a_zombie() {
    let s = scenario("slow-member.toml", "eager");
    let r = report(&s);
    let first = &r.rebalances.list[0];
    assert_eq!(first.trigger, "poll_timeout");
    assert_eq!(first.member.as_deref(), Some("c2"));
    let stall_at = s.timeline[0].at_ms;
    let left_at = first.start_ms;
    assert!(
        left_at >= stall_at + s.group.max_poll_interval_ms
            && left_at <= stall_at + s.group.max_poll_interval_ms + 1000,
        "left the group at {left_at} ms"
    );
    // Its partitions moved to the others; it lost them when the stall ended, then rejoined.
    assert!(r.lost.total > 0);
    assert!(r
        .rebalances
        .list
        .iter()
        .any(|e| e.trigger == "member_joined" && e.member.as_deref() == Some("c2")));
    assert!(!r.invariants.zombie_processing.is_empty());
    assert!(r
        .invariants
        .zombie_processing
        .iter()
        .all(|z| z.member == "c2" && z.owner.as_deref() != Some("c2")));
    assert!(
        r.invariants.violations.is_empty(),
        "{:?}",
        r.invariants.violations
    );
    assert!(r.invariants.settle_checked);
}

const FORMATION: &str = r#"
duration_ms = 60_000
[group]
assignors = ["range"]
[[topics]]
name = "t"
partitions = 4
"#;

fn formation_end(extra: &str) -> u64 {
    let s = load_str(
        "inline.toml",
        &format!("{FORMATION}{extra}"),
        &LoadOptions::default(),
    )
    .expect("valid");
    report(&s).formation.expect("formed").end_ms
}

#[test]
fn formation_follows_the_initial_rebalance_delay() {
    // A lone member: one initial delay after it joins (plus request latency).
    let lone = formation_end("[[members]]\nname = \"c\"\n");
    assert!((3000..3100).contains(&lone), "{lone}");
    // A second member within the window pushes completion to two delays.
    let two = formation_end("[[members]]\nname = \"c\"\ncount = 2\n");
    assert!((6000..6100).contains(&two), "{two}");
    // Capped by the rebalance timeout (max.poll.interval.ms): 3000 + min(3000, 4000 - 3000).
    let s = load_str(
        "inline.toml",
        &format!("{FORMATION}[[members]]\nname = \"c\"\ncount = 3\n")
            .replace("[group]\n", "[group]\nmax_poll_interval_ms = 4000\n"),
        &LoadOptions::default(),
    )
    .unwrap();
    let end = report(&s).formation.unwrap().end_ms;
    assert!((4000..4100).contains(&end), "{end}");
}

#[test]
fn every_scenario_is_deterministic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for path in files {
        let s = load(
            &path,
            &LoadOptions {
                variant: Some("eager".into()),
                ..Default::default()
            },
        )
        .unwrap();
        let a = run(
            &s,
            RunOptions {
                keep_trace: true,
                record_history: true,
                ..RunOptions::default()
            },
        );
        let b = run(
            &s,
            RunOptions {
                keep_trace: true,
                record_history: true,
                ..RunOptions::default()
            },
        );
        assert_eq!(a.report.digest, b.report.digest, "{}", path.display());
        assert_eq!(a.trace, b.trace);
        assert_eq!(
            serde_json::to_string(&a.report).unwrap(),
            serde_json::to_string(&b.report).unwrap(),
            "{}",
            path.display()
        );
        // The digest is over event records, not log lines: keeping a trace (or a history)
        // changes nothing in the report.
        let plain = run(&s, RunOptions::default());
        assert!(plain.trace.is_empty());
        assert_eq!(
            serde_json::to_string(&plain.report).unwrap(),
            serde_json::to_string(&a.report).unwrap(),
            "{}",
            path.display()
        );
        assert_eq!(plain.report.events, plain.events);
        assert!(plain.events > 0);
        let mut other = s.clone();
        other.seed += 1;
        assert_ne!(
            run(&other, RunOptions::default()).report.digest,
            a.report.digest,
            "{}",
            path.display()
        );
    }
}

#[test]
fn forced_double_ownership_is_a_violation() {
    let s = scenario("scale-out.toml", "eager");
    // At 30 s every original member claims partition 0 without an assignment: three of them
    // take it from its owner.
    let faults: Vec<(u64, usize, usize)> = (0..4).map(|m| (30_000, m, 0)).collect();
    let out = run_with_faults(&s, RunOptions::default(), &faults);
    let v = &out.report.invariants.violations;
    assert!(
        v.iter()
            .any(|v| v.kind == "double_ownership" && v.at_ms == 30_000),
        "{v:?}"
    );
    assert!(out.report.has_violations());
}

#[test]
fn seed_001_sticky_variant_ends_in_the_published_layout() {
    let s = scenario("seed-001-sticky.toml", "sticky");
    let out = run(
        &s,
        RunOptions {
            keep_trace: true,
            record_history: true,
            ..RunOptions::default()
        },
    );
    let last = |who: &str| {
        out.trace
            .iter()
            .rev()
            .find(|l| l.contains(&format!(" {who} onPartitionsAssigned")))
            .map(|l| l.split_once("onPartitionsAssigned ").unwrap().1.to_string())
            .unwrap()
    };
    assert_eq!(last("c1"), "[t3a-0 t3a-1 t3b-0 t3b-1 t3c-0]");
    assert_eq!(last("c2"), "[t3a-2 t3b-2 t3c-1 t3c-2]");
    // Kafka's default list runs range under EAGER.
    let default = run(
        &scenario_default("seed-001-sticky.toml"),
        RunOptions::default(),
    )
    .report;
    assert!(default.members.iter().all(|m| m.protocol == "eager"));
}

fn scenario_default(file: &str) -> Scenario {
    load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(file),
        &LoadOptions::default(),
    )
    .expect(file)
}

// ---- Cooperative rebalancing (KIP-429) ----

#[test]
fn cooperative_scale_out_moves_only_what_must_move() {
    let r = report(&scenario("scale-out.toml", "cooperative"));
    assert_eq!(r.rebalances.count, 2, "{:?}", r.rebalances.list);
    assert_eq!(r.rebalances.list[1].trigger, "follow_up");
    assert_eq!(r.revocations.total, 4);
    for m in ["c1", "c2", "c3", "c4"] {
        assert_eq!(r.revocations.per_member.get(m), Some(&1), "{m}");
    }
    assert_eq!(r.revocations.by_staying_members, 4);
    // The four original members never stop.
    assert_eq!(r.pauses.stop_the_world_ms.max, 0);
    assert_eq!(r.pauses.stop_the_world_ms.per.len(), 4);
    assert_eq!(r.moved.total, r.moved.minimum);
    assert_eq!(r.moved.minimum, 4);
    assert!(
        r.invariants.violations.is_empty(),
        "{:?}",
        r.invariants.violations
    );
}

#[test]
fn cooperative_clean_leave_revokes_only_the_leavers_partitions() {
    let r = report(&scenario("scale-in.toml", "cooperative"));
    assert_eq!(r.revocations.total, 6);
    assert_eq!(r.revocations.per_member.get("c4"), Some(&6));
    assert_eq!(r.revocations.by_staying_members, 0);
    assert_eq!(r.pauses.stop_the_world_ms.max, 0);
    assert_eq!(r.moved.total, r.moved.minimum);
    assert!(r.invariants.violations.is_empty());
}

#[test]
fn cooperative_crash_revokes_nothing_from_staying_members() {
    let r = report(&scenario("crash.toml", "cooperative"));
    assert_eq!(r.revocations.by_staying_members, 0);
    assert_eq!(r.revocations.total, 0);
    assert_eq!(r.lost.by_crash, 6);
    assert!(r.invariants.violations.is_empty());
}

fn final_assignments(s: &Scenario) -> std::collections::BTreeMap<String, String> {
    let r = report(s);
    assert!(r.invariants.violations.is_empty());
    r.final_assignment
        .into_iter()
        .map(|(m, parts)| (m, parts.join(" ")))
        .collect()
}

#[test]
fn seed_001_cooperative_sticky_converges_to_the_sticky_layout() {
    for variant in ["sticky", "cooperative"] {
        let a = final_assignments(&scenario("seed-001-sticky.toml", variant));
        assert_eq!(a["c1"], "t3a-0 t3a-1 t3b-0 t3b-1 t3c-0", "{variant}");
        assert_eq!(a["c2"], "t3a-2 t3b-2 t3c-1 t3c-2", "{variant}");
    }
    // Both starting together: roundrobin's layout (c1 t3a:0,2 t3b:1 t3c:0,2).
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/seed-001-sticky.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let together = text.split("[[timeline]]").next().unwrap().to_string()
        + "\n[variants.sticky]\nassignors = [\"sticky\"]\n";
    for variant in ["sticky", "cooperative"] {
        let s = load_str(
            "together.toml",
            &together,
            &LoadOptions {
                variant: Some(variant.into()),
                ..Default::default()
            },
        )
        .unwrap();
        let a = final_assignments(&s);
        assert_eq!(a["c1"], "t3a-0 t3a-2 t3b-1 t3c-0 t3c-2", "{variant}");
        assert_eq!(a["c2"], "t3a-1 t3b-0 t3b-2 t3c-1", "{variant}");
    }
}

#[test]
fn sticky_family_moves_the_minimum_on_scale_out_and_scale_in() {
    for file in ["scale-out.toml", "scale-in.toml"] {
        let r = report(&scenario(file, "cooperative"));
        assert_eq!(r.moved.total, r.moved.minimum, "{file} cooperative");
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios")
                .join(file),
        )
        .unwrap();
        let s = load_str(
            file,
            &format!("{text}\n[variants.sticky]\nassignors = [\"sticky\"]\n"),
            &LoadOptions {
                variant: Some("sticky".into()),
                ..Default::default()
            },
        )
        .unwrap();
        let r = report(&s);
        assert_eq!(r.moved.total, r.moved.minimum, "{file} sticky");
    }
}

#[test]
fn history_records_owner_changes_and_phases() {
    let s = scenario("scale-out.toml", "eager");
    let out = run(
        &s,
        RunOptions {
            keep_trace: false,
            record_history: true,
            ..RunOptions::default()
        },
    );
    let h = out.history.expect("history recorded");
    assert_eq!(h.member_names.len(), 5);
    use cgsim::history::Mark;
    let owner_changes = h
        .marks
        .iter()
        .filter(|(_, m)| matches!(m, Mark::Owner { .. }))
        .count();
    // Formation gives 24, the eager rebalance revokes 24 and reassigns 24.
    assert_eq!(owner_changes, 24 * 3);
    assert!(h
        .marks
        .iter()
        .any(|(_, m)| matches!(m, Mark::Stable { generation: 2 })));
    assert!(
        h.marks.windows(2).all(|w| w[0].0 <= w[1].0),
        "marks in time order"
    );
    assert!(run(&s, RunOptions::default()).history.is_none());
}

/// A group whose every member has gone (one leaves, the other crashes) rests Empty: that is
/// settled, not a group stuck in a rebalance. The settle check called it `not_settled` before
/// (found through `cgsim fuzz --cluster-faults`, where Kafka's own INCONSISTENT_GROUP_PROTOCOL
/// stopped a group's last running member).
#[test]
fn a_group_whose_members_have_all_gone_is_settled_empty() {
    let text = r#"
name = "everyone-goes"
seed = 1
duration_ms = 500000

[[topics]]
name = "t"
partitions = 2

[[members]]
name = "c"
count = 2

[[producers]]
topic = "t"
records_per_sec = 10

[[timeline]]
at_ms = 10000
action = "leave"
member = "c1"

[[timeline]]
at_ms = 12000
action = "crash"
member = "c2"
"#;
    for variant in ["eager", "cooperative", "consumer"] {
        let options = LoadOptions {
            variant: Some(variant.to_string()),
            ..LoadOptions::default()
        };
        let r = report(&load_str("everyone-goes.toml", text, &options).expect("valid"));
        assert!(r.invariants.settle_checked, "{variant}");
        assert!(
            r.invariants.violations.is_empty(),
            "{variant}: {:?}",
            r.invariants.violations
        );
        assert!(r.final_assignment.is_empty(), "{variant}");
    }
}

/// The settle bound counts two heartbeat intervals past DESIGN.md's last fault's end +
/// rebalance timeout + session timeout (`world::settle_deadline_ms`): a crash is noticed up
/// to that late, and the others learn of the rebalance that removes the crashed member only at
/// their next heartbeats (classic: REBALANCE_IN_PROGRESS; KIP-848: the revoking member, then
/// the receiving one, each at its own next heartbeat).
#[test]
fn the_settle_bound_counts_two_heartbeat_intervals() {
    let crash = |variant| scenario("crash.toml", variant);
    let (classic, consumer) = (crash("cooperative"), crash("consumer"));
    let classic_interval = classic.members[0].settings.heartbeat_interval_ms;
    assert_eq!(classic_interval, 3_000, "heartbeat.interval.ms");
    assert_eq!(
        classic.settle_bound().0,
        60_000 + 300_000 + 45_000 + 2 * classic_interval
    );
    let interval = consumer.group.consumer_heartbeat_interval_ms;
    assert_eq!(interval, 5_000, "group.consumer.heartbeat.interval.ms");
    assert_eq!(
        consumer.settle_bound().0,
        60_000 + 300_000 + 45_000 + 2 * interval
    );
}

/// `compare` skips the digest (it never shows it): that changes nothing else in the report.
#[test]
fn skipping_the_digest_changes_only_the_digest() {
    for variant in ["eager", "cooperative", "consumer"] {
        let s = scenario("scale-out.toml", variant);
        let hashed = report(&s);
        let skipped = run(
            &s,
            RunOptions {
                skip_digest: true,
                ..RunOptions::default()
            },
        )
        .report;
        assert_eq!(hashed.digest.len(), 32, "{variant}");
        assert_eq!(skipped.digest, "", "{variant}");
        let json = |r: &Report| {
            let mut v = serde_json::to_value(r).expect("serialises");
            v["digest"] = serde_json::Value::Null;
            v
        };
        assert_eq!(json(&hashed), json(&skipped), "{variant}");
    }
}
