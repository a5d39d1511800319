//! One fuzz run: the case written as a scenario file, loaded as `cgsim run` loads it, run, and
//! judged by every property: the checkers' (safety throughout, settling after the last fault),
//! then the liveness properties a fuzz run adds once the quiet phase is over: every partition
//! of a subscribed topic owned at the end, `records.never_processed` = 0, no member failed.
//! And the loop over seeds, in parallel across runs (each run single-threaded), results
//! handed on in seed order.

use super::case::Case;
use crate::facts::Fact;
use crate::report::Report;
use crate::scenario::{load_str, LoadOptions, Scenario, TimelineAction};
use crate::sim::SimTime;
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
    let options = RunOptions {
        keep_facts: true,
        ..RunOptions::default()
    };
    let out = run(&scenario, options);
    Verdict {
        failure: judge(&scenario, &out.report, &out.facts),
        covered: out.report.invariants.covered.clone(),
        digest: out.report.digest.clone(),
    }
}

/// Every property over a finished run (`facts`: its facts, for what Kafka leaves unowned on
/// purpose, [`left_unassigned_by_static_leader`]): the first broken one.
pub fn judge(scenario: &Scenario, report: &Report, facts: &[(SimTime, Fact)]) -> Option<Failure> {
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
    let excused = left_unassigned_by_static_leader(scenario, facts);
    let unowned: Vec<String> = expected_owned(scenario)
        .into_iter()
        .filter(|p| !owned.contains(p.as_str()) && !excused.contains(p))
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

/// The partitions Kafka itself leaves unassigned until the next rebalance: a static leader
/// that returned (a restart, or a rejoin after its poll timeout) to a Stable group is told to
/// skip the assignment (KIP-814: GroupMetadataManager answers `skipAssignment = isLeader` when
/// the protocol does not change) and keeps the group's current assignment, while
/// ConsumerCoordinator.onLeaderElected takes `assignmentSnapshot = metadataSnapshot`: partitions
/// its metadata already had but the last real assignment did not (added while it was away) are
/// never seen as a change, so nobody rebalances for them. When the run's last leader election
/// was such a skip, these are the partitions its metadata counted beyond the counts the last
/// assignor run used; a growth after the skip is a change the leader does see, still expected.
pub fn left_unassigned_by_static_leader(
    scenario: &Scenario,
    facts: &[(SimTime, Fact)],
) -> BTreeSet<String> {
    let mut assigned_with: Option<&[u32]> = None;
    let mut skipped_with: Option<&[u32]> = None;
    for (_, fact) in facts {
        if let Fact::LeaderElected {
            skip_assignment,
            partition_counts,
            ..
        } = fact
        {
            if *skip_assignment {
                skipped_with = Some(partition_counts);
            } else {
                assigned_with = Some(partition_counts);
                skipped_with = None;
            }
        }
    }
    let mut out = BTreeSet::new();
    let (Some(assigned), Some(skipped)) = (assigned_with, skipped_with) else {
        return out;
    };
    for (t, topic) in scenario.topics.iter().enumerate() {
        let (from, to) = (assigned[t], skipped[t]);
        out.extend((from..to).map(|p| format!("{}-{p}", topic.name)));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        let toml =
            "name = \"t\"\nduration_ms = 60000\n\n[[topics]]\nname = \"t0\"\npartitions = 2\n\n\
                    [[topics]]\nname = \"t1\"\npartitions = 1\n\n[[members]]\nname = \"c1\"\n\
                    group_instance_id = \"pod-1\"\n";
        load_str("t", toml, &LoadOptions::default()).expect("valid scenario")
    }

    fn elected(skip_assignment: bool, partition_counts: &[u32]) -> (SimTime, Fact) {
        let fact = Fact::LeaderElected {
            member: 0,
            skip_assignment,
            partition_counts: partition_counts.to_vec(),
        };
        (SimTime::ZERO, fact)
    }

    #[test]
    fn a_static_leaders_skipped_assignment_leaves_what_was_added_while_it_was_away() {
        let s = scenario();
        // The last assignor run saw 2 and 1 partitions; the returning static leader's metadata
        // already has 4 and 1: t0-2 and t0-3 are never assigned (KIP-814's snapshot).
        let facts = [elected(false, &[2, 1]), elected(true, &[4, 1])];
        let left: Vec<String> = left_unassigned_by_static_leader(&s, &facts)
            .into_iter()
            .collect();
        assert_eq!(left, ["t0-2", "t0-3"]);
        // An assignment after the skip assigns them: nothing is left.
        let facts = [
            elected(false, &[2, 1]),
            elected(true, &[4, 1]),
            elected(false, &[4, 1]),
        ];
        assert!(left_unassigned_by_static_leader(&s, &facts).is_empty());
        // A skip with the same metadata as the assignment leaves nothing either.
        let facts = [elected(false, &[2, 1]), elected(true, &[2, 1])];
        assert!(left_unassigned_by_static_leader(&s, &facts).is_empty());
    }
}
