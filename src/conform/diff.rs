//! Compares a replay's trace with Kafka's, request by request. A request event matches when
//! its response (or its staying pending), the other requests it completed (with their
//! responses), the records it wrote, the group state after it and the timers after it all
//! equal Kafka's. Timer and metadata events are not counted; their effects show in the next
//! request's state. The request echo (`metadata_bytes`, `client_id`) is not compared, nor are
//! the `heartbeat:X` timers of a replaced static member's old id, which Kafka never cancels.

use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// How one script compared.
pub struct ScriptDiff {
    pub id: String,
    pub matched: usize,
    pub total: usize,
    /// The first request that differs, in words.
    pub first_difference: Option<String>,
}

/// Compares `ours` with `kafka` (both traces of the same script).
pub fn compare(ours: &Value, kafka: &Value) -> ScriptDiff {
    let id = kafka["id"].as_str().unwrap_or("?").to_string();
    let our_requests = requests(ours);
    let kafka_requests = requests(kafka);
    let static_labels = static_labels(kafka);
    let mut matched = 0;
    let mut first_difference = None;
    for (i, k) in kafka_requests.iter().enumerate() {
        let difference = match our_requests.get(i) {
            None => Some("the replay has no such request".to_string()),
            Some(o) => compare_request(o, k, ours, kafka, &static_labels),
        };
        match difference {
            None => matched += 1,
            Some(words) if first_difference.is_none() => {
                first_difference = Some(format!(
                    "request {} (t={} {} {}): {words}",
                    i + 1,
                    k["t"],
                    k["op"].as_str().unwrap_or("?"),
                    k["member"].as_str().unwrap_or("?")
                ));
            }
            Some(_) => {}
        }
    }
    ScriptDiff {
        id,
        matched,
        total: kafka_requests.len(),
        first_difference,
    }
}

fn requests(trace: &Value) -> Vec<&Value> {
    trace["events"]
        .as_array()
        .map(|events| events.iter().filter(|e| e["kind"] == "request").collect())
        .unwrap_or_default()
}

/// The request number (1-based, among request events) of event `seq` in `trace`.
fn request_number(trace: &Value, seq: &Value) -> Option<usize> {
    requests(trace)
        .iter()
        .position(|e| e["seq"] == *seq)
        .map(|i| i + 1)
}

/// Labels that were static members at some point of Kafka's run.
fn static_labels(trace: &Value) -> BTreeSet<String> {
    let mut labels = BTreeSet::new();
    for event in trace["events"].as_array().into_iter().flatten() {
        for m in event["group"]["members"].as_array().into_iter().flatten() {
            if !m["group_instance_id"].is_null() {
                if let Some(label) = m["member_id"].as_str() {
                    labels.insert(label.to_string());
                }
            }
        }
    }
    labels
}

fn compare_request(
    ours: &Value,
    kafka: &Value,
    our_trace: &Value,
    kafka_trace: &Value,
    static_labels: &BTreeSet<String>,
) -> Option<String> {
    if ours["op"] != kafka["op"] || ours["member"] != kafka["member"] || ours["t"] != kafka["t"] {
        return Some(format!(
            "the replay's request is {} {} at t={}",
            ours["op"], ours["member"], ours["t"]
        ));
    }
    match (kafka.get("response"), ours.get("response")) {
        (Some(k), Some(o)) => {
            if let Some(d) = first_difference("response", &normalize(k), &normalize(o)) {
                return Some(d);
            }
        }
        (None, None) => {}
        (Some(_), None) => return Some("Kafka answers at once, the replay parks it".into()),
        (None, Some(_)) => return Some("Kafka parks it, the replay answers at once".into()),
    }
    let completed = |event: &Value, trace: &Value| -> Value {
        let list: Vec<Value> = event["completed"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let mut entry = Map::new();
                entry.insert(
                    "request".into(),
                    request_number(trace, &c["seq"]).map_or(Value::Null, Value::from),
                );
                entry.insert("member".into(), c["member"].clone());
                entry.insert("op".into(), c["op"].clone());
                entry.insert("response".into(), normalize(&c["response"]));
                Value::Object(entry)
            })
            .collect();
        Value::Array(list)
    };
    if let Some(d) = first_difference(
        "completed",
        &completed(kafka, kafka_trace),
        &completed(ours, our_trace),
    ) {
        return Some(d);
    }
    if let Some(d) = first_difference("records", &kafka["records"], &ours["records"]) {
        return Some(d);
    }
    if let Some(d) = first_difference(
        "group",
        &normalize_group(&kafka["group"]),
        &normalize_group(&ours["group"]),
    ) {
        return Some(d);
    }
    let ignored = replaced_static_timers(&kafka["group"], static_labels);
    first_difference(
        "timers",
        &timers(&kafka["timers"], &ignored),
        &timers(&ours["timers"], &ignored),
    )
}

/// `heartbeat:X` of labels that were static members and are no longer in the group.
fn replaced_static_timers(group: &Value, static_labels: &BTreeSet<String>) -> BTreeSet<String> {
    let mut present = BTreeSet::new();
    for m in group["members"].as_array().into_iter().flatten() {
        if let Some(l) = m["member_id"].as_str() {
            present.insert(l.to_string());
        }
    }
    for l in group["pending_join_members"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let Some(l) = l.as_str() {
            present.insert(l.to_string());
        }
    }
    static_labels
        .iter()
        .filter(|l| !present.contains(*l))
        .map(|l| format!("heartbeat:{l}"))
        .collect()
}

/// Timers as a sorted list of (deadline, name), without the ignored ones.
fn timers(list: &Value, ignored: &BTreeSet<String>) -> Value {
    let mut timers: Vec<(i64, String)> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let name = t["timer"].as_str()?.to_string();
            let at = t["deadline_t"].as_i64()?;
            (!ignored.contains(&name)).then_some((at, name))
        })
        .collect();
    timers.sort();
    Value::Array(
        timers
            .into_iter()
            .map(|(at, name)| Value::String(format!("{name} at {at}")))
            .collect(),
    )
}

/// Partition lists sorted, so `{topic: [p]}` compares as a set.
fn normalize(v: &Value) -> Value {
    match v {
        Value::Array(items) if items.iter().all(Value::is_number) => {
            let mut nums: Vec<i64> = items.iter().filter_map(Value::as_i64).collect();
            nums.sort_unstable();
            Value::Array(nums.into_iter().map(Value::from).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), normalize(v))).collect())
        }
        other => other.clone(),
    }
}

/// The group with members keyed by label and the id lists sorted.
fn normalize_group(group: &Value) -> Value {
    let Value::Object(map) = normalize(group) else {
        return group.clone();
    };
    let mut out = Map::new();
    for (k, v) in map {
        let v = match (k.as_str(), v) {
            ("members", Value::Array(members)) => {
                let mut keyed: Vec<(String, Value)> = members
                    .into_iter()
                    .map(|m| (m["member_id"].as_str().unwrap_or("").to_string(), m))
                    .collect();
                keyed.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(keyed.into_iter().collect())
            }
            ("pending_join_members" | "pending_sync_members", Value::Array(mut ids)) => {
                ids.sort_by_key(|id| id.to_string());
                Value::Array(ids)
            }
            (_, v) => v,
        };
        out.insert(k, v);
    }
    Value::Object(out)
}

/// The first place where `ours` differs from `kafka`, in words.
fn first_difference(path: &str, kafka: &Value, ours: &Value) -> Option<String> {
    match (kafka, ours) {
        (Value::Object(k), Value::Object(o)) => {
            for (key, kv) in k {
                let sub = format!("{path}.{key}");
                match o.get(key) {
                    Some(ov) => {
                        if let Some(d) = first_difference(&sub, kv, ov) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{sub}: Kafka {kv}, the replay has none")),
                }
            }
            o.keys()
                .find(|key| !k.contains_key(*key))
                .map(|key| format!("{path}.{key}: Kafka has none, the replay {}", o[key]))
        }
        (Value::Array(k), Value::Array(o)) if k.len() == o.len() => k
            .iter()
            .zip(o)
            .enumerate()
            .find_map(|(i, (kv, ov))| first_difference(&format!("{path}[{i}]"), kv, ov)),
        _ if kafka == ours => None,
        _ => Some(format!("{path}: Kafka {kafka}, the replay {ours}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_difference_is_named_by_its_path() {
        let kafka = json!({"error": "NONE", "members": [{"member_id": "A"}]});
        let ours = json!({"error": "NONE", "members": [{"member_id": "B"}]});
        assert_eq!(
            first_difference("response", &kafka, &ours).as_deref(),
            Some("response.members[0].member_id: Kafka \"A\", the replay \"B\"")
        );
        assert_eq!(first_difference("response", &kafka, &kafka), None);
    }

    #[test]
    fn partitions_compare_as_sets_and_timers_by_deadline() {
        assert_eq!(
            normalize(&json!({"orders": [3, 1, 2]})),
            json!({"orders": [1, 2, 3]})
        );
        let ignored = BTreeSet::from(["heartbeat:B".to_string()]);
        let list = json!([
            {"timer": "sync", "deadline_t": 9},
            {"timer": "heartbeat:B", "deadline_t": 5},
            {"timer": "heartbeat:A", "deadline_t": 5},
        ]);
        assert_eq!(
            timers(&list, &ignored),
            json!(["heartbeat:A at 5", "sync at 9"])
        );
    }
}
