//! The co-partition assigner of seed 000 (a custom assignor, EAGER only like any custom Java
//! assignor): partition index `p` of every subscribed topic goes to member
//! `sorted_members[p % member_count]`, so the same index of two co-partitioned topics lands on one
//! member and a partition-local join works.
//!
//! Members are sorted in `MemberInfo` order (static members by instance id first), which for
//! dynamic members is the seed's plain id sort. An index that exists in only some topics still
//! goes to that index's member, as the seed's code does; it is reported as `unmatched` so broken
//! co-partitioning is never silent. With mixed subscriptions the seed's code would hand a member
//! a topic it does not subscribe to (Kafka's client rejects such an assignment by rejoining), so
//! here index `p` of a topic goes to `subscribers[p % subscriber_count]`, which is the seed's
//! answer whenever subscriptions are identical.

use super::{member_info_order, AssignError, AssignResult, Assignor, GroupSpec, TopicPartition};

pub struct CoPartitionAssignor;

impl Assignor for CoPartitionAssignor {
    fn name(&self) -> &'static str {
        "co-partition"
    }

    fn assign(&self, group: &GroupSpec) -> Result<AssignResult, AssignError> {
        let order = member_info_order(&group.members);
        let mut assignment = vec![Vec::new(); group.members.len()];
        let topics = group.subscribed_topics();
        for &topic in &topics {
            let subscribers: Vec<usize> = order
                .iter()
                .copied()
                .filter(|&m| group.members[m].subscribes(topic))
                .collect();
            for p in 0..group.topic(topic).partitions {
                let owner = subscribers[p as usize % subscribers.len()];
                assignment[owner].push(TopicPartition::new(topic, p));
            }
        }
        Ok(AssignResult {
            unmatched: Some(unmatched_indexes(group, &topics)),
            ..AssignResult::plain(assignment)
        })
    }
}

/// Partition indexes present in some of `topics` but not all: where co-partitioning is broken.
pub fn unmatched_indexes(group: &GroupSpec, topics: &[super::TopicIdx]) -> Vec<i32> {
    let counts = topics.iter().map(|&t| group.topic(t).partitions);
    let min = counts.clone().min().unwrap_or(0);
    let max = counts.max().unwrap_or(0);
    (min..max).collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{group, named};
    use super::*;

    #[test]
    fn seed_000_four_pods_six_partitions() {
        let both: &[&str] = &["market-updates", "notifications"];
        let g = group(
            &[("market-updates", 6), ("notifications", 6)],
            &[
                ("pod-3", both),
                ("pod-1", both),
                ("pod-4", both),
                ("pod-2", both),
            ],
        );
        let r = CoPartitionAssignor.assign(&g).unwrap();
        let n = named(&g, &r.assignment);
        assert_eq!(
            n[1],
            (
                "pod-1".to_string(),
                vec![
                    "market-updates-0".to_string(),
                    "market-updates-4".into(),
                    "notifications-0".into(),
                    "notifications-4".into()
                ]
            )
        );
        assert_eq!(n[2].1, ["market-updates-3", "notifications-3"]);
        assert_eq!(r.unmatched, Some(vec![]));
    }

    #[test]
    fn unequal_partition_counts_are_reported() {
        let both: &[&str] = &["a", "b"];
        let g = group(&[("a", 6), ("b", 8)], &[("m1", both), ("m2", both)]);
        let r = CoPartitionAssignor.assign(&g).unwrap();
        assert_eq!(r.unmatched, Some(vec![6, 7]));
        // Index 7 still goes to index 7's member, as the seed's code does.
        assert!(named(&g, &r.assignment)[1].1.contains(&"b-7".to_string()));
    }
}
