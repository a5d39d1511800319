//! The ledger fed by hand-written facts: ownership, pauses and their causes, the rebalance
//! under way and the changes each fact makes.

use super::*;
use crate::scenario::{load_str, LoadOptions};

fn ms(t: u64) -> SimTime {
    SimTime::from_millis(t)
}

fn ledger(members: u32, partitions: u32) -> Ledger {
    let text = format!(
        "name = \"l\"\nduration_ms = 300_000\n[[topics]]\nname = \"t\"\npartitions = {partitions}\n\
         [[members]]\nname = \"c\"\ncount = {members}\n"
    );
    let s = load_str("l.toml", &text, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<String> = (0..partitions).map(|p| format!("t-{p}")).collect();
    Ledger::new(&s, &names)
}

fn added(member: usize, id: &str) -> Fact {
    Fact::MemberAdded {
        member,
        incarnation: 1,
        member_id: id.to_string(),
    }
}

/// `member` is added as `id` and its join starts `generation`'s rebalance.
fn joins(member: usize, id: &str, generation: i32) -> [Fact; 2] {
    [
        added(member, id),
        Fact::RebalanceStarted {
            generation,
            trigger: Trigger::MemberJoined,
            member: Some(member),
        },
    ]
}

fn feed(l: &mut Ledger, at_ms: u64, facts: impl IntoIterator<Item = Fact>) -> Vec<Change> {
    let mut changes = Vec::new();
    for fact in facts {
        l.observe(ms(at_ms), &fact);
        changes.extend(l.change());
    }
    changes
}

/// c1 forms the group alone on every partition (generation 1) and processes them from 20 ms.
fn formed_by_c1(l: &mut Ledger, partitions: &[usize]) {
    feed(l, 0, [Fact::ProcessStarted { member: 0 }]);
    feed(l, 10, joins(0, "c1-id", 1));
    feed(
        l,
        15,
        [
            Fact::JoinCompleted {
                generation: 1,
                assignor: "range".into(),
            },
            Fact::Assigned {
                member: 0,
                partitions: partitions.to_vec(),
            },
            Fact::GroupStable { generation: 1 },
        ],
    );
    feed(
        l,
        20,
        [Fact::ProcessingStarted {
            member: 0,
            partitions: partitions.to_vec(),
        }],
    );
}

#[test]
fn a_member_cut_off_from_the_coordinator_is_marked_unreachable() {
    let mut l = ledger(1, 2);
    l.keep_marks(vec!["c1".into()], vec!["t-0".into(), "t-1".into()]);
    feed(&mut l, 0, [Fact::ProcessStarted { member: 0 }]);
    feed(&mut l, 16, [added(0, "c1-id")]);
    feed(
        &mut l,
        7_000,
        [Fact::CutOffFromCoordinator {
            member: 0,
            until: ms(9_000),
        }],
    );
    let marks = l.take_marks().expect("kept").marks;
    assert!(
        marks.contains(&(
            7_000_000,
            Mark::Unreachable {
                member: 0,
                cause: "cut_off",
                until_us: Some(9_000_000),
            }
        )),
        "{marks:#?}"
    );
}

#[test]
fn the_formation_is_no_rebalance_of_the_formed_group() {
    let mut l = ledger(1, 2);
    feed(&mut l, 0, [Fact::ProcessStarted { member: 0 }]);
    let changes = feed(&mut l, 10, joins(0, "c1-id", 1));
    assert_eq!(changes, []);
    assert!(!l.formed());
    let changes = feed(&mut l, 15, [Fact::GroupStable { generation: 1 }]);
    assert_eq!(changes, []);
    assert_eq!(
        l.formation(),
        Some(&Formation {
            generation: 1,
            start_ms: 10,
            end_ms: 15,
            duration_ms: 5,
        })
    );
}

#[test]
fn a_crash_detected_by_session_expiry_is_a_rebalance_caused_at_the_crash() {
    let mut l = ledger(2, 2);
    feed(&mut l, 0, [Fact::ProcessStarted { member: 1 }]);
    feed(&mut l, 10, [added(1, "c2-id")]);
    formed_by_c1(&mut l, &[0, 1]);
    feed(
        &mut l,
        1_000,
        [Fact::Crashed {
            member: 0,
            owned: vec![0, 1],
        }],
    );
    // The crash releases what c1 owned: unavailable from now, lost by the crash.
    assert_eq!(l.owner(0), None);
    assert_eq!(l.tallies().unavailable_since[0], Some(ms(1_000)));
    assert_eq!(l.tallies().lost_by_crash, 2);
    let changes = feed(
        &mut l,
        46_000,
        [
            Fact::MemberRemoved {
                member: 0,
                member_id: "c1-id".into(),
            },
            Fact::RebalanceStarted {
                generation: 2,
                trigger: Trigger::MemberExpired,
                member: Some(0),
            },
        ],
    );
    assert_eq!(changes, [Change::RebalanceStarted { cause: ms(1_000) }]);
    feed(
        &mut l,
        46_010,
        [Fact::JoinCompleted {
            generation: 2,
            assignor: "range".into(),
        }],
    );
    let changes = feed(
        &mut l,
        46_020,
        [
            Fact::Assigned {
                member: 1,
                partitions: vec![0, 1],
            },
            Fact::GroupStable { generation: 2 },
            Fact::ProcessingStarted {
                member: 1,
                partitions: vec![0, 1],
            },
        ],
    );
    assert_eq!(changes, [Change::RebalanceCompleted]);
    assert_eq!(
        l.completed_rebalances(),
        [CompletedRebalance {
            generation: 2,
            trigger: Trigger::MemberExpired,
            member: Some(0),
            cause: ms(1_000),
            start: ms(46_000),
            join_end: Some(ms(46_010)),
            end: ms(46_020),
            assignor: "range".into(),
        }]
    );
    let t = l.tallies();
    assert_eq!(l.owner(1), Some(1));
    assert_eq!((t.moved_total, t.moved_minimum), (2, 2));
    // 45.02 s unavailable each, all of it the crash's.
    assert_eq!(t.unavailable_us, [45_020_000, 45_020_000]);
    assert_eq!(l.unavailable_by_cause().member_crash, 90_040);
    assert_eq!(l.unavailable_by_cause().total(), 90_040);
    assert_eq!(t.longest_unavailable, Some((0, ms(1_000), 45_020_000)));
}

#[test]
fn a_zombies_late_assignment_takes_only_what_nobody_owns() {
    let mut l = ledger(2, 2);
    feed(&mut l, 0, [Fact::ProcessStarted { member: 1 }]);
    feed(&mut l, 10, [added(1, "c2-id")]);
    formed_by_c1(&mut l, &[0]);
    feed(
        &mut l,
        500,
        [
            Fact::MemberRemoved {
                member: 0,
                member_id: "c1-id".into(),
            },
            Fact::Assigned {
                member: 1,
                partitions: vec![0],
            },
        ],
    );
    // c1, removed, takes a late answer giving it t-0 (c2's now) and t-1 (nobody's).
    feed(
        &mut l,
        600,
        [Fact::Assigned {
            member: 0,
            partitions: vec![0, 1],
        }],
    );
    assert_eq!(l.owners(), [Some(1), Some(0)]);
}

#[test]
fn a_member_processes_its_records_as_the_owner_a_zombie_does_not() {
    let mut l = ledger(2, 2);
    formed_by_c1(&mut l, &[0, 1]);
    let changes = feed(
        &mut l,
        30,
        [
            Fact::Processed {
                member: 0,
                partition: 0,
                from: 0,
                to: 5,
            },
            Fact::Processed {
                member: 1,
                partition: 1,
                from: 0,
                to: 5,
            },
        ],
    );
    let by_owner: Vec<bool> = changes
        .iter()
        .map(|c| matches!(c, Change::Processed { by_owner: true, .. }))
        .collect();
    assert_eq!(by_owner, [true, false]);
}

#[test]
fn the_end_closes_open_intervals_and_keeps_what_was_open() {
    let mut l = ledger(1, 2);
    formed_by_c1(&mut l, &[0, 1]);
    feed(
        &mut l,
        1_000,
        [Fact::Stalled {
            member: 0,
            until: ms(90_000),
        }],
    );
    l.end(ms(3_000));
    let t = l.tallies();
    assert_eq!(t.unavailable_at_end, [0, 1]);
    assert_eq!(t.unavailable_us, [2_000_000, 2_000_000]);
    assert_eq!(l.unavailable_by_cause().member_stall, 4_000);
    // Stalled, it still holds both: never unowned.
    assert_eq!(t.unowned_at_end, Vec::<usize>::new());
}

/// A leader election stops t-0's fetches while c1 processes it (unavailable, the election's);
/// then the coordinator fails over and c1 revokes t-1 in the rebalance that follows (the
/// fail-over's, until the new coordinator has loaded the group and a session has passed).
#[test]
fn each_unavailable_interval_is_counted_to_what_began_it() {
    use crate::cluster::availability::GapCause;
    let mut l = ledger(1, 2);
    formed_by_c1(&mut l, &[0, 1]);
    let gap = |open| Fact::FetchGap {
        partition: 0,
        member: None,
        cause: GapCause::LeaderElection,
        open,
    };
    feed(&mut l, 1_000, [gap(true)]);
    feed(&mut l, 1_300, [gap(false)]);
    feed(&mut l, 2_000, [Fact::CoordinatorFailed { broker: 1 }]);
    feed(
        &mut l,
        2_500,
        [Fact::Revoked {
            member: 0,
            partitions: vec![1],
        }],
    );
    feed(
        &mut l,
        2_900,
        [
            Fact::Assigned {
                member: 0,
                partitions: vec![1],
            },
            Fact::ProcessingStarted {
                member: 0,
                partitions: vec![1],
            },
        ],
    );
    let by = l.unavailable_by_cause();
    assert_eq!((by.leader_election, by.coordinator_failover), (300, 400));
    assert_eq!(by.total(), 700);
    assert!(l.faults_seen());
    assert_eq!(
        l.coordinator_moves(),
        [CoordinatorEntry {
            at_ms: 2_000,
            event: "failed",
            broker: Some(1),
        }]
    );
}
