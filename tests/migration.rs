//! The online migration between the classic and the consumer protocol (KIP-848, Kafka 4.x's
//! `group.consumer.migration.policy`): the migration scenarios over many seeds, the moments of
//! the conversions, and the refusal when the policy keeps a group classic.

use cgsim::metrics::Migration;
use cgsim::report::Report;
use cgsim::scenario::{load, LoadOptions};
use cgsim::sweep::runner::run_in_order;
use cgsim::world::{run, RunOptions};
use std::path::Path;

fn scenario_path(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{name}.toml"))
}

fn report(name: &str, variant: &str, seed: u64) -> Report {
    let options = LoadOptions {
        seed: Some(seed),
        variant: Some(variant.to_string()),
        ..LoadOptions::default()
    };
    let scenario = load(&scenario_path(name), &options).expect("scenario loads");
    run(&scenario, RunOptions::default()).report
}

/// Every seed of 1..=1000: what is wrong with each run, if anything.
fn problems_over_seeds(
    name: &str,
    variant: &str,
    check: impl Fn(&Report) -> Option<String> + Sync,
) -> Vec<String> {
    problems_over(1000, name, variant, check)
}

/// Every seed of 1..=`seeds`: what is wrong with each run, if anything.
fn problems_over(
    seeds: u64,
    name: &str,
    variant: &str,
    check: impl Fn(&Report) -> Option<String> + Sync,
) -> Vec<String> {
    let seeds: Vec<u64> = (1..=seeds).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut problems = Vec::new();
    let _ = run_in_order(
        &seeds,
        threads,
        |&seed| {
            let r = report(name, variant, seed);
            let mut wrong = Vec::new();
            if !r.invariants.violations.is_empty() {
                wrong.push(format!("violations {:?}", r.invariants.violations));
            }
            if !r.invariants.settle_checked {
                wrong.push("the settle window was not checked".to_string());
            }
            wrong.extend(check(&r));
            (seed, wrong)
        },
        |_, (seed, wrong)| {
            if !wrong.is_empty() {
                problems.push(format!(
                    "{name}@{variant} seed {seed}: {}",
                    wrong.join("; ")
                ));
            }
            Ok::<(), ()>(())
        },
    );
    problems
}

fn directions(r: &Report) -> Vec<&'static str> {
    r.migrations.iter().map(|m| m.to).collect()
}

/// The rolling upgrade: no double ownership while classic and consumer members share the group,
/// no member refused, and exactly one conversion, at the first restarted member's join (its
/// first ConsumerGroupHeartbeat, `getOrMaybeCreateConsumerGroup` -> `convertToConsumerGroup`),
/// carrying the three classic members over.
#[test]
fn a_rolling_switch_to_the_consumer_protocol_converts_once_at_the_first_join_over_1000_seeds() {
    let problems = problems_over_seeds("migrate-to-consumer", "default", |r| {
        let mut wrong = Vec::new();
        if !r.errors.is_empty() {
            wrong.push(format!("errors {:?}", r.errors));
        }
        match &r.migrations[..] {
            [Migration {
                to: "consumer",
                by: Some(by),
                at_ms,
                members,
                ..
            }] if by == "c1"
                && (65_000..66_000).contains(at_ms)
                && members == &["c2", "c3", "c4"] => {}
            other => wrong.push(format!("migrations {other:?}")),
        }
        (!wrong.is_empty()).then(|| wrong.join("; "))
    });
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// There and back: the upgrade at c1's join, the downgrade when the last consumer-protocol
/// member (c4, bounced last) leaves (`consumerGroupFenceMember` ->
/// `validateOnlineDowngradeWithFencedMembers` -> `convertToClassicGroup`); under a broker that
/// only upgrades the group stays a consumer group of classic members.
#[test]
fn a_migration_rolled_back_converts_back_when_the_last_consumer_member_leaves_over_1000_seeds() {
    let both = problems_over_seeds("migrate-and-back", "default", |r| {
        let ok = directions(r) == ["consumer", "classic"]
            && r.migrations[1].by.as_deref() == Some("c4")
            && (390_000..391_000).contains(&r.migrations[1].at_ms)
            && r.errors.is_empty();
        (!ok).then(|| format!("migrations {:?} errors {:?}", r.migrations, r.errors))
    });
    let one_way = problems_over_seeds("migrate-and-back", "upgrade-only", |r| {
        let ok = directions(r) == ["consumer"] && r.errors.is_empty();
        (!ok).then(|| format!("migrations {:?} errors {:?}", r.migrations, r.errors))
    });
    let problems: Vec<String> = both.into_iter().chain(one_way).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// There and back with static members (300 seeds: each run is 25 simulated minutes, for the
/// settle window after static members' closes): the upgrade at c1's first heartbeat, whose
/// group has no subscription metadata yet (`fromClassicGroup`), so that heartbeat bumps the
/// epoch once (metadata changed) and the uniform assignor moves nothing; no other rebalance;
/// every process that took over a classic member's entry speaks the consumer protocol from
/// then on, so nothing converts while a consumer-protocol member is left; and when c4's
/// classic process takes over the entry of the last one, the group converts back at once,
/// without a rebalance (`validateOnlineDowngradeWithReplacedMemberId`). Under a broker that
/// only upgrades, it stays a consumer group bridging classic members.
#[test]
fn static_members_rolled_back_convert_back_when_the_last_consumer_entry_is_taken_over() {
    let check = |back: bool| {
        move |r: &Report| {
            let mut wrong = Vec::new();
            if !r.errors.is_empty() {
                wrong.push(format!("errors {:?}", r.errors));
            }
            let conversion_only = match &r.rebalances.list[..] {
                [only] => {
                    only.trigger == "metadata_changed" && (65_000..66_000).contains(&only.start_ms)
                }
                _ => false,
            };
            if !conversion_only || r.moved.total != 0 {
                wrong.push(format!(
                    "rebalances {:?} moved {:?}",
                    r.rebalances.list, r.moved
                ));
            }
            let to_consumer = matches!(
                r.migrations.first(),
                Some(Migration { to: "consumer", by: Some(by), at_ms, .. })
                    if by == "c1" && (65_000..66_000).contains(at_ms)
            );
            let rest_ok = match &r.migrations[1..] {
                [] => !back,
                [Migration {
                    to: "classic",
                    by: Some(by),
                    trigger: "replaced",
                    at_ms,
                    members,
                    ..
                }] => {
                    back && by == "c4"
                        && (395_000..396_000).contains(at_ms)
                        && members == &["c1", "c2", "c3", "c4"]
                }
                _ => false,
            };
            if !to_consumer || !rest_ok {
                wrong.push(format!("migrations {:?}", r.migrations));
            }
            (!wrong.is_empty()).then(|| wrong.join("; "))
        }
    };
    let both = problems_over(300, "static-migrate-and-back", "default", check(true));
    let one_way = problems_over(300, "static-migrate-and-back", "upgrade-only", check(false));
    let problems: Vec<String> = both.into_iter().chain(one_way).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `validateOnlineUpgrade`: with the upgrade disabled, a consumer-protocol member joining a
/// live classic group is answered GROUP_ID_NOT_FOUND, fatal in the client
/// (`AbstractHeartbeatRequestManager.onErrorResponse`'s default), and the group stays classic;
/// the last member, bounced when the classic group is empty, creates a new consumer group
/// (`maybeDeleteEmptyClassicGroup`: whatever the policy).
#[test]
fn a_group_the_policy_keeps_classic_refuses_a_consumer_member_with_group_id_not_found() {
    let r = report("migrate-to-consumer", "upgrade-disabled", 1);
    let refused: Vec<(&str, &str)> = r
        .errors
        .iter()
        .map(|e| (e.member.as_str(), e.error.as_str()))
        .collect();
    assert_eq!(
        refused,
        [
            ("c1", "GROUP_ID_NOT_FOUND"),
            ("c2", "GROUP_ID_NOT_FOUND"),
            ("c3", "GROUP_ID_NOT_FOUND")
        ]
    );
    assert!(r.migrations.is_empty(), "{:?}", r.migrations);
    assert!(r.invariants.violations.is_empty());
    // c4 alone, in a consumer group of its own, owns everything at the end.
    assert_eq!(r.final_assignment.keys().collect::<Vec<_>>(), ["c4"]);
}
