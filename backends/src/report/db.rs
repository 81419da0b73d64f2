//! The results database: every device's observations in one SQLite file
//! (issue 23 item 3), the embedded default store beside the CSV folders.
//!
//! Why SQLite: one file to commit, copy or serve; transactions, so one
//! result file is imported whole or not at all, a killed importer leaves
//! the last committed state, and two importers at once wait for each
//! other (a busy timeout) instead of interleaving.
//!
//! Schema (version [`SCHEMA_VERSION`], in `PRAGMA user_version`):
//! - `devices`: a device by its name (the stem of its result files), with
//!   what is known of it: vendor, architecture, driver, browser or host.
//! - `suites`: the tests a campaign ran, by fingerprint
//!   ([`progress_litmus::fingerprint::tests`]); the published artifact's
//!   CSVs record none (their runs are of the 483 published tests).
//! - `imports`: one result file as imported: its content hash, the file
//!   it came from, when, its target (framework) and suite.
//! - `observations`: per import, device, test and mapping, `failed` of
//!   `runs` runs did not terminate (`runs` NULL: the artifact's `P`, all
//!   of an unstated number terminated).
//!
//! A file is identified by its content, not its bytes: the hash is over
//! the observations it holds (device, test, cells), sorted, so a copy with
//! other quoting, line ends, column or row order is the same import and is
//! counted once. Two different files observing the same test of the same
//! device under the same mapping are refused (a unique index), as the CSV
//! reader refuses them: the format cannot say whether they are the same
//! runs.

use crate::mapping::Mapping;
use crate::report::observations::{self, Device, Observed};
use crate::report::results::Cell;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The schema this code reads and writes.
pub const SCHEMA_VERSION: i64 = 1;

/// How long an importer waits for another one's transaction.
const BUSY: Duration = Duration::from_secs(120);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS devices (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    vendor TEXT,
    architecture TEXT,
    driver TEXT,
    host TEXT
);
CREATE TABLE IF NOT EXISTS suites (
    id INTEGER PRIMARY KEY,
    fnv64 TEXT NOT NULL UNIQUE,
    tests INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS imports (
    id INTEGER PRIMARY KEY,
    content TEXT NOT NULL UNIQUE,
    file TEXT NOT NULL,
    imported_unix_s INTEGER NOT NULL,
    target TEXT,
    suite_id INTEGER REFERENCES suites(id),
    observations INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS observations (
    import_id INTEGER NOT NULL REFERENCES imports(id),
    device_id INTEGER NOT NULL REFERENCES devices(id),
    test TEXT NOT NULL,
    mapping TEXT NOT NULL,
    failed INTEGER NOT NULL,
    runs INTEGER,
    line INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS one_observation
    ON observations(device_id, test, mapping);
";

/// What is known of the devices of one import (flags of `db import`).
#[derive(Clone, Debug, Default)]
pub struct DeviceInfo {
    pub vendor: Option<String>,
    pub architecture: Option<String>,
    pub driver: Option<String>,
    pub host: Option<String>,
}

/// What one file's import did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Imported {
    /// A new import with this many observations.
    New(usize),
    /// The same observations were imported before, from this file.
    Already(String),
}

/// Opens (creating if need be) the database at `path`, with the schema.
pub fn open(path: &Path) -> Result<Connection, String> {
    let bad = |e: rusqlite::Error| format!("{}: not a results database: {e}", path.display());
    let conn = Connection::open(path).map_err(bad)?;
    conn.busy_timeout(BUSY).map_err(bad)?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(bad)?;
    if version != 0 && version != SCHEMA_VERSION {
        return Err(format!(
            "{}: a results database of schema version {version}; this backends reads version {SCHEMA_VERSION}",
            path.display()
        ));
    }
    if version == 0 {
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        ))
        .map_err(bad)?;
    }
    Ok(conn)
}

/// The content hash of one file's devices: over sorted (device, test,
/// cells), so formatting does not count.
fn content_hash(devices: &[Device]) -> String {
    let mut h = Sha256::new();
    for d in devices {
        for (test, obs) in &d.tests {
            let cells: Vec<String> = obs.cells.iter().map(|c| c.text()).collect();
            h.update(format!("{}\0{test}\0{}\n", d.name, cells.join("\0")).as_bytes());
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The target a file's runs were made with: `device.json`'s `target`, else
/// the framework directory of the artifact layout (`Apple`, `CUDA`, ...).
fn file_target(csv: &Path) -> Option<String> {
    if let Some(doc) = device_json(csv) {
        if let Some(t) = doc.get("target").and_then(|t| t.as_str()) {
            return Some(t.to_string());
        }
    }
    let dir = csv.parent()?;
    dir.parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .and_then(observations::config_dir)?;
    Some(dir.file_name()?.to_str()?.to_string())
}

fn device_json(csv: &Path) -> Option<serde_json::Value> {
    let file = observations::device_file(csv).filter(|f| f.is_file())?;
    serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()
}

/// The host a campaign recorded (`description.host` of `device.json`).
fn recorded_host(csv: &Path) -> Option<String> {
    let doc = device_json(csv)?;
    let host = doc.get("description")?.get("host")?.as_object()?;
    let mut parts = Vec::new();
    for k in ["cpu_model", "arch", "os", "hardware_threads"] {
        match host.get(k) {
            Some(serde_json::Value::String(s)) => parts.push(s.clone()),
            Some(v) if !v.is_null() => parts.push(format!("{k} {v}")),
            _ => {}
        }
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Imports one result file (the CSV formats `report` reads) in one
/// transaction: all its observations or none.
pub fn import_file(
    conn: &mut Connection,
    csv: &Path,
    info: &DeviceInfo,
) -> Result<Imported, String> {
    let devices = observations::load(&[csv.to_path_buf()])?;
    let content = content_hash(&devices);
    let suite = match devices.first() {
        Some(d) => observations::recorded_suites(d)?.into_iter().next(),
        None => None,
    };
    let mut info = info.clone();
    if info.host.is_none() {
        info.host = recorded_host(csv);
    }
    let sql = |e: rusqlite::Error| format!("{}: cannot import: {e}", csv.display());
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql)?;
    let before: Option<String> = tx
        .query_row(
            "SELECT file FROM imports WHERE content = ?1",
            [&content],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql)?;
    if let Some(file) = before {
        return Ok(Imported::Already(file));
    }
    let suite_id: Option<i64> = match &suite {
        Some(s) => {
            tx.execute(
                "INSERT OR IGNORE INTO suites (fnv64, tests) VALUES (?1, ?2)",
                params![s.fnv64, s.tests as i64],
            )
            .map_err(sql)?;
            Some(
                tx.query_row("SELECT id FROM suites WHERE fnv64 = ?1", [&s.fnv64], |r| {
                    r.get(0)
                })
                .map_err(sql)?,
            )
        }
        None => None,
    };
    let count: usize = devices
        .iter()
        .flat_map(|d| d.tests.values())
        .map(|o| o.cells.iter().filter(|c| **c != Cell::NotRun).count())
        .sum();
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    tx.execute(
        "INSERT INTO imports (content, file, imported_unix_s, target, suite_id, observations) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![content, csv.display().to_string(), secs, file_target(csv), suite_id, count as i64],
    )
    .map_err(sql)?;
    let import_id = tx.last_insert_rowid();
    for d in &devices {
        let device_id = upsert_device(&tx, &d.name, &info).map_err(sql)?;
        insert_observations(&tx, csv, import_id, device_id, d)?;
    }
    tx.commit().map_err(sql)?;
    Ok(Imported::New(count))
}

/// The id of device `name`, created if new; what `info` states replaces
/// what was known.
fn upsert_device(
    tx: &rusqlite::Transaction,
    name: &str,
    info: &DeviceInfo,
) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO devices (name, vendor, architecture, driver, host) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(name) DO UPDATE SET
           vendor = coalesce(excluded.vendor, vendor),
           architecture = coalesce(excluded.architecture, architecture),
           driver = coalesce(excluded.driver, driver),
           host = coalesce(excluded.host, host)",
        params![name, info.vendor, info.architecture, info.driver, info.host],
    )?;
    tx.query_row("SELECT id FROM devices WHERE name = ?1", [name], |r| {
        r.get(0)
    })
}

fn insert_observations(
    tx: &rusqlite::Transaction,
    csv: &Path,
    import_id: i64,
    device_id: i64,
    d: &Device,
) -> Result<(), String> {
    let mut stmt = tx
        .prepare_cached(
            "INSERT INTO observations (import_id, device_id, test, mapping, failed, runs, line) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .map_err(|e| format!("{}: cannot import: {e}", csv.display()))?;
    for (test, obs) in &d.tests {
        for m in Mapping::ALL {
            let (failed, runs) = match obs.cell(m) {
                Cell::NotRun => continue,
                Cell::Pass => (0, None),
                Cell::Fail { failed, runs } => (failed, Some(runs)),
            };
            stmt.execute(params![import_id, device_id, test, m.name(), failed, runs, obs.line as i64])
                .map_err(|e| match e.sqlite_error_code() {
                    Some(rusqlite::ErrorCode::ConstraintViolation) => format!(
                        "{}:{}: test {test} of device {} under {} is already in the database from another file; merge the campaigns before importing",
                        csv.display(),
                        obs.line,
                        crate::excerpt::printable(&d.name),
                        m.name()
                    ),
                    _ => format!("{}: cannot import: {e}", csv.display()),
                })?;
        }
    }
    Ok(())
}

/// A suite a device's runs recorded, as the database holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbSuite {
    pub device: String,
    pub fnv64: String,
    pub tests: u64,
    /// The first of the files the runs were imported from, for messages.
    pub file: String,
    /// The tests observed in that import.
    pub observed: Vec<String>,
}

/// Every device of the database with its observations, as
/// [`observations::load`] reads CSV folders; an observation's source is
/// `DB:FILE` (the database and the file it was imported from). With the
/// suites the imports recorded, for the fingerprint check.
pub fn load(path: &Path) -> Result<(Vec<Device>, Vec<DbSuite>), String> {
    if !path.is_file() {
        return Err(format!("{}: no such results database", path.display()));
    }
    let conn = open(path)?;
    let sql = |e: rusqlite::Error| format!("{}: cannot read: {e}", path.display());
    let mut stmt = conn
        .prepare(
            "SELECT d.name, o.test, o.mapping, o.failed, o.runs, o.line, i.file, s.fnv64, s.tests
             FROM observations o JOIN devices d ON d.id = o.device_id
             JOIN imports i ON i.id = o.import_id LEFT JOIN suites s ON s.id = i.suite_id",
        )
        .map_err(sql)?;
    let mut devices: BTreeMap<String, Device> = BTreeMap::new();
    let mut suites: BTreeMap<(String, String), DbSuite> = BTreeMap::new();
    let mut rows = stmt.query([]).map_err(sql)?;
    while let Some(r) = rows.next().map_err(sql)? {
        let row = DbRow {
            device: r.get(0).map_err(sql)?,
            test: r.get(1).map_err(sql)?,
            mapping: r.get(2).map_err(sql)?,
            failed: r.get(3).map_err(sql)?,
            runs: r.get(4).map_err(sql)?,
            line: r.get(5).map_err(sql)?,
            file: r.get(6).map_err(sql)?,
        };
        let fnv: Option<String> = r.get(7).map_err(sql)?;
        if let Some(fnv64) = fnv {
            let tests: i64 = r.get(8).map_err(sql)?;
            // One campaign's runs span a file per configuration, and its
            // fingerprint covers them all: grouped by device and suite.
            let s = suites
                .entry((row.device.clone(), fnv64.clone()))
                .or_insert_with(|| DbSuite {
                    device: row.device.clone(),
                    fnv64,
                    tests: tests as u64,
                    file: row.file.clone(),
                    observed: Vec::new(),
                });
            s.file = s.file.clone().min(row.file.clone());
            if s.observed.last() != Some(&row.test) {
                s.observed.push(row.test.clone());
            }
        }
        add_row(path, &mut devices, row)?;
    }
    let mut suites: Vec<DbSuite> = suites.into_values().collect();
    for s in &mut suites {
        s.observed.sort();
        s.observed.dedup();
    }
    Ok((devices.into_values().collect(), suites))
}

struct DbRow {
    device: String,
    test: String,
    mapping: String,
    failed: u32,
    runs: Option<u32>,
    line: i64,
    file: String,
}

fn add_row(db: &Path, devices: &mut BTreeMap<String, Device>, row: DbRow) -> Result<(), String> {
    let m = Mapping::ALL
        .into_iter()
        .find(|m| m.name() == row.mapping)
        .ok_or_else(|| {
            format!(
                "{}: unknown mapping `{}` in the database",
                db.display(),
                row.mapping
            )
        })?;
    let cell = match row.runs {
        None => Cell::Pass,
        Some(runs) => Cell::from_counts(row.failed, runs),
    };
    let source = PathBuf::from(format!("{}:{}", db.display(), row.file));
    let d = devices.entry(row.device.clone()).or_insert_with(|| Device {
        name: row.device.clone(),
        tests: BTreeMap::new(),
        sources: Vec::new(),
    });
    if !d.sources.contains(&source) {
        d.sources.push(source.clone());
        d.sources.sort();
    }
    let obs = d.tests.entry(row.test).or_insert(Observed {
        cells: [Cell::NotRun; 3],
        source,
        line: row.line as usize,
    });
    obs.cells[m.code() as usize] = cell;
    Ok(())
}

/// Checks the database's runs against `tests` as the report checks a
/// campaign's `device.json`: the tests it ran must have the fingerprint
/// it recorded.
pub fn check_suites(
    suites: &[DbSuite],
    tests: &crate::report::analysis::Tests,
) -> Result<(), String> {
    let mut msgs = Vec::new();
    for s in suites {
        let ours = progress_litmus::fingerprint::tests(
            s.observed
                .iter()
                .filter_map(|n| tests.programs.get(n).map(|t| (n.as_str(), t))),
        );
        if ours != s.fnv64 {
            msgs.push(format!(
                "{}: the runs of device {} are of a suite with fingerprint {} ({} tests), but the same-named tests of {} have fingerprint {ours}: judge them against the tests they were run from (--tests SUITE)",
                s.file,
                crate::excerpt::printable(&s.device),
                s.fnv64,
                s.tests,
                tests.source
            ));
        }
    }
    if msgs.is_empty() {
        Ok(())
    } else {
        Err(msgs.join("\n"))
    }
}

/// Writes every device's observations as result CSVs in the artifact
/// layout under `out`: a published test `<N>t<M>i_<id>` to
/// `<N>_thread_<M>_instruction/db/<device>.csv` (id `<id>`), any other
/// test, by full name, to `db/<device>.csv`. Returns the files written.
pub fn export(devices: &[Device], out: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files: BTreeMap<PathBuf, Vec<(String, [Cell; 3])>> = BTreeMap::new();
    for d in devices {
        let stem = d.name.replace('/', "_");
        for (test, obs) in &d.tests {
            let (file, id) = match published_id(test) {
                Some((n, m, id)) => (
                    out.join(format!("{n}_thread_{m}_instruction/db/{stem}.csv")),
                    id,
                ),
                None => (out.join(format!("db/{stem}.csv")), test.clone()),
            };
            files.entry(file).or_default().push((id, obs.cells));
        }
    }
    for (file, rows) in &mut files {
        rows.sort_by(|a, b| crate::report::analysis::natural_cmp(&a.0, &b.0));
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
        }
        progress_litmus::axb::load::write_atomically(
            file,
            crate::report::results::write(rows).as_bytes(),
        )
        .map_err(|e| format!("{}: cannot write: {e}", file.display()))?;
    }
    Ok(files.into_keys().collect())
}

/// `(N, M, id)` of a test named `<N>t<M>i_<id>` with numbers.
fn published_id(test: &str) -> Option<(u32, u32, String)> {
    let (cfg, id) = test.split_once("i_")?;
    let (n, m) = cfg.split_once('t')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(n) && digits(m) && digits(id))
        .then(|| Some((n.parse().ok()?, m.parse().ok()?, id.to_string())))?
}

/// What the database knows of each device, by name.
pub fn device_info(path: &Path) -> Result<BTreeMap<String, DeviceInfo>, String> {
    let conn = open(path)?;
    let sql = |e: rusqlite::Error| format!("{}: cannot read: {e}", path.display());
    let mut stmt = conn
        .prepare("SELECT name, vendor, architecture, driver, host FROM devices")
        .map_err(sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                DeviceInfo {
                    vendor: r.get(1)?,
                    architecture: r.get(2)?,
                    driver: r.get(3)?,
                    host: r.get(4)?,
                },
            ))
        })
        .map_err(sql)?;
    rows.collect::<Result<_, _>>().map_err(sql)
}
