//! A classic member that leaves: on `close()`, after its commit, `onPartitionsRevoked` for
//! everything, then LeaveGroup (`maybeLeaveGroup`: a static member sends none, KIP-345); on a
//! poll timeout the heartbeat thread sends LeaveGroup and resets the generation, and the
//! partitions are lost when the application thread returns. The broker's side is
//! `group/classic/leave.rs`.

use super::ClassicMemberState;
use crate::client::poll::Listener;
use crate::client::*;
use crate::messages::LeaveGroupRequest;

impl Consumer {
    /// `close()` after its commit: `onPartitionsRevoked` for everything, then LeaveGroup (a
    /// static member sends none).
    pub(in crate::client) fn classic_finish_close(&mut self, env: &mut ClientEnv) {
        let revoked = std::mem::take(&mut self.owned);
        if !revoked.is_empty() {
            self.listener(env, Listener::RevokedOnClose, &revoked);
        }
        let is_static = self.spec.group_instance_id.is_some();
        if !is_static && !self.classic().member_id.is_empty() {
            env.send(LeaveGroupRequest {
                members: vec![LeavingMember {
                    member_id: self.classic().member_id.clone(),
                    group_instance_id: None,
                    reason: LeaveReason::Close,
                }],
            });
        }
        log!(env, "{} closed", self.name());
        env.fact(Fact::ProcessStopped { member: self.idx });
        self.alive = false;
    }

    pub(in crate::client) fn check_poll_timer(&mut self, env: &mut ClientEnv) {
        if !self.classic().heartbeat_enabled {
            return;
        }
        let deadline = self.last_poll + Duration::from_millis(self.settings().max_poll_interval_ms);
        if env.now() < deadline {
            self.arm_poll_timer(env);
            return;
        }
        env.fact(Fact::PollTimeout {
            member: self.idx,
            last_poll: self.last_poll,
        });
        // Poll timeout: the heartbeat thread sends LeaveGroup and resets the generation; the
        // partitions are lost when the application thread returns. A static member sends no
        // LeaveGroup (`maybeLeaveGroup`: only dynamic members do, KIP-345); its session decides.
        if self.spec.group_instance_id.is_none() {
            log!(
                env,
                "{} poll timeout: LeaveGroup from the heartbeat thread",
                self.name()
            );
            env.send(LeaveGroupRequest {
                members: vec![LeavingMember {
                    member_id: self.classic().member_id.clone(),
                    group_instance_id: None,
                    reason: LeaveReason::PollTimeout,
                }],
            });
        } else {
            log!(
                env,
                "{} poll timeout: a static member leaves no LeaveGroup",
                self.name()
            );
        }
        self.disable_heartbeat(env);
        // MUTANT(fenced-commit): the member keeps the generation it had, and believes itself
        // still in it until its next poll, so the commit after its zombie batch goes out as
        // the old generation's.
        if env.scenario.mutant != Some(Mutant::FencedCommit) {
            self.reset_generation(true);
            self.classic().phase = ClassicMemberState::Unjoined;
        }
        self.classic().membership_lost = true;
    }
}
