//! The workload side: how producers place records in partitions.

pub mod partitioner;
pub mod producer;
