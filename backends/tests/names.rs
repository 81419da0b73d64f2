//! Test names end to end (issue 10, item 4). The reproducers: `backends
//! run` panicked at the end of a campaign on a test named with `"` or a
//! line break (the CSV writer asserted), losing that configuration's CSV,
//! and a name with `,` broke the generated program's `--test` list. Now a
//! name the programs can carry runs, is journaled, written to a quoted
//! CSV and reported as it is; one they cannot carry is refused before
//! anything is built or run.
//!
//! Names reach `backends` through the loaders of the `axb` crate, which
//! may refuse some of these names themselves (a name rule enforced at
//! load): a refusal there, clean and before any work, passes too.

mod common;
use common::*;
use progress_litmus::axb::suite::{Entry, Suite};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A RON suite of one-thread tests that terminate, named `names`.
fn suite(dir: &Path, names: &[&str]) -> PathBuf {
    let test = progress_litmus::axb::text::parse("THREAD0\natomic_chk_branch(0,1,0)\n").unwrap();
    let suite = Suite {
        name: "odd".into(),
        note: String::new(),
        tests: names
            .iter()
            .map(|n| Entry::new(n.to_string(), test.clone()))
            .collect(),
    };
    let path = dir.join("odd.ron");
    std::fs::write(&path, progress_litmus::axb::load::suite_to_ron(&suite)).unwrap();
    path
}

/// Whether the loaders refused the suite (cleanly, naming it); the test
/// then has nothing more to check.
fn refused_at_load(o: &Output, suite: &Path) -> bool {
    let e = stderr(o);
    assert!(!e.contains("panicked"), "{e}");
    if o.status.code() == Some(2) && e.contains(s(suite)) && !e.contains("cannot be carried") {
        eprintln!("the loader refused the names: {e}");
        return true;
    }
    false
}

const ODD: [&str; 4] = ["say \"hi\"", "a,b", "back\\slash", "x,\"y\",\\z"];

#[test]
fn odd_names_run_and_are_written_quoted_and_reported_as_they_are() {
    let dir = scratch("odd");
    let suite = suite(&dir, &ODD);
    let out = dir.join("out");
    let o = backends(&[
        "run",
        "--target",
        "cpp",
        s(&suite),
        "--iterations",
        "2",
        "--instances",
        "3",
        "--name",
        "n",
        "--out",
        s(&out),
    ]);
    if refused_at_load(&o, &suite) {
        assert!(!out.exists());
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("1t1i/cpp/n.csv")).unwrap();
    assert!(csv.contains("\n\"say \"\"hi\"\"\",P,P,P,P\n"), "{csv}");
    assert!(csv.contains("\n\"a,b\",P,P,P,P\n"), "{csv}");
    assert!(csv.contains("\nback\\slash,P,P,P,P\n"), "{csv}");
    assert!(csv.ends_with("Total failures:,0,0,0,0\n"), "{csv}");
    let r = backends(&["report", s(&out), "--tests", s(&suite), "--format", "json"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let j = backends(&["report", s(&out), "--tests", s(&suite)]);
    assert!(j.status.success(), "{}", stderr(&j));
    assert!(
        String::from_utf8_lossy(&j.stdout).contains("(4 tests observed)"),
        "{}",
        String::from_utf8_lossy(&j.stdout)
    );
    // Every test ran under its own name: 4 tests x 3 mappings x 2.
    let journal = std::fs::read_to_string(out.join("n.journal.jsonl")).unwrap();
    for name in ODD {
        let quoted = serde_json::to_string(name).unwrap();
        let runs = journal
            .lines()
            .filter(|l| l.contains(&format!("\"test\":{quoted},")))
            .count();
        assert_eq!(runs, 6, "{name}");
    }
}

#[test]
fn names_the_programs_cannot_carry_are_refused_before_any_work() {
    for (k, bad) in ["two\nlines", "tab\there", "", " padded", "ends\\"]
        .iter()
        .enumerate()
    {
        let dir = scratch(&format!("bad-{k}"));
        let suite = suite(&dir, &["fine", bad]);
        let out = dir.join("out");
        for argv in [
            vec!["run", "--target", "cpp", s(&suite), "--out", s(&out)],
            vec!["run", "--target", "vulkan", s(&suite), "--out", s(&out)],
            vec!["emit", "--target", "cpp", s(&suite), "--out", s(&out)],
            vec!["emit", "--target", "glsl", s(&suite), "--out", s(&out)],
            vec![
                "import",
                "--target",
                "cpp",
                s(&suite),
                "--lines",
                s(&suite),
                "--out",
                s(&out),
            ],
        ] {
            let o = backends(&argv);
            assert!(!out.exists(), "{bad:?} {argv:?}: something was written");
            if refused_at_load(&o, &suite) {
                continue;
            }
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{bad:?} {argv:?}: {e}");
            assert!(e.contains("cannot be carried"), "{bad:?} {argv:?}: {e}");
            assert_eq!(e.lines().count(), 1, "one line: {e}");
        }
    }
}

/// The program's `--test` list: `\,` is a comma in a name, `\\` a
/// backslash, so `backends run` (and a user) can name any test.
#[test]
fn an_emitted_program_selects_names_with_commas_and_backslashes() {
    let dir = scratch("program");
    let suite = suite(&dir, &ODD);
    let prog = dir.join("prog");
    let o = backends(&[
        "emit",
        "--target",
        "cpp",
        s(&suite),
        "--name",
        "tests",
        "--out",
        s(&prog),
        "--check",
    ]);
    if refused_at_load(&o, &suite) {
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let run = |list: &str| {
        Command::new(prog.join("tests"))
            .args([
                &format!("--test={list}"),
                "--mapping=plain",
                "--deadline-ms=5000",
            ])
            .output()
            .unwrap()
    };
    let o = run("a\\,b,back\\\\slash,x\\,\"y\"\\,\\\\z");
    assert!(o.status.success(), "{}", stderr(&o));
    let tests: Vec<String> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["test"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(tests, ["a,b", "back\\slash", "x,\"y\",\\z"]);
    // Unescaped, `a,b` is two names, neither of them a test.
    let o = run("a,b");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no test named `a`"), "{}", stderr(&o));
}
