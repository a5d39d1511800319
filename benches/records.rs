//! Records through produce, arrive and join: a keyed stream of prices and notifications (1,000
//! keys, 2,000 records per second each, 10 simulated minutes, 2.4 M records) joined locally
//! by 8 members. Prints records per wall second beside criterion's timing.

use cgsim::scenario::{load_str, LoadOptions, Scenario};
use cgsim::world::{run, RunOptions};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::{Duration, Instant};

const SCENARIO: &str = r#"
name = "large-join"
duration_ms = 600_000
co_partitioned = [["prices", "notifications"]]

[arrival]
partition_lag_ms = { min = 0, max = 50 }

[[topics]]
name = "prices"
partitions = 32

[[topics]]
name = "notifications"
partitions = 32

[group]
assignors = ["range"]
auto_offset_reset = "earliest"
record_processing_us = 50

[[members]]
name = "c"
count = 8

[[producers]]
topic = "prices"
records_per_sec = 2000
key_count = 1000
key_distribution = "uniform"

[[producers]]
topic = "notifications"
records_per_sec = 2000
key_count = 1000
key_distribution = "skewed"

[app]
kind = "local_join"
prices = "prices"
notifications = "notifications"
"#;

fn scenario() -> Scenario {
    load_str("large-join", SCENARIO, &LoadOptions::default()).expect("valid scenario")
}

fn records(c: &mut Criterion) {
    let s = scenario();
    let started = Instant::now();
    let out = run(&s, RunOptions::default());
    let wall = started.elapsed().as_secs_f64();
    let r = &out.report;
    eprintln!(
        "large-join: {} records produced, {} processed, {} notifications joined in {:.2} s wall = {:.2} M records/s",
        r.records.produced,
        r.records.processed,
        r.join.notifications,
        wall,
        r.records.processed as f64 / wall / 1e6
    );
    let mut g = c.benchmark_group("records");
    g.sample_size(10).measurement_time(Duration::from_secs(15));
    g.bench_function("join-2.4M-records", |b| {
        b.iter(|| run(&s, RunOptions::default()))
    });
    g.finish();
}

criterion_group!(benches, records);
criterion_main!(benches);
