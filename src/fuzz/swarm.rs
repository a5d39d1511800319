//! Swarm testing: each seed switches whole fault kinds on or off (Groce et al., "Swarm
//! Testing", 2012: a configuration that leaves some kinds out reaches behaviours that an
//! every-kind mix drowns). A kind that is off never appears in the seed's fault plan.
//!
//! Adding a fault kind: a variant here and in [`FaultKind::ALL`], its draw in `generate.rs`
//! (`draw_fault`), and its entry in `scenario::timeline::Action`.

use crate::sim::rng::Stream;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FaultKind {
    /// A member not in the group at the start joins.
    Join,
    /// A clean leave (LeaveGroup), usually followed by a restart.
    Leave,
    /// A crash (no LeaveGroup: the session expires), usually followed by a restart.
    Crash,
    /// A static member's process goes and comes back within its session timeout (KIP-345).
    StaticRestart,
    /// The poll loop blocks past `max.poll.interval.ms` (the heartbeat thread leaves).
    Stall,
    /// The poll loop blocks for less than `max.poll.interval.ms`.
    ShortStall,
    /// A member changes its subscription.
    Subscribe,
    /// A topic gains partitions.
    AddPartitions,
    /// A member restarts with another assignor list of its upgrade family.
    UpgradeRestart,
    /// A broker crashes (by id, restarted later; or the coordinator's, for good), its
    /// connections reset or hung.
    BrokerCrash,
    /// A member is cut off from the coordinator's broker, or from another broker.
    NetworkPartition,
    /// Every message takes longer for a while.
    LatencySpike,
}

impl FaultKind {
    /// The member and topic kinds, switched on by [`Swarm::draw`].
    pub const ALL: [FaultKind; 9] = [
        FaultKind::Join,
        FaultKind::Leave,
        FaultKind::Crash,
        FaultKind::StaticRestart,
        FaultKind::Stall,
        FaultKind::ShortStall,
        FaultKind::Subscribe,
        FaultKind::AddPartitions,
        FaultKind::UpgradeRestart,
    ];

    /// The broker and network kinds, switched on by their own draw (`generate::draw_cluster`),
    /// so that a seed with none of them has the case it had before they existed.
    pub const CLUSTER: [FaultKind; 3] = [
        FaultKind::BrokerCrash,
        FaultKind::NetworkPartition,
        FaultKind::LatencySpike,
    ];
}

/// The kinds a seed has switched on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swarm {
    pub on: Vec<FaultKind>,
}

impl Swarm {
    /// Each kind on with probability 1/2; at least one on.
    pub fn draw(stream: &mut Stream) -> Swarm {
        let mut on: Vec<FaultKind> = FaultKind::ALL
            .into_iter()
            .filter(|_| stream.between(0, 1) == 1)
            .collect();
        if on.is_empty() {
            let i = stream.between(0, FaultKind::ALL.len() as u64 - 1) as usize;
            on.push(FaultKind::ALL[i]);
        }
        Swarm { on }
    }

    pub fn has(&self, kind: FaultKind) -> bool {
        self.on.contains(&kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_sometimes_on_and_sometimes_off() {
        let mut stream = Stream::derive(7, "swarm");
        let swarms: Vec<Swarm> = (0..200).map(|_| Swarm::draw(&mut stream)).collect();
        for kind in FaultKind::ALL {
            assert!(swarms.iter().any(|s| s.has(kind)), "{kind:?} never on");
            assert!(swarms.iter().any(|s| !s.has(kind)), "{kind:?} never off");
        }
        assert!(swarms.iter().all(|s| !s.on.is_empty()));
    }
}
