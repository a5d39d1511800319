//! The group as `kafka-consumer-groups --describe` would show it when the run ends (for
//! `cgsim run --describe`): the coordinator's state and member map, each member's assignment as
//! the coordinator handed it out, the committed offsets and the log end offsets.
//!
//! The coordinator's members live in a `java.util.HashMap` (Kafka's `ClassicGroup.members`),
//! and DescribeGroups lists them in its iteration order, so the record here is a `JavaHashMap`
//! built by the same inserts and removals as the coordinator's (from its facts).
//!
//! A KIP-848 consumer group is described by ConsumerGroupDescribe from the state its records
//! build (Kafka's coordinator changes its state only by replaying the records it writes): the
//! members in its `TimelineHashMap`'s order, each with its member epoch, current assignment and
//! target assignment, the group's state from its epochs (`ConsumerGroup.maybeUpdateGroupState`).
//! Here `history::ConsumerGroupReplay` replays the same records, from their facts.

use super::outcome::{DescribedMember, GroupDescription, MemberEpochs, PartitionOffsets};
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
            Fact::MemberAdded {
                member, member_id, ..
            } => {
                g.members.insert(member_id.clone(), *member);
            }
            Fact::MemberReplaced { member, member_id } => {
                // `replaceStaticMember`: the old id's entry goes, the new one is put.
                if let Some(old) = self.member_ids.current(*member) {
                    g.members.remove(old);
                }
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
                error: crate::messages::ErrorCode::None,
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
        // Global partition index -> (topic, partition), as the partition space numbers them.
        let mut names: Vec<(String, u32)> = Vec::with_capacity(g.committed.len());
        for topic in &scenario.topics {
            for i in 0..topic.max_partitions() {
                names.push((topic.name.clone(), i));
            }
        }
        let named = |parts: &[usize]| parts.iter().map(|&p| names[p].clone()).collect();
        let consumer = &self.consumer_group;
        let (state, members) = if consumer.exists() {
            // ConsumerGroupDescribe: every member with its current and target assignments,
            // whatever the group's state.
            let (_, target_epoch) = consumer.epochs();
            let members = consumer
                .described()
                .filter_map(|r| {
                    let spec = &scenario.members[r.member?];
                    Some(DescribedMember {
                        name: spec.name.clone(),
                        consumer_id: r.member_id.to_string(),
                        group_instance_id: spec.group_instance_id.clone(),
                        client_id: spec.client_id.clone(),
                        assignment: named(r.assigned),
                        epochs: Some(MemberEpochs {
                            member_epoch: r.member_epoch,
                            target_epoch,
                            target_assignment: named(r.target),
                        }),
                    })
                })
                .collect();
            (consumer.state().to_string(), members)
        } else {
            (g.state.to_string(), self.classic_members(scenario, &names))
        };
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
            state,
            at_ms: ms(end),
            members,
            partitions,
        }
    }

    /// DescribeGroups' members of a classic group: in the coordinator's map order; assignments
    /// only when the group is Stable (DescribeGroups sends them only then), each the one its
    /// member received in the current generation's SyncGroup.
    fn classic_members(
        &self,
        scenario: &Scenario,
        names: &[(String, u32)],
    ) -> Vec<DescribedMember> {
        let g = &self.group;
        let stable = g.state == "Stable";
        g.members
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
                    epochs: None,
                }
            })
            .collect()
    }
}
