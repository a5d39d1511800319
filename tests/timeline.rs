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

fn with_class<'a>(doc: &'a roxmltree::Document, class: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .collect()
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
        .filter(|lane| {
            lane.descendants()
                .any(|n| n.attribute("class") == Some("pause"))
        })
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

#[test]
fn readme_pictures_are_current() {
    for (variant, window) in [
        ("eager", (59_900, 60_300)),
        ("cooperative", (59_900, 63_900)),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs")
            .join(format!("scale-out-{variant}.svg"));
        let committed = std::fs::read_to_string(&path).expect("docs picture committed");
        let fresh = svg(&scenario_run("scale-out", variant), Some(window));
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
        cgsim::metrics::Mark::Restore {
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
    let labels: Vec<&str> = marks
        .iter()
        .map(|g| {
            g.descendants()
                .find(|n| n.attribute("class") == Some("migration-label"))
                .and_then(|n| n.text())
                .expect("a label")
        })
        .collect();
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
