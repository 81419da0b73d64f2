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

use crate::checksum::Fnv64;
use crate::enumerate::canon::canonical;
use crate::enumerate::config::{check_shape, Config};
use crate::enumerate::program::{refine, unit_size, units, Unit};
use progress_litmus::axb::suite::Entry;
use progress_litmus::axb::test::{Instr, Test};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// Shard `index` of `count`, `1 <= index <= count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

/// The most shards a run may be split into: a split holds
/// [`PIECES_PER_SHARD`] pieces per shard in memory and a plan prints a line
/// per shard, so `--shard 1/1000000000` must be refused before any work
/// (it aborted on allocation and left a journal) and `--shards 4294967296`
/// before any printing. Far more than a cluster's array limit.
pub const MAX_SHARDS: usize = 10_000;

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
        let bad = || {
            format!("invalid shard `{s}`: expected K/N with 1 <= K <= N <= {MAX_SHARDS}, e.g. 2/8")
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count || count > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// The tag that records a shard in a suite's note:
/// `<base>; shard K/N <record>`, the record a JSON [`Record`].
const SHARD_TAG: &str = "; shard ";

/// What a shard's note records about it, after its `; shard K/N`, so that
/// `synth merge` trusts nothing in a shard file: the run's configuration
/// and options (every test is checked against them), and the number of
/// tests and their checksum when the shard was written (a shard with a
/// line deleted, added or changed is refused, not merged).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub threads: usize,
    pub instrs: usize,
    pub locs: usize,
    pub values: usize,
    pub max_states: Option<usize>,
    pub max_actions: Option<usize>,
    pub store_must_change: bool,
    /// How many tests the shard holds.
    pub tests: usize,
    /// FNV-1a (64 bits, 16 hex digits) of the tests as packed lines
    /// (`<name><TAB><test>\n`, [`progress_litmus::axb::packed::test_to_line`]), in order.
    pub checksum: String,
}

impl Record {
    fn config(&self) -> Config {
        Config {
            threads: self.threads,
            instrs: self.instrs,
            locs: self.locs,
            values: self.values,
            max_states: self.max_states,
            max_actions: self.max_actions,
            store_must_change: self.store_must_change,
        }
    }
}

/// The running count and checksum of a shard's tests (see [`Record`]).
#[derive(Default)]
struct Tally {
    count: usize,
    hash: Fnv64,
}

impl Tally {
    fn add(&mut self, name: &str, test: &Test) {
        self.count += 1;
        for part in [
            name,
            "\t",
            &progress_litmus::axb::packed::test_to_line(test),
            "\n",
        ] {
            self.hash.write(part.as_bytes());
        }
    }

    fn checksum(&self) -> String {
        format!("{:016x}", self.hash.0)
    }
}

/// The note of a suite made by `synth`: `base` describes the run without
/// its shard (so that merged shards get the unsharded note); a shard's
/// note adds `; shard K/N` and its [`Record`] of `cfg` and `tests`.
pub fn note(base: &str, cfg: &Config, shard: Option<Shard>, tests: &[Entry]) -> String {
    let Some(s) = shard else {
        return base.to_string();
    };
    let mut tally = Tally::default();
    for e in tests {
        tally.add(&e.name, &e.test);
    }
    let record = Record {
        threads: cfg.threads,
        instrs: cfg.instrs,
        locs: cfg.locs,
        values: cfg.values,
        max_states: cfg.max_states,
        max_actions: cfg.max_actions,
        store_must_change: cfg.store_must_change,
        tests: tally.count,
        checksum: tally.checksum(),
    };
    let json = oracle::json::to_string(&record).expect("a record serializes");
    format!("{base}{SHARD_TAG}{s} {json}")
}

/// What a shard's name and note say about it: the unsharded run's note,
/// the shard, and its record, checked against each other (the record's
/// configuration is valid, gives the suite's name and the note's text).
fn parse_note(name: &str, note: &str) -> Result<(String, Shard, Record), String> {
    let not_shard = || {
        format!(
            "suite `{name}` (note `{}`) is not a shard made by `synth --shard`",
            progress_litmus::error::excerpt(note)
        )
    };
    let (base, rest) = note.rsplit_once(SHARD_TAG).ok_or_else(not_shard)?;
    let (s, json) = rest.split_once(' ').unwrap_or((rest, ""));
    let shard: Shard = s.parse().map_err(|_| not_shard())?;
    if json.is_empty() {
        return Err(format!(
            "shard {shard} records no configuration, test count or checksum (written by an older synth): run the shard again"
        ));
    }
    let record: Record = serde_json::from_str(json)
        .map_err(|e| format!("shard {shard}: its record in the note is not valid: {e}"))?;
    let cfg = record.config();
    cfg.validate()
        .map_err(|e| format!("shard {shard}: the configuration it records is not valid: {e}"))?;
    if cfg.name() != name || crate::enumerate::config::describe(&cfg) != base {
        return Err(format!(
            "shard {shard}: the configuration it records ({}) is not the one its name and note describe",
            cfg.name()
        ));
    }
    Ok((base.to_string(), shard, record))
}

/// Checks that `parts` are the shards `1/N..N/N` of one run (one suite
/// name, note and configuration), each once; returns the note of the
/// unsharded run.
fn check_parts(parts: &[Part]) -> Result<String, String> {
    let first = parts.first().ok_or("nothing to merge")?;
    let mut seen: BTreeSet<Shard> = BTreeSet::new();
    for p in parts {
        if p.name != first.name {
            return Err(format!(
                "cannot merge suite `{}` with suite `{}`",
                p.name, first.name
            ));
        }
        if p.base != first.base || p.cfg != first.cfg {
            return Err(format!(
                "shards of different runs: `{}` and `{}`",
                first.base, p.base
            ));
        }
        if !seen.insert(p.shard) {
            return Err(format!("shard {} given twice", p.shard));
        }
    }
    let count = first.shard.count;
    if seen.iter().any(|s| s.count != count) {
        return Err("shards of different splits (K/N with different N)".into());
    }
    let given: BTreeSet<usize> = seen.iter().map(|s| s.index).collect();
    if given.len() < count {
        // A few named, the rest counted: `K/1000000000` must not build a
        // message of a billion names.
        let named: Vec<String> = (1..=count)
            .filter(|k| !given.contains(k))
            .take(8)
            .map(|k| format!("{k}/{count}"))
            .collect();
        let more = count - given.len() - named.len();
        return Err(format!(
            "missing shard(s) {}{}",
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    Ok(first.base.clone())
}

/// The tests of one part, one at a time: where each is, its name, the test.
type Next = Box<dyn FnMut() -> Result<Option<(String, String, Test)>, String>>;

/// A shard's suite opened for [`merge_streaming`]: a packed suite is read
/// line by line (constant memory, so a merge of millions of tests never
/// holds them all), a RON suite is read whole (RON has no streaming
/// reader; RON shards are for configurations that fit in memory). Its note
/// is read on opening ([`Record`]).
pub struct Part {
    pub name: String,
    pub note: String,
    shown: String,
    base: String,
    shard: Shard,
    record: Record,
    cfg: Config,
    tally: Tally,
    next: Next,
}

impl Part {
    pub fn open(path: &Path) -> Result<Part, String> {
        let shown = path.display().to_string();
        let (name, note, next): (String, String, Next) =
            if progress_litmus::axb::packed::is_packed(path) {
                let file = progress_litmus::io::open_input(path).map_err(|e| e.to_string())?;
                let gz = progress_litmus::axb::packed::decoder(std::io::BufReader::new(file));
                let mut r = progress_litmus::axb::packed::Reader::new(std::io::BufReader::new(gz))
                    .map_err(|e| format!("{shown}:{e}"))?;
                let at = shown.clone();
                (
                    r.name.clone(),
                    r.note.clone(),
                    Box::new(move || {
                        let t = r.next_test().map_err(|e| format!("{at}:{e}"))?;
                        Ok(t.map(|(n, t)| (format!("{at}:{}", r.line()), n, t)))
                    }),
                )
            } else {
                let doc =
                    progress_litmus::axb::load::load_document(path).map_err(|e| e.to_string())?;
                let progress_litmus::axb::load::Document::Suite(suite) = doc else {
                    return Err(format!("{shown}: a single test, not a shard's suite"));
                };
                let mut tests = suite.tests.into_iter();
                let at = shown.clone();
                (
                    suite.name,
                    suite.note,
                    Box::new(move || {
                        Ok(tests
                            .next()
                            .map(|e| (format!("{at}: test `{}`", e.name), e.name, e.test)))
                    }),
                )
            };
        let (base, shard, record) =
            parse_note(&name, &note).map_err(|e| format!("{shown}: {e}"))?;
        Ok(Part {
            name,
            note,
            shown,
            base,
            shard,
            cfg: record.config(),
            record,
            tally: Tally::default(),
            next,
        })
    }

    /// Which shard this is, as its note records it.
    pub fn shard(&self) -> Shard {
        self.shard
    }

    /// The run's configuration, as the shard's note records it.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// How many tests the shard recorded when it was written (read from its
    /// note only; [`merge_streaming`] checks the tests against it).
    pub fn recorded_tests(&self) -> usize {
        self.record.tests
    }

    /// The next test, checked against the shard's configuration and the
    /// pieces it owns; at the end, the count and checksum it recorded.
    fn next_checked(
        &mut self,
        owners: &Owners,
        last: Option<&Test>,
    ) -> Result<Option<(Test, String)>, String> {
        let next = (self.next)()?;
        if next.is_some() && self.tally.count >= self.record.tests {
            // At once, not at the end: a shard grown to millions of lines
            // (or a gzip bomb) is not read through first.
            return Err(format!(
                "{}: more than the {} tests shard {} recorded when it was written: tests were added",
                self.shown, self.record.tests, self.shard
            ));
        }
        let Some((at, name, t)) = next else {
            if self.tally.count != self.record.tests {
                return Err(format!(
                    "{}: {} tests, but shard {} recorded {} when it was written: tests were removed or added",
                    self.shown, self.tally.count, self.shard, self.record.tests
                ));
            }
            if self.tally.checksum() != self.record.checksum {
                return Err(format!(
                    "{}: checksum mismatch: shard {} was changed after synth wrote it",
                    self.shown, self.shard
                ));
            }
            return Ok(None);
        };
        check_shape(&t, &self.cfg)
            .map_err(|e| format!("{at}: not a test of {}: {e}", self.name))?;
        if canonical(&t) != t || last.is_some_and(|l| *l >= t) {
            return Err(format!(
                "{at}: tests out of canonical order: not a shard written by synth"
            ));
        }
        match owners.owner(&t) {
            Some(k) if k + 1 == self.shard.index => {}
            Some(k) => {
                return Err(format!(
                    "{at}: a test of shard {}/{}, not of shard {}",
                    k + 1,
                    self.shard.count,
                    self.shard
                ))
            }
            None => {
                return Err(format!(
                    "{at}: not a program of {}'s search space",
                    self.name
                ))
            }
        }
        self.tally.add(&name, &t);
        Ok(Some((t, at)))
    }
}

/// Which shard (0-based) owns each piece of a split, keyed by the piece's
/// thread lengths and fixed instructions, to find a test's shard at once.
struct Owners {
    owner: HashMap<(Vec<usize>, Vec<Instr>), usize>,
    prefix_lens: BTreeSet<usize>,
}

impl Owners {
    fn new(cfg: &Config, count: usize) -> Owners {
        let all = pieces(cfg, Some(Shard { index: 1, count }));
        let sizes: Vec<f64> = all.iter().map(|u| unit_size(u, cfg)).collect();
        let owner = assign(&sizes, count);
        Owners {
            prefix_lens: all.iter().map(|u| u.prefix.len()).collect(),
            owner: all
                .into_iter()
                .zip(owner)
                .map(|(u, k)| ((u.lens, u.prefix), k))
                .collect(),
        }
    }

    /// The shard owning the piece `t` lies in (`t` in first-use order).
    fn owner(&self, t: &Test) -> Option<usize> {
        let lens: Vec<usize> = t.threads.iter().map(Vec::len).collect();
        self.prefix_lens.iter().find_map(|&p| {
            let prefix: Vec<Instr> = t.threads.iter().flatten().take(p).copied().collect();
            self.owner.get(&(lens.clone(), prefix)).copied()
        })
    }
}

/// The name and note of the suite that merging `parts` gives, once they
/// are checked to be the shards `1/N..N/N` of one run.
pub fn merged_header(parts: &[Part]) -> Result<(String, String), String> {
    let note = check_parts(parts)?;
    Ok((parts[0].name.clone(), note))
}

/// How many tests [`merge_streaming`] checks against SPEC §4 at a time, in
/// parallel: the check builds each test's state space, the one costly step
/// of a merge.
const BATCH: usize = 4096;

/// Merges shard suites read in order, as a k-way merge of their sorted
/// tests: `emit` gets the unsharded run's tests in order, named
/// `<suite>_<k>`. Nothing in a part is trusted: every test must be a
/// canonical test of the run's configuration, in order, in a piece of the
/// search space its shard owns, and satisfy SPEC §4 under the run's
/// options; each part must end with the count and checksum its note
/// recorded. A failure is an error naming the part and line. The parts
/// must have passed [`merged_header`]. Returns the number of tests.
pub fn merge_streaming(
    mut parts: Vec<Part>,
    mut emit: impl FnMut(&str, &Test) -> std::io::Result<()>,
) -> Result<usize, String> {
    use rayon::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let first = parts.first().ok_or("nothing to merge")?;
    let (name, cfg) = (first.name.clone(), first.cfg.clone());
    let owners = Owners::new(&cfg, first.shard.count);
    let io = |e: std::io::Error| format!("cannot write: {e}");
    let mut heap: BinaryHeap<Reverse<(Test, usize, String)>> = BinaryHeap::new();
    for (k, p) in parts.iter_mut().enumerate() {
        if let Some((t, at)) = p.next_checked(&owners, None)? {
            heap.push(Reverse((t, k, at)));
        }
    }
    let mut count = 0;
    let mut prev: Option<Test> = None;
    let mut batch: Vec<(Test, String)> = Vec::with_capacity(BATCH);
    while let Some(Reverse((t, k, at))) = heap.pop() {
        if let Some((next, at)) = parts[k].next_checked(&owners, Some(&t))? {
            heap.push(Reverse((next, k, at)));
        }
        batch.push((t, at));
        if batch.len() < BATCH && !heap.is_empty() {
            continue;
        }
        if let Some((at, v)) = batch.par_iter().find_map_first(|(t, at)| {
            crate::enumerate::constraints::check(t, &cfg)
                .err()
                .map(|v| (at, v))
        }) {
            return Err(format!("{at}: not a test of this run: {v}"));
        }
        for (t, _) in batch.drain(..) {
            if prev.as_ref() == Some(&t) {
                continue; // the same test in two parts: once in the union
            }
            emit(&format!("{name}_{count}"), &t).map_err(io)?;
            count += 1;
            prev = Some(t);
        }
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
        // Bounded: a split into 10^9 shards aborted on allocation.
        assert!(format!("1/{MAX_SHARDS}").parse::<Shard>().is_ok());
        assert!(format!("1/{}", MAX_SHARDS + 1).parse::<Shard>().is_err());
        assert!("1/1000000000".parse::<Shard>().is_err());
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
        let cfg = Config::new(2, 2);
        let mk = |k| {
            let note = note(
                &crate::enumerate::output::describe(&cfg),
                &cfg,
                Some(Shard { index: k, count: 2 }),
                &[],
            );
            let (base, shard, record) = parse_note("2t2i", &note).unwrap();
            Part {
                name: "2t2i".into(),
                note,
                shown: format!("p{k}"),
                base,
                shard,
                cfg: record.config(),
                record,
                tally: Tally::default(),
                next: Box::new(|| Ok(None)),
            }
        };
        let e = |parts: &[Part]| merged_header(parts).unwrap_err();
        assert!(e(&[mk(1)]).contains("missing shard(s) 2/2"));
        assert!(e(&[mk(1), mk(1)]).contains("twice"));
        let (name, base) = merged_header(&[mk(2), mk(1)]).unwrap();
        // A huge N: a few missing shards named, the rest counted.
        let mut huge = mk(1);
        huge.shard = Shard {
            index: 1,
            count: 1_000_000_000,
        };
        assert_eq!(
            e(&[huge]),
            "missing shard(s) 2/1000000000, 3/1000000000, 4/1000000000, 5/1000000000, 6/1000000000, 7/1000000000, 8/1000000000, 9/1000000000 and 999999991 more"
        );
        assert_eq!(
            (name, base),
            ("2t2i".into(), crate::enumerate::output::describe(&cfg))
        );
    }

    /// A shard's note and what it must agree with (issue 20 item 5).
    #[test]
    fn a_shard_note_records_its_run_and_is_checked() {
        let cfg = Config::new(2, 2);
        let base = crate::enumerate::output::describe(&cfg);
        let s = Some(Shard { index: 1, count: 2 });
        let n = note(&base, &cfg, s, &[]);
        assert!(
            n.starts_with(&format!("{base}; shard 1/2 {{\"threads\":2,")),
            "{n}"
        );
        assert!(
            n.ends_with(",\"tests\":0,\"checksum\":\"cbf29ce484222325\"}"),
            "{n}"
        );
        assert_eq!(note(&base, &cfg, None, &[]), base);
        let err = |name: &str, note: &str| parse_note(name, note).unwrap_err();
        assert!(err("2t2i", &format!("{base}; shard 1/2")).contains("older synth"));
        assert!(err("2t2i", "hand made").contains("not a shard"));
        assert!(err("2t3i", &n).contains("is not the one its name and note describe"));
        let other = note(&base, &Config::new(2, 3), s, &[]);
        assert!(err("2t2i", &other).contains("is not the one"));
        let bad = n.replace("\"threads\":2", "\"threads\":0");
        assert!(err("2t2i", &bad).contains("not valid"));
    }
}
