//! Runs one assignor on one benchmark input a fixed number of times: a small, deterministic
//! driver for callgrind, whose instruction counts are stable where wall-clock timings on a shared
//! machine are not. The input is parsed once; `--toggle-collect` on the `assign` call counts what
//! `benches/assignors.rs` times and nothing else:
//!
//! ```sh
//! cargo build --profile profiling --example assign_repeat
//! valgrind --tool=callgrind --toggle-collect='*ServerRangeAssignor*assign*' \
//!     target/profiling/examples/assign_repeat T2-2000m-100t-10000p-uniform server-range 3
//! ```
//!
//! Arguments: an input stem of `benches/data/` (the file name without `.jsonl.gz`), the assignor
//! name, and how many calls (default 1).

#[path = "../benches/inputs/mod.rs"]
mod inputs;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [stem, assignor, rest @ ..] = args.as_slice() else {
        eprintln!("usage: assign_repeat INPUT_STEM ASSIGNOR [CALLS]");
        std::process::exit(2);
    };
    let calls: usize = rest
        .first()
        .map_or(1, |n| n.parse().expect("CALLS is a number"));
    let case = inputs::load(stem, assignor).expect("a valid input");
    let mut assigned = 0;
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        // Timed as the benchmark times it: the call and the drop of its result.
        let start = std::time::Instant::now();
        let result = case.assignor.assign(&case.group).expect("assign");
        assigned += result.assignment.iter().map(Vec::len).sum::<usize>();
        drop(result);
        times.push(start.elapsed());
    }
    times.sort_unstable();
    println!("{calls} calls, {assigned} partitions assigned in all");
    if let (Some(min), Some(median)) = (times.first(), times.get(calls / 2)) {
        // On a shared machine the minimum is the steadier figure.
        println!("per call: min {min:?}, median {median:?}");
    }
}
