//! `cgsim conform coordinator`: the simulator's coordinator answering Kafka's scripted requests
//! one by one (`../shared/reference/coordinator/`), its trace in Kafka's trace format, and a
//! comparison with what Kafka 4.3.1's own `GroupMetadataManager` answered.
//!
//! - `script.rs`: the script format, checked key by key.
//! - `replay.rs`: drives [`crate::group::Coordinator`] on its own clock and writes
//!   the trace.
//! - `diff.rs`: request by request against Kafka's trace.

pub mod diff;
pub mod replay;
mod replay_consumer;
pub mod script;

use serde_json::Value;
use std::collections::BTreeMap;

pub use diff::ScriptDiff;
pub use script::Script;

/// A bad line of an input file: its number (1-based) and what is wrong.
#[derive(Debug, PartialEq, Eq)]
pub struct LineError {
    pub line: usize,
    pub message: String,
}

/// Every script of a scripts file (blank lines skipped).
pub fn parse_scripts(text: &str) -> Result<Vec<Script>, LineError> {
    let mut scripts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let script = script::parse_line(line).map_err(|message| LineError {
            line: i + 1,
            message,
        })?;
        scripts.push(script);
    }
    Ok(scripts)
}

/// Kafka's traces of a traces file, by script id.
pub fn parse_traces(text: &str) -> Result<BTreeMap<String, Value>, LineError> {
    let mut traces = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| LineError {
            line: i + 1,
            message,
        };
        let trace: Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        let id = trace["id"]
            .as_str()
            .ok_or_else(|| bad("no \"id\"".into()))?
            .to_string();
        if !trace["events"].is_array() {
            return Err(bad(format!("{id}: no \"events\" list")));
        }
        traces.insert(id, trace);
    }
    Ok(traces)
}

/// The member ids of a Kafka trace (label -> id), in the order Kafka issued them.
pub fn member_ids(trace: &Value) -> Vec<(String, String)> {
    trace["member_ids"]
        .as_object()
        .map(|ids| {
            ids.iter()
                .filter_map(|(label, id)| Some((label.clone(), id.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// One script's outcome.
pub enum Outcome {
    /// Replayed: its trace.
    Replayed(Value),
    /// Classic requests and ConsumerGroupHeartbeats in one script: the online migration between
    /// the protocols, not modelled yet.
    NotSupported,
}

/// Replays `script`, with Kafka's member ids when given.
pub fn replay(script: &Script, member_ids: Option<&[(String, String)]>) -> Result<Outcome, String> {
    if script.is_consumer_protocol() {
        if script.is_mixed_protocol() {
            return Ok(Outcome::NotSupported);
        }
        let replayed = replay_consumer::ConsumerReplay::new(script, member_ids).run()?;
        return Ok(Outcome::Replayed(replayed.trace));
    }
    let replayed = replay::Replay::new(script, member_ids).run()?;
    Ok(Outcome::Replayed(replayed.trace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_script_line_is_named_with_what_is_wrong() {
        let text = "\n{\"id\": \"x\", \"group_id\": \"g\", \"seed\": 1, \"steps\": [{\"at\": 0, \"op\": \"jion\", \"member\": \"A\"}]}\n";
        let err = parse_scripts(text).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(
            err.message.contains("unknown variant `jion`"),
            "{}",
            err.message
        );

        let text = "{\"id\": \"x\", \"group_id\": \"g\", \"seed\": 1, \"steps\": [{\"at\": 5, \"op\": \"advance\"}, {\"at\": 1, \"op\": \"advance\"}]}";
        let err = parse_scripts(text).unwrap_err();
        assert!(
            err.message.contains("before the previous step"),
            "{}",
            err.message
        );

        let text = "{\"id\": \"x\", \"group_id\": \"g\", \"seed\": 1, \"steps\": [{\"at\": 0, \"op\": \"join\", \"member\": \"A\", \"sesion_timeout_ms\": 5}]}";
        let err = parse_scripts(text).unwrap_err();
        assert!(err.message.contains("sesion_timeout_ms"), "{}", err.message);
    }
}
