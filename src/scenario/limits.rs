//! What a scenario may ask for. Every size and time that reaches an allocation or the event
//! loop is bounded here, at load, so that an absurd value is refused with its key, its value and
//! the limit (exit 2) instead of aborting on allocation, wrapping around, or running for hours.
//! The limits fit a 24 GiB machine with room: at any one limit a run takes at most a few GiB and
//! about a minute of a release build on two cores (README "Limits").
//!
//! Every time value is at most [`MAX_TIME_MS`], so sums of a few of them, in microseconds,
//! stay far inside a `u64`.

use super::file::ScenarioFile;
use super::{ProducerKind, Scenario, StreamPartitioner};
use std::ops::Range;

/// Members in all (`count` included).
pub const MAX_MEMBERS: u64 = 10_000;
/// Partitions in all: the most each topic ever has (`add_partitions` included), summed. A member
/// that takes on `n` partitions at once costs the client about `n^2` steps today (its
/// owned-partition lookups are list scans), which 200,000 keeps to seconds.
pub const MAX_PARTITIONS: u64 = 200_000;
pub const MAX_BROKERS: u64 = 10_000;
/// `duration_ms`: 7 simulated days.
pub const MAX_DURATION_MS: u64 = 7 * 24 * 3_600_000;
/// Any other time (and `record_processing_us`, in its unit): Kafka's int configs' maximum.
pub const MAX_TIME_MS: u64 = i32::MAX as u64;
/// One-way request latency (`cluster.request_latency_ms.max`).
pub const MAX_LATENCY_MS: u64 = 60_000;
/// `group.max_poll_records` (an int in Kafka).
pub const MAX_POLL_RECORDS: u64 = i32::MAX as u64;
/// One producer's `records_per_sec`.
pub const MAX_RECORDS_PER_SEC: u64 = 1_000_000_000;
/// Keys of one producer (`keys` or `key_count`).
pub const MAX_KEYS: u64 = 1_000_000;
/// Keyed records in a run (a broadcast record once per partition): each is generated as the
/// run reaches it, and held in memory (about 44 bytes with the local join's key and write
/// index) only when an application reads the keys; otherwise only what is in flight is held.
pub const MAX_KEYED_RECORDS: u64 = 100_000_000;
/// The event loop's estimated work, in nanoseconds of a release build: its events (polls with
/// records, and members' idle wake-ups: heartbeats, empty fetches, metadata refreshes), each
/// costing [`NS_PER_OWNED_PARTITION`] for every partition of a member's share (a poll scans
/// them all) and [`NS_PER_GROUP_LOG2`] for every doubling of the group. Measured on this
/// project's machine; the estimate is on the safe side (a poll often takes several records).
pub const MAX_WORK_NS: u64 = 60_000_000_000;
pub const NS_PER_OWNED_PARTITION: u64 = 40;
pub const NS_PER_GROUP_LOG2: u64 = 150;
/// Lag samples (`duration_ms / lag_sample_ms`), each a point of `lag.series`.
pub const MAX_LAG_SAMPLES: u64 = 1_000_000;
/// Lag samples times partitions: each sample reads every partition.
pub const MAX_LAG_READS: u64 = 1_000_000_000;

type Invalid = (Option<Range<usize>>, String);

/// Spans of keys in the scenario text, by dotted path (`group.fetch_max_wait_ms`,
/// `members.2.count`), for errors about values that carry no span of their own.
pub(super) struct KeySpans<'a> {
    text: &'a str,
    doc: std::cell::OnceCell<Option<toml_edit::ImDocument<&'a str>>>,
}

impl<'a> KeySpans<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        KeySpans {
            text,
            doc: std::cell::OnceCell::new(),
        }
    }

    /// The span of the value at `path`, if the text has it.
    pub(super) fn at(&self, path: &str) -> Option<Range<usize>> {
        // Parsed only when an error needs a line.
        let doc = self
            .doc
            .get_or_init(|| toml_edit::ImDocument::parse(self.text).ok())
            .as_ref()?;
        let mut item = doc.as_item();
        for segment in path.split('.') {
            item = match segment.parse::<usize>() {
                Ok(i) => item.get(i)?,
                Err(_) => item.get(segment)?,
            };
        }
        item.span()
    }
}

fn above(span: Option<Range<usize>>, what: String, limit: u64, note: &str) -> Invalid {
    (span, format!("{what} is above the limit of {limit}{note}"))
}

/// Bounds on the file's own values, checked before anything is built from them.
pub(super) fn check_file(file: &ScenarioFile, keys: &KeySpans) -> Result<(), Invalid> {
    let duration = *file.duration_ms.get_ref();
    if duration > MAX_DURATION_MS {
        return Err(above(
            Some(file.duration_ms.span()),
            format!("duration_ms = {duration}"),
            MAX_DURATION_MS,
            " (7 simulated days)",
        ));
    }
    let time = |path: String, label: String, value: u64| -> Result<(), Invalid> {
        if value > MAX_TIME_MS {
            return Err(above(
                keys.at(&path),
                format!("{label} = {value}"),
                MAX_TIME_MS,
                " (the limit of every time, Kafka's int maximum)",
            ));
        }
        Ok(())
    };
    let g = &file.group;
    for (key, value) in [
        ("max_poll_interval_ms", *g.max_poll_interval_ms.get_ref()),
        ("initial_rebalance_delay_ms", g.initial_rebalance_delay_ms),
        ("auto_commit_interval_ms", g.auto_commit_interval_ms),
        ("record_processing_us", g.record_processing_us),
        ("fetch_max_wait_ms", g.fetch_max_wait_ms),
        ("retry_backoff_ms", g.retry_backoff_ms),
        ("retry_backoff_max_ms", g.retry_backoff_max_ms),
        ("on_partitions_revoked_ms", g.on_partitions_revoked_ms),
        ("on_partitions_assigned_ms", g.on_partitions_assigned_ms),
        ("metadata_max_age_ms", g.metadata_max_age_ms),
        ("request_timeout_ms", g.request_timeout_ms),
        ("poll_timeout_ms", g.poll_timeout_ms),
    ] {
        time(format!("group.{key}"), format!("group.{key}"), value)?;
    }
    let c = &file.cluster;
    for (key, value) in [
        ("replication_delay_ms", c.replication_delay_ms),
        ("broker_session_timeout_ms", c.broker_session_timeout_ms),
        ("leader_election_ms", c.leader_election_ms),
        ("coordinator_load_ms", c.coordinator_load_ms),
        (
            "leader_imbalance_check_interval_ms",
            c.leader_imbalance_check_interval_ms,
        ),
    ] {
        time(format!("cluster.{key}"), format!("cluster.{key}"), value)?;
    }
    let poll_records = *g.max_poll_records.get_ref();
    if poll_records > MAX_POLL_RECORDS {
        return Err(above(
            Some(g.max_poll_records.span()),
            format!("group.max_poll_records = {poll_records}"),
            MAX_POLL_RECORDS,
            " (an int in Kafka)",
        ));
    }
    time(
        "lag_sample_ms".into(),
        "lag_sample_ms".into(),
        file.lag_sample_ms,
    )?;

    let brokers = u64::from(*file.cluster.brokers.get_ref());
    if brokers > MAX_BROKERS {
        return Err(above(
            Some(file.cluster.brokers.span()).filter(|s| !s.is_empty()),
            format!("cluster.brokers = {brokers}"),
            MAX_BROKERS,
            "",
        ));
    }
    let offsets = u64::from(file.cluster.offsets_topic_partitions);
    if offsets > MAX_PARTITIONS {
        return Err(above(
            keys.at("cluster.offsets_topic_partitions"),
            format!("cluster.offsets_topic_partitions = {offsets}"),
            MAX_PARTITIONS,
            "",
        ));
    }
    let latency = file.cluster.request_latency_ms.get_ref();
    if latency.max > MAX_LATENCY_MS {
        return Err(above(
            keys.at("cluster.request_latency_ms.max"),
            format!("cluster.request_latency_ms.max = {}", latency.max),
            MAX_LATENCY_MS,
            " ms of one-way latency",
        ));
    }
    if let Some(lag) = &file.arrival.partition_lag_ms {
        time(
            "arrival.partition_lag_ms.max".into(),
            "arrival.partition_lag_ms.max".into(),
            lag.get_ref().max,
        )?;
    }
    for (i, &lag) in file.arrival.broker_lag_ms.iter().enumerate() {
        time(
            format!("arrival.broker_lag_ms.{i}"),
            format!("arrival.broker_lag_ms[{i}]"),
            lag,
        )?;
    }
    if let Some(app) = &file.app {
        time(
            "app.wait_for_prices_ms".into(),
            "app.wait_for_prices_ms".into(),
            app.get_ref().wait_for_prices_ms,
        )?;
    }

    // Members, before `count` names are generated.
    let mut members = 0u64;
    for (i, entry) in file.members.iter().enumerate() {
        let m = entry.get_ref();
        members += m.count.map_or(1, u64::from);
        if members > MAX_MEMBERS {
            let (span, what) = match m.count {
                Some(n) => (
                    keys.at(&format!("members.{i}.count")),
                    format!("count = {n}"),
                ),
                None => (Some(entry.span()), "one more member".into()),
            };
            return Err((
                span,
                format!(
                    "member {:?}: {what} makes {members} members in all, above the limit of {MAX_MEMBERS}",
                    m.name
                ),
            ));
        }
    }

    // Partitions: every topic's most, added partitions included.
    let mut most: Vec<(String, u64)> = Vec::new();
    let mut total = 0u64;
    for (i, t) in file.topics.iter().enumerate() {
        let t = t.get_ref();
        let n = u64::from(t.partitions);
        total += n;
        if total > MAX_PARTITIONS {
            return Err((
                keys.at(&format!("topics.{i}.partitions")),
                format!(
                    "topic {:?}: partitions = {n} makes {total} partitions in all, above the limit of {MAX_PARTITIONS}",
                    t.name
                ),
            ));
        }
        most.push((t.name.clone(), n));
    }
    for (i, e) in file.timeline.iter().enumerate() {
        let e = e.get_ref();
        if let Some(d) = e.duration_ms {
            time(
                format!("timeline.{i}.duration_ms"),
                format!("timeline: {} duration_ms", e.action.name()),
                d,
            )?;
        }
        if let Some(d) = e.interval_ms {
            time(
                format!("timeline.{i}.interval_ms"),
                format!("timeline: {} interval_ms", e.action.name()),
                d,
            )?;
        }
        let (Some(name), Some(n)) = (&e.topic, e.partitions) else {
            continue;
        };
        let Some((_, m)) = most.iter_mut().find(|(t, _)| t == name) else {
            continue; // an unknown topic is reported by validation
        };
        let n = u64::from(n);
        if n > *m {
            total += n - *m;
            *m = n;
            if total > MAX_PARTITIONS {
                return Err((
                    keys.at(&format!("timeline.{i}.partitions")),
                    format!(
                        "timeline: add_partitions to {name:?}: partitions = {n} makes {total} partitions in all, above the limit of {MAX_PARTITIONS}"
                    ),
                ));
            }
        }
    }

    for (i, p) in file.producers.iter().enumerate() {
        let p = p.get_ref();
        let path = |key: &str| format!("producers.{i}.{key}");
        let who = |key: &str| format!("producer for {:?}: {key}", p.topic);
        for (key, value) in [
            ("start_ms", p.start_ms),
            ("end_ms", p.end_ms),
            ("interval_ms", p.interval_ms),
        ] {
            if let Some(v) = value {
                time(path(key), who(key), v)?;
            }
        }
        if let Some(rate) = p.records_per_sec.filter(|&r| r > MAX_RECORDS_PER_SEC) {
            return Err(above(
                keys.at(&path("records_per_sec")),
                who(&format!("records_per_sec = {rate}")),
                MAX_RECORDS_PER_SEC,
                "",
            ));
        }
        let key_count = p
            .key_count
            .map(u64::from)
            .or(p.keys.as_ref().map(|k| k.len() as u64));
        if let Some(n) = key_count.filter(|&n| n > MAX_KEYS) {
            let key = if p.key_count.is_some() {
                "key_count"
            } else {
                "keys"
            };
            return Err(above(
                keys.at(&path(key)),
                who(&format!("{key} = {n}")),
                MAX_KEYS,
                " keys",
            ));
        }
    }
    Ok(())
}

/// Bounds on what the validated scenario makes: keyed records, the event loop's work, lag
/// samples.
pub(super) fn check_scenario(scenario: &Scenario, keys: &KeySpans) -> Result<(), Invalid> {
    let duration = u128::from(scenario.duration_ms);
    let mut keyed = 0u128;
    let mut records = 0u128;
    for (i, p) in scenario.producers.iter().enumerate() {
        let span_ms = u128::from(p.end_ms - p.start_ms);
        let (made, key) = match &p.kind {
            ProducerKind::NullKeys { records_per_sec } => {
                // Closed form, no memory: only what the run reaches is polled.
                let end = u128::from(p.end_ms).min(duration);
                let live = end.saturating_sub(u128::from(p.start_ms));
                records += u128::from(*records_per_sec) * live / 1000;
                continue;
            }
            ProducerKind::Keyed {
                records_per_sec, ..
            } => (
                (u128::from(*records_per_sec) * span_ms).div_ceil(1000),
                "records_per_sec",
            ),
            ProducerKind::Script {
                keys,
                per_key,
                interval_ms,
            } => {
                let all = u128::from(*per_key) * keys.len() as u128;
                let fit = match *interval_ms {
                    0 => all,
                    step => span_ms.div_ceil(u128::from(step)),
                };
                (all.min(fit), "per_key")
            }
        };
        let fanout = match p.stream_partitioner {
            Some(StreamPartitioner::Broadcast) => {
                u128::from(scenario.topics[p.topic].max_partitions())
            }
            _ => 1,
        };
        let appends = made * fanout;
        keyed += appends.max(made);
        records += appends;
        if keyed > u128::from(MAX_KEYED_RECORDS) {
            return Err((
                keys.at(&format!("producers.{i}.{key}")),
                format!(
                    "producer for {:?}: {keyed} keyed records in all{}, above the limit of {MAX_KEYED_RECORDS}",
                    scenario.topics[p.topic].name,
                    if fanout > 1 { " (a broadcast counts once per partition)" } else { "" }
                ),
            ));
        }
    }

    let partitions: u128 = scenario
        .topics
        .iter()
        .map(|t| u128::from(t.max_partitions()))
        .sum();

    // The event loop's work. A poll takes at least one record and, when records cost time, at
    // least that long; members also wake for heartbeats, empty fetches and metadata refreshes.
    // Each event scans a member's owned partitions, and costs more in a bigger group (measured:
    // ~0.4 us an event with 5 members, ~2 us with 10,000; 40-55 ns a scanned partition).
    let g = &scenario.group;
    let members = scenario.members.len() as u128;
    let member_us = members * duration * 1000;
    // The fastest member's processing time bounds the polls (members may set their own).
    let fastest_us = scenario
        .members
        .iter()
        .map(|m| m.settings.record_processing_us)
        .min()
        .unwrap_or(g.record_processing_us);
    let polls = records.min(member_us / u128::from(fastest_us.max(1)));
    let shortest_heartbeat = scenario
        .members
        .iter()
        .map(|m| m.settings.heartbeat_interval_ms)
        .min()
        .unwrap_or(g.heartbeat_interval_ms);
    let per_member = duration / u128::from(shortest_heartbeat.max(1))
        + duration / u128::from(g.fetch_max_wait_ms)
        + duration / u128::from(g.metadata_max_age_ms);
    // A wake-up is two events or more (a heartbeat and its response).
    let events = polls + 2 * members * per_member;
    let share = (partitions / members.max(1)).max(1);
    let per_event = u128::from(NS_PER_OWNED_PARTITION) * share
        + u128::from(NS_PER_GROUP_LOG2) * u128::from(members.max(1).ilog2() + 1);
    let work = events * per_event;
    if work > u128::from(MAX_WORK_NS) {
        let tenths = |ns: u128| {
            let t = ns / 100_000_000;
            format!("{}.{}", t / 10, t % 10)
        };
        return Err((
            keys.at("duration_ms"),
            format!(
                "duration_ms = {}: an estimated {} s of work ({events} events: {records} records to poll, \
                 and a heartbeat every {} ms and an idle fetch every {} ms for each of {members} members \
                 owning about {share} partition{}), above the limit of {} s; shorten the run, or use fewer \
                 members, partitions or records",
                scenario.duration_ms,
                tenths(work),
                g.heartbeat_interval_ms,
                g.fetch_max_wait_ms,
                if share == 1 { "" } else { "s" },
                tenths(u128::from(MAX_WORK_NS)),
            ),
        ));
    }

    let samples = duration / u128::from(scenario.lag_sample_ms) + 1;
    if samples > u128::from(MAX_LAG_SAMPLES) {
        let least = scenario.duration_ms / MAX_LAG_SAMPLES + 1;
        return Err((
            keys.at("lag_sample_ms"),
            format!(
                "lag_sample_ms = {} takes {samples} lag samples over duration_ms {}, above the limit of {MAX_LAG_SAMPLES} (lag_sample_ms must be at least {least} for this run)",
                scenario.lag_sample_ms, scenario.duration_ms
            ),
        ));
    }
    if samples * partitions > u128::from(MAX_LAG_READS) {
        // floor(duration / lag_sample_ms) + 1 samples of `partitions` each fit the limit.
        let least = duration / (u128::from(MAX_LAG_READS) / partitions) + 1;
        return Err((
            keys.at("lag_sample_ms"),
            format!(
                "lag_sample_ms = {}: {samples} lag samples of {partitions} partitions each, above the limit of {MAX_LAG_READS} partition reads (lag_sample_ms must be at least {least} for this run)",
                scenario.lag_sample_ms
            ),
        ));
    }
    Ok(())
}
