//! The classic group's states and which may follow which, as Kafka's `ClassicGroupState`
//! documents them: each state lists the states a group must be in to enter it, and every
//! transition is checked against that list (`ClassicGroup.assertValidTransition`). Creating a
//! group in a state (a load from the log, a conversion from a consumer group) is not a
//! transition; its previous state is Dead, as Kafka's constructor sets it.
//!
//! ```text
//!  Empty --join--> PreparingRebalance --all joined / timer--> CompletingRebalance
//!    ^                  ^        ^                                   |
//!    |                  |        +-------- join, leave, expiry ------+-- leader's SyncGroup --> Stable
//!    +-- last member leaves                                                                      |
//!                       +------------------ join, leave, expiry, metadata change ----------------+
//!  any state --unloaded at a coordinator fail-over, or the group deleted--> Dead
//! ```

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassicGroupState {
    /// No members (or only offsets). JoinGroup from a new member starts a rebalance; SyncGroup,
    /// Heartbeat, LeaveGroup and OffsetCommit get UNKNOWN_MEMBER_ID.
    Empty,
    /// Members are (re)joining: JoinGroups are parked until everyone expected has joined or
    /// the join timer fires; Heartbeat and SyncGroup get REBALANCE_IN_PROGRESS.
    PreparingRebalance,
    /// The join phase is over: waiting for the leader's SyncGroup with the assignment;
    /// OffsetCommit gets REBALANCE_IN_PROGRESS.
    CompletingRebalance,
    /// Every member has its assignment.
    Stable,
    /// The group is gone from this coordinator (unloaded at a fail-over, or deleted): a final
    /// state, before its metadata is dropped.
    Dead,
}

impl ClassicGroupState {
    pub fn name(self) -> &'static str {
        match self {
            ClassicGroupState::Empty => "Empty",
            ClassicGroupState::PreparingRebalance => "PreparingRebalance",
            ClassicGroupState::CompletingRebalance => "CompletingRebalance",
            ClassicGroupState::Stable => "Stable",
            ClassicGroupState::Dead => "Dead",
        }
    }

    /// The states a group must be in to enter this one (`ClassicGroupState.validPreviousStates`).
    pub fn valid_previous_states(self) -> &'static [ClassicGroupState] {
        use ClassicGroupState::*;
        match self {
            // All members have left the group.
            Empty => &[PreparingRebalance],
            // A join, a leave, an expiry or a metadata change; or a new member's join.
            PreparingRebalance => &[Stable, CompletingRebalance, Empty],
            // Some members have joined by the timeout.
            CompletingRebalance => &[PreparingRebalance],
            // The leader's SyncGroup with the assignment.
            Stable => &[CompletingRebalance],
            // Removed by partition emigration or deletion, from anywhere.
            Dead => &[Stable, PreparingRebalance, CompletingRebalance, Empty, Dead],
        }
    }

    /// Whether a group in `self` may enter `next`.
    pub fn may_become(self, next: ClassicGroupState) -> bool {
        next.valid_previous_states().contains(&self)
    }
}

#[cfg(test)]
mod tests {
    use super::ClassicGroupState::{self, *};

    const ALL: [ClassicGroupState; 5] =
        [Empty, PreparingRebalance, CompletingRebalance, Stable, Dead];

    /// The table is Kafka's (`ClassicGroupState`'s static block): every pair, allowed or not.
    #[test]
    fn the_valid_previous_states_are_kafkas() {
        let allowed: Vec<(ClassicGroupState, ClassicGroupState)> = ALL
            .iter()
            .flat_map(|&from| ALL.iter().map(move |&to| (from, to)))
            .filter(|&(from, to)| from.may_become(to))
            .collect();
        assert_eq!(
            allowed,
            vec![
                (Empty, PreparingRebalance),
                (Empty, Dead),
                (PreparingRebalance, Empty),
                (PreparingRebalance, CompletingRebalance),
                (PreparingRebalance, Dead),
                (CompletingRebalance, PreparingRebalance),
                (CompletingRebalance, Stable),
                (CompletingRebalance, Dead),
                (Stable, PreparingRebalance),
                (Stable, Dead),
                (Dead, Dead),
            ]
        );
    }

    /// A group cannot skip the join phase, nor come back from Dead.
    #[test]
    fn forbidden_transitions_are_refused() {
        assert!(!Empty.may_become(CompletingRebalance));
        assert!(!Empty.may_become(Stable));
        assert!(!PreparingRebalance.may_become(Stable));
        assert!(!Stable.may_become(CompletingRebalance));
        assert!(!Stable.may_become(Empty));
        for next in [Empty, PreparingRebalance, CompletingRebalance, Stable] {
            assert!(!Dead.may_become(next), "Dead -> {next:?}");
        }
    }
}
