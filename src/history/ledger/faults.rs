//! What broker and network faults cause: why each partition's unavailable interval began (a
//! rebalance, a member's crash or stall, a leader election, a coordinator fail-over, a network
//! partition; the parts sum to the total), the coordinator's moves, and each member's time
//! without a coordinator and polls blocked looking for one.

use super::*;
use crate::cluster::availability::GapCause;
use serde::Serialize;

/// Why a partition stopped being processed (or fetched).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PauseCause {
    #[default]
    Rebalance,
    MemberCrash,
    MemberStall,
    LeaderElection,
    CoordinatorFailover,
    Network,
}

impl PauseCause {
    const ALL: [PauseCause; 6] = [
        PauseCause::Rebalance,
        PauseCause::MemberCrash,
        PauseCause::MemberStall,
        PauseCause::LeaderElection,
        PauseCause::CoordinatorFailover,
        PauseCause::Network,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PauseCause::Rebalance => "rebalance",
            PauseCause::MemberCrash => "member_crash",
            PauseCause::MemberStall => "member_stall",
            PauseCause::LeaderElection => "leader_election",
            PauseCause::CoordinatorFailover => "coordinator_failover",
            PauseCause::Network => "network",
        }
    }
}

/// `pauses.unavailable_ms.by_cause`, in ms.
#[derive(Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByCause {
    pub rebalance: u64,
    pub member_crash: u64,
    pub member_stall: u64,
    pub leader_election: u64,
    pub coordinator_failover: u64,
    pub network: u64,
}

impl ByCause {
    pub fn parts(&self) -> [(PauseCause, u64); 6] {
        [
            (PauseCause::Rebalance, self.rebalance),
            (PauseCause::MemberCrash, self.member_crash),
            (PauseCause::MemberStall, self.member_stall),
            (PauseCause::LeaderElection, self.leader_election),
            (PauseCause::CoordinatorFailover, self.coordinator_failover),
            (PauseCause::Network, self.network),
        ]
    }

    pub fn total(&self) -> u64 {
        self.parts().iter().map(|(_, ms)| ms).sum()
    }
}

/// A coordinator move as the report lists it.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorEntry {
    pub at_ms: u64,
    /// `failed` (its broker crashed), `moved` (the leadership moved), `loaded`.
    pub event: &'static str,
    pub broker: Option<u32>,
}

/// The fault state, kept beside the rest of the group now.
#[derive(Debug, Default)]
pub(super) struct FaultState {
    /// What began each partition's open unavailable interval.
    pub(super) cause: Vec<PauseCause>,
    /// Unavailable µs per partition per cause (in `PauseCause::ALL` order), so that the
    /// whole-ms parts sum to the whole-ms total.
    by_cause_us: Vec<[u64; 6]>,
    /// Partitions nobody can fetch now; (member, partition) one member cannot.
    gap_all: Vec<bool>,
    gap_member: BTreeSet<(usize, usize)>,
    coordinator_unknown_since: Vec<Option<SimTime>>,
    pub(super) coordinator_unknown_us: Vec<u64>,
    pub(super) poll_blocked_ms: Vec<u64>,
    /// A coordinator fail-over is on since then (until the new one has loaded the group and a
    /// session has passed, rebalances it causes are counted to it).
    failover_since: Option<SimTime>,
    failover_until: Option<SimTime>,
    pub(super) coordinator: Vec<CoordinatorEntry>,
    /// Broker or network facts were seen: the per-member figures are reported.
    pub(super) seen: bool,
    session_ms: u64,
}

impl FaultState {
    pub(super) fn new(scenario: &Scenario, partitions: usize) -> Self {
        let n = scenario.members.len();
        FaultState {
            cause: vec![PauseCause::Rebalance; partitions],
            by_cause_us: vec![[0; 6]; partitions],
            gap_all: vec![false; partitions],
            coordinator_unknown_since: vec![None; n],
            coordinator_unknown_us: vec![0; n],
            poll_blocked_ms: vec![0; n],
            session_ms: scenario
                .member_specs_ever()
                .map(|m| m.settings.session_timeout_ms)
                .max()
                .unwrap_or(0),
            ..FaultState::default()
        }
    }

    /// Partition `p`'s unavailable interval of `us` closed: counted to what began it.
    pub(super) fn count_unavailable(&mut self, p: usize, us: u64) {
        let i = PauseCause::ALL
            .iter()
            .position(|&c| c == self.cause[p])
            .unwrap_or(0);
        self.by_cause_us[p][i] += us;
    }

    pub(super) fn by_cause(&self) -> ByCause {
        let mut ms = [0u64; 6];
        for per in &self.by_cause_us {
            for (i, us) in per.iter().enumerate() {
                ms[i] += us / 1000;
            }
        }
        ByCause {
            rebalance: ms[0],
            member_crash: ms[1],
            member_stall: ms[2],
            leader_election: ms[3],
            coordinator_failover: ms[4],
            network: ms[5],
        }
    }

    /// Open intervals end with the run.
    pub(super) fn end(&mut self, end: SimTime) {
        for m in 0..self.coordinator_unknown_since.len() {
            if let Some(since) = self.coordinator_unknown_since[m].take() {
                self.coordinator_unknown_us[m] += (end - since).as_micros();
            }
        }
    }
}

impl Ledger {
    /// Why member `m`'s partitions stop in a rebalance now.
    pub(super) fn rebalance_cause(&self, now: SimTime, m: usize) -> PauseCause {
        let f = &self.faults;
        let in_failover =
            f.failover_since.is_some_and(|s| s <= now) && f.failover_until.is_none_or(|u| now <= u);
        if self.crashed_at[m].is_some() {
            PauseCause::MemberCrash
        } else if in_failover {
            PauseCause::CoordinatorFailover
        } else if f.coordinator_unknown_since[m].is_some() {
            PauseCause::Network
        } else {
            PauseCause::Rebalance
        }
    }

    /// The member processing `p` cannot fetch it now.
    pub(super) fn fetch_blocked(&self, p: usize, m: usize) -> bool {
        self.faults.gap_all.get(p).copied().unwrap_or(false)
            || self.faults.gap_member.contains(&(m, p))
    }

    pub(super) fn observe_fault(&mut self, now: SimTime, fact: &Fact) {
        self.faults.seen = true;
        match *fact {
            Fact::FetchGap {
                partition: p,
                member,
                cause,
                open,
            } => {
                match member {
                    None => self.faults.gap_all[p] = open,
                    Some(m) if open => {
                        self.faults.gap_member.insert((m, p));
                    }
                    Some(m) => {
                        self.faults.gap_member.remove(&(m, p));
                    }
                }
                let Some(m) = self.active[p] else {
                    return;
                };
                if self.fetch_blocked(p, m) {
                    let cause = match cause {
                        GapCause::LeaderElection => PauseCause::LeaderElection,
                        GapCause::Network => PauseCause::Network,
                    };
                    self.open_unavailable(now, p, cause);
                } else {
                    self.close_unavailable(now, p);
                }
            }
            Fact::CoordinatorUnknown { member, .. } => {
                self.faults.coordinator_unknown_since[member].get_or_insert(now);
            }
            Fact::CoordinatorFound { member, .. } => {
                if let Some(since) = self.faults.coordinator_unknown_since[member].take() {
                    self.faults.coordinator_unknown_us[member] += (now - since).as_micros();
                }
            }
            Fact::PollBlockedOnCoordinator { member, ms } => {
                self.faults.poll_blocked_ms[member] += ms;
            }
            Fact::CoordinatorFailed { broker } => {
                self.faults.failover_since.get_or_insert(now);
                self.faults.failover_until = None;
                self.faults.coordinator.push(CoordinatorEntry {
                    at_ms: now.as_millis(),
                    event: "failed",
                    broker: Some(broker),
                });
            }
            Fact::CoordinatorMoved { to, .. } => {
                self.faults.failover_since.get_or_insert(now);
                self.faults.failover_until = None;
                self.faults.coordinator.push(CoordinatorEntry {
                    at_ms: now.as_millis(),
                    event: "moved",
                    broker: to,
                });
            }
            Fact::CoordinatorLoaded => {
                let broker = self.faults.coordinator.last().and_then(|e| e.broker);
                self.faults.failover_until =
                    Some(now + crate::sim::time::Duration::from_millis(self.faults.session_ms));
                self.faults.coordinator.push(CoordinatorEntry {
                    at_ms: now.as_millis(),
                    event: "loaded",
                    broker,
                });
            }
            _ => {}
        }
    }
}
