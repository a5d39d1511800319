//! The consumer group behind the dispatcher: what Kafka's `GroupMetadataManager` does around a
//! `ConsumerGroup` for each request that reaches it. Partitions are translated between the
//! cluster's global indexes and the group's (topic, partition); the group's own effects
//! ([`GroupEffect`]) become the coordinator's ([`CoordinatorEffect`]: responses, timers by key,
//! facts naming scenario members), as the classic group writes them; OffsetCommit is checked
//! against member epochs; and classic-protocol members reach the group through the bridge
//! (`bridge.rs`). A change that makes the group classic again is handed back to the dispatcher
//! as a [`Downgrade`] (`group/migration.rs` converts it).

use super::{
    ClassicJoin, ClassicMember, ConsumerGroup, ConsumerGroupConfig, ConsumerGroupRecord,
    ConsumerGroupState, ConsumerGroupTimer, ConsumerHeartbeat, ConsumerMember, EpochCause,
    GroupEffect, MemberState, Partitions,
};
use crate::assignor::{Topic, TopicPartition};
use crate::facts::{ConsumerRecord, Fact};
use crate::group::classic::{ClassicAgain, HandedOver, Join, Sync, TakenBack};
use crate::group::effects::{CoordTimer, CoordinatorConfig, Cx};
use crate::log;
use crate::messages::LEAVE_EPOCH;
use crate::messages::{
    ClientRef, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, ErrorCode,
    HeartbeatRequest, JoinGroupResponse, LeavingMember, LeftMember, OffsetCommitRequest,
    SyncGroupResponse, Trigger,
};
use crate::sim::Out;
use std::collections::BTreeMap;

/// A topic as the consumer group is told of it: its name and id, its partitions now, and the
/// global index of its partition 0 in the cluster's partition space.
#[derive(Clone, Debug)]
pub struct ConsumerTopic {
    pub name: String,
    pub id: crate::java::Uuid,
    pub partitions: u32,
    pub first: usize,
}

/// What a consumer group is built from when one is needed: the broker's settings and the
/// cluster's topics (their partition counts kept current).
pub(in crate::group) struct ConsumerSetup {
    pub(in crate::group) config: ConsumerGroupConfig,
    pub(in crate::group) topics: Vec<ConsumerTopic>,
}

/// The group becomes a classic group again: `by` (a scenario member) left or took over the
/// last consumer-protocol member's entry.
pub(in crate::group) struct Downgrade {
    pub(in crate::group) by: usize,
    pub(in crate::group) how: ClassicAgain,
}

/// The consumer group and what the coordinator keeps beside it.
pub(in crate::group) struct ConsumerHost {
    pub(in crate::group) group: ConsumerGroup,
    /// Scenario topic index -> the group's topic index (name order), and each topic's first
    /// global partition index.
    topic_of: Vec<u32>,
    first: Vec<usize>,
    /// The group's topic index -> scenario topic index.
    scenario_topic: Vec<usize>,
    /// Which client each member id is.
    pub(in crate::group) clients: BTreeMap<String, ClientRef>,
    /// What each member's heartbeats last said it owns (its acknowledgement).
    reported_owned: BTreeMap<String, Partitions>,
    /// The group epoch the last GroupStable fact was for.
    stable_reported: i32,
}

impl ConsumerHost {
    /// A new, empty consumer group over `setup`'s topics.
    pub(in crate::group) fn new(setup: &ConsumerSetup) -> Self {
        let topics = &setup.topics;
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
            group: ConsumerGroup::new(setup.config.clone(), group_topics),
            topic_of,
            first: topics.iter().map(|t| t.first).collect(),
            scenario_topic: order,
            clients: BTreeMap::new(),
            reported_owned: BTreeMap::new(),
            stable_reported: 0,
        }
    }

    /// `ConsumerGroup.fromClassicGroup`: the classic group's members, handed over in its map
    /// order, each a consumer-group member Stable at the generation with its last assignment;
    /// what each holds counts as acknowledged (the group is Stable at its generation).
    pub(in crate::group) fn from_classic_group(
        setup: &ConsumerSetup,
        generation: i32,
        handed_over: Vec<HandedOver>,
    ) -> Self {
        let mut host = ConsumerHost::new(setup);
        let mut members = Vec::with_capacity(handed_over.len());
        let mut clients = Vec::with_capacity(handed_over.len());
        for m in handed_over {
            let assigned = host.to_group(&m.assignment);
            let mut member = ConsumerMember::new_classic(
                m.member_id.clone(),
                ClassicMember {
                    session_timeout_ms: m.session_timeout_ms,
                    protocols: m.protocols,
                },
            );
            member.instance_id = m.instance_id;
            member.member_epoch = generation;
            member.previous_member_epoch = generation;
            member.state = MemberState::Stable;
            member.assigned = assigned.iter().map(|&tp| (tp, generation)).collect();
            member.subscribed_topic_names = m.subscribed_topics;
            member.rebalance_timeout_ms = m.rebalance_timeout_ms.min(i32::MAX as u64) as i32;
            clients.push((m.member_id, m.client, assigned));
            members.push(member);
        }
        let topics = host.group.topics().to_vec();
        host.group = ConsumerGroup::from_classic(setup.config.clone(), topics, generation, members);
        for (id, client, assigned) in clients {
            host.clients.insert(id.clone(), client);
            host.reported_owned.insert(id, assigned);
        }
        host.stable_reported = generation;
        host
    }

    /// Each member's scenario member and last classic assignment, as the consumer group now
    /// records it (`fromClassicGroup`), whatever the member has read of it; by member id.
    pub(in crate::group) fn converted_members(&self) -> (Vec<usize>, Vec<Vec<usize>>) {
        let names = self.clients.values().map(|c| c.member).collect();
        let assignments = self
            .clients
            .keys()
            .map(|id| self.to_global(&self.reported_owned[id]))
            .collect();
        (names, assignments)
    }

    /// The classic-protocol members, in the group's member order, as a classic group takes
    /// them back (`ClassicGroup.fromConsumerGroup`), each with its target assignment.
    pub(in crate::group) fn classic_members(&self) -> Vec<TakenBack> {
        self.group
            .members()
            .filter_map(|m| {
                let classic = m.classic.as_ref()?;
                let client = *self.clients.get(&m.member_id)?;
                Some(TakenBack {
                    member_id: m.member_id.clone(),
                    client,
                    instance_id: m.instance_id.clone(),
                    protocols: classic.protocols.clone(),
                    session_timeout_ms: classic.session_timeout_ms,
                    rebalance_timeout_ms: m.rebalance_timeout_ms.max(0) as u64,
                    assignment: self.to_global(&self.group.target_of(&m.member_id)),
                })
            })
            .collect()
    }

    /// Loaded by a new coordinator: a consumer group writes every change before it answers,
    /// so it comes back as it was; its members' sessions restart from the load
    /// (`scheduleConsumerGroupSessionTimeout`).
    pub(in crate::group) fn load(&self, cx: &mut Cx) {
        for (timer, at) in self.group.session_timers_from(cx.now) {
            cx.set_timer(CoordTimer::Consumer(timer), at);
        }
        log!(cx, "coordinator loaded the consumer group");
    }

    /// A topic grew: the group notices on its next heartbeat.
    pub(in crate::group) fn set_partitions(&mut self, name: &str, partitions: u32) {
        self.group.set_partitions(name, partitions as i32);
    }

    /// The group's state: whether it is at rest (Stable or Empty), its name, its epoch.
    pub(in crate::group) fn is_at_rest(&self) -> bool {
        let state = self.group.state();
        state == ConsumerGroupState::Stable || state == ConsumerGroupState::Empty
    }

    pub(in crate::group) fn to_group(&self, parts: &[usize]) -> Partitions {
        parts
            .iter()
            .map(|&p| {
                let t = self.first.iter().rposition(|&f| f <= p).unwrap_or(0);
                TopicPartition::new(self.topic_of[t], (p - self.first[t]) as i32)
            })
            .collect()
    }

    pub(in crate::group) fn to_global(&self, parts: &Partitions) -> Vec<usize> {
        let mut out: Vec<usize> = parts
            .iter()
            .map(|tp| self.first[self.scenario_topic[tp.topic as usize]] + tp.partition as usize)
            .collect();
        out.sort_unstable();
        out
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

    // ---- Requests ----

    /// A ConsumerGroupHeartbeat (`consumerGroupHeartbeat`).
    pub(in crate::group) fn heartbeat(
        &mut self,
        cx: &mut Cx,
        from: ClientRef,
        req: ConsumerGroupHeartbeatRequest,
    ) -> (ConsumerGroupHeartbeatResponse, Option<Downgrade>) {
        let member_id = req.member_id;
        let member_epoch = req.member_epoch;
        // What the heartbeat says it owns counts once the coordinator accepted it: a fenced or
        // unknown member's report is answered with an error and changes nothing.
        let reported = req.owned.clone();
        let owned = req.owned.map(|o| self.to_group(&o));
        if let Some(o) = &owned {
            self.reported_owned.insert(member_id.clone(), o.clone());
        }
        let heartbeat = ConsumerHeartbeat {
            member_id: member_id.clone(),
            member_epoch,
            instance_id: req.instance_id,
            rebalance_timeout_ms: req.rebalance_timeout_ms,
            subscribed_topic_names: req.subscribed_topic_names,
            server_assignor: req.server_assignor,
            owned,
        };
        let was_member = self.group.member(&member_id).is_some();
        let mut out = Out::new(false);
        let response = self.group.heartbeat(cx.now, &heartbeat, &mut out);
        if member_epoch >= 0 && response.error == ErrorCode::None {
            self.clients.insert(member_id.clone(), from);
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
        let assignment = response.assignment.as_ref().map(|a| self.to_global(a));
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
            self.group.group_epoch(),
            self.group.assignment_epoch(),
            self.group.state().name()
        );
        let downgrade = self.apply(cx, out);
        let response = ConsumerGroupHeartbeatResponse {
            error: response.error,
            member_id: response.member_id,
            member_epoch: response.member_epoch,
            heartbeat_interval_ms: response.heartbeat_interval_ms,
            assignment,
        };
        (response, downgrade)
    }

    /// One of its timers fires.
    pub(in crate::group) fn on_timer(
        &mut self,
        cx: &mut Cx,
        timer: ConsumerGroupTimer,
    ) -> Option<Downgrade> {
        let mut out = Out::new(false);
        self.group.on_timer(cx.now, &timer, &mut out);
        self.apply(cx, out)
    }

    /// OffsetCommit in a consumer group: the member's own epoch, or a lagging one for partitions
    /// it has held since (KIP-1251; `ConsumerMember::may_commit_at`).
    pub(in crate::group) fn offset_commit(
        &self,
        cx: &mut Cx,
        config: &CoordinatorConfig,
        from: ClientRef,
        req: &OffsetCommitRequest,
    ) -> ErrorCode {
        let Some(member) = self.group.member(&req.member_id) else {
            return ErrorCode::UnknownMemberId;
        };
        let parts: Vec<usize> = req.offsets.iter().map(|&(p, _)| p).collect();
        // MUTANT(fenced-commit): a commit at a fenced member epoch is written all the same.
        let fenced_ok = config.accepts_fenced_commits();
        if !fenced_ok && !member.may_commit_at(req.generation, &self.to_group(&parts)) {
            return ErrorCode::StaleMemberEpoch;
        }
        cx.write_commits(from, &req.offsets);
        ErrorCode::None
    }

    // ---- Classic requests to a consumer group: the bridge ----

    /// A JoinGroup to a consumer group (`classicGroupJoinToConsumerGroup`).
    pub(in crate::group) fn classic_join(
        &mut self,
        cx: &mut Cx,
        join: &Join,
    ) -> (JoinGroupResponse, Option<Downgrade>) {
        let member_id = join.req.member_id.clone();
        let is_unknown = member_id.is_empty();
        if join.req.protocol_type != "consumer" || join.req.protocols.is_empty() {
            let error = ErrorCode::InconsistentGroupProtocol;
            return (JoinGroupResponse::error(error, &member_id), None);
        }
        // A consumer group's member ids are bare UUIDs.
        let member_id = if is_unknown { cx.ids.bare() } else { member_id };
        if is_unknown && join.req.group_instance_id.is_none() && join.req.version >= 4 {
            // `requiresKnownMemberId`: come back with this id.
            let response = JoinGroupResponse::error(ErrorCode::MemberIdRequired, &member_id);
            return (response, None);
        }
        let subscription = &join.req.protocols[0].metadata;
        let request = ClassicJoin {
            member_id: member_id.clone(),
            is_unknown,
            instance_id: join.req.group_instance_id.clone(),
            protocols: join.req.protocols.clone(),
            topics: subscription.topics.clone(),
            owned: self.to_group(&subscription.owned),
            rebalance_timeout_ms: join.req.rebalance_timeout_ms.min(i32::MAX as u64) as i32,
            session_timeout_ms: join.req.session_timeout_ms,
        };
        let was_member = self.group.member(&member_id).is_some();
        let mut out = Out::new(false);
        let answer = self.group.classic_join(cx.now, &request, &mut out);
        let response = match answer {
            Ok(a) => {
                self.clients.insert(a.member_id.clone(), join.client);
                if !was_member {
                    cx.fact(Fact::MemberAdded {
                        member: join.client.member,
                        incarnation: join.client.incarnation,
                        member_id: a.member_id.clone(),
                    });
                }
                self.reported_owned
                    .insert(a.member_id.clone(), request.owned.clone());
                cx.fact(Fact::OwnedReported {
                    member: join.client.member,
                    partitions: subscription.owned.clone(),
                });
                log!(
                    cx,
                    "coordinator JoinGroup (classic, in a consumer group) from {}: generation {} (group epoch {}, {})",
                    a.member_id,
                    a.generation,
                    self.group.group_epoch(),
                    self.group.state().name()
                );
                JoinGroupResponse {
                    error: ErrorCode::None,
                    member_id: a.member_id,
                    generation: a.generation,
                    protocol_type: Some("consumer".into()),
                    protocol_name: Some(a.protocol_name),
                    leader: String::new(),
                    members: Vec::new(),
                    skip_assignment: false,
                }
            }
            Err(error) => JoinGroupResponse::error(error, &member_id),
        };
        (response, self.apply(cx, out))
    }

    /// A SyncGroup to a consumer group (`classicGroupSyncToConsumerGroup`).
    pub(in crate::group) fn classic_sync(
        &mut self,
        cx: &mut Cx,
        sync: &Sync,
    ) -> (SyncGroupResponse, Option<Downgrade>) {
        let mut out = Out::new(false);
        let answer = self.group.classic_sync(
            cx.now,
            &sync.req.member_id,
            sync.req.group_instance_id.as_deref(),
            sync.req.generation,
            sync.req.protocol_name.as_deref(),
            &mut out,
        );
        let response = match answer {
            Ok(assigned) => {
                let assignment = self.to_global(&assigned);
                self.reported_owned
                    .insert(sync.req.member_id.clone(), assigned);
                cx.fact(Fact::AssignmentSent {
                    member: sync.client.member,
                    partitions: assignment.clone(),
                });
                SyncGroupResponse {
                    error: ErrorCode::None,
                    protocol_type: sync.req.protocol_type.clone(),
                    protocol_name: sync.req.protocol_name.clone(),
                    assignment: Some(assignment),
                }
            }
            Err(error) => SyncGroupResponse::error(error),
        };
        (response, self.apply(cx, out))
    }

    /// A Heartbeat to a consumer group (`classicGroupHeartbeatToConsumerGroup`).
    pub(in crate::group) fn classic_heartbeat(
        &mut self,
        cx: &mut Cx,
        req: &HeartbeatRequest,
    ) -> (ErrorCode, Option<Downgrade>) {
        let mut out = Out::new(false);
        let error = self.group.classic_heartbeat(
            cx.now,
            &req.member_id,
            req.group_instance_id.as_deref(),
            req.generation,
            &mut out,
        );
        (error, self.apply(cx, out))
    }

    /// One member of a LeaveGroup to a consumer group (`classicGroupLeaveToConsumerGroup`): its
    /// answer, and whether its going made the group classic again.
    pub(in crate::group) fn classic_leave(
        &mut self,
        cx: &mut Cx,
        leaving: LeavingMember,
    ) -> (LeftMember, Option<Downgrade>) {
        let mut out = Out::new(false);
        let result = self.group.classic_leave(
            cx.now,
            &leaving.member_id,
            leaving.group_instance_id.as_deref(),
            &mut out,
        );
        let downgrade = self.apply(cx, out);
        let (member_id, error) = match result {
            Ok(id) => (id, ErrorCode::None),
            Err(e) => (leaving.member_id.clone(), e),
        };
        let answer = LeftMember {
            member_id,
            group_instance_id: leaving.group_instance_id,
            error,
        };
        (answer, downgrade)
    }

    /// The consumer group's effects as the coordinator's: timers by key, facts for observers;
    /// a [`Downgrade`] if the group is to become classic again (then nothing else is told).
    fn apply(&mut self, cx: &mut Cx, mut out: Out<GroupEffect>) -> Option<Downgrade> {
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
                    let fact = self.recorded(&record);
                    cx.fact(Fact::ConsumerGroupRecorded(fact));
                }
                GroupEffect::EpochBumped {
                    epoch,
                    cause,
                    member_id,
                } => {
                    let member = member_id
                        .as_ref()
                        .and_then(|id| self.clients.get(id))
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
                    self.reported_owned.remove(&member_id);
                    if let Some(c) = self.clients.remove(&member_id) {
                        removed = removed.or(Some(c.member));
                        cx.fact(Fact::MemberRemoved {
                            member: c.member,
                            member_id,
                        });
                    }
                }
                GroupEffect::ConvertToClassic { .. } => to_classic = true,
                GroupEffect::ConvertToClassicReplacing { joining, stale, .. } => {
                    replacing = self
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
            return Some(Downgrade { by, how });
        }
        self.maybe_stable(cx);
        None
    }

    /// Every member reconciled to the target and says so (its heartbeat reports what it was
    /// given): the rebalance of that epoch is over.
    fn maybe_stable(&mut self, cx: &mut Cx) {
        let acknowledged = |host: &ConsumerHost| {
            host.group.members().all(|m| {
                host.reported_owned.get(&m.member_id).is_some_and(|owned| {
                    owned.len() == m.assigned.len()
                        && owned.iter().all(|tp| m.assigned.contains_key(tp))
                })
            })
        };
        // Cheapest first: this runs after every heartbeat.
        if self.stable_reported != self.group.group_epoch()
            && self.group.state() == ConsumerGroupState::Stable
            && acknowledged(self)
        {
            self.stable_reported = self.group.group_epoch();
            // The assignor that computed the target (the report's `assignor`).
            let assignor = self
                .group
                .preferred_assignor()
                .unwrap_or_else(|| "uniform".to_string());
            cx.fact(Fact::JoinCompleted {
                generation: self.group.group_epoch(),
                assignor,
            });
            cx.fact(Fact::GroupStable {
                generation: self.group.group_epoch(),
            });
        }
    }
}
