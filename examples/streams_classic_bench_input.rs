//! Writes the classic Kafka Streams benchmark input `benches/inputs/streams-classic.jsonl`
//! (issue 75 item 6), in the classic case format of ../shared/reference/streams/README.md
//! Part 2. It was generated once and is kept; this program says how, and writes the same bytes
//! again:
//!
//! ```sh
//! cargo run --release --example streams_classic_bench_input > benches/inputs/streams-classic.jsonl
//! ```
//!
//! The group is the KIP-1071 bench's size (`examples/streams_bench_input.rs`): 100 clients
//! (Kafka Streams instances) of 10 stream threads (consumers) each, four stateful subtopologies
//! 0..3 of 256 partitions, one standby replica, the other configs at Kafka's defaults
//! (`acceptable.recovery.lag` 10000, `max.warmup.replicas` 2, probing every 600000 ms, no rack
//! tags), assignor `high_availability`, the changelogs' end offset sums known (seeded per task).
//! Ids as Kafka makes them, all drawn from one seeded stream: process ids `java.util.UUID`
//! strings, member ids `<client.id>-StreamThread-<n>-consumer-<uuid>` with the client id
//! `inventory-app-<process id>` and `n` from 1 to 10 (so `-10-` sorts before `-2-`). The
//! clients are listed in a shuffled order, each with its consumers by thread number.
//!
//! It is the common rebalance: an instance joins a settled group. What the other 99 had before
//! is cgsim's own answer for them as a fresh group (`ClassicCase::assign`: the leader's input,
//! high availability, the spread over threads): each consumer owns the source partitions
//! (`input-<sub>`, p) of its actives and reports their offset sums as -2 (running), and its
//! standbys' as the end offset sum less a seeded lag below 20000, so about half are caught up
//! (within 10000) and half are not. The newcomer owns and reports nothing. The timed call then
//! walks every rule: the lag-blind placement over 100 clients, the movements back to caught-up
//! clients, warm-ups while the budget of 2 lasts, the standbys' movements.

use cgsim::assignor::streams::classic::client_state::Consumer;
use cgsim::assignor::streams::classic::json::{ClassicCase, ClientInput};
use cgsim::assignor::streams::classic::{
    source_topic, AssignmentConfigs, ConfiguredAssignor, ProcessId, Subtopology, TaskId,
};
use cgsim::sim::rng::{random_uuid_string, Stream};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const SEED: u64 = 75;
const APP: &str = "inventory-app";
const CLIENTS: usize = 100;
const THREADS_PER_CLIENT: usize = 10;
const SUBTOPOLOGIES: i32 = 4;
const PARTITIONS: i32 = 256;
const STANDBY_REPLICAS: i32 = 1;
/// A standby's checkpoint lags its changelog's end by less than this: about half of them within
/// `acceptable.recovery.lag` (10000).
const MAX_STANDBY_LAG: u64 = 19_999;

fn main() {
    let mut stream = Stream::derive(SEED, "streams-classic-bench-input");
    let mut clients: Vec<ClientInput> = (0..CLIENTS)
        .map(|_| {
            let pid = random_uuid_string(&mut stream);
            let consumers = (1..=THREADS_PER_CLIENT)
                .map(|n| Consumer {
                    member_id: format!(
                        "{APP}-{pid}-StreamThread-{n}-consumer-{}",
                        random_uuid_string(&mut stream)
                    ),
                    owned_partitions: vec![],
                    task_offset_sums: BTreeMap::new(),
                })
                .collect();
            ClientInput {
                process_id: ProcessId::parse(&pid).expect("a UUID string"),
                client_tags: BTreeMap::new(),
                consumers,
            }
        })
        .collect();
    // The last instance made is the newcomer; Fisher-Yates puts it somewhere in the list.
    let newcomer = clients[CLIENTS - 1].process_id;
    for i in (1..clients.len()).rev() {
        let j = stream.between(0, i as u64) as usize;
        clients.swap(i, j);
    }
    let subtopologies: Vec<Subtopology> = (0..SUBTOPOLOGIES)
        .map(|id| Subtopology {
            id,
            partitions: PARTITIONS,
            stateful: true,
        })
        .collect();
    let end_offsets: BTreeMap<TaskId, i64> = subtopologies
        .iter()
        .flat_map(|s| (0..s.partitions).map(move |p| TaskId::new(s.id, p)))
        .map(|t| (t, stream.between(100_000, 10_000_000) as i64))
        .collect();
    let configs = AssignmentConfigs {
        num_standby_replicas: STANDBY_REPLICAS,
        ..AssignmentConfigs::default()
    };

    // The settled group before the join, as a fresh group: nothing owned, nothing reported.
    let settled = ClassicCase {
        id: "settled".to_string(),
        assignor: ConfiguredAssignor::HighAvailability,
        configs: configs.clone(),
        subtopologies: subtopologies.clone(),
        changelog_end_offset_sums: Some(end_offsets.clone()),
        clients: clients
            .iter()
            .filter(|c| c.process_id != newcomer)
            .cloned()
            .collect(),
    };
    let previous = settled.assign();
    let threads: BTreeMap<&str, _> = previous
        .clients
        .iter()
        .flat_map(|c| c.threads.iter().map(|(m, t)| (m.as_str(), t)))
        .collect();
    for client in clients.iter_mut().filter(|c| c.process_id != newcomer) {
        for consumer in &mut client.consumers {
            let had = threads[consumer.member_id.as_str()];
            let mut active = had.active.clone();
            active.sort();
            consumer.owned_partitions = active
                .iter()
                .map(|t| (source_topic(t.subtopology), t.partition))
                .collect();
            for &t in &active {
                consumer.task_offset_sums.insert(t, -2);
            }
            let mut standby = had.standby.clone();
            standby.sort();
            for t in standby {
                let lag = stream.between(0, MAX_STANDBY_LAG) as i64;
                consumer.task_offset_sums.insert(t, end_offsets[&t] - lag);
            }
        }
    }

    let client_lines: Vec<Value> = clients
        .iter()
        .map(|c| {
            let consumers: Vec<Value> = c
                .consumers
                .iter()
                .map(|m| {
                    let sums: Map<String, Value> = m
                        .task_offset_sums
                        .iter()
                        .map(|(t, s)| (t.to_string(), json!(s)))
                        .collect();
                    json!({
                        "member_id": m.member_id,
                        "owned_partitions": m.owned_partitions,
                        "task_offset_sums": sums,
                    })
                })
                .collect();
            json!({"consumers": consumers, "process_id": c.process_id.to_string()})
        })
        .collect();
    let end_sums: Map<String, Value> = end_offsets
        .iter()
        .map(|(t, s)| (t.to_string(), json!(s)))
        .collect();
    let subtopology_lines: Vec<Value> = subtopologies
        .iter()
        .map(|s| json!({"id": s.id, "partitions": s.partitions, "stateful": s.stateful}))
        .collect();
    let case = json!({
        "assignor": "high_availability",
        "changelog_end_offset_sums": end_sums,
        "clients": client_lines,
        "configs": {
            "acceptable_recovery_lag": configs.acceptable_recovery_lag,
            "max_warmup_replicas": configs.max_warmup_replicas,
            "num_standby_replicas": configs.num_standby_replicas,
            "probing_rebalance_interval_ms": configs.probing_rebalance_interval_ms,
            "rack_aware_assignment_tags": [],
        },
        "family": "bench-client-join",
        "id": "streams-classic-100c-1000t-4x256-s1",
        "subtopologies": subtopology_lines,
    });
    println!("{case}");
}
