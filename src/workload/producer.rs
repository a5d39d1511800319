//! Producers and the partition logs they write.
//!
//! - Null-key streams: a topic written at `r` records per second spreads them evenly over its
//!   partitions (Kafka's sticky partitioner spreads batches; over time each partition gets
//!   `r / n`), re-spread when partitions are added. Their log end offsets are closed-form
//!   functions of time, so a run costs events per poll, not per record.
//! - Keyed producers (streams and scripts): every record is generated up front from the seed,
//!   placed by Kafka's default partitioner (or a KIP-837 stream partitioner) with the partition
//!   count at its produce time, and appended to its partitions' logs.

use super::partitioner::default_partition;
use crate::cluster::PartitionSpace;
use crate::scenario::{KeyDistribution, ProducerKind, Scenario, StreamPartitioner};
use crate::sim::rng::Stream;
use crate::sim::{RngStreams, SimTime};
use std::collections::BTreeMap;

/// A stretch of time over which a null-key partition grows at `num / den` records per second.
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
        // 64-bit arithmetic when it cannot overflow (always, for realistic rates and runs).
        match (
            self.num.checked_mul(elapsed),
            self.den.checked_mul(1_000_000),
        ) {
            (Some(a), Some(b)) => a / b,
            _ => {
                ((u128::from(self.num) * u128::from(elapsed)) / (u128::from(self.den) * 1_000_000))
                    as u64
            }
        }
    }
}

/// One append of a keyed record to a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Produce time (the record's timestamp), microseconds.
    pub time_us: u64,
    /// Index into [`Logs::keys`].
    pub key: u32,
}

/// Where one keyed record went: its appends are `Logs::appends(write)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    pub time_us: u64,
    first_append: u32,
    appends: u32,
}

/// Every partition's log, as functions of time, and the keyed records in them.
pub struct Logs {
    segments: Vec<Vec<Segment>>,
    records: Vec<Vec<Record>>,
    /// Key names of keyed records.
    pub keys: Vec<String>,
    /// Per (topic, key): every write of that key, in time order.
    writes: BTreeMap<(usize, u32), Vec<Write>>,
    /// `(global partition, offset)` of every keyed append, in write order (several per
    /// broadcast record).
    append_pool: Vec<(usize, u64)>,
    /// Logical keyed records produced, and those a stream partitioner dropped, by time.
    keyed_produced: Vec<u64>,
    keyed_dropped: Vec<u64>,
}

/// Logical record counts by a point in time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Produced {
    pub produced: u64,
    pub written: u64,
    pub dropped: u64,
}

impl Logs {
    pub fn new(scenario: &Scenario, space: &PartitionSpace, streams: &RngStreams) -> Self {
        let first: Vec<usize> = (0..scenario.topics.len()).map(|t| space.first(t)).collect();
        let total = space.len();
        let mut logs = Logs {
            segments: vec![Vec::new(); total],
            records: vec![Vec::new(); total],
            keys: Vec::new(),
            writes: BTreeMap::new(),
            append_pool: Vec::new(),
            keyed_produced: Vec::new(),
            keyed_dropped: Vec::new(),
        };
        for (t, topic) in scenario.topics.iter().enumerate() {
            // Breakpoints: partition count changes and producers starting or stopping.
            let mut cuts: Vec<u64> = vec![0];
            cuts.extend(topic.resizes.iter().map(|&(at, _)| at));
            for p in scenario
                .producers
                .iter()
                .filter(|p| p.topic == t && !p.kind.is_keyed())
            {
                cuts.push(p.start_ms);
                cuts.push(p.end_ms);
            }
            cuts.sort_unstable();
            cuts.dedup();
            for (i, &from) in cuts.iter().enumerate() {
                let to = cuts.get(i + 1).copied();
                let rate: u64 = scenario
                    .producers
                    .iter()
                    .filter(|p| p.topic == t && p.start_ms <= from && from < p.end_ms)
                    .filter_map(|p| match p.kind {
                        ProducerKind::NullKeys { records_per_sec } => Some(records_per_sec),
                        _ => None,
                    })
                    .sum();
                if rate == 0 {
                    continue;
                }
                let count = topic.partitions_at(from);
                for p in 0..count as usize {
                    logs.segments[first[t] + p].push(Segment {
                        start_us: from * 1000,
                        end_us: to.map_or(u64::MAX, |t| t * 1000),
                        num: rate,
                        den: u64::from(count),
                    });
                }
            }
        }
        logs.generate_keyed(scenario, streams, &first);
        logs
    }

    /// Generates every keyed record and appends it where its partitioner sends it.
    fn generate_keyed(&mut self, scenario: &Scenario, streams: &RngStreams, first: &[usize]) {
        let mut key_ids: BTreeMap<String, u32> = BTreeMap::new();
        // (time, producer, sequence, topic, key)
        let mut all: Vec<(u64, usize, u64, usize, u32)> = Vec::new();
        for (i, p) in scenario.producers.iter().enumerate() {
            let mut intern = |k: &String| -> u32 {
                let next = key_ids.len() as u32;
                *key_ids.entry(k.clone()).or_insert_with(|| {
                    self.keys.push(k.clone());
                    next
                })
            };
            match &p.kind {
                ProducerKind::NullKeys { .. } => {}
                ProducerKind::Keyed {
                    records_per_sec,
                    keys,
                    distribution,
                } => {
                    let ids: Vec<u32> = keys.iter().map(&mut intern).collect();
                    let mut rng = streams.stream(&format!("producer-{i}-keys"));
                    let picker = KeyPicker::new(*distribution, ids.len());
                    let span_us = (p.end_ms - p.start_ms) * 1000;
                    let mut j = 0u64;
                    loop {
                        if *records_per_sec == 0 {
                            break;
                        }
                        let offset_us = (u128::from(j) * 1_000_000)
                            .div_ceil(u128::from(*records_per_sec))
                            as u64;
                        if offset_us >= span_us {
                            break;
                        }
                        let key = ids[picker.pick(j, &mut rng)];
                        all.push((p.start_ms * 1000 + offset_us, i, j, p.topic, key));
                        j += 1;
                    }
                }
                ProducerKind::Script {
                    keys,
                    per_key,
                    interval_ms,
                } => {
                    let ids: Vec<u32> = keys.iter().map(&mut intern).collect();
                    let mut j = 0u64;
                    // Times only grow with j: the first one past the end ends the script.
                    'rounds: for _ in 0..*per_key {
                        for &key in &ids {
                            let at = j
                                .saturating_mul(*interval_ms)
                                .saturating_mul(1000)
                                .saturating_add(p.start_ms * 1000);
                            if at >= p.end_ms * 1000 {
                                break 'rounds;
                            }
                            all.push((at, i, j, p.topic, key));
                            j += 1;
                        }
                    }
                }
            }
        }
        all.sort_unstable();
        for (time_us, producer, _, topic, key) in all {
            let spec = &scenario.producers[producer];
            let count = scenario.topics[topic].partitions_at(time_us / 1000);
            let name = &self.keys[key as usize];
            let applies = spec
                .stream_partitioner_keys
                .as_ref()
                .is_none_or(|ks| ks.contains(name));
            let targets: Vec<u32> = match spec.stream_partitioner.filter(|_| applies) {
                Some(StreamPartitioner::Drop) => Vec::new(),
                Some(StreamPartitioner::Broadcast) => (0..count).collect(),
                Some(StreamPartitioner::Default) | None => {
                    vec![default_partition(name.as_bytes(), count)]
                }
            };
            self.keyed_produced.push(time_us);
            if targets.is_empty() {
                self.keyed_dropped.push(time_us);
            }
            let first_append = self.append_pool.len() as u32;
            for &t in &targets {
                let global = first[topic] + t as usize;
                self.append_pool
                    .push((global, self.records[global].len() as u64));
                self.records[global].push(Record { time_us, key });
            }
            self.writes.entry((topic, key)).or_default().push(Write {
                time_us,
                first_append,
                appends: targets.len() as u32,
            });
        }
    }

    /// Records appended to partition `p` by time `t`.
    pub fn end_offset(&self, p: usize, t: SimTime) -> u64 {
        let us = t.as_micros();
        let closed: u64 = match self.segments[p].as_slice() {
            [] => 0,
            [only] => only.count_by(us),
            many => many.iter().map(|s| s.count_by(us)).sum(),
        };
        let records = &self.records[p];
        if records.is_empty() {
            closed
        } else {
            closed + records.partition_point(|r| r.time_us <= us) as u64
        }
    }

    /// When partition `p` gets its record number `offset` (the first time its end offset
    /// exceeds `offset`), or `None` if it never does.
    pub fn time_of(&self, p: usize, offset: u64) -> Option<SimTime> {
        if !self.records[p].is_empty() {
            return self.records[p]
                .get(offset as usize)
                .map(|r| SimTime::from_micros(r.time_us));
        }
        let mut before = 0u64;
        for s in &self.segments[p] {
            if s.num == 0 {
                continue;
            }
            let total = s.count_by(s.end_us);
            if before + total > offset {
                // Smallest t with num * (t - start) >= (k + 1) * den * 1e6, k = offset - before
                // (64-bit when it cannot overflow).
                let k = offset - before + 1;
                let dt = match k.checked_mul(s.den).and_then(|x| x.checked_mul(1_000_000)) {
                    Some(need) => need.div_ceil(s.num),
                    None => (u128::from(k) * u128::from(s.den) * 1_000_000)
                        .div_ceil(u128::from(s.num)) as u64,
                };
                return Some(SimTime::from_micros(s.start_us + dt));
            }
            before += total;
        }
        None
    }

    /// The keyed record at `offset` of partition `p`, if the partition holds keyed records.
    pub fn record(&self, p: usize, offset: u64) -> Option<&Record> {
        self.records[p].get(offset as usize)
    }

    /// `(global partition, offset)` of each append of a write.
    pub fn appends(&self, w: &Write) -> &[(usize, u64)] {
        &self.append_pool[w.first_append as usize..(w.first_append + w.appends) as usize]
    }

    /// Records appended to partition `p` by time `t`, knowing at least `from` were: a short
    /// scan forward from `from`, which is what a consumer at position `from` asks.
    pub fn end_offset_from(&self, p: usize, from: u64, t: SimTime) -> u64 {
        let records = &self.records[p];
        if records.is_empty() {
            return self.end_offset(p, t);
        }
        let us = t.as_micros();
        let start = (from as usize).min(records.len());
        // Gallop: double the step until past `t`, then binary search that window.
        let mut step = 1usize;
        let mut lo = start;
        while lo + step <= records.len() && records[lo + step - 1].time_us <= us {
            lo += step;
            step *= 2;
        }
        let hi = (lo + step).min(records.len());
        (lo + records[lo..hi].partition_point(|r| r.time_us <= us)) as u64
    }

    /// The compacted state of keyed partition `p` below `upto`: each key's latest offset.
    pub fn compacted(&self, p: usize, upto: u64) -> Vec<(u32, u64)> {
        let end = (upto as usize).min(self.records[p].len());
        let mut latest: BTreeMap<u32, u64> = BTreeMap::new();
        for (offset, r) in self.records[p][..end].iter().enumerate() {
            latest.insert(r.key, offset as u64);
        }
        latest.into_iter().collect()
    }

    /// Every write of `key` to `topic`, in time order.
    pub fn writes(&self, topic: usize, key: u32) -> &[Write] {
        self.writes.get(&(topic, key)).map_or(&[], Vec::as_slice)
    }

    pub fn partitions(&self) -> usize {
        self.segments.len()
    }

    /// Logical records produced, appends written, and records dropped by time `t`.
    pub fn produced_by(&self, t: SimTime) -> Produced {
        let us = t.as_micros();
        let appends: u64 = (0..self.partitions()).map(|p| self.end_offset(p, t)).sum();
        let keyed_appends: u64 = self
            .records
            .iter()
            .map(|r| r.partition_point(|r| r.time_us <= us) as u64)
            .sum();
        let keyed = self.keyed_produced.partition_point(|&x| x <= us) as u64;
        let dropped = self.keyed_dropped.partition_point(|&x| x <= us) as u64;
        Produced {
            produced: appends - keyed_appends + keyed,
            written: appends,
            dropped,
        }
    }
}

/// Draws the next key of a keyed stream.
struct KeyPicker {
    distribution: KeyDistribution,
    n: usize,
    /// Skewed: cumulative integer weights of 1/(i+1).
    cumulative: Vec<u64>,
}

impl KeyPicker {
    fn new(distribution: KeyDistribution, n: usize) -> Self {
        let mut cumulative = Vec::new();
        if distribution == KeyDistribution::Skewed {
            let mut sum = 0u64;
            for i in 0..n as u64 {
                sum += (1u64 << 32) / (i + 1);
                cumulative.push(sum);
            }
        }
        KeyPicker {
            distribution,
            n,
            cumulative,
        }
    }

    fn pick(&self, j: u64, rng: &mut Stream) -> usize {
        match self.distribution {
            KeyDistribution::Cycle => (j % self.n as u64) as usize,
            KeyDistribution::Uniform => rng.between(0, self.n as u64 - 1) as usize,
            KeyDistribution::Skewed => {
                let total = *self.cumulative.last().expect("at least one key");
                let x = rng.between(0, total - 1);
                self.cumulative.partition_point(|&c| c <= x)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_offsets_and_their_times_agree() {
        let s = Segment {
            start_us: 1_000_000,
            end_us: u64::MAX,
            num: 30,
            den: 3,
        };
        let logs = Logs {
            segments: vec![vec![s]],
            records: vec![Vec::new()],
            keys: Vec::new(),
            writes: BTreeMap::new(),
            append_pool: Vec::new(),
            keyed_produced: Vec::new(),
            keyed_dropped: Vec::new(),
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

    #[test]
    fn end_offset_from_agrees_with_the_binary_search() {
        let times = [1u64, 1, 2, 5, 8, 8, 8, 13, 21, 34];
        let logs = Logs {
            segments: vec![Vec::new()],
            records: vec![times
                .iter()
                .map(|&t| Record { time_us: t, key: 0 })
                .collect()],
            keys: Vec::new(),
            writes: BTreeMap::new(),
            append_pool: Vec::new(),
            keyed_produced: Vec::new(),
            keyed_dropped: Vec::new(),
        };
        for t in 0..40 {
            let at = SimTime::from_micros(t);
            let want = logs.end_offset(0, at);
            for from in 0..=want {
                assert_eq!(logs.end_offset_from(0, from, at), want, "t {t} from {from}");
            }
        }
    }

    #[test]
    fn skewed_keys_favour_the_first() {
        let picker = KeyPicker::new(KeyDistribution::Skewed, 10);
        let mut rng = Stream::derive(1, "t");
        let mut counts = [0u32; 10];
        for j in 0..10_000 {
            counts[picker.pick(j, &mut rng)] += 1;
        }
        assert!(
            counts[0] > counts[1] && counts[1] > counts[9] && counts[9] > 0,
            "{counts:?}"
        );
    }
}
