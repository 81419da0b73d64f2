//! A report from result folders and a results database together: each
//! observation keyed by the test it is of ([`programs`]), hangs that a
//! later campaign settled marked ([`db::settle`]), then judged
//! ([`analysis`]). `backends report` and `backends site` both build theirs
//! here.

use crate::excerpt::printable;
use crate::report::analysis::{self, Report};
use crate::report::{db, observations, programs};
use std::path::{Path, PathBuf};

/// The report of the result files `results` and the database `db`, each
/// observation judged against the test it is of ([`programs::resolve`]; `tests` is
/// `--tests`).
pub fn report(results: &[PathBuf], db: Option<&Path>, tests: &[PathBuf]) -> Result<Report, String> {
    let mut devices = if results.is_empty() {
        Vec::new()
    } else {
        observations::load(results)?
    };
    let mut leads = programs::tag_files(&mut devices)?;
    let mut settle = None;
    if let Some(db) = db {
        let loaded = db::load(db)?;
        leads.extend(loaded.leads);
        settle = Some(loaded.settle);
        for d in loaded.devices {
            if devices.iter().any(|e| e.name == d.name) {
                return Err(format!(
                    "{}: device {} is both in the database and in the result files given",
                    db.display(),
                    printable(&d.name)
                ));
            }
            devices.push(d);
        }
    }
    let tests = programs::resolve(&mut devices, tests, &leads)?;
    if let Some(s) = &settle {
        db::settle(&mut devices, s);
    }
    analysis::analyse(&devices, &tests)
}
