//! Classic group protocol requests and responses, as much of them as the simulation needs.
//! Partitions are global partition indexes.

/// Which process sent a request: the scenario member and its process incarnation (a restarted
/// process is a new incarnation; responses to a dead one are dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientRef {
    pub member: usize,
    pub incarnation: u32,
}

/// What a member's JoinGroup carries for one protocol (ConsumerProtocol Subscription).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscription {
    pub topics: Vec<String>,
    /// `ownedPartitions`: what the member still owns after `onJoinPrepare` (empty under EAGER).
    pub owned: Vec<usize>,
    /// StickyAssignor's userData: the member's previous assignment (kept through an EAGER
    /// revocation, which is how sticky stays sticky).
    pub previous_assignment: Vec<usize>,
    pub generation: Option<i32>,
}

/// Why a member (re)joins (KIP-800's JoinGroup reason), which names the rebalance it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinReason {
    /// A new member, or one whose membership was lost.
    New,
    /// Told by the coordinator (REBALANCE_IN_PROGRESS) or an error.
    Rebalance,
    /// A cooperative member revoked partitions and rejoins (`requestRejoin`).
    FollowUp,
    /// The member's subscription changed.
    Subscription,
    /// The leader saw partition counts change since its last assignment.
    Metadata,
}

/// Why a member leaves (LeaveGroup's reason), for the rebalance trigger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaveReason {
    /// `close()`.
    Close,
    /// The heartbeat thread saw the poll timer expire (max.poll.interval.ms).
    PollTimeout,
}

#[derive(Clone, Debug)]
pub enum Request {
    JoinGroup {
        member_id: String,
        group_instance_id: Option<String>,
        client_id: String,
        /// Assignor names in preference order.
        protocols: Vec<String>,
        subscription: Subscription,
        rebalance_timeout_ms: u64,
        session_timeout_ms: u64,
        reason: JoinReason,
    },
    SyncGroup {
        member_id: String,
        generation: i32,
        /// The leader's assignment, by member id.
        assignments: Option<Vec<(String, Vec<usize>)>>,
    },
    Heartbeat {
        member_id: String,
        generation: i32,
    },
    LeaveGroup {
        member_id: String,
        reason: LeaveReason,
    },
    OffsetCommit {
        member_id: String,
        generation: i32,
        offsets: Vec<(usize, u64)>,
    },
    OffsetFetch {
        partitions: Vec<usize>,
    },
}

/// A member as the JoinGroup response lists it to the leader.
#[derive(Clone, Debug)]
pub struct JoinedMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub subscription: Subscription,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    None,
    MemberIdRequired,
    UnknownMemberId,
    IllegalGeneration,
    RebalanceInProgress,
    InconsistentGroupProtocol,
    FencedInstanceId,
}

impl ErrorCode {
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::None => "NONE",
            ErrorCode::MemberIdRequired => "MEMBER_ID_REQUIRED",
            ErrorCode::UnknownMemberId => "UNKNOWN_MEMBER_ID",
            ErrorCode::IllegalGeneration => "ILLEGAL_GENERATION",
            ErrorCode::RebalanceInProgress => "REBALANCE_IN_PROGRESS",
            ErrorCode::InconsistentGroupProtocol => "INCONSISTENT_GROUP_PROTOCOL",
            ErrorCode::FencedInstanceId => "FENCED_INSTANCE_ID",
        }
    }
}

#[derive(Clone, Debug)]
pub enum Response {
    JoinGroup {
        error: ErrorCode,
        member_id: String,
        generation: i32,
        protocol: Option<String>,
        leader: String,
        /// Only the leader gets the members, in the broker's member-map order.
        members: Vec<JoinedMember>,
        /// Static replacement in a Stable group: the leader must not reassign (KIP-345).
        skip_assignment: bool,
    },
    SyncGroup {
        error: ErrorCode,
        assignment: Vec<usize>,
    },
    Heartbeat {
        error: ErrorCode,
    },
    OffsetCommit {
        error: ErrorCode,
    },
    OffsetFetch {
        committed: Vec<(usize, Option<u64>)>,
    },
}

/// Why a rebalance started (DESIGN.md `rebalances.list[].trigger`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    MemberJoined,
    MemberLeft,
    MemberExpired,
    PollTimeout,
    FollowUp,
    SubscriptionChanged,
    MetadataChanged,
    MemberRestarted,
}

impl Trigger {
    pub fn name(self) -> &'static str {
        match self {
            Trigger::MemberJoined => "member_joined",
            Trigger::MemberLeft => "member_left",
            Trigger::MemberExpired => "member_expired",
            Trigger::PollTimeout => "poll_timeout",
            Trigger::FollowUp => "follow_up",
            Trigger::SubscriptionChanged => "subscription_changed",
            Trigger::MetadataChanged => "metadata_changed",
            Trigger::MemberRestarted => "member_restarted",
        }
    }
}
