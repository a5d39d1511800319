//! always `assigned_before_released` (KIP-848): the coordinator hands a partition to a member
//! only once every other member of the group has stopped reporting it as owned (Kafka's
//! unreleased-partition rule: a partition moves only after its owner's heartbeat no longer
//! lists it). Fed by what the heartbeats said (`OwnedReported`) and what the answers gave
//! (`AssignmentSent`), as the coordinator saw them; a member that leaves or is fenced releases
//! everything (the broker frees its partitions at once), and a static member's temporary leave
//! (its current assignment recorded at epoch -2) releases what it was revoking: Kafka's
//! `consumerGroupStaticMemberGroupLeave` keeps its assigned partitions for its next process and
//! drops those pending revocation, free at once.
//!
//! A report counts only for what the coordinator's books still give the member: its
//! assignment as last sent, or a partition pending revocation (taken out of its assignment
//! while its report still listed it). A partition the coordinator moved on from while the
//! member's report left it out (its `onPartitionsAssigned` still running:
//! `CurrentAssignmentBuilder.ownsRevokedPartitions` finds nothing to revoke) is free, and the
//! member's later report of it, once the callback is done, is not read again: a STABLE member
//! at the target epoch is not reconciled (fuzz --cluster-faults seed 164757).

use super::{Findings, Verdict};
use crate::cluster::PartitionLookup;
use crate::facts::{ConsumerRecord, Fact};
use crate::messages::STATIC_LEAVE_EPOCH;
use crate::sim::SimTime;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Default)]
pub struct Handover {
    /// Each member's last report of what it owns.
    reported: BTreeMap<usize, PartitionLookup>,
    /// Each member's assignment as last sent: an answer repeats the whole assignment, and only
    /// what it adds is handed over then.
    sent: BTreeMap<usize, PartitionLookup>,
    /// Each member's partitions pending revocation: taken out of its assignment while it
    /// reported them, held until a report leaves them out.
    pending: BTreeMap<usize, BTreeSet<usize>>,
    /// The member behind each member id the coordinator added or put in a static member's
    /// place (a record names the member id only).
    member_of: BTreeMap<String, usize>,
}

impl Handover {
    pub fn observe(&mut self, now: SimTime, fact: &Fact, found: &mut Findings) {
        match fact {
            Fact::OwnedReported { member, partitions } => {
                let reported = PartitionLookup::of(partitions);
                if let Some(pending) = self.pending.get_mut(member) {
                    pending.retain(|p| reported.contains(p));
                }
                self.reported.insert(*member, reported);
            }
            Fact::AssignmentSent { member, partitions } => {
                let before = self.sent.insert(*member, PartitionLookup::of(partitions));
                let before = before.unwrap_or_default();
                let sent = &self.sent[member];
                let reported = self.reported.get(member);
                let pending = self.pending.entry(*member).or_default();
                for &p in before.iter().filter(|p| !sent.contains(p)) {
                    if reported.is_some_and(|owned| owned.contains(&p)) {
                        pending.insert(p);
                    }
                }
                for &p in partitions.iter().filter(|p| !before.contains(p)) {
                    let holder = self.reported.iter().find(|(m, owned)| {
                        *m != member && owned.contains(&p) && self.holds(**m, p)
                    });
                    if let Some((o, _)) = holder {
                        let verdict = Verdict::AssignedBeforeReleased {
                            partition: found.partition(p),
                            member: found.member(*member),
                            reporter: found.member(*o),
                        };
                        found.violation(now, verdict);
                    }
                }
            }
            Fact::MemberAdded {
                member, member_id, ..
            }
            | Fact::MemberReplaced { member, member_id } => {
                self.member_of.insert(member_id.clone(), *member);
            }
            Fact::MemberRemoved { member, .. } => {
                self.reported.remove(member);
                self.sent.remove(member);
                self.pending.remove(member);
            }
            Fact::ConsumerGroupRecorded(ConsumerRecord::CurrentAssignment {
                member_id,
                member_epoch: STATIC_LEAVE_EPOCH,
                ..
            }) => {
                if let Some(member) = self.member_of.get(member_id) {
                    self.pending.remove(member);
                }
            }
            _ => {}
        }
    }

    /// Whether the coordinator's books still give member `m` partition `p`: in its assignment
    /// as last sent or pending revocation. A member sent nothing yet is judged by its report
    /// alone.
    fn holds(&self, m: usize, p: usize) -> bool {
        let Some(sent) = self.sent.get(&m) else {
            return true;
        };
        sent.contains(&p) || self.pending.get(&m).is_some_and(|s| s.contains(&p))
    }
}
