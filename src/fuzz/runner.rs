//! One fuzz run: the case written as a scenario file, loaded as `cgsim run` loads it, run, and
//! judged by every property: the checkers' (safety throughout, settling after the last fault),
//! then the liveness properties a fuzz run adds once the quiet phase is over: every partition
//! of a subscribed topic owned at the end, `records.never_processed` = 0, no member failed.
//! And the loop over seeds, in parallel across runs (each run single-threaded), results
//! handed on in seed order.

use super::case::Case;
use crate::report::Report;
use crate::scenario::{load_str, LoadOptions, Scenario, TimelineAction};
use crate::world::{run, RunOptions};
use std::collections::BTreeSet;

/// A property a run broke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The checker's name (`double_ownership`, ...) or a fuzz liveness property
    /// (`unowned_partition`, `never_processed`, `member_error`), or `invalid_scenario` /
    /// `settle_unchecked` when the generator made a case it should not have.
    pub property: String,
    pub at_ms: u64,
    pub detail: String,
}

/// What one run showed.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The first property broken (earliest in simulated time among the checkers').
    pub failure: Option<Failure>,
    /// The coverage properties reached (`invariants.covered`).
    pub covered: Vec<String>,
    pub digest: String,
}

/// Writes, loads, runs and judges `case`.
pub fn run_case(case: &Case) -> Verdict {
    let text = case.to_toml();
    let scenario = match load_str(
        &format!("{}.toml", case.name),
        &text,
        &LoadOptions::default(),
    ) {
        Ok(s) => s,
        Err(e) => {
            return Verdict {
                failure: Some(Failure {
                    property: "invalid_scenario".into(),
                    at_ms: 0,
                    detail: e.to_string(),
                }),
                covered: Vec::new(),
                digest: String::new(),
            }
        }
    };
    let out = run(&scenario, RunOptions::default());
    Verdict {
        failure: judge(&scenario, &out.report),
        covered: out.report.invariants.covered.clone(),
        digest: out.report.digest.clone(),
    }
}

/// Every property over a finished run: the first broken one.
pub fn judge(scenario: &Scenario, report: &Report) -> Option<Failure> {
    let inv = &report.invariants;
    if let Some(v) = inv.violations.iter().min_by_key(|v| v.at_ms) {
        return Some(Failure {
            property: v.kind.clone(),
            at_ms: v.at_ms,
            detail: v.detail.clone(),
        });
    }
    if let Some(e) = report.errors.first() {
        return Some(Failure {
            property: "member_error".into(),
            at_ms: e.at_ms,
            detail: format!("{}: {}", e.member, e.error),
        });
    }
    let end = scenario.duration_ms;
    if !inv.settle_checked {
        return Some(Failure {
            property: "settle_unchecked".into(),
            at_ms: end,
            detail: "the run ended before the settle window closed".into(),
        });
    }
    if report.records.never_processed > 0 {
        return Some(Failure {
            property: "never_processed".into(),
            at_ms: end,
            detail: format!(
                "{} records were never processed (nor skipped by offset reset, nor in flight at the end)",
                report.records.never_processed
            ),
        });
    }
    let owned: BTreeSet<&str> = report
        .final_assignment
        .values()
        .flatten()
        .map(String::as_str)
        .collect();
    let unowned: Vec<String> = expected_owned(scenario)
        .into_iter()
        .filter(|p| !owned.contains(p.as_str()))
        .collect();
    if !unowned.is_empty() {
        return Some(Failure {
            property: "unowned_partition".into(),
            at_ms: end,
            detail: format!(
                "at the end, after the quiet phase, nobody owns {}",
                unowned.join(", ")
            ),
        });
    }
    None
}

/// The partitions that must be owned when the run ends: every partition (as many as the
/// topic has then) of each topic that a member still running subscribes to.
pub fn expected_owned(scenario: &Scenario) -> Vec<String> {
    let n = scenario.members.len();
    let mut up: Vec<bool> = scenario
        .members
        .iter()
        .map(|m| m.start_ms.is_some())
        .collect();
    // A restart reads its configuration anew: a subscription changed in the old process is
    // gone (the spec's topics, or the restart's new settings').
    let mut spec: Vec<Vec<String>> = scenario.members.iter().map(|m| m.topics.clone()).collect();
    let mut topics = spec.clone();
    for e in &scenario.timeline {
        match &e.action {
            TimelineAction::Join { member } => up[*member] = true,
            TimelineAction::Leave { member } | TimelineAction::Crash { member } => {
                up[*member] = false
            }
            TimelineAction::Restart { member, settings } => {
                up[*member] = true;
                if let Some(new) = settings {
                    spec[*member] = new.spec.topics.clone();
                }
                topics[*member] = spec[*member].clone();
            }
            TimelineAction::Subscribe { member, topics: t } => topics[*member] = t.clone(),
            TimelineAction::Stall { .. }
            | TimelineAction::AddPartitions { .. }
            | TimelineAction::BrokerCrash { .. }
            | TimelineAction::BrokerRestart { .. }
            | TimelineAction::NetworkPartition { .. }
            | TimelineAction::LatencySpike { .. } => {}
        }
    }
    let subscribed: BTreeSet<&str> = (0..n)
        .filter(|&m| up[m])
        .flat_map(|m| topics[m].iter().map(String::as_str))
        .collect();
    let counts = scenario.partition_counts_at(scenario.duration_ms);
    let mut out = Vec::new();
    for (t, topic) in scenario.topics.iter().enumerate() {
        if subscribed.contains(topic.name.as_str()) {
            out.extend((0..counts[t]).map(|p| format!("{}-{p}", topic.name)));
        }
    }
    out
}

/// `work` for every seed over `threads` threads; `sink(seed, result)` in seed order.
pub fn for_each_seed<R: Send>(
    seeds: &[u64],
    threads: usize,
    work: impl Fn(u64) -> R + Sync,
    mut sink: impl FnMut(u64, R),
) {
    let _ = crate::sweep::runner::run_in_order(
        seeds,
        threads,
        |&seed| work(seed),
        |i, r| {
            sink(seeds[i], r);
            Ok::<(), ()>(())
        },
    );
}
