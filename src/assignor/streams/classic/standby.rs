//! The standby assignors high availability calls (STREAMS.md §5):
//! `DefaultStandbyTaskAssignor` and, when `rack.aware.assignment.tags` is set,
//! `ClientTagAwareStandbyTaskAssignor`, with the helpers of `StandbyTaskAssignmentUtils`.
//!
//! Both work on high availability's `TreeMap` of clients (`order`: indexes into `states` by
//! `ProcessId`) and its `TreeSet` of stateful tasks (`stateful`: sorted), and both draw clients
//! from a [`ConstrainedPrioritySet`] of clients that do not hold the task yet, least
//! `assignedTaskLoad` first.

use super::constrained_priority_set::ConstrainedPrioritySet;
use super::{java_task_order, AssignmentConfigs, ClientState, ProcessId, TaskId};
use crate::java::Capacity;
use std::collections::{BTreeMap, BTreeSet};

/// Which standby assignor runs: `StandbyTaskAssignorFactory.create(configs, null)`
/// (`StandbyTaskAssignorFactory.java:31-45`): tag-aware when tags are configured; the
/// rack-based tag-aware variant needs a `RackAwareTaskAssignor`, and high availability passes
/// `null`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StandbyAssignor {
    Default,
    ClientTagAware,
}

impl StandbyAssignor {
    pub fn for_configs(configs: &AssignmentConfigs) -> StandbyAssignor {
        if configs.rack_aware_assignment_tags.is_empty() {
            StandbyAssignor::Default
        } else {
            StandbyAssignor::ClientTagAware
        }
    }

    /// `assign(clients, allTaskIds, statefulTaskIds, configs)`.
    pub fn assign(
        self,
        states: &mut [ClientState],
        order: &[usize],
        stateful: &[TaskId],
        configs: &AssignmentConfigs,
    ) {
        match self {
            StandbyAssignor::Default => assign_default(states, order, stateful, configs),
            StandbyAssignor::ClientTagAware => {
                assign_client_tag_aware(states, order, stateful, configs)
            }
        }
    }

    /// `isAllowedTaskMovement(source, destination)`: any move for the default assignor; the
    /// tag-aware one only between clients that agree on every tag of the source, configured
    /// or not (`ClientTagAwareStandbyTaskAssignor.java:152-163`).
    pub fn is_allowed_task_movement(self, source: &ClientState, destination: &ClientState) -> bool {
        match self {
            StandbyAssignor::Default => true,
            StandbyAssignor::ClientTagAware => source
                .client_tags
                .iter()
                .all(|(key, value)| destination.client_tags.get(key) == Some(value)),
        }
    }
}

/// `createLeastLoadedPrioritySetConstrainedByAssignedTask` (`StandbyTaskAssignmentUtils.java:
/// 33-36`): clients without the task in any role, by `assignedTaskLoad`.
fn least_loaded_without_task<'a>(clients: usize) -> ConstrainedPrioritySet<'a> {
    ConstrainedPrioritySet::new(
        clients,
        Box::new(|client: &ClientState, task| !client.has_assigned_task(task)),
        ClientState::assigned_task_load,
    )
}

/// `pollClientAndMaybeAssignAndUpdateRemainingStandbyTasks` (`StandbyTaskAssignmentUtils.java:
/// 38-63`): up to `remaining` standbys of the task, each to the polled client, which is offered
/// back at its new load; what is left when no client qualifies stays unassigned (Kafka logs a
/// warning). Returns what is left.
fn poll_and_assign(
    states: &mut [ClientState],
    set: &mut ConstrainedPrioritySet<'_>,
    task: TaskId,
    mut remaining: i32,
) -> i32 {
    while remaining > 0 {
        let Some(client) = set.poll(states, task, |_| true) else {
            break;
        };
        states[client].assign_standby(task);
        remaining -= 1;
        set.offer(states, client);
    }
    remaining
}

/// `DefaultStandbyTaskAssignor.assign` (`DefaultStandbyTaskAssignor.java:42-62`): every client
/// offered in `ProcessId` order, then per stateful task in order, `num.standby.replicas`
/// times the least-loaded client that does not hold it.
fn assign_default(
    states: &mut [ClientState],
    order: &[usize],
    stateful: &[TaskId],
    configs: &AssignmentConfigs,
) {
    let mut set = least_loaded_without_task(states.len());
    set.offer_all(states, order);
    for &task in stateful {
        poll_and_assign(states, &mut set, task, configs.num_standby_replicas);
    }
}

/// A tag (`TagEntry`): key and value.
type TagEntry = (String, String);

/// `ClientTagAwareStandbyTaskAssignor.assign` (`ClientTagAwareStandbyTaskAssignor.java:76-128`).
fn assign_client_tag_aware(
    states: &mut [ClientState],
    order: &[usize],
    stateful: &[TaskId],
    configs: &AssignmentConfigs,
) {
    let replicas = configs.num_standby_replicas;
    let tag_keys: BTreeSet<&str> = configs
        .rack_aware_assignment_tags
        .iter()
        .map(String::as_str)
        .collect();

    // `fillClientsTagStatistics` (`:208-220`): every tag of every client, configured or not.
    // Only sizes and membership are read, so sorted maps stand in for the HashMaps.
    let mut values_by_key: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut clients_by_tag: BTreeMap<TagEntry, BTreeSet<ProcessId>> = BTreeMap::new();
    for &c in order {
        for (key, value) in &states[c].client_tags {
            values_by_key
                .entry(key.clone())
                .or_default()
                .insert(value.clone());
            clients_by_tag
                .entry((key.clone(), value.clone()))
                .or_default()
                .insert(states[c].process_id);
        }
    }

    // `computeTasksToRemainingStandbys` (`StandbyTaskAssignmentUtils.java:65-68`): a
    // `Collectors.toMap` of the stateful `TreeSet`, i.e. a default `HashMap` put in task
    // order. Entries are only removed or updated later, so the leftover pass iterates the
    // tasks still in it in the bucket order of the full map.
    let mut remaining: BTreeMap<TaskId, i32> = stateful.iter().map(|&t| (t, replicas)).collect();

    let mut set = least_loaded_without_task(states.len());
    // `:97-117`: per task, per client (in `ProcessId` order) that holds it active.
    for &task in stateful {
        for &c in order {
            if states[c].has_active_task(task) {
                assign_with_different_tags(
                    states,
                    order,
                    &mut set,
                    task,
                    c,
                    &tag_keys,
                    &values_by_key,
                    &clients_by_tag,
                    &mut remaining,
                );
            }
        }
    }

    // `assignPendingStandbyTasksToLeastLoadedClients` (`:130-150`): all clients offered again,
    // then the leftovers in the `HashMap`'s order, least loaded first, tags ignored.
    if !remaining.is_empty() {
        set.offer_all(states, order);
        for task in java_task_order(stateful, Capacity::Default) {
            if let Some(&left) = remaining.get(&task) {
                let now = poll_and_assign(states, &mut set, task, left);
                remaining.insert(task, now);
            }
        }
    }
}

/// `assignStandbyTasksToClientsWithDifferentTags` (`:223-291`): every client offered again;
/// then, starting from the active's client, each standby goes to the least-loaded client on
/// none of the tag values used so far. A chosen client is not offered back (it holds the task
/// now). What cannot be placed stays in `remaining`; a task fully placed leaves it.
#[allow(clippy::too_many_arguments)]
fn assign_with_different_tags(
    states: &mut [ClientState],
    order: &[usize],
    set: &mut ConstrainedPrioritySet<'_>,
    task: TaskId,
    active_client: usize,
    tag_keys: &BTreeSet<&str>,
    values_by_key: &BTreeMap<String, BTreeSet<String>>,
    clients_by_tag: &BTreeMap<TagEntry, BTreeSet<ProcessId>>,
    remaining: &mut BTreeMap<TaskId, i32>,
) {
    set.offer_all(states, order);
    // `:236`: the active's client counts as used.
    let mut used_clients = 1usize;
    let mut left = remaining[&task];
    let mut used_tags: BTreeMap<TagEntry, &BTreeSet<ProcessId>> = BTreeMap::new();
    let mut last_used = active_client;
    loop {
        mark_used_tags(
            &states[last_used],
            used_clients,
            tag_keys,
            values_by_key,
            clients_by_tag,
            &mut used_tags,
        );
        // `:253-255`, `isClientUsedOnAnyOfTheTagEntries` (`:293-296`).
        let on_unused_tags = |client: &ClientState| {
            !used_tags
                .values()
                .any(|clients| clients.contains(&client.process_id))
        };
        let Some(chosen) = set.poll(states, task, on_unused_tags) else {
            break;
        };
        used_clients += 1;
        left -= 1;
        states[chosen].assign_standby(task);
        last_used = chosen;
        // `do { ... } while (numRemainingStandbys > 0)` (`:273`).
        if left <= 0 {
            break;
        }
    }
    if left > 0 {
        remaining.insert(task, left);
    } else {
        remaining.remove(&task);
    }
}

/// `updateClientsOnAlreadyUsedTagEntries` (`:298-375`): for each configured tag of the client
/// just used, its value's clients become excluded, unless as many clients are used as the key
/// has values, in which case the key stops constraining (all its values are released). Other
/// tags are ignored (Kafka logs a warning). Each key touches only its own entries, so the
/// order of the client's tags does not matter.
fn mark_used_tags<'t>(
    used: &ClientState,
    used_clients: usize,
    tag_keys: &BTreeSet<&str>,
    values_by_key: &BTreeMap<String, BTreeSet<String>>,
    clients_by_tag: &'t BTreeMap<TagEntry, BTreeSet<ProcessId>>,
    used_tags: &mut BTreeMap<TagEntry, &'t BTreeSet<ProcessId>>,
) {
    for (key, value) in &used.client_tags {
        if !tag_keys.contains(key.as_str()) {
            continue;
        }
        let all_values = &values_by_key[key];
        if all_values.len() <= used_clients {
            for v in all_values {
                used_tags.remove(&(key.clone(), v.clone()));
            }
        } else {
            let entry = (key.clone(), value.clone());
            let clients = &clients_by_tag[&entry];
            used_tags.insert(entry, clients);
        }
    }
}
