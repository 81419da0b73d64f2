//! Shared helpers of the integration tests: the published suite.
#![allow(dead_code)]

#[path = "../../../tests/support/scratch.rs"]
mod scratch;
pub use scratch::Scratch;

use progress_litmus::axb::test::Test;
use std::path::PathBuf;

/// The published tests, directory of artifact-format files.
pub fn published_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../data/oopsla21/tests"
    ))
}

/// The published tests of one configuration (`2t3i`), `(name, test)` in id
/// order.
pub fn published(config: &str) -> Vec<(String, Test)> {
    let mut out: Vec<(usize, String, Test)> = std::fs::read_dir(published_dir())
        .expect("the published tests are at data/oopsla21/tests")
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let stem = p.file_stem()?.to_str()?.to_string();
            let id: usize = stem.strip_prefix(config)?.strip_prefix('_')?.parse().ok()?;
            let src = std::fs::read_to_string(&p).unwrap();
            let t = progress_litmus::axb::text::parse(&src)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            Some((id, stem, t))
        })
        .collect();
    out.sort_by_key(|(id, _, _)| *id);
    out.into_iter().map(|(_, n, t)| (n, t)).collect()
}

/// A fresh, empty scratch folder for one test, named after the test
/// binary (`CARGO_CRATE_NAME`), the process and `name`.
/// Removed when dropped, unless the test fails.
pub fn scratch(name: &str) -> Scratch {
    Scratch::new(concat!("synth-", env!("CARGO_CRATE_NAME")), name)
}

/// Runs the `synth` binary in `dir` with `args`.
pub fn synth(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_synth"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// A run's standard error as text.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `o`, asserting that the run succeeded (its standard error otherwise).
pub fn ok(o: std::process::Output) -> std::process::Output {
    assert!(o.status.success(), "{}", stderr(&o));
    o
}
