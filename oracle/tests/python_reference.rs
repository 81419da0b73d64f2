//! A third opinion: benches/reference_oracle.py, a straightforward Python
//! implementation written from docs/SPEC.md alone (one product space per
//! base model, dictionaries of tuples), must print the same CSV as `oracle
//! classify --format csv` on the published tests and on a sample of the
//! complete suites (every test in release builds). Skipped, with a message,
//! where python3 is missing.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python3() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn reference(args: &[PathBuf], every: usize) -> String {
    let out = Command::new("python3")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/reference_oracle.py"))
        .arg("--every")
        .arg(every.to_string())
        .args(args)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn oracle(args: &[PathBuf]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_oracle"))
        .args(["classify", "--format", "csv"])
        .args(args)
        .output()
        .expect("run oracle");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_python_reference_agrees_on_the_published_tests() {
    if !python3() {
        eprintln!("skipped: no python3 to run benches/reference_oracle.py");
        return;
    }
    let dir = vec![root().join("data/oopsla21/tests")];
    let ours = oracle(&dir);
    assert_eq!(ours.lines().count(), 484);
    assert_eq!(reference(&dir, 1), ours);
}

#[test]
fn the_python_reference_agrees_on_the_complete_suites() {
    if !python3() {
        eprintln!("skipped: no python3 to run benches/reference_oracle.py");
        return;
    }
    let suites: Vec<PathBuf> = ["2t2i", "2t3i", "2t4i", "3t3i", "3t4i"]
        .iter()
        .map(|c| root().join(format!("suites/{c}/{c}.ron")))
        .collect();
    let ours = oracle(&suites);
    let rows: HashMap<&str, &str> = ours
        .lines()
        .skip(1)
        .map(|l| (l.split(',').next().unwrap(), l))
        .collect();
    assert_eq!(rows.len(), 11_450);
    let every = if cfg!(debug_assertions) { 23 } else { 1 };
    let theirs = reference(&suites, every);
    let mut lines = theirs.lines();
    assert_eq!(lines.next(), ours.lines().next(), "header");
    let mut checked = 0;
    for l in lines {
        let name = l.split(',').next().unwrap();
        assert_eq!(Some(&l), rows.get(name), "{name}");
        checked += 1;
    }
    assert_eq!(checked, 11_450usize.div_ceil(every));
}
