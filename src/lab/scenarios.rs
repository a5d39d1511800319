//! The scenarios the lab offers: the `.toml` files of one folder (`scenarios/`, or the one
//! `cgsim lab --scenarios DIR` names), read by name only. A name is letters, digits, `-` and `_`
//! (an optional `.toml` after it): anything with a path in it (`/`, `\`, `..`, a drive) is
//! refused before the file system is asked, and only regular files are read, never a link out
//! of the folder.

use super::api::ApiError;
use super::limits::MAX_SCENARIO_BYTES;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The folder the lab reads scenarios from.
#[derive(Clone, Debug)]
pub struct ScenarioDir {
    dir: PathBuf,
}

/// One scenario of the folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    /// The file's `description`, its first line (empty when it has none or does not parse).
    pub description: String,
}

/// Longest name taken.
const MAX_NAME: usize = 100;

/// The scenario name in `text`, or why it is not one (400, field `scenario`).
pub fn check_name(text: &str) -> Result<&str, ApiError> {
    let name = text.strip_suffix(".toml").unwrap_or(text);
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(name)
    } else {
        Err(ApiError::bad(
            "scenario",
            format!(
                "scenario {text:?}: give the name of a file in scenarios/ (like scale-out), not a path: \
                 letters, digits, - and _ only"
            ),
        ))
    }
}

impl ScenarioDir {
    pub fn new(dir: impl Into<PathBuf>) -> ScenarioDir {
        ScenarioDir { dir: dir.into() }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The scenarios of the folder, by name (none when it cannot be read).
    pub fn list(&self) -> Vec<Listed> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<Listed> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let file = e.file_name().into_string().ok()?;
                let name = file.strip_suffix(".toml")?;
                check_name(name).ok()?;
                let text = self.read(name).ok()?;
                Some(Listed {
                    name: name.to_string(),
                    description: description(&text),
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The text of scenario `name` (a name, never a path: [`check_name`]).
    pub fn read(&self, name: &str) -> Result<String, ApiError> {
        let name = check_name(name)?;
        let path = self.dir.join(format!("{name}.toml"));
        let missing = || {
            ApiError::bad(
                "scenario",
                format!("there is no scenario {name:?} in {}", self.dir.display()),
            )
        };
        // Not followed: a link could lead out of the folder.
        let meta = std::fs::symlink_metadata(&path).map_err(|_| missing())?;
        if !meta.is_file() {
            return Err(missing());
        }
        if meta.len() > MAX_SCENARIO_BYTES as u64 {
            return Err(too_large("scenario", meta.len()));
        }
        let mut bytes = Vec::new();
        std::fs::File::open(&path)
            .and_then(|f| {
                f.take(MAX_SCENARIO_BYTES as u64 + 1)
                    .read_to_end(&mut bytes)
            })
            .map_err(|e| ApiError::bad("scenario", format!("cannot read {name:?}: {e}")))?;
        if bytes.len() > MAX_SCENARIO_BYTES {
            return Err(too_large("scenario", bytes.len() as u64));
        }
        String::from_utf8(bytes)
            .map_err(|_| ApiError::bad("scenario", format!("{name}.toml is not UTF-8")))
    }
}

/// A scenario text above [`MAX_SCENARIO_BYTES`].
pub fn too_large(field: &str, bytes: u64) -> ApiError {
    ApiError::too_large(
        field,
        format!("the scenario is {bytes} bytes: the lab takes at most {MAX_SCENARIO_BYTES}"),
    )
}

/// The first line of a scenario's `description`.
fn description(text: &str) -> String {
    let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else {
        return String::new();
    };
    doc.get("description")
        .and_then(|d| d.as_str())
        .map(|d| d.trim().lines().next().unwrap_or("").trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_a_path_in_them_are_refused() {
        for bad in [
            "../Cargo",
            "..",
            "/etc/passwd",
            "a/b",
            "a\\b",
            "C:x",
            "",
            ".toml",
            "scale out",
            "x.y",
            "%2e%2e",
        ] {
            let e = check_name(bad).expect_err(bad);
            assert_eq!(
                (e.status, e.field.as_deref()),
                (400, Some("scenario")),
                "{bad}"
            );
            assert!(e.message.contains("not a path"), "{}", e.message);
        }
        assert_eq!(check_name("scale-out").unwrap(), "scale-out");
        assert_eq!(check_name("scale-out.toml").unwrap(), "scale-out");
    }

    #[test]
    fn the_folder_is_listed_and_read_by_name() {
        let dir = ScenarioDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios"));
        let list = dir.list();
        assert!(list.iter().any(|s| s.name == "scale-out"));
        let scale_out = list.iter().find(|s| s.name == "scale-out").unwrap();
        assert_eq!(
            scale_out.description,
            "4 members, 24 partitions, a 5th joins at 60 s"
        );
        assert!(dir
            .read("scale-out")
            .unwrap()
            .contains("name = \"scale-out\""));
        assert!(dir
            .read("no-such")
            .unwrap_err()
            .message
            .contains("no scenario"));
    }
}
