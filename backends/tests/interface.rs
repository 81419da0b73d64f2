//! One interface (issue 10, item 7): `-o/--out` on every command that
//! writes, `-o -` for stdout where the output is one stream, the same flag
//! names for the same ideas (`emit --mapping` and `run --mappings` take
//! both spellings and `all`), `--format json` wherever data is printed,
//! status on stderr only, exit status 2 for bad input or usage and 1 for
//! the rest, documented in every `--help`. The reproducers: `run
//! --mappings all` was rejected; the canary's message says `--no-canary`
//! but `run` rejected it; `-o -` created a file named `-`. (`report --test`
//! was an alias of `--tests` until issue 23 made `--test` a test's name in
//! every tool.)

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `backends ARGS` in `cwd`, the build cache in the target directory.
fn backends_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("cache"),
        )
        .output()
        .unwrap()
}

fn suite(dir: &Path) -> PathBuf {
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    for t in ["2t2i_4", "2t3i_10"] {
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../data/oopsla21/tests")
                .join(format!("{t}.txt")),
            suite.join(format!("{t}.txt")),
        )
        .unwrap();
    }
    suite
}

#[test]
fn every_help_documents_the_exit_statuses_and_usage_errors_are_2() {
    let dir = scratch("help");
    for cmd in [&[][..], &["emit"], &["run"], &["import"], &["report"]] {
        let mut argv = cmd.to_vec();
        argv.push("--help");
        let o = backends_in(&dir, &argv);
        assert!(o.status.success());
        let text = stdout(&o);
        assert!(
            text.contains("Exit status: 0 success; 2 bad input or usage"),
            "{cmd:?}: {text}"
        );
    }
    for cmd in ["emit", "run", "import"] {
        let o = backends_in(&dir, &[cmd, "--help"]);
        let text = stdout(&o);
        assert!(text.contains("-o, --out <"), "{cmd}: {text}");
        assert!(text.contains("--format <FORMAT>"), "{cmd}: {text}");
    }
    let o = backends_in(&dir, &["report", "--help"]);
    assert!(stdout(&o).contains("-o, --out <FILE>"), "{}", stdout(&o));
    // --cuda-on-cpu is documented, not hidden.
    assert!(stdout(&backends_in(&dir, &["run", "--help"])).contains("--cuda-on-cpu"));
    let o = backends_in(&dir, &["run", "--no-such-flag"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn mappings_are_spelled_alike_in_emit_and_run() {
    let dir = scratch("mappings");
    let suite = suite(&dir);
    // emit: --mapping and --mappings, a list or `all`.
    for (flag, list, files) in [
        ("--mapping", "all", 6),
        ("--mappings", "plain,chunked", 4),
        ("--mapping", "chunked", 2),
    ] {
        let out = dir.join(format!("glsl-{flag}-{list}"));
        let o = backends_in(
            &dir,
            &[
                "emit",
                "--target",
                "glsl",
                flag,
                list,
                s(&suite),
                "-o",
                s(&out),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            std::fs::read_dir(&out).unwrap().count(),
            files,
            "{flag} {list}"
        );
    }
    // run: --mappings all (the reproducer) and --mapping LIST.
    for (flag, list, runs) in [
        ("--mappings", "all", 2 * 3),
        ("--mapping", "plain,chunked", 2 * 2),
    ] {
        let out = dir.join(format!("run-{flag}"));
        let o = backends_in(
            &dir,
            &[
                "run",
                "--target",
                "cpp",
                s(&suite),
                flag,
                list,
                "--iterations",
                "1",
                "--instances",
                "4",
                "-o",
                s(&out),
                "--format",
                "json",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let summary: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(summary["runs"], runs, "{flag} {list}");
    }
    let o = backends_in(
        &dir,
        &[
            "run",
            "--target",
            "cpp",
            s(&suite),
            "--mappings",
            "plain,diagonal",
            "-o",
            "x",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("expected plain, round-robin, chunked or all"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn no_canary_is_a_flag_of_run_and_reaches_the_program() {
    let dir = scratch("canary");
    let suite = suite(&dir);
    let out = dir.join("out");
    let o = backends_in(
        &dir,
        &[
            "run",
            "--target",
            "cpp",
            s(&suite),
            "--no-canary",
            "-o",
            s(&out),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(
        "--no-canary is for the targets whose program runs a canary (cuda, vulkan and wgpu); the cpp program has none"
    ));
    let o = backends_in(
        &dir,
        &[
            "run",
            "--target",
            "cuda",
            "--cuda-on-cpu",
            "--no-canary",
            s(&suite),
            "--mappings",
            "plain",
            "--iterations",
            "1",
            "--deadline-ms",
            "2000",
            "-o",
            s(&out),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let device: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("cuda.device.json")).unwrap())
            .unwrap();
    assert_eq!(
        device["options"]["program_args"],
        serde_json::json!(["--no-canary"])
    );
    // The same campaign as with --program-arg=--no-canary: it resumes.
    let o = backends_in(
        &dir,
        &[
            "run",
            "--target",
            "cuda",
            "--cuda-on-cpu",
            "--program-arg=--no-canary",
            s(&suite),
            "--mappings",
            "plain",
            "--iterations",
            "1",
            "--deadline-ms",
            "2000",
            "-o",
            s(&out),
            "--resume",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("(0 now)"), "{}", stderr(&o));
}

#[test]
fn outputs_go_where_o_says_and_dash_is_stdout_for_one_stream() {
    let dir = scratch("out");
    let suite = suite(&dir);
    // emit: one program to stdout, no file named `-`.
    let o = backends_in(&dir, &["emit", "--target", "cpp", s(&suite), "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("// Progress litmus tests: 2 tests"));
    assert!(!dir.join("-").exists());
    for argv in [
        vec!["emit", "--target", "glsl", s(&suite), "-o", "-"],
        vec!["emit", "--target", "cpp", s(&suite), "-o", "-", "--check"],
        vec!["run", "--target", "cpp", s(&suite), "-o", "-"],
        vec![
            "import",
            "--target",
            "cpp",
            s(&suite),
            "--lines",
            "x",
            "-o",
            "-",
        ],
    ] {
        let o = backends_in(&dir, &argv);
        assert_eq!(o.status.code(), Some(2), "{argv:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("give a directory"),
            "{argv:?}: {}",
            stderr(&o)
        );
        assert!(!dir.join("-").exists());
    }
    // emit --format json: what was written, on stdout; status only on stderr.
    let prog = dir.join("prog");
    let o = backends_in(
        &dir,
        &[
            "emit",
            "--target",
            "cpp",
            s(&suite),
            "--name",
            "tests",
            "-o",
            s(&prog),
            "--check",
            "--format",
            "json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(summary["files"], serde_json::json!(["tests.cpp"]));
    assert_eq!(summary["checked"], true);

    // A campaign: text summary on stderr, nothing on stdout.
    let results = dir.join("results");
    let o = backends_in(
        &dir,
        &[
            "run",
            "--target",
            "cpp",
            s(&suite),
            "--mappings",
            "plain",
            "--iterations",
            "1",
            "--name",
            "c",
            "-o",
            s(&results),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("c: 2 runs (2 now)"), "{}", stderr(&o));

    // import --format json.
    let lines = dir.join("runs.jsonl");
    let run = Command::new(prog.join("tests"))
        .args(["--mapping", "plain", "--deadline-ms", "5000"])
        .output()
        .unwrap();
    std::fs::write(&lines, run.stdout).unwrap();
    let o = backends_in(
        &dir,
        &[
            "import",
            "--target",
            "cpp",
            s(&suite),
            "--lines",
            s(&lines),
            "--name",
            "i",
            "-o",
            s(&results),
            "--format",
            "json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(summary["runs"], 2);

    // report: -o FILE, -o - (stdout), --svg - with the report in a file.
    // `--test` is a test's name in every tool (issue 23 item 7), so it is
    // no longer a spelling of --tests: refused, with --tests named.
    let text = backends_in(&dir, &["report", s(&results), "--tests", s(&suite)]);
    assert!(text.status.success(), "{}", stderr(&text));
    let old = backends_in(&dir, &["report", s(&results), "--test", s(&suite)]);
    assert_eq!(old.status.code(), Some(2));
    assert!(stderr(&old).contains("'--tests'"), "{}", stderr(&old));
    let dash = backends_in(
        &dir,
        &["report", s(&results), "--tests", s(&suite), "-o", "-"],
    );
    assert!(dash.status.success(), "{}", stderr(&dash));
    assert_eq!(stdout(&dash), stdout(&text));
    let file = dir.join("REPORT.txt");
    let o = backends_in(
        &dir,
        &[
            "report",
            s(&results),
            "--tests",
            s(&suite),
            "-o",
            s(&file),
            "--svg",
            "-",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), stdout(&text));
    assert!(stdout(&o).starts_with("<svg"), "{}", stdout(&o));
    let o = backends_in(
        &dir,
        &["report", s(&results), "--tests", s(&suite), "--svg", "-"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("both go to stdout"), "{}", stderr(&o));
    assert!(!dir.join("-").exists());
}
