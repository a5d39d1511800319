//! Whole runs against the speed and memory goals of issue 24 (medians on a 2-core machine):
//! - `hour-100x1k`: 100 members on 1,000 partitions, one simulated hour of a keyed producer at
//!   2,000 records/s (`benches/scenarios/hour-100x1k.toml`): under 1 s and 100 MiB;
//! - `hour-100x1k-4h`: the same for 4 simulated hours: time linear in the duration, memory flat;
//! - `hour-1000x10k`: 1,000 members on 10,000 partitions for an hour: under 10 s;
//! - `compare-scale-out-1000`: `cgsim compare scenarios/scale-out.toml --seeds 1..1000` (every
//!   variant, all cores): under 5 s.
//!
//! Besides criterion's timing it prints each run's events per wall second (the goal: 5 M) and
//! the process's peak resident set after the first, one-hour run. `scripts/bench-table --runs`
//! prints the medians beside the goals.
//!
//!     cargo bench --bench whole_runs               # all of them (the 10k run takes minutes)
//!     cargo bench --bench whole_runs -- hour-100x1k$

use cgsim::scenario::{load, load_str, LoadOptions, Scenario};
use cgsim::world::{run, RunOptions};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use rayon::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

fn scenario(file: &str, sets: &[&str]) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let options = LoadOptions {
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..LoadOptions::default()
    };
    load(&path, &options).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Peak resident set of this process so far (Linux's VmHWM), in MiB.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn report_once(name: &str, s: &Scenario) {
    let started = Instant::now();
    let out = run(s, RunOptions::default());
    let wall = started.elapsed().as_secs_f64();
    eprintln!(
        "{name}: {} events in {wall:.2} s wall = {:.2} M events/s; peak RSS so far {}",
        out.events,
        out.events as f64 / wall / 1e6,
        peak_rss_mib().map_or("unknown".to_string(), |m| format!("{m:.0} MiB")),
    );
}

fn compare_scale_out(seeds: u64) -> u64 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/scale-out.toml");
    let text = std::fs::read_to_string(&path).expect("scale-out.toml");
    let base = load_str("scale-out.toml", &text, &LoadOptions::default()).expect("loads");
    let pairs: Vec<(String, u64)> = base
        .snapshot_variants
        .iter()
        .flat_map(|v| (1..=seeds).map(move |s| (v.clone(), s)))
        .collect();
    pairs
        .par_iter()
        .map(|(variant, seed)| {
            let options = LoadOptions {
                seed: Some(*seed),
                variant: Some(variant.clone()),
                ..LoadOptions::default()
            };
            let s = load_str("scale-out.toml", &text, &options).expect("loads");
            run(&s, RunOptions::default()).report.rebalances.count
        })
        .sum()
}

fn whole_runs(c: &mut Criterion) {
    let hour = scenario("benches/scenarios/hour-100x1k.toml", &[]);
    let four_hours = scenario(
        "benches/scenarios/hour-100x1k.toml",
        &["duration_ms=14400000"],
    );
    let large = scenario("benches/scenarios/hour-1000x10k.toml", &[]);
    report_once("hour-100x1k", &hour);
    report_once("hour-100x1k-4h", &four_hours);

    let mut g = c.benchmark_group("whole_runs");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(30));
    g.bench_function("hour-100x1k", |b| {
        b.iter(|| run(&hour, RunOptions::default()))
    });
    g.bench_function("hour-100x1k-4h", |b| {
        b.iter(|| run(&four_hours, RunOptions::default()))
    });
    g.bench_function("compare-scale-out-1000", |b| {
        b.iter(|| compare_scale_out(1000))
    });
    g.bench_function("hour-1000x10k", |b| {
        b.iter(|| run(&large, RunOptions::default()))
    });
    g.finish();
}

criterion_group!(benches, whole_runs);
criterion_main!(benches);
