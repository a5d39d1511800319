//! cgsim: a deterministic discrete-event simulator of an Apache Kafka consumer group.
//!
//! Data flows one way: scenario -> world (the driver) -> state machines (coordinator, members)
//! -> facts -> metrics -> report. The state machines return effects that the world applies;
//! the assignors and the partitioner are pure functions usable on their own (`cgsim assign`,
//! `cgsim partition`).

pub mod app;
pub mod assignor;
pub mod check;
pub mod client;
pub mod cluster;
pub mod conform;
pub mod explain;
pub mod facts;
pub mod fuzz;
pub mod group;
pub mod java;
pub mod lab;
pub mod metrics;
pub mod report;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod workload;
pub mod world;
