//! Built-in tables (`--preset`).

use super::{GroupPlan, JoinHistory, Section};
use crate::assignor::Topic;
use crate::java::Uuid;

/// Topic ids and member ids of the reference `a-table-*` cases (the Kafka runs behind seed 001).
mod seed_001 {
    pub const T3: [(&str, i32, &str); 3] = [
        ("t3a", 3, "jMdmEWaRDT79HRSo1WuUPg"),
        ("t3b", 3, "abPeRiJIgZ5fX_ih8Ogt8g"),
        ("t3c", 3, "Z4p1dmjb3DLA4B3Hilb4Ow"),
    ];
    pub const U1U5: [(&str, i32, &str); 2] = [
        ("u1", 1, "r_v3nkNB399RZ2JGPHnaDg"),
        ("u5", 5, "BeSwdqOkUkatYPjKhj5bWA"),
    ];
    pub const SINGLE: [(&str, i32, &str); 1] = [("t", 3, "0Uho--4r0Wr5mEDYQw0H8g")];
    /// `a-t3x3-4c-3then1-*`: three start together, then `m-369` joins (JoinGroup order).
    pub const RECONSTRUCT_4: [&str; 4] = [
        "consumer-grp-32-98184deb-2dd2-406b-b98e-e103d590349f",
        "m-668",
        "consumer-svc-24-77cec4ca-fe56-4dbb-ac53-2193995da10d",
        "m-369",
    ];
}

/// Names `--preset` accepts.
pub const PRESETS: &[&str] = &["seed-001", "seed-000"];

/// A built-in table. `seed-000`: the seed's two co-partitioned topics (`market-updates` and
/// `notifications`, 6 partitions each) read by its 4 pods, joined together. `seed-001`: the seed's three topics x 3 with 2, 3, 4 and 10 consumers, the
/// skewed `u1`(1) + `u5`(5) pair and the single topic `t` of 3 with 2 consumers, formed the way
/// the published layouts were (reference/README.md "The seed 001 table and join history"): 2
/// consumers one by one, 3 together, 4 as three then one with the realistic member ids of the
/// `a-table-reconstruct` cases, 10 together; the topic ids Kafka gave those topics.
pub fn preset(name: &str) -> Result<Vec<Section>, String> {
    match name {
        "seed-001" => {
            let topics = |list: &[(&str, i32, &str)]| -> Vec<Topic> {
                list.iter()
                    .map(|(n, p, id)| Topic {
                        name: n.to_string(),
                        partitions: *p,
                        id: Some(Uuid::parse(id).expect("preset topic id")),
                    })
                    .collect()
            };
            let reconstruct = GroupPlan::new(
                seed_001::RECONSTRUCT_4
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                JoinHistory::Batches(vec![3, 1]),
            );
            Ok(vec![
                Section::new(
                    topics(&seed_001::T3),
                    vec![
                        GroupPlan::default_ids(2, JoinHistory::OneByOne),
                        GroupPlan::default_ids(3, JoinHistory::All),
                        reconstruct,
                        GroupPlan::default_ids(10, JoinHistory::All),
                    ],
                )?,
                Section::new(
                    topics(&seed_001::U1U5),
                    vec![GroupPlan::default_ids(2, JoinHistory::OneByOne)],
                )?,
                Section::new(
                    topics(&seed_001::SINGLE),
                    vec![GroupPlan::default_ids(2, JoinHistory::OneByOne)],
                )?,
            ])
        }
        "seed-000" => Ok(vec![Section::new(
            ["market-updates", "notifications"]
                .iter()
                .map(|name| Topic {
                    name: name.to_string(),
                    partitions: 6,
                    id: Some(super::derived_topic_id(name)),
                })
                .collect(),
            vec![GroupPlan::new(
                (1..=4).map(|i| format!("pod-{i}")).collect(),
                JoinHistory::All,
            )],
        )?]),
        other => Err(format!(
            "unknown preset {other:?} (known: {})",
            PRESETS.join(", ")
        )),
    }
}
