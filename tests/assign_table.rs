//! The assignment table (`cgsim assign --table`) against Kafka: every rebalance the table runs
//! while forming the seed 001 groups is a reference `a-table-*` case, fed exactly the same input
//! and giving exactly Kafka's answer (follow-up rounds included); the preset reproduces the
//! seed's published counts and layouts.

use cgsim::assignor::by_name;
use cgsim::assignor::json::{named_assignment, parse_case};
use cgsim::assignor::table::{
    self, form_group, partitions_text, GroupPlan, JoinHistory, Section, SectionTable,
};
use serde_json::Value;
use std::collections::BTreeMap;

const CASES: &str = include_str!("data/assignor_cases.jsonl");
const EXPECTED: &str = include_str!("data/assignor_expected.jsonl");

/// The assignors Kafka's reference covers (co-partition is the seed's own).
const REFERENCE_ASSIGNORS: [&str; 6] = [
    "range",
    "roundrobin",
    "sticky",
    "cooperative-sticky",
    "uniform",
    "server-range",
];

fn by_id(text: &str) -> BTreeMap<String, Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && l.contains("\"a-"))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), v)
        })
        .filter(|(id, _)| id.starts_with("a-"))
        .collect()
}

fn raw_case_lines() -> BTreeMap<String, String> {
    CASES
        .lines()
        .filter_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            let id = v["id"].as_str()?.to_string();
            id.starts_with("a-").then(|| (id, l.to_string()))
        })
        .collect()
}

fn seed_sections() -> Vec<Section> {
    table::preset("seed-001").expect("preset")
}

/// Reference name of a preset section.
fn section_name(s: &Section) -> &'static str {
    match s.topics[0].name.as_str() {
        "t3a" => "t3x3",
        "u1" => "u1u5",
        "t" => "single3",
        other => panic!("unexpected section {other}"),
    }
}

/// Checks one formation against the reference: rebalance `i` of each join step is case
/// `ids[step]`, its follow-ups are that case's `followup_rounds`. Returns the ids checked.
fn check_formation(
    assignor: &str,
    section: &Section,
    member_ids: &[String],
    batches: &[usize],
    ids: &[String],
    cases: &BTreeMap<String, String>,
    expected: &BTreeMap<String, Value>,
) -> Vec<String> {
    let f = form_group(
        by_name(assignor).unwrap(),
        &section.topics,
        member_ids,
        batches,
    )
    .unwrap_or_else(|e| panic!("{assignor} {ids:?}: {e}"));
    let mut checked = Vec::new();
    for (step, id) in ids.iter().enumerate() {
        let case = parse_case(&cases[id]).unwrap_or_else(|e| panic!("{id}: {e}"));
        let want = &expected[id];
        let rounds: Vec<_> = f.rebalances.iter().filter(|r| r.step == step).collect();
        let first = rounds[0];
        assert_eq!(first.followup, 0);
        assert_eq!(
            first.group, case.group,
            "{id}: the table fed a different input"
        );
        let ours = serde_json::to_value(named_assignment(
            &first.group,
            &first.result.assignment,
            false,
        ))
        .unwrap();
        assert_eq!(ours, want["assignment"], "{id}: assignment");
        let followups = want["cooperative"]["followup_rounds"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(rounds.len() - 1, followups.len(), "{id}: follow-up rounds");
        for (round, want_round) in rounds[1..].iter().zip(&followups) {
            let generation = round.group.members[0].generation.map(i64::from);
            assert_eq!(
                generation,
                want_round["generation_in_subscriptions"].as_i64(),
                "{id}: follow-up generation"
            );
            let ours = serde_json::to_value(named_assignment(
                &round.group,
                &round.result.assignment,
                false,
            ))
            .unwrap();
            assert_eq!(ours, want_round["assignment"], "{id}: follow-up assignment");
        }
        checked.push(id.clone());
    }
    checked
}

#[test]
fn every_table_rebalance_is_a_reference_case_with_kafkas_answer() {
    let cases = raw_case_lines();
    let expected = by_id(EXPECTED);
    let mut checked = Vec::new();
    for section in seed_sections() {
        let name = section_name(&section);
        let counts: &[usize] = if name == "t3x3" { &[2, 3, 4, 10] } else { &[2] };
        for &n in counts {
            let plan = GroupPlan::default_ids(n, JoinHistory::All);
            for assignor in REFERENCE_ASSIGNORS {
                // a-table-oneshot: everyone together.
                checked.extend(check_formation(
                    assignor,
                    &section,
                    &plan.member_ids,
                    &[n],
                    &[format!("a-{name}-{n}c-oneshot-{assignor}")],
                    &cases,
                    &expected,
                ));
                // a-table-sequential: one by one.
                let ids: Vec<String> = (1..=n)
                    .map(|k| format!("a-{name}-{n}c-join{k}-{assignor}"))
                    .collect();
                checked.extend(check_formation(
                    assignor,
                    &section,
                    &plan.member_ids,
                    &vec![1; n],
                    &ids,
                    &cases,
                    &expected,
                ));
            }
        }
        if name == "t3x3" {
            // a-table-reconstruct: the preset's 4-member group, three then one.
            let plan = &section.groups[2];
            assert_eq!(plan.history, JoinHistory::Batches(vec![3, 1]));
            for assignor in REFERENCE_ASSIGNORS {
                let ids = [1, 2].map(|s| format!("a-t3x3-4c-3then1-s{s}-{assignor}"));
                checked.extend(check_formation(
                    assignor,
                    &section,
                    &plan.member_ids,
                    &[3, 1],
                    &ids,
                    &cases,
                    &expected,
                ));
            }
        }
    }
    checked.sort();
    checked.dedup();
    let all: Vec<&String> = cases.keys().collect();
    assert_eq!(checked.len(), all.len(), "every a-table-* case is covered");
    assert_eq!(checked.len(), 186);
}

/// The converged reference answer of a case: its last follow-up round, else its assignment.
fn converged(want: &Value) -> &Value {
    want["cooperative"]["followup_rounds"]
        .as_array()
        .and_then(|r| r.last())
        .map(|r| &r["assignment"])
        .unwrap_or(&want["assignment"])
}

#[test]
fn the_seed_001_preset_ends_on_kafkas_layouts_for_every_assignor() {
    let expected = by_id(EXPECTED);
    let tables = table::build(&seed_sections()).unwrap();
    let mut compared = 0;
    for t in &tables {
        let name = section_name(&t.section);
        for block in &t.blocks {
            let n = block.plan.member_ids.len();
            let last_case = match &block.plan.history {
                JoinHistory::All => format!("a-{name}-{n}c-oneshot"),
                JoinHistory::OneByOne => format!("a-{name}-{n}c-join{n}"),
                JoinHistory::Batches(b) => {
                    assert_eq!(b, &[3, 1]);
                    format!("a-{name}-{n}c-3then1-s2")
                }
            };
            for assignor in REFERENCE_ASSIGNORS {
                let col = block.column(assignor).unwrap();
                let last = col.formation.rebalances.last().unwrap();
                let ours = serde_json::to_value(named_assignment(
                    &last.group,
                    &last.result.assignment,
                    false,
                ))
                .unwrap();
                let want = &expected[&format!("{last_case}-{assignor}")];
                assert_eq!(&ours, converged(want), "{last_case}-{assignor}");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 6 * 6);
}

fn seed_tables() -> Vec<SectionTable> {
    table::build(&seed_sections()).unwrap()
}

fn sorted(tables: &[SectionTable], section: usize, n: usize, assignor: &str) -> Vec<usize> {
    tables[section]
        .block(n)
        .unwrap()
        .column(assignor)
        .unwrap()
        .sorted_counts()
}

/// Each member's partitions in `kafka-consumer-groups` form, in JoinGroup order.
fn layout(tables: &[SectionTable], section: usize, n: usize, assignor: &str) -> Vec<String> {
    let t = &tables[section];
    t.block(n)
        .unwrap()
        .column(assignor)
        .unwrap()
        .formation
        .final_assignment()
        .iter()
        .map(|p| partitions_text(&t.section.topics, p))
        .collect()
}

#[test]
fn seed_001_published_counts() {
    let t = seed_tables();
    let mut ten_zero = vec![1; 9];
    ten_zero.push(0);
    let mut range_ten = vec![3, 3, 3];
    range_ten.extend([0; 7]);
    assert_eq!(sorted(&t, 0, 2, "range"), [6, 3]);
    assert_eq!(sorted(&t, 0, 3, "range"), [3, 3, 3]);
    assert_eq!(sorted(&t, 0, 4, "range"), [3, 3, 3, 0]);
    assert_eq!(sorted(&t, 0, 10, "range"), range_ten);
    for a in ["roundrobin", "sticky", "cooperative-sticky"] {
        assert_eq!(sorted(&t, 0, 2, a), [5, 4], "{a}");
        assert_eq!(sorted(&t, 0, 3, a), [3, 3, 3], "{a}");
        assert_eq!(sorted(&t, 0, 4, a), [3, 2, 2, 2], "{a}");
        assert_eq!(sorted(&t, 0, 10, a), ten_zero, "{a}");
    }
    // Idle members: range leaves one of 4 and seven of 10 without work.
    let block4 = t[0].block(4).unwrap();
    assert_eq!(block4.column("range").unwrap().idle(), 1);
    assert_eq!(t[0].block(10).unwrap().column("range").unwrap().idle(), 7);
    assert_eq!(
        t[0].block(10).unwrap().column("roundrobin").unwrap().idle(),
        1
    );
    // The skewed pair: range 4 and 2, roundrobin and sticky 3 and 3.
    assert_eq!(sorted(&t, 1, 2, "range"), [4, 2]);
    assert_eq!(sorted(&t, 1, 2, "roundrobin"), [3, 3]);
    assert_eq!(sorted(&t, 1, 2, "sticky"), [3, 3]);
    // Roundrobin never differs by more than one between members.
    for section in &t {
        for block in &section.blocks {
            let c = block.column("roundrobin").unwrap().sorted_counts();
            assert!(c[0] - c[c.len() - 1] <= 1, "{c:?}");
        }
    }
}

#[test]
fn seed_001_published_layouts() {
    let t = seed_tables();
    assert_eq!(
        layout(&t, 0, 2, "range"),
        ["t3a:0,1;t3b:0,1;t3c:0,1", "t3a:2;t3b:2;t3c:2"]
    );
    assert_eq!(
        layout(&t, 0, 2, "roundrobin"),
        ["t3a:0,2;t3b:1;t3c:0,2", "t3a:1;t3b:0,2;t3c:1"]
    );
    for a in ["sticky", "cooperative-sticky"] {
        assert_eq!(
            layout(&t, 0, 2, a),
            ["t3a:0,1;t3b:0,1;t3c:0", "t3a:2;t3b:2;t3c:1,2"],
            "{a}"
        );
        assert_eq!(
            layout(&t, 0, 3, a),
            [
                "t3a:0;t3b:0;t3c:0",
                "t3a:1;t3b:1;t3c:1",
                "t3a:2;t3b:2;t3c:2"
            ],
            "{a}"
        );
        // Published as the four parts t3a:0;t3b:0;t3c:0, t3a:1;t3b:1, t3a:2;t3b:2 and t3c:1,2.
        let mut four = layout(&t, 0, 4, a);
        four.sort();
        assert_eq!(
            four,
            ["t3a:0;t3b:0;t3c:0", "t3a:1;t3b:1", "t3a:2;t3b:2", "t3c:1,2"],
            "{a}"
        );
        assert_eq!(layout(&t, 1, 2, a), ["u1:0;u5:0,1", "u5:2,3,4"], "{a}");
    }
    assert_eq!(layout(&t, 1, 2, "range"), ["u1:0;u5:0,1,2", "u5:3,4"]);
    assert_eq!(layout(&t, 1, 2, "roundrobin"), ["u1:0;u5:1,3", "u5:0,2,4"]);
    assert_eq!(layout(&t, 2, 2, "range"), ["t:0,1", "t:2"]);
    assert_eq!(layout(&t, 2, 2, "roundrobin"), ["t:0,2", "t:1"]);
}

#[test]
fn two_consumers_one_by_one_give_the_published_sticky_layout_whatever_the_ids() {
    for ids in [vec!["c1", "c2"], vec!["zeta", "alpha"], vec!["m-2", "m-1"]] {
        let ids: Vec<String> = ids.into_iter().map(String::from).collect();
        let section = table::section_from_args(
            "t3a=3,t3b=3,t3c=3",
            "2",
            Some("2=one-by-one"),
            &[ids.join(",")],
            None,
        )
        .unwrap();
        let tables = table::build(&[section]).unwrap();
        for a in ["sticky", "cooperative-sticky"] {
            assert_eq!(
                layout(&tables, 0, 2, a),
                ["t3a:0,1;t3b:0,1;t3c:0", "t3a:2;t3b:2;t3c:1,2"],
                "{a} with ids {ids:?}"
            );
        }
    }
}

#[test]
fn the_table_is_deterministic() {
    let a = table::render(&seed_tables(), true);
    let b = table::render(&seed_tables(), true);
    assert_eq!(a, b);
}
