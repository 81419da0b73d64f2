//! The build cache of `backends run` (issue 10, item 5). The reproducer:
//! `backends run` executed `$TMPDIR/axb-backends-run/<target>-<hash>/tests`
//! if it existed, a predictable path in world-writable /tmp, so another
//! local user could plant a program that the next campaign ran. Now the
//! cache is private (`$XDG_CACHE_HOME/axb/backends-run`, mode 0700, owned
//! by the user, checked before use) and an entry runs only if every file
//! has the SHA-256 recorded when it was built.

mod common;
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A suite of one published test.
fn suite(dir: &Path) -> PathBuf {
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests/2t2i_4.txt"),
        suite.join("2t2i_4.txt"),
    )
    .unwrap();
    suite
}

/// `backends ARGS` with TMPDIR and XDG_CACHE_HOME in `dir`.
fn backends(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("TMPDIR", dir.join("tmp"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .unwrap()
}

/// A small campaign of the suite in `dir`, named `name`.
fn run(dir: &Path, name: &str) -> Output {
    backends(
        dir,
        &[
            "run",
            "--target",
            "cpp",
            s(&dir.join("suite")),
            "--mappings",
            "plain",
            "--iterations",
            "1",
            "--name",
            name,
            "--out",
            s(&dir.join("out")),
        ],
    )
}

/// An executable that leaves `marker` behind if it is ever run.
fn plant(path: &Path, marker: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!("#!/bin/sh\ntouch '{}'\nexit 0\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// FNV-1a, 64 bits, as the old cache named its directories.
fn fnv64(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// The cache entries (directories named by a SHA-256) under `dir`.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let root = dir.join("cache/axb/backends-run");
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().len() == 64)
        .collect();
    v.sort();
    v
}

#[test]
fn a_program_planted_at_the_old_tmp_path_is_never_run() {
    let dir = scratch("old-path");
    let suite = suite(&dir);
    // The old path: the hash of the program `backends emit` writes for the
    // suite (the same source `run` compiles) and the build options.
    let prog = dir.join("prog");
    let o = backends(
        &dir,
        &[
            "emit",
            "--target",
            "cpp",
            s(&suite),
            "--name",
            "tests",
            "--out",
            s(&prog),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let source = std::fs::read(prog.join("tests.cpp")).unwrap();
    let hash = fnv64(&source);
    let old = dir.join("tmp/axb-backends-run").join(format!(
        "cpp-{}",
        fnv64(format!("{hash} [] false").as_bytes())
    ));
    let marker = dir.join("PLANTED-PROGRAM-RAN");
    plant(&old.join("tests"), &marker);
    std::fs::set_permissions(dir.join("tmp"), std::fs::Permissions::from_mode(0o1777)).unwrap();

    let o = run(&dir, "c");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!marker.exists(), "the planted program was run");
    // The campaign compiled exactly the program whose old path was planted.
    let device: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/c.device.json")).unwrap())
            .unwrap();
    assert_eq!(device["options"]["program_fnv64"], hash);
    let root = dir.join("cache/axb/backends-run");
    for d in [dir.join("cache/axb"), root.clone()] {
        let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", d.display());
    }
    let entry = &entries(&dir)[0];
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(entry.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["files"]["tests.cpp"].as_str().unwrap().len(), 64);
    assert!(manifest["files"]["tests"].is_string());
}

#[test]
fn a_cached_program_that_is_not_what_was_built_is_rebuilt_not_run() {
    let dir = scratch("tampered");
    suite(&dir);
    let o = run(&dir, "first");
    assert!(o.status.success(), "{}", stderr(&o));
    let entry = entries(&dir).remove(0);
    // Reused as it is.
    let o = run(&dir, "second");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("compiling"), "{}", stderr(&o));
    // The executable replaced: its SHA-256 no longer matches the manifest.
    let marker = dir.join("TAMPERED-PROGRAM-RAN");
    plant(&entry.join("tests"), &marker);
    let o = run(&dir, "third");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!marker.exists(), "the tampered program was run");
    let e = stderr(&o);
    assert!(
        e.contains("not using this cached build: `tests` is not what was built")
            && e.contains("compiling"),
        "{e}"
    );
    // A file added to the entry is refused alike.
    std::fs::write(entry.join("extra"), "x").unwrap();
    let o = run(&dir, "fourth");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`extra` is not what was built"),
        "{}",
        stderr(&o)
    );
    assert_eq!(entries(&dir), [entry]);
}

#[test]
fn a_cache_directory_others_could_write_or_own_is_refused() {
    let dir = scratch("open");
    suite(&dir);
    let axb = dir.join("cache/axb");
    std::fs::create_dir_all(&axb).unwrap();
    std::fs::set_permissions(&axb, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = run(&dir, "c");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("mode 0777"), "{}", stderr(&o));
    assert!(stderr(&o).contains("chmod 700"), "{}", stderr(&o));
    assert!(!dir.join("out/c.journal.jsonl").exists());

    // A link to a directory elsewhere.
    std::fs::remove_dir_all(&axb).unwrap();
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &axb).unwrap();
    let o = run(&dir, "c");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not a plain directory"),
        "{}",
        stderr(&o)
    );

    // Another user's directory (as root, the test can make one).
    std::fs::remove_file(&axb).unwrap();
    std::fs::create_dir_all(&axb).unwrap();
    std::fs::set_permissions(&axb, std::fs::Permissions::from_mode(0o700)).unwrap();
    // SAFETY: plain system calls on a path of this test.
    let is_root = unsafe { libc::geteuid() } == 0;
    if is_root {
        let c = std::ffi::CString::new(s(&axb)).unwrap();
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
        let o = run(&dir, "c");
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("belongs to user 65534"),
            "{}",
            stderr(&o)
        );
    }

    // A shared cache base, writable by all and not sticky.
    let shared = scratch("open-base");
    suite(&shared);
    std::fs::create_dir_all(shared.join("cache")).unwrap();
    std::fs::set_permissions(shared.join("cache"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = run(&shared, "c");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("not sticky"), "{}", stderr(&o));
}

#[test]
fn a_compiler_in_a_world_writable_directory_is_not_run() {
    let dir = scratch("path");
    suite(&dir);
    let bin = dir.join("bin");
    let marker = dir.join("PLANTED-COMPILER-RAN");
    plant(&bin.join("g++"), &marker);
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = Command::new(BIN)
        .args([
            "run",
            "--target",
            "cpp",
            s(&dir.join("suite")),
            "--out",
            s(&dir.join("out")),
        ])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("refusing to run it"), "{}", stderr(&o));
    assert!(!marker.exists());
}
