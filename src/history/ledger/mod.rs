//! The group now, as the figures count it (DESIGN.md "What counts"): each member's lifecycle
//! (started, joining, closing, crashed, stalled, in the group under which id), who owns each
//! partition and who processes it, the rebalance under way and the formation, with the tallies
//! of what those changes cost: revocations, lost and moved partitions, each partition's
//! unavailable and unowned time (with what began each interval), each member's stop-the-world
//! time. One reading of the facts, in order; the metrics, the pictures' marks and every other
//! reader take it from here instead of reading ownership from the facts again.
//!
//! Each fact leaves at most one [`Change`] for the figures to fold (`changes.rs`): a rebalance
//! of the formed group begun or completed, records processed (and whether by their owner),
//! notifications and restores, a member's fatal error, a protocol conversion.
//!
//! One concern per file: ownership and members' lifecycles (`ownership.rs`), pauses and
//! unavailability (`pauses.rs`), the rebalance under way (`rebalance.rs`), broker and network
//! faults and what they cause (`faults.rs`).

mod faults;
mod ownership;
mod pauses;
mod rebalance;

pub use faults::{ByCause, CoordinatorEntry, PauseCause};
pub use rebalance::{CoPartitionBreak, Formation};

use super::changes::{Change, CompletedRebalance, Conversion};
use super::marks::{Mark, RunMarks};
use crate::facts::{Fact, LateAnswers, MemberIds};
use crate::messages::Trigger;
use crate::scenario::{Protocol, Scenario};
use crate::sim::SimTime;
use std::collections::{BTreeMap, BTreeSet};

/// What the ownership changes cost, counted after the group formed; read by the metrics.
#[derive(Debug, Default)]
pub struct Tallies {
    /// Per partition: since when it is not processed (an open unavailable interval), its
    /// closed intervals' µs, and the longest closed one (partition, start, µs; the first of
    /// equals).
    pub unavailable_since: Vec<Option<SimTime>>,
    pub unavailable_us: Vec<u64>,
    pub longest_unavailable: Option<(usize, SimTime, u64)>,
    /// Per partition: the live members whose rebalance callbacks say they hold it (client-side
    /// ownership: a stalled or removed member still holds until its revoke or lost callback),
    /// since when nobody does, and the closed intervals' µs.
    pub holders: Vec<u32>,
    pub unowned_since: Vec<Option<SimTime>>,
    pub unowned_us: Vec<u64>,
    /// Per member: since when it owns nothing processable because of a rebalance, and the
    /// closed intervals' µs; the members a rebalance stopped.
    pub paused_since: Vec<Option<SimTime>>,
    pub stop_the_world_us: Vec<u64>,
    pub stopped_members: BTreeSet<usize>,
    pub revocations_total: u64,
    pub revocations_by_staying: u64,
    pub revocations_per_member: Vec<u64>,
    pub lost_total: u64,
    pub lost_by_crash: u64,
    pub moved_total: u64,
    pub moved_minimum: u64,
    /// Co-partitioned topics whose partition counts an added partition made differ.
    pub co_partitioning: Vec<CoPartitionBreak>,
    /// What was still open when the run ended (closed there by [`Ledger::end`]): unavailable
    /// and unowned partitions, stopped members of the group.
    pub unavailable_at_end: Vec<usize>,
    pub unowned_at_end: Vec<usize>,
    pub paused_at_end: Vec<usize>,
}

/// A rebalance from PreparingRebalance until Stable.
#[derive(Debug)]
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

/// A scenario topic as the partition space lays it out.
#[derive(Debug)]
struct TopicLayout {
    name: String,
    max_partitions: u32,
}

/// The group now (see the module's header).
#[derive(Debug)]
pub struct Ledger {
    member_ids: MemberIds,
    /// KIP-848 answers of a member's previous membership, taken after it rejoined.
    late: LateAnswers,
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
    /// Processes running now (started, not stopped or crashed).
    running_process: Vec<bool>,
    /// KIP-848: members join one heartbeat at a time (no initial delay), so the group is
    /// formed at the first Stable with every running member in it.
    incremental_join: bool,
    owner: Vec<Option<usize>>,
    /// Partitions each member owns (the count of `owner` entries naming it).
    owned_count: Vec<u32>,
    last_owner: Vec<Option<usize>>,
    /// Who processes each partition now.
    active: Vec<Option<usize>>,
    first_rebalance_start: Option<SimTime>,
    formation: Option<Formation>,
    running: Option<Running>,
    /// Partitions that exist now (added partitions exist from when they are added).
    partition_exists: Vec<bool>,
    partitions_added_at: Option<SimTime>,
    /// Each scenario topic's name and most partitions (the partition space's layout), and the
    /// co-partitioned topics, for what a `PartitionsAdded` fact changes.
    topics: Vec<TopicLayout>,
    topics_co_partitioned: Vec<Vec<usize>>,
    /// For the marks: the member id of a member that cannot reach the coordinator (crashed,
    /// cut off) while the coordinator still counts it, until its entry is removed or replaced.
    unreachable_id: Vec<Option<String>>,
    faults: faults::FaultState,
    tallies: Tallies,
    /// Every rebalance of the formed group that completed, and every conversion, in order.
    completed: Vec<CompletedRebalance>,
    conversions: Vec<Conversion>,
    /// The marks the pictures are drawn from, when kept.
    marks: Option<RunMarks>,
    /// What the last fact changed, for the figures.
    change: Option<Change>,
}

impl Ledger {
    pub fn new(scenario: &Scenario, partition_names: &[String]) -> Self {
        let n = scenario.members.len();
        let p = partition_names.len();
        Ledger {
            member_ids: MemberIds::default(),
            late: LateAnswers::default(),
            started_at: vec![SimTime::ZERO; n],
            joining_at: vec![SimTime::ZERO; n],
            close_requested_at: vec![None; n],
            crashed_at: vec![None; n],
            stall_started_at: vec![None; n],
            stalled_parts: vec![Vec::new(); n],
            in_group: vec![false; n],
            held_when_removed: vec![Vec::new(); n],
            running_process: vec![false; n],
            incremental_join: scenario.group.protocol == Protocol::Consumer,
            owner: vec![None; p],
            owned_count: vec![0; n],
            last_owner: vec![None; p],
            active: vec![None; p],
            first_rebalance_start: None,
            formation: None,
            running: None,
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
            unreachable_id: vec![None; n],
            faults: faults::FaultState::new(scenario, p),
            tallies: Tallies {
                unavailable_since: vec![None; p],
                unavailable_us: vec![0; p],
                holders: vec![0; p],
                unowned_since: vec![None; p],
                unowned_us: vec![0; p],
                paused_since: vec![None; n],
                stop_the_world_us: vec![0; n],
                revocations_per_member: vec![0; n],
                ..Tallies::default()
            },
            completed: Vec::new(),
            conversions: Vec::new(),
            marks: None,
            change: None,
        }
    }

    /// Keep the marks the pictures are drawn from.
    pub(super) fn keep_marks(&mut self, member_names: Vec<String>, partition_names: Vec<String>) {
        self.marks = Some(RunMarks {
            member_names,
            partition_names,
            marks: Vec::new(),
        });
    }

    pub(super) fn take_marks(&mut self) -> Option<RunMarks> {
        self.marks.take()
    }

    fn mark(&mut self, now: SimTime, mark: Mark) {
        if let Some(h) = self.marks.as_mut() {
            h.marks.push((now.as_micros(), mark));
        }
    }

    /// The change the fact being taken in makes (one at most).
    fn tell(&mut self, change: Change) {
        debug_assert!(self.change.is_none(), "a second change from one fact");
        self.change = Some(change);
    }

    /// What the last fact changed, if anything.
    pub fn change(&self) -> Option<Change> {
        self.change
    }

    /// Every rebalance of the formed group that completed, in order.
    pub fn completed_rebalances(&self) -> &[CompletedRebalance] {
        &self.completed
    }

    /// Every conversion of the group between the protocols, in order.
    pub fn conversions(&self) -> &[Conversion] {
        &self.conversions
    }

    /// Whether the group has formed (its first Stable with every running member in it).
    pub fn formed(&self) -> bool {
        self.formation.is_some()
    }

    /// The formation, once the group formed.
    pub fn formation(&self) -> Option<&Formation> {
        self.formation.as_ref()
    }

    /// KIP-848: members join one heartbeat at a time, with no join and sync phases.
    pub fn incremental_join(&self) -> bool {
        self.incremental_join
    }

    /// Whether a rebalance is under way (PreparingRebalance until Stable).
    pub fn rebalance_running(&self) -> bool {
        self.running.is_some()
    }

    /// Whether partition `p` exists now.
    pub fn partition_exists(&self, p: usize) -> bool {
        self.partition_exists[p]
    }

    /// Partition `p`'s owner now (DESIGN.md "What counts").
    pub fn owner(&self, p: usize) -> Option<usize> {
        self.owner[p]
    }

    /// Every partition's owner now, by partition.
    pub fn owners(&self) -> &[Option<usize>] {
        &self.owner
    }

    /// Member `m`'s current member id, if it has had one.
    pub fn member_id(&self, m: usize) -> Option<&str> {
        self.member_ids.current(m)
    }

    pub(super) fn member_ids(&self) -> &MemberIds {
        &self.member_ids
    }

    pub fn tallies(&self) -> &Tallies {
        &self.tallies
    }

    /// Broker and network facts were seen: the per-member fault figures are reported.
    pub fn faults_seen(&self) -> bool {
        self.faults.seen
    }

    /// Member `m`'s µs without a known coordinator, and its ms of polls blocked on finding one.
    pub fn coordinator_unknown_us(&self, m: usize) -> u64 {
        self.faults.coordinator_unknown_us[m]
    }

    pub fn poll_blocked_ms(&self, m: usize) -> u64 {
        self.faults.poll_blocked_ms[m]
    }

    /// The coordinator's moves, in order.
    pub fn coordinator_moves(&self) -> &[CoordinatorEntry] {
        &self.faults.coordinator
    }

    /// Each partition's unavailable time by what began it, in ms.
    pub fn unavailable_by_cause(&self) -> ByCause {
        self.faults.by_cause()
    }

    /// Takes in one fact, in the run's order; its change replaces the last fact's.
    pub fn observe(&mut self, now: SimTime, fact: &Fact) {
        self.change = None;
        match fact {
            Fact::MemberAdded { member, .. } => {
                self.late.observe(fact);
                if self.member_ids.observe(fact) {
                    self.in_group[*member] = true;
                }
            }
            Fact::MemberReplaced { member, .. } => {
                self.late.observe(fact);
                self.member_replaced(now, *member);
                self.member_ids.observe(fact);
                self.in_group[*member] = true;
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
            Fact::GroupEmpty => self.running = None,
            Fact::ProcessStarted { member } => self.process_started(now, *member),
            Fact::Joining { member } => self.joining_at[*member] = now,
            Fact::CloseRequested { member } => self.close_requested(now, *member),
            Fact::ProcessStopped { member } => self.process_stopped(*member),
            Fact::Crashed { member, owned } => self.crashed(now, *member, owned),
            Fact::Stalled { member, .. } => self.stalled(now, *member),
            Fact::StallEnded { member } => self.stall_ended(now, *member),
            &Fact::FatalError { member, error } => {
                self.tell(Change::MemberFailed { member, error })
            }
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
                self.processing_started(now, *member, partitions)
            }
            &Fact::PositionSet {
                partition,
                position,
            } => self.tell(Change::PositionSet {
                partition,
                position,
            }),
            &Fact::Processed {
                member,
                partition,
                from,
                to,
            } => self.tell(Change::Processed {
                partition,
                from,
                to,
                by_owner: self.owner[partition] == Some(member),
            }),
            &Fact::CrossRackFetched {
                member, records, ..
            } => self.tell(Change::CrossRackFetched { member, records }),
            &Fact::Notification {
                outcome,
                latency_us,
            } => self.tell(Change::Notification {
                outcome,
                latency_us,
            }),
            &Fact::RestoreStarted {
                member,
                partition,
                standby,
                records,
                duration_us,
            } => {
                self.mark(
                    now,
                    Mark::Restore {
                        member,
                        partition,
                        until_us: now.as_micros() + duration_us,
                    },
                );
                self.tell(Change::RestoreStarted {
                    standby,
                    records,
                    duration_us,
                })
            }
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
            Fact::GroupConverted {
                to_consumer,
                by,
                replaced,
                epoch,
                members,
                ..
            } => {
                self.late.observe(fact);
                self.conversions.push(Conversion {
                    at: now,
                    to_consumer: *to_consumer,
                    by: *by,
                    replaced: *replaced,
                    epoch: *epoch,
                    members: members.clone(),
                });
                self.tell(Change::GroupConverted)
            }
            Fact::AssignmentSent { member, partitions } => {
                self.late.observe(fact);
                self.assignment_sent(now, *member, partitions)
            }
            Fact::OwnedReported { .. } => self.late.observe(fact),
            _ => {}
        }
    }

    /// The run ended at `end`: open intervals close there, and what was open is kept.
    pub fn end(&mut self, end: SimTime) {
        for p in 0..self.tallies.unavailable_since.len() {
            if self.tallies.unavailable_since[p].is_some() {
                self.close_unavailable(end, p);
                self.tallies.unavailable_at_end.push(p);
            }
        }
        self.faults.end(end);
        let t = &mut self.tallies;
        for p in 0..t.unowned_since.len() {
            if let Some(since) = t.unowned_since[p].take() {
                t.unowned_us[p] += (end - since).as_micros();
                t.unowned_at_end.push(p);
            }
        }
        for m in 0..t.paused_since.len() {
            if let Some(since) = t.paused_since[m].take() {
                if self.in_group[m] {
                    t.stop_the_world_us[m] += (end - since).as_micros();
                    t.stopped_members.insert(m);
                    t.paused_at_end.push(m);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
