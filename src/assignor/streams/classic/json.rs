//! The `cgsim assign` wire format of classic Kafka Streams cases (DESIGN.md "Interfaces";
//! ../shared/reference/streams/README.md Part 2): a line with `subtopologies`, `clients` and
//! `assignor`.
//!
//! In: `{"id", "assignor": "high_availability" | "legacy_sticky", "subtopologies": [{"id": INT,
//! "partitions", "stateful"}], "changelog_end_offset_sums": {TASK: SUM} | null, "configs":
//! {...}, "clients": [{"process_id", "client_tags", "consumers": [{"member_id",
//! "owned_partitions": [[TOPIC, P]], "task_offset_sums": {TASK: SUM}}]}]}`. Subtopology `i`
//! reads the topic `input-<i>`, so its task `i_p` is that topic's partition `p`. The clients and
//! their consumers keep their order: it stands for the order of the leader's `HashMap` of
//! subscriptions. Unknown top-level keys are ignored (the reference cases carry `family`,
//! `edge`, `chain`); an unknown key anywhere else is an error.
//!
//! Out: `{"id", "assignor_used", "probing_rebalance", "clients": {PROCESS: {"active",
//! "standby", "warmup", "prev_active", "prev_standby", "lags", "capacity", "threads":
//! {MEMBER: {"active", "standby"}}}}}`, tasks sorted by `TaskId.compareTo` (ints), keys sorted;
//! `standby` includes the warm-ups and `warmup` lists them again.

use super::client_state::Consumer;
use super::threads::{spread_over_threads, ThreadTasks};
use super::{
    assign_tasks, java_task_order, source_topic, AssignmentConfigs, AssignorAnswer, AssignorUsed,
    ClientState, Clients, ConfiguredAssignor, ProcessId, Subtopology, TaskId, UNKNOWN_OFFSET_SUM,
};
use crate::assignor::MAX_PARTITIONS;
use crate::java::{Capacity, JavaHash};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One parsed classic line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicCase {
    pub id: String,
    pub assignor: ConfiguredAssignor,
    pub configs: AssignmentConfigs,
    /// In the order given (ids distinct).
    pub subtopologies: Vec<Subtopology>,
    /// `None`: the leader's end-offset fetch failed.
    pub changelog_end_offset_sums: Option<BTreeMap<TaskId, i64>>,
    /// The clients in the order given, each with its consumers in the order given.
    pub clients: Vec<ClientInput>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientInput {
    pub process_id: ProcessId,
    pub client_tags: BTreeMap<String, String>,
    pub consumers: Vec<Consumer>,
}

/// What the assignor and the spread over threads decided, per client in `ProcessId` order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicOutcome {
    pub assignor_used: AssignorUsed,
    pub probing_rebalance: bool,
    pub clients: Vec<ClientOutcome>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientOutcome {
    /// The client after the assignor: its previous tasks, lags, capacity and new tasks.
    pub state: ClientState,
    /// The standbys that are warm-ups (high availability only).
    pub warmup: BTreeSet<TaskId>,
    pub threads: BTreeMap<String, ThreadTasks>,
}

impl ClassicCase {
    /// Every task, whether it is stateful.
    fn tasks(&self) -> impl Iterator<Item = (TaskId, bool)> + '_ {
        self.subtopologies
            .iter()
            .flat_map(|s| (0..s.partitions).map(move |p| (TaskId::new(s.id, p), s.stateful)))
    }

    /// The assignor's input as the leader builds it (STREAMS.md §3, README Part 2), every
    /// collection in Java's iteration order, and the assignor `createTaskAssignor` picks.
    pub fn prepare(&self) -> (Clients, AssignorUsed) {
        // The subtopologies sit in `HashMap`s keyed by `Subtopology`, whose hash is
        // `Objects.hash(nodeGroupId, namedTopology)`.
        let sub_hashes: Vec<i32> = self
            .subtopologies
            .iter()
            .map(|s| 31i32.wrapping_add(s.id).wrapping_mul(31))
            .collect();
        let sub_order: Vec<&Subtopology> =
            crate::java::iteration_order(&sub_hashes, Capacity::Default)
                .into_iter()
                .map(|i| &self.subtopologies[i])
                .collect();
        // `partitionGroups` puts each subtopology's tasks, partition by partition, into a
        // `HashMap<TaskId, _>`: every task in its key order.
        let inserted: Vec<TaskId> = sub_order
            .iter()
            .flat_map(|s| (0..s.partitions).map(move |p| TaskId::new(s.id, p)))
            .collect();
        let all_tasks = java_task_order(&inserted, Capacity::Default);
        // `tasksForTopicGroup`: per subtopology a `HashSet` filled in that order;
        // `ChangelogTopics.setup` walks the subtopologies and each set into a `HashMap` keyed by
        // task, whose keys the leader copies into its `HashSet` of stateful tasks.
        let mut changelog_inserted = Vec::new();
        for s in sub_order.iter().filter(|s| s.stateful) {
            let own: Vec<TaskId> = all_tasks
                .iter()
                .copied()
                .filter(|t| t.subtopology == s.id)
                .collect();
            changelog_inserted.extend(java_task_order(&own, Capacity::Default));
        }
        // The leader's `HashSet` copies that map's keys in its order into a table of the same
        // size (both default, grown by the same count): the same order.
        let stateful_tasks = java_task_order(&changelog_inserted, Capacity::Default);

        // End offsets: a stateful task missing from the fetched sums gets 0; a failed fetch
        // gives every one `UNKNOWN_OFFSET_SUM` (`SPA.java:911-916`).
        let end_offsets: BTreeMap<TaskId, i64> = self
            .tasks()
            .filter(|(_, stateful)| *stateful)
            .map(|(t, _)| {
                let sum = match &self.changelog_end_offset_sums {
                    Some(sums) => sums.get(&t).copied().unwrap_or(0),
                    None => UNKNOWN_OFFSET_SUM,
                };
                (t, sum)
            })
            .collect();

        // The subscriptions: a `HashMap` by consumer id, filled in file order; the leader makes
        // one client per process as it meets it, in a `HashMap<ProcessId, _>`.
        let consumers: Vec<(&ClientInput, &Consumer)> = self
            .clients
            .iter()
            .flat_map(|c| c.consumers.iter().map(move |m| (c, m)))
            .collect();
        let consumer_hashes: Vec<i32> = consumers
            .iter()
            .map(|(_, m)| crate::java::string_hash(&m.member_id))
            .collect();
        let mut states: Vec<ClientState> = Vec::new();
        for i in crate::java::iteration_order(&consumer_hashes, Capacity::Default) {
            let (client, consumer) = consumers[i];
            let at = match states
                .iter()
                .position(|s| s.process_id == client.process_id)
            {
                Some(at) => at,
                None => {
                    states.push(ClientState::new(
                        client.process_id,
                        client.client_tags.clone(),
                    ));
                    states.len() - 1
                }
            };
            states[at].add_consumer(consumer);
        }
        // `clientStates` is filled in the metadata map's order, into a table of the same size:
        // it iterates as that map does.
        let process_hashes: Vec<i32> = states.iter().map(|s| s.process_id.java_hash()).collect();
        let mut by_order: Vec<Option<ClientState>> = states.into_iter().map(Some).collect();
        let mut states: Vec<ClientState> =
            crate::java::iteration_order(&process_hashes, Capacity::Default)
                .into_iter()
                .map(|i| by_order[i].take().expect("each client once"))
                .collect();
        let partitions: BTreeMap<i32, i32> = self
            .subtopologies
            .iter()
            .map(|s| (s.id, s.partitions))
            .collect();
        for state in &mut states {
            state.initialize_prev_tasks(|topic, partition| {
                let sub: i32 = topic.strip_prefix("input-")?.parse().ok()?;
                (source_topic(sub) == topic && (0..*partitions.get(&sub)?).contains(&partition))
                    .then(|| TaskId::new(sub, partition))
            });
            state.compute_task_lags(&end_offsets);
        }
        let used = AssignorUsed::chosen(self.assignor, self.changelog_end_offset_sums.is_some());
        let clients = Clients {
            states,
            all_tasks,
            stateful_tasks,
        };
        (clients, used)
    }

    /// Runs the case as Kafka's leader does: its input, the task assignor it picks, each
    /// client's spread over its threads.
    pub fn assign(&self) -> ClassicOutcome {
        let (mut clients, used) = self.prepare();
        let answer = assign_tasks(used, &mut clients, &self.configs);
        outcome(used, clients, answer)
    }
}

/// The outcome once the assignor has written its answer into `clients`.
pub fn outcome(used: AssignorUsed, clients: Clients, answer: AssignorAnswer) -> ClassicOutcome {
    let mut states = clients.states;
    states.sort_by_key(|s| s.process_id);
    let clients = states
        .into_iter()
        .map(|state| ClientOutcome {
            warmup: answer
                .warmups
                .get(&state.process_id)
                .cloned()
                .unwrap_or_default(),
            threads: spread_over_threads(&state),
            state,
        })
        .collect();
    ClassicOutcome {
        assignor_used: used,
        probing_rebalance: answer.probing_rebalance,
        clients,
    }
}

// ---- reading ----

#[derive(Deserialize)]
struct RawCase {
    id: String,
    assignor: String,
    subtopologies: Vec<RawSubtopology>,
    #[serde(default)]
    changelog_end_offset_sums: Option<Map<String, Value>>,
    #[serde(default)]
    configs: Option<RawConfigs>,
    clients: Vec<RawClient>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSubtopology {
    id: Value,
    partitions: i64,
    stateful: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfigs {
    #[serde(default)]
    acceptable_recovery_lag: Option<i64>,
    #[serde(default)]
    max_warmup_replicas: Option<i64>,
    #[serde(default)]
    num_standby_replicas: Option<i64>,
    #[serde(default)]
    probing_rebalance_interval_ms: Option<i64>,
    #[serde(default)]
    rack_aware_assignment_tags: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClient {
    process_id: String,
    #[serde(default)]
    client_tags: Option<BTreeMap<String, String>>,
    consumers: Vec<RawConsumer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConsumer {
    member_id: String,
    #[serde(default)]
    owned_partitions: Vec<(String, i64)>,
    #[serde(default)]
    task_offset_sums: Map<String, Value>,
}

/// Whether a parsed JSON line is a classic Streams case: `subtopologies` with `clients`.
pub fn is_classic_case(value: &Value) -> bool {
    value.get("subtopologies").is_some() && value.get("clients").is_some()
}

/// Parses a line already read as a JSON object into a case, or says what is wrong with it.
pub fn parse_value(value: Value) -> Result<ClassicCase, String> {
    let raw: RawCase = serde_json::from_value(value).map_err(|e| e.to_string())?;
    let assignor = match raw.assignor.as_str() {
        "high_availability" => ConfiguredAssignor::HighAvailability,
        "legacy_sticky" => ConfiguredAssignor::LegacySticky,
        other => {
            return Err(format!(
                "unknown assignor {other:?} for a classic Kafka Streams case: expected \
                 \"high_availability\" or \"legacy_sticky\" (Kafka picks fallback_prior itself)"
            ))
        }
    };
    let configs = parse_configs(raw.configs)?;

    let mut subtopologies: Vec<Subtopology> = Vec::with_capacity(raw.subtopologies.len());
    let mut total = 0u64;
    for s in raw.subtopologies {
        let id =
            s.id.as_i64()
                .filter(|id| (0..=i64::from(i32::MAX)).contains(id))
                .ok_or_else(|| {
                    format!(
                    "subtopology id {} is not a number: classic Streams names a subtopology by \
                     its topic group id, an int from 0",
                    s.id
                )
                })? as i32;
        if subtopologies.iter().any(|t| t.id == id) {
            return Err(format!("subtopology id {id} given twice"));
        }
        if s.partitions < 0 {
            return Err(format!(
                "subtopology {id}: negative partition count {}",
                s.partitions
            ));
        }
        total = total.saturating_add(s.partitions as u64);
        if total > MAX_PARTITIONS {
            return Err(format!(
                "subtopology {id}: partition count {} makes {total} tasks in all, above the limit of {MAX_PARTITIONS}",
                s.partitions
            ));
        }
        subtopologies.push(Subtopology {
            id,
            partitions: s.partitions as i32,
            stateful: s.stateful,
        });
    }
    let task_in_topology = |name: &str, whose: &str| -> Result<TaskId, String> {
        let task = TaskId::parse(name).map_err(|e| format!("{whose}: {e}"))?;
        match subtopologies.iter().find(|s| s.id == task.subtopology) {
            Some(s) if task.partition < s.partitions => Ok(task),
            Some(s) => Err(format!(
                "{whose}: task {task} is outside the topology: subtopology {} has {} partition{}",
                s.id,
                s.partitions,
                if s.partitions == 1 { "" } else { "s" }
            )),
            None => Err(format!(
                "{whose}: task {task} is outside the topology: there is no subtopology {}",
                task.subtopology
            )),
        }
    };
    let sum_of = |v: &Value, whose: &str, task: &str| -> Result<i64, String> {
        v.as_i64()
            .ok_or_else(|| format!("{whose}[{task:?}] is {v}, not an offset sum (a long)"))
    };

    let changelog_end_offset_sums = match raw.changelog_end_offset_sums {
        None => None,
        Some(map) => {
            let mut sums = BTreeMap::new();
            for (name, v) in &map {
                let whose = "changelog_end_offset_sums";
                let task = task_in_topology(name, whose)?;
                let stateful = subtopologies
                    .iter()
                    .any(|s| s.id == task.subtopology && s.stateful);
                if !stateful {
                    return Err(format!(
                        "{whose}: task {task} is stateless (subtopology {} has no changelog)",
                        task.subtopology
                    ));
                }
                let sum = sum_of(v, whose, name)?;
                if sum < 0 {
                    return Err(format!(
                        "{whose}[{name:?}] is {sum}: an end offset sum is at least 0 (null \
                         stands for a failed fetch)"
                    ));
                }
                sums.insert(task, sum);
            }
            Some(sums)
        }
    };

    // The leader is a member itself: its assignor never sees an empty group (Kafka's would
    // throw: `totalCapacity` zero in legacy sticky, no client to deal to in high availability).
    if raw.clients.is_empty() {
        return Err(
            "no clients: the group leader that runs the assignor is a client itself, so there is \
             at least one"
                .into(),
        );
    }
    let mut clients: Vec<ClientInput> = Vec::with_capacity(raw.clients.len());
    let mut member_ids = BTreeSet::new();
    for c in raw.clients {
        let process_id = ProcessId::parse(&c.process_id)?;
        if clients.iter().any(|o| o.process_id == process_id) {
            return Err(format!(
                "process_id {:?} given twice: list each Kafka Streams instance once, with all its consumers",
                c.process_id
            ));
        }
        if c.consumers.is_empty() {
            return Err(format!(
                "client {:?} has no consumers: an instance has one consumer per stream thread",
                c.process_id
            ));
        }
        let mut consumers = Vec::with_capacity(c.consumers.len());
        for m in c.consumers {
            let whose = format!("consumer {:?}", m.member_id);
            if m.member_id.is_empty() {
                return Err(format!(
                    "client {:?}: a consumer has an empty member_id",
                    c.process_id
                ));
            }
            if !member_ids.insert(m.member_id.clone()) {
                return Err(format!("{whose} given twice"));
            }
            let mut owned = Vec::with_capacity(m.owned_partitions.len());
            for (topic, p) in m.owned_partitions {
                let p = i32::try_from(p).ok().filter(|p| *p >= 0).ok_or_else(|| {
                    format!("{whose}: owned partition {topic:?} {p} is not a partition number")
                })?;
                owned.push((topic, p));
            }
            let mut task_offset_sums = BTreeMap::new();
            for (name, v) in &m.task_offset_sums {
                let task = task_in_topology(name, &format!("{whose} task_offset_sums"))?;
                task_offset_sums
                    .insert(task, sum_of(v, &format!("{whose} task_offset_sums"), name)?);
            }
            consumers.push(Consumer {
                member_id: m.member_id,
                owned_partitions: owned,
                task_offset_sums,
            });
        }
        clients.push(ClientInput {
            process_id,
            client_tags: c.client_tags.unwrap_or_default(),
            consumers,
        });
    }
    Ok(ClassicCase {
        id: raw.id,
        assignor,
        configs,
        subtopologies,
        changelog_end_offset_sums,
        clients,
    })
}

/// The configs with Kafka's defaults and its validators' bounds (`StreamsConfig`).
fn parse_configs(raw: Option<RawConfigs>) -> Result<AssignmentConfigs, String> {
    let d = AssignmentConfigs::default();
    let Some(raw) = raw else { return Ok(d) };
    let at_least = |name: &str, v: Option<i64>, min: i64, default: i64| -> Result<i64, String> {
        let v = v.unwrap_or(default);
        if v < min {
            return Err(format!(
                "configs.{name} is {v}: Kafka requires at least {min}"
            ));
        }
        Ok(v)
    };
    let int = |name: &str, v: i64| -> Result<i32, String> {
        i32::try_from(v).map_err(|_| format!("configs.{name} is {v}, above Kafka's int range"))
    };
    Ok(AssignmentConfigs {
        acceptable_recovery_lag: at_least(
            "acceptable_recovery_lag",
            raw.acceptable_recovery_lag,
            0,
            d.acceptable_recovery_lag,
        )?,
        max_warmup_replicas: int(
            "max_warmup_replicas",
            at_least("max_warmup_replicas", raw.max_warmup_replicas, 1, 2)?,
        )?,
        num_standby_replicas: int(
            "num_standby_replicas",
            at_least("num_standby_replicas", raw.num_standby_replicas, 0, 0)?,
        )?,
        probing_rebalance_interval_ms: at_least(
            "probing_rebalance_interval_ms",
            raw.probing_rebalance_interval_ms,
            60_000,
            d.probing_rebalance_interval_ms,
        )?,
        rack_aware_assignment_tags: raw.rack_aware_assignment_tags.unwrap_or_default(),
    })
}

// ---- writing ----

fn names<'a>(tasks: impl IntoIterator<Item = &'a TaskId>) -> Vec<String> {
    tasks.into_iter().map(TaskId::to_string).collect()
}

fn sorted_names(tasks: &[TaskId]) -> Vec<String> {
    let mut tasks = tasks.to_vec();
    tasks.sort();
    names(&tasks)
}

// Fields in alphabetical order: the output has sorted keys.
#[derive(Serialize)]
struct ThreadOut {
    active: Vec<String>,
    standby: Vec<String>,
}

#[derive(Serialize)]
struct ClientOut {
    active: Vec<String>,
    capacity: i32,
    lags: BTreeMap<String, i64>,
    prev_active: Vec<String>,
    prev_standby: Vec<String>,
    standby: Vec<String>,
    threads: BTreeMap<String, ThreadOut>,
    warmup: Vec<String>,
}

#[derive(Serialize)]
struct CaseOut<'a> {
    assignor_used: &'a str,
    clients: BTreeMap<String, ClientOut>,
    id: &'a str,
    probing_rebalance: bool,
}

/// One output line, keys sorted as in the reference's expected file.
pub fn render(case: &ClassicCase, outcome: &ClassicOutcome) -> String {
    let clients = outcome
        .clients
        .iter()
        .map(|c| {
            let s = &c.state;
            let out = ClientOut {
                active: names(&s.active),
                capacity: s.capacity,
                lags: s.lags.iter().map(|(t, l)| (t.to_string(), *l)).collect(),
                prev_active: names(&s.prev_active),
                prev_standby: names(&s.prev_standby),
                standby: names(&s.standby),
                threads: c
                    .threads
                    .iter()
                    .map(|(m, t)| {
                        let out = ThreadOut {
                            active: sorted_names(&t.active),
                            standby: sorted_names(&t.standby),
                        };
                        (m.clone(), out)
                    })
                    .collect(),
                warmup: names(&c.warmup),
            };
            (s.process_id.to_string(), out)
        })
        .collect();
    let out = CaseOut {
        assignor_used: outcome.assignor_used.name(),
        clients,
        id: &case.id,
        probing_rebalance: outcome.probing_rebalance,
    };
    serde_json::to_string(&out).expect("classic output serializes")
}
