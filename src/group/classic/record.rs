//! Building the GROUP_METADATA record of the group as it stands (the record types are in
//! `group/records.rs`).

use super::{ClassicGroup, GroupMetadataRecord, MemberMetadataRecord};

impl ClassicGroup {
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
