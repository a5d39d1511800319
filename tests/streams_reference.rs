//! Every handed-over KIP-1071 case (../shared/reference/streams/, copied to `tests/data/`:
//! answers of Kafka 4.3.1's own streams group `StickyTaskAssignor`) through the library and
//! through `cgsim assign`: every member's `active`, `standby` and `warmup` must be Kafka's.

use cgsim::assignor::json::{parse_line, AssignLine};
use cgsim::assignor::streams::json::{named_members, render};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

const CASES: &str = include_str!("data/kip1071_cases.jsonl");
const EXPECTED: &str = include_str!("data/kip1071_expected.jsonl");

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim().is_empty())
}

fn expected() -> BTreeMap<String, Value> {
    lines(EXPECTED)
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("expected line");
            (v["id"].as_str().expect("id").to_string(), v)
        })
        .collect()
}

#[test]
fn every_case_gives_kafkas_tasks_to_every_member() {
    let expected = expected();
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for line in lines(CASES) {
        let Ok(AssignLine::Streams(case)) = parse_line(line) else {
            panic!("a KIP-1071 case that does not parse: {line}");
        };
        let want = &expected[&case.id];
        let result = case.assign();
        let got = match &result {
            Ok(a) => serde_json::to_value(named_members(&case, a)).unwrap(),
            Err(e) => Value::from(format!("error: {e}")),
        };
        if got != want["members"] {
            mismatches.push(format!(
                "{}: kafka {} cgsim {got}",
                case.id, want["members"]
            ));
        }
        // The whole line too: keys, order of keys, nothing more.
        let rendered: Value = serde_json::from_str(&render(&case, &result)).unwrap();
        assert_eq!(&rendered, want, "{}", case.id);
        checked += 1;
    }
    assert!(
        mismatches.is_empty(),
        "{} of {checked} differ from Kafka:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert_eq!(checked, 408);
    assert_eq!(expected.len(), 408);
}

/// `cgsim assign` on the case file prints the expected file, byte for byte (Kafka's warnings
/// about standbys that found no process go to stderr).
#[test]
fn the_command_line_prints_the_expected_file() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .arg("assign")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(CASES.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 408);
    for (n, (got, want)) in stdout.lines().zip(lines(EXPECTED)).enumerate() {
        assert_eq!(got, want, "line {}", n + 1);
    }
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr
        .lines()
        .all(|l| l.contains("): warning: Unable to assign ")));
}
