//! The values of `KEY=VALUE` overrides (`--set`, a variant's `set`, a restart's `set`): TOML,
//! or a bare word taken as a string.

/// A TOML value, or a bare word taken as a string; a number TOML cannot hold is an error, not
/// a string.
pub(super) fn parse_value(raw: &str) -> Result<toml_edit::Value, String> {
    let doc = format!("v = {raw}");
    match doc.parse::<toml_edit::DocumentMut>() {
        Ok(d) => Ok(match d.get("v").and_then(|i| i.as_value()) {
            Some(v) => v.clone(),
            None => toml_edit::Value::from(raw),
        }),
        Err(_) if looks_numeric(raw) => Err(format!(
            "{raw} is out of range (integers are 64-bit signed, at most {})",
            i64::MAX
        )),
        Err(_) => Ok(toml_edit::Value::from(raw)),
    }
}

/// Digits (with `_` separators), optionally signed: meant as a number.
fn looks_numeric(raw: &str) -> bool {
    let digits = raw.strip_prefix(['-', '+']).unwrap_or(raw);
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
        && digits.chars().any(|c| c.is_ascii_digit())
}

/// The canonical text of an override's value: what `--set` reads from `raw`, written back in
/// one spelling (`45_000` and `45000` are both `45000`, a bare word is quoted, an inline table's
/// keys sorted), so two spellings of one value compare and hash alike.
pub fn canonical_value(raw: &str) -> Result<String, String> {
    Ok(canonical(&parse_value(raw)?))
}

fn canonical(value: &toml_edit::Value) -> String {
    use toml_edit::Value;
    match value {
        Value::String(s) => Value::from(s.value().as_str()).to_string(),
        Value::Integer(i) => i.value().to_string(),
        Value::Float(f) => Value::from(*f.value()).to_string(),
        Value::Boolean(b) => b.value().to_string(),
        Value::Datetime(d) => d.value().to_string(),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(canonical).collect();
            format!("[{}]", items.join(", "))
        }
        Value::InlineTable(t) => {
            let mut entries: Vec<(String, String)> = t
                .iter()
                .map(|(k, v)| (toml_edit::Key::new(k).to_string(), canonical(v)))
                .collect();
            entries.sort();
            if entries.is_empty() {
                return "{}".into();
            }
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect();
            format!("{{ {} }}", entries.join(", "))
        }
    }
}

/// A JSON value (a serialized default) as canonical TOML text; `None` for null.
pub(super) fn toml_text_of_json(value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => toml_edit::Value::from(f).to_string(),
            (None, None) => n.to_string(),
        },
        Value::String(s) => toml_edit::Value::from(s.as_str()).to_string(),
        Value::Array(items) => {
            let items: Option<Vec<String>> = items.iter().map(toml_text_of_json).collect();
            format!("[{}]", items?.join(", "))
        }
        Value::Object(map) => {
            let mut entries = Vec::with_capacity(map.len());
            for (k, v) in map {
                entries.push((toml_edit::Key::new(k).to_string(), toml_text_of_json(v)?));
            }
            entries.sort();
            if entries.is_empty() {
                return Some("{}".into());
            }
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect();
            format!("{{ {} }}", entries.join(", "))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spelling_per_value() {
        assert_eq!(canonical_value("45_000").unwrap(), "45000");
        assert_eq!(canonical_value("45000").unwrap(), "45000");
        assert_eq!(canonical_value("range").unwrap(), "\"range\"");
        assert_eq!(canonical_value("'range'").unwrap(), "\"range\"");
        assert_eq!(
            canonical_value("[ 'range','cooperative-sticky' ]").unwrap(),
            "[\"range\", \"cooperative-sticky\"]"
        );
        assert_eq!(
            canonical_value("{max=5, min = 1}").unwrap(),
            "{ max = 5, min = 1 }"
        );
        assert_eq!(canonical_value("true").unwrap(), "true");
        assert!(canonical_value("99999999999999999999").is_err());
    }

    #[test]
    fn json_defaults_read_as_toml() {
        let v = serde_json::json!({"min": 1, "max": 5});
        assert_eq!(toml_text_of_json(&v).unwrap(), "{ max = 5, min = 1 }");
        let v = serde_json::json!(["range", "cooperative-sticky"]);
        assert_eq!(
            toml_text_of_json(&v).unwrap(),
            canonical_value("['range', 'cooperative-sticky']").unwrap()
        );
        assert_eq!(toml_text_of_json(&serde_json::json!(null)), None);
    }
}
