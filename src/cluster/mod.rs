//! The cluster: brokers, a leader per partition, the group coordinator's broker, the partition
//! space, and what broker and network faults do to them over the run (`availability.rs`).

pub mod availability;
pub mod offsets;
pub mod partitions;
pub mod replicas;

pub use availability::Availability;
pub use offsets::OffsetsStore;
pub use partitions::{PartitionLookup, PartitionSpace};
pub use replicas::Replicas;

use crate::java::string_hash;
use crate::scenario::Scenario;
use crate::sim::rng::Stream;

pub struct Cluster {
    pub brokers: u32,
    /// Leader broker of each partition (global partition index).
    pub leaders: Vec<u32>,
    /// Every partition's replicas, and the replica serving each member.
    pub replicas: Replicas,
    /// The `__consumer_offsets` partition the group id hashes to, and its leader: the
    /// coordinator.
    pub offsets_partition: u32,
    pub coordinator_broker: u32,
    /// `__consumer_offsets`: the group's committed offsets.
    pub offsets: OffsetsStore,
    /// Leaders, fetch gaps, cuts and spikes over the run, from the broker and network faults.
    pub availability: Availability,
}

impl Cluster {
    pub fn new(scenario: &Scenario, mut placement: Stream) -> Self {
        let brokers = scenario.cluster.brokers;
        let replicas = Replicas::place(scenario, &mut placement);
        let leaders = replicas.leaders();
        // `Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions` (GroupCoordinator
        // partitionFor); Utils.abs maps Integer.MIN_VALUE to 0.
        let h = string_hash(&scenario.group.group_id);
        let abs = if h == i32::MIN { 0 } else { h.unsigned_abs() };
        let offsets_partition = abs % scenario.cluster.offsets_topic_partitions;
        let offsets_start = placement.between(0, u64::from(brokers) - 1) as u32;
        let offsets = OffsetsStore::new(leaders.len());
        let coordinator_broker = (offsets_start + offsets_partition) % brokers;
        let availability = Availability::plan(scenario, &replicas, coordinator_broker);
        Cluster {
            brokers,
            leaders,
            replicas,
            offsets_partition,
            coordinator_broker,
            offsets,
            availability,
        }
    }
}
