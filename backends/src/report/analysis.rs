//! The conformance report: which progress models a device's observations
//! are consistent with.
//!
//! A test is a *conformance test* of a model when the model guarantees its
//! termination (verdict P). A device is consistent with a model iff none of
//! the model's conformance tests ever failed to terminate on it, under any
//! mapping: one non-terminating run is a counterexample to the guarantee,
//! however rare. Otherwise the report lists the violations (test, mapping,
//! k of n runs) and says whether each is deterministic (every run hung) or
//! occasional. Termination never proves a model (a test may simply not have
//! been provoked), so "consistent" is the strongest claim the data allows.

use crate::excerpt::{excerpt, printable};
use crate::mapping::Mapping;
use crate::report::observations::{self, Device};
use crate::report::results::Cell;
use progress_litmus::axb::load::{load_all, NamedTest};
use progress_litmus::{Model, Test, Verdicts};
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

/// The tests results are interpreted against, with their verdicts.
pub struct Tests {
    /// By name.
    pub verdicts: BTreeMap<String, Verdicts>,
    /// The programs by name, for the fingerprint a run recorded.
    pub programs: BTreeMap<String, Test>,
    /// Where they were read, for messages.
    pub source: String,
}

/// Loads the tests at `paths` (directories of artifact `.txt` tests, RON
/// suites, ...; none: the 483 published tests compiled in, see
/// [`progress_litmus::axb::published`]) and their verdicts: those stored in a suite, else
/// computed by the oracle. Any unreadable file or duplicate name is an
/// error.
pub fn load_tests(paths: &[PathBuf]) -> Result<Tests, String> {
    let (tests, shown) = load_named(paths)?;
    with_verdicts(tests, shown)
}

/// The tests at `paths` as [`load_tests`] reads them, without their
/// verdicts, and where they came from in words.
pub fn load_named(paths: &[PathBuf]) -> Result<(Vec<NamedTest>, String), String> {
    if paths.is_empty() {
        let tests = progress_litmus::axb::published::tests().map_err(|e| e.to_string())?;
        return Ok((tests, progress_litmus::axb::published::DIR.to_string()));
    }
    if let Some(missing) = paths.iter().find(|p| !p.exists()) {
        return Err(format!(
            "{}: no such file or directory (--tests names the tests the results refer to)",
            missing.display()
        ));
    }
    let shown = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let (tests, errors) = load_all(paths);
    if !errors.is_empty() {
        let msgs: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(msgs.join("\n"));
    }
    Ok((tests, shown))
}

/// Indexes `tests` by name with their verdicts (computed where a suite did
/// not store them); `shown` says where they came from.
fn with_verdicts(tests: Vec<NamedTest>, shown: String) -> Result<Tests, String> {
    if tests.is_empty() {
        return Err(format!("{shown}: no tests found"));
    }
    let mut by_name: BTreeMap<String, (Test, Option<Verdicts>)> = BTreeMap::new();
    for t in tests {
        if by_name.contains_key(&t.name) {
            return Err(format!(
                "{}: two tests named `{}`",
                t.source.display(),
                t.name
            ));
        }
        by_name.insert(t.name, (t.entry.test, t.entry.verdicts));
    }
    keyed_verdicts(by_name, shown)
}

/// `tests` by key with their verdicts: those given (a suite stored them),
/// else the oracle's, bounded as `oracle classify` is (a runaway test is
/// an error naming it, not an allocation failure); `source` says where
/// they came from.
pub fn keyed_verdicts(
    tests: BTreeMap<String, (Test, Option<Verdicts>)>,
    source: String,
) -> Result<Tests, String> {
    let missing: Vec<&Test> = tests
        .values()
        .filter(|(_, v)| v.is_none())
        .map(|(t, _)| t)
        .collect();
    let mut computed = oracle::try_verdicts_all(&missing, oracle::DEFAULT_MAX_STATES).into_iter();
    let mut verdicts = BTreeMap::new();
    for (key, (_, v)) in &tests {
        let v = match v {
            Some(v) => *v,
            None => computed.next().expect("one verdict per test").map_err(|e| {
                format!(
                    "{source}: test `{key}`: state space exceeds {} states (the oracle's default bound): label the tests with `oracle label` and pass the suite",
                    e.bound
                )
            })?,
        };
        verdicts.insert(key.clone(), v);
    }
    Ok(Tests {
        verdicts,
        programs: tests.into_iter().map(|(k, (t, _))| (k, t)).collect(),
        source,
    })
}

/// Orders test names naturally: `2t3i_2` before `2t3i_10`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let o = match (x, y) {
            ((true, x), (true, y)) => {
                let (xt, yt) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
                xt.len().cmp(&yt.len()).then(xt.cmp(yt))
            }
            ((_, x), (_, y)) => x.cmp(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len()).then(a.cmp(b))
}

/// One non-terminating observation of a conformance test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub test: String,
    #[serde(serialize_with = "observations::ser_mapping")]
    pub mapping: Mapping,
    pub failed: u32,
    pub runs: u32,
    /// Why the hang may not be one: the deadline of its mapping was too
    /// close to call, or a campaign with a longer deadline settled it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caveat: Option<Caveat>,
}

/// What qualifies a violation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Caveat {
    /// Its mapping is one of the device's close calls
    /// ([`observations::close_call`]): the hang may have been a slow run.
    TooCloseToCall,
    /// Too close to call in the campaigns where it hung, and every run of
    /// it terminated in a campaign whose runs went on longer than those
    /// campaigns' deadline: the hangs were slow runs cut short. The words
    /// name both campaigns ([`crate::report::db_facts::settled`]).
    Settled(String),
}

impl Caveat {
    /// The caveat in a report's words.
    pub fn words(&self) -> String {
        match self {
            Caveat::TooCloseToCall => "too close to call".to_string(),
            Caveat::Settled(how) => format!("settled: {how}"),
        }
    }
}

impl Violation {
    /// Every run hung.
    pub fn deterministic(&self) -> bool {
        self.failed == self.runs
    }
}

/// How many tests did not always terminate under one mapping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Nonterm {
    /// Tests observed under the mapping.
    pub run: usize,
    /// Tests that hung in every run.
    pub deterministic: usize,
    /// Tests that hung in some runs but not all.
    pub occasional: usize,
}

/// The findings for one device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceReport {
    pub device: String,
    /// The physical GPU it is a setup of, where the database records one
    /// ([`crate::report::db_gpus`]).
    pub gpu: Option<String>,
    /// Tests with observations.
    pub observed: usize,
    /// How many campaigns the observations sum (k and n added).
    pub campaigns: usize,
    /// Per mapping, [`Mapping::ALL`] order.
    pub nonterm: [Nonterm; 3],
    /// Per model, [`Model::ALL`] order: the violations, sorted by test
    /// (natural order) and mapping.
    pub violations: Vec<Vec<Violation>>,
    /// Per model: how many of the observed tests are its conformance tests.
    /// Zero makes consistency vacuous (e.g. UNFAIR: every synthesized test
    /// fails under it).
    pub conformance: Vec<usize>,
    /// The mappings whose deadline was too close to call, from the
    /// campaigns' device files: there a hang may have been a slow run.
    pub close_calls: Vec<observations::CloseCall>,
}

impl DeviceReport {
    /// The setups of one physical GPU as one row (issue 44 item 3): a
    /// model is violated on the GPU where any setup violates it (the
    /// violations of all, by test), consistent where every setup that ran
    /// a conformance test of it is; the conformance count is the most any
    /// one setup ran, the close calls all of theirs.
    pub fn combined(gpu: &str, setups: &[&DeviceReport]) -> DeviceReport {
        let mut violations = vec![Vec::new(); Model::ALL.len()];
        let mut conformance = vec![0; Model::ALL.len()];
        let mut nonterm = [Nonterm::default(); 3];
        for d in setups {
            for (i, vs) in d.violations.iter().enumerate() {
                violations[i].extend(vs.iter().cloned());
                conformance[i] = conformance[i].max(d.conformance[i]);
            }
            for (n, m) in nonterm.iter_mut().zip(&d.nonterm) {
                n.run += m.run;
                n.deterministic += m.deterministic;
                n.occasional += m.occasional;
            }
        }
        for vs in &mut violations {
            vs.sort_by(|a, b| natural_cmp(&a.test, &b.test).then(a.mapping.cmp(&b.mapping)));
        }
        DeviceReport {
            device: gpu.to_string(),
            gpu: Some(gpu.to_string()),
            observed: setups.iter().map(|d| d.observed).max().unwrap_or(0),
            campaigns: setups.iter().map(|d| d.campaigns).sum(),
            nonterm,
            violations,
            conformance,
            close_calls: setups.iter().flat_map(|d| d.close_calls.clone()).collect(),
        }
    }
}

/// A row of the matrix ([`Report::rows`]).
pub enum Row<'a> {
    /// A device of no GPU.
    Device(&'a DeviceReport),
    /// A GPU's setups combined.
    Gpu(DeviceReport),
    /// One setup of the GPU above.
    Setup(&'a DeviceReport),
}

impl Row<'_> {
    pub fn report(&self) -> &DeviceReport {
        match self {
            Row::Device(d) | Row::Setup(d) => d,
            Row::Gpu(d) => d,
        }
    }
}

/// The whole report.
pub struct Report {
    pub devices: Vec<DeviceReport>,
    pub tests: usize,
    pub tests_source: String,
}

/// Checks that every observed test is one of `tests`: results of another
/// suite must not be silently judged against the wrong verdicts
/// ([`crate::report::programs::resolve`] keys every observation by the
/// test it is of, and checks each campaign's suite by its fingerprint).
fn check_known(devices: &[Device], tests: &Tests) -> Result<(), String> {
    let mut msgs = Vec::new();
    for d in devices {
        let unknown: Vec<_> = d
            .tests
            .iter()
            .filter(|(name, _)| !tests.verdicts.contains_key(*name))
            .collect();
        if let Some((name, first)) = unknown.first() {
            msgs.push(format!(
                "{}:{}: test {} (device {}) is not among the tests of {}{}; is this a results file of another suite? Pass its tests with --tests",
                first.source.display(),
                first.line,
                excerpt(name),
                excerpt(&d.name),
                tests.source,
                if unknown.len() > 1 {
                    format!(" ({} unknown tests in all for this device)", unknown.len())
                } else {
                    String::new()
                }
            ));
        }
    }
    if msgs.is_empty() {
        Ok(())
    } else {
        Err(msgs.join("\n"))
    }
}

/// Analyses every device against the verdicts of `tests`.
pub fn analyse(devices: &[Device], tests: &Tests) -> Result<Report, String> {
    check_known(devices, tests)?;
    let mut out = Vec::new();
    for d in devices {
        let mut names: Vec<&String> = d.tests.keys().collect();
        names.sort_by(|a, b| natural_cmp(a, b));
        let mut nonterm = [Nonterm::default(); 3];
        let mut violations = vec![Vec::new(); Model::ALL.len()];
        let mut conformance = vec![0; Model::ALL.len()];
        for name in names {
            let obs = &d.tests[name];
            let v = tests.verdicts[name];
            for (i, model) in Model::ALL.iter().enumerate() {
                conformance[i] += v.passes(*model) as usize;
            }
            for m in Mapping::ALL {
                let cell = obs.cell(m);
                let nt = &mut nonterm[m.code() as usize];
                match cell {
                    Cell::NotRun => continue,
                    Cell::Pass => nt.run += 1,
                    Cell::Fail { failed, runs } => {
                        nt.run += 1;
                        if failed == runs {
                            nt.deterministic += 1;
                        } else {
                            nt.occasional += 1;
                        }
                    }
                }
                if let Cell::Fail { failed, runs } = cell {
                    for (i, model) in Model::ALL.iter().enumerate() {
                        if v.passes(*model) {
                            violations[i].push(Violation {
                                test: name.clone(),
                                mapping: m,
                                failed,
                                runs,
                                caveat: None,
                            });
                        }
                    }
                }
            }
        }
        // A mapping with no run reported non-terminating has no hang to
        // doubt.
        let close_calls: Vec<_> = observations::close_calls(d)?
            .into_iter()
            .filter(|c| {
                let n = nonterm[c.mapping.code() as usize];
                n.deterministic + n.occasional > 0
            })
            .collect();
        add_caveats(&mut violations, &close_calls, d);
        out.push(DeviceReport {
            device: d.name.clone(),
            gpu: d.gpu.clone(),
            observed: d.tests.len(),
            campaigns: d.campaigns,
            nonterm,
            violations,
            conformance,
            close_calls,
        });
    }
    Ok(Report {
        devices: out,
        tests: tests.verdicts.len(),
        tests_source: tests.source.clone(),
    })
}

/// Marks each violation under a mapping of `close` too close to call, or
/// settled where `d`'s campaigns settle it ([`Device::settled`]).
fn add_caveats(violations: &mut [Vec<Violation>], close: &[observations::CloseCall], d: &Device) {
    for v in violations.iter_mut().flatten() {
        if let Some(how) = d.settled.get(&(v.test.clone(), v.mapping.code())) {
            v.caveat = Some(Caveat::Settled(how.clone()));
        } else if close.iter().any(|c| c.mapping == v.mapping) {
            v.caveat = Some(Caveat::TooCloseToCall);
        }
    }
}

/// One object of `--format json`.
#[derive(Serialize)]
struct JsonFinding<'a> {
    device: &'a str,
    /// The physical GPU the device is a setup of, where recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    gpu: Option<&'a str>,
    model: &'static str,
    consistent: bool,
    /// How many campaigns k and n sum, when more than one.
    #[serde(skip_serializing_if = "is_one")]
    campaigns: usize,
    violations: &'a [Violation],
    /// Mappings whose deadline was too close to call.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    close_calls: &'a [observations::CloseCall],
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

impl Report {
    /// The findings of one device and model.
    /// Each physical GPU with the indices of its setups in
    /// [`Report::devices`] (contiguous: their names share the GPU's).
    pub fn gpus(&self) -> Vec<(String, Vec<usize>)> {
        let mut out: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, d) in self.devices.iter().enumerate() {
            let Some(g) = &d.gpu else { continue };
            match out.iter_mut().find(|(name, _)| name == g) {
                Some((_, v)) => v.push(i),
                None => out.push((g.clone(), vec![i])),
            }
        }
        out
    }

    /// The rows of a matrix, in order: each device in its place, except
    /// that a GPU's setups come together, beneath the GPU's combined row
    /// ([`DeviceReport::combined`]), where its first setup is.
    pub fn rows(&self) -> Vec<Row<'_>> {
        let gpus = self.gpus();
        let mut out = Vec::new();
        for (i, d) in self.devices.iter().enumerate() {
            let Some(g) = &d.gpu else {
                out.push(Row::Device(d));
                continue;
            };
            let (_, idx) = gpus.iter().find(|(n, _)| n == g).expect("grouped");
            if idx[0] != i {
                continue;
            }
            let setups: Vec<&DeviceReport> = idx.iter().map(|&j| &self.devices[j]).collect();
            out.push(Row::Gpu(DeviceReport::combined(g, &setups)));
            out.extend(setups.into_iter().map(Row::Setup));
        }
        out
    }

    pub fn violations(&self, device: &str, model: Model) -> Option<&[Violation]> {
        self.devices
            .iter()
            .find(|d| d.device == device)
            .map(|d| d.violations[model.index()].as_slice())
    }

    /// `--format json`: a list of `{device, model, consistent, violations}`,
    /// devices sorted by name, models in CSV column order.
    pub fn json(&self) -> String {
        let mut list = Vec::new();
        for d in &self.devices {
            for (i, m) in Model::ALL.iter().enumerate() {
                list.push(JsonFinding {
                    device: &d.device,
                    gpu: d.gpu.as_deref(),
                    model: m.name(),
                    consistent: d.violations[i].is_empty(),
                    campaigns: d.campaigns,
                    violations: &d.violations[i],
                    close_calls: &d.close_calls,
                });
            }
        }
        let mut s = oracle::json::to_string_pretty(&list).expect("serializable");
        s.push('\n');
        s
    }

    /// The text report: a summary matrix, then per device the
    /// non-termination counts and the violations of each model, at most
    /// `max_listed` per model when given (the counts are always complete).
    pub fn text(&self, max_listed: Option<usize>) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Conformance report: {} device(s), verdicts of {} tests from {}",
            self.devices.len(),
            self.tests,
            self.tests_source
        );
        let _ = writeln!(
            out,
            "A device is consistent with a model iff no conformance test of the model (verdict P)"
        );
        let _ = writeln!(
            out,
            "ever failed to terminate on it. Cells: `ok`, the number of violating tests, or `-`\n(vacuously consistent: none of the observed tests is a conformance test of the model).\n"
        );
        if self
            .devices
            .iter()
            .flat_map(|d| d.violations.iter().flatten())
            .any(|v| v.test.contains('@'))
        {
            let _ = writeln!(
                out,
                "A test NAME@FINGERPRINT is one of two programs of that name in these results (suites\nreuse names); the published test keeps its plain name.\n"
            );
        }
        summary_matrix(&mut out, self);
        for d in &self.devices {
            device_section(&mut out, d, max_listed);
        }
        out
    }
}

/// The matrix of the text report: a row per device, a column per model,
/// each cell `ok`, the number of violating tests, or `-` (no conformance
/// test of the model observed), so that the whole picture fits a screen.
/// The matrix of the text report: a row per device; a GPU's setups
/// ([`Report::gpus`]) indented beneath the GPU's combined row.
fn summary_matrix(out: &mut String, report: &Report) {
    let label = |r: &Row| match r {
        Row::Gpu(d) => format!("{} (every setup)", printable(&d.device)),
        Row::Setup(d) => format!("  {}", printable(&d.device)),
        Row::Device(d) => printable(&d.device),
    };
    let rows = report.rows();
    let w = rows
        .iter()
        .map(|d| label(d).chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = write!(out, "{:w$}", "device");
    for m in Model::ALL {
        let _ = write!(out, " {:>w2$}", m.name(), w2 = m.name().len().max(4));
    }
    out.push('\n');
    let mut qualified = false;
    for r in &rows {
        let _ = write!(out, "{:w$}", label(r));
        let d = r.report();
        for (i, m) in Model::ALL.iter().enumerate() {
            let cell = matrix_cell(d, i);
            qualified |= cell.ends_with(['?', '*']);
            let _ = write!(out, " {:>w2$}", cell, w2 = m.name().len().max(4));
        }
        out.push('\n');
    }
    if qualified {
        out.push_str("`k?`: k violating tests, every hang of them under a mapping whose deadline was too close\nto call (they may have been slow runs); `ok*`: every hang settled as a slow run by a\ncampaign of the device whose runs went on longer.\n");
    }
}

/// One cell of the text matrix: `-` (vacuous), `ok`, the number of
/// violating tests, `k?` where every hang of the k was too close to call
/// and `ok*` where every one was settled as a slow run ([`Caveat`]).
fn matrix_cell(d: &DeviceReport, i: usize) -> String {
    let vs = &d.violations[i];
    let tests = distinct_tests(vs);
    let plain: Vec<Violation> = vs.iter().filter(|v| v.caveat.is_none()).cloned().collect();
    if d.conformance[i] == 0 {
        "-".to_string()
    } else if tests == 0 {
        "ok".to_string()
    } else if !plain.is_empty() {
        distinct_tests(&plain).to_string()
    } else if vs
        .iter()
        .all(|v| matches!(v.caveat, Some(Caveat::Settled(_))))
    {
        "ok*".to_string()
    } else {
        format!("{tests}?")
    }
}

/// One device's section of the text report: its non-termination counts
/// per mapping, the models it is consistent with, and the violations of
/// each other model (at most `max_listed` each).
fn device_section(out: &mut String, d: &DeviceReport, max_listed: Option<usize>) {
    let campaigns = if d.campaigns > 1 {
        format!(", k of n summed over {} campaigns", d.campaigns)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "\n== {} ({} tests observed{campaigns})",
        printable(&d.device),
        d.observed
    );
    for m in Mapping::ALL {
        let n = d.nonterm[m.code() as usize];
        if n.run == 0 {
            let _ = writeln!(out, "  {:<12} not run", m.name());
        } else {
            let _ = writeln!(
                out,
                "  {:<12} {} of {} tests did not always terminate ({} hung in every run, {} in some runs)",
                m.name(),
                n.deterministic + n.occasional,
                n.run,
                n.deterministic,
                n.occasional
            );
        }
    }
    for c in &d.close_calls {
        let _ = writeln!(
            out,
            "  {:<12} deadline too close to call: a run that terminated took {:.1} ms, over half of the {:.1} ms after which the quickest non-terminating run was stopped; its non-terminating runs may be slow runs",
            c.mapping.name(),
            c.slowest_terminated_ms,
            c.quickest_stopped_ms
        );
    }
    let consistent: Vec<String> = Model::ALL
        .iter()
        .enumerate()
        .filter(|(i, _)| d.violations[*i].is_empty())
        .map(|(i, m)| {
            if d.conformance[i] == 0 {
                format!("{} (vacuously)", m.name())
            } else {
                format!("{} ({} tests)", m.name(), d.conformance[i])
            }
        })
        .collect();
    let _ = writeln!(
        out,
        "  consistent with: {}",
        if consistent.is_empty() {
            "none".to_string()
        } else {
            consistent.join(", ")
        }
    );
    for (i, m) in Model::ALL.iter().enumerate() {
        if !d.violations[i].is_empty() {
            model_violations(out, *m, &d.violations[i], max_listed);
        }
    }
}

/// The violations `vs` (not empty) of model `m` on one device: a count
/// line, then at most `max_listed` observations, one a line, and how many
/// more there are.
fn model_violations(out: &mut String, m: Model, vs: &[Violation], max_listed: Option<usize>) {
    let det = vs.iter().filter(|v| v.deterministic()).count();
    let _ = writeln!(
        out,
        "  {} ({}): violated by {} tests, {} observations ({} hung in every run, {} in some runs){}",
        m.name(),
        m.pretty(),
        distinct_tests(vs),
        vs.len(),
        det,
        vs.len() - det,
        caveat_counts(vs)
    );
    let shown = max_listed.unwrap_or(usize::MAX).min(vs.len());
    for v in &vs[..shown] {
        let _ = writeln!(
            out,
            "    {:<10} {:<12} {}/{} {}{}",
            printable(&v.test),
            v.mapping.name(),
            v.failed,
            v.runs,
            // One run that hung is not "deterministic": say what was seen
            // (issue 23 item 5).
            match (v.deterministic(), v.runs) {
                (true, 1) => "hung in its only run",
                (true, _) => "hung in every run",
                _ => "hung in some runs",
            },
            v.caveat
                .as_ref()
                .map_or(String::new(), |c| format!(" ({})", printable(&c.words())))
        );
    }
    if shown < vs.len() {
        let _ = writeln!(out, "    ... and {} more observations", vs.len() - shown);
    }
}

/// `; N too close to call, M settled` for the observations of `vs` that
/// have those caveats; empty when none has one.
fn caveat_counts(vs: &[Violation]) -> String {
    let close = vs
        .iter()
        .filter(|v| v.caveat == Some(Caveat::TooCloseToCall))
        .count();
    let settled = vs
        .iter()
        .filter(|v| matches!(v.caveat, Some(Caveat::Settled(_))))
        .count();
    let mut parts = Vec::new();
    if close > 0 {
        parts.push(format!("{close} too close to call"));
    }
    if settled > 0 {
        parts.push(format!("{settled} settled as slow runs"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join(", "))
    }
}

/// The number of different tests among violations (sorted by test).
pub fn distinct_tests(vs: &[Violation]) -> usize {
    let mut n = 0;
    let mut last: Option<&str> = None;
    for v in vs {
        if last != Some(v.test.as_str()) {
            n += 1;
            last = Some(&v.test);
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_compares_numbers_by_value() {
        let mut v = vec!["2t3i_10", "2t3i_2", "3t3i_0", "2t3i_02x", "2t10i_0"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["2t3i_2", "2t3i_02x", "2t3i_10", "2t10i_0", "3t3i_0"]);
    }
}
