//! OffsetCommit and OffsetFetch.

use super::ErrorCode;

/// An OffsetCommit request: `(partition, offset)` pairs.
#[derive(Clone, Debug)]
pub struct OffsetCommitRequest {
    pub member_id: String,
    pub generation: i32,
    pub offsets: Vec<(usize, u64)>,
}

/// An OffsetFetch request.
#[derive(Clone, Debug)]
pub struct OffsetFetchRequest {
    pub partitions: Vec<usize>,
}

/// An OffsetCommit response.
#[derive(Clone, Debug)]
pub struct OffsetCommitResponse {
    pub error: ErrorCode,
}

/// An OffsetFetch response: each partition's committed offset (`None`: none).
#[derive(Clone, Debug)]
pub struct OffsetFetchResponse {
    pub committed: Vec<(usize, Option<u64>)>,
}
