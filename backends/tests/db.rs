//! The results database (issue 23 item 3): the committed import script
//! builds it from the published GPUs and the CPU runs, the report across
//! it is the report across the CSV folders (and so reproduces the paper's
//! analysis), a re-formatted copy of a file counts once, a conflicting one
//! is refused while the rest of the batch is imported, and concurrent or
//! killed importers leave it consistent.

mod common;

use common::{assert_clean_failure, backends, bin, s, scratch, stdout};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
}

/// The database `results/database/import.sh` builds, in `dir`.
fn committed_db(dir: &Path) -> PathBuf {
    let db = dir.join("results.sqlite");
    let o = Command::new("sh")
        .arg(repo("results/database/import.sh"))
        .arg(&db)
        .env("BACKENDS", common::BIN)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    db
}

fn json(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", common::stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The tests violating weak LOBE on `device`, from `report --format json`.
fn weak_lobe(report: &serde_json::Value, device: &str) -> BTreeSet<String> {
    let finding = report
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["device"] == device && f["model"] == "LOBE")
        .unwrap_or_else(|| panic!("{device} not in the report"));
    finding["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["test"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_committed_database_reproduces_the_published_analysis() {
    let dir = scratch("committed");
    let db = committed_db(&dir);
    let from_db = json(&backends(&["report", "--db", s(&db), "--format", "json"]));
    let from_csv = json(&backends(&[
        "report",
        s(&repo("data/empirical")),
        s(&repo("results/cpu")),
        s(&repo("results/swiftshader")),
        "--format",
        "json",
    ]));
    assert_eq!(from_db, from_csv, "the database reads as the CSV folders");
    let devices: BTreeSet<&str> = from_db
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["device"].as_str().unwrap())
        .collect();
    assert_eq!(devices.len(), 8 + 3 + 4 * 2 + 2 + 1, "{devices:?}");
    // SwiftShader, through the WebGPU page, hangs on LOBE's conformance tests.
    assert!(!weak_lobe(&from_db, "swiftshader").is_empty());
    // §6.3.2: the A12 and the Mali-G77 violate weak LOBE on the same 11.
    let a12 = weak_lobe(&from_db, "ipad_air_3_a12-inter-workgroup");
    let g77 = weak_lobe(&from_db, "galaxy-s20-mali-2021-02-07");
    assert_eq!(a12.len(), 11, "{a12:?}");
    assert_eq!(a12, g77);
    assert!(weak_lobe(&from_db, "iphone_12_a14-inter-workgroup").is_empty());
    assert!(weak_lobe(&from_db, "cpu-2threads-full").is_empty());

    // Running the script again imports nothing new.
    let again = committed_db(&dir);
    assert_eq!(again, db);
    let o = backends(&["report", "--db", s(&db), "--format", "json"]);
    assert_eq!(json(&o), from_csv);

    // The export is the artifact's CSV format, and reads back the same.
    let out = dir.join("export");
    let o = backends(&["db", "export", "--db", s(&db), "-o", s(&out)]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let exported = json(&backends(&["report", s(&out), "--format", "json"]));
    assert_eq!(exported, from_csv);
}

/// One of the published files rewritten: CRLF, quoted ids, rows reversed.
fn reformatted(src: &Path, dst: &Path) {
    let text = std::fs::read_to_string(src).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let header = lines.remove(0);
    let total = lines.pop().unwrap();
    assert!(total.starts_with("Total"));
    lines.reverse();
    let mut out = format!("{header}\r\n");
    for l in lines {
        let (id, rest) = l.split_once(',').unwrap();
        out.push_str(&format!("\"{id}\",{rest}\r\n"));
    }
    out.push_str(&format!("{total}\r\n"));
    std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
    std::fs::write(dst, out).unwrap();
}

#[test]
fn the_same_runs_in_another_format_count_once_and_a_conflict_is_refused() {
    let dir = scratch("content");
    let db = dir.join("r.sqlite");
    let file = "2_thread_2_instruction/Apple/ipad_air_3_a12-inter-workgroup.csv";
    let src = repo("data/empirical").join(file);
    let o = backends(&["db", "import", "--db", s(&db), s(&src)]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let copy = dir.join("copy").join(file);
    reformatted(&src, &copy);
    assert_ne!(std::fs::read(&copy).unwrap(), std::fs::read(&src).unwrap());
    let o = backends(&["db", "import", "--db", s(&db), s(&copy)]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("already in the database"));
    assert!(
        stdout(&o).contains("0 files imported, 1 already in"),
        "{}",
        stdout(&o)
    );

    // A file with a part of the rows is other runs of the same tests
    // (the format cannot say they are the same ones): refused at its line;
    // the other file of the batch still goes in.
    let changed = dir.join("changed").join(file);
    std::fs::create_dir_all(changed.parent().unwrap()).unwrap();
    let header = std::fs::read_to_string(&src)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    std::fs::write(
        &changed,
        format!("{header}\n0,P,P,P,P\nTotal failures:,0,0,0,0\n"),
    )
    .unwrap();
    let other =
        repo("data/empirical/2_thread_3_instruction/Apple/ipad_air_3_a12-inter-workgroup.csv");
    let o = backends(&["db", "import", "--db", s(&db), s(&changed), s(&other)]);
    assert_clean_failure(
        &o,
        2,
        &[
            &format!("{}:2:", s(&changed)),
            "already in the database from another file",
        ],
    );
    assert!(
        stdout(&o).contains("1 files imported, 0 already in, 1 refused"),
        "{}",
        stdout(&o)
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    let imports: i64 = c
        .query_row("SELECT count(*) FROM imports", [], |r| r.get(0))
        .unwrap();
    assert_eq!(imports, 2);
}

#[test]
fn bad_databases_and_bad_files_are_clean_errors() {
    let dir = scratch("bad");
    let junk = dir.join("junk.sqlite");
    std::fs::write(
        &junk,
        "not a database at all, just some text that is long enough",
    )
    .unwrap();
    let o = backends(&["report", "--db", s(&junk)]);
    assert_clean_failure(&o, 2, &["junk.sqlite", "not a results database"]);
    let o = backends(&["report", "--db", s(&dir.join("missing.sqlite"))]);
    assert_clean_failure(&o, 2, &["missing.sqlite"]);
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "Test File,No saturation Result\n1,X\n").unwrap();
    let o = backends(&["db", "import", "--db", s(&dir.join("r.sqlite")), s(&bad)]);
    assert_clean_failure(&o, 2, &["bad.csv:1"]);
}

/// The imports of `db` each hold the observations they recorded, and the
/// file passes SQLite's integrity check: no half-imported file.
fn assert_consistent(db: &Path) {
    let c = rusqlite::Connection::open(db).unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let exists: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'imports'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    if exists == 0 {
        return;
    }
    let bad: i64 = c
        .query_row(
            "SELECT count(*) FROM imports i WHERE i.observations != (SELECT count(*) FROM observations o WHERE o.import_id = i.id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(bad, 0, "an import without all its observations");
}

#[test]
fn two_importers_at_once_and_a_killed_one_leave_it_consistent() {
    let dir = scratch("concurrent");
    let db = dir.join("r.sqlite");
    let all = repo("data/empirical");
    let cuda = repo("data/empirical/2_thread_4_instruction/CUDA");
    // Kill -9 at several points of an import; each time the database is
    // whole, and the next import completes it.
    for delay_ms in [0, 30, 100, 300] {
        let mut child = bin()
            .args(["db", "import", "--db", s(&db), s(&all)])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        let _ = child.wait();
        if db.exists() {
            assert_consistent(&db);
        }
    }
    // Two at once, overlapping: both succeed, each file in once.
    let a = bin()
        .args(["db", "import", "--db", s(&db), s(&all)])
        .output();
    let b = std::thread::spawn({
        let db = db.clone();
        move || {
            bin()
                .args([
                    "db",
                    "import",
                    "--db",
                    s(&db),
                    s(&cuda),
                    s(&repo("results/cpu")),
                ])
                .output()
                .unwrap()
        }
    });
    let (a, b) = (a.unwrap(), b.join().unwrap());
    assert!(a.status.success(), "{}", common::stderr(&a));
    assert!(b.status.success(), "{}", common::stderr(&b));
    assert_consistent(&db);
    let from_db = json(&backends(&["report", "--db", s(&db), "--format", "json"]));
    let from_csv = json(&backends(&[
        "report",
        s(&all),
        s(&repo("results/cpu")),
        "--format",
        "json",
    ]));
    assert_eq!(from_db, from_csv);
}

#[test]
fn a_run_is_judged_against_the_suite_it_recorded() {
    let dir = scratch("suite");
    // A pretend WebGPU run of the complete 3t3i suite's `3t3i_3`, whose
    // name the published suite uses for another program.
    let suite = repo("suites/3t3i/3t3i.ron");
    let (tests, errors) = progress_litmus::axb::load::load_all(std::slice::from_ref(&suite));
    assert!(errors.is_empty());
    let header = serde_json::json!({"axb": "webgpu-results", "format": 1, "target": "webgpu",
        "suite": {"name": "3t3i", "tests": tests.len(), "fnv64": progress_litmus::fingerprint::suite(&tests)},
        "device": {"vendor": "acme", "architecture": "x"}, "settings": {"iterations": 1}});
    let run = serde_json::json!({"test": "3t3i_3", "target": "webgpu", "mapping": "plain", "instances": 1,
        "workgroups": 3, "iteration": 0, "terminated": false, "elapsed_ms": 1.5, "budget": 1000,
        "exhausted": 1, "stopped": 0, "finished": 2, "early": 0});
    let lines = dir.join("results.jsonl");
    std::fs::write(&lines, format!("{header}\n{run}\n")).unwrap();
    let out = dir.join("out");
    let o = backends(&[
        "import",
        "--target",
        "webgpu",
        s(&suite),
        "--lines",
        s(&lines),
        "--out",
        s(&out),
        "--name",
        "acme",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let db = dir.join("r.sqlite");
    let o = backends(&["db", "import", "--db", s(&db), s(&out)]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    // Against the published default: refused, naming the fingerprint.
    let device: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("acme.device.json")).unwrap())
            .unwrap();
    let recorded = device["suite"]["fnv64"].as_str().unwrap();
    let o = backends(&["report", "--db", s(&db)]);
    assert_clean_failure(&o, 2, &[recorded, "--tests", "acme"]);
    // Against its own suite: judged.
    let o = backends(&[
        "report",
        "--db",
        s(&db),
        "--tests",
        s(&suite),
        "--format",
        "json",
    ]);
    let r = json(&o);
    assert!(r.as_array().unwrap().iter().any(|f| f["device"] == "acme"));
}

/// A test that hung in its one run is not called deterministic: the
/// report says what was seen (issue 23 item 5).
#[test]
fn one_hung_run_is_reported_as_such() {
    let dir = scratch("one-run");
    let csv = dir.join("2_thread_2_instruction/CPU/dev.csv");
    std::fs::create_dir_all(csv.parent().unwrap()).unwrap();
    // 2t2i_0 terminates under every fair model: each hang violates them.
    std::fs::write(
        &csv,
        "Test File Name,No saturation Result,Round Robin Saturation Result,Chunking Saturation Result,All Passed\n\
         0,F (1/1),F (2/2),F (1/3),F\nTotal failures:,1,2,1,1\n",
    )
    .unwrap();
    let o = backends(&["report", s(&dir)]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(out.contains("1/1 hung in its only run"), "{out}");
    assert!(out.contains("2/2 hung in every run"), "{out}");
    assert!(out.contains("1/3 hung in some runs"), "{out}");
    assert!(!out.contains("deterministic"), "{out}");
}
