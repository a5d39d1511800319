//! One fuzz run: the case written as a scenario file, loaded as `cgsim run` loads it, run, and
//! judged by every property: the checkers' (safety throughout, settling after the last fault),
//! then the liveness properties a fuzz run adds once the quiet phase is over: every partition
//! of a subscribed topic owned at the end, `records.never_processed` = 0, no member failed.
//! And the loop over seeds, in parallel across runs (each run single-threaded), results
//! handed on in seed order.

use super::case::Case;
use crate::check::kafkas_own::{withheld_for_a_follow_up_that_never_came, MemberFailure};
use crate::check::liveness::{self, RunEnding};
use crate::check::Coverage;
use crate::facts::Fact;
use crate::report::Report;
use crate::scenario::{load_str, LoadOptions, Scenario};
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

/// Every property over a finished run, as `check::liveness` judges it from the report's
/// figures and the run's facts: the first broken one, or `None`.
pub fn judge(scenario: &Scenario, report: &Report, facts: &[(SimTime, Fact)]) -> Option<Failure> {
    let ending = RunEnding {
        violations: &report.invariants.violations,
        errors: report
            .errors
            .iter()
            .map(|e| MemberFailure {
                at_ms: e.at_ms,
                member: &e.member,
                error: e.cause,
            })
            .collect(),
        settle_checked: report.invariants.settle_checked,
        never_processed: report.records.never_processed,
        owned: report
            .final_assignment
            .values()
            .flatten()
            .map(String::as_str)
            .collect(),
    };
    let (at_ms, verdict) = liveness::judge(scenario, facts, &ending)?;
    Some(Failure {
        property: verdict.kind().to_string(),
        at_ms,
        detail: verdict.to_string(),
    })
}

/// Whether the run ended with partitions nobody owns that Kafka strands itself
/// ([`withheld_for_a_follow_up_that_never_came`]): a path the fuzz run counts.
fn stranded_at_end(scenario: &Scenario, report: &Report, facts: &[(SimTime, Fact)]) -> bool {
    let stranded = withheld_for_a_follow_up_that_never_came(scenario, facts);
    let owned: BTreeSet<&String> = report.final_assignment.values().flatten().collect();
    stranded.iter().any(|p| !owned.contains(p))
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
}
