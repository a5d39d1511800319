//! `LegacyStickyTaskAssignor` and `FallbackPriorTaskAssignor` of Kafka 4.3.1 (STREAMS.md §6),
//! with the rack-aware strategy `none` (its two optimisation passes never run).
//!
//! Java file:line citations are to `streams/.../processor/internals/assignment/`
//! `LegacyStickyTaskAssignor.java` (`LSTA`) unless named otherwise.
//!
//! Where a Java collection's iteration order decides the answer, it is emulated with
//! `crate::java`'s hash collections built the way Kafka builds them:
//! - `previousActiveTaskAssignment`: `new HashMap<TaskId, ProcessId>()`, `put` in client order
//!   (last writer wins, the key keeps its first place) (`LSTA:60, 304-308`);
//! - each `previousStandbyTaskAssignment` value: `new HashSet<ProcessId>()`, `add` in client
//!   order (`LSTA:61, 310-313`);
//! - `unassigned`: `new HashSet<>(allTaskIds)` with JDK 17 sizing (`LSTA:164`);
//! - `findClientsWithoutAssignedTask`: `new HashSet<ProcessId>()` (`LSTA:208-216`);
//! - `constrainTo`: `new HashSet<>(ids)` with JDK 17 sizing, then `retainAll` (`LSTA:268-269`).
//!
//! `TaskPairs`' `HashSet<Pair>` is only asked `contains` and `size` (`LSTA:335-352`), and
//! `client.assignedTasks()` is only used to test or add pairs (`LSTA:194, 203, 294`), so their
//! orders never show: a `BTreeSet` and the two `TreeSet`s are enough there.

use super::{AssignmentConfigs, ClientState, Clients, ProcessId, TaskId};
use crate::java::{Capacity, JavaHashMap, JavaHashSet};
use std::collections::{BTreeMap, BTreeSet};

/// `LegacyStickyTaskAssignor.assign` (`LSTA:77-97`) with no rack-aware optimisation: fills
/// each client's `active` and `standby` and returns `false` (no probing rebalance).
/// `must_preserve_active_task_assignment` is the constructor flag (`LSTA:72-74`).
pub fn assign(
    clients: &mut Clients,
    configs: &AssignmentConfigs,
    must_preserve_active_task_assignment: bool,
) -> bool {
    let Clients {
        states,
        all_tasks,
        stateful_tasks,
    } = clients;
    let mut run = Run::new(states, all_tasks.len());
    run.assign_active(all_tasks, must_preserve_active_task_assignment);
    // `optimizeActive` (`LSTA:109-123`) and `optimizeStandby` (`LSTA:99-107`) need a rack-aware
    // assignor that can be enabled; strategy "none" never can.
    run.assign_standby(stateful_tasks, configs.num_standby_replicas);
    false
}

/// `FallbackPriorTaskAssignor.assign` (`FallbackPriorTaskAssignor.java:37-50`): the legacy
/// assignor that keeps every previous active task, no rack awareness, and always asks for a
/// probing rebalance.
pub fn assign_fallback_prior(clients: &mut Clients, configs: &AssignmentConfigs) -> bool {
    assign(clients, configs, true);
    true
}

/// `TaskPairs` (`LSTA:326-390`): the unordered pairs of tasks that already share a client.
struct TaskPairs {
    pairs: BTreeSet<(TaskId, TaskId)>,
    max_pairs: i32,
}

impl TaskPairs {
    /// `maxPairs = n * (n - 1) / 2` in Java `int` arithmetic (`LSTA:88`); `new HashSet<>(maxPairs)`
    /// throws on a negative capacity (`LSTA:332`).
    fn new(task_count: usize) -> TaskPairs {
        let n = task_count as i32;
        let max_pairs = n.wrapping_mul(n.wrapping_sub(1)) / 2;
        assert!(max_pairs >= 0, "Illegal initial capacity: {max_pairs}");
        TaskPairs {
            pairs: BTreeSet::new(),
            max_pairs,
        }
    }

    /// `pair`: the smaller task first (`LSTA:354-359`); `Pair.equals`/`hashCode` compare both
    /// tasks in that order (`LSTA:370-386`), so the ordered tuple is the same identity.
    fn pair(a: TaskId, b: TaskId) -> (TaskId, TaskId) {
        if a < b {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// `hasNewPair` (`LSTA:335-346`): false once every pair exists, else whether some task of
    /// the client would make a pair with `task` not seen yet.
    fn has_new_pair(&self, task: TaskId, client: &ClientState) -> bool {
        if self.pairs.len() as i64 == i64::from(self.max_pairs) {
            return false;
        }
        assigned_tasks(client).any(|t| !self.pairs.contains(&Self::pair(task, t)))
    }

    /// `addPairs` (`LSTA:348-352`).
    fn add_pairs(&mut self, task: TaskId, client: &ClientState) {
        for t in assigned_tasks(client) {
            self.pairs.insert(Self::pair(t, task));
        }
    }
}

/// `ClientState.assignedTasks()`: actives and standbys (a `HashSet` in Java whose order only
/// feeds `TaskPairs`, where it cannot show).
fn assigned_tasks(client: &ClientState) -> impl Iterator<Item = TaskId> + '_ {
    client.active.iter().chain(client.standby.iter()).copied()
}

/// One call of the assignor: the instance fields of `LegacyStickyTaskAssignor` (`LSTA:57-64`).
/// Clients are named by their index in `states`, the `clients` map's iteration order.
struct Run<'a> {
    states: &'a mut [ClientState],
    index: BTreeMap<ProcessId, usize>,
    /// `previousActiveTaskAssignment` (`LSTA:60`).
    prev_active: JavaHashMap<TaskId, ProcessId>,
    /// `previousStandbyTaskAssignment` (`LSTA:61`): only ever read with `get`, so the outer
    /// map's order never shows; each value's does.
    prev_standby: BTreeMap<TaskId, JavaHashSet<ProcessId>>,
    pairs: TaskPairs,
}

impl<'a> Run<'a> {
    /// The field set-up of `assign` and `mapPreviousTaskAssignment` (`LSTA:82-90, 304-316`).
    fn new(states: &'a mut [ClientState], task_count: usize) -> Run<'a> {
        let index = states
            .iter()
            .enumerate()
            .map(|(i, c)| (c.process_id, i))
            .collect();
        let mut prev_active = JavaHashMap::new(Capacity::Default);
        let mut prev_standby: BTreeMap<TaskId, JavaHashSet<ProcessId>> = BTreeMap::new();
        for client in states.iter() {
            // `prevActiveTasks()`/`prevStandbyTasks()` are TreeSets (`ClientState.java:89-90`).
            for &task in &client.prev_active {
                prev_active.insert(task, client.process_id);
            }
            for &task in &client.prev_standby {
                prev_standby
                    .entry(task)
                    .or_insert_with(|| JavaHashSet::new(Capacity::Default))
                    .insert(client.process_id);
            }
        }
        Run {
            states,
            index,
            prev_active,
            prev_standby,
            pairs: TaskPairs::new(task_count),
        }
    }

    fn idx(&self, process: &ProcessId) -> usize {
        self.index[process]
    }

    /// `assignActive` (`LSTA:143-190`).
    fn assign_active(&mut self, all_tasks: &[TaskId], must_preserve: bool) {
        let total_capacity: i32 = self.states.iter().map(|c| c.capacity).sum();
        // `LSTA:144-147`
        assert!(total_capacity != 0, "`totalCapacity` should never be zero.");
        let tasks_per_thread = all_tasks.len() as i32 / total_capacity;
        let all: BTreeSet<TaskId> = all_tasks.iter().copied().collect();
        let mut assigned: BTreeSet<TaskId> = BTreeSet::new();

        // (i) each previous active task back to its previous owner, in HashMap order, if the
        // owner has quota or the assignment must be preserved (`LSTA:154-162`).
        let previous: Vec<(TaskId, usize)> = self
            .prev_active
            .iter()
            .map(|(t, p)| (*t, self.idx(p)))
            .collect();
        for (task, client) in previous {
            if all.contains(&task)
                && (must_preserve || self.states[client].has_unfulfilled_quota(tasks_per_thread))
            {
                self.assign_task_to_client(&mut assigned, task, client);
            }
        }

        // (ii) the rest, in `new HashSet<>(allTaskIds)` order (JDK 17 sizing) less those
        // assigned, to the first previous standby holder, in its HashSet order, with quota
        // (`LSTA:164-182`). Removing elements leaves the others' order alone.
        let unassigned: Vec<TaskId> = JavaHashSet::copy_of(all_tasks.iter().copied())
            .iter()
            .copied()
            .filter(|t| !assigned.contains(t))
            .collect();
        let mut remaining = Vec::new();
        for task in unassigned {
            let holder = self.prev_standby.get(&task).and_then(|ids| {
                ids.iter()
                    .map(|p| self.idx(p))
                    .find(|&c| self.states[c].has_unfulfilled_quota(tasks_per_thread))
            });
            match holder {
                Some(client) => self.assign_task_to_client(&mut assigned, task, client),
                None => remaining.push(task),
            }
        }

        // (iii) everything else in TaskId order, among all clients in map order (`LSTA:185-189`).
        remaining.sort();
        let everyone: Vec<usize> = (0..self.states.len()).collect();
        for task in remaining {
            self.allocate(task, &everyone, true);
        }
    }

    /// `assignStandby` (`LSTA:125-141`): per stateful task in the leader's HashSet order, up to
    /// `numStandbyReplicas` times, among the clients without the task.
    fn assign_standby(&mut self, stateful_tasks: &[TaskId], replicas: i32) {
        for &task in stateful_tasks {
            for _ in 0..replicas {
                let without = self.clients_without_task(task);
                if without.is_empty() {
                    break;
                }
                self.allocate(task, &without, false);
            }
        }
    }

    /// `findClientsWithoutAssignedTask` (`LSTA:208-216`): a fresh `HashSet<ProcessId>` filled
    /// in client order, returned in its iteration order.
    fn clients_without_task(&self, task: TaskId) -> Vec<usize> {
        let mut ids = JavaHashSet::new(Capacity::Default);
        for client in self.states.iter() {
            if !client.has_assigned_task(task) {
                ids.insert(client.process_id);
            }
        }
        ids.iter().map(|p| self.idx(p)).collect()
    }

    /// `allocateTaskWithClientCandidates` (`LSTA:192-200`).
    fn allocate(&mut self, task: TaskId, within: &[usize], active: bool) {
        let client = self.find_client(task, within);
        self.pairs.add_pairs(task, &self.states[client]);
        if active {
            self.states[client].assign_active(task);
        } else {
            self.states[client].assign_standby(task);
        }
    }

    /// `assignTaskToClient` (`LSTA:202-206`).
    fn assign_task_to_client(
        &mut self,
        assigned: &mut BTreeSet<TaskId>,
        task: TaskId,
        client: usize,
    ) {
        self.pairs.add_pairs(task, &self.states[client]);
        self.states[client].assign_active(task);
        assigned.insert(task);
    }

    /// `findClient` (`LSTA:219-240`): the only candidate; else the previous owner (or least
    /// loaded previous standby holder) unless it is full while another client is less loaded,
    /// then a previous standby holder that is not, else the least loaded candidate.
    fn find_client(&self, task: TaskId, within: &[usize]) -> usize {
        if within.len() == 1 {
            return within[0];
        }
        let least_loaded = || {
            self.least_loaded(task, within)
                .expect("a non-empty candidate set has a least loaded client")
        };
        let Some(previous) = self.client_with_previous_task(task, within) else {
            return least_loaded();
        };
        if !self.should_balance_load(previous) {
            return previous;
        }
        match self.least_loaded_previous_standby(task, within) {
            Some(standby) if !self.should_balance_load(standby) => standby,
            _ => least_loaded(),
        }
    }

    /// `shouldBalanceLoad` and `hasClientsWithMoreAvailableCapacity` (`LSTA:242-253`).
    fn should_balance_load(&self, client: usize) -> bool {
        let c = &self.states[client];
        c.reached_capacity()
            && self
                .states
                .iter()
                .any(|other| other.has_more_available_capacity_than(c))
    }

    /// `findClientsWithPreviousAssignedTask` (`LSTA:255-261`).
    fn client_with_previous_task(&self, task: TaskId, within: &[usize]) -> Option<usize> {
        if let Some(p) = self.prev_active.get(&task) {
            let owner = self.idx(p);
            if within.contains(&owner) {
                return Some(owner);
            }
        }
        self.least_loaded_previous_standby(task, within)
    }

    /// `findLeastLoadedClientWithPreviousStandByTask` (`LSTA:263-271`): the previous standby
    /// holders copied into `new HashSet<>(ids)` (JDK 17 sizing, may reorder them), kept to the
    /// candidates.
    fn least_loaded_previous_standby(&self, task: TaskId, within: &[usize]) -> Option<usize> {
        let ids = self.prev_standby.get(&task)?;
        let ids: Vec<ProcessId> = ids.iter().copied().collect();
        let constrain_to: Vec<usize> = JavaHashSet::copy_of(ids)
            .iter()
            .map(|p| self.idx(p))
            .filter(|c| within.contains(c))
            .collect();
        self.least_loaded(task, &constrain_to)
    }

    /// `leastLoaded` (`LSTA:273-279`): with task pairs first, without if none qualifies.
    fn least_loaded(&self, task: TaskId, candidates: &[usize]) -> Option<usize> {
        self.find_least_loaded(task, candidates, true)
            .or_else(|| self.find_least_loaded(task, candidates, false))
    }

    /// `findLeastLoaded` (`LSTA:281-302`): the first candidate with no task at all; else the
    /// first of the strictly more available candidates seen in order, counting only those that
    /// would form a new pair when `check_task_pairs`.
    fn find_least_loaded(
        &self,
        task: TaskId,
        candidates: &[usize],
        check_task_pairs: bool,
    ) -> Option<usize> {
        let mut least: Option<usize> = None;
        for &c in candidates {
            let client = &self.states[c];
            if client.assigned_task_count() == 0 {
                return Some(c);
            }
            let more_available =
                least.is_none_or(|l| client.has_more_available_capacity_than(&self.states[l]));
            if more_available && (!check_task_pairs || self.pairs.has_new_pair(task, client)) {
                least = Some(c);
            }
        }
        least
    }
}
