//! The Kafka protocol's group messages, as much of them as the simulation needs: the requests a
//! client sends and the responses a broker gives (classic JoinGroup, SyncGroup, Heartbeat,
//! LeaveGroup; KIP-848's ConsumerGroupHeartbeat; OffsetCommit, OffsetFetch, FindCoordinator),
//! with their error codes. The vocabulary every side speaks (client, coordinator, network,
//! facts, conformance replay), so it sits below all of them; and the records the coordinator
//! writes to `__consumer_offsets` (`records.rs`), which Kafka defines the same way, as messages.
//! Partitions are global partition indexes.
//!
//! One struct per request and response, with Kafka's message names (`JoinGroupRequest`,
//! `SyncGroupResponse`, ...), in a file per API; [`Request`] and [`Response`] wrap them, one
//! variant each, and every struct converts `Into` its enum. A new field goes on its struct, and
//! into `world/digest.rs`, which names every field on purpose.

mod consumer_group_heartbeat;
mod errors;
mod find_coordinator;
mod heartbeat;
mod join_group;
mod leave_group;
mod offsets;
pub mod records;
mod sync_group;

pub use consumer_group_heartbeat::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, LEAVE_EPOCH, STATIC_LEAVE_EPOCH,
};
pub use errors::ErrorCode;
pub use find_coordinator::{FindCoordinatorRequest, FindCoordinatorResponse};
pub use heartbeat::{HeartbeatRequest, HeartbeatResponse};
pub use join_group::{
    JoinGroupRequest, JoinGroupResponse, JoinProtocol, JoinedMember, Subscription,
    CONSUMER_PROTOCOL_TYPE, JOIN_GROUP_VERSION,
};
pub use leave_group::{LeaveGroupRequest, LeaveGroupResponse, LeavingMember, LeftMember};
pub use offsets::{
    OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse,
};
pub use sync_group::{SyncGroupRequest, SyncGroupResponse};

/// Which process sent a request: the scenario member and its process incarnation (a restarted
/// process is a new incarnation; responses to a dead one are dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClientRef {
    pub member: usize,
    pub incarnation: u32,
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

/// A message enum, one variant per message struct, with `From` each struct to its variant, so
/// a sender writes only the struct.
macro_rules! message_enum {
    ($(#[$meta:meta])* $enum:ident { $($variant:ident($message:ty)),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Debug)]
        pub enum $enum {
            $($variant($message)),*
        }

        $(impl From<$message> for $enum {
            fn from(message: $message) -> $enum {
                $enum::$variant(message)
            }
        })*
    };
}

message_enum!(
    /// A request a client sends, one variant per API.
    Request {
        JoinGroup(JoinGroupRequest),
        SyncGroup(SyncGroupRequest),
        Heartbeat(HeartbeatRequest),
        LeaveGroup(LeaveGroupRequest),
        OffsetCommit(OffsetCommitRequest),
        OffsetFetch(OffsetFetchRequest),
        FindCoordinator(FindCoordinatorRequest),
        ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest),
    }
);

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
            Request::JoinGroup(_) => RequestKind::JoinGroup,
            Request::SyncGroup(_) => RequestKind::SyncGroup,
            Request::Heartbeat(_) => RequestKind::Heartbeat,
            Request::LeaveGroup(_) => RequestKind::LeaveGroup,
            Request::OffsetCommit(_) => RequestKind::OffsetCommit,
            Request::OffsetFetch(_) => RequestKind::OffsetFetch,
            Request::FindCoordinator(_) => RequestKind::FindCoordinator,
            Request::ConsumerGroupHeartbeat(_) => RequestKind::ConsumerGroupHeartbeat,
        }
    }
}

message_enum!(
    /// The answer a broker gives, one variant per API, and the world's [`FailedResponse`].
    Response {
        JoinGroup(JoinGroupResponse),
        SyncGroup(SyncGroupResponse),
        Heartbeat(HeartbeatResponse),
        LeaveGroup(LeaveGroupResponse),
        OffsetCommit(OffsetCommitResponse),
        OffsetFetch(OffsetFetchResponse),
        FindCoordinator(FindCoordinatorResponse),
        Failed(FailedResponse),
        ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse),
    }
);

/// A request that got no answer from the group's state: the connection failed (the broker
/// died, a network partition, `request.timeout.ms`) or the broker is not the coordinator
/// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS). The world answers these, the network
/// being where faults are inserted.
#[derive(Clone, Copy, Debug)]
pub struct FailedResponse {
    pub request: RequestKind,
    pub error: ErrorCode,
}

impl Response {
    /// Whether it shows the client reached the group's coordinator: anything but a lookup's
    /// answer, a disconnect, and the errors that say the broker is not the coordinator.
    pub fn from_the_coordinator(&self) -> bool {
        match self {
            Response::FindCoordinator(_) => false,
            Response::Failed(failed) => {
                failed.request != RequestKind::FindCoordinator
                    && !matches!(
                        failed.error,
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
            Response::Failed(failed) => failed.request,
            Response::JoinGroup(_) => RequestKind::JoinGroup,
            Response::SyncGroup(_) => RequestKind::SyncGroup,
            Response::Heartbeat(_) => RequestKind::Heartbeat,
            Response::LeaveGroup(_) => RequestKind::LeaveGroup,
            Response::OffsetCommit(_) => RequestKind::OffsetCommit,
            Response::OffsetFetch(_) => RequestKind::OffsetFetch,
            Response::FindCoordinator(_) => RequestKind::FindCoordinator,
            Response::ConsumerGroupHeartbeat(_) => RequestKind::ConsumerGroupHeartbeat,
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
