//! SyncGroup: the leader's assignment in, each member's share out.

use super::ErrorCode;

/// A SyncGroup request.
#[derive(Clone, Debug)]
pub struct SyncGroupRequest {
    pub member_id: String,
    pub generation: i32,
    pub group_instance_id: Option<String>,
    /// Checked against the group's when given (v5+); a mismatch is
    /// INCONSISTENT_GROUP_PROTOCOL.
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    /// The leader's assignment, by member id (`None`: an empty list).
    pub assignments: Option<Vec<(String, Vec<usize>)>>,
}

/// A SyncGroup response.
#[derive(Clone, Debug)]
pub struct SyncGroupResponse {
    pub error: ErrorCode,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    /// `None`: empty bytes (an error, or a member the leader left out); `Some` may be an
    /// empty assignment.
    pub assignment: Option<Vec<usize>>,
}

impl SyncGroupResponse {
    /// An error answer: no protocol, empty assignment bytes.
    pub fn error(error: ErrorCode) -> SyncGroupResponse {
        SyncGroupResponse {
            error,
            protocol_type: None,
            protocol_name: None,
            assignment: None,
        }
    }
}
