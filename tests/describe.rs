//! `cgsim run --describe`: after the text report, the group at the run's end in the shapes of
//! Kafka 4.x's `kafka-consumer-groups --describe --members --verbose` and `--describe --offsets`.

use cgsim::java::{bucket_index, string_hash};
use cgsim::report::render_describe;
use cgsim::scenario::{load_str, LoadOptions};
use cgsim::world::{run, RunOptions};
use std::process::{Command, Output};

fn cgsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cgsim runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn scale_out_in_kafkas_shapes() {
    let out = cgsim(&["run", "scenarios/scale-out.toml", "--describe"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // A Stable group: the tool prints no warning.
    assert_eq!(text(&out.stderr), "");
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("scale-out--describe", text(&out.stdout));
    });
}

#[test]
fn the_text_report_comes_first_unchanged() {
    let plain = cgsim(&["run", "scenarios/scale-out.toml"]);
    let described = cgsim(&["run", "scenarios/scale-out.toml", "--describe"]);
    let (plain, described) = (text(&plain.stdout), text(&described.stdout));
    let tables = described
        .strip_prefix(&plain)
        .expect("the report, then the tables");
    assert!(tables.starts_with(
        "\nkafka-consumer-groups --describe --group cgsim-group --members --verbose  (at the run's end, 460000 ms)\n\nGROUP "
    ));
    assert!(tables
        .contains("\nkafka-consumer-groups --describe --group cgsim-group --offsets  (at the run's end, 460000 ms)\n\nGROUP "));
}

#[test]
fn members_come_in_the_coordinators_hash_map_order() {
    let out = text(&cgsim(&["run", "scenarios/scale-out.toml", "--describe"]).stdout);
    let members = out
        .split("--members --verbose")
        .nth(1)
        .unwrap()
        .split("kafka-consumer-groups")
        .next()
        .unwrap();
    let ids: Vec<&str> = members
        .lines()
        .filter(|l| l.starts_with("cgsim-group "))
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(ids.len(), 5);
    // ClassicGroup.members is a java.util.HashMap (16 buckets for five members): DescribeGroups
    // lists them bucket by bucket.
    let buckets: Vec<usize> = ids
        .iter()
        .map(|id| bucket_index(string_hash(id), 16))
        .collect();
    let mut sorted = buckets.clone();
    sorted.sort_unstable();
    assert_eq!(buckets, sorted, "{ids:?}");
}

#[test]
fn a_group_caught_rebalancing_warns_on_stderr_and_lists_no_assignments() {
    // c5 joins at 60 s; the rebalance runs from 60014 to 60137 ms.
    let out = cgsim(&[
        "run",
        "scenarios/scale-out.toml",
        "--set",
        "duration_ms=60100",
        "--describe",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let warning = "\nWarning: Consumer group 'cgsim-group' is rebalancing.\n";
    assert_eq!(text(&out.stderr), format!("{warning}{warning}"));
    let stdout = text(&out.stdout);
    let (members, offsets) = stdout.split_once("--offsets").expect("both tables");
    // DescribeGroups sends assignments only for a Stable group.
    let rows: Vec<&str> = members
        .lines()
        .filter(|l| l.starts_with("cgsim-group "))
        .collect();
    assert_eq!(rows.len(), 5);
    for row in rows {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&cells[4..], ["0", "-", "-", "-", "-"], "{row}");
    }
    // Every committed partition is listed with no consumer.
    let rows: Vec<&str> = offsets
        .lines()
        .filter(|l| l.starts_with("cgsim-group "))
        .collect();
    assert_eq!(rows.len(), 24);
    assert!(rows
        .iter()
        .all(|r| r.ends_with(" -               -               -")));
}

#[test]
fn a_static_member_adds_the_group_instance_id_column() {
    let out = cgsim(&[
        "run",
        "scenarios/seed-001-sticky.toml",
        "--set",
        "members.0.group_instance_id=pod-1",
        "--describe",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("GROUP           CONSUMER-ID                                                 GROUP-INSTANCE-ID HOST            CLIENT-ID "));
    let c1 = stdout
        .lines()
        .find(|l| l.starts_with("cgsim-group     pod-1-"))
        .expect("c1's row");
    assert!(c1.contains(" pod-1             /c1 "), "{c1}");
}

#[test]
fn describe_is_for_the_text_report() {
    let out = cgsim(&[
        "run",
        "scenarios/scale-out.toml",
        "--format",
        "json",
        "--describe",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("--describe: "));
    assert!(out.stdout.is_empty());
}

#[test]
fn an_empty_group_lists_its_committed_offsets_without_consumers() {
    let scenario = load_str(
        "s.toml",
        r#"name = "empty"
duration_ms = 60_000

[[topics]]
name = "orders"
partitions = 2

[[members]]
name = "c1"

[[producers]]
topic = "orders"
records_per_sec = 100

[[timeline]]
at_ms = 20_000
action = "leave"
member = "c1"
"#,
        &LoadOptions::default(),
    )
    .unwrap();
    let report = run(&scenario, RunOptions::default()).report;
    assert_eq!(report.group.state, "Empty");
    let [members, offsets] = render_describe(&report.group);
    let notice = "\nConsumer group 'cgsim-group' has no active members.\n";
    assert_eq!(members.stderr, notice);
    // The header alone: nobody is in the group.
    assert_eq!(members.stdout.lines().count(), 2);
    assert_eq!(offsets.stderr, notice);
    // close() committed both partitions' positions (about 1000 records each by 20 s).
    let rows: Vec<Vec<&str>> = offsets
        .stdout
        .lines()
        .filter(|l| l.starts_with("cgsim-group "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2);
    for (p, row) in rows.iter().enumerate() {
        assert_eq!(row[1..3], ["orders", &p.to_string()]);
        assert_eq!(row[4], "3000", "log end offset at 60 s");
        let committed: u64 = row[3].parse().unwrap();
        assert!((900..=1000).contains(&committed), "{row:?}");
        assert_eq!(row[5], (3000 - committed).to_string());
        assert_eq!(row[6..], ["-", "-", "-"]);
    }
}

fn member_rows(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .split("--members --verbose")
        .nth(1)
        .unwrap()
        .split("kafka-consumer-groups")
        .next()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("cgsim-group "))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// `BaseHashTable.findSlot` worked independently: the key's `String.hashCode()` times Knuth's
/// 64-bit constant, the top `log2(slots)` bits.
fn timeline_slot(id: &str, slots: u32) -> u64 {
    let hash = string_hash(id) as i64;
    (hash.wrapping_mul(-7_046_029_254_386_353_131) as u64) >> (64 - slots.trailing_zeros())
}

#[test]
fn a_consumer_group_is_described_from_its_records() {
    let out = cgsim(&[
        "run",
        "scenarios/scale-out.toml",
        "--variant",
        "consumer",
        "--describe",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "a Stable group: no warning");
    let stdout = text(&out.stdout);
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("scale-out--describe@consumer", stdout);
    });
    let rows = member_rows(&stdout);
    assert_eq!(rows.len(), 5);
    for r in &rows {
        // GROUP ID HOST CLIENT #PARTITIONS EPOCH CURRENT TARGET-EPOCH TARGET: reconciled, so
        // each member is at the target epoch with its target assignment.
        assert_eq!(r.len(), 9, "{r:?}");
        assert_eq!(r[5], r[7], "{r:?}");
        assert_eq!(r[6], r[8], "{r:?}");
        assert_ne!(r[5], "-");
    }
    // ConsumerGroup.members is a TimelineHashMap: five members in four slots (it doubles
    // before the put that would take it past 0.75 per slot), listed slot by slot.
    let slots: Vec<u64> = rows.iter().map(|r| timeline_slot(&r[1], 4)).collect();
    let mut sorted = slots.clone();
    sorted.sort_unstable();
    assert_eq!(slots, sorted, "{rows:?}");
}

#[test]
fn a_consumer_group_caught_reconciling_shows_current_and_target() {
    // c5 joined at 60 s; its partitions are released by 60.05 s but it hears of them only at
    // its next heartbeat, 5 s later: at 61 s it is at the group's epoch with nothing yet.
    let out = cgsim(&[
        "run",
        "scenarios/scale-out.toml",
        "--variant",
        "consumer",
        "--set",
        "duration_ms=61000",
        "--describe",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let warning = "\nWarning: Consumer group 'cgsim-group' is rebalancing.\n";
    assert_eq!(text(&out.stderr), format!("{warning}{warning}"));
    let rows = member_rows(&text(&out.stdout));
    let c5 = rows.iter().find(|r| r[2] == "/c5").expect("c5's row");
    assert_eq!(&c5[4..7], ["0", "6", "-"], "{c5:?}");
    assert_eq!(c5[7], "6");
    assert!(c5[8].starts_with("orders:"), "{c5:?}");
    // The others are reconciled already.
    assert!(rows
        .iter()
        .filter(|r| r[2] != "/c5")
        .all(|r| r[6] == r[8] && r[6] != "-"));
}
