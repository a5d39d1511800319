//! One fuzz run: the case written as a scenario file, loaded as `cgsim run` loads it, run, and
//! judged by every property: the checkers' (safety throughout, settling after the last fault),
//! then the liveness properties a fuzz run adds once the quiet phase is over: every partition
//! of a subscribed topic owned at the end, `records.never_processed` = 0, no member failed.
//! And the loop over seeds, in parallel across runs (each run single-threaded), results
//! handed on in seed order.

use super::case::Case;
use crate::check::{Coverage, Violation, REFUSED_AGAIN, UPGRADE_BEFORE_SYNC};
use crate::client::leader::failed_as_kafkas_assignor_does;
use crate::facts::Fact;
use crate::metrics::outcome::MemberError;
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
        !refused_after_fail_over(facts, e)
            && !unreleased_after_killed_close(scenario, facts, e)
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

/// Whether Kafka itself refuses this member: a classic group loaded by a new coordinator knows
/// each member's selected protocol only (GroupMetadataManager.replay builds every loaded
/// member's supported protocols from `GroupMetadataValue.protocol` alone), so a member
/// restarted during an assignor upgrade with a list that drops the selected assignor is
/// answered INCONSISTENT_GROUP_PROTOCOL, where before the fail-over the other members'
/// upgraded lists would have let it in.
pub fn refused_after_fail_over(facts: &[(SimTime, Fact)], error: &MemberError) -> bool {
    error.error == "INCONSISTENT_GROUP_PROTOCOL"
        && facts
            .iter()
            .any(|(t, f)| matches!(f, Fact::CoordinatorLoaded) && t.as_millis() <= error.at_ms)
}

/// Whether Kafka itself refuses this member: a restart that killed the old process while it
/// was still closing (a callback or commit before its leave) left the leave heartbeat (epoch
/// -2) unsent, so the coordinator keeps the static member until its session expires and
/// refuses the new process UNRELEASED_INSTANCE_ID (GroupMetadataManager
/// `getOrMaybeSubscribeStaticConsumerGroupMember` → `throwIfInstanceIdIsUnreleased`), fatal in
/// the Java client (ConsumerHeartbeatRequestManager `handleSpecificError`). Only the process
/// started at the instant of that kill, within the old member's session.
pub fn unreleased_after_killed_close(
    scenario: &Scenario,
    facts: &[(SimTime, Fact)],
    error: &MemberError,
) -> bool {
    if error.error != "UNRELEASED_INSTANCE_ID" {
        return false;
    }
    let Some(m) = scenario.members.iter().position(|s| s.name == error.member) else {
        return false;
    };
    let mut closing = false;
    // When a process of `m` died while closing; then whether the process that failed started
    // at that instant (a restart killing it).
    let mut killed: Option<u64> = None;
    let mut started_on_kill: Option<u64> = None;
    for (t, f) in facts {
        let t = t.as_millis();
        if t > error.at_ms {
            break;
        }
        match f {
            Fact::CloseRequested { member } if *member == m => closing = true,
            Fact::ProcessStopped { member } if *member == m => closing = false,
            Fact::Crashed { member, .. } if *member == m => {
                killed = closing.then_some(t);
                closing = false;
            }
            Fact::ProcessStarted { member } if *member == m => {
                started_on_kill = killed.take().filter(|&k| k == t);
                closing = false;
            }
            _ => {}
        }
    }
    started_on_kill.is_some_and(|k| error.at_ms < k + scenario.group.consumer_session_timeout_ms)
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

/// The partitions Kafka itself leaves unassigned until the next rebalance: a static leader
/// that returned (a restart, or a rejoin after its poll timeout) to a Stable group is told to
/// skip the assignment (KIP-814: GroupMetadataManager answers `skipAssignment = isLeader` when
/// the protocol does not change) and keeps the group's current assignment, while
/// ConsumerCoordinator.onLeaderElected takes `assignmentSnapshot = metadataSnapshot`: partitions
/// its metadata already had but the last real assignment did not (added while it was away) are
/// never seen as a change, so nobody rebalances for them. When the run's last leader election
/// was such a skip, these are the partitions its metadata counted beyond the counts of the last
/// assignment the coordinator stored (an assignor run whose SyncGroup the coordinator never
/// wrote, lost with its broker, assigned nothing: the loaded group is back at the generation
/// before it); a growth after the skip is a change the leader does see, still expected.
pub fn left_unassigned_by_static_leader(
    scenario: &Scenario,
    facts: &[(SimTime, Fact)],
) -> BTreeSet<String> {
    let mut assigned_with: Option<&[u32]> = None;
    let mut computed_with: Option<&[u32]> = None;
    let mut skipped_with: Option<&[u32]> = None;
    for (_, fact) in facts {
        match fact {
            Fact::LeaderElected {
                skip_assignment: true,
                partition_counts,
                ..
            } => skipped_with = Some(partition_counts),
            Fact::LeaderElected {
                partition_counts, ..
            } => computed_with = Some(partition_counts),
            // The leader's SyncGroup is written: its assignment is the group's.
            Fact::GroupStable { .. } => {
                if let Some(counts) = computed_with.take() {
                    assigned_with = Some(counts);
                    skipped_with = None;
                }
            }
            Fact::CoordinatorLoaded => computed_with = None,
            _ => {}
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

/// A generation as the coordinator stored it (GROUP_METADATA), for
/// [`withheld_for_a_follow_up_that_never_came`].
struct StoredGeneration {
    generation: i32,
    /// Each partition's owner when its join phase completed.
    owners_at_join: Vec<Option<usize>>,
    /// What its SyncGroups gave out.
    synced: BTreeSet<usize>,
    /// Its static members replaced while it was Stable.
    replaced: BTreeSet<usize>,
}

/// The partitions Kafka itself strands after a cooperative rebalance: the assignor withholds a
/// partition that moves (its owner still claims it in the JoinGroup, KIP-429), and the owner,
/// once it has revoked it, is the one to rejoin for the follow-up that hands it on. If that
/// owner's process goes away before it rejoins (a crash, a close during the revocation, a poll
/// timeout, which sends no LeaveGroup for a static member) and a new process takes its
/// instance over while the group is Stable, the coordinator does not rebalance (the selected
/// protocol is unchanged: GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin)
/// and answers the new process with its stored assignment, which lacks the withheld partition;
/// it owns nothing, so it has nothing to revoke and no reason to rejoin, and neither has anyone
/// else. When the run ends in that generation with no rebalance since, these are the
/// partitions no member synced in it whose owner when its join completed was so replaced
/// (its owner as the coordinator knew it: a process that rejoined and then closed or crashed
/// before the join completed still claims, in the JoinGroup the coordinator keeps, what it
/// held when it sent it).
/// A coordinator that loads the group after a fail-over has it Stable at the generation it
/// last stored, whatever rebalance the old one had started since (the follow-up itself, say):
/// that generation is the last one again, with the replacements written in it.
pub fn withheld_for_a_follow_up_that_never_came(
    scenario: &Scenario,
    facts: &[(SimTime, Fact)],
) -> BTreeSet<String> {
    let space = crate::cluster::PartitionSpace::new(scenario);
    let mut owner: Vec<Option<usize>> = vec![None; space.len()];
    // Each partition's claimant: the member whose last JoinGroup listed it owned (COOPERATIVE's
    // ownedPartitions). The coordinator keeps that metadata, and the assignor withholds by it,
    // after the process is gone (a static member closing or crashing sends no LeaveGroup); the
    // process's next JoinGroup (a new process's owns nothing) replaces it.
    let mut claimed: Vec<Option<usize>> = vec![None; space.len()];
    // The last generation: its owners when the join completed, what its SyncGroups gave out,
    // whether it went Stable, and who was replaced in it since (while Stable).
    let mut owners_at_join: Vec<Option<usize>> = Vec::new();
    let mut synced = BTreeSet::new();
    let mut generation = None;
    let mut stable = false;
    let mut replaced = BTreeSet::new();
    // The last generation that went Stable, as the coordinator stored it, kept when a
    // rebalance starts past it (each replacement is written before the new process is
    // answered, so it is stored too).
    let mut stored: Option<StoredGeneration> = None;
    let release = |owner: &mut Vec<Option<usize>>, member: usize, parts: &[usize]| {
        for &p in parts {
            if owner[p] == Some(member) {
                owner[p] = None;
            }
        }
    };
    for (_, fact) in facts {
        match fact {
            Fact::Assigned { member, partitions } | Fact::Kept { member, partitions } => {
                for &p in partitions {
                    owner[p] = Some(*member);
                }
            }
            Fact::Revoked { member, partitions }
            | Fact::RevokedOnClose { member, partitions }
            | Fact::Lost { member, partitions } => release(&mut owner, *member, partitions),
            Fact::Crashed { member, owned } => release(&mut owner, *member, owned),
            Fact::RebalanceStarted { .. } => {
                if stable {
                    stored = generation.map(|g| StoredGeneration {
                        generation: g,
                        owners_at_join: owners_at_join.clone(),
                        synced: synced.clone(),
                        replaced: replaced.clone(),
                    });
                }
                generation = None;
                stable = false;
            }
            Fact::JoinGroupSent { member } => {
                for (c, o) in claimed.iter_mut().zip(&owner) {
                    if *o == Some(*member) {
                        *c = Some(*member);
                    } else if *c == Some(*member) {
                        *c = None;
                    }
                }
            }
            Fact::JoinCompleted { generation: g, .. } => {
                generation = Some(*g);
                owners_at_join = owner.iter().zip(&claimed).map(|(o, c)| o.or(*c)).collect();
                synced.clear();
                replaced.clear();
                stable = false;
            }
            Fact::GroupStable { generation: g } => stable = generation == Some(*g),
            Fact::GroupEmpty => stored = None,
            // The loaded group is the stored generation with its written replacements: the
            // one running if it was still Stable, else the one a rebalance had started past.
            Fact::CoordinatorLoaded => {
                if let Some(g) = stored.as_ref().filter(|_| !stable) {
                    generation = Some(g.generation);
                    owners_at_join.clone_from(&g.owners_at_join);
                    synced.clone_from(&g.synced);
                    replaced.clone_from(&g.replaced);
                    stable = true;
                }
            }
            Fact::SyncGroupAnswered {
                generation: g,
                error: crate::messages::ErrorCode::None,
                assignment,
                ..
            } if generation == Some(*g) => synced.extend(assignment.iter().copied()),
            Fact::MemberReplaced { member, .. } if stable => {
                replaced.insert(*member);
            }
            _ => {}
        }
    }
    if !stable {
        return BTreeSet::new();
    }
    (0..space.len())
        .filter(|p| !synced.contains(p))
        .filter(|&p| owners_at_join[p].is_some_and(|m| replaced.contains(&m)))
        .map(|p| space.name(p).to_string())
        .collect()
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

    fn stable() -> (SimTime, Fact) {
        (SimTime::ZERO, Fact::GroupStable { generation: 1 })
    }

    #[test]
    fn a_static_leaders_skipped_assignment_leaves_what_was_added_while_it_was_away() {
        let s = scenario();
        let left = |facts: &[(SimTime, Fact)]| -> Vec<String> {
            left_unassigned_by_static_leader(&s, facts)
                .into_iter()
                .collect()
        };
        // The last assignment saw 2 and 1 partitions; the returning static leader's metadata
        // already has 4 and 1: t0-2 and t0-3 are never assigned (KIP-814's snapshot).
        let facts = [elected(false, &[2, 1]), stable(), elected(true, &[4, 1])];
        assert_eq!(left(&facts), ["t0-2", "t0-3"]);
        // An assignment after the skip assigns them: nothing is left.
        let facts = [
            elected(false, &[2, 1]),
            stable(),
            elected(true, &[4, 1]),
            elected(false, &[4, 1]),
            stable(),
        ];
        assert!(left(&facts).is_empty());
        // A skip with the same metadata as the assignment leaves nothing either.
        let facts = [elected(false, &[2, 1]), stable(), elected(true, &[2, 1])];
        assert!(left(&facts).is_empty());
        // An assignor run with 4 partitions whose SyncGroup the coordinator never wrote (its
        // broker crashed; the next one loads the generation before): the skip after the load
        // leaves t0-2 and t0-3 (fuzz --cluster-faults seed 7133437).
        let loaded = (SimTime::ZERO, Fact::CoordinatorLoaded);
        let facts = [
            elected(false, &[2, 1]),
            stable(),
            elected(false, &[4, 1]),
            loaded,
            elected(true, &[4, 1]),
        ];
        assert_eq!(left(&facts), ["t0-2", "t0-3"]);
    }

    /// One cooperative generation: member 0 owned t0-0 and t0-1 when the join completed, the
    /// assignor withheld t0-1 (it moves to member 1 in the follow-up), member 1 owns t1-0.
    fn withholding_generation() -> Vec<(SimTime, Fact)> {
        use crate::messages::{ErrorCode, Trigger};
        let synced = |member: usize, assignment: Vec<usize>| Fact::SyncGroupAnswered {
            member,
            generation: 2,
            error: ErrorCode::None,
            assignment,
        };
        [
            Fact::Assigned {
                member: 0,
                partitions: vec![0, 1],
            },
            Fact::Assigned {
                member: 1,
                partitions: vec![2],
            },
            Fact::RebalanceStarted {
                generation: 2,
                trigger: Trigger::MemberJoined,
                member: Some(1),
            },
            Fact::JoinCompleted {
                generation: 2,
                assignor: "cooperative-sticky".into(),
            },
            synced(0, vec![0]),
            synced(1, vec![2]),
            Fact::GroupStable { generation: 2 },
        ]
        .into_iter()
        .map(|f| (SimTime::ZERO, f))
        .collect()
    }

    fn replaced(member: usize) -> (SimTime, Fact) {
        let member_id = format!("c{member}-new");
        (SimTime::ZERO, Fact::MemberReplaced { member, member_id })
    }

    #[test]
    fn a_withheld_partition_whose_owner_was_replaced_while_stable_is_left_by_kafka_too() {
        let s = scenario();
        // Its owner's instance is taken over while Stable: no rebalance, no follow-up.
        let mut facts = withholding_generation();
        facts.push(replaced(0));
        let left: Vec<String> = withheld_for_a_follow_up_that_never_came(&s, &facts)
            .into_iter()
            .collect();
        assert_eq!(left, ["t0-1"]);
        // Nobody replaced: the owner itself rejoins for the follow-up, nothing is excused.
        assert!(withheld_for_a_follow_up_that_never_came(&s, &withholding_generation()).is_empty());
        // Another member replaced: t0-1's owner is still there to rejoin.
        let mut facts = withholding_generation();
        facts.push(replaced(1));
        assert!(withheld_for_a_follow_up_that_never_came(&s, &facts).is_empty());
        // A rebalance after the replacement: the run did not end in that generation.
        let mut facts = withholding_generation();
        facts.push(replaced(0));
        let next = Fact::RebalanceStarted {
            generation: 3,
            trigger: crate::messages::Trigger::FollowUp,
            member: Some(0),
        };
        facts.push((SimTime::ZERO, next));
        assert!(withheld_for_a_follow_up_that_never_came(&s, &facts).is_empty());
        // A coordinator fail-over after the replacement (seed 193386): the new coordinator
        // loads the generation with the replacement written, and still nobody rebalances.
        let mut facts = withholding_generation();
        facts.push(replaced(0));
        facts.push((SimTime::ZERO, Fact::CoordinatorLoaded));
        let left: Vec<String> = withheld_for_a_follow_up_that_never_came(&s, &facts)
            .into_iter()
            .collect();
        assert_eq!(left, ["t0-1"]);
    }

    /// Seed 468653: the owner rejoined with t0-0 and t0-1, then closed (static: no LeaveGroup)
    /// before the join completed; the assignor still read its claim and withheld t0-1 from the
    /// other member, and its new process took over the instance in the Stable group.
    #[test]
    fn a_claim_in_a_joingroup_outlives_the_process_that_sent_it() {
        use crate::messages::{ErrorCode, Trigger};
        let s = scenario();
        let synced = |member: usize, assignment: Vec<usize>| Fact::SyncGroupAnswered {
            member,
            generation: 2,
            error: ErrorCode::None,
            assignment,
        };
        let facts = |rejoined_first: bool| -> Vec<(SimTime, Fact)> {
            let mut f = vec![
                Fact::Assigned {
                    member: 0,
                    partitions: vec![0, 1],
                },
                Fact::RebalanceStarted {
                    generation: 2,
                    trigger: Trigger::MemberJoined,
                    member: Some(1),
                },
            ];
            if rejoined_first {
                f.push(Fact::JoinGroupSent { member: 0 });
            }
            f.extend([
                Fact::RevokedOnClose {
                    member: 0,
                    partitions: vec![0, 1],
                },
                Fact::JoinCompleted {
                    generation: 2,
                    assignor: "cooperative-sticky".into(),
                },
                synced(1, vec![2]),
                Fact::GroupStable { generation: 2 },
                Fact::MemberReplaced {
                    member: 0,
                    member_id: "c0-new".into(),
                },
                synced(0, vec![0]),
            ]);
            f.into_iter().map(|f| (SimTime::ZERO, f)).collect()
        };
        let left: Vec<String> = withheld_for_a_follow_up_that_never_came(&s, &facts(true))
            .into_iter()
            .collect();
        assert_eq!(left, ["t0-1"]);
        // No JoinGroup of its since it took them: nothing says the coordinator has its claim.
        assert!(withheld_for_a_follow_up_that_never_came(&s, &facts(false)).is_empty());
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

    #[test]
    fn an_instance_id_a_killed_close_still_holds_is_kafkas_own() {
        let toml = "name = \"t\"\nduration_ms = 60000\n\n[group]\nprotocol = \"consumer\"\n\
                    consumer_session_timeout_ms = 8000\n\n[[topics]]\nname = \"t0\"\n\
                    partitions = 1\n\n[[members]]\nname = \"c1\"\ngroup_instance_id = \"pod-1\"\n";
        let s = load_str("t", toml, &LoadOptions::default()).expect("valid scenario");
        let at = |ms: u64, f: Fact| (SimTime::from_millis(ms), f);
        let refused = |at_ms: u64, error: &str| MemberError {
            at_ms,
            member: "c1".into(),
            error: error.into(),
        };
        let start = |ms| at(ms, Fact::ProcessStarted { member: 0 });
        let close = |ms| at(ms, Fact::CloseRequested { member: 0 });
        let crash = |ms| {
            at(
                ms,
                Fact::Crashed {
                    member: 0,
                    owned: vec![0],
                },
            )
        };
        // The restart killed the old process mid-close: its leave was never sent.
        let killed = [start(0), close(1_000), crash(2_000), start(2_000)];
        let e = refused(2_010, "UNRELEASED_INSTANCE_ID");
        assert!(unreleased_after_killed_close(&s, &killed, &e));
        // Past the old member's session the coordinator had released it: not excused.
        let late = refused(10_500, "UNRELEASED_INSTANCE_ID");
        assert!(!unreleased_after_killed_close(&s, &killed, &late));
        // Another error is not excused.
        let other = refused(2_010, "FENCED_INSTANCE_ID");
        assert!(!unreleased_after_killed_close(&s, &killed, &other));
        // The close finished (its leave sent): the refusal is a model bug.
        let closed = [
            start(0),
            close(1_000),
            at(1_500, Fact::ProcessStopped { member: 0 }),
            start(2_000),
        ];
        assert!(!unreleased_after_killed_close(&s, &closed, &e));
        // A crash with no close, then a restart: not this excuse.
        let crashed = [start(0), crash(2_000), start(2_000)];
        assert!(!unreleased_after_killed_close(&s, &crashed, &e));
    }

    #[test]
    fn a_protocol_refused_only_after_a_fail_over_is_kafkas_own() {
        let refused = |at_ms: u64, error: &str| MemberError {
            at_ms,
            member: "c1".into(),
            error: error.into(),
        };
        let loaded = [(SimTime::from_millis(5_000), Fact::CoordinatorLoaded)];
        // After the new coordinator loaded the group: its members' other protocols are gone.
        assert!(refused_after_fail_over(
            &loaded,
            &refused(6_000, "INCONSISTENT_GROUP_PROTOCOL")
        ));
        // Before any fail-over the group knew every member's list: a model or generator bug.
        assert!(!refused_after_fail_over(
            &loaded,
            &refused(4_000, "INCONSISTENT_GROUP_PROTOCOL")
        ));
        assert!(!refused_after_fail_over(
            &[],
            &refused(6_000, "INCONSISTENT_GROUP_PROTOCOL")
        ));
        // Any other error is not excused.
        assert!(!refused_after_fail_over(
            &loaded,
            &refused(6_000, "UNKNOWN_MEMBER_ID")
        ));
    }
}
