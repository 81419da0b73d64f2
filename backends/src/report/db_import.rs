//! Importing into the results database, one transaction per file: a
//! result CSV brings k-of-n summaries, a campaign's runs (a journal, read
//! by [`crate::campaign::db_journal`]) one row per iteration.
//!
//! Content identity: a run is its campaign ([`CampaignId`]), test,
//! mapping, iteration and outcome; a summary its campaign, test, mapping
//! and k of n. A run or summary already in the database is counted once,
//! whatever file brings it again (re-formatted, or a journal's CSV export);
//! a file that brings nothing new is "already in". What contradicts the
//! database is refused, naming the file and line: a run of the same
//! campaign with the other outcome, a summary with other counts, a CSV
//! whose k of n are not what the campaign's runs say.

use crate::mapping::Mapping;
use crate::report::db::{DeviceInfo, Imported};
use crate::report::db_campaign::{hex, CampaignId};
use crate::report::db_facts;
use crate::report::db_programs;
use crate::report::observations::{self, Device};
use crate::report::results::Cell;
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One run of a campaign, as a source holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRow {
    pub test: String,
    pub mapping: Mapping,
    pub iteration: u32,
    pub terminated: bool,
    /// When it was recorded, if the source says.
    pub at_unix_ms: Option<u64>,
    /// Its line in the source (from 1).
    pub line: usize,
}

/// The runs of one campaign, from one file.
#[derive(Clone, Debug)]
pub struct RunsSource {
    pub file: PathBuf,
    pub campaign: CampaignId,
    /// The fingerprint and size of the suite run, when known.
    pub suite: Option<(String, u64)>,
    /// The host the campaign recorded, when known.
    pub host: Option<String>,
    /// What the campaign records beyond its runs
    /// ([`crate::report::db_facts`]), when known.
    pub facts: Option<serde_json::Value>,
    pub runs: Vec<RunRow>,
}

/// The rows an import starts from: its campaign and its own row.
struct Begun {
    campaign_id: i64,
    import_id: i64,
}

/// What is new in a file: the campaign it belongs to, its suite, its
/// content hash (and, for CSVs, version 1's hash of the same content).
struct Header<'a> {
    file: &'a Path,
    format: &'static str,
    campaign: &'a CampaignId,
    suite: Option<(String, u64)>,
    /// The suite's programs by name, to store where found
    /// ([`db_programs`]).
    programs: Option<BTreeMap<String, progress_litmus::Test>>,
    content: String,
    legacy: Option<String>,
}

fn sql(file: &Path) -> impl Fn(rusqlite::Error) -> String + '_ {
    move |e| format!("{}: cannot import: {e}", file.display())
}

fn now_unix_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The file an import with this content (or version 1's hash) came from.
fn already(tx: &Transaction, h: &Header) -> rusqlite::Result<Option<String>> {
    tx.query_row(
        "SELECT file FROM imports WHERE content = ?1 OR content = ?2",
        params![h.content, h.legacy.as_deref().unwrap_or(&h.content)],
        |r| r.get(0),
    )
    .optional()
}

/// Creates (or finds) the device, suite and campaign of `h`, and its
/// import row (its row count set by [`finish`]).
fn begin(tx: &Transaction, h: &Header, info: &DeviceInfo) -> rusqlite::Result<Begun> {
    let (campaign_id, suite_id) = campaign_for(tx, h.campaign, h.suite.as_ref(), info)?;
    if let (Some(id), Some(p)) = (suite_id, &h.programs) {
        db_programs::store(tx, id, p)?;
    }
    tx.execute(
        "INSERT INTO imports (content, file, imported_unix_s, target, suite_id, observations, campaign_id, format)
         VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, ?7)",
        params![h.content, h.file.display().to_string(), now_unix_s(), h.campaign.target, suite_id, campaign_id, h.format],
    )?;
    Ok(Begun {
        campaign_id,
        import_id: tx.last_insert_rowid(),
    })
}

/// The ids of campaign `c` (created if new, with its device and suite)
/// and of its suite.
fn campaign_for(
    tx: &Transaction,
    c: &CampaignId,
    suite: Option<&(String, u64)>,
    info: &DeviceInfo,
) -> rusqlite::Result<(i64, Option<i64>)> {
    let device_id = upsert_device(tx, &c.device, info)?;
    let suite_id: Option<i64> = match suite {
        Some((fnv64, tests)) => {
            tx.execute(
                "INSERT OR IGNORE INTO suites (fnv64, tests) VALUES (?1, ?2)",
                params![fnv64, *tests as i64],
            )?;
            Some(
                tx.query_row("SELECT id FROM suites WHERE fnv64 = ?1", [fnv64], |r| {
                    r.get(0)
                })?,
            )
        }
        None => None,
    };
    let identity = c.identity();
    let label = c
        .definition
        .as_ref()
        .and_then(|d| d.get("label"))
        .and_then(|l| l.as_str());
    tx.execute(
        "INSERT OR IGNORE INTO campaigns (identity, device_id, target, suite_id, started_unix_ms, definition, label, driver, host)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            identity,
            device_id,
            c.target,
            suite_id,
            c.started_unix_ms.map(|s| s as i64),
            c.definition.as_ref().map(crate::report::db_campaign::canonical),
            label,
            info.driver,
            info.host
        ],
    )?;
    let campaign_id: i64 = tx.query_row(
        "SELECT id FROM campaigns WHERE identity = ?1",
        [&identity],
        |r| r.get(0),
    )?;
    tx.execute(
        "UPDATE campaigns SET suite_id = coalesce(suite_id, ?2), driver = coalesce(?3, driver), host = coalesce(?4, host) WHERE id = ?1",
        params![campaign_id, suite_id, info.driver, info.host],
    )?;
    Ok((campaign_id, suite_id))
}

/// The id of device `name`, created if new; what `info` states replaces
/// what was known.
fn upsert_device(tx: &Transaction, name: &str, info: &DeviceInfo) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO devices (name, vendor, architecture, driver, host) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(name) DO UPDATE SET
           vendor = coalesce(excluded.vendor, vendor),
           architecture = coalesce(excluded.architecture, architecture),
           driver = coalesce(excluded.driver, driver),
           host = coalesce(excluded.host, host)",
        params![name, info.vendor, info.architecture, info.driver, info.host],
    )?;
    let id = tx.query_row("SELECT id FROM devices WHERE name = ?1", [name], |r| {
        r.get(0)
    })?;
    if let Some((gpu, setup)) = &info.gpu {
        crate::report::db_gpus::store(tx, id, gpu, setup)?;
    }
    Ok(id)
}

/// Ends an import that added `added` rows: committed, or, when nothing
/// was new, rolled back and reported as already in (from `seen`, the file
/// of the first row found there).
fn finish(
    tx: Transaction,
    b: &Begun,
    file: &Path,
    added: usize,
    seen: Option<String>,
) -> Result<Imported, String> {
    if added == 0 {
        drop(tx);
        return match seen {
            Some(from) => Ok(Imported::Already(from)),
            None => Err(format!(
                "{}: no runs or results in it: nothing to import",
                file.display()
            )),
        };
    }
    tx.execute(
        "UPDATE imports SET observations = ?1 WHERE id = ?2",
        params![added as i64, b.import_id],
    )
    .map_err(sql(file))?;
    tx.commit().map_err(sql(file))?;
    Ok(Imported::New(added))
}

/// Version 1's content hash of a CSV's devices: over sorted (device,
/// test, cells), so formatting does not count.
fn cells_hash(devices: &[Device]) -> Vec<u8> {
    let mut text = String::new();
    for d in devices {
        for (test, obs) in &d.tests {
            let cells: Vec<String> = obs.cells.iter().map(|c| c.text()).collect();
            text.push_str(&format!("{}\0{test}\0{}\n", d.name, cells.join("\0")));
        }
    }
    Sha256::digest(text.as_bytes()).to_vec()
}

/// The target a file's runs were made with: `device.json`'s `target`, else
/// the framework directory of the artifact layout (`Apple`, `CUDA`, ...).
fn file_target(csv: &Path, doc: Option<&serde_json::Value>) -> Option<String> {
    if let Some(t) = doc.and_then(|d| d.get("target")).and_then(|t| t.as_str()) {
        return Some(t.to_string());
    }
    let dir = csv.parent()?;
    dir.parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .and_then(observations::config_dir)?;
    Some(dir.file_name()?.to_str()?.to_string())
}

/// The device file beside `csv`, if there is one that can be read; one
/// that is not JSON (or gives a key twice) is an error, as in
/// [`observations::recorded_suites`].
fn device_json(csv: &Path) -> Result<Option<serde_json::Value>, String> {
    let Some(file) = observations::device_file(csv).filter(|f| f.is_file()) else {
        return Ok(None);
    };
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(None);
    };
    crate::json::parse(&text)
        .map(Some)
        .map_err(|e| format!("{}: not a device file: {e}", file.display()))
}

/// The host a campaign recorded (`description.host` of `device.json`).
pub fn recorded_host(doc: Option<&serde_json::Value>) -> Option<String> {
    let host = doc?.get("description")?.get("host")?.as_object()?;
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

/// The campaign of a result CSV (see [`crate::report::db_campaign`]): from
/// its device file when it has one, else its device and framework
/// directory, with `label` when given.
fn csv_campaign(
    csv: &Path,
    device: &str,
    doc: Option<&serde_json::Value>,
    label: Option<&str>,
) -> Result<CampaignId, String> {
    let target = file_target(csv, doc);
    match doc.and_then(|d| d.get("options")) {
        Some(options) => {
            if label.is_some() {
                return Err(format!(
                    "{}: --campaign is for result CSVs without a device file; this one's campaign is identified by its device file's options and start",
                    csv.display()
                ));
            }
            let started = doc
                .and_then(|d| d.pointer("/times/sessions/0/started_unix_ms"))
                .and_then(|s| s.as_u64());
            Ok(CampaignId::of_campaign(device, target, options, started))
        }
        None => Ok(CampaignId {
            device: device.to_string(),
            target,
            definition: label.map(|l| serde_json::json!({ "label": l })),
            started_unix_ms: None,
        }),
    }
}

/// Imports one result file (the CSV formats `report` reads) in one
/// transaction: all its new summaries or none. A file may hold several
/// devices (the artifact's Vulkan files: a column set per subgroup
/// setting), each its own campaign. `label` names the campaigns when the
/// file has no device file (`db import --campaign`).
pub fn import_csv(
    conn: &mut Connection,
    csv: &Path,
    info: &DeviceInfo,
    label: Option<&str>,
) -> Result<Imported, String> {
    let devices = observations::load(&[csv.to_path_buf()])?;
    if devices.is_empty() {
        return Ok(Imported::New(0));
    }
    let doc = device_json(csv)?;
    let mut ids = Vec::new();
    let mut suites = Vec::new();
    for d in &devices {
        ids.push(csv_campaign(csv, &d.name, doc.as_ref(), label)?);
        suites.push(
            observations::recorded_suites(d)?
                .into_iter()
                .next()
                .map(|s| (s.fnv64, s.tests)),
        );
    }
    let legacy = cells_hash(&devices);
    let mut h = Sha256::new();
    h.update(b"csv\0");
    for id in &ids {
        h.update(id.identity().as_bytes());
    }
    h.update(&legacy);
    let header = Header {
        file: csv,
        format: "csv",
        campaign: &ids[0],
        programs: db_programs::for_csv(conn, csv, doc.as_ref(), suites[0].as_ref()),
        suite: suites[0].clone(),
        content: hex(&h.finalize()),
        legacy: Some(hex(&legacy)),
    };
    let mut info = info.clone();
    if info.host.is_none() {
        info.host = recorded_host(doc.as_ref());
    }
    let facts = doc.as_ref().and_then(db_facts::of_device_file);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql(csv))?;
    if let Some(file) = already(&tx, &header).map_err(sql(csv))? {
        let infos: Vec<DeviceInfo> = devices
            .iter()
            .map(|d| variant_info(&info, csv, &d.name))
            .collect();
        let known = Known {
            ids: &ids,
            infos: &infos,
            facts: facts.as_ref(),
            header: &header,
        };
        return already_in(tx, csv, &known, file);
    }
    let first =
        begin(&tx, &header, &variant_info(&info, csv, &devices[0].name)).map_err(sql(csv))?;
    let (mut added, mut seen) = (0, None);
    for ((d, id), suite) in devices.iter().zip(&ids).zip(&suites) {
        let info = variant_info(&info, csv, &d.name);
        let b = Begun {
            campaign_id: campaign_for(&tx, id, suite.as_ref(), &info)
                .map_err(sql(csv))?
                .0,
            import_id: first.import_id,
        };
        db_facts::store(&tx, b.campaign_id, facts.as_ref()).map_err(sql(csv))?;
        put_device(&tx, &b, csv, d, &mut added, &mut seen)?;
    }
    finish(tx, &first, csv, added, seen)
}

/// What is known of device `device` of result file `csv`: `info`, except
/// that a variant device of the file (the artifact's Vulkan files: a
/// column set per subgroup setting, `STEM.VARIANT`) is another setup of
/// the GPU given (`SETUP, VARIANT`), never merged with the file's own.
fn variant_info(info: &DeviceInfo, csv: &Path, device: &str) -> DeviceInfo {
    let mut out = info.clone();
    let stem = csv.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let variant = device
        .strip_prefix(stem)
        .and_then(|r| r.strip_prefix('.'))
        .filter(|v| !v.is_empty());
    if let (Some((gpu, setup)), Some(v)) = (&info.gpu, variant) {
        out.gpu = Some((gpu.clone(), format!("{setup}, {v}")));
    }
    out
}

/// A file whose runs are all in the database (from `file`): nothing is
/// added but what [`Known`] holds, where the database lacks it.
fn already_in(tx: Transaction, path: &Path, k: &Known, file: String) -> Result<Imported, String> {
    for id in k.ids {
        db_facts::store_for(&tx, &id.identity(), k.facts).map_err(sql(path))?;
    }
    // What this import states that an earlier one of the same runs did
    // not: the GPU and setup of its devices, the programs of its suite
    // (a database upgraded from version 3 has neither).
    for (id, info) in k.ids.iter().zip(k.infos) {
        if let Some((gpu, setup)) = &info.gpu {
            let device: Option<i64> = tx
                .query_row(
                    "SELECT id FROM devices WHERE name = ?1",
                    [&id.device],
                    |r| r.get(0),
                )
                .optional()
                .map_err(sql(path))?;
            if let Some(d) = device {
                crate::report::db_gpus::store(&tx, d, gpu, setup).map_err(sql(path))?;
            }
        }
    }
    if let (Some((fnv64, _)), Some(p)) = (&k.header.suite, &k.header.programs) {
        let suite: Option<i64> = tx
            .query_row("SELECT id FROM suites WHERE fnv64 = ?1", [fnv64], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql(path))?;
        if let Some(s) = suite {
            db_programs::store(&tx, s, p).map_err(sql(path))?;
        }
    }
    tx.commit().map_err(sql(path))?;
    Ok(Imported::Already(file))
}

/// What an import of runs already in the database still records: its
/// campaigns' facts, its devices' GPU and setup, its suite's programs.
struct Known<'a> {
    ids: &'a [CampaignId],
    infos: &'a [DeviceInfo],
    facts: Option<&'a serde_json::Value>,
    header: &'a Header<'a>,
}

/// The summaries of one device of a CSV into campaign `b`: counts the
/// rows added, and keeps the file of the first one already there.
fn put_device(
    tx: &Transaction,
    b: &Begun,
    csv: &Path,
    d: &Device,
    added: &mut usize,
    seen: &mut Option<String>,
) -> Result<(), String> {
    for (test, obs) in &d.tests {
        for m in Mapping::ALL {
            let cell = obs.cell(m);
            if cell == Cell::NotRun {
                continue;
            }
            let at = Slot {
                file: csv,
                line: obs.line,
                device: &d.name,
                test,
                mapping: m,
            };
            match put_summary(tx, b, &at, cell)? {
                None => *added += 1,
                Some(from) => {
                    seen.get_or_insert(from);
                }
            }
        }
    }
    Ok(())
}

/// Where a row comes from, for messages.
struct Slot<'a> {
    file: &'a Path,
    line: usize,
    device: &'a str,
    test: &'a str,
    mapping: Mapping,
}

impl Slot<'_> {
    fn at(&self, msg: String) -> String {
        format!(
            "{}:{}: test {} of device {} under {} {msg}",
            self.file.display(),
            self.line,
            crate::excerpt::printable(self.test),
            crate::excerpt::printable(self.device),
            self.mapping.name()
        )
    }
}

/// Adds one k-of-n summary unless the campaign has it (then: the file it
/// came from) or has runs of it that agree; an error if they do not.
fn put_summary(
    tx: &Transaction,
    b: &Begun,
    at: &Slot,
    cell: Cell,
) -> Result<Option<String>, String> {
    let e = sql(at.file);
    let (failed, runs) = match cell {
        Cell::Fail { failed, runs } => (failed, Some(runs)),
        _ => (0, None),
    };
    let counted: (i64, i64, Option<String>) = tx
        .query_row(
            "SELECT coalesce(sum(1 - r.terminated), 0), count(*), min(i.file) FROM runs r JOIN imports i ON i.id = r.import_id
             WHERE r.campaign_id = ?1 AND r.test = ?2 AND r.mapping = ?3",
            params![b.campaign_id, at.test, at.mapping.name()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(&e)?;
    if let (k, n, Some(from)) = counted {
        if agrees(failed, runs, k as u32, n as u32) {
            return Ok(Some(from));
        }
        return Err(at.at(format!(
            "is {} here, but the same campaign's runs in the database (from {}) are {k} of {n} not terminating",
            cell.text(),
            crate::excerpt::printable(&from)
        )));
    }
    let prev: Option<(u32, Option<u32>, String)> = tx
        .query_row(
            "SELECT s.failed, s.runs, i.file FROM summaries s JOIN imports i ON i.id = s.import_id
             WHERE s.campaign_id = ?1 AND s.test = ?2 AND s.mapping = ?3",
            params![b.campaign_id, at.test, at.mapping.name()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(&e)?;
    if let Some((f, n, from)) = prev {
        if (f, n) == (failed, runs) {
            return Ok(Some(from));
        }
        return Err(at.at(format!(
            "is already in the database from another file of the same campaign ({}) with other counts; a campaign of another day is imported with --campaign LABEL",
            crate::excerpt::printable(&from)
        )));
    }
    tx.execute(
        "INSERT INTO summaries (campaign_id, test, mapping, failed, runs, import_id, line) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![b.campaign_id, at.test, at.mapping.name(), failed, runs, b.import_id, at.line as i64],
    )
    .map_err(&e)?;
    Ok(None)
}

/// Whether a summary (`failed` of `runs`; `runs` None: all terminated)
/// says what `k` of `n` runs say.
fn agrees(failed: u32, runs: Option<u32>, k: u32, n: u32) -> bool {
    match runs {
        None => k == 0,
        Some(r) => failed == k && r == n,
    }
}

/// Imports the runs of one campaign (one row per iteration) in one
/// transaction: all its new runs or none.
pub fn import_runs(
    conn: &mut Connection,
    src: &RunsSource,
    info: &DeviceInfo,
) -> Result<Imported, String> {
    let file = src.file.as_path();
    let mut keys: Vec<String> = src
        .runs
        .iter()
        .map(|r| {
            format!(
                "{}\0{}\0{}\0{}\n",
                r.test,
                r.mapping.name(),
                r.iteration,
                r.terminated
            )
        })
        .collect();
    keys.sort();
    let mut h = Sha256::new();
    h.update(b"runs\0");
    h.update(src.campaign.identity().as_bytes());
    h.update(keys.concat().as_bytes());
    let header = Header {
        file,
        format: "journal",
        campaign: &src.campaign,
        programs: db_programs::for_runs(
            conn,
            file,
            src.facts.as_ref(),
            src.suite.as_ref(),
            src.runs.iter().map(|r| r.test.clone()).collect(),
        ),
        suite: src.suite.clone(),
        content: hex(&h.finalize()),
        legacy: None,
    };
    let mut info = info.clone();
    if info.host.is_none() {
        info.host = src.host.clone();
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql(file))?;
    if let Some(from) = already(&tx, &header).map_err(sql(file))? {
        let known = Known {
            ids: std::slice::from_ref(&src.campaign),
            infos: std::slice::from_ref(&info),
            facts: src.facts.as_ref(),
            header: &header,
        };
        return already_in(tx, file, &known, from);
    }
    let b = begin(&tx, &header, &info).map_err(sql(file))?;
    db_facts::store(&tx, b.campaign_id, src.facts.as_ref()).map_err(sql(file))?;
    let (mut added, mut seen) = (0, None);
    for r in &src.runs {
        match put_run(&tx, &b, file, &src.campaign.device, r)? {
            None => added += 1,
            Some(from) => {
                seen.get_or_insert(from);
            }
        }
    }
    check_summaries(&tx, &b, file, &src.campaign.device)?;
    finish(tx, &b, file, added, seen)
}

/// Adds one run unless the campaign has it with the same outcome (then:
/// the file it came from); the other outcome is an error.
fn put_run(
    tx: &Transaction,
    b: &Begun,
    file: &Path,
    device: &str,
    r: &RunRow,
) -> Result<Option<String>, String> {
    let e = sql(file);
    let prev: Option<(bool, String)> = tx
        .prepare_cached(
            "SELECT r.terminated, i.file FROM runs r JOIN imports i ON i.id = r.import_id
             WHERE r.campaign_id = ?1 AND r.test = ?2 AND r.mapping = ?3 AND r.iteration = ?4",
        )
        .and_then(|mut s| {
            s.query_row(
                params![b.campaign_id, r.test, r.mapping.name(), r.iteration],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
        })
        .map_err(&e)?;
    if let Some((terminated, from)) = prev {
        if terminated == r.terminated {
            return Ok(Some(from));
        }
        let slot = Slot {
            file,
            line: r.line,
            device,
            test: &r.test,
            mapping: r.mapping,
        };
        return Err(slot.at(format!(
            "run {}: {} here, but {} in the database (from {}, the same campaign): one run has one outcome",
            r.iteration,
            outcome(r.terminated),
            outcome(terminated),
            crate::excerpt::printable(&from)
        )));
    }
    tx.prepare_cached(
        "INSERT INTO runs (campaign_id, test, mapping, iteration, terminated, at_unix_ms, import_id, line) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .and_then(|mut s| {
        s.execute(params![
            b.campaign_id,
            r.test,
            r.mapping.name(),
            r.iteration,
            r.terminated,
            r.at_unix_ms.map(|t| t as i64),
            b.import_id,
            r.line as i64
        ])
    })
    .map_err(&e)?;
    Ok(None)
}

fn outcome(terminated: bool) -> &'static str {
    if terminated {
        "terminated"
    } else {
        "did not terminate"
    }
}

/// The campaign's k-of-n summaries (from its CSVs) must say what its runs
/// say, for every test and mapping that has both.
fn check_summaries(tx: &Transaction, b: &Begun, file: &Path, device: &str) -> Result<(), String> {
    let e = sql(file);
    let mut stmt = tx
        .prepare(
            "SELECT s.test, s.mapping, s.failed, s.runs, i.file, s.line,
                    sum(1 - r.terminated), count(*)
             FROM summaries s JOIN imports i ON i.id = s.import_id
             JOIN runs r ON r.campaign_id = s.campaign_id AND r.test = s.test AND r.mapping = s.mapping
             WHERE s.campaign_id = ?1 GROUP BY s.test, s.mapping ORDER BY s.test, s.mapping",
        )
        .map_err(&e)?;
    let mut rows = stmt.query([b.campaign_id]).map_err(&e)?;
    while let Some(r) = rows.next().map_err(&e)? {
        let (test, mapping): (String, String) = (r.get(0).map_err(&e)?, r.get(1).map_err(&e)?);
        let (failed, runs): (u32, Option<u32>) = (r.get(2).map_err(&e)?, r.get(3).map_err(&e)?);
        let (csv, line): (String, i64) = (r.get(4).map_err(&e)?, r.get(5).map_err(&e)?);
        let (k, n): (u32, u32) = (r.get(6).map_err(&e)?, r.get(7).map_err(&e)?);
        if !agrees(failed, runs, k, n) {
            return Err(format!(
                "{}: the runs of test {} of device {} under {} ({k} of {n} not terminating) contradict the same campaign's CSV in the database ({}:{line}: {})",
                file.display(),
                crate::excerpt::printable(&test),
                crate::excerpt::printable(device),
                crate::excerpt::printable(&mapping),
                crate::excerpt::printable(&csv),
                Cell::from_counts(failed, runs.unwrap_or(1).max(failed)).text()
            ));
        }
    }
    Ok(())
}
