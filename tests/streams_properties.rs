//! What the KIP-1071 `StickyTaskAssignor` guarantees whatever the group
//! (../shared/reference/streams/STREAMS.md §1.3-1.5), on random groups: random topologies,
//! members spread over processes, previous target assignments that may be stale or even
//! contradictory (two members claiming one active task, a standby beside its active), any
//! number of standby replicas.
//!
//! - every task is active exactly once (§1.3: the least-loaded pass has no quota, so nothing
//!   is left over);
//! - no process holds a task twice in any roles: never an active and a standby of one task, nor
//!   two standbys (§1.4: every standby rule checks `hasTask` on the process);
//! - each stateful task gets exactly min(standbys, processes - 1) standbys, and a stateless
//!   one none (§1.4: a replica is dropped only when every process holds the task), so at most
//!   that many;
//! - every member is present, warm-ups are empty (§1.5);
//! - the same input gives the same answer.

use cgsim::assignor::streams::{assign, GroupSpec, MemberSpec, Subtopology, TaskId, Topology};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// A random group: 1-4 subtopologies of 0-12 partitions, 1-12 members over 1-5 processes
/// (ids drawn from a small pool, so some share a process and some member ids collide in a
/// `HashMap` bucket), previous tasks drawn at random, 0-3 standby replicas.
fn group_strategy() -> impl Strategy<Value = GroupSpec> {
    let subtopologies = prop::collection::vec((0i32..13, any::<bool>()), 1..5);
    let members = prop::collection::vec(
        (
            0usize..5,
            prop::collection::vec((any::<u8>(), 0i32..13), 0..6),
            prop::collection::vec((any::<u8>(), 0i32..13), 0..6),
        ),
        1..13,
    );
    (subtopologies, members, 0u32..4, any::<u64>())
        .prop_map(|(subs, members, replicas, salt)| build(&subs, &members, replicas, salt))
}

type RawTasks = Vec<(u8, i32)>;

fn build(
    subs: &[(i32, bool)],
    members: &[(usize, RawTasks, RawTasks)],
    replicas: u32,
    salt: u64,
) -> GroupSpec {
    // Ids "0", "1", ... and one "10" when there are four, to sort as strings.
    let subtopologies = subs
        .iter()
        .enumerate()
        .map(|(i, &(partitions, stateful))| Subtopology {
            id: if i == 3 { "10".into() } else { i.to_string() },
            partitions,
            stateful,
        })
        .collect();
    let topology = Topology::new(subtopologies).expect("distinct ids");
    // Keeps the tasks that exist, each once per role.
    let tasks = |raw: &RawTasks| -> Vec<TaskId> {
        let n = topology.subtopologies().len();
        let set: BTreeSet<TaskId> = raw
            .iter()
            .map(|&(s, p)| TaskId::new(u32::from(s) % n as u32, p))
            .filter(|&t| topology.contains(t))
            .collect();
        set.into_iter().collect()
    };
    // "Aa", "BB", "AaAa", "BBBB" share hash codes pairwise: collisions in the members map.
    let colliding = ["Aa", "BB", "AaAa", "BBBB"];
    let members = members
        .iter()
        .enumerate()
        .map(|(i, (process, active, standby))| MemberSpec {
            member_id: match colliding.get(i) {
                Some(id) if salt.is_multiple_of(2) => id.to_string(),
                _ => format!("member-{}-{i}", salt % 1000),
            },
            process_id: format!("process-{process}"),
            active_tasks: tasks(active),
            standby_tasks: tasks(standby),
            warmup_tasks: vec![],
            rack_id: None,
        })
        .collect();
    GroupSpec {
        topology,
        members,
        num_standby_replicas: replicas,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn the_assignor_keeps_its_guarantees(group in group_strategy()) {
        let a = assign(&group).expect("a group with members gets an answer");
        prop_assert_eq!(a.members.len(), group.members.len(), "every member present");
        prop_assert_eq!(&assign(&group).expect("again"), &a, "deterministic");

        let processes: BTreeSet<&str> =
            group.members.iter().map(|m| m.process_id.as_str()).collect();
        let mut active: BTreeMap<TaskId, usize> = BTreeMap::new();
        let mut standbys: BTreeMap<TaskId, usize> = BTreeMap::new();
        let mut held: BTreeSet<(&str, TaskId)> = BTreeSet::new();
        for (spec, m) in group.members.iter().zip(&a.members) {
            prop_assert!(m.warmup_tasks.is_empty());
            for (&t, is_active) in m
                .active_tasks
                .iter()
                .map(|t| (t, true))
                .chain(m.standby_tasks.iter().map(|t| (t, false)))
            {
                prop_assert!(group.topology.contains(t));
                *(if is_active { &mut active } else { &mut standbys }).entry(t).or_default() += 1;
                prop_assert!(
                    held.insert((spec.process_id.as_str(), t)),
                    "process {} holds {} twice", spec.process_id, group.topology.task_name(t)
                );
            }
        }
        let replicas = group.num_standby_replicas as usize;
        for t in group.topology.tasks(true) {
            let name = group.topology.task_name(t);
            prop_assert_eq!(active.get(&t).copied(), Some(1), "{} active once", name);
            let stateful = group.topology.subtopology(t.subtopology).stateful;
            let want = if stateful { replicas.min(processes.len() - 1) } else { 0 };
            let got = standbys.get(&t).copied().unwrap_or(0);
            prop_assert_eq!(got, want, "standbys of {}", name);
        }
        prop_assert_eq!(active.len(), group.topology.task_count());
    }
}
