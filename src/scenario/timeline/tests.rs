use super::*;
use crate::scenario::file::TimelineFile;

fn read(text: &str) -> Result<Entry, String> {
    let file: TimelineFile = toml::from_str(text).map_err(|e| e.message().to_string())?;
    Entry::from_file(&file)
}

fn every_action() -> Vec<Entry> {
    let at = |at_ms, action| Entry { at_ms, action };
    let c1 = || "c1".to_string();
    vec![
        at(1, Action::Join { member: c1() }),
        at(2, Action::Leave { member: c1() }),
        at(3, Action::Crash { member: c1() }),
        at(
            4,
            Action::Restart {
                member: c1(),
                set: vec![],
            },
        ),
        at(
            5,
            Action::Restart {
                member: c1(),
                set: vec![r#"assignors=["cooperative-sticky"]"#.into()],
            },
        ),
        at(
            6,
            Action::Stall {
                member: c1(),
                duration_ms: 7,
            },
        ),
        at(
            8,
            Action::Subscribe {
                member: c1(),
                topics: vec!["a".into(), "b".into()],
            },
        ),
        at(
            9,
            Action::AddPartitions {
                topic: "a".into(),
                partitions: 12,
            },
        ),
        at(
            10,
            Action::RollingBounce {
                interval_ms: 11,
                duration_ms: 12,
                set: vec!["protocol=consumer".into()],
            },
        ),
        at(
            13,
            Action::BrokerCrash {
                broker: BrokerRef::Coordinator,
                connections: Connections::Hang,
            },
        ),
        at(
            14,
            Action::BrokerCrash {
                broker: BrokerRef::Id(2),
                connections: Connections::Reset,
            },
        ),
        at(15, Action::BrokerRestart { broker: 2 }),
        at(
            16,
            Action::NetworkPartition {
                members: vec![c1(), "c2".into()],
                brokers: BrokerSet::Ids(vec![0, 1]),
                duration_ms: 17,
            },
        ),
        at(
            18,
            Action::NetworkPartition {
                members: vec![c1()],
                brokers: BrokerSet::Coordinator,
                duration_ms: 19,
            },
        ),
        at(
            20,
            Action::LatencySpike {
                latency_ms: 21,
                duration_ms: 22,
            },
        ),
    ]
}

#[test]
fn every_action_is_written_as_a_table_that_reads_back_as_it_was() {
    let entries = every_action();
    let mut names: Vec<&str> = entries.iter().map(|e| e.action.name()).collect();
    names.dedup();
    assert_eq!(names.len(), 12, "every action once at least: {names:?}");
    for e in &entries {
        let text = e.to_table().to_string();
        assert_eq!(read(&text).as_ref(), Ok(e), "{text}");
    }
    // The tables as a scenario's `[[timeline]]`.
    let mut doc = toml_edit::DocumentMut::new();
    doc.insert("timeline", Item::ArrayOfTables(to_tables(&entries)));
    assert_eq!(
        doc.to_string().matches("[[timeline]]").count(),
        entries.len()
    );
}

#[test]
fn an_entry_takes_only_the_keys_its_action_uses() {
    let refused = |text: &str| read(text).unwrap_err();
    assert_eq!(
        refused("at_ms = 1\naction = \"crash\"\nmember = \"c1\"\nduration_ms = 5"),
        "duration_ms does not apply to crash"
    );
    assert_eq!(
        refused("at_ms = 1\naction = \"leave\""),
        "leave needs a member"
    );
    assert_eq!(
        refused("at_ms = 1\naction = \"stall\"\nmember = \"c1\""),
        "a stall needs a positive duration_ms"
    );
    assert_eq!(
        refused("at_ms = 1\naction = \"rolling_bounce\"\nmember = \"c1\""),
        "rolling_bounce restarts every member; it takes no member"
    );
    assert_eq!(
        refused("at_ms = 1\naction = \"broker_crash\"\nmember = \"c1\"\nbroker = 0"),
        "broker_crash takes a broker, not a member"
    );
    // A member on an action that names none is refused, not read as nothing.
    assert_eq!(
        refused("at_ms = 1\naction = \"latency_spike\"\nmember = \"c1\"\nlatency_ms = 5\nduration_ms = 5"),
        "latency_spike takes no member"
    );
    assert_eq!(
        refused("at_ms = 1\naction = \"broker_restart\"\nbroker = \"coordinator\""),
        "broker_restart needs a broker id (the report's brokers[] names the broker a crash of \"coordinator\" stopped)"
    );
    assert_eq!(
        refused("at_ms = 1\naction = \"network_partition\"\nmembers = [\"c1\"]\nbrokers = \"leader\"\nduration_ms = 5"),
        "brokers = \"leader\": a list of broker ids, or \"coordinator\""
    );
}

#[test]
fn a_rolling_bounce_takes_kafka_deploys_defaults_and_entries_say_what_they_do() {
    let e = read("at_ms = 60000\naction = \"rolling_bounce\"").unwrap();
    assert_eq!(
        e.action,
        Action::RollingBounce {
            interval_ms: 30_000,
            duration_ms: 5_000,
            set: vec![]
        }
    );
    assert_eq!(
        e.describe(),
        "the rolling bounce from 60000 ms (a member every 30000 ms, each down 5000 ms)"
    );
    let partition = &every_action()[12];
    assert_eq!(
        partition.describe(),
        "c1, c2 are cut off from broker(s) 0, 1 at 16 ms for 17 ms"
    );
}

#[test]
fn an_added_entry_is_admitted_by_the_loaders_rules_and_a_refusal_names_the_conflict() {
    let text = "duration_ms = 300000\n[[topics]]\nname = \"t\"\npartitions = 4\n\
                [[members]]\nname = \"c\"\ncount = 3\n\n\
                [[timeline]]\nat_ms = 60000\naction = \"crash\"\nmember = \"c2\"\n";
    let scenario = crate::scenario::load_str("t.toml", text, &Default::default()).unwrap();
    let source = |p: &Planned| admit::source(p);
    let admits = |at_ms, action| scenario.admits(&Entry { at_ms, action }, &source);
    let member = |m: &str| m.to_string();
    assert_eq!(
        admits(
            70_000,
            Action::Restart {
                member: member("c2"),
                set: vec![]
            }
        ),
        Ok(())
    );
    assert_eq!(
        admits(
            70_000,
            Action::Leave {
                member: member("c2")
            }
        ),
        Err("c2 is not running at 70000 ms: the crash (line 9) crashed it at 60000 ms".into())
    );
    assert_eq!(
        admits(
            50_000,
            Action::Leave {
                member: member("c2")
            }
        ),
        Err("the crash (line 9) cannot crash c2 at 60000 ms after it".into())
    );
    // A rolling bounce added is its leaves and restarts: c2's leave finds it crashed.
    assert_eq!(
        admits(
            40_000,
            Action::RollingBounce {
                interval_ms: 30_000,
                duration_ms: 5_000,
                set: vec![]
            }
        ),
        Err("c2 is not running at 70000 ms: the crash (line 9) crashed it at 60000 ms".into())
    );
    assert_eq!(
        admits(
            10_000,
            Action::Crash {
                member: member("c9")
            }
        ),
        Err("unknown member \"c9\"".into())
    );
    assert!(admits(
        300_000,
        Action::Crash {
            member: member("c1")
        }
    )
    .is_err());
}

#[test]
fn a_rolling_bounce_restarts_the_members_running_at_their_turn() {
    // c3 is started by a join; the bounce from 60 s reaches c3's place at 120 s.
    let scenario = |join_at: u64| {
        let text = format!(
            "duration_ms = 400000\n[[topics]]\nname = \"t\"\npartitions = 4\n\
             [[members]]\nname = \"c\"\ncount = 3\n\n\
             [[timeline]]\nat_ms = 60000\naction = \"rolling_bounce\"\n\n\
             [[timeline]]\nat_ms = {join_at}\naction = \"join\"\nmember = \"c3\"\n"
        );
        crate::scenario::load_str("t.toml", &text, &Default::default())
    };
    let bounced = |s: &crate::scenario::Scenario| -> Vec<String> {
        s.plan
            .iter()
            .filter(|p| p.written_as == "rolling_bounce")
            .filter_map(|p| match &p.entry.action {
                Action::Leave { member } => Some(member.clone()),
                _ => None,
            })
            .collect()
    };
    // Joined after its turn: not running then, not bounced (it was refused before).
    let late = scenario(200_000).unwrap();
    assert_eq!(bounced(&late), ["c1", "c2"]);
    // Joined before its turn: running, bounced with the others.
    let early = scenario(100_000).unwrap();
    assert_eq!(bounced(&early), ["c1", "c2", "c3"]);
}
