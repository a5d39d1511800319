//! Heartbeats and session expiry: how members stay, and how a silent one goes (GMM
//! `classicGroupHeartbeatToClassicGroup`, `expireClassicGroupMemberHeartbeat`).

use super::*;
use crate::log;
use crate::messages::HeartbeatRequest;

impl ClassicGroup {
    pub(in crate::group) fn heartbeat(&mut self, cx: &mut Cx, req: &HeartbeatRequest) -> ErrorCode {
        let member_id = req.member_id.as_str();
        let instance = req.group_instance_id.as_deref();
        let generation = req.generation;
        if self.state == ClassicGroupState::Dead {
            return ErrorCode::CoordinatorNotAvailable;
        }
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
            ClassicGroupState::Empty => ErrorCode::UnknownMemberId,
            ClassicGroupState::Dead => unreachable!("answered above"),
            // The session is kept alive while the member is told to rejoin.
            ClassicGroupState::PreparingRebalance => {
                self.reschedule_session_default(cx, member_id);
                ErrorCode::RebalanceInProgress
            }
            // A member may heartbeat between its JoinGroup and SyncGroup answers.
            ClassicGroupState::CompletingRebalance | ClassicGroupState::Stable => {
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
            if self.state == ClassicGroupState::PreparingRebalance && self.has_all_members_joined()
            {
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
            ClassicGroupState::Stable | ClassicGroupState::CompletingRebalance => {
                self.maybe_prepare_rebalance_or_complete_join(cx, trigger, who)
            }
            ClassicGroupState::PreparingRebalance if self.has_all_members_joined() => {
                self.complete_join(cx)
            }
            _ => {}
        }
    }

    /// A member that goes with a JoinGroup parked gets UNKNOWN_MEMBER_ID, so a live process
    /// joins again.
    pub(super) fn answer_parked_join(&mut self, cx: &mut Cx, member_id: &str) {
        if let Some(to) = self
            .members
            .get_mut(member_id)
            .and_then(|m| m.awaiting_join.take())
        {
            cx.respond(to, JoinGroupResponse::error(ErrorCode::UnknownMemberId, ""));
        }
    }
}
