//! The consumer group, broker side: the classic protocol's coordinator, what its elected leader
//! runs (`leader.rs`, called by the client), and the requests and responses between them.

pub mod coordinator;
pub mod leader;
pub mod messages;
