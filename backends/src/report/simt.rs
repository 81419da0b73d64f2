//! SIMT-Step results (issue 22, docs/KERNEL.md §2.10): which outcomes a
//! device showed for each SIMT-Step test, and which of the paper's four
//! direct models (CM, SM, SCF, SSO) that is consistent with (its Fig. 13
//! question).
//!
//! **The results file** `<device>.simt.csv`, beside the artifact's CSVs
//! (which it leaves unchanged, so that every older reader still reads
//! those): a header `test,outcome,count,runs`, then one row per test and
//! outcome the device showed: `count` of the test's `runs` ended in
//! `outcome`, the observed terms as `name=value` separated by spaces
//! (`m[0]=1 m[1]=2`, the terms of the test's assertions in text order).
//! Runs without an outcome (stopped by the loop budget, or on a device
//! whose subgroups are too small) are a row with outcome `-`.
//!
//! **The analysis.** For each test and model the oracle lists the
//! reachable final states under `subgroup=cm|sm|scf|sso`
//! ([`oracle::kernel::outcomes`]) and projects them onto the observed
//! terms; a model is violated when the device showed an outcome outside
//! that set. Nothing here is hard-coded: a new test in the folder is
//! judged the same way.

use oracle::kernel::outcomes::observed_outcomes;
use progress_litmus::kernel::load::{load_all, Item, NamedProgram};
use progress_litmus::kernel::ScopedModel;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The four direct models, strong to weak, as `subgroup=` words.
pub const MODELS: [&str; 4] = ["cm", "sm", "scf", "sso"];

/// The header of a `.simt.csv` file.
pub const HEADER: &str = "test,outcome,count,runs";

/// The file name ending of SIMT results.
pub const SUFFIX: &str = ".simt.csv";

/// The outcome of runs that ended in none.
pub const NO_OUTCOME: &str = "-";

/// The kernel programs results are judged against, by name.
pub type Programs = BTreeMap<String, NamedProgram>;

/// What one device showed: per test, per outcome, how many runs; and the
/// test's runs in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub seen: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Tally {
    /// Adds `count` runs of `test` that ended in `outcome`; `None` when
    /// the test's runs would no longer fit a `u64`.
    pub fn add(&mut self, test: &str, outcome: &str, count: u64) -> Option<()> {
        self.runs(test).checked_add(count)?;
        *self
            .seen
            .entry(test.to_string())
            .or_default()
            .entry(outcome.to_string())
            .or_default() += count;
        Some(())
    }

    /// The runs of `test` ([`Tally::add`] keeps them within a `u64`).
    pub fn runs(&self, test: &str) -> u64 {
        self.seen.get(test).map_or(0, |m| m.values().sum())
    }

    /// The `.simt.csv` text, rows sorted by test and outcome.
    pub fn csv(&self) -> String {
        let mut s = format!("{HEADER}\n");
        for (test, m) in &self.seen {
            let runs = self.runs(test);
            for (outcome, count) in m {
                let _ = writeln!(s, "{test},{outcome},{count},{runs}");
            }
        }
        s
    }

    /// Reads a `.simt.csv` file, each row's test one of `programs` and its
    /// outcome well formed ([`check_row`]); errors name the file and line.
    pub fn read(path: &Path, programs: &Programs) -> Result<Tally, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, h)) if h.trim_end() == HEADER => {}
            _ => {
                return Err(format!(
                    "{}:1: expected the header `{HEADER}`",
                    path.display()
                ))
            }
        }
        let mut t = Tally::default();
        let mut stated: BTreeMap<String, u64> = BTreeMap::new();
        for (n, line) in lines {
            let at = format!("{}:{}", path.display(), n + 1);
            let f: Vec<&str> = line.trim_end().split(',').collect();
            if line.trim().is_empty() {
                continue;
            }
            let [test, outcome, count, runs] = f[..] else {
                return Err(format!(
                    "{at}: expected 4 fields `{HEADER}`, found {}",
                    f.len()
                ));
            };
            check_row(&at, test, outcome, programs)?;
            let num = |s: &str, what: &str| {
                s.parse::<u64>().map_err(|_| {
                    format!(
                        "{at}: {what} `{}` is not a number",
                        crate::excerpt::printable(s)
                    )
                })
            };
            let (count, runs) = (num(count, "count")?, num(runs, "runs")?);
            if count == 0 || count > runs {
                return Err(format!("{at}: count {count} must be 1 to runs ({runs})"));
            }
            if *stated.entry(test.to_string()).or_insert(runs) != runs {
                return Err(format!(
                    "{at}: test `{test}` has another runs total on an earlier line"
                ));
            }
            if t.seen.get(test).is_some_and(|m| m.contains_key(outcome)) {
                return Err(format!(
                    "{at}: test `{test}`, outcome `{outcome}` given twice"
                ));
            }
            t.add(test, outcome, count).ok_or_else(|| {
                format!("{at}: test `{test}`: its counts add up to more than its {runs} runs")
            })?;
        }
        for (test, runs) in stated {
            if t.runs(&test) != runs {
                return Err(format!(
                    "{}: test `{test}`: its counts add up to {}, not its {runs} runs",
                    path.display(),
                    t.runs(&test)
                ));
            }
        }
        Ok(t)
    }
}

/// The most runs one run line may number (`"run"`: 0 to this).
pub const MAX_RUN: u64 = u32::MAX as u64;

/// Tallies the JSON lines a SIMT form's host prints, one a run:
/// `{"test":..,"run":N,"terminated":bool,"finished":N,"unsupported":bool,"outcome":".."}`.
/// Each names a test of `programs` and a well-formed outcome
/// ([`check_row`]); `run` (when given) is 0 to [`MAX_RUN`] and once a
/// test; `finished` (when given) at most the program's invocations.
pub fn tally_lines(files: &[PathBuf], programs: &Programs) -> Result<Tally, String> {
    let mut t = Tally::default();
    let mut numbered: BTreeMap<(String, u64), String> = BTreeMap::new();
    for path in files {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{}:{}", path.display(), n + 1);
            let (test, outcome, run) = run_line(&at, line, programs)?;
            if let Some(run) = run {
                if let Some(first) = numbered.insert((test.clone(), run), at.clone()) {
                    return Err(format!(
                        "{at}: test `{test}`, run {run} again (first at {first})"
                    ));
                }
            }
            t.add(&test, &outcome, 1)
                .ok_or_else(|| format!("{at}: more runs of `{test}` than a u64 counts"))?;
        }
    }
    Ok(t)
}

/// One run line at `at`: its test, outcome ([`NO_OUTCOME`] when the run
/// ended in none) and run number.
fn run_line(
    at: &str,
    line: &str,
    programs: &Programs,
) -> Result<(String, String, Option<u64>), String> {
    let v: Value = crate::json::parse(line).map_err(|e| format!("{at}: {e}"))?;
    let field = |k: &str| v.get(k).ok_or_else(|| format!("{at}: no `{k}` field"));
    let test = field("test")?
        .as_str()
        .ok_or_else(|| format!("{at}: `test` is not a string"))?;
    let terminated = field("terminated")?
        .as_bool()
        .ok_or_else(|| format!("{at}: `terminated` is not true or false"))?;
    let unsupported = v
        .get("unsupported")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let outcome = field("outcome")?
        .as_str()
        .ok_or_else(|| format!("{at}: `outcome` is not a string"))?;
    let outcome = if terminated && !unsupported && !outcome.is_empty() {
        outcome
    } else {
        NO_OUTCOME
    };
    check_row(at, test, outcome, programs)?;
    let p = &programs[test].program;
    let count = |k: &str, most: u64| -> Result<Option<u64>, String> {
        let Some(x) = v.get(k) else { return Ok(None) };
        match x.as_u64() {
            Some(n) if n <= most => Ok(Some(n)),
            _ => Err(format!("{at}: `{k}` is {x}, not 0 to {most}")),
        }
    };
    let invocations = p.workgroups as u64 * p.workgroup_size as u64;
    count("finished", invocations)?;
    let run = count("run", MAX_RUN)?;
    Ok((test.to_string(), outcome.to_string(), run))
}

/// A results row at `at` (a CSV row or run line): `test` is one of
/// `programs`, and `outcome` is [`NO_OUTCOME`] or names the test's terms in
/// order, each with a value below the program's `values` written as the
/// oracle writes it (`m[0]=1 m[1]=2`: no sign, no leading zeros).
pub fn check_row(at: &str, test: &str, outcome: &str, programs: &Programs) -> Result<(), String> {
    let p = programs.get(test).ok_or_else(|| {
        format!(
            "{at}: test `{}` is none of the {} programs with assertions given",
            crate::excerpt::printable(test),
            programs.len()
        )
    })?;
    if outcome == NO_OUTCOME {
        return Ok(());
    }
    let names = terms(p);
    let values = p.program.values as u64;
    let kvs: Vec<Option<(&str, &str)>> = outcome.split(' ').map(|kv| kv.split_once('=')).collect();
    let ok = kvs.len() == names.len()
        && kvs.iter().zip(&names).all(|(kv, n)| {
            kv.is_some_and(|(k, v)| {
                k == n
                    && v.parse::<u64>()
                        .is_ok_and(|x| x < values && x.to_string() == v)
            })
        });
    if ok {
        return Ok(());
    }
    Err(format!(
        "{at}: test `{test}`: outcome `{}` is not `{}` with values 0 to {}, written in decimal",
        crate::excerpt::printable(outcome),
        names
            .iter()
            .map(|n| format!("{n}=V"))
            .collect::<Vec<_>>()
            .join(" "),
        values - 1
    ))
}

/// One device's SIMT results: its name (the file stem), where they came
/// from (for errors) and tally.
pub struct Device {
    pub name: String,
    pub source: String,
    pub tally: Tally,
}

/// Reads `.simt.csv` files, or the ones directly in folders, against
/// `programs`. A device name (the file stem) must be printable: it is a
/// line of the report.
pub fn load(paths: &[PathBuf], programs: &Programs) -> Result<Vec<Device>, String> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| format!("{}: cannot read: {e}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.to_string_lossy().ends_with(SUFFIX))
                .collect();
            if found.is_empty() {
                return Err(format!("{}: no `*{SUFFIX}` files", p.display()));
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(p.clone());
        }
    }
    let mut out: Vec<Device> = Vec::new();
    for f in files {
        let shown = crate::excerpt::printable(&f.display().to_string());
        let file = f
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let Some(name) = file.strip_suffix(SUFFIX) else {
            return Err(format!(
                "{shown}: SIMT results are `<device>{SUFFIX}` files"
            ));
        };
        if crate::excerpt::printable(name) != name || name.is_empty() {
            return Err(format!(
                "{shown}: the device name (the file name before `{SUFFIX}`) must be printable characters"
            ));
        }
        if out.iter().any(|d| d.name == name) {
            return Err(format!("{shown}: device {name} given twice"));
        }
        out.push(Device {
            name: name.to_string(),
            source: shown,
            tally: Tally::read(&f, programs)?,
        });
    }
    Ok(out)
}

/// The terms a program's assertions name, each once, in text order: what
/// an outcome line of its SIMT form holds (the emitter's order).
pub fn terms(p: &NamedProgram) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in &p.program.asserts {
        for atom in a.cond.atoms() {
            let t = atom.term.to_string();
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// Per model (of [`MODELS`]), the outcome lines the oracle allows for `p`.
pub fn allowed(p: &NamedProgram, max_states: usize) -> Result<Vec<BTreeSet<String>>, String> {
    let at = format!("{}: program `{}`", p.source.display(), p.name);
    MODELS
        .iter()
        .map(|m| {
            let model = ScopedModel::parse(&format!("WEAK_FAIR, subgroup={m}"))
                .map_err(|e| format!("{at}: {e}"))?;
            observed_outcomes(&p.program, &model, max_states)
                .map(|(_, set)| set)
                .map_err(|e| format!("{at}: subgroup={m}: {e}"))
        })
        .collect()
}

/// One outcome a device showed that a model forbids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub test: String,
    pub outcome: String,
    pub count: u64,
    pub runs: u64,
}

/// A device against the four models: per model, its violations.
pub struct Verdicts {
    pub device: String,
    pub tests: usize,
    pub runs: u64,
    pub without_outcome: u64,
    pub violations: Vec<Vec<Violation>>,
}

/// The SIMT report: every device against the four models.
pub struct SimtReport {
    pub devices: Vec<Verdicts>,
}

/// Loads the kernel programs the results name (those with assertions).
pub fn load_programs(paths: &[PathBuf]) -> Result<Programs, String> {
    let (items, errors) = load_all(paths);
    if let Some(e) = errors.first() {
        return Err(e.to_string());
    }
    Ok(items
        .into_iter()
        .filter_map(|i| match i {
            Item::Kernel(p) if !p.program.asserts.is_empty() => Some((p.name.clone(), p)),
            _ => None,
        })
        .collect())
}

/// Judges every device: an outcome (checked when read: [`check_row`])
/// is a violation of each model whose allowed set lacks it.
pub fn analyse(
    devices: &[Device],
    programs: &Programs,
    max_states: usize,
) -> Result<SimtReport, String> {
    let mut allowed_sets: BTreeMap<&str, Vec<BTreeSet<String>>> = BTreeMap::new();
    let mut out = Vec::new();
    for d in devices {
        let mut v = Verdicts {
            device: d.name.clone(),
            tests: d.tally.seen.len(),
            runs: 0,
            without_outcome: 0,
            violations: vec![Vec::new(); MODELS.len()],
        };
        for (test, seen) in &d.tally.seen {
            let p = programs.get(test).ok_or_else(|| {
                format!(
                    "{}: test `{test}` is none of the {} programs with assertions given",
                    d.source,
                    programs.len()
                )
            })?;
            if !allowed_sets.contains_key(test.as_str()) {
                allowed_sets.insert(test, allowed(p, max_states)?);
            }
            let sets = &allowed_sets[test.as_str()];
            let runs = d.tally.runs(test);
            v.runs = v.runs.checked_add(runs).ok_or_else(|| {
                format!(
                    "{}: the runs of all tests add up to more than a u64 counts",
                    d.source
                )
            })?;
            for (outcome, &count) in seen {
                if outcome == NO_OUTCOME {
                    v.without_outcome += count;
                    continue;
                }
                for (k, set) in sets.iter().enumerate() {
                    if !set.contains(outcome) {
                        v.violations[k].push(Violation {
                            test: test.clone(),
                            outcome: outcome.clone(),
                            count,
                            runs,
                        });
                    }
                }
            }
        }
        out.push(v);
    }
    Ok(SimtReport { devices: out })
}

impl SimtReport {
    /// The models each device is consistent with, strong to weak.
    pub fn consistent(v: &Verdicts) -> Vec<&'static str> {
        MODELS
            .iter()
            .zip(&v.violations)
            .filter(|(_, viol)| viol.is_empty())
            .map(|(m, _)| *m)
            .collect()
    }

    pub fn text(&self) -> String {
        let mut s = String::from(
            "SIMT-Step direct models (docs/KERNEL.md §2.10): a model is violated when the device showed an outcome the oracle finds unreachable under it; memory is sequentially consistent in the oracle.\n",
        );
        for v in &self.devices {
            let models: Vec<String> = Self::consistent(v)
                .iter()
                .map(|m| m.to_uppercase())
                .collect();
            let models = if models.is_empty() {
                "none of CM, SM, SCF, SSO".to_string()
            } else {
                models.join(", ")
            };
            let _ = writeln!(
                s,
                "\ndevice {}: {} tests, {} runs ({} without an outcome): consistent with {models}",
                v.device, v.tests, v.runs, v.without_outcome
            );
            for (m, viol) in MODELS.iter().zip(&v.violations) {
                if viol.is_empty() {
                    let _ = writeln!(s, "  {:<3}  consistent", m.to_uppercase());
                    continue;
                }
                let _ = writeln!(
                    s,
                    "  {:<3}  violated by {} outcome(s):",
                    m.to_uppercase(),
                    viol.len()
                );
                for x in viol {
                    let _ = writeln!(
                        s,
                        "         {}: {} ({} of {} runs)",
                        x.test, x.outcome, x.count, x.runs
                    );
                }
            }
        }
        s
    }

    pub fn json(&self) -> String {
        let mut rows = Vec::new();
        for v in &self.devices {
            for (m, viol) in MODELS.iter().zip(&v.violations) {
                let list: Vec<Value> = viol
                    .iter()
                    .map(|x| json!({"test": x.test, "outcome": x.outcome, "count": x.count, "runs": x.runs}))
                    .collect();
                rows.push(json!({
                    "device": v.device,
                    "model": m.to_uppercase(),
                    "consistent": viol.is_empty(),
                    "runs": v.runs,
                    "violations": list,
                }));
            }
        }
        oracle::json::to_string_pretty(&Value::Array(rows)).expect("JSON") + "\n"
    }
}
