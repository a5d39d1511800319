//! The heartbeat thread (`AbstractCoordinator.HeartbeatThread`): a heartbeat every
//! `heartbeat_interval_ms` while enabled; responses read only on its passes (every
//! `retry_backoff_ms`), so a REBALANCE_IN_PROGRESS is noticed on the pass after it arrives and
//! acted on at the next `poll()`; disabled from the JoinGroup until its response is handled;
//! a LeaveGroup when the poll interval (`max_poll_interval_ms`) expires; and when no heartbeat
//! has been answered for `session_timeout_ms`, it gives up on the coordinator: marks it
//! unknown and disconnects, so what was in flight to it fails and is sent again once
//! FindCoordinator names one ("session timed out without receiving a heartbeat response",
//! `AbstractCoordinator.HeartbeatThread`).

use super::ClassicMemberState;
use crate::client::*;
use crate::facts::RejoinCause;
use crate::messages::HeartbeatRequest;

impl Consumer {
    pub(in crate::client) fn enable_heartbeat(&mut self, env: &mut ClientEnv) {
        self.disable_heartbeat(env);
        self.classic().heartbeat_enabled = true;
        // `resetTimeouts`: the heartbeat timer restarts at the interval.
        self.classic().heartbeat_backoff.until = SimTime::ZERO;
        let now = env.now();
        self.classic().last_heartbeat_sent = now;
        self.reset_session_timer(env);
        self.last_poll = now;
        let at = now + Duration::from_millis(self.settings().heartbeat_interval_ms);
        env.set_timer(ClientTimer::Heartbeat, at);
        self.arm_poll_timer(env);
    }

    pub(in crate::client) fn disable_heartbeat(&mut self, env: &mut ClientEnv) {
        self.classic().heartbeat_enabled = false;
        env.cancel_timer(ClientTimer::Heartbeat);
        env.cancel_timer(ClientTimer::PollTimer);
        env.cancel_timer(ClientTimer::SessionCheck);
    }

    /// `Heartbeat.resetSessionTimeout`.
    pub(in crate::client) fn reset_session_timer(&mut self, env: &ClientEnv) {
        let session = Duration::from_millis(self.settings().session_timeout_ms);
        self.classic().session_deadline = env.now() + session;
    }

    pub(in crate::client) fn send_heartbeat(&mut self, env: &mut ClientEnv) {
        if !self.classic().heartbeat_enabled {
            return;
        }
        let now = env.now();
        if self.coordinator.is_none() {
            // The heartbeat thread looks for the coordinator every `retry.backoff.ms`.
            self.lookup_coordinator(env);
            let backoff = Duration::from_millis(env.scenario.group.retry_backoff_ms);
            env.set_timer(ClientTimer::Heartbeat, now + backoff);
            return;
        }
        // `shouldHeartbeat`: after a failure, not before its backoff has passed (the thread
        // looks on its passes, every `retry.backoff.ms`).
        if now < self.classic().heartbeat_backoff.until {
            return self.arm_heartbeat_retry(env);
        }
        // The session timer is checked before a heartbeat is sent.
        if now >= self.classic().session_deadline
            && (self.session_timed_out(env) || !self.classic().heartbeat_enabled)
        {
            return;
        }
        self.classic().last_heartbeat_sent = now;
        if let Some(generation) = self.classic().generation {
            self.classic().heartbeats_in_flight.push_back(generation);
            let request = HeartbeatRequest {
                member_id: self.classic().member_id.clone(),
                generation,
                group_instance_id: self.spec.group_instance_id.clone(),
            };
            env.send(request);
        }
        let at = now + Duration::from_millis(self.settings().heartbeat_interval_ms);
        env.set_timer(ClientTimer::Heartbeat, at);
        // The session timer passes before the next heartbeat unless one is answered first: the
        // pass after it checks. (With a session more than twice the interval, an answered
        // heartbeat always pushes it past the next one, so a healthy member arms no check.)
        let deadline = self.classic().session_deadline;
        if deadline < at {
            let backoff = Duration::from_millis(env.scenario.group.retry_backoff_ms);
            env.set_timer(ClientTimer::SessionCheck, next_pass(now, backoff, deadline));
        }
    }

    /// `Heartbeat.failHeartbeat`: the next heartbeat waits the backoff of one more failure in a
    /// row; the thread, woken, looks again on its passes every `retry.backoff.ms` from now.
    pub(in crate::client) fn fail_heartbeat(&mut self, env: &mut ClientEnv) {
        self.classic().heartbeat_backoff.failed(env);
        self.arm_heartbeat_retry(env);
    }

    /// The thread's first pass (every `retry.backoff.ms` from now) at or after the retry.
    fn arm_heartbeat_retry(&mut self, env: &mut ClientEnv) {
        let pass = Duration::from_millis(env.scenario.group.retry_backoff_ms);
        let at = next_pass(env.now(), pass, self.classic().heartbeat_backoff.until);
        env.set_timer(ClientTimer::Heartbeat, at);
    }

    /// A Heartbeat answer (`error`), for the heartbeat sent first of those in flight.
    pub(in crate::client) fn on_heartbeat_answer(&mut self, env: &mut ClientEnv, error: ErrorCode) {
        let Some(sent_generation) = self.classic().heartbeats_in_flight.pop_front() else {
            return;
        };
        self.classic()
            .heartbeat_answers
            .push_back((error, sent_generation));
        if matches!(self.app, App::Idle) {
            // Blocked in the network client's poll (nothing to process): the answer is
            // handled as it arrives, and a rejoin starts in the same loop iteration.
            if self.read_heartbeat_answers(env) {
                self.wake(env);
            }
            return;
        }
        // Busy processing: read on the heartbeat thread's next pass, acted on at the next
        // poll().
        let now = env.now();
        let backoff = Duration::from_millis(env.scenario.group.retry_backoff_ms);
        let at = next_pass(self.classic_ref().last_heartbeat_sent, backoff, now);
        env.after(at, ClientTimer::HeartbeatRead);
    }

    /// The heartbeat thread's pass armed at the session timer.
    pub(in crate::client) fn check_session(&mut self, env: &mut ClientEnv) {
        if self.classic().heartbeat_enabled && self.coordinator.is_some() {
            self.session_timed_out(env);
        }
    }

    /// A pass's session check: the answers received are handled first (`pollNoWakeup`); if
    /// the timer has still passed, no heartbeat was answered for a session timeout, and the
    /// coordinator is marked unknown and its connection closed (the thread's next pass looks
    /// for it). Whether it had passed.
    fn session_timed_out(&mut self, env: &mut ClientEnv) -> bool {
        self.read_heartbeat_answers(env);
        let Some(broker) = self.coordinator else {
            return false;
        };
        if !self.classic().heartbeat_enabled || env.now() < self.classic().session_deadline {
            return false;
        }
        self.mark_coordinator_unknown(
            env,
            ErrorCode::Disconnected,
            "session timed out without a heartbeat answer",
        );
        env.disconnect(broker);
        let backoff = Duration::from_millis(env.scenario.group.retry_backoff_ms);
        env.set_timer(ClientTimer::Heartbeat, env.now() + backoff);
        true
    }

    /// Every heartbeat answer received so far is handled, oldest first; whether one asks for a
    /// rejoin.
    pub(in crate::client) fn read_heartbeat_answers(&mut self, env: &mut ClientEnv) -> bool {
        let mut rejoin = false;
        while let Some((error, sent_generation)) = self.classic().heartbeat_answers.pop_front() {
            rejoin |= self.read_heartbeat(env, error, sent_generation);
        }
        rejoin
    }

    /// A heartbeat answer is handled (`HeartbeatResponseHandler`), with the checks Kafka makes
    /// at that moment: REBALANCE_IN_PROGRESS counts only in STABLE (a member already rejoining
    /// ignores it), and an error that resets the generation only if the generation is the one
    /// the heartbeat was sent with. Returns whether the member must rejoin.
    fn read_heartbeat(
        &mut self,
        env: &mut ClientEnv,
        error: ErrorCode,
        sent_generation: i32,
    ) -> bool {
        // `receiveHeartbeat`: the session timer restarts, and the failures in a row are over.
        if matches!(error, ErrorCode::None | ErrorCode::RebalanceInProgress) {
            self.reset_session_timer(env);
            self.classic().heartbeat_backoff.failures = 0;
        }
        match error {
            ErrorCode::None => false,
            ErrorCode::RebalanceInProgress => {
                if self.classic().phase != ClassicMemberState::Stable {
                    return false;
                }
                if !self.classic().rejoin_needed {
                    log!(env, "{} heartbeat: REBALANCE_IN_PROGRESS", self.name());
                    env.fact(Fact::RejoinNeeded {
                        member: self.idx,
                        cause: RejoinCause::HeartbeatRebalance,
                    });
                }
                self.classic().rejoin_needed = true;
                true
            }
            _ if self.classic().generation != Some(sent_generation) => false,
            other => {
                self.reset_state_on_response_error(
                    env,
                    "heartbeat",
                    RejoinCause::HeartbeatError(other),
                );
                true
            }
        }
    }

    pub(in crate::client) fn arm_poll_timer(&mut self, env: &mut ClientEnv) {
        let deadline = self.last_poll + Duration::from_millis(self.settings().max_poll_interval_ms);
        // The heartbeat thread notices on its first pass after the deadline.
        let backoff = Duration::from_millis(env.scenario.group.retry_backoff_ms);
        let at = next_pass(self.classic().last_heartbeat_sent, backoff, deadline);
        env.set_timer(ClientTimer::PollTimer, at);
    }
}

/// The first heartbeat-thread pass at or after `at`, passes falling every `backoff` from `from`.
pub(in crate::client) fn next_pass(from: SimTime, backoff: Duration, at: SimTime) -> SimTime {
    if at <= from {
        return from;
    }
    let step = backoff.as_micros().max(1);
    let k = (at - from).as_micros().div_ceil(step);
    from + Duration::from_micros(k * step)
}
