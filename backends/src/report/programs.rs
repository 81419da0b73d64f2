//! Which program each observation is of: tests are identified by content
//! (issue 44 item 1), names are kept for display.
//!
//! A test name is not an identity: `2t2i_0` of the published suite and
//! `2t2i_0` of `suites/2t2i` are different programs, and one GPU's
//! results may hold both. So observations are loaded keyed by name and
//! the fingerprint of the suite their campaign recorded ([`tagged`]);
//! [`resolve`] then finds each recorded suite's programs, checks them
//! against the fingerprint, and keys every observation by the test it is
//! of: its name where that name means one program in everything read or
//! the program is the published test of that name, else
//! `NAME@FINGERPRINT` (the first 8 hex digits of
//! [`progress_litmus::fingerprint::test`]). Two campaigns that ran the
//! same program under one name are one test, their runs summed.
//!
//! Where a recorded suite's programs are looked for, in order
//! ([`Leads`]): the programs the results database stored for it; the
//! `--tests` given; the 483 published tests; the suite files its campaign
//! was run from (`options.suite` of its device file or facts), from the
//! working folder and from each folder above its device file. The first
//! whose same-named tests have the recorded fingerprint is taken; none is
//! an error naming the campaign and what was tried. Results that record
//! no suite (the published artifact's CSVs) are of the `--tests` given,
//! else of the published tests.

use crate::excerpt::{excerpt, printable};
use crate::report::analysis::{load_named, Tests};
use crate::report::observations::{self, Device, Observed};
use crate::report::results::Cell;
use progress_litmus::axb::load::NamedTest;
use progress_litmus::fingerprint;
use progress_litmus::{Test, Verdicts};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Separates a name from its suite's fingerprint in a provisional key:
/// no test name holds it ([`check_names`]).
const TAG: char = '\u{1}';

/// The key of test `name` of the suite with fingerprint `suite` between
/// loading and [`resolve`].
pub fn tagged(name: &str, suite: Option<&str>) -> String {
    match suite {
        Some(f) => format!("{name}{TAG}{f}"),
        None => name.to_string(),
    }
}

/// The test name of a key of [`tagged`].
pub fn name_of(key: &str) -> &str {
    untag(key).0
}

/// The suite fingerprint of a key of [`tagged`], if it has one.
pub fn suite_of(key: &str) -> Option<&str> {
    untag(key).1
}

fn untag(key: &str) -> (&str, Option<&str>) {
    match key.split_once(TAG) {
        Some((n, f)) => (n, Some(f)),
        None => (key, None),
    }
}

/// A test found for a name: its program, and its verdicts where the suite
/// stored them.
type Found = (Test, Option<Verdicts>);

/// Where the programs of the recorded suites may be found, by suite
/// fingerprint.
#[derive(Default)]
pub struct Leads {
    /// The programs the results database stored, by name
    /// ([`crate::report::db_programs`]).
    pub stored: BTreeMap<String, BTreeMap<String, Test>>,
    /// The suite files campaigns recorded, each with where it was
    /// recorded (for messages) and the folders a relative path is looked
    /// for from after the working folder.
    pub recorded: BTreeMap<String, Vec<Recorded>>,
}

/// One campaign's record of its suite files.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub paths: Vec<PathBuf>,
    pub at: String,
    pub bases: Vec<PathBuf>,
}

impl Leads {
    /// Adds a campaign's record of suite `fnv64`'s files.
    pub fn record(&mut self, fnv64: &str, r: Recorded) {
        let v = self.recorded.entry(fnv64.to_string()).or_default();
        if !v.iter().any(|o| o.paths == r.paths) {
            v.push(r);
        }
    }

    /// Adds the leads of `other`.
    pub fn extend(&mut self, other: Leads) {
        self.stored.extend(other.stored);
        for (f, rs) in other.recorded {
            for r in rs {
                self.record(&f, r);
            }
        }
    }
}

/// Tags the observations of result files with the suite their device
/// file records, and returns where those suites may be found.
pub fn tag_files(devices: &mut [Device]) -> Result<Leads, String> {
    let mut leads = Leads::default();
    for d in devices.iter_mut() {
        let recorded = observations::recorded_suites(d)?;
        for r in &recorded {
            let bases = ancestors(&r.file);
            leads.record(
                &r.fnv64,
                Recorded {
                    paths: r.paths.clone(),
                    at: r.file.display().to_string(),
                    bases,
                },
            );
        }
        let tests = std::mem::take(&mut d.tests);
        for (name, o) in tests {
            if name.contains(TAG) {
                return Err(format!(
                    "{}:{}: test id {} holds a control character",
                    o.source.display(),
                    o.line,
                    excerpt(&name)
                ));
            }
            let file = observations::device_file(&o.source);
            let suite = recorded.iter().find(|r| Some(&r.file) == file.as_ref());
            d.tests
                .insert(tagged(&name, suite.map(|r| r.fnv64.as_str())), o);
        }
    }
    Ok(leads)
}

/// Keys every observation of `devices` by the test it is of (see the
/// module doc) and returns those tests with their verdicts. `given` is
/// `--tests` (empty: none given).
pub fn resolve(devices: &mut [Device], given: &[PathBuf], leads: &Leads) -> Result<Tests, String> {
    check_names(devices)?;
    let mut wanted: BTreeMap<Option<String>, BTreeSet<String>> = BTreeMap::new();
    for d in devices.iter() {
        for key in d.tests.keys() {
            let (name, suite) = untag(key);
            wanted
                .entry(suite.map(str::to_string))
                .or_default()
                .insert(name.to_string());
        }
    }
    let mut finder = Finder::new(given);
    let mut found: BTreeMap<(Option<String>, String), Found> = BTreeMap::new();
    for (suite, names) in &wanted {
        let programs = match suite {
            None => finder.unrecorded(names, devices)?,
            Some(f) => finder.recorded(f, names, leads, devices)?,
        };
        for n in names {
            found.insert((suite.clone(), n.clone()), programs[n].clone());
        }
    }
    let published: BTreeMap<String, String> = finder
        .load(&[])?
        .iter()
        .map(|(n, (t, _))| (n.clone(), fingerprint::test(t)))
        .collect();
    let keys = final_keys(&found, &published);
    rekey(devices, &keys);
    verdicts(found, &keys, finder.used.join("; "))
}

/// The programs of the tests `names` of the suite with fingerprint `f`,
/// from the first of `given`, the published tests and the `recorded`
/// suite files whose same-named tests have that fingerprint (what
/// `db import` stores, [`crate::report::db_programs`]); none where no
/// lead has them.
pub fn find(
    f: &str,
    names: &BTreeSet<String>,
    given: &[PathBuf],
    recorded: Vec<Recorded>,
) -> Option<BTreeMap<String, Test>> {
    if names.is_empty() {
        return None;
    }
    let mut leads = Leads::default();
    for r in recorded {
        leads.record(f, r);
    }
    let mut finder = Finder::new(given);
    let found = finder.recorded(f, names, &leads, &[]).ok()?;
    Some(
        names
            .iter()
            .map(|n| (n.clone(), found[n].0.clone()))
            .collect(),
    )
}

/// Refuses a name holding the separator of provisional keys (only a
/// forged result file has one).
fn check_names(devices: &[Device]) -> Result<(), String> {
    for d in devices {
        for (key, o) in &d.tests {
            let name = untag(key).0;
            if key.matches(TAG).count() > 1 || name.contains(TAG) || name.contains('@') {
                return Err(format!(
                    "{}:{}: test id {} holds a control character or `@` (which names a program in reports)",
                    o.source.display(),
                    o.line,
                    excerpt(name)
                ));
            }
        }
    }
    Ok(())
}

/// The first observation of test `name` of suite `suite`, for messages.
fn first_seen<'a>(devices: &'a [Device], key: &str) -> Option<(&'a Device, &'a Observed)> {
    devices
        .iter()
        .find_map(|d| d.tests.get(key).map(|o| (d, o)))
}

/// Loads the candidate suites, each once, and says which were used.
struct Finder<'a> {
    given: &'a [PathBuf],
    loaded: BTreeMap<Vec<PathBuf>, Result<BTreeMap<String, Found>, String>>,
    used: Vec<String>,
}

impl<'a> Finder<'a> {
    fn new(given: &'a [PathBuf]) -> Self {
        Finder {
            given,
            loaded: BTreeMap::new(),
            used: Vec::new(),
        }
    }

    /// The tests at `paths` (none: the published), by name, loaded once.
    fn load(&mut self, paths: &[PathBuf]) -> Result<&BTreeMap<String, Found>, String> {
        self.loaded
            .entry(paths.to_vec())
            .or_insert_with(|| load_named(paths).and_then(|(t, _)| by_name(t)))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn use_source(&mut self, what: String) {
        if !self.used.contains(&what) {
            self.used.push(what);
        }
    }

    /// The tests of results that record no suite: `--tests`, else the
    /// published; every name must be there.
    fn unrecorded(
        &mut self,
        names: &BTreeSet<String>,
        devices: &[Device],
    ) -> Result<BTreeMap<String, Found>, String> {
        let given = self.given.to_vec();
        let shown = shown(&given);
        let tests = self.load(&given)?.clone();
        let unknown: Vec<&String> = names.iter().filter(|n| !tests.contains_key(*n)).collect();
        if let Some(first) = unknown.first() {
            let (d, o) = first_seen(devices, first).expect("a wanted name is observed");
            return Err(format!(
                "{}:{}: test {} (device {}) is not among the tests of {shown}{}; is this a results file of another suite? Pass its tests with --tests",
                o.source.display(),
                o.line,
                excerpt(first),
                excerpt(&d.name),
                if unknown.len() > 1 {
                    format!(" ({} unknown tests in all)", unknown.len())
                } else {
                    String::new()
                }
            ));
        }
        self.use_source(shown);
        Ok(tests)
    }

    /// The tests of the suite with fingerprint `f` that results recorded:
    /// the first lead whose tests named `names` have that fingerprint.
    fn recorded(
        &mut self,
        f: &str,
        names: &BTreeSet<String>,
        leads: &Leads,
        devices: &[Device],
    ) -> Result<BTreeMap<String, Found>, String> {
        // `--tests` given first: a suite it names may carry verdicts (a
        // labelled RON suite), stored programs do not.
        if !self.given.is_empty() {
            let given = self.given.to_vec();
            if let Ok(tests) = self.load(&given) {
                if matches(tests, names, f) {
                    let tests = tests.clone();
                    self.use_source(shown(&given));
                    return Ok(tests);
                }
            }
        }
        if let Some(stored) = leads.stored.get(f) {
            let tests: BTreeMap<String, Found> = stored
                .iter()
                .map(|(n, t)| (n.clone(), (t.clone(), None)))
                .collect();
            if matches(&tests, names, f) {
                self.use_source("the programs stored in the results database".into());
                return Ok(tests);
            }
        }
        let mut tried = Vec::new();
        let mut candidates: Vec<Vec<PathBuf>> = vec![self.given.to_vec()];
        if !self.given.is_empty() {
            candidates.push(Vec::new());
        }
        for r in leads.recorded.get(f).into_iter().flatten() {
            candidates.extend(located(r));
        }
        for paths in candidates {
            let shown = shown(&paths);
            match self.load(&paths) {
                Ok(tests) if matches(tests, names, f) => {
                    let tests = tests.clone();
                    self.use_source(shown);
                    return Ok(tests);
                }
                Ok(_) => tried.push(format!("{shown} (other programs)")),
                Err(e) => tried.push(format!("{shown} ({})", e.lines().next().unwrap_or(""))),
            }
        }
        let key = tagged(names.first().expect("a suite has a name"), Some(f));
        let Some((d, o)) = first_seen(devices, &key) else {
            return Err(format!("no tests found with fingerprint {f}"));
        };
        let recorded: Vec<String> = leads
            .recorded
            .get(f)
            .into_iter()
            .flatten()
            .map(|r| format!("{} (recorded by {})", shown(&r.paths), r.at))
            .collect();
        Err(format!(
            "{}: the runs of device {} are of a suite with fingerprint {f} ({} tests{}), and no tests found have it: tried {}; judge them against the tests they were run from (--tests SUITE)",
            o.source.display(),
            printable(&d.name),
            names.len(),
            if recorded.is_empty() {
                String::new()
            } else {
                format!(", run from {}", recorded.join(", "))
            },
            tried.join(", ")
        ))
    }
}

/// The folders above `file` (made absolute first: a relative path's own
/// ancestors stop at the working folder), nearest first.
pub fn ancestors(file: &Path) -> Vec<PathBuf> {
    let file = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    file.parent()
        .map(|p| p.ancestors().map(Path::to_path_buf).collect())
        .unwrap_or_default()
}

/// The recorded suite files as found: each relative path from the working
/// folder if it is there, else from the first folder above the device
/// file that has them all. None where they are not all found.
fn located(r: &Recorded) -> Option<Vec<PathBuf>> {
    if r.paths.is_empty() {
        return None;
    }
    if r.paths.iter().all(|p| p.exists()) {
        return r.paths.iter().all(|p| bounded(p)).then(|| r.paths.clone());
    }
    r.bases.iter().find_map(|b| {
        let at: Vec<PathBuf> = r.paths.iter().map(|p| b.join(p)).collect();
        at.iter()
            .all(|p| p.exists())
            .then(|| at.iter().all(|p| bounded(p)).then_some(at))?
    })
}

/// The most entries a recorded suite folder may hold (what a device file
/// or a database names is not trusted: `/` or `/proc/self` would be read
/// whole). The largest suite folder, the published tests, has 483.
const MAX_SUITE_ENTRIES: usize = 100_000;

/// Whether a recorded suite path is one to read: a regular file, or a
/// folder of at most [`MAX_SUITE_ENTRIES`] entries, no deeper than 8,
/// with no link to a folder in it.
fn bounded(p: &Path) -> bool {
    match std::fs::metadata(p) {
        Ok(m) if m.is_file() => true,
        Ok(m) if m.is_dir() => {
            let mut stack = vec![(p.to_path_buf(), 0)];
            let mut seen = 0usize;
            while let Some((dir, depth)) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    return false;
                };
                for e in entries.flatten() {
                    seen += 1;
                    if seen > MAX_SUITE_ENTRIES {
                        return false;
                    }
                    let kind = e.file_type();
                    // A link to a folder could lead anywhere (`/proc/self/root`).
                    if kind.as_ref().is_ok_and(|t| t.is_symlink()) && e.path().is_dir() {
                        return false;
                    }
                    if kind.is_ok_and(|t| t.is_dir()) {
                        if depth >= 8 {
                            return false;
                        }
                        stack.push((e.path(), depth + 1));
                    }
                }
            }
            true
        }
        _ => false,
    }
}

fn shown(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return progress_litmus::axb::published::DIR.to_string();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn by_name(tests: Vec<NamedTest>) -> Result<BTreeMap<String, Found>, String> {
    let mut out = BTreeMap::new();
    for t in tests {
        if out.contains_key(&t.name) {
            return Err(format!(
                "{}: two tests named `{}`",
                t.source.display(),
                t.name
            ));
        }
        out.insert(t.name, (t.entry.test, t.entry.verdicts));
    }
    Ok(out)
}

/// Whether `tests` has every name of `names`, and those tests have the
/// fingerprint `f`.
fn matches(tests: &BTreeMap<String, Found>, names: &BTreeSet<String>, f: &str) -> bool {
    names.iter().all(|n| tests.contains_key(n))
        && fingerprint::tests(names.iter().map(|n| (n.as_str(), &tests[n].0))) == f
}

/// The final key of each provisional one: the name where it means one
/// program among `found` or the program is the published test of that
/// name (the name the paper and every published result use), else the
/// name and the program's fingerprint.
fn final_keys(
    found: &BTreeMap<(Option<String>, String), Found>,
    published: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let fps: BTreeMap<&(Option<String>, String), String> = found
        .iter()
        .map(|(k, (t, _))| (k, fingerprint::test(t)))
        .collect();
    let mut per_name: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for ((_, name), fp) in &fps {
        per_name.entry(name).or_default().insert(fp);
    }
    fps.iter()
        .map(|((suite, name), fp)| {
            let key = if per_name[name.as_str()].len() == 1 || published.get(name) == Some(fp) {
                name.clone()
            } else {
                format!("{name}@{}", &fp[..8])
            };
            (tagged(name, suite.as_deref()), key)
        })
        .collect()
}

/// Keys the observations and per-campaign counts of `devices` by their
/// final keys, summing the observations of one program.
fn rekey(devices: &mut [Device], keys: &BTreeMap<String, String>) {
    for d in devices {
        let tests = std::mem::take(&mut d.tests);
        for (key, o) in tests {
            match d.tests.entry(keys[&key].clone()) {
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(o);
                }
                std::collections::btree_map::Entry::Occupied(mut e) => {
                    let mine = e.get_mut();
                    for (a, b) in mine.cells.iter_mut().zip(o.cells) {
                        *a = sum(*a, b);
                    }
                }
            }
        }
        let cells = std::mem::take(&mut d.per_campaign);
        for ((key, m), c) in cells {
            let k = keys.get(&key).cloned().unwrap_or(key);
            d.per_campaign.entry((k, m)).or_default().extend(c);
        }
    }
}

/// Two campaigns' observations of one test under one mapping.
fn sum(a: Cell, b: Cell) -> Cell {
    match (a, b) {
        (Cell::NotRun, x) | (x, Cell::NotRun) => x,
        (Cell::Pass, Cell::Pass) => Cell::Pass,
        (Cell::Pass, f @ Cell::Fail { .. }) | (f @ Cell::Fail { .. }, Cell::Pass) => f,
        (Cell::Fail { failed, runs }, Cell::Fail { failed: k, runs: n }) => Cell::Fail {
            failed: failed.saturating_add(k),
            runs: runs.saturating_add(n),
        },
    }
}

/// The tests under their final keys with their verdicts: those a suite
/// stored, else the oracle's (bounded as `oracle classify` is).
fn verdicts(
    found: BTreeMap<(Option<String>, String), Found>,
    keys: &BTreeMap<String, String>,
    source: String,
) -> Result<Tests, String> {
    let mut by_key: BTreeMap<String, Found> = BTreeMap::new();
    for ((suite, name), f) in found {
        by_key
            .entry(keys[&tagged(&name, suite.as_deref())].clone())
            .or_insert(f);
    }
    crate::report::analysis::keyed_verdicts(by_key, source)
}
