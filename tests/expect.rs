//! `[[expect]]`: a failed expectation makes `cgsim run` exit 1 naming the measured figure; a
//! malformed one is refused at load (exit 2, file and line); a key the report lacks is refused
//! when checked; `cgsim check scenarios/` passes (the project's own scenarios state what each
//! demonstrates).

use std::path::PathBuf;
use std::process::Command;

fn cgsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cgsim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

/// scale-out.toml without its own expectations.
fn base() -> String {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/scale-out.toml"),
    )
    .expect("scale-out");
    let end = text
        .find("\n# What this scenario shows")
        .expect("scale-out states its expectations");
    text[..=end].to_string()
}

/// That base with `extra` appended, in a scratch file of its own.
fn scenario_with(name: &str, extra: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cgsim-expect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, base() + extra).expect("write");
    path
}

fn lines(text: &str) -> usize {
    text.lines().count()
}

#[test]
fn a_failed_expectation_exits_1_with_the_measured_value() {
    let extra =
        "\n[[expect]]\nkey = \"pauses.stop_the_world_ms.max\"\nle = 10\nvariant = \"eager\"\n";
    let path = scenario_with("fails", extra);
    let line = lines(&std::fs::read_to_string(&path).unwrap()) - 3;
    let p = path.to_str().unwrap();
    let (code, out, err) = cgsim(&["run", p, "--variant", "eager"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.starts_with("scenario scale-out"),
        "the report is still printed"
    );
    assert_eq!(
        err,
        format!("{p}: line {line}: expectation failed (variant eager): pauses.stop_the_world_ms.max le 10: measured 119\n")
    );
    // Another variant's run does not check it.
    let (code, _, err) = cgsim(&["run", p, "--variant", "cooperative"]);
    assert_eq!((code, err.as_str()), (0, ""));
    // `cgsim check` runs it on its variant only, and fails.
    let (code, out, _) = cgsim(&["check", p]);
    assert_eq!(code, 1);
    assert!(
        out.contains(&format!(
            "FAIL  {p}:{line}  eager  pauses.stop_the_world_ms.max le 10  (measured 119)"
        )),
        "{out}"
    );
    assert!(
        out.ends_with("check: 1 expectation(s), 1 failed, over 1 scenario(s)\n"),
        "{out}"
    );
}

#[test]
fn bad_expectations_exit_2_with_file_and_line() {
    let base_lines = lines(&base());
    let cases = [
        (
            "unknown-field",
            "\n[[expect]]\nkey = \"moved.total\"\neq = 4\nwithin = 2\n",
            "unknown field `within`",
        ),
        (
            "two",
            "\n[[expect]]\nkey = \"moved.total\"\neq = 4\nle = 5\n",
            "[[expect]]: key \"moved.total\" has eq and le: give exactly one of eq, le, ge",
        ),
        (
            "none",
            "\n[[expect]]\nkey = \"moved.total\"\n",
            "[[expect]]: key \"moved.total\" has no comparison: give exactly one of eq, le, ge",
        ),
        (
            "le-string",
            "\n[[expect]]\nkey = \"moved.total\"\nle = \"4\"\n",
            "[[expect]]: le takes a number, not a string",
        ),
        (
            "variant",
            "\n[[expect]]\nkey = \"moved.total\"\neq = 4\nvariant = \"nope\"\n",
            "[[expect]]: unknown variant \"nope\"",
        ),
    ];
    for (name, extra, message) in cases {
        let path = scenario_with(name, extra);
        let p = path.to_str().unwrap();
        for args in [vec!["run", p], vec!["check", p]] {
            let (code, _, err) = cgsim(&args);
            assert_eq!(code, 2, "{name}: {err}");
            assert!(err.starts_with(&format!("{p}: line ")), "{name}: {err}");
            let line: usize = err[p.len() + 7..]
                .split(':')
                .next()
                .unwrap()
                .parse()
                .expect("a line");
            assert!(
                line > base_lines,
                "{name}: line {line} is in the appended entry"
            );
            assert!(err.contains(message), "{name}: {err}");
        }
    }
}

#[test]
fn an_unknown_key_is_bad_input_when_checked() {
    let extra = "\n[[expect]]\nkey = \"pauses.stop_the_world.max\"\neq = 0\n";
    let path = scenario_with("unknown-key", extra);
    let p = path.to_str().unwrap();
    let (code, _, err) = cgsim(&["run", p, "--variant", "cooperative"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("[[expect]] key \"pauses.stop_the_world.max\": no \"stop_the_world\" under \"pauses\" (keys there: stop_the_world_ms, unavailable_ms, unowned_ms)"),
        "{err}"
    );
}

#[test]
fn the_projects_scenarios_pass_their_own_expectations() {
    let (code, out, err) = cgsim(&["check", "scenarios/"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("FAIL"), "{out}");
    let last = out.lines().last().unwrap_or("");
    assert!(
        last.starts_with("check: ") && last.ends_with(" 0 failed, over 22 scenario(s)"),
        "{last}"
    );
    // Every scenario states at least one expectation.
    for entry in
        std::fs::read_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios")).unwrap()
    {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            out.contains(&format!("scenarios/{name}:")),
            "{name} has no [[expect]]"
        );
    }
    // What scale-out demonstrates: eager stops the world, cooperative and consumer do not.
    assert!(
        out.contains("eager  pauses.stop_the_world_ms.max ge 1  (measured 119)"),
        "{out}"
    );
    assert!(
        out.contains("consumer  pauses.stop_the_world_ms.max eq 0  (measured 0)"),
        "{out}"
    );
}
