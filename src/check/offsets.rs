//! always `offset_regression`: a partition's committed offset (as `__consumer_offsets` holds it)
//! never moves backwards; always `committed_offset_lost`: an OffsetFetch reads at least what was
//! last committed (a coordinator fail-over loses nothing that was written). Its own record of
//! every committed offset, from the coordinator's `OffsetCommitted` and `CommittedRead` facts.

use super::{Findings, Property};
use crate::facts::Fact;
use crate::sim::SimTime;

pub struct Offsets {
    committed: Vec<Option<u64>>,
}

impl Offsets {
    pub fn new(partitions: usize) -> Self {
        Offsets {
            committed: vec![None; partitions],
        }
    }

    pub fn observe(&mut self, now: SimTime, fact: &Fact, found: &mut Findings) {
        if let Fact::CommittedRead { partition, offset } = *fact {
            if let Some(written) = self.committed[partition].filter(|&w| offset < Some(w)) {
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
        if let Some(old) = self.committed[p].filter(|&old| *offset < old) {
            let names = found.names;
            let detail = format!(
                "{} committed {} for {} below the committed {}",
                names.members[*member], offset, names.partitions[p], old
            );
            found.violation(now, Property::OffsetRegression, detail);
        }
        self.committed[p] = Some(*offset);
    }
}
