//! The programs of the tests in the results database (issue 44 item 1):
//! every stored run names its test by name within its campaign's suite,
//! and the suite's tests name their programs by fingerprint
//! ([`progress_litmus::fingerprint::test`]), so a database judges its
//! runs with no suite file beside it, and two suites' same-named tests
//! stay apart.
//!
//! Tables (schema version 4): `programs` (a program's text in the
//! artifact's format, by fingerprint) and `suite_tests` (a suite's test
//! names and their programs). `db import` fills them when it finds the
//! campaign's suite and its tests have the recorded fingerprint
//! ([`crate::report::programs::find`]); the report checks them against
//! the fingerprint again before use.

use crate::report::programs::{self, Recorded};
use progress_litmus::Test;
use rusqlite::{params, Connection, Transaction};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Stores the programs of suite `suite_id`'s tests (those already stored
/// are kept: a suite's tests never change under one fingerprint).
pub fn store(
    tx: &Transaction,
    suite_id: i64,
    tests: &BTreeMap<String, Test>,
) -> rusqlite::Result<()> {
    let mut program =
        tx.prepare_cached("INSERT OR IGNORE INTO programs (fnv64, text) VALUES (?1, ?2)")?;
    let mut named = tx.prepare_cached(
        "INSERT OR IGNORE INTO suite_tests (suite_id, name, program) VALUES (?1, ?2, ?3)",
    )?;
    for (name, t) in tests {
        let text = progress_litmus::axb::text::print(t);
        let fp = progress_litmus::fingerprint::fnv64(text.as_bytes());
        program.execute(params![fp, text])?;
        named.execute(params![suite_id, name, fp])?;
    }
    Ok(())
}

/// The largest stored program read back: an AXB test is a few hundred
/// bytes.
const MAX_PROGRAM_BYTES: usize = 64 * 1024;

/// Every stored suite's tests, by suite fingerprint and name; a suite with
/// a program that is not what `db import` stores is left out.
pub fn read(
    conn: &Connection,
    db: &Path,
) -> Result<BTreeMap<String, BTreeMap<String, Test>>, String> {
    let sql = |e: rusqlite::Error| crate::report::db_open::cannot_read(db, &e);
    let mut stmt = conn
        .prepare(
            "SELECT s.fnv64, t.name, p.fnv64, p.text FROM suite_tests t
             JOIN suites s ON s.id = t.suite_id JOIN programs p ON p.fnv64 = t.program",
        )
        .map_err(sql)?;
    let mut rows = stmt.query([]).map_err(sql)?;
    let mut out: BTreeMap<String, BTreeMap<String, Test>> = BTreeMap::new();
    let mut damaged = std::collections::BTreeSet::new();
    while let Some(r) = rows.next().map_err(sql)? {
        let suite: String = r.get(0).map_err(sql)?;
        let name: String = r.get(1).map_err(sql)?;
        let fp: String = r.get(2).map_err(sql)?;
        let text: String = r.get(3).map_err(sql)?;
        // A program that is too big, does not parse or is not the one its
        // fingerprint names was not written by `db import`: that suite's
        // stored programs are not used (the report looks for its files).
        let test = (text.len() <= MAX_PROGRAM_BYTES
            && progress_litmus::fingerprint::fnv64(text.as_bytes()) == fp)
            .then(|| progress_litmus::axb::text::parse(&text).ok())
            .flatten();
        match test {
            Some(t) => {
                out.entry(suite).or_default().insert(name, t);
            }
            None => {
                damaged.insert(suite);
            }
        }
    }
    for s in damaged {
        out.remove(&s);
    }
    Ok(out)
}

/// Whether the suite with fingerprint `fnv64` has its programs stored (an
/// unreadable database is "no": the import then reads the suite, and its
/// own transaction reports the error).
fn suite_stored(conn: &Connection, fnv64: &str) -> bool {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM suite_tests t JOIN suites s ON s.id = t.suite_id
                        WHERE s.fnv64 = ?1)",
        [fnv64],
        |r| r.get(0),
    )
    .unwrap_or(false)
}

/// The suite files `doc` records, looked for from the working folder and
/// from `at`'s folder up.
fn recorded(doc: &serde_json::Value, at: &Path) -> Recorded {
    Recorded {
        paths: crate::report::observations::suite_paths(doc),
        at: at.display().to_string(),
        bases: programs::ancestors(at),
    }
}

/// The programs to store for the campaign of result CSV `csv` (its
/// device file `doc` records suite `suite`): the campaign's tests are
/// those of all its CSVs (`<config>/<framework>/<stem>.csv` beside the
/// device file). None where already stored or not found.
pub fn for_csv(
    conn: &Connection,
    csv: &Path,
    doc: Option<&serde_json::Value>,
    suite: Option<&(String, u64)>,
) -> Option<BTreeMap<String, Test>> {
    let (fnv64, _) = suite?;
    let doc = doc?;
    if suite_stored(conn, fnv64) {
        return None;
    }
    let device_file = crate::report::observations::device_file(csv)?;
    let out = device_file.parent()?;
    let name = csv.file_name()?;
    let mut files = Vec::new();
    for config in std::fs::read_dir(out).ok()?.flatten() {
        for framework in std::fs::read_dir(config.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let f = framework.path().join(name);
            if f.is_file() {
                files.push(f);
            }
        }
    }
    let devices = crate::report::observations::load(&files).ok()?;
    let names: BTreeSet<String> = devices
        .iter()
        .flat_map(|d| d.tests.keys().cloned())
        .collect();
    programs::find(fnv64, &names, &[], vec![recorded(doc, &device_file)])
}

/// The programs to store for a journal's campaign (`file`, its facts
/// `facts`, suite `suite`, the tests its runs name). None where already
/// stored or not found.
pub fn for_runs(
    conn: &Connection,
    file: &Path,
    facts: Option<&serde_json::Value>,
    suite: Option<&(String, u64)>,
    names: BTreeSet<String>,
) -> Option<BTreeMap<String, Test>> {
    let (fnv64, _) = suite?;
    if suite_stored(conn, fnv64) {
        return None;
    }
    let leads = facts.map(|f| recorded(f, file)).into_iter().collect();
    programs::find(fnv64, &names, &[], leads)
}
