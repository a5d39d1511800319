//! Kafka's `SA/ProcessState.java`: one process (a Kafka Streams instance) of a streams group,
//! its members (stream threads), their task counts, and its load (STREAMS.md §1.2).

use super::TaskId;
use crate::java::{iteration_order, string_hash, Capacity, PriorityQueue};
use rustc_hash::FxHashSet;
use std::cmp::Ordering;

/// A member's place in its process: its index in the order `addMember` was called.
pub type Slot = u32;

/// An entry of `membersByLoad`: a copy of a `memberToTaskCounts` entry
/// (`AbstractMap.SimpleEntry`), compared by its count alone (`Map.Entry.comparingByValue()`).
#[derive(Clone, Copy, Debug)]
struct MemberLoad {
    slot: Slot,
    task_count: u32,
}

fn by_task_count(a: &MemberLoad, b: &MemberLoad) -> Ordering {
    a.task_count.cmp(&b.task_count)
}

pub struct ProcessState {
    /// The number of members (`capacity`).
    capacity: u32,
    /// Active and standby tasks of all its members (`taskCount`).
    task_count: u32,
    /// `taskCount / capacity` as a Java double; `Double.MAX_VALUE` before the first member
    /// (`SA/ProcessState.java:46`).
    load: f64,
    /// Member index (in the group spec) per slot.
    members: Vec<u32>,
    /// Member ids' hash codes per slot, for `memberToTaskCounts`' iteration order.
    member_hashes: Vec<i32>,
    /// `memberToTaskCounts`: active + standby tasks per slot.
    task_counts: Vec<u32>,
    /// Slots in `memberToTaskCounts`' iteration order (a default `HashMap` filled in slot
    /// order); computed by [`ProcessState::seal`] once every member is in.
    iteration: Vec<Slot>,
    /// `assignedActiveTasks` and `assignedStandbyTasks`, per slot.
    active_tasks: Vec<Vec<TaskId>>,
    standby_tasks: Vec<Vec<TaskId>>,
    /// `assignedTasks`: what the process holds in any role (looked up, never iterated).
    assigned_tasks: FxHashSet<TaskId>,
    /// `membersByLoad`: built lazily, dropped by every direct [`ProcessState::add_task`].
    members_by_load: Option<PriorityQueue<MemberLoad>>,
}

impl ProcessState {
    pub fn new() -> Self {
        ProcessState {
            capacity: 0,
            task_count: 0,
            load: f64::MAX,
            members: Vec::new(),
            member_hashes: Vec::new(),
            task_counts: Vec::new(),
            iteration: Vec::new(),
            active_tasks: Vec::new(),
            standby_tasks: Vec::new(),
            assigned_tasks: FxHashSet::default(),
            members_by_load: None,
        }
    }

    /// `addMember`: the member's count starts at 0 and the capacity grows by one
    /// (`SA/ProcessState.java:174-177`). Returns the member's slot.
    pub fn add_member(&mut self, member: u32, member_id: &str) -> Slot {
        let slot = self.members.len() as Slot;
        self.members.push(member);
        self.member_hashes.push(string_hash(member_id));
        self.task_counts.push(0);
        self.active_tasks.push(Vec::new());
        self.standby_tasks.push(Vec::new());
        self.capacity += 1;
        self.compute_load();
        slot
    }

    /// Fixes `memberToTaskCounts`' iteration order once every member was added (its keys never
    /// change afterwards: `put` of an existing key keeps its place).
    pub fn seal(&mut self) {
        self.iteration = iteration_order(&self.member_hashes, Capacity::Default)
            .into_iter()
            .map(|i| i as Slot)
            .collect();
    }

    /// `load()`.
    pub fn load(&self) -> f64 {
        self.load
    }

    /// `memberToTaskCounts().get(member)`.
    pub fn task_count_of(&self, slot: Slot) -> u32 {
        self.task_counts[slot as usize]
    }

    /// `hasTask`: the process holds the task as active or standby (`SA/ProcessState.java:191`).
    pub fn has_task(&self, task: TaskId) -> bool {
        self.assigned_tasks.contains(&task)
    }

    /// `addTask`: gives the task to that member and drops `membersByLoad`, which cannot be
    /// kept ordered when a chosen member's count changes (`SA/ProcessState.java:98-107`).
    /// Returns the member's new task count.
    pub fn add_task(&mut self, slot: Slot, task: TaskId, active: bool) -> u32 {
        let count = self.add_task_internal(slot, task, active);
        self.members_by_load = None;
        count
    }

    fn add_task_internal(&mut self, slot: Slot, task: TaskId, active: bool) -> u32 {
        self.task_count += 1;
        self.assigned_tasks.insert(task);
        let s = slot as usize;
        if active {
            self.active_tasks[s].push(task);
        } else {
            self.standby_tasks[s].push(task);
        }
        self.task_counts[s] += 1;
        self.compute_load();
        self.task_counts[s]
    }

    /// `addTaskToLeastLoadedMember` (`SA/ProcessState.java:133-159`): the member with the
    /// fewest tasks, from a `PriorityQueue` by count built lazily in `memberToTaskCounts`
    /// order, so ties fall to heap order. A single member skips the queue. Returns the member's
    /// new task count, or `None` for a process without members (Kafka's -1).
    pub fn add_task_to_least_loaded_member(&mut self, task: TaskId, active: bool) -> Option<u32> {
        match self.members.len() {
            0 => return None,
            1 => return Some(self.add_task_internal(0, task, active)),
            _ => {}
        }
        let mut queue = match self.members_by_load.take() {
            Some(q) => q,
            None => {
                let mut q = PriorityQueue::with_capacity(self.members.len(), by_task_count);
                q.add_all(self.iteration.iter().map(|&slot| MemberLoad {
                    slot,
                    task_count: self.task_counts[slot as usize],
                }));
                q
            }
        };
        // Never empty: it holds every member (two or more), each polled one is added back.
        let least = queue.poll().expect("membersByLoad holds every member");
        let count = self.add_task_internal(least.slot, task, active);
        queue.offer(MemberLoad {
            slot: least.slot,
            task_count: count,
        });
        self.members_by_load = Some(queue);
        Some(count)
    }

    /// `computeLoad` (`SA/ProcessState.java:166-172`): the same IEEE division as Java's.
    fn compute_load(&mut self) {
        self.load = if self.capacity == 0 {
            -1.0
        } else {
            f64::from(self.task_count) / f64::from(self.capacity)
        };
    }

    /// Per slot: the member's index in the group spec, its active and its standby tasks.
    pub fn into_assignments(self) -> impl Iterator<Item = (u32, Vec<TaskId>, Vec<TaskId>)> {
        self.members
            .into_iter()
            .zip(self.active_tasks)
            .zip(self.standby_tasks)
            .map(|((m, a), s)| (m, a, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(p: i32) -> TaskId {
        TaskId::new(0, p)
    }

    #[test]
    fn load_is_tasks_per_member_and_starts_at_max() {
        let mut p = ProcessState::new();
        assert_eq!(p.load(), f64::MAX);
        let a = p.add_member(0, "a");
        p.add_member(1, "b");
        p.add_member(2, "c");
        p.seal();
        assert_eq!(p.load(), 0.0);
        p.add_task(a, task(0), true);
        assert_eq!(p.load(), 1.0 / 3.0);
        assert!(p.has_task(task(0)) && !p.has_task(task(1)));
        assert_eq!(p.task_count_of(a), 1);
    }

    #[test]
    fn least_loaded_member_comes_from_a_heap_in_hash_map_order() {
        // "b" (hash 98) iterates before "c" (99) in a default HashMap whatever the order of
        // addMember, so with equal counts "b" is polled first.
        let mut p = ProcessState::new();
        p.add_member(0, "c");
        p.add_member(1, "b");
        p.seal();
        p.add_task_to_least_loaded_member(task(0), true);
        let (c, b) = (0, 1);
        assert_eq!((p.task_count_of(b), p.task_count_of(c)), (1, 0));
        // Then "c", the only one with fewer tasks.
        p.add_task_to_least_loaded_member(task(1), true);
        assert_eq!((p.task_count_of(b), p.task_count_of(c)), (1, 1));
    }

    #[test]
    fn a_direct_add_drops_the_heap_and_the_next_is_rebuilt() {
        // Heap order after a poll and re-add differs from a rebuild in map order: with members
        // a, b, c (hash order) all at 0, the heap deals a then c (the last element moves to the
        // root on poll); after a direct add to c the heap is rebuilt from the counts.
        let mut p = ProcessState::new();
        for (i, id) in ["a", "b", "c"].into_iter().enumerate() {
            p.add_member(i as u32, id);
        }
        p.seal();
        p.add_task_to_least_loaded_member(task(0), true);
        assert_eq!(p.task_count_of(0), 1);
        p.add_task(2, task(1), false);
        assert!(p.members_by_load.is_none());
        // a: 1, b: 0, c: 1. The rebuilt heap polls b.
        p.add_task_to_least_loaded_member(task(2), true);
        assert_eq!(p.task_count_of(1), 1);
    }

    #[test]
    fn a_single_member_takes_everything_without_a_heap() {
        let mut p = ProcessState::new();
        p.add_member(7, "only");
        p.seal();
        assert_eq!(p.add_task_to_least_loaded_member(task(0), true), Some(1));
        assert_eq!(p.add_task_to_least_loaded_member(task(1), false), Some(2));
        assert!(p.members_by_load.is_none());
        let out: Vec<_> = p.into_assignments().collect();
        assert_eq!(out, vec![(7, vec![task(0)], vec![task(1)])]);
        assert_eq!(
            ProcessState::new().add_task_to_least_loaded_member(task(0), true),
            None
        );
    }
}
