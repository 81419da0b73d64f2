//! Writing a campaign's results, the last stage of `backends run` (and of
//! `backends import`): when every run is journaled, the results are written
//! from the journal: artifact-format CSVs ([`crate::report::results`]), one
//! per configuration directory (`OUT/<N>_thread_<M>_instruction/<framework>/<name>.csv`,
//! ids numbering the tests `<N>t<M>i_<id>`; tests named otherwise go to
//! `OUT/<config>/<framework>/<name>.csv` under their full names), and
//! `OUT/<name>.device.json` with the device, the options, the times and
//! the fingerprint of the tests run (`suite`: what `backends report`
//! checks its `--tests` against; [`progress_litmus::fingerprint`]).

use crate::campaign::journal::{self, Entry};
use crate::campaign::options::RunTarget;
use crate::campaign::timing;
use crate::campaign::{env, input, Failure};
use crate::mapping::Mapping;
use crate::report::results::{self, Cell};
use progress_litmus::axb::load::NamedTest;
use progress_litmus::io::write_atomically;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The paths of a campaign's files.
pub struct Paths {
    pub journal: PathBuf,
    pub device: PathBuf,
}

/// The journal and device file of campaign `name` in `out`.
pub fn paths(out: &Path, name: &str) -> Paths {
    Paths {
        journal: out.join(format!("{name}.journal.jsonl")),
        device: out.join(format!("{name}.device.json")),
    }
}

/// Checks a device name: it names the result files.
pub(crate) fn check_name(name: &str) -> Result<(), Failure> {
    if name.is_empty()
        || name.starts_with('.')
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(input(format!(
            "bad --name `{name}`: use letters, digits, `-`, `_` and `.` (it names the result files)"
        )));
    }
    Ok(())
}

/// Where a test's results go: the configuration directory and the id.
pub fn result_slot(name: &str, test: &progress_litmus::Test) -> (String, String) {
    let parsed = name.split_once('_').and_then(|(config, id)| {
        let rest = config.strip_suffix('i')?;
        let (n, m) = rest.split_once('t')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        (digits(n) && digits(m) && digits(id) && !n.starts_with('0') && !m.starts_with('0'))
            .then(|| (format!("{n}_thread_{m}_instruction"), id.to_string()))
    });
    parsed.unwrap_or_else(|| (test.config(), name.to_string()))
}

/// Writes the CSVs and the device file from a complete journal; returns
/// the files written.
pub(crate) fn write_results(
    out: &Path,
    target: RunTarget,
    name: &str,
    tests: &[NamedTest],
    contents: &journal::Contents,
    device: Value,
) -> Result<Vec<PathBuf>, Failure> {
    let (files, ran) = result_rows(tests, contents);
    let mut written = Vec::new();
    for (dir, mut rows) in files {
        rows.sort_by(|a, b| crate::report::analysis::natural_cmp(&a.0, &b.0));
        let path = out
            .join(dir)
            .join(target.framework())
            .join(format!("{name}.csv"));
        write_atomically(&path, results::write(&rows).as_bytes())
            .map_err(|e| env(format!("{}: cannot write: {e}", path.display())))?;
        written.push(path);
    }
    let doc = device_doc(target, name, contents, device, ran);
    let mut text = oracle::json::to_string_pretty(&doc).expect("serializable");
    text.push('\n');
    let device_path = paths(out, name).device;
    write_atomically(&device_path, text.as_bytes())
        .map_err(|e| env(format!("{}: cannot write: {e}", device_path.display())))?;
    written.push(device_path);
    Ok(written)
}

/// The rows of the result CSVs, per configuration directory: a test's id
/// and one cell per mapping.
type Rows = BTreeMap<String, Vec<(String, [Cell; 3])>>;

/// The rows of the CSVs, and the tests with a row, for the suite fingerprint
/// `backends report` checks its `--tests` against.
fn result_rows<'t>(
    tests: &'t [NamedTest],
    contents: &journal::Contents,
) -> (Rows, Vec<(&'t str, &'t progress_litmus::Test)>) {
    // (failed, runs) per test and mapping.
    let mut counts: BTreeMap<(&str, &str), (u32, u32)> = BTreeMap::new();
    for r in contents.results() {
        let c = counts.entry((&r.test, &r.mapping)).or_default();
        c.0 += !r.terminated as u32;
        c.1 += 1;
    }
    let mut files = Rows::new();
    let mut ran = Vec::new();
    for t in tests {
        let (dir, id) = result_slot(&t.name, &t.entry.test);
        let mut cells = [Cell::NotRun; 3];
        for m in Mapping::ALL {
            if let Some(&(k, n)) = counts.get(&(t.name.as_str(), m.name())) {
                cells[m.code() as usize] = Cell::from_counts(k, n);
            }
        }
        // A test with no run (an import of some of a suite's tests) has
        // no row: a row of empty cells would count as observed.
        if cells.iter().any(|c| *c != Cell::NotRun) {
            files.entry(dir).or_default().push((id, cells));
            ran.push((t.name.as_str(), &t.entry.test));
        }
    }
    (files, ran)
}

/// The sessions of a journal as (started, last result, runs): a resumed
/// campaign's wall time is the sum of its sessions', not the time from
/// the first start to the last result.
fn sessions(contents: &journal::Contents) -> Vec<(u64, u64, usize)> {
    let mut sessions = Vec::new();
    let mut current: Option<(u64, u64, usize)> = None;
    for e in &contents.entries {
        match e {
            Entry::Session(s) => {
                if let Some(c) = current.take() {
                    sessions.push(c);
                }
                current = Some((s.started_unix_ms, s.started_unix_ms, 0));
            }
            Entry::Result(r) => {
                if let Some(c) = current.as_mut() {
                    c.1 = c.1.max(r.at_unix_ms);
                    c.2 += 1;
                }
            }
            Entry::Campaign(_) => {}
        }
    }
    sessions.extend(current);
    sessions
}

/// The device file: the device, the fingerprint of the tests run, the
/// campaign's options, and the counts and times of its runs.
fn device_doc(
    target: RunTarget,
    name: &str,
    contents: &journal::Contents,
    device: Value,
    ran: Vec<(&str, &progress_litmus::Test)>,
) -> Value {
    // Times: per session, from its start to its last result.
    let sessions = sessions(contents);
    let runs = contents.results().count();
    let hung = contents.results().filter(|r| !r.terminated).count();
    let run_ms: f64 = contents.results().map(|r| r.elapsed_ms).sum();
    json!({
        "device": name,
        "target": target.name(),
        "description": device,
        "suite": {"tests": ran.len(), "fnv64": progress_litmus::fingerprint::tests(ran)},
        "options": contents.campaign(),
        "results": {"runs": runs, "non_terminating_runs": hung},
        "times": {
            "sessions": sessions.iter().map(|(s, e, n)| json!({
                "started_unix_ms": s, "last_result_unix_ms": e, "wall_ms": e - s, "runs": n
            })).collect::<Vec<_>>(),
            "wall_ms": sessions.iter().map(|(s, e, _)| e - s).sum::<u64>(),
            "runs_ms": (run_ms * 1000.0).round() / 1000.0,
            "mappings": timing::json(&timing::per_mapping(contents)),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_go_to_artifact_configuration_directories() {
        let t = progress_litmus::axb::text::parse(
            "THREAD0\natomic_store(0,1)\nTHREAD1\natomic_chk_branch(0,0,0)\n",
        )
        .unwrap();
        assert_eq!(
            result_slot("3t4i_34", &t),
            ("3_thread_4_instruction".to_string(), "34".to_string())
        );
        assert_eq!(
            result_slot("mutex", &t),
            ("2t2i".to_string(), "mutex".to_string())
        );
        assert_eq!(result_slot("3t4i_x", &t).1, "3t4i_x");
        assert_eq!(result_slot("03t4i_1", &t).1, "03t4i_1");
    }
}
