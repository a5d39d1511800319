//! The consumer group: the classic protocol's coordinator (broker side) and member (client
//! side), and the requests and responses between them.

pub mod coordinator;
pub mod leader;
pub mod member;
pub mod messages;
