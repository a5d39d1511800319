//! `cgsim explain`: the chains say what the model did, from its facts. The cooperative
//! scale-out's follow-up waits for the newcomer's own heartbeat (and says how long); the
//! poll-loop scenario is named a loop with its cause and explained as never settling; KIP-848
//! rebalances are told as epoch bumps, revocations and acknowledgements; JSON carries the same.

use std::process::Command;

fn cgsim(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cgsim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("utf-8"),
    )
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, out) = cgsim(&all);
    assert_eq!(code, 0, "{out}");
    serde_json::from_str(&out).expect("JSON")
}

#[test]
fn cooperative_follow_up_waits_for_the_newcomers_heartbeat() {
    let (code, text) = cgsim(&[
        "explain",
        "scenarios/scale-out.toml",
        "--variant",
        "cooperative",
    ]);
    assert_eq!(code, 0);
    assert!(
        text.contains("c5 started at 60.000 s; its JoinGroup put the group in PreparingRebalance"),
        "{text}"
    );
    assert!(
        text.contains(
            "c1..c4 learned of it from their next heartbeat answers (REBALANCE_IN_PROGRESS"
        ),
        "{text}"
    );
    assert!(
        text.contains("the join phase waited 2993 ms for c5, which owned nothing, so had nothing to revoke and no reason to rejoin, and heard of the follow-up only from its own next heartbeat"),
        "{text}"
    );
    let e = json(&[
        "explain",
        "scenarios/scale-out.toml",
        "--variant",
        "cooperative",
    ]);
    let follow_up = &e["rebalances"][2];
    assert_eq!(follow_up["trigger"], "follow_up");
    assert_eq!(follow_up["waited_for"]["member"], "c5");
    assert_eq!(follow_up["waited_for"]["because"], "heartbeat");
    let ms = follow_up["waited_for"]["ms"].as_u64().expect("ms");
    // The newcomer's heartbeat interval is 3 s: it hears of the follow-up within one.
    assert!((2000..=3100).contains(&ms), "{ms}");
    assert_eq!(e["settled"]["settled"], true);
    assert_eq!(e["loops"].as_array().map(Vec::len), Some(0));
}

#[test]
fn eager_members_revoke_everything_before_rejoining() {
    let (_, text) = cgsim(&["explain", "scenarios/scale-out.toml", "--variant", "eager"]);
    assert!(
        text.contains("before rejoining, c1..c4 revoked everything they owned (6 partitions each"),
        "{text}"
    );
}

#[test]
fn a_poll_loop_is_named_a_loop_and_never_settles() {
    for variant in ["eager", "cooperative", "consumer"] {
        let e = json(&["explain", "scenarios/poll-loop.toml", "--variant", variant]);
        let loops = e["loops"].as_array().expect("loops");
        assert_eq!(loops.len(), 1, "{variant}: {loops:?}");
        let l = &loops[0];
        assert_eq!(l["member"], "c3");
        assert_eq!(l["cause"], "poll_timeout");
        assert_eq!(l["at_end"], true);
        assert!(l["rebalances"].as_u64().unwrap_or(0) >= 4);
        let text = l["text"].as_str().expect("text");
        assert!(text.starts_with("rebalance loop: c3 started"), "{text}");
        // The cause, from the zombie batch's own end: 100 records at 200 ms each.
        assert!(text.contains("(100 records, polled at"), "{text}");
        assert!(text.contains("20000 ms after the poll"), "{text}");
        assert_eq!(e["settled"]["settled"], false, "{variant}");
        let settled = e["settled"]["text"].as_str().expect("text");
        assert!(
            settled.starts_with("the group never settled: "),
            "{settled}"
        );
        assert!(
            settled.contains("c3's rebalance loop kept it from settling"),
            "{settled}"
        );
    }
}

#[test]
fn a_single_stall_is_a_poll_timeout_not_a_loop() {
    let (_, text) = cgsim(&[
        "explain",
        "scenarios/slow-member.toml",
        "--variant",
        "cooperative",
    ]);
    assert!(
        text.contains("c2's poll loop had not called poll() since 60.010 s"),
        "{text}"
    );
    assert!(
        text.contains("a stall from 60.010 s until 460.008 s kept its poll loop inside one batch"),
        "{text}"
    );
    assert!(text.contains("loops: none"), "{text}");
}

#[test]
fn consumer_protocol_rebalances_are_epoch_bumps_and_acknowledgements() {
    let (_, text) = cgsim(&[
        "explain",
        "scenarios/scale-out.toml",
        "--variant",
        "consumer",
    ]);
    assert!(text.contains("protocol consumer"), "{text}");
    assert!(
        text.contains("c5 started at 60.000 s; its first heartbeat (member epoch 0) joined the group and bumped the group epoch to 6"),
        "{text}"
    );
    assert!(
        text.contains("c1..c4 had to revoke 1 partition each"),
        "{text}"
    );
    assert!(text.contains("c5 was given 4 partitions"), "{text}");
    let e = json(&[
        "explain",
        "scenarios/scale-out.toml",
        "--variant",
        "consumer",
    ]);
    let last = e["rebalances"]
        .as_array()
        .and_then(|r| r.last())
        .expect("a rebalance");
    assert_eq!(last["waited_for"]["member"], "c5");
    let kinds: Vec<&str> = last["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .filter_map(|c| c["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["started", "had_to_revoke", "given", "reconciled"]);
}

#[test]
fn explain_is_deterministic_and_refuses_bad_input() {
    let a = cgsim(&[
        "explain",
        "scenarios/rolling-bounce.toml",
        "--variant",
        "cooperative",
    ]);
    let b = cgsim(&[
        "explain",
        "scenarios/rolling-bounce.toml",
        "--variant",
        "cooperative",
    ]);
    assert_eq!(a, b);
    let (code, _) = cgsim(&["explain", "scenarios/scale-out.toml", "--variant", "nope"]);
    assert_eq!(code, 2);
}

/// A zombie fenced by its commit's answer: after the network partition heals, pod1's
/// auto-commit is answered UNKNOWN_MEMBER_ID before any heartbeat is, and explain names the
/// OffsetCommit as what ended its membership.
#[test]
fn a_member_fenced_by_its_commit_answer_is_explained_as_such() {
    let (code, text) = cgsim(&[
        "explain",
        "scenarios/network-partition.toml",
        "--variant",
        "eager",
    ]);
    assert_eq!(code, 0);
    assert!(
        text.contains("pod1 lost its membership (UNKNOWN_MEMBER_ID on an OffsetCommit at 120.733 s) and rejoined as a new member"),
        "{text}"
    );
}

#[test]
fn a_sync_group_that_keeps_timing_out_is_named_as_the_loops_cause() {
    // Cooperative scale-out with 35 s batches: the newcomer's SyncGroup waits for the leader's
    // past request.timeout.ms (30 s), and its rejoin starts the next rebalance, every round.
    let e = json(&[
        "explain",
        "scenarios/scale-out.toml",
        "--variant",
        "cooperative",
        "--set",
        "group.record_processing_us=70000",
        "--set",
        "group.max_poll_records=500",
        "--set",
        "duration_ms=900000",
    ]);
    let loops = e["loops"].as_array().expect("loops");
    assert_eq!(loops.len(), 1, "{loops:?}");
    assert_eq!(loops[0]["member"], "c5");
    assert_eq!(loops[0]["cause"], "request_timeout");
    let text = loops[0]["text"].as_str().expect("text");
    assert!(text.contains("c5's SyncGroup timed out"), "{text}");
    let second = &e["rebalances"][2];
    assert_eq!(second["generation"], 3);
    let cause = &second["causes"][0];
    assert_eq!(cause["kind"], "request_timed_out", "{cause}");
    assert_eq!(e["settled"]["settled"], false);
}

#[test]
fn a_static_members_restart_without_a_rebalance_is_not_folded_into_the_next_one() {
    // Six static members bounced one after another, each down 50 s (past the 45 s session):
    // c4's process restarts at 200 s and takes its entry over at once (KIP-345, no rebalance);
    // the rebalance that c5's expiry starts at 224 s finds c4 a member that learns of it from
    // its heartbeat, not one that "started and joined" at 200 s.
    let mut toml = String::from(
        "name = \"static-rolling\"\nseed = 1\nduration_ms = 400_000\n\n\
         [[topics]]\nname = \"orders\"\npartitions = 12\n\n\
         [group]\nrecord_processing_us = 2_000\nmax_poll_records = 100\n\n",
    );
    for i in 1..=6 {
        toml.push_str(&format!(
            "[[members]]\nname = \"c{i}\"\ngroup_instance_id = \"pod-{i}\"\n\n"
        ));
    }
    toml.push_str(
        "[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 240\n\n\
         [[timeline]]\nat_ms = 60_000\naction = \"rolling_bounce\"\ninterval_ms = 30_000\n\
         duration_ms = 50_000\n",
    );
    let dir = std::env::temp_dir().join(format!("cgsim-explain-static-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("static-rolling.toml");
    std::fs::write(&path, toml).unwrap();
    let (code, text) = cgsim(&["explain", path.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{text}");
    let g4 = &text[text.find("generation 4").expect("generation 4")..];
    let g4 = &g4[..g4.find("generation 5").unwrap_or(g4.len())];
    assert!(g4.contains("c5's session expired at 224.010 s"), "{g4}");
    assert!(
        g4.contains("c1..c4 learned of it from their next heartbeat answers"),
        "{g4}"
    );
    assert!(!g4.contains("c4 and c5 started"), "{g4}");
    assert!(
        g4.contains("c5 started and joined as new member (at 230.005 s)"),
        "{g4}"
    );
}

/// A deploy of static members: each restart within the session timeout is told as a rebalance
/// that did not happen (KIP-345), in its place among the rebalances, and the one rebalance (c6's
/// session expiry) tells the eager members' full revoke before their JoinGroups, with none of
/// the restarts folded into it. The text is a snapshot.
#[test]
fn a_static_rolling_deploy_is_told_restart_by_restart() {
    let (code, text) = cgsim(&[
        "explain",
        "scenarios/static-rolling-deploy.toml",
        "--variant",
        "eager",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(text.matches("no rebalance at ").count(), 6, "{text}");
    assert!(
        text.contains("c3 closed at 120.000 s without a LeaveGroup"),
        "{text}"
    );
    let expiry = &text[text.find("generation 2").expect("generation 2")..];
    assert!(!expiry.contains("joined as new member"), "{expiry}");
    assert!(expiry.contains("revoked everything they owned"), "{expiry}");
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("explain--static-rolling-deploy@eager", text);
    });
}

/// The same deploy under KIP-848 in JSON: `non_events[]`, each `{at_ms, member, reason}`, one per
/// restart (a static member leaves with epoch -2 and its new process takes the entry over, the
/// group epoch unchanged). The JSON is a snapshot.
#[test]
fn explain_json_lists_the_rebalances_that_did_not_happen() {
    let e = json(&[
        "explain",
        "scenarios/static-rolling-deploy.toml",
        "--variant",
        "consumer",
    ]);
    let non_events = e["non_events"].as_array().expect("non_events[]");
    let members: Vec<&str> = non_events
        .iter()
        .map(|n| n["member"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["c1", "c2", "c3", "c4", "c5", "c6"]);
    let first = &non_events[0];
    assert_eq!(first["at_ms"], 65_010, "{first}");
    let reason = first["reason"].as_str().unwrap();
    assert!(reason.contains("member epoch -2"), "{reason}");
    assert!(
        reason.contains("within group.consumer.session.timeout.ms (45000 ms)"),
        "{reason}"
    );
    // The formation's acknowledgements are the formation's, not the restarts' 65 s to 215 s.
    let formation = e["rebalances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["formation"] == true && !r["end_ms"].is_null())
        .expect("the formation's last epoch");
    assert_eq!(formation["end_ms"], 10_509);
    assert!(formation["waited_for"]["ms"].as_u64().unwrap() < 11_000);
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(
            "explain--static-rolling-deploy@consumer",
            serde_json::to_string_pretty(&e).unwrap()
        );
    });
}

/// A stall shorter than max.poll.interval.ms and a cut shorter than the session are where a
/// reader expects a rebalance and the group had none: `non_events[]` says why.
#[test]
fn a_short_stall_and_a_short_cut_are_rebalances_that_did_not_happen() {
    let e = json(&[
        "explain",
        "scenarios/slow-member.toml",
        "--variant",
        "eager",
        "--set",
        "timeline.0.duration_ms=100000",
    ]);
    assert_eq!(
        e["rebalances"].as_array().unwrap().len(),
        1,
        "formation only"
    );
    let stall = &e["non_events"][0];
    assert_eq!(
        (stall["at_ms"].as_u64(), stall["member"].as_str()),
        (Some(60_010), Some("c2"))
    );
    let reason = stall["reason"].as_str().unwrap();
    assert!(
        reason.contains("within max.poll.interval.ms (300000 ms)"),
        "{reason}"
    );
    let e = json(&[
        "explain",
        "scenarios/network-partition.toml",
        "--variant",
        "consumer",
        "--set",
        "timeline.0.duration_ms=5000",
    ]);
    let cut = &e["non_events"][0];
    assert_eq!(
        (cut["at_ms"].as_u64(), cut["member"].as_str()),
        (Some(60_000), Some("pod1"))
    );
    let reason = cut["reason"].as_str().unwrap();
    assert!(
        reason.contains("within group.consumer.session.timeout.ms (45000 ms)"),
        "{reason}"
    );
}
