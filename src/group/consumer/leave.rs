//! A member leaves the KIP-848 group: its heartbeat with epoch -1 (a leave: removed, the group
//! epoch bumped) or -2 (a static member's temporary leave: it keeps its assignment until it
//! comes back or its session ends), or it is fenced: its session expires, it misses its
//! rebalance timeout at the epoch the timer was armed at, or, as a classic member inside the
//! group, its JoinGroup or SyncGroup (`GroupMetadataManager.consumerGroupHeartbeat`'s leave path,
//! `consumerGroupFenceMember`, `scheduleConsumerGroupRebalanceTimeout`). Removing the last
//! consumer-protocol member of classic ones converts the group back (online downgrade).

use super::*;

impl ConsumerGroup {
    /// Epoch -1 (leave) or -2 (a static member's temporary leave).
    pub(super) fn leave(
        &mut self,
        cx: &mut Cx,
        request: &ConsumerHeartbeat,
    ) -> ConsumerHeartbeatResponse {
        let id = request.member_id.clone();
        let Some(member) = self.members.get(&id).cloned() else {
            return ConsumerHeartbeatResponse::error(
                ErrorCode::UnknownMemberId,
                format!("Member {id} is not a member of group."),
            );
        };
        let epoch = if request.member_epoch == STATIC_LEAVE_EPOCH && member.instance_id.is_some() {
            // `consumerGroupStaticMemberGroupLeave`: it keeps its assigned partitions (at
            // epoch 0, so they count as its new process's from the start) until it comes back
            // or its session ends. Only its epoch changes (`setMemberEpoch`: the previous epoch
            // stays), and what it was revoking is dropped: the process has stopped, so those
            // partitions are free at once for the members waiting for them.
            let mut left = member;
            left.member_epoch = STATIC_LEAVE_EPOCH;
            left.pending_revocation.clear();
            for e in left.assigned.values_mut() {
                *e = 0;
            }
            cx.record(ConsumerGroupRecord::CurrentMemberAssignment {
                member_id: id.clone(),
                tombstone: false,
            });
            self.members.insert(id.clone(), left);
            STATIC_LEAVE_EPOCH
        } else {
            self.fence(cx, &id, EpochCause::MemberLeft);
            LEAVE_EPOCH
        };
        ConsumerHeartbeatResponse {
            error: ErrorCode::None,
            error_message: None,
            member_id: Some(id),
            member_epoch: epoch,
            heartbeat_interval_ms: 0,
            assignment: None,
        }
    }

    /// A timer fired.
    pub fn on_timer(
        &mut self,
        now: SimTime,
        timer: &ConsumerGroupTimer,
        out: &mut Out<GroupEffect>,
    ) {
        let mut cx = Cx { now, out };
        match timer {
            ConsumerGroupTimer::Session { member_id } => {
                if self.members.contains_key(member_id) {
                    self.fence(&mut cx, member_id, EpochCause::MemberFenced);
                    cx.out.push(GroupEffect::Fenced {
                        member_id: member_id.clone(),
                    });
                }
            }
            // It fences the member only if it is still at the epoch the timer was armed at
            // (GMM `scheduleConsumerGroupRebalanceTimeout`): not one that has moved on, nor a
            // static member away at epoch -2, whose session timer decides.
            ConsumerGroupTimer::Rebalance { member_id } => {
                let armed_at = self.rebalance_armed_at.remove(member_id);
                let stuck = self
                    .members
                    .get(member_id)
                    .is_some_and(|m| armed_at == Some(m.member_epoch));
                if stuck {
                    self.fence(&mut cx, member_id, EpochCause::MemberFenced);
                    cx.out.push(GroupEffect::Fenced {
                        member_id: member_id.clone(),
                    });
                }
            }
            // `consumerGroupFenceMemberOperation`: the classic member failed to join, or to
            // sync, within its rebalance timeout.
            ConsumerGroupTimer::ClassicJoin { member_id }
            | ConsumerGroupTimer::ClassicSync { member_id } => {
                if matches!(timer, ConsumerGroupTimer::ClassicJoin { .. }) {
                    self.classic_join_armed.remove(member_id);
                }
                if self.members.contains_key(member_id) {
                    self.fence(&mut cx, member_id, EpochCause::MemberFenced);
                    cx.out.push(GroupEffect::Fenced {
                        member_id: member_id.clone(),
                    });
                }
            }
        }
    }

    /// `validateOnlineDowngradeWithFencedMembers`: removing `member_id`, a consumer-protocol
    /// member, leaves a non-empty group of classic members only, and the policy allows it.
    pub(super) fn downgrades_without(&self, member_id: &str) -> bool {
        self.members.len() > 1
            && self.all_classic_except(member_id)
            && self.config.migration_policy.downgrade_enabled()
    }

    pub(super) fn cancel_classic_timers(&mut self, cx: &mut Cx, member_id: &str) {
        self.classic_join_armed.remove(member_id);
        for timer in [
            ConsumerGroupTimer::ClassicJoin {
                member_id: member_id.to_string(),
            },
            ConsumerGroupTimer::ClassicSync {
                member_id: member_id.to_string(),
            },
        ] {
            cx.out.push(GroupEffect::CancelTimer(timer));
        }
    }

    /// Removes a member and bumps the group epoch (a leave or a fence).
    pub(super) fn fence(&mut self, cx: &mut Cx, member_id: &str, cause: EpochCause) {
        let downgrade = self.downgrades_without(member_id);
        let was_classic = self
            .members
            .get(member_id)
            .is_some_and(|m| m.classic.is_some());
        self.remove_member(cx, member_id);
        self.target.remove(member_id);
        self.rebalance_armed_at.remove(member_id);
        cx.out
            .push(GroupEffect::CancelTimer(ConsumerGroupTimer::Session {
                member_id: member_id.to_string(),
            }));
        cx.out
            .push(GroupEffect::CancelTimer(ConsumerGroupTimer::Rebalance {
                member_id: member_id.to_string(),
            }));
        if was_classic {
            self.cancel_classic_timers(cx, member_id);
        }
        if downgrade {
            cx.out.push(GroupEffect::Removed {
                member_id: member_id.to_string(),
            });
            cx.out.push(GroupEffect::ConvertToClassic {
                leaving: member_id.to_string(),
            });
            return;
        }
        // The epoch record carries the metadata hash recomputed without the departed member
        // (`consumerGroupFenceMembers`: `computeSubscribedTopicNamesWithoutDeletedMembers`), so
        // a later change to a topic only it subscribed to bumps nothing.
        self.metadata_seen = self.subscribed_metadata();
        self.bump_epoch(cx, cause, Some(member_id));
        cx.out.push(GroupEffect::Removed {
            member_id: member_id.to_string(),
        });
    }

    /// The tombstones of a member's records, and the member gone.
    pub(super) fn remove_member(&mut self, cx: &mut Cx, member_id: &str) {
        for record in [
            ConsumerGroupRecord::CurrentMemberAssignment {
                member_id: member_id.to_string(),
                tombstone: true,
            },
            ConsumerGroupRecord::TargetAssignmentMember {
                member_id: member_id.to_string(),
                tombstone: true,
            },
            ConsumerGroupRecord::MemberMetadata {
                member_id: member_id.to_string(),
                tombstone: true,
            },
        ] {
            cx.record(record);
        }
        self.members.remove(member_id);
    }
}
