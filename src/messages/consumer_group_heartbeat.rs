//! KIP-848's ConsumerGroupHeartbeat.

use super::ErrorCode;

/// KIP-848's ConsumerGroupHeartbeat (v1): `None` fields were not sent (only what changed
/// is, the full set while joining); the rebalance timeout -1 when not sent.
#[derive(Clone, Debug)]
pub struct ConsumerGroupHeartbeatRequest {
    pub member_id: String,
    pub member_epoch: i32,
    pub instance_id: Option<String>,
    pub rebalance_timeout_ms: i32,
    pub subscribed_topic_names: Option<Vec<String>>,
    pub server_assignor: Option<String>,
    pub owned: Option<Vec<usize>>,
}

impl ConsumerGroupHeartbeatRequest {
    /// A leave: the member id, the leave epoch (-1, or -2 for a static member) and the instance
    /// id, nothing else sent.
    pub fn leave(
        member_id: String,
        member_epoch: i32,
        instance_id: Option<String>,
    ) -> ConsumerGroupHeartbeatRequest {
        ConsumerGroupHeartbeatRequest {
            member_id,
            member_epoch,
            instance_id,
            rebalance_timeout_ms: -1,
            subscribed_topic_names: None,
            server_assignor: None,
            owned: None,
        }
    }
}

/// A ConsumerGroupHeartbeat response.
#[derive(Clone, Debug)]
pub struct ConsumerGroupHeartbeatResponse {
    pub error: ErrorCode,
    pub member_id: Option<String>,
    pub member_epoch: i32,
    pub heartbeat_interval_ms: i32,
    /// `None`: keep what you have; else the whole assignment.
    pub assignment: Option<Vec<usize>>,
}

/// `ConsumerGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH`: the member epoch a member leaves
/// with.
pub const LEAVE_EPOCH: i32 = -1;

/// `ConsumerGroupHeartbeatRequest.LEAVE_GROUP_STATIC_MEMBER_EPOCH`: a static member leaving
/// for now, its assignment kept for its instance id (KIP-848's static membership).
pub const STATIC_LEAVE_EPOCH: i32 = -2;
