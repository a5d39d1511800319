//! The leader's side around the task assignors, rule by rule (STREAMS.md §3, §7.1, §8): what
//! `ClientState` derives from the subscriptions, the lags, which assignor runs, and how a
//! client's tasks are spread over its stream threads.

use super::client_state::Consumer;
use super::threads::spread_over_threads;
use super::{
    AssignorUsed, ClientState, ConfiguredAssignor, ProcessId, TaskId, LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
};
use crate::java::JavaHash;
use std::collections::BTreeMap;

fn t(s: i32, p: i32) -> TaskId {
    TaskId::new(s, p)
}

fn consumer(id: &str, owned: &[(i32, i32)], sums: &[(TaskId, i64)]) -> Consumer {
    Consumer {
        member_id: id.into(),
        owned_partitions: owned
            .iter()
            .map(|&(s, p)| (format!("input-{s}"), p))
            .collect(),
        task_offset_sums: sums.iter().copied().collect(),
    }
}

fn client(consumers: &[Consumer]) -> ClientState {
    let mut c = ClientState::new(ProcessId { msb: 1, lsb: 1 }, BTreeMap::new());
    for m in consumers {
        c.add_consumer(m);
    }
    c.initialize_prev_tasks(|topic, p| {
        let s = topic.strip_prefix("input-")?.parse().ok()?;
        Some(t(s, p))
    });
    c
}

#[test]
fn previous_tasks_come_from_owned_partitions_then_running_sums_then_other_sums() {
    // §3.3: an owned source partition makes its task previously active, whatever its sum; of
    // the other reported tasks, a running one (-2) was active and the rest were standbys.
    let c = client(&[consumer(
        "m",
        &[(0, 0)],
        &[(t(0, 0), 500), (t(0, 1), LATEST_OFFSET), (t(1, 0), 7)],
    )]);
    assert_eq!(
        c.prev_active.iter().copied().collect::<Vec<_>>(),
        [t(0, 0), t(0, 1)]
    );
    assert_eq!(
        c.prev_standby.iter().copied().collect::<Vec<_>>(),
        [t(1, 0)]
    );
    assert_eq!(c.capacity, 1);
}

#[test]
fn a_lag_is_the_end_minus_the_offset_with_three_exceptions() {
    // §3.4 (`ClientState.computeTaskLags`).
    let mut c = client(&[consumer(
        "m",
        &[],
        &[
            (t(0, 0), LATEST_OFFSET),
            (t(0, 1), UNKNOWN_OFFSET_SUM),
            (t(0, 2), 900),
            (t(0, 3), 40),
        ],
    )]);
    let ends: BTreeMap<TaskId, i64> = (0..5).map(|p| (t(0, p), 100)).collect();
    c.compute_task_lags(&ends);
    assert_eq!(c.lag_for(t(0, 0)), -2, "running");
    assert_eq!(c.lag_for(t(0, 1)), -3, "unknown");
    assert_eq!(
        c.lag_for(t(0, 2)),
        100,
        "a checkpoint past the end restores from scratch"
    );
    assert_eq!(c.lag_for(t(0, 3)), 60);
    assert_eq!(c.lag_for(t(0, 4)), 100, "no state: the whole changelog");
    // A failed fetch: every end is -3, below any real offset sum, so the lag is -3.
    let mut failed = client(&[consumer("m", &[], &[(t(0, 3), 40)])]);
    failed.compute_task_lags(&BTreeMap::from([(t(0, 3), UNKNOWN_OFFSET_SUM)]));
    assert_eq!(failed.lag_for(t(0, 3)), -3);
}

#[test]
fn fallback_prior_runs_only_when_high_availability_lacks_end_offsets() {
    // §3.5 (`createTaskAssignor`).
    use AssignorUsed::*;
    assert_eq!(
        AssignorUsed::chosen(ConfiguredAssignor::HighAvailability, true),
        HighAvailability
    );
    assert_eq!(
        AssignorUsed::chosen(ConfiguredAssignor::HighAvailability, false),
        FallbackPrior
    );
    assert_eq!(
        AssignorUsed::chosen(ConfiguredAssignor::LegacySticky, false),
        LegacySticky
    );
    assert_eq!(
        AssignorUsed::chosen(ConfiguredAssignor::LegacySticky, true),
        LegacySticky
    );
}

#[test]
fn process_ids_order_as_signed_uuids_not_as_strings() {
    // §4 and §8: `UUID.compareTo` compares the halves as signed longs.
    let high = ProcessId::parse("8fffffff-0000-0000-0000-000000000000").unwrap();
    let low = ProcessId::parse("0fffffff-0000-0000-0000-000000000000").unwrap();
    assert!(high < low, "the top bit set is negative");
    assert!("8fffffff" > "0fffffff", "as strings it is the other way");
    assert_eq!(high.to_string(), "8fffffff-0000-0000-0000-000000000000");
    // `UUID.hashCode`: the halves of msb ^ lsb xored.
    let id = ProcessId {
        msb: 0x0000_0001_0000_0002,
        lsb: 0,
    };
    assert_eq!(id.java_hash(), 3);
    assert!(ProcessId::parse("not-a-uuid").is_err());
}

#[test]
fn a_task_id_hashes_as_objects_hash_of_its_parts() {
    // §5 and §8: `Objects.hash(subtopology, partition, null)`, so 0_31 and 1_0 collide.
    assert_eq!(t(0, 0).java_hash(), 29_791);
    assert_eq!(t(0, 31).java_hash(), t(1, 0).java_hash());
    assert!(
        t(1, 0) < t(10, 0) && t(2, 0) < t(10, 0),
        "subtopologies order as ints"
    );
}

#[test]
fn threads_are_taken_in_string_order_and_previous_owners_keep_their_tasks_up_to_the_minimum() {
    // §7.1: consumers in String order ("-10-" before "-2-"); each takes back its previous
    // tasks by (lag, task) up to the minimum; the rest fill the others, smallest task first.
    let mut c = client(&[
        consumer("app-StreamThread-2", &[], &[(t(0, 3), 10), (t(0, 2), 50)]),
        consumer("app-StreamThread-10", &[], &[]),
    ]);
    let ends: BTreeMap<TaskId, i64> = (0..4).map(|p| (t(0, p), 100)).collect();
    c.compute_task_lags(&ends);
    assert_eq!(c.consumers, ["app-StreamThread-10", "app-StreamThread-2"]);
    for p in 0..4 {
        c.active.insert(t(0, p));
    }
    let threads = spread_over_threads(&c);
    // Thread 2 reported 0_3 (lag 90) and 0_2 (lag 50): by lag, 0_2 then 0_3, both within the
    // minimum of 2; thread 10 gets 0_0 and 0_1.
    assert_eq!(threads["app-StreamThread-2"].active, [t(0, 2), t(0, 3)]);
    assert_eq!(threads["app-StreamThread-10"].active, [t(0, 0), t(0, 1)]);
}

#[test]
fn a_previous_owner_over_the_minimum_gets_its_task_back_among_the_leftovers() {
    // §7.1 step 4: 3 tasks on 2 threads, minimum 1. Thread x reported 0_0 and 0_2; it keeps
    // 0_0 (least lag) and 0_2 is remembered; w, first in order, is filled with 0_1; the
    // leftover 0_2 goes back to x, though w comes first among the threads at the minimum.
    let mut c = client(&[
        consumer("x", &[], &[(t(0, 0), 95), (t(0, 2), 90)]),
        consumer("w", &[], &[]),
    ]);
    c.compute_task_lags(&(0..3).map(|p| (t(0, p), 100)).collect());
    for p in 0..3 {
        c.active.insert(t(0, p));
    }
    let threads = spread_over_threads(&c);
    assert_eq!(threads["x"].active, [t(0, 0), t(0, 2)]);
    assert_eq!(threads["w"].active, [t(0, 1)]);
}

#[test]
fn standbys_spread_over_the_threads_the_actives_left_lightest() {
    // §7.1: one load per thread shared by the three calls (stateful actives, standbys,
    // stateless actives), so a thread with more actives gets fewer standbys.
    let mut c = client(&[consumer("a", &[], &[]), consumer("b", &[], &[])]);
    c.compute_task_lags(&(0..6).map(|p| (t(0, p), 100)).collect());
    for p in 0..3 {
        c.active.insert(t(0, p));
    }
    for p in 3..6 {
        c.standby.insert(t(0, p));
    }
    let threads = spread_over_threads(&c);
    let total = |m: &str| threads[m].active.len() + threads[m].standby.len();
    assert_eq!((total("a"), total("b")), (3, 3));
    assert_eq!(threads["a"].active.len(), 2);
    assert_eq!(threads["a"].standby.len(), 1);
    assert_eq!(threads["b"].standby.len(), 2);
}
