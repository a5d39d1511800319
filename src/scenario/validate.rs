//! From the file as written to the typed scenario: defaults resolved, variant applied, every
//! cross-reference checked. Errors carry the byte span of the offending entry for its line.

use super::file::{
    AppKindFile, CommitAfterBatchFile, KeyDistributionFile, MemberFile, OffsetResetFile, Protocol,
    RecoveryFile, ScenarioFile, StreamPartitionerFile,
};
use super::limits::{self, KeySpans};
use super::members::{member_spec, MemberContext};
use super::DEFAULT_SNAPSHOT_VARIANTS;
use super::{
    ArrivalSpec, ClusterSpec, CommitAfterBatch, GroupSpec, JoinApp, KeyDistribution, LoadOptions,
    MemberSpec, OffsetReset, ProducerKind, ProducerSpec, Recovery, Scenario, StreamPartitioner,
    TopicSpec,
};
use std::collections::BTreeSet;

use super::members::{Invalid, MAX_SESSION_TIMEOUT_MS, MIN_SESSION_TIMEOUT_MS};

/// Variants every scenario has (DESIGN.md "Interfaces"), and `default`: the file as written
/// (what a run without `--variant` runs; an upgrade scenario's members carry their own lists).
pub const BUILT_IN_VARIANTS: &[&str] = &["eager", "cooperative", "consumer", DEFAULT_VARIANT];
const DEFAULT_VARIANT: &str = "default";

/// A command line's `--variants`: at least one, each named once, none empty (`purpose` says in
/// the error what there is none to do: "no variant to compare"). Whether each exists, the
/// scenario says.
pub fn check_variant_names(variants: &[String], purpose: &str) -> Result<(), String> {
    if variants.is_empty() {
        return Err(format!("no variant to {purpose}"));
    }
    for (i, v) in variants.iter().enumerate() {
        if v.trim().is_empty() {
            return Err(format!("empty variant name at position {}", i + 1));
        }
        if variants[..i].contains(v) {
            return Err(format!("variant {v:?} named twice"));
        }
    }
    Ok(())
}

pub fn validate(
    file: ScenarioFile,
    text: &str,
    options: &LoadOptions,
) -> Result<Scenario, Invalid> {
    let keys = KeySpans::new(text);
    limits::check_file(&file, &keys)?;
    let scenario = build(file, options)?;
    limits::check_scenario(&scenario, &keys)?;
    Ok(scenario)
}

fn build(file: ScenarioFile, options: &LoadOptions) -> Result<Scenario, Invalid> {
    let whole = |m: String| -> Invalid { (None, m) };
    let duration_ms = *file.duration_ms.get_ref();
    if duration_ms == 0 {
        return Err((
            Some(file.duration_ms.span()),
            "duration_ms must be positive".into(),
        ));
    }

    // Topics.
    let mut topics = Vec::new();
    for t in &file.topics {
        let span = Some(t.span());
        let t = t.get_ref();
        if t.partitions == 0 {
            return Err((
                span,
                format!("topic {:?}: partitions must be at least 1", t.name),
            ));
        }
        if topics.iter().any(|x: &TopicSpec| x.name == t.name) {
            return Err((span, format!("topic {:?} is declared twice", t.name)));
        }
        topics.push(TopicSpec {
            name: t.name.clone(),
            partitions: t.partitions,
            resizes: Vec::new(),
            replication_factor: t.replication_factor,
        });
    }
    if topics.is_empty() {
        return Err(whole(
            "a scenario needs at least one [[topics]] entry".into(),
        ));
    }

    // Cluster.
    let brokers = *file.cluster.brokers.get_ref();
    if brokers == 0 {
        return Err((
            Some(file.cluster.brokers.span()),
            "cluster.brokers must be at least 1".into(),
        ));
    }
    let latency = *file.cluster.request_latency_ms.get_ref();
    if latency.min > latency.max {
        return Err((
            Some(file.cluster.request_latency_ms.span()),
            format!(
                "cluster.request_latency_ms: min {} is above max {}",
                latency.min, latency.max
            ),
        ));
    }
    if file.cluster.offsets_topic_partitions == 0 {
        return Err(whole(
            "cluster.offsets_topic_partitions must be at least 1".into(),
        ));
    }
    let broker_racks = match &file.cluster.broker_racks {
        None => Vec::new(),
        Some(racks) => {
            let bad = |e: String| Err((Some(racks.span()), e));
            if racks.get_ref().len() != brokers as usize {
                // Kafka's rack-aware placement refuses brokers without a rack among racked ones.
                return bad(format!(
                    "cluster.broker_racks lists {} racks, the cluster has {brokers} brokers (every broker needs one)",
                    racks.get_ref().len()
                ));
            }
            if racks.get_ref().iter().any(|r| r.is_empty()) {
                return bad("cluster.broker_racks: a rack name is empty".into());
            }
            let mut distinct = racks.get_ref().clone();
            distinct.sort();
            distinct.dedup();
            if distinct.len() > crate::assignor::racks::MAX_RACKS {
                return bad(format!(
                    "cluster.broker_racks names {} racks: cgsim tells at most {} apart",
                    distinct.len(),
                    crate::assignor::racks::MAX_RACKS
                ));
            }
            racks.get_ref().clone()
        }
    };
    for (t, spec) in file.topics.iter().zip(&topics) {
        let rf = spec.replication_factor;
        if rf == 0 || rf > brokers {
            // InvalidReplicationFactorException.
            return Err((
                Some(t.span()),
                format!(
                    "topic {:?}: replication_factor {rf} must be between 1 and the {brokers} brokers",
                    spec.name
                ),
            ));
        }
    }

    // Variant: replaces the group's assignor list and clears members' own lists.
    let g = &file.group;
    let mut protocol = *g.protocol.get_ref();
    let mut group_assignors = g.assignors.get_ref().clone();
    let mut assignors_span = Some(g.assignors.span());
    let mut clear_member_assignors = false;
    let variant = options
        .variant
        .clone()
        .unwrap_or_else(|| DEFAULT_VARIANT.into());
    let chosen = options
        .variant
        .as_ref()
        .filter(|v| v.as_str() != DEFAULT_VARIANT || file.variants.contains_key(*v));
    if let Some(name) = chosen {
        if let Some(v) = file.variants.get(name) {
            assignors_span = Some(v.span());
            let v = v.get_ref();
            if let Some(a) = &v.assignors {
                group_assignors = a.clone();
                clear_member_assignors = true;
            }
            if let Some(p) = v.protocol {
                protocol = p;
            }
        } else {
            match name.as_str() {
                "eager" => group_assignors = vec!["range".into()],
                "cooperative" => group_assignors = vec!["cooperative-sticky".into()],
                "consumer" => {
                    protocol = Protocol::Consumer;
                    group_assignors = vec!["uniform".into()];
                }
                _ => {
                    let mut known: Vec<&str> = BUILT_IN_VARIANTS.to_vec();
                    known.extend(file.variants.keys().map(String::as_str));
                    return Err(whole(format!(
                        "unknown variant {name:?} (this scenario has: {})",
                        known.join(", ")
                    )));
                }
            }
            clear_member_assignors = true;
        }
    }

    // Group settings.
    let session = *g.session_timeout_ms.get_ref();
    if !(MIN_SESSION_TIMEOUT_MS..=MAX_SESSION_TIMEOUT_MS).contains(&session) {
        return Err((
            Some(g.session_timeout_ms.span()),
            format!(
                "group.session_timeout_ms = {session} is outside the broker's bounds \
                 [{MIN_SESSION_TIMEOUT_MS}, {MAX_SESSION_TIMEOUT_MS}] (Kafka answers INVALID_SESSION_TIMEOUT)"
            ),
        ));
    }
    let heartbeat = *g.heartbeat_interval_ms.get_ref();
    if heartbeat == 0 || heartbeat >= session {
        return Err((
            Some(g.heartbeat_interval_ms.span()),
            format!("group.heartbeat_interval_ms = {heartbeat} must be positive and below session_timeout_ms ({session})"),
        ));
    }
    if *g.max_poll_interval_ms.get_ref() == 0 {
        return Err((
            Some(g.max_poll_interval_ms.span()),
            "group.max_poll_interval_ms must be positive".into(),
        ));
    }
    if *g.max_poll_records.get_ref() == 0 {
        return Err((
            Some(g.max_poll_records.span()),
            "group.max_poll_records must be at least 1".into(),
        ));
    }
    if g.auto_commit_interval_ms == 0
        || g.fetch_max_wait_ms == 0
        || g.retry_backoff_ms == 0
        || g.retry_backoff_max_ms == 0
    {
        return Err(whole(
            "group.auto_commit_interval_ms, fetch_max_wait_ms, retry_backoff_ms and retry_backoff_max_ms must be positive".into(),
        ));
    }
    let group = GroupSpec {
        group_id: g.group_id.clone(),
        protocol,
        session_timeout_ms: session,
        heartbeat_interval_ms: heartbeat,
        max_poll_interval_ms: *g.max_poll_interval_ms.get_ref(),
        initial_rebalance_delay_ms: g.initial_rebalance_delay_ms,
        enable_auto_commit: g.enable_auto_commit,
        auto_commit_interval_ms: g.auto_commit_interval_ms,
        auto_offset_reset: match g.auto_offset_reset {
            OffsetResetFile::Earliest => OffsetReset::Earliest,
            OffsetResetFile::Latest => OffsetReset::Latest,
        },
        max_poll_records: *g.max_poll_records.get_ref(),
        record_processing_us: g.record_processing_us,
        fetch_max_wait_ms: g.fetch_max_wait_ms,
        retry_backoff_ms: g.retry_backoff_ms,
        retry_backoff_max_ms: g.retry_backoff_max_ms,
        request_timeout_ms: g.request_timeout_ms,
        poll_timeout_ms: g.poll_timeout_ms,
        commit_after_batch: match g.commit_after_batch {
            CommitAfterBatchFile::None => CommitAfterBatch::None,
            CommitAfterBatchFile::Sync => CommitAfterBatch::Sync,
            CommitAfterBatchFile::Async => CommitAfterBatch::Async,
        },
        commit_on_revoke: g.commit_on_revoke,
        on_partitions_revoked_ms: g.on_partitions_revoked_ms,
        on_partitions_assigned_ms: g.on_partitions_assigned_ms,
        metadata_max_age_ms: g.metadata_max_age_ms,
        fetch_from_follower: g.fetch_from_follower,
        remote_assignor: g.remote_assignor.as_ref().map(|a| a.get_ref().clone()),
        consumer_heartbeat_interval_ms: g.consumer_heartbeat_interval_ms,
        consumer_session_timeout_ms: g.consumer_session_timeout_ms,
        consumer_assignment_interval_ms: g.consumer_assignment_interval_ms,
        migration_policy: g.migration_policy,
    };
    if group.consumer_heartbeat_interval_ms == 0
        || group.consumer_heartbeat_interval_ms >= group.consumer_session_timeout_ms
    {
        return Err(whole(format!(
            "group.consumer_heartbeat_interval_ms = {} must be positive and below consumer_session_timeout_ms ({})",
            group.consumer_heartbeat_interval_ms, group.consumer_session_timeout_ms
        )));
    }
    if let Some(a) = &g.remote_assignor {
        if !crate::assignor::SERVER_ASSIGNORS.contains(&a.get_ref().as_str()) {
            return Err((
                Some(a.span()),
                format!(
                    "group.remote_assignor {:?} is not a server assignor the broker has (uniform, range)",
                    a.get_ref()
                ),
            ));
        }
        if protocol == Protocol::Classic {
            return Err((
                Some(a.span()),
                "group.remote_assignor applies only to protocol = \"consumer\" (Kafka's ConsumerConfig refuses group.remote.assignor with group.protocol=classic)".into(),
            ));
        }
    }
    let mut notices = if protocol == Protocol::Consumer {
        classic_only_settings(&file)
    } else {
        Vec::new()
    };
    if group.fetch_from_follower && broker_racks.is_empty() {
        // RackAwareReplicaSelector matches client.rack against broker.rack: without broker
        // racks every fetch goes to the leader.
        notices.push(
            "group.fetch_from_follower = true does nothing without cluster.broker_racks (the \
             replica selector matches a member's client_rack against the brokers' racks)"
                .into(),
        );
    }
    if group.metadata_max_age_ms == 0 {
        return Err(whole("group.metadata_max_age_ms must be positive".into()));
    }

    // Members.
    let cx = MemberContext {
        group: &group,
        group_assignors: &group_assignors,
        assignors_span: assignors_span.clone(),
        clear_member_assignors,
        topics: topics.iter().map(|t| t.name.clone()).collect(),
    };
    let mut members: Vec<MemberSpec> = Vec::new();
    // Each member's entry and its number in it (a restart's `set` is read over the entry).
    let mut entry_of: Vec<(&MemberFile, usize)> = Vec::new();
    let mut instance_ids = BTreeSet::new();
    // Every name so far: a group of a thousand members is checked in n log n, not n².
    let mut declared: BTreeSet<String> = BTreeSet::new();
    for entry in &file.members {
        let span = Some(entry.span());
        let m = entry.get_ref();
        let names: Vec<String> = match m.count {
            None => vec![m.name.clone()],
            Some(0) => {
                return Err((
                    span,
                    format!("member {:?}: count must be at least 1", m.name),
                ))
            }
            Some(n) => (1..=n).map(|i| format!("{}{i}", m.name)).collect(),
        };
        // With `count`, a static id is a template: `{n}` is each member's number (pod-{n}).
        let templated = m
            .group_instance_id
            .as_deref()
            .is_some_and(|id| id.contains("{n}"));
        if m.count.is_some() && m.group_instance_id.is_some() && !templated {
            return Err((
                span,
                format!(
                    "member {:?}: a group_instance_id cannot be shared by {} members (write it as a template, \"pod-{{n}}\")",
                    m.name,
                    names.len()
                ),
            ));
        }
        for (i, name) in names.into_iter().enumerate() {
            if !declared.insert(name.clone()) {
                return Err((span, format!("member {name:?} is declared twice")));
            }
            let spec = member_spec(m, name, i + 1, span.clone(), &cx)?;
            if let Some(id) = &spec.group_instance_id {
                if !instance_ids.insert(id.clone()) {
                    return Err((span, format!("group_instance_id {id:?} is used twice")));
                }
            }
            members.push(spec);
            entry_of.push((m, i + 1));
        }
    }
    if members.is_empty() {
        return Err(whole(
            "a scenario needs at least one [[members]] entry".into(),
        ));
    }

    // Producers: a topic is written either by null-key streams or by keyed producers.
    let mut producers: Vec<ProducerSpec> = Vec::new();
    for p in &file.producers {
        let span = Some(p.span());
        let p = p.get_ref();
        let bad =
            |m: String| -> Invalid { (span.clone(), format!("producer for {:?}: {m}", p.topic)) };
        let topic = topics
            .iter()
            .position(|t| t.name == p.topic)
            .ok_or_else(|| bad("unknown topic".into()))?;
        let keys: Option<Vec<String>> = match (&p.keys, p.key_count) {
            (Some(_), Some(_)) => return Err(bad("give keys or key_count, not both".into())),
            (Some(k), None) if k.is_empty() => return Err(bad("keys is empty".into())),
            (Some(k), None) => Some(k.clone()),
            (None, Some(0)) => return Err(bad("key_count must be at least 1".into())),
            (None, Some(n)) => Some((0..n).map(|i| format!("key-{i}")).collect()),
            (None, None) => None,
        };
        let start_ms = p.start_ms.unwrap_or(0);
        let end_ms = p.end_ms.unwrap_or(duration_ms);
        if start_ms >= end_ms {
            return Err(bad(format!(
                "start_ms {start_ms} is not before end_ms {end_ms}"
            )));
        }
        let kind = match (p.records_per_sec, p.per_key) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "give records_per_sec (a stream) or per_key (a script), not both".into(),
                ))
            }
            (None, None) => return Err(bad("needs records_per_sec or per_key".into())),
            (Some(rate), None) => {
                if p.interval_ms.is_some() {
                    return Err(bad("interval_ms applies to a script (per_key)".into()));
                }
                match keys {
                    None if p.key_distribution.is_some() => {
                        return Err(bad("key_distribution needs keys or key_count".into()))
                    }
                    None => ProducerKind::NullKeys {
                        records_per_sec: rate,
                    },
                    Some(keys) => ProducerKind::Keyed {
                        records_per_sec: rate,
                        keys,
                        distribution: match p.key_distribution.unwrap_or(KeyDistributionFile::Cycle)
                        {
                            KeyDistributionFile::Cycle => KeyDistribution::Cycle,
                            KeyDistributionFile::Uniform => KeyDistribution::Uniform,
                            KeyDistributionFile::Skewed => KeyDistribution::Skewed,
                        },
                    },
                }
            }
            (None, Some(per_key)) => {
                let keys =
                    keys.ok_or_else(|| bad("a script (per_key) needs keys or key_count".into()))?;
                if p.key_distribution.is_some() {
                    return Err(bad(
                        "key_distribution applies to a stream (records_per_sec)".into(),
                    ));
                }
                ProducerKind::Script {
                    keys,
                    per_key,
                    interval_ms: p.interval_ms.unwrap_or(1),
                }
            }
        };
        if p.stream_partitioner.is_some() && !kind.is_keyed() {
            return Err(bad("a stream partitioner needs keyed records".into()));
        }
        if p.stream_partitioner_keys.is_some() && p.stream_partitioner.is_none() {
            return Err(bad(
                "stream_partitioner_keys needs a stream_partitioner".into()
            ));
        }
        if let Some(other) = producers
            .iter()
            .find(|q| q.topic == topic && q.kind.is_keyed() != kind.is_keyed())
        {
            let _ = other;
            return Err(bad(
                "a topic's producers must all be keyed or all null-keyed".into(),
            ));
        }
        producers.push(ProducerSpec {
            topic,
            start_ms,
            end_ms,
            kind,
            stream_partitioner: p.stream_partitioner.map(|s| match s {
                StreamPartitionerFile::Default => StreamPartitioner::Default,
                StreamPartitionerFile::Drop => StreamPartitioner::Drop,
                StreamPartitionerFile::Broadcast => StreamPartitioner::Broadcast,
            }),
            stream_partitioner_keys: p.stream_partitioner_keys.clone(),
        });
    }

    if file.lag_sample_ms == 0 {
        return Err(whole("lag_sample_ms must be positive".into()));
    }

    // Arrival.
    let partition_lag = file.arrival.partition_lag_ms.as_ref();
    let arrival = ArrivalSpec {
        partition_lag_min_ms: partition_lag.map_or(0, |l| l.get_ref().min),
        partition_lag_max_ms: partition_lag.map_or(0, |l| l.get_ref().max),
        broker_lag_ms: file.arrival.broker_lag_ms.clone(),
    };
    if arrival.partition_lag_min_ms > arrival.partition_lag_max_ms {
        return Err((
            partition_lag.map(|l| l.span()),
            "arrival.partition_lag_ms: min is above max".into(),
        ));
    }
    if arrival.broker_lag_ms.len() > brokers as usize {
        return Err(whole(format!(
            "arrival.broker_lag_ms lists {} brokers, the cluster has {brokers}",
            arrival.broker_lag_ms.len()
        )));
    }

    // The application.
    let app = match &file.app {
        None => None,
        Some(a) => {
            let span = Some(a.span());
            let a = a.get_ref();
            let find = |name: &str| {
                topics
                    .iter()
                    .position(|t| t.name == name)
                    .ok_or_else(|| (span.clone(), format!("app: unknown topic {name:?}")))
            };
            // The one application kind so far; the match makes a new kind a compile error here.
            match a.kind {
                AppKindFile::LocalJoin => {}
            }
            let (prices, notifications) = (find(&a.prices)?, find(&a.notifications)?);
            for t in [prices, notifications] {
                if producers.iter().any(|p| p.topic == t && !p.kind.is_keyed()) {
                    return Err((
                        span,
                        format!("app: the join needs keyed records in {:?}", topics[t].name),
                    ));
                }
            }
            if a.restore_records_per_sec == 0 {
                return Err((span, "app.restore_records_per_sec must be positive".into()));
            }
            Some(JoinApp {
                prices,
                notifications,
                wait_for_prices_ms: a.wait_for_prices_ms,
                recovery: match a.recovery {
                    RecoveryFile::None => Recovery::None,
                    RecoveryFile::Changelog => Recovery::Changelog,
                    RecoveryFile::Standby => Recovery::Standby,
                },
                restore_records_per_sec: a.restore_records_per_sec,
                pause_during_restore: a.pause_during_restore,
                keep_state_on_revoke: a.keep_state_on_revoke,
            })
        }
    };

    let (timeline, plan) = super::timeline::resolve::resolve(
        &file.timeline,
        super::timeline::resolve::Roster {
            members: &mut members,
            topics: &mut topics,
            brokers,
            duration_ms,
            cx: &cx,
            entry_of: &entry_of,
        },
    )?;

    // Co-partitioned topics must start with equal partition counts.
    let mut co_partitioned = Vec::new();
    for group_names in file.co_partitioned.get_ref() {
        let span = Some(file.co_partitioned.span());
        let mut idx = Vec::new();
        for name in group_names {
            let t = topics.iter().position(|t| &t.name == name).ok_or_else(|| {
                (
                    span.clone(),
                    format!("co_partitioned: unknown topic {name:?}"),
                )
            })?;
            idx.push(t);
        }
        let counts: Vec<String> = idx
            .iter()
            .map(|&t| format!("{} has {}", topics[t].name, topics[t].partitions))
            .collect();
        if idx
            .windows(2)
            .any(|w| topics[w[0]].partitions != topics[w[1]].partitions)
        {
            return Err((
                span,
                format!(
                    "co_partitioned topics must have equal partition counts: {}",
                    counts.join(", ")
                ),
            ));
        }
        co_partitioned.push(idx);
    }

    let snapshot_variants = match &file.snapshot_variants {
        None => DEFAULT_SNAPSHOT_VARIANTS.map(String::from).to_vec(),
        Some(list) => {
            for v in list.get_ref() {
                if !BUILT_IN_VARIANTS.contains(&v.as_str()) && !file.variants.contains_key(v) {
                    return Err((
                        Some(list.span()),
                        format!("snapshot_variants: unknown variant {v:?}"),
                    ));
                }
            }
            list.get_ref().clone()
        }
    };

    let mut expects = Vec::new();
    for entry in &file.expect {
        let known = |v: &str| BUILT_IN_VARIANTS.contains(&v) || file.variants.contains_key(v);
        // The line is filled in by `validate`, which has the text: the span's start for now.
        let e = super::expect::Expectation::from_file(entry.get_ref(), entry.span().start, known)
            .map_err(|m| (Some(entry.span()), format!("[[expect]]: {m}")))?;
        expects.push(e);
    }

    let mutant = match &file.mutant {
        None => None,
        Some(name) => Some(
            super::Mutant::parse(name.get_ref())
                .map_err(|m| (Some(name.span()), format!("mutant: {m}")))?,
        ),
    };

    Ok(Scenario {
        name: file.name.unwrap_or_else(|| "scenario".into()),
        description: file.description,
        seed: options.seed.unwrap_or(file.seed),
        variant,
        duration_ms,
        cluster: ClusterSpec {
            brokers,
            latency_min_us: latency.min * 1000,
            latency_max_us: latency.max * 1000,
            offsets_topic_partitions: file.cluster.offsets_topic_partitions,
            broker_racks,
            replication_delay_us: file.cluster.replication_delay_ms * 1000,
            broker_session_timeout_ms: file.cluster.broker_session_timeout_ms,
            leader_election_ms: file.cluster.leader_election_ms,
            coordinator_load_ms: file.cluster.coordinator_load_ms,
            leader_imbalance_check_interval_ms: file.cluster.leader_imbalance_check_interval_ms,
        },
        topics,
        group,
        members,
        producers,
        arrival,
        app,
        lag_sample_ms: file.lag_sample_ms,
        timeline,
        plan,
        co_partitioned,
        snapshot_variants,
        expects,
        notices,
        mutant,
    })
}

/// Classic-only client settings the file sets, which the consumer protocol does not apply (as
/// in the Java client: the broker assigns and decides the session and heartbeat timing).
fn classic_only_settings(file: &ScenarioFile) -> Vec<String> {
    let g = &file.group;
    let mut notices = Vec::new();
    let mut note = |key: String, value: String, instead: &str| {
        notices.push(format!(
            "{key} = {value} does not apply under the consumer protocol ({instead})"
        ));
    };
    if !g.assignors.span().is_empty() {
        note(
            "group.assignors".into(),
            format!("{:?}", g.assignors.get_ref()),
            "the broker's server assignor assigns; see remote_assignor",
        );
    }
    if !g.session_timeout_ms.span().is_empty() {
        note(
            "group.session_timeout_ms".into(),
            g.session_timeout_ms.get_ref().to_string(),
            "the broker's group.consumer.session.timeout.ms decides: consumer_session_timeout_ms",
        );
    }
    if !g.heartbeat_interval_ms.span().is_empty() {
        note(
            "group.heartbeat_interval_ms".into(),
            g.heartbeat_interval_ms.get_ref().to_string(),
            "the broker hands out group.consumer.heartbeat.interval.ms: consumer_heartbeat_interval_ms",
        );
    }
    for m in &file.members {
        let m = m.get_ref();
        if let Some(a) = &m.assignors {
            note(
                format!("members {:?} assignors", m.name),
                format!("{a:?}"),
                "the broker's server assignor assigns",
            );
        }
        if let Some(s) = m.session_timeout_ms {
            note(
                format!("members {:?} session_timeout_ms", m.name),
                s.to_string(),
                "the broker's session timeout applies",
            );
        }
        if let Some(h) = m.heartbeat_interval_ms {
            note(
                format!("members {:?} heartbeat_interval_ms", m.name),
                h.to_string(),
                "the broker's heartbeat interval applies",
            );
        }
    }
    notices
}

/// Each member's actions must make sense in order: a running member can leave, crash, stall or
/// subscribe; only a stopped one can restart; a stall starts after the member's previous stall
/// has ended (a stall holds the batch in progress, so one inside another would end after both:
/// overlapping stalls are refused rather than given an end nobody wrote). The error names the
#[cfg(test)]
mod tests {
    use super::check_variant_names;

    #[test]
    fn variants_are_named_once() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(check_variant_names(&names(&["eager", "cooperative"]), "run").is_ok());
        assert!(check_variant_names(&names(&["eager", "eager"]), "run")
            .unwrap_err()
            .contains("named twice"));
        assert!(check_variant_names(&names(&[""]), "run")
            .unwrap_err()
            .contains("empty"));
        assert_eq!(
            check_variant_names(&[], "compare").unwrap_err(),
            "no variant to compare"
        );
    }
}
