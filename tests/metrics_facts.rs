//! The metrics, fed by hand-written facts instead of whole runs (issue 71, item 4): each test
//! tells a short story in the facts the models record, in the order they record them, and reads
//! the figures the report makes of it. A figure that moves when the metrics are rebuilt (on the
//! group's history, say) fails here with the story that moved it.

use cgsim::check::Invariants;
use cgsim::cluster::PartitionSpace;
use cgsim::facts::{Fact, Miss};
use cgsim::history::Recorder;
use cgsim::messages::{ErrorCode, Trigger};
use cgsim::metrics::outcome::{Report, RunEnd};
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

/// The metrics of one story, and the group's history they read the coordinator's side from.
struct Story {
    scenario: Scenario,
    history: Recorder,
    metrics: Metrics,
    /// The topic's records, for lag (none without a producer).
    logs: Logs,
}

fn ms(ms: u64) -> SimTime {
    SimTime::from_micros(ms * 1000)
}

impl Story {
    fn new(scenario: Scenario) -> Story {
        let names = PartitionSpace::new(&scenario).names().to_vec();
        let history = Recorder::new(&scenario, &names, 0, false);
        let metrics = Metrics::new(&scenario, names);
        let logs = logs_of(&scenario);
        Story {
            scenario,
            history,
            metrics,
            logs,
        }
    }

    /// A lag sample at `at_ms`, as the world takes one.
    fn sample(&mut self, at_ms: u64) -> &mut Story {
        self.logs.generate_through(ms(at_ms));
        self.metrics
            .sample_lag(ms(at_ms), &self.logs, self.history.ledger());
        self
    }

    /// The facts recorded at `at_ms`, in order.
    fn at(&mut self, at_ms: u64, facts: impl IntoIterator<Item = Fact>) -> &mut Story {
        for fact in facts {
            self.history.observe(ms(at_ms), &fact);
            self.metrics.observe(ms(at_ms), &fact, &self.history);
        }
        self
    }

    fn report(mut self, end_ms: u64) -> Report {
        self.history.end(ms(end_ms));
        let mut logs = self.logs;
        logs.generate_through(ms(end_ms));
        self.metrics.finish(
            RunEnd {
                end: ms(end_ms),
                digest: "",
                events: 0,
                invariants: Invariants::default(),
            },
            &logs,
            &self.scenario,
            &self.history,
        )
    }
}

fn logs_of(scenario: &Scenario) -> Logs {
    let streams = RngStreams::new(scenario.seed);
    let space = PartitionSpace::new(scenario);
    Logs::new(scenario, &space, &streams)
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
    formed_by_c1_at_positions(story, []);
}

/// The formation, with the fetch positions c1 sets (`PositionSet`) before it processes.
fn formed_by_c1_at_positions(story: &mut Story, positions: impl IntoIterator<Item = Fact>) {
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
        .at(3028, positions)
        .at(3028, [processing(0, &[0, 1, 2, 3])]);
}

#[test]
fn an_eager_join_is_one_rebalance_that_stops_the_member_that_stays() {
    // c2 joins at 10 s; eager c1 revokes everything before its JoinGroup and gets t-2, t-3
    // back; c2 gets t-0, t-1 (the facts of `scale-out`'s shape on two members, trimmed).
    let mut story = Story::new(scenario(2, 4));
    formed_by_c1(&mut story);
    c2_joins_eagerly_taking(&mut story, &[2, 3], &[0, 1]);
    story
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
    // c1 (eager: it revokes its own t-0, t-1 before rejoining) takes all four.
    let mut story = Story::new(scenario(2, 4));
    formed_by_c1(&mut story);
    c2_joins_eagerly_taking(&mut story, &[0, 1], &[2, 3]);
    story
        .at(12_045, [processing(0, &[0, 1])])
        .at(12_050, [processing(1, &[2, 3])]);
    c2_crashes_and_expires(&mut story, &[2, 3]);
    story
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
        .at(10_019, c2_joins(2))
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

/// c2's process dies owning `owned` at 20 s; its session (45 s) expires at 65 s, and the
/// coordinator removes it and starts generation 3.
fn c2_crashes_and_expires(story: &mut Story, owned: &[usize]) {
    story
        .at(
            20_000,
            [Fact::Crashed {
                member: 1,
                owned: owned.to_vec(),
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
        );
}

/// c2 is added as c2-id and its join starts `generation`'s rebalance.
fn c2_joins(generation: i32) -> [Fact; 2] {
    [
        added(1, "c2-id"),
        Fact::RebalanceStarted {
            generation,
            trigger: Trigger::MemberJoined,
            member: Some(1),
        },
    ]
}

/// c2 joins at 10 s and the eager rebalance (generation 2) gives c1 t-2, t-3 and c2 t-0, t-1:
/// the eager story's facts, for the stories that need a rebalance and are about something else.
fn c2_joins_eagerly(story: &mut Story) {
    c2_joins_eagerly_taking(story, &[2, 3], &[0, 1]);
}

/// c2 joins at 10 s; eager c1 revokes everything before its JoinGroup; the SyncGroups give c1
/// `c1_gets` and c2 `c2_gets` (generation 2, range).
fn c2_joins_eagerly_taking(story: &mut Story, c1_gets: &[usize], c2_gets: &[usize]) {
    story
        .at(10_000, [Fact::ProcessStarted { member: 1 }])
        .at(
            10_008,
            [
                Fact::Joining { member: 1 },
                Fact::JoinGroupSent { member: 1 },
            ],
        )
        .at(10_019, c2_joins(2))
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
        .at(12_041, sync_ok(0, 2, c1_gets))
        .at(12_044, sync_ok(1, 2, c2_gets));
}

fn notification(outcome: Result<(), Miss>, latency_us: u64) -> Fact {
    Fact::Notification {
        outcome,
        latency_us,
    }
}

#[test]
fn the_local_join_counts_every_notification_once_and_a_rebalance_window_its_misses() {
    // The partition-local join looks each notification up on the member that owns its price
    // partition: a hit, or a miss for exactly one reason. The totals count every notification
    // of the run; a rebalance's window counts the misses from its start (PreparingRebalance)
    // until the next rebalance starts or the run ends.
    let mut story = Story::new(scenario(2, 4));
    formed_by_c1(&mut story);
    story
        // c1 restores the state of the price partition it was given at formation: after
        // formation, but before any rebalance, so in no window.
        .at(
            3_028,
            [Fact::RestoreStarted {
                member: 0,
                partition: 1,
                standby: false,
                records: 300,
                duration_us: 150_000,
            }],
        )
        // Steady state: two hits and one notification whose price was not produced yet.
        .at(4_000, [notification(Ok(()), 4_000)])
        .at(4_100, [notification(Ok(()), 2_999)])
        .at(4_200, [notification(Err(Miss::NoPriceYet), 1_000)]);
    c2_joins_eagerly(&mut story);
    story
        // Inside generation 2 (started at 10.019 s): a price in the log but not processed
        // yet here (c1 revoked everything at 12.030 s).
        .at(12_035, [notification(Err(Miss::OutOfOrder), 6_000)])
        // c2 replays t-1's changelog (the state c1 built); a notification for it meanwhile
        // misses as restoring.
        .at(
            12_050,
            [
                processing(0, &[2, 3]),
                processing(1, &[0, 1]),
                Fact::RestoreStarted {
                    member: 1,
                    partition: 1,
                    standby: false,
                    records: 1_000,
                    duration_us: 2_500_000,
                },
                // A standby replica already holds t-0's state: a takeover, nothing replayed.
                Fact::RestoreStarted {
                    member: 1,
                    partition: 0,
                    standby: true,
                    records: 0,
                    duration_us: 0,
                },
            ],
        )
        .at(13_000, [notification(Err(Miss::Restoring), 5_000)])
        // A notification read by the member that does not own its price partition.
        .at(13_100, [notification(Err(Miss::NotCoLocated), 3_000)])
        // A price before c2's start position, never restored.
        .at(13_200, [notification(Err(Miss::StateEmpty), 100_000)])
        .at(15_000, [notification(Ok(()), 5_999)]);
    let r = story.report(30_000);

    let j = &r.join;
    assert_eq!((j.notifications, j.local_hits), (8, 3));
    let m = &j.misses;
    assert_eq!(
        (
            m.not_co_located,
            m.no_price_yet,
            m.out_of_order,
            m.restoring,
            m.state_empty
        ),
        (1, 1, 1, 1, 1)
    );
    // Latencies in whole ms, truncated (2.999 ms is 2, 5.999 ms is 5): sorted 1 2 3 4 5 5 6
    // 100. Nearest rank: p50 is the 4th of 8 (ceil(0.5 x 8)), p99 the 8th (ceil(0.99 x 8)).
    assert_eq!(j.latency_ms.p50, 4);
    assert_eq!(j.latency_ms.p99, 100);

    // The window of generation 2: the misses from its start on, not the one before it.
    assert_eq!(r.rebalances.count, 1);
    let w = &r.rebalances.list[0].window;
    let wm = &w.join_misses;
    assert_eq!(
        (
            wm.not_co_located,
            wm.no_price_yet,
            wm.out_of_order,
            wm.restoring,
            wm.state_empty
        ),
        (1, 0, 1, 1, 1)
    );

    // Recovery: three restores, one a standby takeover; 1,300 records replayed over
    // 150 + 2,500 ms. The window has the two that began in it.
    let rec = &r.recovery;
    assert_eq!(
        (
            rec.restores,
            rec.standby_takeovers,
            rec.restored_records,
            rec.restore_ms
        ),
        (3, 1, 1_300, 2_650)
    );
    assert_eq!(
        (
            w.restores,
            w.standby_takeovers,
            w.restored_records,
            w.restore_ms
        ),
        (2, 1, 1_000, 2_500)
    );
}

fn position(partition: usize, position: u64) -> Fact {
    Fact::PositionSet {
        partition,
        position,
    }
}

fn processed(member: usize, partition: usize, from: u64, to: u64) -> Fact {
    Fact::Processed {
        member,
        partition,
        from,
        to,
    }
}

#[test]
fn records_are_counted_once_and_a_redelivery_after_a_crash_counts_twice() {
    // auto.offset.reset = latest: a group with no committed offsets starts at the log end, and
    // what was written before it is skipped. c2 takes t-0, t-1 from c1 at 12 s (c1 committed
    // where it was before revoking), auto-commits at 15 s, processes on, and crashes at 20 s:
    // c1 takes t-0, t-1 back from c2's last commit and processes again what c2 processed after
    // it.
    let top = "[group]\nauto_offset_reset = \"latest\"\n";
    let mut story = Story::new(scenario_with(2, 4, top, ""));
    // Formation's positions, from the log end: 12 records of t-0 and 9 of t-1 were written
    // before the group formed; t-2 and t-3 are empty (a position of 0 skips nothing).
    formed_by_c1_at_positions(
        &mut story,
        [
            position(0, 12),
            position(1, 9),
            position(2, 0),
            position(3, 0),
        ],
    );
    story.at(5_000, [processed(0, 0, 12, 20), processed(0, 1, 9, 15)]);
    c2_joins_eagerly(&mut story);
    story
        // c2's positions are c1's commits from its revocation: where c1 had got to; c1's on
        // t-2, t-3 are the (empty) log end again.
        .at(12_047, [position(2, 0), position(3, 0)])
        .at(12_049, [position(0, 20), position(1, 15)])
        .at(12_050, [processing(0, &[2, 3]), processing(1, &[0, 1])])
        .at(14_000, [processed(1, 0, 20, 35), processed(1, 1, 15, 30)])
        .at(
            15_000,
            [
                Fact::OffsetCommitted {
                    member: 1,
                    partition: 0,
                    offset: 35,
                },
                Fact::OffsetCommitted {
                    member: 1,
                    partition: 1,
                    offset: 30,
                },
            ],
        )
        // Processed, not committed: t-0's 35..50.
        .at(18_000, [processed(1, 0, 35, 50)]);
    c2_crashes_and_expires(&mut story, &[0, 1]);
    story
        .at(
            65_010,
            [
                Fact::Revoked {
                    member: 0,
                    partitions: vec![2, 3],
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
        // c2's last commits: t-0 at 35, so 35..50 comes again; t-1 at 30, where c2 had got to.
        .at(
            65_019,
            [
                position(0, 35),
                position(1, 30),
                position(2, 0),
                position(3, 0),
            ],
        )
        .at(65_020, [processing(0, &[0, 1, 2, 3])])
        .at(66_000, [processed(0, 0, 35, 70), processed(0, 1, 30, 40)]);
    let r = story.report(90_000);

    let rec = &r.records;
    // Every Processed counts: 8 + 6 by c1, 15 + 15 + 15 by c2, 35 + 10 by c1 again.
    assert_eq!(rec.processed, 8 + 6 + 15 + 15 + 15 + 35 + 10);
    // Twice: t-0's 35..50, processed by c2 and again by c1 from c2's commit. A position moved
    // back to where processing had got to (t-1 at 30, c2's at 20 and 15) re-delivers nothing.
    assert_eq!(rec.processed_twice, 15);
    // Skipped by the reset: what was written before formation's positions at the log end.
    assert_eq!(rec.skipped_by_offset_reset, 12 + 9);
}

/// Two members after the eager join: c1 processes t-2, t-3 and c2 t-0, t-1 from 12.050 s.
fn c1_and_c2_processing(story: &mut Story) {
    formed_by_c1(story);
    c2_joins_eagerly(story);
    story.at(12_050, [processing(0, &[2, 3]), processing(1, &[0, 1])]);
}

/// c1, alone in the group after c2 left it, rejoins eagerly and takes all of t-0..t-3
/// (generation 3): it revokes what it has at `revoke_ms`, and processes everything 25 ms later.
/// c2's poll loop stalls at 20 s (until 28 s) past its 5 s max.poll.interval.ms: its heartbeat
/// thread's poll timer fires at 25.003 s and the coordinator removes it, generation 3 begins.
fn c2_stalls_past_its_poll_interval(story: &mut Story) {
    story
        .at(
            20_000,
            [Fact::Stalled {
                member: 1,
                until: ms(28_000),
            }],
        )
        .at(
            25_003,
            [Fact::PollTimeout {
                member: 1,
                last_poll: ms(20_000),
            }],
        )
        .at(
            25_005,
            [
                Fact::MemberRemoved {
                    member: 1,
                    member_id: "c2-id".into(),
                },
                Fact::RebalanceStarted {
                    generation: 3,
                    trigger: Trigger::PollTimeout,
                    member: Some(1),
                },
            ],
        );
}

fn c1_takes_everything(story: &mut Story, revoke_ms: u64) {
    story
        .at(
            revoke_ms,
            [
                Fact::Revoked {
                    member: 0,
                    partitions: vec![2, 3],
                },
                Fact::JoinGroupSent { member: 0 },
            ],
        )
        .at(
            revoke_ms + 4,
            [Fact::JoinCompleted {
                generation: 3,
                assignor: "range".into(),
            }],
        )
        .at(revoke_ms + 8, [Fact::GroupStable { generation: 3 }])
        .at(revoke_ms + 12, sync_ok(0, 3, &[0, 1, 2, 3]))
        .at(revoke_ms + 25, [processing(0, &[0, 1, 2, 3])]);
}

#[test]
fn a_member_stalled_past_max_poll_interval_leaves_and_its_partitions_wait_from_the_stall() {
    // max.poll.interval.ms = 5 s. c2's poll loop stalls at 20 s inside a batch, for 8 s; its
    // heartbeat thread finds the interval passed at 25.003 s and sends a LeaveGroup: the
    // coordinator removes it and rebalances (generation 3), and c1 takes everything. When the
    // batch ends c2 finds its partitions gone (onPartitionsLost). The facts of `slow-member`'s
    // shape on two members, trimmed before c2 rejoins.
    let top = "[group]\nmax_poll_interval_ms = 5_000\n";
    let mut story = Story::new(scenario_with(2, 4, top, ""));
    c1_and_c2_processing(&mut story);
    c2_stalls_past_its_poll_interval(&mut story);
    c1_takes_everything(&mut story, 27_008);
    story.at(
        28_000,
        [
            Fact::StallEnded { member: 1 },
            Fact::Lost {
                member: 1,
                partitions: vec![0, 1],
            },
        ],
    );
    let r = story.report(30_000);

    assert_eq!(r.rebalances.count, 2);
    let e = &r.rebalances.list[1];
    assert_eq!((e.generation, e.trigger.as_str()), (3, "poll_timeout"));
    assert_eq!(e.member.as_deref(), Some("c2"));
    assert_eq!((e.start_ms, e.end_ms), (25_005, 27_016));
    // Detection runs from the stall (20 s), not from the LeaveGroup: max.poll.interval.ms and
    // the heartbeat thread's pass that noticed it.
    assert_eq!(e.detect_ms, 5_005);
    assert_eq!((e.join_ms, e.sync_ms), (Some(2_007), Some(4)));

    // t-0, t-1 stopped with the stall and waited until c1 processed them (27.033 s): what
    // began the outage was the stall, though the partitions changed owner in a rebalance.
    // Besides: 20 ms each of generation 2's hand-over (all four), and t-2, t-3's 25 ms from
    // c1's own revocation in generation 3, both rebalances.
    let u = &r.pauses.unavailable_ms;
    assert_eq!(u.summary.per.get("t-0"), Some(&(20 + 7_033)));
    assert_eq!(u.summary.per.get("t-2"), Some(&(20 + 25)));
    assert_eq!(u.by_cause.member_stall, 2 * 7_033);
    assert_eq!(u.by_cause.rebalance, 4 * 20 + 2 * 25);
    assert_eq!(u.by_cause.total(), u.summary.total);
    let longest = u.longest.as_ref().expect("a longest outage");
    assert_eq!(
        (longest.partition.as_str(), longest.start_ms, longest.ms),
        ("t-0", 20_000, 7_033)
    );
    // Unowned by the callbacks: the stalled c2 still held t-0, t-1 (no callback gave them up
    // until onPartitionsLost at 28 s, after c1's onPartitionsAssigned): only generation 2's
    // 14 ms (c1's revocation to c2's assignment). t-2 went unheld in both rebalances, from
    // c1's revocation to its assignment: 11 ms and 12 ms.
    assert_eq!(r.pauses.unowned_ms.per.get("t-0"), Some(&14));
    assert_eq!(r.pauses.unowned_ms.per.get("t-2"), Some(&(11 + 12)));

    // c1 stopped twice: 20 ms in generation 2, 25 ms in generation 3. c2, removed, is no
    // member that stays.
    let stw = &r.pauses.stop_the_world_ms;
    assert_eq!(stw.per.get("c1"), Some(&(20 + 25)));
    assert_eq!(stw.per.get("c2"), None);

    // onPartitionsLost by a live member: two partitions; no crash.
    assert_eq!((r.lost.total, r.lost.by_crash), (2, 0));
    // Generation 2: c1's four, generation 3: its two; c1 stays in both.
    assert_eq!(
        (r.revocations.total, r.revocations.by_staying_members),
        (6, 6)
    );
    // t-0, t-1 moved to c2 and back; both times two moves were the fewest (c1 alone in
    // generation 3 must take c2's two).
    assert_eq!((r.moved.total, r.moved.minimum), (4, 4));
    assert_eq!(r.final_assignment["c1"], ["t-0", "t-1", "t-2", "t-3"]);
}

#[test]
fn a_member_that_closes_revokes_before_it_leaves_and_detection_runs_from_the_close() {
    // c2 closes at 20 s: it commits, revokes t-0, t-1 (onPartitionsRevoked from close()),
    // stops, and its LeaveGroup makes the coordinator remove it and rebalance (generation 3,
    // trigger member_left); eager c1 learns of it from a heartbeat at 22.018 s and takes all
    // four (the facts of `scale-in`'s shape on two members).
    let mut story = Story::new(scenario(2, 4));
    c1_and_c2_processing(&mut story);
    story
        // (Its commit at 20.004 s is left out: no records in this story.)
        .at(20_000, [Fact::CloseRequested { member: 1 }])
        .at(
            20_007,
            [
                Fact::RevokedOnClose {
                    member: 1,
                    partitions: vec![0, 1],
                },
                Fact::ProcessStopped { member: 1 },
            ],
        )
        .at(
            20_011,
            [
                Fact::MemberRemoved {
                    member: 1,
                    member_id: "c2-id".into(),
                },
                Fact::RebalanceStarted {
                    generation: 3,
                    trigger: Trigger::MemberLeft,
                    member: Some(1),
                },
            ],
        );
    c1_takes_everything(&mut story, 22_018);
    let r = story.report(30_000);

    assert_eq!(r.rebalances.count, 2);
    let e = &r.rebalances.list[1];
    assert_eq!((e.generation, e.trigger.as_str()), (3, "member_left"));
    assert_eq!(e.member.as_deref(), Some("c2"));
    assert_eq!(
        (e.start_ms, e.end_ms, e.duration_ms),
        (20_011, 22_026, 2_015)
    );
    // From close() (20 s) to PreparingRebalance: the commit, the callback, the LeaveGroup.
    assert_eq!(e.detect_ms, 11);
    assert_eq!((e.join_ms, e.sync_ms), (Some(2_011), Some(4)));

    // The leaver's own revocation counts in the total, not among the staying members': c1's
    // four in generation 2 and two in generation 3 do.
    let rv = &r.revocations;
    assert_eq!((rv.total, rv.by_staying_members), (8, 6));
    assert_eq!(rv.per_member.get("c1"), Some(&6));
    assert_eq!(rv.per_member.get("c2"), Some(&2));

    // t-0, t-1: unprocessed from c2's revocation (20.007 s) until c1 processed them
    // (22.043 s), besides generation 2's 20 ms; a leave is a rebalance's doing.
    let u = &r.pauses.unavailable_ms;
    assert_eq!(u.summary.per.get("t-0"), Some(&(20 + 2_036)));
    assert_eq!(u.summary.per.get("t-2"), Some(&(20 + 25)));
    assert_eq!(u.by_cause.rebalance, u.summary.total);
    assert_eq!(u.summary.total, 2 * (20 + 2_036) + 2 * (20 + 25));
    // Unowned: from the revocation to the assignment that included them.
    assert_eq!(r.pauses.unowned_ms.per.get("t-0"), Some(&(14 + 2_023)));

    // c1, which stays, stopped in both rebalances; the leaver is not counted (it is gone,
    // and its revocation came before any rebalance began).
    let stw = &r.pauses.stop_the_world_ms;
    assert_eq!(stw.per.get("c1"), Some(&(20 + 25)));
    assert_eq!(stw.per.get("c2"), None);

    assert_eq!((r.moved.total, r.moved.minimum), (4, 4));
    assert_eq!((r.lost.total, r.lost.by_crash), (0, 0));
    assert_eq!(r.final_assignment["c1"], ["t-0", "t-1", "t-2", "t-3"]);
    assert!(!r.final_assignment.contains_key("c2"));
}

fn epoch(member: usize, epoch: i32) -> Fact {
    Fact::MemberEpochChanged { member, epoch }
}

fn owned(member: usize, partitions: &[usize]) -> Fact {
    Fact::OwnedReported {
        member,
        partitions: partitions.to_vec(),
    }
}

fn sent(member: usize, partitions: &[usize]) -> Fact {
    Fact::AssignmentSent {
        member,
        partitions: partitions.to_vec(),
    }
}

fn assigned(member: usize, partitions: &[usize]) -> Fact {
    Fact::Assigned {
        member,
        partitions: partitions.to_vec(),
    }
}

#[test]
fn a_consumer_protocol_join_is_one_epoch_bump_reconciled_one_heartbeat_at_a_time() {
    // KIP-848 (group.protocol = consumer), uniform assignor. c1 forms the group alone (group
    // epoch 2); c2 joins at 10 s (epoch 3): its first heartbeat gets nothing (t-2, t-3 are
    // still c1's), c1's next heartbeat gets [t-0, t-1] and it revokes t-2, t-3 and says so,
    // and c2's heartbeat after that gets them. Stable when every member has reported what the
    // target gives it. The facts of a real two-member run, trimmed (no records).
    let top = "[group]\nprotocol = \"consumer\"\n";
    let mut story = Story::new(scenario_with(2, 4, top, ""));
    story
        .at(0, [Fact::ProcessStarted { member: 0 }])
        .at(6, [Fact::Joining { member: 0 }])
        .at(
            10,
            [
                added(0, "c1-id"),
                owned(0, &[]),
                sent(0, &[0, 1, 2, 3]),
                Fact::RebalanceStarted {
                    generation: 2,
                    trigger: Trigger::MemberJoined,
                    member: Some(0),
                },
            ],
        )
        .at(15, [epoch(0, 2), Fact::ReconcilingStarted { member: 0 }])
        .at(
            306,
            [
                assigned(0, &[0, 1, 2, 3]),
                Fact::ReconcilingEnded { member: 0 },
            ],
        )
        .at(
            307,
            [
                owned(0, &[0, 1, 2, 3]),
                Fact::JoinCompleted {
                    generation: 2,
                    assignor: "uniform".into(),
                },
                Fact::GroupStable { generation: 2 },
            ],
        )
        .at(312, [processing(0, &[0, 1, 2, 3])])
        .at(10_000, [Fact::ProcessStarted { member: 1 }])
        .at(10_005, [Fact::Joining { member: 1 }])
        .at(
            10_009,
            [
                added(1, "c2-id"),
                owned(1, &[]),
                sent(1, &[]),
                Fact::RebalanceStarted {
                    generation: 3,
                    trigger: Trigger::MemberJoined,
                    member: Some(1),
                },
            ],
        )
        .at(
            10_014,
            [epoch(1, 3), Fact::ReconcilingStarted { member: 1 }],
        )
        .at(
            10_305,
            [assigned(1, &[]), Fact::ReconcilingEnded { member: 1 }],
        )
        .at(10_310, [sent(0, &[0, 1])])
        .at(10_314, [Fact::ReconcilingStarted { member: 0 }])
        .at(
            11_316,
            [Fact::Revoked {
                member: 0,
                partitions: vec![2, 3],
            }],
        )
        .at(
            11_816,
            [assigned(0, &[]), Fact::ReconcilingEnded { member: 0 }],
        )
        .at(11_821, [owned(0, &[0, 1])])
        .at(11_824, [epoch(0, 3)])
        .at(15_309, [sent(1, &[2, 3])])
        .at(15_311, [Fact::ReconcilingStarted { member: 1 }])
        .at(
            15_505,
            [assigned(1, &[2, 3]), Fact::ReconcilingEnded { member: 1 }],
        )
        .at(
            15_509,
            [
                owned(1, &[2, 3]),
                Fact::JoinCompleted {
                    generation: 3,
                    assignor: "uniform".into(),
                },
                Fact::GroupStable { generation: 3 },
            ],
        )
        .at(15_511, [processing(1, &[2, 3])]);
    let r = story.report(30_000);

    // The formation ends at the first Stable with every running member in it.
    let f = r.formation.as_ref().expect("formed");
    assert_eq!((f.generation, f.start_ms, f.end_ms), (2, 10, 307));

    // One rebalance: the epoch bump c2's join made, until every member had reconciled to its
    // target and reported it. No join or sync phase.
    assert_eq!(r.rebalances.count, 1);
    let e = &r.rebalances.list[0];
    assert_eq!((e.generation, e.trigger.as_str()), (3, "member_joined"));
    assert_eq!(e.member.as_deref(), Some("c2"));
    assert_eq!(
        (e.start_ms, e.end_ms, e.duration_ms),
        (10_009, 15_509, 5_500)
    );
    // From c2's first heartbeat (Joining, 10.005 s) to the bump.
    assert_eq!(e.detect_ms, 4);
    assert_eq!((e.join_ms, e.sync_ms), (None, None));
    assert_eq!(e.assignor, "uniform");
    assert_eq!(e.follow_up_ms, 0);

    // c1 never stopped: it kept t-0, t-1 throughout (it counts, with 0, as a member that owned
    // partitions when the rebalance began and stayed).
    assert_eq!(r.pauses.stop_the_world_ms.per.get("c1"), Some(&0));
    assert_eq!(r.pauses.stop_the_world_ms.max, 0);
    // t-2, t-3: from c1's revocation (11.316 s) until c2 processed them (15.511 s): mostly
    // c2's heartbeat interval, the wait for the coordinator to hand them on.
    let u = &r.pauses.unavailable_ms;
    assert_eq!(u.summary.per.get("t-0"), Some(&0));
    assert_eq!(u.summary.per.get("t-2"), Some(&4_195));
    assert_eq!(u.by_cause.rebalance, 2 * 4_195);
    // Unowned until c2's onPartitionsAssigned (15.505 s).
    assert_eq!(r.pauses.unowned_ms.per.get("t-3"), Some(&4_189));
    assert_eq!(
        (r.revocations.total, r.revocations.by_staying_members),
        (2, 2)
    );
    assert_eq!((r.moved.total, r.moved.minimum), (2, 2));
    assert_eq!(r.final_assignment["c1"], ["t-0", "t-1"]);
    assert_eq!(r.final_assignment["c2"], ["t-2", "t-3"]);

    // Kafka's own rebalance-latency under KIP-848: each stretch in RECONCILING, per member.
    // c1: 15 -> 306 (formation) and 10.314 -> 11.816 s; c2: 10.014 -> 10.305 s and 15.311 ->
    // 15.505 s. No JoinGroup, no SyncGroup: join-time and sync-time have no samples.
    let c1 = &r.kafka_metrics.per_member["c1"];
    assert_eq!(
        (c1.rebalance_total, c1.rebalance_latency_total),
        (2, 291 + 1_502)
    );
    assert_eq!(c1.rebalance_latency_max, Some(1_502));
    let c2 = &r.kafka_metrics.per_member["c2"];
    assert_eq!(
        (c2.rebalance_total, c2.rebalance_latency_total),
        (2, 291 + 194)
    );
    assert_eq!((c2.join_time_max, c2.join_total), (None, 0));
    assert_eq!((c2.sync_time_max, c2.sync_total), (None, 0));
    // Whole seconds since the last reconciliation ended: 30 - 15.505 s and 30 - 11.816 s.
    assert_eq!(c2.last_rebalance_seconds_ago, 14);
    assert_eq!(c1.last_rebalance_seconds_ago, 18);
    let g = &r.kafka_metrics.group;
    assert_eq!(g.rebalance_total, 4);
    assert_eq!(g.last_rebalance_seconds_ago, 14);
}

#[test]
fn a_zombie_batch_past_which_the_new_owner_reset_is_processed_once() {
    // The poll-timeout story with records (the order `slow-member` records them): c2 processed
    // t-0 up to 9 and never committed; its stalled batch holds 9..10. c1 takes t-0 with no
    // committed offset and auto.offset.reset = latest puts it at the log end, 17; the zombie
    // batch finishes afterwards. Record 9 was processed once (by the zombie), 10..16 never:
    // the reset skipped 7 records and nothing was processed twice (the metrics once said
    // skipped 8 and processed twice 1: the never-processed balance came out the same).
    let top = "[group]\nmax_poll_interval_ms = 5_000\nauto_offset_reset = \"latest\"\n";
    let mut story = Story::new(scenario_with(2, 4, top, ""));
    formed_by_c1(&mut story);
    c2_joins_eagerly(&mut story);
    story
        .at(12_049, [position(0, 0)])
        .at(12_050, [processing(0, &[2, 3]), processing(1, &[0, 1])])
        .at(19_000, [processed(1, 0, 0, 9)]);
    c2_stalls_past_its_poll_interval(&mut story);
    c1_takes_everything(&mut story, 27_008);
    story.at(27_030, [position(0, 17)]).at(
        28_000,
        [
            processed(1, 0, 9, 10),
            Fact::StallEnded { member: 1 },
            Fact::Lost {
                member: 1,
                partitions: vec![0, 1],
            },
        ],
    );
    let r = story.report(30_000);
    assert_eq!(r.records.processed, 10);
    assert_eq!(r.records.processed_twice, 0);
    assert_eq!(r.records.skipped_by_offset_reset, 7);
}

/// c1 owns t-0..t-3 and has processed nothing: every sample's lag is every log end summed; a
/// batch moves c1's position and takes its records off the next sample; the peak of a
/// partition is its largest lag at a sample; a rebalance's lag before it is the last sample at
/// or before its cause.
#[test]
fn lag_is_sampled_as_log_ends_minus_positions_and_a_rebalance_reads_it_at_its_cause() {
    let producer = "[[producers]]\ntopic = \"t\"\nrecords_per_sec = 400\n";
    let mut story = Story::new(scenario_with(2, 4, "", producer));
    formed_by_c1(&mut story);
    let end = |story: &Story, p: usize, at_ms: u64| story.logs.end_offset(p, ms(at_ms));
    story.sample(4_000);
    let first: Vec<u64> = (0..4).map(|p| end(&story, p, 4_000)).collect();
    let moved = first[0];
    assert!(moved > 0, "the producer wrote to t-0 by 4 s");
    story.at(
        4_500,
        [Fact::Processed {
            member: 0,
            partition: 0,
            from: 0,
            to: moved,
        }],
    );
    story.sample(5_000);
    let second: Vec<u64> = (0..4).map(|p| end(&story, p, 5_000)).collect();
    // c2 joins at 5.5 s: the rebalance's lag before it is the 5 s sample's.
    story
        .at(5_400, [Fact::ProcessStarted { member: 1 }])
        .at(5_500, [Fact::Joining { member: 1 }])
        .at(5_510, c2_joins(2))
        .at(
            5_600,
            [Fact::JoinCompleted {
                generation: 2,
                assignor: "range".into(),
            }],
        )
        .at(5_700, [Fact::GroupStable { generation: 2 }]);
    let r = story.report(6_000);
    let total_second = second.iter().sum::<u64>() - moved;
    assert_eq!(
        r.lag.series,
        [(4_000, first.iter().sum::<u64>()), (5_000, total_second)]
    );
    assert_eq!(r.rebalances.list.len(), 1);
    assert_eq!(r.rebalances.list[0].window.lag_before, total_second);
    // t-0's peak: its lag at 4 s (everything) or at 5 s (what came after the batch).
    assert_eq!(
        r.lag.peak.get("t-0").copied(),
        Some(first[0].max(second[0] - moved))
    );
    assert_eq!(r.lag.peak.get("t-1").copied(), Some(second[1]));
}
