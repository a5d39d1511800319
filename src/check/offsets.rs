//! always `offset_regression`: a partition's committed offset (as `__consumer_offsets` holds it)
//! never moves backwards, unless the offset its owner goes below was a zombie's (committed by a
//! member that did not own the partition then: Kafka's coordinator checks a commit's
//! generation and member, not who owns what, so a member the group moved on from without
//! telling it commits what it processed meanwhile, and the owner's next commit of its own
//! position goes below that), or the commit that goes below is a zombie's the coordinator
//! writes: KIP-848's, freed on its own word (`Ownership::is_freed_zombie`), still at its
//! current member epoch; always `committed_offset_lost`: an OffsetFetch reads at least
//! what was last committed (a coordinator fail-over loses nothing that was written). Its own
//! record of every committed offset, from the coordinator's `OffsetCommitted` and
//! `CommittedRead` facts.

use super::{Findings, Verdict};
use crate::facts::Fact;
use crate::sim::SimTime;

/// Who wrote a commit, as the ownership record has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Committer {
    /// The partition's owner.
    Owner,
    /// A KIP-848 member the coordinator freed the partition from on its own word, moving it to
    /// a new epoch, and handed on while the member went on holding it: its commits at that
    /// epoch are written whatever they name, and may go below the new owner's (fuzz
    /// `--cluster-faults` seed 11643602).
    FreedZombie,
    /// Anyone else (a zombie, or a read).
    Other,
}

pub struct Offsets {
    /// Per partition: the committed offset, and whether the partition's owner committed it.
    committed: Vec<Option<(u64, bool)>>,
}

impl Offsets {
    pub fn new(partitions: usize) -> Self {
        Offsets {
            committed: vec![None; partitions],
        }
    }

    /// One fact; `committer` is who wrote it, for a commit.
    pub fn observe(
        &mut self,
        now: SimTime,
        fact: &Fact,
        committer: Committer,
        found: &mut Findings,
    ) {
        if let Fact::CommittedRead { partition, offset } = *fact {
            let written = self.committed[partition].map(|(w, _)| w);
            if let Some(written) = written.filter(|&w| offset < Some(w)) {
                let verdict = Verdict::CommittedOffsetLost {
                    partition: found.partition(partition),
                    read: offset,
                    written,
                };
                found.violation(now, verdict);
            }
            return;
        }
        let Fact::OffsetCommitted {
            member,
            partition,
            offset,
        } = fact
        else {
            return;
        };
        let p = *partition;
        let by_owner = committer == Committer::Owner;
        let below = self.committed[p].filter(|&(old, old_by_owner)| {
            *offset < old && (old_by_owner || !by_owner) && committer != Committer::FreedZombie
        });
        if let Some((old, _)) = below {
            let verdict = Verdict::OffsetRegression {
                member: found.member(*member),
                partition: found.partition(p),
                offset: *offset,
                committed: old,
            };
            found.violation(now, verdict);
        }
        self.committed[p] = Some((*offset, by_owner));
    }
}
