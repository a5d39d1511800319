//! Producers and the partition logs they write.
//!
//! - Null-key streams: a topic written at `r` records per second spreads them evenly over its
//!   partitions (Kafka's sticky partitioner spreads batches; over time each partition gets
//!   `r / n`), re-spread when partitions are added. Their log end offsets are closed-form
//!   functions of time, so a run costs events per poll, not per record.
//! - Keyed producers (streams and scripts): every record is generated from the seed, the
//!   producers' streams merged in time order, placed by Kafka's default partitioner (or a KIP-837
//!   stream partitioner) with the partition count at its produce time, and appended to its
//!   partitions' logs (8 bytes an append: the produce time; the key only when an application
//!   reads it).

use super::partitioner::default_partition;
use crate::cluster::PartitionSpace;
use crate::scenario::{KeyDistribution, ProducerKind, Scenario, StreamPartitioner};
use crate::sim::rng::Stream;
use crate::sim::{RngStreams, SimTime};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

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
///
/// Keyed appends are kept compact: a partition's produce times in offset order (8 bytes an
/// append), their keys only when an application reads them (the local join, state recovery),
/// and the per-key write index only for the join. The logical records a stream partitioner
/// dropped or broadcast (the only ones whose count differs from their appends') are listed
/// apart, so the produced count needs no list of every record.
pub struct Logs {
    segments: Vec<Vec<Segment>>,
    /// Per partition: each keyed append's produce time (µs), in offset order.
    times: Vec<Vec<u64>>,
    /// Per partition: each keyed append's key, in offset order (empty without an application).
    record_keys: Vec<Vec<u32>>,
    /// Key names of keyed records.
    pub keys: Vec<String>,
    /// Per (topic, key): every write of that key, in time order (only for the local join).
    writes: BTreeMap<(usize, u32), Vec<Write>>,
    /// `(global partition, offset)` of every keyed append, in write order (several per
    /// broadcast record; only for the local join).
    append_pool: Vec<(usize, u64)>,
    /// Logical keyed records written to other than exactly one partition: (time, appends).
    irregular: Vec<(u64, u32)>,
}

/// Logical record counts by a point in time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Produced {
    pub produced: u64,
    pub written: u64,
    pub dropped: u64,
}

/// One keyed producer's records, generated in time order as they are asked for (the same
/// draws, in the same order, as generating them all at once).
struct KeyedStream {
    producer: usize,
    topic: usize,
    start_us: u64,
    end_us: u64,
    j: u64,
    kind: StreamKind,
}

enum StreamKind {
    Rate {
        records_per_sec: u64,
        ids: Vec<u32>,
        picker: KeyPicker,
        rng: Box<Stream>,
    },
    Script {
        ids: Vec<u32>,
        per_key: u64,
        interval_ms: u64,
    },
}

impl KeyedStream {
    /// The next record's (time, key), or `None` when the producer is done.
    fn next(&mut self) -> Option<(u64, u32)> {
        let j = self.j;
        let out = match &mut self.kind {
            StreamKind::Rate {
                records_per_sec,
                ids,
                picker,
                rng,
            } => {
                if *records_per_sec == 0 {
                    return None;
                }
                let offset_us =
                    (u128::from(j) * 1_000_000).div_ceil(u128::from(*records_per_sec)) as u64;
                if offset_us >= self.end_us - self.start_us {
                    return None;
                }
                let key = ids[picker.pick(j, rng)];
                (self.start_us + offset_us, key)
            }
            StreamKind::Script {
                ids,
                per_key,
                interval_ms,
            } => {
                // Rounds of every key in turn; times only grow with j, so the first one past
                // the end ends the script.
                if ids.is_empty() || j >= per_key.saturating_mul(ids.len() as u64) {
                    return None;
                }
                let at = j
                    .saturating_mul(*interval_ms)
                    .saturating_mul(1000)
                    .saturating_add(self.start_us);
                if at >= self.end_us {
                    return None;
                }
                (at, ids[(j % ids.len() as u64) as usize])
            }
        };
        self.j += 1;
        Some(out)
    }
}

impl Logs {
    pub fn new(scenario: &Scenario, space: &PartitionSpace, streams: &RngStreams) -> Self {
        let first: Vec<usize> = (0..scenario.topics.len()).map(|t| space.first(t)).collect();
        let total = space.len();
        let mut logs = Logs {
            segments: vec![Vec::new(); total],
            times: vec![Vec::new(); total],
            record_keys: vec![Vec::new(); total],
            keys: Vec::new(),
            writes: BTreeMap::new(),
            append_pool: Vec::new(),
            irregular: Vec::new(),
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

    /// Every keyed producer's stream, its keys interned in producer order.
    fn keyed_streams(&mut self, scenario: &Scenario, streams: &RngStreams) -> Vec<KeyedStream> {
        let mut key_ids: BTreeMap<String, u32> = BTreeMap::new();
        let mut out = Vec::new();
        for (i, p) in scenario.producers.iter().enumerate() {
            let mut intern = |k: &String| -> u32 {
                let next = key_ids.len() as u32;
                *key_ids.entry(k.clone()).or_insert_with(|| {
                    self.keys.push(k.clone());
                    next
                })
            };
            let kind = match &p.kind {
                ProducerKind::NullKeys { .. } => continue,
                ProducerKind::Keyed {
                    records_per_sec,
                    keys,
                    distribution,
                } => {
                    let ids: Vec<u32> = keys.iter().map(&mut intern).collect();
                    StreamKind::Rate {
                        records_per_sec: *records_per_sec,
                        picker: KeyPicker::new(*distribution, ids.len()),
                        ids,
                        rng: Box::new(streams.stream(&format!("producer-{i}-keys"))),
                    }
                }
                ProducerKind::Script {
                    keys,
                    per_key,
                    interval_ms,
                } => StreamKind::Script {
                    ids: keys.iter().map(&mut intern).collect(),
                    per_key: u64::from(*per_key),
                    interval_ms: *interval_ms,
                },
            };
            out.push(KeyedStream {
                producer: i,
                topic: p.topic,
                start_us: p.start_ms * 1000,
                end_us: p.end_ms * 1000,
                j: 0,
                kind,
            });
        }
        out
    }

    /// Generates every keyed record and appends it where its partitioner sends it: the
    /// producers' streams merged in (time, producer, sequence) order, one record at a time.
    fn generate_keyed(&mut self, scenario: &Scenario, streams: &RngStreams, first: &[usize]) {
        let mut keyed = self.keyed_streams(scenario, streams);
        // The local join (the only application) reads keys and looks writes up by key.
        let with_app = scenario.app.is_some();
        // The next record of each stream, smallest (time, producer) first.
        let mut heads: BinaryHeap<Reverse<(u64, usize, u32)>> = BinaryHeap::new();
        for (s, stream) in keyed.iter_mut().enumerate() {
            if let Some((t, key)) = stream.next() {
                heads.push(Reverse((t, s, key)));
            }
        }
        let mut targets: Vec<u32> = Vec::new();
        // Each key's default partition for the partition count it was last hashed with: a key
        // hashes to the same partition until the topic grows (murmur2 once per key, not per
        // record).
        let mut hashed: Vec<Option<(u32, u32)>> = vec![None; self.keys.len()];
        while let Some(Reverse((time_us, s, key))) = heads.pop() {
            let (producer, topic) = (keyed[s].producer, keyed[s].topic);
            if let Some((t, k)) = keyed[s].next() {
                heads.push(Reverse((t, s, k)));
            }
            let spec = &scenario.producers[producer];
            let count = scenario.topics[topic].partitions_at(time_us / 1000);
            let name = &self.keys[key as usize];
            let applies = spec
                .stream_partitioner_keys
                .as_ref()
                .is_none_or(|ks| ks.contains(name));
            targets.clear();
            match spec.stream_partitioner.filter(|_| applies) {
                Some(StreamPartitioner::Drop) => {}
                Some(StreamPartitioner::Broadcast) => targets.extend(0..count),
                Some(StreamPartitioner::Default) | None => {
                    let partition = match hashed[key as usize] {
                        Some((c, partition)) if c == count => partition,
                        _ => {
                            let partition = default_partition(name.as_bytes(), count);
                            hashed[key as usize] = Some((count, partition));
                            partition
                        }
                    };
                    targets.push(partition)
                }
            }
            if targets.len() != 1 {
                self.irregular.push((time_us, targets.len() as u32));
            }
            let first_append = self.append_pool.len() as u32;
            for &t in &targets {
                let global = first[topic] + t as usize;
                if with_app {
                    self.append_pool
                        .push((global, self.times[global].len() as u64));
                }
                self.times[global].push(time_us);
                if with_app {
                    self.record_keys[global].push(key);
                }
            }
            if with_app {
                self.writes.entry((topic, key)).or_default().push(Write {
                    time_us,
                    first_append,
                    appends: targets.len() as u32,
                });
            }
        }
    }

    /// Records appended to partition `p` by time `t`.
    pub fn end_offset(&self, p: usize, t: SimTime) -> u64 {
        self.end_offset_at_cursor(p, &mut 0, t)
    }

    /// [`Logs::end_offset`] for a reader whose times only grow (the lag samples): `cursor`, the
    /// keyed appends it saw last time, is where a short gallop starts, and is moved on.
    pub fn end_offset_at_cursor(&self, p: usize, cursor: &mut u64, t: SimTime) -> u64 {
        let us = t.as_micros();
        let closed: u64 = match self.segments[p].as_slice() {
            [] => 0,
            [only] => only.count_by(us),
            many => many.iter().map(|s| s.count_by(us)).sum(),
        };
        *cursor = gallop(&self.times[p], *cursor, us);
        closed + *cursor
    }

    /// When partition `p` gets its record number `offset` (the first time its end offset
    /// exceeds `offset`), or `None` if it never does.
    pub fn time_of(&self, p: usize, offset: u64) -> Option<SimTime> {
        if !self.times[p].is_empty() {
            return self.times[p]
                .get(offset as usize)
                .map(|&t| SimTime::from_micros(t));
        }
        let mut before = 0u64;
        for s in &self.segments[p] {
            if s.num == 0 {
                continue;
            }
            // An open-ended segment holds every later offset (and counting "all of it" would
            // overflow into 128-bit arithmetic).
            let total = if s.end_us == u64::MAX {
                u64::MAX
            } else {
                s.count_by(s.end_us)
            };
            if before.saturating_add(total) > offset {
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

    /// The keyed record at `offset` of partition `p`, if the partition holds keyed records
    /// (keys are kept when the scenario has an application).
    pub fn record(&self, p: usize, offset: u64) -> Option<Record> {
        let time_us = *self.times[p].get(offset as usize)?;
        let key = self.record_keys[p]
            .get(offset as usize)
            .copied()
            .unwrap_or(0);
        Some(Record { time_us, key })
    }

    /// `(global partition, offset)` of each append of a write.
    pub fn appends(&self, w: &Write) -> &[(usize, u64)] {
        &self.append_pool[w.first_append as usize..(w.first_append + w.appends) as usize]
    }

    /// Records appended to partition `p` by time `t`, knowing at least `from` were: a short
    /// scan forward from `from`, which is what a consumer at position `from` asks.
    pub fn end_offset_from(&self, p: usize, from: u64, t: SimTime) -> u64 {
        if self.times[p].is_empty() {
            return self.end_offset(p, t);
        }
        gallop(&self.times[p], from, t.as_micros())
    }

    /// The compacted state of keyed partition `p` below `upto`: each key's latest offset.
    pub fn compacted(&self, p: usize, upto: u64) -> Vec<(u32, u64)> {
        let end = (upto as usize).min(self.record_keys[p].len());
        let mut latest: BTreeMap<u32, u64> = BTreeMap::new();
        for (offset, &key) in self.record_keys[p][..end].iter().enumerate() {
            latest.insert(key, offset as u64);
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
        // A logical record is one append, except the irregular ones: a dropped record is one
        // record and no append, a broadcast one record and n appends.
        let (mut produced, mut dropped) = (appends, 0u64);
        for &(_, n) in self.irregular.iter().take_while(|&&(time, _)| time <= us) {
            produced = produced + 1 - u64::from(n);
            dropped += u64::from(n == 0);
        }
        Produced {
            produced,
            written: appends,
            dropped,
        }
    }
}

/// The number of `times` at or before `us`, knowing the first `from` are: double the step
/// until past `us`, then binary search that window.
fn gallop(times: &[u64], from: u64, us: u64) -> u64 {
    let start = (from as usize).min(times.len());
    let mut step = 1usize;
    let mut lo = start;
    while lo + step <= times.len() && times[lo + step - 1] <= us {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(times.len());
    (lo + times[lo..hi].partition_point(|&r| r <= us)) as u64
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
            times: vec![Vec::new()],
            record_keys: vec![Vec::new()],
            keys: Vec::new(),
            writes: BTreeMap::new(),
            append_pool: Vec::new(),
            irregular: Vec::new(),
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
            times: vec![times.to_vec()],
            record_keys: vec![Vec::new()],
            keys: Vec::new(),
            writes: BTreeMap::new(),
            append_pool: Vec::new(),
            irregular: Vec::new(),
        };
        for t in 0..40 {
            let at = SimTime::from_micros(t);
            let want = logs.end_offset(0, at);
            assert_eq!(want, times.iter().filter(|&&x| x <= t).count() as u64);
            for from in 0..=want {
                assert_eq!(logs.end_offset_from(0, from, at), want, "t {t} from {from}");
                let mut cursor = from;
                assert_eq!(logs.end_offset_at_cursor(0, &mut cursor, at), want);
                assert_eq!(cursor, want, "t {t} from {from}");
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
