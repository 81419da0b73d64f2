//! Bounded fuzzing (issue 10, item 10), run by `cargo test` in CI: the
//! readers of input that users and machines hand to `backends` — result
//! CSVs ([`backends::report::results::parse`]), run journals
//! ([`backends::campaign::journal::read`]) and program output lines
//! (`import`'s reader, [`backends::campaign::execute::parse_result_line`]
//! and [`backends::campaign::import::import`]) — get valid inputs mutated
//! byte by byte (flips, insertions of the characters that matter:
//! quotes, commas, line breaks, braces; deletions, truncations,
//! duplicated lines). None may panic; every error names the line it is
//! about (within the input), in one short message. A case count keeps CI
//! fast; `PROPTEST_CASES=100000 cargo test --release --test fuzz` runs more.
//!
//! Crashes found: none so far (each would become a named regression test
//! below the properties).

use backends::campaign::execute::parse_result_line;
use backends::campaign::import::{import, ImportArgs};
use backends::campaign::journal::{self, Entry, RunRecord, Session};
use backends::campaign::options::RunTarget;
use backends::report::format::Format;
use backends::report::results::{self, Cell};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// One edit of an input.
#[derive(Clone, Debug)]
enum Edit {
    /// Replace the byte at (position mod length) with this one.
    Set(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    /// Cut the input at (position mod length).
    Truncate(usize),
    /// Repeat the line holding (position mod length).
    DupLine(usize),
}

/// Bytes that change how the inputs parse.
fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        prop::sample::select(b"\",\n\r{}[]:\\ 0123456789PF()/-.e".to_vec()),
        any::<u8>(),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), byte()).prop_map(|(p, b)| Edit::Set(p, b)),
        4 => (any::<usize>(), byte()).prop_map(|(p, b)| Edit::Insert(p, b)),
        2 => any::<usize>().prop_map(Edit::Delete),
        1 => any::<usize>().prop_map(Edit::Truncate),
        1 => any::<usize>().prop_map(Edit::DupLine),
    ]
}

fn apply(base: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut v = base.to_vec();
    for e in edits {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % len };
        match *e {
            Edit::Set(p, b) if !v.is_empty() => {
                let i = at(p, v.len());
                v[i] = b;
            }
            Edit::Insert(p, b) => {
                let i = at(p, v.len() + 1);
                v.insert(i, b);
            }
            Edit::Delete(p) if !v.is_empty() => {
                let i = at(p, v.len());
                v.remove(i);
            }
            Edit::Truncate(p) => {
                let i = at(p, v.len() + 1);
                v.truncate(i);
            }
            Edit::DupLine(p) if !v.is_empty() => {
                let i = at(p, v.len());
                let start = v[..i]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |k| k + 1);
                let end = v[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(v.len(), |k| i + k + 1);
                let line = v[start..end].to_vec();
                v.splice(end..end, line);
            }
            _ => {}
        }
    }
    v
}

fn lines_in(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count() + 1
}

/// 512 cases per property, or `PROPTEST_CASES`.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(512),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// ---------------------------------------------------------------- CSVs

const CUDA: &str = "Test File Name,No saturation Result,Round Robin Saturation Result,Chunking Saturation Result,All Passed\n0,P,P,P,P\n2,F (21/21),F (3/21),P,F\n\"a,\"\"b\"\"\nc\",,P,F (1/2),F\nTotal failures:,21,3,1,2\n";

const VULKAN: &str = "Test File Name,No saturation (same subgroup),Round Robin Saturation,Chunking Saturation,\"No saturation (diff. subgroup, 256 threads per workgroup)\",\"No saturation (same subgroup, 4 threads per workgroup)\",All Passed\r\n0,P,P,P,P,P,P\r\n1,F (6/20),P,P,P,F (20/20),F\r\nTotal failures:,1,0,0,0,1,1\r\n";

fn check_csv(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return; // the caller reads files as UTF-8 first, with its own error
    };
    if let Err(e) = results::parse(text) {
        assert!(
            e.line <= lines_in(bytes),
            "line {} of {}",
            e.line,
            lines_in(bytes)
        );
        assert!(!e.msg.is_empty() && e.msg.len() < 1000, "{}", e.msg);
    }
}

fn cell() -> impl Strategy<Value = Cell> {
    prop_oneof![
        Just(Cell::Pass),
        Just(Cell::NotRun),
        (1u32..50, 0u32..50).prop_map(|(k, extra)| Cell::Fail {
            failed: k,
            runs: k + extra
        }),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutated_result_csvs_never_panic_and_errors_name_a_line(
        base in prop::sample::select(vec![CUDA, VULKAN]),
        edits in prop::collection::vec(edit(), 1..8),
    ) {
        check_csv(&apply(base.as_bytes(), &edits));
    }

    #[test]
    fn any_text_as_a_result_csv_never_panics(text in "\\PC{0,300}") {
        check_csv(text.as_bytes());
    }

    /// Whatever ids a campaign writes (the writer quotes them, RFC 4180),
    /// the reader gives back, rows and cells alike.
    #[test]
    fn written_csvs_read_back_exactly(
        rows in prop::collection::vec(("\\PC{1,12}", [cell(), cell(), cell()]), 0..12)
    ) {
        let mut seen = std::collections::BTreeSet::new();
        let rows: Vec<(String, [Cell; 3])> = rows
            .into_iter()
            .filter(|(id, _)| id != results::TOTAL_LABEL && seen.insert(id.clone()))
            .collect();
        let text = results::write(&rows);
        let t = results::parse(&text).unwrap();
        let back: Vec<(String, [Cell; 3])> = t
            .rows
            .iter()
            .map(|r| (r.id.clone(), [r.cells[0], r.cells[1], r.cells[2]]))
            .collect();
        prop_assert_eq!(back, rows);
    }
}

// ------------------------------------------------------------ journals

fn valid_journal() -> Vec<u8> {
    let mut text = String::new();
    let mut line = |e: &Entry| {
        text.push_str(&serde_json::to_string(e).unwrap());
        text.push('\n');
    };
    line(&Entry::Campaign(
        serde_json::json!({"name": "c", "iterations": 2}),
    ));
    line(&Entry::Session(Session { started_unix_ms: 5 }));
    for (test, it) in [("2t2i_2", 0), ("2t2i_2", 1), ("a,\"b\"", 0)] {
        line(&Entry::Result(RunRecord {
            test: test.into(),
            mapping: "plain".into(),
            iteration: it,
            terminated: it == 0,
            elapsed_ms: 1.25,
            instances: 1,
            workgroups: 2,
            at_unix_ms: 9,
            extra: serde_json::Map::from_iter([("threads".to_string(), 2.into())]),
        }));
    }
    text.into_bytes()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutated_journals_never_panic_and_errors_name_the_file_and_line(
        edits in prop::collection::vec(edit(), 1..8),
        case in any::<u32>(),
    ) {
        let path = scratch("journal").join(format!("j-{case}.jsonl"));
        let bytes = apply(&valid_journal(), &edits);
        std::fs::write(&path, &bytes).unwrap();
        match journal::read(&path) {
            Ok(c) => {
                prop_assert!(matches!(c.entries[0], Entry::Campaign(_)));
                prop_assert_eq!(c.entries.len(), c.lines.len());
            }
            Err(e) => {
                let shown = path.display().to_string();
                prop_assert!(e.starts_with(&shown), "{}", e);
                prop_assert!(e.len() < 1000, "{}", e);
                let rest = &e[shown.len()..];
                match rest[1..].split(':').next().unwrap().parse::<usize>() {
                    Ok(n) => prop_assert!(n >= 1 && n <= lines_in(&bytes), "{}", e),
                    Err(_) => prop_assert!(e.contains("no complete line"), "{}", e),
                }
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}

// -------------------------------------------------------- import lines

const LINE: &str = r#"{"test":"2t2i_2","target":"cpp","mapping":"chunked","instances":4,"workgroups":8,"iteration":0,"terminated":false,"elapsed_ms":200.125,"threads":1,"scheduler":"obe"}"#;

/// A one-test suite named 2t2i_2 (the test itself does not matter here).
fn tiny_suite(dir: &Path) -> PathBuf {
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::write(
        suite.join("2t2i_2.txt"),
        "THREAD0\natomic_chk_branch(0,1,0)\n",
    )
    .unwrap();
    suite
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutated_result_lines_never_panic_and_errors_are_short(
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        let bytes = apply(LINE.as_bytes(), &edits);
        let line = String::from_utf8_lossy(&bytes);
        if let Err(e) = parse_result_line(&line, "cpp", 0) {
            prop_assert!(e.len() < 600, "{}", e);
            prop_assert!(!e.contains('\n'), "{}", e);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..config() })]

    /// `import` end to end on mutated files of result lines: never a panic,
    /// an error about a line names the file and line.
    #[test]
    fn mutated_imports_never_panic_and_errors_name_the_file_and_line(
        edits in prop::collection::vec(edit(), 1..6),
        case in any::<u32>(),
    ) {
        let dir = scratch("import");
        let suite = tiny_suite(&dir);
        let good = format!("{LINE}\n{}\n", LINE.replace("\"iteration\":0", "\"iteration\":1"));
        let bytes = apply(good.as_bytes(), &edits);
        let lines = dir.join(format!("runs-{case}.jsonl"));
        std::fs::write(&lines, &bytes).unwrap();
        let out = dir.join(format!("out-{case}"));
        let args = ImportArgs {
            target: RunTarget::Cpp,
            suite: vec![suite],
            lines: vec![lines.clone()],
            info: None,
            name: Some("f".into()),
            out: out.clone(),
            format: Format::Text,
            simt: false,
        };
        if let Err(f) = import(&args) {
            prop_assert!(f.code == 2, "{:?}", f);
            prop_assert!(f.msg.len() < 1000, "{}", f.msg);
            let shown = lines.display().to_string();
            let n = f
                .msg
                .strip_prefix(&format!("{shown}:"))
                .and_then(|rest| rest.split(':').next().unwrap().parse::<usize>().ok());
            if let Some(n) = n {
                prop_assert!(n >= 1 && n <= lines_in(&bytes), "{}", f.msg);
            } else {
                prop_assert!(
                    f.msg.contains("no result lines"),
                    "an error about the lines without a line: {}",
                    f.msg
                );
            }
        }
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::remove_file(&lines);
    }
}

// ------------------------------------------------- the results database
//
// Issue 46, item 6: the database import had no fuzzing. These targets use
// the mutational engine of the root crate's fuzz test
// (`tests/support/fuzz.rs`: corpora, regression inputs in
// `tests/data/fuzz/<target>/`, `FUZZ_CASES` / `FUZZ_SECONDS`).

#[path = "../../tests/support/fuzz.rs"]
mod engine;

use backends::report::db::{self, DeviceInfo};
use backends::report::db_import;

/// Cases per target: a tenth in a debug build.
fn db_cases(release: u64) -> u64 {
    if cfg!(debug_assertions) {
        release / 10
    } else {
        release
    }
}

/// A database error is one line, and short.
fn one_line(what: &str, e: &str) -> Result<(), String> {
    if e.contains('\n') || e.len() > 2000 {
        return Err(format!(
            "{what}: an error of {} bytes or more than one line: {e:?}",
            e.len()
        ));
    }
    Ok(())
}

/// A result CSV imported into a fresh database: refused with one line, or
/// stored so that every reader reads it back (what the importer accepts,
/// `report --db`, `db list` and `db export` must take).
fn import_csv_check(dir: &Path, bytes: &[u8]) -> Result<(), String> {
    let tag = format!("{:?}", std::thread::current().id()).replace(['(', ')'], "");
    let base = dir.join(&tag);
    let _ = std::fs::remove_dir_all(&base);
    let csv = base.join("2_thread_2_instruction/CUDA/dev.csv");
    std::fs::create_dir_all(csv.parent().unwrap()).unwrap();
    std::fs::write(&csv, bytes).unwrap();
    let path = base.join("r.sqlite");
    let mut conn = db::open_import(&path).map_err(|e| format!("open: {e}"))?;
    match db_import::import_csv(&mut conn, &csv, &DeviceInfo::default(), None) {
        Err(e) => one_line("import", &e),
        Ok(_) => {
            drop(conn);
            let mut loaded =
                db::load(&path).map_err(|e| format!("imported, then unreadable: {e}"))?;
            db::campaigns(&path).map_err(|e| format!("imported, then no campaigns: {e}"))?;
            // Tests no suite has (ids past the published ones) are one
            // error line, as `report --db` gives them.
            let tests = match backends::report::programs::resolve(
                &mut loaded.devices,
                &[],
                &loaded.leads,
            ) {
                Ok(t) => t,
                Err(e) => return one_line("resolve", &e),
            };
            db::export(&loaded.devices, &tests.programs, &base.join("export"))
                .map_err(|e| format!("imported, then not exported: {e}"))?;
            Ok(())
        }
    }
}

#[test]
fn fuzz_db_import_of_result_csvs() {
    let mut corpus = engine::corpus("data/empirical/2_thread_2_instruction", ".csv", 12);
    corpus.extend(engine::corpus("results/cpu", ".csv", 4));
    corpus.push(CUDA.as_bytes().to_vec());
    corpus.push(VULKAN.as_bytes().to_vec());
    let dir = scratch("db-csv");
    let check = |b: &[u8]| import_csv_check(&dir, b);
    let n = engine::run(
        &engine::Target {
            name: "db_import_csv",
            corpus,
            dict: engine::dict(&[
                "P",
                "F (",
                "/",
                ")",
                ",",
                "\n",
                "\r\n",
                "\"",
                "Total failures:",
                "All Passed",
                "-1",
                "4294967296",
            ]),
            check: &check,
        },
        db_cases(400),
    );
    eprintln!("fuzz db_import_csv: {n} cases");
}

/// A database file with its bytes mutated: every reader refuses it with
/// one line or reads it; never a panic.
fn db_file_check(dir: &Path, bytes: &[u8]) -> Result<(), String> {
    let tag = format!("{:?}", std::thread::current().id()).replace(['(', ')'], "");
    let path = dir.join(format!("{tag}.sqlite"));
    std::fs::write(&path, bytes).unwrap();
    if let Err(e) = db::load(&path) {
        one_line("load", &e)?;
    }
    if let Err(e) = db::campaigns(&path) {
        one_line("campaigns", &e)?;
    }
    if let Err(e) = db::device_info(&path) {
        one_line("device_info", &e)?;
    }
    let _ = std::fs::remove_file(&path);
    for suffix in ["-journal", "-wal", "-shm"] {
        let _ = std::fs::remove_file(dir.join(format!("{tag}.sqlite{suffix}")));
    }
    Ok(())
}

#[test]
fn fuzz_db_files() {
    let dir = scratch("db-file");
    let seed = dir.join("seed.sqlite");
    let _ = std::fs::remove_file(&seed);
    let mut conn = db::open_import(&seed).unwrap();
    for f in engine::corpus("data/empirical/2_thread_2_instruction/CUDA", ".csv", 1) {
        let csv = dir.join("2_thread_2_instruction/CUDA/dev.csv");
        std::fs::create_dir_all(csv.parent().unwrap()).unwrap();
        std::fs::write(&csv, f).unwrap();
        db_import::import_csv(&mut conn, &csv, &DeviceInfo::default(), None).unwrap();
    }
    drop(conn);
    let check = |b: &[u8]| db_file_check(&dir, b);
    let n = engine::run(
        &engine::Target {
            name: "db_file",
            corpus: vec![std::fs::read(&seed).unwrap()],
            dict: engine::dict(&["\x00", "\u{7f}", "SQLite format 3\x00"]),
            check: &check,
        },
        db_cases(300),
    );
    eprintln!("fuzz db_file: {n} cases");
}
