//! Whether a campaign's deadline could tell a slow run from a hang.
//!
//! A run still going at its deadline is stopped and reported
//! non-terminating. That is only a fair reading when every run that does
//! terminate takes far less than the deadline. On an NVIDIA H200 the
//! round-robin and chunked mappings, at the default 32,767 instances, took
//! 130 ms on the median and up to 296 ms to terminate, against a 300 ms
//! deadline (`results/h200/README.md`): the project README's earlier
//! advice of 100 ms would have reported most terminating runs as hangs.
//!
//! So, per mapping, the journal's slowest terminating run is set against
//! its quickest stopped run (which lasted about the deadline, plus the
//! stop): when the first took over half as long as the second, the
//! campaign's non-terminating runs under that mapping may be slow runs
//! cut short (the rule is [`crate::report::observations::close_call`]).
//! `run` and `import` warn, the device file records the figures
//! (`times.mappings`), and `backends report` marks those mappings.

use crate::campaign::journal;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The runs of one mapping: how many, and the extremes that matter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MappingTimes {
    pub runs: usize,
    pub terminated: usize,
    /// The longest `elapsed_ms` of a run that terminated.
    pub slowest_terminated_ms: Option<f64>,
    /// The shortest `elapsed_ms` of a run that did not (it was stopped).
    pub quickest_stopped_ms: Option<f64>,
}

impl MappingTimes {
    /// A terminating run took over half as long as a stopped one.
    pub fn close_call(&self) -> bool {
        match (self.slowest_terminated_ms, self.quickest_stopped_ms) {
            (Some(t), Some(s)) => crate::report::observations::close_call(t, s),
            _ => false,
        }
    }
}

/// The runs of each mapping in the journal, by mapping name.
pub fn per_mapping(contents: &journal::Contents) -> BTreeMap<String, MappingTimes> {
    let mut out: BTreeMap<String, MappingTimes> = BTreeMap::new();
    for r in contents.results() {
        let m = out.entry(r.mapping.clone()).or_default();
        m.runs += 1;
        let slot = if r.terminated {
            m.terminated += 1;
            &mut m.slowest_terminated_ms
        } else {
            &mut m.quickest_stopped_ms
        };
        let keep = match *slot {
            None => true,
            Some(v) if r.terminated => r.elapsed_ms > v,
            Some(v) => r.elapsed_ms < v,
        };
        if keep {
            *slot = Some(r.elapsed_ms);
        }
    }
    out
}

/// The device file's `times.mappings`: per mapping its runs, terminated
/// runs, slowest terminating and quickest stopped run (ms, or null).
pub fn json(times: &BTreeMap<String, MappingTimes>) -> Value {
    let round = |v: Option<f64>| v.map(|v| (v * 1000.0).round() / 1000.0);
    times
        .iter()
        .map(|(m, t)| {
            (
                m.clone(),
                json!({
                    "runs": t.runs,
                    "terminated": t.terminated,
                    "slowest_terminated_ms": round(t.slowest_terminated_ms),
                    "quickest_stopped_ms": round(t.quickest_stopped_ms),
                }),
            )
        })
        .collect::<serde_json::Map<String, Value>>()
        .into()
}

/// One warning per mapping whose deadline was a close call.
pub fn warnings(name: &str, times: &BTreeMap<String, MappingTimes>) -> Vec<String> {
    times
        .iter()
        .filter(|(_, t)| t.close_call())
        .map(|(m, t)| {
            format!(
                "{name}, {m}: a run that terminated took {:.1} ms, over half of the {:.1} ms after which the quickest non-terminating run was stopped; some of the {} runs reported non-terminating may be slow runs cut short: run those tests again with a --deadline-ms well above {:.0}",
                t.slowest_terminated_ms.unwrap_or(0.0),
                t.quickest_stopped_ms.unwrap_or(0.0),
                t.runs - t.terminated,
                t.slowest_terminated_ms.unwrap_or(0.0) * 2.0,
            )
        })
        .collect()
}

/// Prints `warning: ...` lines on stderr, escaped.
pub fn print(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {}", crate::excerpt::printable(w));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(term: &[f64], stopped: &[f64]) -> MappingTimes {
        let mut t = MappingTimes::default();
        for &v in term {
            t.runs += 1;
            t.terminated += 1;
            t.slowest_terminated_ms = Some(t.slowest_terminated_ms.map_or(v, |s: f64| s.max(v)));
        }
        for &v in stopped {
            t.runs += 1;
            t.quickest_stopped_ms = Some(t.quickest_stopped_ms.map_or(v, |s: f64| s.min(v)));
        }
        t
    }

    #[test]
    fn a_deadline_is_a_close_call_past_half() {
        // The H200's round-robin runs: 295.6 ms against 300.2 ms.
        assert!(times(&[0.3, 131.0, 295.6], &[300.2, 303.8]).close_call());
        assert!(times(&[150.2], &[300.2]).close_call());
        assert!(!times(&[150.0], &[300.2]).close_call());
        // Its cooperative runs: 22 ms against 300 ms.
        assert!(!times(&[8.2, 22.3], &[300.2]).close_call());
        // Nothing stopped, or nothing terminated: nothing to compare.
        assert!(!times(&[295.0], &[]).close_call());
        assert!(!times(&[], &[300.0]).close_call());
    }

    #[test]
    fn warnings_name_the_campaign_the_mapping_and_the_figures() {
        let mut m = BTreeMap::new();
        m.insert("plain".to_string(), times(&[0.3], &[300.2]));
        m.insert("round-robin".to_string(), times(&[295.6], &[300.2, 301.0]));
        let w = warnings("h200", &m);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("h200, round-robin: a run that terminated took 295.6 ms"),
            "{}",
            w[0]
        );
        assert!(
            w[0].contains("300.2 ms") && w[0].contains("of the 2 runs"),
            "{}",
            w[0]
        );
        let j = json(&m);
        assert_eq!(j["round-robin"]["slowest_terminated_ms"], 295.6);
        assert_eq!(j["plain"]["quickest_stopped_ms"], 300.2);
        assert_eq!(j["plain"]["terminated"], 1);
    }
}
