//! The group as `kafka-consumer-groups --describe` would show it when the run ends (for
//! `cgsim run --describe`): the coordinator's state and member map, each member's assignment as
//! the coordinator handed it out, the committed offsets and the log end offsets.
//!
//! The coordinator's members live in a `java.util.HashMap` (Kafka's `ClassicGroup.members`),
//! and DescribeGroups lists them in its iteration order, so the record here is a `JavaHashMap`
//! built by the same inserts and removals as the coordinator's (from its facts).

use super::outcome::{DescribedMember, GroupDescription, PartitionOffsets};
use super::*;
use crate::java::{Capacity, JavaHashMap};

/// The coordinator's side of the group, as its facts tell it.
pub(super) struct GroupRecord {
    /// Kafka's state name: `Dead` until a member is added (no such group yet).
    state: &'static str,
    generation: Option<i32>,
    /// Member id -> scenario member, in the coordinator's map.
    members: JavaHashMap<String, usize>,
    /// Per member: the generation and assignment its last successful SyncGroup answer carried.
    synced: Vec<Option<(i32, Vec<usize>)>>,
    /// Per partition: the last offset the coordinator stored for the group.
    committed: Vec<Option<u64>>,
}

impl GroupRecord {
    pub(super) fn new(members: usize, partitions: usize) -> Self {
        GroupRecord {
            state: "Dead",
            generation: None,
            members: JavaHashMap::new(Capacity::Default),
            synced: vec![None; members],
            committed: vec![None; partitions],
        }
    }
}

impl Metrics {
    /// The group record's share of a fact; called before the other figures' (a static
    /// replacement needs the member's previous id).
    pub(super) fn observe_group(&mut self, fact: &Fact) {
        let g = &mut self.group;
        match fact {
            Fact::MemberAdded { member, member_id } => {
                g.members.insert(member_id.clone(), *member);
            }
            Fact::MemberReplaced { member, member_id } => {
                // `replaceStaticMember`: the old id's entry goes, the new one is put.
                g.members.remove(&self.member_ids[*member]);
                g.members.insert(member_id.clone(), *member);
            }
            Fact::MemberRemoved { member_id, .. } => {
                g.members.remove(member_id);
            }
            Fact::RebalanceStarted { .. } => g.state = "PreparingRebalance",
            Fact::JoinCompleted { generation, .. } => {
                g.state = "CompletingRebalance";
                g.generation = Some(*generation);
            }
            Fact::GroupStable { generation } => {
                g.state = "Stable";
                g.generation = Some(*generation);
            }
            Fact::GroupEmpty => g.state = "Empty",
            Fact::SyncGroupAnswered {
                member,
                generation,
                error: crate::group::messages::ErrorCode::None,
                assignment,
            } => g.synced[*member] = Some((*generation, assignment.clone())),
            Fact::OffsetCommitted {
                partition, offset, ..
            } => g.committed[*partition] = Some(*offset),
            _ => {}
        }
    }

    /// The group at `end`: members in the coordinator's map order; assignments only when the
    /// group is Stable (DescribeGroups sends them only then), each the one its member received
    /// in the current generation's SyncGroup.
    pub(super) fn group_description(
        &self,
        end: SimTime,
        scenario: &Scenario,
        logs: &Logs,
    ) -> GroupDescription {
        let g = &self.group;
        let stable = g.state == "Stable";
        // Global partition index -> (topic, partition), as the partition space numbers them.
        let mut names: Vec<(String, u32)> = Vec::with_capacity(g.committed.len());
        for topic in &scenario.topics {
            for i in 0..topic.max_partitions() {
                names.push((topic.name.clone(), i));
            }
        }
        let members = g
            .members
            .iter()
            .map(|(id, &m)| {
                let spec = &scenario.members[m];
                let assignment = match &g.synced[m] {
                    Some((generation, parts)) if stable && Some(*generation) == g.generation => {
                        parts.clone()
                    }
                    _ => Vec::new(),
                };
                DescribedMember {
                    name: spec.name.clone(),
                    consumer_id: id.clone(),
                    group_instance_id: spec.group_instance_id.clone(),
                    client_id: spec.client_id.clone(),
                    assignment: assignment.iter().map(|&p| names[p].clone()).collect(),
                }
            })
            .collect();
        let partitions = (0..g.committed.len())
            .filter(|&p| self.partition_exists[p])
            .map(|p| PartitionOffsets {
                topic: names[p].0.clone(),
                partition: names[p].1,
                committed: g.committed[p],
                log_end_offset: logs.end_offset(p, end),
            })
            .collect();
        GroupDescription {
            group_id: scenario.group.group_id.clone(),
            state: g.state.to_string(),
            at_ms: ms(end),
            members,
            partitions,
        }
    }
}
