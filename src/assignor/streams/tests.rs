//! One test per rule of STREAMS.md §1 (../shared/reference/streams/STREAMS.md), each on a small
//! group built to show that rule alone. Every expected answer is what Kafka 4.3.1's own
//! `StickyTaskAssignor` returned for the same input (its unmodified source at commit
//! 26b251a4, run on JDK 17 with the call built as reference/streams/README.md Part 1 says).
//!
//! Member ids of one character iterate in a `HashMap` in alphabetical order (hash codes 97, 98,
//! ...: buckets 1, 2, ...), whatever their input order; "Aa" and "BB" share a hash code, so they
//! iterate in input order. Process ids "p1".."p4" iterate in that order in the processes map.

use super::json::{is_streams_case, parse_value, StreamsCase};
use super::sticky::compute_tasks_per_member;
use super::GroupAssignment;

/// A member entry of the case format.
fn m(id: &str, process: &str, active: &str, standby: &str) -> String {
    member(id, process, active, standby, "")
}

/// A member entry with more fields (`extra`: `,"key":value...`).
fn member(id: &str, process: &str, active: &str, standby: &str, extra: &str) -> String {
    format!(
        r#"{{"member_id":"{id}","process_id":"{process}","active":{active},"standby":{standby}{extra}}}"#
    )
}

/// A subtopology entry.
fn sub(id: &str, partitions: i32, stateful: bool) -> String {
    format!(r#"{{"id":"{id}","partitions":{partitions},"stateful":{stateful}}}"#)
}

fn case(subtopologies: &[String], standbys: u32, members: &[String]) -> StreamsCase {
    let line = format!(
        r#"{{"id":"t","num_standby_replicas":{standbys},"subtopologies":[{}],"members":[{}]}}"#,
        subtopologies.join(","),
        members.join(",")
    );
    let value: serde_json::Value = serde_json::from_str(&line).expect("test line");
    assert!(is_streams_case(&value));
    parse_value(value).expect("a valid case")
}

/// Per member, sorted by id: `"id: ACTIVE... | STANDBY..."`.
fn summary(case: &StreamsCase, a: &GroupAssignment) -> Vec<String> {
    let t = &case.group.topology;
    let names = |ts: &[super::TaskId]| {
        ts.iter()
            .map(|&x| t.task_name(x))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out: Vec<(&str, String)> = case
        .group
        .members
        .iter()
        .zip(&a.members)
        .map(|(spec, m)| {
            assert!(m.warmup_tasks.is_empty());
            let line = format!(
                "{}: {} | {}",
                spec.member_id,
                names(&m.active_tasks),
                names(&m.standby_tasks)
            );
            (spec.member_id.as_str(), line.trim_end().to_string())
        })
        .collect();
    out.sort();
    out.into_iter().map(|(_, line)| line).collect()
}

fn run(case: &StreamsCase) -> Vec<String> {
    summary(case, &case.assign().expect("Kafka answers"))
}

/// §1.1: subtopologies come from a `SortedMap`, so "10" sorts before "2" and its task is dealt
/// first (to the first process polled).
#[test]
fn subtopologies_sort_as_strings() {
    let c = case(
        &[sub("2", 1, false), sub("10", 1, false)],
        0,
        &[m("a", "p1", "{}", "{}"), m("b", "p2", "{}", "{}")],
    );
    assert_eq!(run(&c), ["a: 10_0 |", "b: 2_0 |"]);
}

/// §1.1: racks and previous warm-ups are never read.
#[test]
fn racks_and_warmups_are_never_read() {
    let subs = [sub("0", 3, true)];
    let plain = case(
        &subs,
        1,
        &[
            m("a", "p1", r#"{"0":[0]}"#, "{}"),
            m("b", "p2", "{}", "{}"),
            m("c", "p3", "{}", "{}"),
        ],
    );
    let decorated = case(
        &subs,
        1,
        &[
            member(
                "a",
                "p1",
                r#"{"0":[0]}"#,
                "{}",
                r#","rack_id":"r1","warmup":{"0":[1,2]}"#,
            ),
            member(
                "b",
                "p2",
                "{}",
                "{}",
                r#","rack_id":"r2","warmup":{"0":[0]}"#,
            ),
            member("c", "p3", "{}", "{}", r#","warmup":{}"#),
        ],
    );
    assert_eq!(decorated.group.members[0].rack_id.as_deref(), Some("r1"));
    assert_eq!(decorated.group.members[0].warmup_tasks.len(), 2);
    let want = ["a: 0_0 | 0_2", "b: 0_1 | 0_0", "c: 0_2 | 0_1"];
    assert_eq!(run(&plain), want);
    assert_eq!(run(&decorated), want);
}

/// §1.2: the quotas are ceilings of tasks over members (`computeTasksPerMember`), 0 without
/// members, with Java's truncating division for the negative totals a shrinking quota can
/// never reach in practice.
#[test]
fn quotas_are_ceilings() {
    assert_eq!(compute_tasks_per_member(10, 3), 4);
    assert_eq!(compute_tasks_per_member(9, 3), 3);
    assert_eq!(compute_tasks_per_member(0, 3), 0);
    assert_eq!(compute_tasks_per_member(5, 0), 0);
    assert_eq!(compute_tasks_per_member(-5, 2), -2);
}

/// §1.2: when two members claim one previous active task, the one the members map iterates
/// later wins ("b" after "a", though "b" comes first in the input).
#[test]
fn a_task_two_members_claim_goes_to_the_later_in_map_order() {
    let c = case(
        &[sub("0", 2, false)],
        0,
        &[
            m("b", "p1", r#"{"0":[0]}"#, "{}"),
            m("a", "p2", r#"{"0":[0]}"#, "{}"),
        ],
    );
    assert_eq!(run(&c), ["a: 0_1 |", "b: 0_0 |"]);
}

/// §1.2 and §8: member ids in one bucket iterate in insertion order, so for "Aa" and "BB" (one
/// hash code) the input order decides who is later and keeps the task.
#[test]
fn colliding_member_ids_iterate_in_insertion_order() {
    let aa = m("Aa", "p1", r#"{"0":[0]}"#, "{}");
    let bb = m("BB", "p2", r#"{"0":[0]}"#, "{}");
    let subs = [sub("0", 2, false)];
    let c = case(&subs, 0, &[aa.clone(), bb.clone()]);
    assert_eq!(run(&c), ["Aa: 0_1 |", "BB: 0_0 |"]);
    let c = case(&subs, 0, &[bb, aa]);
    assert_eq!(run(&c), ["Aa: 0_0 |", "BB: 0_1 |"]);
}

/// §1.3 step 1: a previous owner keeps its tasks up to the active quota, visited by partition
/// first: of 0_0, 0_1, 1_0, 1_1 it keeps 0_0 and 1_0 (quota 2), not 0_0 and 0_1.
#[test]
fn the_previous_owner_keeps_its_tasks_up_to_the_quota_partition_first() {
    let c = case(
        &[sub("0", 2, false), sub("1", 2, false)],
        0,
        &[
            m("a", "p1", r#"{"0":[0,1],"1":[0,1]}"#, "{}"),
            m("b", "p2", "{}", "{}"),
        ],
    );
    assert_eq!(run(&c), ["a: 0_0 1_0 |", "b: 0_1 1_1 |"]);
}

/// §1.3, dynamic quota: 7 tasks over 3 members start at a quota of 3. When "a" reaches it,
/// the quota becomes ceil(4 / 2) = 2, so "b" keeps only two of its three previous tasks.
#[test]
fn the_active_quota_shrinks_as_members_reach_it() {
    let c = case(
        &[sub("0", 7, false)],
        0,
        &[
            m("a", "p1", r#"{"0":[0,1,2]}"#, "{}"),
            m("b", "p2", r#"{"0":[3,4,5]}"#, "{}"),
            m("c", "p3", "{}", "{}"),
        ],
    );
    assert_eq!(
        run(&c),
        ["a: 0_0 0_1 0_2 |", "b: 0_3 0_4 |", "c: 0_5 0_6 |"]
    );
}

/// §1.3 step 2: a task whose previous owner is gone goes to a previous standby holder. The
/// chooser keeps the first holder ("a") unless a later one has both a strictly lower process
/// load and a strictly lower own count: "b" sits in a less loaded process but holds as many
/// tasks as "a", so "a" gets 0_0; once "b" holds none (its process-mate "b2" has the task
/// instead), "b" gets it.
#[test]
fn a_previous_standby_holder_takes_the_active_by_process_and_member_load() {
    let subs = [sub("0", 6, true)];
    let stays = case(
        &subs,
        0,
        &[
            m("a", "p1", r#"{"0":[1]}"#, r#"{"0":[0]}"#),
            m("b", "p2", r#"{"0":[2]}"#, r#"{"0":[0]}"#),
            m("b2", "p2", "{}", "{}"),
        ],
    );
    assert_eq!(
        run(&stays),
        ["a: 0_0 0_1 |", "b: 0_2 0_4 |", "b2: 0_3 0_5 |"]
    );
    let moves = case(
        &subs,
        0,
        &[
            m("a", "p1", r#"{"0":[1]}"#, r#"{"0":[0]}"#),
            m("b", "p2", "{}", r#"{"0":[0]}"#),
            m("b2", "p2", r#"{"0":[2]}"#, "{}"),
        ],
    );
    assert_eq!(
        run(&moves),
        ["a: 0_1 0_3 |", "b: 0_0 0_5 |", "b2: 0_2 0_4 |"]
    );
}

/// §1.3 step 3: the rest go to the least loaded process, compared by load alone; equal loads
/// fall to heap order. `ProcessState.compareTo` would prefer the larger process "p2" on a tie,
/// but it is not used: "p1", first in the processes map, is polled first, so its only member
/// gets the task whichever process is the larger.
#[test]
fn equal_loads_fall_to_heap_order_not_capacity() {
    let subs = [sub("0", 1, false)];
    let c = case(
        &subs,
        0,
        &[
            m("a", "p1", "{}", "{}"),
            m("b", "p2", "{}", "{}"),
            m("c", "p2", "{}", "{}"),
        ],
    );
    assert_eq!(run(&c), ["a: 0_0 |", "b:  |", "c:  |"]);
    let c = case(
        &subs,
        0,
        &[
            m("a", "p2", "{}", "{}"),
            m("b", "p1", "{}", "{}"),
            m("c", "p1", "{}", "{}"),
        ],
    );
    assert_eq!(run(&c), ["a:  |", "b: 0_0 |", "c:  |"]);
}

/// §1.4 (a): a standby goes first to the task's previous active owner when its process does
/// not hold the task: "a" kept 0_0 and lost 0_1 to "b" (quota 1), so it takes 0_1's standby.
#[test]
fn a_standby_goes_to_the_previous_active_owner() {
    let c = case(
        &[sub("0", 2, true)],
        1,
        &[
            m("a", "p1", r#"{"0":[0,1]}"#, "{}"),
            m("b", "p2", "{}", "{}"),
        ],
    );
    assert_eq!(run(&c), ["a: 0_0 | 0_1", "b: 0_1 | 0_0"]);
}

/// §1.4 (b): then to a previous standby holder ("c"), rather than the least loaded process.
#[test]
fn a_standby_goes_back_to_its_previous_holder() {
    let c = case(
        &[sub("0", 1, true)],
        1,
        &[
            m("a", "p1", r#"{"0":[0]}"#, "{}"),
            m("b", "p2", "{}", "{}"),
            m("c", "p3", "{}", r#"{"0":[0]}"#),
        ],
    );
    assert_eq!(run(&c), ["a: 0_0 |", "b:  |", "c:  | 0_0"]);
}

/// §1.4 (b), Kafka's quirk: when the *first* previous standby holder's process holds the task
/// ("b" shares "p1" with the active "a"), the chooser returns nothing, and "c", a valid
/// previous holder in another process, is passed over: the standby goes to the least loaded
/// process instead ("d").
#[test]
fn the_first_standby_holders_process_holding_the_task_discards_the_rest() {
    let c = case(
        &[sub("0", 1, true)],
        1,
        &[
            m("a", "p1", r#"{"0":[0]}"#, "{}"),
            m("b", "p1", "{}", r#"{"0":[0]}"#),
            m("c", "p3", "{}", r#"{"0":[0]}"#),
            m("d", "p4", "{}", "{}"),
        ],
    );
    assert_eq!(run(&c), ["a: 0_0 |", "b:  |", "c:  |", "d:  | 0_0"]);
}

/// §1.4 step 3: the least-loaded pass has no quota check (4 tasks with standbys over 4 members
/// is a quota of 1, yet "h" ends with two standbys) and never picks a process that holds the
/// task ("d" has nothing, but its process-mate "f" holds 0_0).
#[test]
fn the_least_loaded_standby_pass_ignores_the_quota_but_not_the_process() {
    let c = case(
        &[sub("0", 2, true)],
        1,
        &[
            m("d", "p4", "{}", "{}"),
            m("f", "p4", r#"{"0":[0,1]}"#, "{}"),
            m("c", "p1", "{}", "{}"),
            m("h", "p3", "{}", "{}"),
        ],
    );
    assert_eq!(run(&c), ["c: 0_1 |", "d:  |", "f: 0_0 |", "h:  | 0_0 0_1"]);
}

/// §1.4 step 3: a replica that finds no process without the task is dropped with Kafka's
/// warning; a task gets at most min(standbys, processes - 1) standbys. The count in the
/// warning is Kafka's `numStandbyReplicas - i`.
#[test]
fn standbys_without_a_free_process_are_dropped_with_a_warning() {
    let c = case(
        &[sub("0", 2, true)],
        1,
        &[m("a", "p1", "{}", "{}"), m("b", "p1", "{}", "{}")],
    );
    let a = c.assign().unwrap();
    assert_eq!(summary(&c, &a), ["a: 0_0 |", "b: 0_1 |"]);
    let warning = |n: u32, of: u32, task: &str| {
        format!(
            "Unable to assign {n} of {of} standby tasks for task [{task}]. There is not enough \
             available capacity. You should increase the number of threads and/or application \
             instances to maintain the requested number of standby replicas."
        )
    };
    assert_eq!(a.warnings, [warning(1, 1, "0_1"), warning(1, 1, "0_0")]);

    let c = case(
        &[sub("0", 2, true), sub("1", 1, false)],
        2,
        &[m("a", "p1", "{}", "{}"), m("b", "p2", "{}", "{}")],
    );
    let a = c.assign().unwrap();
    assert_eq!(summary(&c, &a), ["a: 0_0 1_0 | 0_1", "b: 0_1 | 0_0"]);
    assert_eq!(a.warnings, [warning(1, 2, "0_1"), warning(1, 2, "0_0")]);
}

/// §1.5: every member appears, with nothing if it gets nothing; warm-ups are always empty.
#[test]
fn every_member_appears_and_warmups_are_empty() {
    let c = case(
        &[sub("0", 1, false)],
        0,
        &[
            m("a", "p1", "{}", "{}"),
            m("b", "p1", "{}", "{}"),
            m("c", "p2", "{}", "{}"),
        ],
    );
    let a = c.assign().unwrap();
    assert_eq!(a.members.len(), 3);
    assert_eq!(summary(&c, &a), ["a: 0_0 |", "b:  |", "c:  |"]);
}

/// §1.6: the assignor is not idempotent. Its own answer fed back as the previous target moves
/// an active task: "e" and "f" keep two tasks each the first time, but fed back, "f" keeping
/// 0_0 and 0_1 lowers the quota to 1 before "e" reaches 0_3, which then goes to "d".
#[test]
fn feeding_an_answer_back_can_move_an_active_task() {
    let subs = [sub("0", 4, false)];
    let first = case(
        &subs,
        0,
        &[
            m("e", "p2", r#"{"0":[2,3]}"#, "{}"),
            m("f", "p1", r#"{"0":[0]}"#, r#"{"0":[3]}"#),
            m("d", "p2", "{}", "{}"),
        ],
    );
    assert_eq!(run(&first), ["d:  |", "e: 0_2 0_3 |", "f: 0_0 0_1 |"]);
    let again = case(
        &subs,
        0,
        &[
            m("e", "p2", r#"{"0":[2,3]}"#, "{}"),
            m("f", "p1", r#"{"0":[0,1]}"#, "{}"),
            m("d", "p2", "{}", "{}"),
        ],
    );
    assert_eq!(run(&again), ["d: 0_3 |", "e: 0_2 |", "f: 0_0 0_1 |"]);
}

/// Kafka's exception: tasks but no member to give them to (`:223-226`).
#[test]
fn tasks_without_members_raise_kafkas_exception() {
    let c = case(&[sub("0", 1, false)], 0, &[]);
    assert_eq!(
        c.assign().unwrap_err().0,
        "No process available to assign active task 0_0."
    );
}

/// A subtopology without partitions has no tasks and takes no room in the task tables (found
/// by comparing random groups with Kafka's own assignor: a debug assertion once fired here).
#[test]
fn a_subtopology_without_partitions_has_no_tasks() {
    let c = case(
        &[sub("0", 0, true), sub("1", 2, true)],
        1,
        &[m("a", "p1", r#"{"1":[1]}"#, "{}"), m("b", "p2", "{}", "{}")],
    );
    assert_eq!(run(&c), ["a: 1_1 | 1_0", "b: 1_0 | 1_1"]);
}

/// §1.3, §1.4: the order `StickyTaskAssignor` first sorts tasks in (partition, then
/// subtopology as a string) is built directly; it is the topology's tasks sorted that way.
#[test]
fn tasks_by_partition_is_kafkas_first_sort() {
    let c = case(
        &[
            sub("2", 3, true),
            sub("10", 1, false),
            sub("1", 0, true),
            sub("0", 5, true),
        ],
        0,
        &[],
    );
    let t = &c.group.topology;
    for active in [true, false] {
        let mut want = t.tasks(active);
        want.sort_by(|a, b| {
            a.partition.cmp(&b.partition).then_with(|| {
                t.subtopology(a.subtopology)
                    .id
                    .cmp(&t.subtopology(b.subtopology).id)
            })
        });
        assert_eq!(t.tasks_by_partition(active), want);
    }
    let names: Vec<String> = t
        .tasks_by_partition(false)
        .iter()
        .map(|&x| t.task_name(x))
        .collect();
    assert_eq!(
        names,
        ["0_0", "2_0", "0_1", "2_1", "0_2", "2_2", "0_3", "0_4"]
    );
}
