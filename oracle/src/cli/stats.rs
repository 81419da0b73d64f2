//! `oracle classify --stats` (issue 24 item 1): what deciding each kernel
//! program cost, in states. Per input: the products built (six decide the
//! eleven models), the states and transitions they stored, the time, and
//! the bytes a stored state took in the largest product. States per second
//! and bytes per state are what compare with other explicit-state checkers
//! and what tell a faster checker from a smaller program.
//!
//! The figures other than the time are deterministic; the time is wall
//! time on the core that decided the input (inputs are decided in
//! parallel). AXB tests are decided by the AXB engine in one batch and get
//! no figures.

use crate::kernel::stats::Stats;
use crate::kernel::{flat_verdicts_stats, KernelError, Options};
use progress_litmus::kernel::program::Program;
use progress_litmus::Verdicts;
use std::fmt::Write;
use std::time::Instant;

/// What one kernel program cost.
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    pub stats: Stats,
    pub seconds: f64,
}

impl Cost {
    /// States stored per second of the decision.
    pub fn states_per_second(&self) -> f64 {
        self.stats.states as f64 / self.seconds.max(1e-9)
    }
}

/// The verdicts of a program with what they cost.
pub fn decide(program: &Program, opts: Options) -> Result<(Verdicts, bool, Cost), KernelError> {
    let t0 = Instant::now();
    let (v, deadlock, stats) = flat_verdicts_stats(program, opts)?;
    let seconds = t0.elapsed().as_secs_f64();
    Ok((v, deadlock, Cost { stats, seconds }))
}

/// The figures of a table output: one line an input, after the verdicts.
pub fn table<'a>(rows: impl Iterator<Item = (&'a str, Option<&'a Cost>)>) -> String {
    let rows: Vec<_> = rows.collect();
    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(4).max(4);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{:<width$}  {:>8} {:>10} {:>11} {:>10} {:>12} {:>11}",
        "test", "products", "states", "transitions", "ms", "states/s", "bytes/state"
    );
    for (name, cost) in rows {
        match cost {
            Some(c) => {
                let _ = writeln!(
                    out,
                    "{name:<width$}  {:>8} {:>10} {:>11} {:>10.1} {:>12.0} {:>11.1}",
                    c.stats.products,
                    c.stats.states,
                    c.stats.transitions,
                    c.seconds * 1e3,
                    c.states_per_second(),
                    c.stats.bytes_per_state()
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "{name:<width$}  (an AXB test: decided in one batch, no figures)"
                );
            }
        }
    }
    out
}

/// The figures as a JSON object.
pub fn json(c: &Cost) -> serde_json::Value {
    serde_json::json!({
        "products": c.stats.products,
        "states": c.stats.states,
        "transitions": c.stats.transitions,
        "largest_product_states": c.stats.max_states,
        "largest_product_bytes": c.stats.max_bytes,
        "bytes_per_state": (c.stats.bytes_per_state() * 10.0).round() / 10.0,
        "seconds": c.seconds,
        "states_per_second": c.states_per_second().round(),
    })
}

/// A row's JSON object with its figures under `stats` (null for an AXB
/// test).
pub fn attach(mut v: serde_json::Value, c: Option<&Cost>) -> serde_json::Value {
    v["stats"] = c.map(json).unwrap_or(serde_json::Value::Null);
    v
}

/// CSV records with the figures as four more columns (empty for an AXB
/// test). The records are appended to line by line: classify's CSV has no
/// quoted field (test names are from A-Z a-z 0-9 _ . + -), so a line is a
/// record.
pub fn csv(bytes: Vec<u8>, costs: &[Option<&Cost>]) -> Vec<u8> {
    let text = String::from_utf8(bytes).expect("classify's CSV is UTF-8");
    let mut out = String::new();
    let mut lines = text.lines();
    if let Some(h) = lines.next() {
        out.push_str(h);
        out.push_str(",states,transitions,seconds,bytes_per_state\n");
    }
    for (line, c) in lines.zip(costs.iter().chain(std::iter::repeat(&None))) {
        out.push_str(line);
        match c {
            Some(c) => {
                let _ = writeln!(
                    out,
                    ",{},{},{:.6},{:.1}",
                    c.stats.states,
                    c.stats.transitions,
                    c.seconds,
                    c.stats.bytes_per_state()
                );
            }
            None => out.push_str(",,,,\n"),
        }
    }
    out.into_bytes()
}
