//! The lab in a real browser: headless Chromium (Debian's `chromium`) opens the page served by
//! `cgsim lab`, runs its script and gives back the DOM, whose rendered values are checked: the
//! seed 001 table (every count against the library's table, which the CLI prints), the seed 000
//! co-location, a shared address reopened in a fresh browser, an input error shown next to its
//! input. Screenshots go to `target/tmp/lab-screenshots/` (`scripts/lab-screenshots` copies them
//! to `docs/`).
//!
//! Ignored by a plain `cargo test` (it says so); `.ci/run` runs it with `--ignored` and
//! `CGSIM_BROWSER_TESTS=1`, and then a missing browser fails the test.
//! `CGSIM_CHROMIUM` names another browser binary than `/usr/bin/chromium`.

use crate::{browser_support, lab_support};

use cgsim::assignor::table;
use lab_support::Lab;
use std::path::{Path, PathBuf};

fn chromium() -> Option<PathBuf> {
    browser_support::chromium("lab_browser")
}

fn tempdir() -> PathBuf {
    browser_support::tempdir("cgsim-lab-browser")
}

/// Virtual time waits for the page's fetch and script before the DOM is taken.
fn browser(bin: &Path, extra: &[&str], url: &str) -> Vec<u8> {
    let flags = [&["--virtual-time-budget=10000"], extra].concat();
    browser_support::browser(bin, &flags, url)
}

/// The DOM after the page's script ran.
fn dom(bin: &Path, url: &str) -> String {
    String::from_utf8(browser(bin, &["--dump-dom"], url)).expect("UTF-8 DOM")
}

fn screenshot(bin: &Path, url: &str, name: &str, height: u32) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lab-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    browser(
        bin,
        &[
            &format!("--screenshot={}", path.display()),
            &format!("--window-size=1400,{height}"),
        ],
        url,
    );
    let png = std::fs::read(&path).expect("a screenshot was written");
    assert!(png.starts_with(b"\x89PNG"), "{} is a PNG", path.display());
}

/// The text of the element with this id (a leaf), as rendered.
fn text(dom: &str, id: &str) -> Option<String> {
    let at = dom.find(&format!("id=\"{id}\""))?;
    let start = at + dom[at..].find('>')? + 1;
    let end = start + dom[start..].find('<')?;
    Some(
        dom[start..end]
            .replace("&amp;", "&")
            .replace("&quot;", "\""),
    )
}

/// The value of `attr` on the element with this id.
fn attr(dom: &str, id: &str, attr: &str) -> Option<String> {
    let at = dom.find(&format!("id=\"{id}\""))?;
    let tag_start = dom[..at].rfind('<')?;
    let tag = &dom[tag_start..tag_start + dom[tag_start..].find('>')?];
    let key = format!("{attr}=\"");
    let v = tag.find(&key)? + key.len();
    Some(tag[v..v + tag[v..].find('"')?].replace("&amp;", "&"))
}

/// The rendered result, which a reopened link must reproduce.
fn result(dom: &str) -> &str {
    let start = dom.find("<main id=\"result\"").expect("the result");
    &dom[start..start + dom[start..].find("</main>").expect("its end")]
}

#[test]
#[ignore = "needs CGSIM_BROWSER_TESTS=1 and chromium; .ci/run runs it with --ignored"]
fn the_lab_in_headless_chromium() {
    let Some(bin) = chromium() else { return };
    let lab = Lab::start();

    // The seed 001 tables, one click away from the default page.
    let front = dom(&bin, &lab.url("/"));
    assert_eq!(text(&front, "status").as_deref(), Some("Shown: 1 table(s)"));
    let href = attr(&front, "preset-seed-001", "href").expect("the seed 001 link");
    let seed_001 = dom(&bin, &lab.url(&href));
    let tables = table::build(&table::preset("seed-001").unwrap()).unwrap();
    let mut checked = 0;
    for (s, t) in tables.iter().enumerate() {
        for (g, block) in t.blocks.iter().enumerate() {
            for col in &block.columns {
                let a = col.assignor;
                for (m, count) in col.counts().iter().enumerate() {
                    let id = format!("count-{s}-{g}-{a}-{m}");
                    assert_eq!(text(&seed_001, &id), Some(count.to_string()), "{id}");
                    checked += 1;
                }
                let id = format!("idle-{s}-{g}-{a}");
                assert_eq!(text(&seed_001, &id), Some(col.idle().to_string()), "{id}");
                let id = format!("rebalances-{s}-{g}-{a}");
                let runs = col.formation.rebalances.len().to_string();
                assert_eq!(text(&seed_001, &id), Some(runs), "{id}");
            }
        }
    }
    assert_eq!(checked, (2 + 3 + 4 + 10 + 2 + 2) * 7);
    // The README's figures: range 6 and 3 with two members; 7 of 10 idle under range.
    assert_eq!(text(&seed_001, "count-0-0-range-0").as_deref(), Some("6"));
    assert_eq!(text(&seed_001, "count-0-0-range-1").as_deref(), Some("3"));
    assert_eq!(text(&seed_001, "idle-0-3-range").as_deref(), Some("7"));
    assert_eq!(text(&seed_001, "idle-0-3-roundrobin").as_deref(), Some("1"));
    assert_eq!(
        text(&seed_001, "rebalances-0-0-cooperative-sticky").as_deref(),
        Some("3")
    );
    screenshot(&bin, &lab.url(&href), "seed-001.png", 2400);

    // Seed 000: only the co-partition assigner (and range) co-locates the two topics.
    let href = attr(&front, "preset-seed-000", "href").expect("the seed 000 link");
    let seed_000 = dom(&bin, &lab.url(&href));
    for (assignor, want) in [
        ("roundrobin", "0/6"),
        ("sticky", "0/6"),
        ("co-partition", "6/6"),
        ("range", "6/6"),
    ] {
        let id = format!("coloc-0-0-{assignor}-0");
        assert_eq!(text(&seed_000, &id).as_deref(), Some(want), "{id}");
    }
    screenshot(&bin, &lab.url(&href), "seed-000.png", 1300);

    // A preset's section opened for editing shows the same counts as the preset.
    let edit = attr(&seed_001, "edit-0", "href").expect("an edit link");
    let edited = dom(&bin, &lab.url(&edit));
    for g in 0..4 {
        for a in ["range", "sticky", "uniform"] {
            let id = format!("idle-0-{g}-{a}");
            assert_eq!(text(&edited, &id), text(&seed_001, &id), "{id} after edit");
        }
    }
    assert_eq!(
        attr(&edited, "topics", "value").as_deref(),
        Some("t3a=3,t3b=3,t3c=3")
    );

    // A shared link: static ids, a narrower subscription, explicit joins; reopened in a fresh
    // browser, the same view, and the form holds the same fields.
    let shared = "/?topics=orders%3D6,payments%3D6&members=3,4&joins=4%3D3%2B1\
                  &static-ids=c1%3Dpod-a&subscriptions=c3%3Dorders";
    let first = dom(&bin, &lab.url(shared));
    let again = dom(&bin, &lab.url(shared));
    assert_eq!(text(&first, "status").as_deref(), Some("Shown: 1 table(s)"));
    assert_eq!(result(&first), result(&again));
    assert_eq!(attr(&again, "joins", "value").as_deref(), Some("4=3+1"));
    assert_eq!(
        attr(&again, "static-ids", "value").as_deref(),
        Some("c1=pod-a")
    );
    assert!(first.contains("static pod-a"));
    // c3 reads only orders: 6 partitions of payments over c1, c2 (and c4 in the group of 4).
    let api = lab.json(&format!("/api/table?{}", &shared[2..])).1;
    let counts = &api["sections"][0]["groups"][0]["assignors"][0]["counts"];
    assert_eq!(
        text(&first, "count-0-0-range-2"),
        Some(counts[2].to_string())
    );
    screenshot(&bin, &lab.url(shared), "shared.png", 1500);

    // An input error is shown next to its input, not as a blank page.
    let bad = dom(&bin, &lab.url("/?topics=t3a:3&members=2"));
    let message = text(&bad, "error-topics").expect("an error under the topics input");
    assert!(message.contains("expected NAME=PARTITIONS"), "{message}");
    assert!(text(&bad, "status").unwrap().starts_with("No view"));
    screenshot(&bin, &lab.url("/?topics=t3a:3&members=2"), "error.png", 500);
}

/// The same as `cgsim compare` shows a figure's median (the page's comparison cell).
fn shown(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "-".into(),
        v if v.is_u64() => v.to_string(),
        v => format!("{:.1}%", v.as_f64().unwrap() * 100.0),
    }
}

/// Every owner the page shows for `variant`, by partition (`-`: none).
fn owners_shown(dom: &str, variant: &str, partitions: &[String]) -> Vec<(String, String)> {
    partitions
        .iter()
        .map(|p| {
            let id = format!("owner-{variant}-{p}");
            (
                p.clone(),
                text(dom, &id).unwrap_or_else(|| panic!("no {id}")),
            )
        })
        .collect()
}

fn owners_in_trace(trace: &str, at_ms: u64) -> Vec<(String, String)> {
    lab_support::owners_from_trace(trace, at_ms)
        .into_iter()
        .map(|(p, o)| (p, o.unwrap_or_else(|| "-".into())))
        .collect()
}

/// The CLI's report and Perfetto trace of a scenario file under a variant.
fn cli_run(file: &Path, variant: &str) -> (serde_json::Value, String) {
    let trace = tempdir().join(format!("{variant}.json"));
    let (report, _) = lab_support::cgsim(&[
        "run",
        file.to_str().unwrap(),
        "--variant",
        variant,
        "--format",
        "json",
        "--chrome-trace",
        trace.to_str().unwrap(),
    ]);
    let trace_text = std::fs::read_to_string(&trace).unwrap();
    (serde_json::from_str(&report).unwrap(), trace_text)
}

#[test]
#[ignore = "needs CGSIM_BROWSER_TESTS=1 and chromium; .ci/run runs it with --ignored"]
fn the_rebalance_view_in_headless_chromium() {
    let Some(bin) = chromium() else { return };
    let lab = Lab::start();
    let variants = ["eager", "cooperative", "consumer"];
    let file = Path::new("scenarios/scale-out.toml");
    let runs: Vec<(serde_json::Value, String)> =
        variants.iter().map(|v| cli_run(file, v)).collect();
    let partitions: Vec<String> = lab_support::owners_from_trace(&runs[0].1, 0)
        .into_keys()
        .collect();
    assert_eq!(partitions.len(), 24);

    // The scale-out comparison, from the assignor page's link: every cell is cgsim compare's.
    let front = dom(&bin, &lab.url("/"));
    let href = attr(&front, "nav-rebalances", "href").expect("a link to the rebalance view");
    let view = dom(&bin, &lab.url(&href));
    assert_eq!(
        text(&view, "status").as_deref(),
        Some("Shown: 3 run(s) at 60136 ms")
    );
    let (out, _) = lab_support::cgsim(&[
        "compare",
        "scenarios/scale-out.toml",
        "--variants",
        "eager,cooperative,consumer",
        "--format",
        "json",
    ]);
    let compare: serde_json::Value = serde_json::from_str(&out).unwrap();
    for f in cgsim::report::compare::FIGURES {
        for v in variants {
            let id = format!("cmp-{v}-{}", f.key);
            let want = shown(&compare["variants"][v][f.key]["median"]);
            assert_eq!(text(&view, &id), Some(want), "{id}");
        }
    }
    assert_eq!(
        text(&view, "cmp-eager-revocations.total").as_deref(),
        Some("24")
    );
    assert_eq!(
        text(&view, "cmp-cooperative-revocations.total").as_deref(),
        Some("4")
    );

    // Scrub to the cooperative follow-up (generation 3): its start, as the report times it.
    let follow_up = &runs[1].0["rebalances"]["list"][1];
    assert_eq!(follow_up["trigger"], "follow_up");
    let start = follow_up["start_ms"].as_u64().unwrap();
    let href = attr(&view, "rebalance-cooperative-1-start", "href").expect("the follow-up's link");
    assert!(href.contains(&format!("at={start}")), "{href}");
    let at_start = dom(&bin, &lab.url(&href));
    assert_eq!(text(&at_start, "at"), Some(start.to_string()));
    assert_eq!(
        text(&at_start, "status"),
        Some(format!("Shown: 3 run(s) at {start} ms"))
    );
    // Every owner shown, in every variant, is the owner the CLI's trace shows at that instant;
    // the four partitions moving to c5 have none under cooperative.
    for (v, (_, trace)) in variants.iter().zip(&runs) {
        assert_eq!(
            owners_shown(&at_start, v, &partitions),
            owners_in_trace(trace, start),
            "{v} at {start} ms"
        );
    }
    let standing: Vec<_> = owners_shown(&at_start, "cooperative", &partitions)
        .into_iter()
        .filter(|(_, o)| o == "-")
        .collect();
    assert_eq!(standing.len(), 4, "{standing:?}");
    let coordinator = text(&at_start, "coordinator-cooperative").unwrap();
    assert!(
        coordinator.starts_with("PreparingRebalance, generation 2"),
        "{coordinator}"
    );
    assert!(text(&at_start, "rebalance-now-cooperative")
        .unwrap()
        .starts_with("g3 follow_up"));
    screenshot(&bin, &lab.url(&href), "rebalance-follow-up.png", 2700);

    // A shared link opened in a fresh browser shows the same owners (the same view).
    let again = dom(&bin, &lab.url(&href));
    assert_eq!(result(&again), result(&at_start));

    // After the follow-up's end and a second more, the owners are the report's final ones.
    let end_href = attr(&at_start, "rebalance-cooperative-1-end", "href").unwrap();
    let at_end = dom(&bin, &lab.url(&end_href));
    let later_href = attr(&at_end, "step-plus-1000", "href").unwrap();
    let later = dom(&bin, &lab.url(&later_href));
    let end = follow_up["end_ms"].as_u64().unwrap();
    assert_eq!(text(&later, "at"), Some((end + 1000).to_string()));
    let finals = runs[1].0["final_assignment"].as_object().unwrap();
    for (member, parts) in finals {
        for p in parts.as_array().unwrap() {
            let id = format!("owner-cooperative-{}", p.as_str().unwrap());
            assert_eq!(text(&later, &id).as_deref(), member.as_str().into(), "{id}");
        }
    }
    assert_eq!(
        text(&later, "state-cooperative-c5").as_deref(),
        Some("STABLE")
    );
    assert_eq!(
        text(&later, "generation-cooperative-c5").as_deref(),
        Some("3")
    );

    // Add a crash of c3 at the follow-up's start from the page, and run again (c3's JoinGroup
    // for the follow-up has not gone out yet, so the follow-up waits for it).
    let crash = attr(&at_start, "action-crash-c3", "href").expect("a crash button for c3");
    assert!(
        crash.contains(&format!("faults=crash:c3@{start}")),
        "{crash}"
    );
    let crashed = dom(&bin, &lab.url(&crash));
    assert_eq!(
        text(&crashed, "status"),
        Some(format!("Shown: 3 run(s) at {start} ms"))
    );
    assert!(crashed.contains(&format!("c3 crashes at {start} ms (no LeaveGroup)")));
    for v in variants {
        assert_eq!(
            text(&crashed, &format!("process-{v}-c3")).as_deref(),
            Some("crashed")
        );
    }
    // The new reports: the edited scenario downloaded from the page, run by the CLI, gives the
    // reports the page offers, byte for byte, and the figures its table shows.
    let toml = lab
        .get(&attr(&crashed, "download-scenario", "href").unwrap())
        .2;
    let edited = tempdir().join("scale-out-crash.toml");
    std::fs::write(&edited, &toml).unwrap();
    for v in variants {
        let (report, trace) = cli_run(&edited, v);
        let offered = lab
            .get(&attr(&crashed, &format!("download-report-{v}"), "href").unwrap())
            .2;
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&offered).unwrap(),
            report,
            "{v}"
        );
        // What c3 owned when it crashed: what the page showed it owning at that instant.
        assert_eq!(
            Some(report["lost"]["by_crash"].to_string()),
            text(&at_start, &format!("owns-{v}-c3")),
            "{v}"
        );
        // The coordinator notices only when c3's session expires (45 s after its last
        // heartbeat, at most one heartbeat interval before the crash: 3 s classic, 5 s
        // KIP-848): eager and KIP-848 then rebalance; cooperative's follow-up, whose join
        // phase c3 never rejoins, waits that long.
        let list = report["rebalances"]["list"].as_array().unwrap();
        let expiry = list
            .iter()
            .find(|r| r["trigger"] == "member_expired" && r["member"] == "c3")
            .or_else(|| list.iter().find(|r| r["trigger"] == "follow_up"))
            .expect("a rebalance without c3");
        let interval = if v == "consumer" { 5_000 } else { 3_000 };
        assert!(
            expiry["end_ms"].as_u64().unwrap() >= start + 45_000 - interval,
            "{v}: {expiry}"
        );
        for key in [
            "rebalances.count",
            "revocations.total",
            "pauses.unavailable_ms.max",
        ] {
            let want = key.split('.').fold(&report, |r, k| &r[k]);
            assert_eq!(
                text(&crashed, &format!("cmp-{v}-{key}")),
                Some(want.to_string()),
                "{v} {key}"
            );
        }
        assert_eq!(
            owners_shown(&crashed, v, &partitions),
            owners_in_trace(&trace, start),
            "{v} after the crash"
        );
    }
    // Scrub to the rebalance c3's session expiry starts under eager: cooperative is still in
    // its follow-up's join phase, waiting for c3.
    let expiry = attr(&crashed, "rebalance-eager-1-start", "href").unwrap();
    let at_expiry = dom(&bin, &lab.url(&expiry));
    assert!(text(&at_expiry, "rebalance-now-eager")
        .unwrap()
        .starts_with("g3 member_expired (c3): join"));
    let cooperative_now = text(&at_expiry, "rebalance-now-cooperative").unwrap();
    assert!(
        cooperative_now.starts_with(&format!(
            "g3 follow_up ({}): ",
            follow_up["member"].as_str().unwrap()
        )),
        "{cooperative_now}"
    );
    assert_eq!(
        text(&at_expiry, "owns-cooperative-c3").as_deref(),
        Some("0")
    );
    screenshot(&bin, &lab.url(&expiry), "rebalance-crash.png", 2700);

    // An error is shown beside its input.
    let bad = dom(
        &bin,
        &lab.url("/rebalance?scenario=scale-out&faults=crash:c9"),
    );
    let message = text(&bad, "error-faults").expect("an error under the form");
    assert!(message.contains("expected KIND:TARGET@AT_MS"), "{message}");
    // A fault the timeline cannot take, sent in the address by hand: named with the entry it
    // conflicts with, and the page keeps its lanes and offers removing it.
    let refused = dom(
        &bin,
        &lab.url("/rebalance?scenario=rolling-bounce&faults=crash:c3@100000"),
    );
    assert_eq!(
        text(&refused, "refused-fault-0").as_deref(),
        Some("not added: crash:c3@100000: the rolling bounce (line 25) cannot stop c3 at 120000 ms after it ")
    );
    assert_eq!(
        attr(&refused, "remove-fault-0", "href").as_deref(),
        Some("/rebalance?scenario=rolling-bounce&seed=1&variants=eager,cooperative,consumer")
    );
    assert!(refused.contains("class=\"lanes\""), "the lanes are kept");
    assert_eq!(text(&refused, "error-faults").unwrap_or_default(), "");
}
