//! Constant-rate producers. A topic written at `r` records per second spreads them evenly over
//! its partitions (null keys: Kafka's sticky partitioner spreads batches; over time each
//! partition gets `r / n`); when partitions are added the rate is spread over the new count from
//! then on. The log end offset is a closed-form function of time, so a run costs events per
//! poll, not per record.

use crate::scenario::Scenario;
use crate::sim::SimTime;

/// A stretch of time over which a partition grows at `num / den` records per second.
#[derive(Clone, Copy, Debug)]
struct Segment {
    start_us: u64,
    end_us: u64,
    num: u64,
    den: u64,
}

impl Segment {
    /// Records appended in this segment by `t_us`.
    fn count_by(&self, t_us: u64) -> u64 {
        if t_us <= self.start_us || self.num == 0 {
            return 0;
        }
        let elapsed = t_us.min(self.end_us) - self.start_us;
        ((u128::from(self.num) * u128::from(elapsed)) / (u128::from(self.den) * 1_000_000)) as u64
    }
}

/// Log end offsets of every partition as functions of time.
pub struct Logs {
    /// Per global partition index, its segments in time order.
    segments: Vec<Vec<Segment>>,
}

impl Logs {
    pub fn new(scenario: &Scenario) -> Self {
        let mut per_topic = vec![0u64; scenario.topics.len()];
        for p in &scenario.producers {
            per_topic[p.topic] += p.records_per_sec;
        }
        let mut segments = Vec::new();
        for (t, topic) in scenario.topics.iter().enumerate() {
            // The topic's partition count over time: (from, count) steps.
            let mut steps = vec![(0u64, topic.partitions)];
            steps.extend(topic.resizes.iter().map(|&(at, n)| (at * 1000, n)));
            for p in 0..topic.max_partitions() {
                let mut list = Vec::new();
                for (i, &(from, count)) in steps.iter().enumerate() {
                    let to = steps.get(i + 1).map_or(u64::MAX, |&(next, _)| next);
                    if p < count {
                        list.push(Segment {
                            start_us: from,
                            end_us: to,
                            num: per_topic[t],
                            den: u64::from(count),
                        });
                    }
                }
                segments.push(list);
            }
        }
        Logs { segments }
    }

    /// Records appended to partition `p` by time `t`.
    pub fn end_offset(&self, p: usize, t: SimTime) -> u64 {
        let us = t.as_micros();
        self.segments[p].iter().map(|s| s.count_by(us)).sum()
    }

    /// When partition `p` gets its record number `offset` (the first time its end offset
    /// exceeds `offset`), or `None` if it never does.
    pub fn time_of(&self, p: usize, offset: u64) -> Option<SimTime> {
        let mut before = 0u64;
        for s in &self.segments[p] {
            if s.num == 0 {
                continue;
            }
            let total = s.count_by(s.end_us);
            if before + total > offset {
                // Smallest t with num * (t - start) >= (k + 1) * den * 1e6, k = offset - before.
                let need = u128::from(offset - before + 1) * u128::from(s.den) * 1_000_000;
                let dt = need.div_ceil(u128::from(s.num)) as u64;
                return Some(SimTime::from_micros(s.start_us + dt));
            }
            before += total;
        }
        None
    }

    pub fn partitions(&self) -> usize {
        self.segments.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_their_times_agree() {
        let s = Segment {
            start_us: 1_000_000,
            end_us: u64::MAX,
            num: 30,
            den: 3,
        };
        let logs = Logs {
            segments: vec![vec![s]],
        };
        // 10 records per second from 1 s.
        assert_eq!(logs.end_offset(0, SimTime::from_millis(1_000)), 0);
        assert_eq!(logs.end_offset(0, SimTime::from_millis(2_000)), 10);
        assert_eq!(logs.time_of(0, 0), Some(SimTime::from_millis(1_100)));
        assert_eq!(logs.time_of(0, 9), Some(SimTime::from_millis(2_000)));
        for k in 0..50 {
            let t = logs.time_of(0, k).unwrap();
            assert_eq!(logs.end_offset(0, t), k + 1);
            assert_eq!(
                logs.end_offset(0, SimTime::from_micros(t.as_micros() - 1)),
                k
            );
        }
    }
}
