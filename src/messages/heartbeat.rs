//! The classic protocol's Heartbeat.

use super::ErrorCode;

/// A Heartbeat request.
#[derive(Clone, Debug)]
pub struct HeartbeatRequest {
    pub member_id: String,
    pub generation: i32,
    pub group_instance_id: Option<String>,
}

/// A Heartbeat response.
#[derive(Clone, Debug)]
pub struct HeartbeatResponse {
    pub error: ErrorCode,
}
