//! The rules of STREAMS.md §6 (`LegacyStickyTaskAssignor`, `FallbackPriorTaskAssignor`) and
//! the Java iteration orders of §8 they depend on, one test each. Every case is built so that
//! the rule under test changes the answer: breaking it gives a different assignment.
//!
//! Process ids are `0000…-<lsb>`: `UUID.hashCode` is then `lsb`, so a `HashSet<ProcessId>`
//! iterates them by `lsb & (table - 1)`. `TaskId` `0_p` hashes to `29791 + 31p`.

use super::legacy_sticky::{assign, assign_fallback_prior};
use super::{java_task_order, AssignmentConfigs, ClientState, Clients, ProcessId, TaskId};
use crate::java::{Capacity, JavaHash};
use std::collections::BTreeMap;

fn pid(lsb: i64) -> ProcessId {
    ProcessId { msb: 0, lsb }
}

fn t(partition: i32) -> TaskId {
    TaskId::new(0, partition)
}

fn client(lsb: i64, capacity: i32, prev_active: &[TaskId], prev_standby: &[TaskId]) -> ClientState {
    let mut c = ClientState::new(pid(lsb), BTreeMap::new());
    c.capacity = capacity;
    c.prev_active = prev_active.iter().copied().collect();
    c.prev_standby = prev_standby.iter().copied().collect();
    c
}

/// Clients in the given (map) order; every task as `partitionsForTask.keySet()` of a default
/// `HashMap` would hold it.
fn clients(states: Vec<ClientState>, tasks: &[TaskId], stateful: &[TaskId]) -> Clients {
    Clients {
        states,
        all_tasks: java_task_order(tasks, Capacity::Default),
        stateful_tasks: stateful.to_vec(),
    }
}

fn tasks(n: i32) -> Vec<TaskId> {
    (0..n).map(t).collect()
}

fn active(c: &Clients, lsb: i64) -> Vec<TaskId> {
    c.get(pid(lsb)).unwrap().active.iter().copied().collect()
}

fn standby(c: &Clients, lsb: i64) -> Vec<TaskId> {
    c.get(pid(lsb)).unwrap().standby.iter().copied().collect()
}

fn standbys(n: i32) -> AssignmentConfigs {
    AssignmentConfigs {
        num_standby_replicas: n,
        ..AssignmentConfigs::default()
    }
}

#[test]
fn task_hashes_used_below() {
    assert_eq!(t(0).java_hash(), 29791);
    assert_eq!(t(1).java_hash(), 29822);
    assert_eq!(pid(5).java_hash(), 5);
}

/// §6 intro and `FallbackPriorTaskAssignor`: legacy never probes, the fallback always does.
#[test]
fn legacy_returns_false_and_fallback_true() {
    let mk = || clients(vec![client(1, 1, &[], &[])], &tasks(1), &[]);
    assert!(!assign(&mut mk(), &standbys(0), false));
    assert!(assign_fallback_prior(&mut mk(), &standbys(0)));
}

/// §6.1: `previousActiveTaskAssignment` is a map: of two previous owners, the later client in
/// map order wins (`LSTA:306-308`). Fallback, so quota cannot interfere.
#[test]
fn previous_active_last_writer_wins() {
    let mut c = clients(
        vec![client(1, 1, &[t(0)], &[]), client(2, 1, &[t(0)], &[])],
        &tasks(2),
        &[],
    );
    assign_fallback_prior(&mut c, &standbys(0));
    assert_eq!(active(&c, 2), vec![t(0)]);
    assert_eq!(active(&c, 1), vec![t(1)]);
}

/// §6.2(i): a previous owner keeps its tasks only up to `capacity * ⌊tasks/Σcapacity⌋`, taken
/// in `HashMap<TaskId>` order (0_1 in bucket 14 before 0_0 in bucket 15), not TaskId order.
/// The task it loses goes to the client with more room (§6.2(iii) balance rule).
#[test]
fn previous_owner_keeps_quota_in_hash_map_order() {
    let mut c = clients(
        vec![client(1, 1, &[t(0), t(1)], &[]), client(2, 1, &[], &[])],
        &tasks(2),
        &[],
    );
    assert!(!assign(&mut c, &standbys(0), false));
    assert_eq!(active(&c, 1), vec![t(1)]);
    assert_eq!(active(&c, 2), vec![t(0)]);
}

/// §6.2(i) with four tasks: quota 2 keeps 0_3 and 0_2 (buckets 12, 13); the fallback
/// (`mustPreserveActiveTaskAssignment`) keeps all four regardless of quota.
#[test]
fn fallback_preserves_every_previous_active() {
    let mk = || {
        clients(
            vec![client(1, 1, &tasks(4), &[]), client(2, 1, &[], &[])],
            &tasks(4),
            &[],
        )
    };
    let mut legacy = mk();
    assign(&mut legacy, &standbys(0), false);
    assert_eq!(active(&legacy, 1), vec![t(2), t(3)]);
    assert_eq!(active(&legacy, 2), vec![t(0), t(1)]);

    let mut fallback = mk();
    assign_fallback_prior(&mut fallback, &standbys(0));
    assert_eq!(active(&fallback, 1), tasks(4));
    assert!(active(&fallback, 2).is_empty());
}

/// §6.2(i): a previous active task no longer in the topology is not given back (`LSTA:156`).
#[test]
fn previous_active_outside_the_topology_is_dropped() {
    let gone = TaskId::new(9, 9);
    let mut c = clients(vec![client(1, 1, &[gone], &[])], &tasks(1), &[]);
    assign_fallback_prior(&mut c, &standbys(0));
    assert_eq!(active(&c, 1), vec![t(0)]);
}

/// §6.2(ii): a task goes to the first previous standby holder *in its `HashSet<ProcessId>`
/// order* with quota: pid 3 (bucket 3) before pid 5 (bucket 5), though pid 5 comes first in
/// the clients map.
#[test]
fn previous_standby_holder_in_hash_set_order() {
    let mut c = clients(
        vec![client(5, 1, &[], &[t(0)]), client(3, 1, &[], &[t(0)])],
        &tasks(2),
        &[],
    );
    assign(&mut c, &standbys(0), false);
    assert_eq!(active(&c, 3), vec![t(0)]);
    assert_eq!(active(&c, 5), vec![t(1)]);
}

/// §6.2(ii) and §8 (JDK version): the tasks are walked in the order of
/// `new HashSet<>(allTaskIds)` sized as JDK 17 does. With 24 tasks that table has 64 buckets
/// (0_22 in bucket 9 before 0_23 in bucket 40); the keySet itself (32 buckets, as JDK 21 would
/// size the copy) has 0_23 first. Client 2 has quota for one task, so it keeps 0_22.
#[test]
fn unassigned_tasks_in_jdk17_copy_order() {
    let all = tasks(24);
    let key_set = java_task_order(&all, Capacity::Default);
    assert_eq!(key_set[0], t(23), "the keySet order the test relies on");
    assert_eq!(
        java_task_order(&key_set, Capacity::CopyOfSet(24))[0],
        t(22),
        "the copy order the test relies on"
    );
    let mut c = Clients {
        states: vec![client(1, 23, &[], &[]), client(2, 1, &[], &[t(22), t(23)])],
        all_tasks: key_set,
        stateful_tasks: Vec::new(),
    };
    assign(&mut c, &standbys(0), false);
    assert_eq!(active(&c, 2), vec![t(22)]);
    assert_eq!(active(&c, 1).len(), 23);
}

/// §6.2(iii) `findClient`: the previous owner gets the task back while it has room; once it is
/// full and another client is less loaded, the task goes elsewhere (`LSTA:231-237, 242-244`).
/// Quota is 0 here (2 tasks, capacity 3), so (i) gives nothing back.
#[test]
fn previous_owner_passed_over_when_full() {
    let mut c = clients(
        vec![client(1, 2, &[], &[]), client(2, 1, &[t(0), t(1)], &[])],
        &tasks(2),
        &[],
    );
    assign(&mut c, &standbys(0), false);
    assert_eq!(active(&c, 2), vec![t(0)]);
    assert_eq!(active(&c, 1), vec![t(1)]);
}

/// §6.2(iii): with the previous owner full, a previous standby holder that is not full is
/// chosen before the least loaded client (`LSTA:232-236`): 0_1 goes to pid 3, not to pid 2,
/// the first client with no task.
#[test]
fn full_owner_falls_back_to_previous_standby_holder() {
    let mut c = clients(
        vec![
            client(1, 1, &[t(0), t(1)], &[]),
            client(2, 1, &[], &[]),
            client(3, 1, &[], &[t(1)]),
            client(4, 1, &[], &[]),
        ],
        &tasks(3),
        &[],
    );
    assign(&mut c, &standbys(0), false);
    assert_eq!(active(&c, 1), vec![t(0)]);
    assert_eq!(active(&c, 3), vec![t(1)]);
    assert_eq!(active(&c, 2), vec![t(2)]);
}

/// §6.2(iii): with no previous owner, the least loaded *previous standby holder* gets the task
/// (`LSTA:255-271`), here pid 3, though pid 1 comes first and has no task either.
#[test]
fn least_loaded_previous_standby_holder() {
    let mut c = clients(
        vec![
            client(1, 2, &[], &[]),
            client(2, 1, &[t(0)], &[t(1)]),
            client(3, 1, &[], &[t(1)]),
        ],
        &tasks(2),
        &[],
    );
    assign(&mut c, &standbys(0), false);
    assert_eq!(active(&c, 2), vec![t(0)]);
    assert_eq!(active(&c, 3), vec![t(1)]);
    assert!(active(&c, 1).is_empty());
}

/// §6.2(iii) and §8: the standby holders are copied into `new HashSet<>(ids)` (`LSTA:268`),
/// JDK 17 sizing: 12 holders make a 32-bucket copy of a 16-bucket set. pid 16 is first at 16
/// buckets (bucket 0) and in the clients map; at 32 buckets pid 1 is. All have no task, so the
/// first in the copy's order wins. Quota 0 (1 task, capacity 12) skips (ii).
#[test]
fn previous_standby_holders_in_resized_copy_order() {
    let lsbs = [16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
    let states = lsbs.iter().map(|&l| client(l, 1, &[], &[t(0)])).collect();
    let mut c = clients(states, &tasks(1), &[]);
    assign(&mut c, &standbys(0), false);
    assert_eq!(active(&c, 1), vec![t(0)]);
}

/// §6.2(iii) `findLeastLoaded`: a strictly lower load wins, and at equal load the larger
/// capacity (`ClientState.java:451-470`): pid 2 (2 tasks on 2 threads) beats pid 1 (1 on 1),
/// though pid 1 comes first.
#[test]
fn equal_load_goes_to_larger_capacity() {
    let mut c = clients(
        vec![client(1, 1, &[t(0)], &[]), client(2, 2, &[t(1), t(2)], &[])],
        &tasks(4),
        &[],
    );
    assign_fallback_prior(&mut c, &standbys(0));
    assert_eq!(active(&c, 2), vec![t(1), t(2), t(3)]);
    assert_eq!(active(&c, 1), vec![t(0)]);
}

/// §6.2(iii)/§6.3 `TaskPairs`: among equally loaded candidates the first one that would form a
/// new pair of tasks wins (`LSTA:291-296, 335-346`). The standby of 0_0 goes to pid 2 and
/// makes the pair (0_0, 0_1); so the standby of 0_1 skips pid 1 (holding 0_0: no new pair)
/// for pid 3.
#[test]
fn task_pairs_avoid_repeating_a_pair() {
    let mut c = clients(
        vec![
            client(1, 1, &[t(0)], &[]),
            client(2, 1, &[t(1)], &[]),
            client(3, 1, &[t(2)], &[]),
        ],
        &tasks(3),
        &tasks(3),
    );
    assign_fallback_prior(&mut c, &standbys(1));
    assert_eq!(standby(&c, 2), vec![t(0)]);
    assert_eq!(standby(&c, 3), vec![t(1)]);
    assert_eq!(standby(&c, 1), vec![t(2)]);
}

/// §6.3: standbys are placed per stateful task in the given `HashSet` order, not TaskId order:
/// 0_1 comes first and takes pid 2, the first client without tasks.
#[test]
fn standbys_follow_stateful_task_order() {
    let mut c = clients(
        vec![
            client(1, 1, &[t(0), t(1)], &[]),
            client(2, 1, &[], &[]),
            client(3, 1, &[], &[]),
        ],
        &tasks(2),
        &[t(1), t(0)],
    );
    assign_fallback_prior(&mut c, &standbys(1));
    assert_eq!(standby(&c, 2), vec![t(1)]);
    assert_eq!(standby(&c, 3), vec![t(0)]);
}

/// §6.3: the candidates of a standby are a fresh `HashSet<ProcessId>` (`LSTA:208-216`), so pid
/// 2 is tried before pid 3 though the clients map has pid 3 first.
#[test]
fn standby_candidates_in_hash_set_order() {
    let mut c = clients(
        vec![
            client(1, 1, &[t(0), t(1)], &[]),
            client(3, 1, &[], &[]),
            client(2, 1, &[], &[]),
        ],
        &tasks(2),
        &[t(0), t(1)],
    );
    assign_fallback_prior(&mut c, &standbys(1));
    assert_eq!(standby(&c, 2), vec![t(0)]);
    assert_eq!(standby(&c, 3), vec![t(1)]);
}

/// §6.3: a task gets no more standbys than there are clients without it (`LSTA:129-137`), and
/// stateless tasks get none.
#[test]
fn standbys_limited_by_clients_and_stateful_only() {
    let mut c = clients(
        vec![client(1, 1, &[], &[]), client(2, 1, &[], &[])],
        &tasks(2),
        &[t(0)],
    );
    assign(&mut c, &standbys(3), false);
    let all_standbys: Vec<TaskId> = [1, 2].iter().flat_map(|&l| standby(&c, l)).collect();
    assert_eq!(all_standbys, vec![t(0)]);
}
