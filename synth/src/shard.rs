//! Sharding a run over machines, and merging the pieces.
//!
//! A shard `K/N` (1-based) takes every `N`-th unit of the search space
//! ([`crate::program::units`]) starting with the `K`-th. Units are disjoint
//! and together cover the space, and the output of a run is the sorted set of
//! its tests, so merging the suites of shards `1/N..N/N` and renaming gives
//! the bytes of the unsharded run.

use crate::canon::{canonical_set, name_tests};
use axb::suite::Suite;
use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count`, `1 <= index <= count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Whether the unit at position `unit` in the unit order is in this shard.
    pub fn owns(&self, unit: usize) -> bool {
        unit % self.count == self.index - 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("invalid shard `{s}`: expected K/N with 1 <= K <= N, e.g. 2/8");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// The note line that records a shard in a suite: `<base>; shard K/N`.
const SHARD_TAG: &str = "; shard ";

/// The note of a suite made by `synth`: `base` describes the run without its
/// shard, so that merged shards get the unsharded note.
pub fn note(base: &str, shard: Option<Shard>) -> String {
    match shard {
        Some(s) => format!("{base}{SHARD_TAG}{s}"),
        None => base.to_string(),
    }
}

/// Merges the suites of shards `1/N..N/N` of one run into the suite of the
/// unsharded run. Refuses pieces of different runs, missing or repeated
/// shards, and suites that are not shards.
pub fn merge(parts: &[Suite]) -> Result<Suite, String> {
    let first = parts.first().ok_or("nothing to merge")?;
    let mut seen: Vec<Shard> = Vec::new();
    let mut base = None;
    for p in parts {
        if p.name != first.name {
            return Err(format!(
                "cannot merge suite `{}` with suite `{}`",
                p.name, first.name
            ));
        }
        let (b, s) = p
            .note
            .rsplit_once(SHARD_TAG)
            .and_then(|(b, s)| Some((b, s.parse::<Shard>().ok()?)))
            .ok_or_else(|| {
                format!(
                    "suite `{}` (note `{}`) is not a shard made by `synth --shard`",
                    p.name, p.note
                )
            })?;
        if *base.get_or_insert(b) != b {
            return Err(format!(
                "shards of different runs: `{}` and `{b}`",
                base.unwrap()
            ));
        }
        if seen.contains(&s) {
            return Err(format!("shard {s} given twice"));
        }
        seen.push(s);
    }
    let count = seen[0].count;
    if seen.iter().any(|s| s.count != count) {
        return Err("shards of different splits (K/N with different N)".into());
    }
    let missing: Vec<String> = (1..=count)
        .filter(|&k| !seen.contains(&Shard { index: k, count }))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!("missing shard(s) {}", missing.join(", ")));
    }
    let tests = canonical_set(
        parts
            .iter()
            .flat_map(|p| p.tests.iter().map(|e| e.test.clone())),
    );
    Ok(Suite {
        name: first.name.clone(),
        note: base.unwrap_or_default().to_string(),
        tests: name_tests(&first.name, tests),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_syntax() {
        assert_eq!("2/8".parse(), Ok(Shard { index: 2, count: 8 }));
        assert!("0/8".parse::<Shard>().is_err());
        assert!("9/8".parse::<Shard>().is_err());
        assert!("x".parse::<Shard>().is_err());
        let s = Shard { index: 2, count: 3 };
        assert_eq!(
            (0..7).filter(|&u| s.owns(u)).collect::<Vec<_>>(),
            vec![1, 4]
        );
    }

    #[test]
    fn merge_checks_coverage() {
        let mk = |k| Suite {
            name: "2t2i".into(),
            note: note("run", Some(Shard { index: k, count: 2 })),
            tests: vec![],
        };
        assert!(merge(&[mk(1)])
            .unwrap_err()
            .contains("missing shard(s) 2/2"));
        assert!(merge(&[mk(1), mk(1)]).unwrap_err().contains("twice"));
        assert_eq!(merge(&[mk(2), mk(1)]).unwrap().note, "run");
    }
}
