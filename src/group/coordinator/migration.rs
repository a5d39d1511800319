//! The online migration between the classic and the consumer protocol (KIP-848), as Kafka
//! 4.3's `GroupMetadataManager` does it under `group.consumer.migration.policy`:
//!
//! - **upgrade**: a ConsumerGroupHeartbeat joining (epoch 0) a classic group converts it
//!   (`getOrMaybeCreateConsumerGroup`): an empty classic group is simply replaced; a live one
//!   only if the policy allows it (`validateOnlineUpgrade`), else the heartbeat is answered
//!   GROUP_ID_NOT_FOUND. Parked JoinGroups and SyncGroups are answered REBALANCE_IN_PROGRESS;
//!   every classic member becomes a consumer-group member Stable at the generation with its last
//!   assignment (`convertToConsumerGroup`, `ConsumerGroup.fromClassicGroup`);
//! - classic members go on through the bridge (`consumer_group/classic.rs`);
//! - **downgrade**: when the last consumer-protocol member leaves or is fenced and the rest speak
//!   the classic protocol, the group becomes a classic group again, Stable at the group epoch
//!   with each member's target assignment, and a rebalance begins (`convertToClassicGroup`,
//!   `ClassicGroup.fromConsumerGroup`). When a classic static member's new process takes over
//!   the entry of the last consumer-protocol member instead, the group becomes classic the
//!   same way with the joining member in the replaced one's place, and no rebalance begins
//!   (`validateOnlineDowngradeWithReplacedMemberId`).

use super::consumer::ConsumerHost;
use super::*;
use crate::group::consumer_group::{
    ClassicJoin, ClassicMember, ConsumerGroup, ConsumerGroupConfig, ConsumerMember,
    MemberState as ConsumerMemberState,
};
use crate::log;

/// What a consumer group is built from when one is needed: the broker's settings and the
/// cluster's topics (their partition counts kept current).
pub(super) struct ConsumerSetup {
    pub(super) config: ConsumerGroupConfig,
    pub(super) topics: Vec<ConsumerTopic>,
}

impl Coordinator {
    /// The coordinator can hold a consumer group: a consumer-protocol member's first heartbeat
    /// creates one, or converts the classic group (the group starts as whichever protocol its
    /// first member speaks).
    pub fn with_consumer_support(
        mut self,
        config: ConsumerGroupConfig,
        topics: Vec<ConsumerTopic>,
    ) -> Self {
        self.consumer_setup = Some(ConsumerSetup { config, topics });
        self
    }

    /// A ConsumerGroupHeartbeat reached a classic group: `true` if the group is a consumer
    /// group now; otherwise the heartbeat has been answered (GROUP_ID_NOT_FOUND).
    pub(super) fn upgrade_for_heartbeat(
        &mut self,
        cx: &mut Cx,
        from: ClientRef,
        member_epoch: i32,
    ) -> bool {
        let Some(setup) = self.consumer_setup.as_ref() else {
            return false;
        };
        let empty = self.members.is_empty();
        let refusal = if empty && member_epoch == 0 {
            // `maybeDeleteEmptyClassicGroup`: an empty classic group is deleted and a new
            // consumer group takes its place, whatever the policy.
            None
        } else if member_epoch != 0 {
            Some("is not a consumer group")
        } else if !setup.config.migration_policy.upgrade_enabled() {
            Some("cannot be upgraded to a consumer group because online upgrade is disabled")
        } else {
            None
        };
        if let Some(why) = refusal {
            log!(
                cx,
                "coordinator ConsumerGroupHeartbeat: GROUP_ID_NOT_FOUND (the classic group {why})"
            );
            cx.respond(
                from,
                Response::ConsumerGroupHeartbeat {
                    error: ErrorCode::GroupIdNotFound,
                    member_id: None,
                    member_epoch: 0,
                    heartbeat_interval_ms: 0,
                    assignment: None,
                },
            );
            return false;
        }
        let host = if empty {
            let host = ConsumerHost::new(setup.config.clone(), &setup.topics);
            self.clear_classic_group(cx);
            host
        } else {
            self.convert_to_consumer(cx, from)
        };
        self.consumer = Some(Box::new(host));
        true
    }

    /// `convertToConsumerGroup`: the live classic group as a consumer group.
    fn convert_to_consumer(&mut self, cx: &mut Cx, by: ClientRef) -> ConsumerHost {
        // A rebalance in progress: its parked members are told to rejoin.
        let ids: Vec<String> = self.members.keys().cloned().collect();
        for id in &ids {
            let m = self.members.get_mut(id).expect("member");
            if let Some(to) = m.awaiting_join.take() {
                cx.respond(to, Response::join_error(ErrorCode::RebalanceInProgress, id));
            }
            if let Some(to) = m.awaiting_sync.take() {
                cx.respond(to, Response::sync_error(ErrorCode::RebalanceInProgress));
            }
        }
        let setup = self.consumer_setup.as_ref().expect("consumer support");
        let mut host = ConsumerHost::new(setup.config.clone(), &setup.topics);
        let generation = self.generation;
        let protocol = self.protocol_name.clone();
        let mut members = Vec::new();
        let mut clients = Vec::new();
        for (id, m) in self.members.iter() {
            let subscription = protocol
                .as_deref()
                .and_then(|p| m.metadata(p))
                .or_else(|| m.protocols.first().map(|p| &p.metadata));
            let assigned = host.to_group(m.assignment.as_deref().unwrap_or_default());
            let mut member = ConsumerMember::new_classic(
                id.clone(),
                ClassicMember {
                    session_timeout_ms: m.session_timeout_ms,
                    protocols: m.protocols.clone(),
                },
            );
            member.instance_id.clone_from(&m.group_instance_id);
            member.member_epoch = generation;
            member.previous_member_epoch = generation;
            member.state = ConsumerMemberState::Stable;
            member.assigned = assigned.iter().map(|&tp| (tp, generation)).collect();
            member.subscribed_topic_names =
                subscription.map(|s| s.topics.clone()).unwrap_or_default();
            member.rebalance_timeout_ms = m.rebalance_timeout_ms.min(i32::MAX as u64) as i32;
            clients.push((id.clone(), m.client, assigned));
            members.push(member);
        }
        let topics = host.group.topics().to_vec();
        host.group = ConsumerGroup::from_classic(setup.config.clone(), topics, generation, members);
        for (id, client, assigned) in clients {
            host.clients.insert(id.clone(), client);
            // What it holds counts as acknowledged: the group is Stable at its generation.
            host.reported_owned.insert(id, assigned);
        }
        host.stable_reported = generation;
        let names: Vec<usize> = host.clients.values().map(|c| c.member).collect();
        // Each one's last classic assignment, as the consumer group now records it
        // (`fromClassicGroup`), whatever the member has read of it.
        let assignments: Vec<Vec<usize>> = host
            .clients
            .keys()
            .map(|id| host.to_global(&host.reported_owned[id]))
            .collect();
        log!(
            cx,
            "coordinator converts the classic group (generation {generation}, {}) to a consumer group",
            self.state.name()
        );
        cx.fact(Fact::GroupConverted {
            to_consumer: true,
            by: Some(by.member),
            replaced: false,
            epoch: generation,
            members: names,
            assignments,
        });
        self.clear_classic_group(cx);
        // `scheduleConsumerGroupSessionTimeout` for every member it brought over.
        for (timer, at) in host.group.session_timers_from(cx.now) {
            cx.set_timer(CoordTimer::Consumer(timer), at);
        }
        host
    }

    /// The classic group's state and timers gone (it was converted or deleted).
    fn clear_classic_group(&mut self, cx: &mut Cx) {
        let ids: Vec<String> = self.members.keys().cloned().collect();
        for id in &ids {
            self.cancel_session(cx, id);
        }
        for id in std::mem::take(&mut self.pending_join).keys() {
            cx.cancel_timer(CoordTimer::heartbeat(id));
        }
        if self.join_timer.take().is_some() {
            cx.cancel_timer(CoordTimer::Join);
        }
        if self.sync_timer.take().is_some() {
            cx.cancel_timer(CoordTimer::Sync);
        }
        for id in ids {
            if let Some(m) = self.members.remove(&id) {
                self.known_clients.insert(id, m.client);
            }
        }
        self.static_members.clear();
        self.pending_sync = JavaHashSet::new(Capacity::Default);
        self.leader = None;
        self.protocol_name = None;
        self.state = GroupState::Empty;
        self.previous_state = GroupState::Empty;
    }

    /// `convertToClassicGroup` after the last consumer-protocol member left or was replaced
    /// (`by` is that member or the one replacing it): the members are a classic group Stable
    /// at the group epoch, each with its target assignment; after a leave a rebalance begins.
    pub(super) fn convert_to_classic(
        &mut self,
        cx: &mut Cx,
        host: ConsumerHost,
        by: usize,
        how: ClassicAgain,
    ) {
        let group = &host.group;
        let epoch = group.group_epoch();
        self.exists = true;
        self.generation = epoch;
        self.protocol_type = Some("consumer".into());
        self.state = GroupState::Stable;
        self.previous_state = GroupState::Stable;
        let mut names = Vec::new();
        let mut assignments = Vec::new();
        for m in group.members() {
            let Some(classic) = &m.classic else { continue };
            let Some(&client) = host.clients.get(&m.member_id) else {
                continue;
            };
            names.push(client.member);
            let assignment = host.to_global(&group.target_of(&m.member_id));
            assignments.push(assignment.clone());
            self.members.insert(
                m.member_id.clone(),
                GroupMember {
                    client,
                    group_instance_id: m.instance_id.clone(),
                    protocols: classic.protocols.clone(),
                    rebalance_timeout_ms: m.rebalance_timeout_ms.max(0) as u64,
                    session_timeout_ms: classic.session_timeout_ms,
                    awaiting_join: None,
                    awaiting_sync: None,
                    is_new: false,
                    assignment: Some(assignment),
                    session: None,
                },
            );
            if let Some(instance) = &m.instance_id {
                self.static_members
                    .insert(instance.clone(), m.member_id.clone());
            }
            if self.leader.is_none() {
                self.leader = Some(m.member_id.clone());
            }
        }
        self.protocol_name = self.select_protocol();
        log!(
            cx,
            "coordinator converts the consumer group (epoch {epoch}) back to a classic group"
        );
        cx.fact(Fact::GroupConverted {
            to_consumer: false,
            by: Some(by),
            replaced: matches!(how, ClassicAgain::Replacing { .. }),
            epoch,
            members: names,
            assignments,
        });
        // `rescheduleClassicGroupMemberHeartbeat` for every member, then the rebalance.
        let ids: Vec<String> = self.members.keys().cloned().collect();
        for id in &ids {
            self.reschedule_session_default(cx, id);
        }
        match how {
            ClassicAgain::AfterLeave => self.prepare_rebalance(cx, Trigger::MemberLeft, Some(by)),
            // As a static member's restart with a new subscription in a classic group.
            ClassicAgain::Replacing { stale: true } => {
                self.prepare_rebalance(cx, Trigger::MemberRestarted, Some(by))
            }
            ClassicAgain::Replacing { stale: false } => {}
        }
    }

    // ---- Classic requests to a consumer group: the bridge ----

    /// A JoinGroup to a consumer group (`classicGroupJoinToConsumerGroup`).
    pub(super) fn bridge_join(&mut self, cx: &mut Cx, member_id: String, join: join::Join) {
        let is_unknown = member_id.is_empty();
        if join.protocol_type != "consumer" || join.protocols.is_empty() {
            let error = ErrorCode::InconsistentGroupProtocol;
            cx.respond(join.client, Response::join_error(error, &member_id));
            return;
        }
        // A consumer group's member ids are bare UUIDs.
        let member_id = if is_unknown {
            self.new_member_uuid()
        } else {
            member_id
        };
        if is_unknown && join.group_instance_id.is_none() && join.version >= 4 {
            // `requiresKnownMemberId`: come back with this id.
            cx.respond(
                join.client,
                Response::join_error(ErrorCode::MemberIdRequired, &member_id),
            );
            return;
        }
        let Some(host) = self.consumer.as_mut() else {
            return;
        };
        let subscription = &join.protocols[0].metadata;
        let request = ClassicJoin {
            member_id: member_id.clone(),
            is_unknown,
            instance_id: join.group_instance_id.clone(),
            protocols: join.protocols.clone(),
            topics: subscription.topics.clone(),
            owned: host.to_group(&subscription.owned),
            rebalance_timeout_ms: join.rebalance_timeout_ms.min(i32::MAX as u64) as i32,
            session_timeout_ms: join.session_timeout_ms,
        };
        let was_member = host.group.member(&member_id).is_some();
        let mut out = Out::new(false);
        let answer = host.group.classic_join(cx.now, &request, &mut out);
        let response = match answer {
            Ok(a) => {
                host.clients.insert(a.member_id.clone(), join.client);
                if !was_member {
                    cx.fact(Fact::MemberAdded {
                        member: join.client.member,
                        incarnation: join.client.incarnation,
                        member_id: a.member_id.clone(),
                    });
                }
                host.reported_owned
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
                    host.group.group_epoch(),
                    host.group.state().name()
                );
                Response::JoinGroup {
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
            Err(error) => Response::join_error(error, &member_id),
        };
        self.apply_group_effects(cx, out);
        cx.respond(join.client, response);
    }

    /// A SyncGroup to a consumer group (`classicGroupSyncToConsumerGroup`).
    pub(super) fn bridge_sync(&mut self, cx: &mut Cx, sync: sync::Sync) {
        let Some(host) = self.consumer.as_mut() else {
            return;
        };
        let mut out = Out::new(false);
        let answer = host.group.classic_sync(
            cx.now,
            &sync.member_id,
            sync.group_instance_id.as_deref(),
            sync.generation,
            sync.protocol_name.as_deref(),
            &mut out,
        );
        let response = match answer {
            Ok(assigned) => {
                let assignment = host.to_global(&assigned);
                host.reported_owned.insert(sync.member_id.clone(), assigned);
                cx.fact(Fact::AssignmentSent {
                    member: sync.client.member,
                    partitions: assignment.clone(),
                });
                Response::SyncGroup {
                    error: ErrorCode::None,
                    protocol_type: sync.protocol_type.clone(),
                    protocol_name: sync.protocol_name.clone(),
                    assignment: Some(assignment),
                }
            }
            Err(error) => Response::sync_error(error),
        };
        self.apply_group_effects(cx, out);
        cx.respond(sync.client, response);
    }

    /// A Heartbeat to a consumer group (`classicGroupHeartbeatToConsumerGroup`).
    pub(super) fn bridge_heartbeat(
        &mut self,
        cx: &mut Cx,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
    ) -> ErrorCode {
        let Some(host) = self.consumer.as_mut() else {
            return ErrorCode::UnknownMemberId;
        };
        let mut out = Out::new(false);
        let error =
            host.group
                .classic_heartbeat(cx.now, member_id, instance_id, generation, &mut out);
        self.apply_group_effects(cx, out);
        error
    }

    /// A LeaveGroup to a consumer group (`classicGroupLeaveToConsumerGroup`).
    pub(super) fn bridge_leave(&mut self, cx: &mut Cx, members: Vec<LeavingMember>) -> Response {
        let mut answers = Vec::new();
        for leaving in members {
            let Some(host) = self.consumer.as_mut() else {
                break;
            };
            let mut out = Out::new(false);
            let result = host.group.classic_leave(
                cx.now,
                &leaving.member_id,
                leaving.group_instance_id.as_deref(),
                &mut out,
            );
            self.apply_group_effects(cx, out);
            let (member_id, error) = match result {
                Ok(id) => (id, ErrorCode::None),
                Err(e) => (leaving.member_id.clone(), e),
            };
            answers.push(LeftMember {
                member_id,
                group_instance_id: leaving.group_instance_id,
                error,
            });
        }
        Response::LeaveGroup {
            error: ErrorCode::None,
            members: answers,
        }
    }

    /// A member id for a consumer group: a bare UUID (`Uuid.randomUuid().toString()`).
    fn new_member_uuid(&mut self) -> String {
        match self.ids.given.pop_front() {
            Some(id) => id,
            None => crate::sim::rng::random_uuid_string(&mut self.ids.random),
        }
    }
}
