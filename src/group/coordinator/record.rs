//! The records the coordinator writes to `__consumer_offsets` besides offsets: what a
//! coordinator that takes the group over loads (Kafka's `GroupMetadataValue`).

use super::{Coordinator, Subscription};

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

impl Coordinator {
    /// The group as a GROUP_METADATA record (members in map order).
    pub(super) fn group_metadata_record(&self) -> GroupMetadataRecord {
        let protocol = self.protocol_name.clone();
        GroupMetadataRecord {
            protocol_type: self.protocol_type.clone(),
            generation: self.generation,
            protocol: protocol.clone(),
            leader: self.leader.clone(),
            members: self
                .members
                .iter()
                .map(|(id, m)| MemberMetadataRecord {
                    member_id: id.clone(),
                    group_instance_id: m.group_instance_id.clone(),
                    rebalance_timeout_ms: m.rebalance_timeout_ms,
                    session_timeout_ms: m.session_timeout_ms,
                    subscription: protocol.as_deref().and_then(|p| m.metadata(p)).cloned(),
                    assignment: m.assignment.clone(),
                })
                .collect(),
        }
    }
}
