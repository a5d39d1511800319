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
//! name, and how many calls (default 1). The KIP-1071 input is `streams-kip1071` with the
//! assignor `kip1071` (`benches/inputs/streams-kip1071.jsonl`; callgrind's
//! `--toggle-collect='*streams*sticky*assign*'`). The classic Kafka Streams input is
//! `streams-classic` with the assignor `classic` (`benches/inputs/streams-classic.jsonl`): the
//! leader's input is prepared once and cloned before each call, only the high-availability task
//! assignor is timed, and the SHA-256 of the whole case's answer (`ClassicCase::assign`,
//! rendered) is printed, the one `benches/assignors.rs` pins. That answer calls the assignor
//! once more, so callgrind's
//! `--toggle-collect='cgsim::assignor::streams::classic::high_availability::assign'` counts
//! CALLS + 1 calls.

#[path = "../benches/inputs/mod.rs"]
mod inputs;

use cgsim::assignor::json::{parse_line, AssignLine};
use cgsim::assignor::streams::assign;
use cgsim::assignor::streams::classic::{high_availability, json::render};
use sha2::{Digest, Sha256};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [stem, assignor, rest @ ..] = args.as_slice() else {
        eprintln!("usage: assign_repeat INPUT_STEM ASSIGNOR [CALLS]");
        std::process::exit(2);
    };
    let calls: usize = rest
        .first()
        .map_or(1, |n| n.parse().expect("CALLS is a number"));
    if assignor == "kip1071" {
        return repeat_streams(stem, calls);
    }
    if assignor == "classic" {
        return repeat_classic(stem, calls);
    }
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

/// The same for a KIP-1071 input of `benches/inputs/`.
fn repeat_streams(stem: &str, calls: usize) {
    let path = format!("{}/benches/inputs/{stem}.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the input file");
    let Ok(AssignLine::Streams(case)) = parse_line(text.trim()) else {
        panic!("{path}: not a KIP-1071 case");
    };
    let mut assigned = 0;
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = std::time::Instant::now();
        let result = assign(&case.group).expect("assign");
        assigned += result
            .members
            .iter()
            .map(|m| m.active_tasks.len() + m.standby_tasks.len())
            .sum::<usize>();
        drop(result);
        times.push(start.elapsed());
    }
    times.sort_unstable();
    println!("{calls} calls, {assigned} tasks assigned in all");
    if let (Some(min), Some(median)) = (times.first(), times.get(calls / 2)) {
        println!("per call: min {min:?}, median {median:?}");
    }
}

/// The same for a classic Kafka Streams input of `benches/inputs/`: the high-availability task
/// assignor on a fresh copy of the leader's prepared input each call, the copy made untimed.
fn repeat_classic(stem: &str, calls: usize) {
    let path = format!("{}/benches/inputs/{stem}.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the input file");
    let Ok(AssignLine::StreamsClassic(case)) = parse_line(text.trim()) else {
        panic!("{path}: not a classic Kafka Streams case");
    };
    let line = render(&case, &case.assign());
    let sha: String = Sha256::digest(line.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("answer sha256 {sha}");
    let (clients, _) = case.prepare();
    let mut assigned = 0;
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let mut fresh = clients.clone();
        let start = std::time::Instant::now();
        let outcome = high_availability::assign(&mut fresh, &case.configs);
        times.push(start.elapsed());
        assigned += fresh
            .states
            .iter()
            .map(|c| c.active.len() + c.standby.len())
            .sum::<usize>();
        drop((outcome, fresh));
    }
    times.sort_unstable();
    println!("{calls} calls, {assigned} tasks assigned in all");
    if let (Some(min), Some(median)) = (times.first(), times.get(calls / 2)) {
        println!("per call: min {min:?}, median {median:?}");
    }
}
