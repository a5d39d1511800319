//! KIP-848: a consumer group as its records tell it. Kafka's coordinator changes a consumer
//! group's state only by replaying the records it writes; replaying the same records (from the
//! `ConsumerGroupRecorded` facts) gives the same state: the group and target epochs, the member
//! map in its `TimelineHashMap` order, each member's epoch and assignments, and the group's state.

use crate::facts::ConsumerRecord;
use crate::java::TimelineHashSet;
use std::collections::BTreeMap;

/// One member as ConsumerGroupDescribe lists it.
pub struct DescribedMember<'a> {
    pub member_id: &'a str,
    /// The scenario member, when a record named it.
    pub member: Option<usize>,
    pub member_epoch: i32,
    pub assigned: &'a [usize],
    pub target: &'a [usize],
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
/// the same way): for `--describe` at the end, and for the lab at any instant.
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

    /// Every member in the member map's order (ConsumerGroupDescribe's), with its current and
    /// target assignments.
    pub fn described(&self) -> impl Iterator<Item = DescribedMember<'_>> + '_ {
        self.order.iter().map(|id| {
            let r = &self.members[id];
            DescribedMember {
                member_id: id,
                member: r.member,
                member_epoch: r.member_epoch,
                assigned: &r.assigned,
                target: self.targets.get(id).map_or(&[][..], Vec::as_slice),
            }
        })
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
