//! The streams view of the assignment table (`cgsim assign --table --subtopologies ...`): a
//! Kafka Streams application's tasks per instance and stream thread under the KIP-1071 streams
//! group's assignor (`kip1071`) and the classic protocol's high-availability and legacy sticky
//! task assignors, side by side.
//!
//! Two blocks: the instances forming a fresh group together (new changelogs: every lag 0), then
//! one more instance joining the running group with no state, where each assignor's previous
//! answer is what the group runs (classic: running actives report `LATEST_OFFSET`, standbys are
//! caught up; the changelogs hold [`CHANGELOG_END_OFFSET_SUM`] records a task). That is where
//! the assignors part: the streams group moves actives to the new instance at once (to restore
//! from scratch), high availability keeps them where they are caught up and warms the new
//! instance up (`W`), asking for a probing rebalance.

use crate::assignor::streams::classic::client_state::Consumer;
use crate::assignor::streams::classic::json::{ClassicCase, ClassicOutcome, ClientInput};
use crate::assignor::streams::classic::{
    self, AssignmentConfigs, ConfiguredAssignor, ProcessId, TaskId, LATEST_OFFSET,
};
use crate::assignor::streams::{self as kip1071, GroupSpec, MemberSpec, Topology};
use crate::java::TimelineHashSet;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Most instances, threads per instance, and tasks the view takes.
pub const MAX_INSTANCES: usize = 100;
pub const MAX_THREADS: usize = 32;
pub const MAX_TASKS: i64 = 10_000;
pub const MAX_STANDBYS: u32 = 10;

/// The end offset sum of every stateful task once the group has run: above the default
/// `acceptable.recovery.lag` (10,000), so an instance without the state is not caught up.
pub const CHANGELOG_END_OFFSET_SUM: i64 = 100_000;

/// The command line's description of the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsTableSpec {
    pub subtopologies: Vec<classic::Subtopology>,
    pub instances: usize,
    pub threads: usize,
    pub standbys: u32,
}

/// `0=12:stateful,1=6`: subtopology ids (ints, as classic Streams numbers them), task counts,
/// `:stateful` for one with a state store (`:stateless`, the default, for one without).
pub fn parse_subtopologies(text: &str) -> Result<Vec<classic::Subtopology>, String> {
    let mut out: Vec<classic::Subtopology> = Vec::new();
    let mut total = 0i64;
    for item in text.split(',').map(str::trim) {
        let bad = |why: &str| {
            format!("--subtopologies: {item:?}: {why} (expected ID=TASKS[:stateful], e.g. 0=12:stateful,1=6)")
        };
        let (id, rest) = item.split_once('=').ok_or_else(|| bad("no '='"))?;
        let (count, kind) = match rest.split_once(':') {
            Some((c, k)) => (c, k),
            None => (rest, "stateless"),
        };
        let id: i32 = id
            .trim()
            .parse()
            .ok()
            .filter(|i| *i >= 0)
            .ok_or_else(|| bad("the id is not a number from 0"))?;
        let partitions: i32 = count
            .trim()
            .parse()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| bad("the task count is not a number from 1"))?;
        let stateful = match kind.trim() {
            "stateful" => true,
            "stateless" => false,
            _ => return Err(bad("the kind is neither stateful nor stateless")),
        };
        if out.iter().any(|s| s.id == id) {
            return Err(bad("the id is given twice"));
        }
        total += i64::from(partitions);
        if total > MAX_TASKS {
            return Err(bad(&format!("more than {MAX_TASKS} tasks in all")));
        }
        out.push(classic::Subtopology {
            id,
            partitions,
            stateful,
        });
    }
    out.sort_by_key(|s| s.id);
    Ok(out)
}

impl StreamsTableSpec {
    pub fn new(
        subtopologies: &str,
        instances: usize,
        threads: usize,
        standbys: u32,
    ) -> Result<StreamsTableSpec, String> {
        if !(1..=MAX_INSTANCES).contains(&instances) {
            return Err(format!(
                "--instances {instances}: from 1 to {MAX_INSTANCES}"
            ));
        }
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(format!("--threads {threads}: from 1 to {MAX_THREADS}"));
        }
        if standbys > MAX_STANDBYS {
            return Err(format!("--standbys {standbys}: at most {MAX_STANDBYS}"));
        }
        Ok(StreamsTableSpec {
            subtopologies: parse_subtopologies(subtopologies)?,
            instances,
            threads,
            standbys,
        })
    }
}

/// One thread's tasks under one assignor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadCell {
    pub active: Vec<TaskId>,
    pub standby: Vec<TaskId>,
    pub warmup: Vec<TaskId>,
}

/// One assignor's answer for one block, thread by thread in (instance, thread) order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsColumn {
    pub assignor: &'static str,
    pub threads: Vec<ThreadCell>,
    /// Active tasks whose instance changed from the block before.
    pub actives_moved: Option<usize>,
    pub probing_rebalance: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsBlock {
    pub title: String,
    pub instances: usize,
    pub columns: Vec<StreamsColumn>,
}

fn instance_name(i: usize) -> String {
    format!("i{}", i + 1)
}

fn process_id(i: usize) -> ProcessId {
    ProcessId {
        msb: 0,
        lsb: i as i64 + 1,
    }
}

fn kip1071_member(i: usize, t: usize) -> String {
    format!("i{}-t{}", i + 1, t + 1)
}

fn classic_member(i: usize, t: usize) -> String {
    format!("i{}-StreamThread-{}-consumer", i + 1, t + 1)
}

/// Builds both blocks.
pub fn build(spec: &StreamsTableSpec) -> Vec<StreamsBlock> {
    let fresh = spec.instances;
    let joined = spec.instances + 1;
    let k1 = kip1071_column(spec, fresh, None);
    let ha1 = classic_column(spec, fresh, ConfiguredAssignor::HighAvailability, None);
    let ls1 = classic_column(spec, fresh, ConfiguredAssignor::LegacySticky, None);
    let k2 = kip1071_column(spec, joined, Some(&k1));
    let ha2 = classic_column(
        spec,
        joined,
        ConfiguredAssignor::HighAvailability,
        Some(&ha1),
    );
    let ls2 = classic_column(spec, joined, ConfiguredAssignor::LegacySticky, Some(&ls1));
    vec![
        StreamsBlock {
            title: format!(
                "{fresh} instance{} of {} stream thread{}, a fresh group",
                plural(fresh),
                spec.threads,
                plural(spec.threads)
            ),
            instances: fresh,
            columns: vec![k1, ha1, ls1],
        },
        StreamsBlock {
            title: format!(
                "{} joins with no state; the others run their tasks, standbys caught up, {} records a changelog",
                instance_name(fresh),
                CHANGELOG_END_OFFSET_SUM
            ),
            instances: joined,
            columns: vec![k2, ha2, ls2],
        },
    ]
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The instance each active task is on, from a column.
fn active_owners(column: &StreamsColumn, threads: usize) -> BTreeMap<TaskId, usize> {
    let mut owners = BTreeMap::new();
    for (k, cell) in column.threads.iter().enumerate() {
        for t in &cell.active {
            owners.insert(*t, k / threads);
        }
    }
    owners
}

fn moved(before: Option<&StreamsColumn>, after: &[ThreadCell], threads: usize) -> Option<usize> {
    let before = active_owners(before?, threads);
    let mut n = 0;
    for (k, cell) in after.iter().enumerate() {
        n += cell
            .active
            .iter()
            .filter(|t| before.get(t).is_some_and(|&i| i != k / threads))
            .count();
    }
    Some(n)
}

/// The streams group: one member per thread, the coordinator's member map in its own order,
/// each member's previous target from the block before.
fn kip1071_column(
    spec: &StreamsTableSpec,
    instances: usize,
    before: Option<&StreamsColumn>,
) -> StreamsColumn {
    let subtopologies = spec
        .subtopologies
        .iter()
        .map(|s| kip1071::Subtopology {
            id: s.id.to_string(),
            partitions: s.partitions,
            stateful: s.stateful,
        })
        .collect();
    let topology = Topology::new(subtopologies).expect("distinct subtopology ids");
    let index = |t: &TaskId| {
        let s = topology
            .subtopology_index(&t.subtopology.to_string())
            .expect("a subtopology of the topology");
        kip1071::TaskId::new(s, t.partition)
    };
    // The coordinator keeps members in a `TimelineHashMap`: its order, not the join order.
    let mut order = TimelineHashSet::new();
    let mut previous = BTreeMap::new();
    for i in 0..instances {
        for t in 0..spec.threads {
            let id = kip1071_member(i, t);
            order.put(id.clone());
            let cell = before
                .and_then(|b| b.threads.get(i * spec.threads + t))
                .cloned()
                .unwrap_or_default();
            previous.insert(id, (i, cell));
        }
    }
    let members: Vec<MemberSpec> = order
        .iter()
        .map(|id: &String| {
            let (i, cell) = &previous[id];
            MemberSpec {
                member_id: id.clone(),
                process_id: instance_name(*i),
                active_tasks: cell.active.iter().map(index).collect(),
                standby_tasks: cell.standby.iter().map(index).collect(),
                warmup_tasks: Vec::new(),
                rack_id: None,
            }
        })
        .collect();
    let group = GroupSpec {
        topology: topology.clone(),
        members,
        num_standby_replicas: spec.standbys,
    };
    let assignment = kip1071::assign(&group).expect("the streams group's assignor answers");
    let by_member: BTreeMap<&str, &kip1071::MemberAssignment> = group
        .members
        .iter()
        .map(|m| m.member_id.as_str())
        .zip(&assignment.members)
        .collect();
    let back = |t: &kip1071::TaskId| {
        let id: i32 = topology
            .subtopology(t.subtopology)
            .id
            .parse()
            .expect("int ids");
        TaskId::new(id, t.partition)
    };
    let mut threads = Vec::new();
    for i in 0..instances {
        for t in 0..spec.threads {
            let a = by_member[kip1071_member(i, t).as_str()];
            let mut active: Vec<TaskId> = a.active_tasks.iter().map(back).collect();
            let mut standby: Vec<TaskId> = a.standby_tasks.iter().map(back).collect();
            active.sort();
            standby.sort();
            threads.push(ThreadCell {
                active,
                standby,
                warmup: Vec::new(),
            });
        }
    }
    StreamsColumn {
        assignor: "kip1071",
        actives_moved: moved(before, &threads, spec.threads),
        probing_rebalance: None,
        threads,
    }
}

/// The classic protocol: one client per instance, one consumer per thread; after a first
/// block, each thread owns the source partitions of its actives and reports its state.
fn classic_column(
    spec: &StreamsTableSpec,
    instances: usize,
    assignor: ConfiguredAssignor,
    before: Option<&StreamsColumn>,
) -> StreamsColumn {
    let stateful: BTreeSet<i32> = spec
        .subtopologies
        .iter()
        .filter(|s| s.stateful)
        .map(|s| s.id)
        .collect();
    let end = if before.is_some() {
        CHANGELOG_END_OFFSET_SUM
    } else {
        0
    };
    let changelog_end_offset_sums = spec
        .subtopologies
        .iter()
        .filter(|s| s.stateful)
        .flat_map(|s| (0..s.partitions).map(move |p| (TaskId::new(s.id, p), end)))
        .collect();
    let clients = (0..instances)
        .map(|i| ClientInput {
            process_id: process_id(i),
            client_tags: BTreeMap::new(),
            consumers: (0..spec.threads)
                .map(|t| {
                    let cell = before
                        .and_then(|b| b.threads.get(i * spec.threads + t))
                        .cloned()
                        .unwrap_or_default();
                    let mut sums = BTreeMap::new();
                    for task in cell
                        .active
                        .iter()
                        .filter(|x| stateful.contains(&x.subtopology))
                    {
                        sums.insert(*task, LATEST_OFFSET);
                    }
                    // A warm-up or standby that kept up holds the whole changelog.
                    for task in &cell.standby {
                        sums.insert(*task, end);
                    }
                    Consumer {
                        member_id: classic_member(i, t),
                        owned_partitions: cell
                            .active
                            .iter()
                            .map(|x| (classic::source_topic(x.subtopology), x.partition))
                            .collect(),
                        task_offset_sums: sums,
                    }
                })
                .collect(),
        })
        .collect();
    let case = ClassicCase {
        id: String::new(),
        assignor,
        configs: AssignmentConfigs {
            num_standby_replicas: spec.standbys as i32,
            ..AssignmentConfigs::default()
        },
        subtopologies: spec.subtopologies.clone(),
        changelog_end_offset_sums: Some(changelog_end_offset_sums),
        clients,
    };
    let outcome: ClassicOutcome = case.assign();
    let mut threads = Vec::new();
    for i in 0..instances {
        let client = outcome
            .clients
            .iter()
            .find(|c| c.state.process_id == process_id(i))
            .expect("every client answered");
        for t in 0..spec.threads {
            let given = &client.threads[&classic_member(i, t)];
            let mut active = given.active.clone();
            active.sort();
            let (mut warmup, mut standby): (Vec<TaskId>, Vec<TaskId>) = given
                .standby
                .iter()
                .partition(|x| client.warmup.contains(x));
            warmup.sort();
            standby.sort();
            threads.push(ThreadCell {
                active,
                standby,
                warmup,
            });
        }
    }
    StreamsColumn {
        assignor: match assignor {
            ConfiguredAssignor::HighAvailability => "high_availability",
            ConfiguredAssignor::LegacySticky => "legacy_sticky",
        },
        actives_moved: moved(before, &threads, spec.threads),
        probing_rebalance: Some(outcome.probing_rebalance),
        threads,
    }
}

fn cell_text(cell: &ThreadCell) -> String {
    let mut parts: Vec<String> = cell.active.iter().map(TaskId::to_string).collect();
    parts.extend(cell.standby.iter().map(|t| format!("S{t}")));
    parts.extend(cell.warmup.iter().map(|t| format!("W{t}")));
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" ")
    }
}

/// The view as text.
pub fn render(spec: &StreamsTableSpec, blocks: &[StreamsBlock]) -> String {
    let mut out = String::new();
    let subs: Vec<String> = spec
        .subtopologies
        .iter()
        .map(|s| {
            format!(
                "{} ({} task{}, {})",
                s.id,
                s.partitions,
                plural(s.partitions as usize),
                if s.stateful { "stateful" } else { "stateless" }
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "subtopologies {}; num.standby.replicas {}",
        subs.join(", "),
        spec.standbys
    );
    let _ = writeln!(
        out,
        "tasks per stream thread: SUBTOPOLOGY_PARTITION active, S a standby, W a warm-up (a standby catching up to take the active over)"
    );
    for block in blocks {
        out.push('\n');
        let _ = writeln!(out, "{}", block.title);
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut header = vec!["instance".to_string(), "thread".to_string()];
        header.extend(block.columns.iter().map(|c| c.assignor.to_string()));
        rows.push(header);
        for i in 0..block.instances {
            for t in 0..spec.threads {
                let mut row = vec![instance_name(i), format!("t{}", t + 1)];
                row.extend(
                    block
                        .columns
                        .iter()
                        .map(|c| cell_text(&c.threads[i * spec.threads + t])),
                );
                rows.push(row);
            }
        }
        if block.columns.iter().any(|c| c.actives_moved.is_some()) {
            let mut row = vec!["actives moved".to_string(), String::new()];
            row.extend(block.columns.iter().map(|c| {
                c.actives_moved
                    .map_or_else(|| "-".to_string(), |n| n.to_string())
            }));
            rows.push(row);
        }
        let mut row = vec!["probing rebalance".to_string(), String::new()];
        row.extend(block.columns.iter().map(|c| match c.probing_rebalance {
            Some(true) => "yes".to_string(),
            Some(false) => "no".to_string(),
            None => "never".to_string(),
        }));
        rows.push(row);
        write_rows(&mut out, &rows);
    }
    out
}

/// Rows as columns; a row whose second cell is empty is a summary whose label spans the
/// instance and thread columns.
fn write_rows(out: &mut String, rows: &[Vec<String>]) {
    let spans = |r: &Vec<String>| r[1].is_empty();
    let mut widths: Vec<usize> = (0..rows[0].len())
        .map(|col| {
            rows.iter()
                .filter(|r| col > 1 || !spans(r))
                .map(|r| r[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let label = rows
        .iter()
        .filter(|r| spans(r))
        .map(|r| r[0].chars().count())
        .max()
        .unwrap_or(0);
    widths[1] = widths[1].max(label.saturating_sub(widths[0] + 2));
    for row in rows {
        let mut line = String::new();
        let first = if spans(row) {
            let w = widths[0] + 2 + widths[1];
            line.push_str(&row[0]);
            line.push_str(&" ".repeat(w - row[0].chars().count()));
            2
        } else {
            0
        };
        for (col, cell) in row.iter().enumerate().skip(first) {
            if col > 0 {
                line.push_str("  ");
            }
            line.push_str(cell);
            line.push_str(&" ".repeat(widths[col] - cell.chars().count()));
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}
