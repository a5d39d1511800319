//! Heartbeats, session expiry and LeaveGroup: how members stay and how they go (GMM
//! `classicGroupHeartbeatToClassicGroup`, `expireClassicGroupMemberHeartbeat`,
//! `classicGroupLeaveToClassicGroup`).

use super::*;
use crate::group::messages::{LeaveReason, LeavingMember, LeftMember};
use crate::log;

impl Coordinator {
    pub(super) fn heartbeat(
        &mut self,
        cx: &mut Cx,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
    ) -> ErrorCode {
        if !self.exists {
            return ErrorCode::UnknownMemberId;
        }
        if let Err(error) = self.validate_member(member_id, instance) {
            return error;
        }
        if generation != self.generation {
            return ErrorCode::IllegalGeneration;
        }
        match self.state {
            GroupState::Empty => ErrorCode::UnknownMemberId,
            // The session is kept alive while the member is told to rejoin.
            GroupState::PreparingRebalance => {
                self.reschedule_session_default(cx, member_id);
                ErrorCode::RebalanceInProgress
            }
            // A member may heartbeat between its JoinGroup and SyncGroup answers.
            GroupState::CompletingRebalance | GroupState::Stable => {
                self.reschedule_session_default(cx, member_id);
                ErrorCode::None
            }
        }
    }

    pub(super) fn on_session_timer(&mut self, cx: &mut Cx, member_id: &str) {
        if self.pending_join.remove(member_id).is_some() {
            // A pending member that never came back; its going may complete the join phase,
            // even an initial one.
            log!(cx, "coordinator pending member {member_id} expired");
            self.remove_from_group(cx, member_id);
            if self.state == GroupState::PreparingRebalance && self.has_all_members_joined() {
                self.complete_join(cx);
            }
            return;
        }
        let Some(m) = self.members.get_mut(member_id) else {
            return;
        };
        let Some(session) = m.session.take() else {
            return;
        };
        if cx.now < session.deadline {
            // A heartbeat moved the deadline since this check was armed.
            m.session = Some(Session {
                deadline: session.deadline,
                check_at: session.deadline,
            });
            cx.set_timer(CoordTimer::heartbeat(member_id), session.deadline);
            return;
        }
        // A member with a JoinGroup or SyncGroup parked is alive: nothing, and no re-arm.
        if m.has_satisfied_heartbeat() {
            return;
        }
        log!(cx, "coordinator session of {member_id} expired");
        self.remove_member(cx, member_id, Trigger::MemberExpired);
    }

    /// A member's session expired (`removeMemberAndUpdateClassicGroup`): its parked JoinGroup
    /// is answered UNKNOWN_MEMBER_ID, and the group rebalances or completes its join phase.
    fn remove_member(&mut self, cx: &mut Cx, member_id: &str, trigger: Trigger) {
        let who = self.members.get(member_id).map(|m| m.client.member);
        self.answer_parked_join(cx, member_id);
        self.remove_from_group(cx, member_id);
        match self.state {
            GroupState::Stable | GroupState::CompletingRebalance => {
                self.maybe_prepare_rebalance_or_complete_join(cx, trigger, who)
            }
            GroupState::PreparingRebalance if self.has_all_members_joined() => {
                self.complete_join(cx)
            }
            _ => {}
        }
    }

    /// A member that goes with a JoinGroup parked gets UNKNOWN_MEMBER_ID, so a live process
    /// joins again.
    fn answer_parked_join(&mut self, cx: &mut Cx, member_id: &str) {
        if let Some(to) = self
            .members
            .get_mut(member_id)
            .and_then(|m| m.awaiting_join.take())
        {
            cx.respond(to, Response::join_error(ErrorCode::UnknownMemberId, ""));
        }
    }

    /// LeaveGroup v3+: each member of the batch is removed (by id, or by instance id alone),
    /// answered on its own, and then the group rebalances once.
    pub(super) fn leave_group(&mut self, cx: &mut Cx, members: Vec<LeavingMember>) -> Response {
        if !self.exists {
            return Response::LeaveGroup {
                error: ErrorCode::UnknownMemberId,
                members: Vec::new(),
            };
        }
        let mut answers = Vec::with_capacity(members.len());
        let mut trigger = None;
        for leaving in members {
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
                GroupState::Stable | GroupState::CompletingRebalance => {
                    self.maybe_prepare_rebalance_or_complete_join(cx, trigger, who)
                }
                GroupState::PreparingRebalance => self.maybe_complete_join(cx),
                GroupState::Empty => {}
            }
        }
        Response::LeaveGroup {
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
