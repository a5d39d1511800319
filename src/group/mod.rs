//! The consumer group, broker side: the classic protocol's coordinator, what its elected leader
//! runs (`leader.rs`, called by the client), the requests and responses between them, and the
//! records the coordinator writes (`records.rs`).

pub mod consumer_group;
pub mod coordinator;
pub mod leader;
pub mod messages;
pub mod records;
