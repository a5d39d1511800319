//! The README is tested: every ```` ```console ```` block is run and its output compared, so an
//! example cannot drift from what the tool prints. The convention (README "The examples are
//! tested"): a line `$ COMMAND` is run by `sh` (pipes and `echo $?` work; the commands of one
//! block share one shell), with `cgsim` the binary under test and the working directory a scratch
//! copy of the repository root; the lines up to the next `$ ` or the end of the block are what it
//! prints, stdout and stderr together, exactly; a line `...` stands for any number of lines.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// One `$ ` command of a console block and the output shown after it.
#[derive(Debug)]
struct Example {
    /// README line of the command (1-based).
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// The console blocks, each a list of examples in order.
fn console_blocks(readme: &str) -> Vec<Vec<Example>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<Example>> = None;
    for (i, line) in readme.lines().enumerate() {
        match &mut current {
            None if line.trim_end() == "```console" => current = Some(Vec::new()),
            None => {}
            Some(_) if line.starts_with("```") => blocks.push(current.take().expect("open")),
            Some(block) => {
                if let Some(command) = line.strip_prefix("$ ") {
                    block.push(Example {
                        line: i + 1,
                        command: command.to_string(),
                        expected: Vec::new(),
                    });
                } else {
                    let example = block
                        .last_mut()
                        .unwrap_or_else(|| panic!("README line {}: output before any `$ `", i + 1));
                    example.expected.push(line.to_string());
                }
            }
        }
    }
    assert!(current.is_none(), "README: a console block is not closed");
    blocks
}

/// Whether `actual` matches `expected`, where an expected `...` line matches any run of lines.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a == first && matches(rest, more)),
    }
}

const END: &str = "@@readme-example-ends@@";

/// Runs one block's commands in one shell and returns each command's output lines.
fn run_block(block: &[Example], dir: &Path) -> Vec<Vec<String>> {
    // stderr joins stdout in order; after each command a marker on a line of its own, and `$?`
    // kept for the next command (`echo $?`).
    let mut script = String::from("exec 2>&1\n");
    for example in block {
        script.push_str(&example.command);
        script.push_str(&format!(
            "\n__status=$?; printf '\\n%s\\n' '{END}'; (exit $__status)\n"
        ));
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cgsim"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("the binary's directory").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("RUST_LOG")
        .output()
        .expect("sh runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut outputs: Vec<Vec<String>> = text
        .split(&format!("\n{END}\n"))
        .map(|chunk| chunk.lines().map(str::to_string).collect())
        .collect();
    // After the last marker: nothing.
    assert_eq!(outputs.pop(), Some(Vec::new()), "trailing output:\n{text}");
    assert_eq!(
        outputs.len(),
        block.len(),
        "a command ended the shell:\n{text}"
    );
    outputs
}

/// A scratch directory that looks like the repository root: its entries linked, so examples
/// read the real scenarios and write their own files (`--emit-scenario as-run.toml`) here.
fn scratch_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("cgsim-readme-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(root).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), dir.join(&name)).unwrap();
    }
    dir
}

#[test]
fn every_console_example_in_the_readme_prints_what_it_shows() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let blocks = console_blocks(&readme);
    let commands: usize = blocks.iter().map(Vec::len).sum();
    assert!(commands >= 10, "only {commands} README commands found");
    let dir = scratch_root();
    let mut failures = Vec::new();
    for block in &blocks {
        for (example, actual) in block.iter().zip(run_block(block, &dir)) {
            let actual: Vec<&str> = actual.iter().map(String::as_str).collect();
            if !matches(&example.expected, &actual) {
                failures.push(format!(
                    "README line {}: $ {}\n--- shown\n{}\n--- printed\n{}",
                    example.line,
                    example.command,
                    example.expected.join("\n"),
                    actual.join("\n")
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn an_elision_line_stands_for_any_lines_and_nothing_else_is_loose() {
    let shown = |lines: &[&str]| -> Vec<String> { lines.iter().map(|s| s.to_string()).collect() };
    assert!(matches(&shown(&["a", "...", "d"]), &["a", "b", "c", "d"]));
    assert!(matches(&shown(&["a", "...", "d"]), &["a", "d"]));
    assert!(matches(&shown(&["..."]), &[]));
    assert!(!matches(&shown(&["a", "...", "d"]), &["a", "b", "c"]));
    assert!(!matches(&shown(&["a", "b"]), &["a", "b", "c"]));
    assert!(!matches(&shown(&["a b"]), &["a  b"]));
}

#[test]
fn console_blocks_split_into_commands_and_their_output() {
    let readme =
        "text\n```console\n$ cgsim x\nout 1\nout 2\n$ echo $?\n0\n```\n```sh\n$ not run\n```\n";
    let blocks = console_blocks(readme);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].len(), 2);
    assert_eq!(blocks[0][0].line, 3);
    assert_eq!(blocks[0][0].command, "cgsim x");
    assert_eq!(blocks[0][0].expected, ["out 1", "out 2"]);
    assert_eq!(blocks[0][1].expected, ["0"]);
}

/// The scenario file format's example (README "Scenario files") says "Kafka's defaults shown"
/// for `[group]` and "(the default)" for `snapshot_variants`: every value it gives there is the
/// code's default, so the template cannot drift from what a file without the key gets.
#[test]
fn the_scenario_templates_defaults_are_the_codes() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let start = readme
        .find("## Scenario files")
        .expect("a Scenario files section");
    let block = &readme[start..];
    let block = &block[block.find("```toml\n").expect("its example") + 8..];
    let block = &block[..block.find("```").expect("the example's end")];
    let mut section = String::new();
    let mut checked = 0;
    for line in block.lines() {
        let code = line.split(" #").next().unwrap_or("").trim();
        if code.starts_with('#') {
            continue;
        }
        if code.starts_with('[') {
            section = code.trim_matches(['[', ']']).to_string();
            continue;
        }
        let Some((key, value)) = code.split_once(" = ") else {
            continue;
        };
        let key = key.trim();
        if section.is_empty() && key == "snapshot_variants" {
            assert!(line.contains("(the default)"), "{line}");
            let want: Vec<String> = cgsim::scenario::DEFAULT_SNAPSHOT_VARIANTS
                .iter()
                .map(|v| format!("{v:?}"))
                .collect();
            assert_eq!(value.trim(), format!("[{}]", want.join(", ")), "{line}");
            checked += 1;
        }
        if section == "group" {
            let default = cgsim::scenario::default_text(&format!("group.{key}"))
                .unwrap_or_else(|| panic!("group.{key} has no default"));
            let shown = cgsim::scenario::canonical_value(value.trim()).expect("a TOML value");
            assert_eq!(shown, default, "README template: group.{key}");
            checked += 1;
        }
    }
    assert!(
        checked > 20,
        "only {checked} defaults found in the template"
    );
}

/// The terms of the README's glossary: every `code` span of its table.
fn glossary_terms(readme: &str) -> Vec<String> {
    let start = readme.find("\n### Glossary\n").expect("a glossary");
    let section = &readme[start + 1..];
    let section = &section[..section[1..].find("\n#").map_or(section.len(), |e| e + 1)];
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .flat_map(|cell| {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The labels a text report's line prints: the words before its first number, colon or
/// column gap (`records` and `invariants` name each field; a rebalance's rows their parts).
fn labels(line: &str) -> Vec<String> {
    let phrase = |text: &str| -> String {
        let end = text
            .find(|c: char| c.is_ascii_digit() || c == ':' || c == '(')
            .unwrap_or(text.len());
        let cut = text[..end].find("  ").unwrap_or(end);
        let words = text[..cut.min(end)].trim();
        words
            .trim_end_matches(" at")
            .trim_end_matches(" ms")
            .trim()
            .to_string()
    };
    // The words between the numbers of `records:` and `invariants:`.
    let fields = |rest: &str| -> Vec<String> {
        rest.split(|c: char| c.is_ascii_digit() || c == ',')
            .map(|w| {
                // Units and values in words are not labels.
                let w = w.trim();
                let w = w.strip_prefix("ms").unwrap_or(w).trim();
                ["never", "true", "false"]
                    .iter()
                    .fold(w, |w, value| w.trim_end_matches(value).trim_end())
            })
            .filter(|w| {
                !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_alphabetic() || " ()-".contains(c))
            })
            .map(str::to_string)
            .collect()
    };
    let trimmed = line.trim_start();
    let mut out = Vec::new();
    if let Some(rest) = trimmed.strip_prefix("gen ") {
        for part in ["start", "end", "took", "detect"] {
            if rest.contains(&format!(" {part} ")) {
                out.push(part.to_string());
            }
        }
        out.push("gen".into());
        return out;
    }
    if trimmed.starts_with("lag before") {
        return fields(trimmed);
    }
    if line.starts_with(' ') {
        // Indented: a member's row, but for the named sub-lines.
        for named in ["by cause", "VIOLATION", "settle not checked"] {
            if trimmed.starts_with(named) {
                out.push(named.to_string());
            }
        }
        return out;
    }
    let label = phrase(line);
    let label = if label.starts_with("scenario ") {
        "scenario".to_string()
    } else {
        label
    };
    if let Some(rest) = line
        .strip_prefix("records:")
        .or(line.strip_prefix("invariants:"))
    {
        out.extend(fields(rest));
    }
    // A parenthesised field: `(by staying members 0)`, `(minimum 3)`.
    let counts = ["revocations", "lost", "moved"].contains(&label.as_str());
    for inner in line.split('(').skip(1).filter(|_| counts) {
        let words = phrase(inner);
        if !words.is_empty() && words.chars().all(|c| c.is_ascii_alphabetic() || c == ' ') {
            out.push(words);
        }
    }
    out.push(label);
    out
}

#[test]
fn every_label_of_every_reports_text_is_in_the_glossary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let terms = glossary_terms(&readme);
    let mut missing = std::collections::BTreeSet::new();
    let mut checked = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(root.join("snapshots")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        // The report after insta's header; only `cgsim run`'s text reports.
        let Some(report) = text.splitn(3, "---\n").nth(2) else {
            continue;
        };
        if !report
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("digest "))
        {
            continue;
        }
        // Up to `--describe`'s tables, which are Kafka's own tool's.
        for line in report
            .lines()
            .take_while(|l| !l.starts_with("kafka-consumer-groups"))
        {
            if line.trim().is_empty() {
                continue;
            }
            for label in labels(line) {
                if label.is_empty() {
                    continue;
                }
                if terms.contains(&label) {
                    checked.insert(label);
                } else {
                    missing.insert(label);
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not in the README's glossary: {missing:?}"
    );
    assert!(checked.len() > 30, "{checked:?}");
}
