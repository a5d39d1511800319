//! `cgsim assign [FILE]`: JSON lines in, JSON lines out. Every line is processed; a bad line is
//! reported on stderr as `line N: what is wrong` and makes the exit code 2. A line is a partition
//! assignor's case or a KIP-1071 streams group case (`subtopologies`); Kafka's warnings for
//! either go to stderr.
//!
//! `cgsim assign --table ...`: the assignment table (`cgsim::assignor::table`); bad arguments
//! exit 2 with what is wrong.

use cgsim::assignor::json::{parse_line, render, AssignLine};
use cgsim::assignor::streams;
use cgsim::assignor::table;
use cgsim::scenario::input;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::ExitCode;

pub fn run(file: Option<&Path>) -> ExitCode {
    let (source, reader): (String, Box<dyn Read>) = match file {
        Some(path) => {
            // A FIFO would block the open, a device never end: refused before either.
            let opened = input::check_regular_file(path)
                .and_then(|_| std::fs::File::open(path).map_err(|e| format!("cannot read: {e}")));
            match opened {
                Ok(f) => (format!("{}: ", path.display()), Box::new(f)),
                Err(e) => {
                    eprintln!("{}: {e}", path.display());
                    return super::bad_input();
                }
            }
        }
        None => (String::new(), Box::new(std::io::stdin().lock())),
    };
    // Read up to one byte past the limit: that byte says the input is over it.
    let limit = input::max_input_bytes(input::ASSIGN_BYTES);
    let mut reader = BufReader::new(reader.take(limit.saturating_add(1)));
    let mut out = std::io::stdout().lock();
    let mut bad = false;
    let mut read: u64 = 0;
    let mut buf = String::new();
    for n in 1.. {
        buf.clear();
        match reader.read_line(&mut buf) {
            Ok(0) => break,
            Ok(bytes) => read += bytes as u64,
            Err(e) => {
                eprintln!("{source}line {n}: cannot read: {e}");
                bad = true;
                break;
            }
        }
        if read > limit {
            eprintln!(
                "{source}line {n}: the input is {}",
                input::over_limit(limit)
            );
            bad = true;
            break;
        }
        let line = buf.strip_suffix('\n').unwrap_or(&buf);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let case = match parse_line(line) {
            Ok(AssignLine::Partitions(c)) => c,
            Ok(AssignLine::Streams(case)) => {
                // Kafka's exception is the answer for that input (`error`), not bad input.
                let result = case.assign();
                for w in result.iter().flat_map(|a| &a.warnings) {
                    eprintln!("{source}line {n} ({}): warning: {w}", case.id);
                }
                if writeln!(out, "{}", streams::json::render(&case, &result)).is_err() {
                    break;
                }
                continue;
            }
            Ok(AssignLine::StreamsClassic(case)) => {
                let outcome = case.assign();
                if writeln!(out, "{}", streams::classic::json::render(&case, &outcome)).is_err() {
                    break;
                }
                continue;
            }
            Err(e) => {
                eprintln!("{source}line {n}: {e}");
                bad = true;
                continue;
            }
        };
        for w in &case.warnings {
            eprintln!("{source}line {n} ({}): warning: {w}", case.id);
        }
        match case.assignor.assign(&case.group) {
            Ok(result) => {
                if let Some(unmatched) = result.unmatched.as_ref().filter(|u| !u.is_empty()) {
                    eprintln!(
                        "{source}line {n} ({}): warning: partition indexes {unmatched:?} do not \
                         exist in every subscribed topic: those partitions are not co-partitioned",
                        case.id
                    );
                }
                if writeln!(out, "{}", render(&case, &result)).is_err() {
                    break;
                }
            }
            Err(e) => {
                eprintln!("{source}line {n} ({}): {e}", case.id);
                bad = true;
            }
        }
    }
    if bad {
        super::bad_input()
    } else {
        ExitCode::SUCCESS
    }
}

/// The `--table` options, as given.
pub struct TableArgs {
    pub topics: Option<String>,
    pub members: Option<String>,
    pub joins: Option<String>,
    pub member_ids: Vec<String>,
    pub topic_ids: Option<String>,
    pub preset: Option<String>,
    pub detail: bool,
}

pub fn run_table(args: &TableArgs) -> ExitCode {
    let sections = match table_sections(args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("assign --table: {e}");
            return super::bad_input();
        }
    };
    match table::build(&sections) {
        Ok(tables) => {
            let text = table::render(&tables, args.detail);
            // A closed pipe (`| head`) is not an error worth a panic.
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("assign --table: {e}");
            super::bad_input()
        }
    }
}

fn table_sections(args: &TableArgs) -> Result<Vec<table::Section>, String> {
    if let Some(name) = &args.preset {
        return table::preset(name);
    }
    let topics = args
        .topics
        .as_deref()
        .ok_or("--topics NAME=PARTITIONS,... is required (or --preset seed-001)")?;
    let members = args
        .members
        .as_deref()
        .ok_or("--members N,... is required (the group sizes, e.g. 2,3,4,10)")?;
    Ok(vec![table::section_from_args(
        topics,
        members,
        args.joins.as_deref(),
        &args.member_ids,
        args.topic_ids.as_deref(),
    )?])
}

/// `cgsim assign --table --subtopologies ... --instances N [--threads N] [--standbys N]`.
pub fn run_streams_table(
    subtopologies: &str,
    instances: usize,
    threads: usize,
    standbys: u32,
) -> ExitCode {
    match table::streams::StreamsTableSpec::new(subtopologies, instances, threads, standbys) {
        Ok(spec) => {
            let text = table::streams::render(&spec, &table::streams::build(&spec));
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("assign --table: {e}");
            super::bad_input()
        }
    }
}
