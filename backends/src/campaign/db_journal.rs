//! A campaign journal ([`crate::campaign::journal`]) as runs for the
//! results database: `backends db import` of a `NAME.journal.jsonl` keeps
//! one row per iteration (test, mapping, iteration, outcome, when), where
//! the campaign's CSVs keep only k of n.
//!
//! The journal is checked as `--resume` checks it ([`journal::read`]: every
//! complete line parses, none is recorded twice, the first describes the
//! campaign), and beyond: every mapping is one of the three and the runs
//! of a test and mapping are iterations 0..n, so a forged or edited
//! journal (an iteration given twice with another outcome, a negative or
//! huge iteration number) is refused at its line. A torn last line (a
//! campaign killed while writing) is not a run and is left out; a journal
//! with no runs is refused. Its suite is what its device file recorded,
//! else computed from the suite its campaign line names (a relative path
//! read from the journal's folder, else from the working directory),
//! else from `db import --suite`, which is also checked against what the
//! device file recorded; a journal whose suite is none of these (a
//! hand-made campaign line without `suite`), or cannot be read, is
//! refused, so that `report --db` checks the tests it judges by and never
//! judges runs against other tests of the same names.

use crate::campaign::journal::{self, Entry};
use crate::excerpt::excerpt;
use crate::mapping::Mapping;
use crate::report::db_campaign::CampaignId;
use crate::report::db_import::{recorded_host, RunRow, RunsSource};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Whether `path` names a campaign journal (`*.journal.jsonl`).
pub fn is_journal(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".journal.jsonl"))
}

/// The runs of the journal at `path`, with its campaign's identity and
/// what its device file (beside it) recorded of the suite and host;
/// `suite`: the paths of `db import --suite`, if given.
pub fn runs_source(path: &Path, suite: Option<&[PathBuf]>) -> Result<RunsSource, String> {
    let contents = journal::read(path)?;
    let campaign = contents.campaign().clone();
    let stem = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".journal.jsonl"));
    let Some(device) = campaign
        .get("name")
        .and_then(|n| n.as_str())
        .or(stem)
        .filter(|n| !n.is_empty())
    else {
        return Err(format!(
            "{}:1: the campaign line has no `name` and the file is not NAME.journal.jsonl: the device is not known",
            path.display()
        ));
    };
    let started = contents.entries.iter().find_map(|e| match e {
        Entry::Session(s) => Some(s.started_unix_ms),
        _ => None,
    });
    let runs = checked_runs(path, &contents)?;
    if runs.is_empty() {
        return Err(format!(
            "{}: the journal has no runs (only its campaign line{}): nothing to import",
            path.display(),
            if started.is_some() {
                " and sessions"
            } else {
                ""
            }
        ));
    }
    let doc = device_file(path, device)?.filter(|d| d.get("options") == Some(&campaign));
    let recorded = doc.as_ref().and_then(|d| {
        let s = d.get("suite")?;
        Some((
            s.get("fnv64")?.as_str()?.to_string(),
            s.get("tests")?.as_u64()?,
        ))
    });
    let suite = match (recorded, suite) {
        (Some(s), None) => s,
        (recorded, Some(given)) => given_suite(path, recorded, given, &runs)?,
        (None, None) => suite_of_runs(path, &campaign, &runs)?,
    };
    Ok(RunsSource {
        file: path.to_path_buf(),
        campaign: CampaignId::of_campaign(
            device,
            campaign
                .get("target")
                .and_then(|t| t.as_str())
                .map(str::to_string),
            &campaign,
            started,
        ),
        suite: Some(suite),
        host: recorded_host(doc.as_ref()),
        facts: crate::report::db_facts::of_device_file(&serde_json::json!({
            "options": campaign,
            "description": doc.as_ref().and_then(|d| d.get("description")),
            "times": {"mappings": crate::campaign::timing::json(
                &crate::campaign::timing::per_mapping(&contents))},
        })),
        runs,
    })
}

/// The device file beside a journal (`DEVICE.device.json`), if any, read
/// within the input limit: one that is not JSON (or gives a key twice) is
/// an error; the caller keeps it only if it is of the journal's campaign.
fn device_file(path: &Path, device: &str) -> Result<Option<serde_json::Value>, String> {
    let Some(file) = path
        .parent()
        .map(|dir| dir.join(format!("{device}.device.json")))
        .filter(|f| f.exists())
    else {
        return Ok(None);
    };
    let limit =
        progress_litmus::io::max_input_bytes().map_err(|e| format!("{}: {e}", file.display()))?;
    let bytes = progress_litmus::io::read_bytes_limited(&file, limit).map_err(|e| e.to_string())?;
    let Ok(text) = String::from_utf8(bytes) else {
        return Ok(None);
    };
    crate::json::parse(&text)
        .map(Some)
        .map_err(|e| format!("{}: not a device file: {e}", file.display()))
}

/// The suite of a journal without its device file: the fingerprint
/// ([`progress_litmus::fingerprint::tests`]) of the tests its runs name,
/// read from the suite its campaign line names, as the device file would
/// have recorded it. A campaign line that names no suite (not written by
/// `backends`), or one whose suite cannot be read or no longer has the
/// tests run, is refused: the runs would be judged against whatever tests
/// have their names.
fn suite_of_runs(
    path: &Path,
    campaign: &serde_json::Value,
    runs: &[RunRow],
) -> Result<(String, u64), String> {
    let device_file = device_file_name(path, campaign);
    let refuse = |why: String| {
        format!(
            "{}:1: the campaign's suite is not known ({why}) and there is no device file ({device_file}) beside the journal: import the campaign's folder, which has it, or give the suite the runs were run from with --suite PATH",
            path.display(),
        )
    };
    let named: Vec<PathBuf> = match campaign.get("suite") {
        None | Some(serde_json::Value::Null) => {
            return Err(refuse(
                "the campaign line has no `suite`; add `\"suite\": \"PATH\"` to it, PATH relative to the journal's folder".into(),
            ))
        }
        Some(serde_json::Value::String(p)) => vec![PathBuf::from(p)],
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .filter_map(|p| p.as_str().map(PathBuf::from))
            .collect(),
        Some(_) => Vec::new(),
    };
    if named.is_empty() {
        return Err(refuse("the campaign line's `suite` names no file".into()));
    }
    let dir = path.parent().unwrap_or(Path::new(""));
    let paths = named
        .iter()
        .map(|p| resolve(dir, p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(refuse)?;
    fingerprint_of_runs(&paths, runs).map_err(refuse)
}

/// A suite path of a campaign line: as it is when absolute; else read from
/// the journal's folder `dir` (a hand-made or moved journal beside its
/// suite), else from the working directory (`backends run` records the
/// path as given on its command line). Both there and different files:
/// refused, since either could be meant.
fn resolve(dir: &Path, p: &Path) -> Result<PathBuf, String> {
    let beside = dir.join(p);
    if p.is_absolute() || beside == p {
        return Ok(p.to_path_buf());
    }
    match (beside.exists(), p.exists()) {
        (true, true) => {
            let (a, b) = (beside.canonicalize(), p.canonicalize());
            if a.is_ok() && a.ok() == b.ok() {
                Ok(beside)
            } else {
                Err(format!(
                    "its relative `suite` {} is both {} (beside the journal) and {} (in the working directory); write the path the campaign meant absolute, or give --suite",
                    excerpt(&p.display().to_string()),
                    beside.display(),
                    p.display()
                ))
            }
        }
        (false, true) => Ok(p.to_path_buf()),
        _ => Ok(beside),
    }
}

/// The suite `--suite` gives for a journal: the fingerprint of the tests
/// its runs name; refused when a test run is not in it, or when the
/// device file recorded another suite for the runs.
fn given_suite(
    path: &Path,
    recorded: Option<(String, u64)>,
    given: &[PathBuf],
    runs: &[RunRow],
) -> Result<(String, u64), String> {
    let ours = fingerprint_of_runs(given, runs)
        .map_err(|why| format!("{}: --suite: {why}", path.display()))?;
    match recorded {
        Some(r) if r != ours => Err(format!(
            "{}: its device file records the runs' suite as fingerprint {} ({} tests), but --suite {} gives {} ({} tests): these runs were not run from that suite",
            path.display(),
            r.0,
            r.1,
            crate::campaign::suite::show_paths(given),
            ours.0,
            ours.1
        )),
        _ => Ok(ours),
    }
}

/// The fingerprint of the tests of the suite `paths` that `runs` name,
/// and how many; an error line (without the file) when the suite cannot
/// be read or lacks a test run.
fn fingerprint_of_runs(paths: &[PathBuf], runs: &[RunRow]) -> Result<(String, u64), String> {
    let tests = crate::campaign::suite::load_suite(paths)
        .map_err(|f| f.msg.lines().next().unwrap_or_default().to_string())?;
    let ran: BTreeSet<&str> = runs.iter().map(|r| r.test.as_str()).collect();
    let named: Vec<_> = tests
        .iter()
        .filter(|t| ran.contains(t.name.as_str()))
        .map(|t| (t.name.as_str(), &t.entry.test))
        .collect();
    if let Some(missing) = ran
        .iter()
        .find(|n| !named.iter().any(|(name, _)| name == *n))
    {
        return Err(format!(
            "test `{}` is not in {} now",
            excerpt(missing),
            crate::campaign::suite::show_paths(paths)
        ));
    }
    let n = named.len() as u64;
    Ok((progress_litmus::fingerprint::tests(named), n))
}

/// `NAME.device.json`, the device file a campaign writes beside its journal.
fn device_file_name(path: &Path, campaign: &serde_json::Value) -> String {
    let stem = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".journal.jsonl"));
    let name = campaign.get("name").and_then(|n| n.as_str()).or(stem);
    format!("{}.device.json", name.unwrap_or("NAME"))
}

/// The journal's runs, each of a known mapping, the runs of a test and
/// mapping numbered 0..n (errors name the file and line).
fn checked_runs(path: &Path, contents: &journal::Contents) -> Result<Vec<RunRow>, String> {
    let mut runs = Vec::new();
    // Per test and mapping: runs, the highest iteration and its line.
    let mut seen: BTreeMap<(String, Mapping), (u64, u32, usize)> = BTreeMap::new();
    for (line, r) in contents.results_at() {
        let at = |msg: String| format!("{}:{line}: {msg}", path.display());
        let mapping = r.mapping.parse::<Mapping>().map_err(|e| at(excerpt(&e)))?;
        if r.test.is_empty() {
            return Err(at("a run without a test name".into()));
        }
        let s = seen
            .entry((r.test.clone(), mapping))
            .or_insert((0, 0, line));
        s.0 += 1;
        if r.iteration >= s.1 {
            (s.1, s.2) = (r.iteration, line);
        }
        runs.push(RunRow {
            test: r.test.clone(),
            mapping,
            iteration: r.iteration,
            terminated: r.terminated,
            at_unix_ms: Some(r.at_unix_ms),
            line,
        });
    }
    for ((test, mapping), (n, max, line)) in seen {
        if u64::from(max) + 1 != n {
            return Err(format!(
                "{}:{line}: run {max} of {} under {}, but the journal holds {n} runs of it: the iterations of a test and mapping must be 0..{n} (a forged or edited journal?)",
                path.display(),
                excerpt(&test),
                mapping.name()
            ));
        }
    }
    Ok(runs)
}
