//! The state of `__consumer_offsets` for the group: the committed offset of each partition.
//! It belongs to the cluster, not to the coordinator that writes it: the coordinator appends
//! commit records (`CoordinatorEffect::CommitOffset`) and reads the committed offsets when it
//! answers OffsetFetch, so a coordinator that moves to another broker finds them here.

pub struct OffsetsStore {
    committed: Vec<Option<u64>>,
}

impl OffsetsStore {
    /// An empty store for global partition indexes `0..partitions`.
    pub fn new(partitions: usize) -> Self {
        OffsetsStore {
            committed: vec![None; partitions],
        }
    }

    /// An OffsetCommit record is written.
    pub fn commit(&mut self, partition: usize, offset: u64) {
        self.committed[partition] = Some(offset);
    }

    pub fn committed(&self, partition: usize) -> Option<u64> {
        self.committed.get(partition).copied().flatten()
    }
}
