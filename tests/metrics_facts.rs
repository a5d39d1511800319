//! The metrics, fed by hand-written facts instead of whole runs (issue 71, item 4): each test
//! tells a short story in the facts the models record, in the order they record them, and reads
//! the figures the report makes of it. A figure that moves when the metrics are rebuilt (on the
//! group's history, say) fails here with the story that moved it.

use cgsim::check::Invariants;
use cgsim::cluster::PartitionSpace;
use cgsim::facts::Fact;
use cgsim::messages::{ErrorCode, Trigger};
use cgsim::metrics::outcome::Report;
use cgsim::metrics::Metrics;
use cgsim::scenario::{load_str, Scenario};
use cgsim::sim::rng::RngStreams;
use cgsim::sim::SimTime;
use cgsim::workload::producer::Logs;

/// A group of `members` consumers named c1, c2, ... on one topic `t` of `partitions`, no
/// producer: the facts alone make the figures. `top` goes before the tables, `extra` after.
fn scenario_with(members: u32, partitions: u32, top: &str, extra: &str) -> Scenario {
    let text = format!(
        "name = \"facts\"\nseed = 1\nduration_ms = 60_000\n{top}\n[[topics]]\nname = \"t\"\n\
         partitions = {partitions}\n\n[[members]]\nname = \"c\"\ncount = {members}\n{extra}"
    );
    load_str("facts.toml", &text, &Default::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn scenario(members: u32, partitions: u32) -> Scenario {
    scenario_with(members, partitions, "", "")
}

/// The metrics of one story.
struct Story {
    scenario: Scenario,
    metrics: Metrics,
}

fn ms(ms: u64) -> SimTime {
    SimTime::from_micros(ms * 1000)
}

impl Story {
    fn new(scenario: Scenario) -> Story {
        let names = PartitionSpace::new(&scenario).names().to_vec();
        let metrics = Metrics::new(&scenario, names);
        Story { scenario, metrics }
    }

    /// The facts recorded at `at_ms`, in order.
    fn at(&mut self, at_ms: u64, facts: impl IntoIterator<Item = Fact>) -> &mut Story {
        for fact in facts {
            self.metrics.observe(ms(at_ms), &fact);
        }
        self
    }

    fn report(self, end_ms: u64) -> Report {
        let streams = RngStreams::new(self.scenario.seed);
        let space = PartitionSpace::new(&self.scenario);
        let logs = Logs::new(&self.scenario, &space, &streams);
        self.metrics.finish(
            ms(end_ms),
            "",
            0,
            Invariants::default(),
            &logs,
            &self.scenario,
        )
    }
}

fn added(member: usize, id: &str) -> Fact {
    Fact::MemberAdded {
        member,
        incarnation: 1,
        member_id: id.to_string(),
    }
}

fn sync_ok(member: usize, generation: i32, assignment: &[usize]) -> [Fact; 2] {
    [
        Fact::SyncGroupAnswered {
            member,
            generation,
            error: ErrorCode::None,
            assignment: assignment.to_vec(),
        },
        Fact::Assigned {
            member,
            partitions: assignment.to_vec(),
        },
    ]
}

fn processing(member: usize, partitions: &[usize]) -> Fact {
    Fact::ProcessingStarted {
        member,
        partitions: partitions.to_vec(),
    }
}

/// c1 forms the group alone on t-0..t-3 (generation 1): the formation, from c1's JoinGroup
/// that put the group in PreparingRebalance until Stable.
fn formed_by_c1(story: &mut Story) {
    story
        .at(0, [Fact::ProcessStarted { member: 0 }])
        .at(
            6,
            [
                Fact::Joining { member: 0 },
                Fact::JoinGroupSent { member: 0 },
            ],
        )
        .at(
            16,
            [
                added(0, "c1-id"),
                Fact::RebalanceStarted {
                    generation: 1,
                    trigger: Trigger::MemberJoined,
                    member: Some(0),
                },
            ],
        )
        .at(
            3016,
            [Fact::JoinCompleted {
                generation: 1,
                assignor: "range".into(),
            }],
        )
        .at(
            3019,
            [Fact::JoinGroupAnswered {
                member: 0,
                error: ErrorCode::None,
            }],
        )
        .at(3023, [Fact::GroupStable { generation: 1 }])
        .at(3025, sync_ok(0, 1, &[0, 1, 2, 3]))
        .at(3028, [processing(0, &[0, 1, 2, 3])]);
}

#[test]
fn an_eager_join_is_one_rebalance_that_stops_the_member_that_stays() {
    // c2 joins at 10 s; eager c1 revokes everything before its JoinGroup and gets t-2, t-3
    // back; c2 gets t-0, t-1 (the facts of `scale-out`'s shape on two members, trimmed).
    let mut story = Story::new(scenario(2, 4));
    formed_by_c1(&mut story);
    story
        .at(10_000, [Fact::ProcessStarted { member: 1 }])
        .at(
            10_008,
            [
                Fact::Joining { member: 1 },
                Fact::JoinGroupSent { member: 1 },
            ],
        )
        .at(
            10_019,
            [
                added(1, "c2-id"),
                Fact::RebalanceStarted {
                    generation: 2,
                    trigger: Trigger::MemberJoined,
                    member: Some(1),
                },
            ],
        )
        .at(
            12_030,
            [
                Fact::Revoked {
                    member: 0,
                    partitions: vec![0, 1, 2, 3],
                },
                Fact::JoinGroupSent { member: 0 },
            ],
        )
        .at(
            12_033,
            [Fact::JoinCompleted {
                generation: 2,
                assignor: "range".into(),
            }],
        )
        .at(12_038, [Fact::GroupStable { generation: 2 }])
        .at(12_041, sync_ok(0, 2, &[2, 3]))
        .at(12_044, sync_ok(1, 2, &[0, 1]))
        .at(12_045, [processing(0, &[2, 3])])
        .at(12_050, [processing(1, &[0, 1])]);
    let r = story.report(30_000);

    let f = r.formation.as_ref().expect("formed");
    assert_eq!(
        (f.generation, f.start_ms, f.end_ms, f.duration_ms),
        (1, 16, 3023, 3007)
    );

    assert_eq!(r.rebalances.count, 1);
    let e = &r.rebalances.list[0];
    assert_eq!((e.generation, e.trigger.as_str()), (2, "member_joined"));
    assert_eq!(e.member.as_deref(), Some("c2"));
    assert_eq!(
        (e.start_ms, e.end_ms, e.duration_ms),
        (10_019, 12_038, 2019)
    );
    // Detection: from c2's JoinGroup (Joining, 10.008 s) to PreparingRebalance.
    assert_eq!(e.detect_ms, 11);
    assert_eq!((e.join_ms, e.sync_ms), (Some(2014), Some(5)));
    assert_eq!(e.assignor, "range");

    // c1 stopped from its revocation (12.030 s) until it processed again (12.045 s).
    let stw = &r.pauses.stop_the_world_ms;
    assert_eq!(stw.per.get("c1"), Some(&15));
    assert_eq!(
        stw.per.get("c2"),
        None,
        "a member that never processed never paused"
    );
    assert_eq!(stw.max, 15);

    // Unavailable: processed by nobody, from the revocation until the new owner processes.
    let u = &r.pauses.unavailable_ms;
    assert_eq!(u.summary.per.get("t-0"), Some(&20));
    assert_eq!(u.summary.per.get("t-2"), Some(&15));
    assert_eq!(u.summary.total, 70);
    assert_eq!(u.by_cause.rebalance, 70);
    // Unowned: from the revocation until the assignment.
    assert_eq!(r.pauses.unowned_ms.per.get("t-0"), Some(&14));
    assert_eq!(r.pauses.unowned_ms.per.get("t-3"), Some(&11));

    assert_eq!(r.revocations.total, 4);
    assert_eq!(r.revocations.by_staying_members, 4);
    // Two partitions changed owner, and two was the fewest a balanced assignment needed.
    assert_eq!((r.moved.total, r.moved.minimum), (2, 2));
    assert_eq!((r.lost.total, r.lost.by_crash), (0, 0));
    assert_eq!(r.final_assignment["c1"], ["t-2", "t-3"]);
    assert_eq!(r.final_assignment["c2"], ["t-0", "t-1"]);
}

#[test]
fn a_crash_is_detected_by_the_session_and_its_partitions_are_lost_to_the_group() {
    // Two members; c2 crashes owning t-2, t-3 at 20 s; its session expires 45 s later, and
    // c1 (cooperative here: it keeps what it has) takes them.
    let mut story = Story::new(scenario(2, 4));
    formed_by_c1(&mut story);
    story
        .at(10_000, [Fact::ProcessStarted { member: 1 }])
        .at(
            10_008,
            [
                Fact::Joining { member: 1 },
                Fact::JoinGroupSent { member: 1 },
            ],
        )
        .at(
            10_019,
            [
                added(1, "c2-id"),
                Fact::RebalanceStarted {
                    generation: 2,
                    trigger: Trigger::MemberJoined,
                    member: Some(1),
                },
            ],
        )
        .at(
            12_030,
            [
                Fact::Revoked {
                    member: 0,
                    partitions: vec![0, 1, 2, 3],
                },
                Fact::JoinGroupSent { member: 0 },
            ],
        )
        .at(
            12_033,
            [Fact::JoinCompleted {
                generation: 2,
                assignor: "range".into(),
            }],
        )
        .at(12_038, [Fact::GroupStable { generation: 2 }])
        .at(12_041, sync_ok(0, 2, &[0, 1]))
        .at(12_044, sync_ok(1, 2, &[2, 3]))
        .at(12_045, [processing(0, &[0, 1])])
        .at(12_050, [processing(1, &[2, 3])])
        .at(
            20_000,
            [Fact::Crashed {
                member: 1,
                owned: vec![2, 3],
            }],
        )
        .at(
            65_000,
            [
                Fact::MemberRemoved {
                    member: 1,
                    member_id: "c2-id".into(),
                },
                Fact::RebalanceStarted {
                    generation: 3,
                    trigger: Trigger::MemberExpired,
                    member: Some(1),
                },
            ],
        )
        .at(
            65_010,
            [
                Fact::Revoked {
                    member: 0,
                    partitions: vec![0, 1],
                },
                Fact::JoinGroupSent { member: 0 },
            ],
        )
        .at(
            65_012,
            [Fact::JoinCompleted {
                generation: 3,
                assignor: "range".into(),
            }],
        )
        .at(65_015, [Fact::GroupStable { generation: 3 }])
        .at(65_017, sync_ok(0, 3, &[0, 1, 2, 3]))
        .at(65_020, [processing(0, &[0, 1, 2, 3])]);
    let r = story.report(90_000);

    assert_eq!(r.rebalances.count, 2);
    let e = &r.rebalances.list[1];
    assert_eq!((e.generation, e.trigger.as_str()), (3, "member_expired"));
    assert_eq!(e.member.as_deref(), Some("c2"));
    // Detection runs from the crash, not from the expiry.
    assert_eq!(e.detect_ms, 45_000);
    assert_eq!((e.start_ms, e.end_ms), (65_000, 65_015));

    // The crashed member's partitions went unprocessed from the crash until c1 processed them
    // (45.020 s), besides the 20 ms of generation 2's hand-over.
    let u = &r.pauses.unavailable_ms;
    assert_eq!(u.summary.per.get("t-2"), Some(&(20 + 45_020)));
    // The whole outage counts to the crash that began it; c1's own revocation of t-0, t-1
    // (10 ms each) and generation 2's 70 ms to rebalances.
    assert_eq!(u.by_cause.member_crash, 2 * 45_020);
    assert_eq!(u.by_cause.rebalance, 70 + 2 * 10);
    let longest = u.longest.as_ref().expect("a longest outage");
    assert_eq!(
        (longest.partition.as_str(), longest.start_ms),
        ("t-2", 20_000)
    );
    // No live member called onPartitionsLost; the crash took two partitions with it.
    assert_eq!((r.lost.total, r.lost.by_crash), (0, 2));
    assert_eq!(r.final_assignment["c1"], ["t-0", "t-1", "t-2", "t-3"]);
}

#[test]
fn a_topic_that_grows_breaks_co_partitioning_from_the_fact_on() {
    let extra = "\n[[topics]]\nname = \"u\"\npartitions = 2\n\n[[timeline]]\nat_ms = 5_000\n\
                 action = \"add_partitions\"\ntopic = \"t\"\npartitions = 3\n";
    let top = "co_partitioned = [[\"t\", \"u\"]]\n";
    let mut story = Story::new(scenario_with(1, 2, top, extra));
    story.at(
        5_000,
        [Fact::PartitionsAdded {
            topic: 0,
            counts: vec![3, 2],
        }],
    );
    let r = story.report(10_000);
    assert_eq!(r.co_partitioning.len(), 1);
    let b = &r.co_partitioning[0];
    assert_eq!(b.at_ms, 5_000);
    assert_eq!(b.topics, ["t", "u"]);
    assert_eq!(b.partition_counts, [3, 2]);
    assert_eq!(b.unmatched_indexes, [2]);
}

#[test]
fn a_member_cut_off_from_the_coordinator_is_marked_unreachable_in_the_history() {
    let mut story = Story::new(scenario(1, 2));
    story.metrics.record_history();
    story
        .at(0, [Fact::ProcessStarted { member: 0 }])
        .at(16, [added(0, "c1-id")])
        .at(
            7_000,
            [Fact::CutOffFromCoordinator {
                member: 0,
                until: ms(9_000),
            }],
        );
    let history = story.metrics.take_history().expect("recorded");
    let marks: Vec<String> = history
        .marks
        .iter()
        .map(|(at, m)| format!("{at} {m:?}"))
        .collect();
    assert!(
        marks.contains(
            &"7000000 Unreachable { member: 0, cause: \"cut_off\", until_us: Some(9000000) }"
                .to_string()
        ),
        "{marks:#?}"
    );
}

#[test]
fn a_cooperative_join_stops_nobody_and_its_follow_up_is_timed_on_the_rebalance_that_caused_it() {
    // c2 joins at 10 s under cooperative-sticky: c1 rejoins without revoking, keeps t-0, t-1,
    // revokes t-2, t-3 after the SyncGroup and asks for the follow-up, which hands them to c2
    // (the facts of a real two-member run, trimmed).
    let mut story = Story::new(scenario(2, 4));
    formed_by_c1(&mut story);
    story
        .at(10_000, [Fact::ProcessStarted { member: 1 }])
        .at(
            10_008,
            [
                Fact::Joining { member: 1 },
                Fact::JoinGroupSent { member: 1 },
            ],
        )
        .at(
            10_019,
            [
                added(1, "c2-id"),
                Fact::RebalanceStarted {
                    generation: 2,
                    trigger: Trigger::MemberJoined,
                    member: Some(1),
                },
            ],
        )
        .at(12_030, [Fact::JoinGroupSent { member: 0 }])
        .at(
            12_033,
            [Fact::JoinCompleted {
                generation: 2,
                assignor: "cooperative-sticky".into(),
            }],
        )
        .at(12_038, [Fact::GroupStable { generation: 2 }])
        .at(
            12_041,
            [
                Fact::SyncGroupAnswered {
                    member: 0,
                    generation: 2,
                    error: ErrorCode::None,
                    assignment: vec![0, 1],
                },
                Fact::Kept {
                    member: 0,
                    partitions: vec![0, 1],
                },
                Fact::Revoked {
                    member: 0,
                    partitions: vec![2, 3],
                },
                Fact::Assigned {
                    member: 0,
                    partitions: vec![],
                },
                processing(0, &[]),
            ],
        )
        .at(12_044, sync_ok(1, 2, &[]))
        .at(12_045, [Fact::JoinGroupSent { member: 0 }])
        .at(
            12_047,
            [Fact::RebalanceStarted {
                generation: 3,
                trigger: Trigger::FollowUp,
                member: Some(0),
            }],
        )
        .at(15_043, [Fact::JoinGroupSent { member: 1 }])
        .at(
            15_047,
            [Fact::JoinCompleted {
                generation: 3,
                assignor: "cooperative-sticky".into(),
            }],
        )
        .at(15_053, [Fact::GroupStable { generation: 3 }])
        .at(15_057, sync_ok(1, 3, &[2, 3]))
        .at(
            15_058,
            [
                Fact::SyncGroupAnswered {
                    member: 0,
                    generation: 3,
                    error: ErrorCode::None,
                    assignment: vec![0, 1],
                },
                Fact::Kept {
                    member: 0,
                    partitions: vec![0, 1],
                },
            ],
        )
        .at(15_065, [processing(1, &[2, 3])]);
    let r = story.report(30_000);

    assert_eq!(r.rebalances.count, 2);
    let (join, follow_up) = (&r.rebalances.list[0], &r.rebalances.list[1]);
    assert_eq!(
        (join.generation, join.trigger.as_str()),
        (2, "member_joined")
    );
    // From the join's end (Stable at 12.038 s) to its follow-up's (15.053 s).
    assert_eq!(join.follow_up_ms, 3015);
    assert_eq!(
        (follow_up.generation, follow_up.trigger.as_str()),
        (3, "follow_up")
    );
    assert_eq!(follow_up.member.as_deref(), Some("c1"));
    assert_eq!(
        (follow_up.start_ms, follow_up.end_ms, follow_up.follow_up_ms),
        (12_047, 15_053, 0)
    );

    // c1 never stopped: it processed t-0, t-1 throughout.
    assert_eq!(r.pauses.stop_the_world_ms.per.get("c1"), Some(&0));
    assert_eq!(r.pauses.stop_the_world_ms.max, 0);
    let u = &r.pauses.unavailable_ms;
    assert_eq!(u.summary.per.get("t-0"), Some(&0));
    // t-2, t-3: from c1's revocation after the first SyncGroup until c2 processed them.
    assert_eq!(u.summary.per.get("t-2"), Some(&3024));
    assert_eq!(
        (r.revocations.total, r.revocations.by_staying_members),
        (2, 2)
    );
    assert_eq!((r.moved.total, r.moved.minimum), (2, 2));
    assert_eq!(r.final_assignment["c2"], ["t-2", "t-3"]);
}
