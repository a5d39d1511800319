//! State recovery for the partition-local join, and consumer lag, under churn
//! (scenarios/join-under-churn.toml: a member joins at 60 s, another crashes at 120 s).

use cgsim::history::Mark;
use cgsim::scenario::{load, LoadOptions};
use cgsim::world::{run, RunOptions, RunOutput};
use std::path::Path;

fn churn(variant: &str, sets: &[&str]) -> RunOutput {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/join-under-churn.toml");
    let options = LoadOptions {
        variant: Some(variant.into()),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..LoadOptions::default()
    };
    let s = load(&path, &options).expect("scenario");
    run(
        &s,
        RunOptions {
            keep_trace: false,
            record_history: true,
            ..RunOptions::default()
        },
    )
}

/// Price-partition ownership changes after formation: (assignments, moves to another member).
fn price_assignments(out: &RunOutput) -> (u64, u64) {
    let h = out.history.as_ref().unwrap();
    let formed_us = out.report.formation.as_ref().unwrap().end_ms * 1000;
    let mut last: Vec<Option<usize>> = vec![None; h.partition_names.len()];
    let (mut assigned, mut moved) = (0, 0);
    for (at, mark) in &h.marks {
        if let Mark::Owner {
            partition,
            member: Some(m),
        } = *mark
        {
            if h.partition_names[partition].starts_with("market-updates")
                && *at > formed_us + 1_000_000
            {
                assigned += 1;
                moved += u64::from(last[partition].is_some_and(|o| o != m));
            }
            last[partition] = Some(m);
        }
    }
    (assigned, moved)
}

#[test]
fn each_recovery_mode_misses_its_own_way_after_each_rebalance() {
    let none = churn("eager-none", &[]).report;
    let changelog = churn("eager-changelog", &[]).report;
    let paused = churn("eager-changelog-paused", &[]).report;
    assert_eq!(none.rebalances.count, 2);
    for e in &none.rebalances.list {
        assert!(
            e.window.join_misses.state_empty > 0,
            "none: state-empty misses in gen {}",
            e.generation
        );
        assert_eq!(e.window.join_misses.restoring, 0);
        assert_eq!(e.window.restores, 0);
    }
    for e in &changelog.rebalances.list {
        assert!(
            e.window.join_misses.restoring > 0,
            "changelog: restoring misses in gen {}",
            e.generation
        );
        assert_eq!(e.window.join_misses.state_empty, 0);
        assert!(e.window.restores > 0 && e.window.restore_ms > 0);
    }
    // Pausing the task trades the misses for delay.
    assert_eq!(
        paused.join.misses.restoring
            + paused.join.misses.state_empty
            + paused.join.misses.out_of_order,
        0
    );
    let catch_up = |r: &cgsim::report::Report| {
        r.rebalances
            .list
            .iter()
            .map(|e| e.window.catch_up_ms.unwrap())
            .sum::<u64>()
    };
    assert!(
        catch_up(&paused) > catch_up(&changelog),
        "paused restores delay processing"
    );
}

#[test]
fn standby_takeovers_cost_less_than_changelog_replays() {
    let changelog = churn("eager-changelog", &[]).report;
    let standby = churn("eager-standby", &[]).report;
    assert!(standby.recovery.standby_takeovers > 0);
    assert!(standby.recovery.restored_records < changelog.recovery.restored_records);
    assert!(standby.recovery.restore_ms < changelog.recovery.restore_ms);
    assert!(standby.join.misses.restoring < changelog.join.misses.restoring);
}

#[test]
fn eager_restores_every_revoked_partition_cooperative_only_moved_ones() {
    // Eager, state not kept: every price partition assignment after formation restores.
    let eager = churn("eager-changelog", &[]);
    let (assigned, moved) = price_assignments(&eager);
    assert_eq!(eager.report.recovery.restores, assigned);
    assert!(moved < assigned);
    // Eager keeping local state (Kafka Streams' stores): only partitions that changed owner.
    let kept = churn("eager-changelog", &["app.keep_state_on_revoke=true"]);
    let (_, kept_moved) = price_assignments(&kept);
    assert_eq!(kept.report.recovery.restores, kept_moved);
    // Cooperative: only moved partitions are (re)assigned, so only they restore.
    let coop = churn("cooperative-changelog", &[]);
    let (coop_assigned, coop_moved) = price_assignments(&coop);
    assert_eq!(coop_assigned, coop_moved);
    assert_eq!(coop.report.recovery.restores, coop_moved);
    assert!(coop.report.recovery.restores < eager.report.recovery.restores);
}

#[test]
fn lag_rises_in_each_rebalance_and_catches_up() {
    for variant in [
        "eager-changelog",
        "eager-changelog-paused",
        "cooperative-changelog",
    ] {
        let r = churn(variant, &[]).report;
        // A rebalance followed by a cooperative follow-up shows its lag in the follow-up's window.
        let entries: Vec<_> = r
            .rebalances
            .list
            .iter()
            .filter(|e| e.follow_up_ms == 0)
            .collect();
        assert!(!entries.is_empty(), "{variant}");
        for e in entries {
            assert!(
                e.window.lag_peak > e.window.lag_before,
                "{variant} gen {}: {:?}",
                e.generation,
                e.window
            );
            let c = e.window.catch_up_ms.expect("caught up");
            assert!(
                c > 0 && c < 60_000,
                "{variant} gen {}: catch-up {c} ms",
                e.generation
            );
        }
        assert_eq!(r.lag.catch_up_ms.len(), r.rebalances.list.len());
        assert!(!r.lag.series.is_empty());
        assert!(r.invariants.violations.is_empty());
    }
}
