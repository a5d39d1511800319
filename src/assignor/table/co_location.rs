//! Co-location: for topics that are co-partitioned (the same partition count, keyed alike, as a
//! partition-local join needs), which partition indexes have one owner across all of them. Seed
//! 000's join is local exactly at those indexes.

use crate::assignor::{MemberPartitions, Topic, TopicIdx};
use std::collections::BTreeMap;

/// One set of co-partitioned topics under one assignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoLocation {
    /// Indexes into the section's topics, ascending.
    pub topics: Vec<TopicIdx>,
    /// Per partition index, the member that owns that index of every topic of the set, or `None`
    /// when the index is split between members (or a topic's partition has no owner).
    pub owners: Vec<Option<usize>>,
}

impl CoLocation {
    pub fn co_located(&self) -> usize {
        self.owners.iter().filter(|o| o.is_some()).count()
    }
}

/// Topics sharing a partition count, in sets of two or more, in topic order: the topics a
/// co-partitioned join could read together.
pub fn co_partitioned_sets(topics: &[Topic]) -> Vec<Vec<TopicIdx>> {
    let mut by_count: BTreeMap<i32, Vec<TopicIdx>> = BTreeMap::new();
    for (i, t) in topics.iter().enumerate() {
        by_count
            .entry(t.partitions)
            .or_default()
            .push(i as TopicIdx);
    }
    let mut sets: Vec<Vec<TopicIdx>> = by_count.into_values().filter(|s| s.len() > 1).collect();
    sets.sort();
    sets
}

/// The co-location of every co-partitioned set of `topics` under `assignment` (per member, as
/// an assignor returns it).
pub fn co_location(topics: &[Topic], assignment: &MemberPartitions) -> Vec<CoLocation> {
    // owner[topic][partition]
    let mut owner: Vec<Vec<Option<usize>>> = topics
        .iter()
        .map(|t| vec![None; t.partitions.max(0) as usize])
        .collect();
    for (m, parts) in assignment.iter().enumerate() {
        for tp in parts {
            owner[tp.topic as usize][tp.partition as usize] = Some(m);
        }
    }
    co_partitioned_sets(topics)
        .into_iter()
        .map(|set| {
            let count = topics[set[0] as usize].partitions.max(0) as usize;
            let owners = (0..count)
                .map(|p| {
                    let first = owner[set[0] as usize][p]?;
                    set.iter()
                        .all(|&t| owner[t as usize][p] == Some(first))
                        .then_some(first)
                })
                .collect();
            CoLocation {
                topics: set,
                owners,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignor::table::{build, preset};

    fn co_located(assignor: &str) -> (usize, usize) {
        let tables = build(&preset("seed-000").unwrap()).unwrap();
        let table = &tables[0];
        let col = table.blocks[0].column(assignor).unwrap();
        let c = co_location(&table.section.topics, col.formation.final_assignment());
        assert_eq!(c.len(), 1);
        (c[0].co_located(), c[0].owners.len())
    }

    #[test]
    fn seed_000_joins_locally_only_where_indexes_share_an_owner() {
        // The seed: 0/6 with round robin (hence its 0/30 local joins), 6/6 with its assigner.
        assert_eq!(co_located("roundrobin"), (0, 6));
        assert_eq!(co_located("co-partition"), (6, 6));
        assert_eq!(co_located("range"), (6, 6));
        assert_eq!(co_located("sticky"), (0, 6));
    }

    #[test]
    fn only_topics_with_equal_counts_are_co_partitioned() {
        let t = |name: &str, partitions| Topic {
            name: name.into(),
            partitions,
            id: None,
        };
        let topics = [t("a", 3), t("b", 2), t("c", 3), t("d", 2), t("e", 5)];
        assert_eq!(co_partitioned_sets(&topics), vec![vec![0, 2], vec![1, 3]]);
    }
}
