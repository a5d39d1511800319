//! The JSON lines of a sweep: one header line (what the sweep is: cgsim's version, the schema,
//! the scenario's hash, the grid and its points, the variants, the seeds, the shard), then one
//! line per run. Written here and read back here, so what `merge` and `--resume` read is what
//! `sweep` wrote, value for value; no wall clock, no host, nothing that differs between two
//! machines running the same sweep.

use super::grid::{GridKey, Point};
use super::shard::Shard;
use super::{figures, Job, Plan, Record, SCHEMA_VERSION};
use crate::report::compare::{json_value, Unit, RATE_SCALE};
use serde_json::{json, Map, Value};

/// The header's tag: its first key, so a reader tells a sweep file at its first line.
const TAG: &str = "cgsim_sweep";

impl Plan {
    /// The header line's value.
    pub fn header(&self) -> Value {
        let grid: Vec<Value> = self
            .grid
            .iter()
            .map(|g| json!({"key": g.key, "values": g.values}))
            .collect();
        let points: Vec<Value> = self
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                json!({
                    "point": self.label(i),
                    "settings": settings_json(p),
                    "kafka_defaults": p.kafka_defaults,
                    "keys_left_out": p.unset,
                })
            })
            .collect();
        let figure_keys: Vec<&str> = figures().map(|f| f.key).collect();
        json!({
            TAG: "header",
            "schema_version": SCHEMA_VERSION,
            "cgsim_version": env!("CARGO_PKG_VERSION"),
            "scenario": self.scenario,
            "scenario_sha256": self.scenario_sha256,
            "sets": self.sets,
            "grid": grid,
            "points": points,
            "kafka_defaults_not_run": self.defaults_not_run,
            "variants": self.variants,
            "seeds": {"first": self.first_seed, "last": self.last_seed},
            "shard": {"index": self.shard.index, "count": self.shard.count},
            "figures": figure_keys,
        })
    }

    /// The header as one line (no newline).
    pub fn header_line(&self) -> String {
        serde_json::to_string(&self.header()).expect("a header serializes")
    }

    /// Reads a header back; refuses one of another schema or another figure list (another
    /// cgsim), or one that does not hold together.
    pub fn from_header(header: &Value) -> Result<Plan, String> {
        if header.get(TAG).and_then(Value::as_str) != Some("header") {
            return Err("not a cgsim sweep header".into());
        }
        let schema = header.get("schema_version").and_then(Value::as_u64);
        if schema != Some(u64::from(SCHEMA_VERSION)) {
            return Err(format!(
                "schema_version {} (this cgsim reads {SCHEMA_VERSION})",
                header.get("schema_version").unwrap_or(&Value::Null)
            ));
        }
        let ours: Vec<&str> = figures().map(|f| f.key).collect();
        let theirs: Vec<&str> = array(header, "figures")?
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect();
        if ours != theirs {
            return Err(format!(
                "written by cgsim {} with other figures than this cgsim's ({})",
                string(header, "cgsim_version")?,
                env!("CARGO_PKG_VERSION")
            ));
        }
        let grid = array(header, "grid")?
            .iter()
            .map(|g| {
                Ok(GridKey {
                    key: string(g, "key")?,
                    values: strings(g, "values")?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let points = array(header, "points")?
            .iter()
            .map(|p| {
                let settings = p
                    .get("settings")
                    .and_then(Value::as_object)
                    .ok_or("a point without settings")?
                    .iter()
                    .map(|(k, v)| {
                        Ok((
                            k.clone(),
                            v.as_str()
                                .ok_or("a setting that is not a string")?
                                .to_string(),
                        ))
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                Ok(Point {
                    settings,
                    kafka_defaults: boolean(p, "kafka_defaults")?,
                    unset: boolean(p, "keys_left_out")?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let seeds = header.get("seeds").ok_or("no seeds")?;
        let shard = header.get("shard").ok_or("no shard")?;
        let plan = Plan {
            scenario: string(header, "scenario")?,
            scenario_sha256: string(header, "scenario_sha256")?,
            sets: strings(header, "sets")?,
            grid,
            points,
            defaults_not_run: match header.get("kafka_defaults_not_run") {
                Some(Value::String(s)) => Some(s.clone()),
                _ => None,
            },
            variants: strings(header, "variants")?,
            first_seed: number(seeds, "first")?,
            last_seed: number(seeds, "last")?,
            shard: Shard {
                index: number(shard, "index")?,
                count: number(shard, "count")?,
            },
        };
        if plan.first_seed > plan.last_seed
            || plan.shard.index == 0
            || plan.shard.index > plan.shard.count
            || plan.variants.is_empty()
            || plan.points.is_empty()
        {
            return Err("a header that does not hold together".into());
        }
        Ok(plan)
    }

    /// A run's line (no newline).
    pub fn record_line(&self, r: &Record) -> String {
        let mut values = Map::new();
        for (f, v) in figures().zip(&r.values) {
            values.insert(
                f.key.to_string(),
                v.map_or(Value::Null, |v| json_value(f.unit, v)),
            );
        }
        let line = json!({
            "point": self.label(r.job.point),
            "variant": self.variants[r.job.variant],
            "seed": r.job.seed,
            "settings": settings_json(&self.points[r.job.point]),
            "digest": r.digest,
            "figures": values,
            "violations": r.violations,
        });
        serde_json::to_string(&line).expect("a record serializes")
    }

    /// Reads a run's line back; it must be a run of this plan (its point's settings included).
    pub fn parse_record(&self, line: &str) -> Result<Record, String> {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        if v.get(TAG).is_some() {
            return Err("a second header".into());
        }
        let label = string(&v, "point")?;
        let point = (0..self.points.len())
            .find(|&i| self.label(i) == label)
            .ok_or_else(|| format!("point {label:?} is not on this sweep's grid"))?;
        if v.get("settings") != Some(&settings_json(&self.points[point])) {
            return Err(format!(
                "its settings are not those of the header's {label}"
            ));
        }
        let variant_name = string(&v, "variant")?;
        let variant = self
            .variants
            .iter()
            .position(|x| *x == variant_name)
            .ok_or_else(|| format!("variant {variant_name:?} is not this sweep's"))?;
        let seed = number(&v, "seed")?;
        if !(self.first_seed..=self.last_seed).contains(&seed) {
            return Err(format!("seed {seed} is outside the sweep's seeds"));
        }
        let figures_of = v
            .get("figures")
            .and_then(Value::as_object)
            .ok_or("no figures")?;
        let mut values = Vec::new();
        for f in figures() {
            let value = figures_of
                .get(f.key)
                .ok_or_else(|| format!("no figure {}", f.key))?;
            values.push(read_value(f.unit, value).ok_or_else(|| {
                format!(
                    "figure {}: {value} is not a {} value",
                    f.key,
                    unit_name(f.unit)
                )
            })?);
        }
        Ok(Record {
            job: Job {
                point,
                variant,
                seed,
            },
            digest: string(&v, "digest")?,
            values,
            violations: strings(&v, "violations")?,
        })
    }
}

/// A point's settings as the header and every line carry them: key -> canonical TOML text.
fn settings_json(p: &Point) -> Value {
    let mut m = Map::new();
    for (k, v) in &p.settings {
        m.insert(k.clone(), Value::String(v.clone()));
    }
    Value::Object(m)
}

/// A figure's JSON value back to its integer (a rate's fraction to parts per million: the
/// fraction was written from an exact integer, so rounding recovers it).
fn read_value(unit: Unit, v: &Value) -> Option<Option<u64>> {
    if v.is_null() {
        return Some(None);
    }
    match unit {
        Unit::Count | Unit::Ms => v.as_u64().map(Some),
        Unit::Rate => {
            let f = v.as_f64()?;
            if !(0.0..=1.0e6).contains(&f) {
                return None;
            }
            Some(Some((f * RATE_SCALE as f64).round() as u64))
        }
    }
}

fn unit_name(unit: Unit) -> &'static str {
    match unit {
        Unit::Count => "count",
        Unit::Ms => "millisecond",
        Unit::Rate => "fraction",
    }
}

fn string(v: &Value, key: &str) -> Result<String, String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("no {key} (a string)"))
}

fn strings(v: &Value, key: &str) -> Result<Vec<String>, String> {
    array(v, key)?
        .iter()
        .map(|x| {
            x.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{key}: not a string"))
        })
        .collect()
}

fn array<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>, String> {
    v.get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("no {key} (a list)"))
}

fn number(v: &Value, key: &str) -> Result<u64, String> {
    v.get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("no {key} (a non-negative integer)"))
}

fn boolean(v: &Value, key: &str) -> Result<bool, String> {
    v.get(key)
        .and_then(Value::as_bool)
        .ok_or_else(|| format!("no {key} (true or false)"))
}

/// A sweep file as read: its header, its complete run lines (with their 1-based line
/// numbers), and how many bytes of it are whole lines (a run killed mid-write leaves a last
/// line without its newline, which is not a line).
#[derive(Debug)]
pub struct SweepFile {
    pub header: Value,
    pub lines: Vec<(usize, String)>,
    pub whole_bytes: usize,
    /// A partial last line was dropped.
    pub truncated: bool,
}

/// Reads a sweep file's text; `Ok(None)` when it has no complete header line yet (empty, or
/// killed before its first newline).
pub fn read(text: &str) -> Result<Option<SweepFile>, String> {
    let whole_bytes = text.rfind('\n').map_or(0, |i| i + 1);
    let truncated = whole_bytes < text.len();
    let mut lines = text[..whole_bytes].lines().enumerate();
    let Some((_, first)) = lines.next() else {
        return Ok(None);
    };
    let header: Value =
        serde_json::from_str(first).map_err(|_| "line 1: not a cgsim sweep header".to_string())?;
    if header.get(TAG).and_then(Value::as_str) != Some("header") {
        return Err("line 1: not a cgsim sweep header".into());
    }
    let lines = lines
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect();
    Ok(Some(SweepFile {
        header,
        lines,
        whole_bytes,
        truncated,
    }))
}

/// The first top-level key where two headers differ (`shard` left out when `ignore_shard`),
/// with both values, for the error that refuses them.
pub fn header_difference(a: &Value, b: &Value, ignore_shard: bool) -> Option<String> {
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut all = keys(a);
    for k in keys(b) {
        if !all.contains(&k) {
            all.push(k);
        }
    }
    for key in all {
        if ignore_shard && key == "shard" {
            continue;
        }
        let (x, y) = (a.get(&key), b.get(&key));
        if x != y {
            let show = |v: Option<&Value>| {
                let s = v.map_or("nothing".to_string(), Value::to_string);
                if s.chars().count() > 60 {
                    s.chars().take(57).collect::<String>() + "..."
                } else {
                    s
                }
            };
            return Some(format!("{key}: {} against {}", show(x), show(y)));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::figure_index;

    fn plan() -> Plan {
        Plan::for_tests(
            "group.session_timeout_ms=10000,20000",
            &["eager", "cooperative"],
            3,
            Shard { index: 2, count: 3 },
        )
    }

    fn record(job: Job, v: u64) -> Record {
        let n = figures().count();
        let mut values = vec![Some(v); n];
        values[figure_index("join.hit_rate").unwrap()] = None;
        Record {
            job,
            digest: "ab".into(),
            values,
            violations: vec![],
        }
    }

    #[test]
    fn a_header_reads_back_as_its_plan() {
        let p = plan();
        let line = p.header_line();
        assert!(
            line.starts_with(r#"{"cgsim_sweep":"header","schema_version":1,"cgsim_version":""#),
            "{line}"
        );
        let back = Plan::from_header(&serde_json::from_str(&line).unwrap()).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.header_line(), line);
        // Another schema is refused.
        let mut v: Value = serde_json::from_str(&line).unwrap();
        v["schema_version"] = json!(99);
        assert!(Plan::from_header(&v)
            .unwrap_err()
            .contains("schema_version 99"));
    }

    #[test]
    fn a_record_reads_back_as_itself_rates_included() {
        let p = plan();
        let job = Job {
            point: 2,
            variant: 1,
            seed: 3,
        };
        let mut r = record(job, 7);
        r.violations = vec!["double_ownership".into()];
        let line = p.record_line(&r);
        assert!(line.starts_with(r#"{"point":"p3","variant":"cooperative","seed":3,"settings":{"group.session_timeout_ms":"45000"}"#), "{line}");
        assert_eq!(p.parse_record(&line).unwrap(), r);
        // Every rate survives the fraction it is written as.
        let rate = figure_index("join.hit_rate").unwrap();
        for ppm in (0..=RATE_SCALE)
            .step_by(7)
            .chain([1, 333_333, 999_999, RATE_SCALE])
        {
            r.values[rate] = Some(ppm);
            assert_eq!(
                p.parse_record(&p.record_line(&r)).unwrap().values[rate],
                Some(ppm)
            );
        }
    }

    #[test]
    fn a_record_of_another_sweep_is_refused() {
        let p = plan();
        let r = record(
            Job {
                point: 0,
                variant: 0,
                seed: 1,
            },
            1,
        );
        let line = p.record_line(&r);
        let mut v: Value = serde_json::from_str(&line).unwrap();
        v["seed"] = json!(9);
        assert!(p
            .parse_record(&v.to_string())
            .unwrap_err()
            .contains("outside"));
        let mut v: Value = serde_json::from_str(&line).unwrap();
        v["settings"]["group.session_timeout_ms"] = json!("30000");
        assert!(p
            .parse_record(&v.to_string())
            .unwrap_err()
            .contains("settings"));
        let mut v: Value = serde_json::from_str(&line).unwrap();
        v["variant"] = json!("sticky");
        assert!(p
            .parse_record(&v.to_string())
            .unwrap_err()
            .contains("sticky"));
        let mut v: Value = serde_json::from_str(&line).unwrap();
        v["figures"]["moved.total"] = json!(-1);
        assert!(p
            .parse_record(&v.to_string())
            .unwrap_err()
            .contains("moved.total"));
        assert!(p
            .parse_record("{\"point\":")
            .unwrap_err()
            .contains("not JSON"));
    }

    #[test]
    fn a_partial_last_line_is_not_a_line() {
        let p = plan();
        let r = record(
            Job {
                point: 0,
                variant: 0,
                seed: 1,
            },
            1,
        );
        let whole = format!("{}\n{}\n", p.header_line(), p.record_line(&r));
        let f = read(&whole).unwrap().unwrap();
        assert_eq!(
            (f.lines.len(), f.whole_bytes, f.truncated),
            (1, whole.len(), false)
        );
        let killed = format!("{whole}{{\"point\":\"p1\",\"vari");
        let f = read(&killed).unwrap().unwrap();
        assert_eq!(
            (f.lines.len(), f.whole_bytes, f.truncated),
            (1, whole.len(), true)
        );
        assert!(read("").unwrap().is_none());
        assert!(read("{\"cgsim_sweep\":\"hea").unwrap().is_none());
        assert!(read("hello\n")
            .unwrap_err()
            .contains("not a cgsim sweep header"));
    }

    #[test]
    fn headers_differ_by_their_first_key() {
        let a = plan().header();
        let mut b = a.clone();
        b["shard"] = json!({"index": 1, "count": 3});
        assert_eq!(header_difference(&a, &b, true), None);
        assert!(header_difference(&a, &b, false)
            .unwrap()
            .starts_with("shard: "));
        b["scenario_sha256"] = json!("ff");
        assert_eq!(
            header_difference(&a, &b, true).unwrap(),
            r#"scenario_sha256: "00" against "ff""#
        );
    }
}
