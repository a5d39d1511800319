//! The records the group coordinator writes to `__consumer_offsets` besides offsets: what a
//! coordinator that takes the group over loads (Kafka's `GroupMetadataValue`, generated from a
//! message definition like the requests). Part of the vocabulary, so the cluster's offsets store
//! can keep them without knowing the coordinator.

use super::Subscription;

/// A group record, by Kafka's record name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupRecord {
    /// GROUP_METADATA: the group's generation, protocol, leader and members with their stored
    /// assignments. Written when a group is created, when the leader's assignment is stored,
    /// when a static member is replaced without a rebalance, and when the group turns Empty.
    GroupMetadata(GroupMetadataRecord),
}

impl GroupRecord {
    /// The record's type as Kafka's traces name it.
    pub fn name(&self) -> &'static str {
        match self {
            GroupRecord::GroupMetadata(_) => "GROUP_METADATA",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupMetadataRecord {
    pub protocol_type: Option<String>,
    pub generation: i32,
    pub protocol: Option<String>,
    pub leader: Option<String>,
    pub members: Vec<MemberMetadataRecord>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberMetadataRecord {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub rebalance_timeout_ms: u64,
    pub session_timeout_ms: u64,
    /// The member's metadata for the selected protocol.
    pub subscription: Option<Subscription>,
    /// `None`: empty bytes.
    pub assignment: Option<Vec<usize>>,
}
