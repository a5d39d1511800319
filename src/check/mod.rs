//! The checkers: named properties, each with its own record of the truth, fed by the facts the
//! state machines record (never by a model's internals or by the metrics). Three kinds, as
//! stateright and TigerBeetle's VOPR name them:
//! - always (safety): [`Property::DoubleOwnership`], [`Property::OffsetRegression`],
//!   [`Property::AssignedBeforeReleased`] (KIP-848), [`Property::ProcessedAfterRevoke`];
//! - eventually (liveness after the last timeline event): [`Property::NotSettled`];
//! - sometimes (coverage: the run really exercised this): [`Coverage`], listed in the report's
//!   `invariants.covered`.
//!
//! A fuzz run adds liveness properties judged at the end (`liveness.rs`); what Kafka itself
//! does that a property alone would call a failure (its own loops, a member error Kafka raises
//! too, partitions Kafka leaves unowned) is told apart in `kafkas_own.rs`. Every verdict is a
//! value ([`Verdict`], `verdict.rs`) rendered in words only for the report.
//!
//! A violation names its property (`kind` in the JSON report). A zombie batch (a removed member
//! finishing a batch while the partition is someone else's) is Kafka's real behaviour, so it is
//! recorded, not a violation.

mod coverage;
mod handover;
pub mod kafkas_own;
pub mod liveness;
mod offsets;
mod ownership;
mod settle;
mod verdict;

pub use ownership::UPGRADE_BEFORE_SYNC;
pub use settle::{SettleWindow, REFUSED_AGAIN};
pub use verdict::{NotSettled, RefusedAgain, TimedOut, Unsettled, Verdict};

pub use coverage::Coverage;

use crate::facts::Fact;
use crate::sim::SimTime;
use serde::Serialize;

/// What kind of property: a safety property must hold at every instant, a liveness property
/// once the faults are over, a coverage property is one the run should reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Always,
    Eventually,
    Sometimes,
}

/// The properties a violation can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Property {
    /// Two members own one partition at the same instant.
    DoubleOwnership,
    /// A commit moved a partition's committed offset backwards.
    OffsetRegression,
    /// An OffsetFetch read less than was committed (an offset lost, e.g. across a fail-over).
    CommittedOffsetLost,
    /// The group was not Stable, with every member settled, by the settle bound.
    NotSettled,
    /// KIP-848: a partition was given to a member while another still reported owning it.
    AssignedBeforeReleased,
    /// A member still in the group processed a partition after its own revoke (or lost)
    /// callback gave it up, without being assigned it again.
    ProcessedAfterRevoke,
}

impl Property {
    /// The name in the JSON report (`invariants.violations[].kind`, DESIGN.md).
    pub fn name(self) -> &'static str {
        match self {
            Property::DoubleOwnership => "double_ownership",
            Property::OffsetRegression => "offset_regression",
            Property::CommittedOffsetLost => "committed_offset_lost",
            Property::NotSettled => "not_settled",
            Property::AssignedBeforeReleased => "assigned_before_released",
            Property::ProcessedAfterRevoke => "processed_after_revoke",
        }
    }

    pub fn kind(self) -> Kind {
        match self {
            Property::DoubleOwnership
            | Property::OffsetRegression
            | Property::CommittedOffsetLost
            | Property::AssignedBeforeReleased
            | Property::ProcessedAfterRevoke => Kind::Always,
            Property::NotSettled => Kind::Eventually,
        }
    }
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub at_ms: u64,
    /// The property's name ([`Verdict::kind`]).
    pub kind: String,
    /// The verdict in words.
    pub detail: String,
    /// What the property found, as a value: what readers decide on.
    #[serde(skip)]
    pub verdict: Verdict,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Zombie {
    pub at_ms: u64,
    pub member: String,
    pub partition: String,
    pub records: u64,
    /// Who owned the partition when the zombie's batch finished.
    pub owner: Option<String>,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Invariants {
    pub violations: Vec<Violation>,
    pub zombie_processing: Vec<Zombie>,
    pub settle_checked: bool,
    /// How long after the last fault's end the settle check looks: the settle bound
    /// (rebalance timeout, three for a static member gone silent, + session timeout + two
    /// heartbeat intervals), then a quiet session timeout.
    pub settle_bound_ms: u64,
    /// When that window ends (the last fault's end plus `settle_bound_ms`): the `duration_ms`
    /// a run needs for its settle check.
    pub settle_window_end_ms: u64,
    /// The coverage properties the run reached ([`Coverage::name`]), sorted.
    pub covered: Vec<String>,
}

/// Member and partition names, for the details of what the checkers find.
pub struct Names {
    pub members: Vec<String>,
    pub partitions: Vec<String>,
}

/// What one property found, in the order it found it.
pub(crate) struct Findings<'n> {
    names: &'n Names,
    violations: &'n mut Vec<Violation>,
    zombies: &'n mut Vec<Zombie>,
    coverage: &'n mut coverage::Reached,
}

impl Findings<'_> {
    fn violation(&mut self, now: SimTime, verdict: Verdict) {
        self.violations.push(Violation {
            at_ms: now.as_millis(),
            kind: verdict.kind().to_string(),
            detail: verdict.to_string(),
            verdict,
        });
    }

    fn member(&self, m: usize) -> String {
        self.names.members[m].clone()
    }

    fn partition(&self, p: usize) -> String {
        self.names.partitions[p].clone()
    }

    fn reached(&mut self, c: Coverage) {
        self.coverage.reach(c);
    }
}

/// Where the properties of `$checks` write what they find (its fields, borrowed apart from the
/// properties themselves).
macro_rules! findings {
    ($checks:expr) => {
        Findings {
            names: &$checks.names,
            violations: &mut $checks.violations,
            zombies: &mut $checks.zombies,
            coverage: &mut $checks.coverage,
        }
    };
}

/// Every property of a run.
pub struct Checks {
    names: Names,
    ownership: ownership::Ownership,
    handover: handover::Handover,
    offsets: offsets::Offsets,
    settle: settle::Settle,
    violations: Vec<Violation>,
    zombies: Vec<Zombie>,
    coverage: coverage::Reached,
}

impl Checks {
    pub fn new(names: Names, settle: SettleWindow) -> Self {
        Checks {
            ownership: ownership::Ownership::new(names.partitions.len()),
            handover: handover::Handover::default(),
            offsets: offsets::Offsets::new(names.partitions.len()),
            settle: settle::Settle::new(settle, names.members.len()),
            names,
            violations: Vec::new(),
            zombies: Vec::new(),
            coverage: coverage::Reached::default(),
        }
    }

    /// One fact, to every property. Inlined into the observers' one call site: every fact of
    /// a run comes through here, and a call of its own cost a scale-out run 2% more
    /// instructions.
    #[inline(always)]
    pub fn observe(&mut self, now: SimTime, fact: &Fact) {
        // The two facts of every batch and every commit go straight to the one property that
        // reads them; the rest to all.
        match fact {
            Fact::Processed {
                member, partition, ..
            } if self.ownership.owner(*partition) == Some(*member) => {
                self.ownership.processed_by_owner(*partition)
            }
            Fact::OffsetCommitted {
                member, partition, ..
            } => {
                let committer = if self.ownership.owner(*partition) == Some(*member) {
                    offsets::Committer::Owner
                } else if self.ownership.is_freed_zombie(*member, *partition) {
                    offsets::Committer::FreedZombie
                } else {
                    offsets::Committer::Other
                };
                let mut found = findings!(self);
                self.offsets.observe(now, fact, committer, &mut found);
            }
            Fact::CommittedRead { .. } => {
                let mut found = findings!(self);
                self.offsets
                    .observe(now, fact, offsets::Committer::Other, &mut found);
            }
            _ => {
                let mut found = findings!(self);
                self.ownership.observe(now, fact, &mut found);
                self.handover.observe(now, fact, &mut found);
                self.settle.observe(now, fact, &mut found);
                coverage::observe(fact, &mut found);
            }
        }
    }

    /// The settle bound has come.
    pub fn settle_bound(&mut self, now: SimTime) {
        let mut found = findings!(self);
        self.settle.at_bound(now, &mut found);
    }

    /// The quiet window after the settle bound has ended.
    pub fn settle_window_closed(&mut self, now: SimTime) {
        let mut found = findings!(self);
        self.settle.window_closed(now, &mut found);
    }

    pub fn finish(self) -> Invariants {
        Invariants {
            violations: self.violations,
            zombie_processing: self.zombies,
            settle_checked: self.settle.checked(),
            settle_bound_ms: (self.settle.window().until - self.settle.window().from).as_millis(),
            settle_window_end_ms: self.settle.window().until.as_millis(),
            covered: self.coverage.names(),
        }
    }
}

#[cfg(test)]
mod tests;
