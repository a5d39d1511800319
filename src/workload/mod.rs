//! The workload side: how producers place records in partitions.

mod keyed;
pub mod partitioner;
pub mod producer;
