//! The handed-over classic cases (../shared/reference/streams/, copied to `tests/data/`) as a
//! harness for the library's own tests: run every case with a given task assignor and list
//! where the output differs from Kafka 4.3.1's, key by key.
//!
//! An assignor that answers `None` for a case stands aside: Kafka's own active, standby and
//! warm-up tasks are written into the clients instead, so the rest of the pipeline (previous
//! tasks, lags, capacity, the spread over threads) is checked on its own.

use super::json::{outcome, parse_value, render, ClassicCase};
use super::{assign_tasks, AssignmentConfigs, AssignorAnswer, AssignorUsed, Clients, TaskId};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const CASES: &str = include_str!("../../../../tests/data/classic_cases.jsonl");
const EXPECTED: &str = include_str!("../../../../tests/data/classic_expected.jsonl");

/// What differed.
#[derive(Debug, Default)]
pub struct Report {
    pub checked: usize,
    /// `id family: key: kafka X, cgsim Y`, one per differing key.
    pub mismatches: Vec<String>,
    /// Per family: cases checked, cases that differ.
    pub families: BTreeMap<String, (usize, usize)>,
}

impl Report {
    /// A summary fit for an assertion message: the families, then the first mismatches.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} mismatching keys in {} cases\n",
            self.mismatches.len(),
            self.checked
        );
        for (family, (n, bad)) in &self.families {
            if *bad > 0 {
                s += &format!("  {family}: {bad} of {n} differ\n");
            }
        }
        for m in self.mismatches.iter().take(40) {
            s += m;
            s.push('\n');
        }
        s
    }
}

pub type Assign<'a> =
    &'a dyn Fn(AssignorUsed, &mut Clients, &AssignmentConfigs) -> Option<AssignorAnswer>;

fn tasks(v: &Value) -> BTreeSet<TaskId> {
    v.as_array()
        .expect("a task list")
        .iter()
        .map(|t| TaskId::parse(t.as_str().expect("a task name")).expect("a task"))
        .collect()
}

/// Kafka's answer for a case, written into the clients.
fn kafkas_answer(want: &Value, clients: &mut Clients) -> AssignorAnswer {
    let mut warmups = BTreeMap::new();
    for state in &mut clients.states {
        let c = &want["clients"][state.process_id.to_string()];
        state.active = tasks(&c["active"]);
        state.standby = tasks(&c["standby"]);
        let warmup = tasks(&c["warmup"]);
        if !warmup.is_empty() {
            warmups.insert(state.process_id, warmup);
        }
    }
    AssignorAnswer {
        probing_rebalance: want["probing_rebalance"]
            .as_bool()
            .expect("probing_rebalance"),
        warmups,
    }
}

/// Runs every case `wanted` selects.
pub fn check(wanted: impl Fn(&ClassicCase) -> bool, assign: Assign) -> Report {
    let expected: BTreeMap<String, Value> = EXPECTED
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("expected line");
            (v["id"].as_str().expect("id").to_string(), v)
        })
        .collect();
    let mut report = Report::default();
    for line in CASES.lines() {
        let value: Value = serde_json::from_str(line).expect("case line");
        let family = value["family"].as_str().unwrap_or("").to_string();
        let case = parse_value(value).unwrap_or_else(|e| panic!("case does not parse: {e}"));
        if !wanted(&case) {
            continue;
        }
        let want = &expected[&case.id];
        let (mut clients, used) = case.prepare();
        let answer = match assign(used, &mut clients, &case.configs) {
            Some(answer) => answer,
            None => kafkas_answer(want, &mut clients),
        };
        let got: Value =
            serde_json::from_str(&render(&case, &outcome(used, clients, answer))).expect("JSON");
        let before = report.mismatches.len();
        diff(
            &format!("{} {family}", case.id),
            "",
            want,
            &got,
            &mut report.mismatches,
        );
        let entry = report.families.entry(family).or_default();
        entry.0 += 1;
        entry.1 += usize::from(report.mismatches.len() > before);
        report.checked += 1;
    }
    report
}

/// Key by key, leaving out Kafka's diagnostic `probe`.
fn diff(who: &str, path: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            let keys: BTreeSet<&String> = w.keys().chain(g.keys()).collect();
            for k in keys {
                if path.is_empty() && k == "probe" {
                    continue;
                }
                let p = format!("{path}/{k}");
                match (w.get(k), g.get(k)) {
                    (Some(wv), Some(gv)) => diff(who, &p, wv, gv, out),
                    (wv, gv) => out.push(format!("{who}: {p}: kafka {wv:?}, cgsim {gv:?}")),
                }
            }
        }
        _ if want != got => out.push(format!("{who}: {path}: kafka {want}, cgsim {got}")),
        _ => {}
    }
}

#[test]
fn the_leaders_input_and_the_spread_over_threads_are_kafkas() {
    let report = check(|_| true, &|_, _, _| None);
    assert_eq!(report.checked, 371);
    assert!(report.mismatches.is_empty(), "{}", report.summary());
}

/// Every case with the task assignor Kafka's leader picks (`assign_tasks`): 263 high
/// availability (45 with client tags), 66 legacy sticky, 42 fallback prior, compared key by key
/// (actives, standbys, warm-ups, the probing flag, and the spread over threads built on them).
#[test]
fn every_case_is_kafkas_with_the_assignor_kafka_picks() {
    for (used, cases) in [
        (AssignorUsed::HighAvailability, 263),
        (AssignorUsed::LegacySticky, 66),
        (AssignorUsed::FallbackPrior, 42),
    ] {
        let report = check(
            |case| {
                AssignorUsed::chosen(case.assignor, case.changelog_end_offset_sums.is_some())
                    == used
            },
            &|used, clients, configs| Some(assign_tasks(used, clients, configs)),
        );
        assert_eq!(report.checked, cases, "{used:?}");
        assert!(
            report.mismatches.is_empty(),
            "{used:?}: {}",
            report.summary()
        );
    }
}

#[test]
fn an_assignor_that_places_nothing_differs_from_kafka_on_every_case() {
    // Every case has tasks, so Kafka places some: the harness sees the difference.
    let report = check(|_| true, &|_, _, _| Some(AssignorAnswer::default()));
    let differing: usize = report.families.values().map(|f| f.1).sum();
    assert_eq!(differing, 371, "{}", report.summary());
}
