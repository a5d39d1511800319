//! Classic-protocol members inside a consumer group: the coordinator's bridge, as Kafka 4.3's
//! `GroupMetadataManager` answers a classic member's JoinGroup, SyncGroup, Heartbeat and
//! LeaveGroup from the consumer group's state (`classicGroupJoinToConsumerGroup` and its
//! siblings). The member is a consumer-group member like any other (the target assignment and
//! the reconciliation are the same); what differs is how it learns of them:
//!
//! - its JoinGroup is a full heartbeat: it is reconciled at once against what its subscription
//!   says it owns, and answered at once with its member epoch as the generation (no leader, no
//!   member list: it never runs an assignor);
//! - its SyncGroup is answered with its current assignment (what it may own now; partitions it
//!   must revoke are left out, so a cooperative member revokes them and rejoins);
//! - its Heartbeat answers REBALANCE_IN_PROGRESS while it has something to catch up (a newer
//!   group epoch, partitions to revoke, or freed partitions to collect);
//! - join and sync timers (its rebalance timeout) fence a member that does not come back.

use super::*;

/// A classic member's JoinGroup, as the bridge reads it (partitions already in the group's
/// terms; an unknown member already given its new id).
#[derive(Clone, Debug)]
pub struct ClassicJoin {
    pub member_id: String,
    /// It came without a member id (a new process).
    pub is_unknown: bool,
    pub instance_id: Option<String>,
    pub protocols: Vec<JoinProtocol>,
    /// The subscription its first protocol carries (all carry the same).
    pub topics: Vec<String>,
    pub owned: Partitions,
    pub rebalance_timeout_ms: i32,
    pub session_timeout_ms: u64,
}

/// The JoinGroup answer: the member id, the generation (its member epoch) and the protocol
/// name (its first protocol).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicJoinAnswer {
    pub member_id: String,
    pub generation: i32,
    pub protocol_name: String,
}

impl ConsumerGroup {
    /// `supportsClassicProtocols`: a classic member must share a protocol with every classic
    /// member already in the group.
    fn supports_classic_protocols(&self, joining: &ClassicJoin) -> bool {
        let classic: Vec<&ClassicMember> = self
            .members
            .values()
            .filter(|m| m.member_id != joining.member_id)
            .filter_map(|m| m.classic.as_ref())
            .collect();
        joining.protocols.iter().any(|p| {
            classic
                .iter()
                .all(|c| c.protocols.iter().any(|q| q.name == p.name))
        })
    }

    /// `validateConsumerGroupMember` and `throwIfMemberDoesNotUseClassicProtocol`: the member
    /// by its instance (FENCED_INSTANCE_ID if another id holds it) or by its id, speaking the
    /// classic protocol (UNKNOWN_MEMBER_ID otherwise).
    fn classic_member(
        &self,
        member_id: &str,
        instance_id: Option<&str>,
    ) -> Result<&ConsumerMember, ErrorCode> {
        let member = match instance_id {
            Some(instance) => {
                let m = self
                    .static_member(instance)
                    .ok_or(ErrorCode::UnknownMemberId)?;
                if m.member_id != member_id {
                    return Err(ErrorCode::FencedInstanceId);
                }
                m
            }
            None => self
                .members
                .get(member_id)
                .ok_or(ErrorCode::UnknownMemberId)?,
        };
        if member.classic.is_none() {
            return Err(ErrorCode::UnknownMemberId);
        }
        Ok(member)
    }

    /// A classic member's JoinGroup (`classicGroupJoinToConsumerGroup`), answered at once.
    pub fn classic_join(
        &mut self,
        now: SimTime,
        join: &ClassicJoin,
        out: &mut Out<GroupEffect>,
    ) -> Result<ClassicJoinAnswer, ErrorCode> {
        let mut cx = Cx { now, out };
        if join.protocols.is_empty() || !self.supports_classic_protocols(join) {
            return Err(ErrorCode::InconsistentGroupProtocol);
        }
        // Step 4 of `classicGroupJoinToConsumerGroup`, read before the takeover: the
        // instance's holder, if it is the last consumer-protocol member, leaves a group of
        // classic members, which goes back to the classic protocol.
        let downgrade = join
            .instance_id
            .as_deref()
            .and_then(|instance| self.static_member(instance))
            .is_some_and(|holder| self.all_classic_except(&holder.member_id))
            && self.config.migration_policy.downgrade_enabled();
        let member = self.classic_join_member(&mut cx, join)?;
        let is_new = !self.members.contains_key(&member.member_id);
        let mut updated = member.clone();
        updated.instance_id.clone_from(&join.instance_id);
        if join.rebalance_timeout_ms != -1 {
            updated.rebalance_timeout_ms = join.rebalance_timeout_ms;
        }
        updated.server_assignor = None;
        updated.subscribed_topic_names.clone_from(&join.topics);
        updated.classic = Some(ClassicMember {
            session_timeout_ms: join.session_timeout_ms,
            protocols: join.protocols.clone(),
        });
        let reconciled =
            self.update_and_reconcile(&mut cx, &member, updated, is_new, Some(&join.owned), false);
        let id = reconciled.member_id.clone();
        // The join timer is done; the session and sync timers start.
        self.classic_join_armed.remove(&id);
        cx.out
            .push(GroupEffect::CancelTimer(ConsumerGroupTimer::ClassicJoin {
                member_id: id.clone(),
            }));
        if downgrade {
            // The classic group watches the member from now on: no consumer-group session or
            // sync timer. A target older than the group epoch (the join changed the
            // subscription and the assignment waits for its interval) is stale: the classic
            // group rebalances (KAFKA-20273).
            cx.out.push(GroupEffect::ConvertToClassicReplacing {
                joining: id.clone(),
                stale: self.assignment_epoch < self.group_epoch,
            });
        } else {
            self.schedule_session(&mut cx, &id);
            let sync_at =
                now + Duration::from_millis(reconciled.rebalance_timeout_ms.max(0) as u64);
            cx.out.push(GroupEffect::SetTimer {
                timer: ConsumerGroupTimer::ClassicSync {
                    member_id: id.clone(),
                },
                at: sync_at,
            });
        }
        Ok(ClassicJoinAnswer {
            member_id: id,
            generation: reconciled.member_epoch,
            protocol_name: join.protocols[0].name.clone(),
        })
    }

    /// The member a classic JoinGroup is for: a static member's new process takes its
    /// instance over (whatever protocol either speaks: only two consumer-protocol processes
    /// are refused UNRELEASED_INSTANCE_ID), a member id is found or a new member.
    fn classic_join_member(
        &mut self,
        cx: &mut Cx,
        join: &ClassicJoin,
    ) -> Result<ConsumerMember, ErrorCode> {
        if let Some(instance) = &join.instance_id {
            let holder = self.static_member(instance).cloned();
            if let Some(old) = holder.filter(|old| old.member_id != join.member_id) {
                if !join.is_unknown {
                    return Err(ErrorCode::FencedInstanceId);
                }
                let was_classic = old.classic.is_some();
                let member = self.replace_static(cx, old.clone(), &join.member_id);
                if was_classic {
                    self.cancel_classic_timers(cx, &old.member_id);
                }
                return Ok(member);
            }
        }
        // `getOrMaybeSubscribeDynamicConsumerGroupMember` with createIfNotExists: any id not
        // in the group is a new member (the id MEMBER_ID_REQUIRED handed out included).
        match self.members.get(&join.member_id) {
            Some(m) if m.classic.is_none() => Err(ErrorCode::UnknownMemberId),
            Some(m) => Ok(m.clone()),
            None => Ok(ConsumerMember::new(join.member_id.clone())),
        }
    }

    /// A classic member's SyncGroup (`classicGroupSyncToConsumerGroup`): its current
    /// assignment, if its generation is its member epoch and no newer rebalance wants it back.
    pub fn classic_sync(
        &mut self,
        now: SimTime,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
        protocol_name: Option<&str>,
        out: &mut Out<GroupEffect>,
    ) -> Result<Partitions, ErrorCode> {
        let mut cx = Cx { now, out };
        let member = self.classic_member(member_id, instance_id)?;
        if generation != member.member_epoch {
            return Err(ErrorCode::IllegalGeneration);
        }
        let first = member
            .classic
            .as_ref()
            .and_then(|c| c.protocols.first())
            .map(|p| p.name.as_str());
        if protocol_name.is_some() && protocol_name != first {
            return Err(ErrorCode::InconsistentGroupProtocol);
        }
        // `throwIfRebalanceInProgress`: a newer group epoch, unless the member is still
        // revoking (its next rejoin comes once it has).
        if self.group_epoch > member.member_epoch
            && member.state != MemberState::UnrevokedPartitions
        {
            let (id, timeout) = (member.member_id.clone(), member.rebalance_timeout_ms);
            self.arm_classic_join(&mut cx, &id, timeout);
            return Err(ErrorCode::RebalanceInProgress);
        }
        let assigned = member.assigned_partitions();
        let id = member.member_id.clone();
        cx.out
            .push(GroupEffect::CancelTimer(ConsumerGroupTimer::ClassicSync {
                member_id: id.clone(),
            }));
        self.schedule_session(&mut cx, &id);
        Ok(assigned)
    }

    /// A classic member's Heartbeat (`classicGroupHeartbeatToConsumerGroup`).
    pub fn classic_heartbeat(
        &mut self,
        now: SimTime,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
        out: &mut Out<GroupEffect>,
    ) -> ErrorCode {
        let mut cx = Cx { now, out };
        let member = match self.classic_member(member_id, instance_id) {
            Ok(m) => m,
            Err(e) => return e,
        };
        if generation != member.member_epoch {
            return ErrorCode::IllegalGeneration;
        }
        let (id, timeout) = (member.member_id.clone(), member.rebalance_timeout_ms);
        // It must rejoin to catch up with a newer group epoch, to revoke, or to collect
        // partitions that are free now.
        let rejoin = member.member_epoch < self.group_epoch
            || member.state == MemberState::UnrevokedPartitions
            || (member.state == MemberState::UnreleasedPartitions
                && !self.waiting_on_unreleased_partition(member));
        self.schedule_session(&mut cx, &id);
        if rejoin {
            self.arm_classic_join(&mut cx, &id, timeout);
            return ErrorCode::RebalanceInProgress;
        }
        ErrorCode::None
    }

    /// A classic member's LeaveGroup (`classicGroupLeaveToConsumerGroup`): it is removed and
    /// the group epoch bumped.
    pub fn classic_leave(
        &mut self,
        now: SimTime,
        member_id: &str,
        instance_id: Option<&str>,
        out: &mut Out<GroupEffect>,
    ) -> Result<String, ErrorCode> {
        let mut cx = Cx { now, out };
        let id = match instance_id {
            // An administrative removal names the instance alone.
            Some(_) if member_id.is_empty() => {
                let instance = instance_id.unwrap_or_default();
                self.static_member(instance)
                    .filter(|m| m.classic.is_some())
                    .map(|m| m.member_id.clone())
                    .ok_or(ErrorCode::UnknownMemberId)?
            }
            _ => self
                .classic_member(member_id, instance_id)?
                .member_id
                .clone(),
        };
        self.fence(&mut cx, &id, EpochCause::MemberLeft);
        Ok(id)
    }

    /// `waitingOnUnreleasedPartition`: a partition of its target is still held by another
    /// member.
    fn waiting_on_unreleased_partition(&self, member: &ConsumerMember) -> bool {
        self.target_of(&member.member_id).iter().any(|tp| {
            !member.assigned.contains_key(tp)
                && self
                    .members
                    .values()
                    .any(|m| m.member_id != member.member_id && m.holds(tp))
        })
    }

    /// `scheduleConsumerGroupJoinTimeoutIfAbsent`.
    fn arm_classic_join(&mut self, cx: &mut Cx, member_id: &str, rebalance_timeout_ms: i32) {
        if !self.classic_join_armed.insert(member_id.to_string()) {
            return;
        }
        let at = cx.now + Duration::from_millis(rebalance_timeout_ms.max(0) as u64);
        cx.out.push(GroupEffect::SetTimer {
            timer: ConsumerGroupTimer::ClassicJoin {
                member_id: member_id.to_string(),
            },
            at,
        });
    }
}
