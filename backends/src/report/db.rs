//! The results database: every device's runs in one SQLite file (issue 23
//! item 3), the embedded default store beside the CSV folders.
//!
//! Why SQLite: one file to commit, copy or serve; transactions, so one
//! result file is imported whole or not at all, a killed importer leaves
//! the last committed state, and two importers at once wait for each
//! other (a busy timeout) instead of interleaving.
//!
//! Schema (version [`SCHEMA_VERSION`], in `PRAGMA user_version`; the
//! tables in [`SCHEMA`](crate::report::db_schema::SCHEMA)):
//! - `devices`: a device by its name (the stem of its result files), with
//!   what is known of it: vendor, architecture, driver, browser or host.
//! - `suites`: the tests a campaign ran, by fingerprint
//!   ([`progress_litmus::fingerprint::tests`]); the published artifact's
//!   CSVs record none (their runs are of the 483 published tests).
//! - `campaigns`: one campaign of one device (a `backends run`, an
//!   `import`, one published device's CSVs), by its identity
//!   ([`crate::report::db_campaign::CampaignId`]), with its provenance:
//!   target, suite, when it started, the options it ran with, the driver
//!   and host given.
//! - `imports`: one file as imported: the content hash of the runs it
//!   brought, the file it came from, its format (`csv` or `journal`),
//!   when, its campaign, and how many rows it added.
//! - `runs`: one row per iteration where the source has them (a journal):
//!   campaign, test, mapping, iteration, whether it terminated, when.
//! - `campaign_facts` (version 3): what a campaign's device file or
//!   journal records beyond its runs ([`crate::report::db_facts`]): the
//!   run times that decide "too close to call", its options, the device's
//!   description.
//! - `gpus` (version 4): the physical GPU a device is, and its setup
//!   (API and launch), where `db import --gpu --setup` gave them
//!   ([`crate::report::db_gpus`]): the devices of one GPU and setup are
//!   read as one, and a GPU's setups are shown beneath it.
//! - `programs` and `suite_tests` (version 4): the program of each test
//!   of a suite, by fingerprint ([`crate::report::db_programs`]), stored
//!   when the import found the campaign's suite: the report judges runs
//!   by them with no suite file in reach.
//! - `summaries`: `failed` of `runs` (k of n) per campaign, test and
//!   mapping where the source has only counts (the artifact's CSVs;
//!   `runs` NULL: the artifact's `P`, all of an unstated number
//!   terminated).
//!
//! A device's observation of a test under a mapping is the sum over its
//! campaigns: k and n added, a campaign's runs counted from `runs` where
//! it has them, else from its summary (a `P` adds no count: the format
//! does not record it). Versions 1 (one observation per device, test and
//! mapping), 2 (no facts) and 3 (no GPUs) are upgraded in place, in one
//! transaction, by `db import`; the
//! commands that only read the database open it read-only
//! ([`crate::report::db_open`]) and refuse it.

use crate::mapping::Mapping;
use crate::report::db_facts;
use crate::report::db_gpus;
use crate::report::observations::{Device, Observed};
use crate::report::out_dir::{self, OutDir, WriteError};
use crate::report::programs;
use crate::report::results::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::report::db_open::cannot_read;
pub use crate::report::db_open::{open_import, open_read};
pub use crate::report::db_schema::SCHEMA_VERSION;

/// What is known of the devices of one import (flags of `db import`).
#[derive(Clone, Debug, Default)]
pub struct DeviceInfo {
    pub vendor: Option<String>,
    pub architecture: Option<String>,
    pub driver: Option<String>,
    pub host: Option<String>,
    /// The physical GPU the devices are a setup of, and the setup (API and
    /// launch): `db import --gpu NAME --setup TEXT`.
    pub gpu: Option<(String, String)>,
}

/// What one file's import did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Imported {
    /// A new import that added this many rows (runs or k-of-n summaries).
    New(usize),
    /// Every run of it was in the database before, from this file.
    Already(String),
}

/// Each campaign's counts per test and mapping: from its runs where it
/// has them, else from its summaries; with the device, the suite, and the
/// file and line the row came from.
const CELLS: &str = "
WITH cells AS (
    SELECT campaign_id, test, mapping, sum(1 - terminated) AS failed, count(*) AS runs,
           min(import_id) AS import_id, min(line) AS line
    FROM runs GROUP BY campaign_id, test, mapping
    UNION ALL
    SELECT s.campaign_id, s.test, s.mapping, s.failed, s.runs, s.import_id, s.line
    FROM summaries s WHERE NOT EXISTS (SELECT 1 FROM runs r
        WHERE r.campaign_id = s.campaign_id AND r.test = s.test AND r.mapping = s.mapping)
)
SELECT d.name, c.test, c.mapping, c.failed, c.runs, c.line, i.file, s.fnv64, s.tests, c.campaign_id
FROM cells c JOIN campaigns k ON k.id = c.campaign_id JOIN devices d ON d.id = k.device_id
JOIN imports i ON i.id = c.import_id LEFT JOIN suites s ON s.id = k.suite_id
ORDER BY d.name, c.test, c.mapping, i.file";

/// Every device of the database with its observations, as
/// [`crate::report::observations::load`] reads CSV folders: per test and mapping, k and n
/// summed over the device's campaigns (a `P` summary adds no count), and
/// [`Device::campaigns`] says how many there are. An observation's source
/// is `DB:FILE` (the database and the first file it was imported from).
/// A test's key is [`programs::tagged`] with its campaign's suite; with
/// where those suites' programs may be found ([`programs::Leads`]).
pub fn load(path: &Path) -> Result<Loaded, String> {
    let conn = open_read(path)?;
    let sql = |e: rusqlite::Error| cannot_read(path, &e);
    let mut stmt = conn.prepare(CELLS).map_err(sql)?;
    let mut devices: BTreeMap<String, Device> = BTreeMap::new();
    let mut counts: Counts = BTreeMap::new();
    let mut campaigns: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    let mut per_campaign: PerCampaign = BTreeMap::new();
    let groups = db_gpus::read(&conn, path)?;
    db_gpus::check(&conn, path, &groups)?;
    let mut rows = stmt.query([]).map_err(sql)?;
    while let Some(r) = rows.next().map_err(sql)? {
        let device: String = r.get(0).map_err(sql)?;
        let gpu = groups.get(&device).map(|g| g.gpu.clone());
        let mut row = DbRow {
            device: db_gpus::read_as(&groups, &device),
            test: r.get(1).map_err(sql)?,
            mapping: r.get(2).map_err(sql)?,
            failed: 0,
            runs: None,
            line: r.get(5).map_err(sql)?,
            file: r.get(6).map_err(sql)?,
        };
        (row.failed, row.runs) =
            checked_counts(path, &row, r.get(3).map_err(sql)?, r.get(4).map_err(sql)?)?;
        let fnv: Option<String> = r.get(7).map_err(sql)?;
        if row.test.contains('\u{1}') {
            return Err(format!(
                "{}: test {} (from {}) holds a control character",
                path.display(),
                crate::excerpt::printable(&row.test),
                crate::excerpt::printable(&row.file)
            ));
        }
        row.test = programs::tagged(&row.test, fnv.as_deref());
        let campaign: i64 = r.get(9).map_err(sql)?;
        campaigns
            .entry(row.device.clone())
            .or_default()
            .insert(campaign);
        per_campaign
            .entry((row.device.clone(), row.test.clone(), row.mapping.clone()))
            .or_default()
            .push(db_facts::CampaignCell {
                campaign,
                failed: row.failed,
                runs: row.runs,
            });
        let shown = row.device.clone();
        add_row(path, &mut devices, &mut counts, row)?;
        devices.get_mut(&shown).expect("added").gpu = gpu;
    }
    qualify(&conn, path, &mut devices, &campaigns, per_campaign)?;
    for ((device, test, m), (k, n)) in counts {
        let d = devices.get_mut(&device).expect("added with its counts");
        d.campaigns = campaigns.get(&device).map_or(0, |c| c.len());
        let obs = d.tests.get_mut(&test).expect("added with its counts");
        obs.cells[m] = if k > 0 {
            Cell::Fail { failed: k, runs: n }
        } else {
            Cell::Pass
        };
    }
    Ok(Loaded {
        devices: devices.into_values().collect(),
        leads: leads(&conn, path)?,
        settle: Settle {
            facts: db_facts::read_all(&conn, path)?,
            names: campaign_names(&conn, path)?,
        },
    })
}

/// Where the programs of the database's suites may be found: the suite
/// files each campaign recorded (`options.suite` of its facts), looked for
/// from the working folder and the database's folders up.
fn leads(conn: &rusqlite::Connection, path: &Path) -> Result<programs::Leads, String> {
    let sql = |e: rusqlite::Error| cannot_read(path, &e);
    let mut out = programs::Leads {
        stored: crate::report::db_programs::read(conn, path)?,
        ..Default::default()
    };
    let mut stmt = conn
        .prepare(
            "SELECT s.fnv64, f.facts, k.id FROM campaigns k JOIN suites s ON s.id = k.suite_id
             JOIN campaign_facts f ON f.campaign_id = k.id ORDER BY k.id",
        )
        .map_err(sql)?;
    let mut rows = stmt.query([]).map_err(sql)?;
    let bases = programs::ancestors(path);
    while let Some(r) = rows.next().map_err(sql)? {
        let fnv64: String = r.get(0).map_err(sql)?;
        let facts: String = r.get(1).map_err(sql)?;
        let id: i64 = r.get(2).map_err(sql)?;
        let Ok(doc) = serde_json::from_str::<serde_json::Value>(&facts) else {
            continue;
        };
        let paths = crate::report::observations::suite_paths(&doc);
        if !paths.is_empty() {
            out.record(
                &fnv64,
                programs::Recorded {
                    paths,
                    at: format!("{}: campaign {id}", path.display()),
                    bases: bases.clone(),
                },
            );
        }
    }
    Ok(out)
}

/// What [`load`] reads: the devices (tests keyed by
/// [`programs::tagged`]), where their suites may be found, and what
/// [`settle`] needs once the tests are keyed by program.
pub struct Loaded {
    pub devices: Vec<Device>,
    pub leads: programs::Leads,
    pub settle: Settle,
}

/// The campaigns' facts and names, for [`settle`].
pub struct Settle {
    facts: BTreeMap<i64, db_facts::Facts>,
    names: BTreeMap<i64, String>,
}

/// Gives each device the run times its campaigns recorded and each
/// test's per-campaign counts, for [`settle`].
fn qualify(
    conn: &rusqlite::Connection,
    path: &Path,
    devices: &mut BTreeMap<String, Device>,
    campaigns: &BTreeMap<String, BTreeSet<i64>>,
    per_campaign: PerCampaign,
) -> Result<(), String> {
    let facts = db_facts::read_all(conn, path)?;
    for (device, ids) in campaigns {
        let d = devices.get_mut(device).expect("added with its campaigns");
        d.times = ids
            .iter()
            .filter_map(|i| facts.get(i))
            .map(|f| f.times)
            .collect();
    }
    for ((device, test, mapping), cells) in per_campaign {
        if let Some(m) = Mapping::ALL.into_iter().find(|m| m.name() == mapping) {
            let d = devices.get_mut(&device).expect("added with its cells");
            d.per_campaign.insert((test, m.code()), cells);
        }
    }
    Ok(())
}

/// Marks the hangs of `devices` that a later campaign settled
/// ([`db_facts::settled`]), once each test is keyed by its program
/// ([`programs::resolve`]): campaigns of one program under one name are
/// weighed together, of two programs never.
pub fn settle(devices: &mut [Device], ctx: &Settle) {
    for d in devices {
        for ((test, code), cells) in &d.per_campaign {
            let m = Mapping::ALL[*code as usize];
            if let Some(how) = db_facts::settled(cells, m, &ctx.facts, &ctx.names) {
                d.settled.insert((test.clone(), *code), how);
            }
        }
    }
}

/// Each campaign's count per device, test and mapping name.
type PerCampaign = BTreeMap<(String, String, String), Vec<db_facts::CampaignCell>>;

/// Each campaign's name in messages, by id: its label, else the first 12
/// hex digits of its identity (as `db list` shows it).
fn campaign_names(conn: &rusqlite::Connection, db: &Path) -> Result<BTreeMap<i64, String>, String> {
    let sql = |e: rusqlite::Error| cannot_read(db, &e);
    let mut stmt = conn
        .prepare("SELECT id, identity, label FROM campaigns")
        .map_err(sql)?;
    let rows = stmt
        .query_map([], |r| {
            let identity: String = r.get(1)?;
            let label: Option<String> = r.get(2)?;
            let short = identity.chars().take(12).collect::<String>();
            Ok((r.get(0)?, label.unwrap_or(short)))
        })
        .map_err(sql)?;
    rows.collect::<Result<_, _>>().map_err(sql)
}

/// Not terminating and known runs, summed, per device, test and mapping
/// (its [`Mapping::code`]).
type Counts = BTreeMap<(String, String, usize), (u32, u32)>;

struct DbRow {
    device: String,
    test: String,
    mapping: String,
    failed: u32,
    runs: Option<u32>,
    line: i64,
    file: String,
}

/// A row's counts, checked as `db import` checks what it stores: k of n
/// with 1 <= n and 0 <= k <= n, or all terminated (`runs` NULL, k = 0).
/// Anything else was written by something other than the importer (a
/// hand edit, another tool, a damaged file), and would be reported as
/// "100/1 hung" or exported as `F (100/1)`, which the importer itself
/// refuses: an error naming the row instead (issue 46, item 4).
fn checked_counts(
    db: &Path,
    row: &DbRow,
    failed: i64,
    runs: Option<i64>,
) -> Result<(u32, Option<u32>), String> {
    let ok = match runs {
        None => (failed == 0).then_some((0, None)),
        Some(n) => (1..=i64::from(u32::MAX))
            .contains(&n)
            .then_some(n)
            .filter(|&n| (0..=n).contains(&failed))
            .map(|n| (failed as u32, Some(n as u32))),
    };
    ok.ok_or_else(|| {
        let what = runs.map_or(
            format!("{failed} runs not terminating in a summary that says every run terminated"),
            |n| format!("{failed} of {n} runs not terminating"),
        );
        format!(
            "{}: impossible counts: device {}, test {}, mapping {}: {what} (from {} line {}); the importer never stores such a row: rebuild the database with `backends db import`",
            db.display(),
            crate::excerpt::printable(&row.device),
            crate::excerpt::printable(&row.test),
            crate::excerpt::printable(&row.mapping),
            crate::excerpt::printable(&row.file),
            row.line
        )
    })
}

fn add_row(
    db: &Path,
    devices: &mut BTreeMap<String, Device>,
    counts: &mut Counts,
    row: DbRow,
) -> Result<(), String> {
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
    let c = counts
        .entry((row.device.clone(), row.test.clone(), m.code() as usize))
        .or_default();
    // Summed over campaigns: a forged database of many rows near 2^32
    // must not wrap (or panic in a debug build).
    let (k, n) = (
        c.0.checked_add(row.failed),
        c.1.checked_add(row.runs.unwrap_or(0)),
    );
    let (Some(k), Some(n)) = (k, n) else {
        return Err(format!(
            "{}: impossible counts: device {}, test {}, mapping {}: more than {} runs in all",
            db.display(),
            crate::excerpt::printable(&row.device),
            crate::excerpt::printable(&row.test),
            crate::excerpt::printable(&row.mapping),
            u32::MAX
        ));
    };
    *c = (k, n);
    let source = PathBuf::from(format!("{}:{}", db.display(), row.file));
    let d = devices.entry(row.device.clone()).or_insert_with(|| Device {
        name: row.device.clone(),
        tests: BTreeMap::new(),
        sources: Vec::new(),
        campaigns: 1,
        times: Vec::new(),
        settled: BTreeMap::new(),
        per_campaign: BTreeMap::new(),
        gpu: None,
    });
    if !d.sources.contains(&source) {
        d.sources.push(source.clone());
        d.sources.sort();
    }
    d.tests.entry(row.test).or_insert(Observed {
        cells: [Cell::NotRun; 3],
        source,
        line: row.line as usize,
    });
    Ok(())
}

/// What `db export` wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exported {
    /// The files written, under the output folder.
    pub files: Vec<PathBuf>,
    /// The devices whose file name is not their name (not a plain file
    /// name: [`export_stem`]), with the file stem they got.
    pub renamed: Vec<(String, String)>,
}

/// The file stem of a device's CSVs: its name, which importing the file
/// back gives the device again, when it is a plain file name (no
/// character [`progress_litmus::error::unprintable`] flags, no `/`, `~`
/// or NUL, not starting with `.`, 1 to 200 bytes); else a slug with a
/// hash ([`out_dir::stem`]) that no plain name has.
pub fn export_stem(name: &str) -> String {
    out_dir::stem(name, |c| {
        c != '/' && !progress_litmus::error::unprintable(c)
    })
}

/// Writes every device's observations as result CSVs in the artifact
/// layout under `out`: a published test `<N>t<M>i_<id>` to
/// `<N>_thread_<M>_instruction/db/<device>.csv` (id `<id>`), any other
/// test, by full name, to `db/<device>.csv`, `<device>` the device's
/// [`export_stem`]. Every file is written inside `out`, never through a
/// symbolic link below it ([`OutDir`]).
/// The devices' tests are keyed as [`programs::resolve`] keys them, with
/// their programs (`programs`): a test named like a published one
/// (`<N>t<M>i_<id>`) whose program is not the published test of that name
/// is refused, since the layout names published tests only (so is a
/// `NAME@FINGERPRINT` test).
pub fn export(
    devices: &[Device],
    programs: &BTreeMap<String, progress_litmus::Test>,
    out: &Path,
) -> Result<Exported, WriteError> {
    let published: BTreeMap<String, String> = progress_litmus::axb::published::tests()
        .map_err(|e| WriteError::Refused(e.to_string()))?
        .into_iter()
        .map(|t| (t.name, progress_litmus::fingerprint::test(&t.entry.test)))
        .collect();
    let mut files: BTreeMap<PathBuf, Vec<(String, [Cell; 3])>> = BTreeMap::new();
    let mut taken: BTreeMap<String, &str> = BTreeMap::new();
    let mut renamed = Vec::new();
    for d in devices {
        let stem = export_stem(&d.name);
        if let Some(other) = taken.insert(stem.clone(), &d.name) {
            return Err(WriteError::Refused(format!(
                "devices {} and {} have the same file name {stem}.csv: rename one",
                crate::excerpt::printable(other),
                crate::excerpt::printable(&d.name),
            )));
        }
        if stem != d.name {
            renamed.push((d.name.clone(), stem.clone()));
        }
        for (key, obs) in &d.tests {
            let test = programs::name_of(key);
            let ours = programs.get(key).map(progress_litmus::fingerprint::test);
            if key.contains('@')
                || (published_id(test).is_some() && published.get(test) != ours.as_ref())
            {
                return Err(WriteError::Refused(format!(
                    "device {} ran {}, a program other than the published test of that name: the artifact's CSV layout names the published tests only; report it with `backends report --db` instead",
                    crate::excerpt::printable(&d.name),
                    crate::excerpt::printable(key),
                )));
            }
            let test = &test.to_string();
            let (file, id) = match published_id(test) {
                Some((n, m, id)) => (
                    PathBuf::from(format!("{n}_thread_{m}_instruction/db/{stem}.csv")),
                    id,
                ),
                None => (PathBuf::from(format!("db/{stem}.csv")), test.clone()),
            };
            files.entry(file).or_default().push((id, obs.cells));
        }
    }
    let dir = OutDir::open(out, files.keys().map(PathBuf::as_path), "db export")?;
    for (file, rows) in &mut files {
        rows.sort_by(|a, b| crate::report::analysis::natural_cmp(&a.0, &b.0));
        dir.write(file, crate::report::results::write(rows).as_bytes())?;
    }
    Ok(Exported {
        files: files.into_keys().map(|f| out.join(f)).collect(),
        renamed,
    })
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
    let conn = open_read(path)?;
    let sql = |e: rusqlite::Error| cannot_read(path, &e);
    let groups = db_gpus::read(&conn, path)?;
    let mut stmt = conn
        .prepare("SELECT name, vendor, architecture, driver, host FROM devices ORDER BY name")
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
                    gpu: None,
                },
            ))
        })
        .map_err(sql)?;
    let mut out: BTreeMap<String, DeviceInfo> = BTreeMap::new();
    for row in rows {
        let (name, mut info) = row.map_err(sql)?;
        info.gpu = groups.get(&name).map(|g| (g.gpu.clone(), g.setup.clone()));
        // The devices read as one (a GPU's setup): what the first states.
        let e = out.entry(db_gpus::read_as(&groups, &name)).or_default();
        e.vendor = e.vendor.take().or(info.vendor);
        e.architecture = e.architecture.take().or(info.architecture);
        e.driver = e.driver.take().or(info.driver);
        e.host = e.host.take().or(info.host);
        e.gpu = e.gpu.take().or(info.gpu);
    }
    Ok(out)
}

/// One file a campaign was imported from.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ImportInfo {
    pub file: String,
    /// `csv` (k-of-n summaries) or `journal` (one row per iteration).
    pub format: String,
    pub imported_unix_s: i64,
    /// The rows (runs or summaries) this file added.
    pub rows: i64,
}

/// A campaign with its provenance, as `db list` shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CampaignInfo {
    /// Its identity ([`crate::report::db_campaign`]), hex SHA-256.
    pub campaign: String,
    pub device: String,
    /// The physical GPU the device is a setup of, and the setup
    /// ([`db_gpus`]), where recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    pub vendor: Option<String>,
    pub architecture: Option<String>,
    pub target: Option<String>,
    /// The suite's fingerprint, when the campaign recorded one.
    pub suite: Option<String>,
    pub started_unix_ms: Option<i64>,
    pub label: Option<String>,
    pub driver: Option<String>,
    pub host: Option<String>,
    /// Runs held one row per iteration, and how many did not terminate.
    pub runs: i64,
    pub non_terminating_runs: i64,
    /// k-of-n rows (test x mapping) held where the source had only counts.
    pub summaries: i64,
    pub imports: Vec<ImportInfo>,
    /// `started_unix_ms` as a UTC date ([`crate::report::format::utc`]).
    pub started_utc: Option<String>,
    /// Imported from another machine's result lines (`backends import`):
    /// the start is when the import was made, not when the runs were.
    pub imported: bool,
    /// The deadline it ran with, where its options record it.
    pub deadline_ms: Option<f64>,
    /// The quickest run stopped at the deadline, over its mappings: the
    /// deadline was at most this (plus the stop), where not recorded.
    pub quickest_stopped_ms: Option<f64>,
    /// The fewest and most runs of a test under a mapping, from the runs
    /// and k-of-n counts held (a `P` summary counts none).
    pub runs_per_test: Option<[i64; 2]>,
    /// The iterations its options asked for.
    pub iterations: Option<u64>,
    /// The driver the device reported (the GPU's description).
    pub reported_driver: Option<String>,
    /// `normal`, `cooperative` or `intra-warp`, where its options say.
    pub launch: Option<String>,
    /// Its mappings whose deadline was too close to call
    /// ([`crate::report::observations::close_call`]).
    pub close_calls: Vec<crate::report::observations::CloseCall>,
}

/// What is not known, in `db list`.
pub const UNKNOWN: &str = "unknown";

/// A time in ms as `db list` shows it: whole ms where whole.
fn ms(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.1} ms")
    }
}

impl CampaignInfo {
    /// The device name the report reads its runs as: `GPU (SETUP)` where
    /// recorded ([`db_gpus::shown_name`]), else its own.
    pub fn read_as(&self) -> String {
        match (&self.gpu, &self.setup) {
            (Some(g), Some(s)) => db_gpus::shown_name(g, s),
            _ => self.device.clone(),
        }
    }

    /// The deadline of a campaign: recorded, or bounded by the quickest run
    /// stopped at it.
    pub fn deadline(&self) -> String {
        let c = self;
        match (c.deadline_ms, c.quickest_stopped_ms) {
            (Some(d), _) => ms(d),
            (None, Some(q)) => format!("{UNKNOWN} (runs stopped from {})", ms(q)),
            (None, None) => UNKNOWN.to_string(),
        }
    }

    /// The runs per test and mapping of a campaign: `N`, or `LO-HI`.
    pub fn runs_per_test(&self) -> String {
        let c = self;
        match (c.runs_per_test, c.iterations) {
            (Some([lo, hi]), _) if lo == hi => lo.to_string(),
            (Some([lo, hi]), _) => format!("{lo}-{hi}"),
            (None, Some(i)) => format!("{i} (iterations asked for)"),
            (None, None) => UNKNOWN.to_string(),
        }
    }

    /// Its date, driver, deadline, runs per test and launch, in words
    /// (`unknown` where not recorded), for the site.
    pub fn summary(&self) -> String {
        let unknown = || UNKNOWN.to_string();
        let started = self.started_utc.clone().map_or_else(unknown, |d| {
            if self.imported {
                format!("{d} (when imported)")
            } else {
                d
            }
        });
        format!(
            "campaign {}: started {started}; driver {}; deadline {}; runs per test {}; launch {}",
            self.label
                .clone()
                .unwrap_or_else(|| self.campaign.chars().take(12).collect()),
            self.driver
                .clone()
                .or(self.reported_driver.clone())
                .unwrap_or_else(unknown),
            self.deadline(),
            self.runs_per_test(),
            self.launch.clone().unwrap_or_else(unknown)
        )
    }
}

/// Every campaign of the database with its provenance, by device, start
/// and identity.
pub fn campaigns(path: &Path) -> Result<Vec<CampaignInfo>, String> {
    let conn = open_read(path)?;
    let sql = |e: rusqlite::Error| cannot_read(path, &e);
    let mut stmt = conn
        .prepare(
            "SELECT c.id, c.identity, d.name, d.vendor, d.architecture, c.target, s.fnv64,
                    c.started_unix_ms, c.label, c.driver, c.host,
                    (SELECT count(*) FROM runs r WHERE r.campaign_id = c.id),
                    (SELECT count(*) FROM runs r WHERE r.campaign_id = c.id AND r.terminated = 0),
                    (SELECT count(*) FROM summaries m WHERE m.campaign_id = c.id)
             FROM campaigns c JOIN devices d ON d.id = c.device_id LEFT JOIN suites s ON s.id = c.suite_id
             ORDER BY d.name, c.started_unix_ms, c.identity",
        )
        .map_err(sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                CampaignInfo {
                    campaign: r.get(1)?,
                    device: r.get(2)?,
                    gpu: None,
                    setup: None,
                    vendor: r.get(3)?,
                    architecture: r.get(4)?,
                    target: r.get(5)?,
                    suite: r.get(6)?,
                    started_unix_ms: r.get(7)?,
                    label: r.get(8)?,
                    driver: r.get(9)?,
                    host: r.get(10)?,
                    runs: r.get(11)?,
                    non_terminating_runs: r.get(12)?,
                    summaries: r.get(13)?,
                    imports: Vec::new(),
                    started_utc: None,
                    imported: false,
                    deadline_ms: None,
                    quickest_stopped_ms: None,
                    runs_per_test: None,
                    iterations: None,
                    reported_driver: None,
                    launch: None,
                    close_calls: Vec::new(),
                },
            ))
        })
        .map_err(sql)?;
    let mut out = rows.collect::<Result<Vec<_>, _>>().map_err(sql)?;
    let mut files = conn
        .prepare(
            "SELECT file, format, imported_unix_s, observations FROM imports
             WHERE id IN (SELECT import_id FROM summaries WHERE campaign_id = ?1
                          UNION SELECT import_id FROM runs WHERE campaign_id = ?1)
             ORDER BY file, id",
        )
        .map_err(sql)?;
    for (id, c) in &mut out {
        let rows = files
            .query_map([*id], |r| {
                Ok(ImportInfo {
                    file: r.get(0)?,
                    format: r.get(1)?,
                    imported_unix_s: r.get(2)?,
                    rows: r.get(3)?,
                })
            })
            .map_err(sql)?;
        c.imports = rows.collect::<Result<_, _>>().map_err(sql)?;
    }
    add_facts(&conn, path, &mut out)?;
    let groups = db_gpus::read(&conn, path)?;
    for (_, c) in &mut out {
        if let Some(g) = groups.get(&c.device) {
            c.gpu = Some(g.gpu.clone());
            c.setup = Some(g.setup.clone());
        }
    }
    Ok(out.into_iter().map(|(_, c)| c).collect())
}

/// Fills in what `db list` shows beyond the campaign's row: its date, the
/// runs per test its counts hold, and what its facts record
/// ([`db_facts`]).
fn add_facts(
    conn: &rusqlite::Connection,
    path: &Path,
    out: &mut [(i64, CampaignInfo)],
) -> Result<(), String> {
    let sql = |e: rusqlite::Error| cannot_read(path, &e);
    let facts = db_facts::read_all(conn, path)?;
    let mut per_test = conn
        .prepare(
            "SELECT min(n), max(n) FROM (
                SELECT count(*) AS n FROM runs WHERE campaign_id = ?1 GROUP BY test, mapping
                UNION ALL
                SELECT runs FROM summaries WHERE campaign_id = ?1 AND runs IS NOT NULL)",
        )
        .map_err(sql)?;
    for (id, c) in out.iter_mut() {
        c.started_utc = c.started_unix_ms.map(crate::report::format::utc);
        let (lo, hi): (Option<i64>, Option<i64>) = per_test
            .query_row([*id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(sql)?;
        c.runs_per_test = lo.zip(hi).map(|(lo, hi)| [lo, hi]);
        let Some(f) = facts.get(id) else { continue };
        c.imported = f.imported;
        c.deadline_ms = f.deadline_ms;
        c.iterations = f.iterations;
        c.reported_driver = f.driver.clone();
        c.launch = f.launch.clone();
        c.quickest_stopped_ms = f
            .times
            .iter()
            .filter_map(|t| t.quickest_stopped_ms)
            .reduce(f64::min);
        c.close_calls = Mapping::ALL
            .into_iter()
            .filter_map(|m| db_facts::times(f, m).close_call(m))
            .collect();
    }
    Ok(())
}
