//! `[[expect]]` entries: a dotted path into the JSON report (`pauses.stop_the_world_ms.max`),
//! one comparison (`eq`, `le` or `ge`) and optionally the one variant it concerns. Validated at
//! load (exactly one comparison; `le`/`ge` take numbers; a known variant); the path is checked
//! against the report when it is evaluated (`Expectation::check`), since only a run has one.

use super::file::ExpectFile;
use serde_json::Value;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Comparison {
    /// Equal: a number, a string or a boolean.
    Eq(Value),
    /// At most.
    Le(f64),
    /// At least.
    Ge(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    pub key: String,
    pub comparison: Comparison,
    /// Only this variant's runs (every variant when absent).
    pub variant: Option<String>,
    /// 1-based line of the entry in the scenario file.
    pub line: usize,
}

/// What checking one expectation against one report found.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Pass {
        measured: String,
    },
    Fail {
        measured: String,
    },
    /// The key names nothing in the report (bad input, not a failed expectation).
    UnknownKey(String),
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Comparison::Eq(v) => write!(f, "eq {v}"),
            Comparison::Le(n) => write!(f, "le {}", number(*n)),
            Comparison::Ge(n) => write!(f, "ge {}", number(*n)),
        }
    }
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.key, self.comparison)
    }
}

/// `3` for a whole number, `2.5` otherwise.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

fn to_json(v: &toml::Value) -> Result<Value, String> {
    match v {
        toml::Value::Integer(i) => Ok(Value::from(*i)),
        toml::Value::Float(x) => serde_json::Number::from_f64(*x)
            .map(Value::Number)
            .ok_or_else(|| format!("{x} is not a comparable number")),
        toml::Value::String(s) => Ok(Value::from(s.clone())),
        toml::Value::Boolean(b) => Ok(Value::from(*b)),
        other => Err(format!(
            "eq takes a number, a string or a boolean, not {}",
            other.type_str()
        )),
    }
}

fn to_number(name: &str, v: &toml::Value) -> Result<f64, String> {
    match v {
        toml::Value::Integer(i) => Ok(*i as f64),
        toml::Value::Float(x) if x.is_finite() => Ok(*x),
        other => Err(format!("{name} takes a number, not a {}", other.type_str())),
    }
}

impl Expectation {
    pub(super) fn from_file(
        file: &ExpectFile,
        line: usize,
        known_variant: impl Fn(&str) -> bool,
    ) -> Result<Self, String> {
        if file.key.trim().is_empty() {
            return Err("key is empty: give a dotted path into the JSON report, e.g. \"pauses.stop_the_world_ms.max\"".into());
        }
        let given: Vec<&str> = [("eq", &file.eq), ("le", &file.le), ("ge", &file.ge)]
            .iter()
            .filter(|(_, v)| v.is_some())
            .map(|(n, _)| *n)
            .collect();
        let comparison = match (&file.eq, &file.le, &file.ge) {
            (Some(v), None, None) => Comparison::Eq(to_json(v)?),
            (None, Some(v), None) => Comparison::Le(to_number("le", v)?),
            (None, None, Some(v)) => Comparison::Ge(to_number("ge", v)?),
            (None, None, None) => {
                return Err(format!(
                    "key {:?} has no comparison: give exactly one of eq, le, ge",
                    file.key
                ))
            }
            _ => {
                return Err(format!(
                    "key {:?} has {}: give exactly one of eq, le, ge",
                    file.key,
                    given.join(" and ")
                ))
            }
        };
        if let Some(v) = &file.variant {
            if !known_variant(v) {
                return Err(format!("unknown variant {v:?}"));
            }
        }
        Ok(Expectation {
            key: file.key.clone(),
            comparison,
            variant: file.variant.clone(),
            line,
        })
    }

    /// Whether it concerns a run of `variant`.
    pub fn applies_to(&self, variant: &str) -> bool {
        self.variant.as_deref().is_none_or(|v| v == variant)
    }

    /// Checks it against a report as JSON (`serde_json::to_value(report)`). An array counts as
    /// its length (`invariants.violations`, `eq = 0`).
    pub fn check(&self, report: &Value) -> Verdict {
        let mut at = report;
        let mut path = String::new();
        for part in self.key.split('.') {
            let next = match at {
                Value::Object(map) => map.get(part),
                Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            };
            let Some(next) = next else {
                let under = if path.is_empty() {
                    "the report".to_string()
                } else {
                    format!("{path:?}")
                };
                let there = match at {
                    Value::Object(map) => {
                        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
                        format!(" (keys there: {})", keys.join(", "))
                    }
                    Value::Array(items) => format!(" (an array of {} entries)", items.len()),
                    other => format!(" ({under} is the value {other})"),
                };
                return Verdict::UnknownKey(format!(
                    "key {:?}: no {part:?} under {under}{there}",
                    self.key
                ));
            };
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(part);
            at = next;
        }
        let value = match at {
            Value::Array(items) => Value::from(items.len()),
            other => other.clone(),
        };
        let measured = match &value {
            Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), number),
            other => other.to_string(),
        };
        let pass = match (&self.comparison, &value) {
            (Comparison::Eq(want), Value::Number(n)) => {
                want.as_f64().is_some_and(|w| n.as_f64() == Some(w))
            }
            (Comparison::Eq(want), got) => want == got,
            (Comparison::Le(limit), Value::Number(n)) => n.as_f64().is_some_and(|x| x <= *limit),
            (Comparison::Ge(limit), Value::Number(n)) => n.as_f64().is_some_and(|x| x >= *limit),
            _ => false,
        };
        if pass {
            Verdict::Pass { measured }
        } else {
            Verdict::Fail { measured }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn expect(key: &str, comparison: Comparison) -> Expectation {
        Expectation {
            key: key.into(),
            comparison,
            variant: None,
            line: 1,
        }
    }

    #[test]
    fn paths_numbers_arrays_and_unknown_keys() {
        let report = json!({"pauses": {"max": 3016}, "invariants": {"violations": [1, 2]}, "variant": "eager"});
        let pass = |m: &str| Verdict::Pass { measured: m.into() };
        assert_eq!(
            expect("pauses.max", Comparison::Le(3016.0)).check(&report),
            pass("3016")
        );
        assert_eq!(
            expect("pauses.max", Comparison::Ge(4000.0)).check(&report),
            Verdict::Fail {
                measured: "3016".into()
            }
        );
        assert_eq!(
            expect("invariants.violations", Comparison::Eq(json!(2))).check(&report),
            pass("2")
        );
        assert_eq!(
            expect("variant", Comparison::Eq(json!("eager"))).check(&report),
            pass("\"eager\"")
        );
        let Verdict::UnknownKey(m) = expect("pauses.min", Comparison::Eq(json!(0))).check(&report)
        else {
            panic!("unknown key");
        };
        assert!(
            m.contains("no \"min\" under \"pauses\" (keys there: max)"),
            "{m}"
        );
    }
}
