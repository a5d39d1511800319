//! Assignor benchmarks on the inputs of `benches/data/` (the reference's large groups, with
//! Kafka's own timings in `benches/data/KAFKA_TIMINGS.md`). Each (input, assignor) pair is parsed
//! once, its result checked against Kafka's in `expected_sha256.json`, then only the `assign`
//! call is timed. Assignors not built yet are skipped. Benchmarks are named
//! `<assignor>/<input>` (`T1`, or `T1-minus1` for the input with one member left), the names
//! `scripts/bench-table` looks for under `target/criterion/`.
//!
//! The KIP-1071 streams group assignor is timed on `benches/inputs/streams-kip1071.jsonl`
//! (`kip1071/streams-kip1071`), checked first against Kafka's answer's SHA-256. The classic
//! Kafka Streams high-availability task assignor is timed on
//! `benches/inputs/streams-classic.jsonl` (`classic/streams-classic`, and the whole case with
//! the leader's input and the spread over threads as `classic/streams-classic-whole`), checked
//! first against cgsim's own answer's SHA-256.
//!
//! `cargo bench --bench assignors [FILTER]`; `scripts/bench-table` prints our medians beside
//! Kafka's.

mod inputs;

use cgsim::assignor::json::{named_assignment, parse_line, AssignCase, AssignLine};
use cgsim::assignor::streams;
use cgsim::assignor::streams::classic::{high_availability, json::render, AssignorUsed};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode};
use inputs::{load, DATA};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::time::Duration;

/// `(sha id, input file stem, assignor)` for every expected result.
fn bench_inputs() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(format!("{DATA}/expected_sha256.json"))
        .expect("expected_sha256.json");
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).expect("valid JSON");
    entries
        .iter()
        .map(|e| {
            let id = e["id"].as_str().expect("id").to_string();
            let (stem, assignor) = match id.split_once('/') {
                Some((stem, a)) => (stem.to_string(), a.to_string()),
                None => {
                    let (_, a) = id.split_once("-prev-minus1-").expect("prev-minus1 id");
                    (id.clone(), a.to_string())
                }
            };
            (id, stem, assignor)
        })
        .collect()
}

fn expected_sha(id: &str) -> String {
    let text = std::fs::read_to_string(format!("{DATA}/expected_sha256.json"))
        .expect("expected_sha256.json");
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).expect("valid JSON");
    entries
        .iter()
        .find(|e| e["id"] == id)
        .and_then(|e| e["sha256"].as_str())
        .expect("sha for id")
        .to_string()
}

/// SHA-256 of the canonical assignment (members and topics sorted, compact JSON).
fn canonical_sha(case: &AssignCase) -> String {
    let result = case.assignor.assign(&case.group).expect("assign");
    let named: BTreeMap<_, _> = named_assignment(&case.group, &result.assignment, false);
    let bytes = serde_json::to_vec(&named).expect("serialize");
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn assignors(c: &mut Criterion) {
    for (id, stem, assignor) in bench_inputs() {
        let short = stem.split('-').next().unwrap_or(&stem).to_string();
        let label = if stem.contains("-prev-minus1-") {
            format!("{short}-minus1")
        } else {
            short
        };
        let Some(case) = load(&stem, &assignor) else {
            eprintln!("skip {id}: assignor {assignor} not built");
            continue;
        };
        assert_eq!(
            canonical_sha(&case),
            expected_sha(&id),
            "{id}: result differs from Kafka's"
        );
        let mut group = c.benchmark_group(assignor.clone());
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        group.bench_function(BenchmarkId::from_parameter(&label), |b| {
            b.iter(|| case.assignor.assign(&case.group).expect("assign"))
        });
        group.finish();
    }
}

/// The KIP-1071 streams group input (issue 74, `examples/streams_bench_input.rs`): 1,000
/// members in 100 processes, four stateful subtopologies of 256 partitions, one standby, a
/// member joining a settled group.
const STREAMS_INPUT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/benches/inputs/streams-kip1071.jsonl"
);
/// SHA-256 of the output line Kafka 4.3.1's own `StickyTaskAssignor` gives on it (its source at
/// 26b251a4, JDK 17, called as reference/streams/README.md Part 1 says), without the newline.
const STREAMS_SHA256: &str = "2290d7539a09b58cf55d5b91cc71a192c7cdb0aacb5cfba23837bcd583246cd3";

/// `kip1071/streams-kip1071`: parsed once, checked against Kafka's answer, then only the
/// assignor's call timed.
fn streams(c: &mut Criterion) {
    let text = std::fs::read_to_string(STREAMS_INPUT).expect("streams bench input");
    let Ok(AssignLine::Streams(case)) = parse_line(text.trim()) else {
        panic!("{STREAMS_INPUT}: not a KIP-1071 case");
    };
    let line = streams::json::render(&case, &case.assign());
    let sha: String = Sha256::digest(line.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        sha, STREAMS_SHA256,
        "streams-kip1071: result differs from Kafka's"
    );
    let mut group = c.benchmark_group("kip1071");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.bench_function(BenchmarkId::from_parameter("streams-kip1071"), |b| {
        b.iter(|| streams::assign(&case.group).expect("assign"))
    });
    group.finish();
}

/// The classic Kafka Streams input (issue 75, `examples/streams_classic_bench_input.rs`): 100
/// instances of 10 stream threads, four stateful subtopologies of 256 partitions, one standby,
/// high availability, an instance joining a settled group.
const CLASSIC_INPUT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/benches/inputs/streams-classic.jsonl"
);
/// SHA-256 of the output line `ClassicCase::assign` renders on it, without the newline: cgsim's
/// answer, pinned so a change shows; Kafka's own has not been computed on this file.
const CLASSIC_SHA256: &str = "e7ccebafd380fe584f376b3705216d4dcd41a4cca25d9ce7f353d23d6383b03b";

/// `classic/streams-classic`: parsed once, the whole answer checked against the pinned one, the
/// leader's input prepared once; then only the high-availability task assignor's call is timed,
/// on a fresh copy of that input each time (copied untimed). `classic/streams-classic-whole`
/// times `ClassicCase::assign`: the leader's input, the assignor, the spread over threads.
fn classic(c: &mut Criterion) {
    let text = std::fs::read_to_string(CLASSIC_INPUT).expect("classic bench input");
    let Ok(AssignLine::StreamsClassic(case)) = parse_line(text.trim()) else {
        panic!("{CLASSIC_INPUT}: not a classic Kafka Streams case");
    };
    let line = render(&case, &case.assign());
    let sha: String = Sha256::digest(line.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        sha, CLASSIC_SHA256,
        "streams-classic: result differs from the pinned one"
    );
    let (clients, used) = case.prepare();
    assert_eq!(
        used,
        AssignorUsed::HighAvailability,
        "streams-classic: not high availability"
    );
    // About 0.1 s a call: flat sampling, a few calls in each of 10 samples.
    let mut group = c.benchmark_group("classic");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    group.bench_function(BenchmarkId::from_parameter("streams-classic"), |b| {
        b.iter_batched(
            || clients.clone(),
            |mut fresh| {
                let outcome = high_availability::assign(&mut fresh, &case.configs);
                (outcome, fresh)
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function(BenchmarkId::from_parameter("streams-classic-whole"), |b| {
        b.iter(|| case.assign())
    });
    group.finish();
}

criterion_group!(benches, assignors, streams, classic);
criterion_main!(benches);
