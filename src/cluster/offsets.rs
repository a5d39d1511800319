//! The state of `__consumer_offsets` for the group: the committed offset of each partition.
//! It belongs to the cluster, not to the coordinator that writes it: the coordinator appends
//! commit records (`CoordinatorEffect::CommitOffset`) and reads the committed offsets when it
//! answers OffsetFetch, so a coordinator that moves to another broker finds them here. The
//! group's own record (GROUP_METADATA) is kept beside them, as the compacted topic keeps the
//! latest value of each key.

use crate::messages::records::GroupRecord;

pub struct OffsetsStore {
    committed: Vec<Option<u64>>,
    group: Option<GroupRecord>,
}

impl OffsetsStore {
    /// An empty store for global partition indexes `0..partitions`.
    pub fn new(partitions: usize) -> Self {
        OffsetsStore {
            committed: vec![None; partitions],
            group: None,
        }
    }

    /// An OffsetCommit record is written.
    pub fn commit(&mut self, partition: usize, offset: u64) {
        self.committed[partition] = Some(offset);
    }

    /// A group record is written; it replaces the previous one of its key.
    pub fn write_group(&mut self, record: GroupRecord) {
        self.group = Some(record);
    }

    /// The group's latest record, if one was written.
    pub fn group_record(&self) -> Option<&GroupRecord> {
        self.group.as_ref()
    }

    pub fn committed(&self, partition: usize) -> Option<u64> {
        self.committed.get(partition).copied().flatten()
    }
}
