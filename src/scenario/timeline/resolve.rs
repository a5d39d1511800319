//! Timeline entries against the scenario they belong to: every name a member, topic or broker
//! of it, a rolling bounce expanded into each member's leave and restart, a restart's `set`
//! read over the member's entry as the restarts before it left it, a `join` as the member's
//! start, and the whole in time order, checked to make sense in that order (`lifecycle.rs`).
//! Each event keeps the span of the entry it came from (a rolling bounce's for its leaves and
//! restarts), so an error names that entry's line.

use super::lifecycle::{check_brokers, check_lifecycle};
use super::{Action, Entry, Planned};
use crate::scenario::file::{MemberFile, TimelineFile};
use crate::scenario::members::{member_spec, overlay_restart_set, Invalid, MemberContext};
use crate::scenario::{
    BrokerRef, BrokerSet, MemberSpec, NewSettings, TimelineAction, TimelineEvent, TopicSpec,
};
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// What entries are resolved against: the members and topics as declared (a `join` sets its
/// member's start, an `add_partitions` its topic's growth), the brokers, the run's length.
pub(in crate::scenario) struct Roster<'a, 'f> {
    pub members: &'a mut Vec<MemberSpec>,
    pub topics: &'a mut Vec<TopicSpec>,
    pub brokers: u32,
    pub duration_ms: u64,
    pub cx: &'a MemberContext<'a>,
    /// Each member's entry and its number in it (a restart's `set` is read over the entry).
    pub entry_of: &'a [(&'f MemberFile, usize)],
}

/// The resolved timeline, in run order, and the same as entries in the file's words (a rolling
/// bounce as its leaves and restarts, a restart's `set` as it applies): what
/// `--emit-scenario` writes back.
pub(in crate::scenario) fn resolve(
    file: &[Spanned<TimelineFile>],
    roster: Roster,
) -> Result<(Vec<TimelineEvent>, Vec<Planned>), Invalid> {
    let Roster {
        members,
        topics,
        brokers,
        duration_ms,
        cx,
        entry_of,
    } = roster;
    // Each entry with its table's span and action.
    let mut plan: Vec<(Option<Range<usize>>, &'static str, Entry)> = Vec::new();
    let mut read = Vec::with_capacity(file.len());
    for e in file {
        let span = Some(e.span());
        let bad = |m: String| -> Invalid { (span.clone(), format!("timeline: {m}")) };
        if e.get_ref().at_ms >= duration_ms {
            return Err(bad(format!(
                "at_ms {} is not before duration_ms {duration_ms}",
                e.get_ref().at_ms
            )));
        }
        read.push((span.clone(), Entry::from_file(e.get_ref()).map_err(bad)?));
    }
    let joins = join_times(read.iter().map(|(_, e)| e));
    for (span, entry) in read {
        let bad = |m: String| -> Invalid { (span.clone(), format!("timeline: {m}")) };
        for (written_as, entry) in expand(entry, members, &joins, duration_ms).map_err(bad)? {
            plan.push((span.clone(), written_as, entry));
        }
    }
    // Stable: ties keep the order they were written in, which is the order they run.
    plan.sort_by_key(|(_, _, e)| e.at_ms);
    // A variant that sets the assignors overrides a restart's as it does the entries'.
    if cx.clear_member_assignors {
        for (_, _, e) in &mut plan {
            if let Action::Restart { set, .. } = &mut e.action {
                set.retain(|s| s.split_once('=').map(|(k, _)| k.trim()) != Some("assignors"));
            }
        }
    }
    let mut timeline = Vec::with_capacity(plan.len());
    // Restarts with new settings, in time order: each `set` over the member's entry as the
    // restarts before it left it.
    let mut current: Vec<MemberFile> = entry_of.iter().map(|(m, _)| (*m).clone()).collect();
    for (span, _, entry) in &plan {
        let bad = |m: String| -> Invalid { (span.clone(), format!("timeline: {m}")) };
        let mut action = resolve_entry(entry, members, topics, brokers).map_err(bad)?;
        if let (
            Action::Restart { member, set },
            TimelineAction::Restart {
                member: m,
                settings,
            },
        ) = (&entry.action, &mut action)
        {
            if !set.is_empty() {
                let m = *m;
                current[m] = overlay_restart_set(&current[m], set)
                    .map_err(|e| bad(format!("restart of {member:?}: {e}")))?;
                let spec =
                    member_spec(&current[m], member.clone(), entry_of[m].1, span.clone(), cx)?;
                *settings = Some(Box::new(NewSettings {
                    set: set.clone(),
                    spec: MemberSpec {
                        start_ms: members[m].start_ms,
                        ..spec
                    },
                }));
            }
        }
        timeline.push(TimelineEvent {
            at_ms: entry.at_ms,
            action,
        });
    }
    for t in topics.iter_mut() {
        t.resizes.sort_by_key(|&(t, _)| t);
    }
    let spans: Vec<Option<Range<usize>>> = plan.iter().map(|(s, _, _)| s.clone()).collect();
    start_joiners(&timeline, members).map_err(|(i, m)| (spans[i].clone(), m))?;
    check_lifecycle(&timeline, members).map_err(|c| (spans[c.event].clone(), c.message))?;
    check_brokers(&timeline, brokers).map_err(|c| (spans[c.event].clone(), c.message))?;
    let plan = plan
        .into_iter()
        .map(|(span, written_as, entry)| Planned {
            entry,
            // The loader turns the offset into a line, as it does for every error.
            line: span.map_or(0, |s| s.start),
            written_as,
        })
        .collect();
    Ok((timeline, plan))
}

/// When each member a `join` starts joins (its first join).
pub(in crate::scenario) fn join_times<'e>(
    entries: impl Iterator<Item = &'e Entry>,
) -> BTreeMap<String, u64> {
    let mut joins = BTreeMap::new();
    for e in entries {
        if let Action::Join { member } = &e.action {
            let at = joins.entry(member.clone()).or_insert(e.at_ms);
            *at = (*at).min(e.at_ms);
        }
    }
    joins
}

/// An entry as the entries it stands for, each with the action it was written as: a rolling
/// bounce as each running member's leave and restart, any other entry as itself. `joins`: when
/// the members a `join` starts join ([`join_times`]).
pub(in crate::scenario) fn expand(
    entry: Entry,
    members: &[MemberSpec],
    joins: &BTreeMap<String, u64>,
    duration_ms: u64,
) -> Result<Vec<(&'static str, Entry)>, String> {
    let Action::RollingBounce {
        interval_ms,
        duration_ms: downtime,
        set,
    } = entry.action
    else {
        return Ok(vec![(entry.action.name(), entry)]);
    };
    let mut out = Vec::new();
    // A member leaves interval_ms × its place among the entries' members after the bounce
    // starts, if it runs by then: one whose entry starts it later keeps its place, unbounced,
    // and so does one a `join` starts only after its turn (a deploy restarts what runs).
    for (i, m) in members
        .iter()
        .enumerate()
        .filter(|(_, m)| m.start_ms == Some(0))
    {
        let leave_at = entry.at_ms + interval_ms * i as u64;
        if joins
            .get(m.name.as_str())
            .is_some_and(|&join| join >= leave_at)
        {
            continue;
        }
        let restart_at = leave_at + downtime;
        // A bounce the run does not finish would leave members down for good.
        if restart_at >= duration_ms {
            return Err(format!(
                "rolling_bounce at {} ms restarts member {:?} at {restart_at} ms, not before duration_ms {duration_ms} \
                 (each member leaves interval_ms {interval_ms} after the one before and restarts duration_ms {downtime} later)",
                entry.at_ms, m.name
            ));
        }
        let member = m.name.clone();
        let leave = Action::Leave {
            member: member.clone(),
        };
        let restart = Action::Restart {
            member,
            set: set.clone(),
        };
        out.push((
            "rolling_bounce",
            Entry {
                at_ms: leave_at,
                action: leave,
            },
        ));
        out.push((
            "rolling_bounce",
            Entry {
                at_ms: restart_at,
                action: restart,
            },
        ));
    }
    Ok(out)
}

/// One entry's names as the scenario's indexes (a restart's new settings are the caller's, who
/// reads each over the one before). An `add_partitions` records its growth in `topics`.
pub(in crate::scenario) fn resolve_entry(
    entry: &Entry,
    members: &[MemberSpec],
    topics: &mut [TopicSpec],
    brokers: u32,
) -> Result<TimelineAction, String> {
    let member_index = |name: &str| {
        members
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| format!("unknown member {name:?}"))
    };
    let broker_id = |id: u32| {
        if id < brokers {
            Ok(id)
        } else {
            Err(format!(
                "unknown broker {id}: the cluster has {brokers} broker(s), ids 0 to {}",
                brokers - 1
            ))
        }
    };
    Ok(match &entry.action {
        Action::Join { member } => TimelineAction::Join {
            member: member_index(member)?,
        },
        Action::Leave { member } => TimelineAction::Leave {
            member: member_index(member)?,
        },
        Action::Crash { member } => TimelineAction::Crash {
            member: member_index(member)?,
        },
        Action::Restart { member, .. } => TimelineAction::Restart {
            member: member_index(member)?,
            settings: None,
        },
        Action::Stall {
            member,
            duration_ms,
        } => TimelineAction::Stall {
            member: member_index(member)?,
            duration_ms: *duration_ms,
        },
        Action::Subscribe { member, topics: to } => {
            if let Some(t) = to.iter().find(|t| !topics.iter().any(|x| &x.name == *t)) {
                return Err(format!("subscribe to unknown topic {t:?}"));
            }
            TimelineAction::Subscribe {
                member: member_index(member)?,
                topics: to.clone(),
            }
        }
        Action::AddPartitions {
            topic: name,
            partitions,
        } => {
            let topic = topics
                .iter()
                .position(|t| &t.name == name)
                .ok_or_else(|| format!("unknown topic {name:?}"))?;
            let before = topics[topic].partitions_at(entry.at_ms);
            if *partitions <= before {
                return Err(format!(
                    "{name:?} has {before} partitions at {} ms; Kafka can only add partitions, so partitions must be above that",
                    entry.at_ms
                ));
            }
            topics[topic].resizes.push((entry.at_ms, *partitions));
            TimelineAction::AddPartitions {
                topic,
                partitions: *partitions,
            }
        }
        Action::RollingBounce { .. } => {
            return Err("a rolling bounce is its members' leaves and restarts".into())
        }
        Action::BrokerCrash {
            broker,
            connections,
        } => TimelineAction::BrokerCrash {
            broker: match *broker {
                BrokerRef::Id(id) => BrokerRef::Id(broker_id(id)?),
                BrokerRef::Coordinator => BrokerRef::Coordinator,
            },
            connections: *connections,
        },
        Action::BrokerRestart { broker } => TimelineAction::BrokerRestart {
            broker: broker_id(*broker)?,
        },
        Action::NetworkPartition {
            members: names,
            brokers: to,
            duration_ms,
        } => {
            let mut cut = names
                .iter()
                .map(|name| member_index(name))
                .collect::<Result<Vec<_>, _>>()?;
            cut.sort_unstable();
            cut.dedup();
            let brokers = match to {
                BrokerSet::Coordinator => BrokerSet::Coordinator,
                BrokerSet::Ids(ids) => {
                    let mut ids = ids
                        .iter()
                        .map(|&b| broker_id(b))
                        .collect::<Result<Vec<_>, _>>()?;
                    ids.sort_unstable();
                    ids.dedup();
                    BrokerSet::Ids(ids)
                }
            };
            TimelineAction::NetworkPartition {
                members: cut,
                brokers,
                duration_ms: *duration_ms,
            }
        }
        Action::LatencySpike {
            latency_ms,
            duration_ms,
        } => TimelineAction::LatencySpike {
            latency_ms: *latency_ms,
            duration_ms: *duration_ms,
        },
    })
}

/// A member named by a `join` starts then instead of at 0: once, and before it does anything
/// else. The error names the offending event by its index.
fn start_joiners(
    timeline: &[TimelineEvent],
    members: &mut [MemberSpec],
) -> Result<(), (usize, String)> {
    // Each member's first action, in one pass (a rolling bounce of 10,000 members is 20,000).
    let mut first_at: Vec<Option<u64>> = vec![None; members.len()];
    for e in timeline {
        if let Some(m) = e.action.member() {
            first_at[m].get_or_insert(e.at_ms);
        }
    }
    for (i, e) in timeline.iter().enumerate() {
        if let TimelineAction::Join { member } = e.action {
            let m = &mut members[member];
            if m.start_ms != Some(0) || first_at[member] < Some(e.at_ms) {
                return Err((
                    i,
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
    Ok(())
}
