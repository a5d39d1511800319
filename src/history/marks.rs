//! What happened when, for pictures of a run (the SVG timeline, the Perfetto trace, the lab's
//! lanes): every owner change, every start and stop of processing, member lifecycle events,
//! restores and rebalance phases. Recorded only when asked (`RunOptions::record_history`), by
//! the ledger (`ledger/`): who owns and processes a partition is its reading of the facts
//! (DESIGN.md "What counts"), the one the figures count too.

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mark {
    /// The partition's owner (DESIGN.md "What counts") is now `member` (`None`: nobody).
    Owner {
        partition: usize,
        member: Option<usize>,
    },
    /// The partition is now processed by `member` (`None`: not processed).
    Processing {
        partition: usize,
        member: Option<usize>,
    },
    /// A member's process event: `start`, `close`, `crash`, `stall_begin`, `stall_end`; and
    /// the coordinator's `removed` (session expired, left, fenced) or `replaced` (a static
    /// member's new process took over) ending an [`Mark::Unreachable`] member's entry.
    Member { member: usize, event: &'static str },
    /// A member of the group can no longer reach its coordinator (`cause`: `crash`, its process
    /// died; `cut_off`, a network partition until `until_us`), while the coordinator goes on
    /// counting it as a member that owns its partitions until its session expires.
    Unreachable {
        member: usize,
        cause: &'static str,
        until_us: Option<u64>,
    },
    /// A member begins rebuilding a partition's state, until `until_us`.
    Restore {
        member: usize,
        partition: usize,
        until_us: u64,
    },
    /// The coordinator enters PreparingRebalance for `generation`.
    RebalanceStart { generation: i32 },
    /// The join phase completed: `generation` is CompletingRebalance.
    JoinComplete { generation: i32 },
    /// The group is Stable at `generation`.
    Stable { generation: i32 },
}

/// Marks in time order (microseconds of simulated time), with the names they refer to.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunMarks {
    pub member_names: Vec<String>,
    pub partition_names: Vec<String>,
    pub marks: Vec<(u64, Mark)>,
}
