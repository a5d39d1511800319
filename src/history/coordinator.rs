//! The coordinator's side of the group over time: the group's type (the online migration
//! converts it), a classic group's state, generation, members and leader, and where the
//! coordinator is (its broker, still loading the group after a fail-over). A KIP-848 group's
//! own state is its records' (`consumer_group.rs`).

use crate::facts::Fact;
use crate::group::classic::ClassicGroupState;
use crate::scenario::Protocol;
use std::collections::BTreeSet;

/// The coordinator's side of the group at an instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoordinatorState {
    /// The group's type now.
    pub protocol: Protocol,
    /// A classic group's state (Dead until its first member creates it).
    pub classic_state: ClassicGroupState,
    /// A classic group's generation, once it has one.
    pub generation: Option<i32>,
    /// The members a classic group holds.
    pub classic_members: BTreeSet<usize>,
    /// The broker hosting the coordinator (`None`: its broker died and none took over yet).
    pub broker: Option<u32>,
    /// A new coordinator still loading the group from `__consumer_offsets`.
    pub loading: bool,
    /// Classic: the member the last JoinGroup answers made the leader.
    pub leader: Option<usize>,
}

impl CoordinatorState {
    pub(super) fn new(protocol: Protocol, broker: u32) -> Self {
        CoordinatorState {
            protocol,
            classic_state: ClassicGroupState::Dead,
            generation: None,
            classic_members: BTreeSet::new(),
            broker: Some(broker),
            loading: false,
            leader: None,
        }
    }

    /// Takes in `fact`; whether it concerned the coordinator's side.
    pub(super) fn apply(&mut self, fact: &Fact) -> bool {
        match fact {
            Fact::MemberAdded { member, .. } | Fact::MemberReplaced { member, .. } => {
                self.classic_members.insert(*member);
            }
            Fact::MemberRemoved { member, .. } => {
                self.classic_members.remove(member);
            }
            Fact::RebalanceStarted { .. } => {
                self.classic_state = ClassicGroupState::PreparingRebalance
            }
            Fact::JoinCompleted { generation, .. } => {
                self.classic_state = ClassicGroupState::CompletingRebalance;
                self.generation = Some(*generation);
            }
            Fact::GroupStable { generation } => {
                self.classic_state = ClassicGroupState::Stable;
                self.generation = Some(*generation);
            }
            Fact::GroupEmpty => self.classic_state = ClassicGroupState::Empty,
            Fact::GroupConverted { to_consumer, .. } => {
                self.protocol = if *to_consumer {
                    Protocol::Consumer
                } else {
                    Protocol::Classic
                };
            }
            Fact::CoordinatorFailed { .. } => self.broker = None,
            Fact::CoordinatorMoved { to, .. } => {
                self.broker = *to;
                self.loading = to.is_some();
            }
            Fact::CoordinatorLoaded => self.loading = false,
            Fact::LeaderElected { member, .. } => self.leader = Some(*member),
            _ => return false,
        }
        true
    }
}
