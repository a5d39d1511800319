//! Every `uniform` case of the reference corpus (`tests/data/assignor_cases.jsonl`), run through
//! the assignor and compared with Kafka 4.3.1's answer (`assignor_expected.jsonl`, same `id`),
//! `subscription_type` included. Lists every mismatching id, not just the first.

use cgsim::assignor::json::{parse_case, render};
use serde_json::Value;
use std::collections::BTreeMap;

const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/assignor_cases.jsonl"
);
const EXPECTED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/assignor_expected.jsonl"
);

fn lines(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn uniform_matches_kafka_on_every_reference_case() {
    let expected: BTreeMap<String, Value> = lines(EXPECTED)
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("expected line is JSON");
            (v["id"].as_str().expect("id").to_string(), v)
        })
        .collect();
    let mut per_category: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut mismatches = Vec::new();
    for line in lines(CASES) {
        let raw: Value = serde_json::from_str(&line).expect("case line is JSON");
        if raw["assignor"] != "uniform" {
            continue;
        }
        let id = raw["id"].as_str().expect("id").to_string();
        let category = raw["category"].as_str().unwrap_or("?").to_string();
        let want = &expected[&id];
        let case = parse_case(&line).unwrap_or_else(|e| panic!("{id}: {e}"));
        let got = match case.assignor.assign(&case.group) {
            Ok(result) => {
                serde_json::from_str::<Value>(&render(&case, &result)).expect("rendered JSON")
            }
            Err(e) => Value::String(e.0),
        };
        let ok = got.get("assignment") == want.get("assignment")
            && got.get("subscription_type") == want.get("subscription_type");
        let entry = per_category.entry(category).or_default();
        entry.1 += 1;
        if ok {
            entry.0 += 1;
        } else {
            mismatches.push(id);
        }
    }
    let total: usize = per_category.values().map(|c| c.1).sum();
    assert!(total > 0, "no uniform cases found");
    for (category, (ok, n)) in &per_category {
        eprintln!("{category}: {ok}/{n}");
    }
    assert!(
        mismatches.is_empty(),
        "{} of {total} uniform cases differ from Kafka: {mismatches:?}",
        mismatches.len()
    );
}
