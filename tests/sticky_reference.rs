//! Every `sticky` and `cooperative-sticky` reference case (Kafka 4.3.1's own answers in
//! `tests/data/assignor_expected.jsonl`) reproduced exactly: the assignment and, under the
//! cooperative protocol, the withholding and revoke/add details.

use cgsim::assignor::json::{parse_case, render};
use serde_json::Value;
use std::collections::BTreeMap;

const CASES: &str = include_str!("data/assignor_cases.jsonl");
const EXPECTED: &str = include_str!("data/assignor_expected.jsonl");

/// The `cooperative` keys we reproduce (the follow-up simulation keys are the simulator's job).
const COOPERATIVE_KEYS: &[&str] = &[
    "algorithm",
    "target",
    "withheld",
    "withheld_count",
    "revoked",
    "added",
    "rejoin_requested_by",
];

fn expected_by_id() -> BTreeMap<String, Value> {
    EXPECTED
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("expected line is JSON");
            (v["id"].as_str().expect("id").to_string(), v)
        })
        .collect()
}

/// Compares one case; returns what differs.
fn check(line: &str, expected: &BTreeMap<String, Value>) -> Option<String> {
    let case = parse_case(line).expect("reference case parses");
    let want = &expected[&case.id];
    let result = match case.assignor.assign(&case.group) {
        Ok(r) => r,
        Err(e) => return Some(format!("{}: error {e}", case.id)),
    };
    let got: Value = serde_json::from_str(&render(&case, &result)).expect("output is JSON");
    if got["assignment"] != want["assignment"] {
        return Some(format!("{}: assignment", case.id));
    }
    if got.get("protocol") != want.get("protocol") {
        return Some(format!("{}: protocol echo", case.id));
    }
    match (got.get("cooperative"), want.get("cooperative")) {
        (None, None) => None,
        (Some(g), Some(w)) => COOPERATIVE_KEYS
            .iter()
            .find(|k| g.get(**k) != w.get(**k))
            .map(|k| format!("{}: cooperative.{k}", case.id)),
        _ => Some(format!(
            "{}: cooperative details present on one side only",
            case.id
        )),
    }
}

fn run(assignor: &str) {
    let expected = expected_by_id();
    let mut total = 0;
    let mut mismatches = Vec::new();
    for line in CASES.lines().filter(|l| !l.trim().is_empty()) {
        let raw: Value = serde_json::from_str(line).expect("case is JSON");
        if raw["assignor"] != assignor {
            continue;
        }
        total += 1;
        if let Some(m) = check(line, &expected) {
            mismatches.push(m);
        }
    }
    assert!(total > 0, "no {assignor} cases found");
    assert!(
        mismatches.is_empty(),
        "{} of {total} {assignor} cases differ from Kafka:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn sticky_matches_kafka() {
    run("sticky");
}

#[test]
fn cooperative_sticky_matches_kafka() {
    run("cooperative-sticky");
}
