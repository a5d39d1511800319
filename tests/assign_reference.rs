//! Every reference case (answers produced by Kafka 4.3.1's own assignors) through the library,
//! for every assignor that is built. Cases of assignors not built yet are counted, not skipped
//! silently: the foundation's three must all be present and all match.

use cgsim::assignor::json::{named_assignment, parse_case};
use serde_json::Value;
use std::collections::BTreeMap;

const CASES: &str = include_str!("data/assignor_cases.jsonl");
const EXPECTED: &str = include_str!("data/assignor_expected.jsonl");

fn expected() -> BTreeMap<String, Value> {
    EXPECTED
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("expected line");
            (v["id"].as_str().expect("id").to_string(), v)
        })
        .collect()
}

#[test]
fn every_built_assignor_reproduces_kafka() {
    let expected = expected();
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    let mut mismatches = Vec::new();
    for line in CASES.lines().filter(|l| !l.trim().is_empty()) {
        let raw: Value = serde_json::from_str(line).unwrap();
        let id = raw["id"].as_str().unwrap();
        let Ok(case) = parse_case(line) else {
            continue; // an assignor not built yet: it has its own issue
        };
        let result = case.assignor.assign(&case.group).expect(id);
        let ours =
            serde_json::to_value(named_assignment(&case.group, &result.assignment, false)).unwrap();
        let want = &expected[id];
        if ours != want["assignment"] {
            mismatches.push(format!("{id}: kafka {} cgsim {ours}", want["assignment"]));
        }
        if let Some(st) = want.get("subscription_type") {
            assert_eq!(
                result.subscription_type.map(|s| s.name()),
                st.as_str(),
                "{id}"
            );
        }
        *checked.entry(case.assignor.name().to_string()).or_default() += 1;
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert_eq!(checked.get("range"), Some(&138));
    assert_eq!(checked.get("roundrobin"), Some(&137));
    assert_eq!(checked.get("server-range"), Some(&168));
}

/// range, roundrobin and server-range do not depend on the order members arrive in (Kafka
/// sorts them); shuffle every such case by reversing and rotating its member list.
#[test]
fn order_independent_assignors_ignore_member_order() {
    for line in CASES.lines().filter(|l| !l.trim().is_empty()) {
        let raw: Value = serde_json::from_str(line).unwrap();
        let name = raw["assignor"].as_str().unwrap();
        if !["range", "roundrobin", "server-range"].contains(&name) {
            continue;
        }
        let base = parse_case(line).unwrap();
        let want = named_assignment(
            &base.group,
            &base.assignor.assign(&base.group).unwrap().assignment,
            false,
        );
        for variant in 0..2 {
            let mut shuffled = raw.clone();
            let members = shuffled["members"].as_array_mut().unwrap();
            if variant == 0 {
                members.reverse();
            } else {
                let half = members.len() / 2;
                members.rotate_left(half);
            }
            let case = parse_case(&shuffled.to_string()).unwrap();
            let got = named_assignment(
                &case.group,
                &case.assignor.assign(&case.group).unwrap().assignment,
                false,
            );
            assert_eq!(got, want, "{}", raw["id"]);
        }
    }
}
