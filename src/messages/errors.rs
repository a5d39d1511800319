//! The protocol's error codes.

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
