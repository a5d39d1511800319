//! Keyed records, generated as the run reaches them and forgotten once nobody can read them.
//!
//! Every keyed producer's records come from the seed in time order (the same draws, in the same
//! order, whenever they are generated), the producers' streams merged in (time, producer,
//! sequence) order and placed by Kafka's default partitioner (or a KIP-837 stream
//! partitioner) with the partition count at their produce time. The world generates them a
//! little ahead of simulated time ([`KeyedLogs::generate_through`]): a reader asking past that
//! is told "not before" it. Memory holds what is in flight: a partition keeps its appends from
//! the lowest offset anyone may still read ([`KeyedLogs::trim`]), 8 bytes each; the keys only
//! when an application reads them (the local join, state recovery), and then every one.

use super::partitioner::default_partition;
use crate::scenario::{KeyDistribution, ProducerKind, Scenario, StreamPartitioner};
use crate::sim::rng::Stream;
use crate::sim::RngStreams;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

/// Where one keyed record went: its appends are `Logs::appends(write)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    pub time_us: u64,
    pub(super) first_append: u32,
    pub(super) appends: u32,
}

/// Logical record counts by a point in time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Produced {
    pub produced: u64,
    pub written: u64,
    pub dropped: u64,
}

/// When a partition's next append is, as far as the records generated so far tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextAppend {
    /// At this time (µs).
    At(u64),
    /// Not before this time (µs): no record up to just before it goes there.
    NotBefore(u64),
    /// Never: every producer is done.
    Never,
}

/// A window compacts once this many entries at its front are dead (and they are half of it).
/// Small, because a large group's partitions each receive few records: at 1,024, the 10,000
/// partitions of `hour-1000x10k` (720 records each in the hour) never compacted and held
/// every record of the run.
const COMPACT_AT: usize = 16;

/// A growing sequence whose front can be dropped: `items[head..]` are the entries from index
/// `base` on.
#[derive(Debug, Default)]
struct Window<T> {
    items: Vec<T>,
    head: usize,
    base: u64,
}

impl<T: Copy> Window<T> {
    fn live(&self) -> &[T] {
        &self.items[self.head..]
    }

    /// Index one past the last entry.
    fn end(&self) -> u64 {
        self.base + (self.items.len() - self.head) as u64
    }

    fn get(&self, index: u64) -> Option<T> {
        let i = index.checked_sub(self.base)?;
        self.live().get(usize::try_from(i).ok()?).copied()
    }

    fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// Drops the first `n` live entries (the storage is compacted once half of it is dead).
    fn drop_front(&mut self, n: usize) {
        let n = n.min(self.items.len() - self.head);
        self.head += n;
        self.base += n as u64;
        if self.head >= COMPACT_AT && self.head * 2 >= self.items.len() {
            self.items.drain(..self.head);
            self.head = 0;
        }
    }
}

/// A key not yet hashed for its topic's table.
const NOT_HASHED: u32 = u32::MAX;

/// One keyed producer's records in time order.
struct KeyedStream {
    topic: usize,
    start_us: u64,
    end_us: u64,
    j: u64,
    kind: StreamKind,
    stream_partitioner: Option<StreamPartitioner>,
    /// Keys the stream partitioner answers for (`None`: every key).
    partitioner_keys: Option<BTreeSet<u32>>,
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
                // 64-bit when it cannot overflow (always, for any realistic run).
                let offset_us = match j.checked_mul(1_000_000) {
                    Some(x) => x.div_ceil(*records_per_sec),
                    None => {
                        (u128::from(j) * 1_000_000).div_ceil(u128::from(*records_per_sec)) as u64
                    }
                };
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

/// A topic's partition count over time (it grows at its resizes).
struct PartitionCount {
    partitions: u32,
    resizes: Vec<(u64, u32)>,
}

impl PartitionCount {
    fn at(&self, at_ms: u64) -> u32 {
        self.resizes
            .iter()
            .rev()
            .find(|&&(t, _)| t <= at_ms)
            .map_or(self.partitions, |&(_, n)| n)
    }
}

/// Every keyed partition's log, generated as far as the run has needed.
pub struct KeyedLogs {
    streams: Vec<KeyedStream>,
    /// The next record of each stream, smallest (time, stream) first.
    heads: BinaryHeap<Reverse<(u64, usize, u32)>>,
    /// Every record produced before this time (µs) is placed; `u64::MAX` once every producer
    /// is done.
    before_us: u64,
    /// Where each topic's partitions begin in the global numbering, and their counts.
    first: Vec<usize>,
    counts: Vec<PartitionCount>,
    /// Per topic: the partition count its table is for, and each key's default partition at
    /// that count (`NOT_HASHED` until the key is first produced there): murmur2 once per key
    /// until the topic grows, not per record; 4 bytes a key, so a large key space stays in
    /// cache.
    hashed: Vec<(u32, Vec<u32>)>,
    targets: Vec<u32>,
    /// Per partition: its appends' produce times (µs), by offset.
    times: Vec<Window<u64>>,
    /// Keys are kept (an application reads them): then nothing is ever dropped.
    keep_keys: bool,
    /// Per partition: each append's key, by offset (only with `keep_keys`).
    record_keys: Vec<Vec<u32>>,
    /// Key names.
    pub keys: Vec<String>,
    /// Per (topic, key): every write of that key, in time order (only with `keep_keys`).
    writes: BTreeMap<(usize, u32), Vec<Write>>,
    /// `(global partition, offset)` of every append, in write order (several per broadcast
    /// record; only with `keep_keys`).
    append_pool: Vec<(usize, u64)>,
    /// Every append's produce time, in time order over all partitions.
    all_times: Window<u64>,
    /// Logical records written to other than exactly one partition: (time, appends).
    irregular: Window<(u64, u32)>,
    /// Irregular records dropped from `irregular`: (records, their appends, dropped ones).
    irregular_before: (u64, u64, u64),
}

impl KeyedLogs {
    /// The keyed producers of `scenario`, nothing generated yet; `None` without any.
    pub fn new<'a>(
        scenario: &'a Scenario,
        streams: &RngStreams,
        first: Vec<usize>,
        partitions: usize,
    ) -> Option<Self> {
        // Ids in first-seen order; the map is only looked up, never iterated.
        let mut key_ids: FxHashMap<&str, u32> = FxHashMap::default();
        let mut names: Vec<String> = Vec::new();
        let mut keyed = Vec::new();
        for (i, p) in scenario.producers.iter().enumerate() {
            let mut intern = |k: &'a String| -> u32 {
                let next = key_ids.len() as u32;
                *key_ids.entry(k.as_str()).or_insert_with(|| {
                    names.push(k.clone());
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
            let partitioner_keys = p.stream_partitioner_keys.as_ref().map(|ks| {
                ks.iter()
                    .filter_map(|k| key_ids.get(k.as_str()).copied())
                    .collect()
            });
            keyed.push(KeyedStream {
                topic: p.topic,
                start_us: p.start_ms * 1000,
                end_us: p.end_ms * 1000,
                j: 0,
                kind,
                stream_partitioner: p.stream_partitioner,
                partitioner_keys,
            });
        }
        if keyed.is_empty() {
            return None;
        }
        let mut heads = BinaryHeap::new();
        for (s, stream) in keyed.iter_mut().enumerate() {
            if let Some((t, key)) = stream.next() {
                heads.push(Reverse((t, s, key)));
            }
        }
        let keep_keys = scenario.app.is_some();
        Some(KeyedLogs {
            streams: keyed,
            before_us: if heads.is_empty() { u64::MAX } else { 0 },
            heads,
            first,
            counts: scenario
                .topics
                .iter()
                .map(|t| PartitionCount {
                    partitions: t.partitions,
                    resizes: t.resizes.clone(),
                })
                .collect(),
            hashed: vec![(0, Vec::new()); scenario.topics.len()],
            targets: Vec::new(),
            times: (0..partitions).map(|_| Window::default()).collect(),
            keep_keys,
            record_keys: vec![Vec::new(); if keep_keys { partitions } else { 0 }],
            keys: names,
            writes: BTreeMap::new(),
            append_pool: Vec::new(),
            all_times: Window::default(),
            irregular: Window::default(),
            irregular_before: (0, 0, 0),
        })
    }

    /// Every record produced before this time (µs) is placed.
    pub fn before_us(&self) -> u64 {
        self.before_us
    }

    /// Places every record produced at or before `t_us`.
    pub fn generate_through(&mut self, t_us: u64) {
        if t_us < self.before_us {
            return;
        }
        loop {
            let (time_us, s, key) = {
                let Some(mut head) = self.heads.peek_mut() else {
                    break;
                };
                let Reverse((time_us, s, key)) = *head;
                if time_us > t_us {
                    break;
                }
                // The stream's next record takes its place (one sift, not a pop and a push).
                match self.streams[s].next() {
                    Some((t, k)) => *head = Reverse((t, s, k)),
                    None => {
                        PeekMut::pop(head);
                    }
                }
                (time_us, s, key)
            };
            self.place(time_us, s, key);
        }
        self.before_us = if self.heads.is_empty() {
            u64::MAX
        } else {
            t_us + 1
        };
    }

    /// Appends one record where its partitioner sends it.
    fn place(&mut self, time_us: u64, s: usize, key: u32) {
        let stream = &self.streams[s];
        let topic = stream.topic;
        let count = self.counts[topic].at(time_us / 1000);
        let applies = stream
            .partitioner_keys
            .as_ref()
            .is_none_or(|ks| ks.contains(&key));
        self.targets.clear();
        match stream.stream_partitioner.filter(|_| applies) {
            Some(StreamPartitioner::Drop) => {}
            Some(StreamPartitioner::Broadcast) => self.targets.extend(0..count),
            Some(StreamPartitioner::Default) | None => {
                let (hashed_for, table) = &mut self.hashed[topic];
                if *hashed_for != count {
                    // A new table for the topic's new partition count (or its first).
                    *hashed_for = count;
                    table.clear();
                    table.resize(self.keys.len(), NOT_HASHED);
                }
                let mut partition = table[key as usize];
                if partition == NOT_HASHED {
                    let name = &self.keys[key as usize];
                    partition = default_partition(name.as_bytes(), count);
                    table[key as usize] = partition;
                }
                self.targets.push(partition)
            }
        }
        if self.targets.len() != 1 {
            self.irregular.push((time_us, self.targets.len() as u32));
        }
        let first_append = self.append_pool.len() as u32;
        for &t in &self.targets {
            let global = self.first[topic] + t as usize;
            if self.keep_keys {
                self.append_pool.push((global, self.times[global].end()));
                self.record_keys[global].push(key);
            }
            self.times[global].push(time_us);
            self.all_times.push(time_us);
        }
        if self.keep_keys {
            self.writes.entry((topic, key)).or_default().push(Write {
                time_us,
                first_append,
                appends: self.targets.len() as u32,
            });
        }
    }

    /// Appends to partition `p` at or before `us` (which must not be past what is generated).
    pub fn end_offset(&self, p: usize, us: u64) -> u64 {
        debug_assert!(us < self.before_us, "asked past the generated records");
        let log = &self.times[p];
        log.base + log.live().partition_point(|&t| t <= us) as u64
    }

    /// [`KeyedLogs::end_offset`] for a reader at offset `from`: a short gallop from there.
    pub fn end_offset_from(&self, p: usize, from: u64, us: u64) -> u64 {
        debug_assert!(us < self.before_us, "asked past the generated records");
        let log = &self.times[p];
        let from = from.max(log.base);
        log.base + gallop(log.live(), from - log.base, us)
    }

    /// Appends to every partition at or before `us`, for a reader whose times only grow:
    /// `cursor`, what it counted last time, is where a short gallop starts.
    pub fn total_end_offset_at_cursor(&self, cursor: &mut u64, us: u64) -> u64 {
        debug_assert!(us < self.before_us, "asked past the generated records");
        let log = &self.all_times;
        debug_assert!(
            *cursor >= log.base,
            "a lag cursor behind the dropped appends"
        );
        let from = (*cursor).max(log.base);
        *cursor = log.base + gallop(log.live(), from - log.base, us);
        *cursor
    }

    /// When partition `p` gets its record number `offset`.
    pub fn next_append(&self, p: usize, offset: u64) -> NextAppend {
        let log = &self.times[p];
        debug_assert!(
            offset >= log.base,
            "offset {offset} of a partition dropped to {}",
            log.base
        );
        match log.get(offset) {
            Some(t) => NextAppend::At(t),
            None if self.before_us == u64::MAX => NextAppend::Never,
            None => NextAppend::NotBefore(self.before_us),
        }
    }

    /// The produce time and key of the append at `offset` of `p` (keys only with `keep_keys`).
    pub fn record(&self, p: usize, offset: u64) -> Option<(u64, u32)> {
        let time_us = self.times[p].get(offset)?;
        let key = self
            .record_keys
            .get(p)
            .and_then(|keys| keys.get(offset as usize))
            .copied()
            .unwrap_or(0);
        Some((time_us, key))
    }

    /// `(global partition, offset)` of each append of a write.
    pub fn appends(&self, w: &Write) -> &[(usize, u64)] {
        &self.append_pool[w.first_append as usize..(w.first_append + w.appends) as usize]
    }

    /// The compacted state of partition `p` below `upto`: each key's latest offset.
    pub fn compacted(&self, p: usize, upto: u64) -> Vec<(u32, u64)> {
        let keys = self.record_keys.get(p).map_or(&[][..], Vec::as_slice);
        let end = (upto as usize).min(keys.len());
        let mut latest: BTreeMap<u32, u64> = BTreeMap::new();
        for (offset, &key) in keys[..end].iter().enumerate() {
            latest.insert(key, offset as u64);
        }
        latest.into_iter().collect()
    }

    /// Every write of `key` to `topic`, in time order.
    pub fn writes(&self, topic: usize, key: u32) -> &[Write] {
        self.writes.get(&(topic, key)).map_or(&[], Vec::as_slice)
    }

    /// Logical records, appends and dropped records at or before `us`.
    pub fn produced_by(&self, us: u64) -> Produced {
        let appends =
            self.all_times.base + self.all_times.live().partition_point(|&t| t <= us) as u64;
        let (mut records, mut irregular_appends, mut dropped) = self.irregular_before;
        for &(_, n) in self.irregular.live().iter().take_while(|&&(t, _)| t <= us) {
            records += 1;
            irregular_appends += u64::from(n);
            dropped += u64::from(n == 0);
        }
        // A logical record is one append, except the irregular ones: a dropped record is one
        // record and no append, a broadcast one record and n appends.
        Produced {
            produced: appends + records - irregular_appends,
            written: appends,
            dropped,
        }
    }

    /// Forgets what nobody can read any more: appends produced at or before `safe_us` (every
    /// count has been taken past it) and, in each partition, below `low_water(p)` (no reader
    /// will seek below it). With keys kept, the partitions keep every append.
    pub fn trim(&mut self, safe_us: u64, low_water: impl Fn(usize) -> u64) {
        let counted = self.all_times.live().partition_point(|&t| t <= safe_us);
        self.all_times.drop_front(counted);
        let settled = self
            .irregular
            .live()
            .partition_point(|&(t, _)| t <= safe_us);
        for &(_, n) in &self.irregular.live()[..settled] {
            self.irregular_before.0 += 1;
            self.irregular_before.1 += u64::from(n);
            self.irregular_before.2 += u64::from(n == 0);
        }
        self.irregular.drop_front(settled);
        if self.keep_keys {
            return;
        }
        for (p, log) in self.times.iter_mut().enumerate() {
            let below = low_water(p).saturating_sub(log.base);
            let old = log.live().partition_point(|&t| t <= safe_us) as u64;
            log.drop_front(below.min(old) as usize);
        }
    }

    /// Appends held in memory (for tests and benchmarks).
    pub fn held(&self) -> usize {
        self.times.iter().map(|w| w.live().len()).sum::<usize>() + self.all_times.live().len()
    }
}

/// The number of `times` at or before `us`, knowing the first `from` are: double the step
/// until past `us`, then binary search that window.
pub fn gallop(times: &[u64], from: u64, us: u64) -> u64 {
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
    fn gallop_agrees_with_the_binary_search() {
        let times = [1u64, 1, 2, 5, 8, 8, 8, 13, 21, 34];
        for t in 0..40 {
            let want = times.iter().filter(|&&x| x <= t).count() as u64;
            for from in 0..=want {
                assert_eq!(gallop(&times, from, t), want, "t {t} from {from}");
            }
        }
    }

    #[test]
    fn a_window_drops_its_front_and_keeps_offsets() {
        let mut w: Window<u64> = Window::default();
        for i in 0..5000 {
            w.push(i * 10);
        }
        w.drop_front(3000);
        assert_eq!((w.base, w.end()), (3000, 5000));
        assert_eq!(w.get(2999), None);
        assert_eq!(w.get(3000), Some(30_000));
        assert_eq!(w.get(4999), Some(49_990));
        assert_eq!(w.items.len(), 2000, "compacted once half was dead");
    }

    /// A partition that gets a few records at a time and has them read keeps a few entries,
    /// not every record of the run (a large group's partitions each receive few records).
    #[test]
    fn a_window_read_a_few_at_a_time_stays_small() {
        let mut w: Window<u64> = Window::default();
        for round in 0..1000u64 {
            for i in 0..3 {
                w.push(round * 3 + i);
            }
            w.drop_front(3);
            assert!(w.items.len() <= 40, "{} held", w.items.len());
        }
        assert_eq!((w.base, w.end()), (3000, 3000));
        assert!(w.items.capacity() <= 64, "{}", w.items.capacity());
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
