//! always `offset_regression`: a partition's committed offset (as `__consumer_offsets` holds it)
//! never moves backwards, unless the offset its owner goes below was a zombie's (committed by a
//! member that did not own the partition then: Kafka's coordinator checks a commit's
//! generation and member, not who owns what, so a member the group moved on from without
//! telling it commits what it processed meanwhile, and the owner's next commit of its own
//! position goes below that); always `committed_offset_lost`: an OffsetFetch reads at least
//! what was last committed (a coordinator fail-over loses nothing that was written). Its own
//! record of every committed offset, from the coordinator's `OffsetCommitted` and
//! `CommittedRead` facts.

use super::{Findings, Property};
use crate::facts::Fact;
use crate::sim::SimTime;

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

    /// One fact; `owner` is who owns the partition it names, as the ownership record has it.
    pub fn observe(
        &mut self,
        now: SimTime,
        fact: &Fact,
        owner: Option<usize>,
        found: &mut Findings,
    ) {
        if let Fact::CommittedRead { partition, offset } = *fact {
            let written = self.committed[partition].map(|(w, _)| w);
            if let Some(written) = written.filter(|&w| offset < Some(w)) {
                let names = found.names;
                let read = offset.map_or("none".to_string(), |o| o.to_string());
                let detail = format!(
                    "{} reads committed offset {read}, below the {written} committed before",
                    names.partitions[partition]
                );
                found.violation(now, Property::CommittedOffsetLost, detail);
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
        let by_owner = owner == Some(*member);
        let below = self.committed[p]
            .filter(|&(old, old_by_owner)| *offset < old && (old_by_owner || !by_owner));
        if let Some((old, _)) = below {
            let names = found.names;
            let detail = format!(
                "{} committed {} for {} below the committed {}",
                names.members[*member], offset, names.partitions[p], old
            );
            found.violation(now, Property::OffsetRegression, detail);
        }
        self.committed[p] = Some((*offset, by_owner));
    }
}
