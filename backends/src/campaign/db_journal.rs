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
//! else computed from the suite its campaign line names (refused when that
//! cannot be read), so that `report --db` checks the tests it judges by.

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
/// what its device file (beside it) recorded of the suite and host.
pub fn runs_source(path: &Path) -> Result<RunsSource, String> {
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
    let doc = path
        .parent()
        .map(|dir| dir.join(format!("{device}.device.json")))
        .and_then(|f| std::fs::read_to_string(f).ok())
        .and_then(|t| crate::json::parse(&t).ok())
        .filter(|d| d.get("options") == Some(&campaign));
    let recorded = doc.as_ref().and_then(|d| {
        let s = d.get("suite")?;
        Some((
            s.get("fnv64")?.as_str()?.to_string(),
            s.get("tests")?.as_u64()?,
        ))
    });
    let suite = match recorded {
        Some(s) => Some(s),
        None => suite_of_runs(path, &campaign, &runs)?,
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
        suite,
        host: recorded_host(doc.as_ref()),
        runs,
    })
}

/// The suite of a journal without its device file: the fingerprint
/// ([`progress_litmus::fingerprint::tests`]) of the tests its runs name,
/// read from the suite its campaign line names, as the device file would
/// have recorded it. A campaign line that names no suite (not written by
/// `backends`) has none; one whose suite cannot be read, or no longer has
/// the tests run, is refused: the runs would be judged against whatever
/// tests have their names.
fn suite_of_runs(
    path: &Path,
    campaign: &serde_json::Value,
    runs: &[RunRow],
) -> Result<Option<(String, u64)>, String> {
    let paths: Vec<PathBuf> = match campaign.get("suite") {
        None | Some(serde_json::Value::Null) => return Ok(None),
        Some(serde_json::Value::String(p)) => vec![PathBuf::from(p)],
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .filter_map(|p| p.as_str().map(PathBuf::from))
            .collect(),
        Some(_) => Vec::new(),
    };
    let refuse = |why: String| {
        format!(
            "{}:1: the campaign's suite is not known ({why}) and there is no device file ({}) beside the journal: import the campaign's folder, which has it",
            path.display(),
            device_file_name(path, campaign)
        )
    };
    if paths.is_empty() {
        return Err(refuse("the campaign line's `suite` names no file".into()));
    }
    let tests = crate::campaign::suite::load_suite(&paths)
        .map_err(|f| refuse(f.msg.lines().next().unwrap_or_default().to_string()))?;
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
        return Err(refuse(format!(
            "test `{}` is not in {} now",
            excerpt(missing),
            crate::campaign::suite::show_paths(&paths)
        )));
    }
    let n = named.len() as u64;
    Ok(Some((progress_litmus::fingerprint::tests(named), n)))
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
