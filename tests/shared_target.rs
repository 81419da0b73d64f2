//! Two checkouts that share one target directory both build (issue 20,
//! item 0).
//!
//! Cargo compiles a build script once per target directory and reuses the
//! compiled script for another checkout of the same package. `build.rs` once
//! read `CARGO_MANIFEST_DIR` with `env!`, at its own compile time, so the
//! reused script looked for the published tests in the first checkout: once
//! that was deleted (the README test's clone is), every later build of
//! the second one panicked. The reproducer: build copy A, delete it, build
//! copy B with the same `CARGO_TARGET_DIR`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Copies the tracked files the core crate's build needs (everything but
/// the suites and results) from `repo` into `to`.
fn copy_checkout(repo: &Path, to: &Path) {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(repo)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git ls-files failed");
    for name in out.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).expect("UTF-8 path");
        if name.starts_with("suites/") || name.starts_with("results/") {
            continue;
        }
        let from = repo.join(name);
        if !from.is_file() {
            continue; // deleted in the working tree
        }
        let dest = to.join(name);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&from, &dest).unwrap();
    }
}

fn check(checkout: &Path, target: &Path) -> std::process::Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(cargo)
        .args([
            "check",
            "--offline",
            "--quiet",
            "-p",
            "progress_litmus",
            "--lib",
        ])
        .current_dir(checkout)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs")
}

#[test]
fn two_checkouts_share_one_target_directory() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let base = std::env::temp_dir().join(format!("axb-shared-target-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (a, b, target) = (base.join("a"), base.join("b"), base.join("target"));
    copy_checkout(&repo, &a);
    copy_checkout(&repo, &b);

    let first = check(&a, &target);
    assert!(
        first.status.success(),
        "first checkout: {}",
        String::from_utf8_lossy(&first.stderr)
    );
    std::fs::remove_dir_all(&a).unwrap();
    let second = check(&b, &target);
    let _ = std::fs::remove_dir_all(&base);
    assert!(
        second.status.success(),
        "second checkout, after the first was deleted: {}",
        String::from_utf8_lossy(&second.stderr)
    );
}
