//! always `assigned_before_released` (KIP-848): the coordinator hands a partition to a member
//! only once every other member of the group has stopped reporting it as owned (Kafka's
//! unreleased-partition rule: a partition moves only after its owner's heartbeat no longer
//! lists it). Fed by what the heartbeats said (`OwnedReported`) and what the answers gave
//! (`AssignmentSent`), as the coordinator saw them; a member that leaves or is fenced releases
//! everything (the broker frees its partitions at once).

use super::{Findings, Property};
use crate::facts::Fact;
use crate::sim::SimTime;
use std::collections::BTreeMap;

#[derive(Default)]
pub struct Handover {
    /// Each member's last report of what it owns.
    reported: BTreeMap<usize, Vec<usize>>,
    /// Each member's assignment as last sent: an answer repeats the whole assignment, and only
    /// what it adds is handed over then.
    sent: BTreeMap<usize, Vec<usize>>,
}

impl Handover {
    pub fn observe(&mut self, now: SimTime, fact: &Fact, found: &mut Findings) {
        match fact {
            Fact::OwnedReported { member, partitions } => {
                self.reported.insert(*member, partitions.clone());
            }
            Fact::AssignmentSent { member, partitions } => {
                let before = self.sent.insert(*member, partitions.clone());
                let before = before.unwrap_or_default();
                for &p in partitions.iter().filter(|p| !before.contains(p)) {
                    let holder = self
                        .reported
                        .iter()
                        .find(|(m, owned)| *m != member && owned.contains(&p));
                    if let Some((o, _)) = holder {
                        let names = found.names;
                        let detail = format!(
                            "{} given to {} while {} still reports owning it",
                            names.partitions[p], names.members[*member], names.members[*o]
                        );
                        found.violation(now, Property::AssignedBeforeReleased, detail);
                    }
                }
            }
            Fact::MemberRemoved { member, .. } => {
                self.reported.remove(member);
                self.sent.remove(member);
            }
            _ => {}
        }
    }
}
