//! The liveness properties of a fuzz run, judged once the quiet phase is over, beside the
//! checkers' (safety throughout, settling after the last fault): every partition of a
//! subscribed topic owned at the end (`unowned_partition`), `records.never_processed` = 0
//! (`never_processed`), no member stopped by an error Kafka would not raise
//! (`member_error`), and a run long enough to be settle-checked (`settle_unchecked`). What
//! Kafka does too is excused ([`Exempt`], `kafkas_own.rs`), decided on the verdicts' kinds and
//! fields.

use super::kafkas_own::{
    left_unassigned_by_static_leader, withheld_for_a_follow_up_that_never_came, Exempt,
    MemberFailure,
};
use super::{Verdict, Violation};
use crate::facts::Fact;
use crate::scenario::{Scenario, TimelineAction};
use crate::sim::SimTime;
use std::collections::BTreeSet;

/// What a finished run's report says, as the liveness properties read it.
pub struct RunEnding<'a> {
    /// The checkers' violations (`invariants.violations`).
    pub violations: &'a [Violation],
    /// The members Kafka stopped (`errors[]`).
    pub errors: Vec<MemberFailure<'a>>,
    pub settle_checked: bool,
    pub never_processed: u64,
    /// Every partition some member owns at the end (`final_assignment`).
    pub owned: BTreeSet<&'a str>,
}

/// Every property over a finished run (`facts`: its facts, for what Kafka itself does): the
/// first broken one, at its instant. A checker's violation Kafka has too ([`Exempt::of_violation`])
/// is no failure; past Kafka's own loop ([`Exempt::RefusedAgain`]) nothing more is judged. A
/// member Kafka itself stops ([`Exempt::of_member_error`]) is no `member_error`.
pub fn judge(
    scenario: &Scenario,
    facts: &[(SimTime, Fact)],
    ending: &RunEnding,
) -> Option<(u64, Verdict)> {
    let judged = ending
        .violations
        .iter()
        .filter(|v| Exempt::of_violation(&v.verdict).is_none());
    if let Some(v) = judged.min_by_key(|v| v.at_ms) {
        return Some((v.at_ms, v.verdict.clone()));
    }
    let kafkas_loop =
        |v: &Violation| Exempt::of_violation(&v.verdict) == Some(Exempt::RefusedAgain);
    if ending.violations.iter().any(kafkas_loop) {
        return None;
    }
    if let Some(e) = ending
        .errors
        .iter()
        .find(|e| Exempt::of_member_error(scenario, facts, e).is_none())
    {
        let verdict = Verdict::MemberError {
            member: e.member.to_string(),
            error: e.error,
        };
        return Some((e.at_ms, verdict));
    }
    let end = scenario.duration_ms;
    if !ending.settle_checked {
        return Some((end, Verdict::SettleUnchecked));
    }
    if ending.never_processed > 0 {
        let records = ending.never_processed;
        return Some((end, Verdict::NeverProcessed { records }));
    }
    let mut excused = left_unassigned_by_static_leader(scenario, facts);
    excused.extend(withheld_for_a_follow_up_that_never_came(scenario, facts));
    // A member Kafka itself stopped for good owns nothing afterwards, unless restarted.
    let failed: Vec<(u64, &str)> = ending.errors.iter().map(|e| (e.at_ms, e.member)).collect();
    let partitions: Vec<String> = expected_owned(scenario, &failed)
        .into_iter()
        .filter(|p| !ending.owned.contains(p.as_str()) && !excused.contains(p))
        .collect();
    if !partitions.is_empty() {
        return Some((end, Verdict::UnownedPartition { partitions }));
    }
    None
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load_str, LoadOptions};

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
