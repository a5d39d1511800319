//! The history fed by hand-written facts: each member's and the coordinator's state over time,
//! several changes at one instant, and a member restarted onto the other protocol.

use super::*;
use crate::facts::RejoinCause;
use crate::group::classic::ClassicGroupState;
use crate::messages::{ErrorCode, Trigger};
use crate::scenario::{load_str, LoadOptions};
use std::collections::BTreeSet;

fn ms(t: u64) -> SimTime {
    SimTime::from_millis(t)
}

fn scenario(extra: &str) -> Scenario {
    let text = format!(
        "name = \"h\"\nduration_ms = 300_000\n[[topics]]\nname = \"t\"\npartitions = 4\n\
         [[members]]\nname = \"c\"\ncount = 2\n{extra}"
    );
    load_str("h.toml", &text, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The partition names of `scenario()`'s topic.
fn names() -> Vec<String> {
    (0..4).map(|p| format!("t-{p}")).collect()
}

fn record(scenario: &Scenario, facts: &[(u64, Fact)]) -> GroupHistory {
    let mut r = Recorder::new(scenario, &names(), 1, true);
    for (at, fact) in facts {
        r.observe(ms(*at), fact);
    }
    r.finish().expect("kept over time")
}

/// A classic member's life: started, joined, synced, told to rejoin, stalled, closed; read back
/// at every instant between.
#[test]
fn a_classic_members_states_over_time_read_back_at_any_instant() {
    let s = scenario("");
    let h = record(
        &s,
        &[
            (0, Fact::ProcessStarted { member: 0 }),
            (5, Fact::JoinGroupSent { member: 0 }),
            (
                6_000,
                Fact::JoinGroupAnswered {
                    member: 0,
                    error: ErrorCode::None,
                },
            ),
            (
                6_002,
                Fact::SyncGroupAnswered {
                    member: 0,
                    generation: 1,
                    error: ErrorCode::None,
                    assignment: vec![0, 1],
                },
            ),
            (
                9_000,
                Fact::RejoinNeeded {
                    member: 0,
                    cause: RejoinCause::HeartbeatRebalance,
                },
            ),
            (
                9_500,
                Fact::Stalled {
                    member: 0,
                    until: ms(20_000),
                },
            ),
            (20_000, Fact::StallEnded { member: 0 }),
            (30_000, Fact::CloseRequested { member: 0 }),
            (30_010, Fact::ProcessStopped { member: 0 }),
        ],
    );
    let at = |t| h.member_at(0, ms(t));
    assert_eq!(at(0).process, ProcessState::Running);
    assert_eq!(at(0).membership, Some("UNJOINED"));
    assert_eq!(at(4).membership, Some("UNJOINED"));
    assert_eq!(at(5).membership, Some("PREPARING_REBALANCE"));
    assert_eq!(at(6_001).membership, Some("COMPLETING_REBALANCE"));
    assert_eq!(at(6_002).membership, Some("STABLE"));
    assert_eq!(at(6_002).synced_generation, Some(1));
    assert_eq!(at(9_000).rejoin, Some(RejoinCause::HeartbeatRebalance));
    assert_eq!(at(9_500).process, ProcessState::Stalled);
    assert_eq!(at(19_999).stalled_until, Some(ms(20_000)));
    assert_eq!(at(20_000).process, ProcessState::Running);
    assert_eq!(at(20_000).stalled_until, None);
    assert_eq!(at(30_000).process, ProcessState::Closing);
    let closed = at(30_010);
    assert_eq!(closed.process, ProcessState::Closed);
    assert_eq!((closed.membership, closed.synced_generation), (None, None));
    assert_eq!(closed.rejoin, None);
    // The other member never started.
    assert_eq!(h.member_at(1, ms(30_010)).process, ProcessState::NotStarted);
}

/// The coordinator's side: Dead until a member is added, the classic states and generation,
/// a fail-over (no coordinator, then a new one loading), the leader; and at one instant the
/// last of several changes.
#[test]
fn the_coordinators_side_over_time_keeps_the_last_change_of_an_instant() {
    let s = scenario("");
    let added = |member: usize| Fact::MemberAdded {
        member,
        incarnation: 1,
        member_id: format!("m{member}"),
    };
    let h = record(
        &s,
        &[
            (1, added(0)),
            (
                1,
                Fact::RebalanceStarted {
                    generation: 1,
                    trigger: Trigger::MemberJoined,
                    member: Some(0),
                },
            ),
            (2, added(1)),
            (
                6_000,
                Fact::JoinCompleted {
                    generation: 1,
                    assignor: "range".into(),
                },
            ),
            (
                6_000,
                Fact::LeaderElected {
                    member: 1,
                    skip_assignment: false,
                    partition_counts: vec![4],
                },
            ),
            (6_005, Fact::GroupStable { generation: 1 }),
            (10_000, Fact::CoordinatorFailed { broker: 1 }),
            (
                12_000,
                Fact::CoordinatorMoved {
                    from: Some(1),
                    to: Some(2),
                },
            ),
            (12_500, Fact::CoordinatorLoaded),
            (
                20_000,
                Fact::MemberRemoved {
                    member: 0,
                    member_id: "m0".into(),
                },
            ),
        ],
    );
    let at = |t| h.coordinator_at(ms(t));
    assert_eq!(at(0).classic_state, ClassicGroupState::Dead);
    assert_eq!(at(1).classic_state, ClassicGroupState::PreparingRebalance);
    assert_eq!(at(2).classic_members, [0, 1].into());
    assert_eq!(
        at(6_000).classic_state,
        ClassicGroupState::CompletingRebalance
    );
    assert_eq!((at(6_000).generation, at(6_000).leader), (Some(1), Some(1)));
    assert_eq!(at(6_005).classic_state, ClassicGroupState::Stable);
    assert_eq!(at(9_999).broker, Some(1));
    assert_eq!(at(10_000).broker, None);
    assert_eq!((at(12_000).broker, at(12_000).loading), (Some(2), true));
    assert!(!at(12_500).loading);
    assert_eq!(at(20_000).classic_members, [1].into());
    assert_eq!(h.member_at(0, ms(2)).member_id.as_deref(), Some("m0"));
}

/// A member restarted onto the consumer protocol starts UNSUBSCRIBED (KIP-848's first state);
/// its classic process before started UNJOINED, and its classic poll timeout left it UNJOINED,
/// which a consumer member's poll timeout does not (its membership says so itself).
#[test]
fn a_member_restarted_onto_the_other_protocol_starts_in_that_protocols_state() {
    let s = scenario(
        "[[timeline]]\nat_ms = 55_000\naction = \"leave\"\nmember = \"c1\"\n\
         [[timeline]]\nat_ms = 60_000\naction = \"restart\"\nmember = \"c1\"\nset = [\"protocol=consumer\"]\n",
    );
    let poll_timeout = |member| Fact::PollTimeout {
        member,
        last_poll: ms(0),
    };
    let h = record(
        &s,
        &[
            (0, Fact::ProcessStarted { member: 0 }),
            (10, Fact::JoinGroupSent { member: 0 }),
            (50_000, poll_timeout(0)),
            (60_000, Fact::ProcessStarted { member: 0 }),
            (
                60_010,
                Fact::MemberStateChanged {
                    member: 0,
                    state: "JOINING",
                },
            ),
            (90_000, poll_timeout(0)),
        ],
    );
    let at = |t| h.member_at(0, ms(t));
    assert_eq!(at(50_000).membership, Some("UNJOINED"));
    assert_eq!(at(60_000).membership, Some("UNSUBSCRIBED"));
    assert_eq!(at(60_010).membership, Some("JOINING"));
    assert_eq!(at(90_000).membership, Some("JOINING"));
}

/// The coordinator's record of the group now (what `--describe` reads): a static replacement
/// takes the old member id out of the member map and puts the new one; a crashed member's last
/// SyncGroup answer is still the coordinator's; the last committed offset per partition.
#[test]
fn the_coordinators_record_now_follows_replacements_syncs_and_commits() {
    let s = scenario("");
    let mut r = Recorder::new(&s, &names(), 1, false);
    let facts = [
        Fact::MemberAdded {
            member: 0,
            incarnation: 1,
            member_id: "a".into(),
        },
        Fact::MemberAdded {
            member: 1,
            incarnation: 1,
            member_id: "b".into(),
        },
        Fact::SyncGroupAnswered {
            member: 1,
            generation: 1,
            error: ErrorCode::None,
            assignment: vec![2, 3],
        },
        Fact::OffsetCommitted {
            member: 1,
            partition: 2,
            offset: 40,
        },
        Fact::OffsetCommitted {
            member: 1,
            partition: 2,
            offset: 41,
        },
        Fact::Crashed {
            member: 1,
            owned: vec![2, 3],
        },
        Fact::MemberReplaced {
            member: 0,
            member_id: "a2".into(),
        },
    ];
    for fact in &facts {
        r.observe(ms(5), fact);
    }
    let ids: BTreeSet<&str> = r.member_map().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["a2", "b"].into());
    assert_eq!(r.synced(1), Some(&(1, vec![2, 3])));
    assert_eq!((r.committed(2), r.committed(3)), (Some(41), None));
    assert!(r.finish().is_none(), "nothing kept over time unless asked");
}
