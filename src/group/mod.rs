//! The consumer group, broker side: the coordinator's dispatcher (`dispatcher.rs`, Kafka's
//! `GroupMetadataManager` role), which owns the group and routes each request to it by its
//! type: a classic group (`classic/`) or a KIP-848 consumer group (`consumer/`), both writing the
//! effects of `effects.rs`; the online migration that turns one into the other
//! (`migration.rs`). The requests and responses it answers, and the records it writes, are the
//! crate's `messages`, which every side speaks; what a classic group's elected leader runs is the
//! client's (`client/leader.rs`), as in Kafka.

pub mod classic;
pub mod consumer;
pub mod dispatcher;
pub mod effects;
mod migration;

pub use dispatcher::Coordinator;
