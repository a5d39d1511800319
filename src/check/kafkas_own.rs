//! What Kafka itself does that a property alone would call a failure: each [`Exempt`] names
//! one of Kafka's own behaviours, and the functions here read it from the verdict's fields or
//! from the facts (an independent reading, as every checker's), never from a message's words.
//! `cgsim fuzz` excuses what these say is Kafka's: a loop or a double ownership Kafka has too,
//! a member error Kafka raises too, partitions Kafka itself leaves unowned.

use super::Verdict;
use crate::facts::{Fact, FatalError, JavaException};
use crate::messages::ErrorCode;
use crate::scenario::Scenario;
use crate::sim::SimTime;
use std::collections::BTreeSet;

/// A behaviour of Kafka's own that excuses an outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exempt {
    /// A member refuses the same assignment generation after generation: the sticky
    /// assignors' previous-owner rule against `checkAssignmentMatchedSubscription`
    /// ([`super::REFUSED_AGAIN`]): `not_settled`, and nothing more is judged.
    RefusedAgain,
    /// The online upgrade records a classic member's assignment before the member applied it
    /// (`ConsumerGroup.fromClassicGroup`, [`super::UPGRADE_BEFORE_SYNC`]): a true
    /// `double_ownership` in the report, Kafka's own in a fuzz run.
    UpgradeBeforeSync,
    /// INCONSISTENT_GROUP_PROTOCOL after a coordinator fail-over ([`refused_after_fail_over`]).
    RefusedAfterFailOver,
    /// UNRELEASED_INSTANCE_ID after a restart killed a closing process
    /// ([`unreleased_after_killed_close`]).
    UnreleasedAfterKilledClose,
    /// Kafka's own assignor threw, or never returned, on the leader
    /// ([`kafkas_assignor_failed`]).
    KafkasAssignorFailed,
    /// Partitions a static leader's skipped assignment leaves
    /// ([`left_unassigned_by_static_leader`]).
    LeftUnassignedByStaticLeader,
    /// A withheld partition whose follow-up never came
    /// ([`withheld_for_a_follow_up_that_never_came`]).
    WithheldForAFollowUpThatNeverCame,
}

impl Exempt {
    /// The violation's own exemption, if Kafka breaks the property the same way.
    pub fn of_violation(verdict: &Verdict) -> Option<Exempt> {
        match verdict {
            Verdict::NotSettled(n) if !n.refused_again.is_empty() => Some(Exempt::RefusedAgain),
            Verdict::DoubleOwnership {
                upgrade_before_sync: true,
                ..
            } => Some(Exempt::UpgradeBeforeSync),
            _ => None,
        }
    }

    /// The member error's exemption, if Kafka stops the member too.
    pub fn of_member_error(
        scenario: &Scenario,
        facts: &[(SimTime, Fact)],
        failure: &MemberFailure,
    ) -> Option<Exempt> {
        if refused_after_fail_over(facts, failure) {
            Some(Exempt::RefusedAfterFailOver)
        } else if unreleased_after_killed_close(scenario, facts, failure) {
            Some(Exempt::UnreleasedAfterKilledClose)
        } else if kafkas_assignor_failed(failure.error) {
            Some(Exempt::KafkasAssignorFailed)
        } else {
            None
        }
    }
}

/// A member's fatal error, as the report lists it (`errors[]`).
#[derive(Clone, Copy, Debug)]
pub struct MemberFailure<'a> {
    pub at_ms: u64,
    pub member: &'a str,
    pub error: FatalError,
}

/// Whether a member's error is what Kafka's own assignor does to its leader: an exception it
/// throws (the sticky assignors' NullPointerException and IllegalStateException, which ours
/// reproduce), or a loop it never leaves.
pub fn kafkas_assignor_failed(error: FatalError) -> bool {
    matches!(
        error,
        FatalError::KafkasAssignorThrew(
            JavaException::NullPointerException | JavaException::IllegalStateException
        ) | FatalError::AssignorSpins
    )
}

/// Whether Kafka itself refuses this member: a classic group loaded by a new coordinator knows
/// each member's selected protocol only (GroupMetadataManager.replay builds every loaded
/// member's supported protocols from `GroupMetadataValue.protocol` alone), so a member
/// restarted during an assignor upgrade with a list that drops the selected assignor is
/// answered INCONSISTENT_GROUP_PROTOCOL, where before the fail-over the other members'
/// upgraded lists would have let it in.
pub fn refused_after_fail_over(facts: &[(SimTime, Fact)], error: &MemberFailure) -> bool {
    error.error == FatalError::Coordinator(ErrorCode::InconsistentGroupProtocol)
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
    error: &MemberFailure,
) -> bool {
    if error.error != FatalError::Coordinator(ErrorCode::UnreleasedInstanceId) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load_str, LoadOptions};

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

    #[test]
    fn an_instance_id_a_killed_close_still_holds_is_kafkas_own() {
        let toml = "name = \"t\"\nduration_ms = 60000\n\n[group]\nprotocol = \"consumer\"\n\
                    consumer_session_timeout_ms = 8000\n\n[[topics]]\nname = \"t0\"\n\
                    partitions = 1\n\n[[members]]\nname = \"c1\"\ngroup_instance_id = \"pod-1\"\n";
        let s = load_str("t", toml, &LoadOptions::default()).expect("valid scenario");
        let at = |ms: u64, f: Fact| (SimTime::from_millis(ms), f);
        let refused = |at_ms: u64, error: ErrorCode| MemberFailure {
            at_ms,
            member: "c1",
            error: FatalError::Coordinator(error),
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
        let e = refused(2_010, ErrorCode::UnreleasedInstanceId);
        assert!(unreleased_after_killed_close(&s, &killed, &e));
        // Past the old member's session the coordinator had released it: not excused.
        let late = refused(10_500, ErrorCode::UnreleasedInstanceId);
        assert!(!unreleased_after_killed_close(&s, &killed, &late));
        // Another error is not excused.
        let other = refused(2_010, ErrorCode::FencedInstanceId);
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
        let refused = |at_ms: u64, error: ErrorCode| MemberFailure {
            at_ms,
            member: "c1",
            error: FatalError::Coordinator(error),
        };
        let loaded = [(SimTime::from_millis(5_000), Fact::CoordinatorLoaded)];
        // After the new coordinator loaded the group: its members' other protocols are gone.
        assert!(refused_after_fail_over(
            &loaded,
            &refused(6_000, ErrorCode::InconsistentGroupProtocol)
        ));
        // Before any fail-over the group knew every member's list: a model or generator bug.
        assert!(!refused_after_fail_over(
            &loaded,
            &refused(4_000, ErrorCode::InconsistentGroupProtocol)
        ));
        assert!(!refused_after_fail_over(
            &[],
            &refused(6_000, ErrorCode::InconsistentGroupProtocol)
        ));
        // Any other error is not excused.
        assert!(!refused_after_fail_over(
            &loaded,
            &refused(6_000, ErrorCode::UnknownMemberId)
        ));
    }

    /// The two violations Kafka has too are told by their fields; the same kinds without
    /// them are not excused.
    #[test]
    fn a_violation_is_kafkas_own_by_its_fields() {
        use crate::check::{NotSettled, RefusedAgain, Unsettled};
        let not_settled = |refused_again: Vec<RefusedAgain>| {
            Verdict::NotSettled(NotSettled {
                how: Unsettled::AtTheWindowEnd {
                    what: "the group is PreparingRebalance (generation 9)".into(),
                },
                refused_again,
                timed_out: Vec::new(),
            })
        };
        let looping = RefusedAgain {
            member: "c2".into(),
            first: 4,
            last: 9,
            partitions: vec!["t1-0".into()],
        };
        assert_eq!(
            Exempt::of_violation(&not_settled(vec![looping])),
            Some(Exempt::RefusedAgain)
        );
        assert_eq!(Exempt::of_violation(&not_settled(Vec::new())), None);
        let double = |upgrade_before_sync| Verdict::DoubleOwnership {
            partition: "t0-0".into(),
            owner: "c1".into(),
            claimant: "c2".into(),
            upgrade_before_sync,
        };
        assert_eq!(
            Exempt::of_violation(&double(true)),
            Some(Exempt::UpgradeBeforeSync)
        );
        assert_eq!(Exempt::of_violation(&double(false)), None);
    }

    /// Kafka's own assignor throwing or spinning stops its leader in Kafka too; an assignor
    /// failing where Kafka's would not is the model's own limit, not excused.
    #[test]
    fn a_leader_stopped_by_kafkas_own_assignor_is_excused() {
        let s = scenario();
        let failure = |error| MemberFailure {
            at_ms: 1_000,
            member: "c1",
            error,
        };
        let excused = |error| Exempt::of_member_error(&s, &[], &failure(error));
        for e in JavaException::ALL {
            assert_eq!(
                excused(FatalError::KafkasAssignorThrew(e)),
                Some(Exempt::KafkasAssignorFailed)
            );
        }
        assert_eq!(
            excused(FatalError::AssignorSpins),
            Some(Exempt::KafkasAssignorFailed)
        );
        assert_eq!(excused(FatalError::AssignorFailed), None);
        assert_eq!(
            excused(FatalError::Coordinator(
                ErrorCode::InconsistentGroupProtocol
            )),
            None
        );
    }
}
