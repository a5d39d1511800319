//! Facts: what the state machines say happened, in Kafka's words. A model records a fact as one
//! of its effects; the world hands every fact to the observers (metrics today, the checkers
//! next), which keep their own record of the truth. Nothing here feeds back into a model.
//!
//! Members are scenario member indexes, partitions global partition indexes
//! (`cluster::PartitionSpace`).

use crate::app::join::Miss;
use crate::group::messages::Trigger;
use crate::sim::SimTime;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    // ---- The coordinator (broker side) ----
    /// A member was added to the group under `member_id`.
    MemberAdded { member: usize, member_id: String },
    /// KIP-345: a static member's new process took over its instance's entry.
    MemberReplaced { member: usize, member_id: String },
    /// The coordinator removed the member (left, expired, or did not rejoin or sync in time).
    MemberRemoved { member: usize, member_id: String },
    /// The group went to PreparingRebalance for `generation` (the one the rebalance makes).
    RebalanceStarted {
        generation: i32,
        trigger: Trigger,
        member: Option<usize>,
    },
    /// The join phase completed: CompletingRebalance with `generation`, the group's
    /// `protocol_name` (the assignor every member supports that most of them prefer).
    JoinCompleted { generation: i32, assignor: String },
    /// The leader's SyncGroup made the group Stable.
    GroupStable { generation: i32 },
    /// The group has no members left.
    GroupEmpty,
    /// KIP-848: a member's heartbeat reported what it owns (as the coordinator received it).
    OwnedReported {
        member: usize,
        partitions: Vec<usize>,
    },
    /// KIP-848: the coordinator's answer gave the member this whole assignment.
    AssignmentSent {
        member: usize,
        partitions: Vec<usize>,
    },
    /// The coordinator stored a committed offset.
    OffsetCommitted {
        member: usize,
        partition: usize,
        offset: u64,
    },

    // ---- A consumer (client side) ----
    /// A new process starts (first start or restart).
    ProcessStarted { member: usize },
    /// The member sends a JoinGroup without a member id: it joins as a new member.
    Joining { member: usize },
    /// `close()` was called.
    CloseRequested { member: usize },
    /// The process finished closing.
    ProcessStopped { member: usize },
    /// The process died owning `owned`.
    Crashed { member: usize, owned: Vec<usize> },
    /// The poll loop is stuck inside a batch until `until`.
    Stalled { member: usize, until: SimTime },
    /// The stalled batch finished.
    StallEnded { member: usize },
    /// A fatal error: `KafkaConsumer.poll` throws and the application exits.
    FatalError { member: usize, error: &'static str },
    /// `onPartitionsAssigned` (SyncGroup's assignment minus what the member owned).
    Assigned {
        member: usize,
        partitions: Vec<usize>,
    },
    /// `onPartitionsRevoked` during a rebalance.
    Revoked {
        member: usize,
        partitions: Vec<usize>,
    },
    /// `onPartitionsRevoked` from `close()`.
    RevokedOnClose {
        member: usize,
        partitions: Vec<usize>,
    },
    /// `onPartitionsLost`.
    Lost {
        member: usize,
        partitions: Vec<usize>,
    },
    /// Fetch positions are known: processing of these partitions can start.
    ProcessingStarted {
        member: usize,
        partitions: Vec<usize>,
    },
    /// A partition's fetch position was set (committed offset or `auto.offset.reset`).
    PositionSet { partition: usize, position: u64 },
    /// Records `[from, to)` of a partition were processed.
    Processed {
        member: usize,
        partition: usize,
        from: u64,
        to: u64,
    },
    /// The local join looked a notification up (`Err`: missed, for one reason).
    Notification {
        outcome: Result<(), Miss>,
        latency_us: u64,
    },
    /// State recovery of a price partition began: `records` replayed over `duration_us`.
    RestoreStarted {
        member: usize,
        partition: usize,
        standby: bool,
        records: u64,
        duration_us: u64,
    },
}
