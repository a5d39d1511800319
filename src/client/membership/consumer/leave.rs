//! A KIP-848 member that leaves: on a poll timeout the background thread sends the leave
//! heartbeat (epoch -1, or -2 for a static member) and the member is STALE, its partitions lost
//! at the next poll; on `close()`, after its commit, it revokes everything, then sends the
//! leave heartbeat (LEAVING). The broker's side is `group/consumer/`.

use super::ConsumerMemberState;
use crate::client::poll::Listener;
use crate::client::*;
use crate::messages::ConsumerGroupHeartbeatRequest;

impl Consumer {
    /// The background thread checks the poll timer: past `max.poll.interval.ms` the member
    /// leaves (epoch -1) and is STALE; its partitions are lost at the next poll.
    pub(in crate::client) fn consumer_check_poll_timer(&mut self, env: &mut ClientEnv) {
        let deadline = self.last_poll + Duration::from_millis(self.settings().max_poll_interval_ms);
        if env.now() < deadline {
            self.arm_consumer_poll_timer(env);
            return;
        }
        if matches!(
            self.kip848().state,
            ConsumerMemberState::Stale | ConsumerMemberState::Leaving
        ) {
            return;
        }
        log!(env, "{} poll timeout: leaving the group", self.name());
        env.fact(Fact::PollTimeout {
            member: self.idx,
            last_poll: self.last_poll,
        });
        let member_id = self.kip848().member_id.clone();
        let epoch = if self.spec.group_instance_id.is_some() {
            -2
        } else {
            -1
        };
        let instance_id = self.spec.group_instance_id.clone();
        env.send(ConsumerGroupHeartbeatRequest::leave(
            member_id,
            epoch,
            instance_id,
        ));
        let m = self.kip848();
        m.commit_epoch = None;
        m.in_flight = false;
        env.cancel_timer(ClientTimer::Heartbeat);
        self.move_to(env, ConsumerMemberState::Stale);
    }

    /// `close()` after the commit: revoke everything, then the leave heartbeat.
    pub(in crate::client) fn consumer_finish_close(&mut self, env: &mut ClientEnv) {
        let revoked = std::mem::take(&mut self.owned);
        self.kip848().reconciling_from = None;
        if !revoked.is_empty() {
            self.listener(env, Listener::RevokedOnClose, &revoked);
        }
        self.move_to(env, ConsumerMemberState::Leaving);
        self.kip848().in_flight = false;
        self.send_consumer_heartbeat(env);
        env.cancel_timer(ClientTimer::Heartbeat);
        env.cancel_timer(ClientTimer::PollTimer);
        log!(env, "{} closed", self.name());
        env.fact(Fact::ProcessStopped { member: self.idx });
        self.alive = false;
    }
}
