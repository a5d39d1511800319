//! JoinGroup and the join phase: new and existing members, static replacement (KIP-345), the
//! initial rebalance delay, and completing the phase (GMM `classicGroupJoin*`,
//! `prepareRebalance`, `completeClassicGroupJoin`).

use super::*;
use crate::log;
use crate::messages::{JoinGroupRequest, JoinGroupResponse, JoinedMember};

/// A JoinGroup, once it is known which process sent it.
pub(in crate::group) struct Join {
    pub client: ClientRef,
    pub req: JoinGroupRequest,
}

impl Join {
    /// The rebalance this JoinGroup starts, if it starts one.
    fn trigger(&self) -> Trigger {
        match self.req.reason {
            JoinReason::Metadata => Trigger::MetadataChanged,
            JoinReason::Subscription => Trigger::SubscriptionChanged,
            JoinReason::FollowUp => Trigger::FollowUp,
            JoinReason::New | JoinReason::Rebalance => Trigger::MemberJoined,
        }
    }
}

/// JoinGroup v4+ makes a new dynamic member come back with the id it is given (KIP-394).
fn requires_known_member_id(version: i16) -> bool {
    version >= 4
}

/// JoinGroup v9+ carries `skip_assignment` (KIP-814).
fn supports_skipping_assignment(version: i16) -> bool {
    version >= 9
}

impl ClassicGroup {
    pub(in crate::group) fn join_group(&mut self, cx: &mut Cx, join: Join) {
        let member_id = join.req.member_id.clone();
        if self.state == ClassicGroupState::Dead {
            // Unloaded or deleted: the member is to find the coordinator again and rejoin.
            let member_id = if member_id.is_empty() { "" } else { &member_id };
            let error = ErrorCode::CoordinatorNotAvailable;
            cx.respond(join.client, JoinGroupResponse::error(error, member_id));
            return;
        }
        let is_unknown_member = member_id.is_empty();
        let is_new_group = !self.exists;
        if is_new_group {
            if !is_unknown_member {
                // No group for a member that names an id.
                cx.respond(
                    join.client,
                    JoinGroupResponse::error(ErrorCode::UnknownMemberId, &member_id),
                );
                return;
            }
            self.exists = true;
        }
        if !self.accepts_joining_member(&member_id) {
            self.remove_from_group(cx, &member_id);
            cx.respond(
                join.client,
                JoinGroupResponse::error(ErrorCode::GroupMaxSizeReached, ""),
            );
        } else if is_unknown_member {
            self.join_new_member(cx, join);
        } else {
            self.join_existing_member(cx, member_id, join);
        }
        if is_new_group && cx.records == 0 {
            // Creating the group is itself written, even for a MEMBER_ID_REQUIRED answer: an
            // empty record (`newEmptyGroupMetadataRecord`: generation 0, protocol type "", no
            // protocol, leader or members), so a coordinator that loads it has an Empty group.
            cx.record(GroupRecord::GroupMetadata(GroupMetadataRecord {
                protocol_type: Some(String::new()),
                generation: 0,
                protocol: None,
                leader: None,
                members: Vec::new(),
            }));
        }
    }

    /// `acceptJoiningMember`: the group's size limit.
    fn accepts_joining_member(&self, member_id: &str) -> bool {
        let max = self.config.max_size;
        match self.state {
            ClassicGroupState::Empty | ClassicGroupState::Dead => true,
            ClassicGroupState::PreparingRebalance => {
                self.members
                    .get(member_id)
                    .is_some_and(|m| m.awaiting_join.is_some())
                    || self
                        .members
                        .values()
                        .filter(|m| m.awaiting_join.is_some())
                        .count()
                        < max
            }
            ClassicGroupState::CompletingRebalance | ClassicGroupState::Stable => {
                self.members.contains_key(member_id) || self.members.len() < max
            }
        }
    }

    fn join_new_member(&mut self, cx: &mut Cx, join: Join) {
        if !self.supports_protocols(&join.req.protocol_type, &join.req.protocols) {
            log!(
                cx,
                "coordinator JoinGroup from {}: INCONSISTENT_GROUP_PROTOCOL",
                join.req.client_id
            );
            cx.respond(
                join.client,
                JoinGroupResponse::error(ErrorCode::InconsistentGroupProtocol, ""),
            );
            return;
        }
        match join.req.group_instance_id.clone() {
            Some(instance) => {
                let new_id = cx.ids.classic(&instance);
                match self.static_members.get(&instance).cloned() {
                    Some(old_id) => {
                        self.replace_static_member(cx, &instance, &old_id, new_id, join)
                    }
                    // Static members never get MEMBER_ID_REQUIRED.
                    None => self.add_member(cx, new_id, join),
                }
            }
            None => {
                let new_id = cx.ids.classic(&join.req.client_id);
                if requires_known_member_id(join.req.version) {
                    let deadline = cx.at(join.req.session_timeout_ms);
                    cx.set_timer(CoordTimer::heartbeat(&new_id), deadline);
                    self.pending_join.insert(new_id.clone(), deadline);
                    log!(
                        cx,
                        "coordinator JoinGroup: MEMBER_ID_REQUIRED, pending {new_id}"
                    );
                    cx.respond(
                        join.client,
                        JoinGroupResponse::error(ErrorCode::MemberIdRequired, &new_id),
                    );
                } else {
                    self.add_member(cx, new_id, join);
                }
            }
        }
    }

    fn join_existing_member(&mut self, cx: &mut Cx, member_id: String, join: Join) {
        if !self.supports_protocols(&join.req.protocol_type, &join.req.protocols) {
            cx.respond(
                join.client,
                JoinGroupResponse::error(ErrorCode::InconsistentGroupProtocol, &member_id),
            );
            return;
        }
        if self.pending_join.contains_key(&member_id) {
            // The member comes back with the id MEMBER_ID_REQUIRED gave it.
            self.add_member(cx, member_id, join);
            return;
        }
        if let Err(error) = self.validate_member(&member_id, join.req.group_instance_id.as_deref())
        {
            let mut response = JoinGroupResponse::error(error, &member_id);
            response.protocol_name = None;
            cx.respond(join.client, response);
            return;
        }
        let is_leader = self.leader.as_deref() == Some(member_id.as_str());
        let matches = self
            .members
            .get(&member_id)
            .is_some_and(|m| m.protocols == join.req.protocols);
        match self.state {
            ClassicGroupState::PreparingRebalance => {
                log!(cx, "coordinator JoinGroup: {member_id} rejoined");
                self.update_member_then_rebalance(cx, &member_id, join);
            }
            // The same metadata (a lost JoinGroup response, or a follower with nothing new):
            // the current generation back, no rebalance. A leader's JoinGroup in Stable always
            // rebalances (it may have seen metadata the members' cannot show).
            ClassicGroupState::CompletingRebalance if matches => {
                let response = self.join_response(&member_id, is_leader, false);
                self.members.get_mut(&member_id).expect("member").client = join.client;
                cx.respond(join.client, response);
            }
            ClassicGroupState::Stable if matches && !is_leader => {
                let response = self.join_response(&member_id, false, false);
                self.members.get_mut(&member_id).expect("member").client = join.client;
                cx.respond(join.client, response);
            }
            ClassicGroupState::CompletingRebalance | ClassicGroupState::Stable => {
                self.update_member_then_rebalance(cx, &member_id, join);
            }
            ClassicGroupState::Empty | ClassicGroupState::Dead => cx.respond(
                join.client,
                JoinGroupResponse::error(ErrorCode::UnknownMemberId, &member_id),
            ),
        }
    }

    /// `updateMember`: the member's new protocols and timeouts, its JoinGroup parked.
    fn update_member(&mut self, member_id: &str, join: &Join) {
        self.members
            .set_protocols(member_id, join.req.protocols.clone());
        let m = self.members.get_mut(member_id).expect("member");
        m.rebalance_timeout_ms = join.req.rebalance_timeout_ms;
        m.session_timeout_ms = join.req.session_timeout_ms;
        m.awaiting_join = Some(join.client);
        m.client = join.client;
    }

    fn update_member_then_rebalance(&mut self, cx: &mut Cx, member_id: &str, join: Join) {
        self.update_member(member_id, &join);
        let who = join.client.member;
        self.maybe_prepare_rebalance_or_complete_join(cx, join.trigger(), Some(who));
    }

    fn add_member(&mut self, cx: &mut Cx, member_id: String, join: Join) {
        // A member added during an initial rebalance delays it further.
        if self.state == ClassicGroupState::PreparingRebalance
            && self.previous_state == ClassicGroupState::Empty
        {
            self.new_member_added = true;
        }
        if let Some(instance) = &join.req.group_instance_id {
            self.static_members
                .insert(instance.clone(), member_id.clone());
        }
        if self.members.is_empty() {
            self.protocol_type = Some(join.req.protocol_type.clone());
        }
        if self.leader.is_none() {
            self.leader = Some(member_id.clone());
        }
        let client = join.client;
        self.members.insert(
            member_id.clone(),
            GroupMember {
                client,
                group_instance_id: join.req.group_instance_id,
                protocols: join.req.protocols,
                rebalance_timeout_ms: join.req.rebalance_timeout_ms,
                session_timeout_ms: join.req.session_timeout_ms,
                awaiting_join: Some(client),
                awaiting_sync: None,
                is_new: true,
                assignment: None,
                session: None,
            },
        );
        self.pending_join.remove(&member_id);
        // A new member cannot heartbeat while its JoinGroup is parked: it gets the fixed
        // new-member timeout instead of its session timeout.
        self.reschedule_session(cx, &member_id, NEW_MEMBER_JOIN_TIMEOUT_MS);
        cx.fact(Fact::MemberAdded {
            member: client.member,
            incarnation: client.incarnation,
            member_id: member_id.clone(),
        });
        log!(
            cx,
            "coordinator JoinGroup: added {member_id} ({})",
            self.state.name()
        );
        self.maybe_prepare_rebalance_or_complete_join(
            cx,
            Trigger::MemberJoined,
            Some(client.member),
        );
    }

    /// KIP-345: a static member's new process takes over its instance's member entry
    /// (`updateStaticMemberThenRebalanceOrCompleteJoin`).
    fn replace_static_member(
        &mut self,
        cx: &mut Cx,
        instance: &str,
        old_id: &str,
        new_id: String,
        join: Join,
    ) {
        let current_leader = self.leader.clone();
        let Some(mut member) = self.members.remove(old_id) else {
            self.add_member(cx, new_id, join);
            return;
        };
        // The old process is fenced at once if it has a JoinGroup or SyncGroup parked.
        if let Some(old) = member.awaiting_join.take() {
            let mut fenced = JoinGroupResponse::error(ErrorCode::FencedInstanceId, old_id);
            fenced.protocol_name = None;
            cx.respond(old, fenced);
        }
        if let Some(old) = member.awaiting_sync.take() {
            cx.respond(old, SyncGroupResponse::error(ErrorCode::FencedInstanceId));
        }
        // Kafka never cancels the old id's timer (it fires later and finds no member); the
        // model cancels it.
        if member.session.take().is_some() {
            cx.cancel_timer(CoordTimer::heartbeat(old_id));
        }
        member.is_new = false;
        // The old id stays in the last record until the next one is written (none is in a
        // rebalance): a coordinator that loads that record must know its process.
        cx.known_clients.insert(old_id.to_string(), member.client);
        member.client = join.client;
        self.members.insert(new_id.clone(), member);
        if self.leader.as_deref() == Some(old_id) {
            self.leader = Some(new_id.clone());
        }
        self.static_members
            .insert(instance.to_string(), new_id.clone());
        // The timer takes the old entry's session timeout: it is set before the update.
        self.reschedule_session_default(cx, &new_id);
        self.update_member(&new_id, &join);
        let client = join.client;
        cx.fact(Fact::MemberReplaced {
            member: client.member,
            member_id: new_id.clone(),
        });
        log!(
            cx,
            "coordinator static member {old_id} replaced by {new_id}"
        );
        match self.state {
            ClassicGroupState::Stable => {
                let next = self.select_protocol();
                if self.protocol_name.as_deref().unwrap_or("") == next.as_deref().unwrap_or("") {
                    // No rebalance: the replacement is written, and the member gets the current
                    // generation (and its stored assignment at SyncGroup).
                    self.write_group_metadata(cx);
                    let m = self.members.get_mut(&new_id).expect("inserted");
                    let response = if supports_skipping_assignment(join.req.version) {
                        m.awaiting_join = None;
                        // KIP-814: only a replaced leader is told to skip the assignment.
                        let is_leader = self.leader.as_deref() == Some(new_id.as_str());
                        self.join_response(&new_id, is_leader, is_leader)
                    } else {
                        // Answered directly, so the member still shows a parked JoinGroup,
                        // and the leader named is the one before the replacement.
                        JoinGroupResponse {
                            error: ErrorCode::None,
                            member_id: new_id.clone(),
                            generation: self.generation,
                            protocol_type: self.protocol_type.clone(),
                            protocol_name: self.protocol_name.clone(),
                            leader: current_leader.unwrap_or_default(),
                            members: Vec::new(),
                            skip_assignment: false,
                        }
                    };
                    cx.respond(client, response);
                } else {
                    self.maybe_prepare_rebalance_or_complete_join(
                        cx,
                        Trigger::MemberRestarted,
                        Some(client.member),
                    );
                }
            }
            // The leader may already have the old id in hand: assign again.
            ClassicGroupState::CompletingRebalance => {
                self.prepare_rebalance(cx, Trigger::MemberRestarted, Some(client.member))
            }
            ClassicGroupState::PreparingRebalance | ClassicGroupState::Empty => {
                self.maybe_complete_join(cx)
            }
            ClassicGroupState::Dead => unreachable!("a Dead group refuses JoinGroup first"),
        }
    }

    /// A JoinGroup answer for the current generation (the member list only for the leader).
    fn join_response(
        &self,
        member_id: &str,
        with_members: bool,
        skip_assignment: bool,
    ) -> JoinGroupResponse {
        let members = if with_members {
            self.current_members()
        } else {
            Vec::new()
        };
        JoinGroupResponse {
            error: ErrorCode::None,
            member_id: member_id.to_string(),
            generation: self.generation,
            protocol_type: self.protocol_type.clone(),
            protocol_name: self.protocol_name.clone(),
            leader: self.leader.clone().unwrap_or_default(),
            members,
            skip_assignment,
        }
    }

    /// Every member with its metadata for the selected protocol, in map order
    /// (`currentClassicGroupMembers`).
    fn current_members(&self) -> Vec<JoinedMember> {
        let protocol = self.protocol_name.as_deref().unwrap_or("");
        self.members
            .iter()
            .map(|(id, m)| JoinedMember {
                member_id: id.clone(),
                group_instance_id: m.group_instance_id.clone(),
                subscription: m.metadata(protocol).cloned().unwrap_or_else(|| {
                    // Unreachable in Kafka: the selected protocol is one every member lists.
                    m.protocols[0].metadata.clone()
                }),
            })
            .collect()
    }

    // ---- The join phase ----

    /// `maybePrepareRebalanceOrCompleteJoin`.
    pub(super) fn maybe_prepare_rebalance_or_complete_join(
        &mut self,
        cx: &mut Cx,
        trigger: Trigger,
        member: Option<usize>,
    ) {
        if self.state == ClassicGroupState::PreparingRebalance {
            self.maybe_complete_join(cx);
        } else {
            self.prepare_rebalance(cx, trigger, member);
        }
    }

    pub(super) fn prepare_rebalance(
        &mut self,
        cx: &mut Cx,
        trigger: Trigger,
        member: Option<usize>,
    ) {
        if self.state == ClassicGroupState::CompletingRebalance {
            // Parked SyncGroups are answered REBALANCE_IN_PROGRESS; every stored assignment
            // is reset.
            for m in self.members.values_mut() {
                m.assignment = None;
            }
            self.propagate_assignment(cx, ErrorCode::RebalanceInProgress);
        }
        self.remove_sync_expiration(cx);
        let initial = self.state == ClassicGroupState::Empty;
        let previous = self.state;
        let timeout = self.rebalance_timeout_ms();
        let delay_ms = if initial {
            // A new group: more time for members to join. `remaining` is what the rebalance
            // timeout leaves after the first delay.
            let delay_ms = self.config.initial_rebalance_delay_ms;
            let remaining_ms = timeout.saturating_sub(delay_ms);
            self.arm_join_timer(
                cx,
                delay_ms,
                JoinTimer::Initial {
                    delay_ms,
                    remaining_ms,
                },
            );
            delay_ms
        } else {
            timeout
        };
        self.transition(ClassicGroupState::PreparingRebalance);
        if !self.members.is_empty() {
            cx.fact(Fact::RebalanceStarted {
                generation: self.generation + 1,
                trigger,
                member,
            });
        }
        log!(
            cx,
            "coordinator {} -> PreparingRebalance (trigger {}, join timer {} ms)",
            previous.name(),
            trigger.name(),
            delay_ms
        );
        if !initial {
            if self.has_all_members_joined() {
                self.complete_join(cx);
            } else {
                self.arm_join_timer(cx, timeout, JoinTimer::Complete);
            }
        }
    }

    fn arm_join_timer(&mut self, cx: &mut Cx, after_ms: u64, operation: JoinTimer) {
        let at = cx.at(after_ms);
        self.join_timer = Some((at, operation));
        cx.set_timer(CoordTimer::Join, at);
    }

    /// `maybeCompleteJoinPhase`: everyone has joined, outside an initial rebalance.
    pub(super) fn maybe_complete_join(&mut self, cx: &mut Cx) {
        if self.state == ClassicGroupState::PreparingRebalance
            && self.previous_state != ClassicGroupState::Empty
            && self.has_all_members_joined()
        {
            self.complete_join(cx);
        }
    }

    pub(super) fn on_join_timer(&mut self, cx: &mut Cx, operation: JoinTimer) {
        match operation {
            JoinTimer::Initial {
                delay_ms,
                remaining_ms,
            } if self.new_member_added && remaining_ms != 0 => {
                // Someone joined during the delay: wait again, within the rebalance timeout.
                self.new_member_added = false;
                let next_delay = self.config.initial_rebalance_delay_ms.min(remaining_ms);
                let next_remaining = remaining_ms.saturating_sub(delay_ms);
                log!(cx, "coordinator initial delay extended by {next_delay} ms");
                self.arm_join_timer(
                    cx,
                    next_delay,
                    JoinTimer::Initial {
                        delay_ms: next_delay,
                        remaining_ms: next_remaining,
                    },
                );
            }
            JoinTimer::Initial { .. } | JoinTimer::Complete => self.complete_join(cx),
        }
    }

    /// `completeClassicGroupJoin`: dynamic members that did not rejoin are removed, and the next
    /// generation starts (CompletingRebalance, or Empty with no members left).
    pub(super) fn complete_join(&mut self, cx: &mut Cx) {
        if self.join_timer.take().is_some() {
            cx.cancel_timer(CoordTimer::Join);
        }
        let late: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| m.awaiting_join.is_none() && m.group_instance_id.is_none())
            .map(|(id, _)| id.clone())
            .collect();
        for id in late {
            log!(
                cx,
                "coordinator removing {id}: did not rejoin within the rebalance timeout"
            );
            self.cancel_session(cx, &id);
            self.remove_from_group(cx, &id);
        }
        if !self.members.is_empty() && !self.elect_joined_leader() {
            // Only static members that did not rejoin are left: wait another rebalance
            // timeout for them.
            let timeout = self.rebalance_timeout_ms();
            self.arm_join_timer(cx, timeout, JoinTimer::Complete);
            return;
        }
        self.generation += 1;
        self.pending_sync.clear();
        if self.members.is_empty() {
            self.protocol_name = None;
            self.transition(ClassicGroupState::Empty);
            log!(
                cx,
                "coordinator join phase complete: no members, Empty (generation {})",
                self.generation
            );
            self.write_group_metadata(cx);
            cx.fact(Fact::GroupEmpty);
            return;
        }
        self.protocol_name = self.select_protocol();
        self.transition(ClassicGroupState::CompletingRebalance);
        let ids: Vec<String> = self.members.keys().cloned().collect();
        let leader = self.leader.clone().unwrap_or_default();
        for id in &ids {
            let response = self.join_response(id, *id == leader, false);
            let m = self.members.get_mut(id).expect("member");
            if let Some(to) = m.awaiting_join.take() {
                cx.respond(to, response);
            } else {
                // A static member that did not rejoin (a dynamic one was removed above).
                cx.fact(Fact::MissedRejoin {
                    member: m.client.member,
                    member_id: id.clone(),
                    generation: self.generation,
                });
            }
            m.is_new = false;
            self.reschedule_session_default(cx, id);
            self.pending_sync.insert(id.clone());
        }
        let at = cx.at(self.rebalance_timeout_ms());
        self.sync_timer = Some((at, self.generation));
        cx.set_timer(CoordTimer::Sync, at);
        cx.fact(Fact::JoinCompleted {
            generation: self.generation,
            assignor: self.protocol_name.clone().unwrap_or_default(),
        });
        log!(
            cx,
            "coordinator join complete: generation {} protocol {} leader {} members {}",
            self.generation,
            self.protocol_name.as_deref().unwrap_or("-"),
            leader,
            ids.len()
        );
    }

    /// `maybeElectNewJoinedLeader`: a leader that did not rejoin hands over to the first member,
    /// in map order, that did; false if none did.
    fn elect_joined_leader(&mut self) -> bool {
        let Some(leader) = self.leader.clone() else {
            return false;
        };
        if self
            .members
            .get(&leader)
            .is_some_and(|m| m.awaiting_join.is_some())
        {
            return true;
        }
        match self
            .members
            .iter()
            .find(|(_, m)| m.awaiting_join.is_some())
            .map(|(id, _)| id.clone())
        {
            Some(id) => {
                self.leader = Some(id);
                true
            }
            None => false,
        }
    }
}
