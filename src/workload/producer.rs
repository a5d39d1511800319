//! Constant-rate producers. A topic written at `r` records per second spreads them evenly over
//! its partitions (null keys: Kafka's sticky partitioner spreads batches; over time each
//! partition gets `r / n`). The log end offset is a closed-form function of time, so a run
//! costs events per poll, not per record.

use crate::scenario::Scenario;
use crate::sim::SimTime;

/// Log end offsets of every partition as functions of time.
pub struct Logs {
    /// Records per second per partition (global partition index), kept as a rational
    /// `numerator / partitions` to stay exact.
    rate_num: Vec<u64>,
    rate_den: Vec<u64>,
}

impl Logs {
    pub fn new(scenario: &Scenario, partition_topics: &[usize]) -> Self {
        let mut per_topic = vec![0u64; scenario.topics.len()];
        for p in &scenario.producers {
            per_topic[p.topic] += p.records_per_sec;
        }
        let rate_num = partition_topics.iter().map(|&t| per_topic[t]).collect();
        let rate_den = partition_topics
            .iter()
            .map(|&t| u64::from(scenario.topics[t].partitions))
            .collect();
        Logs { rate_num, rate_den }
    }

    /// Records appended to partition `p` by time `t`.
    pub fn end_offset(&self, p: usize, t: SimTime) -> u64 {
        let num = u128::from(self.rate_num[p]) * u128::from(t.as_micros());
        (num / (u128::from(self.rate_den[p]) * 1_000_000)) as u64
    }

    /// When partition `p` gets its record number `offset` (the first time its end offset
    /// exceeds `offset`), or `None` if nothing is produced to it.
    pub fn time_of(&self, p: usize, offset: u64) -> Option<SimTime> {
        if self.rate_num[p] == 0 {
            return None;
        }
        // Smallest t (us) with rate_num * t >= (offset + 1) * rate_den * 1e6.
        let need = u128::from(offset + 1) * u128::from(self.rate_den[p]) * 1_000_000;
        let r = u128::from(self.rate_num[p]);
        Some(SimTime::from_micros(need.div_ceil(r) as u64))
    }

    pub fn partitions(&self) -> usize {
        self.rate_num.len()
    }
}
