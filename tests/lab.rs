//! `cgsim lab` over real HTTP: the binary started on port 0, every endpoint asked with a plain
//! TcpStream, as a browser would, and the answers checked against the library the CLI uses.

use crate::lab_support;

use lab_support::Lab;
use serde_json::Value;
use std::process::Command;

#[test]
fn the_page_and_its_assets_are_served_from_the_binary() {
    let lab = Lab::start();
    let (status, head, body) = lab.get("/?preset=seed-001");
    assert_eq!(status, 200);
    assert!(head.contains("text/html"), "{head}");
    assert!(body.contains("<script src=\"/lab.js\">"));
    assert!(body.contains("href=\"/?preset=seed-001\""));
    let (status, head, js) = lab.get("/lab.js");
    assert_eq!(status, 200);
    assert!(head.contains("text/javascript"));
    assert!(js.contains("/api/table?"));
    let (status, head, _) = lab.get("/lab.css");
    assert_eq!((status, head.contains("text/css")), (200, true));
    assert_eq!(lab.get("/nothing").0, 404);
}

#[test]
fn info_lists_assignors_presets_and_limits() {
    let lab = Lab::start();
    let (status, v) = lab.json("/api/info");
    assert_eq!(status, 200);
    let names: Vec<&str> = v["assignors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, cgsim::assignor::ASSIGNOR_NAMES);
    assert_eq!(v["assignors"][3]["protocol"], "cooperative");
    assert_eq!(v["assignors"][4]["side"], "server");
    assert_eq!(v["presets"][0]["query"], "preset=seed-001");
    assert_eq!(v["limits"]["partitions"], 1000);
    assert_eq!(v["rebalance"]["limits"]["duration_ms"], 3_600_000);
    assert_eq!(v["rebalance"]["faults"][0], "crash");
}

#[test]
fn table_gives_the_cli_table_for_the_seed_001_preset() {
    let lab = Lab::start();
    let (status, v) = lab.json("/api/table?preset=seed-001");
    assert_eq!(status, 200);
    // Every count equals the library's table, which the CLI prints.
    let tables =
        cgsim::assignor::table::build(&cgsim::assignor::table::preset("seed-001").unwrap())
            .unwrap();
    let mut cells = 0;
    for (s, t) in tables.iter().enumerate() {
        for (g, block) in t.blocks.iter().enumerate() {
            for (a, col) in block.columns.iter().enumerate() {
                let ours = &v["sections"][s]["groups"][g]["assignors"][a];
                assert_eq!(ours["name"], col.assignor);
                assert_eq!(ours["counts"], serde_json::json!(col.counts()));
                assert_eq!(ours["idle"], col.idle());
                assert_eq!(ours["rebalances"], col.formation.rebalances.len());
                cells += col.counts().len();
            }
        }
    }
    assert_eq!(cells, (2 + 3 + 4 + 10 + 2 + 2) * 7);
    // The seed's shapes: range 6/3 with 2 members one by one, 7 idle of 10.
    let range = |g: usize| &v["sections"][0]["groups"][g]["assignors"][0];
    assert_eq!(range(0)["counts"], serde_json::json!([6, 3]));
    assert_eq!(range(3)["idle"], 7);
    assert_eq!(v["sections"][0]["groups"][2]["joins"], "3+1");
}

#[test]
fn table_shows_seed_000_co_location() {
    let lab = Lab::start();
    let (status, v) = lab.json("/api/table?preset=seed-000");
    assert_eq!(status, 200);
    let group = &v["sections"][0]["groups"][0];
    let co = |name: &str| {
        let a = group["assignors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap();
        let c = &a["co_location"][0];
        (
            c["co_located"].as_u64().unwrap(),
            c["indexes"].as_u64().unwrap(),
        )
    };
    assert_eq!(co("roundrobin"), (0, 6));
    assert_eq!(co("co-partition"), (6, 6));
    assert_eq!(
        group["assignors"][6]["co_location"][0]["owners"],
        serde_json::json!(["pod-1", "pod-2", "pod-3", "pod-4", "pod-1", "pod-2"])
    );
}

#[test]
fn table_input_errors_name_the_field_and_sizes_are_bounded() {
    let lab = Lab::start();
    let (status, v) = lab.json("/api/table?topics=t3a:3&members=2");
    assert_eq!(status, 400);
    assert_eq!(v["error"]["field"], "topics");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("expected NAME=PARTITIONS"));
    let (status, v) = lab.json("/api/table?topics=t%3D100000&members=4");
    assert_eq!(status, 413);
    assert_eq!(v["error"]["field"], "topics");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("at most 1000"));
    let (status, v) = lab.json("/api/table?topics=t%3D3&members=2&joins=2%3D3%2B1");
    assert_eq!((status, v["error"]["field"].as_str()), (400, Some("joins")));
    // An address longer than the limit.
    let long = format!("/api/table?topics={}", "a".repeat(9000));
    assert_eq!(lab.get(&long).0, 414);
}

#[test]
fn assign_answers_cli_lines_and_bounds_the_body() {
    let lab = Lab::start();
    let input = std::fs::read_to_string("examples/assign.jsonl").unwrap();
    let (status, _, body) = lab.post("/api/assign", &input);
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    // Exactly what `cgsim assign` prints for each line.
    let cli = Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(["assign", "examples/assign.jsonl"])
        .output()
        .unwrap();
    let lines: Vec<Value> = String::from_utf8(cli.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outputs: Vec<Value> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["output"].clone())
        .collect();
    assert_eq!(outputs, lines);
    let (status, _, body) = lab.post("/api/assign", "{\"id\":1}");
    assert_eq!(status, 200);
    assert!(body.contains("\"error\""));
    let big = "x".repeat(cgsim::lab::api::MAX_BODY_BYTES + 1);
    let (status, _, body) = lab.post("/api/assign", &big);
    assert_eq!(status, 413, "{body}");
    assert_eq!(lab.get("/api/assign").0, 405);
}

#[test]
fn only_requests_for_the_loopback_address_are_answered() {
    let lab = Lab::start();
    let (status, _, body) = lab.request(&format!(
        "GET /api/info HTTP/1.1\r\nHost: evil.example:{}\r\nConnection: close\r\n\r\n",
        lab.port
    ));
    assert_eq!(status, 403, "{body}");
}

#[test]
fn a_taken_port_is_bad_input() {
    let lab = Lab::start();
    let out = Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(["lab", "--port", &lab.port.to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen on 127.0.0.1:"));
}

// ---- The rebalance view (issue 29) ----

use lab_support::{cgsim, owners_from_trace};

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_rebalance_page_and_its_script_are_served() {
    let lab = Lab::start();
    let (status, head, body) = lab.get("/rebalance?scenario=scale-out&at=61000");
    assert_eq!(status, 200);
    assert!(head.contains("text/html"), "{head}");
    assert!(body.contains("<script src=\"/rebalance.js\">"));
    let (status, head, js) = lab.get("/rebalance.js");
    assert_eq!((status, head.contains("text/javascript")), (200, true));
    assert!(js.contains("/api/instant?"));
    assert_eq!(lab.post("/api/runs?scenario=scale-out", "").0, 405);
}

#[test]
fn scenarios_are_read_from_the_folder_by_name_only() {
    let lab = Lab::start();
    let (status, v) = lab.json("/api/scenarios");
    assert_eq!(status, 200);
    let names: Vec<&str> = v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let mut files: Vec<String> = std::fs::read_dir("scenarios")
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|f| f.strip_suffix(".toml").map(str::to_string))
        .collect();
    files.sort();
    assert_eq!(names, files);
    let (status, v) = lab.json("/api/scenario?name=scale-out");
    assert_eq!(status, 200);
    assert_eq!(
        v["text"].as_str().unwrap(),
        std::fs::read_to_string("scenarios/scale-out.toml").unwrap()
    );
    // A name with a path in it is refused, whichever endpoint is asked, before any file is.
    for name in [
        "../Cargo",
        "..%2FCargo",
        "%2E%2E%2FCargo",
        "%2Fetc%2Fpasswd",
        "scenarios%2Fscale-out",
        "..%5CCargo",
        "scale-out%00",
    ] {
        for path in [
            format!("/api/scenario?name={name}"),
            format!("/api/runs?scenario={name}"),
            format!("/api/instant?scenario={name}&at=1"),
            format!("/api/scenario.toml?scenario={name}"),
        ] {
            let (status, v) = lab.json(&path);
            assert_eq!(status, 400, "{path}: {v}");
            let message = v["error"]["message"].as_str().unwrap();
            assert!(message.contains("not a path"), "{path}: {message}");
        }
    }
    let (status, v) = lab.json("/api/runs?scenario=no-such-scenario");
    assert_eq!(
        (status, v["error"]["field"].as_str()),
        (400, Some("scenario"))
    );
}

#[test]
fn links_out_of_the_folder_are_not_followed() {
    let dir = temp_dir("links");
    std::fs::copy("scenarios/scale-out.toml", dir.join("mine.toml")).unwrap();
    std::os::unix::fs::symlink(
        std::fs::canonicalize("scenarios/crash.toml").unwrap(),
        dir.join("linked.toml"),
    )
    .unwrap();
    let lab = Lab::start_with(&["--scenarios", dir.to_str().unwrap()]);
    let (_, v) = lab.json("/api/scenarios");
    assert_eq!(v["scenarios"].as_array().unwrap().len(), 1);
    assert_eq!(v["scenarios"][0]["name"], "mine");
    assert_eq!(lab.json("/api/scenario?name=linked").0, 400);
    assert_eq!(lab.json("/api/scenario?name=mine").0, 200);
}

#[test]
fn runs_are_the_cli_runs() {
    let lab = Lab::start();
    let (status, v) = lab.json("/api/runs?scenario=scale-out");
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v["query"],
        "scenario=scale-out&seed=1&variants=eager,cooperative,consumer"
    );
    let variants = v["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 3);
    for run in variants {
        let variant = run["variant"].as_str().unwrap();
        let (out, code) = cgsim(&[
            "run",
            "scenarios/scale-out.toml",
            "--variant",
            variant,
            "--format",
            "json",
        ]);
        assert_eq!(code, Some(0));
        let cli: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(run["digest"], cli["digest"], "{variant}");
        assert_eq!(
            run["rebalances"].as_array().unwrap().len(),
            cli["rebalances"]["count"].as_u64().unwrap() as usize
        );
        assert_eq!(
            run["lanes"]["partitions"].as_array().unwrap().len(),
            24,
            "a lane per partition"
        );
    }
    // The comparison is cgsim compare's.
    let (out, _) = cgsim(&[
        "compare",
        "scenarios/scale-out.toml",
        "--variants",
        "eager,cooperative,consumer",
        "--format",
        "json",
    ]);
    let cli: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["comparison"]["variants"], cli["variants"]);
    // The window spans the rebalances; the view opens at the first one's end.
    assert_eq!(v["at_ms"], 60136);
    assert_eq!(v["window_ms"], serde_json::json!([59460, 66064]));
}

/// A KIP-848 member is RECONCILING from the heartbeat answer that brings its new target until
/// its poll loop has run both callbacks, then ACKNOWLEDGING until the answer to its
/// acknowledgement (issue 70): on `scale-out`, c2 hears of the new target at 60.413 s, revokes
/// at 60.524 s, assigns and acknowledges at 60.610 s, and is answered at 60.617 s.
#[test]
fn the_instant_view_shows_a_kip_848_members_reconciliation() {
    let lab = Lab::start();
    let state_of = |at: u64, member: &str| -> String {
        let (status, v) = lab.json(&format!(
            "/api/instant?scenario=scale-out&variants=consumer&at={at}"
        ));
        assert_eq!(status, 200, "{v}");
        let members = v["variants"][0]["state"]["members"].as_array().unwrap();
        let m = members.iter().find(|m| m["name"] == member).unwrap();
        m["state"].as_str().unwrap().to_string()
    };
    assert_eq!(state_of(60_400, "c2"), "STABLE");
    assert_eq!(state_of(60_450, "c2"), "RECONCILING");
    assert_eq!(state_of(60_600, "c2"), "RECONCILING");
    assert_eq!(state_of(60_612, "c2"), "ACKNOWLEDGING");
    assert_eq!(state_of(60_700, "c2"), "STABLE");
}

#[test]
fn the_state_at_an_instant_shows_the_owners_the_trace_shows() {
    let lab = Lab::start();
    let dir = temp_dir("traces");
    for variant in ["eager", "cooperative", "consumer"] {
        let trace = dir.join(format!("{variant}.json"));
        let (_, code) = cgsim(&[
            "run",
            "scenarios/scale-out.toml",
            "--variant",
            variant,
            "--chrome-trace",
            trace.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(0));
        let trace = std::fs::read_to_string(trace).unwrap();
        for at in [
            0, 3_000, 60_000, 60_014, 60_100, 60_137, 60_146, 61_000, 63_153, 63_160, 64_153,
            449_999,
        ] {
            let (status, v) = lab.json(&format!(
                "/api/instant?scenario=scale-out&variants={variant}&at={at}"
            ));
            assert_eq!(status, 200, "{v}");
            let shown: std::collections::BTreeMap<String, Option<String>> = v["variants"][0]
                ["state"]["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    (
                        p["name"].as_str().unwrap().to_string(),
                        p["owner"].as_str().map(str::to_string),
                    )
                })
                .collect();
            assert_eq!(shown, owners_from_trace(&trace, at), "{variant} at {at} ms");
        }
    }
    // A fresh lab (nothing cached) gives the same state: the same link, the same view.
    let path = "/api/instant?scenario=scale-out&at=61000&faults=crash:c2@60500";
    let first = lab.get(path).2;
    assert_eq!(lab.get(path).2, first);
    assert_eq!(Lab::start().get(path).2, first);
}

#[test]
fn downloads_are_what_cgsim_run_writes() {
    let lab = Lab::start();
    let query = "scenario=scale-out&faults=crash:c2@61000,join:c6@70000";
    let (status, head, toml) = lab.get(&format!("/api/scenario.toml?{query}"));
    assert_eq!(status, 200);
    assert!(head.contains("application/toml"), "{head}");
    assert!(
        head.contains("Content-Disposition: attachment; filename=\"scale-out-lab.toml\""),
        "{head}"
    );
    // The file's own lines, in order, with the added entries among them (each after the
    // entries of its kind).
    let original = std::fs::read_to_string("scenarios/scale-out.toml").unwrap();
    let mut lines = toml.lines();
    for line in original.lines() {
        assert!(lines.any(|l| l == line), "{line:?} kept in order");
    }
    assert!(toml.contains("# Added in cgsim lab: c2 crashes at 61000 ms (no LeaveGroup)\n[[timeline]]\nat_ms = 61000\naction = \"crash\"\nmember = \"c2\"\n"));
    assert!(toml.contains("[[members]]\nname = \"c6\"\n"));
    let dir = temp_dir("downloads");
    let file = dir.join("edited.toml");
    std::fs::write(&file, &toml).unwrap();
    for variant in ["cooperative", "consumer"] {
        let trace = dir.join(format!("{variant}-trace.json"));
        let (report, _) = cgsim(&[
            "run",
            file.to_str().unwrap(),
            "--variant",
            variant,
            "--format",
            "json",
            "--chrome-trace",
            trace.to_str().unwrap(),
        ]);
        let (status, head, body) = lab.get(&format!("/api/report.json?{query}&variant={variant}"));
        assert_eq!(status, 200);
        assert!(
            head.contains(&format!("scale-out-lab-{variant}-seed1.json")),
            "{head}"
        );
        assert_eq!(
            body, report,
            "{variant}: the report is the CLI's, byte for byte"
        );
        let (status, _, body) = lab.get(&format!("/api/trace.json?{query}&variant={variant}"));
        assert_eq!(status, 200);
        assert_eq!(body, std::fs::read_to_string(&trace).unwrap(), "{variant}");
    }
    let (status, v) = lab.json(&format!("/api/report.json?{query}"));
    assert_eq!(
        (status, v["error"]["field"].as_str()),
        (400, Some("variant"))
    );
}

fn refused(lab: &Lab, path: &str) -> (u16, Value) {
    let (status, v) = lab.json(path);
    assert!(v["error"]["message"].is_string(), "{path}: {v}");
    (status, v)
}

/// An edited scenario (the `toml` field), percent-encoded.
fn edited(text: &str) -> String {
    format!("toml={}", cgsim::lab::api::encode(text))
}

#[test]
fn every_bound_answers_with_a_message() {
    let lab = Lab::start();
    let base = std::fs::read_to_string("scenarios/scale-out.toml").unwrap();

    // A body above the bound is refused before it is read, on every endpoint.
    let (status, _, body) = lab.request(&format!(
        "GET /api/runs?scenario=scale-out HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 70000\r\n\r\n",
        lab.port
    ));
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("the lab takes at most 65536"), "{body}");

    // The simulated length.
    let long = base.replace("duration_ms = 460_000", "duration_ms = 3_600_001");
    let (status, v) = refused(&lab, &format!("/api/runs?{}", edited(&long)));
    assert_eq!(status, 413);
    assert_eq!(v["error"]["field"], "toml");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("the lab runs at most 3600000 ms of simulated time"));

    // Members, partitions, brokers.
    let many = base.replace("count = 5", "count = 51");
    let (status, v) = refused(&lab, &format!("/api/runs?{}", edited(&many)));
    assert_eq!(status, 413);
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("51 members: the lab runs at most 50"));
    let wide = base.replace("partitions = 24", "partitions = 257");
    let (status, v) = refused(&lab, &format!("/api/runs?{}", edited(&wide)));
    assert_eq!(status, 413);
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("257 partitions in all"));
    let (status, v) = refused(
        &lab,
        &format!(
            "/api/runs?{}",
            edited(&format!("{base}\n[cluster]\nbrokers = 21\n"))
        ),
    );
    assert_eq!(status, 413, "{v}");

    // Faults added, and a fault outside the run.
    let faults: Vec<String> = (0..21)
        .map(|i| format!("stall:c1@{}/10", 1000 + i))
        .collect();
    let (status, v) = refused(
        &lab,
        &format!("/api/runs?scenario=scale-out&faults={}", faults.join(",")),
    );
    assert_eq!(
        (status, v["error"]["field"].as_str()),
        (413, Some("faults"))
    );
    // A fault outside the run is not added: the runs go on without it, and it is listed with
    // why and a way to remove it.
    let (status, _, body) = lab.get("/api/runs?scenario=scale-out&faults=crash:c1@460000");
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let fault = &v["faults"][0];
    assert_eq!(
        fault["refused"],
        "crash:c1@460000: at 460000 ms is not before the run's end (460000 ms)"
    );
    assert_eq!(
        fault["remove"],
        "scenario=scale-out&seed=1&variants=eager,cooperative,consumer"
    );
    assert!(v["variants"][0]["lanes"].is_object(), "the lanes are kept");

    // An address above 8 KiB (an edited scenario travels in it).
    let big = format!("{base}\n# {}\n", "x".repeat(9000));
    assert_eq!(lab.get(&format!("/api/runs?{}", edited(&big))).0, 414);
}

#[test]
fn a_scenario_file_above_the_bound_is_refused() {
    let dir = temp_dir("big");
    let base = std::fs::read_to_string("scenarios/scale-out.toml").unwrap();
    std::fs::write(
        dir.join("big.toml"),
        format!("{base}\n# {}\n", "x".repeat(70_000)),
    )
    .unwrap();
    let lab = Lab::start_with(&["--scenarios", dir.to_str().unwrap()]);
    let (status, v) = refused(&lab, "/api/runs?scenario=big");
    assert_eq!(
        (status, v["error"]["field"].as_str()),
        (413, Some("scenario"))
    );
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("the lab takes at most 65536"));
}

#[test]
fn a_run_past_its_wall_time_is_stopped_with_a_message() {
    let lab = Lab::start_with(&["--run-timeout-ms", "1"]);
    let (status, v) = refused(&lab, "/api/runs?scenario=join-under-churn&variants=eager");
    assert_eq!(status, 413, "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("variant eager: the run took more than 1 ms of wall time"),
        "{message}"
    );
    // The lab goes on answering.
    assert_eq!(lab.json("/api/scenarios").0, 200);
}
