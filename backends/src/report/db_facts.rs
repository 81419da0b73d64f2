//! What the results database keeps of a campaign beyond its runs (table
//! `campaign_facts`, schema version 3): the parts of its device file (or
//! journal) that `backends report FOLDER` reads to qualify the runs, so
//! that `report --db`, `db list` and the site say the same (issue 44,
//! item 2). Kept as the canonical JSON of
//! `{"options", "description", "times": {"mappings"}}`, each where the
//! source has it: the options it ran with (`deadline_ms`, `iterations`),
//! what the device and host reported (`description`: the GPU's driver
//! version, `imported`), and per mapping the slowest terminating and the
//! quickest stopped run ([`crate::report::observations::mapping_times`]),
//! from which "too close to call" is decided by the same rule.

use crate::mapping::Mapping;
use crate::report::db_campaign::canonical;
use crate::report::observations::{self, Extremes};
use rusqlite::{params, Connection, Transaction};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The facts of a device file (or of a journal's campaign line with the
/// times computed from its runs): its `options`, `description` and
/// `times.mappings`, those it has; none when it has none of them.
pub fn of_device_file(doc: &Value) -> Option<Value> {
    let mut out = Map::new();
    for key in ["options", "description"] {
        if let Some(v) = doc.get(key) {
            out.insert(key.to_string(), v.clone());
        }
    }
    if let Some(m) = doc.pointer("/times/mappings") {
        out.insert("times".to_string(), json!({ "mappings": m }));
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Keeps `facts` for campaign `campaign_id` unless it has some: the first
/// file of a campaign to bring them gives them (its CSVs share one device
/// file).
pub fn store(tx: &Transaction, campaign_id: i64, facts: Option<&Value>) -> rusqlite::Result<()> {
    if let Some(f) = facts {
        tx.execute(
            "INSERT OR IGNORE INTO campaign_facts (campaign_id, facts) VALUES (?1, ?2)",
            params![campaign_id, canonical(f)],
        )?;
    }
    Ok(())
}

/// Like [`store`] for the campaign of identity `identity`, if it is in
/// the database: a file already imported (before version 3 kept facts)
/// brings its campaign's facts when imported again.
pub fn store_for(tx: &Transaction, identity: &str, facts: Option<&Value>) -> rusqlite::Result<()> {
    if let Some(f) = facts {
        tx.execute(
            "INSERT OR IGNORE INTO campaign_facts (campaign_id, facts)
             SELECT id, ?2 FROM campaigns WHERE identity = ?1",
            params![identity, canonical(f)],
        )?;
    }
    Ok(())
}

/// A campaign's facts, read back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    /// `options.deadline_ms`: the deadline it ran with, where recorded
    /// (`backends run` records it; `import` cannot know it).
    pub deadline_ms: Option<f64>,
    /// `options.iterations`: the iterations it was to run (for an import:
    /// the most runs of any test and mapping).
    pub iterations: Option<u64>,
    /// The driver the device reported (`description.gpu.driver_version`,
    /// CUDA's number, or a string as given).
    pub driver: Option<String>,
    /// How its workgroups were launched, where its options say
    /// (`--cooperative`, `--intra-warp` among its program arguments).
    pub launch: Option<String>,
    /// Imported from another machine's result lines (`backends import`):
    /// its start is when the import was made.
    pub imported: bool,
    /// Per mapping ([`Mapping::ALL`] order): its run times.
    pub times: [Extremes; 3],
}

/// CUDA's driver version number (1000 x major + 10 x minor) as a version.
fn cuda_version(n: u64) -> String {
    format!("{}.{}", n / 1000, n % 1000 / 10)
}

/// The facts in `text` (what [`store`] kept); `at` names them in errors.
pub fn parse(at: &str, text: &str) -> Result<Facts, String> {
    let doc: Value = crate::json::parse(text).map_err(|e| format!("{at}: not JSON: {e}"))?;
    let options = doc.get("options");
    let gpu = doc.pointer("/description/gpu");
    let driver = match gpu.and_then(|g| g.get("driver_version")) {
        Some(Value::Number(n)) => n
            .as_u64()
            .map(|n| format!("CUDA {} (driver API {n})", cuda_version(n))),
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let args: Vec<&str> = options
        .and_then(|o| o.get("program_args"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let launch = options
        .and_then(|o| o.get("program_args"))
        .is_some()
        .then(|| {
            let mut l = vec![];
            if args.iter().any(|a| a.ends_with("--cooperative")) {
                l.push("cooperative");
            }
            if args.iter().any(|a| a.ends_with("--intra-warp")) {
                l.push("intra-warp");
            }
            if l.is_empty() {
                "normal".to_string()
            } else {
                l.join(", ")
            }
        });
    Ok(Facts {
        deadline_ms: options
            .and_then(|o| o.get("deadline_ms"))
            .and_then(Value::as_f64),
        iterations: options
            .and_then(|o| o.get("iterations"))
            .and_then(Value::as_u64),
        driver,
        launch,
        imported: doc.pointer("/description/imported") == Some(&Value::Bool(true)),
        times: observations::mapping_times(at, &doc)?,
    })
}

/// Every campaign's facts, by campaign id (those without none).
pub fn read_all(conn: &Connection, db: &Path) -> Result<BTreeMap<i64, Facts>, String> {
    let sql = |e: rusqlite::Error| format!("{}: cannot read: {e}", db.display());
    let mut stmt = conn
        .prepare("SELECT campaign_id, facts FROM campaign_facts ORDER BY campaign_id")
        .map_err(sql)?;
    let mut rows = stmt.query([]).map_err(sql)?;
    let mut out = BTreeMap::new();
    while let Some(r) = rows.next().map_err(sql)? {
        let id: i64 = r.get(0).map_err(sql)?;
        let text: String = r.get(1).map_err(sql)?;
        let at = format!("{}: the facts of campaign {id}", db.display());
        out.insert(id, parse(&at, &text)?);
    }
    Ok(out)
}

/// The times of mapping `m` in `f`.
pub fn times(f: &Facts, m: Mapping) -> Extremes {
    f.times[m.code() as usize]
}

pub use crate::report::observations::CampaignCell;

/// How long the runs of campaign `f` under `m` are known to have been
/// allowed to go on: its deadline where recorded, else the longest of its
/// slowest terminating and its quickest stopped run.
fn reach_ms(f: &Facts, m: Mapping) -> Option<f64> {
    let t = times(f, m);
    [
        f.deadline_ms,
        t.slowest_terminated_ms,
        t.quickest_stopped_ms,
    ]
    .into_iter()
    .flatten()
    .reduce(f64::max)
}

/// Whether the campaigns of one device settle the hangs of a test under
/// `m` (`cells`: each campaign's count of it) as slow runs, and in what
/// words (`names`: the campaigns' names): every campaign in which it hung
/// had a deadline too close to call under `m`
/// ([`crate::report::observations::close_call`]), and in another campaign
/// every run of it terminated, a campaign whose runs under `m` went on
/// longer (`reach_ms`) than the quickest stopped run of each of those.
pub fn settled(
    cells: &[CampaignCell],
    m: Mapping,
    facts: &BTreeMap<i64, Facts>,
    names: &BTreeMap<i64, String>,
) -> Option<String> {
    let name = |id: i64| names.get(&id).cloned().unwrap_or_else(|| id.to_string());
    let mut stopped_at = Vec::new();
    for c in cells.iter().filter(|c| c.failed > 0) {
        let t = times(facts.get(&c.campaign)?, m);
        t.close_call(m)?;
        stopped_at.push((c.campaign, t.quickest_stopped_ms?));
    }
    let longest = stopped_at.iter().map(|s| s.1).reduce(f64::max)?;
    let (by, runs, reach) = cells
        .iter()
        .filter(|c| c.failed == 0)
        .filter_map(|c| Some((c, reach_ms(facts.get(&c.campaign)?, m)?)))
        .filter(|(_, reach)| *reach > longest)
        .map(|(c, reach)| (c.campaign, c.runs, reach))
        .max_by(|a, b| a.2.total_cmp(&b.2))?;
    let hung: Vec<String> = stopped_at
        .iter()
        .map(|(id, q)| {
            format!(
                "campaign {} stopped its quickest non-terminating run at {q:.1} ms",
                name(*id)
            )
        })
        .collect();
    let runs = runs.map_or("every run".to_string(), |n| format!("all {n} runs"));
    Some(format!(
        "{runs} terminated in campaign {}, whose runs went on to {reach:.1} ms; {}",
        name(by),
        hung.join("; ")
    ))
}
