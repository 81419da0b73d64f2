//! Resumable enumeration: a journal of finished units.
//!
//! A large configuration can run for hours. While it runs, every unit of the
//! search space that finishes is appended, with the tests it found, to a
//! journal beside the output (`<out>.journal`, JSON lines, flushed and
//! synced per line). If the run is interrupted (Ctrl-C, kill -9, a lost
//! machine), `--resume` reads the journal back, skips the units it records
//! and enumerates only the rest; the output is the same bytes as an
//! uninterrupted run, because the final set is canonicalised and sorted
//! whatever the order units finished in. The journal is removed once the
//! output has been written.
//!
//! The first line records the run (configuration, engine, shard): resuming
//! with different options is an error, as is any corrupt line but a torn
//! last one (a write cut short by a kill), which is dropped and its unit
//! enumerated again.

use crate::config::Config;
use crate::{Engine, Shard};
use axb::test::Test;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What a journal belongs to: a resumed run must match it exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Header {
    journal: String,
    config: String,
    threads: usize,
    instrs: usize,
    locs: usize,
    values: usize,
    max_states: Option<usize>,
    max_actions: Option<usize>,
    store_must_change: bool,
    engine: String,
    shard: Option<String>,
}

impl Header {
    fn new(cfg: &Config, engine: Engine, shard: Option<Shard>) -> Header {
        Header {
            journal: "synth".into(),
            config: cfg.name(),
            threads: cfg.threads,
            instrs: cfg.instrs,
            locs: cfg.locs,
            values: cfg.values,
            max_states: cfg.max_states,
            max_actions: cfg.max_actions,
            store_must_change: cfg.store_must_change,
            engine: engine.name().into(),
            shard: shard.map(|s| s.to_string()),
        }
    }
}

/// One finished unit: its index among all units of the configuration and
/// the tests it contains.
#[derive(Serialize, Deserialize)]
struct Done {
    unit: usize,
    tests: Vec<Test>,
}

/// The journal path for an output path.
pub fn journal_path(out: &Path) -> PathBuf {
    let mut p = out.as_os_str().to_owned();
    p.push(".journal");
    PathBuf::from(p)
}

/// An open journal: the units already done, and the file new ones are
/// appended to.
pub struct Journal {
    path: PathBuf,
    done: BTreeMap<usize, Vec<Test>>,
    file: Mutex<File>,
}

impl Journal {
    /// Starts a new journal at `path`. An existing one means an earlier run
    /// was interrupted: that is an error unless the caller resumes it.
    pub fn create(
        path: &Path,
        cfg: &Config,
        engine: Engine,
        shard: Option<Shard>,
    ) -> Result<Journal, String> {
        if path.exists() {
            return Err(format!(
                "{} exists: an earlier run was interrupted; pass --resume to continue it, or delete the file to start over",
                path.display()
            ));
        }
        let mut file =
            File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let header =
            serde_json::to_string(&Header::new(cfg, engine, shard)).expect("header serializes");
        writeln!(file, "{header}")
            .and_then(|_| file.sync_all())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(Journal {
            path: path.to_path_buf(),
            done: BTreeMap::new(),
            file: Mutex::new(file),
        })
    }

    /// Reopens the journal of an interrupted run with the same options, or
    /// starts a new one if there is none.
    pub fn resume(
        path: &Path,
        cfg: &Config,
        engine: Engine,
        shard: Option<Shard>,
    ) -> Result<Journal, String> {
        if !path.exists() {
            return Journal::create(path, cfg, engine, shard);
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
        // A last line without its newline was cut short by the interruption.
        let mut complete_len = text.len();
        if lines.last().is_some_and(|l| !l.ends_with('\n')) {
            complete_len -= lines.pop().map_or(0, str::len);
        }
        let mut lines = lines.into_iter().enumerate();
        let at = |k: usize| format!("{}:{}", path.display(), k + 1);
        let header: Header = match lines.next() {
            Some((k, l)) => serde_json::from_str(l)
                .map_err(|e| format!("{}: not a synth journal header: {e}", at(k)))?,
            None => {
                return Err(format!(
                    "{}: empty journal; delete it to start over",
                    path.display()
                ))
            }
        };
        let want = Header::new(cfg, engine, shard);
        if header != want {
            return Err(format!(
                "{}: the journal is of another run ({} {} engine, shard {}); resume with the same options, or delete it",
                path.display(),
                header.config,
                header.engine,
                header.shard.as_deref().unwrap_or("none")
            ));
        }
        let mut done = BTreeMap::new();
        for (k, l) in lines {
            let d: Done = serde_json::from_str(l)
                .map_err(|e| format!("{}: corrupt journal line: {e}", at(k)))?;
            if done.insert(d.unit, d.tests).is_some() {
                return Err(format!("{}: unit {} recorded twice", at(k), d.unit));
            }
        }
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(complete_len as u64).map(|_| f))
            .map_err(|e| format!("cannot reopen {}: {e}", path.display()))?;
        let mut file = file;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0))
            .map_err(|e| format!("cannot reopen {}: {e}", path.display()))?;
        Ok(Journal {
            path: path.to_path_buf(),
            done,
            file: Mutex::new(file),
        })
    }

    /// The tests of unit `unit` if an earlier run finished it.
    pub fn done(&self, unit: usize) -> Option<&Vec<Test>> {
        self.done.get(&unit)
    }

    /// How many units earlier runs finished.
    pub fn units_done(&self) -> usize {
        self.done.len()
    }

    /// Records that `unit` finished with `tests`, durably, before returning.
    pub fn record(&self, unit: usize, tests: &[Test]) -> Result<(), String> {
        let line = serde_json::to_string(&Done {
            unit,
            tests: tests.to_vec(),
        })
        .expect("tests serialize");
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        writeln!(f, "{line}")
            .and_then(|_| f.sync_data())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// Removes the journal once the output is safely written.
    pub fn finish(self) -> Result<(), String> {
        drop(self.file);
        std::fs::remove_file(&self.path)
            .map_err(|e| format!("cannot remove {}: {e}", self.path.display()))
    }
}
