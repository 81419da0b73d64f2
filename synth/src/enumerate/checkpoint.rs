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
//!
//! The journal is trusted with nothing, because what it holds goes into the
//! output unexamined by the engines:
//! - it is held with an exclusive OS lock (`File::try_lock`) for the life of
//!   the process, so a second `synth` on the same output is refused at once
//!   instead of interleaving lines with the first (both journalling every
//!   unit, mangled lines, neither finishing cleanly);
//! - every line starts with the FNV-1a checksum of its body, so a line
//!   edited into other valid JSON (a test dropped, added or changed, a unit
//!   renumbered) is an error;
//! - every unit number must be one of this run's (in range, owned by its
//!   shard) and appear once, and every test is checked again against the
//!   run's options: its shape, locations and values within the bounds, in
//!   the unit it is recorded for, and satisfying the constraints of SPEC §4.
//!   A checksum can be recomputed by hand; this check cannot be fooled into
//!   a wrong suite, and a test such as `loc: 200` never reaches code that
//!   would index with it.
//!
//! Any failure is one `file:line: ...` error before any work is done.

use crate::enumerate::config::Config;
use crate::enumerate::program::Unit;
use crate::{Engine, Shard};
use progress_litmus::axb::test::Test;
use progress_litmus::io::journal::Holder;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{Seek, Write};
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

/// The journal path for an output path: beside it, `<out>.journal`; for a
/// directory output given with a trailing slash (`--out 2t3i/`), beside the
/// directory (`2t3i.journal`), not inside it.
pub fn journal_path(out: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let bytes = out.as_os_str().as_bytes();
    let trimmed = match bytes.iter().rposition(|&b| b != b'/') {
        Some(k) => &bytes[..=k],
        None => bytes,
    };
    let mut p = std::ffi::OsStr::from_bytes(trimmed).to_owned();
    p.push(".journal");
    PathBuf::from(p)
}

/// FNV-1a, 64 bits: the checksum of a journal line's body. Not a security
/// measure (the re-validation of every test is that): it catches edits and
/// bit rot cheaply.
fn fnv64(bytes: &[u8]) -> u64 {
    let mut h = crate::checksum::Fnv64::default();
    h.write(bytes);
    h.0
}

/// A journal line: `<checksum, 16 hex digits> <JSON body>`. The one line
/// format of synth's journals (this one and `synth find`'s).
pub(crate) fn line(body: &str) -> String {
    format!("{:016x} {body}\n", fnv64(body.as_bytes()))
}

/// The body of a journal line whose checksum matches, else why not.
pub(crate) fn body(line: &str) -> Result<&str, String> {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let (sum, body) = line
        .split_once(' ')
        .filter(|(s, _)| s.len() == 16)
        .ok_or("not a journal line (`<checksum> <JSON>`)")?;
    let sum =
        u64::from_str_radix(sum, 16).map_err(|_| "not a journal line (`<checksum> <JSON>`)")?;
    if sum != fnv64(body.as_bytes()) {
        return Err("checksum mismatch: the line was changed after synth wrote it".into());
    }
    Ok(body)
}

/// Opens (creating if missing) and locks the journal at `path`
/// ([`progress_litmus::io::journal::open_locked`]); `what` names the kind
/// of process in the message when another holds the lock.
pub(crate) fn open_locked(path: &Path, what: &str) -> Result<File, String> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    let who = Holder {
        process: what,
        work: "output",
    };
    progress_litmus::io::journal::open_locked(path, &options, who)
}

/// The run a journal belongs to: its options and the pieces of work it owns
/// (position among all pieces of the split, and the piece).
struct Run<'a> {
    cfg: &'a Config,
    owned: HashMap<usize, Unit>,
    all: usize,
}

impl Run<'_> {
    /// Why `test`, recorded for `unit`, cannot be one of this run's tests.
    fn check(&self, unit: &Unit, test: &Test) -> Result<(), String> {
        crate::enumerate::config::check_shape(test, self.cfg)?;
        if !unit.contains(test) {
            return Err("not in the unit it is recorded for".into());
        }
        if let Err(v) = crate::enumerate::constraints::check(test, self.cfg) {
            return Err(format!("not a test of this run: {v}"));
        }
        Ok(())
    }
}
/// `path:line` of line `k` (0-based) of a journal, for its errors.
fn at(path: &Path, k: usize) -> String {
    format!("{}:{}", path.display(), k + 1)
}

/// Checks a journal's first line: the header of a run with exactly these
/// options, so that units of another run are never mixed into this one.
fn check_header(
    first: Option<(usize, &str)>,
    path: &Path,
    cfg: &Config,
    engine: Engine,
    shard: Option<Shard>,
) -> Result<(), String> {
    let header: Header = match first {
        Some((k, l)) => body(l)
            .and_then(|b| serde_json::from_str(b).map_err(|e| e.to_string()))
            .map_err(|e| format!("{}: not a synth journal header: {e}", at(path, k)))?,
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
    Ok(())
}

/// Reads the finished units after the header, each checked (a unit of
/// this run's shard, recorded once, every test one the unit can produce),
/// so that a corrupt or forged journal is refused before any work.
fn read_units<'a>(
    lines: impl Iterator<Item = (usize, &'a str)>,
    run: &Run,
    path: &Path,
) -> Result<BTreeMap<usize, Vec<Test>>, String> {
    let mut done = BTreeMap::new();
    for (k, l) in lines {
        let d: Done = body(l)
            .and_then(|b| serde_json::from_str(b).map_err(|e| e.to_string()))
            .map_err(|e| format!("{}: corrupt journal line: {e}", at(path, k)))?;
        let Some(unit) = run.owned.get(&d.unit) else {
            return Err(if d.unit >= run.all {
                format!(
                    "{}: unit {} is out of range: this run has {} units",
                    at(path, k),
                    d.unit,
                    run.all
                )
            } else {
                format!("{}: unit {} is not in this shard", at(path, k), d.unit)
            });
        };
        for (n, t) in d.tests.iter().enumerate() {
            run.check(unit, t)
                .map_err(|e| format!("{}: unit {}, test {}: {e}", at(path, k), d.unit, n + 1))?;
        }
        if done.insert(d.unit, d.tests).is_some() {
            return Err(format!("{}: unit {} recorded twice", at(path, k), d.unit));
        }
    }
    Ok(done)
}

/// An open journal: the units already done, and the file new ones are
/// appended to, held with an exclusive lock until the journal is dropped.
pub struct Journal {
    path: PathBuf,
    done: BTreeMap<usize, Vec<Test>>,
    file: Mutex<File>,
}

impl Journal {
    /// Starts a new journal at `path`. An existing one means an earlier run
    /// was interrupted: that is an error unless the caller resumes it; one
    /// locked by a running process is an error either way.
    pub fn create(
        path: &Path,
        cfg: &Config,
        engine: Engine,
        shard: Option<Shard>,
    ) -> Result<Journal, String> {
        let file = open_locked(path, "synth")?;
        let len = file
            .metadata()
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .len();
        if len > 0 {
            return Err(format!(
                "{} exists: an earlier run was interrupted; pass --resume to continue it, or delete the file to start over",
                path.display()
            ));
        }
        Journal::start(file, path, cfg, engine, shard)
    }

    /// Writes the header into the empty, locked `file`.
    fn start(
        mut file: File,
        path: &Path,
        cfg: &Config,
        engine: Engine,
        shard: Option<Shard>,
    ) -> Result<Journal, String> {
        let header =
            oracle::json::to_string(&Header::new(cfg, engine, shard)).expect("header serializes");
        file.write_all(line(&header).as_bytes())
            .and_then(|_| file.sync_all())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(Journal {
            path: path.to_path_buf(),
            done: BTreeMap::new(),
            file: Mutex::new(file),
        })
    }

    /// Reopens the journal of an interrupted run with the same options, or
    /// starts a new one if there is none. Every line is checked (see the
    /// module documentation) before anything is enumerated.
    pub fn resume(
        path: &Path,
        cfg: &Config,
        engine: Engine,
        shard: Option<Shard>,
    ) -> Result<Journal, String> {
        let mut file = open_locked(path, "synth")?;
        let bytes =
            progress_litmus::io::read_open_limited(&mut file, path).map_err(|e| e.to_string())?;
        if bytes.is_empty() {
            return Journal::start(file, path, cfg, engine, shard);
        }
        let text = String::from_utf8(bytes)
            .map_err(|e| format!("{}: not a synth journal: {e}", path.display()))?;
        let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
        // A last line without its newline was cut short by the interruption.
        let mut complete_len = text.len();
        if lines.last().is_some_and(|l| !l.ends_with('\n')) {
            complete_len -= lines.pop().map_or(0, str::len);
        }
        let mut lines = lines.into_iter().enumerate();
        check_header(lines.next(), path, cfg, engine, shard)?;
        let run = Run {
            cfg,
            all: crate::enumerate::shard::pieces(cfg, shard).len(),
            owned: crate::enumerate::shard::owned(cfg, shard)
                .into_iter()
                .collect(),
        };
        let done = read_units(lines, &run, path)?;
        file.set_len(complete_len as u64)
            .and_then(|_| file.seek(std::io::SeekFrom::End(0)))
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
        let body = oracle::json::to_string(&Done {
            unit,
            tests: tests.to_vec(),
        })
        .expect("tests serialize");
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(line(&body).as_bytes())
            .and_then(|_| f.sync_data())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// Removes the journal once the output is safely written (still holding
    /// the lock, so no other process can have it in between).
    pub fn finish(self) -> Result<(), String> {
        let removed = std::fs::remove_file(&self.path)
            .map_err(|e| format!("cannot remove {}: {e}", self.path.display()));
        drop(self.file);
        removed
    }
}
