//! Kafka's client `RangeAssignor` (EAGER only): each topic on its own, its subscribers in
//! `MemberInfo` order, contiguous ranges with the remainder on the first members. Because every
//! topic puts its remainder on the same first members, those members collect the extras of every
//! topic (seed 001's "3,3,3,0" with four consumers). History is ignored; racks are not modelled.

use super::{
    contiguous_share, member_info_order, AssignError, AssignResult, Assignor, GroupSpec, TopicIdx,
    TopicPartition,
};

pub struct RangeAssignor;

impl Assignor for RangeAssignor {
    fn name(&self) -> &'static str {
        "range"
    }

    fn assign(&self, group: &GroupSpec) -> Result<AssignResult, AssignError> {
        Ok(AssignResult::plain(assign_ranges(group)))
    }
}

/// Contiguous ranges per topic over its subscribers in `MemberInfo` order. Shared with the
/// server-side range assignor, which differs only in what surrounds it.
///
/// One pass over the members builds every topic's subscriber list (members' topics are sorted,
/// so no per-topic search), and each member's list is allocated once at its final size: on a
/// million partitions the growth copies and the searches were most of the time.
pub(crate) fn assign_ranges(group: &GroupSpec) -> Vec<Vec<TopicPartition>> {
    let order = member_info_order(&group.members);
    let mut subscribers: Vec<Vec<usize>> = vec![Vec::new(); group.topics.len()];
    for &m in &order {
        for &t in &group.members[m].topics {
            subscribers[t as usize].push(m);
        }
    }
    let mut sizes = vec![0usize; group.members.len()];
    for (topic, subs) in subscribers.iter().enumerate() {
        let n = group.topics[topic].partitions;
        for (i, &m) in subs.iter().enumerate() {
            sizes[m] += contiguous_share(n, subs.len(), i).1 as usize;
        }
    }
    let mut assignment: Vec<Vec<TopicPartition>> =
        sizes.iter().map(|&s| Vec::with_capacity(s)).collect();
    for (topic, subs) in subscribers.iter().enumerate() {
        let n = group.topics[topic].partitions;
        for (i, &m) in subs.iter().enumerate() {
            let (start, count) = contiguous_share(n, subs.len(), i);
            if count > 0 {
                let t = topic as TopicIdx;
                assignment[m].extend((start..start + count).map(|p| TopicPartition::new(t, p)));
            }
        }
    }
    assignment
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{group, named};
    use super::*;

    #[test]
    fn remainders_pile_on_first_members() {
        let g = group(
            &[("t3a", 3), ("t3b", 3), ("t3c", 3)],
            &[
                ("c1", &["t3a", "t3b", "t3c"]),
                ("c2", &["t3a", "t3b", "t3c"]),
                ("c3", &["t3a", "t3b", "t3c"]),
                ("c4", &["t3a", "t3b", "t3c"]),
            ],
        );
        let a = RangeAssignor.assign(&g).unwrap().assignment;
        let counts: Vec<usize> = a.iter().map(Vec::len).collect();
        assert_eq!(counts, [3, 3, 3, 0]);
        assert_eq!(named(&g, &a)[0].1, ["t3a-0", "t3b-0", "t3c-0"]);
    }
}
