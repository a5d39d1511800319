//! The Kafka protocol's group messages, as much of them as the simulation needs: the requests a
//! client sends and the responses a broker gives (classic JoinGroup, SyncGroup, Heartbeat,
//! LeaveGroup; KIP-848's ConsumerGroupHeartbeat; OffsetCommit, OffsetFetch, FindCoordinator),
//! with their error codes. The vocabulary every side speaks (client, coordinator, network,
//! facts, conformance replay), so it sits below all of them; and the records the coordinator
//! writes to `__consumer_offsets` (`records.rs`), which Kafka defines the same way, as messages.
//! Partitions are global partition indexes.

pub mod records;

/// Which process sent a request: the scenario member and its process incarnation (a restarted
/// process is a new incarnation; responses to a dead one are dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClientRef {
    pub member: usize,
    pub incarnation: u32,
}

/// What a member's JoinGroup carries for one protocol (ConsumerProtocol Subscription).
/// The coordinator compares it as Kafka compares the metadata bytes: two are the same
/// metadata exactly when they are equal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscription {
    pub topics: Vec<String>,
    /// `ownedPartitions`: what the member still owns after `onJoinPrepare` (empty under EAGER).
    pub owned: Vec<usize>,
    /// StickyAssignor's userData: the assignment of the member's last `onAssignment` (EAGER
    /// members; kept through the revocation before each join, which is how sticky stays
    /// sticky, and through a reset or lost partitions, until the next assignment).
    pub previous_assignment: Vec<usize>,
    /// `generationId` (ConsumerProtocolSubscription v2+): the generation the member joins
    /// from, `None` after a reset (Kafka's -1).
    pub generation: Option<i32>,
    /// The generation of the member's last `onAssignment`, which the sticky assignors keep in
    /// their userData (`None`: none yet). It differs from `generation` after a reset, or after
    /// a JoinGroup answer whose SyncGroup failed.
    pub assigned_generation: Option<i32>,
    /// userData sent as opaque bytes (a conformance script's `user_data_b64`); `None` is
    /// Kafka's null userData. The simulated clients keep theirs in `previous_assignment`.
    pub user_data: Option<Vec<u8>>,
    /// `rackId` (ConsumerProtocolSubscription v3, KIP-881): the member's `client.rack`.
    pub rack_id: Option<String>,
}

/// One entry of a JoinGroup's protocol list: an assignor name and its metadata
/// (`JoinGroupRequestProtocol`), in the member's preference order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinProtocol {
    pub name: String,
    pub metadata: Subscription,
}

/// The JoinGroup version the simulated clients send (Kafka 4.x's latest).
pub const JOIN_GROUP_VERSION: i16 = 9;

/// `protocol_type` of a consumer's JoinGroup and SyncGroup.
pub const CONSUMER_PROTOCOL_TYPE: &str = "consumer";

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
        /// The request's API version: below 4 there is no MEMBER_ID_REQUIRED round trip, below
        /// 9 no `skip_assignment` (KIP-394, KIP-814).
        version: i16,
        member_id: String,
        group_instance_id: Option<String>,
        client_id: String,
        protocol_type: String,
        /// The assignors in preference order, each with its metadata.
        protocols: Vec<JoinProtocol>,
        rebalance_timeout_ms: u64,
        session_timeout_ms: u64,
        reason: JoinReason,
    },
    SyncGroup {
        member_id: String,
        generation: i32,
        group_instance_id: Option<String>,
        /// Checked against the group's when given (v5+); a mismatch is
        /// INCONSISTENT_GROUP_PROTOCOL.
        protocol_type: Option<String>,
        protocol_name: Option<String>,
        /// The leader's assignment, by member id (`None`: an empty list).
        assignments: Option<Vec<(String, Vec<usize>)>>,
    },
    Heartbeat {
        member_id: String,
        generation: i32,
        group_instance_id: Option<String>,
    },
    /// LeaveGroup v3+: a batch of members (KIP-345), each answered on its own.
    LeaveGroup {
        members: Vec<LeavingMember>,
    },
    OffsetCommit {
        member_id: String,
        generation: i32,
        offsets: Vec<(usize, u64)>,
    },
    OffsetFetch {
        partitions: Vec<usize>,
    },
    /// FindCoordinator for the group, to any broker (the client's first step,
    /// `ensureCoordinatorReady`); the broker answers with the coordinator's.
    FindCoordinator,
    /// KIP-848's ConsumerGroupHeartbeat (v1): `None` fields were not sent (only what changed
    /// is, the full set while joining); the rebalance timeout -1 when not sent.
    ConsumerGroupHeartbeat {
        member_id: String,
        member_epoch: i32,
        instance_id: Option<String>,
        rebalance_timeout_ms: i32,
        subscribed_topic_names: Option<Vec<String>>,
        server_assignor: Option<String>,
        owned: Option<Vec<usize>>,
    },
}

/// Which request a [`Response::Failed`] answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RequestKind {
    JoinGroup,
    SyncGroup,
    Heartbeat,
    LeaveGroup,
    OffsetCommit,
    OffsetFetch,
    FindCoordinator,
    ConsumerGroupHeartbeat,
}

impl RequestKind {
    pub fn name(self) -> &'static str {
        match self {
            RequestKind::JoinGroup => "JoinGroup",
            RequestKind::SyncGroup => "SyncGroup",
            RequestKind::Heartbeat => "Heartbeat",
            RequestKind::LeaveGroup => "LeaveGroup",
            RequestKind::OffsetCommit => "OffsetCommit",
            RequestKind::OffsetFetch => "OffsetFetch",
            RequestKind::FindCoordinator => "FindCoordinator",
            RequestKind::ConsumerGroupHeartbeat => "ConsumerGroupHeartbeat",
        }
    }
}

impl Request {
    pub fn kind(&self) -> RequestKind {
        match self {
            Request::JoinGroup { .. } => RequestKind::JoinGroup,
            Request::SyncGroup { .. } => RequestKind::SyncGroup,
            Request::Heartbeat { .. } => RequestKind::Heartbeat,
            Request::LeaveGroup { .. } => RequestKind::LeaveGroup,
            Request::OffsetCommit { .. } => RequestKind::OffsetCommit,
            Request::OffsetFetch { .. } => RequestKind::OffsetFetch,
            Request::FindCoordinator => RequestKind::FindCoordinator,
            Request::ConsumerGroupHeartbeat { .. } => RequestKind::ConsumerGroupHeartbeat,
        }
    }
}

/// One member of a LeaveGroup batch: by member id, or by `group.instance.id` alone (an
/// administrative removal, with an empty member id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeavingMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub reason: LeaveReason,
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
    GroupMaxSizeReached,
    /// KIP-848: the member's epoch is not the coordinator's (it must rejoin with epoch 0).
    FencedMemberEpoch,
    /// KIP-848: a static member's instance id is still held by another live member.
    UnreleasedInstanceId,
    /// KIP-848: an OffsetCommit at a member epoch that is not the member's.
    StaleMemberEpoch,
    /// The broker asked is not (or no longer) the group's coordinator.
    NotCoordinator,
    /// No broker is the coordinator now (its `__consumer_offsets` partition has no leader).
    CoordinatorNotAvailable,
    /// The coordinator is still loading the group from `__consumer_offsets`.
    CoordinatorLoadInProgress,
    /// The group is not of the protocol asked for, and cannot be converted to it (a
    /// ConsumerGroupHeartbeat to a classic group the migration policy keeps classic).
    GroupIdNotFound,
    /// The client's own: the connection was closed (the broker died, or a request timed out).
    Disconnected,
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
            ErrorCode::GroupMaxSizeReached => "GROUP_MAX_SIZE_REACHED",
            ErrorCode::FencedMemberEpoch => "FENCED_MEMBER_EPOCH",
            ErrorCode::UnreleasedInstanceId => "UNRELEASED_INSTANCE_ID",
            ErrorCode::StaleMemberEpoch => "STALE_MEMBER_EPOCH",
            ErrorCode::NotCoordinator => "NOT_COORDINATOR",
            ErrorCode::CoordinatorNotAvailable => "COORDINATOR_NOT_AVAILABLE",
            ErrorCode::CoordinatorLoadInProgress => "COORDINATOR_LOAD_IN_PROGRESS",
            ErrorCode::GroupIdNotFound => "GROUP_ID_NOT_FOUND",
            ErrorCode::Disconnected => "DISCONNECTED",
        }
    }
}

#[derive(Clone, Debug)]
pub enum Response {
    JoinGroup {
        error: ErrorCode,
        member_id: String,
        generation: i32,
        /// `None` is Kafka's null (an error answer).
        protocol_type: Option<String>,
        /// The selected protocol; `None` is null, and an error answer usually carries `""`.
        protocol_name: Option<String>,
        leader: String,
        /// Only the leader gets the members, in the broker's member-map order.
        members: Vec<JoinedMember>,
        /// Static replacement in a Stable group: the leader must not reassign (KIP-345).
        skip_assignment: bool,
    },
    SyncGroup {
        error: ErrorCode,
        protocol_type: Option<String>,
        protocol_name: Option<String>,
        /// `None`: empty bytes (an error, or a member the leader left out); `Some` may be an
        /// empty assignment.
        assignment: Option<Vec<usize>>,
    },
    Heartbeat {
        error: ErrorCode,
    },
    LeaveGroup {
        error: ErrorCode,
        /// One answer per member of the batch, in request order.
        members: Vec<LeftMember>,
    },
    OffsetCommit {
        error: ErrorCode,
    },
    OffsetFetch {
        committed: Vec<(usize, Option<u64>)>,
    },
    FindCoordinator {
        /// The broker that leads the group's `__consumer_offsets` partition.
        broker: u32,
    },
    /// A request that got no answer from the group's state: the connection failed (the broker
    /// died, a network partition, `request.timeout.ms`) or the broker is not the coordinator
    /// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS). The world answers these, the network
    /// being where faults are inserted.
    Failed {
        request: RequestKind,
        error: ErrorCode,
    },
    ConsumerGroupHeartbeat {
        error: ErrorCode,
        member_id: Option<String>,
        member_epoch: i32,
        heartbeat_interval_ms: i32,
        /// `None`: keep what you have; else the whole assignment.
        assignment: Option<Vec<usize>>,
    },
}

/// One member's answer in a LeaveGroup response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub error: ErrorCode,
}

impl Response {
    /// Whether it shows the client reached the group's coordinator: anything but a lookup's
    /// answer, a disconnect, and the errors that say the broker is not the coordinator.
    pub fn from_the_coordinator(&self) -> bool {
        match self {
            Response::FindCoordinator { .. } => false,
            Response::Failed { request, error } => {
                *request != RequestKind::FindCoordinator
                    && !matches!(
                        error,
                        ErrorCode::Disconnected
                            | ErrorCode::NotCoordinator
                            | ErrorCode::CoordinatorNotAvailable
                    )
            }
            _ => true,
        }
    }

    /// The request it answers.
    pub fn kind(&self) -> RequestKind {
        match self {
            Response::Failed { request, .. } => *request,
            Response::JoinGroup { .. } => RequestKind::JoinGroup,
            Response::SyncGroup { .. } => RequestKind::SyncGroup,
            Response::Heartbeat { .. } => RequestKind::Heartbeat,
            Response::LeaveGroup { .. } => RequestKind::LeaveGroup,
            Response::OffsetCommit { .. } => RequestKind::OffsetCommit,
            Response::OffsetFetch { .. } => RequestKind::OffsetFetch,
            Response::FindCoordinator { .. } => RequestKind::FindCoordinator,
            Response::ConsumerGroupHeartbeat { .. } => RequestKind::ConsumerGroupHeartbeat,
        }
    }

    /// A JoinGroup error answer as Kafka builds one: the error and the member id, every other
    /// field at its default (generation -1, protocol type null, protocol name and leader "").
    pub fn join_error(error: ErrorCode, member_id: &str) -> Response {
        Response::JoinGroup {
            error,
            member_id: member_id.to_string(),
            generation: -1,
            protocol_type: None,
            protocol_name: Some(String::new()),
            leader: String::new(),
            members: Vec::new(),
            skip_assignment: false,
        }
    }

    /// A SyncGroup error answer: no protocol, empty assignment bytes.
    pub fn sync_error(error: ErrorCode) -> Response {
        Response::SyncGroup {
            error,
            protocol_type: None,
            protocol_name: None,
            assignment: None,
        }
    }
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

/// `ConsumerGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH`: the member epoch a member leaves
/// with.
pub const LEAVE_EPOCH: i32 = -1;

/// `ConsumerGroupHeartbeatRequest.LEAVE_GROUP_STATIC_MEMBER_EPOCH`: a static member leaving
/// for now, its assignment kept for its instance id (KIP-848's static membership).
pub const STATIC_LEAVE_EPOCH: i32 = -2;
