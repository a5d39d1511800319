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
