//! The group's history: one pass over the facts, in order, that keeps the group's story as
//! values over time, for every observer that tells it: each member's process and its place in
//! the group protocol (`members.rs`), the coordinator's side of the group (`coordinator.rs`),
//! a KIP-848 consumer group as its records tell it (`consumer_group.rs`), and each rebalance's
//! story (`rebalances.rs`). A reader asks for the state at an instant, or the rebalances;
//! nobody folds the facts again on their own.
//!
//! The world records it when a run is asked for its history (`RunOptions::record_history`), as
//! one more observer: nothing here feeds back into the simulation. The checkers keep their own
//! ledgers on purpose (an independent reading is what catches a model bug).

mod consumer_group;
mod coordinator;
mod marks;
mod members;
pub mod rebalances;

pub use consumer_group::{ConsumerGroupReplay, DescribedMember};
pub use coordinator::CoordinatorState;
pub use marks::{Mark, RunMarks};
pub use members::{MemberState, ProcessState};

use crate::facts::{ConsumerRecord, Fact};
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

    fn current(&self) -> &T {
        &self.changes.last().expect("an initial value").1
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
}

impl GroupHistory {
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

/// Builds the history from the facts as the run records them.
pub struct Recorder {
    /// Per member, its protocol from each instant (ms) on: its entry's from 0, then each
    /// restart's that sets one (the online migration restarts members onto the other).
    protocols: Vec<Vec<(u64, Protocol)>>,
    history: GroupHistory,
    rebalances: rebalances::Walk,
}

impl Recorder {
    /// Before the run: no member started, no group yet, its coordinator on `coordinator_broker`.
    pub fn new(scenario: &Scenario, coordinator_broker: u32) -> Self {
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
        Recorder {
            protocols,
            history: GroupHistory {
                members: vec![OverTime::new(MemberState::default()); scenario.members.len()],
                coordinator: OverTime::new(CoordinatorState::new(
                    scenario.group.protocol,
                    coordinator_broker,
                )),
                consumer_records: Vec::new(),
                rebalances: rebalances::Story::default(),
            },
            rebalances: rebalances::Walk::default(),
        }
    }

    pub fn observe(&mut self, now: SimTime, fact: &Fact) {
        self.rebalances.fact(now, fact);
        if let Fact::ConsumerGroupRecorded(record) = fact {
            self.history.consumer_records.push((now, record.clone()));
        }
        let coordinator = &mut self.history.coordinator;
        if let Some(next) = coordinator.current().after(fact) {
            coordinator.set(now, next);
        }
        if let Some(m) = members::subject(fact).filter(|&m| m < self.history.members.len()) {
            let protocol = self.protocol(m, now);
            let member = &mut self.history.members[m];
            if let Some(next) = member.current().after(fact, protocol) {
                member.set(now, next);
            }
        }
    }

    pub fn finish(self) -> GroupHistory {
        GroupHistory {
            rebalances: self.rebalances.finish(),
            ..self.history
        }
    }

    /// Member `m`'s protocol at `now`: that of the last restart by then that set one, or its
    /// entry's.
    fn protocol(&self, m: usize, now: SimTime) -> Protocol {
        let changes = &self.protocols[m];
        let i = changes.partition_point(|&(at, _)| at <= now.as_millis());
        changes[i.saturating_sub(1)].1
    }
}

#[cfg(test)]
mod tests;
