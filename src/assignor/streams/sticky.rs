//! Kafka 4.3.1's KIP-1071 `StickyTaskAssignor` (`SA/StickyTaskAssignor.java`, STREAMS.md §1).
//!
//! Active tasks go, in this order of preference, to their previous active owner while it is
//! under the active quota, to a previous standby holder under that quota, and then to the least
//! loaded process's least loaded member with no quota at all. Standby tasks go to the previous
//! active owner, then a previous standby holder, both under the total quota, then to the least
//! loaded process that does not hold the task in any role. Both quotas shrink as members reach
//! them (the dynamic quota, §1.3). Every tie is decided by Java collection order, which this
//! port reproduces: the members `HashMap` (member-id hashes, insertion order within a bucket),
//! the processes `HashMap` (process-id hashes) and each process's members `HashMap`, and the
//! `java.util.PriorityQueue`s of processes and members, which compare the load alone.
//!
//! Processes and members are dense indexes: a process is numbered in the order the members map
//! first names it, a member by its process and its slot there (the order `addMember` met it),
//! and by its index in [`GroupSpec::members`] in the answer. Every Kafka source line cited is
//! `SA/StickyTaskAssignor.java` at 26b251a4 unless another file is named.

use super::process_state::{ProcessState, Slot};
use super::{GroupAssignment, GroupSpec, MemberAssignment, TaskAssignorError, TaskId};
use crate::java::{double_compare, iteration_order, string_hash, Capacity, PriorityQueue};
use rustc_hash::FxHashMap;
use std::cmp::Ordering;

/// Runs `new StickyTaskAssignor().assign(groupSpec, topology)`.
pub fn assign(group: &GroupSpec) -> Result<GroupAssignment, TaskAssignorError> {
    let mut state = LocalState::initialize(group);
    state.assign_active(group.topology.tasks_by_partition(true))?;
    // Standby tasks only with `num.standby.replicas` > 0 (`:64-67`).
    if state.num_standby_replicas > 0 {
        state.assign_standby(group.topology.tasks_by_partition(false));
    }
    Ok(state.build_group_assignment(group))
}

/// Kafka's `Member`: who held a task before, and in which process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Member {
    process: u32,
    slot: Slot,
}

/// An entry of `processByLoad`: the process and its load when it was added. A process is only
/// ever changed while polled out of the queue, so the load Java's comparator would read live is
/// the one recorded here.
#[derive(Clone, Copy, Debug)]
struct ProcessLoad {
    load: f64,
    process: u32,
}

/// `Comparator.comparingDouble(ProcessState::load)` (`:220`, `:362`): the load alone.
/// `ProcessState.compareTo`, which would break ties by capacity, is not used (STREAMS.md §1.3).
fn by_load(a: &ProcessLoad, b: &ProcessLoad) -> Ordering {
    double_compare(a.load, b.load)
}

/// `computeTasksPerMember` (`:381-390`): the ceiling of tasks over members, 0 without members.
/// Rust's `/` and `%` truncate toward zero as Java's do.
pub(super) fn compute_tasks_per_member(tasks: i64, members: i64) -> i64 {
    if members == 0 {
        return 0;
    }
    let mut per_member = tasks / members;
    if tasks % members > 0 {
        per_member += 1;
    }
    per_member
}

/// Kafka's `LocalState` plus the processes (`processIdToState`) and what each was given.
struct LocalState {
    num_standby_replicas: i64,
    total_active_tasks: i64,
    total_tasks: i64,
    total_members_with_active_task_capacity: i64,
    total_members_with_task_capacity: i64,
    active_tasks_per_member: i64,
    total_tasks_per_member: i64,
    /// Per dense task index: `activeTaskToPrevMember`.
    active_task_to_prev_member: Vec<Option<Member>>,
    /// `standbyTaskToPrevMember`: per dense task index `t`, the previous standby holders in
    /// members-map iteration order are `prev_standby[prev_standby_start[t]..
    /// prev_standby_start[t + 1]]`.
    prev_standby_start: Vec<u32>,
    prev_standby: Vec<Member>,
    processes: Vec<ProcessState>,
    /// `processIdToState.values()` iteration order.
    process_order: Vec<u32>,
    /// Every process's `assignedTasks` at once.
    holders: Holders,
    /// Every task given, in the order given: (member's index in the group spec, task, active).
    given: Vec<(u32, TaskId, bool)>,
    /// For dense task indexes.
    first_task: Vec<usize>,
    warnings: Vec<String>,
    /// `TaskId.toString()` of every task, for messages.
    task_names: TaskNames,
}

/// No process, no link.
const NONE: u32 = u32::MAX;

/// Which processes hold each task in any role: Kafka's per-process `assignedTasks`
/// (`SA/ProcessState.java:191-193`, `hasTask`), kept per task instead. A task has its active's
/// process and a list of its standbys' processes (links in one arena). Kafka asks `hasTask` only
/// while placing a task's standbys (STREAMS.md §1.4), about that task, so the pass
/// [`focus`](Holders::focus)es on it: its holders are stamped per process, and each question is
/// one load, where a set of all (process, task) pairs took a random access into a table as large
/// as the assignment.
struct Holders {
    /// Per dense task index: the process holding it as active, or [`NONE`].
    active: Vec<u32>,
    /// Per dense task index: the first link of its standbys' processes, or [`NONE`].
    standby_head: Vec<u32>,
    /// (process, next link).
    standby_links: Vec<(u32, u32)>,
    /// Per process: the focus in which it was last stamped as a holder of the focused task.
    stamp: Vec<u32>,
    /// The current focus (0: none yet) and its task.
    focus: u32,
    focused_task: usize,
}

impl Holders {
    fn new(tasks: usize, processes: usize, standbys: usize) -> Holders {
        Holders {
            active: vec![NONE; tasks],
            standby_head: vec![NONE; tasks],
            standby_links: Vec::with_capacity(standbys),
            stamp: vec![0; processes],
            focus: 0,
            focused_task: usize::MAX,
        }
    }

    fn add(&mut self, process: u32, task: usize, active: bool) {
        if active {
            self.active[task] = process;
        } else {
            let link = self.standby_links.len() as u32;
            self.standby_links.push((process, self.standby_head[task]));
            self.standby_head[task] = link;
        }
        if task == self.focused_task {
            self.stamp[process as usize] = self.focus;
        }
    }

    /// The processes holding `task` now, the active's first.
    fn of(&self, task: usize) -> impl Iterator<Item = u32> + '_ {
        let mut link = self.standby_head[task];
        let standbys = std::iter::from_fn(move || {
            let &(process, next) = self.standby_links.get(link as usize)?;
            link = next;
            Some(process)
        });
        (self.active[task] != NONE)
            .then_some(self.active[task])
            .into_iter()
            .chain(standbys)
    }

    /// From now on, questions about `task` are answered from the stamps.
    fn focus(&mut self, task: usize) {
        self.focus += 1;
        self.focused_task = task;
        let mut link = self.standby_head[task];
        if let Some(&p) = self.active.get(task).filter(|&&p| p != NONE) {
            self.stamp[p as usize] = self.focus;
        }
        while let Some(&(process, next)) = self.standby_links.get(link as usize) {
            self.stamp[process as usize] = self.focus;
            link = next;
        }
    }

    /// `hasTask`: the process holds the task as active or standby.
    fn has(&self, process: u32, task: usize) -> bool {
        if task == self.focused_task {
            self.stamp[process as usize] == self.focus
        } else {
            self.of(task).any(|p| p == process)
        }
    }
}

/// Task names for log and exception messages, without keeping the topology borrowed.
struct TaskNames(Vec<String>);

impl TaskNames {
    fn name(&self, task: TaskId) -> String {
        format!("{}_{}", self.0[task.subtopology as usize], task.partition)
    }
}

impl LocalState {
    /// `initialize` (`:85-136`, STREAMS.md §1.2).
    fn initialize(group: &GroupSpec) -> LocalState {
        let topology = &group.topology;
        let num_standby_replicas = i64::from(group.num_standby_replicas);
        // Totals over every subtopology; standbys count only for stateful ones (`:92-100`).
        let mut total_active_tasks = 0i64;
        let mut total_tasks = 0i64;
        for s in topology.subtopologies() {
            let partitions = i64::from(s.partitions);
            total_active_tasks += partitions;
            total_tasks += partitions;
            if s.stateful {
                total_tasks += partitions * num_standby_replicas;
            }
        }
        let member_count = group.members.len() as i64;
        let task_count = topology.task_count();

        // The member specs are a `HashMap` filled in the input's order
        // (`TargetAssignmentBuilder.build()`, `new HashMap<>()`); the loop walks its iteration
        // order (`:109`), so every "first" and "later wins" below is in that order.
        let member_hashes: Vec<i32> = group
            .members
            .iter()
            .map(|m| string_hash(&m.member_id))
            .collect();
        let member_order = iteration_order(&member_hashes, Capacity::Default);
        // `processIdToState.putIfAbsent(processId, ...)` (`:115`): processes numbered as the
        // loop first meets them, counted first so that each is built with room for its members.
        let mut process_index: FxHashMap<&str, u32> = FxHashMap::default();
        let mut process_hashes = Vec::new();
        let mut process_of = vec![0u32; group.members.len()];
        let mut process_sizes: Vec<usize> = Vec::new();
        for &m in &member_order {
            let id = group.members[m].process_id.as_str();
            let p = *process_index.entry(id).or_insert_with(|| {
                process_hashes.push(string_hash(id));
                process_sizes.push(0);
                (process_hashes.len() - 1) as u32
            });
            process_sizes[p as usize] += 1;
            process_of[m] = p;
        }
        let mut processes: Vec<ProcessState> = process_sizes
            .iter()
            .map(|&n| ProcessState::new(n))
            .collect();
        let mut members = vec![
            Member {
                process: 0,
                slot: 0
            };
            group.members.len()
        ];
        let mut active_task_to_prev_member = vec![None; task_count];
        let mut prev_standby_start = vec![0u32; task_count + 1];
        for &m in &member_order {
            let spec = &group.members[m];
            // `addMember` (`:116`).
            let process = process_of[m];
            let slot = processes[process as usize].add_member(m as u32);
            members[m] = Member { process, slot };
            // A task two members claim as active goes to the one iterated later (`:119-124`).
            // A task outside the topology is kept by Kafka but never looked up, so it is
            // skipped here (`cgsim assign` refuses such a line before it gets this far).
            for &task in spec.active_tasks.iter().filter(|&&t| topology.contains(t)) {
                active_task_to_prev_member[topology.task_index(task)] = Some(members[m]);
            }
            for &task in spec.standby_tasks.iter().filter(|&&t| topology.contains(t)) {
                prev_standby_start[topology.task_index(task) + 1] += 1;
            }
        }
        for p in &mut processes {
            p.seal(&member_hashes);
        }
        // Each stateful task ends with min(standbys, processes - 1) standbys (STREAMS.md §1.4):
        // room for every task given, up front.
        let stateful_tasks: usize = topology
            .subtopologies()
            .iter()
            .filter(|s| s.stateful)
            .map(|s| s.partitions as usize)
            .sum();
        let standbys_per_task =
            (group.num_standby_replicas as usize).min(processes.len().saturating_sub(1));
        let given = task_count + stateful_tasks * standbys_per_task;
        // Previous standby holders, listed per task in iteration order (`:127-134`).
        for t in 0..task_count {
            prev_standby_start[t + 1] += prev_standby_start[t];
        }
        let mut prev_standby = vec![
            Member {
                process: 0,
                slot: 0
            };
            prev_standby_start[task_count] as usize
        ];
        let mut next = prev_standby_start.clone();
        for &m in &member_order {
            for &task in group.members[m]
                .standby_tasks
                .iter()
                .filter(|&&t| topology.contains(t))
            {
                let t = topology.task_index(task);
                prev_standby[next[t] as usize] = members[m];
                next[t] += 1;
            }
        }
        LocalState {
            num_standby_replicas,
            total_active_tasks,
            total_tasks,
            total_members_with_active_task_capacity: member_count,
            total_members_with_task_capacity: member_count,
            // The quotas start as ceilings over all members (`:101-104`).
            active_tasks_per_member: compute_tasks_per_member(total_active_tasks, member_count),
            total_tasks_per_member: compute_tasks_per_member(total_tasks, member_count),
            active_task_to_prev_member,
            prev_standby_start,
            prev_standby,
            processes,
            // `new HashMap<>(totalMembersWithActiveTaskCapacity)` (`:106`), keyed by process id.
            process_order: iteration_order(&process_hashes, Capacity::Initial(group.members.len()))
                .into_iter()
                .map(|p| p as u32)
                .collect(),
            holders: Holders::new(task_count, process_sizes.len(), given - task_count),
            given: Vec::with_capacity(given),
            first_task: topology.first_tasks().to_vec(),
            warnings: Vec::new(),
            task_names: TaskNames(
                topology
                    .subtopologies()
                    .iter()
                    .map(|s| s.id.clone())
                    .collect(),
            ),
        }
    }

    fn task_index(&self, task: TaskId) -> usize {
        self.first_task[task.subtopology as usize] + task.partition as usize
    }

    fn process(&self, member: Member) -> &ProcessState {
        &self.processes[member.process as usize]
    }

    fn task_count_of(&self, member: Member) -> u32 {
        self.process(member).task_count_of(member.slot)
    }

    /// `hasUnfulfilledActiveTaskQuota` (`:311-313`): the member's count (active and standby)
    /// below the active quota.
    fn has_unfulfilled_active_task_quota(&self, member: Member) -> bool {
        i64::from(self.task_count_of(member)) < self.active_tasks_per_member
    }

    /// `hasUnfulfilledTaskQuota` (`:315-317`): below the total quota.
    fn has_unfulfilled_task_quota(&self, member: Member) -> bool {
        i64::from(self.task_count_of(member)) < self.total_tasks_per_member
    }

    /// `hasTask` of the member's process (`SA/ProcessState.java:191-193`): it holds the task
    /// in any role.
    fn has_task(&self, process: u32, task: TaskId) -> bool {
        self.holders.has(process, self.task_index(task))
    }

    /// Records that the member in that slot of that process was given the task
    /// (`addTaskInternal`'s `assignedTasks`, `assignedActiveTasks`, `assignedStandbyTasks`).
    fn record(&mut self, process: u32, slot: Slot, task: TaskId, active: bool) {
        let t = self.task_index(task);
        self.holders.add(process, t, active);
        let member = self.processes[process as usize].member(slot);
        self.given.push((member, task, active));
    }

    /// `processIdToState.get(member.processId).addTask(member.memberId, task, isActive)`.
    fn add_task(&mut self, member: Member, task: TaskId, active: bool) -> i64 {
        self.record(member.process, member.slot, task, active);
        i64::from(self.processes[member.process as usize].add_task(member.slot))
    }

    /// `addTaskToLeastLoadedMember` of that process: the new count of the member chosen, or
    /// `None` when the process has no member (Kafka's -1).
    fn add_task_to_least_loaded_member(
        &mut self,
        process: u32,
        task: TaskId,
        active: bool,
    ) -> Option<i64> {
        let (slot, count) = self.processes[process as usize].add_task_to_least_loaded_member()?;
        self.record(process, slot, task, active);
        Some(i64::from(count))
    }

    /// `assignActive` (`:180-236`, STREAMS.md §1.3).
    ///
    /// `tasks` come sorted by partition, then subtopology: previous owners are revisited
    /// range-wise (`:183`).
    fn assign_active(&mut self, tasks: Vec<TaskId>) -> Result<(), TaskAssignorError> {
        debug_assert!(tasks.is_sorted_by_key(|t| (t.partition, t.subtopology)));

        // 1. Back to the previous active owner while it is under the active quota (`:186-198`).
        let mut remaining = Vec::with_capacity(tasks.len());
        for task in tasks {
            let prev = self.active_task_to_prev_member[self.task_index(task)];
            match prev {
                Some(member) if self.has_unfulfilled_active_task_quota(member) => {
                    let count = self.add_task(member, task, true);
                    self.maybe_update_active_tasks_per_member(count);
                    self.maybe_update_total_tasks_per_member(count);
                }
                _ => remaining.push(task),
            }
        }

        // 2. To a previous standby holder under the active quota, chosen without looking at
        // who holds the task (`:200-214`).
        let tasks = remaining;
        let mut remaining = Vec::with_capacity(tasks.len());
        for task in tasks {
            let chosen = self.find_prev_member_with_least_load(self.task_index(task), None);
            match chosen {
                Some(member) if self.has_unfulfilled_active_task_quota(member) => {
                    let count = self.add_task(member, task, true);
                    self.maybe_update_active_tasks_per_member(count);
                    self.maybe_update_total_tasks_per_member(count);
                }
                _ => remaining.push(task),
            }
        }

        // 3. The rest, by subtopology then partition (`:217`), each to the least loaded
        // process's least loaded member, with no quota check (`:220-235`).
        let mut tasks = remaining;
        tasks.sort_unstable();
        let mut process_by_load = self.process_queue();
        for task in tasks {
            let Some(least) = process_by_load.poll() else {
                return Err(TaskAssignorError(format!(
                    "No process available to assign active task {}.",
                    self.task_names.name(task)
                )));
            };
            let Some(count) = self.add_task_to_least_loaded_member(least.process, task, true)
            else {
                return Err(TaskAssignorError(format!(
                    "No member available to assign active task {}.",
                    self.task_names.name(task)
                )));
            };
            self.maybe_update_active_tasks_per_member(count);
            self.maybe_update_total_tasks_per_member(count);
            process_by_load.offer(ProcessLoad {
                load: self.processes[least.process as usize].load(),
                process: least.process,
            });
        }
        Ok(())
    }

    /// `new PriorityQueue<>(comparingDouble(load))` then `addAll(processIdToState.values())`:
    /// one `offer` per process in the processes map's iteration order.
    fn process_queue(&self) -> PriorityQueue<ProcessLoad> {
        let mut queue = PriorityQueue::with_capacity(self.processes.len(), by_load);
        queue.add_all(self.process_order.iter().map(|&p| ProcessLoad {
            load: self.processes[p as usize].load(),
            process: p,
        }));
        queue
    }

    /// `maybeUpdateActiveTasksPerMember` (`:238-244`): the dynamic quota. A member that reaches
    /// the quota exactly leaves the pool with its tasks, and the quota is recomputed.
    fn maybe_update_active_tasks_per_member(&mut self, active_tasks: i64) {
        if active_tasks == self.active_tasks_per_member {
            self.total_members_with_active_task_capacity -= 1;
            self.total_active_tasks -= active_tasks;
            self.active_tasks_per_member = compute_tasks_per_member(
                self.total_active_tasks,
                self.total_members_with_active_task_capacity,
            );
        }
    }

    /// `maybeUpdateTotalTasksPerMember` (`:246-252`): the same for the total quota.
    fn maybe_update_total_tasks_per_member(&mut self, tasks: i64) {
        if tasks == self.total_tasks_per_member {
            self.total_members_with_task_capacity -= 1;
            self.total_tasks -= tasks;
            self.total_tasks_per_member =
                compute_tasks_per_member(self.total_tasks, self.total_members_with_task_capacity);
        }
    }

    /// `findPrevMemberWithLeastLoad` (`:282-309`, STREAMS.md §1.3 step 2 and §1.4 (b)) over
    /// the previous standby holders of the task at `task_index`. Starts from the first holder
    /// and moves to a later one only when both its process load and its own count are strictly
    /// lower (and, with a task, its process does not hold the task). With a task, the answer is
    /// none whenever the *first* holder's process holds it, even if a later holder was chosen:
    /// Kafka checks the first candidate's process state, which it never updates (`:305`).
    fn find_prev_member_with_least_load(
        &self,
        task_index: usize,
        task: Option<TaskId>,
    ) -> Option<Member> {
        let start = self.prev_standby_start[task_index] as usize;
        let end = self.prev_standby_start[task_index + 1] as usize;
        let (&first, rest) = self.prev_standby[start..end].split_first()?;
        let first_process = self.process(first);
        let mut candidate = first;
        let mut candidate_process_load = first_process.load();
        let mut candidate_member_load = first_process.task_count_of(first.slot);
        for &member in rest {
            let process = self.process(member);
            let process_load = process.load();
            if process_load < candidate_process_load
                && task.is_none_or(|t| !self.has_task(member.process, t))
            {
                let member_load = process.task_count_of(member.slot);
                if member_load < candidate_member_load {
                    candidate_process_load = process_load;
                    candidate_member_load = member_load;
                    candidate = member;
                }
            }
        }
        match task {
            Some(t) if self.has_task(first.process, t) => None,
            _ => Some(candidate),
        }
    }

    /// `assignStandby` (`:319-374`, STREAMS.md §1.4).
    ///
    /// `tasks`: the stateful tasks, sorted by partition, then subtopology.
    fn assign_standby(&mut self, tasks: Vec<TaskId>) {
        let replicas = self.num_standby_replicas;
        // Descending partition, then descending subtopology (`:323`): the same sort reversed.
        debug_assert!(tasks.is_sorted_by_key(|t| (t.partition, t.subtopology)));
        // `StandbyToAssign(task, remainingReplicas)`.
        let mut to_least_loaded: Vec<(TaskId, i64)> = Vec::new();
        for task in tasks.into_iter().rev() {
            let t = self.task_index(task);
            self.holders.focus(t);
            for i in 0..replicas {
                // (a) The previous active owner, if its process does not hold the task in any
                // role and it is under the total quota (`:328-337`).
                if let Some(member) = self.active_task_to_prev_member[t] {
                    if !self.has_task(member.process, task)
                        && self.has_unfulfilled_task_quota(member)
                    {
                        let count = self.add_task(member, task, false);
                        self.maybe_update_total_tasks_per_member(count);
                        continue;
                    }
                }
                // (b) A previous standby holder under the total quota (`:339-351`).
                if let Some(member) = self.find_prev_member_with_least_load(t, Some(task)) {
                    if self.has_unfulfilled_task_quota(member) {
                        let count = self.add_task(member, task, false);
                        self.maybe_update_total_tasks_per_member(count);
                        continue;
                    }
                }
                // (c) The replicas left go to the least loaded processes, later (`:353-354`).
                to_least_loaded.push((task, replicas - i));
                break;
            }
        }

        // Descending subtopology, then descending partition (`:359-360`).
        to_least_loaded.sort_unstable_by_key(|&(task, _)| std::cmp::Reverse(task));
        let mut process_by_load = self.process_queue();
        for (task, remaining) in to_least_loaded {
            self.holders.focus(self.task_index(task));
            for i in 0..remaining {
                if !self.assign_standby_to_member_with_least_load(&mut process_by_load, task) {
                    // Kafka logs this and carries on (`:366-371`); its count is
                    // `numStandbyReplicas - i`, whatever (a) and (b) placed (`:376-379`).
                    self.warnings.push(format!(
                        "Unable to assign {} of {} standby tasks for task [{}]. There is not \
                         enough available capacity. You should increase the number of threads \
                         and/or application instances to maintain the requested number of \
                         standby replicas.",
                        replicas - i,
                        replicas,
                        self.task_names.name(task)
                    ));
                    break;
                }
            }
        }
    }

    /// `assignStandbyToMemberWithLeastLoad` (`:254-271`): polls processes until one does not
    /// hold the task (no quota check), gives the task to its least loaded member, and adds
    /// every polled process back, innermost first, as Kafka's recursion does. Iterative here,
    /// so that a group of many processes cannot exhaust the stack.
    fn assign_standby_to_member_with_least_load(
        &mut self,
        queue: &mut PriorityQueue<ProcessLoad>,
        task: TaskId,
    ) -> bool {
        let mut polled = Vec::new();
        let mut found = false;
        while let Some(least) = queue.poll() {
            polled.push(least.process);
            if !self.has_task(least.process, task) {
                if let Some(count) =
                    self.add_task_to_least_loaded_member(least.process, task, false)
                {
                    found = true;
                    self.maybe_update_total_tasks_per_member(count);
                }
                break;
            }
            if queue.is_empty() {
                break;
            }
        }
        for &p in polled.iter().rev() {
            queue.offer(ProcessLoad {
                load: self.processes[p as usize].load(),
                process: p,
            });
        }
        found
    }

    /// `buildGroupAssignment` (`:138-169`): every member present, warm-ups always empty.
    fn build_group_assignment(self, group: &GroupSpec) -> GroupAssignment {
        let mut counts = vec![(0usize, 0usize); group.members.len()];
        for &(m, _, active) in &self.given {
            let c = &mut counts[m as usize];
            if active {
                c.0 += 1;
            } else {
                c.1 += 1;
            }
        }
        let mut members: Vec<MemberAssignment> = counts
            .into_iter()
            .map(|(active, standby)| MemberAssignment {
                active_tasks: Vec::with_capacity(active),
                standby_tasks: Vec::with_capacity(standby),
                warmup_tasks: Vec::new(),
            })
            .collect();
        for (m, task, active) in self.given {
            let out = &mut members[m as usize];
            if active {
                out.active_tasks.push(task);
            } else {
                out.standby_tasks.push(task);
            }
        }
        for m in &mut members {
            m.active_tasks.sort_unstable();
            m.standby_tasks.sort_unstable();
        }
        GroupAssignment {
            members,
            warnings: self.warnings,
        }
    }
}
