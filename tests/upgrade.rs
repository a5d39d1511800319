//! Groups part way through an upgrade of their assignors (KIP-726), as Kafka runs them.

use cgsim::scenario::{load_str, LoadOptions};
use cgsim::world::{run, RunOptions};

/// Group assignors `["cooperative-sticky"]`, but member `a` (the first to join, so usually the
/// leader) lists `["cooperative-sticky", "range"]` and so runs EAGER; a fifth member joins.
const MIXED: &str = r#"
name = "mixed"
duration_ms = 450000

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
