//! When a scenario's group must have settled: the settle bound after the last fault's end,
//! and the quiet window after it, which the settle check (`check/settle.rs`) watches and a run
//! must outlast for the check to run (`invariants.settle_window_end_ms`).

use super::{ClientSettings, Scenario, TimelineAction};

impl Scenario {
    /// When the group must be Stable: DESIGN.md's "What counts" has it within rebalance timeout +
    /// session timeout after the last timeline event has ended, which Kafka itself can overrun by
    /// the terms below. The last fault's end + the group's rebalance timeout (its members'
    /// largest) + the largest session timeout; three rebalance timeouts when a static member goes silently (crashes, or
    /// closes: a static classic member sends no LeaveGroup), since Kafka removes it late:
    /// `completeClassicGroupJoin` removes only the dynamic members that did not rejoin, so every
    /// join phase waits the whole rebalance timeout for it (the one in progress and a cooperative
    /// follow-up), each completed join reschedules its session (`rescheduleClassicGroupMemberHeartbeat`
    /// for all members), and its removal comes from `expirePendingSync` a rebalance timeout after
    /// the last join (GroupMetadataManager). The removal's own rebalance then fits in the session
    /// timeout.
    ///
    /// Two heartbeat intervals more (the members' largest), for the rebalance that removes a crashed
    /// member is noticed by the others only at their next heartbeats:
    /// - classic: a member that crashed with its JoinGroup already counted in a join phase is in
    ///   the generation that phase completes, which reschedules every member's session (so the
    ///   crash is noticed up to a rebalance timeout + a session timeout after it), and the rest of
    ///   the group learns of the rebalance that removes it at their next heartbeat
    ///   (REBALANCE_IN_PROGRESS);
    /// - KIP-848: the coordinator answers only heartbeats, so after a session expires (timers
    ///   restart when a coordinator loads the group: `onLoaded`) the member that must revoke
    ///   learns of the new target at its next heartbeat, and the member that receives the
    ///   released partitions at its next heartbeat after the revocation's acknowledgement
    ///   (`CurrentAssignmentBuilder` keeps it in UNRELEASED_PARTITIONS; the client heartbeats early
    ///   only when ACKNOWLEDGING, LEAVING or JOINING: `shouldHeartbeatNow`).
    pub fn settle_bound(&self) -> (u64, &'static str) {
        let silent_static = self.static_member_goes_silently();
        let waits = if silent_static { 3 } else { 1 };
        let ms = self.last_event_end_ms()
            + waits * self.largest(|s| s.max_poll_interval_ms)
            + self.largest(|s| s.session_timeout_ms)
            + 2 * self.largest(|s| s.heartbeat_interval_ms);
        let terms = if silent_static {
            "last fault's end + three rebalance timeouts + session timeout + two heartbeat intervals"
        } else {
            "last fault's end + rebalance timeout + session timeout + two heartbeat intervals"
        };
        (ms, terms)
    }

    /// When the settle window ends: the settle bound and a quiet session timeout after it. A run
    /// that lasts to here is settle-checked.
    pub fn settle_window_end_ms(&self) -> u64 {
        self.settle_bound().0 + self.largest(|s| s.session_timeout_ms)
    }

    /// Whether the timeline crashes or closes a static member (one with `group.instance.id`).
    pub fn static_member_goes_silently(&self) -> bool {
        self.timeline.iter().any(|e| match e.action {
            TimelineAction::Crash { member } | TimelineAction::Leave { member } => self
                .members
                .get(member)
                .is_some_and(|m| m.group_instance_id.is_some()),
            _ => false,
        })
    }

    /// The largest of a setting over the members (members may set their own, and a restart may
    /// bring new ones).
    fn largest(&self, setting: impl Fn(&ClientSettings) -> u64) -> u64 {
        self.member_specs_ever()
            .map(|m| setting(&m.settings))
            .max()
            .unwrap_or(0)
    }
}
