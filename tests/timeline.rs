//! The pictures of a run: the SVG timeline (valid XML, a lane per member, a shaded window per
//! rebalance) and the Chrome trace (the Trace Event Format's required fields), both
//! deterministic; and the CLI flags that write them.

use cgsim::report::{render_chrome_trace, render_timeline, ChromeTraceOptions, TimelineOptions};
use cgsim::scenario::{load, LoadOptions};
use cgsim::world::{run, RunOptions, RunOutput};
use std::path::Path;
use std::process::Command;

fn scenario_run(name: &str, variant: &str) -> RunOutput {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{name}.toml"));
    let scenario = load(
        &path,
        &LoadOptions {
            seed: None,
            variant: Some(variant.to_string()),
            sets: vec![],
        },
    )
    .expect("scenario loads");
    run(
        &scenario,
        RunOptions {
            keep_trace: false,
            record_history: true,
            ..RunOptions::default()
        },
    )
}

fn svg(out: &RunOutput, window_ms: Option<(u64, u64)>) -> String {
    render_timeline(
        out.history.as_ref().expect("history recorded"),
        &out.report,
        &TimelineOptions { window_ms },
    )
}

fn trace(out: &RunOutput) -> String {
    render_chrome_trace(
        out.history.as_ref().expect("history recorded"),
        &out.report,
        &ChromeTraceOptions::default(),
    )
}

/// The elements that have `class` among their classes.
fn with_class<'a>(doc: &'a roxmltree::Document, class: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants().filter(|n| has_class(n, class)).collect()
}

fn has_class(node: &roxmltree::Node, class: &str) -> bool {
    node.attribute("class")
        .is_some_and(|c| c.split_whitespace().any(|c| c == class))
}

/// Rebalances overlapping `[start, end]` ms.
fn rebalances_in(out: &RunOutput, start: u64, end: u64) -> usize {
    out.report
        .rebalances
        .list
        .iter()
        .filter(|r| r.end_ms >= start && r.start_ms <= end)
        .count()
}

#[test]
fn timeline_is_xml_with_a_lane_per_member_and_a_window_per_rebalance() {
    for variant in ["eager", "cooperative"] {
        let out = scenario_run("scale-out", variant);
        for window in [None, Some((55_000, 75_000))] {
            let text = svg(&out, window);
            let doc = roxmltree::Document::parse(&text).expect("the SVG is well-formed XML");
            assert_eq!(doc.root_element().tag_name().name(), "svg");
            let lanes: Vec<&str> = with_class(&doc, "lane")
                .iter()
                .filter_map(|n| n.attribute("data-member"))
                .collect();
            let members = &out.history.as_ref().unwrap().member_names;
            assert_eq!(
                lanes,
                members.iter().map(String::as_str).collect::<Vec<_>>()
            );
            let (start, end) = window.unwrap_or((0, out.report.duration_ms));
            let expected = rebalances_in(&out, start, end);
            assert!(expected > 0, "{variant}: the join at 60 s rebalances");
            assert_eq!(
                with_class(&doc, "rebalance").len(),
                expected,
                "{variant} {window:?}"
            );
            assert_eq!(with_class(&doc, "lag").len(), 1);
            assert_eq!(with_class(&doc, "unavailable").len(), 1);
        }
    }
}

#[test]
fn eager_pauses_every_original_member_and_cooperative_none() {
    let window = Some((55_000, 75_000));
    let eager = svg(&scenario_run("scale-out", "eager"), window);
    let doc = roxmltree::Document::parse(&eager).unwrap();
    let paused: Vec<&str> = with_class(&doc, "lane")
        .iter()
        .filter(|lane| lane.descendants().any(|n| has_class(&n, "pause")))
        .filter_map(|n| n.attribute("data-member"))
        .collect();
    assert_eq!(paused, ["c1", "c2", "c3", "c4"]);
    let cooperative = svg(&scenario_run("scale-out", "cooperative"), window);
    let doc = roxmltree::Document::parse(&cooperative).unwrap();
    assert!(with_class(&doc, "pause").is_empty());
    assert!(!with_class(&doc, "revoke").is_empty());
}

#[test]
fn many_members_fold_into_counts() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/scale-out.toml");
    let scenario = load(
        &path,
        &LoadOptions {
            seed: None,
            variant: Some("cooperative".into()),
            sets: vec![
                "members.0.count=50".into(),
                "topics.0.partitions=200".into(),
                "duration_ms=90000".into(),
            ],
        },
    )
    .expect("50 members load");
    let out = run(
        &scenario,
        RunOptions {
            keep_trace: false,
            record_history: true,
            ..RunOptions::default()
        },
    );
    let text = svg(&out, None);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let lanes = with_class(&doc, "lane");
    assert_eq!(
        lanes.len(),
        out.history.as_ref().unwrap().member_names.len()
    );
    assert!(doc
        .descendants()
        .all(|n| n.attribute("class") != Some("row")));
    assert!(text.contains("lanes fold partitions into counts"));
}

#[test]
fn chrome_trace_has_the_required_fields() {
    let out = scenario_run("scale-out", "eager");
    let text = trace(&out);
    let v: serde_json::Value = serde_json::from_str(&text).expect("the trace is JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents");
    assert!(!events.is_empty());
    for e in events {
        for field in ["ph", "ts", "pid", "tid", "name"] {
            assert!(e.get(field).is_some(), "{field} missing in {e}");
        }
        assert!(e["ts"].is_u64(), "{e}");
        match e["ph"].as_str().unwrap() {
            "X" => assert!(e["dur"].is_u64(), "{e}"),
            "C" => assert!(e["args"].is_object(), "{e}"),
            "b" | "e" => assert!(e.get("id").is_some(), "{e}"),
            "M" | "i" => {}
            other => panic!("unexpected phase {other}"),
        }
    }
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 2)
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c1", "c2", "c3", "c4", "c5"]);
    assert!(events
        .iter()
        .any(|e| e["ph"] == "C" && e["name"] == "total lag"));
    let rebalances = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"].as_str().unwrap().starts_with("rebalance g"))
        .count();
    assert_eq!(rebalances, out.report.rebalances.list.len());
    assert!(events
        .iter()
        .any(|e| e["ph"] == "X" && e["name"] == "paused"));
    assert!(events
        .iter()
        .any(|e| e["ph"] == "i" && e["name"] == "start"));
}

#[test]
fn crashes_and_stalls_appear_as_markers() {
    let crash = scenario_run("crash", "eager");
    let text = svg(&crash, None);
    roxmltree::Document::parse(&text).unwrap();
    assert!(text.contains("class=\"crash\""));
    let json: serde_json::Value = serde_json::from_str(&trace(&crash)).unwrap();
    assert!(json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["ph"] == "i" && e["name"] == "crash"));
    let slow = scenario_run("slow-member", "eager");
    let text = svg(&slow, None);
    roxmltree::Document::parse(&text).unwrap();
    assert!(text.contains("class=\"stall-begin\""), "slow-member stalls");
}

#[test]
fn pictures_are_deterministic() {
    let a = scenario_run("scale-out", "cooperative");
    let b = scenario_run("scale-out", "cooperative");
    assert_eq!(svg(&a, None), svg(&b, None));
    assert_eq!(
        svg(&a, Some((55_000, 75_000))),
        svg(&b, Some((55_000, 75_000)))
    );
    assert_eq!(trace(&a), trace(&b));
}

#[test]
fn names_are_escaped() {
    let mut out = scenario_run("scale-out", "eager");
    let h = out.history.as_mut().unwrap();
    h.member_names[0] = "a<b>&\"c'".into();
    out.report.scenario = "x & <y>".into();
    let text = svg(&out, None);
    let doc = roxmltree::Document::parse(&text).expect("escaped names keep the XML valid");
    assert!(doc
        .descendants()
        .any(|n| n.attribute("data-member") == Some("a<b>&\"c'")));
    let json: serde_json::Value = serde_json::from_str(&trace(&out)).unwrap();
    assert!(json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["args"]["name"] == "a<b>&\"c'"));
}

fn cgsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cgsim runs")
}

#[test]
fn cli_writes_the_timeline_and_the_trace() {
    let dir = std::env::temp_dir().join(format!("cgsim-timeline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg_path = dir.join("out.svg");
    let json_path = dir.join("out.json");
    let out = cgsim(&[
        "run",
        "scenarios/scale-out.toml",
        "--variant",
        "cooperative",
        "--timeline",
        svg_path.to_str().unwrap(),
        "--timeline-window",
        "55000..75000",
        "--chrome-trace",
        json_path.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg_path).unwrap();
    roxmltree::Document::parse(&text).unwrap();
    let json = std::fs::read_to_string(&json_path).unwrap();
    serde_json::from_str::<serde_json::Value>(&json).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_reports_an_unwritable_path_and_a_bad_window() {
    let missing = std::env::temp_dir()
        .join(format!("cgsim-no-such-dir-{}", std::process::id()))
        .join("out.svg");
    let out = cgsim(&[
        "run",
        "scenarios/scale-out.toml",
        "--timeline",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write") && err.contains("out.svg"),
        "{err}"
    );

    let out = cgsim(&[
        "run",
        "scenarios/scale-out.toml",
        "--chrome-trace",
        missing.with_extension("json").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));

    for bad in ["75000..55000", "abc", "1..x", "900000..900001"] {
        let out = cgsim(&[
            "run",
            "scenarios/scale-out.toml",
            "--timeline",
            "/dev/null",
            "--timeline-window",
            bad,
        ]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--timeline-window"));
    }
    let out = cgsim(&[
        "run",
        "scenarios/scale-out.toml",
        "--timeline-window",
        "55000..75000",
    ]);
    assert_eq!(out.status.code(), Some(2), "a window with nothing to draw");
}

/// A window of simulated time, in ms (`None`: the whole run).
type Window = Option<(u64, u64)>;

/// The README's pictures, as `scripts/timelines` makes them: (file, scenario, variant, window).
const README_PICTURES: [(&str, &str, &str, Window); 4] = [
    (
        "scale-out-eager.svg",
        "scale-out",
        "eager",
        Some((59_900, 60_300)),
    ),
    (
        "scale-out-cooperative.svg",
        "scale-out",
        "cooperative",
        Some((59_900, 63_900)),
    ),
    ("scale-out-eager-full.svg", "scale-out", "eager", None),
    ("crash-eager.svg", "crash", "eager", None),
];

#[test]
fn readme_pictures_are_current() {
    for (file, name, variant, window) in README_PICTURES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs")
            .join(file);
        let committed = std::fs::read_to_string(&path).expect("docs picture committed");
        let fresh = svg(&scenario_run(name, variant), window);
        assert!(
            committed == fresh,
            "{} is stale: run scripts/timelines and commit the result",
            path.display()
        );
    }
}

#[test]
fn restores_are_drawn_and_traced() {
    let mut out = scenario_run("scale-out", "eager");
    let h = out.history.as_mut().unwrap();
    h.marks.push((
        62_000_000,
        cgsim::history::Mark::Restore {
            member: 4,
            partition: 20,
            until_us: 63_500_000,
        },
    ));
    h.marks.sort_by_key(|m| m.0);
    let text = svg(&out, Some((59_000, 65_000)));
    let doc = roxmltree::Document::parse(&text).unwrap();
    let restores = with_class(&doc, "restore");
    assert_eq!(restores.len(), 1);
    let lane = restores[0]
        .ancestors()
        .find(|n| n.attribute("class") == Some("lane"))
        .unwrap();
    assert_eq!(lane.attribute("data-member"), Some("c5"));
    let json: serde_json::Value = serde_json::from_str(&trace(&out)).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let begin = events
        .iter()
        .find(|e| e["ph"] == "b" && e["name"] == "restore orders-20")
        .expect("an async restore slice");
    assert_eq!(begin["ts"], 62_000_000);
    assert_eq!(begin["tid"], 5);
}

/// Broker faults get broker lanes: the dead broker's down time and where the coordinator
/// lived, moving with its fail-over and back at the preferred-leader check; a run without
/// broker faults draws none.
#[test]
fn broker_lanes_show_down_time_and_the_coordinators_home() {
    let out = scenario_run("coordinator-failover", "cooperative");
    let text = svg(&out, None);
    let doc = roxmltree::Document::parse(&text).expect("valid xml");
    let down = with_class(&doc, "broker-down");
    assert_eq!(down.len(), 1);
    assert_eq!(down[0].attribute("data-broker"), Some("2"));
    let homes: Vec<&str> = with_class(&doc, "coordinator-home")
        .iter()
        .filter_map(|n| n.attribute("data-broker"))
        .collect();
    assert_eq!(homes, ["0", "2", "2"]);
    assert_eq!(with_class(&doc, "coordinator-mark").len(), 5);

    let quiet = scenario_run("scale-out", "cooperative");
    let text = svg(&quiet, None);
    assert!(!text.contains("class=\"brokers\""));
}

/// The online migration (issue 21): each conversion of the group between the classic and the
/// consumer protocol is a labelled line at its moment, in the picture and in the trace; a run
/// that never converts, or a window without the conversion, draws none.
#[test]
fn migrations_are_marked_with_their_direction() {
    let out = scenario_run("migrate-and-back", "default");
    let expected: Vec<(&str, u64)> = out
        .report
        .migrations
        .iter()
        .map(|m| (m.to, m.at_ms))
        .collect();
    assert_eq!(expected.len(), 2, "classic -> consumer -> classic");
    let text = svg(&out, None);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let marks = with_class(&doc, "migration");
    let drawn: Vec<(&str, u64)> = marks
        .iter()
        .map(|g| {
            (
                g.attribute("data-to").unwrap(),
                g.attribute("data-at-ms").unwrap().parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(drawn, expected);
    // Labelled above the lanes, in time order.
    let mut labels: Vec<(f64, &str)> = with_class(&doc, "migration-label")
        .iter()
        .map(|n| {
            let g = n.parent().unwrap();
            assert_eq!(g.attribute("data-kind"), Some("migration"));
            (label_anchor(g), n.text().expect("a label"))
        })
        .collect();
    labels.sort_by(|a, b| a.0.total_cmp(&b.0));
    let labels: Vec<&str> = labels.iter().map(|l| l.1).collect();
    assert_eq!(
        labels,
        [
            "classic → consumer (c1 joined)",
            "consumer → classic (c4 left)"
        ]
    );
    // Each line stands at its moment on the time axis (1,046 px for 900 s) and spans the lanes.
    for (g, (_, at_ms)) in marks.iter().zip(&expected) {
        let line = g
            .children()
            .find(|n| n.has_tag_name("line"))
            .expect("a line");
        let x: f64 = line.attribute("x1").unwrap().parse().unwrap();
        let want = 130.0 + *at_ms as f64 / out.report.duration_ms as f64 * 1046.0;
        assert!((x - want).abs() < 0.06, "{x} vs {want}");
        let y1: f64 = line.attribute("y1").unwrap().parse().unwrap();
        let y2: f64 = line.attribute("y2").unwrap().parse().unwrap();
        assert!(y2 - y1 > 500.0, "the line crosses every lane");
    }
    // The trace has an instant per conversion on the coordinator's thread.
    let json: serde_json::Value = serde_json::from_str(&trace(&out)).unwrap();
    let instants: Vec<(String, u64)> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "migration")
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["ts"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        instants,
        [
            ("classic -> consumer".to_string(), expected[0].1 * 1000),
            ("consumer -> classic".to_string(), expected[1].1 * 1000)
        ]
    );

    // Upgrade only: one conversion, and none in a window before it.
    let up = scenario_run("migrate-to-consumer", "default");
    assert_eq!(up.report.migrations.len(), 1);
    let at = up.report.migrations[0].at_ms;
    let doc_text = svg(&up, Some((at - 5_000, at + 5_000)));
    let doc = roxmltree::Document::parse(&doc_text).unwrap();
    assert_eq!(with_class(&doc, "migration").len(), 1);
    let doc_text = svg(&up, Some((0, at - 5_000)));
    assert!(!doc_text.contains("class=\"migration\""));
    // A broker that refuses the upgrade: nothing converts, nothing is drawn.
    let refused = scenario_run("migrate-to-consumer", "upgrade-disabled");
    assert!(refused.report.migrations.is_empty());
    assert!(!svg(&refused, None).contains("class=\"migration"));
}

/// Where a label points: its leader's x, or its box's left edge when it has none.
fn label_anchor(g: roxmltree::Node) -> f64 {
    let attr = |n: roxmltree::Node, a: &str| -> f64 { n.attribute(a).unwrap().parse().unwrap() };
    match g.children().find(|n| has_class(n, "leader")) {
        Some(leader) => attr(leader, "x1"),
        None => attr(
            g.children().find(|n| has_class(n, "label-box")).unwrap(),
            "x",
        ),
    }
}

// Issue 30: the picture tells the story at any zoom.

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 130.0;
const PLOT_W: f64 = 1046.0;

fn num(node: roxmltree::Node, attr: &str) -> f64 {
    node.attribute(attr)
        .unwrap_or_else(|| panic!("{attr} on {node:?}"))
        .parse()
        .unwrap()
}

/// A run with more members than lanes can show row by row and rebalances close together: a
/// 30-member rolling bounce every 2 s (22 rebalances in a minute of a 10-minute run).
fn bounce_burst() -> RunOutput {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/rolling-bounce.toml");
    let scenario = load(
        &path,
        &LoadOptions {
            seed: None,
            variant: Some("cooperative".into()),
            sets: vec![
                "members.0.count=30".into(),
                "timeline.0.interval_ms=2000".into(),
            ],
        },
    )
    .expect("the burst loads");
    run(
        &scenario,
        RunOptions {
            keep_trace: false,
            record_history: true,
            ..RunOptions::default()
        },
    )
}

/// The pictures the label checks run over: the README's, and full-length runs with
/// back-to-back rebalances, migrations, crashes, a cut-off member and a burst.
fn pictures() -> Vec<(String, RunOutput, Window)> {
    let mut out = Vec::new();
    for (name, variant, window) in [
        ("scale-out", "eager", Some((59_900, 60_300))),
        ("scale-out", "cooperative", Some((59_900, 63_900))),
        ("scale-out", "eager", None),
        ("scale-out", "cooperative", None),
        ("crash", "eager", None),
        ("migrate-and-back", "default", None),
        ("upgrade-two-bounce", "cooperative", None),
        ("join-under-churn", "cooperative", None),
        ("network-partition", "cooperative", None),
        ("coordinator-failover", "cooperative", None),
    ] {
        out.push((
            format!("{name}@{variant} {window:?}"),
            scenario_run(name, variant),
            window,
        ));
    }
    out.push(("bounce burst".to_string(), bounce_burst(), None));
    out
}

/// Label boxes never overlap each other, stay inside the frame, hold their text's start, and no
/// leader line runs through another label's box; every rebalance, the formation and every
/// migration in view is named by a label.
#[test]
fn labels_never_overlap_and_name_every_rebalance() {
    for (what, out, window) in pictures() {
        let text = svg(&out, window);
        let doc = roxmltree::Document::parse(&text).unwrap();
        let height = num(doc.root_element(), "height");
        let labels = with_class(&doc, "label");
        assert!(!labels.is_empty(), "{what}");
        let mut boxes = Vec::new();
        let mut leaders = Vec::new();
        for g in &labels {
            let b = g
                .children()
                .find(|n| has_class(n, "label-box"))
                .expect("a box");
            let (x, y, w, h) = (num(b, "x"), num(b, "y"), num(b, "width"), num(b, "height"));
            assert!(
                x >= 0.0 && y >= 0.0 && x + w <= WIDTH && y + h <= height,
                "{what}: {g:?} outside the frame"
            );
            let t = g.children().find(|n| n.has_tag_name("text")).unwrap();
            let (tx, ty) = (num(t, "x"), num(t, "y"));
            assert!(
                tx >= x && tx < x + w && ty > y && ty <= y + h,
                "{what}: text outside its box"
            );
            boxes.push((x, y, w, h, t.text().unwrap_or("").to_string()));
            if let Some(l) = g.children().find(|n| has_class(n, "leader")) {
                let (y1, y2) = (num(l, "y1"), num(l, "y2"));
                leaders.push((num(l, "x1"), y1.min(y2), y1.max(y2)));
            }
        }
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                let apart =
                    a.0 + a.2 <= b.0 || b.0 + b.2 <= a.0 || a.1 + a.3 <= b.1 || b.1 + b.3 <= a.1;
                assert!(apart, "{what}: {:?} overlaps {:?}", a.4, b.4);
            }
        }
        for &(x, lo, hi) in &leaders {
            for b in &boxes {
                let inside = x > b.0 + 0.5 && x < b.0 + b.2 - 0.5;
                let crosses = b.1 < hi - 0.1 && b.1 + b.3 > lo + 0.1;
                assert!(
                    !(inside && crosses),
                    "{what}: a leader at {x} crosses {:?}",
                    b.4
                );
            }
        }
        // Every rebalance in view is named, once.
        let (start, end) = window.unwrap_or((0, out.report.duration_ms));
        let mut named: Vec<i32> = labels
            .iter()
            .filter(|g| g.attribute("data-kind") == Some("rebalance"))
            .flat_map(|g| {
                g.attribute("data-generations")
                    .unwrap()
                    .split(' ')
                    .map(|g| g.parse::<i32>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        named.sort_unstable();
        let expected: Vec<i32> = out
            .report
            .rebalances
            .list
            .iter()
            .filter(|r| r.end_ms >= start && r.start_ms <= end)
            .map(|r| r.generation)
            .collect();
        assert_eq!(named, expected, "{what}");
        let kinds = |kind: &str| {
            labels
                .iter()
                .filter(|g| g.attribute("data-kind") == Some(kind))
                .count()
        };
        let formation_shown = out
            .report
            .formation
            .as_ref()
            .is_some_and(|f| f.end_ms >= start && f.start_ms <= end);
        assert_eq!(kinds("formation"), usize::from(formation_shown), "{what}");
        let migrations = out
            .report
            .migrations
            .iter()
            .filter(|m| (start..=end).contains(&m.at_ms))
            .count();
        assert_eq!(kinds("migration"), migrations, "{what}");
    }
    // The burst of 22 rebalances is one label, not a tower of 22.
    let burst = bounce_burst();
    let text = svg(&burst, None);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let rebalance_labels = with_class(&doc, "label")
        .into_iter()
        .filter(|g| g.attribute("data-kind") == Some("rebalance"))
        .count();
    assert!(burst.report.rebalances.list.len() >= 20);
    assert!(rebalance_labels <= 2, "{rebalance_labels} labels");
}

/// Every called-out interval (`data-ms`: pauses, stalls, restores, rebalances, the formation,
/// unavailable stretches, a dead member's ownership) is at least MIN_WIDTH wide; one drawn wider
/// than its length is marked `min-width` with a dashed outline and the legend says so; one wide
/// enough is drawn at its length.
fn check_widths(what: &str, text: &str, window_ms: u64) -> usize {
    let doc = roxmltree::Document::parse(text).unwrap();
    let px_per_ms = PLOT_W / window_ms as f64;
    let mut widened = 0;
    for r in doc
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("data-ms").is_some())
    {
        let (x, w) = (num(r, "x"), num(r, "width"));
        let true_w = num(r, "data-ms") * px_per_ms;
        if has_class(&r, "min-width") {
            widened += 1;
            assert_eq!(w, cgsim::report::MIN_WIDTH, "{what}: {r:?}");
            assert!(true_w < cgsim::report::MIN_WIDTH, "{what}: {r:?}");
            assert_eq!(r.attribute("stroke-dasharray"), Some("1.5 1"), "{what}");
        } else {
            assert!(w >= cgsim::report::MIN_WIDTH, "{what}: {r:?}");
            // Inside the window it is drawn at its length (one decimal).
            if x > LEFT + 0.05 && x + w < LEFT + PLOT_W - 0.05 {
                assert!(
                    (w - true_w).abs() <= 0.11,
                    "{what}: {w} for {true_w} in {r:?}"
                );
            }
        }
    }
    let legend = with_class(&doc, "legend");
    let says = legend[0]
        .descendants()
        .any(|n| n.text().is_some_and(|t| t.contains("drawn 4 px wide")));
    assert_eq!(
        says,
        widened > 0,
        "{what}: the legend names widened intervals"
    );
    widened
}

#[test]
fn short_intervals_stay_visible_and_are_marked_as_widened() {
    let eager = scenario_run("scale-out", "eager");
    // Full length: each original member's pause (a few ms of 450 s) is drawn 4 px wide, on top
    // of its lane, marked; so is the moment all 24 partitions were unavailable.
    let full = svg(&eager, None);
    assert!(check_widths("eager, full length", &full, eager.report.duration_ms) > 0);
    let doc = roxmltree::Document::parse(&full).unwrap();
    let paused: Vec<&str> = with_class(&doc, "lane")
        .iter()
        .filter(|lane| {
            lane.descendants()
                .any(|n| has_class(&n, "pause") && has_class(&n, "min-width"))
        })
        .filter_map(|n| n.attribute("data-member"))
        .collect();
    assert_eq!(paused, ["c1", "c2", "c3", "c4"]);
    for lane in with_class(&doc, "lane") {
        // Widened pauses come after the rows, so no row hides them.
        let kids: Vec<_> = lane.children().filter(|n| n.is_element()).collect();
        let last_row = kids.iter().rposition(|n| has_class(n, "row"));
        if let Some(p) = kids.iter().position(|n| has_class(n, "pause")) {
            assert!(
                last_row.is_none_or(|r| p > r),
                "a widened pause under the rows"
            );
        }
    }
    let stretch = with_class(&doc, "unavailable-stretch");
    assert_eq!(stretch.len(), 1);
    assert_eq!(stretch[0].attribute("data-partitions"), Some("24"));
    assert!(has_class(&stretch[0], "min-width"));
    let rebalance = &with_class(&doc, "rebalance")[0];
    assert!(has_class(rebalance, "min-width"), "123 ms of 450 s");

    // Zoomed on the rebalance, nothing is widened: the pauses are drawn at their length.
    let zoomed = svg(&eager, Some((59_900, 60_300)));
    assert_eq!(check_widths("eager, zoomed", &zoomed, 400), 0);
    let doc = roxmltree::Document::parse(&zoomed).unwrap();
    assert_eq!(with_class(&doc, "pause").len(), 4);

    for (name, variant) in [
        ("scale-out", "cooperative"),
        ("crash", "eager"),
        ("slow-member", "eager"),
        ("network-partition", "cooperative"),
        ("migrate-and-back", "default"),
    ] {
        let out = scenario_run(name, variant);
        check_widths(name, &svg(&out, None), out.report.duration_ms);
    }
}

/// The panel's axis maximum (its top tick).
fn panel_max(doc: &roxmltree::Document, panel: &str) -> u64 {
    let g = doc
        .descendants()
        .find(|n| n.attribute("data-panel") == Some(panel))
        .unwrap();
    g.children()
        .find(|n| n.has_tag_name("text"))
        .and_then(|t| t.text())
        .unwrap()
        .parse()
        .unwrap()
}

/// The lag axis is set by what came after start-up (each rebalance window's peak included and
/// marked), not by the first join's backlog, which is clipped and marked.
#[test]
fn the_lag_axis_shows_every_rebalance_windows_peak() {
    for variant in ["eager", "cooperative"] {
        let out = scenario_run("scale-out", variant);
        let text = svg(&out, None);
        let doc = roxmltree::Document::parse(&text).unwrap();
        let startup_peak = out.report.lag.series.iter().map(|s| s.1).max().unwrap();
        let axis = panel_max(&doc, "lag");
        let window_peak = out
            .report
            .rebalances
            .list
            .iter()
            .map(|r| r.window.lag_peak)
            .max()
            .unwrap();
        assert!(axis >= window_peak, "{variant}: {axis} < {window_peak}");
        assert!(
            axis < startup_peak,
            "{variant}: the start-up backlog ({startup_peak}) sets the axis"
        );
        assert!(!with_class(&doc, "clipped").is_empty(), "{variant}");
        let peaks: Vec<(i32, u64)> = with_class(&doc, "lag-peak")
            .iter()
            .map(|c| {
                (
                    c.attribute("data-generation").unwrap().parse().unwrap(),
                    c.attribute("data-peak").unwrap().parse().unwrap(),
                )
            })
            .collect();
        let expected: Vec<(i32, u64)> = out
            .report
            .rebalances
            .list
            .iter()
            .map(|r| (r.generation, r.window.lag_peak))
            .collect();
        assert_eq!(peaks, expected, "{variant}");
        // Every point of the line is inside the panel: clipped, not drawn over the title.
        let panel = doc
            .descendants()
            .find(|n| n.attribute("data-panel") == Some("lag"))
            .unwrap();
        let frame = panel.children().find(|n| n.has_tag_name("rect")).unwrap();
        let top = num(frame, "y");
        let line = with_class(&doc, "lag")
            .into_iter()
            .find(|n| n.has_tag_name("polyline"))
            .unwrap();
        for p in line.attribute("points").unwrap().split(' ') {
            let y: f64 = p.split(',').nth(1).unwrap().parse().unwrap();
            assert!(y >= top, "{variant}: {y} above the panel");
        }
    }
    // A crash's backlog comes after start-up: it sets the axis, nothing is clipped.
    let crash = scenario_run("crash", "eager");
    let doc_text = svg(&crash, None);
    let doc = roxmltree::Document::parse(&doc_text).unwrap();
    assert_eq!(
        panel_max(&doc, "lag"),
        crash.report.rebalances.list[0].window.lag_peak
    );
    assert!(with_class(&doc, "clipped").is_empty());
}

/// A crashed member stays the owner of its partitions to the coordinator until its session
/// expires: the crash lane shows that interval (hatched, labelled, apart from "not running"),
/// from the crash to the coordinator removing it; the trace has it too.
#[test]
fn a_crashed_member_owns_its_partitions_until_its_session_expires() {
    let out = scenario_run("crash", "eager");
    let expired = &out.report.rebalances.list[0];
    assert_eq!(expired.trigger, "member_expired");
    let text = svg(&out, None);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let held = with_class(&doc, "held");
    assert_eq!(held.len(), 1);
    let lane = held[0].ancestors().find(|n| has_class(n, "lane")).unwrap();
    assert_eq!(lane.attribute("data-member"), Some("c4"));
    assert_eq!(held[0].attribute("data-cause"), Some("crash"));
    assert_eq!(held[0].attribute("data-ended"), Some("removed"));
    // From the crash at 60 s until the session expired (the rebalance it started).
    let px = |ms: u64| LEFT + ms as f64 / out.report.duration_ms as f64 * PLOT_W;
    let (x, w) = (num(held[0], "x"), num(held[0], "width"));
    assert!((x - px(60_000)).abs() < 0.06, "{x}");
    assert!((x + w - px(expired.start_ms)).abs() < 0.11, "{}", x + w);
    let ms = num(held[0], "data-ms");
    assert!(
        ms > 40_000.0 && ms <= 45_000.0,
        "{ms}: within one session of 45 s"
    );
    // Distinct from not running, which is also drawn there.
    assert!(lane.children().any(|n| has_class(&n, "absent")));
    let label = lane
        .descendants()
        .find(|n| n.attribute("data-kind") == Some("held"))
        .expect("a label");
    let words = label
        .descendants()
        .find(|n| n.has_tag_name("text"))
        .and_then(|n| n.text())
        .unwrap();
    assert!(words.contains("until its session expired"), "{words}");
    // No other lane has one.
    assert_eq!(with_class(&doc, "held").len(), 1);

    let json: serde_json::Value = serde_json::from_str(&trace(&out)).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let begin = events
        .iter()
        .find(|e| e["ph"] == "b" && e["cat"] == "held")
        .expect("an async slice");
    assert_eq!(begin["ts"], 60_000_000);
    assert_eq!(begin["tid"], 4);
    let end = events
        .iter()
        .find(|e| e["ph"] == "e" && e["cat"] == "held")
        .unwrap();
    assert_eq!(end["ts"].as_u64().unwrap() / 1000, expired.start_ms);

    // A run without a crash or a cut has none.
    let quiet = svg(&scenario_run("scale-out", "cooperative"), None);
    assert!(!quiet.contains("class=\"held"));
}

/// A member cut off from the coordinator still owns its partitions to it until its session
/// expires; after that its late batches are zombie batches, marked on its own lane.
#[test]
fn a_cut_off_member_is_held_then_a_zombie() {
    let out = scenario_run("network-partition", "cooperative");
    let text = svg(&out, None);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let held = with_class(&doc, "held");
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].attribute("data-cause"), Some("cut_off"));
    assert_eq!(held[0].attribute("data-ended"), Some("removed"));
    let lane_of = |n: &roxmltree::Node| {
        n.ancestors()
            .find(|a| has_class(a, "lane"))
            .and_then(|a| a.attribute("data-member"))
            .unwrap()
            .to_string()
    };
    assert_eq!(lane_of(&held[0]), "pod1");
    let zombies = with_class(&doc, "zombie");
    let reported = &out.report.invariants.zombie_processing;
    assert!(!reported.is_empty());
    assert!(!zombies.is_empty());
    for z in &zombies {
        assert_eq!(lane_of(z), "pod1");
        let p = z.attribute("data-partition").unwrap();
        assert!(reported.iter().any(|r| r.partition == p));
        // On its partition's row.
        let row = z
            .parent()
            .unwrap()
            .children()
            .find(|r| has_class(r, "row") && r.attribute("data-partition") == Some(p));
        assert!(row.is_some(), "{p} has a row");
    }
    // Each batch drawn unless another fell on the same pixel of its row.
    assert!(zombies.len() <= reported.len());
}

/// A windowed trace carries every member's counter track (and the group's), each starting at
/// the window's start with its value there, even where nothing changes in the window.
#[test]
fn windowed_traces_carry_every_counter_from_the_windows_start() {
    let out = scenario_run("scale-out", "eager");
    let quiet = (200_000, 210_000);
    let text = render_chrome_trace(
        out.history.as_ref().unwrap(),
        &out.report,
        &ChromeTraceOptions {
            window_ms: Some(quiet),
        },
    );
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let counters = |name: &str| -> Vec<&serde_json::Value> {
        events
            .iter()
            .filter(|e| e["ph"] == "C" && e["name"] == name)
            .collect()
    };
    for (member, owned) in &out.report.final_assignment {
        let track = counters(&format!("{member} partitions"));
        assert!(!track.is_empty(), "{member} has no counter track");
        assert_eq!(track[0]["ts"], quiet.0 * 1000, "{member}");
        assert_eq!(track[0]["args"]["owned"], owned.len(), "{member}");
        assert_eq!(track[0]["args"]["processing"], owned.len(), "{member}");
    }
    assert_eq!(out.report.final_assignment.len(), 5);
    let unavailable = counters("unavailable partitions");
    assert_eq!(unavailable[0]["ts"], quiet.0 * 1000);
    assert_eq!(unavailable[0]["args"]["partitions"], 0);
    let lag = counters("total lag");
    assert_eq!(lag[0]["ts"], quiet.0 * 1000);
    // Before its start, a member's track says 0.
    let early = render_chrome_trace(
        out.history.as_ref().unwrap(),
        &out.report,
        &ChromeTraceOptions {
            window_ms: Some((30_000, 40_000)),
        },
    );
    let json: serde_json::Value = serde_json::from_str(&early).unwrap();
    let c5: Vec<_> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "c5 partitions")
        .collect();
    assert_eq!(c5.len(), 1);
    assert_eq!(c5[0]["args"]["owned"], 0);
}
