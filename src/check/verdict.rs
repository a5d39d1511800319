//! What a property found, as a value: each kind with its typed fields (members and partitions
//! by name, generations, offsets, times), rendered in words only for the report's `detail`.
//! Whoever decides on a verdict (the fuzzer, an exemption) reads the kind and the fields, never
//! the words: rewording a message changes no verdict.

use super::Property;
use crate::messages::{RequestKind, Trigger};
use std::fmt;

/// A broken property: the report's (`invariants.violations[].kind`) and the fuzzer's liveness
/// properties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `claimant` was given `partition` while `owner` still owned it; `upgrade_before_sync`:
    /// the online upgrade recorded `owner`'s classic assignment without it (see
    /// [`super::UPGRADE_BEFORE_SYNC`]).
    DoubleOwnership {
        partition: String,
        owner: String,
        claimant: String,
        upgrade_before_sync: bool,
    },
    /// A member still in the group processed `records` of a partition after its own callback
    /// gave it up.
    ProcessedAfterRevoke {
        member: String,
        partition: String,
        records: u64,
        owner: Option<String>,
    },
    /// KIP-848: `partition` was given to `member` while `reporter` still reported owning it.
    AssignedBeforeReleased {
        partition: String,
        member: String,
        reporter: String,
    },
    /// `member` committed `offset` for `partition`, below the `committed` one.
    OffsetRegression {
        member: String,
        partition: String,
        offset: u64,
        committed: u64,
    },
    /// An OffsetFetch read `read` for `partition` (`None`: no offset), below the `written`
    /// committed before.
    CommittedOffsetLost {
        partition: String,
        read: Option<u64>,
        written: u64,
    },
    NotSettled(NotSettled),
    /// Kafka stopped `member`'s application with `error` (fuzz).
    MemberError {
        member: String,
        error: crate::facts::FatalError,
    },
    /// The run ended before the settle window closed (fuzz: the generator's mistake).
    SettleUnchecked,
    /// Records neither processed, nor skipped by an offset reset, nor in flight at the end
    /// (fuzz).
    NeverProcessed {
        records: u64,
    },
    /// Partitions of a subscribed topic nobody owns at the end, after the quiet phase (fuzz).
    UnownedPartition {
        partitions: Vec<String>,
    },
}

/// `not_settled`: how the group failed to settle, and what the checker saw that explains it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotSettled {
    pub how: Unsettled,
    /// Members refusing the same assignment generation after generation ([`RefusedAgain`]).
    pub refused_again: Vec<RefusedAgain>,
    /// Group requests the coordinator held past their timeout since the last fault.
    pub timed_out: Vec<TimedOut>,
}

/// How the group failed to settle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unsettled {
    /// Settled by the bound, but a rebalance started in the quiet window after it.
    RebalancedInQuietWindow {
        bound_ms: u64,
        at_ms: u64,
        generation: i32,
        trigger: Trigger,
        member: Option<String>,
        until_ms: u64,
        rebalances_since_fault: u32,
    },
    /// Not settled by the bound (`bound_terms`: what it adds up); `what` is still happening.
    ByTheBound {
        bound_ms: u64,
        bound_terms: &'static str,
        what: String,
        rebalances_since_fault: u32,
    },
    /// Settled by the bound, not any more when the quiet window ended.
    AtTheWindowEnd { what: String },
}

/// Kafka's own loop ([`super::REFUSED_AGAIN`]): `member` refused its assignment, naming
/// `partitions` of a topic it does not subscribe to, in generations `first` to `last`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedAgain {
    pub member: String,
    pub first: i32,
    pub last: i32,
    pub partitions: Vec<String>,
}

/// `member`'s `request` timed out `count` times waiting for the coordinator (`waited_ms`
/// each; the first and the last at `first_ms`, `last_ms`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimedOut {
    pub member: String,
    pub request: RequestKind,
    pub count: u32,
    pub waited_ms: u64,
    pub first_ms: u64,
    pub last_ms: u64,
}

impl Verdict {
    /// The report's property this verdict breaks; `None` for the fuzzer's own.
    pub fn property(&self) -> Option<Property> {
        Some(match self {
            Verdict::DoubleOwnership { .. } => Property::DoubleOwnership,
            Verdict::ProcessedAfterRevoke { .. } => Property::ProcessedAfterRevoke,
            Verdict::AssignedBeforeReleased { .. } => Property::AssignedBeforeReleased,
            Verdict::OffsetRegression { .. } => Property::OffsetRegression,
            Verdict::CommittedOffsetLost { .. } => Property::CommittedOffsetLost,
            Verdict::NotSettled(_) => Property::NotSettled,
            _ => return None,
        })
    }

    /// The property's name: the report's `kind`, the fuzzer's property.
    pub fn kind(&self) -> &'static str {
        if let Some(p) = self.property() {
            return p.name();
        }
        match self {
            Verdict::MemberError { .. } => "member_error",
            Verdict::SettleUnchecked => "settle_unchecked",
            Verdict::NeverProcessed { .. } => "never_processed",
            _ => "unowned_partition",
        }
    }
}

/// The verdict in words: the report's `detail`.
impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::DoubleOwnership {
                partition,
                owner,
                claimant,
                upgrade_before_sync,
            } => {
                write!(f, "{partition} owned by {owner} and {claimant}")?;
                if *upgrade_before_sync {
                    write!(
                        f,
                        " ({owner} still held it outside its recorded assignment: {})",
                        super::UPGRADE_BEFORE_SYNC
                    )?;
                }
                Ok(())
            }
            Verdict::ProcessedAfterRevoke {
                member,
                partition,
                records,
                owner,
            } => write!(
                f,
                "{member} processed {records} records of {partition} after its own callback gave it up (owner now: {})",
                owner.as_deref().unwrap_or("none")
            ),
            Verdict::AssignedBeforeReleased {
                partition,
                member,
                reporter,
            } => write!(
                f,
                "{partition} given to {member} while {reporter} still reports owning it"
            ),
            Verdict::OffsetRegression {
                member,
                partition,
                offset,
                committed,
            } => write!(
                f,
                "{member} committed {offset} for {partition} below the committed {committed}"
            ),
            Verdict::CommittedOffsetLost {
                partition,
                read,
                written,
            } => {
                let read = read.map_or("none".to_string(), |o| o.to_string());
                write!(
                    f,
                    "{partition} reads committed offset {read}, below the {written} committed before"
                )
            }
            Verdict::NotSettled(n) => n.fmt(f),
            Verdict::MemberError { member, error } => write!(f, "{member}: {}", error.name()),
            Verdict::SettleUnchecked => {
                f.write_str("the run ended before the settle window closed")
            }
            Verdict::NeverProcessed { records } => write!(
                f,
                "{records} records were never processed (nor skipped by offset reset, nor in flight at the end)"
            ),
            Verdict::UnownedPartition { partitions } => write!(
                f,
                "at the end, after the quiet phase, nobody owns {}",
                partitions.join(", ")
            ),
        }
    }
}

impl fmt::Display for NotSettled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.how {
            Unsettled::RebalancedInQuietWindow {
                bound_ms,
                at_ms,
                generation,
                trigger,
                member,
                until_ms,
                rebalances_since_fault,
            } => {
                let who = member.as_ref().map_or(String::new(), |m| format!(" by {m}"));
                write!(
                    f,
                    "the group settled by the bound ({bound_ms} ms) but a rebalance started at {at_ms} ms (generation {generation}, {}{who}) inside the quiet window that lasts until {until_ms} ms; {rebalances_since_fault} rebalance(s) since the last fault",
                    trigger.name()
                )?;
            }
            Unsettled::ByTheBound {
                bound_ms,
                bound_terms,
                what,
                rebalances_since_fault,
            } => write!(
                f,
                "not settled by the bound ({bound_ms} ms = {bound_terms}): {what}; {rebalances_since_fault} rebalance(s) since the last fault"
            )?,
            Unsettled::AtTheWindowEnd { what } => {
                write!(f, "not settled at the end of the quiet window: {what}")?
            }
        }
        for r in &self.refused_again {
            write!(
                f,
                "; {} refused its assignment in generations {} to {} (it names {}, of a topic it does not subscribe to): {}",
                r.member,
                r.first,
                r.last,
                r.partitions.join(" "),
                super::REFUSED_AGAIN
            )?;
        }
        for t in &self.timed_out {
            write!(
                f,
                "; {}'s {} timed out {} time(s) waiting for the coordinator's answer ({} ms each; the first at {} ms, the last at {} ms)",
                t.member,
                t.request.name(),
                t.count,
                t.waited_ms,
                t.first_ms,
                t.last_ms
            )?;
        }
        Ok(())
    }
}
