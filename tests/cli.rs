//! The command line as scripts use it: output shapes, per-line errors, exit codes.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn cgsim(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cgsim runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const GOOD: &str = r#"{"id":"ok","assignor":"roundrobin","topics":{"t0":4},"members":[{"member_id":"m-2","topics":["t0"]},{"member_id":"m-1","topics":["t0"]}]}"#;

#[test]
fn assign_prints_one_sorted_line_per_input() {
    let out = cgsim(&["assign"], &format!("{GOOD}\n\n{GOOD}\n"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let expected = r#"{"assignment":{"m-1":{"t0":[0,2]},"m-2":{"t0":[1,3]}},"id":"ok"}"#;
    assert_eq!(text(&out.stdout), format!("{expected}\n{expected}\n"));
}

#[test]
fn assign_reports_each_bad_line_and_exits_2() {
    let input = [
        GOOD,
        "{not json",
        r#"{"id":"u","assignor":"fancy","topics":{},"members":[]}"#,
        r#"{"id":"d","assignor":"range","topics":{"t":1},"members":[{"member_id":"a","topics":["t"]},{"member_id":"a","topics":["t"]}]}"#,
        r#"{"id":"n","assignor":"range","topics":{"t":-3},"members":[]}"#,
        GOOD,
    ]
    .join("\n");
    let out = cgsim(&["assign"], &input);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("line 2: malformed JSON"), "{err}");
    assert!(err.contains("line 3: unknown assignor \"fancy\""), "{err}");
    assert!(err.contains("line 4: duplicate member_id \"a\""), "{err}");
    assert!(
        err.contains("line 5: topic \"t\": negative partition count -3"),
        "{err}"
    );
    // Good lines around the bad ones still get their answers.
    assert_eq!(text(&out.stdout).lines().count(), 2);
    assert!(!err.contains("panicked"));
}

#[test]
fn assign_skips_topics_missing_from_metadata_with_a_warning() {
    let line = r#"{"id":"w","assignor":"range","topics":{"t0":2},"members":[{"member_id":"a","topics":["t0","ghost"]}]}"#;
    let out = cgsim(&["assign"], line);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("\"ghost\""));
    assert_eq!(
        text(&out.stdout).trim(),
        r#"{"assignment":{"a":{"t0":[0,1]}},"id":"w"}"#
    );
}

#[test]
fn assign_reads_a_file_and_names_it_in_errors() {
    let dir = std::env::temp_dir().join(format!("cgsim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("in.jsonl");
    std::fs::write(&path, format!("{GOOD}\n[1,2]\n")).unwrap();
    let out = cgsim(&["assign", path.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("in.jsonl: line 2: expected a JSON object"),
        "{}",
        text(&out.stderr)
    );
    let missing = cgsim(&["assign", dir.join("nope.jsonl").to_str().unwrap()], "");
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("nope.jsonl"));
}

#[test]
fn co_partition_reports_unmatched_indexes() {
    let line = r#"{"id":"c","assignor":"co-partition","topics":{"market-updates":6,"notifications":8},"members":[{"member_id":"pod-1","topics":["market-updates","notifications"]},{"member_id":"pod-2","topics":["market-updates","notifications"]}]}"#;
    let out = cgsim(&["assign"], line);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["unmatched"], serde_json::json!([6, 7]));
    assert!(
        text(&out.stderr).contains("[6, 7]"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        v["assignment"]["pod-1"]["notifications"],
        serde_json::json!([0, 2, 4, 6])
    );
}

#[test]
fn partition_prints_key_tab_partition() {
    let out = cgsim(&["partition", "--partitions", "6", "BBCA", "TLKM"], "");
    assert_eq!(out.status.code(), Some(0));
    // murmur2_vectors.json: BBCA -> 0 and TLKM -> 5 of 6.
    assert_eq!(text(&out.stdout), "BBCA\t0\nTLKM\t5\n");
    let out = cgsim(
        &[
            "partition",
            "--partitions",
            "6",
            "--redis",
            "market:{BBCA}",
            "notif:{BBCA}",
        ],
        "",
    );
    let lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    let slot = |l: &str| l.rsplit('\t').next().unwrap().to_string();
    assert_eq!(slot(&lines[0]), slot(&lines[1]));
}

#[test]
fn partition_rejects_zero_and_negative_counts() {
    for bad in ["0", "-1", "six"] {
        let out = cgsim(&["partition", "--partitions", bad, "k"], "");
        assert_eq!(out.status.code(), Some(2), "--partitions {bad}");
        assert!(!text(&out.stderr).is_empty());
    }
}
