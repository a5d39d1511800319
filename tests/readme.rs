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
