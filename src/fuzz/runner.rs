//! One fuzz run: the case written as a scenario file, loaded as `cgsim run` loads it, run, and
//! judged by every property: the checkers' (safety throughout, settling after the last fault),
//! then the liveness properties a fuzz run adds once the quiet phase is over: every partition
//! of a subscribed topic owned at the end, `records.never_processed` = 0, no member failed.
//! And the loop over seeds, in parallel across runs (each run single-threaded), results
//! handed on in seed order.

use super::case::Case;
use crate::check::kafkas_own::{
    left_unassigned_by_static_leader, refused_after_fail_over, unreleased_after_killed_close,
    withheld_for_a_follow_up_that_never_came, MemberFailure,
};
use crate::check::{Coverage, Violation, REFUSED_AGAIN, UPGRADE_BEFORE_SYNC};
use crate::client::leader::failed_as_kafkas_assignor_does;
use crate::facts::Fact;
use crate::report::Report;
use crate::scenario::{load_str, LoadOptions, Scenario, TimelineAction};
use crate::sim::SimTime;
use crate::world::{run, RunOptions};
use std::any::Any;
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A property a run broke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The checker's name (`double_ownership`, ...) or a fuzz liveness property
    /// (`unowned_partition`, `never_processed`, `member_error`), or `invalid_scenario` /
    /// `settle_unchecked` when the generator made a case it should not have, or `panic` when
    /// the model itself broke.
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
    run_case_with(case, &LoadOptions::default())
}

/// [`run_case`] with the command line's `--variant` and `--set` applied to the case's file, as
/// `cgsim run --variant V --set K=V fuzz-S.toml` applies them (the seed stays the case's).
pub fn run_case_with(case: &Case, options: &LoadOptions) -> Verdict {
    let text = case.to_toml();
    let scenario = match load_str(&format!("{}.toml", case.name), &text, options) {
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
    // A panic is a bug in the model, not a verdict on the case: it fails the run like a broken
    // property, named with its message, so the other seeds go on and this one can be shrunk.
    let out = match catch_unwind(AssertUnwindSafe(|| run(&scenario, options))) {
        Ok(out) => out,
        Err(payload) => {
            return Verdict {
                failure: Some(Failure {
                    property: "panic".into(),
                    at_ms: 0,
                    detail: panic_message(payload.as_ref()),
                }),
                covered: Vec::new(),
                digest: String::new(),
            }
        }
    };
    let mut covered = out.report.invariants.covered.clone();
    if stranded_at_end(&scenario, &out.report, &out.facts) {
        covered.push(Coverage::StrandedWithheld.name().to_string());
        covered.sort();
    }
    Verdict {
        failure: judge(&scenario, &out.report, &out.facts),
        covered,
        digest: out.report.digest.clone(),
    }
}

/// A panic's message (`panic!` with a literal or with a format).
fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with no message".into())
}

/// Every property over a finished run (`facts`: its facts, for what Kafka leaves unowned on
/// purpose, [`left_unassigned_by_static_leader`]): the first broken one. A member stopped by
/// an exception Kafka's own assignor throws (the sticky assignors' NullPointerException and
/// IllegalStateException, which ours reproduce), or spinning in one that never returns, is
/// Kafka's outcome, not a `member_error`. So is a group that never settles because a member
/// refuses the same assignment generation after generation ([`REFUSED_AGAIN`]): past it
/// nothing more is judged. And so is a partition owned twice because the online upgrade
/// recorded a classic member's assignment before the member applied it
/// ([`UPGRADE_BEFORE_SYNC`]): a true violation in the report, Kafka's own in the fuzz run.
pub fn judge(scenario: &Scenario, report: &Report, facts: &[(SimTime, Fact)]) -> Option<Failure> {
    let inv = &report.invariants;
    let kafkas_loop = |v: &Violation| v.kind == "not_settled" && v.detail.contains(REFUSED_AGAIN);
    let kafkas_upgrade =
        |v: &Violation| v.kind == "double_ownership" && v.detail.contains(UPGRADE_BEFORE_SYNC);
    let judged = inv
        .violations
        .iter()
        .filter(|v| !kafkas_loop(v) && !kafkas_upgrade(v));
    if let Some(v) = judged.min_by_key(|v| v.at_ms) {
        return Some(Failure {
            property: v.kind.clone(),
            at_ms: v.at_ms,
            detail: v.detail.clone(),
        });
    }
    if inv.violations.iter().any(kafkas_loop) {
        return None;
    }
    if let Some(e) = report.errors.iter().find(|e| {
        let failure = MemberFailure {
            at_ms: e.at_ms,
            member: &e.member,
            error: &e.error,
        };
        !refused_after_fail_over(facts, &failure)
            && !unreleased_after_killed_close(scenario, facts, &failure)
            && !failed_as_kafkas_assignor_does(&e.error)
    }) {
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
    let mut excused = left_unassigned_by_static_leader(scenario, facts);
    excused.extend(withheld_for_a_follow_up_that_never_came(scenario, facts));
    // A member Kafka itself stopped for good owns nothing afterwards, unless restarted.
    let failed: Vec<(u64, &str)> = report
        .errors
        .iter()
        .map(|e| (e.at_ms, e.member.as_str()))
        .collect();
    let unowned: Vec<String> = expected_owned(scenario, &failed)
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

/// Whether the run ended with partitions nobody owns that Kafka strands itself
/// ([`withheld_for_a_follow_up_that_never_came`]): a path the fuzz run counts.
fn stranded_at_end(scenario: &Scenario, report: &Report, facts: &[(SimTime, Fact)]) -> bool {
    let stranded = withheld_for_a_follow_up_that_never_came(scenario, facts);
    let owned: BTreeSet<&String> = report.final_assignment.values().flatten().collect();
    stranded.iter().any(|p| !owned.contains(p))
}

/// The partitions that must be owned when the run ends: every partition (as many as the
/// topic has then) of each topic that a member still running subscribes to. `failed`: the
/// members whose process stopped on a fatal error, `(at_ms, name)`, as if crashed then.
pub fn expected_owned(scenario: &Scenario, failed: &[(u64, &str)]) -> Vec<String> {
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
    let index = |name: &str| scenario.members.iter().position(|m| m.name == name);
    let mut failures: Vec<(u64, usize)> = failed
        .iter()
        .filter_map(|&(at, name)| Some((at, index(name)?)))
        .collect();
    failures.sort_unstable();
    let mut next_failure = failures.into_iter().peekable();
    for e in &scenario.timeline {
        // A failure before this entry (or at its instant: the entry, a restart, comes after).
        while let Some((_, m)) = next_failure.next_if(|&(at, _)| at <= e.at_ms) {
            up[m] = false;
        }
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
    for (_, m) in next_failure {
        up[m] = false;
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
    sink: impl FnMut(u64, R),
) {
    let never = std::sync::atomic::AtomicBool::new(false);
    for_each_seed_until(seeds, threads, &never, work, sink);
}

/// [`for_each_seed`] until `stop` is set: from then on no new seed starts, the running ones
/// finish and are handed on. Seeds start in order, so those handed on are always the first
/// of `seeds` (a prefix, as `cgsim fuzz --time` reports it).
pub fn for_each_seed_until<R: Send>(
    seeds: &[u64],
    threads: usize,
    stop: &std::sync::atomic::AtomicBool,
    work: impl Fn(u64) -> R + Sync,
    mut sink: impl FnMut(u64, R),
) {
    use std::sync::atomic::Ordering;
    let _ = crate::sweep::runner::run_in_order(
        seeds,
        threads,
        |&seed| (!stop.load(Ordering::SeqCst)).then(|| work(seed)),
        |i, r| {
            match r {
                Some(r) => sink(seeds[i], r),
                // Stopped: every later seed is skipped too (each worker checks before it starts).
                None => return Err(()),
            }
            Ok(())
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panics_message_is_read_from_either_payload() {
        let literal = catch_unwind(|| panic!("scheduling in the past")).unwrap_err();
        assert_eq!(panic_message(literal.as_ref()), "scheduling in the past");
        let formatted = catch_unwind(|| panic!("{} < {}", 1, 2)).unwrap_err();
        assert_eq!(panic_message(formatted.as_ref()), "1 < 2");
    }

    /// A member Kafka stopped for good (refused after a fail-over) subscribes to nothing at
    /// the end; restarted after its failure, it does again.
    #[test]
    fn a_member_that_failed_for_good_leaves_its_topics_unowned_unless_restarted() {
        let toml = "name = \"t\"\nduration_ms = 60000\n\n[[topics]]\nname = \"t0\"\n\
                    partitions = 2\n\n[[topics]]\nname = \"t1\"\npartitions = 1\n\n\
                    [[members]]\nname = \"c1\"\ntopics = [\"t0\"]\n\n\
                    [[members]]\nname = \"c2\"\ntopics = [\"t1\"]\n\n\
                    [[timeline]]\nat_ms = 20000\naction = \"crash\"\nmember = \"c2\"\n\n\
                    [[timeline]]\nat_ms = 30000\naction = \"restart\"\nmember = \"c2\"\n";
        let s = load_str("t", toml, &LoadOptions::default()).expect("valid scenario");
        assert_eq!(expected_owned(&s, &[]), ["t0-0", "t0-1", "t1-0"]);
        // c1 failed: nobody runs for t0 any more.
        assert_eq!(expected_owned(&s, &[(10_000, "c1")]), ["t1-0"]);
        // c2 failed before its crash and restart: the restart brings it back.
        assert_eq!(
            expected_owned(&s, &[(10_000, "c2")]),
            ["t0-0", "t0-1", "t1-0"]
        );
        // c2's restarted process failed: gone at the end.
        assert_eq!(expected_owned(&s, &[(40_000, "c2")]), ["t0-0", "t0-1"]);
    }
}
