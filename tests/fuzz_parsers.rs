//! The parsers fuzzed: scenario TOML (arbitrary text, and the real files under `scenarios/`
//! mutated: a line deleted or duplicated, its numbers set to -1, 0, 2^63, 2^63 - 1, 1.5, its
//! value's type swapped), `--set` arguments, and `cgsim assign` input lines (arbitrary, and the
//! reference cases mutated). Whatever the input, the answer is a result or a clean error (exit 2
//! at the command line), never a panic, a hang or unbounded memory: a scenario that loads is
//! within the limits and is run to its end.
//!
//! `cargo test` runs a few cases of each; `cargo test --test fuzz_parsers -- --ignored` runs the
//! big ones, including 20,000 mutated scenario files through the real binary (exit code, panic
//! message, 10 s of CPU, 4 GiB of address space each).

use cgsim::assignor::json::{
    parse_line, render, AssignLine, MAX_PARTITIONS as MAX_ASSIGN_PARTITIONS,
};
use cgsim::assignor::streams;
use cgsim::scenario::{limits, load_str, LoadOptions};
use cgsim::world::{run, RunOptions};
use proptest::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

// ---- Mutations of scenario files ----

/// Every integer of a line set to one of these (2^63 is beyond TOML's integers, 2^63 - 1 is not).
const NUMBERS: [&str; 5] = [
    "-1",
    "0",
    "9223372036854775808",
    "9223372036854775807",
    "1.5",
];
/// Besides those, for the second sweep: numbers in range, odd but loadable, so that more mutants
/// run (and a slow run or an overflow has a chance to show).
const MORE_NUMBERS: [&str; 8] = [
    "1",
    "2",
    "7",
    "1000",
    "60000",
    "1000000",
    "2147483647",
    "4294967295",
];
/// A `key = value` line's value swapped for one of another type.
const VALUES: [&str; 6] = ["\"x\"", "7", "true", "[]", "[\"x\", 1]", "{}"];

#[derive(Clone, Copy, Debug)]
enum Mutation {
    Delete,
    Duplicate,
    Numbers(&'static str),
    Value(&'static str),
}

fn all_mutations() -> Vec<Mutation> {
    let mut all = vec![Mutation::Delete, Mutation::Duplicate];
    all.extend(NUMBERS.iter().map(|&n| Mutation::Numbers(n)));
    all.extend(VALUES.iter().map(|&v| Mutation::Value(v)));
    all
}

/// The line's digits runs (`60_000`, the `5` of `c5`) replaced by `to`; `None` without digits.
fn replace_numbers(line: &str, to: &str) -> Option<String> {
    if !line.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars
                .peek()
                .is_some_and(|d| d.is_ascii_digit() || *d == '_' || *d == '.')
            {
                chars.next();
            }
            out.push_str(to);
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// What kind of TOML value a text starts with.
fn kind(value: &str) -> char {
    match value.trim_start().chars().next() {
        Some('"' | '\'') => 's',
        Some('0'..='9' | '-' | '+') => 'n',
        Some('t' | 'f') => 'b',
        Some('[') => 'a',
        Some('{') => 't',
        _ => '?',
    }
}

/// Line `i` of `text` mutated; `None` when the mutation does not apply to that line.
fn mutate(text: &str, i: usize, m: Mutation) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let line = *lines.get(i)?;
    let replacement: Vec<String> = match m {
        Mutation::Delete => vec![],
        Mutation::Duplicate => vec![line.to_string(), line.to_string()],
        Mutation::Numbers(to) => vec![replace_numbers(line, to)?],
        Mutation::Value(to) => {
            let trimmed = line.trim_start();
            if trimmed.starts_with('#') || trimmed.starts_with('[') {
                return None;
            }
            let (key, value) = line.split_once('=')?;
            if kind(value) == kind(to) {
                return None;
            }
            vec![format!("{key}= {to}")]
        }
    };
    let mut out: Vec<String> = lines[..i].iter().map(|s| s.to_string()).collect();
    out.extend(replacement);
    out.extend(lines[i + 1..].iter().map(|s| s.to_string()));
    Some(out.join("\n") + "\n")
}

fn scenario_files() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("readable"))
        })
        .collect()
}

/// Every single mutation of every line of every scenario, in order.
fn single_mutants(files: &[(String, String)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, text) in files {
        for i in 0..text.lines().count() {
            for m in all_mutations() {
                if let Some(t) = mutate(text, i, m) {
                    out.push((format!("{name} line {} {m:?}", i + 1), t));
                }
            }
        }
    }
    out
}

/// splitmix64: a fixed sequence, so the sweep's files are the same on every machine.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Two or three of `mutations` applied to one file, chosen by `seed`.
fn composed_mutant(
    files: &[(String, String)],
    mutations: &[Mutation],
    seed: u64,
) -> (String, String) {
    let mut state = seed;
    let (name, text) = &files[(next(&mut state) % files.len() as u64) as usize];
    let mut text = text.clone();
    let mut what = Vec::new();
    let count = 2 + next(&mut state) % 2;
    while (what.len() as u64) < count {
        let lines = text.lines().count().max(1);
        let i = (next(&mut state) % lines as u64) as usize;
        let m = mutations[(next(&mut state) % mutations.len() as u64) as usize];
        if let Some(t) = mutate(&text, i, m) {
            text = t;
            what.push(format!("line {} {m:?}", i + 1));
        }
    }
    (format!("{name} {}", what.join(", ")), text)
}

/// The library's answer: a clean error, or a scenario within the limits that runs to its end.
fn load_and_maybe_run(what: &str, text: &str, run_it: bool) {
    let Ok(scenario) = load_str("fuzz.toml", text, &LoadOptions::default()) else {
        return;
    };
    assert!(
        scenario.members.len() as u64 <= limits::MAX_MEMBERS,
        "{what}"
    );
    let partitions: u64 = scenario
        .topics
        .iter()
        .map(|t| u64::from(t.max_partitions()))
        .sum();
    assert!(partitions <= limits::MAX_PARTITIONS, "{what}");
    assert!(scenario.duration_ms <= limits::MAX_DURATION_MS, "{what}");
    if run_it {
        let out = run(&scenario, RunOptions::default());
        assert!(out.events > 0, "{what}: nothing ran");
    }
}

// ---- `cgsim assign` lines ----

fn assign_lines() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        "examples/assign.jsonl",
        "tests/data/assignor_cases.jsonl",
        "tests/data/kip1071_cases.jsonl",
        "tests/data/classic_cases.jsonl",
    ]
    .iter()
    .flat_map(|f| {
        std::fs::read_to_string(root.join(f))
            .expect("readable")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    })
    .collect()
}

/// Replacements for one node of an input line's JSON.
fn json_values() -> Vec<Value> {
    serde_json::from_str(
        r#"[-1, 0, 9223372036854775808, 9223372036854775807, 2147483647, 10000001, 1.5,
            "x", "", [], {}, null, true, [-1], {"t": [0, 0]}]"#,
    )
    .expect("values")
}

/// Paths (object keys and array indexes) of every node of `v`, root excluded.
fn paths(v: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    let children: Vec<(Value, &Value)> = match v {
        Value::Object(m) => m.iter().map(|(k, c)| (Value::from(k.clone()), c)).collect(),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, c)| (Value::from(i), c))
            .collect(),
        _ => return,
    };
    for (key, child) in children {
        prefix.push(key);
        out.push(prefix.clone());
        paths(child, prefix, out);
        prefix.pop();
    }
}

/// `line` with the node at `path` replaced by `with` (or removed, for `None`).
fn mutate_json(line: &str, pick: usize, with: Option<Value>) -> String {
    let mut v: Value = serde_json::from_str(line).expect("reference lines are JSON");
    let mut all = Vec::new();
    paths(&v, &mut Vec::new(), &mut all);
    if all.is_empty() {
        return line.to_string();
    }
    let path = &all[pick % all.len()];
    let (last, parents) = path.split_last().expect("non-empty");
    let mut node = &mut v;
    for key in parents {
        node = match key {
            Value::String(k) => &mut node[k.as_str()],
            Value::Number(i) => &mut node[i.as_u64().unwrap() as usize],
            _ => unreachable!(),
        };
    }
    match (node, last, with) {
        (Value::Object(m), Value::String(k), None) => {
            m.remove(k);
        }
        (Value::Array(a), Value::Number(i), None) => {
            a.remove(i.as_u64().unwrap() as usize);
        }
        (Value::Object(m), Value::String(k), Some(w)) => {
            m.insert(k.clone(), w);
        }
        (Value::Array(a), Value::Number(i), Some(w)) => {
            a[i.as_u64().unwrap() as usize] = w;
        }
        _ => unreachable!("parents are containers"),
    }
    v.to_string()
}

/// The `cgsim assign` path: a parsed line is assigned and rendered, or refused with a reason.
fn assign_answers(line: &str) {
    match parse_line(line) {
        Ok(AssignLine::Streams(case)) => {
            assert!(case.task_count() as u64 <= MAX_ASSIGN_PARTITIONS);
            let out = streams::json::render(&case, &case.assign());
            assert!(out.starts_with('{'));
        }
        Ok(AssignLine::StreamsClassic(case)) => {
            let tasks: u64 = case.subtopologies.iter().map(|s| s.partitions as u64).sum();
            assert!(tasks <= MAX_ASSIGN_PARTITIONS);
            let out = streams::classic::json::render(&case, &case.assign());
            assert!(out.starts_with('{'));
        }
        Ok(AssignLine::Partitions(case)) => {
            let partitions = case.group.total_partitions();
            assert!(partitions as u64 <= MAX_ASSIGN_PARTITIONS);
            if let Ok(result) = case.assignor.assign(&case.group) {
                let out = render(&case, &result);
                assert!(out.starts_with('{'));
            }
        }
        Err(e) => assert!(!e.is_empty()),
    }
}

// ---- `--set` ----

/// Every leaf path of a scenario, dotted as `--set` takes it (`members.0.count`).
fn set_paths(text: &str) -> Vec<String> {
    fn walk(item: &toml::Value, prefix: String, out: &mut Vec<String>) {
        match item {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(v, p, out);
                }
            }
            toml::Value::Array(a) if a.iter().all(toml::Value::is_table) && !a.is_empty() => {
                for (i, v) in a.iter().enumerate() {
                    walk(v, format!("{prefix}.{i}"), out);
                }
            }
            _ => out.push(prefix),
        }
    }
    let mut out = Vec::new();
    walk(
        &toml::from_str(text).expect("scenarios parse"),
        String::new(),
        &mut out,
    );
    out
}

fn set_values() -> Vec<&'static str> {
    vec![
        "-1",
        "0",
        "1",
        "9223372036854775807",
        "9223372036854775808",
        "99999999999999999999",
        "1.5",
        "true",
        "x",
        "\"x\"",
        "[]",
        "[\"range\"]",
        "{}",
        "{ min = 5, max = 1 }",
        "",
        "=",
        "[",
        "\"",
    ]
}

fn load_with_sets(text: &str, sets: Vec<String>) {
    let options = LoadOptions {
        sets,
        ..LoadOptions::default()
    };
    if let Ok(s) = load_str("fuzz.toml", text, &options) {
        assert!(s.members.len() as u64 <= limits::MAX_MEMBERS);
        assert!(s.duration_ms <= limits::MAX_DURATION_MS);
    }
}

// ---- The small runs, in `cargo test` ----

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn a_mutated_scenario_loads_and_runs_or_is_refused(
        file in any::<prop::sample::Index>(),
        line in any::<prop::sample::Index>(),
        mutation in any::<prop::sample::Index>(),
        seed in any::<u64>(),
        composed in any::<bool>(),
    ) {
        let files = scenario_files();
        let (what, text) = if composed {
            composed_mutant(&files, &all_mutations(), seed)
        } else {
            let (name, text) = file.get(&files);
            let i = line.index(text.lines().count());
            let m = *mutation.get(&all_mutations());
            match mutate(text, i, m) {
                Some(t) => (format!("{name} line {} {m:?}", i + 1), t),
                None => return Ok(()),
            }
        };
        load_and_maybe_run(&what, &text, true);
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn arbitrary_text_is_a_scenario_or_an_error(text in ".{0,200}") {
        load_and_maybe_run("arbitrary", &text, false);
    }

    #[test]
    fn toml_shaped_text_is_a_scenario_or_an_error(
        lines in prop::collection::vec(
            (
                prop::sample::select(vec![
                    "duration_ms", "lag_sample_ms", "name", "count", "partitions",
                    "[[topics]]", "[[members]]", "[group]", "[[timeline]]", "[[producers]]",
                    "[cluster]", "[app]", "[arrival]", "[variants.v]", "at_ms", "action",
                    "member", "topic", "records_per_sec", "key_count", "per_key", "set",
                    "duration_ms", "interval_ms", "assignors", "max_poll_records",
                ]),
                prop::sample::select(set_values()),
            ),
            0..24,
        ),
    ) {
        let text: String = lines
            .iter()
            .map(|(k, v)| if k.starts_with('[') { format!("{k}\n") } else { format!("{k} = {v}\n") })
            .collect();
        load_and_maybe_run("toml-shaped", &text, false);
    }

    #[test]
    fn any_set_argument_is_applied_or_named_in_an_error(
        file in any::<prop::sample::Index>(),
        path in any::<prop::sample::Index>(),
        value in prop::sample::select(set_values()),
        junk in "[a-z0-9._=\\[\\]\" -]{0,24}",
        use_junk in any::<bool>(),
    ) {
        let files = scenario_files();
        let (_, text) = file.get(&files);
        let set = if use_junk {
            junk
        } else {
            format!("{}={value}", path.get(&set_paths(text)))
        };
        load_with_sets(text, vec![set]);
    }

    #[test]
    fn a_mutated_assign_line_is_answered_or_refused(
        line in any::<prop::sample::Index>(),
        pick in any::<usize>(),
        with in prop::option::of(prop::sample::select(json_values())),
    ) {
        let lines = assign_lines();
        assign_answers(&mutate_json(line.get::<String>(&lines), pick, with));
    }

    #[test]
    fn arbitrary_assign_input_is_refused_cleanly(text in ".{0,200}") {
        assign_answers(&text);
    }
}

// ---- The big runs: `cargo test --test fuzz_parsers -- --ignored` ----

proptest! {
    #![proptest_config(config(20_000))]

    #[test]
    #[ignore = "large: run with --ignored"]
    fn many_set_arguments_and_assign_lines(
        file in any::<prop::sample::Index>(),
        path in any::<prop::sample::Index>(),
        value in prop::sample::select(set_values()),
        line in any::<prop::sample::Index>(),
        pick in any::<usize>(),
        with in prop::option::of(prop::sample::select(json_values())),
    ) {
        let files = scenario_files();
        let (_, text) = file.get(&files);
        load_with_sets(text, vec![format!("{}={value}", path.get(&set_paths(text)))]);
        let lines = assign_lines();
        assign_answers(&mutate_json(line.get::<String>(&lines), pick, with));
    }
}

/// How one mutated file fared through the binary.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
enum Fate {
    Ran,
    Refused,
    Panicked,
    Aborted,
    Slow,
}

/// A hang that takes no CPU still ends.
const SWEEP_WALL_TIMEOUT: Duration = Duration::from_secs(300);

/// One run of the binary on `path`, with at most `cpu_seconds` of CPU (not wall time: the
/// machine is shared) and 4 GiB of address space.
fn run_binary(path: &Path, cpu_seconds: u64) -> (Fate, Duration, String) {
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    let started = Instant::now();
    // ulimit -v: a run that wants more memory aborts, and is counted; ulimit -t: one that takes
    // more CPU gets SIGXCPU.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 4194304; ulimit -t {cpu_seconds}; exec \"$0\" run \"$1\""
        ))
        .arg(env!("CARGO_BIN_EXE_cgsim"))
        .arg(path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cgsim runs");
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > SWEEP_WALL_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = started.elapsed();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    const SIGKILL: i32 = 9;
    const SIGXCPU: i32 = 24;
    let fate = match status {
        None => Fate::Slow,
        Some(_) if stderr.contains("panicked") => Fate::Panicked,
        Some(s) => match (s.code(), s.signal()) {
            (Some(0 | 1), _) => Fate::Ran,
            (Some(2), _) => Fate::Refused,
            (Some(101), _) => Fate::Panicked,
            (_, Some(SIGXCPU | SIGKILL)) => Fate::Slow,
            _ => Fate::Aborted,
        },
    };
    (fate, elapsed, stderr)
}

type Outcome = (usize, String, Fate, Duration, String);

/// Runs every mutant through the binary, on every core; results in mutant order.
fn sweep(mutants: &[(String, String)], cpu_seconds: u64) -> Vec<Outcome> {
    let dir = std::env::temp_dir().join(format!("cgsim-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((what, text)) = mutants.get(i) else {
                    break;
                };
                let path = dir.join(format!("m{i}.toml"));
                std::fs::write(&path, text).unwrap();
                let (fate, took, stderr) = run_binary(&path, cpu_seconds);
                let _ = std::fs::remove_file(&path);
                results
                    .lock()
                    .unwrap()
                    .push((i, what.clone(), fate, took, stderr));
            });
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    results
}

/// The sweep's counts on stderr, the most common refusals first; the runs that went wrong.
fn summary(name: &str, results: &[Outcome], singles: usize, cpu_seconds: u64) -> Vec<String> {
    let count = |f: Fate| results.iter().filter(|r| r.2 == f).count();
    let slowest = results.iter().map(|r| r.3).max().unwrap_or_default();
    let over_10s = results
        .iter()
        .filter(|r| r.3 > Duration::from_secs(10))
        .count();
    eprintln!(
        "{name}: {} files ({singles} single mutations, the rest two or three at once): ran {}, refused {}, \
         panicked {}, aborted {}, over {cpu_seconds} s of CPU {}; over 10 s of wall time {}, slowest {:.2} s",
        results.len(),
        count(Fate::Ran),
        count(Fate::Refused),
        count(Fate::Panicked),
        count(Fate::Aborted),
        count(Fate::Slow),
        over_10s,
        slowest.as_secs_f64()
    );
    // What the refusals said (the message without its file and line), the most common first.
    let mut reasons: std::collections::BTreeMap<String, usize> = Default::default();
    for r in results.iter().filter(|r| r.2 == Fate::Refused) {
        let first = r.4.lines().next().unwrap_or("");
        let reason = first.rsplit(": ").next().unwrap_or(first);
        let reason: String = reason.chars().take(60).collect();
        *reasons.entry(reason).or_default() += 1;
    }
    let mut reasons: Vec<(String, usize)> = reasons.into_iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (reason, n) in reasons.iter().take(12) {
        eprintln!("  refused {n:>6}: {reason}");
    }
    let singles_ran = results
        .iter()
        .filter(|r| r.0 < singles && r.2 == Fate::Ran)
        .count();
    eprintln!("  of the {singles} single mutations, {singles_ran} ran");
    for r in results.iter().filter(|r| r.3 > Duration::from_secs(10)) {
        eprintln!("  {:.1} s of wall time: {}", r.3.as_secs_f64(), r.1);
    }
    results
        .iter()
        .filter(|r| r.2 > Fate::Refused)
        .map(|r| format!("{:?} {}: {}", r.2, r.1, r.4.lines().next().unwrap_or("")))
        .collect()
}

#[test]
#[ignore = "large: 20,000 runs of the binary, run with --ignored"]
fn sweep_of_20000_mutated_scenario_files_through_the_binary() {
    const FILES: usize = 20_000;
    let files = scenario_files();
    let mut mutants = single_mutants(&files);
    let singles = mutants.len();
    let mut seed = 0;
    while mutants.len() < FILES {
        mutants.push(composed_mutant(&files, &all_mutations(), seed));
        seed += 1;
    }
    mutants.truncate(FILES);
    let results = sweep(&mutants, 10);
    let bad = summary("sweep", &results, singles, 10);
    assert_eq!(results.len(), FILES);
    assert!(bad.is_empty(), "{} bad:\n{}", bad.len(), bad.join("\n"));
}

#[test]
#[ignore = "large: 5,000 runs of the binary, run with --ignored"]
fn sweep_of_odd_but_loadable_numbers_stays_within_the_work_limit() {
    // In-range numbers load more often, and run into the work limit's estimate: a run it lets
    // through may take up to about a minute (README "Limits"), never more.
    const FILES: usize = 5_000;
    let files = scenario_files();
    let mut mutations = all_mutations();
    mutations.extend(MORE_NUMBERS.iter().map(|&n| Mutation::Numbers(n)));
    let mutants: Vec<(String, String)> = (0..FILES as u64)
        .map(|seed| composed_mutant(&files, &mutations, 1_000_000 + seed))
        .collect();
    let results = sweep(&mutants, 60);
    let bad = summary("odd numbers", &results, 0, 60);
    assert!(bad.is_empty(), "{} bad:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn mutations_change_the_line_they_name_and_nothing_else() {
    let text = "a = 1\nb = \"c5\"\n[t]\n";
    assert_eq!(
        mutate(text, 0, Mutation::Delete).unwrap(),
        "b = \"c5\"\n[t]\n"
    );
    assert_eq!(
        mutate(text, 1, Mutation::Duplicate).unwrap(),
        "a = 1\nb = \"c5\"\nb = \"c5\"\n[t]\n"
    );
    assert_eq!(
        mutate(text, 1, Mutation::Numbers("-1")).unwrap(),
        "a = 1\nb = \"c-1\"\n[t]\n"
    );
    assert_eq!(
        replace_numbers("x = { min = 1_000, max = 1.5 }", "0").unwrap(),
        "x = { min = 0, max = 0 }"
    );
    assert_eq!(
        mutate(text, 0, Mutation::Value("\"x\"")).unwrap(),
        "a = \"x\"\nb = \"c5\"\n[t]\n"
    );
    assert!(mutate(text, 0, Mutation::Value("7")).is_none(), "same type");
    assert!(mutate(text, 2, Mutation::Value("7")).is_none(), "a header");
    assert!(
        mutate(text, 2, Mutation::Numbers("0")).is_none(),
        "no digits"
    );
    let files = scenario_files();
    let n = single_mutants(&files).len();
    assert!(n > 2_500, "{n} single mutations");
    let all = all_mutations();
    assert_eq!(
        composed_mutant(&files, &all, 7),
        composed_mutant(&files, &all, 7)
    );
    assert_eq!(
        mutate_json(r#"{"a":[1,2]}"#, 1, Some(Value::from("x"))),
        r#"{"a":["x",2]}"#
    );
    assert_eq!(mutate_json(r#"{"a":[1,2]}"#, 0, None), "{}");
}
