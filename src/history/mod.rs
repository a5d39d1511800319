//! The group's history: one pass over the facts, in order, that keeps the group's story as
//! values over time, for every observer that tells it: each member's process and its place in
//! the group protocol (`members.rs`), the coordinator's side of the group (`coordinator.rs`),
//! a KIP-848 consumer group as its records tell it (`consumer_group.rs`), each rebalance's story
//! (`rebalances.rs`), the group now as the figures count it (`ledger/`: members' lifecycles,
//! ownership and processing, the rebalance under way, the tallies of what they cost, and the
//! one [`Change`] a fact makes, `changes.rs`), and the marks the pictures are drawn from
//! (`marks.rs`). A reader asks for the state now or at an instant, the rebalances, or the
//! changes; nobody folds the facts again on their own.
//!
//! The world records it as one more observer (the group now, always; over time when a run is
//! asked for its history, `RunOptions::record_history`): nothing here feeds back into the
//! simulation, and the metrics read the group from it (its ledger, its changes, the
//! coordinator's side). The checkers keep their own ledgers on purpose (an independent reading
//! is what catches a model bug).

mod changes;
mod consumer_group;
mod coordinator;
pub mod ledger;
mod marks;
mod members;
pub mod rebalances;

pub use changes::{Change, CompletedRebalance, Conversion};
pub use consumer_group::{ConsumerGroupReplay, DescribedMember};
pub use coordinator::CoordinatorState;
pub use ledger::Ledger;
pub use marks::{Mark, RunMarks};
pub use members::{MemberState, ProcessState};

use crate::facts::{ConsumerRecord, Fact};
use crate::java::{Capacity, JavaHashMap};
use crate::messages::ErrorCode;
use crate::scenario::{Protocol, Scenario, TimelineAction};
use crate::sim::SimTime;

/// A value over time: each change with when it happened, in time order.
#[derive(Clone, Debug)]
struct OverTime<T> {
    changes: Vec<(SimTime, T)>,
}

impl<T: Clone> OverTime<T> {
    fn new(initial: T) -> Self {
        OverTime {
            changes: vec![(SimTime::ZERO, initial)],
        }
    }

    /// Sets the value at `now`; several changes at one instant keep the last.
    fn set(&mut self, now: SimTime, value: T) {
        match self.changes.last_mut() {
            Some((at, last)) if *at == now => *last = value,
            _ => self.changes.push((now, value)),
        }
    }

    /// The value after every change at or before `t`.
    fn at(&self, t: SimTime) -> &T {
        let i = self.changes.partition_point(|(at, _)| *at <= t);
        &self.changes[i.saturating_sub(1)].1
    }
}

/// The group's history, as values over time.
#[derive(Clone, Debug)]
pub struct GroupHistory {
    members: Vec<OverTime<MemberState>>,
    coordinator: OverTime<CoordinatorState>,
    /// KIP-848: every record the consumer group wrote, in order.
    consumer_records: Vec<(SimTime, ConsumerRecord)>,
    rebalances: rebalances::Story,
    protocols: Protocols,
}

impl GroupHistory {
    /// Member `m`'s group protocol at `t`.
    pub fn protocol_at(&self, m: usize, t: SimTime) -> Protocol {
        self.protocols.at(m, t)
    }

    /// Member `m` after everything up to `t` (the end of the run past it).
    pub fn member_at(&self, m: usize, t: SimTime) -> &MemberState {
        self.members[m].at(t)
    }

    /// The coordinator's side of the group after everything up to `t`.
    pub fn coordinator_at(&self, t: SimTime) -> &CoordinatorState {
        self.coordinator.at(t)
    }

    /// Every rebalance's story, in order.
    pub fn rebalances(&self) -> &rebalances::Story {
        &self.rebalances
    }

    /// KIP-848: the consumer group as its records up to `t` leave it.
    pub fn consumer_group_at(&self, t: SimTime) -> ConsumerGroupReplay {
        let mut replay = ConsumerGroupReplay::default();
        for (_, record) in self.consumer_records.iter().take_while(|(at, _)| *at <= t) {
            replay.replay(record);
        }
        replay
    }
}

/// Builds the history from the facts as the run records them. It always keeps the coordinator's
/// side of the group as it is now (what the figures read: `--describe`), and keeps the group
/// over time, each member's state and every rebalance's story with it, when asked (`RunOptions::record_history`: the lab, the pictures,
/// `cgsim explain`).
pub struct Recorder {
    coordinator: CoordinatorState,
    /// A classic group's members by member id, in its coordinator's map order (Kafka's
    /// `ClassicGroup.members`, a `java.util.HashMap`: DescribeGroups lists them so).
    member_map: JavaHashMap<String, usize>,
    /// The group now, as the figures count it; each member's current id among it (a static
    /// replacement takes the old one out of the map).
    ledger: Ledger,
    /// Per member: the generation and assignment its last successful SyncGroup answer carried.
    synced: Vec<Option<(i32, Vec<usize>)>>,
    /// Per partition: the last offset the coordinator stored for the group.
    committed: Vec<Option<u64>>,
    consumer_group: ConsumerGroupReplay,
    /// Over time, when kept.
    kept: Option<KeptOverTime>,
}

/// What only the history over time needs: each member's state (no figure reads it), the
/// rebalance story's walk, and the history itself.
struct KeptOverTime {
    members: Vec<MemberState>,
    walk: rebalances::Walk,
    history: GroupHistory,
}

impl Recorder {
    /// Before the run: no member started, no group yet, its coordinator on `coordinator_broker`;
    /// `over_time` keeps the history over time too, and the marks the pictures are drawn from.
    pub fn new(
        scenario: &Scenario,
        partition_names: &[String],
        coordinator_broker: u32,
        over_time: bool,
    ) -> Self {
        let n = scenario.members.len();
        let partitions = partition_names.len();
        let mut ledger = Ledger::new(scenario, partition_names);
        if over_time {
            ledger.keep_marks(
                scenario.members.iter().map(|m| m.name.clone()).collect(),
                partition_names.to_vec(),
            );
        }
        let coordinator = CoordinatorState::new(scenario.group.protocol, coordinator_broker);
        let kept = over_time.then(|| KeptOverTime {
            members: vec![MemberState::default(); n],
            walk: rebalances::Walk::default(),
            history: GroupHistory {
                members: vec![OverTime::new(MemberState::default()); n],
                coordinator: OverTime::new(coordinator.clone()),
                consumer_records: Vec::new(),
                rebalances: rebalances::Story::default(),
                protocols: Protocols::of(scenario),
            },
        });
        Recorder {
            coordinator,
            member_map: JavaHashMap::new(Capacity::Default),
            ledger,
            synced: vec![None; n],
            committed: vec![None; partitions],
            consumer_group: ConsumerGroupReplay::default(),
            kept,
        }
    }

    pub fn observe(&mut self, now: SimTime, fact: &Fact) {
        // The coordinator's record first: a static replacement needs the member's previous id,
        // which the ledger replaces.
        self.observe_coordinator_record(fact);
        self.ledger.observe(now, fact);
        // Most facts are a batch's or a fetch's, which change nothing here but the rebalance
        // story's (a batch after a poll timeout): passed over at once when that is not kept.
        if self.kept.is_none()
            && matches!(
                fact,
                Fact::Processed { .. }
                    | Fact::ProcessingStarted { .. }
                    | Fact::PositionSet { .. }
                    | Fact::FetchLag { .. }
                    | Fact::CrossRackFetched { .. }
                    | Fact::Notification { .. }
                    | Fact::ListenerTime { .. }
            )
        {
            return;
        }
        let changed = self.coordinator.apply(fact);
        if let Some(kept) = &mut self.kept {
            kept.observe(now, fact, changed.then_some(&self.coordinator));
        }
    }

    /// The coordinator's records of the group: its member map, the SyncGroup answers, the
    /// committed offsets, the consumer group's records. Before the ledger and the members'
    /// states: a static replacement needs the member's previous id.
    fn observe_coordinator_record(&mut self, fact: &Fact) {
        match fact {
            Fact::MemberAdded {
                member, member_id, ..
            } => {
                self.member_map.insert(member_id.clone(), *member);
            }
            Fact::MemberReplaced { member, member_id } => {
                // `replaceStaticMember`: the old id's entry goes, the new one is put.
                if let Some(old) = self.ledger.member_ids().current(*member) {
                    self.member_map.remove(old);
                }
                self.member_map.insert(member_id.clone(), *member);
            }
            Fact::MemberRemoved { member_id, .. } => {
                self.member_map.remove(member_id);
            }
            Fact::SyncGroupAnswered {
                member,
                generation,
                error: ErrorCode::None,
                assignment,
            } => self.synced[*member] = Some((*generation, assignment.clone())),
            Fact::OffsetCommitted {
                partition, offset, ..
            } => self.committed[*partition] = Some(*offset),
            Fact::ConsumerGroupRecorded(record) => self.consumer_group.replay(record),
            _ => {}
        }
    }

    /// The group now, as the figures count it.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// What the last fact changed, for the figures.
    pub fn change(&self) -> Option<Change> {
        self.ledger.change()
    }

    /// The run ended at `end`: the ledger's open intervals close there.
    pub fn end(&mut self, end: SimTime) {
        self.ledger.end(end);
    }

    /// The marks the pictures are drawn from, when kept.
    pub fn take_marks(&mut self) -> Option<RunMarks> {
        self.ledger.take_marks()
    }

    /// The coordinator's side of the group now.
    pub fn coordinator(&self) -> &CoordinatorState {
        &self.coordinator
    }

    /// A classic group's members now, by member id, in its coordinator's map order.
    pub fn member_map(&self) -> impl Iterator<Item = (&String, usize)> + '_ {
        self.member_map.iter().map(|(id, &m)| (id, m))
    }

    /// The generation and assignment member `m`'s last successful SyncGroup answer carried.
    pub fn synced(&self, m: usize) -> Option<&(i32, Vec<usize>)> {
        self.synced.get(m)?.as_ref()
    }

    /// The last offset the coordinator stored for partition `p`.
    pub fn committed(&self, p: usize) -> Option<u64> {
        self.committed.get(p).copied().flatten()
    }

    /// KIP-848: the consumer group as its records so far leave it.
    pub fn consumer_group(&self) -> &ConsumerGroupReplay {
        &self.consumer_group
    }

    /// The history over time, when it was kept.
    pub fn finish(self) -> Option<GroupHistory> {
        let kept = self.kept?;
        Some(GroupHistory {
            rebalances: kept.walk.finish(),
            ..kept.history
        })
    }
}

impl KeptOverTime {
    /// Takes in `fact`, with the coordinator's side as it left it if it changed it.
    fn observe(&mut self, now: SimTime, fact: &Fact, coordinator: Option<&CoordinatorState>) {
        self.walk.fact(now, fact);
        let history = &mut self.history;
        if let Fact::ConsumerGroupRecorded(record) = fact {
            history.consumer_records.push((now, record.clone()));
        }
        if let Some(c) = coordinator {
            history.coordinator.set(now, c.clone());
        }
        if let Some(m) = members::subject(fact).filter(|&m| m < self.members.len()) {
            let protocol = history.protocols.at(m, now);
            if self.members[m].apply(fact, protocol) {
                history.members[m].set(now, self.members[m].clone());
            }
        }
    }
}

/// Each member's group protocol over time: its entry's from the start, then each restart's
/// that sets one (the online migration restarts members onto the other protocol).
#[derive(Clone, Debug)]
struct Protocols(Vec<Vec<(u64, Protocol)>>);

impl Protocols {
    fn of(scenario: &Scenario) -> Self {
        let mut protocols: Vec<Vec<(u64, Protocol)>> = scenario
            .members
            .iter()
            .map(|m| vec![(0, m.protocol)])
            .collect();
        for e in &scenario.timeline {
            if let TimelineAction::Restart {
                member,
                settings: Some(new),
            } = &e.action
            {
                if let Some(p) = protocols.get_mut(*member) {
                    p.push((e.at_ms, new.spec.protocol));
                }
            }
        }
        for p in &mut protocols {
            p.sort_by_key(|&(at, _)| at);
        }
        Protocols(protocols)
    }

    /// Member `m`'s protocol at `t`: that of the last restart by then that set one, or its
    /// entry's.
    fn at(&self, m: usize, t: SimTime) -> Protocol {
        let changes = &self.0[m];
        let i = changes.partition_point(|&(at, _)| at <= t.as_millis());
        changes[i.saturating_sub(1)].1
    }
}

#[cfg(test)]
mod tests;
