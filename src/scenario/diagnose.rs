//! The TOML reader's errors, said in the scenario's terms: a value of the wrong type or range
//! names its key's dotted path (as `--set` writes it), the value, and the range the key
//! accepts (Kafka's bound where the broker has one); an unknown key gets the closest known
//! one before the list of all.

use super::limits::{MAX_DURATION_MS, MAX_TIME_MS};
use super::members::{MAX_SESSION_TIMEOUT_MS, MIN_SESSION_TIMEOUT_MS};
use std::ops::Range;

/// The message for a TOML error at `span` of `text` (`message` is the reader's own).
pub(super) fn explain(text: &str, span: Option<Range<usize>>, message: &str) -> String {
    if message.is_empty() {
        return unexplained(text, span);
    }
    if let Some(better) = unknown_key(message) {
        return better;
    }
    if let Some(better) = span.and_then(|s| wrong_value(text, s, message)) {
        return better;
    }
    message.to_string()
}

/// What the TOML parser leaves without a message: a control character where TOML allows none
/// (in a comment or a string too; tab is the one exception), named with its code point.
fn unexplained(text: &str, span: Option<Range<usize>>) -> String {
    let at = span
        .and_then(|s| text.get(s.start..))
        .and_then(|t| t.chars().next());
    match at {
        Some(c) if c.is_control() => format!(
            "a control character (U+{:04X}) is not allowed in TOML, not even in a comment or a \
             string (tab is the one exception)",
            u32::from(c)
        ),
        Some(c) => format!("{c:?} is not valid TOML here"),
        None => "not valid TOML here".to_string(),
    }
}

/// "unknown field `x`, expected one of `a`, `b`" with "(did you mean `a`?)" after the field,
/// when one known key is close enough to be the one meant.
fn unknown_key(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (field, list) = rest.split_once('`')?;
    let known: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
    let closest = closest_key(field, &known)?;
    Some(format!(
        "unknown field `{field}` (did you mean `{closest}`?){list}"
    ))
}

/// The known key nearest to `typed` by edit distance, if it is near: at most a third of the
/// key's length apart (a typo or two, a missing underscore), never a different word.
pub(super) fn closest_key<'a>(typed: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(typed, k), *k))
        .filter(|&(d, k)| d > 0 && d <= (k.chars().count() / 3).max(1))
        .min()
        .map(|(_, k)| k)
}

/// "invalid value: integer `-10`, expected u64" (or "invalid type: ...") at a key's value, as
/// "group.session_timeout_ms = -10: expected an integer in 6000..=1800000, ...".
fn wrong_value(text: &str, span: Range<usize>, message: &str) -> Option<String> {
    if !(message.starts_with("invalid value: ") || message.starts_with("invalid type: ")) {
        return None;
    }
    let (_, expected) = message.rsplit_once(", expected ")?;
    let path = key_at(text, span.start)?;
    let value = text.get(span)?.trim();
    let leaf = path.rsplit('.').next().unwrap_or(&path);
    let accepted = match integer_range(expected) {
        Some(range) => match kafka_bound(&path, leaf) {
            Some(bound) => format!("an integer in {bound}"),
            None => format!("an integer in {range}"),
        },
        None => expected.to_string(),
    };
    Some(format!("{path} = {value}: expected {accepted}"))
}

/// The range of Rust's integer type named in a serde message.
fn integer_range(expected: &str) -> Option<String> {
    Some(match expected.trim() {
        "u8" => format!("0..={}", u8::MAX),
        "u16" => format!("0..={}", u16::MAX),
        "u32" => format!("0..={}", u32::MAX),
        "u64" => format!("0..={}", u64::MAX),
        "usize" => format!("0..={}", usize::MAX),
        "i32" => format!("{}..={}", i32::MIN, i32::MAX),
        "i64" => format!("{}..={}", i64::MIN, i64::MAX),
        _ => return None,
    })
}

/// What a key accepts where that is narrower than its type: the broker's bound, or the limit
/// the scenario puts on every time (`limits.rs`).
fn kafka_bound(path: &str, leaf: &str) -> Option<String> {
    if leaf == "session_timeout_ms" {
        return Some(format!(
            "{MIN_SESSION_TIMEOUT_MS}..={MAX_SESSION_TIMEOUT_MS}, the broker's group.min/max.session.timeout.ms"
        ));
    }
    if path == "duration_ms" {
        return Some(format!("0..={MAX_DURATION_MS} (7 simulated days)"));
    }
    if leaf.ends_with("_ms") || leaf.ends_with("_us") {
        return Some(format!(
            "0..={MAX_TIME_MS} (the limit of every time, Kafka's int maximum)"
        ));
    }
    None
}

/// The dotted path (`group.session_timeout_ms`, `members.2.count`) of the innermost key whose
/// value holds byte `offset` of `text`.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut path = Vec::new();
    find_in_table(doc.as_table(), offset, &mut path).then(|| path.join("."))
}

fn find_in_table(table: &toml_edit::Table, offset: usize, path: &mut Vec<String>) -> bool {
    table.iter().any(|(key, item)| {
        path.push(key.to_string());
        if find_in_item(item, offset, path) {
            return true;
        }
        path.pop();
        false
    })
}

fn find_in_item(item: &toml_edit::Item, offset: usize, path: &mut Vec<String>) -> bool {
    match item {
        toml_edit::Item::Table(t) => find_in_table(t, offset, path),
        toml_edit::Item::ArrayOfTables(a) => a.iter().enumerate().any(|(i, t)| {
            path.push(i.to_string());
            if find_in_table(t, offset, path) {
                return true;
            }
            path.pop();
            false
        }),
        toml_edit::Item::Value(v) => find_in_value(v, offset, path),
        toml_edit::Item::None => false,
    }
}

fn find_in_value(value: &toml_edit::Value, offset: usize, path: &mut Vec<String>) -> bool {
    if !value.span().is_some_and(|s| s.contains(&offset)) {
        return false;
    }
    match value {
        toml_edit::Value::InlineTable(t) => {
            for (key, v) in t.iter() {
                path.push(key.to_string());
                if find_in_value(v, offset, path) {
                    return true;
                }
                path.pop();
            }
        }
        toml_edit::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                path.push(i.to_string());
                if find_in_value(v, offset, path) {
                    return true;
                }
                path.pop();
            }
        }
        _ => {}
    }
    true
}

/// The most characters of the input a message echoes in one quote: a name or value pasted
/// whole (a topic name of a megabyte) would otherwise make the message as long as the file.
pub const MAX_ECHO_CHARS: usize = 80;

/// `message` with every quoted echo (`"..."`, `` `...` ``) longer than [`MAX_ECHO_CHARS`] cut to
/// its start and how much was cut.
pub fn cut_echoes(message: &str) -> String {
    const KEEP: usize = MAX_ECHO_CHARS - 20;
    let mut out = String::with_capacity(message.len().min(1024));
    let mut rest = message;
    while let Some(open) = rest.find(['"', '`']) {
        let quote = rest[open..].chars().next().expect("found");
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        // The closing quote: the next one a backslash does not escape.
        let mut escaped = false;
        let close = after.char_indices().find_map(|(i, c)| {
            let closes = c == quote && !escaped;
            escaped = c == '\\' && !escaped;
            closes.then_some(i)
        });
        let (inner, tail) = close.map_or((after, ""), |c| (&after[..c], &after[c..]));
        let chars = inner.chars().count();
        if chars > MAX_ECHO_CHARS {
            let kept: String = inner.chars().take(KEEP).collect();
            out.push_str(kept.trim_end_matches('\\'));
            out.push_str(&format!("…[{} more characters]", chars - KEEP));
        } else {
            out.push_str(inner);
        }
        let Some(closing) = tail.chars().next() else {
            return out;
        };
        out.push(closing);
        rest = &tail[closing.len_utf8()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_echo_is_cut_to_its_start_and_the_rest_of_the_message_kept() {
        let name = "x".repeat(1_000_000);
        let cut = cut_echoes(&format!("topic {name:?}: partitions must be at least 1"));
        assert_eq!(
            cut,
            format!(
                "topic \"{}…[999940 more characters]\": partitions must be at least 1",
                "x".repeat(60)
            )
        );
        let key = "k".repeat(500);
        assert!(
            cut_echoes(&format!("unknown field `{key}`, expected one of `a`"))
                .ends_with("more characters]`, expected one of `a`")
        );
        // Short echoes, escaped quotes and an unclosed quote are kept as they are.
        for kept in [
            r#"member "c\"1" is unknown"#,
            "no quote",
            "open \"end",
            "`a` and \"b\"",
        ] {
            assert_eq!(cut_echoes(kept), kept);
        }
        // A long unclosed echo is cut too.
        assert!(cut_echoes(&format!("x \"{name}")).len() < 200);
    }

    #[test]
    fn a_negative_session_timeout_names_its_key_and_kafkas_bound() {
        let text = "name = \"x\"\n[group]\nsession_timeout_ms = -10\n";
        let at = text.find("-10").unwrap();
        assert_eq!(
            explain(text, Some(at..at + 3), "invalid value: integer `-10`, expected u64"),
            "group.session_timeout_ms = -10: expected an integer in 6000..=1800000, the broker's group.min/max.session.timeout.ms"
        );
    }

    #[test]
    fn a_member_entrys_key_is_named_by_its_index() {
        let text = "[[members]]\nname = \"a\"\n[[members]]\nname = \"b\"\ncount = \"two\"\n";
        let at = text.find("\"two\"").unwrap();
        assert_eq!(
            explain(
                text,
                Some(at..at + 5),
                "invalid type: string \"two\", expected u32"
            ),
            "members.1.count = \"two\": expected an integer in 0..=4294967295"
        );
    }

    #[test]
    fn an_unknown_key_gets_the_closest_known_one() {
        assert_eq!(
            explain(
                "",
                None,
                "unknown field `sesion_timeout_ms`, expected one of `group_id`, `session_timeout_ms`"
            ),
            "unknown field `sesion_timeout_ms` (did you mean `session_timeout_ms`?), expected one of `group_id`, `session_timeout_ms`"
        );
        // Nothing near: the list alone.
        let far = "unknown field `zzz`, expected one of `group_id`, `session_timeout_ms`";
        assert_eq!(explain("", None, far), far);
    }
}
