//! Swarm testing: each seed switches whole fault kinds on or off (Groce et al., "Swarm
//! Testing", 2012: a configuration that leaves some kinds out reaches behaviours that an
//! every-kind mix drowns). A kind that is off never appears in the seed's fault plan.
//!
//! Adding a fault kind (a broker crash, a network partition): a variant here and in
//! [`FaultKind::ALL`], its draw in `generate.rs` (`draw_fault`), and its entry in
//! `case::Action`.

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
}

impl FaultKind {
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
