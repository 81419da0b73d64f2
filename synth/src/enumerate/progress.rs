//! Progress of a long enumeration, reported on stderr.
//!
//! Engines only bump counters (cheap atomics); a [`Reporter`] thread (the
//! core library's, which `oracle --progress` also runs), started by the
//! command line, prints the rate and an estimate of what is left every few
//! seconds, so a long run never looks hung.

pub use progress_litmus::progress::Reporter;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Counters shared by the workers of one run.
#[derive(Debug)]
pub struct Progress {
    /// What `done` counts ("programs", "units").
    pub unit: &'static str,
    /// How many of them there are in all (an estimate for programs).
    pub total: f64,
    done: AtomicU64,
    found: AtomicU64,
    start: Instant,
}

impl Progress {
    pub fn new(unit: &'static str, total: f64) -> Progress {
        Progress {
            unit,
            total,
            done: AtomicU64::new(0),
            found: AtomicU64::new(0),
            start: Instant::now(),
        }
    }

    /// `n` more programs (or units) examined, `found` more tests found.
    pub fn add(&self, n: u64, found: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
        if found > 0 {
            self.found.fetch_add(found, Ordering::Relaxed);
        }
    }

    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    pub fn found(&self) -> u64 {
        self.found.load(Ordering::Relaxed)
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// One status line: done, rate, tests found, time left.
    pub fn line(&self) -> String {
        let secs = self.elapsed().as_secs_f64().max(1e-9);
        let done = self.done() as f64;
        let rate = done / secs;
        let left = if rate > 0.0 && self.total > done {
            format!(", ~{:.0} s left", (self.total - done) / rate)
        } else {
            String::new()
        };
        format!(
            "{:.0}/{:.0} {} ({:.1}%), {:.0}/s, {} tests so far, {:.1} s{}",
            done,
            self.total,
            self.unit,
            100.0 * done / self.total.max(1.0),
            rate,
            self.found(),
            secs,
            left
        )
    }

    /// Starts printing [`Progress::line`] on stderr every `every`, after a
    /// first delay of `every` (short runs print nothing).
    pub fn report(self: &Arc<Self>, label: String, every: Duration) -> Reporter {
        let p = Arc::clone(self);
        Reporter::every(every, move |_| format!("synth: {label}: {}", p.line()))
    }
}
