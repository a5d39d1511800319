//! Kafka's client `RangeAssignor` (EAGER only): each topic on its own, its subscribers in
//! `MemberInfo` order, contiguous ranges with the remainder on the first members. Because every
//! topic puts its remainder on the same first members, those members collect the extras of every
//! topic (seed 001's "3,3,3,0" with four consumers). History is ignored; racks are not modelled.

use super::{
    member_info_order, AssignError, AssignResult, Assignor, GroupSpec, TopicIdx, TopicPartition,
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
/// Two passes, no division per member: the first numbers each member within each of its
/// topics' subscriber lists (members' topics are sorted, so a member's entries line up with its
/// topics) and counts every topic's subscribers; the second writes each member's list whole, at
/// its final size, topic by topic (its ranges from each topic's quotient and remainder). Writing
/// member by member keeps the stores sequential: on a million partitions the old topic-by-topic
/// pass scattered them over every member's list and was most of the time.
pub(crate) fn assign_ranges(group: &GroupSpec) -> Vec<Vec<TopicPartition>> {
    let order = member_info_order(&group.members);
    let members = &group.members;
    // Member m's position among the subscribers of its j-th topic: `index[first[m] + j]`.
    let mut first = Vec::with_capacity(members.len() + 1);
    let mut total = 0usize;
    for m in members {
        first.push(total);
        total += m.topics.len();
    }
    let mut index = vec![0u32; total];
    let mut subscribers = vec![0u32; group.topics.len()];
    // Each member's smallest position: one past every topic's last taker, it gets nothing.
    let mut lowest = vec![u32::MAX; members.len()];
    for &m in &order {
        for (j, &t) in members[m].topics.iter().enumerate() {
            let i = subscribers[t as usize];
            index[first[m] + j] = i;
            lowest[m] = lowest[m].min(i);
            subscribers[t as usize] += 1;
        }
    }
    // Per topic: partitions per subscriber and how many take one more.
    let shares: Vec<(i32, i32)> = group
        .topics
        .iter()
        .zip(&subscribers)
        .map(|(topic, &k)| match k {
            0 => (0, 0),
            k => (topic.partitions / k as i32, topic.partitions % k as i32),
        })
        .collect();
    // A position from which no topic gives anything (a topic with fewer partitions than
    // subscribers gives one each to its first `extra`).
    let reach = shares
        .iter()
        .map(|&(base, extra)| if base > 0 { u32::MAX } else { extra as u32 })
        .max()
        .unwrap_or(0);
    let share = |t: usize, i: u32| {
        let (base, extra) = shares[t];
        let i = i as i32;
        (base * i + i.min(extra), base + i32::from(i < extra))
    };
    members
        .iter()
        .enumerate()
        .map(|(m, member)| {
            if lowest[m] >= reach {
                return Vec::new();
            }
            let idx = &index[first[m]..first[m] + member.topics.len()];
            let size: usize = member
                .topics
                .iter()
                .zip(idx)
                .map(|(&t, &i)| share(t as usize, i).1 as usize)
                .sum();
            let mut list = Vec::with_capacity(size);
            for (&t, &i) in member.topics.iter().zip(idx) {
                let (start, count) = share(t as usize, i);
                list.extend((start..start + count).map(|p| TopicPartition::new(t as TopicIdx, p)));
            }
            list
        })
        .collect()
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
        // 10 over 4: the first two take the extras, each a contiguous range.
        let g = group(
            &[("t", 10)],
            &[("a", &["t"]), ("b", &["t"]), ("c", &["t"]), ("d", &["t"])],
        );
        let a = RangeAssignor.assign(&g).unwrap().assignment;
        let ranges: Vec<Vec<i32>> = a
            .iter()
            .map(|l| l.iter().map(|tp| tp.partition).collect())
            .collect();
        assert_eq!(
            ranges,
            [vec![0, 1, 2], vec![3, 4, 5], vec![6, 7], vec![8, 9]]
        );
    }
}
