//! `assignTasksToThreads` (`SPA.java:1293-1394`, STREAMS.md §7.1): a client's tasks spread over
//! its stream threads (one consumer each), after the task assignor has decided what the client
//! gets. The leader calls it three times per client with one shared load per thread
//! (`computeNewAssignment`, `SPA.java:1023-1048`): the stateful actives, then every standby
//! (warm-ups included), then the stateless actives.

use super::{java_task_order, ClientState, TaskId};
use crate::java::{Capacity, PriorityQueue};
use std::collections::{BTreeMap, VecDeque};

/// One thread's tasks, each list in the order the thread was given them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadTasks {
    pub active: Vec<TaskId>,
    pub standby: Vec<TaskId>,
}

/// The client's tasks per consumer (member id), for every consumer of the client, as
/// `computeNewAssignment` spreads them.
pub fn spread_over_threads(client: &ClientState) -> BTreeMap<String, ThreadTasks> {
    let mut load: BTreeMap<String, usize> = BTreeMap::new();
    // `statefulActiveTasks()` and `statelessActiveTasks()` are `Collectors.toSet()`: HashSets
    // filled in the TreeSet's order, which the queue's constructor then heapifies.
    let (stateful, stateless): (Vec<TaskId>, Vec<TaskId>) =
        client.active.iter().partition(|t| client.is_stateful(**t));
    let stateful_active = assign_tasks_to_threads(
        &java_task_order(&stateful, Capacity::Default),
        true,
        client,
        &mut load,
    );
    // `standbyTasks()` is the TreeSet itself (wrapped unmodifiable): already sorted.
    let standby: Vec<TaskId> = client.standby.iter().copied().collect();
    let standby = assign_tasks_to_threads(&standby, true, client, &mut load);
    let stateless_active = assign_tasks_to_threads(
        &java_task_order(&stateless, Capacity::Default),
        false,
        client,
        &mut load,
    );
    client
        .consumers
        .iter()
        .map(|c| {
            let mut active = stateful_active[c].clone();
            active.extend(&stateless_active[c]);
            let tasks = ThreadTasks {
                active,
                standby: standby[c].clone(),
            };
            (c.clone(), tasks)
        })
        .collect()
}

/// One call of `assignTasksToThreads`: `tasks` in the collection's iteration order, `load` the
/// tasks each consumer already has from earlier calls (updated here).
fn assign_tasks_to_threads(
    tasks: &[TaskId],
    stateful: bool,
    client: &ClientState,
    load: &mut BTreeMap<String, usize>,
) -> BTreeMap<String, Vec<TaskId>> {
    let consumers = &client.consumers;
    let mut assignment: BTreeMap<String, Vec<TaskId>> =
        consumers.iter().map(|c| (c.clone(), Vec::new())).collect();
    let load_of = |load: &BTreeMap<String, usize>, c: &str| load.get(c).copied().unwrap_or(0);

    // The minimum per thread counts what the threads already hold (`:1303-1305`).
    let total = tasks.len() + load.values().sum::<usize>();
    let min_per_thread = total / consumers.len();
    let mut unassigned = PriorityQueue::from_collection(tasks.iter().copied(), TaskId::cmp);
    let mut to_fill: VecDeque<&String> = VecDeque::new();
    // Tasks a previous owner could not take within the minimum, for the leftovers pass.
    let mut skipped_previous_owner: BTreeMap<TaskId, &String> = BTreeMap::new();

    if !unassigned.is_empty() {
        // A stateful task goes back to the consumer that reported it, least lag first, up to
        // the minimum (`:1313-1337`).
        for consumer in consumers {
            let target = min_per_thread.saturating_sub(load_of(load, consumer));
            let given = assignment.get_mut(consumer).expect("every consumer");
            if stateful {
                for task in client.prev_tasks_by_lag(consumer) {
                    if unassigned.contains(&task) {
                        if given.len() < target {
                            given.push(task);
                            unassigned.remove(&task);
                        } else {
                            skipped_previous_owner.insert(task, consumer);
                        }
                    }
                }
            }
            // Java compares with a target that may be negative: a consumer already above the
            // minimum is not filled.
            if (given.len() as i64) < min_per_thread as i64 - load_of(load, consumer) as i64 {
                to_fill.push_back(consumer);
            }
        }

        // Round-robin, smallest task first, until every thread has the minimum (`:1338-1352`).
        while let Some(consumer) = to_fill.pop_front() {
            let task = unassigned
                .poll()
                .expect("Kafka: ran out of unassigned tasks while threads were under the minimum");
            let given = assignment.get_mut(consumer).expect("every consumer");
            given.push(task);
            if given.len() + load_of(load, consumer) < min_per_thread {
                to_fill.push_back(consumer);
            }
        }

        // The rest: one each to the threads still at the minimum, a skipped task to its
        // previous owner first (`:1354-1383`).
        if !unassigned.is_empty() {
            for consumer in consumers {
                if assignment[consumer].len() + load_of(load, consumer) == min_per_thread {
                    to_fill.push_back(consumer);
                }
            }
            for (task, consumer) in &skipped_previous_owner {
                if let Some(at) = to_fill.iter().position(|c| c == consumer) {
                    if unassigned.contains(task) {
                        assignment
                            .get_mut(*consumer)
                            .expect("every consumer")
                            .push(*task);
                        unassigned.remove(task);
                        to_fill.remove(at);
                    }
                }
            }
            // Java walks the queue with its iterator here: heap-array order, not sorted order.
            for task in unassigned.as_slice() {
                let consumer = to_fill
                    .pop_front()
                    .expect("a thread at the minimum for every leftover task");
                assignment
                    .get_mut(consumer)
                    .expect("every consumer")
                    .push(*task);
            }
        }
    }
    for (consumer, given) in &assignment {
        *load.entry(consumer.clone()).or_insert(0) += given.len();
    }
    assignment
}
