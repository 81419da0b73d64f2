//! Every command the README and the documents of `docs/` show runs as
//! written, on a fresh clone, in order, and prints what they show; together
//! they leave every committed file as it was (issue 10, item 9; issue 45,
//! item 1).
//!
//! A command is an indented line starting with `$ ` (a line starting with
//! `gpu$ ` runs on a GPU machine and is skipped here; an indented line with
//! no prompt, such as the README's `bash .ci/run`, which runs this test, is
//! shown, not run). The indented lines that follow it, up to the next
//! command or blank line, are its expected output (stdout and stderr
//! together), compared line by line; in an expected line `...` stands for
//! any text (paths, timings). A command whose expected output contains
//! `error:` must fail; every other command must succeed.
//!
//! The documents run in a fixed order, one after the other, in the same
//! clone: `README.md` first, then `docs/GUIDE.md` (the full tour, which
//! may use what the README's tour wrote under `runs/`), then every other
//! `docs/*.md` that shows a command, by file name. Each document runs in a
//! `bash` session of its own, so it sets up what it needs (`PATH`, `T`)
//! as a reader starting there would; within one document, variables set
//! by one command (`T=...`) are seen by the next.
//!
//! This builds the tools in release mode on a fresh clone, which takes
//! minutes, so it is `#[ignore]`d in a plain `cargo test` and run by
//! `.ci/run` (its release test binary, run directly; by hand, `cargo test
//! --test readme -- --ignored`, a debug build).

use std::path::PathBuf;
use std::process::Command;

/// One command of a document and what it is expected to print.
#[derive(Debug)]
struct Example {
    /// 1-based line in the document.
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

/// The documents whose commands run, in the order they run (see the
/// module's comment), as paths from the repository's root, each with its
/// commands.
fn documents(repo: &std::path::Path) -> Vec<(String, Vec<Example>)> {
    let mut docs: Vec<String> = std::fs::read_dir(repo.join("docs"))
        .expect("docs/ is there")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md") && n != "GUIDE.md")
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    let mut paths = vec!["README.md".to_string(), "docs/GUIDE.md".to_string()];
    paths.extend(docs);
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(repo.join(&path))
                .unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
            let ex = examples(&text);
            (path, ex)
        })
        .filter(|(_, ex)| !ex.is_empty())
        .collect()
}

#[test]
fn the_documents_run_in_their_order_and_show_commands() {
    let docs = documents(&repo());
    let names: Vec<&str> = docs.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names[..2], ["README.md", "docs/GUIDE.md"], "{names:?}");
    assert!(names[2..].windows(2).all(|w| w[0] < w[1]), "{names:?}");
    for (path, ex) in &docs {
        assert!(ex.len() >= 3, "{path} shows {} command(s)", ex.len());
    }
    let count = |p: &str| docs.iter().find(|(q, _)| q == p).map_or(0, |d| d.1.len());
    assert!(count("README.md") >= 10, "the README shows its commands");
    assert!(count("docs/GUIDE.md") >= 50, "the guide shows its commands");
    assert!(
        count("docs/CLI.md") >= 3,
        "the CLI reference shows commands"
    );
}

/// A bash script that runs `examples` one by one in one session (no
/// subshells: variables carry over), each command's output to its own file
/// in `dir` and its status to another, so that a failing command does not
/// stop the rest.
fn script(examples: &[Example], dir: &std::path::Path) -> String {
    let mut script = String::from("set -o pipefail\n");
    for (k, ex) in examples.iter().enumerate() {
        script.push_str(&format!(
            "{{ {}\n}} > {dir}/out{k} 2>&1; echo $? > {dir}/rc{k}\n",
            ex.command,
            dir = dir.display()
        ));
    }
    script
}

/// What went wrong with the commands of `path` that ran in `dir`: a
/// message each, naming the document's line.
fn failures(path: &str, examples: &[Example], dir: &std::path::Path) -> Vec<String> {
    let mut failures = Vec::new();
    for (k, ex) in examples.iter().enumerate() {
        let out = std::fs::read_to_string(dir.join(format!("out{k}"))).unwrap_or_default();
        let rc: i32 = std::fs::read_to_string(dir.join(format!("rc{k}")))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(-1);
        let must_fail = ex.expected.iter().any(|l| l.contains("error:"));
        if must_fail == (rc == 0) {
            failures.push(format!(
                "{path}:{}: `{}` exited with {rc} (expected {}):\n{out}",
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
                "{path}:{}: `{}` printed:\n{out}\nbut {path} shows:\n{}",
                ex.line,
                ex.command,
                ex.expected.join("\n")
            ));
        }
    }
    failures
}

#[test]
#[ignore = "builds a fresh clone in release mode; run by .ci/run"]
fn every_documented_command_runs_as_written_on_a_fresh_clone() {
    let repo = repo();
    let docs = documents(&repo);

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
    // the clone's own four crates are compiled. Run through cargo, this test
    // is a debug build (cargo locks target/debug for it, the clone locks
    // target/release); `.ci/run` runs its release binary without cargo.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target"));
    std::os::unix::fs::symlink(&target, clone.join("target")).unwrap();

    // One bash session a document, in order, in the one clone.
    let mut failures_all = Vec::new();
    for (n, (path, examples)) in docs.iter().enumerate() {
        let dir = base.join(format!("doc{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let status = Command::new("bash")
            .arg("-c")
            .arg(script(examples, &dir))
            .current_dir(&clone)
            .status()
            .unwrap();
        assert!(status.success() || status.code().is_some());
        failures_all.extend(failures(path, examples, &dir));
    }
    let status = run(Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&clone));
    if !status.is_empty() {
        failures_all.push(format!(
            "the documents' commands changed the clone:\n{status}"
        ));
    }
    if failures_all.is_empty() {
        let _ = std::fs::remove_dir_all(&base);
    }
    assert!(failures_all.is_empty(), "{}", failures_all.join("\n\n"));
}
