//! Kafka's client `RoundRobinAssignor` (EAGER only): every partition of every subscribed topic,
//! topics in name order, dealt to members in `MemberInfo` order by one cursor that skips members
//! not subscribed to the partition's topic. The cursor carries over from topic to topic, which is
//! why mixed subscriptions can come out badly unbalanced. History is ignored.

use super::{member_info_order, AssignError, AssignResult, Assignor, GroupSpec, TopicPartition};

pub struct RoundRobinAssignor;

impl Assignor for RoundRobinAssignor {
    fn name(&self) -> &'static str {
        "roundrobin"
    }

    fn assign(&self, group: &GroupSpec) -> Result<AssignResult, AssignError> {
        let order = member_info_order(&group.members);
        let mut assignment = vec![Vec::new(); group.members.len()];
        let mut cursor = 0usize;
        for topic in group.subscribed_topics() {
            for p in 0..group.topic(topic).partitions {
                // Some member subscribes (the topic came from a subscription), so this ends.
                while !group.members[order[cursor]].subscribes(topic) {
                    cursor = (cursor + 1) % order.len();
                }
                assignment[order[cursor]].push(TopicPartition::new(topic, p));
                cursor = (cursor + 1) % order.len();
            }
        }
        Ok(AssignResult::plain(assignment))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{group, named};
    use super::*;

    #[test]
    fn deals_across_topics_in_name_order() {
        let g = group(
            &[("t3a", 3), ("t3b", 3), ("t3c", 3)],
            &[
                ("c2", &["t3a", "t3b", "t3c"]),
                ("c1", &["t3a", "t3b", "t3c"]),
            ],
        );
        let a = RoundRobinAssignor.assign(&g).unwrap().assignment;
        let n = named(&g, &a);
        assert_eq!(n[1].1, ["t3a-0", "t3a-2", "t3b-1", "t3c-0", "t3c-2"]);
        assert_eq!(n[0].1, ["t3a-1", "t3b-0", "t3b-2", "t3c-1"]);
    }

    #[test]
    fn skips_members_not_subscribed() {
        let g = group(
            &[("a", 2), ("b", 2)],
            &[("m1", &["a"]), ("m2", &["a", "b"])],
        );
        let a = RoundRobinAssignor.assign(&g).unwrap().assignment;
        let n = named(&g, &a);
        assert_eq!(n[0].1, ["a-0"]);
        assert_eq!(n[1].1, ["a-1", "b-0", "b-1"]);
    }
}
