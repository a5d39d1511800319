//! The command line as scripts use it: output shapes, per-line errors, exit codes.

use cgsim::scenario::new::{Deploy, NewGroup};
use cgsim::scenario::Protocol;
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// `cgsim ARGS` with `stdin` on its standard input, written from a thread of its own so that
/// an input larger than a pipe's buffer cannot wait on output nobody reads yet.
pub(crate) fn cgsim(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cgsim runs");
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_string();
    let writer = std::thread::spawn(move || pipe.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out
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

#[test]
fn readme_scenario_example_is_a_valid_scenario() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = &readme[readme.find("## Scenario files").expect("section")..];
    let start = section.find("```toml\n").expect("example") + "```toml\n".len();
    let example = &section[start..start + section[start..].find("```").unwrap()];
    let options = cgsim::scenario::LoadOptions::default();
    let s = cgsim::scenario::load_str("README.md", example, &options)
        .expect("the README example loads");
    assert_eq!(s.members.len(), 5);
    let sticky = cgsim::scenario::LoadOptions {
        variant: Some("sticky".into()),
        ..Default::default()
    };
    assert!(cgsim::scenario::load_str("README.md", example, &sticky).is_ok());
}

#[test]
fn run_reports_bad_scenarios_with_file_and_line_and_exit_2() {
    let dir = std::env::temp_dir().join(format!("cgsim-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("typo.toml");
    std::fs::write(&bad, "duration_ms = 1000\nsesion_timeout_ms = 5\n[[topics]]\nname = \"t\"\npartitions = 1\n[[members]]\nname = \"a\"\n").unwrap();
    let out = cgsim(&["run", bad.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("typo.toml: line 2: unknown field `sesion_timeout_ms`"),
        "{err}"
    );
    let scale_out = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/scale-out.toml");
    for (args, says) in [
        (
            vec![
                "--variant",
                "consumer",
                "--set",
                "group.remote_assignor=sticky",
            ],
            "not a server assignor the broker has",
        ),
        (
            vec!["--set", "group.session_timeout_ms=1000"],
            "outside the broker's bounds",
        ),
        (vec!["--variant", "nope"], "unknown variant"),
    ] {
        let mut all = vec!["run", scale_out];
        all.extend(args);
        let out = cgsim(&all, "");
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        assert!(
            text(&out.stderr).contains(says),
            "{all:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn run_exits_1_on_an_injected_violation_and_prints_json() {
    let scale_out = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/scale-out.toml");
    let out = cgsim(
        &[
            "run",
            scale_out,
            "--variant",
            "eager",
            "--format",
            "json",
            "--inject-double-ownership",
            "30000:c1:orders-23",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["invariants"]["violations"][0]["kind"], "double_ownership");
    for key in [
        "scenario",
        "seed",
        "variant",
        "digest",
        "rebalances",
        "revocations",
        "lost",
        "moved",
        "pauses",
        "join",
        "lag",
        "records",
        "invariants",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    let clean = cgsim(&["run", scale_out, "--variant", "eager"], "");
    assert_eq!(clean.status.code(), Some(0));
}

#[test]
fn emit_scenario_writes_a_file_that_replays_the_run() {
    let dir = std::env::temp_dir().join(format!("cgsim-emit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("as-run.toml");
    let first = cgsim(
        &[
            "run",
            "scenarios/crash.toml",
            "--variant",
            "cooperative",
            "--seed",
            "5",
            "--set",
            "group.heartbeat_interval_ms=1000",
            "--emit-scenario",
            out.to_str().unwrap(),
        ],
        "",
    );
    assert!(first.status.success());
    let again = cgsim(&["run", out.to_str().unwrap()], "");
    assert!(again.status.success());
    let digest = |o: &Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find(|l| l.starts_with("digest"))
            .unwrap()
            .to_string()
    };
    assert_eq!(digest(&first), digest(&again));
    // A file that cannot be written is bad input.
    let bad = cgsim(
        &[
            "run",
            "scenarios/crash.toml",
            "--emit-scenario",
            "/nonexistent-dir/x.toml",
        ],
        "",
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--emit-scenario"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_closed_pipe_ends_the_run_quietly_with_exit_0() {
    for args in [
        &["run", "scenarios/scale-out.toml", "--trace", "-"][..],
        &["run", "scenarios/scale-out.toml"][..],
        // JSON is written as it is serialized, not from a string.
        &["run", "scenarios/scale-out.toml", "--format", "json"][..],
        &["compare", "scenarios/scale-out.toml", "--seeds", "1..2"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cgsim"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the first byte: every write meets a closed pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn trace_to_a_file_leaves_stdout_pure_json() {
    let file = std::env::temp_dir().join(format!("cgsim-trace-{}.txt", std::process::id()));
    let out = cgsim(
        &[
            "run",
            "scenarios/scale-out.toml",
            "--trace",
            file.to_str().unwrap(),
            "--format",
            "json",
        ],
        "",
    );
    assert!(out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pure JSON");
    assert_eq!(report["schema_version"], 2);
    let trace = std::fs::read_to_string(&file).unwrap();
    assert!(trace.starts_with("0.000s run scenario=scale-out"));
    std::fs::remove_file(&file).ok();
    // A bare --trace still prints the trace before the report.
    let bare = cgsim(&["run", "scenarios/scale-out.toml", "--trace"], "");
    assert!(String::from_utf8_lossy(&bare.stdout).starts_with("0.000s run scenario=scale-out"));
}

#[test]
fn a_bad_set_is_named_instead_of_a_line_of_the_file() {
    for (set, says) in [
        (
            "group.max_poll_records=99999999999999999999",
            "out of range",
        ),
        (
            "group.session_timeout_ms=abc",
            "group.session_timeout_ms = \"abc\": expected an integer in 6000..=1800000",
        ),
        ("group.session_timeout_ms=0", "outside the broker's bounds"),
        ("group.nope=1", "unknown field `nope`"),
    ] {
        let out = cgsim(&["run", "scenarios/scale-out.toml", "--set", set], "");
        assert_eq!(out.status.code(), Some(2), "{set}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(&format!("scenarios/scale-out.toml: --set \"{set}\": ")),
            "{set}: {stderr}"
        );
        assert!(stderr.contains(says), "{set}: {stderr}");
        assert!(!stderr.contains("line "), "{set}: {stderr}");
    }
}

#[test]
fn an_injected_claim_after_the_run_ends_is_refused() {
    let out = cgsim(
        &[
            "run",
            "scenarios/scale-out.toml",
            "--inject-double-ownership",
            "999999999:c1:orders-23",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not before the run's end"));
}

#[test]
fn a_member_that_stops_on_a_fatal_error_heads_the_report_and_the_run_exits_1() {
    // range and cooperative-sticky have no protocol in common: the second member to join gets
    // INCONSISTENT_GROUP_PROTOCOL, and KafkaConsumer.poll throws.
    let toml = "name = \"inconsistent\"\nduration_ms = 60000\n\n[[topics]]\nname = \"orders\"\npartitions = 6\n\n\
        [[members]]\nname = \"a\"\nassignors = [\"range\"]\n\n\
        [[members]]\nname = \"b\"\nassignors = [\"cooperative-sticky\"]\n";
    let file = std::env::temp_dir().join(format!("cgsim-fatal-{}.toml", std::process::id()));
    std::fs::write(&file, toml).unwrap();
    let path = file.to_str().unwrap();
    let out = cgsim(&["run", path], "");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let lines: Vec<&str> = report.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("errors: 1"))
        .expect("an errors line");
    assert!(
        at < lines
            .iter()
            .position(|l| l.starts_with("formation"))
            .unwrap(),
        "{report}"
    );
    assert!(
        lines[at + 1].contains("failed: INCONSISTENT_GROUP_PROTOCOL"),
        "{report}"
    );
    assert!(text(&out.stderr).contains("a member hit a fatal error"));
    let json = cgsim(&["run", path, "--format", "json"], "");
    let r: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(r["errors"][0]["error"], "INCONSISTENT_GROUP_PROTOCOL");
    assert!(r["errors"][0]["member"].is_string() && r["errors"][0]["at_ms"].is_u64());
    std::fs::remove_file(&file).ok();
}

/// A KIP-1071 streams group case (`subtopologies` and `members`, member order kept): Kafka's
/// answer, with the subtopologies sorted as strings and the tasks by `TaskId.compareTo`.
const STREAMS_GOOD: &str = r#"{"id":"s","num_standby_replicas":1,"subtopologies":[{"id":"1","partitions":2,"stateful":true},{"id":"0","partitions":3,"stateful":false}],"members":[{"member_id":"b","process_id":"p1","active":{"1":[1],"0":[2]}},{"member_id":"a","process_id":"p2","standby":{"1":[1]}}]}"#;

#[test]
fn assign_answers_a_streams_line_and_an_assignor_exception() {
    // No members but a task to give: Kafka's TaskAssignorException is the answer, not bad
    // input. One process for a stateful task: Kafka's warning on stderr.
    let no_members = r#"{"id":"e","num_standby_replicas":0,"subtopologies":[{"id":"0","partitions":1,"stateful":false}],"members":[]}"#;
    let one_process = r#"{"id":"w","num_standby_replicas":1,"subtopologies":[{"id":"0","partitions":1,"stateful":true}],"members":[{"member_id":"a","process_id":"p1"}]}"#;
    let out = cgsim(
        &["assign"],
        &format!("{STREAMS_GOOD}\n{no_members}\n{one_process}\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        [
            r#"{"id":"s","members":{"a":{"active":["0_0","0_1"],"standby":["1_0","1_1"],"warmup":[]},"b":{"active":["0_2","1_0","1_1"],"standby":[],"warmup":[]}}}"#,
            r#"{"error":"No process available to assign active task 0_0.","id":"e"}"#,
            r#"{"id":"w","members":{"a":{"active":["0_0"],"standby":[],"warmup":[]}}}"#,
            "",
        ]
        .join("\n")
    );
    assert_eq!(
        text(&out.stderr),
        "line 3 (w): warning: Unable to assign 1 of 1 standby tasks for task [0_0]. There is not \
         enough available capacity. You should increase the number of threads and/or \
         application instances to maintain the requested number of standby replicas.\n"
    );
}

#[test]
fn assign_refuses_streams_lines_kafka_could_not_have_sent() {
    let line = |subtopologies: &str, members: &str| {
        format!(
            r#"{{"id":"x","num_standby_replicas":1,"subtopologies":[{subtopologies}],"members":[{members}]}}"#
        )
    };
    let one = r#"{"id":"0","partitions":2,"stateful":true}"#;
    let input = [
        STREAMS_GOOD.to_string(),
        line(
            one,
            r#"{"member_id":"a","process_id":"p","active":{"0":[2]}}"#,
        ),
        line(
            one,
            r#"{"member_id":"a","process_id":"p","standby":{"3":[0]}}"#,
        ),
        line(&format!("{one},{one}"), ""),
        line(
            one,
            r#"{"member_id":"a","process_id":"p"},{"member_id":"a","process_id":"q"}"#,
        ),
    ]
    .join("\n");
    let out = cgsim(&["assign"], &input);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stdout).lines().count(),
        1,
        "the good line is answered"
    );
    assert_eq!(
        text(&out.stderr).lines().collect::<Vec<_>>(),
        [
            r#"line 2: member "a": active task 0_2, but subtopology "0" has 2 partitions"#,
            r#"line 3: member "a": standby names subtopology "3", which is not in subtopologies"#,
            r#"line 4: subtopology id "0" given twice"#,
            r#"line 5: duplicate member_id "a""#,
        ]
    );
}

/// Per-member sections of the text report list members in natural order (c1, c2, ..., c10,
/// c11), as the `members` list does, not as text sorts (c1, c10, c11, c2).
#[test]
fn per_member_sections_list_members_in_natural_order() {
    let dir = std::env::temp_dir().join(format!("cgsim-natural-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("eleven.toml");
    std::fs::write(
        &path,
        "name = \"eleven\"\nduration_ms = 120000\n\n[[topics]]\nname = \"orders\"\npartitions = 12\n\n\
         [group]\nassignors = [\"range\"]\n\n[[members]]\nname = \"c\"\ncount = 11\n\n\
         [[members]]\nname = \"late\"\nstart_ms = 60000\n",
    )
    .unwrap();
    let out = cgsim(&["run", path.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let names = |section: &str| -> Vec<String> {
        let start = report
            .lines()
            .position(|l| l.starts_with(section))
            .unwrap_or_else(|| panic!("{section} in\n{report}"));
        report
            .lines()
            .skip(start + 1)
            .take_while(|l| l.starts_with("  "))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    let natural = |list: &[String]| {
        let mut sorted = list.to_vec();
        sorted.sort_by_key(|n| {
            (
                n.trim_end_matches(|c: char| c.is_ascii_digit()).to_string(),
                n.trim_start_matches(|c: char| !c.is_ascii_digit())
                    .parse::<u32>()
                    .unwrap_or(0),
            )
        });
        sorted
    };
    for section in ["revocations:", "stop-the-world ms:", "final assignment"] {
        let listed = names(section);
        assert!(listed.len() >= 10, "{section}: {listed:?}");
        assert_eq!(listed, natural(&listed), "{section}");
        assert!(
            listed.iter().position(|n| n == "c2") < listed.iter().position(|n| n == "c10"),
            "{section}: {listed:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `pauses.unavailable_ms.longest`: the longest single outage, within the per-partition sums
/// (`max` keeps its meaning); the text line names it.
#[test]
fn the_longest_outage_is_one_interval_of_one_partition() {
    let out = cgsim(
        &[
            "run",
            "scenarios/crash.toml",
            "--variant",
            "eager",
            "--format",
            "json",
        ],
        "",
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let u = &report["pauses"]["unavailable_ms"];
    let longest = &u["longest"];
    let partition = longest["partition"].as_str().expect("a partition");
    let ms = longest["ms"].as_u64().unwrap();
    // The crashed member's partitions wait out its session (45 s) from the crash at 60 s.
    assert_eq!(longest["start_ms"].as_u64(), Some(60_000), "{longest}");
    assert!(ms <= u["per_partition"][partition].as_u64().unwrap());
    assert!(ms <= u["max"].as_u64().unwrap());
    assert!(ms >= 45_000, "{longest}");
    let out = cgsim(&["run", "scenarios/crash.toml", "--variant", "eager"], "");
    let line = text(&out.stdout)
        .lines()
        .find(|l| l.starts_with("partition unavailable ms:"))
        .unwrap()
        .to_string();
    assert!(line.contains(" max per partition (sum) "), "{line}");
    assert!(
        line.contains(&format!("; longest outage: {partition}, ")),
        "{line}"
    );
}

/// The lab started where it finds no scenarios says so, naming the folder.
#[test]
fn the_lab_says_when_it_finds_no_scenarios() {
    let dir = std::env::temp_dir().join(format!("cgsim-lab-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(["lab", "--port", "0", "--scenarios"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    assert!(first.starts_with("lab: listening on "), "{first}");
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!("lab: no scenarios found in {}", dir.display())),
        "{err}"
    );
    assert!(err.contains("--scenarios DIR"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A negative generation other than -1 is accepted and fed where Kafka feeds it (issue 67):
/// the Subscription drops it (`ConsumerPartitionAssignor.Subscription`: negative is
/// `Optional.empty()`), each sticky assignor's userData keeps it, and `memberData` reads it
/// from there (`CooperativeStickyAssignor.memberData` falls back to the userData;
/// `StickyAssignor` reads only its userData). In `AbstractStickyAssignor.allSubscriptionsEqual`
/// b, met after a, claims t-0 with generation -2 against a's Subscription generation (none:
/// -1): -2 < -1, so a keeps it. Without a generation, b's -1 equals a's and t-0 is taken from
/// both (`partitionsWithMultiplePreviousOwners`): withheld from a under COOPERATIVE, handed to
/// b by the sticky (EAGER) assignor.
#[test]
fn a_generation_of_minus_2_is_weighed_as_kafkas_sticky_assignors_weigh_it() {
    let line = |assignor: &str, protocol: &str, owned_a: &str, owned_b: &str, generation: &str| {
        format!(
            r#"{{"id":"x","assignor":"{assignor}"{protocol},"topics":{{"t":4}},"members":[{{"member_id":"a","topics":["t"],"owned":{{"t":{owned_a}}}}},{{"member_id":"b","topics":["t"],"owned":{{"t":{owned_b}}}{generation}}}]}}"#
        )
    };
    let assign = |input: String| -> serde_json::Value {
        let out = cgsim(&["assign"], &input);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let coop = r#","protocol":"cooperative""#;
    let minus_2 = assign(line(
        "cooperative-sticky",
        coop,
        "[0,1]",
        "[0,2]",
        r#","generation":-2"#,
    ));
    assert_eq!(minus_2["assignment"]["a"]["t"], serde_json::json!([0, 1]));
    assert_eq!(minus_2["cooperative"]["withheld_count"], 0);
    let none = assign(line("cooperative-sticky", coop, "[0,1]", "[0,2]", ""));
    assert_eq!(none["assignment"]["a"]["t"], serde_json::json!([1]));
    assert_eq!(
        none["cooperative"]["withheld"]["a"]["t"],
        serde_json::json!([0])
    );
    let minus_2 = assign(line(
        "sticky",
        "",
        "[0,1,2]",
        "[0,3]",
        r#","generation":-2"#,
    ));
    assert_eq!(
        minus_2["assignment"],
        serde_json::json!({"a": {"t": [0, 1]}, "b": {"t": [2, 3]}})
    );
    let none = assign(line("sticky", "", "[0,1,2]", "[0,3]", ""));
    assert_eq!(
        none["assignment"],
        serde_json::json!({"a": {"t": [1, 2]}, "b": {"t": [0, 3]}})
    );
}

#[test]
fn a_run_too_short_for_the_settle_check_says_the_duration_that_would_check_it() {
    // crash.toml: the crash at 60 s; the settle window is 300 s (rebalance timeout) + 45 s
    // (session) + 6 s (two heartbeats) + a quiet 45 s after it.
    let args = ["run", "scenarios/crash.toml", "--set", "duration_ms=90000"];
    let out = text(&cgsim(&args, "").stdout);
    assert!(
        out.contains("settle checked false\n  settle not checked: the run ends at 90000 ms, before the settle window ends at 456000 ms (the last fault's end + 396000 ms"),
        "{out}"
    );
    assert!(out.contains("duration_ms = 456000 checks it"), "{out}");
    let json = cgsim(&[&args[..], &["--format", "json"]].concat(), "");
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let inv = &report["invariants"];
    assert_eq!(inv["settle_checked"], false);
    assert_eq!(inv["settle_bound_ms"], 396_000);
    assert_eq!(inv["settle_window_end_ms"], 456_000);
    // With that duration it is checked.
    let out = text(
        &cgsim(
            &["run", "scenarios/crash.toml", "--set", "duration_ms=456000"],
            "",
        )
        .stdout,
    );
    assert!(out.contains("settle checked true\n"), "{out}");
}

#[test]
fn new_writes_a_scenario_that_runs_and_refuses_what_cannot_be_a_group() {
    let out = cgsim(
        &[
            "new",
            "--members",
            "3",
            "--topics",
            "t=6",
            "--deploy",
            "crash",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("action = \"crash\"\nmember = \"c3\""));
    let bad = cgsim(&["new", "--members", "3", "--topics", "t=0"], "");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).starts_with("cgsim new: --topics entry \"t=0\""),
        "{}",
        text(&bad.stderr)
    );
}

/// `cgsim new` for every deploy, both protocols, static and dynamic: each loads, runs clean
/// and is settle-checked, its run just past the window its comment names.
#[test]
fn new_for_every_deploy_under_both_protocols_loads_runs_and_is_settle_checked() {
    for deploy in [
        Deploy::None,
        Deploy::Rolling,
        Deploy::Crash,
        Deploy::ScaleOut,
    ] {
        for protocol in [Protocol::Classic, Protocol::Consumer] {
            for static_members in [false, true] {
                let g = NewGroup {
                    members: 4,
                    static_members,
                    topics: vec![("orders".into(), 6), ("audit".into(), 3)],
                    protocol,
                    assignors: None,
                    deploy,
                    at_ms: 60_000,
                };
                let text = g.write().unwrap();
                let s = cgsim::scenario::load_str("new.toml", &text, &Default::default()).unwrap();
                let members = 4 + usize::from(deploy == Deploy::ScaleOut);
                assert_eq!(s.members.len(), members);
                assert_eq!(s.group.protocol, protocol);
                assert_eq!(s.topics.len(), 2);
                assert_eq!(
                    s.members.iter().all(|m| m.group_instance_id.is_some()),
                    static_members
                );
                assert_eq!(s.timeline.is_empty(), deploy == Deploy::None);
                let report = cgsim::world::run(&s, Default::default()).report;
                let what = format!("{deploy:?} {protocol:?} static {static_members}");
                assert!(report.invariants.settle_checked, "{what}");
                assert!(report.invariants.violations.is_empty(), "{what}");
                // The run ends just past the window it comments on.
                let end = report.invariants.settle_window_end_ms;
                assert!(
                    s.duration_ms >= end && s.duration_ms <= end + 20_000,
                    "{what}"
                );
                assert!(text.contains(&format!("window ends at {end} ms")), "{what}");
            }
        }
    }
}
