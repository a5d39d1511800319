//! `cgsim sweep` and `cgsim merge` as users, scripts and batch engines run them: shards merged
//! print the unsharded summary byte for byte, the same bytes for any `--threads`, every
//! engine's shard index read from its own variable, `--resume` after a kill, the
//! recommendation the runs measure, and exit 2 on bad input. Small grids and few seeds: a
//! rolling-bounce run takes ~60 ms in a test build.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ROLLING_BOUNCE: &str = "scenarios/rolling-bounce.toml";

fn cgsim_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cgsim"));
    c.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(args);
    // The engines' variables of whoever runs the tests must not leak into a run.
    for v in [
        "JOB_COMPLETION_INDEX",
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_MIN",
        "TEST_SHARD_INDEX",
        "TEST_TOTAL_SHARDS",
        "TEST_SHARD_STATUS_FILE",
    ] {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("cgsim runs")
}

fn cgsim(args: &[&str]) -> Output {
    cgsim_with(args, &[])
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A scratch directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cgsim-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// 2 heartbeat values (3000 is Kafka's default, so no point is added) x 2 variants x 4 seeds.
const GRID: &[&str] = &[
    "--grid",
    "group.heartbeat_interval_ms=1000,3000",
    "--variants",
    "eager,cooperative",
    "--seeds",
    "1..4",
];

fn sweep(extra: &[&str]) -> Output {
    let mut args = vec!["sweep", ROLLING_BOUNCE];
    args.extend_from_slice(GRID);
    args.extend_from_slice(extra);
    cgsim(&args)
}

#[test]
fn three_shards_merged_print_the_unsharded_summary_and_lines_byte_for_byte() {
    let dir = scratch("shards");
    let all = path(&dir, "all.jsonl");
    let whole = sweep(&[
        "--out",
        &all,
        "--threads",
        "1",
        "--objective",
        "pauses.unavailable_ms.total",
    ]);
    assert_eq!(whole.status.code(), Some(0), "{}", text(&whole.stderr));
    let summary = text(&whole.stdout);
    assert!(
        summary.starts_with("sweep rolling-bounce  seeds 1..4 (4)  variants eager, cooperative  points 2  runs 16\n"),
        "{summary}"
    );
    assert!(summary.contains("\nrecommended: "), "{summary}");
    let lines = std::fs::read_to_string(&all).unwrap();
    assert_eq!(lines.lines().count(), 17);

    let mut parts = Vec::new();
    let mut shard_lines = 0;
    for i in 1..=3 {
        let part = path(&dir, &format!("part-{i}.jsonl"));
        let shard = format!("{i}/3");
        let out = sweep(&["--shard", &shard, "--out", &part]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let first = text(&out.stdout).lines().next().unwrap().to_string();
        assert!(
            first.contains(&format!("(shard {i}/3: `cgsim merge` joins")),
            "{first}"
        );
        let n = std::fs::read_to_string(&part).unwrap().lines().count() - 1;
        assert!(n < 16, "shard {i} ran {n} of 16");
        shard_lines += n;
        parts.push(part);
    }
    assert_eq!(shard_lines, 16, "every run in exactly one shard");

    let merged = path(&dir, "merged.jsonl");
    let mut args = vec![
        "merge",
        parts[2].as_str(),
        parts[0].as_str(),
        parts[1].as_str(),
    ];
    args.extend([
        "--out",
        merged.as_str(),
        "--objective",
        "pauses.unavailable_ms.total",
    ]);
    let m = cgsim(&args);
    assert_eq!(m.status.code(), Some(0), "{}", text(&m.stderr));
    assert_eq!(
        text(&m.stdout),
        summary,
        "merge prints the unsharded summary"
    );
    assert_eq!(
        std::fs::read_to_string(&merged).unwrap(),
        lines,
        "merged lines, in the unsharded order, are the unsharded run's"
    );

    // The same bytes for any number of threads, and with the lines on stdout the summary goes
    // to stderr.
    let two = sweep(&[
        "--threads",
        "2",
        "--objective",
        "pauses.unavailable_ms.total",
    ]);
    assert_eq!(two.status.code(), Some(0));
    assert_eq!(text(&two.stdout), lines);
    assert_eq!(text(&two.stderr), summary);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_line_holds_compares_figures_for_its_run() {
    let out = sweep(&["--threads", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let mut lines = stdout.lines();
    let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["cgsim_sweep"], "header");
    assert_eq!(header["schema_version"], 1);
    assert_eq!(header["cgsim_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(header["scenario"], "rolling-bounce");
    assert_eq!(header["scenario_sha256"].as_str().unwrap().len(), 64);
    assert_eq!(header["seeds"], serde_json::json!({"first": 1, "last": 4}));
    assert_eq!(header["shard"], serde_json::json!({"index": 1, "count": 1}));
    assert_eq!(
        header["grid"][0]["values"],
        serde_json::json!(["1000", "3000"])
    );
    assert_eq!(header["points"][1]["kafka_defaults"], true);
    let first: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(
        (&first["point"], &first["variant"], &first["seed"]),
        (&Value::from("p1"), &Value::from("eager"), &Value::from(1))
    );
    // The run is `cgsim run` with those settings: the same digest, the same figures.
    let run = cgsim(&[
        "run",
        ROLLING_BOUNCE,
        "--variant",
        "eager",
        "--seed",
        "1",
        "--set",
        "group.heartbeat_interval_ms=1000",
        "--format",
        "json",
    ]);
    let report: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(first["digest"], report["digest"]);
    assert_eq!(
        first["figures"]["rebalances.count"],
        report["rebalances"]["count"]
    );
    assert_eq!(
        first["figures"]["pauses.unavailable_ms.total"],
        report["pauses"]["unavailable_ms"]["total"]
    );
    assert_eq!(first["figures"]["join.hit_rate"], Value::Null);
    assert!(first.get("lag").is_none() && !stdout.contains("series"));
}

/// The objective figure's nearest-rank median per (point, variant), from the JSON lines alone.
fn medians(lines: &str, figure: &str) -> BTreeMap<(String, String), u64> {
    let mut values: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    for line in lines.lines().skip(1) {
        let v: Value = serde_json::from_str(line).unwrap();
        let key = (
            v["point"].as_str().unwrap().to_string(),
            v["variant"].as_str().unwrap().to_string(),
        );
        values
            .entry(key)
            .or_default()
            .push(v["figures"][figure].as_u64().unwrap());
    }
    values
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_unstable();
            let rank = v.len().div_ceil(2);
            (k, v[rank - 1])
        })
        .collect()
}

#[test]
fn rolling_bounce_grid_recommends_what_the_runs_measure() {
    let dir = scratch("recommend");
    let out_file = path(&dir, "rb.jsonl");
    let out = cgsim(&[
        "sweep",
        ROLLING_BOUNCE,
        "--grid",
        "group.session_timeout_ms=10000,45000",
        "--grid",
        "group.heartbeat_interval_ms=1000,3000",
        "--variants",
        "eager,cooperative",
        "--seeds",
        "1..5",
        "--out",
        &out_file,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines = std::fs::read_to_string(&out_file).unwrap();
    for (objective, maximise) in [
        ("pauses.unavailable_ms.total", false),
        ("pauses.stop_the_world_ms.p99", false),
        ("records.processed_twice", false),
        ("max:lag.total_peak", true),
    ] {
        let figure = objective.trim_start_matches("max:");
        let m = cgsim(&["merge", &out_file, "--objective", objective]);
        assert_eq!(m.status.code(), Some(0), "{}", text(&m.stderr));
        let summary = text(&m.stdout);
        let rec = summary
            .lines()
            .find_map(|l| l.strip_prefix("recommended: "))
            .unwrap_or_else(|| panic!("no recommendation in\n{summary}"));
        let (point, rest) = rec.split_once(", variant ").unwrap();
        let variant = rest.split(':').next().unwrap();
        let medians = medians(&lines, figure);
        let best = if maximise {
            medians.values().max()
        } else {
            medians.values().min()
        }
        .copied()
        .unwrap();
        let chosen = medians[&(point.to_string(), variant.to_string())];
        assert_eq!(chosen, best, "{objective}: {rec}\n{summary}");
        // The margin over the next best is the gap to the best median of the rest.
        let median_line = summary
            .lines()
            .find(|l| l.starts_with("  median "))
            .unwrap();
        assert!(
            median_line.starts_with(&format!("  median {best}")),
            "{median_line}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn resume_after_a_kill_finishes_the_same_file() {
    let dir = scratch("resume");
    let all = path(&dir, "all.jsonl");
    assert_eq!(sweep(&["--out", &all]).status.code(), Some(0));
    let whole = std::fs::read_to_string(&all).unwrap();
    // Killed mid-line after a few runs: a partial last line.
    let cut = whole.len() * 2 / 5;
    assert_ne!(&whole[cut - 1..cut], "\n");
    let part = path(&dir, "part.jsonl");
    std::fs::write(&part, &whole[..cut]).unwrap();
    let resumed = sweep(&["--out", &part, "--resume"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    assert!(text(&resumed.stderr).contains("dropped a partial last line"));
    assert_eq!(std::fs::read_to_string(&part).unwrap(), whole);
    // Resuming a finished file runs nothing and prints the same summary.
    let again = sweep(&["--out", &part, "--resume"]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&part).unwrap(), whole);
    assert_eq!(text(&again.stdout), text(&sweep(&["--out", &all]).stdout));
    // --resume on a file that does not exist yet starts it (a retried job runs one command).
    let fresh = path(&dir, "fresh.jsonl");
    assert_eq!(sweep(&["--out", &fresh, "--resume"]).status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&fresh).unwrap(), whole);
    // Another sweep's file is refused, and left alone.
    let other = cgsim(&[
        "sweep",
        ROLLING_BOUNCE,
        "--grid",
        "group.heartbeat_interval_ms=1000,3000",
        "--variants",
        "eager,cooperative",
        "--seeds",
        "1..5",
        "--out",
        &part,
        "--resume",
    ]);
    assert_eq!(other.status.code(), Some(2));
    assert!(
        text(&other.stderr).contains("it holds another sweep (its seeds: "),
        "{}",
        text(&other.stderr)
    );
    assert_eq!(std::fs::read_to_string(&part).unwrap(), whole);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tiny sweep (1 point + Kafka's defaults, 1 variant, 3 seeds) with these variables.
fn env_sweep(shard: &str, env: &[(&str, &str)]) -> Output {
    cgsim_with(
        &[
            "sweep",
            ROLLING_BOUNCE,
            "--grid",
            "group.heartbeat_interval_ms=1000",
            "--variants",
            "eager",
            "--seeds",
            "1..3",
            "--shard",
            shard,
        ],
        env,
    )
}

fn assert_same_shard(env: &[(&str, &str)], fixed: &str) {
    let from_env = env_sweep("env/3", env);
    assert_eq!(
        from_env.status.code(),
        Some(0),
        "{env:?}: {}",
        text(&from_env.stderr)
    );
    let expected = env_sweep(fixed, &[]);
    assert_eq!(
        text(&from_env.stdout),
        text(&expected.stdout),
        "{env:?} is shard {fixed}"
    );
    assert_eq!(text(&from_env.stderr), text(&expected.stderr));
}

#[test]
fn kubernetes_indexed_job_index_counts_from_zero() {
    assert_same_shard(&[("JOB_COMPLETION_INDEX", "0")], "1/3");
    assert_same_shard(&[("JOB_COMPLETION_INDEX", "2")], "3/3");
    let out = env_sweep("env/3", &[("JOB_COMPLETION_INDEX", "3")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("JOB_COMPLETION_INDEX=3"));
}

#[test]
fn slurm_array_task_counts_from_the_arrays_minimum() {
    assert_same_shard(
        &[("SLURM_ARRAY_TASK_ID", "5"), ("SLURM_ARRAY_TASK_MIN", "4")],
        "2/3",
    );
    let out = env_sweep("env/3", &[("SLURM_ARRAY_TASK_ID", "5")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("SLURM_ARRAY_TASK_MIN is not"));
}

#[test]
fn bazel_test_shard_index_counts_from_zero_and_the_status_file_is_touched() {
    let dir = scratch("bazel");
    let status = path(&dir, "shard-status");
    assert_same_shard(
        &[
            ("TEST_SHARD_INDEX", "1"),
            ("TEST_TOTAL_SHARDS", "3"),
            ("TEST_SHARD_STATUS_FILE", &status),
        ],
        "2/3",
    );
    assert!(Path::new(&status).exists(), "Bazel's sharding protocol");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_first_engine_variable_set_wins_and_none_is_an_error() {
    assert_same_shard(
        &[
            ("JOB_COMPLETION_INDEX", "2"),
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("TEST_SHARD_INDEX", "0"),
        ],
        "3/3",
    );
    let out = env_sweep("env/3", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr)
        .contains("none of JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID, TEST_SHARD_INDEX is set"));
}

#[test]
fn merge_refuses_mixed_headers_and_missing_shards() {
    let dir = scratch("mixed");
    let a = path(&dir, "a.jsonl");
    let b = path(&dir, "b.jsonl");
    let tiny = |seeds: &str, shard: &str, out: &str| {
        cgsim(&[
            "sweep",
            ROLLING_BOUNCE,
            "--grid",
            "group.heartbeat_interval_ms=1000",
            "--variants",
            "eager",
            "--seeds",
            seeds,
            "--shard",
            shard,
            "--out",
            out,
        ])
    };
    assert_eq!(tiny("1..3", "1/2", &a).status.code(), Some(0));
    assert_eq!(tiny("1..4", "2/2", &b).status.code(), Some(0));
    let m = cgsim(&["merge", &a, &b]);
    assert_eq!(m.status.code(), Some(2));
    let e = text(&m.stderr);
    assert!(
        e.contains("not a shard of the same sweep as") && e.contains("refusing to mix"),
        "{e}"
    );
    assert!(m.stdout.is_empty());
    let m = cgsim(&["merge", &a]);
    assert_eq!(m.status.code(), Some(2));
    assert!(
        text(&m.stderr).contains("runs are missing"),
        "{}",
        text(&m.stderr)
    );
    let not_sweep = path(&dir, "c.jsonl");
    std::fs::write(&not_sweep, "{\"hello\": 1}\n").unwrap();
    let m = cgsim(&["merge", &not_sweep]);
    assert_eq!(m.status.code(), Some(2));
    assert!(text(&m.stderr).contains("not a cgsim sweep header"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_named_with_exit_2_never_a_panic() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=[1000,2000",
                "--seeds",
                "1..2",
            ],
            "unclosed bracket",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=1000,,2000",
                "--seeds",
                "1..2",
            ],
            "value 2 is empty",
        ),
        (
            &["--grid", "group.heartbeat_interval_ms", "--seeds", "1..2"],
            "expected KEY=V1,V2",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=1000,1_000",
                "--seeds",
                "1..2",
            ],
            "given twice",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_intervl_ms=1000",
                "--seeds",
                "1..2",
            ],
            "unknown field `heartbeat_intervl_ms`",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=50000",
                "--seeds",
                "1..2",
            ],
            "grid point p1 (group.heartbeat_interval_ms=50000)",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=1000",
                "--seeds",
                "5..2",
            ],
            "empty range",
        ),
        (
            &["--grid", "group.heartbeat_interval_ms=1000", "--seeds", "x"],
            "is not a seed",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=1000",
                "--seeds",
                "1..2",
                "--shard",
                "0/3",
            ],
            "numbered from 1",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=1000",
                "--seeds",
                "1..2",
                "--shard",
                "3",
            ],
            "expected I/N",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=1000",
                "--seeds",
                "1..2",
                "--objective",
                "pauses.nothing",
            ],
            "unknown figure \"pauses.nothing\"",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=1000",
                "--seeds",
                "1..2",
                "--resume",
            ],
            "--resume needs --out",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=1000",
                "--seeds",
                "1..2",
                "--variants",
                "nope",
            ],
            "unknown variant \"nope\"",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=1000",
                "--grid",
                "group.heartbeat_interval_ms=2000",
                "--seeds",
                "1..2",
            ],
            "already on the grid",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=1000",
                "--set",
                "group.heartbeat_interval_ms=2000",
                "--seeds",
                "1..2",
            ],
            "both set group.heartbeat_interval_ms",
        ),
        (
            &[
                "--grid",
                "group.heartbeat_interval_ms=1000",
                "--seeds",
                "0..9999999",
            ],
            "more than",
        ),
        (&["--seeds", "1..2"], "--grid"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["sweep", ROLLING_BOUNCE];
        all.extend_from_slice(args);
        let out = cgsim(&all);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = cgsim(&["merge", "no/such/file.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no/such/file.jsonl: cannot read"));
}

#[test]
fn kafkas_defaults_are_a_point_of_their_own_unless_on_the_grid() {
    let out = cgsim(&[
        "sweep",
        ROLLING_BOUNCE,
        "--grid",
        "group.session_timeout_ms=10000",
        "--grid",
        "group.heartbeat_interval_ms=1000,2000",
        "--variants",
        "cooperative",
        "--seeds",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = text(&out.stderr);
    assert!(summary.contains("points 3  runs 3\n"), "{summary}");
    assert!(
        summary.contains("\n  p3 group.session_timeout_ms=45000 group.heartbeat_interval_ms=3000  Kafka's defaults (the keys left out of the file)\n"),
        "{summary}"
    );
    // The defaults point runs the file without those keys: the same run as no --set at all.
    let lines = text(&out.stdout);
    let last: Value = serde_json::from_str(lines.lines().last().unwrap()).unwrap();
    let plain = cgsim(&[
        "run",
        ROLLING_BOUNCE,
        "--variant",
        "cooperative",
        "--seed",
        "1",
        "--format",
        "json",
    ]);
    let report: Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert_eq!(last["digest"], report["digest"]);
}

/// `deploy/sweep-job.yaml`'s container command, item by item.
fn manifest_command(manifest: &str) -> Vec<String> {
    let mut lines = manifest.lines().skip_while(|l| l.trim() != "command:");
    lines.next().expect("a command: list");
    lines
        .map_while(|l| l.trim_start().strip_prefix("- "))
        .map(|item| item.trim().to_string())
        .collect()
}

#[test]
fn the_kubernetes_manifest_runs_a_valid_sharded_sweep() {
    let manifest = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/sweep-job.yaml"),
    )
    .unwrap();
    let command = manifest_command(&manifest);
    assert_eq!(command[..2], ["cgsim", "sweep"]);
    let completions: u64 = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("completions: "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(manifest.contains("completionMode: Indexed"));
    let at = command.iter().position(|a| a == "--shard").unwrap();
    assert_eq!(command[at + 1], format!("env/{completions}"));
    // The same command line, on one seed, in a directory of our own: each index its shard,
    // then merge.
    let dir = scratch("k8s");
    let mut parts = Vec::new();
    for index in 0..completions {
        let args: Vec<String> = command[1..]
            .iter()
            .map(|a| {
                if a == "1..1000" {
                    "1..1".to_string()
                } else {
                    a.replace("/results", &dir.display().to_string())
                        .replace("$(JOB_COMPLETION_INDEX)", &index.to_string())
                }
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = cgsim_with(&args, &[("JOB_COMPLETION_INDEX", &index.to_string())]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "index {index}: {}",
            text(&out.stderr)
        );
        parts.push(path(&dir, &format!("part-{index}.jsonl")));
    }
    let mut args = vec!["merge"];
    args.extend(parts.iter().map(String::as_str));
    let m = cgsim(&args);
    assert_eq!(m.status.code(), Some(0), "{}", text(&m.stderr));
    assert!(
        text(&m.stdout).contains("points 9  runs 18\n"),
        "{}",
        text(&m.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn runs_with_invariant_violations_are_listed_and_exit_1() {
    // poll-loop's c3 outlasts its poll interval again and again: the group never settles.
    let out = cgsim(&[
        "sweep",
        "scenarios/poll-loop.toml",
        "--grid",
        "group.heartbeat_interval_ms=1000",
        "--variants",
        "eager",
        "--seeds",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let summary = text(&out.stderr);
    assert!(
        summary.contains("runs with invariant violations: 2\n  p1 eager seed 1: 1 (not_settled)\n"),
        "{summary}"
    );
    let line: Value = serde_json::from_str(text(&out.stdout).lines().nth(1).unwrap()).unwrap();
    assert_eq!(line["violations"], serde_json::json!(["not_settled"]));
}

// ---- The sweep's parsers fuzzed: a result or a clean error, never a panic ----

mod fuzz {
    use cgsim::sweep::grid::{parse_grid, split_values};
    use cgsim::sweep::lines::read;
    use cgsim::sweep::objective::parse_objective;
    use cgsim::sweep::shard::parse_shard;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn grid_shard_objective_and_line_parsers_never_panic(s in "\\PC{0,60}") {
            let _ = split_values(&s);
            let _ = parse_grid(&s);
            let _ = parse_grid(&format!("group.session_timeout_ms={s}"));
            let _ = parse_shard(&s);
            let _ = parse_objective(&s);
            let _ = read(&s);
            let _ = read(&format!("{{\"cgsim_sweep\":\"header\"}}\n{s}\n"));
        }

        #[test]
        fn values_without_commas_or_brackets_split_back(values in proptest::collection::vec("[a-z0-9_ ]{0,8}[a-z0-9_]", 1..6)) {
            let joined = values.join(",");
            let split = split_values(&joined).unwrap();
            let trimmed: Vec<String> = values.iter().map(|v| v.trim().to_string()).collect();
            prop_assert_eq!(split, trimmed);
        }
    }
}

#[test]
fn kafkas_defaults_that_do_not_load_are_left_out_and_said_so() {
    // A heartbeat of 50 s needs the grid's 60 s session timeout: Kafka's 45 s does not hold it.
    let out = cgsim(&[
        "sweep",
        ROLLING_BOUNCE,
        "--grid",
        "group.session_timeout_ms=60000",
        "--set",
        "group.heartbeat_interval_ms=50000",
        "--variants",
        "eager",
        "--seeds",
        "1",
        "--objective",
        "pauses.unavailable_ms.total",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = text(&out.stderr);
    assert!(summary.contains("points 1  runs 1\n"), "{summary}");
    assert!(
        summary.contains("\n  Kafka's defaults: not run: under variant eager, --set \"group.heartbeat_interval_ms=50000\": group.heartbeat_interval_ms = 50000 must be positive and below session_timeout_ms (45000)\n"),
        "{summary}"
    );
    assert!(
        summary.contains("\n  over Kafka's defaults: not run (under variant eager, "),
        "{summary}"
    );
    let header: Value = serde_json::from_str(text(&out.stdout).lines().next().unwrap()).unwrap();
    assert!(header["kafka_defaults_not_run"]
        .as_str()
        .unwrap()
        .contains("below session_timeout_ms"));
}
