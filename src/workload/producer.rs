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

use super::keyed::KeyedLogs;
pub use super::keyed::{NextAppend, Produced, Write};
use crate::cluster::PartitionSpace;
use crate::scenario::{ProducerKind, Scenario};
use crate::sim::{RngStreams, SimTime};
use strength_reduce::StrengthReducedU64;

/// A stretch of time over which a null-key partition grows at `num / den` records per second.
///
/// Every fetch and every processed batch divides by the same two numbers (`den * 10^6` for the
/// end offset at a time, `num` for the time of an offset): they are kept strength-reduced, a
/// multiply and a shift instead of a hardware division (exact: `strength_reduce`).
#[derive(Clone, Copy, Debug)]
struct Segment {
    start_us: u64,
    end_us: u64,
    num: u64,
    den: u64,
    /// `den * 10^6` when it fits in 64 bits.
    per_record: Option<StrengthReducedU64>,
    /// `num`, when it is not 0.
    rate: Option<StrengthReducedU64>,
    /// Records appended over the whole segment (`u64::MAX` if it never ends).
    total: u64,
}

impl Segment {
    fn new(start_us: u64, end_us: u64, num: u64, den: u64) -> Self {
        let mut s = Segment {
            start_us,
            end_us,
            num,
            den,
            per_record: den.checked_mul(1_000_000).map(StrengthReducedU64::new),
            rate: (num != 0).then(|| StrengthReducedU64::new(num)),
            total: u64::MAX,
        };
        // An open-ended segment holds every later offset (and counting "all of it" would
        // overflow into 128-bit arithmetic).
        if end_us != u64::MAX {
            s.total = s.count_by(end_us);
        }
        s
    }

    /// Records appended in this segment by `t_us`.
    fn count_by(&self, t_us: u64) -> u64 {
        if t_us <= self.start_us || self.num == 0 {
            return 0;
        }
        let elapsed = t_us.min(self.end_us) - self.start_us;
        // 64-bit arithmetic when it cannot overflow (always, for realistic rates and runs).
        match (self.num.checked_mul(elapsed), self.per_record) {
            (Some(a), Some(b)) => a / b,
            _ => {
                ((u128::from(self.num) * u128::from(elapsed)) / (u128::from(self.den) * 1_000_000))
                    as u64
            }
        }
    }

    /// When this segment gets its record number `k` (from 0): the smallest `t` with
    /// `num * (t - start) >= (k + 1) * den * 10^6`.
    fn time_of(&self, k: u64) -> u64 {
        let k = k + 1;
        let dt = match (
            k.checked_mul(self.den)
                .and_then(|x| x.checked_mul(1_000_000)),
            self.rate,
        ) {
            (Some(need), Some(rate)) => {
                let (q, r) = StrengthReducedU64::div_rem(need, rate);
                q + u64::from(r != 0)
            }
            _ => (u128::from(k) * u128::from(self.den) * 1_000_000).div_ceil(u128::from(self.num))
                as u64,
        };
        self.start_us + dt
    }
}

/// One append of a keyed record to a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Produce time (the record's timestamp), microseconds.
    pub time_us: u64,
    /// Index into the key names ([`Logs::key`]).
    pub key: u32,
}

/// Every partition's log, as functions of time: null-key partitions in closed form, keyed ones
/// generated a little ahead of the run ([`Logs::generate_through`], `keyed.rs`).
pub struct Logs {
    segments: Vec<Vec<Segment>>,
    /// The null-key segments once per topic period, with how many partitions share each (every
    /// partition of a topic grows alike): the sum of their end offsets in closed form.
    shared_segments: Vec<(Segment, u64)>,
    /// The keyed partitions' logs, if any producer is keyed.
    keyed: Option<KeyedLogs>,
    /// Whether each partition's topic is written by keyed producers.
    is_keyed: Vec<bool>,
}

impl Logs {
    pub fn new(scenario: &Scenario, space: &PartitionSpace, streams: &RngStreams) -> Self {
        let first: Vec<usize> = (0..scenario.topics.len()).map(|t| space.first(t)).collect();
        let total = space.len();
        let mut logs = Logs {
            segments: vec![Vec::new(); total],
            shared_segments: Vec::new(),
            keyed: KeyedLogs::new(scenario, streams, first.clone(), total),
            is_keyed: vec![false; total],
        };
        for (t, topic) in scenario.topics.iter().enumerate() {
            if scenario
                .producers
                .iter()
                .any(|p| p.topic == t && p.kind.is_keyed())
            {
                let n = topic.max_partitions() as usize;
                logs.is_keyed[first[t]..first[t] + n].fill(true);
            }
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
                let segment = Segment::new(
                    from * 1000,
                    to.map_or(u64::MAX, |t| t * 1000),
                    rate,
                    u64::from(count),
                );
                for p in 0..count as usize {
                    logs.segments[first[t] + p].push(segment);
                }
                logs.shared_segments.push((segment, u64::from(count)));
            }
        }
        logs
    }

    /// Places every keyed record produced at or before `t` (the world keeps this a little
    /// ahead of simulated time: `KEYED_HORIZON`).
    pub fn generate_through(&mut self, t: SimTime) {
        if let Some(keyed) = &mut self.keyed {
            keyed.generate_through(t.as_micros());
        }
    }

    /// Every keyed record produced before this time is placed (`SimTime::MAX`-like when there
    /// are none or all are).
    pub fn generated_before(&self) -> SimTime {
        SimTime::from_micros(self.keyed.as_ref().map_or(u64::MAX, KeyedLogs::before_us))
    }

    /// Forgets keyed appends nobody can read any more (`KeyedLogs::trim`).
    pub fn trim(&mut self, safe: SimTime, low_water: impl Fn(usize) -> u64) {
        if let Some(keyed) = &mut self.keyed {
            keyed.trim(safe.as_micros(), low_water);
        }
    }

    /// Keyed appends held in memory.
    pub fn keyed_appends_held(&self) -> usize {
        self.keyed.as_ref().map_or(0, KeyedLogs::held)
    }

    /// Records appended to partition `p` by time `t`.
    pub fn end_offset(&self, p: usize, t: SimTime) -> u64 {
        let us = t.as_micros();
        match &self.keyed {
            Some(keyed) if self.is_keyed[p] => keyed.end_offset(p, us),
            _ => self.closed_end_offset(p, us),
        }
    }

    fn closed_end_offset(&self, p: usize, us: u64) -> u64 {
        match self.segments[p].as_slice() {
            [] => 0,
            [only] => only.count_by(us),
            many => many.iter().map(|s| s.count_by(us)).sum(),
        }
    }

    /// Records appended by the closed-form streams to all partitions together by `us`.
    fn closed_form_total_by(&self, us: u64) -> u64 {
        self.shared_segments
            .iter()
            .map(|(s, partitions)| s.count_by(us) * partitions)
            .sum()
    }

    /// Records appended to all partitions together by time `t`, for a reader whose times only
    /// grow (the lag samples): `cursor` is the keyed appends it counted last time. Constant
    /// work per call apart from the keyed appends since the last one.
    pub fn total_end_offset_at_cursor(&self, cursor: &mut u64, t: SimTime) -> u64 {
        let us = t.as_micros();
        let closed = self.closed_form_total_by(us);
        let keyed = self
            .keyed
            .as_ref()
            .map_or(0, |k| k.total_end_offset_at_cursor(cursor, us));
        closed + keyed
    }

    /// When partition `p` gets its record number `offset`, as far as the records generated so
    /// far tell.
    pub fn next_append(&self, p: usize, offset: u64) -> NextAppend {
        match &self.keyed {
            Some(keyed) if self.is_keyed[p] => keyed.next_append(p, offset),
            _ => self
                .closed_time_of(p, offset)
                .map_or(NextAppend::Never, |t| NextAppend::At(t.as_micros())),
        }
    }

    /// When null-key partition `p` gets its record number `offset` (the first time its end
    /// offset exceeds `offset`), or `None` if it never does.
    fn closed_time_of(&self, p: usize, offset: u64) -> Option<SimTime> {
        let mut before = 0u64;
        for s in &self.segments[p] {
            if s.num == 0 {
                continue;
            }
            if before.saturating_add(s.total) > offset {
                return Some(SimTime::from_micros(s.time_of(offset - before)));
            }
            before += s.total;
        }
        None
    }

    /// The keyed record at `offset` of partition `p`, if the partition holds keyed records
    /// (keys are kept when the scenario has an application).
    pub fn record(&self, p: usize, offset: u64) -> Option<Record> {
        let (time_us, key) = self.keyed.as_ref()?.record(p, offset)?;
        Some(Record { time_us, key })
    }

    /// The name of keyed record key `key`.
    pub fn key(&self, key: u32) -> &str {
        self.keyed
            .as_ref()
            .and_then(|k| k.keys.get(key as usize))
            .map_or("", String::as_str)
    }

    /// `(global partition, offset)` of each append of a write.
    pub fn appends(&self, w: &Write) -> &[(usize, u64)] {
        self.keyed.as_ref().map_or(&[], |k| k.appends(w))
    }

    /// Records appended to partition `p` by time `t`, knowing at least `from` were: a short
    /// scan forward from `from`, which is what a consumer at position `from` asks.
    pub fn end_offset_from(&self, p: usize, from: u64, t: SimTime) -> u64 {
        match &self.keyed {
            Some(keyed) if self.is_keyed[p] => keyed.end_offset_from(p, from, t.as_micros()),
            _ => self.closed_end_offset(p, t.as_micros()),
        }
    }

    /// The compacted state of keyed partition `p` below `upto`: each key's latest offset.
    pub fn compacted(&self, p: usize, upto: u64) -> Vec<(u32, u64)> {
        self.keyed
            .as_ref()
            .map_or_else(Vec::new, |k| k.compacted(p, upto))
    }

    /// Every write of `key` to `topic`, in time order.
    pub fn writes(&self, topic: usize, key: u32) -> &[Write] {
        self.keyed.as_ref().map_or(&[], |k| k.writes(topic, key))
    }

    pub fn partitions(&self) -> usize {
        self.segments.len()
    }

    /// Logical records produced, appends written, and records dropped by time `t`.
    pub fn produced_by(&self, t: SimTime) -> Produced {
        let us = t.as_micros();
        let closed = self.closed_form_total_by(us);
        let keyed = self
            .keyed
            .as_ref()
            .map_or(Produced::default(), |k| k.produced_by(us));
        Produced {
            produced: closed + keyed.produced,
            written: closed + keyed.written,
            dropped: keyed.dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load_str, LoadOptions};
    use proptest::prelude::*;

    proptest! {
        /// The strength-reduced divisions give what plain division gives, on either side of
        /// the 64-bit overflow that switches to 128-bit arithmetic.
        #[test]
        fn strength_reduced_segments_divide_exactly(
            num in 1u64..u64::MAX,
            den in 1u64..1 << 40,
            start_us in 0u64..1 << 40,
            elapsed in 0u64..u64::MAX >> 1,
            k in 0u64..1 << 40,
            small in any::<bool>(),
        ) {
            // Small rates and partition counts, as scenarios have them, or anything.
            let (num, den) = if small { (num % 100_000 + 1, den % 10_000 + 1) } else { (num, den) };
            let (elapsed, k) = if small { (elapsed % (1 << 40), k % (1 << 30)) } else { (elapsed, k) };
            let s = Segment::new(start_us, u64::MAX, num, den);
            let elapsed = elapsed.min(u64::MAX - start_us);
            let plain_count = (u128::from(num) * u128::from(elapsed)) / (u128::from(den) * 1_000_000);
            prop_assert_eq!(s.count_by(start_us + elapsed), plain_count as u64);
            let plain_time = (u128::from(k + 1) * u128::from(den) * 1_000_000).div_ceil(u128::from(num));
            if let Ok(dt) = u64::try_from(plain_time) {
                if let Some(t) = start_us.checked_add(dt) {
                    prop_assert_eq!(s.time_of(k), t);
                }
            }
        }
    }

    #[test]
    fn closed_form_offsets_and_their_times_agree() {
        let s = Segment::new(1_000_000, u64::MAX, 30, 3);
        let logs = Logs {
            segments: vec![vec![s]],
            shared_segments: vec![(s, 1)],
            keyed: None,
            is_keyed: vec![false],
        };
        let time_of = |k| match logs.next_append(0, k) {
            NextAppend::At(us) => SimTime::from_micros(us),
            other => panic!("{other:?}"),
        };
        // 10 records per second from 1 s.
        assert_eq!(logs.end_offset(0, SimTime::from_millis(1_000)), 0);
        assert_eq!(logs.end_offset(0, SimTime::from_millis(2_000)), 10);
        assert_eq!(time_of(0), SimTime::from_millis(1_100));
        assert_eq!(time_of(9), SimTime::from_millis(2_000));
        for k in 0..50 {
            let t = time_of(k);
            assert_eq!(logs.end_offset(0, t), k + 1);
            assert_eq!(
                logs.end_offset(0, SimTime::from_micros(t.as_micros() - 1)),
                k
            );
        }
    }

    const KEYED: &str = r#"
name = "keyed"
duration_ms = 60000
[[topics]]
name = "t"
partitions = 8
[[members]]
name = "c"
[[producers]]
topic = "t"
records_per_sec = 500
key_count = 50
key_distribution = "skewed"
"#;

    fn keyed_logs() -> Logs {
        let scenario = load_str("keyed.toml", KEYED, &LoadOptions::default()).expect("loads");
        let space = PartitionSpace::new(&scenario);
        Logs::new(&scenario, &space, &RngStreams::new(scenario.seed))
    }

    /// Keyed records generated a second at a time land exactly where generating them all at
    /// once puts them, and a reader is told "not before" past what is generated.
    #[test]
    fn keyed_records_generated_in_steps_are_the_records_generated_at_once() {
        let mut whole = keyed_logs();
        whole.generate_through(SimTime::from_millis(60_000));
        let mut steps = keyed_logs();
        assert_eq!(steps.next_append(0, 0), NextAppend::NotBefore(0));
        for second in 0..60u64 {
            steps.generate_through(SimTime::from_millis(second * 1000 + 999));
            let through = SimTime::from_millis(second * 1000 + 999);
            for p in 0..8 {
                assert_eq!(steps.end_offset(p, through), whole.end_offset(p, through));
                let next = steps.end_offset(p, through);
                match (steps.next_append(p, next), whole.next_append(p, next)) {
                    (NextAppend::NotBefore(t), NextAppend::At(real)) => {
                        assert!(t <= real && t == through.as_micros() + 1)
                    }
                    (NextAppend::NotBefore(_), NextAppend::Never) => {}
                    // The producer's last record is placed.
                    (NextAppend::Never, NextAppend::Never) => assert_eq!(second, 59),
                    other => panic!("partition {p} at {second} s: {other:?}"),
                }
            }
        }
        assert_eq!(
            steps.produced_by(SimTime::from_millis(59_999)),
            whole.produced_by(SimTime::from_millis(59_999))
        );
        assert_eq!(
            whole.produced_by(SimTime::from_millis(60_000)).produced,
            30_000
        );
    }

    /// Every keyed record lands on Kafka's default partition for its key and the partition
    /// count of its topic at its produce time: two topics share the key names, one grows
    /// mid-run (each topic hashes a key once per partition count).
    #[test]
    fn keyed_records_follow_their_topics_partition_count_when_it_grows() {
        let toml = r#"
name = "grow"
duration_ms = 40000
[[topics]]
name = "prices"
partitions = 4
[[topics]]
name = "notes"
partitions = 6
[[members]]
name = "c"
[[producers]]
topic = "prices"
records_per_sec = 200
key_count = 40
[[producers]]
topic = "notes"
records_per_sec = 200
key_count = 40
[app]
kind = "local_join"
prices = "prices"
notifications = "notes"
[[timeline]]
at_ms = 20000
action = "add_partitions"
topic = "prices"
partitions = 12
"#;
        let scenario = load_str("grow.toml", toml, &LoadOptions::default()).expect("loads");
        let space = PartitionSpace::new(&scenario);
        let mut logs = Logs::new(&scenario, &space, &RngStreams::new(scenario.seed));
        logs.generate_through(SimTime::from_millis(40_000));
        // Global partitions: prices 0-11, notes 12-17.
        let topics = [(0usize, 12u32), (12, 6)];
        let mut checked = [0u32; 2];
        for (t, &(first, most)) in topics.iter().enumerate() {
            for i in 0..most {
                let p = space.global(t, i);
                assert_eq!(p, first + i as usize);
                let mut offset = 0;
                while let Some(r) = logs.record(p, offset) {
                    let count = match t {
                        0 if r.time_us >= 20_000_000 => 12,
                        0 => 4,
                        _ => 6,
                    };
                    let want = crate::workload::partitioner::default_partition(
                        logs.key(r.key).as_bytes(),
                        count,
                    );
                    assert_eq!(i, want, "{} at {} us", logs.key(r.key), r.time_us);
                    checked[t] += 1;
                    offset += 1;
                }
            }
        }
        assert_eq!(checked, [8_000, 8_000]);
    }

    /// Trimming forgets appends below each partition's low-water mark and at or before the
    /// safe time, and every count a reader may still ask for stays the same.
    #[test]
    fn trimmed_logs_answer_as_before_above_the_low_water_mark() {
        let mut whole = keyed_logs();
        whole.generate_through(SimTime::from_millis(60_000));
        let mut trimmed = keyed_logs();
        trimmed.generate_through(SimTime::from_millis(60_000));
        let held = trimmed.keyed_appends_held();
        let safe = SimTime::from_millis(40_000);
        let low_water = |p: usize| whole.end_offset(p, SimTime::from_millis(30_000)) + p as u64;
        trimmed.trim(safe, low_water);
        assert!(
            trimmed.keyed_appends_held() < held / 2,
            "{held} appends held"
        );
        let mut cursor_whole = whole.total_end_offset_at_cursor(&mut 0, safe);
        let mut cursor_trimmed = cursor_whole;
        for ms in (40_000..=60_000).step_by(250) {
            let t = SimTime::from_millis(ms);
            assert_eq!(
                trimmed.total_end_offset_at_cursor(&mut cursor_trimmed, t),
                whole.total_end_offset_at_cursor(&mut cursor_whole, t)
            );
            assert_eq!(trimmed.produced_by(t), whole.produced_by(t));
            for p in 0..8 {
                assert_eq!(trimmed.end_offset(p, t), whole.end_offset(p, t));
                let from = low_water(p);
                assert_eq!(
                    trimmed.end_offset_from(p, from, t),
                    whole.end_offset_from(p, from, t)
                );
                assert_eq!(trimmed.next_append(p, from), whole.next_append(p, from));
            }
        }
    }
}
