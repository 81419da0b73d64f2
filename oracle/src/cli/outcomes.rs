//! `oracle outcomes`: every reachable final state of a program under one
//! model, each with a shortest witness schedule, and the program's outcome
//! assertions answered (docs/KERNEL.md §5.4, issue 22).

use super::{emit, item_failed, one_item, scoped_model, Failure, Out, TextFormat};
use crate::kernel::outcomes::{answer_word, outcomes, Outcomes};
use clap::Args as ClapArgs;
use progress_litmus::kernel::load::Item;
use progress_litmus::kernel::program::Program;
use progress_litmus::kernel::ScopedModel;
use std::fmt::Write;
use std::path::PathBuf;

/// The command line of `oracle outcomes`.
#[derive(ClapArgs)]
pub struct Args {
    /// A test file, or a suite with --test.
    path: PathBuf,
    /// The model (as for explain); its fairness does not matter. A kernel
    /// program's own `model` line is the default.
    #[arg(long, value_parser = super::parse_model)]
    pub(super) model: Option<ScopedModel>,
    /// The test's name, when PATH is a suite.
    #[arg(long)]
    test: Option<String>,
    /// At most K workgroups resident at once (the occupancy-bound model).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u8).range(1..))]
    occupancy: Option<u8>,
    /// `text` for people; `json`: the outcomes, their schedules and the assertions' answers.
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    format: TextFormat,
    #[command(flatten)]
    out: Out,
}

/// Runs `oracle outcomes`.
pub fn run(a: Args, max_states: usize) -> Result<bool, Failure> {
    let item = one_item(&a.path, a.test.as_deref())?;
    let m = scoped_model(&item, a.model, a.occupancy)?;
    let program = item.program();
    let o =
        outcomes(&program, &m, max_states).map_err(|e| Failure::input(item_failed(&item, &e)))?;
    let bytes = match a.format {
        TextFormat::Text => text(&item, &program, &m, &o).into_bytes(),
        TextFormat::Json => super::json_bytes(&json(&item, &program, &m, &o)),
    };
    emit(&a.out, &bytes)?;
    Ok(true)
}

/// The answers of the program's assertions: the word and the number, from
/// one, of the witnessing outcome (`exists`: one satisfying it; `forall`:
/// one violating it).
fn answers(p: &Program, o: &Outcomes) -> Vec<(String, &'static str, Option<usize>)> {
    p.asserts
        .iter()
        .map(|a| {
            let holds = o.holds(a, p).expect("validated assertions resolve");
            let w = o
                .witness(a, p)
                .and_then(|f| o.finals.iter().position(|g| g == f));
            (a.to_string(), answer_word(a, holds), w.map(|k| k + 1))
        })
        .collect()
}

fn text(item: &Item, p: &Program, m: &ScopedModel, o: &Outcomes) -> String {
    let mut out = String::new();
    let n = o.finals.len();
    let _ = writeln!(
        out,
        "{} under {m}: {n} reachable final state{} ({} states; memory is sequentially consistent)",
        item.name(),
        if n == 1 { "" } else { "s" },
        o.states
    );
    // A shader's outcomes name the launch they are for, and how to read
    // their values (two's complement ones: docs/KERNEL.md §10.3).
    if let Some(l) = launch_of(item) {
        let _ = writeln!(out, "Launch: {l}");
    }
    for (k, f) in o.finals.iter().enumerate() {
        let vals: Vec<String> = o
            .observables
            .names
            .iter()
            .zip(&f.values)
            .map(|(name, v)| format!("{name}={v}"))
            .collect();
        let _ = writeln!(out, "\noutcome {}: {}", k + 1, vals.join(" "));
        for step in &f.schedule {
            let _ = writeln!(out, "  {step}");
        }
    }
    let answers = answers(p, o);
    if !answers.is_empty() {
        out.push('\n');
    }
    for (a, word, w) in answers {
        match w {
            Some(k) => {
                let _ = writeln!(out, "{a}: {word} (outcome {k})");
            }
            None => {
                let _ = writeln!(out, "{a}: {word}");
            }
        }
    }
    out
}

fn json(item: &Item, p: &Program, m: &ScopedModel, o: &Outcomes) -> serde_json::Value {
    let finals: Vec<serde_json::Value> = o
        .finals
        .iter()
        .map(|f| {
            let values: serde_json::Map<String, serde_json::Value> = o
                .observables
                .names
                .iter()
                .zip(&f.values)
                .map(|(name, v)| (name.clone(), serde_json::json!(v)))
                .collect();
            serde_json::json!({ "values": values, "schedule": f.schedule })
        })
        .collect();
    let asserts: Vec<serde_json::Value> = answers(p, o)
        .into_iter()
        .map(|(a, word, w)| serde_json::json!({ "assertion": a, "answer": word, "witness": w }))
        .collect();
    let mut v = serde_json::json!({
        "test": item.name(),
        "source": item.source().display().to_string(),
        "model": m.to_string(),
        "memory": "sequentially consistent",
        "states": o.states,
        "outcomes": finals,
        "assertions": asserts,
    });
    if let Some(l) = launch_of(item) {
        v["launch"] = l.into();
    }
    v
}

/// The launch line of a shader's translation; `None` for other inputs.
fn launch_of(item: &Item) -> Option<&str> {
    match item {
        Item::Kernel(p) => p.launch.as_deref(),
        Item::Axb(_) => None,
    }
}

/// A program's assertion answered under the eleven models of `classify`.
pub struct Answers {
    /// The assertion's text.
    pub text: String,
    /// The words for holding and not (`allowed`/`forbidden` for `exists`,
    /// `holds`/`fails` for `forall`).
    pub words: (&'static str, &'static str),
    /// Whether it holds under each model, in `Model::ALL` order (`None`:
    /// the outcomes could not be computed).
    pub per_model: Vec<Option<bool>>,
}

/// The assertions of a kernel program under the eleven flat models (one
/// computation per base: fairness does not change which final states are
/// reachable). Empty for AXB tests and programs without assertions, so
/// their output stays as it was; an undecided computation is reported
/// on standard error and answered `?`.
pub fn classify_answers(item: &Item, max_states: usize) -> Vec<Answers> {
    use progress_litmus::{Fairness, Model};
    let Item::Kernel(p) = item else {
        return Vec::new();
    };
    let asserts = &p.program.asserts;
    if asserts.is_empty() {
        return Vec::new();
    }
    let mut per_base = std::collections::HashMap::new();
    let mut out: Vec<Answers> = asserts
        .iter()
        .map(|a| Answers {
            text: a.to_string(),
            words: (answer_word(a, true), answer_word(a, false)),
            per_model: Vec::new(),
        })
        .collect();
    for m in Model::ALL {
        let base = m.base;
        let o = per_base.entry(base).or_insert_with(|| {
            let flat = ScopedModel::flat(Model::new(base, Fairness::Weak));
            outcomes(&p.program, &flat, max_states)
                .map_err(|e| eprintln!("error: {}", item_failed(item, &e)))
                .ok()
        });
        for (a, ans) in asserts.iter().zip(&mut out) {
            let h = o.as_ref().map(|o| o.holds(a, &p.program).unwrap_or(false));
            ans.per_model.push(h);
        }
    }
    out
}

/// One table line per assertion under its program's row: `y` where it
/// holds (an `exists` outcome is allowed, a `forall` holds), `n` where not,
/// in the verdict columns, then the assertion.
pub fn table_lines(out: &mut String, answers: &[Answers], width: usize) {
    use progress_litmus::{Base::*, Fairness::*, Model};
    let order = [Hsa, Obe, HsaObe, Lobe, Fair];
    for a in answers {
        let cell = |b, f| match a.per_model[Model::new(b, f).index()] {
            Some(true) => 'y',
            Some(false) => 'n',
            None => '?',
        };
        let w: Vec<char> = order.iter().map(|&b| cell(b, Weak)).collect();
        let s: Vec<char> = order.iter().map(|&b| cell(b, Strong)).collect();
        let _ = writeln!(
            out,
            "{:<width$}          {}    {}    {}        {}     {}             {}    {}    {}        {}     {}     {}  {}",
            "", w[0], w[1], w[2], w[3], w[4], s[0], s[1], s[2], s[3], s[4], cell(Unfair, Weak), a.text
        );
    }
}

/// The line a table with assertions ends with.
pub const TABLE_NOTE: &str = "(assertions: y = allowed (exists) or holds (forall) under the model's reachable final states, n = not)\n";

/// The `assertions` field of a kernel program's JSON row.
pub fn json_answers(answers: &[Answers]) -> serde_json::Value {
    use progress_litmus::Model;
    answers
        .iter()
        .map(|a| {
            let per: serde_json::Map<String, serde_json::Value> = Model::ALL
                .iter()
                .zip(&a.per_model)
                .map(|(m, h)| {
                    let word = h.map(|h| if h { a.words.0 } else { a.words.1 });
                    (m.name().to_string(), serde_json::json!(word))
                })
                .collect();
            serde_json::json!({ "assertion": a.text, "answers": per })
        })
        .collect()
}
