//! Each member over time: its process (running, stalled, closing, closed, crashed) and its place
//! in the group protocol, by its membership's own state names (`ClassicMemberState`,
//! `ConsumerMemberState`): where it is in the join and sync steps or the KIP-848 reconciliation,
//! the generation it synced, why it must rejoin, the error that stopped it, its member id.

use crate::client::{ClassicMemberState, ConsumerMemberState};
use crate::facts::{Fact, RejoinCause};
use crate::messages::ErrorCode;
use crate::scenario::Protocol;
use crate::sim::SimTime;

/// What a member's process is doing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProcessState {
    #[default]
    NotStarted,
    Running,
    /// Its poll loop is stuck inside a batch.
    Stalled,
    /// `close()` was called and has not finished.
    Closing,
    Closed,
    Crashed,
}

impl ProcessState {
    pub fn name(self) -> &'static str {
        match self {
            ProcessState::NotStarted => "not started",
            ProcessState::Running => "running",
            ProcessState::Stalled => "stalled",
            ProcessState::Closing => "closing",
            ProcessState::Closed => "closed",
            ProcessState::Crashed => "crashed",
        }
    }
}

/// One member at an instant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemberState {
    pub process: ProcessState,
    /// While stalled: when the stuck batch ends.
    pub stalled_until: Option<SimTime>,
    /// Its membership's state, by Kafka's name; `None` with no process.
    pub membership: Option<&'static str>,
    /// Classic: the generation its last successful SyncGroup gave it.
    pub synced_generation: Option<i32>,
    /// Classic: it learned it must rejoin, and how (until its JoinGroup).
    pub rejoin: Option<RejoinCause>,
    /// The fatal error that stopped its application, if one did.
    pub error: Option<&'static str>,
    /// The member id the coordinator last added it under (kept after it leaves).
    pub member_id: Option<String>,
}

/// The member a fact changes the state of, for the facts that change one.
pub(super) fn subject(fact: &Fact) -> Option<usize> {
    match fact {
        Fact::MemberAdded { member, .. }
        | Fact::MemberReplaced { member, .. }
        | Fact::ProcessStarted { member }
        | Fact::MemberStateChanged { member, .. }
        | Fact::Stalled { member, .. }
        | Fact::StallEnded { member }
        | Fact::CloseRequested { member }
        | Fact::ProcessStopped { member }
        | Fact::Crashed { member, .. }
        | Fact::FatalError { member, .. }
        | Fact::JoinGroupSent { member }
        | Fact::JoinGroupAnswered { member, .. }
        | Fact::SyncGroupAnswered { member, .. }
        | Fact::RejoinNeeded { member, .. }
        | Fact::PollTimeout { member, .. } => Some(*member),
        _ => None,
    }
}

impl MemberState {
    /// Takes in `fact` (one whose [`subject`] this member is), for a member running
    /// `protocol`; whether it concerned the member.
    pub(super) fn apply(&mut self, fact: &Fact, protocol: Protocol) -> bool {
        match fact {
            Fact::MemberAdded { member_id, .. } | Fact::MemberReplaced { member_id, .. } => {
                self.member_id = Some(member_id.clone());
            }
            Fact::ProcessStarted { .. } => {
                self.process = ProcessState::Running;
                self.stalled_until = None;
                self.error = None;
                self.rejoin = None;
                self.membership = Some(match protocol {
                    Protocol::Consumer => ConsumerMemberState::Unsubscribed.name(),
                    Protocol::Classic => ClassicMemberState::Unjoined.name(),
                });
            }
            Fact::MemberStateChanged { state, .. } => self.membership = Some(state),
            Fact::Stalled { until, .. } => {
                self.process = ProcessState::Stalled;
                self.stalled_until = Some(*until);
            }
            Fact::StallEnded { .. } => {
                if self.process == ProcessState::Stalled {
                    self.process = ProcessState::Running;
                }
                self.stalled_until = None;
            }
            Fact::CloseRequested { .. } => self.process = ProcessState::Closing,
            Fact::ProcessStopped { .. } | Fact::Crashed { .. } => {
                self.process = if matches!(fact, Fact::Crashed { .. }) {
                    ProcessState::Crashed
                } else {
                    ProcessState::Closed
                };
                self.membership = None;
                self.synced_generation = None;
                self.stalled_until = None;
                self.rejoin = None;
            }
            Fact::FatalError { error, .. } => self.error = Some(error.name()),
            Fact::JoinGroupSent { .. } => {
                self.membership = Some(ClassicMemberState::AwaitingJoin.name());
                self.rejoin = None;
            }
            Fact::JoinGroupAnswered { error, .. } => {
                self.membership = Some(if *error == ErrorCode::None {
                    ClassicMemberState::AwaitingSync.name()
                } else {
                    ClassicMemberState::Unjoined.name()
                });
            }
            Fact::SyncGroupAnswered {
                generation, error, ..
            } => {
                if *error == ErrorCode::None {
                    self.membership = Some(ClassicMemberState::Stable.name());
                    self.synced_generation = Some(*generation);
                } else {
                    self.membership = Some(ClassicMemberState::Unjoined.name());
                }
            }
            Fact::RejoinNeeded { cause, .. } => self.rejoin = Some(*cause),
            // Classic: a poll timeout makes the member leave (`maybeLeaveGroup`), unjoined.
            Fact::PollTimeout { .. } if protocol == Protocol::Classic => {
                self.membership = Some(ClassicMemberState::Unjoined.name());
            }
            _ => return false,
        }
        true
    }
}
