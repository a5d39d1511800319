//! What a run measured: observers only, fed the facts the state machines record (the world
//! calls [`Metrics::observe`] for every one, in order) and a few world events (lag samples,
//! added partitions); nothing here feeds back into the simulation, and no model imports it.
//!
//! One concern per file, over one shared record of the truth (`ledger.rs`: members, who owns
//! and who processes each partition): `pauses.rs`, `rebalances.rs`, `lag.rs`, `records.rs`,
//! `join.rs`; `outcome.rs` is the report's schema and builds it at the end of the run. The
//! safety and liveness properties are the checkers' (`crate::check`), not figures.
//!
//! Definitions are DESIGN.md's ("What is measured", "What counts").

mod describe;
mod faults;
mod join;
mod kafka;
mod lag;
mod ledger;
mod migration;
pub mod outcome;
mod pauses;
mod rebalances;
mod records;
mod stats;

pub use faults::{ByCause, CoordinatorEntry, PauseCause};
pub use migration::Migration;

pub use stats::{nearest_rank, Summary};

use crate::facts::Miss;
use crate::facts::{Fact, MemberIds};
use crate::history::{Mark, RunMarks};
use crate::messages::Trigger;
use crate::scenario::Scenario;
use crate::sim::SimTime;
use crate::workload::producer::Logs;
use outcome::{
    CoPartitionBreak, Formation, JoinMetrics, MemberError, RebalanceEntry, Recovery, Window,
};
use std::collections::{BTreeMap, BTreeSet};

/// A rebalance from PreparingRebalance until Stable.
struct Running {
    generation: i32,
    trigger: Trigger,
    member: Option<usize>,
    start: SimTime,
    cause: SimTime,
    join_end: Option<SimTime>,
    /// The group's protocol name its join phase chose.
    assignor: String,
    /// Members that owned partitions when it began (stop-the-world counts only them).
    owners_at_start: BTreeSet<usize>,
    /// Members in the group when it began.
    members_at_start: BTreeSet<usize>,
    revoked_by: BTreeMap<usize, u64>,
    /// Each partition's last owner when it began, for `moved`.
    last_owner_at_start: Vec<Option<usize>>,
}

pub struct Metrics {
    member_names: Vec<String>,
    member_ids: MemberIds,
    partition_names: Vec<String>,
    started_at: Vec<SimTime>,
    /// When the member last started joining as a new member (no member id).
    joining_at: Vec<SimTime>,
    close_requested_at: Vec<Option<SimTime>>,
    crashed_at: Vec<Option<SimTime>>,
    stall_started_at: Vec<Option<SimTime>>,
    stalled_parts: Vec<Vec<usize>>,
    in_group: Vec<bool>,
    /// Per member: what it owned when the coordinator removed it, still held by its process
    /// (no callback has given it up): its own again once its next membership is sent it.
    held_when_removed: Vec<Vec<usize>>,
    /// KIP-848 answers of a member's previous membership, taken after it rejoined.
    late: crate::facts::LateAnswers,
    /// Processes running now (started, not stopped or crashed).
    running_process: Vec<bool>,
    /// KIP-848: members join one heartbeat at a time (no initial delay), so the group is
    /// formed at the first Stable with every running member in it.
    incremental_join: bool,
    // Ownership and processing truth, per partition.
    owner: Vec<Option<usize>>,
    /// Partitions each member owns (the count of `owner` entries naming it).
    owned_count: Vec<u32>,
    last_owner: Vec<Option<usize>>,
    active: Vec<Option<usize>>,
    unavailable_since: Vec<Option<SimTime>>,
    unavailable_us: Vec<u64>,
    /// The longest single outage closed so far: partition, start, µs (the first of equals).
    longest_unavailable: Option<(usize, SimTime, u64)>,
    /// Live members whose rebalance callbacks say they hold each partition (client-side
    /// ownership: a stalled or removed member still holds until its revoke or lost callback).
    holders: Vec<u32>,
    unowned_since: Vec<Option<SimTime>>,
    unowned_us: Vec<u64>,
    // Group history.
    first_rebalance_start: Option<SimTime>,
    formation: Option<Formation>,
    running: Option<Running>,
    rebalances: Vec<RebalanceEntry>,
    // Pauses.
    paused_since: Vec<Option<SimTime>>,
    stop_the_world_us: Vec<u64>,
    stopped_members: BTreeSet<usize>,
    // Counters.
    revocations_total: u64,
    revocations_by_staying: u64,
    revocations_per_member: Vec<u64>,
    lost_total: u64,
    lost_by_crash: u64,
    moved_total: u64,
    moved_minimum: u64,
    // Records.
    accounted_upto: Vec<u64>,
    processed: u64,
    processed_twice: u64,
    skipped: u64,
    /// The record ranges an offset reset skipped that nobody has processed since, for the
    /// partitions that have any: a zombie batch may still process them.
    skipped_ranges: BTreeMap<usize, Vec<(u64, u64)>>,
    /// Per member, records fetched from a replica in another rack; `None` without broker racks.
    cross_rack_fetched: Option<Vec<u64>>,
    co_partitioning: Vec<CoPartitionBreak>,
    /// Partitions that exist now (added partitions exist from when they are added).
    partition_exists: Vec<bool>,
    partitions_added_at: Option<SimTime>,
    /// Each scenario topic's name and most partitions (the partition space's layout), and the
    /// co-partitioned topics, for what a `PartitionsAdded` fact changes.
    topics: Vec<TopicLayout>,
    topics_co_partitioned: Vec<Vec<usize>>,
    join: JoinMetrics,
    join_latencies_ms: Vec<u64>,
    recovery: Recovery,
    /// The processed position of each partition's current owner.
    position: Vec<u64>,
    lag_peak: Vec<u64>,
    /// What the lag samples keep between them (`lag.rs`).
    lag: lag::LagState,
    lag_series: Vec<(u64, u64)>,
    last_total_lag: u64,
    /// The current rebalance window's figures, and the entry they belong to once it is Stable.
    window: Window,
    window_entry: Option<usize>,
    batch_records: u64,
    history: Option<RunMarks>,
    /// For the history: the member id of a member that cannot reach the coordinator (crashed,
    /// cut off) while the coordinator still counts it, until its entry is removed or replaced.
    unreachable_id: Vec<Option<String>>,
    /// Broker and network faults' figures (`faults.rs`).
    faults: faults::FaultFigures,
    errors: Vec<MemberError>,
    /// The group's conversions between the protocols (`migration.rs`).
    migrations: Vec<Migration>,
    /// Kafka's consumer sensors, per member (`kafka.rs`).
    sensors: Vec<kafka::Sensors>,
}

fn ms(t: SimTime) -> u64 {
    t.as_millis()
}

/// A scenario topic as the partition space lays it out.
struct TopicLayout {
    name: String,
    max_partitions: u32,
}

impl Metrics {
    pub fn new(scenario: &Scenario, partition_names: Vec<String>) -> Self {
        let n = scenario.members.len();
        let p = partition_names.len();
        Metrics {
            member_names: scenario.members.iter().map(|m| m.name.clone()).collect(),
            member_ids: MemberIds::default(),
            partition_names,
            started_at: vec![SimTime::ZERO; n],
            joining_at: vec![SimTime::ZERO; n],
            close_requested_at: vec![None; n],
            crashed_at: vec![None; n],
            stall_started_at: vec![None; n],
            stalled_parts: vec![Vec::new(); n],
            in_group: vec![false; n],
            held_when_removed: vec![Vec::new(); n],
            late: Default::default(),
            running_process: vec![false; n],
            incremental_join: scenario.group.protocol == crate::scenario::Protocol::Consumer,
            owner: vec![None; p],
            owned_count: vec![0; n],
            last_owner: vec![None; p],
            active: vec![None; p],
            unavailable_since: vec![None; p],
            unavailable_us: vec![0; p],
            longest_unavailable: None,
            holders: vec![0; p],
            unowned_since: vec![None; p],
            unowned_us: vec![0; p],
            first_rebalance_start: None,
            formation: None,
            running: None,
            rebalances: Vec::new(),
            paused_since: vec![None; n],
            stop_the_world_us: vec![0; n],
            stopped_members: BTreeSet::new(),
            revocations_total: 0,
            revocations_by_staying: 0,
            revocations_per_member: vec![0; n],
            lost_total: 0,
            lost_by_crash: 0,
            moved_total: 0,
            moved_minimum: 0,
            accounted_upto: vec![0; p],
            processed: 0,
            processed_twice: 0,
            skipped: 0,
            skipped_ranges: BTreeMap::new(),
            cross_rack_fetched: (!scenario.cluster.broker_racks.is_empty()).then(|| vec![0; n]),
            co_partitioning: Vec::new(),
            partition_exists: scenario
                .topics
                .iter()
                .flat_map(|t| (0..t.max_partitions()).map(move |p| p < t.partitions))
                .collect(),
            partitions_added_at: None,
            topics: scenario
                .topics
                .iter()
                .map(|t| TopicLayout {
                    name: t.name.clone(),
                    max_partitions: t.max_partitions(),
                })
                .collect(),
            topics_co_partitioned: scenario.co_partitioned.clone(),
            join: JoinMetrics::default(),
            join_latencies_ms: Vec::new(),
            recovery: Recovery::default(),
            position: vec![0; p],
            lag_peak: vec![0; p],
            lag: lag::LagState::new(p),
            lag_series: Vec::new(),
            last_total_lag: 0,
            window: Window::default(),
            window_entry: None,
            batch_records: scenario.group.max_poll_records,
            history: None,
            unreachable_id: vec![None; n],
            faults: faults::FaultFigures::new(scenario, p),
            errors: Vec::new(),
            migrations: Vec::new(),
            sensors: vec![kafka::Sensors::default(); n],
        }
    }

    /// Keep the [`RunMarks`] of the run.
    pub fn record_history(&mut self) {
        self.history = Some(RunMarks {
            member_names: self.member_names.clone(),
            partition_names: self.partition_names.clone(),
            marks: Vec::new(),
        });
    }

    fn mark(&mut self, now: SimTime, mark: Mark) {
        if let Some(h) = self.history.as_mut() {
            h.marks.push((now.as_micros(), mark));
        }
    }

    /// The recorded history, if any.
    pub fn take_history(&mut self) -> Option<RunMarks> {
        self.history.take()
    }

    fn formed(&self) -> bool {
        self.formation.is_some()
    }

    /// Takes in one fact from a model (the world calls this for every fact, in order).
    pub fn observe(&mut self, now: SimTime, fact: &Fact) {
        // The Kafka sensors (`kafka.rs`) see the facts they concern; the hot ones (every batch,
        // every notification) go to the figures alone.
        match fact {
            Fact::MemberAdded { member, .. } => {
                self.late.observe(fact);
                if self.member_ids.observe(fact) {
                    self.member_added(*member)
                }
            }
            Fact::MemberReplaced { member, .. } => {
                self.late.observe(fact);
                self.member_replaced(now, *member);
                self.member_ids.observe(fact);
                self.member_added(*member)
            }
            Fact::MemberRemoved { member, member_id } => {
                self.late.observe(fact);
                self.member_removed(now, *member, member_id)
            }
            Fact::RebalanceStarted {
                generation,
                trigger,
                member,
            } => self.rebalance_started(now, *generation, *trigger, *member),
            Fact::JoinCompleted {
                generation,
                assignor,
            } => self.join_completed(now, *generation, assignor),
            Fact::GroupStable { generation } => self.group_stable(now, *generation),
            Fact::GroupEmpty => self.group_empty(now),
            Fact::SyncGroupAnswered { .. }
            | Fact::JoinGroupSent { .. }
            | Fact::JoinGroupAnswered { .. }
            | Fact::SyncGroupRead { .. }
            | Fact::ListenerTime { .. }
            | Fact::FetchLag { .. }
            | Fact::ReconcilingStarted { .. }
            | Fact::ReconcilingEnded { .. }
            | Fact::HeartbeatFailed { .. } => self.observe_sensors(now, fact),
            Fact::ProcessStarted { member } => {
                self.observe_sensors(now, fact);
                self.process_started(now, *member)
            }
            Fact::Joining { member } => self.joining(now, *member),
            Fact::CloseRequested { member } => self.close_requested(now, *member),
            Fact::ProcessStopped { member } => {
                self.observe_sensors(now, fact);
                self.process_stopped(now, *member)
            }
            Fact::Crashed { member, owned } => {
                self.observe_sensors(now, fact);
                self.crashed(now, *member, owned)
            }
            Fact::Stalled { member, until } => self.stalled(now, *member, *until),
            Fact::StallEnded { member } => self.stall_ended(now, *member),
            Fact::FatalError { member, error } => self.fatal_error(now, *member, error),
            Fact::Assigned { member, partitions } => {
                self.late.observe(fact);
                self.assigned(now, *member, partitions)
            }
            Fact::Kept { member, partitions } => self.kept(now, *member, partitions),
            Fact::Revoked { member, partitions } => self.revoked(now, *member, partitions),
            Fact::RevokedOnClose { member, partitions } => {
                self.revoked_on_close(now, *member, partitions)
            }
            Fact::Lost { member, partitions } => self.lost(now, *member, partitions),
            Fact::ProcessingStarted { member, partitions } => {
                self.observe_sensors(now, fact);
                self.processing_started(now, *member, partitions)
            }
            Fact::PositionSet {
                partition,
                position,
            } => self.position_set(*partition, *position),
            Fact::Processed {
                member,
                partition,
                from,
                to,
            } => self.processed(*member, *partition, *from, *to),
            Fact::CrossRackFetched {
                member, records, ..
            } => self.cross_rack(*member, *records),
            Fact::Notification {
                outcome,
                latency_us,
            } => self.notification(*outcome, *latency_us),
            Fact::RestoreStarted {
                member,
                partition,
                standby,
                records,
                duration_us,
            } => self.restore_started(now, *member, *partition, *standby, *records, *duration_us),
            // KIP-848 hand-over: the checkers' concern (check/handover.rs), and so is a static
            // member's fenced generation (check/ownership.rs); why a member rejoins: `cgsim
            // explain`'s.
            Fact::CoordinatorUnknown { .. }
            | Fact::CoordinatorFound { .. }
            | Fact::PollBlockedOnCoordinator { .. }
            | Fact::CoordinatorFailed { .. }
            | Fact::CoordinatorMoved { .. }
            | Fact::CoordinatorLoaded
            | Fact::FetchGap { .. } => self.observe_fault(now, fact),
            Fact::CutOffFromCoordinator { member, until } => {
                self.cut_off_from_coordinator(now, *member, *until)
            }
            Fact::PartitionsAdded { counts, .. } => self.partitions_added(now, counts),
            Fact::GroupConverted { .. } => {
                self.late.observe(fact);
                self.group_converted(now, fact)
            }
            Fact::AssignmentSent { member, partitions } => {
                self.late.observe(fact);
                self.assignment_sent(now, *member, partitions)
            }
            Fact::OwnedReported { .. } => self.late.observe(fact),
            // The coordinator's records of the group: the history's (`--describe` reads it).
            Fact::OffsetCommitted { .. }
            | Fact::ConsumerGroupRecorded(_)
            | Fact::CommittedRead { .. }
            | Fact::LeaderElected { .. }
            | Fact::RejoinNeeded { .. }
            | Fact::MissedRejoin { .. }
            | Fact::MemberStateChanged { .. }
            | Fact::MemberEpochChanged { .. }
            | Fact::CallbackQueued { .. }
            | Fact::AssignmentRefused { .. }
            | Fact::RequestTimedOut { .. }
            | Fact::PollTimeout { .. } => {}
        }
    }
}
