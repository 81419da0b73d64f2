//! What the command-line tests of `backends` share: the binary with its
//! build cache in the test's scratch space (never the user's ~/.cache),
//! scratch directories, published tests, and the shape of a clean failure.
//! Each test file that needs them says `mod common;`; not every file uses
//! every helper.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_backends");

/// A fresh, empty directory for one test: `<target tmp>/<test file>-<name>`.
pub fn scratch(name: &str) -> PathBuf {
    let file = module_path!().split("::").next().unwrap_or("test");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{file}-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The binary, its build cache in the target directory.
pub fn bin() -> Command {
    let mut c = Command::new(BIN);
    c.env(
        "XDG_CACHE_HOME",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("cache"),
    );
    c
}

pub fn backends(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Failed with `code`, without a panic, saying every one of `needles`.
pub fn assert_clean_failure(o: &Output, code: i32, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` not in: {e}");
    }
}

/// The published test `name` (without `.txt`).
pub fn published(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../data/oopsla21/tests")
        .join(format!("{name}.txt"))
}

/// `dir/suite`, a directory holding copies of the published tests `names`.
pub fn published_suite(dir: &Path, names: &[&str]) -> PathBuf {
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    for t in names {
        std::fs::copy(published(t), suite.join(format!("{t}.txt"))).unwrap();
    }
    suite
}

/// Whether the tools are there: false (skip) only when skipping is asked
/// for (`BACKENDS_SKIP_TOOLCHAIN_TESTS=1`); a missing tool otherwise fails
/// the test with the install hint.
pub fn tools(needed: &[backends::toolchain::Tool]) -> bool {
    let skip = std::env::var("BACKENDS_SKIP_TOOLCHAIN_TESTS").is_ok_and(|v| v == "1");
    for &tool in needed {
        if let Err(e) = backends::toolchain::find(tool) {
            if skip {
                eprintln!("skipped (BACKENDS_SKIP_TOOLCHAIN_TESTS=1): {e}");
                return false;
            }
            panic!("{e} (or set BACKENDS_SKIP_TOOLCHAIN_TESTS=1 to skip toolchain tests)");
        }
    }
    true
}
