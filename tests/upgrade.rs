//! Groups part way through an upgrade of their assignors (KIP-726), as Kafka runs them.

use cgsim::scenario::{load_str, LoadOptions};
use cgsim::world::{run, RunOptions};

/// Group assignors `["cooperative-sticky"]`, but member `a` (the first to join, so usually the
/// leader) lists `["cooperative-sticky", "range"]` and so runs EAGER; a fifth member joins.
const MIXED: &str = r#"
name = "mixed"
duration_ms = 460000

[[topics]]
name = "orders"
partitions = 24

[group]
assignors = ["cooperative-sticky"]

[[members]]
name = "a"
assignors = ["cooperative-sticky", "range"]

[[members]]
name = "c"
count = 3

[[members]]
name = "n"

[[timeline]]
at_ms = 60000
action = "join"
member = "n"
"#;

#[test]
fn an_eager_leader_still_withholds_what_cooperative_members_must_give_up_first() {
    // CooperativeStickyAssignor reads every Subscription's ownedPartitions and withholds the
    // partitions changing owner (assignPartitions -> adjustAssignment), whatever the leader's
    // own protocol: the COOPERATIVE members keep their partitions until they revoke them, so
    // nothing is owned twice. (Reading the leader's EAGER protocol as "no history" gave every
    // seed on which `a` leads a double ownership.)
    for seed in 1..=20 {
        let options = LoadOptions {
            seed: Some(seed),
            ..LoadOptions::default()
        };
        let scenario = load_str("mixed.toml", MIXED, &options).expect("valid");
        let r = run(&scenario, RunOptions::default()).report;
        assert!(
            r.invariants.violations.is_empty(),
            "seed {seed}: {:?}",
            r.invariants.violations
        );
        assert!(r.invariants.settle_checked, "seed {seed}");
    }
}

fn scenario_file(name: &str, seed: u64) -> cgsim::scenario::Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name);
    let options = LoadOptions {
        seed: Some(seed),
        ..LoadOptions::default()
    };
    cgsim::scenario::load(&path, &options).expect("scenario loads")
}

#[test]
fn the_two_bounce_upgrade_runs_clean_and_the_group_ends_cooperative() {
    // KIP-726's procedure: [range] -> [cooperative-sticky, range] -> [cooperative-sticky].
    for seed in 1..=100 {
        let r = run(
            &scenario_file("upgrade-two-bounce.toml", seed),
            RunOptions::default(),
        )
        .report;
        assert!(
            r.invariants.violations.is_empty(),
            "seed {seed}: {:?}",
            r.invariants.violations
        );
        assert!(r.invariants.settle_checked, "seed {seed}");
        assert!(r.errors.is_empty(), "seed {seed}: {:?}", r.errors);
        // After the first bounce every member lists both and still runs EAGER; after the
        // second every member runs COOPERATIVE.
        for m in &r.members {
            let protocols: Vec<&str> = m
                .restarted_with
                .iter()
                .map(|x| x.protocol.as_str())
                .collect();
            assert_eq!(
                protocols,
                ["eager", "cooperative"],
                "seed {seed}: {}",
                m.name
            );
        }
        // The group keeps range while a member lists only range, and switches assignor once
        // every member lists cooperative-sticky (the coordinator's protocol vote).
        let list = &r.rebalances.list;
        assert_eq!(list.first().map(|e| e.assignor.as_str()), Some("range"));
        assert_eq!(
            list.last().map(|e| e.assignor.as_str()),
            Some("cooperative-sticky")
        );
        let switch = list
            .iter()
            .position(|e| e.assignor == "cooperative-sticky")
            .expect("switches");
        assert!(list[switch..]
            .iter()
            .all(|e| e.assignor == "cooperative-sticky"));
        // Cooperative follow-ups appear only once bounced members run COOPERATIVE (the second
        // bounce, from 300 s).
        assert!(list.iter().any(|e| e.trigger == "follow_up"), "seed {seed}");
        assert!(
            list.iter()
                .filter(|e| e.trigger == "follow_up")
                .all(|e| e.start_ms > 300_000),
            "seed {seed}"
        );
    }
}

#[test]
fn a_one_bounce_upgrade_is_refused_with_inconsistent_group_protocol_until_the_group_is_empty() {
    // GroupMetadataManager: a member joining a non-empty classic group must share a protocol
    // with every member (supportsProtocols), else INCONSISTENT_GROUP_PROTOCOL, which
    // KafkaConsumer.poll throws (JoinGroupResponseHandler raises it). c1..c3 come back with
    // only cooperative-sticky while someone still lists only range, and stop; c4 comes back
    // to an empty group and forms a group of its own.
    for seed in 1..=100 {
        let r = run(
            &scenario_file("upgrade-one-bounce.toml", seed),
            RunOptions::default(),
        )
        .report;
        assert!(
            r.invariants.violations.is_empty(),
            "seed {seed}: {:?}",
            r.invariants.violations
        );
        assert!(r.invariants.settle_checked, "seed {seed}");
        let failed: Vec<(&str, &str)> = r
            .errors
            .iter()
            .map(|e| (e.member.as_str(), e.error.as_str()))
            .collect();
        assert_eq!(
            failed,
            [
                ("c1", "INCONSISTENT_GROUP_PROTOCOL"),
                ("c2", "INCONSISTENT_GROUP_PROTOCOL"),
                ("c3", "INCONSISTENT_GROUP_PROTOCOL")
            ],
            "seed {seed}"
        );
        let owners: Vec<&String> = r.final_assignment.keys().collect();
        assert_eq!(owners, ["c4"], "seed {seed}");
        assert_eq!(
            r.rebalances.list.last().map(|e| e.assignor.as_str()),
            Some("cooperative-sticky")
        );
    }
}
