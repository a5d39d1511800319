//! `cgsim conform coordinator SCRIPTS.jsonl [--diff TRACES.jsonl] [--member-ids-from
//! TRACES.jsonl] [--format text|json]`: the coordinator answering Kafka's scripted requests.

use cgsim::conform::{self, Outcome};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn coordinator(
    scripts: &Path,
    diff: Option<&Path>,
    member_ids_from: Option<&Path>,
    format: Option<Format>,
) -> ExitCode {
    let scripts_list = match read(scripts).and_then(|text| {
        conform::parse_scripts(&text)
            .map_err(|e| format!("{}:{}: {}", scripts.display(), e.line, e.message))
    }) {
        Ok(s) => s,
        Err(e) => return bad(&e),
    };
    let kafka = match diff.map(load_traces).transpose() {
        Ok(t) => t,
        Err(e) => return bad(&e),
    };
    let ids_from = match member_ids_from.map(load_traces).transpose() {
        Ok(t) => t,
        Err(e) => return bad(&e),
    };
    let format = format.unwrap_or(if diff.is_some() {
        Format::Text
    } else {
        Format::Json
    });
    let mut out = String::new();
    let mut traces: Vec<(String, Value)> = Vec::new();
    let mut unsupported: Vec<String> = Vec::new();
    for script in &scripts_list {
        let ids = ids_from
            .as_ref()
            .and_then(|t| t.get(&script.id))
            .map(conform::member_ids);
        match conform::replay(script, ids.as_deref()) {
            Ok(Outcome::Replayed(trace)) => traces.push((script.id.clone(), trace)),
            Ok(Outcome::NotSupported) => unsupported.push(script.id.clone()),
            Err(e) => return bad(&format!("{}: {}: {e}", scripts.display(), script.id)),
        }
    }
    let mut all_match = true;
    if let Some(kafka) = &kafka {
        let (mut matched, mut total, mut compared) = (0, 0, 0);
        for (id, trace) in &traces {
            let Some(theirs) = kafka.get(id) else {
                out.push_str(&format!("{id}: no Kafka trace to compare with\n"));
                continue;
            };
            let d = conform::diff::compare(trace, theirs);
            compared += 1;
            matched += d.matched;
            total += d.total;
            out.push_str(&format!("{id}: {}/{} requests match", d.matched, d.total));
            if let Some(words) = &d.first_difference {
                all_match = false;
                out.push_str(&format!("; first difference at {words}"));
            }
            out.push('\n');
        }
        for id in &unsupported {
            out.push_str(&format!(
                "{id}: not supported yet (classic and consumer members in one group: the migration), not counted\n"
            ));
        }
        out.push_str(&format!(
            "coordinator conformance: {matched}/{total} requests match over {compared} scripts\n"
        ));
        if format == Format::Json {
            out.clear();
        }
    }
    if format == Format::Json {
        for (_, trace) in &traces {
            out.push_str(&trace.to_string());
            out.push('\n');
        }
        for id in &unsupported {
            eprintln!("{id}: not supported yet (classic and consumer members in one group: the migration)");
        }
    }
    super::write_stdout(&out);
    if all_match {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_VIOLATIONS)
    }
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn load_traces(path: &Path) -> Result<BTreeMap<String, Value>, String> {
    let text = read(path)?;
    conform::parse_traces(&text)
        .map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.message))
}

fn bad(message: &str) -> ExitCode {
    eprintln!("cgsim conform: {message}");
    super::bad_input()
}
