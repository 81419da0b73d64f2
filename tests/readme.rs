//! Every command the README shows runs as written, on a fresh clone, in
//! order, and leaves every committed file as it was (issue 10, item 9).
//!
//! A README command is an indented line starting with `$ ` (a line starting
//! with `gpu$ ` runs on a GPU machine and is skipped here). The indented
//! lines that follow it, up to the next command or blank line, are its
//! expected output (stdout and stderr together), compared line by line; in
//! an expected line `...` stands for any text (paths, timings). A command
//! whose expected output contains `error:` must fail; every other command
//! must succeed. All commands run in one `bash` session, so variables set by
//! one (`T=...`) are seen by the next.
//!
//! This builds the tools in release mode on a fresh clone, which takes
//! minutes, so it is `#[ignore]`d in a plain `cargo test` and run by
//! `.ci/run` (`cargo test --release --test readme -- --ignored`).

use std::path::PathBuf;
use std::process::Command;

/// One command of the README and what it is expected to print.
#[derive(Debug)]
struct Example {
    /// 1-based line in the README.
    line: usize,
    command: String,
    expected: Vec<String>,
}

fn examples(readme: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_output = false;
    let lines: Vec<&str> = readme.lines().collect();
    for (i, raw) in lines.iter().enumerate() {
        let Some(body) = raw.strip_prefix("    ") else {
            // A blank line inside a code block is part of the output when
            // the block goes on with more output (as in Markdown).
            let next = lines.get(i + 1).copied().unwrap_or("");
            let goes_on = next.starts_with("    ")
                && !next[4..].starts_with("$ ")
                && !next[4..].starts_with("gpu$ ");
            if in_output && raw.trim().is_empty() && goes_on {
                if let Some(last) = out.last_mut() {
                    last.expected.push(String::new());
                }
            } else {
                in_output = false;
            }
            continue;
        };
        if let Some(cmd) = body.strip_prefix("$ ") {
            out.push(Example {
                line: i + 1,
                command: cmd.to_string(),
                expected: Vec::new(),
            });
            in_output = true;
        } else if body.starts_with("gpu$ ") {
            in_output = false;
        } else if in_output {
            if let Some(last) = out.last_mut() {
                last.expected.push(body.trim_end().to_string());
            }
        }
    }
    out
}

/// Does `got` match `pattern`, where `...` in the pattern matches any text?
fn matches(pattern: &str, got: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    if parts.len() == 1 {
        return pattern == got;
    }
    let mut rest = got;
    for (k, part) in parts.iter().enumerate() {
        if k == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if k == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

#[test]
fn parses_commands_and_their_output() {
    let text = "intro\n\n    $ a --x\n    out 1\n    out ...\n\n    $ b\n    gpu$ c\n    not output\n    $ d\n    x\n\n    y\n\ntext\n";
    let ex = examples(text);
    assert_eq!(ex.len(), 3);
    assert_eq!(ex[0].line, 3);
    assert_eq!(ex[0].command, "a --x");
    assert_eq!(ex[0].expected, ["out 1", "out ..."]);
    assert!(ex[1].expected.is_empty(), "a gpu$ line ends the output");
    assert_eq!(ex[2].command, "d");
    assert_eq!(ex[2].expected, ["x", "", "y"], "blank lines inside output");
    assert!(matches("out ...", "out 7 s"));
    assert!(matches("a ... b ... c", "a x b y c"));
    assert!(!matches("a ... b", "a x c"));
    assert!(!matches("exact", "exact "));
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("cannot start a command");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "builds a fresh clone in release mode; run by .ci/run"]
fn every_readme_command_runs_as_written_on_a_fresh_clone() {
    let repo = repo();
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let examples = examples(&readme);
    assert!(examples.len() >= 10, "the README shows its commands");

    // A clone of what is committed (HEAD), as a user gets it.
    let base = std::env::temp_dir().join(format!("axb-readme-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let clone = base.join("clone");
    run(Command::new("git")
        .args(["clone", "-q"])
        .arg(&repo)
        .arg(&clone));
    // The clone builds into this repository's target/ (a link), so the
    // dependencies that `cargo test --release` built are reused and only
    // the clone's own four crates are compiled. This test runs in a debug
    // build: cargo locks target/debug for it, the clone locks target/release.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target"));
    std::os::unix::fs::symlink(&target, clone.join("target")).unwrap();

    // One bash session (no subshells: variables carry over); each command's
    // output goes to its own file, and its status to another, so a failing
    // command does not stop the rest.
    let mut script = String::from("set -o pipefail\n");
    for (k, ex) in examples.iter().enumerate() {
        script.push_str(&format!(
            "{{ {}\n}} > {dir}/out{k} 2>&1; echo $? > {dir}/rc{k}\n",
            ex.command,
            dir = base.display()
        ));
    }
    let status = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(&clone)
        .status()
        .unwrap();
    assert!(status.success() || status.code().is_some());

    let mut failures = Vec::new();
    for (k, ex) in examples.iter().enumerate() {
        let out = std::fs::read_to_string(base.join(format!("out{k}"))).unwrap_or_default();
        let rc: i32 = std::fs::read_to_string(base.join(format!("rc{k}")))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(-1);
        let must_fail = ex.expected.iter().any(|l| l.contains("error:"));
        if must_fail == (rc == 0) {
            failures.push(format!(
                "README.md:{}: `{}` exited with {rc} (expected {}):\n{out}",
                ex.line,
                ex.command,
                if must_fail { "failure" } else { "success" }
            ));
            continue;
        }
        if ex.expected.is_empty() {
            continue;
        }
        let got: Vec<&str> = out.lines().map(str::trim_end).collect();
        let same = got.len() == ex.expected.len()
            && got.iter().zip(&ex.expected).all(|(g, e)| matches(e, g));
        if !same {
            failures.push(format!(
                "README.md:{}: `{}` printed:\n{out}\nbut the README shows:\n{}",
                ex.line,
                ex.command,
                ex.expected.join("\n")
            ));
        }
    }
    let status = run(Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&clone));
    if !status.is_empty() {
        failures.push(format!(
            "the README's commands changed the clone:\n{status}"
        ));
    }
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&base);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
