//! What Kafka Streams' classic task assignment guarantees whatever the group
//! (../shared/reference/streams/STREAMS.md §4-7), on random groups under each task assignor
//! (high availability, legacy sticky, and fallback prior when the end offsets are missing):
//! random topologies, instances of 1-4 stream threads with signed-order process ids, client
//! tags in three zones for the tag-aware standby assignor, and previous state that may be stale (offset sums behind, past the end, of tasks now moved).
//!
//! - every task is active on exactly one instance (§4.1, §6: every assignor places them all);
//! - no instance holds a task twice: never its active and a standby (`ClientState.assignActive`
//!   and `assignStandby` refuse a task already held);
//! - a stateful task has at most min(standbys, instances - 1) standbys that are not warm-ups,
//!   and a stateless one none (§5: a standby goes only where the task is not);
//! - warm-ups are standbys, and only high availability makes them, at most
//!   `max.warmup.replicas` in all (§4.6: one budget for the whole rebalance);
//! - every instance is present, with its capacity = its threads, and its threads' tasks
//!   together are exactly its tasks, each on one thread (§7.1);
//! - fallback prior always asks for a probing rebalance, legacy sticky never (§6).

use cgsim::assignor::streams::classic::client_state::Consumer;
use cgsim::assignor::streams::classic::json::{ClassicCase, ClientInput};
use cgsim::assignor::streams::classic::{
    AssignmentConfigs, AssignorUsed, ConfiguredAssignor, ProcessId, Subtopology, TaskId,
    LATEST_OFFSET,
};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// (partitions, stateful) per subtopology; per instance: (msb, threads, previous tasks as
/// (subtopology pick, partition, offset-sum kind)); standbys; warm-ups; high availability or
/// legacy sticky; whether the end offsets were fetched; whether instances carry a zone tag.
type RawInstance = (i64, usize, Vec<(u8, i32, u8)>);

fn case_strategy() -> impl Strategy<Value = ClassicCase> {
    (
        prop::collection::vec((1i32..9, any::<bool>()), 1..4),
        prop::collection::vec(
            (
                any::<i64>(),
                1usize..5,
                prop::collection::vec((any::<u8>(), 0i32..9, 0u8..4), 0..6),
            ),
            1..7,
        ),
        0i32..3,
        1i32..3,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(subs, instances, standbys, warmups, ha, fetched, tagged)| {
                build(&subs, &instances, standbys, warmups, ha, fetched, tagged)
            },
        )
}

fn build(
    subs: &[(i32, bool)],
    instances: &[RawInstance],
    standbys: i32,
    warmups: i32,
    ha: bool,
    fetched: bool,
    tagged: bool,
) -> ClassicCase {
    let subtopologies: Vec<Subtopology> = subs
        .iter()
        .enumerate()
        .map(|(i, &(partitions, stateful))| Subtopology {
            id: i as i32,
            partitions,
            stateful,
        })
        .collect();
    const END: i64 = 20_000;
    let mut clients: Vec<ClientInput> = Vec::new();
    for (n, (msb, threads, previous)) in instances.iter().enumerate() {
        let process_id = ProcessId {
            msb: *msb,
            lsb: n as i64,
        };
        let mut consumers: Vec<Consumer> = (0..*threads)
            .map(|t| Consumer {
                // Thread 10 and up sort before thread 2 as strings.
                member_id: format!("{process_id}-StreamThread-{}-consumer", t * 9 + 1),
                owned_partitions: Vec::new(),
                task_offset_sums: BTreeMap::new(),
            })
            .collect();
        for (k, &(pick, partition, kind)) in previous.iter().enumerate() {
            let s = &subtopologies[pick as usize % subtopologies.len()];
            if partition >= s.partitions {
                continue;
            }
            let task = TaskId::new(s.id, partition);
            let at = k % consumers.len();
            let consumer = &mut consumers[at];
            match kind {
                // A running active: owns the source partition, reports LATEST_OFFSET.
                0 => {
                    consumer
                        .owned_partitions
                        .push((format!("input-{}", s.id), partition));
                    if s.stateful {
                        consumer.task_offset_sums.insert(task, LATEST_OFFSET);
                    }
                }
                1 if s.stateful => {
                    consumer.task_offset_sums.insert(task, END - 5);
                }
                2 if s.stateful => {
                    consumer.task_offset_sums.insert(task, 3);
                }
                // A checkpoint past the end: corrupted.
                3 if s.stateful => {
                    consumer.task_offset_sums.insert(task, END * 2);
                }
                _ => {}
            }
        }
        // With `rack.aware.assignment.tags = zone`, the tag-aware standby assignor runs.
        let client_tags = if tagged {
            BTreeMap::from([("zone".to_string(), format!("z{}", msb.rem_euclid(3)))])
        } else {
            BTreeMap::new()
        };
        clients.push(ClientInput {
            process_id,
            client_tags,
            consumers,
        });
    }
    let end_offsets = subtopologies
        .iter()
        .filter(|s| s.stateful)
        .flat_map(|s| (0..s.partitions).map(move |p| (TaskId::new(s.id, p), END)))
        .collect();
    ClassicCase {
        id: "prop".into(),
        assignor: if ha {
            ConfiguredAssignor::HighAvailability
        } else {
            ConfiguredAssignor::LegacySticky
        },
        configs: AssignmentConfigs {
            num_standby_replicas: standbys,
            max_warmup_replicas: warmups,
            rack_aware_assignment_tags: if tagged {
                vec!["zone".into()]
            } else {
                Vec::new()
            },
            ..AssignmentConfigs::default()
        },
        subtopologies,
        changelog_end_offset_sums: fetched.then_some(end_offsets),
        clients,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn classic_task_assignment_keeps_its_guarantees(case in case_strategy()) {
        let outcome = case.assign();
        let instances = case.clients.len();
        prop_assert_eq!(outcome.clients.len(), instances);
        let all: Vec<(TaskId, bool)> = case
            .subtopologies
            .iter()
            .flat_map(|s| (0..s.partitions).map(move |p| (TaskId::new(s.id, p), s.stateful)))
            .collect();
        let mut active_on: BTreeMap<TaskId, usize> = BTreeMap::new();
        let mut standbys_of: BTreeMap<TaskId, usize> = BTreeMap::new();
        let mut warmups = 0;
        for c in &outcome.clients {
            let s = &c.state;
            let input = case.clients.iter().find(|i| i.process_id == s.process_id).unwrap();
            prop_assert_eq!(s.capacity as usize, input.consumers.len());
            prop_assert!(s.active.is_disjoint(&s.standby), "{} holds a task twice", s.process_id);
            prop_assert!(c.warmup.is_subset(&s.standby));
            warmups += c.warmup.len();
            for t in &s.active {
                *active_on.entry(*t).or_default() += 1;
            }
            for t in s.standby.difference(&c.warmup) {
                *standbys_of.entry(*t).or_default() += 1;
            }
            // The threads hold exactly the instance's tasks, each once.
            let mut by_threads_active = BTreeSet::new();
            let mut by_threads_standby = BTreeSet::new();
            for t in c.threads.values() {
                for x in &t.active {
                    prop_assert!(by_threads_active.insert(*x));
                }
                for x in &t.standby {
                    prop_assert!(by_threads_standby.insert(*x));
                }
            }
            prop_assert_eq!(&by_threads_active, &s.active);
            prop_assert_eq!(&by_threads_standby, &s.standby);
            prop_assert_eq!(c.threads.len(), input.consumers.len());
        }
        for (task, stateful) in &all {
            prop_assert_eq!(active_on.get(task).copied().unwrap_or(0), 1, "task {} active", task);
            let n = standbys_of.get(task).copied().unwrap_or(0);
            let most = if *stateful {
                (case.configs.num_standby_replicas as usize).min(instances - 1)
            } else {
                0
            };
            prop_assert!(n <= most, "task {}: {} standbys, at most {}", task, n, most);
        }
        match outcome.assignor_used {
            AssignorUsed::HighAvailability => {
                prop_assert!(warmups <= case.configs.max_warmup_replicas as usize);
            }
            AssignorUsed::LegacySticky => {
                prop_assert_eq!(warmups, 0);
                prop_assert!(!outcome.probing_rebalance);
            }
            AssignorUsed::FallbackPrior => {
                prop_assert_eq!(warmups, 0);
                prop_assert!(outcome.probing_rebalance);
            }
        }
        // Deterministic: the same input, the same answer.
        prop_assert_eq!(case.assign(), outcome);
    }
}
