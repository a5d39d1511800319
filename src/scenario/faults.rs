//! The fault plan: every scripted thing that happens to a run (the timeline's joins, leaves,
//! crashes, restarts, stalls, subscription changes, added partitions; a rolling bounce as the
//! leaves and restarts it expands to) as one value. It is what a fuzzer generates and a
//! shrinker shrinks: it prints back as the scenario's `[[timeline]]` tables, and removing
//! entries one at a time gives plans that are still valid (the shrink candidates).
//!
//! Random fault knobs (brokers, the network) join it with their own issues; today the plan is
//! the timeline.

use super::{
    validate::{check_brokers, check_lifecycle},
    BrokerRef, BrokerSet, MemberSpec, Scenario, TimelineAction, TimelineEvent,
};
use crate::sim::rng::Stream;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultPlan {
    /// In time order (ties in the order they were written, which is the order they run).
    pub entries: Vec<TimelineEvent>,
}

impl FaultPlan {
    /// The plan a loaded scenario runs.
    pub fn of(scenario: &Scenario) -> Self {
        FaultPlan {
            entries: scenario.timeline.clone(),
        }
    }

    /// Whether the plan makes sense for the scenario's members: each joins at most once (and
    /// only if it has not started), and only a stopped member restarts.
    pub fn is_valid(&self, scenario: &Scenario) -> bool {
        let mut members: Vec<MemberSpec> = scenario.members.clone();
        for m in &mut members {
            m.start_ms = Some(0);
        }
        let mut timeline = self.entries.clone();
        timeline.sort_by_key(|e| e.at_ms);
        for e in &timeline {
            if let TimelineAction::Join { member } = e.action {
                if members[member].start_ms != Some(0) {
                    return false;
                }
                members[member].start_ms = Some(e.at_ms);
            }
        }
        let in_run = timeline.iter().all(|e| e.at_ms < scenario.duration_ms);
        in_run
            && check_lifecycle(&timeline, &members).is_ok()
            && check_brokers(&timeline, scenario.cluster.brokers).is_ok()
    }

    /// The plan without entry `i`.
    pub fn without(&self, i: usize) -> FaultPlan {
        let mut entries = self.entries.clone();
        entries.remove(i);
        FaultPlan { entries }
    }

    /// Every plan one entry smaller that is still valid, first entry first.
    pub fn shrink_candidates(&self, scenario: &Scenario) -> Vec<FaultPlan> {
        (0..self.entries.len())
            .map(|i| self.without(i))
            .filter(|p| p.is_valid(scenario))
            .collect()
    }

    /// A random plan for the scenario's members: `faults` disruptions (a crash or a clean
    /// leave, each followed by a restart after a downtime, or a stall), at times drawn from
    /// `stream` between 1 s and the end of the run, at least `min_gap_ms` apart so that the
    /// group is not flapped faster than it could ever recover. Valid by construction.
    pub fn generate(
        scenario: &Scenario,
        stream: &mut Stream,
        faults: usize,
        min_gap_ms: u64,
    ) -> FaultPlan {
        let mut entries = Vec::new();
        let members = scenario.members.len() as u64;
        let latest = scenario.duration_ms.saturating_sub(1);
        let mut at = 1000;
        for _ in 0..faults {
            if members == 0 || at >= latest {
                break;
            }
            let member = stream.between(0, members - 1) as usize;
            let downtime = stream.between(1000, 60_000);
            match stream.between(0, 2) {
                0 | 1 if at + downtime < latest => {
                    let stop = if stream.between(0, 1) == 0 {
                        TimelineAction::Crash { member }
                    } else {
                        TimelineAction::Leave { member }
                    };
                    entries.push(TimelineEvent {
                        at_ms: at,
                        action: stop,
                    });
                    entries.push(TimelineEvent {
                        at_ms: at + downtime,
                        action: TimelineAction::Restart {
                            member,
                            settings: None,
                        },
                    });
                    at += downtime;
                }
                _ => {
                    entries.push(TimelineEvent {
                        at_ms: at,
                        action: TimelineAction::Stall {
                            member,
                            duration_ms: downtime,
                        },
                    });
                    // The next disruption comes after the stall, so stalls never overlap.
                    at += downtime;
                }
            }
            at += min_gap_ms.max(1) + stream.between(0, min_gap_ms.max(1));
        }
        entries.sort_by_key(|e| e.at_ms);
        FaultPlan { entries }
    }

    /// The plan as `[[timeline]]` tables of a scenario file (names for the scenario's member
    /// and topic indexes).
    pub fn to_toml(&self, scenario: &Scenario) -> toml_edit::ArrayOfTables {
        let mut tables = toml_edit::ArrayOfTables::new();
        for e in &self.entries {
            let mut t = toml_edit::Table::new();
            t.insert("at_ms", toml_edit::value(e.at_ms as i64));
            let member = |m: usize| toml_edit::value(scenario.members[m].name.as_str());
            let (action, rest): (&str, Vec<(&str, toml_edit::Item)>) = match &e.action {
                TimelineAction::Join { member: m } => ("join", vec![("member", member(*m))]),
                TimelineAction::Leave { member: m } => ("leave", vec![("member", member(*m))]),
                TimelineAction::Crash { member: m } => ("crash", vec![("member", member(*m))]),
                TimelineAction::Restart {
                    member: m,
                    settings,
                } => {
                    let mut rest = vec![("member", member(*m))];
                    if let Some(new) = settings {
                        let list: toml_edit::Array = new.set.iter().map(String::as_str).collect();
                        rest.push(("set", toml_edit::value(list)));
                    }
                    ("restart", rest)
                }
                TimelineAction::Stall {
                    member: m,
                    duration_ms,
                } => (
                    "stall",
                    vec![
                        ("member", member(*m)),
                        ("duration_ms", toml_edit::value(*duration_ms as i64)),
                    ],
                ),
                TimelineAction::Subscribe { member: m, topics } => {
                    let list: toml_edit::Array = topics.iter().map(String::as_str).collect();
                    (
                        "subscribe",
                        vec![("member", member(*m)), ("topics", toml_edit::value(list))],
                    )
                }
                TimelineAction::BrokerCrash {
                    broker,
                    connections,
                } => (
                    "broker_crash",
                    vec![
                        ("broker", broker_item(*broker)),
                        ("connections", toml_edit::value(connections.name())),
                    ],
                ),
                TimelineAction::BrokerRestart { broker } => (
                    "broker_restart",
                    vec![("broker", toml_edit::value(i64::from(*broker)))],
                ),
                TimelineAction::NetworkPartition {
                    members,
                    brokers,
                    duration_ms,
                } => {
                    let names: toml_edit::Array = members
                        .iter()
                        .map(|&m| scenario.members[m].name.as_str())
                        .collect();
                    let brokers = match brokers {
                        BrokerSet::Coordinator => toml_edit::value("coordinator"),
                        BrokerSet::Ids(ids) => toml_edit::value(
                            ids.iter()
                                .map(|&b| i64::from(b))
                                .collect::<toml_edit::Array>(),
                        ),
                    };
                    (
                        "network_partition",
                        vec![
                            ("members", toml_edit::value(names)),
                            ("brokers", brokers),
                            ("duration_ms", toml_edit::value(*duration_ms as i64)),
                        ],
                    )
                }
                TimelineAction::LatencySpike {
                    latency_ms,
                    duration_ms,
                } => (
                    "latency_spike",
                    vec![
                        ("latency_ms", toml_edit::value(*latency_ms as i64)),
                        ("duration_ms", toml_edit::value(*duration_ms as i64)),
                    ],
                ),
                TimelineAction::AddPartitions { topic, partitions } => (
                    "add_partitions",
                    vec![
                        (
                            "topic",
                            toml_edit::value(scenario.topics[*topic].name.as_str()),
                        ),
                        ("partitions", toml_edit::value(i64::from(*partitions))),
                    ],
                ),
            };
            t.insert("action", toml_edit::value(action));
            for (k, v) in rest {
                t.insert(k, v);
            }
            tables.push(t);
        }
        tables
    }
}

fn broker_item(broker: BrokerRef) -> toml_edit::Item {
    match broker {
        BrokerRef::Id(b) => toml_edit::value(i64::from(b)),
        BrokerRef::Coordinator => toml_edit::value("coordinator"),
    }
}
