//! Sharding a run over machines, and merging the pieces.
//!
//! A run's work is a list of *pieces* ([`pieces`]): the units of the search
//! space ([`crate::enumerate::program::units`]) for an unsharded run, cut finer
//! ([`crate::enumerate::program::refine`]: the next instruction fixed) until there are
//! at least [`PIECES_PER_SHARD`] pieces per shard. A shard `K/N` (1-based)
//! takes the pieces that a greedy largest-first assignment by program count
//! ([`crate::enumerate::program::unit_size`]) gives to shard `K`, so every shard has
//! about the same number of programs to examine, even with far more shards
//! than units (a 6-instruction configuration has about 100 units; whole
//! units over 256 shards left most shards empty and a few with everything).
//! Pieces are disjoint and together cover the space, and the output of a
//! run is the sorted set of its tests, so merging the suites of shards
//! `1/N..N/N` and renaming gives the bytes of the unsharded run.

use crate::enumerate::canon::{canonical, canonical_set, name_tests};
use crate::enumerate::config::Config;
use crate::enumerate::program::{refine, unit_size, units, Unit};
use progress_litmus::axb::suite::Suite;
use progress_litmus::axb::test::Test;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// Shard `index` of `count`, `1 <= index <= count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

/// A shard split has at least this many pieces per shard (when the
/// configuration's programs can be cut that fine): with many pieces the
/// largest-first assignment evens the shards out to within a few percent.
pub const PIECES_PER_SHARD: usize = 16;

/// The pieces of work of a run split into `shard.count` shards (the units
/// of the configuration for `None`), in a fixed order: the journal and the
/// progress count refer to pieces by their position here.
pub fn pieces(cfg: &Config, shard: Option<Shard>) -> Vec<Unit> {
    let mut pieces = units(cfg);
    let Some(s) = shard else {
        return pieces;
    };
    let want = s.count.saturating_mul(PIECES_PER_SHARD);
    while pieces.len() < want {
        let finer = refine(&pieces, cfg);
        if finer.len() == pieces.len() {
            break; // every piece is one program
        }
        pieces = finer;
    }
    pieces
}

/// Which shard (0-based) each of `sizes` goes to: largest first, each to
/// the least loaded shard so far (ties: the lower shard, the earlier
/// piece). Deterministic, so every shard of a split computes the same
/// assignment on its own.
pub fn assign(sizes: &[f64], count: usize) -> Vec<usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|&a, &b| sizes[b].total_cmp(&sizes[a]).then(a.cmp(&b)));
    let mut load: BinaryHeap<Reverse<(u64, usize)>> = (0..count).map(|k| Reverse((0, k))).collect();
    let mut owner = vec![0; sizes.len()];
    for p in order {
        let Reverse((l, k)) = load.pop().expect("at least one shard");
        owner[p] = k;
        load.push(Reverse((l + sizes[p] as u64, k)));
    }
    owner
}

/// The pieces of [`pieces`] that `shard` owns (all for `None`), with their
/// positions in that list.
pub fn owned(cfg: &Config, shard: Option<Shard>) -> Vec<(usize, Unit)> {
    let all = pieces(cfg, shard);
    let Some(s) = shard else {
        return all.into_iter().enumerate().collect();
    };
    let sizes: Vec<f64> = all.iter().map(|u| unit_size(u, cfg)).collect();
    let owner = assign(&sizes, s.count);
    all.into_iter()
        .enumerate()
        .filter(|(k, _)| owner[*k] == s.index - 1)
        .collect()
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

/// Checks that `(name, note)` of every part are the shards `1/N..N/N` of
/// one run, each once; returns the note of the unsharded run.
fn check_parts(parts: &[(&str, &str)]) -> Result<String, String> {
    let (first_name, _) = *parts.first().ok_or("nothing to merge")?;
    let mut seen: Vec<Shard> = Vec::new();
    let mut base = None;
    for &(name, note) in parts {
        if name != first_name {
            return Err(format!(
                "cannot merge suite `{name}` with suite `{first_name}`"
            ));
        }
        let (b, s) = note
            .rsplit_once(SHARD_TAG)
            .and_then(|(b, s)| Some((b, s.parse::<Shard>().ok()?)))
            .ok_or_else(|| {
                format!("suite `{name}` (note `{note}`) is not a shard made by `synth --shard`")
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
    Ok(base.unwrap_or_default().to_string())
}

/// Merges the suites of shards `1/N..N/N` of one run into the suite of the
/// unsharded run. Refuses pieces of different runs, missing or repeated
/// shards, and suites that are not shards. (In memory: for shard files on
/// disk, [`merge_streaming`] reads each part once, in order.)
pub fn merge(parts: &[Suite]) -> Result<Suite, String> {
    let meta: Vec<(&str, &str)> = parts
        .iter()
        .map(|p| (p.name.as_str(), p.note.as_str()))
        .collect();
    let note = check_parts(&meta)?;
    let first = &parts[0];
    let tests = canonical_set(
        parts
            .iter()
            .flat_map(|p| p.tests.iter().map(|e| e.test.clone())),
    );
    Ok(Suite {
        name: first.name.clone(),
        note,
        tests: name_tests(&first.name, tests),
    })
}

/// The tests of one part, one at a time, with where each came from.
type Next = Box<dyn FnMut() -> Result<Option<(String, Test)>, String>>;

/// A shard's suite opened for [`merge_streaming`]: a packed suite is read
/// line by line (constant memory, so a merge of millions of tests never
/// holds them all), a RON suite is read whole (RON has no streaming
/// reader; RON shards are for configurations that fit in memory).
pub struct Part {
    pub name: String,
    pub note: String,
    next: Next,
}

impl Part {
    pub fn open(path: &Path) -> Result<Part, String> {
        let shown = path.display().to_string();
        if progress_litmus::axb::packed::is_packed(path) {
            let file =
                std::fs::File::open(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
            let gz = flate2::read::GzDecoder::new(std::io::BufReader::new(file));
            let mut r = progress_litmus::axb::packed::Reader::new(std::io::BufReader::new(gz))
                .map_err(|e| format!("{shown}:{e}"))?;
            Ok(Part {
                name: r.name.clone(),
                note: r.note.clone(),
                next: Box::new(move || {
                    let t = r.next_test().map_err(|e| format!("{shown}:{e}"))?;
                    Ok(t.map(|(_, t)| (format!("{shown}:{}", r.line()), t)))
                }),
            })
        } else {
            let doc = progress_litmus::axb::load::load_document(path).map_err(|e| e.to_string())?;
            let progress_litmus::axb::load::Document::Suite(suite) = doc else {
                return Err(format!("{shown}: a single test, not a shard's suite"));
            };
            let mut tests = suite.tests.into_iter();
            Ok(Part {
                name: suite.name,
                note: suite.note,
                next: Box::new(move || {
                    Ok(tests
                        .next()
                        .map(|e| (format!("{shown}: test `{}`", e.name), e.test)))
                }),
            })
        }
    }
}

/// The name and note of the suite that merging `parts` gives, once they
/// are checked to be the shards `1/N..N/N` of one run.
pub fn merged_header(parts: &[Part]) -> Result<(String, String), String> {
    let meta: Vec<(&str, &str)> = parts
        .iter()
        .map(|p| (p.name.as_str(), p.note.as_str()))
        .collect();
    let note = check_parts(&meta)?;
    Ok((parts[0].name.clone(), note))
}

/// Merges shard suites read in order, as a k-way merge of their sorted
/// tests: `emit` gets the unsharded run's tests in order, named
/// `<suite>_<k>`. Every part must be sorted canonical tests (as `synth`
/// writes them); a part out of order is an error naming its place. The
/// parts must have passed [`merged_header`]. Returns the number of tests.
pub fn merge_streaming(
    mut parts: Vec<Part>,
    mut emit: impl FnMut(&str, &Test) -> std::io::Result<()>,
) -> Result<usize, String> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let name = parts.first().ok_or("nothing to merge")?.name.clone();
    let io = |e: std::io::Error| format!("cannot write: {e}");
    let mut heap: BinaryHeap<Reverse<(Test, usize)>> = BinaryHeap::new();
    let advance = |k: usize,
                   parts: &mut Vec<Part>,
                   last: Option<&Test>,
                   heap: &mut BinaryHeap<Reverse<(Test, usize)>>|
     -> Result<(), String> {
        if let Some((at, t)) = (parts[k].next)()? {
            if canonical(&t) != t || last.is_some_and(|l| *l >= t) {
                return Err(format!(
                    "{at}: tests out of canonical order: not a shard written by synth"
                ));
            }
            heap.push(Reverse((t, k)));
        }
        Ok(())
    };
    for k in 0..parts.len() {
        advance(k, &mut parts, None, &mut heap)?;
    }
    let mut count = 0;
    let mut prev: Option<Test> = None;
    while let Some(Reverse((t, k))) = heap.pop() {
        advance(k, &mut parts, Some(&t), &mut heap)?;
        if prev.as_ref() == Some(&t) {
            continue; // the same test in two parts: once in the union
        }
        emit(&format!("{name}_{count}"), &t).map_err(io)?;
        count += 1;
        prev = Some(t);
    }
    Ok(count)
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
    }

    #[test]
    fn largest_first_assignment() {
        assert_eq!(assign(&[5.0, 1.0, 4.0, 2.0, 3.0], 2), vec![0, 0, 1, 0, 1]);
        assert_eq!(assign(&[1.0, 1.0], 3), vec![0, 1]);
    }

    #[test]
    fn shards_partition_the_pieces_evenly() {
        // 2t4i has 20 units, far fewer than 64 shards.
        let cfg = Config::new(2, 4);
        for count in [1, 3, 7, 64, 256] {
            let all = pieces(&cfg, Some(Shard { index: 1, count }));
            assert!(
                all.len() >= (PIECES_PER_SHARD * count).min(10_000),
                "{count}"
            );
            let mut seen = vec![0; all.len()];
            let mut loads = Vec::new();
            for index in 1..=count {
                let mine = owned(&cfg, Some(Shard { index, count }));
                loads.push(mine.iter().map(|(_, u)| unit_size(u, &cfg)).sum::<f64>());
                for (k, u) in mine {
                    assert_eq!(all[k], u);
                    seen[k] += 1;
                }
            }
            assert!(seen.iter().all(|&n| n == 1));
            let max = loads.iter().cloned().fold(0.0, f64::max);
            let min = loads.iter().cloned().fold(f64::INFINITY, f64::min);
            assert!(min > 0.0 && max <= 1.5 * min, "{count}: {min}..{max}");
        }
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
