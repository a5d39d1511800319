//! From the file as written to the typed scenario: defaults resolved, variant applied, every
//! cross-reference checked. Errors carry the byte span of the offending entry for its line.
//!
//! `build` runs one section after another, each in its own file under `validate/` and each
//! returning its typed part: `topics.rs`, `cluster.rs`, `group.rs` (the variant, the group's
//! settings, the notices), `members.rs`, `workload.rs` (producers, arrival), `app.rs`, then the
//! timeline (here), `co_partitioned` (`topics.rs`) and what the tests ask (`harness.rs`). The
//! order is the order errors are found in: a file's first error does not depend on the split.

mod app;
mod cluster;
mod group;
mod harness;
mod members;
mod topics;
mod workload;

use super::file::{Action, BrokerFile, BrokersFile, ConnectionsFile, MemberFile, ScenarioFile};
use super::limits::{self, KeySpans};
use super::members::{member_spec, overlay_restart_set, Invalid, MemberContext};
use super::{
    BrokerRef, BrokerSet, Connections, LoadOptions, MemberSpec, NewSettings, Scenario,
    TimelineAction, TimelineEvent,
};

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
    let duration_ms = *file.duration_ms.get_ref();
    if duration_ms == 0 {
        return Err((
            Some(file.duration_ms.span()),
            "duration_ms must be positive".into(),
        ));
    }
    // Each section in turn, in the order its errors are reported; each takes what it needs of
    // the sections before it.
    let mut topics = topics::topic_specs(&file.topics)?;
    let cluster = cluster::cluster_spec(&file.cluster, &file.topics)?;
    let brokers = cluster.brokers;
    let variant = group::apply_variant(&file.group, &file.variants, options.variant.as_ref())?;
    let group = group::group_spec(&file.group, variant.protocol)?;
    let notices = group::notices(&file.group, &file.members, &group, &cluster.broker_racks);
    let cx = MemberContext {
        group: &group,
        group_assignors: &variant.assignors,
        assignors_span: variant.assignors_span.clone(),
        clear_member_assignors: variant.clear_member_assignors,
        topics: topics.iter().map(|t| t.name.clone()).collect(),
    };
    let (mut members, entry_of) = members::member_specs(&file.members, &cx)?;
    let producers = workload::producer_specs(&file.producers, &topics, duration_ms)?;
    if file.lag_sample_ms == 0 {
        return Err((None, "lag_sample_ms must be positive".into()));
    }
    let arrival = workload::arrival_spec(&file.arrival, brokers)?;
    let app = app::join_app(file.app.as_ref(), &topics, &producers)?;

    // Timeline: a member named by a `join` starts then instead of at 0. Each event keeps the
    // span of the entry it came from (a rolling bounce's for its leaves and restarts), so a
    // lifecycle error names that entry's line.
    let mut timeline = Vec::new();
    let mut spans = Vec::new();
    // A restart's `set` entries, read in time order below (each over the one before).
    let mut restart_sets: Vec<Option<Vec<String>>> = Vec::new();
    for e in &file.timeline {
        let span = Some(e.span());
        let e = e.get_ref();
        let bad = |m: String| -> Invalid { (span.clone(), format!("timeline: {m}")) };
        if e.at_ms >= duration_ms {
            return Err(bad(format!(
                "at_ms {} is not before duration_ms {duration_ms}",
                e.at_ms
            )));
        }
        let member = || -> Result<usize, Invalid> {
            let name = e
                .member
                .as_ref()
                .ok_or_else(|| bad(format!("{} needs a member", e.action.name())))?;
            members
                .iter()
                .position(|m| &m.name == name)
                .ok_or_else(|| bad(format!("unknown member {name:?}")))
        };
        // Only the keys an action uses may be given.
        let allowed: &[&str] = match e.action {
            Action::Stall => &["duration_ms"],
            Action::Subscribe => &["topics"],
            Action::AddPartitions => &["topic", "partitions"],
            Action::RollingBounce => &["interval_ms", "duration_ms", "set"],
            Action::Restart => &["set"],
            Action::BrokerCrash => &["broker", "connections"],
            Action::BrokerRestart => &["broker"],
            Action::NetworkPartition => &["members", "brokers", "duration_ms"],
            Action::LatencySpike => &["latency_ms", "duration_ms"],
            _ => &[],
        };
        let given = [
            ("duration_ms", e.duration_ms.is_some()),
            ("topics", e.topics.is_some()),
            ("topic", e.topic.is_some()),
            ("partitions", e.partitions.is_some()),
            ("interval_ms", e.interval_ms.is_some()),
            ("set", e.set.is_some()),
            ("broker", e.broker.is_some()),
            ("connections", e.connections.is_some()),
            ("members", e.members.is_some()),
            ("brokers", e.brokers.is_some()),
            ("latency_ms", e.latency_ms.is_some()),
        ];
        if let Some((key, _)) = given.iter().find(|(k, g)| *g && !allowed.contains(k)) {
            return Err(bad(format!("{key} does not apply to {}", e.action.name())));
        }
        if e.action == Action::RollingBounce {
            if e.member.is_some() {
                return Err(bad(
                    "rolling_bounce restarts every member; it takes no member".into(),
                ));
            }
            let interval = e.interval_ms.unwrap_or(30_000);
            let downtime = e.duration_ms.unwrap_or(5_000);
            if downtime == 0 || interval == 0 {
                return Err(bad(
                    "rolling_bounce needs a positive interval_ms and duration_ms".into(),
                ));
            }
            for (i, m) in members
                .iter()
                .enumerate()
                .filter(|(_, m)| m.start_ms == Some(0))
            {
                let leave_at = e.at_ms + interval * i as u64;
                let restart_at = leave_at + downtime;
                // A bounce the run does not finish would leave members down for good.
                if restart_at >= duration_ms {
                    return Err(bad(format!(
                        "rolling_bounce at {} ms restarts member {:?} at {restart_at} ms, not before duration_ms {duration_ms} \
                         (each member leaves interval_ms {interval} after the one before and restarts duration_ms {downtime} later)",
                        e.at_ms, m.name
                    )));
                }
                timeline.push(TimelineEvent {
                    at_ms: leave_at,
                    action: TimelineAction::Leave { member: i },
                });
                timeline.push(TimelineEvent {
                    at_ms: restart_at,
                    action: TimelineAction::Restart {
                        member: i,
                        settings: None,
                    },
                });
                spans.extend([span.clone(), span.clone()]);
                restart_sets.extend([None, e.set.clone()]);
            }
            continue;
        }
        let action = match e.action {
            Action::Join => TimelineAction::Join { member: member()? },
            Action::Leave => TimelineAction::Leave { member: member()? },
            Action::Crash => TimelineAction::Crash { member: member()? },
            Action::Restart => TimelineAction::Restart {
                member: member()?,
                settings: None,
            },
            Action::Stall => match e.duration_ms {
                Some(d) if d > 0 => TimelineAction::Stall {
                    member: member()?,
                    duration_ms: d,
                },
                _ => return Err(bad("a stall needs a positive duration_ms".into())),
            },
            Action::Subscribe => {
                let topics_to = e
                    .topics
                    .clone()
                    .ok_or_else(|| bad("subscribe needs topics".into()))?;
                if let Some(t) = topics_to
                    .iter()
                    .find(|t| !topics.iter().any(|x| &x.name == *t))
                {
                    return Err(bad(format!("subscribe to unknown topic {t:?}")));
                }
                TimelineAction::Subscribe {
                    member: member()?,
                    topics: topics_to,
                }
            }
            Action::AddPartitions => {
                if e.member.is_some() {
                    return Err(bad("add_partitions takes a topic, not a member".into()));
                }
                let name = e
                    .topic
                    .as_ref()
                    .ok_or_else(|| bad("add_partitions needs a topic".into()))?;
                let topic = topics
                    .iter()
                    .position(|t| &t.name == name)
                    .ok_or_else(|| bad(format!("unknown topic {name:?}")))?;
                let partitions = e
                    .partitions
                    .ok_or_else(|| bad("add_partitions needs the new partition count".into()))?;
                let before = topics[topic].partitions_at(e.at_ms);
                if partitions <= before {
                    return Err(bad(format!(
                        "{name:?} has {before} partitions at {} ms; Kafka can only add partitions, so partitions must be above that",
                        e.at_ms
                    )));
                }
                topics[topic].resizes.push((e.at_ms, partitions));
                topics[topic].resizes.sort_by_key(|&(t, _)| t);
                TimelineAction::AddPartitions { topic, partitions }
            }
            Action::RollingBounce => unreachable!("expanded above"),
            Action::BrokerCrash | Action::BrokerRestart | Action::NetworkPartition
                if e.member.is_some() =>
            {
                return Err(bad(format!(
                    "{} takes {}, not a member",
                    e.action.name(),
                    if e.action == Action::NetworkPartition {
                        "members"
                    } else {
                        "a broker"
                    }
                )));
            }
            Action::BrokerCrash => {
                let broker = match &e.broker {
                    None => return Err(bad("broker_crash needs a broker (an id or \"coordinator\")".into())),
                    Some(b) => broker_ref(b, brokers).map_err(bad)?,
                };
                let connections = match e.connections {
                    None | Some(ConnectionsFile::Reset) => Connections::Reset,
                    Some(ConnectionsFile::Hang) => Connections::Hang,
                };
                TimelineAction::BrokerCrash {
                    broker,
                    connections,
                }
            }
            Action::BrokerRestart => match &e.broker {
                None => return Err(bad("broker_restart needs a broker id".into())),
                Some(b) => match broker_ref(b, brokers).map_err(bad)? {
                    BrokerRef::Id(broker) => TimelineAction::BrokerRestart { broker },
                    BrokerRef::Coordinator => {
                        return Err(bad(
                            "broker_restart needs a broker id (the report's brokers[] names the broker a crash of \"coordinator\" stopped)".into(),
                        ))
                    }
                },
            },
            Action::NetworkPartition => {
                let names = e.members.clone().unwrap_or_default();
                if names.is_empty() {
                    return Err(bad("network_partition needs members (the members cut off)".into()));
                }
                let mut cut = Vec::new();
                for name in &names {
                    let m = members
                        .iter()
                        .position(|m| &m.name == name)
                        .ok_or_else(|| bad(format!("unknown member {name:?}")))?;
                    if !cut.contains(&m) {
                        cut.push(m);
                    }
                }
                cut.sort_unstable();
                let to = match &e.brokers {
                    None => return Err(bad(
                        "network_partition needs brokers (ids, or \"coordinator\")".into(),
                    )),
                    Some(BrokersFile::Name(n)) if n == "coordinator" => BrokerSet::Coordinator,
                    Some(BrokersFile::Name(n)) => {
                        return Err(bad(format!(
                            "brokers = {n:?}: a list of broker ids, or \"coordinator\""
                        )))
                    }
                    Some(BrokersFile::Ids(ids)) if ids.is_empty() => {
                        return Err(bad("network_partition needs at least one broker".into()))
                    }
                    Some(BrokersFile::Ids(ids)) => {
                        let mut ids = ids.clone();
                        for &b in &ids {
                            broker_ref(&BrokerFile::Id(b), brokers).map_err(bad)?;
                        }
                        ids.sort_unstable();
                        ids.dedup();
                        BrokerSet::Ids(ids)
                    }
                };
                match e.duration_ms {
                    Some(d) if d > 0 => TimelineAction::NetworkPartition {
                        members: cut,
                        brokers: to,
                        duration_ms: d,
                    },
                    _ => return Err(bad("a network_partition needs a positive duration_ms".into())),
                }
            }
            Action::LatencySpike => {
                let latency_ms = match e.latency_ms {
                    Some(l) if l > 0 && l <= super::limits::MAX_LATENCY_MS => l,
                    Some(l) if l > 0 => {
                        return Err(bad(format!(
                            "latency_ms {l} is above the limit of {} ms",
                            super::limits::MAX_LATENCY_MS
                        )))
                    }
                    _ => return Err(bad("a latency_spike needs a positive latency_ms".into())),
                };
                match e.duration_ms {
                    Some(d) if d > 0 => TimelineAction::LatencySpike {
                        latency_ms,
                        duration_ms: d,
                    },
                    _ => return Err(bad("a latency_spike needs a positive duration_ms".into())),
                }
            }
        };
        timeline.push(TimelineEvent {
            at_ms: e.at_ms,
            action,
        });
        spans.push(span);
        restart_sets.push(e.set.clone());
    }
    // Stable: ties keep the order they were written in, which is the order they run.
    let mut order: Vec<usize> = (0..timeline.len()).collect();
    order.sort_by_key(|&i| timeline[i].at_ms);
    let spans: Vec<_> = order.iter().map(|&i| spans[i].clone()).collect();
    let mut timeline: Vec<TimelineEvent> = order.iter().map(|&i| timeline[i].clone()).collect();
    // Restarts with new settings, in time order: each `set` over the member's entry as the
    // restarts before it left it.
    let mut current: Vec<MemberFile> = entry_of.iter().map(|(m, _)| (*m).clone()).collect();
    for (k, &i) in order.iter().enumerate() {
        let (Some(set), TimelineAction::Restart { member, settings }) =
            (&restart_sets[i], &mut timeline[k].action)
        else {
            continue;
        };
        // A variant that sets the assignors overrides a restart's as it does the entries'.
        let set: Vec<String> = set
            .iter()
            .filter(|e| {
                !cx.clear_member_assignors
                    || e.split_once('=').map(|(k, _)| k.trim()) != Some("assignors")
            })
            .cloned()
            .collect();
        if set.is_empty() {
            continue;
        }
        let m = *member;
        let span = spans[k].clone();
        current[m] = overlay_restart_set(&current[m], &set).map_err(|e| {
            (
                span.clone(),
                format!("timeline: restart of {:?}: {e}", members[m].name),
            )
        })?;
        let spec = member_spec(
            &current[m],
            members[m].name.clone(),
            entry_of[m].1,
            span,
            &cx,
        )?;
        *settings = Some(Box::new(NewSettings {
            set,
            spec: MemberSpec {
                start_ms: members[m].start_ms,
                ..spec
            },
        }));
    }
    // Each member's first action, in one pass (a rolling bounce of 10,000 members is 20,000).
    let mut first_at: Vec<Option<u64>> = vec![None; members.len()];
    for e in &timeline {
        if let Some(m) = e.action.member() {
            first_at[m].get_or_insert(e.at_ms);
        }
    }
    for (i, e) in timeline.iter().enumerate() {
        if let TimelineAction::Join { member } = e.action {
            let m = &mut members[member];
            if m.start_ms != Some(0) || first_at[member] < Some(e.at_ms) {
                return Err((
                    spans[i].clone(),
                    format!(
                        "timeline: member {:?} cannot join at {} ms: it has started already or acts earlier \
                         (a join starts a member once; restart brings it back)",
                        m.name, e.at_ms
                    ),
                ));
            }
            m.start_ms = Some(e.at_ms);
        }
    }
    check_lifecycle(&timeline, &members).map_err(|(i, m)| (spans[i].clone(), m))?;
    check_brokers(&timeline, brokers).map_err(|(i, m)| (spans[i].clone(), m))?;

    let co_partitioned = topics::co_partitioned(&file.co_partitioned, &topics)?;
    let snapshot_variants =
        harness::snapshot_variants(file.snapshot_variants.as_ref(), &file.variants)?;
    let expects = harness::expectations(&file.expect, &file.variants)?;
    let mutant = harness::mutant(file.mutant.as_ref())?;

    Ok(Scenario {
        name: file.name.unwrap_or_else(|| "scenario".into()),
        description: file.description,
        seed: options.seed.unwrap_or(file.seed),
        variant: variant.name,
        duration_ms,
        cluster,
        topics,
        group,
        members,
        producers,
        arrival,
        app,
        lag_sample_ms: file.lag_sample_ms,
        timeline,
        co_partitioned,
        snapshot_variants,
        expects,
        notices,
        mutant,
    })
}

/// Each member's actions must make sense in order: a running member can leave, crash, stall or
/// subscribe; only a stopped one can restart; a stall starts after the member's previous stall
/// has ended (a stall holds the batch in progress, so one inside another would end after both:
/// overlapping stalls are refused rather than given an end nobody wrote). The error names the
/// earliest offending event by its index in `timeline` (which is in time order).
/// A broker a timeline entry names: an id below `brokers`, or `"coordinator"`.
fn broker_ref(b: &BrokerFile, brokers: u32) -> Result<BrokerRef, String> {
    match b {
        BrokerFile::Id(id) if *id < brokers => Ok(BrokerRef::Id(*id)),
        BrokerFile::Id(id) => Err(format!(
            "unknown broker {id}: the cluster has {brokers} broker(s), ids 0 to {}",
            brokers - 1
        )),
        BrokerFile::Name(n) if n == "coordinator" => Ok(BrokerRef::Coordinator),
        BrokerFile::Name(n) => Err(format!("broker = {n:?}: a broker id, or \"coordinator\"")),
    }
}

/// Broker faults must make sense in order: a broker named by id crashes only while it runs and
/// restarts only while it is down. A crash of `"coordinator"` stops whichever broker hosts the
/// coordinator then (the run decides; a restart of it names its id). The error names the
/// earliest offending event by its index in `timeline` (in time order).
pub(super) fn check_brokers(
    timeline: &[TimelineEvent],
    brokers: u32,
) -> Result<(), (usize, String)> {
    let mut down = vec![false; brokers as usize];
    // Some broker was stopped as "coordinator": a restart of any id may be its.
    let mut unnamed_down = false;
    for (i, e) in timeline.iter().enumerate() {
        match e.action {
            TimelineAction::BrokerCrash {
                broker: BrokerRef::Id(b),
                ..
            } => {
                if down[b as usize] {
                    return Err((
                        i,
                        format!(
                            "timeline: broker {b} cannot crash at {} ms (it is down since an earlier broker_crash; broker_restart it first)",
                            e.at_ms
                        ),
                    ));
                }
                down[b as usize] = true;
            }
            TimelineAction::BrokerCrash {
                broker: BrokerRef::Coordinator,
                ..
            } => unnamed_down = true,
            TimelineAction::BrokerRestart { broker: b } => {
                if !down[b as usize] && !unnamed_down {
                    return Err((
                        i,
                        format!(
                            "timeline: broker {b} cannot restart at {} ms (it is running: no broker_crash stopped it)",
                            e.at_ms
                        ),
                    ));
                }
                down[b as usize] = false;
            }
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn check_lifecycle(
    timeline: &[TimelineEvent],
    members: &[MemberSpec],
) -> Result<(), (usize, String)> {
    let mut started: Vec<bool> = members.iter().map(|m| m.start_ms == Some(0)).collect();
    let mut running = started.clone();
    // A member whose entry sets a later start_ms (and that no `join` starts) runs from then.
    let self_start = super::self_starts(timeline, members);
    let mut stalled_until: Vec<Option<u64>> = vec![None; members.len()];
    for (at, e) in timeline.iter().enumerate() {
        let Some(i) = e.action.member() else {
            continue;
        };
        if self_start[i].is_some_and(|t| t <= e.at_ms) && !started[i] {
            started[i] = true;
            running[i] = true;
        }
        if let (TimelineAction::Stall { .. }, Some(until)) = (&e.action, stalled_until[i]) {
            if e.at_ms < until && running[i] {
                return Err((
                    at,
                    format!(
                        "timeline: member {:?} cannot stall at {} ms (its stall until {until} ms \
                         is still on; overlapping stalls of one member are not supported)",
                        members[i].name, e.at_ms
                    ),
                ));
            }
        }
        stalled_until[i] = match e.action {
            TimelineAction::Stall { duration_ms, .. } => Some(e.at_ms + duration_ms),
            TimelineAction::Leave { .. }
            | TimelineAction::Crash { .. }
            | TimelineAction::Restart { .. } => None,
            _ => stalled_until[i],
        };
        let (ok, verb) = match e.action {
            TimelineAction::Join { .. } => (!started[i], "join"),
            TimelineAction::Leave { .. } => (running[i], "leave"),
            TimelineAction::Crash { .. } => (running[i], "crash"),
            TimelineAction::Stall { .. } => (running[i], "stall"),
            TimelineAction::Subscribe { .. } => (running[i], "subscribe"),
            TimelineAction::Restart { .. } => (started[i] && !running[i], "restart"),
            // Not a member's action (`member()` is `None`): never reached.
            TimelineAction::AddPartitions { .. }
            | TimelineAction::BrokerCrash { .. }
            | TimelineAction::BrokerRestart { .. }
            | TimelineAction::NetworkPartition { .. }
            | TimelineAction::LatencySpike { .. } => (true, "act"),
        };
        if !ok {
            return Err((
                at,
                format!(
                    "timeline: member {:?} cannot {verb} at {} ms (it is {})",
                    members[i].name,
                    e.at_ms,
                    if running[i] { "running" } else { "not running" }
                ),
            ));
        }
        running[i] = !matches!(
            e.action,
            TimelineAction::Leave { .. } | TimelineAction::Crash { .. }
        );
        started[i] = true;
    }
    Ok(())
}

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
