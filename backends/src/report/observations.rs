//! What was observed on each device: result CSVs gathered from files and
//! directory trees, test ids turned into test names, merged per device.
//!
//! A device is named by the stem of its results files. In the artifact tree
//! (`<N>_thread_<M>_instruction/<framework>/<device>.csv`, also what
//! `backends run` writes) a device's results are spread over one file per
//! configuration directory, all with the same stem: they are merged. The
//! ids of such a file are numbers, and test `id` of configuration directory
//! `<N>_thread_<M>_instruction` is the published test `<N>t<M>i_<id>`. A
//! file anywhere else names its tests in full in the id column.
//!
//! The Vulkan files' two intra-workgroup columns are not mappings of the
//! inter-workgroup device: each becomes a device of its own,
//! `<stem>.<variant>`, observed under the plain mapping only (so it is
//! reported, like the CUDA intra-warp files, rather than dropped).

use crate::excerpt::excerpt;
use crate::mapping::Mapping;
use crate::report::results::{self, Cell, ColumnKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The largest result CSV read (a row per test: the complete suites of
/// five configurations take 0.2 MB).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// One test's observations on a device, per mapping in [`Mapping::ALL`]
/// order, with where they were read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub cells: [Cell; 3],
    pub source: PathBuf,
    pub line: usize,
}

impl Observed {
    pub fn cell(&self, m: Mapping) -> Cell {
        self.cells[m.code() as usize]
    }
}

/// One campaign's count of a test under a mapping: `failed` of `runs`
/// (`runs` None: a summary that says every run terminated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CampaignCell {
    pub campaign: i64,
    pub failed: u32,
    pub runs: Option<u32>,
}

/// A device and everything observed on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    pub name: String,
    /// By test name.
    pub tests: BTreeMap<String, Observed>,
    /// The files read, sorted.
    pub sources: Vec<PathBuf>,
    /// How many campaigns the observations sum (1 for result files: a
    /// device's files are one campaign; the results database may hold
    /// several, [`crate::report::db`]).
    pub campaigns: usize,
    /// The run times per mapping that each of its campaigns recorded, as
    /// the results database keeps them ([`crate::report::db_facts`]);
    /// empty for result files, whose device files are read instead.
    pub times: Vec<[Extremes; 3]>,
    /// The tests and mappings ([`Mapping::code`]) whose hangs, too close
    /// to call where they were seen, another of its campaigns settled as
    /// slow runs, with the words that say how
    /// ([`crate::report::db_facts::settled`]); empty for result files.
    pub settled: BTreeMap<(String, u32), String>,
    /// Each campaign's count per test and mapping ([`Mapping::code`]),
    /// from which [`crate::report::db::settle`] finds [`Device::settled`]
    /// once every test is keyed by its program; empty for result files.
    pub per_campaign: BTreeMap<(String, u32), Vec<CampaignCell>>,
    /// The physical GPU this device is one setup of (API and launch), as
    /// `db import --gpu` recorded it; none for result files.
    pub gpu: Option<String>,
}

/// The `(N, M)` of a configuration directory name `<N>_thread_<M>_instruction`.
pub fn config_dir(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_suffix("_instruction")?;
    let (n, m) = rest.split_once("_thread_")?;
    let num = |s: &str| -> Option<u32> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    Some((num(n)?, num(m)?))
}

/// The configuration directory of a results file, if it sits in the
/// artifact layout (`<config>/<framework>/<file>.csv`).
fn file_config(path: &Path) -> Option<(u32, u32)> {
    let dir = path.parent()?.parent()?.file_name()?.to_str()?;
    config_dir(dir)
}

/// The folders and files a walk has visited, by device and inode.
type Seen = std::collections::BTreeSet<(u64, u64)>;

/// The CSV files below the folder `dir`, in sorted order, into `out`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>, seen: &mut Seen) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let rd = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: cannot read directory: {e}", dir.display()))?;
    let mut entries = Vec::new();
    for e in rd {
        let e = e.map_err(|e| format!("{}: cannot read directory: {e}", dir.display()))?;
        entries.push(e.path());
    }
    entries.sort();
    for p in entries {
        let Ok(meta) = std::fs::metadata(&p) else {
            continue; // a dangling link
        };
        if !seen.insert((meta.dev(), meta.ino())) {
            continue;
        }
        if meta.is_dir() {
            walk(&p, out, seen)?;
        } else if meta.is_file() && p.extension().is_some_and(|e| e == "csv") {
            out.push(p);
        }
    }
    Ok(())
}

/// The CSV files of one path given: a file stands for itself, a
/// directory for every `.csv` file below it (perhaps none).
fn expand_one(p: &Path, seen: &mut Seen) -> Result<Vec<PathBuf>, String> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    if p.is_dir() {
        if let Ok(meta) = std::fs::metadata(p) {
            seen.insert((meta.dev(), meta.ino()));
        }
        walk(p, &mut out, seen)?;
    } else if p.is_file() {
        out.push(p.to_path_buf());
    } else if p.exists() {
        return Err(format!("{}: not a regular file or directory", p.display()));
    } else {
        return Err(format!("{}: no such file or directory", p.display()));
    }
    Ok(out)
}

/// Each path's CSV files ([`expand`]'s rule; a directory's may be none),
/// or why it cannot be read: one bad path does not stop the others
/// (`db import` imports the rest and reports each).
pub fn expand_each(paths: &[PathBuf]) -> Vec<Result<Vec<PathBuf>, String>> {
    let mut seen = Seen::new();
    paths.iter().map(|p| expand_one(p, &mut seen)).collect()
}

/// The CSV files under `paths`: a file stands for itself, a directory for
/// every `.csv` file below it, in sorted order. Each directory and file is
/// visited once (by device and inode), so links in a loop (`ln -s . x`)
/// end the walk instead of hanging it, and a file reached twice is read
/// once; only regular files are read (a link to `/dev/zero` is not). The
/// first path that cannot be read, or a directory without a CSV file, is
/// the error.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for (p, found) in paths.iter().zip(expand_each(paths)) {
        let found = found?;
        if found.is_empty() {
            return Err(format!(
                "{}: no result CSV files in this directory",
                p.display()
            ));
        }
        out.extend(found);
    }
    Ok(out)
}

/// Reads every results file under `paths` and merges them per device. The
/// same test twice for one device (from two files) is an error: the format
/// cannot say whether the two observations are the same runs.
pub fn load(paths: &[PathBuf]) -> Result<Vec<Device>, String> {
    let mut devices: BTreeMap<String, Device> = BTreeMap::new();
    for path in expand(paths)? {
        let len = std::fs::metadata(&path).map_or(0, |m| m.len());
        if len > MAX_FILE_BYTES {
            return Err(format!(
                "{}: {len} bytes, more than a result CSV can be ({MAX_FILE_BYTES} bytes: a row per test)",
                path.display()
            ));
        }
        let src = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let table = results::parse(&src).map_err(|e| {
            if e.line == 0 {
                format!("{}: {}", path.display(), e.msg)
            } else {
                format!("{}:{}: {}", path.display(), e.line, e.msg)
            }
        })?;
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| format!("{}: the file name is not UTF-8", path.display()))?
            .to_string();
        let config = file_config(&path);
        for row in &table.rows {
            let name = match config {
                Some((n, m)) => {
                    if !row.id.bytes().all(|b| b.is_ascii_digit()) {
                        return Err(format!(
                            "{}:{}: test id `{}` is not a number, but the file is in configuration directory {n}_thread_{m}_instruction, whose ids number the published tests {n}t{m}i_<id>",
                            path.display(),
                            row.line,
                            crate::excerpt::excerpt(&row.id)
                        ));
                    }
                    format!("{n}t{m}i_{}", row.id)
                }
                None => row.id.clone(),
            };
            let mut main = [Cell::NotRun; 3];
            for (col, cell) in table.columns.iter().zip(&row.cells) {
                match col.kind {
                    ColumnKind::Mapping(m) => main[m.code() as usize] = *cell,
                    ColumnKind::Variant(slug) => {
                        let mut cells = [Cell::NotRun; 3];
                        cells[Mapping::Plain.code() as usize] = *cell;
                        add(
                            &mut devices,
                            format!("{stem}.{slug}"),
                            &name,
                            cells,
                            &path,
                            row.line,
                        )?;
                    }
                }
            }
            add(&mut devices, stem.clone(), &name, main, &path, row.line)?;
        }
    }
    Ok(devices.into_values().collect())
}

/// The suite a campaign's results were run from, as its `device.json`
/// records it (`backends run` and `import` write it beside the CSVs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedSuite {
    /// [`progress_litmus::fingerprint::tests`] of the tests with a result.
    pub fnv64: String,
    pub tests: u64,
    /// The `device.json` it was read from.
    pub file: PathBuf,
    /// The suite files the campaign was run from (`options.suite`), as
    /// given then: relative to where it ran, so looked for from the
    /// working folder and the device file's folders up.
    pub paths: Vec<PathBuf>,
}

/// The suite files a device file or a campaign's facts names: its
/// `suite.paths` (added by hand to a folder whose campaign ran from a
/// scratch folder), else `options.suite` (what the campaign was run
/// with): one path or several; none where it names none.
pub fn suite_paths(doc: &serde_json::Value) -> Vec<PathBuf> {
    let given = doc
        .pointer("/suite/paths")
        .or_else(|| doc.pointer("/options/suite"));
    match given {
        Some(serde_json::Value::String(s)) => vec![PathBuf::from(s)],
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str())
            .map(PathBuf::from)
            .collect(),
        _ => Vec::new(),
    }
}

/// The `device.json` of a CSV that `backends run` or `import` wrote:
/// `OUT/<config>/<framework>/<name>.csv` has `OUT/<name>.device.json`.
pub fn device_file(csv: &Path) -> Option<PathBuf> {
    let out = csv.parent()?.parent()?.parent()?;
    let stem = csv.file_stem()?.to_str()?;
    Some(out.join(format!("{stem}.device.json")))
}

/// The `device.json` files of `d`'s result files, each read once, with
/// their contents. Result files without one (the artifact's own CSVs)
/// have none.
fn device_docs(d: &Device) -> Result<Vec<(PathBuf, serde_json::Value)>, String> {
    let mut out: Vec<(PathBuf, serde_json::Value)> = Vec::new();
    for csv in &d.sources {
        let Some(file) = device_file(csv) else {
            continue;
        };
        if out.iter().any(|(f, _)| *f == file) || std::fs::symlink_metadata(&file).is_err() {
            continue;
        }
        // A directory, a device, a FIFO or a dangling link by that name
        // is not read as "no device file".
        if !std::fs::metadata(&file).is_ok_and(|m| m.is_file()) {
            return Err(format!("{}: not a regular file", file.display()));
        }
        let len = std::fs::metadata(&file).map_or(0, |m| m.len());
        if len > MAX_FILE_BYTES {
            return Err(format!(
                "{}: {len} bytes, more than a device file can be",
                file.display()
            ));
        }
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("{}: cannot read: {e}", file.display()))?;
        let doc: serde_json::Value = crate::json::parse(&text)
            .map_err(|e| format!("{}: not a device file: {e}", file.display()))?;
        let stem = csv.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if let Some(named) = doc.get("device").and_then(|v| v.as_str()) {
            if named != stem {
                return Err(format!(
                    "{}: the device file of {} names device {}",
                    file.display(),
                    excerpt(stem),
                    excerpt(named)
                ));
            }
        }
        out.push((file, doc));
    }
    Ok(out)
}

/// The suites recorded for `d`'s result files, one per `device.json` that
/// records one. Result files without one (the artifact's own CSVs, or
/// outputs older than the fingerprint) record nothing.
pub fn recorded_suites(d: &Device) -> Result<Vec<RecordedSuite>, String> {
    let mut out: Vec<RecordedSuite> = Vec::new();
    for (file, doc) in device_docs(d)? {
        let Some(suite) = doc.get("suite") else {
            continue;
        };
        let fnv64 = suite.get("fnv64").and_then(|v| v.as_str());
        let tests = suite.get("tests").and_then(|v| v.as_u64());
        match (fnv64, tests) {
            (Some(f), Some(tests)) if f.len() == 16 && f.bytes().all(|b| b.is_ascii_hexdigit()) => {
                out.push(RecordedSuite {
                    fnv64: f.to_string(),
                    tests,
                    paths: suite_paths(&doc),
                    file,
                })
            }
            _ => {
                return Err(format!(
                    "{}: `suite` must be {{\"tests\": N, \"fnv64\": 16 hex digits}}",
                    file.display()
                ))
            }
        }
    }
    Ok(out)
}

/// Whether a deadline was too close to call: a run that terminated took
/// over half as long as the quickest run that was stopped, so a run
/// reported non-terminating may have been a slow one (learned on the
/// H200, `results/h200/README.md`; `backends run` and `import` warn by
/// the same rule).
pub fn close_call(slowest_terminated_ms: f64, quickest_stopped_ms: f64) -> bool {
    2.0 * slowest_terminated_ms > quickest_stopped_ms
}

/// A mapping of a campaign whose deadline was a [`close_call`], as its
/// `device.json` records it (`times.mappings`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CloseCall {
    #[serde(serialize_with = "ser_mapping")]
    pub mapping: Mapping,
    pub slowest_terminated_ms: f64,
    pub quickest_stopped_ms: f64,
}

/// A mapping in JSON: its name.
pub(crate) fn ser_mapping<S: serde::Serializer>(m: &Mapping, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(m.name())
}

/// One mapping's run times as a campaign records them
/// (`times.mappings.<mapping>` of its device file): the slowest run that
/// terminated and the quickest one that was stopped, in ms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Extremes {
    pub slowest_terminated_ms: Option<f64>,
    pub quickest_stopped_ms: Option<f64>,
}

impl Extremes {
    /// Both of `self` and `other`: the slower terminating run, the quicker
    /// stopped one.
    pub fn merged(self, other: Extremes) -> Extremes {
        let pick = |a: Option<f64>, b: Option<f64>, f: fn(f64, f64) -> f64| match (a, b) {
            (Some(x), Some(y)) => Some(f(x, y)),
            (x, y) => x.or(y),
        };
        Extremes {
            slowest_terminated_ms: pick(
                self.slowest_terminated_ms,
                other.slowest_terminated_ms,
                f64::max,
            ),
            quickest_stopped_ms: pick(
                self.quickest_stopped_ms,
                other.quickest_stopped_ms,
                f64::min,
            ),
        }
    }

    /// The [`CloseCall`] of mapping `m`, when these times are one.
    pub fn close_call(self, m: Mapping) -> Option<CloseCall> {
        let (s, q) = (self.slowest_terminated_ms?, self.quickest_stopped_ms?);
        close_call(s, q).then_some(CloseCall {
            mapping: m,
            slowest_terminated_ms: s,
            quickest_stopped_ms: q,
        })
    }
}

/// The run times per mapping ([`Mapping::ALL`] order) that a device file
/// (or what the results database keeps of one) records in
/// `times.mappings`; `file` names it in errors. None recorded (older
/// outputs, the artifact's CSVs): all unknown. Anything that is not
/// figures in ms (or null) is an error naming the file and field.
pub fn mapping_times(file: &str, doc: &serde_json::Value) -> Result<[Extremes; 3], String> {
    let mut out = [Extremes::default(); 3];
    let bad = |field: &str, what: &str| format!("{file}: {field} must be {what}");
    let Some(times) = doc.get("times") else {
        return Ok(out);
    };
    let times = times.as_object().ok_or_else(|| bad("times", "an object"))?;
    let Some(mappings) = times.get("mappings") else {
        return Ok(out);
    };
    let mappings = mappings
        .as_object()
        .ok_or_else(|| bad("times.mappings", "an object"))?;
    for m in Mapping::ALL {
        let Some(t) = mappings.get(m.name()) else {
            continue;
        };
        let at = |key: &str| format!("times.mappings.{}.{key}", m.name());
        let t = t
            .as_object()
            .ok_or_else(|| bad(&format!("times.mappings.{}", m.name()), "an object"))?;
        let ms = |key: &str| -> Result<Option<f64>, String> {
            match t.get(key) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(v) => v
                    .as_f64()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .map(Some)
                    .ok_or_else(|| bad(&at(key), "a time in ms or null")),
            }
        };
        out[m.code() as usize] = Extremes {
            slowest_terminated_ms: ms("slowest_terminated_ms")?,
            quickest_stopped_ms: ms("quickest_stopped_ms")?,
        };
    }
    Ok(out)
}

/// The close calls of a device whose campaigns recorded `times` (per
/// mapping each): over all of them, the slowest terminating run against
/// the quickest stopped one, by [`close_call`].
pub fn close_calls_of(times: &[[Extremes; 3]]) -> Vec<CloseCall> {
    Mapping::ALL
        .into_iter()
        .filter_map(|m| {
            let i = m.code() as usize;
            times
                .iter()
                .map(|t| t[i])
                .reduce(Extremes::merged)?
                .close_call(m)
        })
        .collect()
}

/// The close calls recorded for `d`'s result files, by mapping: over all
/// its device files ([`mapping_times`]), the slowest terminating run
/// against the quickest stopped one; or, for a device of the results
/// database, over its campaigns' recorded times ([`Device::times`]).
pub fn close_calls(d: &Device) -> Result<Vec<CloseCall>, String> {
    let mut all = d.times.clone();
    for (file, doc) in device_docs(d)? {
        all.push(mapping_times(&file.display().to_string(), &doc)?);
    }
    Ok(close_calls_of(&all))
}

fn add(
    devices: &mut BTreeMap<String, Device>,
    device: String,
    test: &str,
    cells: [Cell; 3],
    path: &Path,
    line: usize,
) -> Result<(), String> {
    let d = devices.entry(device.clone()).or_insert_with(|| Device {
        name: device.clone(),
        tests: BTreeMap::new(),
        sources: Vec::new(),
        campaigns: 1,
        times: Vec::new(),
        settled: BTreeMap::new(),
        per_campaign: BTreeMap::new(),
        gpu: None,
    });
    if !d.sources.iter().any(|s| s == path) {
        d.sources.push(path.to_path_buf());
        d.sources.sort();
    }
    if let Some(prev) = d.tests.get(test) {
        return Err(format!(
            "{}:{line}: test {test} of device {device} was already read from {}:{}: two campaigns of one device (or of two suites) are reported together from a results database (`backends db import`, then `backends report --db`)",
            path.display(),
            prev.source.display(),
            prev.line
        ));
    }
    d.tests.insert(
        test.to_string(),
        Observed {
            cells,
            source: path.to_path_buf(),
            line,
        },
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_dirs_are_recognised_exactly() {
        assert_eq!(config_dir("3_thread_4_instruction"), Some((3, 4)));
        assert_eq!(config_dir("3_thread_4_instructions"), None);
        assert_eq!(config_dir("x_thread_4_instruction"), None);
        assert_eq!(config_dir("_thread_4_instruction"), None);
    }
}
