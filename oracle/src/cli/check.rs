//! `oracle check`: the one command a shader repository's CI runs (issue 42
//! item 4). Every input (shaders, `.litmus` programs, AXB tests, suites,
//! directories of them) is decided under every required model; each
//! program not guaranteed to terminate under one is a *finding*: the plain
//! sentence of its witness ([`crate::kernel::sentence`]) at the stuck
//! instruction's `FILE:LINE:COL`, and the witness schedule. Exit status 0
//! when there is none, 1 when there are findings, 2 when some input could
//! not be read or decided (the others are still checked). The output is
//! text for logs, JSON, or SARIF for code-review tools ([`super::sarif`]).
//!
//! Every program goes to the kernel checker (an AXB test as the kernel
//! program it embeds into, on which the two engines agree): the verdict on
//! the reduced product, then, for a failing one, the witness on the full
//! product, as `explain` finds it.

use super::sarif;
use super::{
    batch_options, emit, item_failed, json_bytes, parse_model, report, shown, Failure, Out,
};
use crate::kernel::explain::{explain_with, Show, Step};
use crate::kernel::sentence::{Place, Places, Summary};
use clap::ValueEnum;
use progress_litmus::error::printable;
use progress_litmus::kernel::load::{self, Item};
use progress_litmus::kernel::program::Program;
use progress_litmus::kernel::shader::launch;
use progress_litmus::kernel::{Sched, ScopedModel};
use std::path::PathBuf;

/// The exit statuses of `check`, in the form of every `--help`.
pub fn exit_status() -> String {
    progress_litmus::error::exit_status_help(
        "an input that cannot be read or parsed, or that the checker cannot decide within --max-states, reported as FILE:LINE:COL: message on standard error (and in SARIF as a tool execution notification); no program at all in the given paths; an unknown model; a bad flag; the other inputs are still checked and their findings reported, and the status is 2 even when there are findings",
        "some program is not guaranteed to terminate under a required model: a finding each in the output; or an output that cannot be written, an internal error",
    )
}

/// The end of `oracle check --help`.
pub fn after_help() -> String {
    format!(
        "{}\n\n{}",
        exit_status(),
        "Text output: one line per finding, FILE:LINE:COL: MODEL: the sentence (which
invocation waits where, for what, who could release it, and why the model lets
it wait forever), the witness schedule below it; a line per shader guaranteed
under every required model, with the launch and memory model that rests on;
then `checked N programs under M models: K not guaranteed` (K counts programs
and models). In CI:

  oracle check --require OBE shaders/
  oracle check --require OBE --format sarif -o oracle.sarif shaders/

SARIF file URIs are relative to the working directory (run it from the
repository's root), percent-encoded; the same inputs give the same bytes."
    )
}

/// The formats of `check`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CheckFormat {
    Text,
    Json,
    Sarif,
}

#[derive(clap::Args)]
pub struct Args {
    /// Shaders (`.wgsl`, `.comp`, `.spv`), `.litmus` programs, `.ron` and `.txt` tests and suites, or directories of them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// A model every program must be guaranteed to terminate under: HSA, OBE, LOBE, WEAK_FAIR, HSA_STRONG, ..., UNFAIR,
    /// or a scoped model such as "OBE, subgroup=lockstep" (docs/KERNEL.md §3.5). Give it again for more models.
    #[arg(long = "require", value_name = "MODEL", required = true, value_parser = parse_model)]
    pub(super) require: Vec<ScopedModel>,
    /// `text` for logs; `json`, every verdict with its sentence and witness; `sarif`, SARIF 2.1.0 for code scanning.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    format: CheckFormat,
    #[command(flatten)]
    out: Out,
}

/// A program not guaranteed to terminate under a model.
struct Finding {
    /// The sentence; none when the witness did not fit in the bound.
    summary: Option<Summary>,
    steps: Vec<Step>,
    deadlock: bool,
}

/// The verdict of one program under one model.
struct Verdict {
    item: usize,
    model: usize,
    /// None when guaranteed.
    finding: Option<Finding>,
}

/// Everything `check` decided and could not.
struct Checked {
    items: Vec<Item>,
    places: Vec<Places>,
    models: Vec<ScopedModel>,
    verdicts: Vec<Verdict>,
    errors: Vec<String>,
    max_states: usize,
}

/// `oracle check`: writes the output, then `Ok(false)` (exit 2) when some
/// input got no verdict, `Failure::quiet(1)` (exit 1) when some program is
/// not guaranteed, else `Ok(true)`.
pub(super) fn run(args: &Args, max_states: usize) -> Result<bool, Failure> {
    let mut models: Vec<ScopedModel> = Vec::new();
    for m in &args.require {
        if !models.contains(m) {
            models.push(*m);
        }
    }
    let c = check_all(&args.paths, models, max_states);
    let bytes = match args.format {
        CheckFormat::Text => text(&c).into_bytes(),
        CheckFormat::Json => json_bytes(&json(&c)),
        CheckFormat::Sarif => json_bytes(&sarif_log(&c)),
    };
    emit(&args.out, &bytes)?;
    if !c.errors.is_empty() {
        return Ok(false);
    }
    match c.verdicts.iter().any(|v| v.finding.is_some()) {
        true => Err(Failure::quiet(1)),
        false => Ok(true),
    }
}

/// Loads every input and decides each under each model, in input order.
fn check_all(paths: &[PathBuf], models: Vec<ScopedModel>, max_states: usize) -> Checked {
    let mut warnings = Vec::new();
    let (items, load_errors) = load::load_all_with(paths, super::shader::launch(), &mut warnings);
    super::shader::warn(&warnings);
    report(&load_errors);
    let mut errors: Vec<String> = load_errors
        .iter()
        .map(|e| printable(&e.to_string()))
        .collect();
    if items.is_empty() && errors.is_empty() {
        // A CI step that checks nothing (an empty folder, a wrong path)
        // must not pass.
        let line = "no programs to check: no .wgsl, .comp, .spv, .litmus, .ron or .txt file in the given paths".to_string();
        eprintln!("error: {line}");
        errors.push(line);
    }
    let places: Vec<Places> = items.iter().map(super::shader::places).collect();
    let mut verdicts = Vec::new();
    for (i, item) in items.iter().enumerate() {
        for (j, m) in models.iter().enumerate() {
            match check_one(item, &places[i], m, max_states) {
                Ok(finding) => verdicts.push(Verdict {
                    item: i,
                    model: j,
                    finding,
                }),
                Err(line) => {
                    eprintln!("error: {}", printable(&line));
                    errors.push(printable(&line));
                }
            }
        }
    }
    Checked {
        items,
        places,
        models,
        verdicts,
        errors,
        max_states,
    }
}

/// Why a shader is not decided under `m` in this run, if so: a SIMT-Step
/// model among the required ones has it translated with its structure
/// kept (docs/KERNEL.md §10.5), and where its verdict under `m` rests on
/// lockstep subgroups (`m`'s own, or a fair scope's lockstep twin), that
/// translation's reconvergence points may differ from the threaded one
/// another run decides, so the verdict could depend on the other models
/// asked for. Shaders whose subgroup operations are tangled are
/// translated with their structure in every run, and interleaved lanes
/// do not see threading (it removes local steps only).
fn mixed_translation(item: &Item, program: &Program, m: &ScopedModel) -> Option<String> {
    let shader = (item.source().extension().and_then(|e| e.to_str()))
        .is_some_and(progress_litmus::kernel::shader::is_shader_ext);
    let lockstep =
        m.subgroup == Sched::Lockstep || (m.subgroup == Sched::Fair && program.hardware_subgroups);
    let structured = super::shader::launch().structured;
    (shader && structured && lockstep && program.subgroup_size > 1 && !program.tangled_collectives)
        .then(|| "a SIMT-Step model required in the same run has the shader translated with its structure kept, and its lockstep verdict may differ from the threaded translation's (docs/KERNEL.md §10.6): check this model in a run without the SIMT-Step models".to_string())
}

/// One program under one model: `None` when guaranteed, the finding when
/// not, the error line when it got no verdict.
fn check_one(
    item: &Item,
    places: &Places,
    m: &ScopedModel,
    max_states: usize,
) -> Result<Option<Finding>, String> {
    let program = item.program();
    if let Some(why) = mixed_translation(item, &program, m) {
        return Err(format!(
            "{}: test `{}` under {m}: {why}",
            super::shown(item.source()),
            item.name()
        ));
    }
    // `FILE: test `NAME` under MODEL: message` (with LINE:COL where the
    // error has a place).
    let failed = |e: &crate::kernel::KernelError| {
        let name = format!("test `{}`", item.name());
        item_failed(item, e).replacen(&name, &format!("{name} under {m}"), 1)
    };
    let d =
        crate::kernel::decide(&program, m, batch_options(max_states)).map_err(|e| failed(&e))?;
    if d.verdict.passes() {
        return Ok(None);
    }
    let opts = batch_options(max_states);
    // A shader's lockstep subgroups, where only they fail (§10.6).
    let m = &crate::kernel::explained_model(&program, m, opts).map_err(|e| failed(&e))?;
    match explain_with(&program, item.name(), m, opts, Show::VerdictOnly, places) {
        // The two products disagree: a bug, reported as one.
        Ok(e) if e.summary.is_none() => Err(format!(
            "{}: test `{}` under {m}: internal error: the verdict is F but no witness was found",
            super::shown(item.source()),
            item.name()
        )),
        Ok(e) => Ok(Some(Finding {
            summary: e.summary,
            steps: e.steps,
            deadlock: e.deadlock,
        })),
        // The reduced product decided it; the full one a witness needs
        // may not fit: the finding stands, without its sentence.
        Err(e) if e.is_bound() => Ok(Some(Finding {
            summary: None,
            steps: Vec::new(),
            deadlock: d.deadlock,
        })),
        Err(e) => Err(failed(&e)),
    }
}

impl Checked {
    /// The finding's sentence, or why there is none.
    fn sentence(&self, v: &Verdict, f: &Finding) -> String {
        let mut text = self.witness_sentence(v, f);
        if let Some(ub) = self.undefined_barrier(v.item) {
            text.push_str(&format!(
                " The shader's behaviour is undefined there: {ub}."
            ));
        }
        text
    }

    /// The clause of item `item`'s launch line on a barrier in
    /// non-uniform control flow (`launch::UNDEFINED_BARRIER`), from
    /// "a workgroup barrier" on: why no model guarantees termination,
    /// whatever the witness shows.
    fn undefined_barrier(&self, item: usize) -> Option<String> {
        let Item::Kernel(p) = &self.items[item] else {
            return None;
        };
        let (_, rest) = p.launch.as_deref()?.split_once(launch::UNDEFINED_BARRIER)?;
        let clause = rest.split(launch::RACES).next()?;
        Some(format!(
            "a workgroup barrier in non-uniform control flow{clause}"
        ))
    }

    fn witness_sentence(&self, v: &Verdict, f: &Finding) -> String {
        match &f.summary {
            Some(s) => s.text.clone(),
            None => format!(
                "{} is not guaranteed to terminate under {}; its witness does not fit in --max-states {} (raise it to see one).",
                printable(self.items[v.item].name()),
                self.models[v.model],
                self.max_states
            ),
        }
    }

    /// The finding's sentence, after the program's name when its file
    /// holds several programs (a suite): the text line's and the SARIF
    /// result's message.
    fn headline(&self, v: &Verdict, f: &Finding) -> String {
        match self.in_suite(v.item) {
            true => format!(
                "test `{}`: {}",
                printable(self.items[v.item].name()),
                self.sentence(v, f)
            ),
            false => self.sentence(v, f),
        }
    }

    /// Where the finding points: the stuck instruction's place, if known.
    fn place(&self, v: &Verdict, f: &Finding) -> Option<&Place> {
        let (code, pc) = f.summary.as_ref()?.at?;
        self.places[v.item].get(code, pc)
    }

    /// Whether the finding's file holds several programs (a suite): its
    /// lines then name the program.
    fn in_suite(&self, item: usize) -> bool {
        let src = self.items[item].source();
        self.items.iter().filter(|i| i.source() == src).count() > 1
    }

    fn findings(&self) -> impl Iterator<Item = (&Verdict, &Finding)> {
        self.verdicts
            .iter()
            .filter_map(|v| v.finding.as_ref().map(|f| (v, f)))
    }

    /// The launch line of the program of verdict `v`, as it holds under
    /// that verdict's model ([`launch::under`]).
    fn launch(&self, v: &Verdict) -> Option<String> {
        self.launch_under(v.item, &[self.models[v.model].subgroup])
    }

    /// Item `item`'s launch line under models whose subgroup scopes are
    /// `subs`: as each names it, where they differ.
    fn launch_under(&self, item: usize, subs: &[Sched]) -> Option<String> {
        let Item::Kernel(p) = &self.items[item] else {
            return None;
        };
        let l = p.launch.as_deref()?;
        Some(match subs {
            [s, rest @ ..] if rest.iter().all(|r| r == s) => launch::under(l, *s),
            _ => l.replace(launch::BOTH_WAYS, "; inside a subgroup, as each model names (one fair inside subgroups: P only if it holds both in lockstep and under fair independent scheduling)"),
        })
    }

    /// A line per shader guaranteed under every required model, with what
    /// that rests on (no verdict is silent about its assumptions): `FILE:
    /// guaranteed under MODELS on this launch: LAUNCH; memory sequentially
    /// consistent`. Programs with a finding have the launch beside it.
    fn guaranteed(&self) -> Vec<String> {
        // The models it has a verdict under (not those it got an error
        // line under).
        let models = |i: usize| {
            (self.verdicts.iter().filter(|v| v.item == i))
                .map(|v| self.models[v.model].to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        (0..self.items.len())
            .filter(|&i| !self.verdicts.iter().any(|v| v.item == i && v.finding.is_some()))
            .filter(|&i| self.verdicts.iter().any(|v| v.item == i))
            .filter_map(|i| {
                let subs: Vec<Sched> = (self.verdicts.iter().filter(|v| v.item == i))
                    .map(|v| self.models[v.model].subgroup)
                    .collect();
                let launch = self.launch_under(i, &subs)?;
                let file = shown(self.items[i].source());
                let name = match self.in_suite(i) {
                    true => format!(" test `{}`", printable(self.items[i].name())),
                    false => String::new(),
                };
                Some(format!(
                    "{file}:{name} guaranteed under {} on this launch: {launch}; memory sequentially consistent",
                    models(i)
                ))
            })
            .collect()
    }

    /// `checked N programs under M models: K not guaranteed`.
    fn tally(&self) -> String {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut s = format!(
            "checked {} under {}: {} not guaranteed",
            plural(self.items.len(), "program", "programs"),
            plural(self.models.len(), "model", "models"),
            self.findings().count()
        );
        if !self.errors.is_empty() {
            s.push_str(&format!(
                "; {} (on standard error)",
                plural(self.errors.len(), "error", "errors")
            ));
        }
        s
    }
}

/// The text output: a `FILE:LINE:COL: MODEL: sentence` line per finding,
/// its launch and witness indented, then the tally.
fn text(c: &Checked) -> String {
    let mut out = String::new();
    for (v, f) in c.findings() {
        let item = &c.items[v.item];
        let file = shown(item.source());
        let at = match c.place(v, f) {
            Some(p) => format!("{file}:{}:{}", p.line, p.col),
            None => file.clone(),
        };
        out.push_str(&format!(
            "{at}: {}: {}\n",
            c.models[v.model],
            c.headline(v, f)
        ));
        if let Some(l) = c.launch(v) {
            out.push_str(&format!("    launch: {l}\n"));
        }
        for s in &f.steps {
            if s.repeats {
                out.push_str("    --- repeats forever from here ---\n");
            }
            out.push_str(&format!(
                "  {}{}\n",
                s.line(),
                step_note(c, v.item, s, &file)
            ));
        }
    }
    for line in c.guaranteed() {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&c.tally());
    out.push('\n');
    out
}

/// `  [FILE:LINE: source]` after a step whose instruction's place is
/// known (as `explain` shows a shader's), `  [FILE:LINE:COL]` without
/// source text.
fn step_note(c: &Checked, item: usize, s: &Step, file: &str) -> String {
    let Some(p) = s.at.and_then(|(code, pc)| c.places[item].get(code, pc)) else {
        return String::new();
    };
    match &p.text {
        Some(t) => format!("  [{file}:{}: {}]", p.line, printable(t.trim())),
        None => format!("  [{file}:{}:{}]", p.line, p.col),
    }
}

/// A witness step as JSON, with its source place when known.
fn step_json(c: &Checked, item: usize, s: &Step) -> serde_json::Value {
    let mut v = serde_json::json!({
        "step": s.number,
        "actor": s.actor,
        "action": s.action,
        "fair": s.fair,
        "state": s.state,
        "repeats_from_here": s.repeats,
    });
    if let Some(p) = s.at.and_then(|(code, pc)| c.places[item].get(code, pc)) {
        v["line"] = p.line.into();
        v["column"] = p.col.into();
        if let Some(t) = &p.text {
            v["text"] = printable(t.trim()).into();
        }
    }
    v
}

/// The JSON output: every verdict (program, model) in input order, a
/// failing one with its sentence, place and witness; the errors; the
/// tally.
fn json(c: &Checked) -> serde_json::Value {
    let results: Vec<serde_json::Value> = c
        .verdicts
        .iter()
        .map(|v| {
            let item = &c.items[v.item];
            let mut r = serde_json::json!({
                "source": item.source().display().to_string(),
                "test": item.name(),
                "model": c.models[v.model].to_string(),
                "verdict": if v.finding.is_some() { "F" } else { "P" },
            });
            if let Some(l) = c.launch(v) {
                r["launch"] = l.into();
            }
            if let Some(f) = &v.finding {
                r["summary"] = c.sentence(v, f).into();
                r["deadlock"] = f.deadlock.into();
                if let Some(p) = c.place(v, f) {
                    r["line"] = p.line.into();
                    r["column"] = p.col.into();
                }
                let steps: Vec<_> = f.steps.iter().map(|s| step_json(c, v.item, s)).collect();
                r["witness"] = steps.into();
            }
            r
        })
        .collect();
    serde_json::json!({
        "models": c.models.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
        "programs": c.items.len(),
        "not_guaranteed": c.findings().count(),
        "memory": "sequentially consistent",
        "results": results,
        "errors": c.errors,
        "summary": c.tally(),
    })
}

/// The SARIF log: a rule per model, a result per finding.
fn sarif_log(c: &Checked) -> serde_json::Value {
    let rules: Vec<sarif::Rule> = c
        .models
        .iter()
        .map(|m| sarif::Rule {
            model: m.to_string(),
        })
        .collect();
    let findings: Vec<sarif::Finding> = c.findings().map(|(v, f)| sarif_finding(c, v, f)).collect();
    sarif::log(&rules, &findings, &sarif_races(c), &c.errors)
}

/// A warning per decided program whose launch line names data races
/// (the verdicts rest on sequentially consistent memory there), at its
/// file's first line.
fn sarif_races(c: &Checked) -> Vec<sarif::Race> {
    (0..c.items.len())
        .filter(|&i| c.verdicts.iter().any(|v| v.item == i))
        .filter_map(|i| {
            let Item::Kernel(p) = &c.items[i] else {
                return None;
            };
            let (_, races) = p.launch.as_deref()?.split_once(launch::RACES)?;
            Some(sarif::Race {
                loc: sarif::Loc {
                    uri: sarif::uri(c.items[i].source()),
                    line: 1,
                    col: None,
                },
                message: format!(
                    "`{}`: decided on sequentially consistent memory, but in the Vulkan memory model these accesses race: {races}",
                    printable(c.items[i].name())
                ),
            })
        })
        .collect()
}

fn sarif_finding(c: &Checked, v: &Verdict, f: &Finding) -> sarif::Finding {
    let item = &c.items[v.item];
    let uri = sarif::uri(item.source());
    let loc = match c.place(v, f) {
        Some(p) => sarif::Loc {
            uri: uri.clone(),
            line: p.line,
            col: Some(p.col),
        },
        // No place known (a RON program, an AXB test): the file's start.
        None => sarif::Loc {
            uri: uri.clone(),
            line: 1,
            col: None,
        },
    };
    let steps = f
        .steps
        .iter()
        .map(|s| {
            let at = s.at.and_then(|(code, pc)| c.places[v.item].get(code, pc));
            sarif::FlowStep {
                message: format!("{} {}: {}", s.number, s.actor, s.action.trim()),
                loc: match at {
                    Some(p) => sarif::Loc {
                        uri: uri.clone(),
                        line: p.line,
                        col: Some(p.col),
                    },
                    None => loc.clone(),
                },
                properties: serde_json::json!({
                    "step": s.number,
                    "fair": s.fair,
                    "state": s.state,
                    "repeatsFromHere": s.repeats,
                }),
            }
        })
        .collect();
    let mut properties = serde_json::json!({
        "test": item.name(),
        "model": c.models[v.model].to_string(),
        "deadlock": f.deadlock,
        "memory": "sequentially consistent",
    });
    if let Some(l) = c.launch(v) {
        properties["launch"] = l.into();
    }
    sarif::Finding {
        rule: v.model,
        message: c.headline(v, f),
        loc,
        steps,
        properties,
    }
}
