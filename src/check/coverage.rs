//! sometimes: what a run really exercised, so that a scenario (or a fuzzer's swarm) can be
//! shown to reach the behaviour it is about: a revocation, a cooperative follow-up, a zombie
//! batch, lost partitions, a session expiry, a poll timeout, a static member's replacement, a
//! state restore.

use super::Findings;
use crate::facts::Fact;
use crate::messages::{RequestKind, Trigger};
use std::collections::BTreeSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Coverage {
    /// A member's `onPartitionsRevoked` got partitions in a rebalance.
    Revoked,
    /// A cooperative follow-up rebalance started.
    FollowUp,
    /// A removed member finished a batch of a partition it no longer owned.
    ZombieBatch,
    /// A member's `onPartitionsLost` got partitions.
    Lost,
    /// The coordinator expired a member's session (or its SyncGroup never came).
    SessionExpired,
    /// A member left on a poll timeout (`max.poll.interval.ms`).
    PollTimeout,
    /// KIP-345: a restarted static member took over its entry.
    StaticReplacement,
    /// A member began rebuilding state (a changelog replay or a standby takeover).
    StateRestore,
    /// KIP-848: a partition moved on while its new owner's `onPartitionsAssigned` still ran
    /// (the owner's heartbeats leave it out until the reconciliation completes), so two members
    /// ran the callback for it at once, the first without fetching it (check/ownership.rs).
    MovedInCallback,
    /// A cooperative rebalance withheld partitions for a follow-up that never came: their
    /// owner's new process took its static instance over in a Stable group (counted by `cgsim
    /// fuzz`, which excuses them at the end: fuzz/runner.rs).
    StrandedWithheld,
    /// A member took an assignment after the coordinator had removed it (an answer sent
    /// before the removal, delivered late): a zombie's claim, not a second owner
    /// (check/ownership.rs).
    AssignedAfterRemoval,
    /// A member did not take an assignment naming a topic it no longer subscribes to
    /// (`checkAssignmentMatchedSubscription`) and rejoined; repeated every generation under
    /// StickyAssignor, Kafka's own loop (check/settle.rs).
    AssignmentRefused,
    /// A JoinGroup or SyncGroup the coordinator held got no answer within its timeout: the
    /// member disconnected and joined again (world/connections.rs).
    GroupRequestTimedOut,
    /// KIP-848's online migration converted the group, either way (`cgsim fuzz --migration`).
    GroupConverted,
    /// The online upgrade recorded a classic member as owning less than it still held (an
    /// assignment it had not applied yet, or one a reset rebalance had emptied), and the
    /// consumer group handed the rest on: Kafka's own double ownership (check/ownership.rs;
    /// counted by `cgsim fuzz`, which excuses it).
    UpgradeDoubleOwned,
}

impl Coverage {
    /// Every coverage property, in declaration order (a fuzz run counts each).
    pub const ALL: [Coverage; 15] = [
        Coverage::Revoked,
        Coverage::FollowUp,
        Coverage::ZombieBatch,
        Coverage::Lost,
        Coverage::SessionExpired,
        Coverage::PollTimeout,
        Coverage::StaticReplacement,
        Coverage::StateRestore,
        Coverage::MovedInCallback,
        Coverage::StrandedWithheld,
        Coverage::AssignedAfterRemoval,
        Coverage::AssignmentRefused,
        Coverage::GroupRequestTimedOut,
        Coverage::GroupConverted,
        Coverage::UpgradeDoubleOwned,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Coverage::Revoked => "revoked",
            Coverage::FollowUp => "follow_up",
            Coverage::ZombieBatch => "zombie_batch",
            Coverage::Lost => "lost",
            Coverage::SessionExpired => "session_expired",
            Coverage::PollTimeout => "poll_timeout",
            Coverage::StaticReplacement => "static_replacement",
            Coverage::StateRestore => "state_restore",
            Coverage::MovedInCallback => "moved_in_callback",
            Coverage::StrandedWithheld => "stranded_withheld",
            Coverage::AssignedAfterRemoval => "zombie_assignment",
            Coverage::AssignmentRefused => "assignment_refused",
            Coverage::GroupRequestTimedOut => "group_request_timed_out",
            Coverage::GroupConverted => "group_converted",
            Coverage::UpgradeDoubleOwned => "upgrade_double_owned",
        }
    }
}

#[derive(Default)]
pub struct Reached(BTreeSet<Coverage>);

impl Reached {
    pub fn reach(&mut self, c: Coverage) {
        self.0.insert(c);
    }

    /// The names reached, sorted by name.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.0.iter().map(|c| c.name().to_string()).collect();
        names.sort();
        names
    }
}

pub fn observe(fact: &Fact, found: &mut Findings) {
    let reached = match fact {
        Fact::Revoked { partitions, .. } if !partitions.is_empty() => Coverage::Revoked,
        Fact::Lost { partitions, .. } if !partitions.is_empty() => Coverage::Lost,
        Fact::RebalanceStarted { trigger, .. } => match trigger {
            Trigger::FollowUp => Coverage::FollowUp,
            Trigger::MemberExpired => Coverage::SessionExpired,
            Trigger::PollTimeout => Coverage::PollTimeout,
            _ => return,
        },
        Fact::MemberReplaced { .. } => Coverage::StaticReplacement,
        Fact::RestoreStarted { .. } => Coverage::StateRestore,
        Fact::AssignmentRefused { .. } => Coverage::AssignmentRefused,
        Fact::RequestTimedOut {
            request: RequestKind::JoinGroup | RequestKind::SyncGroup,
            ..
        } => Coverage::GroupRequestTimedOut,
        Fact::GroupConverted { .. } => Coverage::GroupConverted,
        _ => return,
    };
    found.reached(reached);
}
