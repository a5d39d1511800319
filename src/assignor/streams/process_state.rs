//! Kafka's `SA/ProcessState.java`: one process (a Kafka Streams instance) of a streams group,
//! its members (stream threads), their task counts, and its load (STREAMS.md §1.2).
//!
//! Which tasks a member was given, and which a process holds (`assignedActiveTasks`,
//! `assignedStandbyTasks`, `assignedTasks`), are recorded by the caller for the whole group at
//! once (`sticky.rs`): they decide nothing here, and one table for all processes saves a small
//! table per process and member.

use crate::java::{iteration_order, Capacity, PriorityQueue};
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
    /// `memberToTaskCounts`: active + standby tasks per slot.
    task_counts: Vec<u32>,
    /// Slots in `memberToTaskCounts`' iteration order (a default `HashMap` filled in slot
    /// order); computed by [`ProcessState::seal`] once every member is in.
    iteration: Vec<Slot>,
    /// `membersByLoad`: built lazily, dropped by every direct [`ProcessState::add_task`].
    members_by_load: Option<PriorityQueue<MemberLoad>>,
}

impl ProcessState {
    /// A process without members yet, with room for `members` of them.
    pub fn new(members: usize) -> Self {
        ProcessState {
            capacity: 0,
            task_count: 0,
            load: f64::MAX,
            members: Vec::with_capacity(members),
            task_counts: Vec::with_capacity(members),
            iteration: Vec::new(),
            members_by_load: None,
        }
    }

    /// `addMember`: the member's count starts at 0 and the capacity grows by one
    /// (`SA/ProcessState.java:174-177`). Returns the member's slot.
    pub fn add_member(&mut self, member: u32) -> Slot {
        let slot = self.members.len() as Slot;
        self.members.push(member);
        self.task_counts.push(0);
        self.capacity += 1;
        self.compute_load();
        slot
    }

    /// Fixes `memberToTaskCounts`' iteration order once every member was added (its keys never
    /// change afterwards: `put` of an existing key keeps its place). `member_hashes`: the
    /// `String.hashCode` of every member id of the group, by member index.
    pub fn seal(&mut self, member_hashes: &[i32]) {
        let hashes: Vec<i32> = self
            .members
            .iter()
            .map(|&m| member_hashes[m as usize])
            .collect();
        self.iteration = iteration_order(&hashes, Capacity::Default)
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

    /// The member (its index in the group spec) in that slot.
    pub fn member(&self, slot: Slot) -> u32 {
        self.members[slot as usize]
    }

    /// `addTask`: one more task for that member, and `membersByLoad` dropped, since it cannot
    /// be kept ordered when a chosen member's count changes (`SA/ProcessState.java:98-107`).
    /// Returns the member's new task count.
    pub fn add_task(&mut self, slot: Slot) -> u32 {
        let count = self.add_task_internal(slot);
        self.members_by_load = None;
        count
    }

    fn add_task_internal(&mut self, slot: Slot) -> u32 {
        self.task_count += 1;
        let s = slot as usize;
        self.task_counts[s] += 1;
        self.compute_load();
        self.task_counts[s]
    }

    /// `addTaskToLeastLoadedMember` (`SA/ProcessState.java:133-159`): the member with the
    /// fewest tasks, from a `PriorityQueue` by count built lazily in `memberToTaskCounts`
    /// order, so ties fall to heap order. A single member skips the queue. Returns the chosen
    /// slot and the member's new task count, or `None` for a process without members (Kafka's
    /// -1).
    pub fn add_task_to_least_loaded_member(&mut self) -> Option<(Slot, u32)> {
        match self.members.len() {
            0 => return None,
            1 => return Some((0, self.add_task_internal(0))),
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
        let count = self.add_task_internal(least.slot);
        queue.offer(MemberLoad {
            slot: least.slot,
            task_count: count,
        });
        self.members_by_load = Some(queue);
        Some((least.slot, count))
    }

    /// `computeLoad` (`SA/ProcessState.java:166-172`): the same IEEE division as Java's.
    fn compute_load(&mut self) {
        self.load = if self.capacity == 0 {
            -1.0
        } else {
            f64::from(self.task_count) / f64::from(self.capacity)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::java::string_hash;

    fn process(ids: &[&str]) -> ProcessState {
        let mut p = ProcessState::new(ids.len());
        for i in 0..ids.len() {
            p.add_member(i as u32);
        }
        let hashes: Vec<i32> = ids.iter().map(|id| string_hash(id)).collect();
        p.seal(&hashes);
        p
    }

    #[test]
    fn load_is_tasks_per_member_and_starts_at_max() {
        assert_eq!(ProcessState::new(0).load(), f64::MAX);
        let mut p = process(&["a", "b", "c"]);
        assert_eq!(p.load(), 0.0);
        assert_eq!(p.add_task(0), 1);
        assert_eq!(p.load(), 1.0 / 3.0);
        assert_eq!(p.task_count_of(0), 1);
        assert_eq!(p.member(2), 2);
    }

    #[test]
    fn least_loaded_member_comes_from_a_heap_in_hash_map_order() {
        // "b" (hash 98) iterates before "c" (99) in a default HashMap whatever the order of
        // addMember, so with equal counts "b" (slot 1) is polled first, then "c", the only one
        // with fewer tasks.
        let mut p = process(&["c", "b"]);
        assert_eq!(p.add_task_to_least_loaded_member(), Some((1, 1)));
        assert_eq!(p.add_task_to_least_loaded_member(), Some((0, 1)));
    }

    #[test]
    fn a_direct_add_drops_the_heap_and_the_next_is_rebuilt() {
        // Members a, b, c (hash order), all at 0: the heap gives a. A direct add to c drops the
        // heap; rebuilt from the counts (a 1, b 0, c 1) it gives b.
        let mut p = process(&["a", "b", "c"]);
        assert_eq!(p.add_task_to_least_loaded_member(), Some((0, 1)));
        assert!(p.members_by_load.is_some());
        p.add_task(2);
        assert!(p.members_by_load.is_none());
        assert_eq!(p.add_task_to_least_loaded_member(), Some((1, 1)));
    }

    #[test]
    fn a_kept_heap_deals_ties_in_heap_order() {
        // Kept between calls, the heap deals a, c, b among equal counts (poll moves the last
        // entry to the root), where a rebuild in map order would give a, b, c.
        let mut p = process(&["a", "b", "c"]);
        let dealt: Vec<Slot> = (0..3)
            .map(|_| p.add_task_to_least_loaded_member().unwrap().0)
            .collect();
        assert_eq!(dealt, [0, 2, 1]);
    }

    #[test]
    fn a_single_member_takes_everything_without_a_heap() {
        let mut p = process(&["only"]);
        assert_eq!(p.add_task_to_least_loaded_member(), Some((0, 1)));
        assert_eq!(p.add_task_to_least_loaded_member(), Some((0, 2)));
        assert!(p.members_by_load.is_none());
        assert_eq!(ProcessState::new(0).add_task_to_least_loaded_member(), None);
    }
}
