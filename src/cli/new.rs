//! `cgsim new --members N [--static] --topics NAME=P,... [--protocol classic|consumer]
//! [--assignors LIST] [--deploy none|rolling|crash|scale-out] [--at-ms T]`: a commented
//! scenario for one's own group, on stdout (`cgsim::scenario::new`).

use cgsim::assignor::table::parse_topics;
use cgsim::scenario::new::NewGroup;
use std::process::ExitCode;

pub fn run(mut group: NewGroup, topics: &str, assignors: Option<&str>) -> ExitCode {
    let parsed: Result<String, String> = parse_topics(topics).and_then(|topics| {
        group.topics = topics;
        group.assignors = assignors.map(|list| {
            list.split(',')
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty())
                .collect()
        });
        group.write()
    });
    match parsed {
        Ok(text) => {
            super::write_stdout(&text);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cgsim new: {e}");
            super::bad_input()
        }
    }
}
