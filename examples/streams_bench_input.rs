//! Writes the KIP-1071 benchmark input `benches/inputs/streams-kip1071.jsonl` (issue 74), in the
//! case format of ../shared/reference/streams/README.md Part 1. It was generated once and is
//! kept; this program says how, and writes the same bytes again:
//!
//! ```sh
//! cargo run --release --example streams_bench_input > benches/inputs/streams-kip1071.jsonl
//! ```
//!
//! The group: 1,000 members (stream threads) in 100 processes (Kafka Streams instances) of 10,
//! four stateful subtopologies "0".."3" of 256 partitions, one standby replica. Ids as Kafka
//! makes them: member ids `Uuid.randomUuid()` (22 characters of base64url), process ids
//! `java.util.UUID` strings, all drawn from one seeded stream. The members are listed in a
//! shuffled order (the coordinator's map order, as the reference generator shuffles them).
//!
//! It is the common rebalance: a member joins a settled group. The previous target assignment of
//! the other 999 is the assignor's own answer for them as a fresh group, so the timed call
//! walks every rule: previous owners within the dynamic quota, previous standbys, the least
//! loaded pass for what the newcomer's share frees, standbys kept and placed.

use cgsim::assignor::streams::{
    assign, GroupSpec, MemberAssignment, MemberSpec, Subtopology, TaskId, Topology,
};
use cgsim::java::Uuid;
use cgsim::sim::rng::{random_uuid_string, Stream};
use serde_json::{json, Map, Value};

const SEED: u64 = 74;
const PROCESSES: usize = 100;
const MEMBERS_PER_PROCESS: usize = 10;
const SUBTOPOLOGIES: usize = 4;
const PARTITIONS: i32 = 256;
const STANDBY_REPLICAS: u32 = 1;

/// `Uuid.randomUuid()`: a version 4 `java.util.UUID`'s bytes, printed as Kafka prints a Uuid.
fn kafka_uuid(stream: &mut Stream) -> String {
    let mut b = [0u8; 16];
    stream.fill(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    Uuid::from_bytes(b).to_string()
}

/// A task map of the case format: subtopology id -> partitions, ascending.
fn task_map(topology: &Topology, tasks: &[TaskId]) -> Value {
    let mut map = Map::new();
    for &t in tasks {
        let id = &topology.subtopology(t.subtopology).id;
        map.entry(id.clone())
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .expect("a list")
            .push(json!(t.partition));
    }
    Value::Object(map)
}

fn main() {
    let mut stream = Stream::derive(SEED, "streams-bench-input");
    let processes: Vec<String> = (0..PROCESSES)
        .map(|_| random_uuid_string(&mut stream))
        .collect();
    let mut members: Vec<MemberSpec> = (0..PROCESSES * MEMBERS_PER_PROCESS)
        .map(|i| MemberSpec {
            member_id: kafka_uuid(&mut stream),
            process_id: processes[i / MEMBERS_PER_PROCESS].clone(),
            active_tasks: vec![],
            standby_tasks: vec![],
            warmup_tasks: vec![],
            rack_id: None,
        })
        .collect();
    // Fisher-Yates: the coordinator's map order stands in the list order.
    for i in (1..members.len()).rev() {
        let j = stream.between(0, i as u64) as usize;
        members.swap(i, j);
    }
    let topology = Topology::new(
        (0..SUBTOPOLOGIES)
            .map(|i| Subtopology {
                id: i.to_string(),
                partitions: PARTITIONS,
                stateful: true,
            })
            .collect(),
    )
    .expect("distinct ids");

    // The settled group before the join: the last member of the list is the newcomer.
    let newcomer = members.len() - 1;
    let settled = GroupSpec {
        topology: topology.clone(),
        members: members[..newcomer].to_vec(),
        num_standby_replicas: STANDBY_REPLICAS,
    };
    let previous = assign(&settled).expect("a group with members");
    let empty = MemberAssignment::default();
    let member_lines: Vec<Value> = members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let prev = previous.members.get(i).unwrap_or(&empty);
            json!({
                "active": task_map(&topology, &prev.active_tasks),
                "member_id": m.member_id,
                "process_id": m.process_id,
                "standby": task_map(&topology, &prev.standby_tasks),
                "warmup": {},
            })
        })
        .collect();
    let subtopologies: Vec<Value> = topology
        .subtopologies()
        .iter()
        .map(|s| json!({"id": s.id, "partitions": s.partitions, "stateful": s.stateful}))
        .collect();
    let case = json!({
        "family": "bench-member-join",
        "id": "streams-kip1071-1000m-100p-4x256-s1",
        "members": member_lines,
        "num_standby_replicas": STANDBY_REPLICAS,
        "subtopologies": subtopologies,
    });
    println!("{case}");
}
