//! `cgsim assign [FILE]`: JSON lines in, JSON lines out. Every line is processed; a bad line is
//! reported on stderr as `line N: what is wrong` and makes the exit code 2.

use cgsim::assignor::json::{parse_case, render};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::ExitCode;

pub fn run(file: Option<&Path>) -> ExitCode {
    let (source, reader): (String, Box<dyn Read>) = match file {
        Some(path) => match std::fs::File::open(path) {
            Ok(f) => (format!("{}: ", path.display()), Box::new(f)),
            Err(e) => {
                eprintln!("{}: cannot read: {e}", path.display());
                return super::bad_input();
            }
        },
        None => (String::new(), Box::new(std::io::stdin().lock())),
    };
    let mut out = std::io::stdout().lock();
    let mut bad = false;
    for (n, line) in BufReader::new(reader).lines().enumerate() {
        let n = n + 1;
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("{source}line {n}: cannot read: {e}");
                bad = true;
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let case = match parse_case(&line) {
            Ok(c) => c,
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
