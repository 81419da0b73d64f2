//! Regression tests from the adversarial pass over tests identified by
//! content and GPUs as devices (issue 44 items 1 and 3), each built from
//! its reproducer.

mod common;

use common::{assert_clean_failure, repo, stderr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn backends_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_backends"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn backends(args: &[&str]) -> Output {
    backends_in(&repo(""), args)
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("identity-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn out(o: &Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `db import` of `files` as setup `S` of GPU `G`.
fn gpu_import(db: &Path, files: &Path) -> Output {
    backends(&[
        "db",
        "import",
        "--db",
        s(db),
        "--gpu",
        "G",
        "--setup",
        "S",
        s(files),
    ])
}

/// The artifact's Pixel 5 Vulkan files (a column set per subgroup
/// setting: three devices in one file) copied as `dev.csv`.
fn variant_files(dir: &Path) -> PathBuf {
    let root = dir.join("ev");
    for c in std::fs::read_dir(repo("data/empirical")).unwrap().flatten() {
        let src = c.path().join("Vulkan/pixel5-adreno-2021-02-06.csv");
        if src.is_file() {
            let to = root.join(c.file_name()).join("Vulkan");
            std::fs::create_dir_all(&to).unwrap();
            std::fs::copy(&src, to.join("dev.csv")).unwrap();
        }
    }
    root
}

/// Finding 1: `--gpu` merged a file's variant devices into one setup.
/// Each variant is now a setup of its own.
#[test]
fn a_files_variant_devices_stay_apart_under_one_gpu() {
    let dir = scratch("variants");
    let files = variant_files(&dir);
    let db = dir.join("g.sqlite");
    out(&gpu_import(&db, &files));
    let text = out(&backends(&["report", "--db", s(&db)]));
    for row in [
        "  G (S) ",
        "  G (S, diff-subgroup-256) ",
        "  G (S, same-subgroup-4) ",
    ] {
        assert!(text.contains(row), "{row}: {text}");
    }
    assert!(!text.contains("summed over 3 campaigns"), "{text}");
}

/// Finding 3: `--gpu`/`--setup` given for files already imported (a
/// version 3 database's, upgraded) were ignored. They are recorded.
#[test]
fn a_gpu_given_for_files_already_in_is_recorded() {
    let dir = scratch("again");
    let files = variant_files(&dir);
    let db = dir.join("g.sqlite");
    out(&backends(&["db", "import", "--db", s(&db), s(&files)]));
    let o = gpu_import(&db, &files);
    assert!(out(&o).contains("already in"), "{}", stderr(&o));
    let text = out(&backends(&["report", "--db", s(&db)]));
    assert!(text.contains("G (every setup)"), "{text}");
}

/// Finding 2: a device of no GPU named like a GPU's setup was summed into
/// it. The database is now refused, naming both.
#[test]
fn a_device_named_like_a_setup_is_refused_not_merged() {
    let dir = scratch("collide");
    let db = dir.join("g.sqlite");
    let files = variant_files(&dir);
    out(&gpu_import(&db, &files));
    let plain = dir.join("plain/2_thread_2_instruction/CUDA");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::copy(
        repo("data/empirical/2_thread_2_instruction/CUDA/laptop_940m-inter-workgroup.csv"),
        plain.join("G (S).csv"),
    )
    .unwrap();
    out(&backends(&[
        "db",
        "import",
        "--db",
        s(&db),
        s(&dir.join("plain")),
    ]));
    let o = backends(&["report", "--db", s(&db)]);
    assert_clean_failure(&o, 2, &["would both be read as G (S)"]);
    // And a GPU name that reads like a setup is refused at import.
    let o = backends(&[
        "db",
        "import",
        "--db",
        s(&db),
        "--gpu",
        "A (B)",
        "--setup",
        "C",
        s(&files),
    ]);
    assert_clean_failure(&o, 2, &["--gpu", "parentheses"]);
}

/// Finding 4: the folders above a relative results folder were not looked
/// in: reported from `results/`, `h200-complete` did not find its suite.
#[test]
fn a_relative_result_folder_finds_its_suite_from_the_folders_above() {
    let text = out(&backends_in(&repo("results"), &["report", "h200-complete"]));
    assert!(text.contains("verdicts of 5231 tests"), "{text}");
}

/// Finding 5: a recorded suite path of `/` was read whole (51 s, and the
/// error quoted a system file). Such a path is not read.
#[test]
fn a_recorded_suite_of_the_whole_disk_is_not_read() {
    let dir = scratch("root");
    let copy = dir.join("h");
    let src = repo("results/h200-complete");
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            let cuda = p.join("CUDA");
            let to = copy.join(e.file_name()).join("CUDA");
            std::fs::create_dir_all(&to).unwrap();
            for f in std::fs::read_dir(cuda).unwrap().flatten() {
                std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
            }
        } else if p.to_string_lossy().ends_with(".device.json") {
            let mut v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            v["options"]["suite"] = serde_json::json!("/");
            std::fs::write(copy.join(e.file_name()), v.to_string()).unwrap();
        }
    }
    let start = Instant::now();
    let o = backends_in(Path::new("/"), &["report", s(&copy)]);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert_clean_failure(&o, 2, &["fingerprint 5071bd425d29729a", "--tests"]);
}

/// Finding 6: `db export` wrote a complete suite's `2t2i_0` (not the
/// published program of that name) under the published id.
#[test]
fn export_refuses_a_program_that_is_not_the_published_one_of_its_name() {
    let dir = scratch("export");
    let db = dir.join("hc.sqlite");
    out(&backends(&[
        "db",
        "import",
        "--db",
        s(&db),
        "results/h200-complete",
    ]));
    let o = backends(&["db", "export", "--db", s(&db), "-o", s(&dir.join("exp"))]);
    assert_clean_failure(
        &o,
        2,
        &["a program other than the published test of that name"],
    );
    assert!(!dir.join("exp").join("2_thread_2_instruction").exists());
}

/// Finding 7: a test id holding the separator of the report's keys was
/// read as a suite's fingerprint. It is refused.
#[test]
fn a_test_id_with_a_control_character_is_refused() {
    let dir = scratch("ctl");
    let csv = dir.join("x/dev.csv");
    std::fs::create_dir_all(csv.parent().unwrap()).unwrap();
    std::fs::write(
        &csv,
        "Test File Name,No saturation Result,Round Robin Saturation Result,Chunking Saturation Result,All Passed\n2t2i_2\u{1}deadbeefdeadbeef,P,P,P,P\nTotal failures:,0,0,0,0\n",
    )
    .unwrap();
    let o = backends(&["report", s(&dir.join("x"))]);
    assert_clean_failure(&o, 2, &["control character"]);
}

/// Finding 14: `db list` panicked on a campaign identity shorter than 12
/// characters (a forged file).
#[test]
fn db_list_takes_a_short_campaign_identity() {
    let dir = scratch("short");
    let db = dir.join("g.sqlite");
    out(&backends(&[
        "db",
        "import",
        "--db",
        s(&db),
        s(&variant_files(&dir)),
    ]));
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("UPDATE campaigns SET identity = 'ab' WHERE id = 1", [])
        .unwrap();
    let text = out(&backends(&["db", "list", "--db", s(&db)]));
    assert!(text.starts_with("ab "), "{text}");
}
