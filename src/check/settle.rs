//! eventually `not_settled`: after the last fault the group must reach Stable, with every member
//! settled, by the settle bound (the last timeline event's end + rebalance timeout + session
//! timeout, DESIGN.md "What counts", widened where Kafka itself takes longer:
//! `world::settle_deadline_ms`), and then stay settled through a quiet window of one
//! session timeout with no new rebalance. A property over time, not one sample: a group that
//! rebalances without end but happens to be Stable at the bound fails it. A run that ends before
//! the window closes is not checked (`settle_checked` false), so a loop that never settles can
//! never pass a run long enough to check it.

use super::{Findings, NotSettled, RefusedAgain, TimedOut, Unsettled, Verdict};
use crate::facts::Fact;
use crate::messages::RequestKind;
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
    /// What `bound` adds up, in words (`world::settle_deadline_ms`).
    pub bound_terms: &'static str,
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
}

/// Why a member that refuses the same assignment generation after generation keeps the group
/// rebalancing in Kafka too.
pub const REFUSED_AGAIN: &str = "Kafka's own loop: StickyAssignor's previous-owner rule hands a partition back to the member whose userData last claimed it, whatever it subscribes to, and the consumer does not take an assignment naming a topic it does not subscribe to (checkAssignmentMatchedSubscription), so its userData never moves on";

impl Settle {
    pub fn new(window: SettleWindow) -> Self {
        Settle {
            window,
            phase: Phase::BeforeBound,
            checked: false,
            rebalances_since_fault: 0,
            refusals: std::collections::BTreeMap::new(),
            timeouts: std::collections::BTreeMap::new(),
        }
    }

    pub fn observe(&mut self, now: SimTime, fact: &Fact, found: &mut Findings) {
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

    /// The bound has come: `unsettled` says what is still happening, if anything.
    pub fn at_bound(&mut self, now: SimTime, unsettled: Option<String>, found: &mut Findings) {
        if self.phase != Phase::BeforeBound {
            return;
        }
        match unsettled {
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
    pub fn window_closed(&mut self, now: SimTime, unsettled: Option<String>, found: &mut Findings) {
        if self.phase != Phase::Quiet {
            return;
        }
        match unsettled {
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
}
