//! What a fact changed in the group's story, for the figures to fold (`crate::metrics`): the
//! ledger (`ledger/`) reads ownership, members and rebalances once, and tells the metrics
//! only what they count, already resolved (a rebalance with its cause, records processed and
//! whether by their partition's owner). A fact makes at most one change; what a change needs
//! beyond a few numbers the ledger keeps (the completed rebalances, the conversions), so a
//! change is a small value, copied.

use crate::facts::{FatalError, Miss};
use crate::messages::Trigger;
use crate::sim::SimTime;

/// One change, in the order the facts made them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// A rebalance of the formed group began; what caused it (a crash 45 s earlier, say)
    /// happened at `cause`.
    RebalanceStarted { cause: SimTime },
    /// A rebalance of the formed group is Stable: the last of the ledger's
    /// [`completed_rebalances`](super::Ledger::completed_rebalances).
    RebalanceCompleted,
    /// Records `[from, to)` of `partition` were processed; `by_owner` when by the member that
    /// owns it now (a zombie's batch moves nobody's position).
    Processed {
        partition: usize,
        from: u64,
        to: u64,
        by_owner: bool,
    },
    /// A fetch position was set (committed offset or `auto.offset.reset`).
    PositionSet { partition: usize, position: u64 },
    /// `member` fetched `records` from a replica outside its rack.
    CrossRackFetched { member: usize, records: u64 },
    /// A notification was joined (or missed, for one reason) `latency_us` after it was
    /// produced.
    Notification {
        outcome: Result<(), Miss>,
        latency_us: u64,
    },
    /// A member begins rebuilding a partition's state: `records` replayed over `duration_us`
    /// (0 for a standby takeover).
    RestoreStarted {
        standby: bool,
        records: u64,
        duration_us: u64,
    },
    /// A fatal error stopped `member`'s application.
    MemberFailed { member: usize, error: FatalError },
    /// The group converted between the protocols: the last of the ledger's
    /// [`conversions`](super::Ledger::conversions).
    GroupConverted,
}

/// A conversion of the group between the protocols (`to_consumer`, or back to classic), by
/// `by`'s join or departure (`replaced`: a static member's new process on the classic
/// protocol took over), carrying `epoch` and `members` over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversion {
    pub at: SimTime,
    pub to_consumer: bool,
    pub by: Option<usize>,
    pub replaced: bool,
    pub epoch: i32,
    pub members: Vec<usize>,
}

/// A rebalance from PreparingRebalance to Stable, as the ledger followed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletedRebalance {
    pub generation: i32,
    pub trigger: Trigger,
    /// The member whose event triggered it.
    pub member: Option<usize>,
    /// When its cause happened (at or before `start`).
    pub cause: SimTime,
    pub start: SimTime,
    /// When its join phase completed, if it had one.
    pub join_end: Option<SimTime>,
    pub end: SimTime,
    /// The group's protocol name its join phase chose.
    pub assignor: String,
}
