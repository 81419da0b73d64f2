//! A GPU is one device (issue 44 item 3): the results database records
//! which physical GPU a device is, and how it was driven (its *setup*: the
//! API and the launch, e.g. `CUDA, cooperative launch`), given at import
//! (`db import --gpu NAME --setup TEXT`, table `gpus`, schema version 4).
//!
//! Every device of one GPU and setup is read as one device named
//! `GPU (SETUP)` ([`shown_name`]): a re-run under another name (the
//! H200's `h200-2s`, a 2 s deadline for the tests `h200` was too close to
//! call on) is another campaign of it, its runs summed and its hangs
//! weighed with the other campaigns' ([`crate::report::db::settle`]). The
//! report and the site then show one row per GPU, combining its setups
//! ([`crate::report::analysis`]), with each setup beneath.

use rusqlite::{params, Connection, Transaction};
use std::collections::BTreeMap;
use std::path::Path;

/// How a grouped device is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grouped {
    pub gpu: String,
    pub setup: String,
}

impl Grouped {
    /// `GPU (SETUP)`.
    pub fn shown(&self) -> String {
        shown_name(&self.gpu, &self.setup)
    }
}

/// The name a device of `gpu` driven as `setup` is read as.
pub fn shown_name(gpu: &str, setup: &str) -> String {
    format!("{gpu} ({setup})")
}

/// Records that device `device_id` is `gpu` driven as `setup` (what a
/// later import states replaces what was recorded).
pub fn store(tx: &Transaction, device_id: i64, gpu: &str, setup: &str) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO gpus (device_id, gpu, setup) VALUES (?1, ?2, ?3)
         ON CONFLICT(device_id) DO UPDATE SET gpu = excluded.gpu, setup = excluded.setup",
        params![device_id, gpu, setup],
    )?;
    Ok(())
}

/// The GPU and setup of every device that has one, by device name.
pub fn read(conn: &Connection, db: &Path) -> Result<BTreeMap<String, Grouped>, String> {
    let sql = |e: rusqlite::Error| crate::report::db_open::cannot_read(db, &e);
    let mut stmt = conn
        .prepare("SELECT d.name, g.gpu, g.setup FROM gpus g JOIN devices d ON d.id = g.device_id")
        .map_err(sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                Grouped {
                    gpu: r.get(1)?,
                    setup: r.get(2)?,
                },
            ))
        })
        .map_err(sql)?;
    rows.collect::<Result<_, _>>().map_err(sql)
}

/// The name `device` is read as: its GPU and setup where it has them.
pub fn read_as(groups: &BTreeMap<String, Grouped>, device: &str) -> String {
    groups
        .get(device)
        .map_or_else(|| device.to_string(), Grouped::shown)
}

/// Refuses a database where the name a device is read as is ambiguous: a
/// device of no GPU named like a GPU's setup (`NVIDIA H200 (Vulkan)`), or
/// two GPU and setup pairs read alike (`A (B)` with `C`, `A` with
/// `B) (C`): their runs would be summed as one device's.
pub fn check(
    conn: &Connection,
    db: &Path,
    groups: &BTreeMap<String, Grouped>,
) -> Result<(), String> {
    let sql = |e: rusqlite::Error| crate::report::db_open::cannot_read(db, &e);
    let mut stmt = conn.prepare("SELECT name FROM devices").map_err(sql)?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(sql)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(sql)?;
    let mut read: BTreeMap<String, (&str, Option<&Grouped>)> = BTreeMap::new();
    for name in &names {
        let g = groups.get(name);
        let shown = read_as(groups, name);
        if let Some((other, og)) = read.get(&shown) {
            if og.map(|x| (&x.gpu, &x.setup)) != g.map(|x| (&x.gpu, &x.setup)) || g.is_none() {
                return Err(format!(
                    "{}: devices {} and {} would both be read as {}: a device of no GPU is named like a GPU's setup, or two GPU and setup pairs read alike; import one under another name or --gpu/--setup",
                    db.display(),
                    crate::excerpt::printable(other),
                    crate::excerpt::printable(name),
                    crate::excerpt::printable(&shown)
                ));
            }
        }
        read.insert(shown, (name, g));
    }
    Ok(())
}
