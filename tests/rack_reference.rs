//! Rack-aware assignment (KIP-881) against what Kafka 4.3.1's own assignors answered on inputs
//! with member racks and partition replica racks (tests/data/rack_*, copied from the reference
//! set), and the facts those runs showed: the gate, balance over locality, server assignors
//! blind to racks, member order mattering to uniform only.

use cgsim::assignor::json::{named_assignment, parse_case, render};
use serde_json::Value;
use std::collections::BTreeMap;

const CASES: &str = include_str!("data/rack_assignor_cases.jsonl");
const EXPECTED: &str = include_str!("data/rack_assignor_expected.jsonl");

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim().is_empty())
}

fn expected() -> BTreeMap<String, Value> {
    lines(EXPECTED)
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), v)
        })
        .collect()
}

/// The case's answer as `cgsim assign` prints it.
fn answer(case: &Value) -> Value {
    let parsed = parse_case(&case.to_string()).expect("a valid case");
    let result = parsed.assignor.assign(&parsed.group).expect("an answer");
    serde_json::from_str(&render(&parsed, &result)).unwrap()
}

fn cases() -> Vec<Value> {
    lines(CASES)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn without_racks(case: &Value) -> Value {
    let mut c = case.clone();
    c.as_object_mut().unwrap().remove("partition_racks");
    for m in c["members"].as_array_mut().unwrap() {
        m.as_object_mut().unwrap().remove("rack");
    }
    c
}

#[test]
fn every_assignor_gives_kafkas_answer_with_racks() {
    let expected = expected();
    let mut per_assignor: BTreeMap<String, usize> = BTreeMap::new();
    let mut mismatches = Vec::new();
    for case in cases() {
        let id = case["id"].as_str().unwrap();
        let ours = answer(&case);
        let want = &expected[id];
        if ours["assignment"] != want["assignment"] {
            mismatches.push(format!(
                "{id}: kafka {} cgsim {}",
                want["assignment"], ours["assignment"]
            ));
        }
        // The cooperative bookkeeping too: target, withheld, revoked, added, who rejoins.
        if let Some(coop) = ours.get("cooperative") {
            for (k, v) in coop.as_object().unwrap() {
                assert_eq!(Some(v), want["cooperative"].get(k), "{id}: cooperative.{k}");
            }
        }
        *per_assignor
            .entry(case["assignor"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    let counts: Vec<(&str, usize)> = per_assignor.iter().map(|(a, &n)| (a.as_str(), n)).collect();
    assert_eq!(
        counts,
        [
            ("cooperative-sticky", 38),
            ("range", 26),
            ("server-range", 29),
            ("sticky", 43),
            ("uniform", 33)
        ]
    );
}

/// KAFKA-16694 removed rack awareness from the server assignors: racks change nothing.
#[test]
fn server_assignors_ignore_racks() {
    for case in cases() {
        let name = case["assignor"].as_str().unwrap();
        if name == "uniform" || name == "server-range" {
            assert_eq!(
                answer(&case),
                answer(&without_racks(&case)),
                "{}",
                case["id"]
            );
        }
    }
}

/// The gate: RF 3 over 3 racks (every partition on the same racks) and groups without member
/// racks answer as if there were no racks at all; elsewhere the client assignors do move.
#[test]
fn the_gate_decides_when_racks_matter() {
    let mut changed = BTreeMap::<&str, usize>::new();
    let all = cases();
    for case in &all {
        let category = case["category"].as_str().unwrap();
        let same = answer(case) == answer(&without_racks(case));
        if matches!(category, "r-full-replication" | "r-no-member-racks") {
            assert!(
                same,
                "{}: racks changed an answer the gate turns off",
                case["id"]
            );
        }
        if !same {
            *changed
                .entry(case["assignor"].as_str().unwrap())
                .or_default() += 1;
        }
    }
    assert!(changed["range"] > 0 && changed["sticky"] > 0 && changed["cooperative-sticky"] > 0);
    assert!(!changed.contains_key("uniform") && !changed.contains_key("server-range"));
}

/// Balance wins over matching: range gives every topic the same multiset of per-member counts
/// with racks as without.
#[test]
fn range_keeps_per_topic_balance_with_racks() {
    for case in cases().iter().filter(|c| c["assignor"] == "range") {
        let counts = |a: &Value| {
            let mut per_topic: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for topics in a["assignment"].as_object().unwrap().values() {
                for (t, ps) in topics.as_object().unwrap() {
                    per_topic
                        .entry(t.clone())
                        .or_default()
                        .push(ps.as_array().unwrap().len());
                }
            }
            for v in per_topic.values_mut() {
                v.retain(|&n| n > 0);
                v.sort_unstable();
            }
            per_topic
        };
        assert_eq!(
            counts(&answer(case)),
            counts(&answer(&without_racks(case))),
            "{}",
            case["id"]
        );
    }
}

/// Only uniform depends on the order members arrive in; the client assignors sort them.
#[test]
fn member_order_matters_to_uniform_only() {
    for case in cases() {
        if case["assignor"] == "uniform" {
            continue;
        }
        let mut reversed = case.clone();
        reversed["members"].as_array_mut().unwrap().reverse();
        let a = answer(&case);
        let b = answer(&reversed);
        assert_eq!(a["assignment"], b["assignment"], "{}", case["id"]);
    }
}

#[test]
fn bad_rack_input_is_refused_with_a_reason() {
    let err = |l: &str| parse_case(l).err().unwrap();
    assert_eq!(
        err(
            r#"{"id":"x","assignor":"range","topics":{"t":2},"partition_racks":{"t":[["a"]]},"members":[]}"#
        ),
        r#"partition_racks["t"] lists 1 partitions, but "t" has 2"#
    );
    assert_eq!(
        err(
            r#"{"id":"x","assignor":"range","topics":{"t":1},"partition_racks":{"u":[["a"]]},"members":[]}"#
        ),
        r#"partition_racks names topic "u", which is not in topics"#
    );
    // A rack with no replica in it is a rack all the same: its member matches nothing.
    let line = r#"{"id":"x","assignor":"range","topics":{"t":2},"partition_racks":{"t":[["a"],["b"]]},
        "members":[{"member_id":"m1","topics":["t"],"rack":"b"},{"member_id":"m2","topics":["t"],"rack":"a"}]}"#;
    let case = parse_case(line).unwrap();
    let result = case.assignor.assign(&case.group).unwrap();
    let named = named_assignment(&case.group, &result.assignment, false);
    assert_eq!(named["m1"]["t"], [1]);
    assert_eq!(named["m2"]["t"], [0]);
}
