//! A restart may bring new settings (`set = [...]` on a timeline `restart` or
//! `rolling_bounce`): an upgrade by restart. Each restart's entries apply over the member's
//! entry as the restarts before left it; bad entries are refused with their line.

use cgsim::scenario::{load_str, LoadOptions, Scenario, ScenarioError};
use cgsim::world::{run, RunOptions};

const BASE: &str = r#"name = "t"
duration_ms = 300000

[[topics]]
name = "orders"
partitions = 6

[[topics]]
name = "audit"
partitions = 2

[group]
record_processing_us = 1000

[[members]]
name = "c"
count = 2

[[producers]]
topic = "orders"
records_per_sec = 100
"#;

fn load(text: &str, variant: Option<&str>) -> Result<Scenario, ScenarioError> {
    load_str(
        "s.toml",
        text,
        &LoadOptions {
            variant: variant.map(str::to_string),
            ..LoadOptions::default()
        },
    )
}

fn with_timeline(timeline: &str) -> String {
    format!("{BASE}\n{timeline}")
}

#[test]
fn a_restart_with_new_topics_subscribes_to_them_and_a_later_restart_keeps_them() {
    // The second restart changes only the processing time: the topics of the first stay.
    let text = with_timeline(
        r#"[[timeline]]
at_ms = 30000
action = "leave"
member = "c1"

[[timeline]]
at_ms = 35000
action = "restart"
member = "c1"
set = ['topics=["audit"]']

[[timeline]]
at_ms = 60000
action = "crash"
member = "c1"

[[timeline]]
at_ms = 65000
action = "restart"
member = "c1"
set = ["record_processing_us=500"]
"#,
    );
    let scenario = load(&text, None).expect("valid");
    let specs: Vec<_> = scenario.member_specs_ever().collect();
    let restarts = &specs[2..];
    assert_eq!(restarts.len(), 2);
    assert_eq!(restarts[1].topics, ["audit"]);
    assert_eq!(restarts[1].settings.record_processing_us, 500);
    let r = run(&scenario, RunOptions::default()).report;
    assert!(
        r.invariants.violations.is_empty(),
        "{:?}",
        r.invariants.violations
    );
    // c1 reads only audit now, and c2 every partition of orders.
    assert!(r.final_assignment["c1"]
        .iter()
        .all(|p| p.starts_with("audit")));
    assert!(
        r.final_assignment["c2"]
            .iter()
            .filter(|p| p.starts_with("orders"))
            .count()
            == 6
    );
    let c1 = &r.members[0];
    assert_eq!(
        c1.restarted_with
            .iter()
            .map(|x| x.at_ms)
            .collect::<Vec<_>>(),
        [35000, 65000]
    );
}

#[test]
fn a_rolling_bounce_set_applies_to_every_restarted_member() {
    let text = with_timeline(
        r#"[[timeline]]
at_ms = 30000
action = "rolling_bounce"
interval_ms = 20000
duration_ms = 5000
set = ['assignors=["cooperative-sticky"]', "max_poll_records=50"]
"#,
    );
    let scenario = load(&text, None).expect("valid");
    let after: Vec<_> = scenario.member_specs_ever().skip(2).collect();
    assert_eq!(after.len(), 2);
    for spec in after {
        assert_eq!(spec.assignors, ["cooperative-sticky"]);
        assert_eq!(spec.settings.max_poll_records, 50);
        assert_eq!(spec.rebalance_protocol.name(), "cooperative");
    }
}

#[test]
fn a_variant_that_sets_the_assignors_overrides_a_restarts_assignors_too() {
    // As it overrides the members' own lists: the variant compares protocols, not upgrades.
    let text = with_timeline(
        r#"[[timeline]]
at_ms = 30000
action = "rolling_bounce"
set = ['assignors=["cooperative-sticky"]']
"#,
    );
    let scenario = load(&text, Some("eager")).expect("valid");
    assert!(scenario
        .member_specs_ever()
        .all(|m| m.assignors == ["range"]));
    // `default` runs the file as written.
    let scenario = load(&text, Some("default")).expect("valid");
    assert_eq!(scenario.variant, "default");
    assert!(scenario
        .member_specs_ever()
        .skip(2)
        .all(|m| m.assignors == ["cooperative-sticky"]));
}

#[test]
fn bad_restart_settings_are_refused_with_their_line() {
    let cases: &[(&str, &str)] = &[
        (
            "action = \"restart\"\nmember = \"c1\"\nset = [\"name=x\"]",
            "\"name\" is not a setting a restart can change",
        ),
        (
            "action = \"restart\"\nmember = \"c1\"\nset = [\"group_instance_id=pod-1\"]",
            "\"group_instance_id\" is not a setting a restart can change",
        ),
        (
            "action = \"restart\"\nmember = \"c1\"\nset = [\"sesion_timeout_ms=10000\"]",
            "\"sesion_timeout_ms\" is not a setting a restart can change",
        ),
        (
            "action = \"restart\"\nmember = \"c1\"\nset = [\"session_timeout_ms=fast\"]",
            "invalid type",
        ),
        (
            "action = \"restart\"\nmember = \"c1\"\nset = [\"session_timeout_ms=1000\"]",
            "outside the broker's bounds",
        ),
        (
            "action = \"restart\"\nmember = \"c1\"\nset = ['assignors=[\"range\", \"nope\"]']",
            "nope",
        ),
        (
            "action = \"restart\"\nmember = \"c1\"\nset = [\"max_poll_records\"]",
            "expected KEY=VALUE",
        ),
        (
            "action = \"crash\"\nmember = \"c1\"\nset = [\"max_poll_records=5\"]",
            "set does not apply to crash",
        ),
    ];
    for (entry, message) in cases {
        // c1 leaves first so that the restart itself is valid.
        let text = with_timeline(&format!(
            "[[timeline]]\nat_ms = 10000\naction = \"leave\"\nmember = \"c1\"\n\n[[timeline]]\nat_ms = 20000\n{entry}\n"
        ));
        let text = if entry.contains("crash") {
            with_timeline(&format!("[[timeline]]\nat_ms = 20000\n{entry}\n"))
        } else {
            text
        };
        let e = load(&text, None).expect_err(entry);
        assert!(e.message.contains(message), "{entry}: {e}");
        let line = text[..text.find(entry).unwrap()].lines().count();
        assert!(
            e.line.is_some_and(|l| l + 1 >= line && l <= line + 3),
            "{entry}: {e} (entry at line {line})"
        );
    }
}

#[test]
fn a_members_protocol_and_remote_assignor_are_checked_as_kafka_checks_them() {
    let member = |extra: &str| BASE.replace("count = 2", &format!("count = 2\n{extra}"));
    assert!(load(&member("protocol = \"classic\""), None).is_ok());
    // A consumer member in a classic group is a migrating group (tests/migration.rs).
    let s = load(&member("protocol = \"consumer\""), None).expect("a mixed group");
    assert_eq!(s.members[0].protocol, cgsim::scenario::Protocol::Consumer);
    // Under the consumer protocol a member may ask for a server assignor; not for another.
    let consumer =
        |extra: &str| member(extra).replace("[group]\n", "[group]\nprotocol = \"consumer\"\n");
    let s = load(&consumer("remote_assignor = \"range\""), None).expect("valid");
    assert_eq!(s.members[0].remote_assignor.as_deref(), Some("range"));
    let e = load(&consumer("remote_assignor = \"sticky\""), None).unwrap_err();
    assert!(e.message.contains("not a server assignor"), "{e}");
    // ConsumerConfig: group.remote.assignor cannot be set with group.protocol=classic.
    let e = load(&member("remote_assignor = \"uniform\""), None).unwrap_err();
    assert!(
        e.message
            .contains("remote_assignor applies only to protocol = \"consumer\""),
        "{e}"
    );
    assert_eq!(e.line, Some(15), "the member's entry");
}
