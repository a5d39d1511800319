//! The lab's JSON API as pure functions: a query string or a body in, a status and a JSON
//! document out. An input error names the field it belongs to, so the page can show it next to
//! that input: `{"error": {"field": "topics", "message": "..."}}` (`field` is null when the error
//! belongs to no one field).

use crate::assignor::json::{parse_line, render, AssignLine};
use crate::assignor::streams::{
    self,
    classic::{self, json::ClassicCase},
    json::StreamsCase,
};
use crate::assignor::table::{
    self, co_location, parse_member_counts, parse_topic_ids, parse_topics, GroupPlan, JoinSpec,
    MemberIds, Section, SectionTable,
};
use crate::assignor::{by_name, ASSIGNOR_NAMES};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Partitions in all in one view: the page draws a grid cell per member and partition.
pub const MAX_PARTITIONS: i64 = 1_000;
/// Members in one group of a view.
pub const MAX_MEMBERS: usize = 100;
/// Group sizes in one view.
pub const MAX_GROUPS: usize = 8;
/// Members x partitions summed over a view's groups: each is a cell in every assignor's grid
/// (7 of them), which keeps a page at most 140,000 cells.
pub const MAX_CELLS: usize = 20_000;
/// Bytes of a request body (`POST /api/assign`).
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// Bytes of a request's path and query.
pub const MAX_URL_BYTES: usize = 8 * 1024;
/// Input lines of one `POST /api/assign`.
pub const MAX_ASSIGN_LINES: usize = 1_000;
/// Partitions in all on one `POST /api/assign` line (the CLI takes 10,000,000; a page's request
/// should answer in well under a second).
pub const MAX_ASSIGN_PARTITIONS: i64 = 100_000;

/// The query fields of a view (`GET /api/table`, and the page's own URL).
pub const FIELDS: &[&str] = &[
    "preset",
    "topics",
    "members",
    "joins",
    "member-ids",
    "static-ids",
    "subscriptions",
    "topic-ids",
];

/// Why a request was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// 400 for bad input, 413 for input above a limit, 404, 405, 414.
    pub status: u16,
    /// The query field (or `body`) the error belongs to.
    pub field: Option<String>,
    pub message: String,
}

impl ApiError {
    pub fn bad(field: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status: 400,
            field: Some(field.to_string()),
            message: unflag(&message.into()),
        }
    }

    pub fn too_large(field: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status: 413,
            ..ApiError::bad(field, message)
        }
    }

    pub fn to_json(&self) -> Value {
        json!({"error": {"field": self.field, "message": self.message}})
    }
}

/// The table parsers speak of command-line flags (`--topics entry ...`); here they are fields.
fn unflag(message: &str) -> String {
    FIELDS
        .iter()
        .fold(message.to_string(), |m, f| m.replace(&format!("--{f}"), f))
}

/// `GET /api/info` for the assignment view: the assignors, the presets (with the query that
/// shows each) and the limits. The server adds the rebalance view's part ([`super::rebalance::info`]).
pub fn info() -> Value {
    let assignors: Vec<Value> = ASSIGNOR_NAMES
        .iter()
        .map(|&name| {
            let a = by_name(name).expect("a known assignor");
            json!({
                "name": a.name(),
                "protocol": a.default_protocol().name(),
                "side": if a.is_server_side() { "server" } else { "client" },
            })
        })
        .collect();
    let presets: Vec<Value> = table::PRESETS
        .iter()
        .map(|&name| {
            json!({
                "name": name,
                "title": preset_title(name),
                "query": format!("preset={name}"),
            })
        })
        .collect();
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "assignors": assignors,
        "presets": presets,
        "fields": FIELDS,
        "limits": {
            "partitions": MAX_PARTITIONS,
            "members_per_group": MAX_MEMBERS,
            "groups": MAX_GROUPS,
            "members_x_partitions": MAX_CELLS,
            "body_bytes": MAX_BODY_BYTES,
            "url_bytes": MAX_URL_BYTES,
            "assign_lines": MAX_ASSIGN_LINES,
            "assign_partitions_per_line": MAX_ASSIGN_PARTITIONS,
        },
    })
}

fn preset_title(name: &str) -> &'static str {
    match name {
        "seed-001" => "Seed 001: who reads which partition (the published tables)",
        "seed-000" => "Seed 000: two co-partitioned topics, 4 pods (co-location)",
        _ => "",
    }
}

/// Splits a query string into fields, percent-decoded (`+` is a space, as forms send it).
/// Empty values count as absent, so a submitted form with blank inputs means the defaults.
pub fn parse_query(query: &str) -> Result<BTreeMap<String, String>, ApiError> {
    parse_fields(query, FIELDS)
}

/// [`parse_query`] for any list of known fields.
pub fn parse_fields(query: &str, fields: &[&str]) -> Result<BTreeMap<String, String>, ApiError> {
    let mut out = BTreeMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(key).map_err(|e| ApiError::bad("query", e))?;
        let value = decode(value).map_err(|e| ApiError::bad(&key, e))?;
        if !fields.contains(&key.as_str()) {
            return Err(ApiError::bad(
                &key,
                format!("unknown field {key:?} (known: {})", fields.join(", ")),
            ));
        }
        if value.trim().is_empty() {
            continue;
        }
        // A scenario's text is kept as written (its last newline included).
        let value = if key == "toml" {
            value
        } else {
            value.trim().to_string()
        };
        if out.insert(key.clone(), value).is_some() {
            return Err(ApiError::bad(&key, format!("{key} is given twice")));
        }
    }
    Ok(out)
}

fn decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| format!("bad percent-encoding in {text:?}"))?;
                out.push(hex);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| format!("{text:?} is not UTF-8"))
}

/// Percent-encodes a query value (everything but unreserved characters and `,` `=` `:` `@`
/// `/`, which a query may hold as they are and which keep links readable).
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'_' | b'.' | b'~' | b',' | b'=' | b':' | b'@' | b'/'
            )
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `GET /api/table?...`: every assignor on every group of the view, with counts, idle members
/// and co-location.
pub fn table(query: &str) -> Result<Value, ApiError> {
    let fields = parse_query(query)?;
    let sections = sections(&fields)?;
    let tables = table::build(&sections).map_err(|e| ApiError {
        status: 400,
        field: None,
        message: e.0,
    })?;
    Ok(json!({
        "preset": fields.get("preset"),
        "sections": tables.iter().map(section_json).collect::<Vec<_>>(),
    }))
}

/// The sections a view's fields describe: a preset's, or one built from the fields.
fn sections(fields: &BTreeMap<String, String>) -> Result<Vec<Section>, ApiError> {
    if let Some(name) = fields.get("preset") {
        if let Some(other) = fields.keys().find(|k| *k != "preset") {
            return Err(ApiError::bad(
                other,
                format!("a preset takes no other field (remove {other}, or the preset)"),
            ));
        }
        return table::preset(name).map_err(|e| ApiError::bad("preset", e));
    }
    let get = |k: &str| fields.get(k).map(String::as_str);

    let topics = parse_topics(
        get("topics")
            .ok_or_else(|| ApiError::bad("topics", "give topics as NAME=PARTITIONS,..."))?,
    )
    .map_err(|e| ApiError::bad("topics", e))?;
    let partitions: i64 = topics.iter().map(|&(_, p)| i64::from(p)).sum();
    if partitions > MAX_PARTITIONS {
        return Err(ApiError::too_large(
            "topics",
            format!("{partitions} partitions in all: the lab shows at most {MAX_PARTITIONS} (cgsim assign --table takes more)"),
        ));
    }
    let topic_ids = get("topic-ids")
        .map(parse_topic_ids)
        .transpose()
        .map_err(|e| ApiError::bad("topic-ids", e))?
        .unwrap_or_default();
    if let Some(name) = topic_ids
        .keys()
        .find(|n| !topics.iter().any(|(t, _)| t == *n))
    {
        return Err(ApiError::bad(
            "topic-ids",
            format!("names {name:?}, which is not one of the topics"),
        ));
    }

    let ids = MemberIds::parse(
        &get("member-ids")
            .map(|v| v.split(';').map(str::to_string).collect::<Vec<_>>())
            .unwrap_or_default(),
    )
    .map_err(|e| ApiError::bad("member-ids", e))?;
    let counts = match (get("members"), &ids.default) {
        (Some(text), _) => parse_member_counts(text).map_err(|e| ApiError::bad("members", e))?,
        // Ids alone: one group of exactly those members.
        (None, Some(list)) if ids.per_count.is_empty() => vec![list.len()],
        (None, _) => {
            return Err(ApiError::bad(
                "members",
                "give a member count (or several, like 2,3,4,10), or member ids",
            ))
        }
    };
    if counts.len() > MAX_GROUPS {
        return Err(ApiError::too_large(
            "members",
            format!(
                "{} group sizes: the lab shows at most {MAX_GROUPS}",
                counts.len()
            ),
        ));
    }
    if let Some(n) = counts.iter().find(|&&n| n > MAX_MEMBERS) {
        return Err(ApiError::too_large(
            "members",
            format!("a group of {n}: the lab shows groups of at most {MAX_MEMBERS} members"),
        ));
    }
    let cells: usize = counts.iter().sum::<usize>() * partitions as usize;
    if cells > MAX_CELLS {
        return Err(ApiError::too_large(
            "members",
            format!(
                "{cells} members x partitions in all: the lab draws at most {MAX_CELLS} (fewer \
                 groups, members or partitions)"
            ),
        ));
    }
    if let Some(n) = ids.per_count.keys().find(|n| !counts.contains(n)) {
        return Err(ApiError::bad(
            "member-ids",
            format!("gives ids for {n} members, but members has no group of {n}"),
        ));
    }
    let joins = get("joins")
        .map(JoinSpec::parse)
        .transpose()
        .map_err(|e| ApiError::bad("joins", e))?
        .unwrap_or_default();
    if let Some(n) = joins.per_count.keys().find(|n| !counts.contains(n)) {
        return Err(ApiError::bad(
            "joins",
            format!("gives a history for {n} members, but members has no group of {n}"),
        ));
    }
    let static_ids = get("static-ids")
        .map(|v| parse_member_map(v, "MEMBER=GROUP_INSTANCE_ID"))
        .transpose()
        .map_err(|e| ApiError::bad("static-ids", e))?
        .unwrap_or_default();
    let subscriptions: BTreeMap<String, Vec<String>> = get("subscriptions")
        .map(|v| parse_member_map(v, "MEMBER=TOPIC+TOPIC"))
        .transpose()
        .map_err(|e| ApiError::bad("subscriptions", e))?
        .unwrap_or_default()
        .into_iter()
        .map(|(m, list)| {
            let names = list
                .split(['+', ' '])
                .filter(|s| !s.is_empty())
                .map(str::to_string);
            (m, names.collect())
        })
        .collect();

    let mut groups = Vec::with_capacity(counts.len());
    for &n in &counts {
        let member_ids = ids
            .for_count(n)
            .map_err(|e| ApiError::bad("member-ids", e))?;
        let history = joins.for_count(n).clone();
        history
            .batches(n)
            .map_err(|e| ApiError::bad("joins", format!("{n} members: {e}")))?;
        let mine = |id: &String| member_ids.contains(id);
        let mut plan = GroupPlan::new(member_ids.clone(), history);
        plan.static_ids = static_ids
            .clone()
            .into_iter()
            .filter(|(m, _)| mine(m))
            .collect();
        plan.subscriptions = subscriptions
            .clone()
            .into_iter()
            .filter(|(m, _)| mine(m))
            .collect();
        groups.push(plan);
    }
    // Named members must be in some group: a typo would otherwise be silently ignored.
    for (field, named) in [
        ("static-ids", static_ids.keys().collect::<Vec<_>>()),
        ("subscriptions", subscriptions.keys().collect()),
    ] {
        if let Some(m) = named
            .iter()
            .find(|m| !groups.iter().any(|g| g.member_ids.contains(m)))
        {
            return Err(ApiError::bad(
                field,
                format!("{m:?} is not a member of any group"),
            ));
        }
    }
    let topics = table::topics_with_ids(topics, &topic_ids);
    for g in &groups {
        g.check_static_ids()
            .map_err(|e| ApiError::bad("static-ids", e))?;
        g.check_subscriptions(&topics)
            .map_err(|e| ApiError::bad("subscriptions", e))?;
    }
    let section = Section::new(topics, groups).map_err(|e| ApiError {
        status: 400,
        field: None,
        message: e,
    })?;
    Ok(vec![section])
}

/// `ID=VALUE,ID=VALUE`: one value per member id.
fn parse_member_map(text: &str, shape: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for item in text.split(',').map(str::trim) {
        let (member, value) = item
            .split_once('=')
            .filter(|(m, v)| !m.trim().is_empty() && !v.trim().is_empty())
            .ok_or_else(|| format!("entry {item:?}: expected {shape}"))?;
        if out
            .insert(member.trim().to_string(), value.trim().to_string())
            .is_some()
        {
            return Err(format!("names member {:?} twice", member.trim()));
        }
    }
    Ok(out)
}

fn section_json(t: &SectionTable) -> Value {
    let topics = &t.section.topics;
    let names: Vec<&str> = topics.iter().map(|t| t.name.as_str()).collect();
    let groups: Vec<Value> = t
        .blocks
        .iter()
        .map(|block| {
            let plan = &block.plan;
            let members: Vec<Value> = plan
                .members(topics)
                .iter()
                .map(|m| {
                    json!({
                        "member_id": m.member_id,
                        "group_instance_id": m.group_instance_id,
                        "topics": m.topics.iter().map(|&i| names[i as usize]).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let assignors: Vec<Value> = block
                .columns
                .iter()
                .map(|col| {
                    let last = col.formation.rebalances.last().expect("a rebalance");
                    let assignment: Vec<Value> = col
                        .formation
                        .final_assignment()
                        .iter()
                        .map(|parts| {
                            let mut per_topic: BTreeMap<usize, Vec<i32>> = BTreeMap::new();
                            for tp in parts {
                                per_topic.entry(tp.topic as usize).or_default().push(tp.partition);
                            }
                            let mut m = Map::new();
                            for (topic, mut ps) in per_topic {
                                ps.sort_unstable();
                                m.insert(names[topic].to_string(), json!(ps));
                            }
                            Value::Object(m)
                        })
                        .collect();
                    let co = co_location(topics, col.formation.final_assignment());
                    json!({
                        "name": col.assignor,
                        "protocol": last.group.protocol.name(),
                        "side": if by_name(col.assignor).is_ok_and(|a| a.is_server_side()) { "server" } else { "client" },
                        "rebalances": col.formation.rebalances.len(),
                        "generation": last.generation,
                        "counts": col.counts(),
                        "idle": col.idle(),
                        "assignment": assignment,
                        "co_location": co.iter().map(|c| json!({
                            "topics": c.topics.iter().map(|&i| names[i as usize]).collect::<Vec<_>>(),
                            "co_located": c.co_located(),
                            "indexes": c.owners.len(),
                            "owners": c.owners.iter().map(|o| o.map(|m| plan.member_ids[m].as_str())).collect::<Vec<_>>(),
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            json!({
                "members": members,
                "joins": plan.history.label(),
                "history": plan.history.describe(),
                "assignors": assignors,
            })
        })
        .collect();
    json!({
        "label": t.section.label(),
        "topics": topics.iter().map(|t| json!({
            "name": t.name,
            "partitions": t.partitions,
            "id": t.id.map(|u| u.to_string()),
        })).collect::<Vec<_>>(),
        "query": section_query(&t.section),
        "groups": groups,
    })
}

/// The query that shows `section` as an editable view of its own (how a preset's section is
/// opened in the form).
pub fn section_query(section: &Section) -> String {
    let mut parts = vec![format!(
        "topics={}",
        encode(
            &section
                .topics
                .iter()
                .map(|t| format!("{}={}", t.name, t.partitions))
                .collect::<Vec<_>>()
                .join(",")
        )
    )];
    let counts: Vec<String> = section
        .groups
        .iter()
        .map(|g| g.member_ids.len().to_string())
        .collect();
    parts.push(format!("members={}", encode(&counts.join(","))));
    let joins: Vec<String> = section
        .groups
        .iter()
        .map(|g| format!("{}={}", g.member_ids.len(), g.history.label()))
        .collect();
    parts.push(format!("joins={}", encode(&joins.join(","))));
    let ids: Vec<String> = section
        .groups
        .iter()
        .filter(|g| *g != &GroupPlan::default_ids(g.member_ids.len(), g.history.clone()))
        .map(|g| format!("{}={}", g.member_ids.len(), g.member_ids.join(",")))
        .collect();
    if !ids.is_empty() {
        parts.push(format!("member-ids={}", encode(&ids.join(";"))));
    }
    let mut statics = BTreeMap::new();
    let mut subs = BTreeMap::new();
    for g in &section.groups {
        statics.extend(g.static_ids.iter());
        subs.extend(g.subscriptions.iter().map(|(m, t)| (m, t.join("+"))));
    }
    let pairs = |m: BTreeMap<&String, String>| {
        m.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    if !statics.is_empty() {
        let m = statics.into_iter().map(|(k, v)| (k, v.clone())).collect();
        parts.push(format!("static-ids={}", encode(&pairs(m))));
    }
    if !subs.is_empty() {
        parts.push(format!("subscriptions={}", encode(&pairs(subs))));
    }
    let ids: Vec<String> = section
        .topics
        .iter()
        .filter_map(|t| {
            let id = t.id?;
            (id != table::derived_topic_id(&t.name)).then(|| format!("{}={id}", t.name))
        })
        .collect();
    if !ids.is_empty() {
        parts.push(format!("topic-ids={}", encode(&ids.join(","))));
    }
    parts.join("&")
}

/// `POST /api/assign`: `cgsim assign`'s JSON lines in the body; per line, its output (exactly
/// the CLI's line) or what is wrong with it.
pub fn assign(body: &str) -> Result<Value, ApiError> {
    let lines: Vec<(usize, &str)> = body
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l))
        .collect();
    if lines.is_empty() {
        return Err(ApiError::bad(
            "body",
            "no input lines (cgsim assign's JSON lines, one case a line)",
        ));
    }
    if lines.len() > MAX_ASSIGN_LINES {
        return Err(ApiError::too_large(
            "body",
            format!(
                "{} lines: the lab answers at most {MAX_ASSIGN_LINES} a request",
                lines.len()
            ),
        ));
    }
    let results: Vec<Value> = lines
        .into_iter()
        .map(|(n, line)| match assign_line(line) {
            Ok((output, warnings)) => json!({"line": n, "output": output, "warnings": warnings}),
            Err(e) => json!({"line": n, "error": e}),
        })
        .collect();
    Ok(json!({"results": results}))
}

fn assign_line(line: &str) -> Result<(Value, Vec<String>), String> {
    let case = match parse_line(line)? {
        AssignLine::Partitions(case) => case,
        AssignLine::Streams(case) => return assign_streams_line(&case),
        AssignLine::StreamsClassic(case) => return assign_classic_line(&case),
    };
    let partitions = case.group.total_partitions();
    if partitions > MAX_ASSIGN_PARTITIONS {
        return Err(format!(
            "{partitions} partitions in all: the lab takes at most {MAX_ASSIGN_PARTITIONS} a line (cgsim assign takes more)"
        ));
    }
    let result = case.assignor.assign(&case.group).map_err(|e| e.0)?;
    let output = serde_json::from_str(&render(&case, &result)).expect("render writes JSON");
    Ok((output, case.warnings))
}

/// A classic Kafka Streams line, under the same limit: its tasks count as partitions.
fn assign_classic_line(case: &ClassicCase) -> Result<(Value, Vec<String>), String> {
    let tasks: i64 = case
        .subtopologies
        .iter()
        .map(|s| i64::from(s.partitions))
        .sum();
    if tasks > MAX_ASSIGN_PARTITIONS {
        return Err(format!(
            "{tasks} tasks in all: the lab takes at most {MAX_ASSIGN_PARTITIONS} a line (cgsim assign takes more)"
        ));
    }
    let rendered = classic::json::render(case, &case.assign());
    let output = serde_json::from_str(&rendered).expect("render writes JSON");
    Ok((output, Vec::new()))
}

/// A KIP-1071 line, under the same limit: its tasks (one per partition of each subtopology)
/// count as the partitions of a line.
fn assign_streams_line(case: &StreamsCase) -> Result<(Value, Vec<String>), String> {
    let tasks = case.task_count() as i64;
    if tasks > MAX_ASSIGN_PARTITIONS {
        return Err(format!(
            "{tasks} tasks in all: the lab takes at most {MAX_ASSIGN_PARTITIONS} a line (cgsim assign takes more)"
        ));
    }
    let result = case.assign();
    let warnings = result
        .as_ref()
        .map(|a| a.warnings.clone())
        .unwrap_or_default();
    let output =
        serde_json::from_str(&streams::json::render(case, &result)).expect("render writes JSON");
    Ok((output, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(query: &str) -> ApiError {
        table(query).expect_err(query)
    }

    #[test]
    fn the_seed_001_preset_answers_as_the_table_does() {
        let v = table("preset=seed-001").unwrap();
        let g = &v["sections"][0]["groups"][0];
        assert_eq!(g["joins"], "one-by-one");
        let range = &g["assignors"][0];
        assert_eq!(range["name"], "range");
        assert_eq!(range["counts"], json!([6, 3]));
        assert_eq!(v["sections"][0]["groups"][3]["assignors"][0]["idle"], 7);
    }

    #[test]
    fn errors_name_their_field() {
        assert_eq!(err("members=2").field.as_deref(), Some("topics"));
        let e = err("topics=t3a:3&members=2");
        assert_eq!((e.status, e.field.as_deref()), (400, Some("topics")));
        assert!(
            e.message.starts_with("topics entry \"t3a:3\""),
            "{}",
            e.message
        );
        assert_eq!(err("topics=t=3").field.as_deref(), Some("members"));
        assert_eq!(
            err("topics=t=3&members=2&joins=2%3D3%2B1").field.as_deref(),
            Some("joins")
        );
        assert_eq!(
            err("topics=t=3&members=2&static-ids=c9%3Dp")
                .field
                .as_deref(),
            Some("static-ids")
        );
        assert_eq!(
            err("topics=t=3&members=2&static-ids=c1%3Dp,c2%3Dp")
                .field
                .as_deref(),
            Some("static-ids")
        );
        assert_eq!(
            err("topics=t=3&members=2&subscriptions=c1%3Dx")
                .field
                .as_deref(),
            Some("subscriptions")
        );
        assert_eq!(
            err("topics=t=3&members=2&colour=red").field.as_deref(),
            Some("colour")
        );
        assert_eq!(
            err("preset=seed-001&members=2").field.as_deref(),
            Some("members")
        );
        assert_eq!(err("preset=seed-9").field.as_deref(), Some("preset"));
    }

    #[test]
    fn absurd_sizes_are_refused_with_413() {
        let e = err("topics=t=1001&members=1");
        assert_eq!((e.status, e.field.as_deref()), (413, Some("topics")));
        assert_eq!(err("topics=t=10&members=101").status, 413);
        assert_eq!(err("topics=t=1000&members=30").status, 413);
        assert_eq!(err("topics=t=1&members=1,2,3,4,5,6,7,8,9").status, 413);
    }

    #[test]
    fn ids_alone_make_one_group_with_static_ids_and_subscriptions() {
        let v = table("topics=a=2,b=2&member-ids=x,y&static-ids=y%3Dpod-1&subscriptions=x%3Da")
            .unwrap();
        let g = &v["sections"][0]["groups"][0];
        assert_eq!(g["members"][1]["group_instance_id"], "pod-1");
        assert_eq!(g["members"][0]["topics"], json!(["a"]));
        // range puts the static member first: y takes a-0 and every partition of b.
        assert_eq!(
            g["assignors"][0]["assignment"],
            json!([{"a": [1]}, {"a": [0], "b": [0, 1]}])
        );
        // The section's own query reproduces it.
        let q = v["sections"][0]["query"].as_str().unwrap();
        assert_eq!(table(q).unwrap()["sections"], v["sections"]);
    }

    #[test]
    fn queries_decode_and_encode() {
        let f = parse_query("topics=t%3D3%2Cu%3D1&joins=3+1&members=").unwrap();
        assert_eq!(f["topics"], "t=3,u=1");
        assert_eq!(f["joins"], "3 1");
        assert!(!f.contains_key("members"));
        assert!(parse_query("topics=%zz").is_err());
        assert!(parse_query("topics=a&topics=b").is_err());
        assert_eq!(encode("4=3+1;a b"), "4=3%2B1%3Ba%20b");
    }

    #[test]
    fn assign_answers_each_line_like_the_cli() {
        let body = "{\"id\":\"x\",\"assignor\":\"range\",\"topics\":{\"t\":3},\"members\":[{\"member_id\":\"a\",\"topics\":[\"t\"]}]}\n\nnot json\n";
        let v = assign(body).unwrap();
        assert_eq!(
            v["results"][0]["output"]["assignment"]["a"]["t"],
            json!([0, 1, 2])
        );
        assert_eq!(v["results"][1]["line"], 3);
        assert!(v["results"][1]["error"]
            .as_str()
            .unwrap()
            .starts_with("malformed JSON"));
        assert_eq!(assign("  \n").unwrap_err().status, 400);
    }

    #[test]
    fn assign_takes_streams_lines_under_the_same_limits() {
        let line = |partitions: i64, members: &str| {
            format!(
                r#"{{"id":"s","num_standby_replicas":1,"subtopologies":[{{"id":"0","partitions":{partitions},"stateful":true}}],"members":[{members}]}}"#
            )
        };
        let one = r#"{"member_id":"a","process_id":"p1"}"#;
        let body = [
            line(2, one),
            line(1, ""),
            line(MAX_ASSIGN_PARTITIONS + 1, one),
            line(1, &format!("{one},{one}")),
        ]
        .join("\n");
        let v = assign(&body).unwrap();
        let r = &v["results"];
        assert_eq!(
            r[0]["output"]["members"]["a"]["active"],
            json!(["0_0", "0_1"])
        );
        // Two standbys and one process: Kafka's warnings.
        assert_eq!(r[0]["warnings"].as_array().unwrap().len(), 2);
        assert_eq!(
            r[1]["output"]["error"],
            "No process available to assign active task 0_0."
        );
        assert_eq!(
            r[2]["error"],
            "100001 tasks in all: the lab takes at most 100000 a line (cgsim assign takes more)"
        );
        assert_eq!(r[3]["error"], r#"duplicate member_id "a""#);
    }
}
