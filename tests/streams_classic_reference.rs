//! Every handed-over classic Kafka Streams case (../shared/reference/streams/, copied to
//! `tests/data/`: answers of Kafka 4.3.1's `StreamsPartitionAssignor` with its task assignors)
//! through `cgsim assign`: each line must print Kafka's expected line without its diagnostic
//! `probe`, byte for byte (`assignor_used`, `probing_rebalance`, and per client `active`,
//! `standby`, `warmup`, `prev_active`, `prev_standby`, `lags`, `capacity`, `threads`). Bad
//! lines get `line N:` and exit 2; the streams view of `cgsim assign --table` is a snapshot.

use serde_json::Value;
use std::process::Output;

const CASES: &str = include_str!("data/classic_cases.jsonl");
const EXPECTED: &str = include_str!("data/classic_expected.jsonl");

/// `cgsim assign ARGS` with `input` on stdin.
fn cgsim_assign(input: &str, args: &[&str]) -> Output {
    let mut all = vec!["assign"];
    all.extend(args);
    crate::cli::cgsim(&all, input)
}

#[test]
fn the_command_line_prints_kafkas_answer_for_every_classic_case() {
    let out = cgsim_assign(CASES, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 371);
    let mut differ = Vec::new();
    for (got, want) in stdout.lines().zip(EXPECTED.lines()) {
        let mut want: Value = serde_json::from_str(want).unwrap();
        want.as_object_mut().unwrap().remove("probe");
        let want = serde_json::to_string(&want).unwrap();
        if got != want {
            differ.push(format!("kafka {want}\ncgsim {got}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of 371 differ:\n{}",
        differ.len(),
        differ[..differ.len().min(3)].join("\n")
    );
}

/// The first case, with one thing changed by `edit`.
fn first_case_with(edit: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(CASES.lines().next().unwrap()).unwrap();
    edit(&mut v);
    v.to_string()
}

#[test]
fn bad_classic_lines_are_named_by_line_and_exit_2() {
    let good = CASES.lines().next().unwrap().to_string();
    let sub_not_a_number = first_case_with(|v| v["subtopologies"][0]["id"] = Value::from("a"));
    let task_outside = first_case_with(|v| {
        v["clients"][0]["consumers"][0]["task_offset_sums"] = serde_json::json!({"7_0": 10});
    });
    let partition_outside = first_case_with(|v| {
        v["clients"][0]["consumers"][0]["task_offset_sums"] = serde_json::json!({"0_5": 10});
    });
    let unknown_assignor = first_case_with(|v| v["assignor"] = Value::from("sticky"));
    let no_clients = first_case_with(|v| v["clients"] = serde_json::json!([]));
    let input = [
        good,
        sub_not_a_number,
        task_outside,
        partition_outside,
        unknown_assignor,
        no_clients,
    ]
    .join("\n");
    let out = cgsim_assign(&input, &[]);
    assert_eq!(out.status.code(), Some(2));
    // The good line is still answered.
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 1);
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 5, "{stderr}");
    assert!(
        lines[0].starts_with("line 2: subtopology id \"a\" is not a number"),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("line 3: consumer ")
            && lines[1].contains("task 7_0 is outside the topology: there is no subtopology 7"),
        "{stderr}"
    );
    assert!(
        lines[2].starts_with("line 4: consumer ")
            && lines[2]
                .ends_with("task 0_5 is outside the topology: subtopology 0 has 1 partition"),
        "{stderr}"
    );
    assert!(
        lines[3].starts_with("line 5: unknown assignor \"sticky\""),
        "{stderr}"
    );
    assert!(lines[4].starts_with("line 6: no clients: "), "{stderr}");
}

#[test]
fn the_streams_table_shows_three_assignors_side_by_side() {
    let out = cgsim_assign(
        "",
        &[
            "--table",
            "--subtopologies",
            "0=12:stateful,1=6",
            "--instances",
            "3",
            "--threads",
            "2",
            "--standbys",
            "1",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    insta::assert_snapshot!("assign-table--streams", text);
}

#[test]
fn bad_streams_table_arguments_exit_2() {
    for (args, message) in [
        (
            vec!["--subtopologies", "x=3", "--instances", "2"],
            "the id is not a number",
        ),
        (
            vec!["--subtopologies", "0=3:warm", "--instances", "2"],
            "neither stateful nor stateless",
        ),
        (
            vec!["--subtopologies", "0=3", "--instances", "0"],
            "--instances 0",
        ),
        (
            vec![
                "--subtopologies",
                "0=3",
                "--instances",
                "2",
                "--threads",
                "0",
            ],
            "--threads 0",
        ),
    ] {
        let mut all = vec!["--table"];
        all.extend(args);
        let out = cgsim_assign("", &all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(message), "{all:?}: {stderr}");
    }
}
