//! SyncGroup: the leader's assignment stored and propagated to the parked members, the stored
//! assignment in Stable, and the sync timer (GMM `classicGroupSyncToClassicGroup`,
//! `propagateAssignment`, `expirePendingSync`).

use super::*;
use crate::log;
use crate::messages::{SyncGroupRequest, SyncGroupResponse};

/// A SyncGroup, once it is known which process sent it.
pub(in crate::group) struct Sync {
    pub client: ClientRef,
    pub req: SyncGroupRequest,
}

/// A SyncGroup's protocol type or name differs from the group's (both given).
fn inconsistent(requested: Option<&str>, group: Option<&str>) -> bool {
    matches!((requested, group), (Some(r), Some(g)) if r != g)
}

impl ClassicGroup {
    fn validate_sync(&self, sync: &Sync) -> Result<(), ErrorCode> {
        if self.state == ClassicGroupState::Dead {
            return Err(ErrorCode::CoordinatorNotAvailable);
        }
        if !self.exists || self.state == ClassicGroupState::Empty {
            return Err(ErrorCode::UnknownMemberId);
        }
        self.validate_member(&sync.req.member_id, sync.req.group_instance_id.as_deref())?;
        if sync.req.generation != self.generation {
            return Err(ErrorCode::IllegalGeneration);
        }
        if inconsistent(
            sync.req.protocol_type.as_deref(),
            self.protocol_type.as_deref(),
        ) || inconsistent(
            sync.req.protocol_name.as_deref(),
            self.protocol_name.as_deref(),
        ) {
            return Err(ErrorCode::InconsistentGroupProtocol);
        }
        Ok(())
    }

    pub(in crate::group) fn sync_group(&mut self, cx: &mut Cx, sync: Sync) {
        if let Err(error) = self.validate_sync(&sync) {
            cx.respond(sync.client, SyncGroupResponse::error(error));
            return;
        }
        let member_id = sync.req.member_id.as_str();
        self.members.get_mut(member_id).expect("member").client = sync.client;
        match self.state {
            ClassicGroupState::PreparingRebalance => {
                cx.respond(
                    sync.client,
                    SyncGroupResponse::error(ErrorCode::RebalanceInProgress),
                );
            }
            ClassicGroupState::CompletingRebalance => {
                self.members
                    .get_mut(member_id)
                    .expect("member")
                    .awaiting_sync = Some(sync.client);
                self.remove_pending_sync_member(cx, member_id);
                if self.leader.as_deref() == Some(member_id) {
                    // The leader's assignment is written; then every parked member gets its
                    // share (members it left out get empty bytes) and the group is Stable.
                    let mut given: BTreeMap<String, Vec<usize>> = BTreeMap::new();
                    for (id, parts) in sync.req.assignments.unwrap_or_default() {
                        given.insert(id, parts);
                    }
                    let ids: Vec<String> = self.members.keys().cloned().collect();
                    for id in &ids {
                        self.members.get_mut(id).expect("member").assignment = given.remove(id);
                    }
                    self.write_group_metadata(cx);
                    self.propagate_assignment(cx, ErrorCode::None);
                    self.transition(ClassicGroupState::Stable);
                    cx.fact(Fact::GroupStable {
                        generation: self.generation,
                    });
                    log!(
                        cx,
                        "coordinator leader's SyncGroup: Stable (generation {})",
                        self.generation
                    );
                }
            }
            ClassicGroupState::Stable => {
                // The stored assignment, at once (the session timer is not reset).
                self.remove_pending_sync_member(cx, member_id);
                let m = self.members.get(member_id).expect("member");
                let response = SyncGroupResponse {
                    error: ErrorCode::None,
                    protocol_type: self.protocol_type.clone(),
                    protocol_name: self.protocol_name.clone(),
                    assignment: m.assignment.clone(),
                };
                cx.respond(sync.client, response);
            }
            ClassicGroupState::Empty | ClassicGroupState::Dead => {
                unreachable!("validated: an Empty group answers UNKNOWN_MEMBER_ID, a Dead one COORDINATOR_NOT_AVAILABLE")
            }
        }
    }

    /// Every parked SyncGroup is answered with `error` (and, without one, the member's stored
    /// assignment), and each member answered gets a fresh session timer: its session may have
    /// passed while it waited (`propagateAssignment`).
    pub(super) fn propagate_assignment(&mut self, cx: &mut Cx, error: ErrorCode) {
        let (protocol_type, protocol_name) = if error == ErrorCode::None {
            (self.protocol_type.clone(), self.protocol_name.clone())
        } else {
            (None, None)
        };
        let ids: Vec<String> = self.members.keys().cloned().collect();
        for id in &ids {
            let m = self.members.get_mut(id).expect("member");
            let Some(to) = m.awaiting_sync.take() else {
                continue;
            };
            let response = SyncGroupResponse {
                error,
                protocol_type: protocol_type.clone(),
                protocol_name: protocol_name.clone(),
                assignment: m.assignment.clone(),
            };
            cx.respond(to, response);
            self.reschedule_session_default(cx, id);
        }
    }

    /// The member has sent SyncGroup for this generation; the sync timer goes once everyone has.
    fn remove_pending_sync_member(&mut self, cx: &mut Cx, member_id: &str) {
        self.pending_sync.remove(&member_id.to_string());
        let done = match self.state {
            ClassicGroupState::CompletingRebalance | ClassicGroupState::Stable => {
                self.pending_sync.is_empty()
            }
            ClassicGroupState::Empty
            | ClassicGroupState::PreparingRebalance
            | ClassicGroupState::Dead => true,
        };
        if done && self.sync_timer.take().is_some() {
            cx.cancel_timer(CoordTimer::Sync);
        }
    }

    /// A rebalance starts: no SyncGroup is expected any more (`removeSyncExpiration`).
    pub(super) fn remove_sync_expiration(&mut self, cx: &mut Cx) {
        self.pending_sync.clear();
        if self.sync_timer.take().is_some() {
            cx.cancel_timer(CoordTimer::Sync);
        }
    }

    /// The sync timer of `generation`: members that have not sent SyncGroup are removed and a
    /// rebalance starts, in CompletingRebalance or Stable.
    pub(super) fn on_sync_timer(&mut self, cx: &mut Cx, generation: i32) {
        if generation != self.generation
            || !matches!(
                self.state,
                ClassicGroupState::CompletingRebalance | ClassicGroupState::Stable
            )
            || self.pending_sync.is_empty()
        {
            return;
        }
        let late: Vec<String> = self.pending_sync.iter().cloned().collect();
        let who = late
            .iter()
            .find_map(|id| self.members.get(id).map(|m| m.client.member));
        for id in &late {
            log!(
                cx,
                "coordinator removing {id}: no SyncGroup within the rebalance timeout"
            );
            self.cancel_session(cx, id);
            self.remove_from_group(cx, id);
        }
        self.prepare_rebalance(cx, Trigger::MemberExpired, who);
    }
}
