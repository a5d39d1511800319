//! Whole runs under the KIP-848 consumer protocol (`--variant consumer`): the broker assigns,
//! members reconcile on their own heartbeats, and nobody stops the world.

use cgsim::scenario::{load, LoadOptions};
use cgsim::world::{run, RunOptions};
use std::path::Path;

fn report(name: &str, variant: &str, seed: u64) -> cgsim::report::Report {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name);
    let options = LoadOptions {
        seed: Some(seed),
        variant: Some(variant.into()),
        ..LoadOptions::default()
    };
    run(
        &load(&path, &options).expect("loads"),
        RunOptions::default(),
    )
    .report
}

#[test]
fn scale_out_scale_in_and_crash_never_stop_a_staying_member_and_revoke_no_more_than_cooperative() {
    for name in ["scale-out.toml", "scale-in.toml", "crash.toml"] {
        for seed in 1..=10 {
            let consumer = report(name, "consumer", seed);
            let cooperative = report(name, "cooperative", seed);
            assert!(
                consumer.invariants.violations.is_empty(),
                "{name} seed {seed}: {:?}",
                consumer.invariants.violations
            );
            assert!(consumer.invariants.settle_checked, "{name} seed {seed}");
            assert_eq!(
                consumer.pauses.stop_the_world_ms.max, 0,
                "{name} seed {seed}"
            );
            assert!(
                consumer.revocations.total <= cooperative.revocations.total,
                "{name} seed {seed}: consumer {} > cooperative {}",
                consumer.revocations.total,
                cooperative.revocations.total
            );
            // A rebalance is a group-epoch bump: no join or sync phase.
            for e in &consumer.rebalances.list {
                assert_eq!((e.join_ms, e.sync_ms), (None, None), "{name} seed {seed}");
                assert_eq!(e.duration_ms, e.end_ms - e.start_ms);
            }
            assert!(consumer.members.iter().all(|m| m.protocol == "consumer"));
        }
    }
}

#[test]
fn a_member_past_its_poll_interval_leaves_loses_its_partitions_and_rejoins() {
    // slow-member: c2 stalls past max.poll.interval.ms; under KIP-848 its background thread
    // leaves (epoch -1), its partitions are lost at its next poll and it rejoins with epoch 0.
    let r = report("slow-member.toml", "consumer", 1);
    assert!(
        r.invariants.violations.is_empty(),
        "{:?}",
        r.invariants.violations
    );
    let triggers: Vec<(&str, Option<&str>)> = r
        .rebalances
        .list
        .iter()
        .map(|e| (e.trigger.as_str(), e.member.as_deref()))
        .collect();
    assert_eq!(
        triggers,
        [("member_left", Some("c2")), ("member_joined", Some("c2"))]
    );
    assert!(r.lost.total > 0);
}

#[test]
fn classic_only_settings_are_listed_as_notices_under_the_consumer_variant() {
    let r = report("upgrade-two-bounce.toml", "consumer", 1);
    assert_eq!(
        r.notices,
        ["group.assignors = [\"range\"] does not apply under the consumer protocol (the broker's server assignor assigns; see remote_assignor)"]
    );
    assert!(report("scale-out.toml", "consumer", 1).notices.is_empty());
    assert!(report("upgrade-two-bounce.toml", "default", 1)
        .notices
        .is_empty());
}

#[test]
fn a_members_remote_assignor_is_the_server_assignor_the_group_runs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/scale-out.toml");
    let options = LoadOptions {
        variant: Some("consumer".into()),
        sets: vec!["group.remote_assignor=range".into()],
        ..LoadOptions::default()
    };
    let r = run(&load(&path, &options).unwrap(), RunOptions::default()).report;
    assert!(r.rebalances.list.iter().all(|e| e.assignor == "range"));
    // Server range: contiguous blocks.
    let c5 = &r.final_assignment["c5"];
    assert_eq!(c5.len(), 4);
    let numbers: Vec<u32> = c5
        .iter()
        .map(|p| p.rsplit('-').next().unwrap().parse().unwrap())
        .collect();
    assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "{numbers:?}");
    let uniform = report("scale-out.toml", "consumer", 1);
    assert!(uniform
        .rebalances
        .list
        .iter()
        .all(|e| e.assignor == "uniform"));
}

#[test]
fn a_static_member_restarted_before_its_crashed_process_expires_fails_with_unreleased_instance_id()
{
    // KIP-848: the crashed process never sent epoch -2, so the instance id is still held until
    // its session expires; the new process's join is refused and
    // ConsumerHeartbeatRequestManager treats UNRELEASED_INSTANCE_ID as fatal. A process
    // restarted after the old session expired joins normally.
    let text = r#"
name = "static-crash"
duration_ms = 300000
[[topics]]
name = "orders"
partitions = 6
[group]
protocol = "consumer"
record_processing_us = 1000
[[members]]
name = "c"
count = 3
group_instance_id = "pod-{n}"
[[producers]]
topic = "orders"
records_per_sec = 100
[[timeline]]
at_ms = 30000
action = "crash"
member = "c1"
[[timeline]]
at_ms = 40000
action = "restart"
member = "c1"
[[timeline]]
at_ms = 60000
action = "crash"
member = "c2"
[[timeline]]
at_ms = 120000
action = "restart"
member = "c2"
"#;
    let scenario = cgsim::scenario::load_str("s.toml", text, &LoadOptions::default()).unwrap();
    let r = run(&scenario, RunOptions::default()).report;
    let errors: Vec<(&str, &str)> = r
        .errors
        .iter()
        .map(|e| (e.member.as_str(), e.error.as_str()))
        .collect();
    assert_eq!(errors, [("c1", "UNRELEASED_INSTANCE_ID")]);
    assert!(
        r.invariants.violations.is_empty(),
        "{:?}",
        r.invariants.violations
    );
    let mut owners: Vec<&String> = r.final_assignment.keys().collect();
    owners.sort();
    assert_eq!(owners, ["c2", "c3"]);
}
