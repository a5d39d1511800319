//! The rebalance view's API: a scenario (a file of `scenarios/` by name, or edited text) with
//! faults added in the page, run under several variants at one seed; the runs' lanes on one
//! time axis, their comparison table, the state of every run at an instant, the faults that
//! can be added there, and the downloads (the scenario as run, each run's JSON report and
//! Perfetto trace, byte for byte what `cgsim run` writes).
//!
//! The view's fields, in the page's address and in every request:
//! `scenario` (a name) or `toml` (the scenario's text), `seed` (default: the scenario's),
//! `variants` (default `eager,cooperative,consumer`), `faults` (`faults.rs`), `window`
//! (`START_MS..END_MS`, the part of the run drawn), `at` (the instant, ms) and `variant` (which
//! run a download is of).

use super::api::{encode, parse_fields, ApiError};
use super::faults::{self, Fault, Kind};
use super::instant::{lanes, state_at, StateAt};
use super::limits::{self, MAX_SCENARIO_BYTES, MAX_VARIANTS};
use super::runs::{LabRun, Runner};
use super::scenarios::{self, ScenarioDir};
use crate::report::compare::{to_json, Comparison, RunFigures, FIGURES};
use crate::report::{render_chrome_trace, ChromeTraceOptions};
use crate::scenario::timeline::{admit, Planned};
use crate::scenario::{load_str, LoadOptions, Scenario, ScenarioError};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The fields of the rebalance view.
pub const FIELDS: &[&str] = &[
    "scenario", "toml", "seed", "variants", "faults", "window", "at", "variant",
];

/// The variants every scenario has.
pub const BUILT_IN_VARIANTS: &[&str] = &["eager", "cooperative", "consumer"];

/// A stall that outlasts `max.poll.interval.ms` by this much (the poll timeout's rebalance).
const STALL_PAST_POLL_INTERVAL_MS: u64 = 5_000;
/// A short stall (no rebalance: the heartbeat thread keeps the member in the group).
const SHORT_STALL_MS: u64 = 10_000;
/// A network partition from the coordinator longer than the default session timeout.
const CUT_OFF_MS: u64 = 60_000;
/// The latency spike's added latency and length.
const SPIKE_LATENCY_MS: u64 = 200;
const SPIKE_MS: u64 = 30_000;

/// A variant and its run (or why the scenario cannot run it).
pub type VariantRun = (String, Result<Arc<LabRun>, String>);

/// What a request asks for: the scenario as it runs, the seed and the variants.
pub struct Spec {
    /// The file's name (`scenario=`), or none for edited text.
    pub file: Option<String>,
    /// The scenario's text as given, and as run (with the faults).
    pub base_text: String,
    pub text: String,
    /// Names the text in errors (`scenarios/scale-out.toml`, `edited scenario`).
    pub label: String,
    /// `scenario` or `toml`: the field the text comes from.
    pub field: &'static str,
    pub seed: u64,
    pub variants: Vec<String>,
    pub faults: Vec<Fault>,
    /// The faults of the address that cannot be added (by their place in `faults`), each with
    /// why: the run goes on without them.
    pub refused: Vec<(usize, String)>,
    /// The faults added: `faults` without the refused ones.
    pub added: Vec<Fault>,
    /// The file's own members (a join adds one more).
    pub file_members: Vec<String>,
    /// The scenario as run, under no variant.
    pub scenario: Scenario,
    /// The variants the file declares.
    pub own_variants: Vec<String>,
    pub window: Option<(u64, u64)>,
    pub at: Option<u64>,
    pub variant: Option<String>,
}

/// How a refusal names an entry of the timeline: a fault added here by its spec, one of the
/// file's by its line.
fn added_source(added: &[Fault], p: &Planned) -> String {
    match added.iter().find(|f| f.entry() == p.entry) {
        Some(f) => format!("the added {f}"),
        None => admit::source(p),
    }
}

/// The scenario text with `added` and `fault` after them, and the scenario it loads as: the
/// loader's own answer to whether the fault can be added.
fn with_fault(
    base_text: &str,
    added: &[Fault],
    fault: &Fault,
    file_members: &[String],
    load: impl Fn(&str) -> Result<Scenario, ScenarioError>,
) -> Result<(String, Scenario), String> {
    let mut with = added.to_vec();
    with.push(fault.clone());
    let text = faults::apply(base_text, &with, file_members)?;
    let loaded = load(&text).map_err(|e| e.message)?;
    Ok((text, loaded))
}

fn number(fields: &BTreeMap<String, String>, key: &str) -> Result<Option<u64>, ApiError> {
    fields
        .get(key)
        .map(|v| {
            v.replace('_', "")
                .parse::<u64>()
                .map_err(|_| ApiError::bad(key, format!("{key} {v:?} is not a whole number")))
        })
        .transpose()
}

impl Spec {
    pub fn parse(query: &str, dir: &ScenarioDir) -> Result<Spec, ApiError> {
        let fields = parse_fields(query, FIELDS)?;
        let (file, base_text, label, field) = match (fields.get("scenario"), fields.get("toml")) {
            (Some(_), Some(_)) => {
                return Err(ApiError::bad(
                    "toml",
                    "give scenario (a file's name) or toml (a scenario's text), not both",
                ))
            }
            (Some(name), None) => {
                let name = scenarios::check_name(name)?.to_string();
                let text = dir.read(&name)?;
                let label = format!("scenarios/{name}.toml");
                (Some(name), text, label, "scenario")
            }
            (None, Some(text)) => {
                if text.len() > MAX_SCENARIO_BYTES {
                    return Err(scenarios::too_large("toml", text.len() as u64));
                }
                (None, text.clone(), "edited scenario".to_string(), "toml")
            }
            (None, None) => {
                return Err(ApiError::bad(
                    "scenario",
                    "give scenario (the name of a file in scenarios/, like scale-out) or toml (a scenario's text)",
                ))
            }
        };
        let seed = number(&fields, "seed")?;
        let load = |text: &str, variant: Option<&str>| {
            load_str(
                &label,
                text,
                &LoadOptions {
                    seed,
                    variant: variant.map(str::to_string),
                    sets: Vec::new(),
                },
            )
        };
        let base = load(&base_text, None).map_err(|e| ApiError::bad(field, e.to_string()))?;
        let faults =
            faults::parse_list(fields.get("faults").map_or("", String::as_str)).map_err(|e| {
                let status = if e.contains("at most") { 413 } else { 400 };
                ApiError {
                    status,
                    ..ApiError::bad("faults", e)
                }
            })?;
        // Each fault in turn, if the timeline with it still holds by the loader's rules; one
        // that does not is kept in the address, refused with why, and the run goes on without.
        let file_members: Vec<String> = base.members.iter().map(|m| m.name.clone()).collect();
        let mut added: Vec<Fault> = Vec::new();
        let mut refused = Vec::new();
        let (mut text, mut scenario) = (base_text.clone(), base);
        for (i, f) in faults.iter().enumerate() {
            let source = |p: &Planned| added_source(&added, p);
            let check = scenario
                .admits(&f.entry(), &source)
                .and_then(|()| with_fault(&base_text, &added, f, &file_members, |t| load(t, None)));
            match check {
                Ok((t, s)) => {
                    (text, scenario) = (t, s);
                    added.push(f.clone());
                }
                Err(why) => refused.push((i, format!("{f}: {why}"))),
            }
        }
        limits::check_scenario(&scenario, field)?;

        let own_variants: Vec<String> = text
            .parse::<toml_edit::DocumentMut>()
            .ok()
            .and_then(|d| {
                d.get("variants")?
                    .as_table_like()
                    .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
            })
            .unwrap_or_default();
        let variants: Vec<String> = match fields.get("variants") {
            None => BUILT_IN_VARIANTS.iter().map(|v| v.to_string()).collect(),
            Some(list) => list
                .split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
                .collect(),
        };
        if variants.is_empty() {
            return Err(ApiError::bad("variants", "name at least one variant"));
        }
        if variants.len() > MAX_VARIANTS {
            return Err(ApiError::too_large(
                "variants",
                format!(
                    "{} variants: the lab runs at most {MAX_VARIANTS} side by side",
                    variants.len()
                ),
            ));
        }
        for (i, v) in variants.iter().enumerate() {
            if variants[..i].contains(v) {
                return Err(ApiError::bad("variants", format!("{v} is named twice")));
            }
            if !BUILT_IN_VARIANTS.contains(&v.as_str()) && !own_variants.contains(v) {
                let known: Vec<&str> = BUILT_IN_VARIANTS
                    .iter()
                    .copied()
                    .chain(own_variants.iter().map(String::as_str))
                    .collect();
                return Err(ApiError::bad(
                    "variants",
                    format!(
                        "unknown variant {v:?} (this scenario has: {})",
                        known.join(", ")
                    ),
                ));
            }
        }
        let duration = scenario.duration_ms;
        let at = number(&fields, "at")?;
        if let Some(at) = at.filter(|&at| at > duration) {
            return Err(ApiError::bad(
                "at",
                format!("at {at} ms is after the run's end ({duration} ms)"),
            ));
        }
        let window = fields
            .get("window")
            .map(|w| parse_window(w, duration))
            .transpose()
            .map_err(|e| ApiError::bad("window", e))?;
        let variant = fields.get("variant").cloned();
        if let Some(v) = variant.as_ref().filter(|v| !variants.contains(v)) {
            return Err(ApiError::bad(
                "variant",
                format!(
                    "{v:?} is not one of the variants run ({})",
                    variants.join(", ")
                ),
            ));
        }
        Ok(Spec {
            file,
            base_text,
            text,
            label,
            field,
            seed: scenario.seed,
            variants,
            faults,
            refused,
            added,
            file_members,
            scenario,
            own_variants,
            window,
            at,
            variant,
        })
    }

    /// The view's fields as a query: the scenario, seed, variants and faults, then `extra`
    /// (`window`, `at`, `variant`) in that order. The page's own address is this query.
    pub fn query(&self, faults: &[Fault], extra: &[(&str, String)]) -> String {
        let mut parts = vec![match &self.file {
            Some(name) => format!("scenario={}", encode(name)),
            None => format!("toml={}", encode(&self.base_text)),
        }];
        parts.push(format!("seed={}", self.seed));
        parts.push(format!("variants={}", encode(&self.variants.join(","))));
        if !faults.is_empty() {
            parts.push(format!("faults={}", encode(&faults::list_spec(faults))));
        }
        for (k, v) in extra {
            parts.push(format!("{k}={}", encode(v)));
        }
        parts.join("&")
    }

    fn window_field(&self) -> Vec<(&'static str, String)> {
        self.window
            .map(|(a, b)| vec![("window", format!("{a}..{b}"))])
            .unwrap_or_default()
    }

    /// The variant's scenario, or why it does not load (a variant the scenario cannot run).
    fn load_variant(&self, variant: &str) -> Result<Scenario, String> {
        load_str(
            &self.label,
            &self.text,
            &LoadOptions {
                seed: Some(self.seed),
                variant: Some(variant.to_string()),
                sets: Vec::new(),
            },
        )
        .map_err(|e| e.to_string())
    }

    /// Every variant's run (or why it cannot run).
    pub fn runs(&self, runner: &Runner) -> Result<Vec<VariantRun>, ApiError> {
        let mut out = Vec::with_capacity(self.variants.len());
        for v in &self.variants {
            let run = match self.load_variant(v) {
                Ok(s) => Ok(runner.run(&self.text, s)?),
                Err(e) => Err(e),
            };
            out.push((v.clone(), run));
        }
        Ok(out)
    }

    /// The run of the `variant` field (a download's).
    pub fn one_run(&self, runner: &Runner) -> Result<Arc<LabRun>, ApiError> {
        let variant = self.variant.as_deref().ok_or_else(|| {
            ApiError::bad(
                "variant",
                format!("name the run: variant=one of {}", self.variants.join(",")),
            )
        })?;
        let scenario = self
            .load_variant(variant)
            .map_err(|e| ApiError::bad("variant", e))?;
        runner.run(&self.text, scenario)
    }

    /// The file name of a download.
    fn download_name(&self, what: &str) -> String {
        let base = self.file.as_deref().unwrap_or(&self.scenario.name);
        let base: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let edited = if self.faults.is_empty() && self.file.is_some() {
            ""
        } else {
            "-lab"
        };
        format!("{base}{edited}{what}")
    }
}

/// `START_MS..END_MS` inside the run.
fn parse_window(text: &str, duration: u64) -> Result<(u64, u64), String> {
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| format!("window {text:?}: expected START_MS..END_MS"))?;
    let ms = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("window {text:?}: {s:?} is not a time in ms"))
    };
    let (a, b) = (ms(a)?, ms(b)?);
    if a >= b || b > duration {
        return Err(format!(
            "window {text:?}: needs START < END <= the run's end ({duration} ms)"
        ));
    }
    Ok((a, b))
}

/// The rebalance view's part of `GET /api/info` (under `rebalance`): the built-in variants,
/// the fault kinds and the bounds.
pub fn info() -> Value {
    json!({
        "variants": BUILT_IN_VARIANTS,
        "faults": Kind::ALL.map(Kind::name),
        "limits": {
            "request_body_bytes": limits::MAX_REQUEST_BODY_BYTES,
            "scenario_bytes": limits::MAX_SCENARIO_BYTES,
            "duration_ms": limits::MAX_DURATION_MS,
            "members": limits::MAX_MEMBERS,
            "partitions": limits::MAX_PARTITIONS,
            "brokers": limits::MAX_BROKERS,
            "keyed_records": limits::MAX_KEYED_RECORDS as u64,
            "events_per_run": limits::MAX_EVENTS,
            "faults": limits::MAX_FAULTS,
            "variants": limits::MAX_VARIANTS,
            "concurrent_runs": limits::MAX_CONCURRENT_RUNS,
        },
    })
}

/// `GET /api/scenarios`: the folder's scenarios.
pub fn scenario_list(dir: &ScenarioDir) -> Value {
    let list: Vec<Value> = dir
        .list()
        .into_iter()
        .map(|s| json!({"name": s.name, "description": s.description}))
        .collect();
    json!({"scenarios": list})
}

/// `GET /api/scenario?name=NAME`: a file's text.
pub fn scenario_text(query: &str, dir: &ScenarioDir) -> Result<Value, ApiError> {
    let fields = parse_fields(query, &["name"])?;
    let name = fields
        .get("name")
        .ok_or_else(|| ApiError::bad("name", "give name=NAME, a file of scenarios/"))?;
    let name = scenarios::check_name(name).map_err(|e| ApiError {
        field: Some("name".into()),
        ..e
    })?;
    let text = dir.read(name).map_err(|e| ApiError {
        field: Some("name".into()),
        ..e
    })?;
    Ok(json!({"name": name, "text": text}))
}

/// The rebalances after formation of the runs that ran: the window they span and the instant
/// to open at.
fn suggested(runs: &[&LabRun]) -> ((u64, u64), u64) {
    let duration = runs.first().map_or(0, |r| r.report.duration_ms);
    let lists: Vec<_> = runs.iter().map(|r| &r.report.rebalances.list).collect();
    let first = lists
        .iter()
        .filter_map(|l| l.first())
        .map(|r| r.start_ms)
        .min();
    let last = lists
        .iter()
        .filter_map(|l| l.last())
        .map(|r| r.end_ms)
        .max();
    let at = lists
        .iter()
        .filter_map(|l| l.first())
        .map(|r| r.end_ms)
        .min()
        .or_else(|| {
            runs.iter()
                .filter_map(|r| r.report.formation.as_ref().map(|f| f.end_ms))
                .min()
        })
        .unwrap_or(0);
    let window = match (first, last) {
        (Some(a), Some(b)) => {
            let pad = ((b - a) / 10).max(200);
            (a.saturating_sub(pad), (b + pad).min(duration))
        }
        _ => (0, duration),
    };
    (window, at.min(duration))
}

/// `GET /api/runs?...`: every variant's run, its lanes and rebalances, the comparison table.
pub fn runs(spec: &Spec, runner: &Runner) -> Result<Value, ApiError> {
    let runs = spec.runs(runner)?;
    let done: Vec<&LabRun> = runs
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok().map(|r| r.as_ref()))
        .collect();
    let (window, at) = suggested(&done);
    let query = spec.query(&spec.faults, &[]);
    let variants: Vec<Value> = runs
        .iter()
        .map(|(variant, run)| match run {
            Err(e) => json!({"variant": variant, "error": e}),
            Ok(run) => {
                let r = &run.report;
                let download = |what: &str| {
                    format!(
                        "/api/{what}?{}",
                        spec.query(&spec.faults, &[("variant", variant.clone())])
                    )
                };
                json!({
                    "variant": variant,
                    "error": null,
                    "digest": r.digest,
                    "events": r.events,
                    "duration_ms": r.duration_ms,
                    "formation": r.formation,
                    "rebalances": r.rebalances.list.iter().map(|e| json!({
                        "generation": e.generation,
                        "trigger": e.trigger,
                        "member": e.member,
                        "start_ms": e.start_ms,
                        "end_ms": e.end_ms,
                        "duration_ms": e.duration_ms,
                        "join_ms": e.join_ms,
                        "sync_ms": e.sync_ms,
                    })).collect::<Vec<_>>(),
                    "notices": r.notices,
                    "errors": r.errors,
                    "violations": r.invariants.violations.len(),
                    "lanes": lanes(run),
                    "downloads": {
                        "report": download("report.json"),
                        "trace": download("trace.json"),
                    },
                })
            }
        })
        .collect();
    let columns: Vec<(String, Vec<RunFigures>)> = runs
        .iter()
        .filter_map(|(v, r)| Some((v.clone(), vec![RunFigures::of(&r.as_ref().ok()?.report)])))
        .collect();
    let comparison = if columns.is_empty() {
        Value::Null
    } else {
        let c = Comparison::new(&spec.scenario.name, vec![spec.seed], columns);
        let mut v = to_json(&c);
        v["figures"] = json!(FIGURES
            .iter()
            .map(|f| json!({"key": f.key, "label": f.label}))
            .collect::<Vec<_>>());
        v
    };
    let faults: Vec<Value> = spec
        .faults
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut rest = spec.faults.clone();
            rest.remove(i);
            let mut extra = spec.window_field();
            if let Some(at) = spec.at {
                extra.push(("at", at.to_string()));
            }
            let refused = spec.refused.iter().find(|(r, _)| *r == i).map(|(_, why)| why);
            json!({"spec": f.to_string(), "text": f.describe(), "refused": refused, "remove": spec.query(&rest, &extra)})
        })
        .collect();
    let s = &spec.scenario;
    Ok(json!({
        "query": query,
        "scenario": {
            "name": s.name,
            "file": spec.file,
            "description": s.description.trim(),
            "seed": spec.seed,
            "duration_ms": s.duration_ms,
            "members": s.members.iter().map(|m| m.name.clone()).collect::<Vec<_>>(),
            "brokers": s.cluster.brokers,
            "variants": BUILT_IN_VARIANTS.iter().map(|v| v.to_string()).chain(spec.own_variants.iter().cloned()).collect::<Vec<_>>(),
            "text": spec.base_text,
        },
        "faults": faults,
        "variants": variants,
        "comparison": comparison,
        "window_ms": spec.window.unwrap_or(window),
        "rebalances_window_ms": window,
        "at_ms": spec.at.unwrap_or(at),
        "downloads": {"scenario": format!("/api/scenario.toml?{query}")},
    }))
}

/// `GET /api/instant?...&at=MS`: every run at the instant, and the faults the page can add
/// there (from the first run's members and brokers: the timeline is the same in every
/// variant).
pub fn instant(spec: &Spec, runner: &Runner) -> Result<Value, ApiError> {
    let at = spec
        .at
        .ok_or_else(|| ApiError::bad("at", "give the instant: at=MS"))?;
    let runs = spec.runs(runner)?;
    let states: Vec<(String, Result<StateAt, String>)> = runs
        .iter()
        .map(|(v, r)| {
            (
                v.clone(),
                r.as_ref().map(|r| state_at(r, at)).map_err(Clone::clone),
            )
        })
        .collect();
    let first = runs
        .iter()
        .zip(&states)
        .find_map(|((_, r), (_, s))| Some((r.as_ref().ok()?, s.as_ref().ok()?)));
    let actions = first.map_or_else(Vec::new, |(run, state)| actions(spec, run, state));
    Ok(json!({
        "at_ms": at,
        "query": spec.query(&spec.faults, &[]),
        "variants": states.iter().map(|(v, s)| match s {
            Ok(state) => json!({"variant": v, "error": null, "state": state}),
            Err(e) => json!({"variant": v, "error": e}),
        }).collect::<Vec<_>>(),
        "actions": actions,
    }))
}

/// The faults the page offers at the instant, each with the view's query that adds it.
fn actions(spec: &Spec, run: &LabRun, state: &StateAt) -> Vec<Value> {
    let at = state.at_ms;
    let duration = run.scenario.duration_ms;
    if at >= duration {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut offer = |fault: Fault, label: String| {
        if fault.at_ms + fault.duration_ms.unwrap_or(0) >= duration {
            return;
        }
        // Only what the timeline admits there, by the loader's own rules; a join, which adds a
        // member entry too, by loading the scenario with it.
        let source = |p: &Planned| added_source(&spec.added, p);
        let admitted = match fault.kind {
            Kind::Join => with_fault(
                &spec.base_text,
                &spec.added,
                &fault,
                &spec.file_members,
                |t| load_str(&spec.label, t, &LoadOptions::default()),
            )
            .is_ok(),
            _ => spec.scenario.admits(&fault.entry(), &source).is_ok(),
        };
        if !admitted {
            return;
        }
        let mut with = spec.faults.clone();
        with.push(fault.clone());
        let mut extra = spec.window_field();
        extra.push(("at", at.to_string()));
        out.push(json!({
            "kind": fault.kind.name(),
            "target": fault.target,
            "id": format!("{}-{}", fault.kind.name(), fault.target),
            "label": label,
            "fault": fault.to_string(),
            "text": fault.describe(),
            "query": spec.query(&with, &extra),
        }));
    };
    let fault = |kind: Kind, target: &str, duration_ms: Option<u64>| Fault {
        kind,
        target: target.to_string(),
        at_ms: at,
        duration_ms,
    };
    for (i, m) in state.members.iter().enumerate() {
        let n = m.name.as_str();
        match m.process {
            "running" | "stalled" => {
                offer(fault(Kind::Crash, n, None), "crash".into());
                offer(fault(Kind::Leave, n, None), "leave".into());
                offer(
                    fault(Kind::Stall, n, Some(SHORT_STALL_MS)),
                    format!("stall {} s", SHORT_STALL_MS / 1000),
                );
                let poll = run.scenario.members[i].settings.max_poll_interval_ms;
                let past = poll + STALL_PAST_POLL_INTERVAL_MS;
                offer(
                    fault(Kind::Stall, n, Some(past)),
                    format!("stall {} s (past max.poll.interval.ms)", past / 1000),
                );
                offer(
                    fault(Kind::NetworkPartition, n, Some(CUT_OFF_MS)),
                    format!("cut off from the coordinator {} s", CUT_OFF_MS / 1000),
                );
            }
            "crashed" | "closed" => offer(fault(Kind::Restart, n, None), "restart".into()),
            _ => {}
        }
    }
    let names: Vec<String> = state.members.iter().map(|m| m.name.clone()).collect();
    if names.len() < limits::MAX_MEMBERS {
        let new = faults::new_member_name(&names);
        offer(
            fault(Kind::Join, &new, None),
            format!("a new member {new} joins"),
        );
    }
    for b in &state.brokers {
        let id = b.id.to_string();
        if b.up {
            let whose = if b.coordinator {
                " (the coordinator's)"
            } else {
                ""
            };
            offer(
                fault(Kind::BrokerCrash, &id, None),
                format!("crash broker {id}{whose}"),
            );
        } else {
            offer(
                fault(Kind::BrokerRestart, &id, None),
                format!("restart broker {id}"),
            );
        }
    }
    offer(
        fault(
            Kind::LatencySpike,
            &SPIKE_LATENCY_MS.to_string(),
            Some(SPIKE_MS),
        ),
        format!("+{SPIKE_LATENCY_MS} ms latency for {} s", SPIKE_MS / 1000),
    );
    out
}

/// A download: the body and its file name.
pub struct Download {
    pub body: String,
    pub file_name: String,
}

/// `GET /api/scenario.toml?...`: the scenario as the lab runs it (faults added).
pub fn scenario_toml(spec: &Spec) -> Download {
    Download {
        body: spec.text.clone(),
        file_name: spec.download_name(".toml"),
    }
}

/// `GET /api/report.json?...&variant=V`: the run's report, as `cgsim run --format json`
/// prints it.
pub fn report_json(spec: &Spec, runner: &Runner) -> Result<Download, ApiError> {
    let run = spec.one_run(runner)?;
    Ok(Download {
        body: serde_json::to_string_pretty(&run.report).expect("report serializes") + "\n",
        file_name: spec.download_name(&format!("-{}-seed{}.json", run.scenario.variant, spec.seed)),
    })
}

/// `GET /api/trace.json?...&variant=V`: the run's Perfetto trace, as `cgsim run
/// --chrome-trace` writes it.
pub fn trace_json(spec: &Spec, runner: &Runner) -> Result<Download, ApiError> {
    let run = spec.one_run(runner)?;
    Ok(Download {
        body: render_chrome_trace(&run.history, &run.report, &ChromeTraceOptions::default()),
        file_name: spec.download_name(&format!(
            "-{}-seed{}-trace.json",
            run.scenario.variant, spec.seed
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::limits::RunLimits;

    fn dir() -> ScenarioDir {
        ScenarioDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios"))
    }

    #[test]
    fn the_query_round_trips() {
        let spec = Spec::parse(
            "scenario=scale-out&faults=crash:c2@63153,stall:c1@90000/10000&window=59000..70000",
            &dir(),
        )
        .unwrap();
        assert_eq!(spec.seed, 1);
        assert_eq!(spec.variants, BUILT_IN_VARIANTS);
        let q = spec.query(&spec.faults, &spec.window_field());
        assert_eq!(
            q,
            "scenario=scale-out&seed=1&variants=eager,cooperative,consumer&faults=crash:c2@63153,stall:c1@90000/10000&window=59000..70000"
        );
        let again = Spec::parse(&q, &dir()).unwrap();
        assert_eq!(again.text, spec.text);
        // Edited text travels whole.
        let edited = Spec::parse(&format!("toml={}", encode(&spec.base_text)), &dir()).unwrap();
        assert_eq!(edited.scenario.name, "scale-out");
        let q = edited.query(&[], &[]);
        assert!(q.starts_with("toml=%23%20Four"), "{q}");
        assert_eq!(Spec::parse(&q, &dir()).unwrap().base_text, spec.base_text);
    }

    #[test]
    fn bad_fields_are_named() {
        let field = |q: &str| {
            let e = Spec::parse(q, &dir()).err().expect(q);
            (e.status, e.field.unwrap_or_default())
        };
        assert_eq!(field(""), (400, "scenario".into()));
        assert_eq!(field("scenario=../Cargo"), (400, "scenario".into()));
        assert_eq!(field("scenario=nope"), (400, "scenario".into()));
        assert_eq!(field("scenario=scale-out&seed=x"), (400, "seed".into()));
        assert_eq!(
            field("scenario=scale-out&variants=eager,nope"),
            (400, "variants".into())
        );
        assert_eq!(
            field("scenario=scale-out&faults=crash:c9"),
            (400, "faults".into())
        );
        assert_eq!(field("scenario=scale-out&at=900000"), (400, "at".into()));
        assert_eq!(
            field("scenario=scale-out&window=5..4"),
            (400, "window".into())
        );
        assert_eq!(field("scenario=scale-out&toml=x"), (400, "toml".into()));
        assert_eq!(field("toml=name%3D1"), (400, "toml".into()));
        assert_eq!(
            field("scenario=scale-out&set=x"),
            (400, "set".into()),
            "unknown fields are refused"
        );
    }

    #[test]
    fn the_instant_shows_the_follow_up_handing_over() {
        let runner = Runner::new(RunLimits::default());
        let at = |ms: u64| {
            let q = format!("scenario=scale-out&variants=cooperative&at={ms}");
            instant(&Spec::parse(&q, &dir()).unwrap(), &runner).unwrap()
        };
        // The follow-up (generation 3) ends at 63150 ms: the group is Stable, and the members
        // take their new partitions as each reads its SyncGroup answer, c5 first.
        let v = at(63150);
        let state = &v["variants"][0]["state"];
        assert_eq!(state["coordinator"]["state"], "Stable");
        assert_eq!(state["coordinator"]["generation"], 3);
        assert_eq!(state["partitions"][20]["owner"], Value::Null);
        assert_eq!(state["members"][0]["state"], "COMPLETING_REBALANCE");
        // A second later every partition has the owner the report ends with.
        let v = at(64150);
        let state = &v["variants"][0]["state"];
        assert_eq!(state["members"][0]["state"], "STABLE");
        assert_eq!(state["members"][0]["generation"], 3);
        let spec = Spec::parse("scenario=scale-out&variants=cooperative", &dir()).unwrap();
        let run = &spec.runs(&runner).unwrap()[0].1.clone().unwrap();
        for (member, parts) in &run.report.final_assignment {
            for p in parts {
                let shown = state["partitions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["name"] == p.as_str())
                    .unwrap();
                assert_eq!(shown["owner"], member.as_str(), "{p}");
            }
        }
        // During it, the four partitions moving to c5 stand still; the old members rejoined
        // and wait in the join phase for c5, which learns of the rebalance by its heartbeat.
        let v = at(61000);
        let state = &v["variants"][0]["state"];
        let still: Vec<&str> = state["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["state"] == "unavailable")
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(still.len(), 4, "{still:?}");
        assert_eq!(state["rebalance"]["trigger"], "follow_up");
        assert_eq!(state["rebalance"]["phase"], "join");
        assert_eq!(state["coordinator"]["state"], "PreparingRebalance");
        assert_eq!(state["members"][0]["state"], "PREPARING_REBALANCE");
        assert_eq!(state["members"][4]["state"], "STABLE");
        assert_eq!(state["members"][4]["generation"], 2);
        let crash = v["actions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == "crash-c2")
            .unwrap();
        assert_eq!(crash["fault"], "crash:c2@61000");
        assert!(crash["query"]
            .as_str()
            .unwrap()
            .contains("faults=crash:c2@61000&at=61000"));
    }

    #[test]
    fn a_fault_the_timeline_cannot_take_is_refused_naming_what_it_conflicts_with() {
        let refused = |q: &str| {
            let spec = Spec::parse(q, &dir()).unwrap();
            let whys: Vec<String> = spec.refused.iter().map(|(_, w)| w.clone()).collect();
            (spec, whys)
        };
        // A crash before c3's turn in the rolling bounce (line 25): the bounce cannot stop it.
        let (spec, whys) = refused("scenario=rolling-bounce&faults=crash:c3@100000");
        assert_eq!(
            whys,
            ["crash:c3@100000: the rolling bounce (line 25) cannot stop c3 at 120000 ms after it"]
        );
        // The run goes on without it: the file's own timeline.
        assert_eq!(spec.text, spec.base_text);
        assert_eq!(spec.faults.len(), 1, "kept in the address");
        // While the bounce has c2 down, a restart of c2 makes the bounce's restart the second.
        let (_, whys) = refused("scenario=rolling-bounce&faults=restart:c2@92000");
        assert_eq!(
            whys,
            ["restart:c2@92000: the rolling bounce (line 25) cannot restart c2 at 95000 ms after it"]
        );
        // A crash while the bounce has c2 down: named with the leave that stopped it.
        let (_, whys) = refused("scenario=rolling-bounce&faults=crash:c2@92000");
        assert_eq!(
            whys,
            ["crash:c2@92000: c2 is not running at 92000 ms: the rolling bounce (line 25) stopped it at 90000 ms"]
        );
        // A fault that conflicts with one added before it names that one by its spec; the
        // first is kept.
        let (spec, whys) = refused("scenario=scale-out&faults=crash:c2@10000,leave:c2@20000");
        assert_eq!(
            whys,
            ["leave:c2@20000: c2 is not running at 20000 ms: the added crash:c2@10000 crashed it at 10000 ms"]
        );
        assert_eq!(spec.refused[0].0, 1);
        assert!(spec.text.contains("action = \"crash\""));
        // Unknown names and instants past the run are refusals too.
        let (_, whys) = refused("scenario=scale-out&faults=crash:c9@100,crash:c1@900000");
        assert_eq!(whys[0], "crash:c9@100: unknown member \"c9\"");
        assert!(whys[1].contains("is not before the run's end"), "{whys:?}");
    }

    #[test]
    fn every_offered_fault_at_every_rebalance_of_every_scenario_is_admitted() {
        let runner = Runner::new(RunLimits::default());
        let mut offered = 0;
        for listed in dir().list() {
            let name = listed.name;
            let Ok(spec) = Spec::parse(&format!("scenario={name}"), &dir()) else {
                continue; // A scenario too large for the lab.
            };
            let Some(run) = spec
                .runs(&runner)
                .unwrap()
                .into_iter()
                .find_map(|(_, r)| r.ok())
            else {
                continue;
            };
            let instants: Vec<u64> = run
                .report
                .rebalances
                .list
                .iter()
                .flat_map(|r| [r.start_ms, r.end_ms])
                .collect();
            for at in instants {
                let q = format!("scenario={name}&at={at}");
                let v = instant(&Spec::parse(&q, &dir()).unwrap(), &runner).unwrap();
                for a in v["actions"].as_array().unwrap() {
                    let with = Spec::parse(a["query"].as_str().unwrap(), &dir()).unwrap();
                    assert_eq!(with.refused, [], "{name} at {at} ms: {}", a["fault"]);
                    offered += 1;
                }
            }
        }
        assert!(offered > 100, "{offered}");
    }
}
