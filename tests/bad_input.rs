//! Every input answered: sizes and times above their limits refused at load naming the key, the
//! value and the limit; `--set` and variant errors blamed on the entry that brings them in;
//! timelines that cannot run refused with their line; `cgsim assign` lines that Kafka could not
//! have sent refused with theirs. A clean error (exit 2 at the command line), never a panic, an
//! abort on allocation or a run of minutes.

use cgsim::scenario::limits;
use cgsim::scenario::{load_str, LoadOptions, Scenario, ScenarioError};
use cgsim::world::{run, RunOptions};
use std::process::Command;

const BASE: &str = r#"name = "t"
duration_ms = 120000

[[topics]]
name = "orders"
partitions = 6

[group]
record_processing_us = 1000

[[members]]
name = "c"
count = 3

[[producers]]
topic = "orders"
records_per_sec = 100
"#;

fn load(text: &str, sets: &[&str], variant: Option<&str>) -> Result<Scenario, ScenarioError> {
    load_str(
        "s.toml",
        text,
        &LoadOptions {
            seed: None,
            variant: variant.map(str::to_string),
            sets: sets.iter().map(|s| s.to_string()).collect(),
        },
    )
}

fn error(text: &str, sets: &[&str], variant: Option<&str>) -> ScenarioError {
    match load(text, sets, variant) {
        Ok(_) => panic!("accepted:\n{text}\nwith {sets:?} {variant:?}"),
        Err(e) => e,
    }
}

/// BASE with one line replaced (`from` must occur once).
fn with(from: &str, to: &str) -> String {
    assert_eq!(BASE.matches(from).count(), 1, "{from:?}");
    BASE.replace(from, to)
}

#[test]
fn sizes_and_times_above_their_limits_are_refused_with_key_value_limit_and_line() {
    let cases: &[(&str, &str, usize, &str)] = &[
        (
            "count = 3",
            "count = 1000000000",
            13,
            r#"member "c": count = 1000000000 makes 1000000000 members in all, above the limit of 10000"#,
        ),
        (
            "partitions = 6",
            "partitions = 4294967295",
            6,
            r#"topic "orders": partitions = 4294967295 makes 4294967295 partitions in all, above the limit of 200000"#,
        ),
        (
            "partitions = 6",
            "partitions = 10000000",
            6,
            "makes 10000000 partitions in all, above the limit of 200000",
        ),
        (
            "duration_ms = 120000",
            "duration_ms = 1000000000000",
            2,
            "duration_ms = 1000000000000 is above the limit of 604800000 (7 simulated days)",
        ),
        (
            "duration_ms = 120000",
            "duration_ms = 9223372036854775807",
            2,
            "duration_ms = 9223372036854775807 is above the limit of 604800000",
        ),
        (
            "records_per_sec = 100",
            "records_per_sec = 9223372036854775807",
            17,
            r#"producer for "orders": records_per_sec = 9223372036854775807 is above the limit of 1000000000"#,
        ),
        (
            "record_processing_us = 1000",
            "record_processing_us = 4611686018427387904",
            9,
            "group.record_processing_us = 4611686018427387904 is above the limit of 2147483647",
        ),
        (
            "record_processing_us = 1000",
            "max_poll_interval_ms = 9223372036854775807",
            9,
            "group.max_poll_interval_ms = 9223372036854775807 is above the limit of 2147483647",
        ),
        (
            "record_processing_us = 1000",
            "max_poll_records = 9223372036854775807",
            9,
            "group.max_poll_records = 9223372036854775807 is above the limit of 2147483647 (an int in Kafka)",
        ),
        (
            "duration_ms = 120000",
            "duration_ms = 120000\n\n[cluster]\nrequest_latency_ms = { min = 1, max = 9223372036854775807 }",
            5,
            "cluster.request_latency_ms.max = 9223372036854775807 is above the limit of 60000",
        ),
        (
            "records_per_sec = 100",
            "records_per_sec = 100\nkey_count = 4294967295",
            18,
            r#"producer for "orders": key_count = 4294967295 is above the limit of 1000000 keys"#,
        ),
        (
            "records_per_sec = 100",
            "keys = [\"a\"]\nper_key = 4294967295\ninterval_ms = 0",
            18,
            r#"producer for "orders": 4294967295 keyed records in all, above the limit of 100000000"#,
        ),
    ];
    let mut failures = Vec::new();
    for (from, to, line, message) in cases {
        match load(&with(from, to), &[], None) {
            Ok(_) => failures.push(format!("{to}: accepted")),
            Err(e) => {
                if !(e.message.contains(message) && e.line == Some(*line)) {
                    failures.push(format!("{to}: got {e}, want line {line}: {message}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_event_loops_work_is_bounded_by_members_duration_and_records() {
    let week = with("count = 3", "count = 10000")
        .replace("duration_ms = 120000", "duration_ms = 604800000");
    let e = error(&week, &[], None);
    assert_eq!(e.line, Some(2), "{e}");
    assert_eq!(
        e.message,
        "duration_ms = 604800000: an estimated 60615.0 s of work (28324800000 events: 60480000 records to poll, \
         and a heartbeat every 3000 ms and an idle fetch every 500 ms for each of 10000 members \
         owning about 1 partition), above the limit of 60.0 s; shorten the run, or use fewer \
         members, partitions or records"
    );
    // A record a poll: a billion records at max_poll_records = 1 and no processing time.
    let records = with("record_processing_us = 1000", "record_processing_us = 0")
        .replace("records_per_sec = 100", "records_per_sec = 10000000");
    assert!(error(&records, &[], None)
        .message
        .contains("1200000000 records to poll"));
    // The same members for five minutes are fine.
    let minutes = week.replace("duration_ms = 604800000", "duration_ms = 300000");
    assert_eq!(load(&minutes, &[], None).unwrap().members.len(), 10_000);
}

#[test]
fn every_poll_is_weighed_by_the_partitions_a_member_owns() {
    // Two members sharing 120,000 partitions: each poll scans a member's 60,000.
    let scan = with("partitions = 6", "partitions = 120000")
        .replace("count = 3", "count = 2")
        .replace("duration_ms = 120000", "duration_ms = 420000");
    let e = error(&scan, &[], None);
    assert!(
        e.message
            .contains("an estimated 110.2 s of work (45924 events: 42000 records to poll, and a heartbeat every 3000 ms and an idle fetch every 500 ms for each of 2 members owning about 60000 partitions)"),
        "{e}"
    );
    let fewer = scan.replace("partitions = 120000", "partitions = 12000");
    assert!(load(&fewer, &[], None).is_ok());
}

#[test]
fn a_huge_stall_is_refused_and_the_longest_allowed_one_runs_as_written() {
    let stall = |ms: u64| {
        format!(
            "{BASE}\n[[timeline]]\nat_ms = 60000\naction = \"stall\"\nmember = \"c1\"\nduration_ms = {ms}\n"
        )
    };
    // 2^62 ms once wrapped to a stall of 0 ms.
    let e = error(&stall(1 << 62), &[], None);
    assert_eq!(e.line, Some(23), "{e}");
    assert!(
        e.message.contains(
            "timeline: stall duration_ms = 4611686018427387904 is above the limit of 2147483647"
        ),
        "{e}"
    );
    let scenario = load(&stall(limits::MAX_TIME_MS), &[], None).unwrap();
    let out = run(
        &scenario,
        RunOptions {
            keep_trace: true,
            record_history: false,
            ..RunOptions::default()
        },
    );
    assert!(
        out.trace
            .iter()
            .any(|l| l.contains("stalls for 2147483647 ms")),
        "the stall keeps its length"
    );
    // The stalled member's partitions stand still from 60 s to the end of the run.
    assert!(out.report.pauses.unavailable_ms.max >= 59_000);
}

#[test]
fn lag_samples_are_bounded_by_count_not_by_the_interval_alone() {
    // One sample per millisecond is fine for two minutes...
    let short = with("name = \"t\"", "name = \"t\"\nlag_sample_ms = 1");
    let scenario = load(&short, &[], None).unwrap();
    assert_eq!(scenario.lag_sample_ms, 1);
    // ...and a run with it ends (a rebalance once re-sampled the same instant forever).
    let out = run(&scenario, RunOptions::default());
    assert!(out.report.invariants.violations.is_empty());
    // ...but not for a week.
    let long = short.replace("duration_ms = 120000", "duration_ms = 604800000");
    let e = error(&long, &[], None);
    assert_eq!(e.line, Some(2), "{e}");
    assert!(
        e.message.starts_with(
            "lag_sample_ms = 1 takes 604800001 lag samples over duration_ms 604800000, above the limit of 1000000"
        ),
        "{e}"
    );
    assert!(e.message.contains("at least 605"), "{e}");
    // Each sample reads every partition.
    let wide = with("partitions = 6", "partitions = 200000")
        .replace(
            "duration_ms = 120000",
            "duration_ms = 60000\nlag_sample_ms = 10",
        )
        .replace("count = 3", "count = 1");
    let e = error(&wide, &[], None);
    assert_eq!(e.line, Some(3), "{e}");
    assert!(
        e.message
            .contains("lag_sample_ms = 10: 6001 lag samples of 200000 partitions each, above the limit of 1000000000 partition reads (lag_sample_ms must be at least 13"),
        "{e}"
    );
    let coarser = wide.replace("lag_sample_ms = 10", "lag_sample_ms = 13");
    assert!(load(&coarser, &[], None).is_ok());
}

#[test]
fn values_at_their_limits_load() {
    let text = with("count = 3", &format!("count = {}", limits::MAX_MEMBERS))
        .replace(
            "partitions = 6",
            &format!("partitions = {}", limits::MAX_PARTITIONS),
        )
        .replace("duration_ms = 120000", "duration_ms = 1000");
    let s = load(&text, &[], None).unwrap();
    assert_eq!(s.members.len() as u64, limits::MAX_MEMBERS);
    let long = BASE.replace(
        "duration_ms = 120000",
        &format!("duration_ms = {}", limits::MAX_DURATION_MS),
    );
    assert_eq!(
        load(&long, &[], None).unwrap().duration_ms,
        limits::MAX_DURATION_MS
    );
}

#[test]
fn partitions_added_later_count_toward_the_limit() {
    let text = format!(
        "{BASE}\n[[timeline]]\nat_ms = 60000\naction = \"add_partitions\"\ntopic = \"orders\"\npartitions = 200001\n"
    );
    let e = error(&text, &[], None);
    assert_eq!(e.line, Some(23), "{e}");
    assert!(
        e.message.contains(
            r#"add_partitions to "orders": partitions = 200001 makes 200001 partitions in all, above the limit of 200000"#
        ),
        "{e}"
    );
}

const VARIANTS: &str = r#"
[variants.sticky]
assignors = ["sticky"]

[variants.slow]
set = ["group.record_processing_us=2000", "group.max_poll_records=0"]
"#;

#[test]
fn a_variants_set_entry_is_checked_when_the_file_loads_not_when_the_variant_runs() {
    let text = format!("{BASE}{VARIANTS}");
    // Loading without the variant, or with another one, finds it.
    for variant in [None, Some("sticky"), Some("eager")] {
        let e = error(&text, &[], variant);
        assert_eq!(e.line, Some(23), "{e}");
        assert_eq!(
            e.message,
            r#"variant "slow": set entry "group.max_poll_records=0": group.max_poll_records must be at least 1"#
        );
    }
    let e = error(&text, &[], Some("slow"));
    assert_eq!(e.line, Some(23), "{e}");
    assert!(e.message.starts_with(r#"variant "slow": set entry"#));
    // A good set entry loads.
    let fixed = text.replace("max_poll_records=0", "max_poll_records=10");
    let s = load(&fixed, &[], Some("slow")).unwrap();
    assert_eq!(s.group.max_poll_records, 10);
    assert_eq!(s.group.record_processing_us, 2000);
}

#[test]
fn a_set_the_variant_would_undo_is_refused_naming_both() {
    let text = format!("{BASE}{VARIANTS}").replace("max_poll_records=0", "max_poll_records=10");
    let e = error(&text, &[r#"group.assignors=["roundrobin"]"#], Some("eager"));
    assert_eq!(e.line, None);
    assert_eq!(
        e.message,
        r#"--set "group.assignors=[\"roundrobin\"]" has no effect with variant "eager", which replaces the group's assignors with ["range"]: drop one of the two (a variant's assignors and protocol win over every --set)"#
    );
    let e = error(&text, &[r#"members.0.assignors=["range"]"#], Some("sticky"));
    assert!(
        e.message
            .contains(r#"with variant "sticky", which clears members' own assignors"#),
        "{e}"
    );
    // Without a variant, or with one that leaves the assignors alone, the --set applies.
    let roundrobin = [r#"group.assignors=["roundrobin"]"#];
    for variant in [None, Some("slow")] {
        let s = load(&text, &roundrobin, variant).unwrap();
        assert_eq!(s.members[0].assignors, ["roundrobin"]);
    }
    // A variant's own entry that its assignors undo is the file's mistake.
    let own = text.replace(
        "[variants.sticky]\n",
        "[variants.sticky]\nset = [\"group.assignors=[\\\"range\\\"]\"]\n",
    );
    let e = error(&own, &[], None);
    assert!(
        e.message.starts_with(
            r#"variant "sticky": set entry "group.assignors=[\"range\"]" has no effect"#
        ),
        "{e}"
    );
}

#[test]
fn a_bad_set_is_named_by_its_argument_and_the_files_own_error_by_its_line() {
    let e = error(BASE, &["group.session_timeout_ms=1"], None);
    assert_eq!(e.line, None);
    assert!(
        e.message.starts_with(
            r#"--set "group.session_timeout_ms=1": group.session_timeout_ms = 1 is outside"#
        ),
        "{e}"
    );
    // The file's own error keeps its line even when a --set adds a key above it.
    let broken = with("records_per_sec = 100", "records_per_sec = 100\nspeed = 3");
    let e = error(&broken, &["group.fetch_max_wait_ms=100"], None);
    assert_eq!(e.line, Some(18), "{e}");
    assert!(e.message.contains("unknown field `speed`"), "{e}");
}

#[test]
fn a_rolling_bounce_that_the_run_does_not_finish_is_refused_with_its_line() {
    let text = format!(
        "{BASE}\n[[timeline]]\nat_ms = 60000\naction = \"rolling_bounce\"\ninterval_ms = 30000\n"
    );
    let e = error(&text, &[], None);
    assert_eq!(e.line, Some(19), "{e}");
    assert_eq!(
        e.message,
        r#"timeline: rolling_bounce at 60000 ms restarts member "c3" at 125000 ms, not before duration_ms 120000 (each member leaves interval_ms 30000 after the one before and restarts duration_ms 5000 later)"#
    );
    let fits = text.replace("interval_ms = 30000", "interval_ms = 20000");
    let s = load(&fits, &[], None).unwrap();
    assert_eq!(s.timeline.last().unwrap().at_ms, 105_000);
}

#[test]
fn lifecycle_errors_name_the_line_of_the_offending_event() {
    let text = format!(
        "{BASE}\n[[timeline]]\nat_ms = 30000\naction = \"crash\"\nmember = \"c1\"\n\
         \n[[timeline]]\nat_ms = 10000\naction = \"restart\"\nmember = \"c2\"\n"
    );
    let e = error(&text, &[], None);
    assert_eq!(e.line, Some(24), "{e}");
    assert_eq!(
        e.message,
        r#"timeline: member "c2" cannot restart at 10000 ms (it is running)"#
    );
    // Events expanded from a rolling bounce point at the bounce.
    let bounce = format!(
        "{BASE}\n[[timeline]]\nat_ms = 1000\naction = \"crash\"\nmember = \"c1\"\n\
         \n[[timeline]]\nat_ms = 60000\naction = \"rolling_bounce\"\ninterval_ms = 10000\n"
    );
    let e = error(&bounce, &[], None);
    assert_eq!(e.line, Some(24), "{e}");
    assert!(e
        .message
        .contains(r#"member "c1" cannot leave at 60000 ms (it is not running)"#));
    let twice = format!(
        "{BASE}\n[[timeline]]\nat_ms = 1000\naction = \"leave\"\nmember = \"c1\"\n\
         \n[[timeline]]\nat_ms = 5000\naction = \"join\"\nmember = \"c1\"\n"
    );
    let e = error(&twice, &[], None);
    assert_eq!(e.line, Some(24), "{e}");
    assert!(e.message.contains(r#"member "c1" cannot join at 5000 ms"#));
}

#[test]
fn a_member_name_given_twice_is_refused_with_the_entry_that_repeats_it() {
    // `c` with count 3 names c1..c3; a later entry named c2 repeats one of them.
    let text = format!("{BASE}\n[[members]]\nname = \"c2\"\n");
    let e = error(&text, &[], None);
    assert_eq!(e.line, Some(19), "{e}");
    assert_eq!(e.message, r#"member "c2" is declared twice"#);
}

fn cgsim(args: &[&str], stdin: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_command_line_exits_2_on_a_limit_and_on_each_bad_assign_line() {
    let (code, out, err) = cgsim(
        &[
            "run",
            "scenarios/scale-out.toml",
            "--set",
            "topics.0.partitions=4294967295",
        ],
        "",
    );
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert_eq!(
        err,
        "scenarios/scale-out.toml: --set \"topics.0.partitions=4294967295\": topic \"orders\": partitions = 4294967295 makes 4294967295 partitions in all, above the limit of 200000\n"
    );
    let line = |members: &str, topics: &str| {
        format!(r#"{{"id":"x","assignor":"sticky","topics":{topics},"members":[{members}]}}"#)
    };
    let input = [
        line(r#"{"member_id":"a","topics":["t"]}"#, r#"{"t":2}"#),
        line(r#"{"member_id":"a","topics":["t"],"owned":{"u":[0]}}"#, r#"{"t":2}"#),
        line(
            r#"{"member_id":"a","topics":["t"],"generation":-3000000000}"#,
            r#"{"t":2}"#,
        ),
        line(r#"{"member_id":"a","topics":["t"],"owned":{"t":[-1]}}"#, r#"{"t":2}"#),
        line(
            r#"{"member_id":"a","group_instance_id":"p","topics":["t"]},{"member_id":"b","group_instance_id":"p","topics":["t"]}"#,
            r#"{"t":2}"#,
        ),
        line(r#"{"member_id":"a","topics":["t"]}"#, r#"{"t":1000000000}"#),
    ]
    .join("\n");
    let (code, out, err) = cgsim(&["assign"], &input);
    assert_eq!(code, 2);
    assert_eq!(out.lines().count(), 1, "the good line is still answered");
    let want = [
        r#"line 2: member "a": owned names topic "u", which is not in topics"#,
        r#"line 3: member "a": generation -3000000000 is outside Java's int range (-2147483648..=2147483647)"#,
        r#"line 4: member "a": owned["t"] holds -1; partitions are numbered from 0"#,
        r#"line 5: duplicate group_instance_id "p" (member "b"): a static id belongs to one member"#,
        r#"line 6: topic "t": partition count 1000000000 makes 1000000000 partitions in all, above the limit of 10000000"#,
    ];
    assert_eq!(err.lines().collect::<Vec<_>>(), want);
}

/// A value of the wrong type or range names its key's dotted path, the value and what the key
/// accepts: the broker's bound for a session timeout, the type's range otherwise (issue 81).
#[test]
fn a_value_out_of_its_types_range_names_the_key_and_the_accepted_range() {
    let e = error(
        &with("record_processing_us = 1000", "session_timeout_ms = -10"),
        &[],
        None,
    );
    assert_eq!(e.line, Some(9), "{e}");
    assert_eq!(
        e.message,
        "group.session_timeout_ms = -10: expected an integer in 6000..=1800000, the broker's group.min/max.session.timeout.ms"
    );
    let e = error(&with("count = 3", "count = -3"), &[], None);
    assert_eq!(e.line, Some(13), "{e}");
    assert_eq!(
        e.message,
        "members.0.count = -3: expected an integer in 0..=4294967295"
    );
    let e = error(
        &with(
            "record_processing_us = 1000",
            "record_processing_us = \"fast\"",
        ),
        &[],
        None,
    );
    assert_eq!(
        e.message,
        "group.record_processing_us = \"fast\": expected an integer in 0..=2147483647 (the limit of every time, Kafka's int maximum)"
    );
    let e = error(&with("name = \"t\"", "name = \"t\"\nseed = -1"), &[], None);
    assert_eq!(
        e.message,
        "seed = -1: expected an integer in 0..=18446744073709551615"
    );
}

/// A misspelled key gets the closest known one before the list of all.
#[test]
fn a_misspelled_key_gets_the_closest_known_one() {
    let e = error(
        &with("record_processing_us = 1000", "sesion_timeout_ms = 10000"),
        &[],
        None,
    );
    assert_eq!(e.line, Some(9), "{e}");
    assert!(
        e.message.starts_with(
            "unknown field `sesion_timeout_ms` (did you mean `session_timeout_ms`?), expected one of `group_id`,"
        ),
        "{}",
        e.message
    );
    // Nothing close: no guess.
    let e = error(
        &with("record_processing_us = 1000", "flavour = 1"),
        &[],
        None,
    );
    assert!(
        e.message
            .starts_with("unknown field `flavour`, expected one of `group_id`,"),
        "{}",
        e.message
    );
}

/// A negative seed is refused with the seeds' range, however it is written.
#[test]
fn a_negative_seed_is_refused_however_it_is_written() {
    let message = "\"-1\" is negative: seeds are 0 to 2^64 - 1 (18446744073709551615)";
    for args in [
        vec!["run", "scenarios/crash.toml", "--seed", "-1"],
        vec!["run", "scenarios/crash.toml", "--seed=-1"],
        vec!["explain", "scenarios/crash.toml", "--seed", "-1"],
        vec!["compare", "scenarios/crash.toml", "--seeds", "-1..3"],
        vec!["fuzz", "--seeds", "-1"],
    ] {
        let (code, out, err) = cgsim(&args, "");
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

/// `--trace` to stdout beside a JSON report is refused: the output would not be JSON.
#[test]
fn a_trace_on_stdout_with_a_json_report_is_refused() {
    for trace in [vec!["--trace"], vec!["--trace", "-"]] {
        let mut args = vec!["run", "scenarios/crash.toml", "--format", "json"];
        args.extend(&trace);
        let (code, out, err) = cgsim(&args, "");
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}");
        assert_eq!(
            err,
            "--trace: the trace and the JSON report would both go to stdout: give --trace FILE\n"
        );
    }
}

/// `cgsim check DIR` reports every file that does not load, once, runs the others, and exits 2.
#[test]
fn check_reports_every_bad_file_once_and_runs_the_others() {
    let dir = std::env::temp_dir().join(format!("cgsim-check-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = format!("{BASE}\n[[expect]]\nkey = \"rebalances.count\"\nge = 0\n");
    std::fs::write(dir.join("a-bad.toml"), with("count = 3", "count = -3")).unwrap();
    std::fs::write(dir.join("b-good.toml"), &good).unwrap();
    std::fs::write(
        dir.join("c-bad.toml"),
        with("record_processing_us = 1000", "sesion_timeout_ms = 1"),
    )
    .unwrap();
    std::fs::write(
        dir.join("d-unknown-key.toml"),
        format!("{BASE}\n[[expect]]\nkey = \"pauses.nope\"\neq = 0\n"),
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let (code, out, err) = cgsim(&["check", d], "");
    assert_eq!(code, 2, "{out}{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(lines[0].starts_with(&format!("{d}/a-bad.toml: line 13: members.0.count = -3")));
    assert!(lines[1].starts_with(&format!(
        "{d}/c-bad.toml: line 9: unknown field `sesion_timeout_ms` (did you mean"
    )));
    // The key the report lacks: once, though its entry runs under three variants.
    assert!(lines[2].starts_with(&format!(
        "{d}/d-unknown-key.toml: line 19: [[expect]] key \"pauses.nope\""
    )));
    // The good file's expectation ran under each of its variants.
    assert_eq!(out.matches("pass  ").count(), 3, "{out}");
    assert!(
        out.ends_with("check: 3 expectation(s), 0 failed, over 4 scenario(s), 1 with a key the report lacks, 2 not loaded\n"),
        "{out}"
    );
    // --set reaches every file, as `cgsim run --set` does.
    let (code, out, err) = cgsim(
        &[
            "check",
            &format!("{d}/b-good.toml"),
            "--set",
            "group.session_timeout_ms=1",
        ],
        "",
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("session_timeout_ms"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Input bounded before it is read (issue 85): what is not a regular file is refused before it
/// is opened (a FIFO with no writer would block the open, `/dev/zero` never end), a file or
/// `cgsim assign`'s input over the size limit is refused naming the limit, and
/// `--max-input-bytes` sets the limit, before or after the subcommand.
#[test]
fn special_files_and_oversized_inputs_are_refused_before_they_are_read() {
    let dir = std::env::temp_dir().join(format!("cgsim-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("s.toml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let fifo = fifo.to_str().unwrap();
    for args in [
        vec!["run", fifo],
        vec!["explain", fifo],
        vec!["compare", fifo],
        vec!["run", "/dev/zero"],
        vec!["assign", "/dev/zero"],
    ] {
        let (code, _, err) = cgsim(&args, "");
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.ends_with(": not a regular file (a FIFO, a socket or a device): give a file\n"),
            "{args:?}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let over = "scenarios/crash.toml: larger than the input limit of 100 bytes (raise it with --max-input-bytes)\n";
    for args in [
        ["--max-input-bytes", "100", "run", "scenarios/crash.toml"],
        ["run", "scenarios/crash.toml", "--max-input-bytes", "100"],
    ] {
        let (code, out, err) = cgsim(&args, "");
        assert_eq!((code, out.as_str(), err.as_str()), (2, "", over));
    }
    let (code, _, err) = cgsim(&["--max-input-bytes", "1000", "assign"], &"0".repeat(5000));
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "line 1: the input is larger than the input limit of 1000 bytes (raise it with --max-input-bytes)\n"
    );
    // Within the limit, the same command runs.
    let (code, _, err) = cgsim(
        &["--max-input-bytes", "100000", "run", "scenarios/crash.toml"],
        "",
    );
    assert_eq!(code, 0, "{err}");
}

/// A control character TOML does not allow, even in a comment, is named with its line and
/// code point; the parser alone gave no words at all (`s.toml: line 1: `).
#[test]
fn a_control_character_is_named_with_its_line() {
    let e = error(&format!("# note \u{1} here\n{BASE}"), &[], None);
    assert_eq!(e.line, Some(1), "{e}");
    assert_eq!(
        e.message,
        "a control character (U+0001) is not allowed in TOML, not even in a comment or a string (tab is the one exception)"
    );
}

/// `arrival.partition_lag_ms` with its min above its max names the line of the range.
#[test]
fn a_lag_range_upside_down_names_its_line() {
    let e = error(
        &format!("{BASE}\n[arrival]\npartition_lag_ms = {{ min = 5, max = 2 }}\n"),
        &[],
        None,
    );
    assert_eq!(e.line, Some(20), "{e}");
    assert_eq!(e.message, "arrival.partition_lag_ms: min is above max");
}

#[test]
fn a_megabyte_name_is_echoed_cut_and_an_absurd_replication_delay_refused() {
    let name = "y".repeat(1_000_000);
    let text = format!(
        "duration_ms = 1000\n[[topics]]\nname = \"{name}\"\npartitions = 0\n[[members]]\nname = \"a\"\n"
    );
    let e = cgsim::scenario::load_str("big.toml", &text, &Default::default()).unwrap_err();
    let message = e.to_string();
    assert!(message.len() < 300, "{} bytes", message.len());
    assert!(
        message.ends_with("more characters]\": partitions must be at least 1"),
        "{message}"
    );
    assert_eq!(e.line, Some(2), "the topic's entry");
    // A delay that would overflow in microseconds is refused by the time limit, with its key.
    let text = "duration_ms = 1000\n[cluster]\nreplication_delay_ms = 20000000000000000\n\
                [[topics]]\nname = \"t\"\npartitions = 1\n[[members]]\nname = \"a\"\n";
    let e = cgsim::scenario::load_str("delay.toml", text, &Default::default()).unwrap_err();
    assert!(e.message.contains("cluster.replication_delay_ms"), "{e}");
    assert_eq!(e.line, Some(3));
}
