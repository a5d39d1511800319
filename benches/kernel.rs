//! The simulation kernel on a large group: 500 members, 5,000 partitions, one simulated hour,
//! a membership change every minute (a member leaves, the next minute it comes back). Prints
//! events per wall second and simulated seconds per wall second beside criterion's timing.
//!
//! And wide assignments: members handed a whole topic at once (`kernel-wide/...`), where
//! taking, revoking and reporting an assignment must stay near-linear in its size.

use cgsim::scenario::{load_str, LoadOptions, Scenario};
use cgsim::world::{run, RunOptions};
use criterion::{criterion_group, criterion_main, Criterion};
use std::fmt::Write;
use std::time::{Duration, Instant};

fn large_group() -> Scenario {
    let mut toml = String::from(
        "name = \"large-group\"\nduration_ms = 3_600_000\n\n[[topics]]\nname = \"events\"\npartitions = 5000\n\n\
         [group]\nassignors = [\"range\"]\nrecord_processing_us = 200\n\n[[members]]\nname = \"c\"\ncount = 500\n\n\
         [[producers]]\ntopic = \"events\"\nrecords_per_sec = 2000\n",
    );
    for minute in 1..60u64 {
        let member = format!("c{}", minute.div_ceil(2));
        let action = if minute % 2 == 1 { "leave" } else { "restart" };
        let _ = write!(
            toml,
            "\n[[timeline]]\nat_ms = {}\naction = \"{action}\"\nmember = \"{member}\"\n",
            minute * 60_000
        );
    }
    load_str("large-group", &toml, &LoadOptions::default()).expect("valid scenario")
}

fn kernel(c: &mut Criterion) {
    let scenario = large_group();
    let started = Instant::now();
    let out = run(&scenario, RunOptions::default());
    let wall = started.elapsed().as_secs_f64();
    eprintln!(
        "large-group: {} events in {:.2} s wall = {:.2} M events/s; {:.0} simulated s per wall s; {} rebalances",
        out.events,
        wall,
        out.events as f64 / wall / 1e6,
        3600.0 / wall,
        out.report.rebalances.count
    );
    let mut g = c.benchmark_group("kernel");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("500-members-5000-partitions-1h", |b| {
        b.iter(|| run(&scenario, RunOptions::default()))
    });
    g.finish();
}

/// `members` on one topic of `partitions`, no records, 20 simulated seconds, under `variant`:
/// the group forms once (under the consumer protocol over several heartbeats). Comparing an
/// assignment with what a member owned took it linear time for each partition, so one member
/// handed 100,000 partitions took 2.3 s and ten KIP-848 members sharing 200,000 took 53 s.
fn wide_assignment(members: usize, partitions: usize, variant: &str) -> Scenario {
    let toml = format!(
        "name = \"wide\"\nduration_ms = 20_000\n\n[[topics]]\nname = \"t\"\npartitions = {partitions}\n\n\
         [[members]]\nname = \"c\"\ncount = {members}\n"
    );
    let options = LoadOptions {
        variant: Some(variant.to_string()),
        ..LoadOptions::default()
    };
    load_str("wide", &toml, &options).expect("valid scenario")
}

fn wide(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernel-wide");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for (members, partitions, variant) in [
        (1, 100_000, "eager"),
        (1, 100_000, "cooperative"),
        (10, 200_000, "consumer"),
    ] {
        let scenario = wide_assignment(members, partitions, variant);
        g.bench_function(format!("{variant}-{members}x{partitions}"), |b| {
            b.iter(|| run(&scenario, RunOptions::default()))
        });
    }
    g.finish();
}

criterion_group!(benches, kernel, wide);
criterion_main!(benches);
