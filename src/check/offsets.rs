//! always `offset_regression`: a partition's committed offset (as `__consumer_offsets` holds it)
//! never moves backwards. Its own record of every committed offset, from the coordinator's
//! `OffsetCommitted` facts.

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
