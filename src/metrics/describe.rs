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
//! Here [`ConsumerGroupReplay`] replays the same records, from their facts.

use super::outcome::{DescribedMember, GroupDescription, MemberEpochs, PartitionOffsets};
use super::*;
use crate::facts::ConsumerRecord;
use crate::java::{Capacity, JavaHashMap, TimelineHashSet};

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

/// A consumer group member as its records leave it.
#[derive(Clone, Debug, Default)]
struct ReplayedMember {
    member: Option<usize>,
    member_epoch: i32,
    stable: bool,
    assigned: Vec<usize>,
}

/// KIP-848: the consumer group rebuilt from its records (the coordinator's own state is built
/// the same way). Public so that `cgsim lab` can replay a run's facts up to any instant.
#[derive(Clone, Debug, Default)]
pub struct ConsumerGroupReplay {
    /// Whether the group exists (a record was written).
    exists: bool,
    group_epoch: i32,
    target_epoch: i32,
    /// The member map's keys, in its iteration order.
    order: TimelineHashSet<String>,
    members: BTreeMap<String, ReplayedMember>,
    /// Target assignments by member id (kept apart from the members, as Kafka keeps them).
    targets: BTreeMap<String, Vec<usize>>,
}

impl ConsumerGroupReplay {
    pub fn replay(&mut self, record: &ConsumerRecord) {
        self.exists = true;
        match record {
            ConsumerRecord::Member {
                member_id,
                member,
                tombstone: false,
            } => {
                let m = self.members.entry(member_id.clone()).or_default();
                m.member = member.or(m.member);
                self.order.put(member_id.clone());
            }
            ConsumerRecord::Member {
                member_id,
                tombstone: true,
                ..
            } => {
                self.members.remove(member_id);
                self.order.remove(member_id);
            }
            ConsumerRecord::CurrentAssignment {
                member_id,
                member_epoch,
                stable,
                assigned,
            } => {
                let m = self.members.entry(member_id.clone()).or_default();
                m.member_epoch = *member_epoch;
                m.stable = *stable;
                m.assigned = assigned.clone();
                self.order.put(member_id.clone());
            }
            ConsumerRecord::TargetMember {
                member_id,
                partitions,
            } => match partitions {
                Some(p) => {
                    self.targets.insert(member_id.clone(), p.clone());
                }
                None => {
                    self.targets.remove(member_id);
                }
            },
            ConsumerRecord::TargetEpoch { epoch } => self.target_epoch = *epoch,
            ConsumerRecord::GroupEpoch { epoch } => self.group_epoch = *epoch,
        }
    }

    /// Whether the group exists (a record was written).
    pub fn exists(&self) -> bool {
        self.exists
    }

    /// The group epoch and the target assignment epoch.
    pub fn epochs(&self) -> (i32, i32) {
        (self.group_epoch, self.target_epoch)
    }

    /// Per member the records name: the scenario member, its member epoch, whether its state is
    /// STABLE, and what it is assigned; by member id.
    pub fn members(&self) -> impl Iterator<Item = (Option<usize>, i32, bool, &[usize])> + '_ {
        self.members
            .values()
            .map(|m| (m.member, m.member_epoch, m.stable, m.assigned.as_slice()))
    }

    /// `ConsumerGroup.maybeUpdateGroupState`'s answer, by Kafka's state names.
    pub fn state(&self) -> &'static str {
        if !self.exists {
            "Dead"
        } else if self.members.is_empty() {
            "Empty"
        } else if self.group_epoch > self.target_epoch {
            "Assigning"
        } else if self
            .members
            .values()
            .any(|m| !m.stable || m.member_epoch != self.target_epoch)
        {
            "Reconciling"
        } else {
            "Stable"
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
        let (state, members) = if consumer.exists {
            // ConsumerGroupDescribe: every member with its current and target assignments,
            // whatever the group's state.
            let members = consumer
                .order
                .iter()
                .filter_map(|id| {
                    let r = &consumer.members[id];
                    let spec = &scenario.members[r.member?];
                    let target = consumer.targets.get(id).map_or(&[][..], Vec::as_slice);
                    Some(DescribedMember {
                        name: spec.name.clone(),
                        consumer_id: id.clone(),
                        group_instance_id: spec.group_instance_id.clone(),
                        client_id: spec.client_id.clone(),
                        assignment: named(&r.assigned),
                        epochs: Some(MemberEpochs {
                            member_epoch: r.member_epoch,
                            target_epoch: consumer.target_epoch,
                            target_assignment: named(target),
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
