//! Kafka Streams task assignment for streams groups (KIP-1071, `group.protocol=streams`): the
//! group coordinator's only task assignor, `streams/assignor/StickyTaskAssignor` of Kafka 4.3.1,
//! as a pure function of its input (../shared/reference/streams/STREAMS.md §1).
//!
//! The assignor's answer depends on Java collection order as much as on the input's content
//! (STREAMS.md §1.6): the coordinator's `HashMap` of member specs, the `HashMap`s of processes and
//! of each process's members, and two `java.util.PriorityQueue`s that compare only the load. The
//! input therefore keeps the members in the order the coordinator put them into its map, and
//! the port takes every order from `crate::java`.
//!
//! - this file: the assignor's input and output in Kafka's vocabulary (`GroupSpec`,
//!   `AssignmentMemberSpec`, `TopologyDescriber`, `TaskId`, `MemberAssignment`);
//! - `sticky.rs`: `StickyTaskAssignor` (active tasks, standby tasks, the dynamic quotas);
//! - `process_state.rs`: `ProcessState` (a process's members, their task counts, its load);
//! - `json.rs`: the `cgsim assign` wire format of KIP-1071 cases (reference/streams/README.md).

pub mod classic;
pub mod json;
mod process_state;
pub mod sticky;
#[cfg(test)]
mod tests;

pub use sticky::assign;

use crate::java::string_compare;
use std::fmt;

/// Index of a subtopology in [`Topology::subtopologies`], which are sorted by id in Java
/// `String` order, so index order is Kafka's subtopology order.
pub type SubtopologyIdx = u32;

/// Kafka's `TaskId(subtopologyId, partition)`. The derived order is `TaskId.compareTo`:
/// subtopology id (as a String), then partition (as an int).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct TaskId {
    pub subtopology: SubtopologyIdx,
    pub partition: i32,
}

impl TaskId {
    pub fn new(subtopology: SubtopologyIdx, partition: i32) -> Self {
        TaskId {
            subtopology,
            partition,
        }
    }
}

/// A subtopology as the coordinator's `TopologyMetadata` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subtopology {
    /// The subtopology id: the client's `String.valueOf(nodeGroupId)`, "0", "1", ...
    pub id: String,
    /// `maxNumInputPartitions`: the number of tasks (`ConfiguredSubtopology.numberOfTasks`).
    pub partitions: i32,
    /// Whether it has a state changelog topic (`isStateful`): only those get standby tasks.
    pub stateful: bool,
}

/// The topology the assignor reads (`TopologyDescriber`): subtopologies in a `SortedMap`, so
/// sorted by id in Java `String` order (`GS/TopologyMetadata.java:62-64`, STREAMS.md §1.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    subtopologies: Vec<Subtopology>,
    /// Dense index of each subtopology's task 0; the last entry is the number of tasks.
    first_task: Vec<usize>,
}

impl Topology {
    /// Sorts the subtopologies by id; an id given twice is an error (a `SortedMap` holds one).
    pub fn new(mut subtopologies: Vec<Subtopology>) -> Result<Topology, String> {
        subtopologies.sort_by(|a, b| string_compare(&a.id, &b.id));
        if let Some(w) = subtopologies.windows(2).find(|w| w[0].id == w[1].id) {
            return Err(format!("subtopology id {:?} given twice", w[0].id));
        }
        if let Some(s) = subtopologies.iter().find(|s| s.partitions < 0) {
            return Err(format!(
                "subtopology {:?}: negative partition count {}",
                s.id, s.partitions
            ));
        }
        let mut first_task = Vec::with_capacity(subtopologies.len() + 1);
        let mut next = 0usize;
        for s in &subtopologies {
            first_task.push(next);
            next += s.partitions as usize;
        }
        first_task.push(next);
        Ok(Topology {
            subtopologies,
            first_task,
        })
    }

    /// Sorted by id in Java `String` order.
    pub fn subtopologies(&self) -> &[Subtopology] {
        &self.subtopologies
    }

    pub fn subtopology(&self, idx: SubtopologyIdx) -> &Subtopology {
        &self.subtopologies[idx as usize]
    }

    /// The index of the subtopology with that id.
    pub fn subtopology_index(&self, id: &str) -> Option<SubtopologyIdx> {
        self.subtopologies
            .binary_search_by(|s| string_compare(&s.id, id))
            .ok()
            .map(|i| i as SubtopologyIdx)
    }

    /// Every task of every subtopology (the active tasks).
    pub fn task_count(&self) -> usize {
        *self
            .first_task
            .last()
            .expect("one entry past the last subtopology")
    }

    /// Whether the task exists in this topology.
    pub fn contains(&self, task: TaskId) -> bool {
        self.subtopologies
            .get(task.subtopology as usize)
            .is_some_and(|s| (0..s.partitions).contains(&task.partition))
    }

    /// A dense index in `0..task_count()`, for per-task tables.
    pub fn task_index(&self, task: TaskId) -> usize {
        debug_assert!(self.contains(task));
        self.first_task[task.subtopology as usize] + task.partition as usize
    }

    /// Per subtopology, the dense index of its task 0 (also for one without partitions),
    /// then the number of tasks.
    pub(super) fn first_tasks(&self) -> &[usize] {
        &self.first_task
    }

    /// `TaskId.toString()`: `"<subtopology>_<partition>"`.
    pub fn task_name(&self, task: TaskId) -> String {
        format!(
            "{}_{}",
            self.subtopology(task.subtopology).id,
            task.partition
        )
    }

    /// The tasks `StickyTaskAssignor.taskIds` lists: every task (`active`), or those of the
    /// stateful subtopologies, in subtopology order, then partition order
    /// (`SA/StickyTaskAssignor.java:72-83`).
    pub fn tasks(&self, active: bool) -> Vec<TaskId> {
        let mut tasks = Vec::with_capacity(self.task_count());
        for (i, s) in self.subtopologies.iter().enumerate() {
            if active || s.stateful {
                tasks.extend((0..s.partitions).map(|p| TaskId::new(i as SubtopologyIdx, p)));
            }
        }
        tasks
    }

    /// The same tasks in the order `StickyTaskAssignor` sorts them first: partition, then
    /// subtopology (`Comparator.comparing(TaskId::partition).thenComparing(
    /// TaskId::subtopologyId)`, `SA/StickyTaskAssignor.java:183`, `:323`), built in that order
    /// rather than sorted.
    pub fn tasks_by_partition(&self, active: bool) -> Vec<TaskId> {
        let mut tasks = Vec::with_capacity(self.task_count());
        // The subtopologies that still have a partition `p`, in subtopology order: each round
        // costs what it yields plus what it drops.
        let mut alive: Vec<usize> = (0..self.subtopologies.len())
            .filter(|&i| active || self.subtopologies[i].stateful)
            .collect();
        let mut p = 0;
        while !alive.is_empty() {
            alive.retain(|&i| p < self.subtopologies[i].partitions);
            tasks.extend(alive.iter().map(|&i| TaskId::new(i as SubtopologyIdx, p)));
            p += 1;
        }
        tasks
    }
}

/// One member as the assignor sees it (`AssignmentMemberSpec`): its previous *target*
/// assignment, not what it owns now (`GS/TargetAssignmentBuilder.java:123-138`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberSpec {
    pub member_id: String,
    /// Several members (stream threads) share one process (a Kafka Streams instance).
    pub process_id: String,
    pub active_tasks: Vec<TaskId>,
    pub standby_tasks: Vec<TaskId>,
    /// Never read by the 4.3.1 assignor (STREAMS.md §1.1, measured on 1,649 cases).
    pub warmup_tasks: Vec<TaskId>,
    /// Never read by the 4.3.1 assignor (STREAMS.md §1.1).
    pub rack_id: Option<String>,
}

/// The assignor's input (`GroupSpec` with a `TopologyDescriber`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpec {
    pub topology: Topology,
    /// In the order the coordinator put them into its `HashMap` of member specs
    /// (`TargetAssignmentBuilder.build()`): that map's iteration order decides ties. Member ids
    /// are distinct (they are the map's keys).
    pub members: Vec<MemberSpec>,
    /// The assignment config `num.standby.replicas` (the group's
    /// `streams.num.standby.replicas`, else the broker's default).
    pub num_standby_replicas: u32,
}

/// One member's tasks (`MemberAssignment`), each list sorted by `TaskId.compareTo`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemberAssignment {
    pub active_tasks: Vec<TaskId>,
    pub standby_tasks: Vec<TaskId>,
    /// Always empty: the 4.3.1 assignor makes no warm-ups (`SA/StickyTaskAssignor.java:165`).
    pub warmup_tasks: Vec<TaskId>,
}

/// The assignor's answer (`GroupAssignment`): one entry per member, indexed like
/// [`GroupSpec::members`], plus what Kafka logs as warnings while computing it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupAssignment {
    pub members: Vec<MemberAssignment>,
    /// Kafka's `log.warn` lines: standby replicas that found no process to go to.
    pub warnings: Vec<String>,
}

/// Kafka's `TaskAssignorException`: the assignor refused to answer (its message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskAssignorError(pub String);

impl fmt::Display for TaskAssignorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TaskAssignorError {}
