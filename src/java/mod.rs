//! Java semantics that decide Kafka's answers: `java.util.HashMap`/`HashSet` iteration order
//! (and Kafka's own `TimelineHashMap`'s),
//! the hash codes of the keys Kafka puts in them, `String.compareTo`, `Double.compare`,
//! `java.util.PriorityQueue`'s heap order, and Kafka's `Uuid`.
//!
//! Kafka's assignors and group coordinator iterate hash maps, so ties (which member keeps an
//! extra partition, which topic comes first) follow Java's bucket order. The simulator emulates
//! that order here, once, instead of pretending the order is free
//! (../shared/reference/ALGORITHMS.md section 0).

mod hash_code;
mod hash_map;
mod priority_queue;
mod timeline_hash;
mod uuid;

pub use hash_code::{
    double_compare, int_hash, str_order_is_java_order, string_compare, string_hash,
    topic_partition_hash, JavaHash,
};
pub use hash_map::{bucket_index, iteration_order, Capacity, JavaHashMap, JavaHashSet};
pub use priority_queue::{Comparator, PriorityQueue};
pub use timeline_hash::TimelineHashSet;
pub use uuid::{Uuid, UuidError};
