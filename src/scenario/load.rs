//! Reading a scenario: the file, then `--set` overrides (applied to the TOML document so line
//! numbers still point into the file), then `--seed` and `--variant`, then validation.

use super::diagnose;
use super::file::ScenarioFile;
use super::limits::KeySpans;
use super::validate::validate;
use super::value::parse_value;
use super::Scenario;
use std::fmt;
use std::path::Path;

/// What the command line adds to a scenario file.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    pub seed: Option<u64>,
    pub variant: Option<String>,
    /// `KEY=VALUE`: a dotted path into the scenario and a TOML value (a bare word is a string).
    pub sets: Vec<String>,
}

/// Bad input: which file, which line (when one can be named) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}: line {}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

pub fn load(path: &Path, options: &LoadOptions) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = super::input::read_text(path, super::input::SCENARIO_BYTES).map_err(|message| {
        ScenarioError {
            file: file.clone(),
            line: None,
            message,
        }
    })?;
    load_str(&file, &text, options)
}

/// Loads a scenario from text; `file` names it in errors. An error that only a `--set` brings
/// in names that `--set`, not a line of the file it was written into; one that a variant's own
/// `set` entry brings in names the variant, the entry and its line. Every variant the file
/// declares is loaded too, so a broken one is found by whoever loads the file, not only by
/// whoever first runs that variant.
pub fn load_str(file: &str, text: &str, options: &LoadOptions) -> Result<Scenario, ScenarioError> {
    let scenario = load_one(file, text, options, true)?;
    for name in declared_variants(text, &options.sets) {
        if options.variant.as_ref() == Some(&name) {
            continue;
        }
        let other = LoadOptions {
            variant: Some(name.clone()),
            ..options.clone()
        };
        // The command line's own conflicts concern the variant it runs, not this one.
        load_one(file, text, &other, false).map_err(|e| {
            let prefix = format!("variant {name:?}: ");
            ScenarioError {
                message: if e.message.starts_with(&prefix) {
                    e.message
                } else {
                    prefix + &e.message
                },
                ..e
            }
        })?;
    }
    Ok(scenario)
}

/// The file as the command line leaves it, if it parses.
fn parsed_with(text: &str, cli: &[String]) -> Option<ScenarioFile> {
    toml::from_str(&apply_sets(text, cli).ok()?).ok()
}

/// The names under `[variants]`, in order.
fn declared_variants(text: &str, cli: &[String]) -> Vec<String> {
    parsed_with(text, cli).map_or_else(Vec::new, |f| f.variants.into_keys().collect())
}

/// The scenario under `options`' variant: the variant's own `set` entries first, then the
/// command line's (which win); errors blamed on the entry that brings them in.
fn load_one(
    file: &str,
    text: &str,
    options: &LoadOptions,
    check_cli: bool,
) -> Result<Scenario, ScenarioError> {
    let cli = &options.sets;
    let parsed = parsed_with(text, cli);
    let variant = options.variant.as_deref();
    let own: Vec<String> = variant
        .and_then(|v| parsed.as_ref()?.variants.get(v)?.get_ref().set.clone())
        .unwrap_or_default();
    if let (Some(parsed), Some(v)) = (&parsed, variant) {
        conflicts(parsed, v, &own, if check_cli { cli } else { &[] }).map_err(|m| {
            ScenarioError {
                file: file.to_string(),
                line: None,
                message: m,
            }
        })?;
    }
    let all: Vec<String> = own.iter().chain(cli).cloned().collect();
    let error = match attempt(file, text, &all, options) {
        Ok(s) => return Ok(s),
        Err(e) => e,
    };
    if all.is_empty() {
        return Err(error);
    }
    if let Err(bare) = attempt(file, text, &[], options) {
        // Wrong without any override: the file's own error, whose line is exact (an override
        // that adds a key shifts the lines after it).
        return Err(if bare.message == error.message {
            bare
        } else {
            error
        });
    }
    // The file is fine without them: the first override that breaks it is to blame.
    for (i, set) in all.iter().enumerate() {
        let Err(e) = attempt(file, text, &all[..=i], options) else {
            continue;
        };
        let prefix = format!("--set {set:?}: ");
        let message = e.message.strip_prefix(&prefix).unwrap_or(&e.message);
        if i < own.len() {
            let name = variant.expect("own entries come from a variant");
            let line = KeySpans::new(text)
                .at(&format!("variants.{name}.set.{i}"))
                .map(|s| line_of(text, s.start));
            return Err(ScenarioError {
                file: file.to_string(),
                line,
                message: format!("variant {name:?}: set entry {set:?}: {message}"),
            });
        }
        return Err(ScenarioError {
            file: file.to_string(),
            line: None,
            message: prefix + message,
        });
    }
    Err(error)
}

/// Overrides that the variant would silently undo: it replaces the group's assignors (and
/// clears members' own lists) or the protocol after every `set` is applied. Refused rather
/// than guessed at.
fn conflicts(
    parsed: &ScenarioFile,
    variant: &str,
    own: &[String],
    cli: &[String],
) -> Result<(), String> {
    let custom = parsed.variants.get(variant).map(|v| v.get_ref());
    let (assignors, protocol): (Option<Vec<String>>, bool) = match custom {
        Some(v) => (v.assignors.clone(), v.protocol.is_some()),
        None => match variant {
            "eager" => (Some(vec!["range".into()]), false),
            "cooperative" => (Some(vec!["cooperative-sticky".into()]), false),
            "consumer" => (Some(vec!["uniform".into()]), true),
            _ => (None, false), // unknown: validation says so
        },
    };
    let sets = own
        .iter()
        .map(|s| (s, true))
        .chain(cli.iter().map(|s| (s, false)));
    for (set, is_own) in sets {
        let key = set.split_once('=').map_or(set.as_str(), |(k, _)| k).trim();
        let path: Vec<&str> = key.split('.').collect();
        let what = match path.as_slice() {
            ["group", "assignors"] => assignors
                .as_ref()
                .map(|a| format!("replaces the group's assignors with {a:?}")),
            ["members", i, "assignors"] if i.parse::<usize>().is_ok() => assignors
                .as_ref()
                .map(|_| "clears members' own assignors".to_string()),
            ["group", "protocol"] if protocol => Some("sets the protocol".to_string()),
            _ => None,
        };
        if let Some(what) = what {
            return Err(if is_own {
                format!(
                    "variant {variant:?}: set entry {set:?} has no effect: the variant {what} after its set entries"
                )
            } else {
                format!(
                    "--set {set:?} has no effect with variant {variant:?}, which {what}: \
                     drop one of the two (a variant's assignors and protocol win over every --set)"
                )
            });
        }
    }
    Ok(())
}

/// One attempt: the file with `sets` applied in order, validated under `options`.
fn attempt(
    file: &str,
    text: &str,
    sets: &[String],
    options: &LoadOptions,
) -> Result<Scenario, ScenarioError> {
    let err = |line: Option<usize>, message: String| ScenarioError {
        file: file.to_string(),
        line,
        message: diagnose::cut_echoes(&message),
    };
    let text = apply_sets(text, sets).map_err(|m| err(None, m))?;
    let parsed: ScenarioFile = toml::from_str(&text).map_err(|e| {
        let line = e.span().map(|s| line_of(&text, s.start));
        err(line, diagnose::explain(&text, e.span(), e.message().trim()))
    })?;
    let mut scenario = validate(parsed, &text, options).map_err(|(span, message)| {
        let line = span
            .filter(|s| !s.is_empty())
            .map(|s| line_of(&text, s.start));
        err(line, message)
    })?;
    // Plan entries and expectations carry their entry's byte offset until here, where spans
    // become lines.
    for p in &mut scenario.plan {
        p.line = line_of(&text, p.line);
    }
    for e in &mut scenario.expects {
        e.line = line_of(&text, e.line);
    }
    Ok(scenario)
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// Applies `KEY=VALUE` overrides to the TOML document.
pub(super) fn apply_sets(text: &str, sets: &[String]) -> Result<String, String> {
    if sets.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| format!("not valid TOML: {}", e.message()))?;
    for set in sets {
        let (key, raw) = set
            .split_once('=')
            .ok_or_else(|| format!("--set {set:?}: expected KEY=VALUE"))?;
        let value = parse_value(raw.trim()).map_err(|m| format!("--set {set:?}: {m}"))?;
        let path: Vec<&str> = key.trim().split('.').collect();
        if path.iter().any(|p| p.is_empty()) {
            return Err(format!("--set {set:?}: empty key segment"));
        }
        set_path(doc.as_item_mut(), &path, value).map_err(|m| format!("--set {set:?}: {m}"))?;
    }
    Ok(doc.to_string())
}

/// Removes each dotted `key` (as `--set` names them) from the TOML document, so the setting
/// takes its default; a key the file does not set is left alone.
pub fn unset_keys(text: &str, keys: &[&str]) -> Result<String, String> {
    if keys.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| format!("not valid TOML: {}", e.message()))?;
    for key in keys {
        let path: Vec<&str> = key.trim().split('.').collect();
        if path.iter().any(|p| p.is_empty()) {
            return Err(format!("{key:?}: empty key segment"));
        }
        remove_path(doc.as_item_mut(), &path);
    }
    Ok(doc.to_string())
}

fn remove_path(item: &mut toml_edit::Item, path: &[&str]) {
    let Some((head, rest)) = path.split_first() else {
        return;
    };
    if let Ok(index) = head.parse::<usize>() {
        if let Some(t) = item.as_array_of_tables_mut().and_then(|a| a.get_mut(index)) {
            remove_in_table(t, rest);
        }
        return;
    }
    match item {
        toml_edit::Item::Table(t) => remove_in_table(t, path),
        toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) if rest.is_empty() => {
            t.remove(head);
        }
        _ => {}
    }
}

fn remove_in_table(table: &mut toml_edit::Table, path: &[&str]) {
    match path {
        [] => {}
        [last] => {
            table.remove(last);
        }
        [head, rest @ ..] => {
            if let Some(item) = table.get_mut(head) {
                remove_path(item, rest);
            }
        }
    }
}

fn set_path(
    item: &mut toml_edit::Item,
    path: &[&str],
    value: toml_edit::Value,
) -> Result<(), String> {
    let (head, rest) = path.split_first().expect("non-empty path");
    if let Ok(index) = head.parse::<usize>() {
        let len;
        let target = match item {
            toml_edit::Item::ArrayOfTables(a) => {
                len = a.len();
                a.get_mut(index).map(|t| t as &mut toml_edit::Table)
            }
            _ => {
                return Err(format!(
                    "{head:?} indexes something that is not an array of tables"
                ))
            }
        };
        let table =
            target.ok_or_else(|| format!("index {index} is out of range (there are {len})"))?;
        return set_in_table(table, rest, value);
    }
    match item {
        toml_edit::Item::None => {
            *item = toml_edit::Item::Table(toml_edit::Table::new());
            set_path(item, path, value)
        }
        toml_edit::Item::Table(t) => set_in_table(t, path, value),
        toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => {
            if rest.is_empty() {
                t.insert(*head, value);
                Ok(())
            } else {
                Err(format!(
                    "{head:?}: nested keys inside an inline table are not supported"
                ))
            }
        }
        _ => Err(format!("{head:?}: the parent is not a table")),
    }
}

fn set_in_table(
    table: &mut toml_edit::Table,
    path: &[&str],
    value: toml_edit::Value,
) -> Result<(), String> {
    let Some((head, rest)) = path.split_first() else {
        return Err("the key names a table, not a value".into());
    };
    if rest.is_empty() {
        table.insert(head, toml_edit::Item::Value(value));
        return Ok(());
    }
    let entry = table.entry(head).or_insert(toml_edit::Item::None);
    set_path(entry, rest, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_overrides_nested_keys_and_parses_values() {
        let text = "a = 1\n[group]\nx = 2\n";
        let out = apply_sets(
            text,
            &[
                "group.x=5".into(),
                "group.assignors=[\"range\"]".into(),
                "name=hello".into(),
            ],
        )
        .unwrap();
        let v: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(v["group"]["x"].as_integer(), Some(5));
        assert_eq!(v["group"]["assignors"][0].as_str(), Some("range"));
        assert_eq!(v["name"].as_str(), Some("hello"));
    }

    #[test]
    fn unset_leaves_a_key_to_its_default() {
        let text = "[group]\nsession_timeout_ms = 10_000\nx = 2\n[[members]]\nname = \"c\"\nmax_poll_records = 5\n";
        let out = unset_keys(
            text,
            &[
                "group.session_timeout_ms",
                "members.0.max_poll_records",
                "group.absent",
                "cluster.brokers",
                "members.3.name",
            ],
        )
        .unwrap();
        let v: toml::Table = toml::from_str(&out).unwrap();
        assert!(v["group"].get("session_timeout_ms").is_none());
        assert_eq!(v["group"]["x"].as_integer(), Some(2));
        assert!(v["members"][0].get("max_poll_records").is_none());
        assert_eq!(v["members"][0]["name"].as_str(), Some("c"));
        assert!(unset_keys(text, &["group..x"]).is_err());
    }

    #[test]
    fn set_into_an_array_of_tables() {
        let text = "[[members]]\nname = \"c\"\n[[members]]\nname = \"d\"\n";
        let out = apply_sets(text, &["members.1.group_instance_id=pod-1".into()]).unwrap();
        let v: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(v["members"][1]["group_instance_id"].as_str(), Some("pod-1"));
        assert!(apply_sets(text, &["members.7.name=x".into()])
            .unwrap_err()
            .contains("out of range"));
        assert!(apply_sets(text, &["nokey".into()])
            .unwrap_err()
            .contains("KEY=VALUE"));
    }
}
