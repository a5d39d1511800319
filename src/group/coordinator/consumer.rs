//! ConsumerGroupHeartbeat (KIP-848) at the coordinator: the group is a consumer group
//! (`group::consumer_group`), and this is Kafka's `GroupMetadataManager` handing it the request:
//! partitions translated between the cluster's global indexes and the group's (topic, partition),
//! its effects turned into the coordinator's (responses, timers, facts), and OffsetCommit checked
//! against member epochs.

use super::*;
use crate::assignor::{Topic, TopicPartition};
use crate::facts::ConsumerRecord;
use crate::group::consumer_group::{
    ConsumerGroup, ConsumerGroupConfig, ConsumerGroupRecord, ConsumerGroupState,
    ConsumerGroupTimer, ConsumerHeartbeat, EpochCause, GroupEffect, MemberState, Partitions,
    LEAVE_EPOCH,
};
use crate::log;

/// A topic as the consumer group is told of it: its name and id, its partitions now, and the
/// global index of its partition 0 in the cluster's partition space.
#[derive(Clone, Debug)]
pub struct ConsumerTopic {
    pub name: String,
    pub id: crate::java::Uuid,
    pub partitions: u32,
    pub first: usize,
}

/// The consumer group and what the coordinator keeps beside it.
pub(super) struct ConsumerHost {
    pub(super) group: ConsumerGroup,
    /// Scenario topic index -> the group's topic index (name order), and each topic's first
    /// global partition index.
    topic_of: Vec<u32>,
    first: Vec<usize>,
    /// The group's topic index -> scenario topic index.
    scenario_topic: Vec<usize>,
    /// Which client each member id is.
    pub(super) clients: BTreeMap<String, ClientRef>,
    /// What each member's heartbeats last said it owns (its acknowledgement).
    pub(super) reported_owned: BTreeMap<String, Partitions>,
    /// The group epoch the last GroupStable fact was for.
    pub(super) stable_reported: i32,
}

impl ConsumerHost {
    pub(super) fn new(config: ConsumerGroupConfig, topics: &[ConsumerTopic]) -> Self {
        let mut order: Vec<usize> = (0..topics.len()).collect();
        order.sort_by(|&a, &b| crate::java::string_compare(&topics[a].name, &topics[b].name));
        let mut topic_of = vec![0; topics.len()];
        for (i, &t) in order.iter().enumerate() {
            topic_of[t] = i as u32;
        }
        let group_topics = order
            .iter()
            .map(|&t| Topic {
                name: topics[t].name.clone(),
                partitions: topics[t].partitions as i32,
                id: Some(topics[t].id),
            })
            .collect();
        ConsumerHost {
            group: ConsumerGroup::new(config, group_topics),
            topic_of,
            first: topics.iter().map(|t| t.first).collect(),
            scenario_topic: order,
            clients: BTreeMap::new(),
            reported_owned: BTreeMap::new(),
            stable_reported: 0,
        }
    }

    /// Loaded by a new coordinator: the timers to set.
    pub(super) fn loaded(&self, now: SimTime) -> Vec<(ConsumerGroupTimer, SimTime)> {
        self.group.session_timers_from(now)
    }

    pub(super) fn to_group(&self, parts: &[usize]) -> Partitions {
        parts
            .iter()
            .map(|&p| {
                let t = self.first.iter().rposition(|&f| f <= p).unwrap_or(0);
                TopicPartition::new(self.topic_of[t], (p - self.first[t]) as i32)
            })
            .collect()
    }

    /// A record with what a describe reads from it, as the group holds it now (after the
    /// heartbeat or timer that wrote it).
    fn recorded(&self, record: &ConsumerGroupRecord) -> ConsumerRecord {
        match record {
            ConsumerGroupRecord::MemberMetadata {
                member_id,
                tombstone,
            } => ConsumerRecord::Member {
                member_id: member_id.clone(),
                member: self.clients.get(member_id).map(|c| c.member),
                tombstone: *tombstone,
            },
            ConsumerGroupRecord::CurrentMemberAssignment {
                member_id,
                tombstone,
            } => {
                let member = self.group.member(member_id).filter(|_| !tombstone);
                ConsumerRecord::CurrentAssignment {
                    member_id: member_id.clone(),
                    member_epoch: member.map_or(LEAVE_EPOCH, |m| m.member_epoch),
                    stable: member.is_none_or(|m| m.state == MemberState::Stable),
                    assigned: member.map_or_else(Vec::new, |m| {
                        self.to_global(&m.assigned.keys().cloned().collect())
                    }),
                }
            }
            ConsumerGroupRecord::TargetAssignmentMember {
                member_id,
                tombstone,
            } => ConsumerRecord::TargetMember {
                member_id: member_id.clone(),
                partitions: (!tombstone).then(|| self.to_global(&self.group.target_of(member_id))),
            },
            ConsumerGroupRecord::TargetAssignmentMetadata { epoch } => {
                ConsumerRecord::TargetEpoch { epoch: *epoch }
            }
            ConsumerGroupRecord::GroupMetadata { epoch } => {
                ConsumerRecord::GroupEpoch { epoch: *epoch }
            }
        }
    }

    pub(super) fn to_global(&self, parts: &Partitions) -> Vec<usize> {
        let mut out: Vec<usize> = parts
            .iter()
            .map(|tp| self.first[self.scenario_topic[tp.topic as usize]] + tp.partition as usize)
            .collect();
        out.sort_unstable();
        out
    }
}

impl Coordinator {
    /// Makes the group a KIP-848 consumer group over `topics` (scenario order).
    pub fn with_consumer_group(
        mut self,
        config: ConsumerGroupConfig,
        topics: &[ConsumerTopic],
    ) -> Self {
        self.consumer = Some(Box::new(ConsumerHost::new(config.clone(), topics)));
        self.with_consumer_support(config, topics.to_vec())
    }

    /// A topic grew: the consumer group notices on its next heartbeat.
    pub fn set_partitions(&mut self, name: &str, partitions: u32) {
        if let Some(host) = self.consumer.as_mut() {
            host.group.set_partitions(name, partitions as i32);
        }
        if let Some(setup) = self.consumer_setup.as_mut() {
            if let Some(t) = setup.topics.iter_mut().find(|t| t.name == name) {
                t.partitions = partitions;
            }
        }
    }

    pub(super) fn consumer_heartbeat(&mut self, cx: &mut Cx, from: ClientRef, request: Request) {
        let Request::ConsumerGroupHeartbeat {
            member_id,
            member_epoch,
            instance_id,
            rebalance_timeout_ms,
            subscribed_topic_names,
            server_assignor,
            owned,
        } = request
        else {
            return;
        };
        if self.consumer.is_none() && !self.upgrade_for_heartbeat(cx, from, member_epoch) {
            return;
        }
        let Some(host) = self.consumer.as_mut() else {
            return;
        };
        // What the heartbeat says it owns counts once the coordinator accepted it: a fenced or
        // unknown member's report is answered with an error and changes nothing.
        let reported = owned.clone();
        let owned = owned.map(|o| host.to_group(&o));
        if let Some(o) = &owned {
            host.reported_owned.insert(member_id.clone(), o.clone());
        }
        let heartbeat = ConsumerHeartbeat {
            member_id: member_id.clone(),
            member_epoch,
            instance_id,
            rebalance_timeout_ms,
            subscribed_topic_names,
            server_assignor,
            owned,
        };
        let was_member = host.group.member(&member_id).is_some();
        let mut out = Out::new(false);
        let response = host.group.heartbeat(cx.now, &heartbeat, &mut out);
        if member_epoch >= 0 && response.error == ErrorCode::None {
            host.clients.insert(member_id.clone(), from);
            if !was_member {
                cx.fact(Fact::MemberAdded {
                    member: from.member,
                    incarnation: from.incarnation,
                    member_id: member_id.clone(),
                });
            }
        }
        if let Some(partitions) = reported.filter(|_| response.error == ErrorCode::None) {
            cx.fact(Fact::OwnedReported {
                member: from.member,
                partitions,
            });
        }
        let assignment = response.assignment.as_ref().map(|a| host.to_global(a));
        if let Some(a) = &assignment {
            cx.fact(Fact::AssignmentSent {
                member: from.member,
                partitions: a.clone(),
            });
        }
        log!(
            cx,
            "coordinator ConsumerGroupHeartbeat from {member_id} epoch {member_epoch}: {} epoch {}{} (group epoch {}, assignment epoch {}, {})",
            response.error.name(),
            response.member_epoch,
            assignment
                .as_ref()
                .map_or(String::new(), |a| format!(" assignment {a:?}")),
            host.group.group_epoch(),
            host.group.assignment_epoch(),
            host.group.state().name()
        );
        self.apply_group_effects(cx, out);
        cx.respond(
            from,
            Response::ConsumerGroupHeartbeat {
                error: response.error,
                member_id: response.member_id,
                member_epoch: response.member_epoch,
                heartbeat_interval_ms: response.heartbeat_interval_ms,
                assignment,
            },
        );
    }

    pub(super) fn consumer_timer(&mut self, cx: &mut Cx, timer: ConsumerGroupTimer) {
        let Some(host) = self.consumer.as_mut() else {
            return;
        };
        let mut out = Out::new(false);
        host.group.on_timer(cx.now, &timer, &mut out);
        self.apply_group_effects(cx, out);
    }

    /// OffsetCommit in a consumer group: the member's own epoch, or a lagging one for partitions
    /// it has held since (KIP-1251; `ConsumerMember::may_commit_at`).
    pub(super) fn consumer_offset_commit(
        &mut self,
        cx: &mut Cx,
        from: ClientRef,
        member_id: &str,
        epoch: i32,
        offsets: &[(usize, u64)],
    ) -> ErrorCode {
        let Some(host) = self.consumer.as_ref() else {
            return ErrorCode::UnknownMemberId;
        };
        let Some(member) = host.group.member(member_id) else {
            return ErrorCode::UnknownMemberId;
        };
        let parts: Vec<usize> = offsets.iter().map(|&(p, _)| p).collect();
        // MUTANT(fenced-commit): a commit at a fenced member epoch is written all the same.
        let fenced_ok = self.config.mutant == Some(crate::scenario::Mutant::FencedCommit);
        if !fenced_ok && !member.may_commit_at(epoch, &host.to_group(&parts)) {
            return ErrorCode::StaleMemberEpoch;
        }
        Coordinator::write_commits(cx, from, offsets);
        ErrorCode::None
    }

    /// The consumer group's effects as the coordinator's: timers by key, facts for observers.
    pub(super) fn apply_group_effects(&mut self, cx: &mut Cx, mut out: Out<GroupEffect>) {
        let Some(host) = self.consumer.as_mut() else {
            return;
        };
        let effects: Vec<GroupEffect> = out.drain().0.collect();
        // The member whose removal converts the group back to classic, if one does.
        let mut removed = None;
        let mut to_classic = false;
        // The member whose classic JoinGroup took over the last consumer-protocol member.
        let mut replacing = None;
        for effect in effects {
            match effect {
                GroupEffect::SetTimer { timer, at } => {
                    cx.set_timer(CoordTimer::Consumer(timer), at)
                }
                GroupEffect::CancelTimer(timer) => cx.cancel_timer(CoordTimer::Consumer(timer)),
                // The consumer group's records are not kept in a log (no fail-over reads them
                // yet); observers get what a describe reads from them.
                GroupEffect::Record(record) => {
                    let fact = host.recorded(&record);
                    cx.fact(Fact::ConsumerGroupRecorded(fact));
                }
                GroupEffect::EpochBumped {
                    epoch,
                    cause,
                    member_id,
                } => {
                    let member = member_id
                        .as_ref()
                        .and_then(|id| host.clients.get(id))
                        .map(|c| c.member);
                    let trigger = match cause {
                        EpochCause::MemberJoined => Trigger::MemberJoined,
                        EpochCause::MemberLeft => Trigger::MemberLeft,
                        EpochCause::MemberFenced => Trigger::MemberExpired,
                        EpochCause::SubscriptionChanged => Trigger::SubscriptionChanged,
                        EpochCause::MetadataChanged => Trigger::MetadataChanged,
                    };
                    cx.fact(Fact::RebalanceStarted {
                        generation: epoch,
                        trigger,
                        member,
                    });
                }
                GroupEffect::Removed { member_id } | GroupEffect::Fenced { member_id } => {
                    host.reported_owned.remove(&member_id);
                    if let Some(c) = host.clients.remove(&member_id) {
                        removed = removed.or(Some(c.member));
                        cx.fact(Fact::MemberRemoved {
                            member: c.member,
                            member_id,
                        });
                    }
                }
                GroupEffect::ConvertToClassic { .. } => to_classic = true,
                GroupEffect::ConvertToClassicReplacing { joining, stale, .. } => {
                    replacing = host
                        .clients
                        .get(&joining)
                        .map(|c| (c.member, ClassicAgain::Replacing { stale }));
                }
            }
        }
        // The last consumer-protocol member left or was replaced: the group is classic again.
        let downgrade = match (removed.filter(|_| to_classic), replacing) {
            (Some(leaving), _) => Some((leaving, ClassicAgain::AfterLeave)),
            (None, Some(replacing)) => Some(replacing),
            (None, None) => None,
        };
        if let Some((by, how)) = downgrade {
            let host = self.consumer.take().expect("the consumer group");
            self.convert_to_classic(cx, *host, by, how);
            return;
        }
        let Some(host) = self.consumer.as_mut() else {
            return;
        };
        // Every member reconciled to the target and says so (its heartbeat reports what it
        // was given): the rebalance of that epoch is over.
        let acknowledged = |host: &ConsumerHost| {
            host.group.members().all(|m| {
                host.reported_owned.get(&m.member_id).is_some_and(|owned| {
                    owned.len() == m.assigned.len()
                        && owned.iter().all(|tp| m.assigned.contains_key(tp))
                })
            })
        };
        // Cheapest first: this runs after every heartbeat.
        if host.stable_reported != host.group.group_epoch()
            && host.group.state() == ConsumerGroupState::Stable
            && acknowledged(host)
        {
            host.stable_reported = host.group.group_epoch();
            // The assignor that computed the target (the report's `assignor`).
            let assignor = host
                .group
                .preferred_assignor()
                .unwrap_or_else(|| "uniform".to_string());
            cx.fact(Fact::JoinCompleted {
                generation: host.group.group_epoch(),
                assignor,
            });
            cx.fact(Fact::GroupStable {
                generation: host.group.group_epoch(),
            });
        }
    }

    /// The consumer group's state and epoch (the classic group's fields are unused then).
    pub(super) fn consumer_state(&self) -> Option<(bool, &'static str, i32)> {
        self.consumer.as_ref().map(|h| {
            let state = h.group.state();
            (
                state == ConsumerGroupState::Stable || state == ConsumerGroupState::Empty,
                state.name(),
                h.group.group_epoch(),
            )
        })
    }
}
