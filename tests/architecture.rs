//! The architecture test (issue 69): reads every source file under `src/`, draws which top-level
//! module imports which (`crate::x` in the library, `cgsim::x` in the binary's `main.rs` and
//! `cli/`, and `super::` chains that climb to the crate root), and holds that drawing against the
//! README's "Code map": its layer table (a module imports only from its own layer and those
//! below) and its "Architecture invariants" list. It fails on any import cycle between top-level
//! modules, on any import up the layers, on any import an invariant forbids, on a module of
//! `src/` the layer table does not place, and on an invariant it cannot read, so the README and
//! the code cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Which top-level modules each top-level module imports, with a file that does each time.
type Imports = BTreeMap<String, BTreeMap<String, String>>;

/// The module of the binary: `src/main.rs` and `src/cli/`.
const BINARY: &str = "cli";

/// The README's code map, as the test reads it.
#[derive(Debug, Default)]
struct CodeMap {
    /// Each module's layer, from 1 (the ground).
    layer: BTreeMap<String, u32>,
    invariants: Vec<Invariant>,
}

/// One line of the README's "Architecture invariants".
#[derive(Debug, Clone, PartialEq, Eq)]
enum Invariant {
    /// "`a` imports nothing of the crate".
    ImportsNothing(String),
    /// "`a` imports only `b`, `c`".
    ImportsOnly(String, BTreeSet<String>),
    /// "`a` does not import `b`, `c`" (several subjects: "`a`, `b` do not import ...").
    DoesNotImport(BTreeSet<String>, BTreeSet<String>),
    /// "`a` and `b` do not import each other".
    NotEachOther(String, String),
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file below `src/`: `group/classic/mod.rs` is `[group, classic]`,
/// `group/dispatcher.rs` `[group, dispatcher]`; `main.rs` and `cli/` are the binary's.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().expect("a file name");
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_string());
    }
    if file == "main.rs" && parts.is_empty() {
        parts.push(BINARY.to_string());
    }
    parts
}

/// The code without comments and string literals, which may name paths that are no imports.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"'
                    && b[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&c| c == b'#')
                        .count()
                        == hashes
                {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '"'), or a lifetime ('a), which is kept.
            if b.get(i + 1) == Some(&b'\\') {
                let close = b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(b.len(), |p| i + 3 + p);
                out.push_str("' '");
                i = close;
            } else if b.get(i + 2) == Some(&b'\'') {
                out.push_str("' '");
                i += 3;
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            let ch = text[i..].chars().next().expect("a char");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first names of every path in a `use` tree's braces: `{a::b, c, d::{e, f}}` gives a, c, d.
fn braced_heads(tree: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expect_head = true;
    let mut current = String::new();
    for c in tree.chars() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    expect_head = true;
                }
            }
            '}' => depth -= 1,
            ',' if depth == 1 => expect_head = true,
            c if depth == 1 && expect_head && is_ident(c) => current.push(c),
            _ => {
                if !current.is_empty() {
                    heads.push(std::mem::take(&mut current));
                }
                if depth == 1 && expect_head && !c.is_whitespace() {
                    expect_head = false;
                }
            }
        }
        if depth == 1 && expect_head && !current.is_empty() && !is_ident(c) {
            heads.push(std::mem::take(&mut current));
            expect_head = false;
        }
    }
    heads
}

/// The top-level modules a file's code names: `crate::x` (`cgsim::x` in the binary), the heads
/// of `use crate::{x::.., y}`, and `super::` chains that climb to the crate root.
fn named_modules(code: &str, path: &[String], modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let root = if path.first().map(String::as_str) == Some(BINARY) {
        "cgsim"
    } else {
        "crate"
    };
    let bytes = code.as_bytes();
    let mut add = |name: &str| {
        if modules.contains(name) && Some(name) != path.first().map(String::as_str) {
            found.insert(name.to_string());
        }
    };
    for (at, _) in code.match_indices(root) {
        if at > 0 && is_ident(bytes[at - 1] as char) {
            continue;
        }
        let rest = &code[at + root.len()..];
        let Some(rest) = rest.strip_prefix("::") else {
            continue;
        };
        let rest = rest.trim_start();
        if rest.starts_with('{') {
            let end = matching_brace(rest);
            for head in braced_heads(&rest[..end]) {
                add(&head);
            }
        } else {
            let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            add(&name);
        }
    }
    // `super::super::x` from `group/classic/mod.rs` climbs to the root and names `x`.
    let depth = path.len();
    for (at, _) in code.match_indices("super::") {
        if at > 0 && (is_ident(bytes[at - 1] as char) || bytes[at - 1] == b':') {
            continue;
        }
        let mut rest = &code[at..];
        let mut ups = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            ups += 1;
            rest = r;
        }
        if ups == depth {
            let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            add(&name);
        }
    }
    found
}

fn matching_brace(s: &str) -> usize {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// The top-level modules of `src/` (the binary's `main.rs` and `cli/` as one, `cli`).
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    let mut modules = BTreeSet::new();
    for e in fs::read_dir(src).expect("src/") {
        let p = e.expect("an entry").path();
        let name = p
            .file_stem()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        match name.as_str() {
            "lib" => {}
            "main" => {
                modules.insert(BINARY.to_string());
            }
            _ if p.is_dir() || p.extension().is_some_and(|x| x == "rs") => {
                modules.insert(name);
            }
            _ => {}
        }
    }
    modules
}

fn read_imports(src: &Path) -> (BTreeSet<String>, Imports) {
    let modules = top_level_modules(src);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut imports = Imports::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("below src/");
        let path = module_path(rel);
        let Some(top) = path.first() else { continue };
        let code = code_only(&fs::read_to_string(&file).expect("a source file"));
        for target in named_modules(&code, &path, &modules) {
            imports
                .entry(top.clone())
                .or_default()
                .entry(target)
                .or_insert_with(|| format!("src/{}", rel.display()));
        }
    }
    (modules, imports)
}

/// Every group of top-level modules that import each other in a loop (Tarjan's strongly
/// connected components, in a fixed order).
fn cycles(modules: &BTreeSet<String>, imports: &Imports) -> Vec<Vec<String>> {
    struct Walk<'a> {
        imports: &'a Imports,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let i = w.index.len();
        w.index.insert(v, i);
        w.low.insert(v, i);
        w.stack.push(v);
        w.on_stack.insert(v);
        if let Some(targets) = w.imports.get(v) {
            for t in targets.keys() {
                let t = t.as_str();
                if !w.index.contains_key(t) {
                    visit(w, t);
                    let l = w.low[t].min(w.low[v]);
                    w.low.insert(v, l);
                } else if w.on_stack.contains(t) {
                    let l = w.index[t].min(w.low[v]);
                    w.low.insert(v, l);
                }
            }
        }
        if w.low[v] == w.index[v] {
            let mut component = Vec::new();
            loop {
                let x = w.stack.pop().expect("on the stack");
                w.on_stack.remove(x);
                component.push(x.to_string());
                if x == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                w.found.push(component);
            }
        }
    }
    let mut w = Walk {
        imports,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for m in modules {
        if !w.index.contains_key(m.as_str()) {
            visit(&mut w, m);
        }
    }
    w.found.sort();
    w.found
}

/// The names in backticks on a line.
fn ticked(s: &str) -> Vec<String> {
    s.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The README's code map: the layer table's rows (`| N | `a`, `b` | ... |` under "### Layers")
/// and the invariants (`- ...` under "### Architecture invariants").
fn read_code_map(readme: &str) -> Result<CodeMap, String> {
    let mut map = CodeMap::default();
    let mut section = "";
    for (n, line) in readme.lines().enumerate() {
        if let Some(h) = line.strip_prefix("### ") {
            section = h.trim();
            continue;
        }
        if line.starts_with("## ") {
            section = "";
        }
        match section {
            "Layers" if line.starts_with('|') => {
                let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
                let Ok(layer) = cells[0].parse::<u32>() else {
                    continue; // the header and its rule
                };
                let modules = ticked(cells.get(1).copied().unwrap_or(""));
                if modules.is_empty() {
                    return Err(format!(
                        "README.md line {}: layer {layer} names no module",
                        n + 1
                    ));
                }
                for m in modules {
                    let m = m
                        .trim_start_matches("src/")
                        .trim_end_matches('/')
                        .trim_end_matches(".rs");
                    if map.layer.insert(m.to_string(), layer).is_some() {
                        return Err(format!("README.md line {}: `{m}` is in two layers", n + 1));
                    }
                }
            }
            "Architecture invariants" if line.starts_with("- ") => {
                let inv = parse_invariant(line).ok_or_else(|| {
                    format!(
                        "README.md line {}: not an invariant the test can read: {line}",
                        n + 1
                    )
                })?;
                map.invariants.push(inv);
            }
            _ => {}
        }
    }
    if map.layer.is_empty() {
        return Err("README.md: no \"### Layers\" table".to_string());
    }
    if map.invariants.is_empty() {
        return Err("README.md: no \"### Architecture invariants\" list".to_string());
    }
    Ok(map)
}

/// One invariant line, up to its first `:` (what follows is the reason, in prose).
fn parse_invariant(line: &str) -> Option<Invariant> {
    let rule = line.strip_prefix("- ")?;
    let rule = &rule[..rule.find(": ").unwrap_or(rule.len())];
    let (subject, object) = if let Some((s, o)) = rule.split_once(" do not import ") {
        (s, o)
    } else if let Some((s, o)) = rule.split_once(" does not import ") {
        (s, o)
    } else if let Some((s, o)) = rule.split_once(" imports only ") {
        let s = ticked(s);
        return (s.len() == 1)
            .then(|| Invariant::ImportsOnly(s[0].clone(), ticked(o).into_iter().collect()));
    } else if let Some(s) = rule.strip_suffix(" imports nothing of the crate") {
        let s = ticked(s);
        return (s.len() == 1).then(|| Invariant::ImportsNothing(s[0].clone()));
    } else {
        return None;
    };
    let subjects = ticked(subject);
    if object.trim() == "each other" {
        return (subjects.len() == 2)
            .then(|| Invariant::NotEachOther(subjects[0].clone(), subjects[1].clone()));
    }
    let objects = ticked(object);
    (!subjects.is_empty() && !objects.is_empty()).then(|| {
        Invariant::DoesNotImport(
            subjects.into_iter().collect(),
            objects.into_iter().collect(),
        )
    })
}

/// Everything wrong with the imports against the code map, one line each.
fn violations(modules: &BTreeSet<String>, imports: &Imports, map: &CodeMap) -> Vec<String> {
    let mut out = Vec::new();
    for m in modules {
        if !map.layer.contains_key(m) {
            out.push(format!("`{m}` is in no layer of the README's code map"));
        }
    }
    for m in map.layer.keys() {
        if !modules.contains(m) {
            out.push(format!(
                "the README's layer table names `{m}`, which src/ does not have"
            ));
        }
    }
    for cycle in cycles(modules, imports) {
        out.push(format!(
            "import cycle between top-level modules: {}",
            cycle.join(", ")
        ));
    }
    let edge = |from: &str, to: &str| imports.get(from).and_then(|t| t.get(to));
    for (from, targets) in imports {
        for (to, file) in targets {
            if let (Some(&lf), Some(&lt)) = (map.layer.get(from), map.layer.get(to)) {
                if lt > lf {
                    out.push(format!(
                        "`{from}` (layer {lf}) imports `{to}` (layer {lt}), above it: {file}"
                    ));
                }
            }
        }
    }
    for inv in &map.invariants {
        match inv {
            Invariant::ImportsNothing(a) => {
                for (to, file) in imports.get(a).into_iter().flatten() {
                    out.push(format!(
                        "`{a}` imports nothing of the crate, but imports `{to}`: {file}"
                    ));
                }
            }
            Invariant::ImportsOnly(a, allowed) => {
                for (to, file) in imports.get(a).into_iter().flatten() {
                    if !allowed.contains(to) {
                        out.push(format!(
                            "`{a}` imports only {allowed:?}, but imports `{to}`: {file}"
                        ));
                    }
                }
            }
            Invariant::DoesNotImport(subjects, objects) => {
                for a in subjects {
                    for b in objects {
                        if let Some(file) = edge(a, b) {
                            out.push(format!("`{a}` does not import `{b}`, but does: {file}"));
                        }
                    }
                }
            }
            Invariant::NotEachOther(a, b) => {
                for (x, y) in [(a, b), (b, a)] {
                    if let Some(file) = edge(x, y) {
                        out.push(format!("`{a}` and `{b}` do not import each other, but `{x}` imports `{y}`: {file}"));
                    }
                }
            }
        }
        for name in invariant_names(inv) {
            if !modules.contains(name) {
                out.push(format!(
                    "an invariant names `{name}`, which src/ does not have"
                ));
            }
        }
    }
    out
}

fn invariant_names(inv: &Invariant) -> Vec<&String> {
    match inv {
        Invariant::ImportsNothing(a) => vec![a],
        Invariant::ImportsOnly(a, b) => std::iter::once(a).chain(b).collect(),
        Invariant::DoesNotImport(a, b) => a.iter().chain(b).collect(),
        Invariant::NotEachOther(a, b) => vec![a, b],
    }
}

fn readme() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README.md")
}

#[test]
fn the_code_keeps_the_readmes_layers_and_invariants() {
    let map = read_code_map(&readme()).unwrap_or_else(|e| panic!("{e}"));
    let (modules, imports) = read_imports(&src_dir());
    let found = violations(&modules, &imports, &map);
    assert!(
        found.is_empty(),
        "the imports break the README's code map (\"Layers\", \"Architecture invariants\"):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_reading_sees_the_imports_there_are() {
    // A sanity check of the reader on the tree itself: without it, a reader that found no
    // imports would pass every rule.
    let (modules, imports) = read_imports(&src_dir());
    assert!(modules.contains("group") && modules.contains(BINARY) && modules.contains("messages"));
    let of = |m: &str| {
        imports
            .get(m)
            .map(|t| t.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert!(
        of("group").contains(&"messages".to_string()),
        "{:?}",
        of("group")
    );
    assert!(
        of("cli").contains(&"scenario".to_string()),
        "{:?}",
        of("cli")
    );
    assert!(
        of("world").contains(&"group".to_string()),
        "{:?}",
        of("world")
    );
}

fn graph(edges: &[(&str, &str)]) -> (BTreeSet<String>, Imports) {
    let mut modules = BTreeSet::new();
    let mut imports = Imports::new();
    for &(a, b) in edges {
        modules.insert(a.to_string());
        modules.insert(b.to_string());
        imports
            .entry(a.to_string())
            .or_default()
            .insert(b.to_string(), format!("src/{a}/x.rs"));
    }
    (modules, imports)
}

fn map_of(readme: &str) -> CodeMap {
    read_code_map(readme).unwrap_or_else(|e| panic!("{e}"))
}

const SMALL_MAP: &str = "\
### Layers
| layer | modules | what |
|---|---|---|
| 1 | `sim`, `messages` | the ground |
| 2 | `group`, `client` | state machines |
| 3 | `world` | the driver |

### Architecture invariants
- `sim` imports nothing of the crate: the kernel knows no Kafka.
- `group` and `client` do not import each other: they speak only `messages`.
- `world` does not import `client`: a made-up rule, for the test.
";

#[test]
fn an_import_up_the_layers_fails() {
    let (modules, imports) = graph(&[
        ("group", "messages"),
        ("client", "messages"),
        ("messages", "world"),
        ("world", "group"),
    ]);
    let found = violations(&modules, &imports, &map_of(SMALL_MAP));
    assert!(
        found
            .iter()
            .any(|v| v.starts_with("`messages` (layer 1) imports `world` (layer 3)")),
        "{found:?}"
    );
}

#[test]
fn an_import_cycle_between_top_level_modules_fails() {
    let (modules, imports) = graph(&[
        ("world", "group"),
        ("group", "messages"),
        ("messages", "group"),
    ]);
    let found = violations(&modules, &imports, &map_of(SMALL_MAP));
    assert!(
        found.contains(&"import cycle between top-level modules: group, messages".to_string()),
        "{found:?}"
    );
}

#[test]
fn an_import_an_invariant_forbids_fails() {
    let (modules, imports) = graph(&[
        ("client", "group"),
        ("world", "client"),
        ("sim", "messages"),
    ]);
    let found = violations(&modules, &imports, &map_of(SMALL_MAP));
    for expected in [
        "`group` and `client` do not import each other, but `client` imports `group`: src/client/x.rs",
        "`world` does not import `client`, but does: src/world/x.rs",
        "`sim` imports nothing of the crate, but imports `messages`: src/sim/x.rs",
    ] {
        assert!(found.contains(&expected.to_string()), "{expected}\nin {found:?}");
    }
    // The same modules, importing only what the map allows, pass.
    let (modules, imports) = graph(&[("client", "messages"), ("world", "group"), ("group", "sim")]);
    assert_eq!(
        violations(&modules, &imports, &map_of(SMALL_MAP)),
        Vec::<String>::new()
    );
}

#[test]
fn a_module_no_layer_places_and_an_unreadable_invariant_fail() {
    let (modules, imports) = graph(&[("lab", "world")]);
    let found = violations(&modules, &imports, &map_of(SMALL_MAP));
    assert!(
        found.contains(&"`lab` is in no layer of the README's code map".to_string()),
        "{found:?}"
    );
    let bad = SMALL_MAP.replace(
        "- `world` does not import `client`",
        "- `world` should mostly avoid `client`",
    );
    let err = read_code_map(&bad).unwrap_err();
    assert!(err.contains("not an invariant the test can read"), "{err}");
}

#[test]
fn the_reader_finds_imports_in_use_trees_and_super_chains_not_in_comments_or_strings() {
    let modules: BTreeSet<String> = ["group", "messages", "sim", "facts", "world", "java"]
        .map(String::from)
        .into();
    let code = code_only(
        "use crate::{messages::{Request, Response}, sim::SimTime};\n\
         // crate::world::run in a comment\n\
         let s = \"crate::java::x\";\n\
         let c = '\"'; let t: &'static str = \"\";\n\
         use super::super::facts::Fact;\n",
    );
    let path = vec!["group".to_string(), "classic".to_string()];
    let found = named_modules(&code, &path, &modules);
    assert_eq!(found, ["facts", "messages", "sim"].map(String::from).into(),);
}

#[test]
fn every_path_the_code_map_names_exists() {
    let readme = readme();
    let map = &readme[readme.find("## Code map").expect("a code map")..];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let missing: Vec<String> = ticked(map)
        .into_iter()
        .filter(|t| {
            ["src/", "tests/", "benches/", "scripts/", "deploy/"]
                .iter()
                .any(|p| t.starts_with(p))
        })
        .filter(|t| !root.join(t).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "the README's code map names paths the tree does not have: {missing:?}"
    );
}
