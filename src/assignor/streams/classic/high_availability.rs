//! `HighAvailabilityTaskAssignor` (`SPA/HighAvailabilityTaskAssignor.java`), Kafka Streams'
//! default task assignor under the classic protocol (STREAMS.md §4).
//!
//! It works on a `TreeMap` of the clients by `ProcessId` and a `TreeSet` of the stateful tasks
//! (`:58-59`), so the order of [`Clients`] does not matter to it: every step walks the clients
//! in `ProcessId` order and the tasks sorted.
//!
//! 1. the stateful actives are dealt round-robin, ignoring lags and history, then balanced by
//!    load per thread;
//! 2. standbys (default or tag-aware), balanced the same way;
//! 3. actives and standbys on clients that are not caught up move to caught-up clients, the
//!    old place keeping a warm-up (a standby) while one shared budget lasts;
//! 4. stateless actives go to the clients with the fewest actives per thread;
//! 5. a probing rebalance follows if anything had to move.

use super::standby::StandbyAssignor;
use super::task_movement::{assign_active_task_movements, assign_standby_task_movements, Lags};
use super::{AssignmentConfigs, ClientState, Clients, ProcessId, TaskId, LATEST_OFFSET};
use std::collections::{BTreeMap, BTreeSet};

/// What `assign` decided besides the clients' new tasks.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct HaOutcome {
    /// `assign`'s return value: schedule a probing rebalance (`:106`).
    pub probing_rebalance: bool,
    /// The standbys that are warm-ups, per client: those left behind by active movements (the
    /// assignor's `warmups` map) and those a standby movement's destination kept. Each is also
    /// in the client's `standby` (a client receives a warm-up as a standby). Clients without
    /// warm-ups are absent.
    pub warmups: BTreeMap<ProcessId, BTreeSet<TaskId>>,
}

/// The intermediate facts of one `assign` (the reference cases' `probe`), for tests.
#[derive(Clone, Debug, Default)]
pub(crate) struct HaTrace {
    /// Per client (index into the states): actives and standbys after the lag-blind placement
    /// and the standby assignor, before any movement.
    pub initial: Vec<(BTreeSet<TaskId>, BTreeSet<TaskId>)>,
    pub needed_active_movements: usize,
    pub needed_standby_movements: usize,
    pub warmup_budget_left_after_active: i32,
    pub warmup_budget_left: i32,
    pub warmups_for_active: BTreeMap<ProcessId, BTreeSet<TaskId>>,
    pub warmups_for_standby: BTreeMap<ProcessId, BTreeSet<TaskId>>,
}

/// `HighAvailabilityTaskAssignor.assign` (`:53-115`): writes each client's active and standby
/// tasks into `clients.states`.
pub fn assign(clients: &mut Clients, configs: &AssignmentConfigs) -> HaOutcome {
    assign_traced(clients, configs).0
}

pub(crate) fn assign_traced(
    clients: &mut Clients,
    configs: &AssignmentConfigs,
) -> (HaOutcome, HaTrace) {
    let order = clients.by_process_id();
    // `:58`: `new TreeSet<>(statefulTaskIds)`.
    let stateful: Vec<TaskId> = clients
        .stateful_tasks
        .iter()
        .copied()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // `:104`: `diff(TreeSet::new, allTaskIds, statefulTasks)`.
    let stateless: Vec<TaskId> = clients
        .all_tasks
        .iter()
        .copied()
        .collect::<BTreeSet<_>>()
        .difference(&stateful.iter().copied().collect())
        .copied()
        .collect();
    let states = &mut clients.states[..];
    let mut trace = HaTrace::default();

    assign_active_stateful_tasks(states, &order, &stateful);
    if configs.num_standby_replicas > 0 {
        assign_standby_replica_tasks(states, &order, &stateful, configs);
    }
    trace.initial = states
        .iter()
        .map(|c| (c.active.clone(), c.standby.clone()))
        .collect();

    // `:71`: one budget for active and standby movements together.
    let mut remaining_warmups = configs.max_warmup_replicas;
    let lags = Lags {
        caught_up: tasks_to_caught_up_clients(
            states,
            &order,
            &stateful,
            configs.acceptable_recovery_lag,
        ),
        by_lag: tasks_to_client_by_lag(states, &order, &stateful),
    };
    // `:86`: the warm-ups of active movements, so that standby movements leave them alone.
    let mut warmups = BTreeMap::new();
    trace.needed_active_movements =
        assign_active_task_movements(states, &order, &lags, &mut warmups, &mut remaining_warmups);
    trace.warmup_budget_left_after_active = remaining_warmups;
    let (needed_standby, kept) =
        assign_standby_task_movements(states, &order, &lags, &mut remaining_warmups, &warmups);
    trace.needed_standby_movements = needed_standby;
    trace.warmup_budget_left = remaining_warmups;

    assign_stateless_active_tasks(states, &order, &stateless);

    let mut all_warmups: BTreeMap<ProcessId, BTreeSet<TaskId>> = BTreeMap::new();
    for (client, tasks) in warmups.iter().chain(kept.iter()) {
        if !tasks.is_empty() {
            all_warmups
                .entry(*client)
                .or_default()
                .extend(tasks.iter().copied());
        }
    }
    warmups.retain(|_, tasks| !tasks.is_empty());
    trace.warmups_for_active = warmups;
    trace.warmups_for_standby = kept;
    let outcome = HaOutcome {
        probing_rebalance: trace.needed_active_movements + trace.needed_standby_movements > 0,
        warmups: all_warmups,
    };
    (outcome, trace)
}

/// `assignActiveStatefulTasks` (`:117-142`): the sorted stateful tasks round-robin over the
/// clients in `ProcessId` order, capacity and lags ignored, then balanced. (The rack-aware
/// optimisation is off: strategy `none`.)
fn assign_active_stateful_tasks(states: &mut [ClientState], order: &[usize], stateful: &[TaskId]) {
    for (&task, &client) in stateful.iter().zip(order.iter().cycle()) {
        states[client].assign_active(task);
    }
    balance_tasks_over_threads(states, order, Role::Active, |_, _| true);
}

/// `assignStandbyReplicaTasks` (`:144-170`): the standby assignor, then a balance of the
/// standbys that only moves a task where the standby assignor allows it.
fn assign_standby_replica_tasks(
    states: &mut [ClientState],
    order: &[usize],
    stateful: &[TaskId],
    configs: &AssignmentConfigs,
) {
    let assignor = StandbyAssignor::for_configs(configs);
    assignor.assign(states, order, stateful, configs);
    balance_tasks_over_threads(states, order, Role::Standby, |source, destination| {
        assignor.is_allowed_task_movement(source, destination)
    });
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Active,
    Standby,
}

/// `balanceTasksOverThreads` (`:172-208`): until a full pass moves nothing, for every source
/// and every other destination (both in `ProcessId` order), the source's tasks of the role, in
/// order, move one by one while `shouldMoveATask` holds, skipping a task the destination holds
/// in any role or a pair the predicate refuses.
fn balance_tasks_over_threads(
    states: &mut [ClientState],
    order: &[usize],
    role: Role,
    allowed: impl Fn(&ClientState, &ClientState) -> bool,
) {
    let mut keep_balancing = true;
    while keep_balancing {
        keep_balancing = false;
        for &source in order {
            for &destination in order {
                if source == destination {
                    continue;
                }
                // `:191`: a copy, taken once per pair.
                let tasks: Vec<TaskId> = match role {
                    Role::Active => states[source].active.iter().copied().collect(),
                    Role::Standby => states[source].standby.iter().copied().collect(),
                };
                let mut tasks = tasks.into_iter();
                while should_move_a_task(&states[source], &states[destination]) {
                    let Some(task) = tasks.next() else {
                        break;
                    };
                    if !states[destination].has_assigned_task(task)
                        && allowed(&states[source], &states[destination])
                    {
                        match role {
                            Role::Active => {
                                states[source].unassign_active(task);
                                states[destination].assign_active(task);
                            }
                            Role::Standby => {
                                states[source].unassign_standby(task);
                                states[destination].assign_standby(task);
                            }
                        }
                        keep_balancing = true;
                    }
                }
            }
        }
    }
}

/// `shouldMoveATask` (`:210-230`), on `assignedTaskLoad` (actives and standbys per thread):
/// the source must be more loaded, and after the move it must still be at least as loaded as
/// the destination and the skew must shrink. Java's double arithmetic, in its order.
fn should_move_a_task(source: &ClientState, destination: &ClientState) -> bool {
    let skew = source.assigned_task_load() - destination.assigned_task_load();
    if skew <= 0.0 {
        return false;
    }
    let at_destination =
        (destination.assigned_task_count() as f64 + 1.0) / f64::from(destination.capacity);
    let at_source = (source.assigned_task_count() as f64 - 1.0) / f64::from(source.capacity);
    let proposed_skew = at_source - at_destination;
    if proposed_skew < 0.0 {
        return false;
    }
    proposed_skew < skew
}

/// `assignStatelessActiveTasks` (`:232-254`): each stateless task, in order, to the client
/// with the fewest actives per thread (`activeTaskLoad`, standbys not counted), ties by
/// `ProcessId`.
fn assign_stateless_active_tasks(
    states: &mut [ClientState],
    order: &[usize],
    stateless: &[TaskId],
) {
    let mut by_load = super::constrained_priority_set::ConstrainedPrioritySet::new(
        states.len(),
        Box::new(|_: &ClientState, _| true),
        ClientState::active_task_load,
    );
    by_load.offer_all(states, order);
    for &task in stateless {
        let client = by_load
            .poll(states, task, |_| true)
            .expect("high availability assigns to at least one client");
        states[client].assign_active(task);
        by_load.offer(states, client);
    }
}

/// `tasksToCaughtUpClients` (`:256-274`): a client is caught up on a task when it runs it
/// (lag -2), when any lag is acceptable (`acceptable.recovery.lag` = `Long.MAX_VALUE`), or when
/// 0 <= lag <= `acceptable.recovery.lag` (`:288-298`).
fn tasks_to_caught_up_clients(
    states: &[ClientState],
    order: &[usize],
    stateful: &[TaskId],
    acceptable_recovery_lag: i64,
) -> BTreeMap<TaskId, BTreeSet<ProcessId>> {
    stateful
        .iter()
        .map(|&task| {
            let caught_up = order
                .iter()
                .map(|&c| &states[c])
                .filter(|c| {
                    let lag = c.lag_for(task);
                    lag == LATEST_OFFSET
                        || acceptable_recovery_lag == i64::MAX
                        || (0..=acceptable_recovery_lag).contains(&lag)
                })
                .map(|c| c.process_id)
                .collect();
            (task, caught_up)
        })
        .collect()
}

/// `tasksToClientByLag` (`:276-286`): per task, every client by (lag, `ProcessId`), so -3
/// (unknown) and -2 (running) come first.
fn tasks_to_client_by_lag(
    states: &[ClientState],
    order: &[usize],
    stateful: &[TaskId],
) -> BTreeMap<TaskId, Vec<usize>> {
    stateful
        .iter()
        .map(|&task| {
            // `order` is already by `ProcessId`: each lag is read once and its rank there
            // breaks ties.
            let mut keyed: Vec<(i64, usize, usize)> = order
                .iter()
                .enumerate()
                .map(|(rank, &c)| (states[c].lag_for(task), rank, c))
                .collect();
            keyed.sort_unstable();
            (task, keyed.into_iter().map(|(_, _, c)| c).collect())
        })
        .collect()
}
