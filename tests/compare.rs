//! `cgsim compare` as users and scripts run it: variants side by side, the same bytes for any
//! `--threads`, JSON for scripts, exit 2 on bad input. Few seeds: a scale-out run takes ~0.3 s
//! in a debug build.

use std::path::Path;
use std::process::{Command, Output};

fn cgsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(args)
        .output()
        .expect("cgsim runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The cells of a table row (columns are separated by at least two spaces).
fn row(table: &str, label: &str) -> Vec<String> {
    let line = table
        .lines()
        .find(|l| l.starts_with(label) && l[label.len()..].starts_with("  "))
        .unwrap_or_else(|| panic!("no row {label:?} in\n{table}"));
    line.split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

const SCALE_OUT: &str = "scenarios/scale-out.toml";

#[test]
fn compare_scale_out_side_by_side_and_identical_for_any_thread_count() {
    let one = cgsim(&["compare", SCALE_OUT, "--seeds", "1..6", "--threads", "1"]);
    assert_eq!(one.status.code(), Some(0), "{}", text(&one.stderr));
    let table = text(&one.stdout);
    assert!(
        table.starts_with(
            "scenario scale-out  seeds 1..6 (6)  variants eager, cooperative, consumer\n"
        ),
        "{table}"
    );
    let header = row(&table, "figure");
    assert_eq!(
        header,
        ["figure", "eager", "cooperative", "consumer"],
        "{table}"
    );
    // Every figure row: label, eager's cell, then cooperative's and consumer's, each with its
    // ratio to eager.
    for label in [
        "rebalances",
        "revocations",
        "moved",
        "moved minimum",
        "stop-the-world p50 ms",
        "stop-the-world p99 ms",
        "stop-the-world max ms",
        "unavailable total ms",
        "unavailable p99 ms",
        "unavailable max ms",
        "lag peak partition",
        "lag total peak",
        "lag catch-up ms (max)",
        "lag never caught up",
        "join hit rate",
        "processed twice",
        "violations",
    ] {
        assert_eq!(row(&table, label).len(), 6, "{label}: {table}");
    }
    // Eager revokes all 24 on every seed, cooperative only what moves, and needs a follow-up.
    let revocations = row(&table, "revocations");
    assert_eq!(revocations[1], "24", "{table}");
    assert!(revocations[3].starts_with('x'), "{table}");
    let ratio: f64 = revocations[3][1..].parse().unwrap();
    assert!(ratio < 0.5, "{table}");
    assert_eq!(
        row(&table, "rebalances")[1..],
        ["1", "2", "x2.00", "1", "x1.00"],
        "{table}"
    );
    assert_eq!(
        row(&table, "violations")[1..],
        ["0", "0", "-", "0", "-"],
        "{table}"
    );

    let two = cgsim(&["compare", SCALE_OUT, "--seeds", "1..6", "--threads", "2"]);
    assert_eq!(two.status.code(), Some(0), "{}", text(&two.stderr));
    assert_eq!(
        text(&one.stdout),
        text(&two.stdout),
        "--threads 1 and 2 differ"
    );
    // Piped: no progress bar, nothing on stderr.
    assert_eq!(text(&two.stderr), "");
}

#[test]
fn compare_json_has_every_figure_and_matches_cgsim_run() {
    let out = cgsim(&[
        "compare",
        SCALE_OUT,
        "--seeds",
        "1..2",
        "--variants",
        "cooperative,eager",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(j["scenario"], "scale-out");
    assert_eq!(j["seeds"], serde_json::json!([1, 2]));
    assert_eq!(j["baseline"], "cooperative");
    let variants: Vec<&String> = j["variants"].as_object().unwrap().keys().collect();
    assert_eq!(variants, ["cooperative", "eager"]);
    let keys: Vec<&str> = j["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    for key in [
        "rebalances.count",
        "revocations.total",
        "moved.total",
        "moved.minimum",
        "pauses.stop_the_world_ms.p50",
        "pauses.stop_the_world_ms.p99",
        "pauses.stop_the_world_ms.max",
        "pauses.unavailable_ms.total",
        "pauses.unavailable_ms.p99",
        "pauses.unavailable_ms.max",
        "lag.peak",
        "lag.total_peak",
        "lag.catch_up_ms",
        "lag.never_caught_up",
        "join.hit_rate",
        "records.processed_twice",
        "invariants.violations",
    ] {
        assert!(keys.contains(&key), "{key}");
        for v in ["cooperative", "eager"] {
            let cell = &j["variants"][v][key];
            for stat in ["median", "min", "p10", "p90", "max", "ratio", "per_seed"] {
                assert!(cell.get(stat).is_some(), "{v} {key} {stat}");
            }
            assert_eq!(cell["per_seed"].as_array().unwrap().len(), 2);
        }
    }
    // The per-seed values are exactly what `cgsim run` reports for that seed and variant.
    let run = cgsim(&[
        "run",
        SCALE_OUT,
        "--seed",
        "2",
        "--variant",
        "eager",
        "--format",
        "json",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let r: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let eager = &j["variants"]["eager"];
    assert_eq!(
        eager["revocations.total"]["per_seed"][1],
        r["revocations"]["total"]
    );
    assert_eq!(eager["moved.total"]["per_seed"][1], r["moved"]["total"]);
    assert_eq!(
        eager["pauses.stop_the_world_ms.p99"]["per_seed"][1],
        r["pauses"]["stop_the_world_ms"]["p99"]
    );
    assert_eq!(
        eager["pauses.unavailable_ms.total"]["per_seed"][1],
        r["pauses"]["unavailable_ms"]["total"]
    );
    // No join in scale-out: the hit rate is undefined, not 0.
    assert_eq!(eager["join.hit_rate"]["median"], serde_json::Value::Null);
    assert_eq!(j["violations"], serde_json::json!([]));
}

#[test]
fn compare_defaults_to_the_scenario_seed_and_snapshot_variants() {
    let out = cgsim(&["compare", SCALE_OUT]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(
        table.starts_with("scenario scale-out  seed 1  variants eager, cooperative, consumer\n"),
        "{table}"
    );
    // Seed 1 is the snapshot's run: eager revokes 24 and moves 10 against a minimum of 4.
    assert_eq!(
        row(&table, "revocations")[1..],
        ["24", "4", "x0.17", "4", "x0.17"],
        "{table}"
    );
    assert_eq!(
        row(&table, "moved")[1..],
        ["10", "4", "x0.40", "4", "x0.40"],
        "{table}"
    );
}

#[test]
fn compare_refuses_bad_input_with_exit_2() {
    let cases: [(&[&str], &str); 7] = [
        (&["--seeds", "5..2"], "empty range: 5 is after 2"),
        (&["--seeds", "1..x"], "\"x\" is not a seed"),
        (&["--variants", "eager,nope"], "unknown variant \"nope\""),
        (
            &["--variants", "eager,eager"],
            "variant \"eager\" named twice",
        ),
        (&["--threads", "0"], "--threads"),
        (
            &["--set", "group.session_timeout_ms=soon"],
            "scale-out.toml",
        ),
        (&["--format", "yaml"], "--format"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["compare", SCALE_OUT];
        all.extend_from_slice(args);
        let out = cgsim(&all);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert_eq!(text(&out.stdout), "", "{args:?}");
    }
    let out = cgsim(&["compare", "scenarios/no-such-file.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("scenarios/no-such-file.toml: cannot read"),
        "{err}"
    );
}

#[test]
fn readme_shows_the_real_compare_output() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let command = "$ cgsim compare scenarios/scale-out.toml --seeds 1..20\n";
    let start = readme
        .find(command)
        .expect("the README shows the compare example")
        + command.len();
    let shown = &readme[start..start + readme[start..].find("```").expect("end of the block")];
    let out = cgsim(&["compare", SCALE_OUT, "--seeds", "1..20"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        shown,
        text(&out.stdout),
        "README's cgsim compare output is stale"
    );
}
