//! The KIP-848 heartbeat (`ConsumerHeartbeatRequestManager`, the background thread): what each
//! ConsumerGroupHeartbeat carries (the full set while joining, then only what changed), when it
//! goes (the interval the broker hands out, at once when joining, acknowledging or leaving, the
//! `RequestState` backoff after an answer), and what its answer does (a new target, fencing,
//! fatal errors).

use super::ConsumerMemberState;
use crate::client::*;
use crate::messages::{ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse};

impl Consumer {
    /// The background thread's heartbeat (`ConsumerHeartbeatRequestManager`).
    pub(in crate::client) fn send_consumer_heartbeat(&mut self, env: &mut ClientEnv) {
        let topics = self.topics.clone();
        let owned = self.owned.clone();
        let owned = self.kip848().reconciling_from.clone().unwrap_or(owned);
        let timeout = self.settings().max_poll_interval_ms.min(i32::MAX as u64) as i32;
        let member_id = self.kip848().member_id.clone();
        let instance_id = self.spec.group_instance_id.clone();
        let is_static = instance_id.is_some();
        let assignor = self.spec.remote_assignor.clone();
        if self.coordinator.is_none() {
            // Nothing is sent while the coordinator is unknown; the heartbeat goes as soon as
            // it is found.
            self.lookup_coordinator(env);
            self.kip848().retry_heartbeat = true;
            return;
        }
        let m = self.kip848();
        if m.in_flight {
            m.send_when_answered = true;
            return;
        }
        if matches!(
            m.state,
            ConsumerMemberState::Fenced | ConsumerMemberState::Stale
        ) {
            return;
        }
        // `shouldHeartbeatNow` sends at once; any other heartbeat waits for `canSendRequest`.
        let urgent = matches!(
            m.state,
            ConsumerMemberState::Joining
                | ConsumerMemberState::Acknowledging
                | ConsumerMemberState::Leaving
        );
        let due = m.backoff.until.max(m.interval_due);
        if !urgent && env.now() < due {
            env.set_timer(ClientTimer::Heartbeat, due);
            return;
        }
        let request = match m.state {
            ConsumerMemberState::Leaving => {
                let epoch = if is_static { -2 } else { -1 };
                ConsumerGroupHeartbeatRequest::leave(member_id, epoch, instance_id)
            }
            ConsumerMemberState::Joining if m.member_epoch == 0 => {
                m.sent_topics = Some(topics.clone());
                m.sent_owned = Some(owned.clone());
                m.sent_timeout = Some(timeout);
                m.sent_assignor = assignor.clone();
                ConsumerGroupHeartbeatRequest {
                    member_id,
                    member_epoch: 0,
                    instance_id,
                    rebalance_timeout_ms: timeout,
                    subscribed_topic_names: Some(topics),
                    server_assignor: assignor,
                    owned: Some(owned),
                }
            }
            _ => {
                let changed_topics = (m.sent_topics.as_ref() != Some(&topics)).then_some(topics);
                let changed_owned = (m.sent_owned.as_ref() != Some(&owned)).then_some(owned);
                let changed_timeout = (m.sent_timeout != Some(timeout)).then_some(timeout);
                let changed_assignor = assignor.filter(|a| m.sent_assignor.as_ref() != Some(a));
                if changed_assignor.is_some() {
                    m.sent_assignor = changed_assignor.clone();
                }
                if let Some(t) = &changed_topics {
                    m.sent_topics = Some(t.clone());
                }
                if let Some(o) = &changed_owned {
                    m.sent_owned = Some(o.clone());
                }
                if let Some(t) = changed_timeout {
                    m.sent_timeout = Some(t);
                }
                ConsumerGroupHeartbeatRequest {
                    member_id,
                    member_epoch: m.member_epoch,
                    instance_id,
                    rebalance_timeout_ms: changed_timeout.unwrap_or(-1),
                    subscribed_topic_names: changed_topics,
                    server_assignor: changed_assignor,
                    owned: changed_owned,
                }
            }
        };
        m.in_flight = true;
        let interval = m.heartbeat_interval_ms;
        m.interval_due = env.now() + Duration::from_millis(interval);
        let leaving = m.state == ConsumerMemberState::Leaving;
        env.send(request);
        if !leaving && interval > 0 {
            env.set_timer(
                ClientTimer::Heartbeat,
                env.now() + Duration::from_millis(interval),
            );
        }
    }

    /// A ConsumerGroupHeartbeat answer, handled by the background thread as it arrives.
    pub(in crate::client) fn on_consumer_heartbeat_response(
        &mut self,
        env: &mut ClientEnv,
        response: ConsumerGroupHeartbeatResponse,
    ) {
        let ConsumerGroupHeartbeatResponse {
            error,
            member_epoch,
            heartbeat_interval_ms,
            assignment,
            ..
        } = response;
        // The answer to the leave a poll timeout sent (epoch -1, or -2 for a static member):
        // Kafka sends that one with its answer ignored ("we can ignore the leave response
        // because we can join before or after receiving the response",
        // AbstractHeartbeatRequestManager), so a member that has rejoined meanwhile takes
        // neither its epoch nor the end of the join heartbeat in flight from it.
        if error == ErrorCode::None
            && member_epoch < 0
            && self.kip848().state != ConsumerMemberState::Leaving
        {
            return;
        }
        let owned = self.owned.clone();
        if error != ErrorCode::None {
            env.fact(Fact::HeartbeatFailed {
                member: self.idx,
                error,
            });
        }
        let m = self.kip848();
        m.in_flight = false;
        match error {
            ErrorCode::None => m.backoff.succeeded(env),
            // Rejoin at once (`heartbeatRequestState.reset()`).
            ErrorCode::FencedMemberEpoch | ErrorCode::UnknownMemberId => m.reset_backoff(),
            _ => {}
        }
        match error {
            ErrorCode::None => {
                // A leaving member, or one not in the group (stale after its poll timeout, or
                // fenced), ignores the answer to a heartbeat sent before: its epoch and any
                // assignment in it are for the membership it gave up
                // (ConsumerMembershipManager.onHeartbeatSuccess, isNotInGroup).
                if matches!(
                    m.state,
                    ConsumerMemberState::Leaving
                        | ConsumerMemberState::Stale
                        | ConsumerMemberState::Fenced
                ) {
                    return;
                }
                let changed = m.member_epoch != member_epoch;
                m.member_epoch = member_epoch;
                m.commit_epoch = Some(member_epoch);
                if changed {
                    env.fact(Fact::MemberEpochChanged {
                        member: self.idx,
                        epoch: member_epoch,
                    });
                }
                let m = self.kip848();
                let interval = heartbeat_interval_ms.max(0) as u64;
                if interval != m.heartbeat_interval_ms {
                    m.heartbeat_interval_ms = interval;
                    m.interval_due = env.now + Duration::from_millis(interval);
                }
                let state = self.kip848().state;
                // Compared with the last target (Kafka's `currentTargetAssignment`), not with
                // what the member owns: an answer that takes back a target still waiting
                // behind the reconciliation in progress (equal to what that one ends with)
                // replaces it (`replaceTargetAssignmentWithNewAssignment`).
                let latest = self.kip848().latest_target.clone();
                let settled = {
                    let m = self.kip848();
                    m.target.is_none() && m.reconciling_from.is_none()
                };
                match assignment {
                    Some(a)
                        if latest.as_ref().unwrap_or(&owned) != &a
                            || state == ConsumerMemberState::Joining =>
                    {
                        self.kip848().latest_target = Some(a.clone());
                        // A joining member's first assignment is new even when it is empty
                        // (`LocalAssignment.updateWith` bumps the epoch of NONE): it reconciles
                        // and acknowledges it.
                        if a == owned && settled && state != ConsumerMemberState::Joining {
                            self.move_to(env, ConsumerMemberState::Stable);
                        } else {
                            log!(
                                env,
                                "{} new assignment at epoch {member_epoch}: {}",
                                self.name(),
                                env.partitions.list(&a)
                            );
                            let m = self.kip848();
                            m.target = Some(a);
                            // A new target ends ACKNOWLEDGING (`processAssignmentReceived`):
                            // an acknowledgement that waited for this answer is not sent. A
                            // heartbeat goes at once only if its interval is up
                            // (`canSendRequest`), before the reconciliation, reporting what
                            // the member owned before this target; else once it is reconciled.
                            m.send_when_answered &= env.now() >= m.interval_due;
                            // Only recorded here (`processAssignmentReceived`): the application
                            // thread's next poll event reconciles it.
                            self.move_to(env, ConsumerMemberState::Reconciling);
                            self.maybe_reconcile_in_background(env);
                        }
                    }
                    _ => {
                        // The acknowledgement went out: STABLE, or RECONCILING again when a
                        // newer target is being reconciled (`onHeartbeatRequestGenerated`).
                        if state == ConsumerMemberState::Acknowledging {
                            let m = self.kip848();
                            let pending = m.target.is_some() || m.reconciling_from.is_some();
                            let next = if pending {
                                ConsumerMemberState::Reconciling
                            } else {
                                ConsumerMemberState::Stable
                            };
                            self.move_to(env, next);
                            self.maybe_reconcile_in_background(env);
                        }
                    }
                }
            }
            ErrorCode::FencedMemberEpoch | ErrorCode::UnknownMemberId => {
                let leaving = m.state == ConsumerMemberState::Leaving;
                log!(
                    env,
                    "{} heartbeat: {}, the member is fenced",
                    self.name(),
                    error.name()
                );
                if leaving {
                    return;
                }
                self.kip848().commit_epoch = None;
                self.move_to(env, ConsumerMemberState::Fenced);
                self.wake(env);
                return;
            }
            ErrorCode::UnreleasedInstanceId
            | ErrorCode::FencedInstanceId
            | ErrorCode::GroupIdNotFound => {
                // `ConsumerHeartbeatRequestManager`: a fatal error, poll() throws and the
                // application stops (UNRELEASED_INSTANCE_ID: the old process still holds the
                // static id, it crashed rather than leaving and its session has not expired
                // yet; FENCED_INSTANCE_ID: another process took the static id over;
                // GROUP_ID_NOT_FOUND: the group is classic and the migration policy keeps it
                // so).
                log!(
                    env,
                    "{} heartbeat: {}, the consumer fails",
                    self.name(),
                    error.name()
                );
                return self.fail_fatally(env, FatalError::Coordinator(error));
            }
            _ => {}
        }
        let m = self.kip848();
        let at_once = std::mem::take(&mut m.send_when_answered)
            || m.state == ConsumerMemberState::Acknowledging;
        let (interval, due) = (m.heartbeat_interval_ms, m.interval_due.max(m.backoff.until));
        if at_once {
            self.send_consumer_heartbeat(env);
        } else if interval > 0 {
            env.set_timer(ClientTimer::Heartbeat, due.max(env.now()));
        }
    }

    /// A ConsumerGroupHeartbeat got no answer from the group (`Response::Failed`: an error that
    /// loses the coordinator, COORDINATOR_LOAD_IN_PROGRESS, a disconnect or a timeout).
    /// NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE go again as soon as a coordinator is
    /// found (`reset`); any other failure backs off (AbstractHeartbeatRequestManager's
    /// `onErrorResponse` and `onFailure`).
    pub(in crate::client) fn consumer_heartbeat_failed(
        &mut self,
        env: &mut ClientEnv,
        error: ErrorCode,
    ) {
        let m = self.kip848();
        m.in_flight = false;
        m.forget_sent();
        match error {
            ErrorCode::NotCoordinator | ErrorCode::CoordinatorNotAvailable => m.reset_backoff(),
            _ => m.back_off(env),
        }
        if error != ErrorCode::CoordinatorLoadInProgress {
            m.retry_heartbeat = true;
            return;
        }
        // The coordinator is kept, and the heartbeat manager's own state decides: a JOINING
        // member sends again at once (`heartbeatNow` skips `canSendRequest`), any other once
        // its backoff has passed (an acknowledgement is STABLE once sent,
        // `onHeartbeatRequestGenerated`).
        if m.state == ConsumerMemberState::Joining {
            self.send_consumer_heartbeat(env);
        } else {
            env.set_timer(ClientTimer::Heartbeat, m.backoff.until);
        }
    }
}
