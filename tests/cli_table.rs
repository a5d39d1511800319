//! `cgsim assign --table` as people and scripts use it: the table's rows, the preset, and exit 2
//! with a reason for bad arguments.

use std::process::{Command, Output};

fn cgsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(args)
        .output()
        .expect("cgsim runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The cells of the first row starting with `label` after the block header `header`.
fn row(out: &str, header: &str, label: &str) -> Vec<String> {
    let block = out
        .split(&format!("\n{header}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("no block {header:?} in:\n{out}"));
    let line = block
        .lines()
        .find(|l| l.starts_with(&format!("{label} ")) || *l == label)
        .unwrap_or_else(|| panic!("no row {label:?} in block {header:?}:\n{out}"));
    line[label.len()..]
        .split_whitespace()
        .map(String::from)
        .collect()
}

const ASSIGNORS: &str =
    "range  roundrobin  sticky  cooperative-sticky  uniform  server-range  co-partition";

#[test]
fn table_prints_counts_per_member_for_every_assignor() {
    let out = cgsim(&[
        "assign",
        "--table",
        "--topics",
        "t3a=3,t3b=3,t3c=3",
        "--members",
        "2,3,4,10",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.starts_with("topics t3a=3,t3b=3,t3c=3 (9 partitions)\n"),
        "{s}"
    );
    assert!(s.contains(ASSIGNORS), "{s}");
    let four = "4 members, all joined a fresh group together";
    // Columns: range roundrobin sticky cooperative-sticky uniform server-range co-partition.
    assert_eq!(row(&s, four, "c1")[..4], ["3", "3", "3", "3"]);
    assert_eq!(row(&s, four, "c4")[..3], ["0", "2", "2"]);
    assert_eq!(row(&s, four, "idle members")[..2], ["1", "0"]);
    assert_eq!(row(&s, four, "rebalances"), ["1"; 7]);
    let ten = "10 members, all joined a fresh group together";
    assert_eq!(row(&s, ten, "idle members")[..3], ["7", "1", "1"]);
    let two = "2 members, all joined a fresh group together";
    assert_eq!(row(&s, two, "c1")[..3], ["6", "5", "5"]);
    assert_eq!(row(&s, two, "c2")[..3], ["3", "4", "4"]);
}

#[test]
fn table_joins_change_the_sticky_layout_and_count_rebalances() {
    let out = cgsim(&[
        "assign",
        "--table",
        "--detail",
        "--topics",
        "t3a=3,t3b=3,t3c=3",
        "--members",
        "2",
        "--joins",
        "2=one-by-one",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let two = "2 members, joined one by one";
    let c1 = row(&s, two, "c1");
    // range, roundrobin, sticky: count then partitions.
    assert_eq!(
        c1[..6],
        [
            "6",
            "t3a:0,1;t3b:0,1;t3c:0,1",
            "5",
            "t3a:0,2;t3b:1;t3c:0,2",
            "5",
            "t3a:0,1;t3b:0,1;t3c:0"
        ]
    );
    // cooperative-sticky needs a follow-up rebalance to hand over what c1 revoked.
    assert_eq!(row(&s, two, "rebalances")[..4], ["2", "2", "2", "3"]);
}

#[test]
fn table_preset_seed_001_prints_the_published_table() {
    let out = cgsim(&["assign", "--table", "--preset", "seed-001"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.contains("topic ids (uniform): t3a=jMdmEWaRDT79HRSo1WuUPg,"),
        "{s}"
    );
    let four = "4 members, 3 joined together, then 1 more";
    assert_eq!(row(&s, four, "m-668")[..4], ["0", "2", "2", "2"]);
    assert!(s.contains("topics u1=1,u5=5 (6 partitions)"), "{s}");
    assert!(s.contains("topics t=3 (3 partitions)"), "{s}");
    let detail = cgsim(&["assign", "--table", "--preset", "seed-001", "--detail"]);
    assert!(text(&detail.stdout).contains("t3a:0,1;t3b:0,1;t3c:0"));
}

#[test]
fn table_takes_member_and_topic_ids() {
    let out = cgsim(&[
        "assign",
        "--table",
        "--topics",
        "orders=4",
        "--members",
        "2",
        "--member-ids",
        "pod-b,pod-a",
        "--topic-ids",
        "orders=jMdmEWaRDT79HRSo1WuUPg",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("orders=jMdmEWaRDT79HRSo1WuUPg"), "{s}");
    assert_eq!(
        row(&s, "2 members, all joined a fresh group together", "pod-b").len(),
        7
    );
}

fn fails_with(args: &[&str], needle: &str) {
    let out = cgsim(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn table_bad_arguments_exit_2_with_a_reason() {
    let t = ["assign", "--table"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        t.iter().chain(extra.iter()).copied().collect()
    };
    fails_with(
        &with(&["--topics", "t3a:3", "--members", "2"]),
        "NAME=PARTITIONS",
    );
    fails_with(
        &with(&["--topics", "t=0", "--members", "2"]),
        "at least 1 partition",
    );
    fails_with(
        &with(&["--topics", "t=3", "--members", "0"]),
        "at least 1 member",
    );
    fails_with(
        &with(&["--topics", "t=3", "--members", "2", "--joins", "sideways"]),
        "unknown join history",
    );
    fails_with(
        &with(&["--topics", "t=3", "--members", "4", "--joins", "4=3+2"]),
        "adds up to 5",
    );
    fails_with(
        &with(&["--topics", "t=3", "--members", "2", "--joins", "5=all"]),
        "no group of 5",
    );
    fails_with(
        &with(&["--topics", "t=3", "--members", "3", "--member-ids", "a,b"]),
        "2 ids",
    );
    fails_with(
        &with(&[
            "--topics",
            "t=3",
            "--members",
            "2",
            "--topic-ids",
            "t=short",
        ]),
        "Kafka Uuid",
    );
    fails_with(
        &with(&[
            "--topics",
            "t=3",
            "--members",
            "2",
            "--topic-ids",
            "u=jMdmEWaRDT79HRSo1WuUPg",
        ]),
        "not in --topics",
    );
    fails_with(&with(&["--members", "2"]), "--topics");
    fails_with(&with(&["--topics", "t=3"]), "--members");
    fails_with(&with(&["--preset", "seed-999"]), "unknown preset");
    // Mixing the table with its JSON-lines input, or table options without --table: clap says so.
    fails_with(
        &["assign", "--table", "in.jsonl", "--preset", "seed-001"],
        "cannot be used with",
    );
    fails_with(&["assign", "--topics", "t=3"], "--table");
    fails_with(
        &[
            "assign",
            "--table",
            "--preset",
            "seed-001",
            "--members",
            "2",
        ],
        "cannot be used with",
    );
}

#[test]
fn readme_shows_the_real_preset_output() {
    let readme = include_str!("../README.md");
    let start = "$ cgsim assign --table --preset seed-001\n";
    let shown = readme
        .split(start)
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README has the preset example");
    let out = cgsim(&["assign", "--table", "--preset", "seed-001"]);
    assert_eq!(shown, text(&out.stdout), "README's table is out of date");
}
