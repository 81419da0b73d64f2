//! The `oracle` binary as users run it: formats, bad input, exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn oracle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oracle"))
        .args(args)
        .output()
        .expect("run oracle")
}

fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("oracle-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn csv_matches_the_published_columns() {
    let out = oracle(&["classify", "--format", "csv", s(&tests_dir())]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "test,HSA,OBE,LOBE,WEAK_FAIR,HSA_STRONG,OBE_STRONG,LOBE_STRONG,STRONG_FAIR,HSA_OBE,HSA_OBE_STRONG,UNFAIR"
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 483);
    let mut sorted = rows.clone();
    sorted.sort();
    assert_eq!(rows, sorted, "rows sorted by name");
    assert!(rows.contains(&"2t2i_3,P,F,P,P,P,F,P,P,P,P,F"));
}

#[test]
fn table_prints_the_papers_table_4() {
    let out = oracle(&["table", s(&tests_dir())]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "Model  Weak Fairness          Strong Fairness\n       D. Tests  C. Tests     D. Tests  C. Tests\nHSA          90        90           94        94\nOBE          12        12            0         0\nLOBE         20       122           16       110\nfull        201       323           50       160\n"
    );
}

#[test]
fn malformed_files_get_one_error_line_with_position() {
    let d = scratch("bad");
    let cases: [(&str, &str, &str); 6] = [
        ("syntax.txt", "THREAD0\natomic_store(0,1\n", ":2:"),
        (
            "past_end.txt",
            "THREAD0\natomic_chk_branch(0,0,5)\n",
            "past_end.txt:2:23: jump target 5 is past END",
        ),
        (
            "arity.txt",
            "THREAD0\natomic_exch_branch(0,1,0)\n",
            "takes 4 arguments",
        ),
        (
            "empty.txt",
            "THREAD0\n\nTHREAD1\natomic_store(0,1)\n",
            "empty.txt:1:1: THREAD0 has no instruction",
        ),
        (
            "bad.ron",
            "Test(threads: [[(loc: 0, check: 0, jump: Up)]])",
            "bad.ron:1:",
        ),
        ("test.json", "{}", "unknown format `.json`"),
    ];
    for (name, body, want) in cases {
        let p = d.join(name);
        std::fs::write(&p, body).unwrap();
        let out = oracle(&["classify", s(&p)]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        for format in ["table", "csv", "json"] {
            let out = oracle(&["classify", "--format", format, s(&p)]);
            assert_eq!(out.status.code(), Some(2), "{name} {format}");
            assert!(out.stdout.is_empty(), "{name} {format}: no empty table");
        }
    }
}

#[test]
fn one_bad_file_in_a_directory_does_not_stop_the_others() {
    let d = scratch("dir");
    for name in ["2t2i_0", "2t2i_3"] {
        std::fs::copy(
            tests_dir().join(format!("{name}.txt")),
            d.join(format!("{name}.txt")),
        )
        .unwrap();
    }
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(d.join("sub/broken.txt"), "THREAD0\nnonsense\n").unwrap();
    let out = oracle(&["classify", "--format", "csv", s(&d)]);
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("broken.txt:2:1"), "{err}");
}

#[test]
fn suites_label_and_classify_by_entry_name() {
    let d = scratch("suite");
    let suite = d.join("s.ron");
    let out = oracle(&[
        "label",
        "--name",
        "two",
        "-o",
        s(&suite),
        s(&tests_dir().join("2t2i_3.txt")),
        s(&tests_dir().join("2t2i_0.txt")),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = oracle(&["classify", "--format", "json", s(&suite)]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["test"], "2t2i_0");
    assert_eq!(v[1]["verdicts"]["OBE"], "F");
    assert_eq!(v[1]["verdicts"]["HSA"], "P");
    // A suite needs --test for explain.
    let out = oracle(&["explain", s(&suite), "--model", "HSA"]);
    assert_eq!(out.status.code(), Some(2));
    let out = oracle(&["explain", s(&suite), "--test", "2t2i_3", "--model", "OBE"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("2t2i_3 under weak OBE: F"), "{text}");
    assert!(text.contains("repeats forever"), "{text}");
}

#[test]
fn lts_dot_names_threads_instructions_and_f() {
    let t = tests_dir().join("2t2i_3.txt");
    let out = oracle(&["lts", s(&t), "--model", "LOBE", "--dot"]);
    assert!(out.status.success());
    let dot = String::from_utf8(out.stdout).unwrap();
    assert!(dot.starts_with("digraph \"2t2i_3\" {"));
    assert!(dot.contains("F={"), "{dot}");
    assert!(dot.contains("peripheries=2"), "{dot}");
    let out = oracle(&["lts", s(&t), "--dot"]);
    let dot = String::from_utf8(out.stdout).unwrap();
    assert!(dot.contains("Mem=[0] pc=[0,0]"), "{dot}");
}

#[test]
fn unknown_model_is_a_clear_error() {
    let out = oracle(&[
        "explain",
        s(&tests_dir().join("2t2i_3.txt")),
        "--model",
        "LOBSTER",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unknown model `LOBSTER`"), "{err}");
}
