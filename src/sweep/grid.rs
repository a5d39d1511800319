//! The grid: `--grid KEY=V1,V2,...` arguments, the cross product of their values (the points),
//! and Kafka's defaults as a point of their own.

use crate::scenario::{canonical_value, default_text};

/// One `--grid` argument: a `--set` path and its values, each in canonical TOML text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridKey {
    pub key: String,
    pub values: Vec<String>,
}

/// How a point's key reads when Kafka's defaults leave it unset and it has no default value
/// of its own (a member's setting falls back to the group's).
pub const UNSET: &str = "(unset)";

/// One combination of settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    /// `(key, canonical value)` in `--grid` order; for the defaults point the default's text,
    /// or [`UNSET`].
    pub settings: Vec<(String, String)>,
    /// Runs the scenario with every grid key left out of the file, so each takes its default
    /// (Kafka's, for a Kafka setting); or is a grid point whose values are exactly those.
    pub kafka_defaults: bool,
    /// The defaults point as added (not one of the grid's): its keys are removed from the file
    /// rather than set.
    pub unset: bool,
}

impl Point {
    /// `KEY=VALUE` overrides, as `--set` takes them (none for the added defaults point).
    pub fn sets(&self) -> Vec<String> {
        if self.unset {
            return Vec::new();
        }
        self.settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    }

    /// `KEY=VALUE KEY=VALUE`: the point in words, and the part of a run's shard key that
    /// names its point (independent of where the point stands in the grid).
    pub fn text(&self) -> String {
        let parts: Vec<String> = self
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        parts.join(" ")
    }
}

/// Parses one `--grid KEY=V1,V2,...`: values split on commas outside brackets, braces and
/// quotes, each read as `--set` reads a value; none empty, none given twice.
pub fn parse_grid(arg: &str) -> Result<GridKey, String> {
    let (key, values) = arg
        .split_once('=')
        .ok_or_else(|| "expected KEY=V1,V2,...".to_string())?;
    let key = key.trim();
    if key.is_empty() {
        return Err("no key before '='".into());
    }
    if key.split('.').any(|s| s.trim().is_empty()) {
        return Err(format!("{key:?}: empty key segment"));
    }
    if key.chars().any(char::is_whitespace) {
        return Err(format!("{key:?}: a key has no spaces"));
    }
    let mut canonical: Vec<String> = Vec::new();
    for (i, raw) in split_values(values)?.iter().enumerate() {
        let value = canonical_value(raw).map_err(|m| format!("value {} ({raw}): {m}", i + 1))?;
        if canonical.contains(&value) {
            return Err(format!("value {value} given twice"));
        }
        canonical.push(value);
    }
    Ok(GridKey {
        key: key.to_string(),
        values: canonical,
    })
}

/// Splits `V1,V2,...` on the commas that stand outside `[...]`, `{...}`, `"..."` and `'...'`,
/// so `["range"],["cooperative-sticky"]` is two values; each trimmed, none empty.
pub fn split_values(text: &str) -> Result<Vec<String>, String> {
    let mut values = Vec::new();
    let mut current = String::new();
    let mut depth: i32 = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            current.push(c);
            if escaped {
                escaped = false;
            } else if q == '"' && c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '{' => depth += 1,
            ']' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("unbalanced {c:?} in {text:?}"));
                }
            }
            ',' if depth == 0 => {
                values.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if let Some(q) = quote {
        return Err(format!("unclosed {q} in {text:?}"));
    }
    if depth > 0 {
        return Err(format!("unclosed bracket in {text:?}"));
    }
    values.push(current);
    let values: Vec<String> = values.iter().map(|v| v.trim().to_string()).collect();
    if let Some(i) = values.iter().position(String::is_empty) {
        return Err(if values.len() == 1 {
            "no values after '='".to_string()
        } else {
            format!("value {} is empty", i + 1)
        });
    }
    Ok(values)
}

/// Every combination of the grid's values, the first `--grid` varying slowest, then Kafka's
/// defaults as a point of their own unless a grid point is exactly them.
pub fn points(grid: &[GridKey]) -> Vec<Point> {
    let defaults: Vec<Option<String>> = grid.iter().map(|g| default_text(&g.key)).collect();
    let mut points = vec![Vec::<(String, String)>::new()];
    for g in grid {
        points = points
            .into_iter()
            .flat_map(|p| {
                g.values.iter().map(move |v| {
                    let mut p = p.clone();
                    p.push((g.key.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    let mut points: Vec<Point> = points
        .into_iter()
        .map(|settings| Point {
            kafka_defaults: settings
                .iter()
                .zip(&defaults)
                .all(|((_, v), d)| d.as_ref() == Some(v)),
            settings,
            unset: false,
        })
        .collect();
    if !points.iter().any(|p| p.kafka_defaults) {
        points.push(defaults_point(grid, &defaults));
    }
    points
}

fn defaults_point(grid: &[GridKey], defaults: &[Option<String>]) -> Point {
    Point {
        settings: grid
            .iter()
            .zip(defaults)
            .map(|(g, d)| (g.key.clone(), d.clone().unwrap_or_else(|| UNSET.into())))
            .collect(),
        kafka_defaults: true,
        unset: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_split_on_commas_outside_brackets_and_quotes() {
        assert_eq!(split_values("1,2, 3").unwrap(), ["1", "2", "3"]);
        assert_eq!(
            split_values(r#"["range"],["cooperative-sticky"]"#).unwrap(),
            [r#"["range"]"#, r#"["cooperative-sticky"]"#]
        );
        assert_eq!(
            split_values(r#"["range", "sticky"],["cooperative-sticky"]"#).unwrap(),
            [r#"["range", "sticky"]"#, r#"["cooperative-sticky"]"#]
        );
        assert_eq!(
            split_values(r#""a,b",'c,d',e"#).unwrap(),
            [r#""a,b""#, "'c,d'", "e"]
        );
        assert_eq!(
            split_values(r#""say \"hi, there\"",x"#).unwrap(),
            [r#""say \"hi, there\"""#, "x"]
        );
        assert_eq!(
            split_values("{ min = 1, max = 5 },{ min = 2, max = 9 }").unwrap(),
            ["{ min = 1, max = 5 }", "{ min = 2, max = 9 }"]
        );
        assert_eq!(split_values("[[1,2],[3]],4").unwrap(), ["[[1,2],[3]]", "4"]);
        // Malformed.
        assert!(split_values("1,,2")
            .unwrap_err()
            .contains("value 2 is empty"));
        assert!(split_values("1,2,")
            .unwrap_err()
            .contains("value 3 is empty"));
        assert!(split_values("").unwrap_err().contains("no values"));
        assert!(split_values("[1,2")
            .unwrap_err()
            .contains("unclosed bracket"));
        assert!(split_values("1],[2").unwrap_err().contains("unbalanced"));
        assert!(split_values("\"abc,1").unwrap_err().contains("unclosed \""));
    }

    #[test]
    fn a_grid_argument_is_a_key_and_canonical_values() {
        let g = parse_grid("group.session_timeout_ms=10_000,45000").unwrap();
        assert_eq!(g.key, "group.session_timeout_ms");
        assert_eq!(g.values, ["10000", "45000"]);
        let g = parse_grid(r#"group.assignors=["range"],['cooperative-sticky']"#).unwrap();
        assert_eq!(g.values, [r#"["range"]"#, r#"["cooperative-sticky"]"#]);
        assert!(parse_grid("group.x").unwrap_err().contains("KEY=V1"));
        assert!(parse_grid("=1,2").unwrap_err().contains("no key"));
        assert!(parse_grid("group..x=1")
            .unwrap_err()
            .contains("empty key segment"));
        assert!(parse_grid("a=10000,10_000")
            .unwrap_err()
            .contains("given twice"));
        assert!(parse_grid("a=1,99999999999999999999")
            .unwrap_err()
            .contains("value 2"));
    }

    #[test]
    fn points_are_the_cross_product_then_kafkas_defaults() {
        let grid = [
            parse_grid("group.session_timeout_ms=10000,20000").unwrap(),
            parse_grid("group.heartbeat_interval_ms=1000,2000,3000").unwrap(),
        ];
        let p = points(&grid);
        assert_eq!(p.len(), 7);
        assert_eq!(
            p[0].text(),
            "group.session_timeout_ms=10000 group.heartbeat_interval_ms=1000"
        );
        assert_eq!(
            p[1].text(),
            "group.session_timeout_ms=10000 group.heartbeat_interval_ms=2000"
        );
        assert_eq!(
            p[5].text(),
            "group.session_timeout_ms=20000 group.heartbeat_interval_ms=3000"
        );
        assert!(p[..6].iter().all(|p| !p.kafka_defaults && !p.unset));
        // Kafka's defaults, the keys left out of the file (so no --set).
        assert!(p[6].kafka_defaults && p[6].unset);
        assert_eq!(
            p[6].text(),
            "group.session_timeout_ms=45000 group.heartbeat_interval_ms=3000"
        );
        assert!(p[6].sets().is_empty());
        assert_eq!(
            p[0].sets(),
            [
                "group.session_timeout_ms=10000",
                "group.heartbeat_interval_ms=1000"
            ]
        );
    }

    #[test]
    fn a_grid_point_equal_to_kafkas_defaults_is_that_point() {
        let grid = [
            parse_grid("group.session_timeout_ms=10000,45_000").unwrap(),
            parse_grid("group.heartbeat_interval_ms=3000").unwrap(),
        ];
        let p = points(&grid);
        assert_eq!(p.len(), 2);
        assert!(!p[0].kafka_defaults);
        assert!(p[1].kafka_defaults && !p[1].unset);
        let grid =
            [parse_grid(r#"group.assignors=["range"],["range","cooperative-sticky"]"#).unwrap()];
        let p = points(&grid);
        assert_eq!(p.len(), 2);
        assert!(p[1].kafka_defaults);
        // A key without a default value of its own: the defaults point leaves it unset.
        let grid = [parse_grid("members.0.session_timeout_ms=10000").unwrap()];
        let p = points(&grid);
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].text(), "members.0.session_timeout_ms=(unset)");
    }
}
