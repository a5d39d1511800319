//! cgsim: a deterministic discrete-event simulator of an Apache Kafka consumer group.
//!
//! Data flows one way: scenario -> simulation -> metrics -> report. The assignors and the
//! partitioner are pure functions usable on their own (`cgsim assign`, `cgsim partition`).

pub mod app;
pub mod assignor;
pub mod cluster;
pub mod engine;
pub mod group;
pub mod java;
pub mod metrics;
pub mod report;
pub mod scenario;
pub mod sim;
pub mod workload;
