//! Kafka Streams task assignment under the classic protocol: what the group leader's `stream`
//! assignor (`StreamsPartitionAssignor`) decides, as Kafka 4.3.1 decides it
//! (../shared/reference/streams/STREAMS.md §3-7).
//!
//! - this file: the vocabulary (`TaskId`, `ProcessId`, `AssignmentConfigs`) and the assignor's
//!   input as the leader builds it (`Clients`: the `HashMap<ProcessId, ClientState>` in Java's
//!   iteration order, every task, the stateful tasks);
//! - `client_state.rs`: `ClientState` (one Kafka Streams instance: capacity, previous tasks,
//!   lags, what it is given);
//! - `high_availability.rs`, `task_movement.rs`, `standby.rs`: `HighAvailabilityTaskAssignor`
//!   with its warm-ups and the two standby assignors;
//! - `legacy_sticky.rs`: `LegacyStickyTaskAssignor` and `FallbackPriorTaskAssignor`;
//! - `threads.rs`: `assignTasksToThreads`, a client's tasks spread over its stream threads;
//! - `json.rs`: the `cgsim assign` wire format of classic cases (reference/streams/README.md).

pub mod client_state;
mod constrained_priority_set;
#[cfg(test)]
pub mod corpus;
pub mod high_availability;
pub mod json;
pub mod legacy_sticky;
pub mod standby;
pub mod task_movement;
#[cfg(test)]
mod tests_ha;
pub mod threads;

#[cfg(test)]
mod tests_leader;
#[cfg(test)]
mod tests_legacy;

pub use client_state::ClientState;

use crate::java::{iteration_order, Capacity, JavaHash};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// `Task.LATEST_OFFSET`: the offset sum a thread reports for an active task it runs
/// (`SPI/Task.java:42`), and the lag of such a task.
pub const LATEST_OFFSET: i64 = -2;
/// `SubscriptionInfo.UNKNOWN_OFFSET_SUM`: every stateful task's end offset sum when the
/// leader's end-offset fetch failed (`SPA/SubscriptionInfo.java:54`).
pub const UNKNOWN_OFFSET_SUM: i64 = -3;

/// Kafka Streams' `TaskId(topicGroupId, partition)` under the classic protocol. The derived
/// order is `TaskId.compareTo` here: the topic group id as an int, then the partition
/// (`streams/.../processor/TaskId.java:135-147`); no named topologies.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct TaskId {
    pub subtopology: i32,
    pub partition: i32,
}

impl TaskId {
    pub fn new(subtopology: i32, partition: i32) -> TaskId {
        TaskId {
            subtopology,
            partition,
        }
    }

    /// `TaskId.toString()`'s inverse: `"<subtopology>_<partition>"`, both ints.
    pub fn parse(s: &str) -> Result<TaskId, String> {
        let bad =
            || format!("{s:?} is not a task id (expected SUBTOPOLOGY_PARTITION, e.g. \"0_3\")");
        let (sub, part) = s.split_once('_').ok_or_else(bad)?;
        let subtopology = sub.parse::<i32>().map_err(|_| bad())?;
        let partition = part.parse::<i32>().map_err(|_| bad())?;
        if subtopology < 0 || partition < 0 {
            return Err(bad());
        }
        Ok(TaskId::new(subtopology, partition))
    }
}

impl JavaHash for TaskId {
    /// `Objects.hash(subtopology, partition, topologyName)` with no named topology:
    /// `31 * (31 * (31 + subtopology) + partition) + 0`.
    fn java_hash(&self) -> i32 {
        31i32
            .wrapping_add(self.subtopology)
            .wrapping_mul(31)
            .wrapping_add(self.partition)
            .wrapping_mul(31)
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.subtopology, self.partition)
    }
}

/// A Kafka Streams instance's process id, a `java.util.UUID` (`ProcessId`). Its order is
/// `UUID.compareTo`: the most significant 64 bits as a *signed* long, then the least
/// (`processor/assignment/ProcessId.java:69`), which is not the order of the UUID strings.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ProcessId {
    pub msb: i64,
    pub lsb: i64,
}

impl ProcessId {
    /// `UUID.fromString` for the canonical 36-character form (8-4-4-4-12 hex digits).
    pub fn parse(s: &str) -> Result<ProcessId, String> {
        let bad = || {
            format!("{s:?} is not a process id (a UUID such as \"a1c86f7f-ef95-47d2-9eab-cdfd64659fa1\")")
        };
        let groups: Vec<&str> = s.split('-').collect();
        let lens = [8, 4, 4, 4, 12];
        if groups.len() != 5
            || groups
                .iter()
                .zip(lens)
                .any(|(g, n)| g.len() != n || !g.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(bad());
        }
        let hex: String = groups.concat();
        let msb = u64::from_str_radix(&hex[..16], 16).map_err(|_| bad())? as i64;
        let lsb = u64::from_str_radix(&hex[16..], 16).map_err(|_| bad())? as i64;
        Ok(ProcessId { msb, lsb })
    }
}

impl Ord for ProcessId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.msb.cmp(&other.msb).then(self.lsb.cmp(&other.lsb))
    }
}

impl PartialOrd for ProcessId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl JavaHash for ProcessId {
    /// `UUID.hashCode()`: the two halves of `msb ^ lsb` xored.
    fn java_hash(&self) -> i32 {
        let hilo = self.msb ^ self.lsb;
        ((hilo >> 32) as i32) ^ (hilo as i32)
    }
}

impl fmt::Display for ProcessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (m, l) = (self.msb as u64, self.lsb as u64);
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            m >> 32,
            (m >> 16) & 0xffff,
            m & 0xffff,
            l >> 48,
            l & 0xffff_ffff_ffff
        )
    }
}

/// The Streams configs the task assignors read (`AssignorConfiguration.AssignmentConfigs`),
/// with Kafka's defaults (`StreamsConfig`, STREAMS.md §3.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssignmentConfigs {
    /// `acceptable.recovery.lag` (10000): a client this close to a task's end is caught up.
    pub acceptable_recovery_lag: i64,
    /// `max.warmup.replicas` (2): one budget of warm-ups for the whole rebalance.
    pub max_warmup_replicas: i32,
    /// `num.standby.replicas` (0).
    pub num_standby_replicas: i32,
    /// `probing.rebalance.interval.ms` (600000): read by the leader after the assignor, not by it.
    pub probing_rebalance_interval_ms: i64,
    /// `rack.aware.assignment.tags` (empty): non-empty picks `ClientTagAwareStandbyTaskAssignor`.
    pub rack_aware_assignment_tags: Vec<String>,
}

impl Default for AssignmentConfigs {
    fn default() -> Self {
        AssignmentConfigs {
            acceptable_recovery_lag: 10_000,
            max_warmup_replicas: 2,
            num_standby_replicas: 0,
            probing_rebalance_interval_ms: 600_000,
            rack_aware_assignment_tags: Vec::new(),
        }
    }
}

/// The task assignor configured as `internal.task.assignor.class`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfiguredAssignor {
    /// `HighAvailabilityTaskAssignor`, the default.
    HighAvailability,
    /// `LegacyStickyTaskAssignor`.
    LegacySticky,
}

/// The task assignor that ran: `createTaskAssignor` (`SPA.java:859-872`) swaps in
/// `FallbackPriorTaskAssignor` when high availability is configured but the end offsets could
/// not be fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignorUsed {
    HighAvailability,
    LegacySticky,
    FallbackPrior,
}

impl AssignorUsed {
    pub fn chosen(configured: ConfiguredAssignor, end_offsets_fetched: bool) -> AssignorUsed {
        match configured {
            ConfiguredAssignor::LegacySticky => AssignorUsed::LegacySticky,
            ConfiguredAssignor::HighAvailability if end_offsets_fetched => {
                AssignorUsed::HighAvailability
            }
            ConfiguredAssignor::HighAvailability => AssignorUsed::FallbackPrior,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AssignorUsed::HighAvailability => "high_availability",
            AssignorUsed::LegacySticky => "legacy_sticky",
            AssignorUsed::FallbackPrior => "fallback_prior",
        }
    }
}

/// A subtopology as the classic leader sees it: `partitions` tasks (its source topic
/// `input-<id>`'s partitions), stateful when it has a changelog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subtopology {
    pub id: i32,
    pub partitions: i32,
    pub stateful: bool,
}

/// The source topic of a subtopology in the reference cases' topology convention.
pub fn source_topic(subtopology: i32) -> String {
    format!("input-{subtopology}")
}

/// What the task assignor is called with (`LegacyTaskAssignor.assign(clients, allTaskIds,
/// statefulTaskIds, ...)`), every collection in the order Java iterates it.
#[derive(Clone, Debug)]
pub struct Clients {
    /// The leader's `HashMap<ProcessId, ClientState>`, in its iteration order.
    pub states: Vec<ClientState>,
    /// `partitionsForTask.keySet()`: every task, in `HashMap<TaskId, _>` order.
    pub all_tasks: Vec<TaskId>,
    /// The stateful tasks, in the order of the leader's `HashSet<TaskId>`.
    pub stateful_tasks: Vec<TaskId>,
}

impl Clients {
    /// The client with that process id.
    pub fn get(&self, process: ProcessId) -> Option<&ClientState> {
        self.states.iter().find(|c| c.process_id == process)
    }

    /// Indexes of `states` in `ProcessId` order, as the `TreeMap` high availability builds.
    pub fn by_process_id(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.states.len()).collect();
        order.sort_by_key(|&i| self.states[i].process_id);
        order
    }
}

/// The iteration order of a `HashMap`/`HashSet` of tasks holding `tasks` (given in insertion
/// order) at the capacity `capacity`: the order Java walks it.
pub fn java_task_order(tasks: &[TaskId], capacity: Capacity) -> Vec<TaskId> {
    let hashes: Vec<i32> = tasks.iter().map(JavaHash::java_hash).collect();
    iteration_order(&hashes, capacity)
        .into_iter()
        .map(|i| tasks[i])
        .collect()
}

/// What a task assignor returns beside what it writes into the clients.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssignorAnswer {
    /// `assign`'s boolean: whether a probing rebalance should follow.
    pub probing_rebalance: bool,
    /// Per client, the standbys that are warm-ups (high availability only).
    pub warmups: BTreeMap<ProcessId, BTreeSet<TaskId>>,
}

/// Runs the task assignor `used` names on the leader's input, as `StreamsPartitionAssignor`
/// calls it (`SPA.java:818-832`; rack awareness `none`).
pub fn assign_tasks(
    used: AssignorUsed,
    clients: &mut Clients,
    configs: &AssignmentConfigs,
) -> AssignorAnswer {
    match used {
        AssignorUsed::HighAvailability => {
            let outcome = high_availability::assign(clients, configs);
            AssignorAnswer {
                probing_rebalance: outcome.probing_rebalance,
                warmups: outcome.warmups,
            }
        }
        AssignorUsed::LegacySticky => AssignorAnswer {
            probing_rebalance: legacy_sticky::assign(clients, configs, false),
            warmups: BTreeMap::new(),
        },
        AssignorUsed::FallbackPrior => AssignorAnswer {
            probing_rebalance: legacy_sticky::assign_fallback_prior(clients, configs),
            warmups: BTreeMap::new(),
        },
    }
}
