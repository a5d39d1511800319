//! The partition-local join of seed 000: each member keeps the latest price per symbol from the
//! price partitions it processes; a notification is a local hit when its symbol's price is in
//! that member's map, else a miss with exactly one cause, in DESIGN.md's order of precedence:
//! not co-located, no price produced yet, out of order, restoring, state empty.

use crate::cluster::PartitionLookup;
use crate::facts::Miss;
use crate::scenario::JoinApp;
use crate::workload::producer::Logs;
use std::collections::{BTreeMap, BTreeSet};

/// One member's join state: the latest price per symbol (key id -> price partition, offset).
#[derive(Clone, Debug, Default)]
pub struct JoinState {
    prices: BTreeMap<u32, (usize, u64)>,
}

/// A member's fetch positions, as the join reads them (the consumer keeps them).
pub trait Positions {
    /// The next offset to process of owned partition `p`.
    fn position(&self, p: usize) -> Option<u64>;
}

impl Positions for BTreeMap<usize, u64> {
    fn position(&self, p: usize) -> Option<u64> {
        self.get(&p).copied()
    }
}

/// What the classification needs to know about the member.
pub struct MemberView<'a> {
    pub owned: &'a [usize],
    /// Next offset to process per owned partition.
    pub positions: &'a dyn Positions,
    /// Price partitions whose state is being rebuilt.
    pub restoring: &'a BTreeSet<usize>,
}

impl JoinState {
    /// Is the symbol's price in the map (a local hit)?
    pub fn has(&self, key: u32) -> bool {
        self.prices.contains_key(&key)
    }

    pub fn apply_price(&mut self, key: u32, partition: usize, offset: u64) {
        self.prices.insert(key, (partition, offset));
    }

    /// Forgets what came from `partitions` (an in-memory map rebuilt after a revocation).
    pub fn forget(&mut self, partitions: &[usize]) {
        let gone = PartitionLookup::of(partitions);
        self.prices.retain(|_, (p, _)| !gone.contains(p));
    }

    /// Remembers a price restored from a changelog or a standby (newer than anything stale).
    pub fn restore(&mut self, key: u32, partition: usize, offset: u64) {
        self.prices.insert(key, (partition, offset));
    }

    /// Classifies a notification for `key` produced at `time_us`; `default_home` is the price
    /// partition Kafka's default partitioner picks for the key (where a price would go).
    pub fn classify(
        &self,
        app: &JoinApp,
        logs: &Logs,
        view: &MemberView,
        key: u32,
        time_us: u64,
        default_home: usize,
    ) -> Result<(), Miss> {
        if self.prices.contains_key(&key) {
            return Ok(());
        }
        let writes = logs.writes(app.prices, key);
        let latest = writes[..writes.partition_point(|w| w.time_us <= time_us)].last();
        // Where this symbol's price lives: where its latest price went, or where one would go.
        let homes: Vec<(usize, Option<u64>)> = match latest {
            Some(w) => logs.appends(w).iter().map(|&(p, o)| (p, Some(o))).collect(),
            None => vec![(default_home, None)],
        };
        let local: Vec<(usize, Option<u64>)> = homes
            .into_iter()
            .filter(|(p, _)| view.owned.contains(p))
            .collect();
        if local.is_empty() {
            return Err(Miss::NotCoLocated);
        }
        if latest.is_none() {
            return Err(Miss::NoPriceYet);
        }
        let (partition, offset) = local
            .iter()
            .map(|&(p, o)| (p, o.expect("a written price has an offset")))
            .next()
            .expect("a local home");
        let position = view.positions.position(partition).unwrap_or(0);
        if offset >= position {
            return Err(Miss::OutOfOrder);
        }
        if view.restoring.contains(&partition) {
            return Err(Miss::Restoring);
        }
        // Before this member's start position and never restored (or dropped since).
        Err(Miss::StateEmpty)
    }
}
