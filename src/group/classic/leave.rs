//! LeaveGroup: a member that goes on its own (a close, or a poll timeout's leave), by member
//! id or, for a static member, by instance id alone; then one rebalance (GMM
//! `classicGroupLeaveToClassicGroup`, `removeCurrentMemberFromClassicGroup`). A member whose
//! session expires goes in `session.rs`.

use super::*;
use crate::log;
use crate::messages::{LeaveGroupRequest, LeaveGroupResponse, LeaveReason, LeftMember};

impl ClassicGroup {
    /// LeaveGroup v3+: each member of the batch is removed (by id, or by instance id alone),
    /// answered on its own, and then the group rebalances once.
    pub(in crate::group) fn leave_group(
        &mut self,
        cx: &mut Cx,
        req: LeaveGroupRequest,
    ) -> LeaveGroupResponse {
        if self.state == ClassicGroupState::Dead {
            return LeaveGroupResponse {
                error: ErrorCode::CoordinatorNotAvailable,
                members: Vec::new(),
            };
        }
        if !self.exists {
            return LeaveGroupResponse {
                error: ErrorCode::UnknownMemberId,
                members: Vec::new(),
            };
        }
        let mut answers = Vec::with_capacity(req.members.len());
        let mut trigger = None;
        for leaving in req.members {
            let instance = leaving.group_instance_id.as_deref();
            let error = if leaving.member_id.is_empty() {
                // Removal by instance id (an administrator's, or a static member's close).
                match instance.and_then(|i| self.static_members.get(i)).cloned() {
                    Some(id) => {
                        trigger.get_or_insert((leaving.reason, self.member_index(&id)));
                        self.remove_leaving_member(cx, &id, leaving.reason);
                        ErrorCode::None
                    }
                    None => ErrorCode::UnknownMemberId,
                }
            } else if self.pending_join.remove(&leaving.member_id).is_some() {
                cx.cancel_timer(CoordTimer::heartbeat(&leaving.member_id));
                log!(cx, "coordinator pending member {} left", leaving.member_id);
                ErrorCode::None
            } else {
                match self.validate_member(&leaving.member_id, instance) {
                    Ok(()) => {
                        trigger
                            .get_or_insert((leaving.reason, self.member_index(&leaving.member_id)));
                        self.remove_leaving_member(cx, &leaving.member_id, leaving.reason);
                        ErrorCode::None
                    }
                    Err(error) => error,
                }
            };
            answers.push(LeftMember {
                member_id: leaving.member_id,
                group_instance_id: leaving.group_instance_id,
                error,
            });
        }
        let any_left = answers.iter().any(|a| a.error == ErrorCode::None);
        if any_left {
            let (reason, who) = trigger.unwrap_or((LeaveReason::Close, None));
            let trigger = match reason {
                LeaveReason::Close => Trigger::MemberLeft,
                LeaveReason::PollTimeout => Trigger::PollTimeout,
            };
            match self.state {
                ClassicGroupState::Stable | ClassicGroupState::CompletingRebalance => {
                    self.maybe_prepare_rebalance_or_complete_join(cx, trigger, who)
                }
                ClassicGroupState::PreparingRebalance => self.maybe_complete_join(cx),
                ClassicGroupState::Empty | ClassicGroupState::Dead => {}
            }
        }
        LeaveGroupResponse {
            error: ErrorCode::None,
            members: answers,
        }
    }

    fn member_index(&self, member_id: &str) -> Option<usize> {
        self.members.get(member_id).map(|m| m.client.member)
    }

    /// `removeCurrentMemberFromClassicGroup`.
    fn remove_leaving_member(&mut self, cx: &mut Cx, member_id: &str, reason: LeaveReason) {
        log!(cx, "coordinator LeaveGroup {member_id} ({reason:?})");
        self.cancel_session(cx, member_id);
        self.answer_parked_join(cx, member_id);
        self.remove_from_group(cx, member_id);
    }
}
