//! The group as `kafka-consumer-groups --describe` would show it when the run ends (for
//! `cgsim run --describe`): the coordinator's state and member map, each member's assignment as
//! the coordinator handed it out, the committed offsets and the log end offsets.
//!
//! The coordinator's members live in a `java.util.HashMap` (Kafka's `ClassicGroup.members`),
//! and DescribeGroups lists them in its iteration order: the group's history keeps them so
//! (`history::Recorder::member_map`), with each member's last SyncGroup answer and the
//! committed offsets; this file only describes what the history says.
//!
//! A KIP-848 consumer group is described by ConsumerGroupDescribe from the state its records
//! build (Kafka's coordinator changes its state only by replaying the records it writes): the
//! members in its `TimelineHashMap`'s order, each with its member epoch, current assignment and
//! target assignment, the group's state from its epochs (`ConsumerGroup.maybeUpdateGroupState`).
//! Here `history::ConsumerGroupReplay` replays the same records, from their facts.

use super::outcome::{DescribedMember, GroupDescription, MemberEpochs, PartitionOffsets};
use super::*;
use crate::group::classic::ClassicGroupState;
use crate::history::Recorder;

impl Metrics {
    /// The group at `end`: members in the coordinator's map order; assignments only when the
    /// group is Stable (DescribeGroups sends them only then), each the one its member received
    /// in the current generation's SyncGroup.
    pub(super) fn group_description(
        &self,
        end: SimTime,
        scenario: &Scenario,
        logs: &Logs,
        history: &Recorder,
    ) -> GroupDescription {
        // Global partition index -> (topic, partition), as the partition space numbers them.
        let mut names: Vec<(String, u32)> = Vec::with_capacity(self.position.len());
        for topic in &scenario.topics {
            for i in 0..topic.max_partitions() {
                names.push((topic.name.clone(), i));
            }
        }
        let named = |parts: &[usize]| parts.iter().map(|&p| names[p].clone()).collect();
        let consumer = history.consumer_group();
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
            let coordinator = history.coordinator();
            (
                coordinator.classic_state.name().to_string(),
                classic_members(history, scenario, &names),
            )
        };
        let partitions = (0..self.position.len())
            .filter(|&p| history.ledger().partition_exists(p))
            .map(|p| PartitionOffsets {
                topic: names[p].0.clone(),
                partition: names[p].1,
                committed: history.committed(p),
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
}

/// DescribeGroups' members of a classic group: in the coordinator's map order; assignments only
/// when the group is Stable (DescribeGroups sends them only then), each the one its member
/// received in the current generation's SyncGroup.
fn classic_members(
    history: &Recorder,
    scenario: &Scenario,
    names: &[(String, u32)],
) -> Vec<DescribedMember> {
    let coordinator = history.coordinator();
    let stable = coordinator.classic_state == ClassicGroupState::Stable;
    history
        .member_map()
        .map(|(id, m)| {
            let spec = &scenario.members[m];
            let assignment = match history.synced(m) {
                Some((generation, parts))
                    if stable && Some(*generation) == coordinator.generation =>
                {
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
