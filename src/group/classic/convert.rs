//! The classic group's half of an online migration (KIP-848), as Kafka's `ClassicGroup`
//! holds it: what a live classic group hands over when it becomes a consumer group
//! (`convertToConsumerGroup`, read by `ConsumerGroup.fromClassicGroup`), the group deleted
//! when it is converted or replaced, and a classic group made from a consumer group's members
//! (`ClassicGroup.fromConsumerGroup`). When each happens is the dispatcher's business
//! (`group/migration.rs`).

use super::*;
use crate::log;

/// A classic member as the consumer group takes it over.
pub(in crate::group) struct HandedOver {
    pub member_id: String,
    pub client: ClientRef,
    pub instance_id: Option<String>,
    pub protocols: Vec<JoinProtocol>,
    /// The topics its subscription names (for the selected protocol, else its first).
    pub subscribed_topics: Vec<String>,
    pub session_timeout_ms: u64,
    pub rebalance_timeout_ms: u64,
    /// Its last SyncGroup assignment (none: empty).
    pub assignment: Vec<usize>,
}

/// A consumer group's classic-protocol member as the classic group takes it back.
pub(in crate::group) struct TakenBack {
    pub member_id: String,
    pub client: ClientRef,
    pub instance_id: Option<String>,
    pub protocols: Vec<JoinProtocol>,
    pub session_timeout_ms: u64,
    pub rebalance_timeout_ms: u64,
    /// Its target assignment in the consumer group.
    pub assignment: Vec<usize>,
}

/// Why a consumer group becomes a classic group again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::group) enum ClassicAgain {
    /// Its last consumer-protocol member left or was fenced: a rebalance follows.
    AfterLeave,
    /// A classic static member took over the last consumer-protocol member's entry: the
    /// group is Stable as it is, unless the target assignment is stale (behind the group
    /// epoch): then it rebalances (KAFKA-20273).
    Replacing { stale: bool },
}

impl ClassicGroup {
    /// Whether it has no members (an empty classic group is deleted, not converted, when a
    /// consumer-protocol member joins: `maybeDeleteEmptyClassicGroup`).
    pub(in crate::group) fn has_no_members(&self) -> bool {
        self.members.is_empty()
    }

    /// `convertToConsumerGroup`, the classic half: a rebalance in progress is abandoned (its
    /// parked JoinGroups and SyncGroups are answered REBALANCE_IN_PROGRESS, so the members
    /// rejoin), and every member is handed over, in map order, with its last assignment.
    pub(in crate::group) fn hand_over(&mut self, cx: &mut Cx) -> Vec<HandedOver> {
        let ids: Vec<String> = self.members.keys().cloned().collect();
        for id in &ids {
            let m = self.members.get_mut(id).expect("member");
            if let Some(to) = m.awaiting_join.take() {
                cx.respond(
                    to,
                    JoinGroupResponse::error(ErrorCode::RebalanceInProgress, id),
                );
            }
            if let Some(to) = m.awaiting_sync.take() {
                cx.respond(to, SyncGroupResponse::error(ErrorCode::RebalanceInProgress));
            }
        }
        let protocol = self.protocol_name.as_deref();
        self.members
            .iter()
            .map(|(id, m)| {
                let subscription = protocol
                    .and_then(|p| m.metadata(p))
                    .or_else(|| m.protocols.first().map(|p| &p.metadata));
                HandedOver {
                    member_id: id.clone(),
                    client: m.client,
                    instance_id: m.group_instance_id.clone(),
                    protocols: m.protocols.clone(),
                    subscribed_topics: subscription.map(|s| s.topics.clone()).unwrap_or_default(),
                    session_timeout_ms: m.session_timeout_ms,
                    rebalance_timeout_ms: m.rebalance_timeout_ms,
                    assignment: m.assignment.clone().unwrap_or_default(),
                }
            })
            .collect()
    }

    /// The group is deleted (converted to a consumer group, or replaced while empty): its
    /// timers are cancelled, its members' processes remembered, and it is Dead.
    pub(in crate::group) fn delete(&mut self, cx: &mut Cx) {
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
                cx.known_clients.insert(id, m.client);
            }
        }
        self.static_members.clear();
        self.pending_sync = JavaHashSet::new(Capacity::Default);
        self.leader = None;
        self.protocol_name = None;
        self.transition(ClassicGroupState::Dead);
    }

    /// `ClassicGroup.fromConsumerGroup`: the consumer group's members (`by` is the member
    /// whose leave or take-over converted it) as a classic group Stable at the group epoch,
    /// each with its target assignment; after a leave a rebalance begins.
    pub(in crate::group) fn from_consumer_group(
        config: CoordinatorConfig,
        cx: &mut Cx,
        epoch: i32,
        members: Vec<TakenBack>,
        by: usize,
        how: ClassicAgain,
    ) -> ClassicGroup {
        let mut group = ClassicGroup::new(config);
        group.exists = true;
        group.generation = epoch;
        group.protocol_type = Some("consumer".into());
        // Created in Stable, not entered: its previous state is Dead, as Kafka's constructor
        // leaves it.
        group.state = ClassicGroupState::Stable;
        group.previous_state = ClassicGroupState::Dead;
        let mut names = Vec::new();
        let mut assignments = Vec::new();
        for m in members {
            names.push(m.client.member);
            assignments.push(m.assignment.clone());
            if let Some(instance) = &m.instance_id {
                group
                    .static_members
                    .insert(instance.clone(), m.member_id.clone());
            }
            if group.leader.is_none() {
                group.leader = Some(m.member_id.clone());
            }
            group.members.insert(
                m.member_id,
                GroupMember {
                    client: m.client,
                    group_instance_id: m.instance_id,
                    protocols: m.protocols,
                    rebalance_timeout_ms: m.rebalance_timeout_ms,
                    session_timeout_ms: m.session_timeout_ms,
                    awaiting_join: None,
                    awaiting_sync: None,
                    is_new: false,
                    assignment: Some(m.assignment),
                    session: None,
                },
            );
        }
        group.protocol_name = group.select_protocol();
        // `createClassicGroupRecords`: the classic group is written as it is made, so a
        // coordinator that loads the group after a fail-over finds it, not the record the
        // group had before it became a consumer group.
        group.write_group_metadata(cx);
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
        let ids: Vec<String> = group.members.keys().cloned().collect();
        for id in &ids {
            group.reschedule_session_default(cx, id);
        }
        match how {
            ClassicAgain::AfterLeave => group.prepare_rebalance(cx, Trigger::MemberLeft, Some(by)),
            // As a static member's restart with a new subscription in a classic group.
            ClassicAgain::Replacing { stale: true } => {
                group.prepare_rebalance(cx, Trigger::MemberRestarted, Some(by))
            }
            ClassicAgain::Replacing { stale: false } => {}
        }
        group
    }
}
