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
    let sql = |e: rusqlite::Error| {
        format!(
            "{}: cannot read: {}",
            db.display(),
            crate::excerpt::message(&e.to_string())
        )
    };
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
