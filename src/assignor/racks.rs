//! Rack-aware assignment's inputs (KIP-881): the racks of each partition's replicas, a member's
//! `client.rack`, and the gate Kafka's client assignors share
//! (`AbstractPartitionAssignor.useRackAwareAssignment`).
//!
//! Only the *set* of racks a partition's replicas sit in matters to the assignors (they sort the
//! partition infos and never read broker ids or leadership), so each partition carries a bit set
//! over the racks named anywhere in the metadata.

use super::{GroupSpec, Member, TopicIdx, TopicPartition};
use crate::java::string_compare;

/// Racks distinct enough to tell apart in one bit set: far more availability zones than any
/// region has.
pub const MAX_RACKS: usize = 64;

/// A set of racks, one bit per position in [`PartitionRacks::names`].
pub type RackSet = u64;

/// The replica racks of every partition of the metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartitionRacks {
    /// Every rack a replica sits in, sorted (Java `String` order).
    pub names: Vec<String>,
    /// Per [`TopicIdx`], per partition, the racks of its replicas; a topic without an entry (or
    /// an empty list) has replicas on brokers without a rack.
    pub sets: Vec<Vec<RackSet>>,
}

impl PartitionRacks {
    /// From per-topic (indexed like the group's topics), per-partition replica rack names.
    /// Fails when more than [`MAX_RACKS`] distinct racks are named.
    pub fn from_names(topics: &[Vec<Vec<String>>]) -> Result<PartitionRacks, String> {
        let mut names: Vec<String> = topics
            .iter()
            .flatten()
            .flatten()
            .filter(|r| !r.is_empty())
            .cloned()
            .collect();
        names.sort_by(|a, b| string_compare(a, b));
        names.dedup();
        if names.len() > MAX_RACKS {
            return Err(format!(
                "{} distinct replica racks: cgsim tells at most {MAX_RACKS} apart",
                names.len()
            ));
        }
        let bit = |r: &str| {
            names
                .binary_search_by(|n| string_compare(n, r))
                .map_or(0, |i| 1u64 << i)
        };
        let sets = topics
            .iter()
            .map(|parts| {
                parts
                    .iter()
                    .map(|racks| racks.iter().fold(0, |set, r| set | bit(r)))
                    .collect()
            })
            .collect();
        Ok(PartitionRacks { names, sets })
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The racks of a partition's replicas (empty when unknown).
    pub fn of(&self, tp: TopicPartition) -> RackSet {
        self.sets
            .get(tp.topic as usize)
            .and_then(|parts| parts.get(tp.partition as usize))
            .copied()
            .unwrap_or(0)
    }

    /// The racks of a topic's partitions, one per partition.
    pub fn of_topic(&self, topic: TopicIdx, partitions: i32) -> impl Iterator<Item = RackSet> + '_ {
        let parts = self.sets.get(topic as usize);
        (0..partitions as usize).map(move |p| parts.and_then(|l| l.get(p)).copied().unwrap_or(0))
    }

    /// A member's rack as a set: `None` without a rack, the empty set for a rack no replica sits
    /// in (it still counts as a rack: such a member matches no partition).
    pub fn member(&self, member: &Member) -> Option<RackSet> {
        let rack = member.rack.as_deref().filter(|r| !r.is_empty())?;
        Some(
            self.names
                .binary_search_by(|n| string_compare(n, rack))
                .map_or(0, |i| 1u64 << i),
        )
    }
}

/// `useRackAwareAssignment`: on only when some consumer has a rack, some consumer rack holds a
/// replica, and not every partition has the same replica racks (RF 3 over 3 racks turns it off:
/// every member is local to everything). `consumers` are the consumers' racks (those without
/// one left out), `partitions` every partition's replica racks.
pub fn use_rack_aware(
    consumers: impl IntoIterator<Item = RackSet>,
    partitions: impl IntoIterator<Item = RackSet> + Clone,
) -> bool {
    let mut any_consumer = false;
    let mut consumer_racks = 0;
    for set in consumers {
        any_consumer = true;
        consumer_racks |= set;
    }
    if !any_consumer {
        return false;
    }
    let all: RackSet = partitions.clone().into_iter().fold(0, |a, s| a | s);
    if consumer_racks & all == 0 {
        return false;
    }
    partitions.into_iter().any(|s| s != all)
}

/// The members' racks as sets, indexed like the group's members.
pub fn member_racks(group: &GroupSpec) -> Vec<Option<RackSet>> {
    group
        .members
        .iter()
        .map(|m| group.racks.member(m))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn racks(lists: &[&[&str]]) -> Vec<Vec<String>> {
        lists
            .iter()
            .map(|l| l.iter().map(|r| r.to_string()).collect())
            .collect()
    }

    #[test]
    fn the_gate_needs_a_local_consumer_and_uneven_replicas() {
        let pr = PartitionRacks::from_names(&[racks(&[&["az-b", "az-a"], &["az-c"]])]).unwrap();
        assert_eq!(pr.names, ["az-a", "az-b", "az-c"]);
        let parts = [
            pr.of(TopicPartition::new(0, 0)),
            pr.of(TopicPartition::new(0, 1)),
        ];
        assert_eq!(parts, [0b011, 0b100]);
        assert!(use_rack_aware([0b001], parts));
        // No consumer rack, or only racks holding no replica: off.
        assert!(!use_rack_aware([], parts));
        assert!(!use_rack_aware([0], parts));
        // Every partition on the same racks (RF 3 over 3 racks): off.
        assert!(!use_rack_aware([0b001], [0b111, 0b111]));
    }

    #[test]
    fn more_racks_than_bits_is_an_error() {
        let many: Vec<String> = (0..65).map(|i| format!("r{i}")).collect();
        assert!(PartitionRacks::from_names(&[vec![many]])
            .unwrap_err()
            .contains("65 distinct replica racks"));
    }
}
