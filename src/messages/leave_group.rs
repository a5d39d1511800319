//! LeaveGroup: a batch of leaving members (KIP-345), each answered on its own.

use super::{ErrorCode, LeaveReason};

/// LeaveGroup v3+: a batch of members (KIP-345), each answered on its own.
#[derive(Clone, Debug)]
pub struct LeaveGroupRequest {
    pub members: Vec<LeavingMember>,
}

/// One member of a LeaveGroup batch: by member id, or by `group.instance.id` alone (an
/// administrative removal, with an empty member id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeavingMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub reason: LeaveReason,
}

/// A LeaveGroup response.
#[derive(Clone, Debug)]
pub struct LeaveGroupResponse {
    pub error: ErrorCode,
    /// One answer per member of the batch, in request order.
    pub members: Vec<LeftMember>,
}

/// One member's answer in a LeaveGroup response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub error: ErrorCode,
}
