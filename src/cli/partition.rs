//! `cgsim partition --partitions N [--redis] KEY...`

use cgsim::workload::partitioner::{default_partition, redis_slot};
use std::io::Write;
use std::process::ExitCode;

pub fn run(partitions: u32, redis: bool, keys: &[String]) -> ExitCode {
    if partitions == 0 {
        eprintln!(
            "cgsim partition: --partitions must be at least 1 (a topic has at least one partition)"
        );
        return super::bad_input();
    }
    let mut out = std::io::stdout().lock();
    for key in keys {
        let partition = default_partition(key.as_bytes(), partitions);
        let line = if redis {
            format!("{key}\t{partition}\t{}", redis_slot(key.as_bytes()))
        } else {
            format!("{key}\t{partition}")
        };
        if writeln!(out, "{line}").is_err() {
            break; // stdout closed (e.g. piped into head): nothing more to say
        }
    }
    ExitCode::SUCCESS
}
