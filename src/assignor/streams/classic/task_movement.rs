//! `TaskMovement` (`SPA/TaskMovement.java`): after the lag-blind placement, high availability
//! moves each active (then each standby) that landed on a client which is not caught up to a
//! caught-up one, leaving a warm-up behind while the one shared budget lasts
//! (STREAMS.md §4 steps 4-6).

use super::constrained_priority_set::ConstrainedPrioritySet;
use super::{ClientState, ProcessId, TaskId};
use crate::java::PriorityQueue;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// What high availability knows about each stateful task's clients before any movement
/// (`HighAvailabilityTaskAssignor.java:256-286`).
pub struct Lags {
    /// `tasksToCaughtUpClients`: the clients caught up on the task.
    pub caught_up: BTreeMap<TaskId, BTreeSet<ProcessId>>,
    /// `tasksToClientByLag`: every client (index into the states) by (lag, `ProcessId`).
    pub by_lag: BTreeMap<TaskId, Vec<usize>>,
}

impl Lags {
    /// `taskIsCaughtUpOnClient` (`TaskMovement.java:70-75`).
    fn is_caught_up(&self, task: TaskId, client: &ClientState) -> bool {
        self.caught_up[&task].contains(&client.process_id)
    }

    /// `taskIsNotCaughtUpOnClientAndOtherMoreCaughtUpClientsExist` (`:56-68`): the client is not
    /// caught up and the most caught-up client's lag is strictly smaller than its own.
    fn should_move_from(&self, states: &[ClientState], task: TaskId, client: usize) -> bool {
        if self.is_caught_up(task, &states[client]) {
            return false;
        }
        let most_caught_up = self.by_lag[&task][0];
        states[most_caught_up].lag_for(task) < states[client].lag_for(task)
    }

    /// `mostCaughtUpEligibleClient` (`:302-320`): the first client in lag order that meets the
    /// constraint, looking only at the clients ahead of the destination.
    fn most_caught_up_eligible(
        &self,
        states: &[ClientState],
        task: TaskId,
        destination: usize,
        eligible: impl Fn(&ClientState) -> bool,
    ) -> Option<usize> {
        self.by_lag[&task]
            .iter()
            .take_while(|&&c| c != destination)
            .copied()
            .find(|&c| eligible(&states[c]))
    }

    /// The caught-up clients by `assignedTaskLoad` (`:82-88`, `:131-137`).
    fn caught_up_by_load(&self, clients: usize) -> ConstrainedPrioritySet<'_> {
        ConstrainedPrioritySet::new(
            clients,
            Box::new(move |client: &ClientState, task| self.is_caught_up(task, client)),
            ClientState::assigned_task_load,
        )
    }
}

/// A `TaskMovement`: the task, the client it should leave (`destination`: where it is wanted
/// once warmed up), and how many clients are caught up on it.
#[derive(Clone, Copy, Debug)]
struct Movement {
    task: TaskId,
    destination: usize,
    caught_up: usize,
}

/// `Comparator.comparing(numCaughtUpClients).thenComparing(task)` (`:90-92`, `:139-141`). Two
/// standby movements of one task compare equal and leave in the heap's order.
fn movement_order(a: &Movement, b: &Movement) -> Ordering {
    a.caught_up
        .cmp(&b.caught_up)
        .then_with(|| a.task.cmp(&b.task))
}

/// The warm-up budget: `remainingWarmupReplicas.getAndDecrement() > 0` (`:267`, `:284`). Every
/// move that could leave a warm-up takes one, granted or not; the count may go below zero.
fn take_warmup(remaining: &mut i32) -> bool {
    let before = *remaining;
    *remaining -= 1;
    before > 0
}

/// `assignActiveTaskMovements` (`:77-124`). `order` is the clients in `ProcessId` order;
/// `warmups` is the assignor's map of warm-ups left for active movements (an empty set is
/// created for every destination of a move, as `computeIfAbsent` does). Returns the number of
/// movements needed.
pub fn assign_active_task_movements(
    states: &mut [ClientState],
    order: &[usize],
    lags: &Lags,
    warmups: &mut BTreeMap<ProcessId, BTreeSet<TaskId>>,
    remaining_warmups: &mut i32,
) -> usize {
    let mut by_load = lags.caught_up_by_load(states.len());
    let mut movements = PriorityQueue::new(movement_order);
    // `:94-106`: the clients' actives in order, each client offered after its tasks.
    for &client in order {
        for &task in &states[client].active {
            if lags.should_move_from(states, task, client) {
                movements.offer(Movement {
                    task,
                    destination: client,
                    caught_up: lags.caught_up[&task].len(),
                });
            }
        }
        by_load.offer(states, client);
    }
    let needed = movements.len();

    while let Some(m) = movements.poll() {
        let (task, destination) = (m.task, m.destination);
        let destination_id = states[destination].process_id;
        // (a) `tryToSwapStandbyAndActiveOnCaughtUpClient` (`:192-209`): the least-loaded
        // caught-up client with a standby of the task swaps roles with the destination.
        if let Some(source) = by_load.poll(states, task, |c| c.has_standby_task(task)) {
            swap_standby_and_active(states, task, source, destination);
            by_load.offer_all(states, &[source, destination]);
            continue;
        }
        // (b) `tryToMoveActiveToCaughtUpClientAndTryToWarmUp` (`:211-229`): the least-loaded
        // caught-up client takes the active.
        if let Some(source) = by_load.poll(states, task, |_| true) {
            let warm = warmups.entry(destination_id).or_default();
            move_active_and_try_to_warm_up(
                states,
                remaining_warmups,
                task,
                source,
                destination,
                warm,
            );
            by_load.offer_all(states, &[source, destination]);
            continue;
        }
        // (c) `tryToMoveActiveToMostCaughtUpClient` (`:231-258`): the most caught-up client
        // ahead of the destination; there is one, since the movement was queued because the
        // first client by lag is strictly ahead (`:118-120` throws otherwise).
        let source = lags
            .most_caught_up_eligible(states, task, destination, |_| true)
            .expect("a client more caught up than the destination exists for a queued movement");
        if states[source].has_standby_task(task) {
            swap_standby_and_active(states, task, source, destination);
        } else {
            let warm = warmups.entry(destination_id).or_default();
            move_active_and_try_to_warm_up(
                states,
                remaining_warmups,
                task,
                source,
                destination,
                warm,
            );
        }
        by_load.offer_all(states, &[source, destination]);
    }
    needed
}

/// `assignStandbyTaskMovements` (`:126-190`): every standby that is not an active's warm-up
/// and sits on a client that is not caught up is moved to a caught-up client that holds the
/// task in no role (else to the most such client ahead of it by lag); the destination keeps
/// its copy as a warm-up while the budget lasts. Returns the movements made and, per
/// destination, the standbys it kept as warm-ups.
pub fn assign_standby_task_movements(
    states: &mut [ClientState],
    order: &[usize],
    lags: &Lags,
    remaining_warmups: &mut i32,
    warmups: &BTreeMap<ProcessId, BTreeSet<TaskId>>,
) -> (usize, BTreeMap<ProcessId, BTreeSet<TaskId>>) {
    let mut by_load = lags.caught_up_by_load(states.len());
    let mut movements = PriorityQueue::new(movement_order);
    // `:143-157`.
    for &client in order {
        let warm = warmups.get(&states[client].process_id);
        for &task in &states[client].standby {
            if warm.is_some_and(|w| w.contains(&task)) {
                continue;
            }
            if lags.should_move_from(states, task, client) {
                movements.offer(Movement {
                    task,
                    destination: client,
                    caught_up: lags.caught_up[&task].len(),
                });
            }
        }
        by_load.offer(states, client);
    }

    let mut moved = 0;
    let mut kept_as_warmup: BTreeMap<ProcessId, BTreeSet<TaskId>> = BTreeMap::new();
    while let Some(m) = movements.poll() {
        let (task, destination) = (m.task, m.destination);
        let eligible = |c: &ClientState| !c.has_assigned_task(task);
        // `:165-172`.
        let source = by_load
            .poll(states, task, eligible)
            .or_else(|| lags.most_caught_up_eligible(states, task, destination, eligible));
        // `:174-176`: no caught-up client without a copy: nothing moves, nothing is counted.
        let Some(source) = source else {
            continue;
        };
        // `moveStandbyAndTryToWarmUp` (`:278-291`).
        states[source].assign_standby(task);
        if take_warmup(remaining_warmups) {
            kept_as_warmup
                .entry(states[destination].process_id)
                .or_default()
                .insert(task);
        } else {
            states[destination].unassign_standby(task);
        }
        by_load.offer_all(states, &[source, destination]);
        moved += 1;
    }
    (moved, kept_as_warmup)
}

/// `moveActiveAndTryToWarmUp` (`:260-276`): the source takes the active; the destination
/// keeps the task as a standby (a warm-up) if the budget allows, else loses it.
fn move_active_and_try_to_warm_up(
    states: &mut [ClientState],
    remaining_warmups: &mut i32,
    task: TaskId,
    source: usize,
    destination: usize,
    warmups: &mut BTreeSet<TaskId>,
) {
    states[source].assign_active(task);
    states[destination].unassign_active(task);
    if take_warmup(remaining_warmups) {
        states[destination].assign_standby(task);
        warmups.insert(task);
    }
}

/// `swapStandbyAndActive` (`:293-300`).
fn swap_standby_and_active(
    states: &mut [ClientState],
    task: TaskId,
    source: usize,
    destination: usize,
) {
    states[source].unassign_standby(task);
    states[source].assign_active(task);
    states[destination].unassign_active(task);
    states[destination].assign_standby(task);
}
