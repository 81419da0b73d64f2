//! Progress of a long exploration, on standard error (issue 43 item 5).
//!
//! The explorers only add to one counter, a relaxed atomic bumped once per
//! batch of states ([`stored`]); a [`Reporter`] thread, started by a
//! command line, prints a line every two seconds once the run has lasted
//! two, so a long decision never looks hung and a short one prints
//! nothing: `oracle: 12,400,000 states stored (2.1M a second), 850 MiB
//! resident, 6 s`. The count is of every state stored by every
//! exploration of the run (each model's product, each twin, the value
//! check), the figure a user compares with `--max-states`' budget and the
//! rate the benchmarks report.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

static STORED: AtomicU64 = AtomicU64::new(0);

/// `n` more states stored by some exploration of this run.
#[inline]
pub fn stored(n: u64) {
    if n > 0 {
        STORED.fetch_add(n, Ordering::Relaxed);
    }
}

/// The states stored so far in this run.
pub fn states() -> u64 {
    STORED.load(Ordering::Relaxed)
}

/// The resident memory of this process in bytes, where the system says
/// (Linux's `/proc/self/status`), else `None`.
pub fn resident() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `12,400,000`.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The line printed after `elapsed` with `states` stored and `memory`
/// resident: `12,400,000 states stored (2.1M a second), 850 MiB resident,
/// 6 s`.
pub fn line(states: u64, elapsed: Duration, memory: Option<u64>) -> String {
    let secs = elapsed.as_secs_f64().max(1e-3);
    let rate = states as f64 / secs;
    let rate = if rate >= 1e6 {
        format!("{:.1}M", rate / 1e6)
    } else if rate >= 1e3 {
        format!("{:.0}k", rate / 1e3)
    } else {
        format!("{rate:.0}")
    };
    let mem = memory.map_or(String::new(), |b| format!(", {} MiB resident", b >> 20));
    format!(
        "{} states stored ({rate} a second){mem}, {:.0} s",
        grouped(states),
        elapsed.as_secs_f64()
    )
}

/// A running progress printer; stops (and prints nothing more) when
/// dropped.
pub struct Reporter {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Reporter {
    /// Prints `TOOL: LINE` ([`line()`]: the states stored since) on
    /// standard error every `every`, the first after `every` (short runs
    /// print nothing).
    pub fn start(tool: &'static str, every: Duration) -> Reporter {
        let base = states();
        Reporter::every(every, move |elapsed| {
            let l = line(states() - base, elapsed, resident());
            format!("{tool}: {l}")
        })
    }

    /// Prints the line `say` gives for the time elapsed on standard error
    /// every `every`, the first after `every` (`synth`'s enumeration
    /// progress is one).
    pub fn every(every: Duration, say: impl Fn(Duration) -> String + Send + 'static) -> Reporter {
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let start = Instant::now();
        let handle = std::thread::spawn(move || {
            let tick = Duration::from_millis(50);
            let mut next = every;
            while !s.load(Ordering::Relaxed) {
                std::thread::sleep(tick);
                let elapsed = start.elapsed();
                if elapsed >= next && !s.load(Ordering::Relaxed) {
                    next += every;
                    let _ = writeln!(std::io::stderr(), "{}", say(elapsed));
                }
            }
        });
        Reporter {
            stop,
            handle: Some(handle),
        }
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_states_rate_memory_and_time() {
        let l = line(12_400_000, Duration::from_secs(6), Some(850 << 20));
        assert_eq!(
            l,
            "12,400,000 states stored (2.1M a second), 850 MiB resident, 6 s"
        );
        assert_eq!(
            line(1_000, Duration::from_secs(4), None),
            "1,000 states stored (250 a second), 4 s"
        );
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(100), "100");
    }

    #[test]
    fn stored_states_add_up() {
        let before = states();
        stored(5);
        stored(0);
        assert!(states() >= before + 5);
    }
}
