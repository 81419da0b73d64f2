//! Running the sampled shards of an estimate and measuring each: its tests,
//! its packed bytes, and the CPU time and peak memory of the process that
//! made it.
//!
//! Each sample is a child process, `synth gen --shard K/N` on one core
//! (`RAYON_NUM_THREADS=1`), reaped with `wait4`, whose resource usage is
//! that process's alone: CPU seconds (user + system) are what a one-core
//! array task needs, whatever else the machine runs, and the peak resident
//! memory is the shard's. A finished sample is recorded beside its shard
//! (`<shard>.cost.json`), so an interrupted estimate, run again with the
//! same seed, measures only what is missing; a sample that was interrupted
//! is started over (its journal removed), since a resumed shard's CPU time
//! would count only its last part.

use super::{Row, Sample, TableSample};
use crate::enumerate::checkpoint::journal_path;
use crate::enumerate::config::Config;
use crate::enumerate::shard::{Part, Shard};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

pub use progress_litmus::exit::Failure;

/// Where the samples of a run go and how they are run.
pub struct Runner<'a> {
    /// The `synth` that runs a shard (this program).
    pub exe: &'a Path,
    pub cfg: &'a Config,
    /// The shard count of the run.
    pub count: usize,
    /// The folder of the sampled shards and their records.
    pub dir: &'a Path,
    /// How many samples run at once.
    pub jobs: usize,
    /// Also Table 4 of each sample (`synth table`).
    pub table: bool,
}

impl Runner<'_> {
    /// The output of sampled shard `k` (the name the run's jobs give it).
    pub fn shard_path(&self, k: usize) -> PathBuf {
        self.dir
            .join(format!("{}-{k}-of-{}.axb.gz", self.cfg.name(), self.count))
    }

    /// The shard's output with `suffix` added to its name.
    fn beside(&self, k: usize, suffix: &str) -> PathBuf {
        let mut p = self.shard_path(k).into_os_string();
        p.push(suffix);
        PathBuf::from(p)
    }

    fn record_path(&self, k: usize) -> PathBuf {
        self.beside(k, ".cost.json")
    }

    /// Measures the shards `ks`, `jobs` at a time, reusing finished records;
    /// one status line on stderr per sample. Stops launching at the first
    /// failure and returns it once the running samples are done.
    pub fn measure(&self, ks: &[usize]) -> Result<Vec<Sample>, Failure> {
        std::fs::create_dir_all(self.dir)
            .map_err(|e| Failure::other(format!("cannot make {}: {e}", self.dir.display())))?;
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let done = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<Result<Sample, Failure>>>> =
            Mutex::new((0..ks.len()).map(|_| None).collect());
        std::thread::scope(|s| {
            for _ in 0..self.jobs.clamp(1, ks.len().max(1)) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= ks.len() || failed.load(Ordering::SeqCst) {
                        break;
                    }
                    let r = self.one(ks[i]);
                    match &r {
                        Ok((sample, recorded)) => {
                            let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                            self.say(sample, *recorded, n, ks.len());
                        }
                        Err(_) => failed.store(true, Ordering::SeqCst),
                    }
                    let r = r.map(|(s, _)| s);
                    results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
                });
            }
        });
        let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::with_capacity(ks.len());
        for r in results {
            match r {
                Some(Ok(s)) => out.push(s),
                Some(Err(f)) => return Err(f),
                None => {}
            }
        }
        Ok(out)
    }

    /// The status line of the `n`th of `of` samples done.
    fn say(&self, s: &Sample, recorded: bool, n: usize, of: usize) {
        let table = match &s.table {
            Some(t) => format!(", table {:.1} CPU s", t.cpu_seconds),
            None => String::new(),
        };
        eprintln!(
            "synth: estimate {}: shard {}/{} ({n} of {of}{}): {} tests, {:.1} CPU s, {} MiB{table}",
            self.cfg.name(),
            s.shard,
            self.count,
            if recorded { ", recorded earlier" } else { "" },
            s.tests,
            s.cpu_seconds,
            s.maxrss_kib / 1024
        );
    }

    /// Shard `k`'s sample, and whether it was recorded earlier: its record
    /// when it has one, else the shard run and measured; with its Table 4
    /// when asked.
    fn one(&self, k: usize) -> Result<(Sample, bool), Failure> {
        let (mut sample, recorded) = match self.recorded(k)? {
            Some(s) => (s, true),
            None => (self.enumerate(k)?, false),
        };
        if self.table {
            sample.table = Some(self.table_of(k)?);
        }
        Ok((sample, recorded))
    }

    /// Runs shard `k` afresh and records its measurement.
    fn enumerate(&self, k: usize) -> Result<Sample, Failure> {
        let out = self.shard_path(k);
        self.remove_stale_journal(&out)?;
        // An output without a record (the record is written after it) is
        // made again: its CPU time is unknown.
        let _ = std::fs::remove_file(&out);
        let c = self.cfg;
        let args: Vec<String> = vec![
            "gen".into(),
            format!("--threads={}", c.threads),
            format!("--instrs={}", c.instrs),
            format!("--locs={}", c.locs),
            format!("--values={}", c.values),
            format!("--shard={k}/{}", self.count),
            "--out".into(),
        ];
        let (cpu_seconds, wall_seconds, maxrss_kib) =
            self.run_child(k, &args, &out, &self.beside(k, ".log"))?;
        let part = Part::open(&out).map_err(Failure::other)?;
        let bytes = std::fs::metadata(&out)
            .map_err(|e| Failure::other(format!("cannot read {}: {e}", out.display())))?
            .len();
        let sample = Sample {
            shard: k,
            tests: part.recorded_tests() as u64,
            packed_bytes: bytes,
            cpu_seconds,
            wall_seconds,
            maxrss_kib,
            table: None,
        };
        write_record(&self.record_path(k), &sample)
    }

    /// Table 4 of sampled shard `k`: its record, else `synth table` run on
    /// the shard (into `<shard>.table/`, writing the one short list
    /// `OBE_STRONG`) and recorded.
    fn table_of(&self, k: usize) -> Result<TableSample, Failure> {
        let rec = self.beside(k, ".table.json");
        if let Ok(text) = std::fs::read_to_string(&rec) {
            return serde_json::from_str(&text).map_err(|e| {
                Failure::input(format!(
                    "{}: not a table record: {e}; delete it to measure again",
                    rec.display()
                ))
            });
        }
        let dir = self.beside(k, ".table");
        let args: Vec<String> = vec![
            "table".into(),
            self.shard_path(k).display().to_string(),
            "--lists=OBE_STRONG".into(),
            "--dir".into(),
        ];
        let (cpu_seconds, _, _) = self.run_child(k, &args, &dir, &self.beside(k, ".table.log"))?;
        let json = dir.join("table4.json");
        let text = std::fs::read_to_string(&json)
            .map_err(|e| Failure::other(format!("cannot read {}: {e}", json.display())))?;
        let rows = rows_of(&text).ok_or_else(|| {
            Failure::other(format!(
                "{}: not the table4.json synth table writes",
                json.display()
            ))
        })?;
        write_record(&rec, &TableSample { cpu_seconds, rows })
    }

    /// The record of shard `k` from an earlier estimate, if it and its
    /// shard are there and the shard is one of this run.
    fn recorded(&self, k: usize) -> Result<Option<Sample>, Failure> {
        let (rec, out) = (self.record_path(k), self.shard_path(k));
        let (Ok(text), true) = (std::fs::read_to_string(&rec), out.is_file()) else {
            return Ok(None);
        };
        let bad = |why: String| Failure::input(format!("{}: {why}", rec.display()));
        let s: Sample = serde_json::from_str(&text).map_err(|e| {
            bad(format!(
                "not a sample record: {e}; delete it to measure again"
            ))
        })?;
        let part = Part::open(&out).map_err(Failure::input)?;
        let expect = Shard {
            index: k,
            count: self.count,
        };
        if part.config() != self.cfg || part.shard() != expect || s.shard != k {
            return Err(bad(format!(
                "records a shard of another run than {} shard {expect}; give another --dir",
                crate::enumerate::config::describe(self.cfg)
            )));
        }
        if s.tests != part.recorded_tests() as u64 {
            return Err(bad(format!(
                "records {} tests, its shard {}; delete both to measure again",
                s.tests,
                part.recorded_tests()
            )));
        }
        Ok(Some(s))
    }

    /// Removes the journal an interrupted sample left, unless a running
    /// process holds it.
    fn remove_stale_journal(&self, out: &Path) -> Result<(), Failure> {
        let j = journal_path(out);
        let Ok(f) = std::fs::OpenOptions::new().write(true).open(&j) else {
            return Ok(());
        };
        if f.try_lock().is_err() {
            return Err(Failure::input(format!(
                "{}: another synth is running this shard; wait for it or give another --dir",
                j.display()
            )));
        }
        std::fs::remove_file(&j)
            .map_err(|e| Failure::other(format!("cannot remove {}: {e}", j.display())))
    }

    /// Runs `synth ARGS LAST` on one core (for sample `k`), its stderr in
    /// `log`; its CPU seconds (user + system), wall seconds and peak
    /// resident memory (KiB).
    fn run_child(
        &self,
        k: usize,
        args: &[String],
        last: &Path,
        log_path: &Path,
    ) -> Result<(f64, f64, u64), Failure> {
        let log = std::fs::File::create(log_path)
            .map_err(|e| Failure::other(format!("cannot write {}: {e}", log_path.display())))?;
        let start = Instant::now();
        let child = Command::new(self.exe)
            .args(args)
            .arg(last)
            .env("RAYON_NUM_THREADS", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| Failure::other(format!("cannot run {}: {e}", self.exe.display())))?;
        let (status, usage) = wait4(child.id())
            .map_err(|e| Failure::other(format!("cannot wait for sample {k}: {e}")))?;
        let wall = start.elapsed().as_secs_f64();
        if status != Some(0) {
            let text = std::fs::read_to_string(log_path).unwrap_or_default();
            let last = text.lines().last().unwrap_or("no message");
            let code = if status == Some(2) { 2 } else { 1 };
            return Err(Failure::new(
                code,
                format!(
                    "sample shard {k}/{}: synth {} failed: {last}",
                    self.count, args[0]
                ),
            ));
        }
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        let cpu = secs(usage.ru_utime) + secs(usage.ru_stime);
        Ok((cpu, wall, usage.ru_maxrss.max(0) as u64))
    }
}

/// Writes a record (one JSON line) whole or not at all, and returns it as
/// read back: a later estimate reads the record, and a float read from
/// JSON may differ from the one written in its last bit, so both use the
/// value read (the same figures from the same samples, to the bit).
fn write_record<T: serde::Serialize + serde::de::DeserializeOwned>(
    path: &Path,
    value: &T,
) -> Result<T, Failure> {
    let json = oracle::json::to_string(value).expect("a record serializes") + "\n";
    progress_litmus::io::write_atomically(path, json.as_bytes())
        .map_err(|e| Failure::other(format!("cannot write {}: {e}", path.display())))?;
    Ok(serde_json::from_str(&json).expect("a record reads back"))
}

/// The rows of a `table4.json` as counts.
fn rows_of(text: &str) -> Option<Vec<Row<u64>>> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    v["rows"]
        .as_array()?
        .iter()
        .map(|r| {
            let n = |f: &str, c: &str| r[f][c].as_u64();
            Some(Row {
                model: r["model"].as_str()?.to_string(),
                weak_distinguishing: n("weak", "distinguishing")?,
                weak_bucket_c: n("weak", "bucket_c")?,
                strong_distinguishing: n("strong", "distinguishing")?,
                strong_bucket_c: n("strong", "bucket_c")?,
            })
        })
        .collect()
}

/// Waits for child `pid` and returns its exit status (`None` when a signal
/// ended it) and its resource usage, which `std::process::Child::wait`
/// does not give.
fn wait4(pid: u32) -> std::io::Result<(Option<i32>, libc::rusage)> {
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid for writes; `pid` is our
        // own child, not yet reaped (its `Child` is never waited on).
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if r >= 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Ok((code, usage))
}
