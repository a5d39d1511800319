//! `cgsim lab` over real HTTP: the binary started on port 0, every endpoint asked with a plain
//! TcpStream, as a browser would, and the answers checked against the library the CLI uses.

mod lab_support;

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
