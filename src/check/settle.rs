//! eventually `not_settled`: after the last fault the group must reach Stable, with every member
//! settled, by the settle bound (the last timeline event's end + rebalance timeout + session
//! timeout, DESIGN.md "What counts", widened where Kafka itself takes longer:
//! `Scenario::settle_bound`), and then stay settled through a quiet window of one
//! session timeout with no new rebalance. A property over time, not one sample: a group that
//! rebalances without end but happens to be Stable at the bound fails it. A run that ends before
//! the window closes is not checked (`settle_checked` false), so a loop that never settles can
//! never pass a run long enough to check it.
//!
//! Settled means the coordinator has the group loaded and at rest, and every running member is
//! done with its rebalance: read from the facts, as every property is (each member's
//! [`Fact::RebalanceStep`], the group's [`Fact::GroupState`], the coordinator's fail-overs).

use super::{Findings, NotSettled, RefusedAgain, TimedOut, Unsettled, Verdict};
use crate::facts::Fact;
use crate::messages::RequestKind;
use crate::sim::time::Duration;
use crate::sim::SimTime;

/// When the property looks, in simulated time.
#[derive(Clone, Copy, Debug)]
pub struct SettleWindow {
    /// The last fault's end: rebalances from here on are counted in the explanation.
    pub from: SimTime,
    /// The group must be settled by now...
    pub bound: SimTime,
    /// ...and stay so until now.
    pub until: SimTime,
    /// What `bound` adds up, in words (`Scenario::settle_bound`).
    pub bound_terms: &'static str,
    /// How long a new coordinator takes to load the group after a move.
    pub coordinator_load: Duration,
}

/// The group as the coordinator last reported it ([`Fact::GroupState`]).
#[derive(Clone, Copy, Debug, Default)]
struct GroupAt {
    state: &'static str,
    generation: i32,
    at_rest: bool,
    empty: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    BeforeBound,
    Quiet,
    Done,
}

pub struct Settle {
    window: SettleWindow,
    phase: Phase,
    checked: bool,
    rebalances_since_fault: u32,
    /// Each member's latest run of refused assignments: the same partitions refused in
    /// consecutive generations, `(first, last, partitions)`.
    refusals: std::collections::BTreeMap<usize, (i32, i32, Vec<usize>)>,
    /// Each member's JoinGroup and SyncGroup timeouts since the last fault's end: how many,
    /// how long each waited, the first and the last (ms).
    timeouts: std::collections::BTreeMap<(usize, RequestKind), (u32, u64, u64, u64)>,
    /// Per member: whether its process runs, and its rebalance step (`None`: done).
    members: Vec<(bool, Option<&'static str>)>,
    group: GroupAt,
    /// The coordinator has a home (its broker is up, its partition has a leader), and has
    /// loaded the group from then on.
    coordinator_home: bool,
    loaded_from: SimTime,
}

/// Why a member that refuses the same assignment generation after generation keeps the group
/// rebalancing in Kafka too.
pub const REFUSED_AGAIN: &str = "Kafka's own loop: StickyAssignor's previous-owner rule hands a partition back to the member whose userData last claimed it, whatever it subscribes to, and the consumer does not take an assignment naming a topic it does not subscribe to (checkAssignmentMatchedSubscription), so its userData never moves on";

impl Settle {
    pub fn new(window: SettleWindow, members: usize) -> Self {
        Settle {
            window,
            phase: Phase::BeforeBound,
            checked: false,
            rebalances_since_fault: 0,
            refusals: std::collections::BTreeMap::new(),
            timeouts: std::collections::BTreeMap::new(),
            members: vec![(false, None); members],
            group: GroupAt::default(),
            coordinator_home: true,
            loaded_from: SimTime::ZERO,
        }
    }

    pub fn observe(&mut self, now: SimTime, fact: &Fact, found: &mut Findings) {
        match *fact {
            Fact::RebalanceStep {
                member,
                running,
                step,
            } => {
                self.members[member] = (running, step);
                return;
            }
            Fact::GroupState {
                state,
                generation,
                at_rest,
                empty,
            } => {
                self.group = GroupAt {
                    state,
                    generation,
                    at_rest,
                    empty,
                };
                return;
            }
            // The coordinator's broker crashed: no coordinator until a move gives it a home.
            Fact::CoordinatorFailed { .. } => {
                self.coordinator_home = false;
                return;
            }
            Fact::CoordinatorMoved { to, .. } => {
                self.coordinator_home = to.is_some();
                if to.is_some() {
                    self.loaded_from = now + self.window.coordinator_load;
                }
                return;
            }
            _ => {}
        }
        if let Fact::AssignmentRefused {
            member,
            generation,
            partitions,
        } = fact
        {
            let run = self.refusals.entry(*member).or_insert((0, 0, Vec::new()));
            if run.2 == *partitions && run.1 + 1 == *generation {
                run.1 = *generation;
            } else {
                *run = (*generation, *generation, partitions.clone());
            }
            return;
        }
        if let Fact::RequestTimedOut {
            member,
            request: request @ (RequestKind::JoinGroup | RequestKind::SyncGroup),
            waited_ms,
        } = fact
        {
            if now >= self.window.from {
                let at = now.as_millis();
                let run = self.timeouts.entry((*member, *request));
                let run = run.or_insert((0, *waited_ms, at, at));
                run.0 += 1;
                run.3 = at;
            }
            return;
        }
        let Fact::RebalanceStarted {
            generation,
            trigger,
            member,
        } = fact
        else {
            return;
        };
        if now >= self.window.from {
            self.rebalances_since_fault += 1;
        }
        if self.phase == Phase::Quiet {
            let how = Unsettled::RebalancedInQuietWindow {
                bound_ms: self.window.bound.as_millis(),
                at_ms: now.as_millis(),
                generation: *generation,
                trigger: *trigger,
                member: member.map(|m| found.member(m)),
                until_ms: self.window.until.as_millis(),
                rebalances_since_fault: self.rebalances_since_fault,
            };
            self.fail(now, how, found);
        }
    }

    /// What keeps the group from being settled (the coordinator at rest and every running
    /// member done with its rebalance), in words; `None` when it is settled.
    fn unsettled(&self, now: SimTime, found: &Findings) -> Option<String> {
        if !self.coordinator_home || now < self.loaded_from {
            return Some("the group has no coordinator (it is failing over)".into());
        }
        let busy: Vec<String> = self
            .members
            .iter()
            .enumerate()
            .filter_map(|(m, (_, step))| {
                step.map(|step| format!("{} {step}", found.names.members[m]))
            })
            .collect();
        if self.group.at_rest && busy.is_empty() {
            return None;
        }
        // Nobody left to rebalance: every process has stopped (left, crashed, or failed for
        // good, as a member refused INCONSISTENT_GROUP_PROTOCOL does) and the coordinator has
        // removed them all. A classic group rests Empty then (the consumer protocol's Empty
        // already counts as at rest).
        let nobody_running = self.members.iter().all(|(running, _)| !running);
        if nobody_running && self.group.empty {
            return None;
        }
        let mut what = format!(
            "the group is {} (generation {})",
            self.group.state, self.group.generation
        );
        if !busy.is_empty() {
            what.push_str("; still rebalancing: ");
            what.push_str(&busy.join(", "));
        }
        Some(what)
    }

    /// The bound has come: is the group settled?
    pub fn at_bound(&mut self, now: SimTime, found: &mut Findings) {
        if self.phase != Phase::BeforeBound {
            return;
        }
        match self.unsettled(now, found) {
            Some(what) => {
                let how = Unsettled::ByTheBound {
                    bound_ms: now.as_millis(),
                    bound_terms: self.window.bound_terms,
                    what,
                    rebalances_since_fault: self.rebalances_since_fault,
                };
                self.fail(now, how, found);
            }
            None => self.phase = Phase::Quiet,
        }
    }

    /// The quiet window has ended: still settled, and no rebalance since the bound?
    pub fn window_closed(&mut self, now: SimTime, found: &mut Findings) {
        if self.phase != Phase::Quiet {
            return;
        }
        match self.unsettled(now, found) {
            Some(what) => self.fail(now, Unsettled::AtTheWindowEnd { what }, found),
            None => {
                self.phase = Phase::Done;
                self.checked = true;
            }
        }
    }

    fn fail(&mut self, now: SimTime, how: Unsettled, found: &mut Findings) {
        // A member refusing the same assignment generation after generation: say so.
        let refused_again = self
            .refusals
            .iter()
            .filter(|(_, (first, last, _))| last > first)
            .map(|(&m, (first, last, partitions))| RefusedAgain {
                member: found.member(m),
                first: *first,
                last: *last,
                partitions: partitions.iter().map(|&p| found.partition(p)).collect(),
            })
            .collect();
        // Group requests the coordinator held past their timeout: each failed with a disconnect
        // and the member joined again.
        let timed_out = self
            .timeouts
            .iter()
            .map(
                |(&(m, request), &(count, waited_ms, first_ms, last_ms))| TimedOut {
                    member: found.member(m),
                    request,
                    count,
                    waited_ms,
                    first_ms,
                    last_ms,
                },
            )
            .collect();
        let verdict = Verdict::NotSettled(NotSettled {
            how,
            refused_again,
            timed_out,
        });
        found.violation(now, verdict);
        self.phase = Phase::Done;
        self.checked = true;
    }

    pub fn checked(&self) -> bool {
        self.checked
    }

    pub fn window(&self) -> &SettleWindow {
        &self.window
    }
}
