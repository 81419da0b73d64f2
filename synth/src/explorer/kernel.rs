//! Kernel programs (docs/KERNEL.md) on the explorer page: the idiom library
//! of `suites/idioms` and any other `.litmus` or `Kernel` RON input.
//!
//! A kernel program is shown differently from an AXB test: its state space
//! has registers, waits and scoped fair sets, far too many states to draw,
//! so the page shows the text instead of the picture. Per program it embeds
//!
//! - the program as the kernel printer writes it (`litmus::print`), and the
//!   leading comment of its file, where the idioms name their sources,
//!   reflowed into paragraphs ([`reflow`]);
//! - one verdict row per model: the eleven device-scope models, then the
//!   program's own `model` line and every model its `expect` lines name
//!   (scoped and occupancy-bound ones included), each with the oracle's
//!   verdict ([`oracle::kernel::decide`], reduced), the verdict the
//!   literature states for it (its `expect` line) and whether the two
//!   agree (the rule of [`oracle::kernel::check_expectations`]);
//! - per row the oracle's explanation ([`oracle::kernel::explain::explain`],
//!   on the unreduced product, so its schedule is one of the program): the
//!   witness schedule of a failing verdict, the reason of a passing one;
//! - the file `backends emit` writes for CUDA, GLSL and WGSL, or the
//!   target's refusal.
//!
//! Memory is sequentially consistent; the page says so.

use backends::target::kernel::{emit, Lang};
use oracle::kernel::{
    decide,
    explain::{explain, Show},
    outcome, Options,
};
use progress_litmus::kernel::litmus;
use progress_litmus::kernel::load::NamedProgram;
use progress_litmus::kernel::program::Outcome;
use progress_litmus::kernel::ScopedModel;
use progress_litmus::model::Model;
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;

/// The eleven device-scope models in the page's display order: unfair,
/// then the weak chain, then the strong one (the order of the AXB table).
const ORDER: [&str; 11] = [
    "UNFAIR",
    "HSA",
    "OBE",
    "HSA_OBE",
    "LOBE",
    "WEAK_FAIR",
    "HSA_STRONG",
    "OBE_STRONG",
    "HSA_OBE_STRONG",
    "LOBE_STRONG",
    "STRONG_FAIR",
];

/// The targets kernel programs are emitted for, as the page names them.
const TARGETS: [(Lang, &str); 3] = [
    (Lang::Cuda, "cuda"),
    (Lang::Glsl, "glsl"),
    (Lang::Wgsl, "wgsl"),
];

/// One model's row of a program's verdict table.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The model's canonical text (`OBE`, `WEAK_FAIR, occupancy=2`).
    pub m: String,
    /// The model for people.
    pub p: String,
    /// The oracle's outcome: `P`, `F`, `deadlock`, or `?` (no verdict).
    pub v: String,
    /// The outcome the literature states (the program's `expect` line for
    /// this model), or "".
    pub x: String,
    /// `yes` or `no` when the literature states an outcome, else "".
    pub a: &'static str,
    /// Whether this is the program's own `model` line.
    pub own: bool,
    /// The product states that decided it (reduced), 0 without a verdict.
    pub s: usize,
    /// The oracle's explanation: witness schedule or reason (or why there
    /// is no verdict).
    pub w: String,
}

/// Everything the page knows about one kernel program.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct KernelData {
    /// Name.
    pub n: String,
    /// Always `kernel`: the configuration filter's value for every kernel
    /// program.
    pub c: &'static str,
    /// The launch, for people.
    pub shape: String,
    /// The launch without the values (`2 workgroups of 2 invocations,
    /// subgroups of 2`): the page's launch filter.
    pub launch: String,
    /// The file it came from, as given.
    pub file: String,
    /// Verdicts under the eleven device-scope models, one letter each in
    /// [`Model::ALL`] order (`F` for a deadlock, `?` for no verdict), for
    /// the list and its verdict filter.
    pub v: String,
    /// The program as the kernel printer writes it.
    pub src: String,
    /// The leading comment of its `.litmus` file (where the idioms cite
    /// their sources), without the `//`, reflowed ([`reflow`]).
    pub lit: String,
    /// The verdict rows: the eleven models in display order, then the
    /// scoped ones.
    pub r: Vec<Row>,
    /// Per target (`cuda`, `glsl`, `wgsl`): `[text, ""]` or `["", refusal]`.
    /// Empty when the page is made without code.
    pub code: Vec<(String, [String; 2])>,
}

/// The leading `//` comment of a `.litmus` file, without the markers.
fn leading_comment(path: &Path) -> String {
    if path.extension().and_then(|e| e.to_str()) != Some("litmus") {
        return String::new();
    }
    let Ok(src) = progress_litmus::io::read_input(path) else {
        return String::new();
    };
    let mut out = String::new();
    for line in src.lines() {
        let Some(rest) = line.trim_start().strip_prefix("//") else {
            break;
        };
        out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        out.push('\n');
    }
    out
}

/// The comment reflowed for a page that wraps text to its width: the lines
/// of a paragraph (up to a blank line) joined by spaces, so that the
/// file's hard breaks at 80 columns do not break lines in mid-sentence in
/// a narrower or wider box. A line starting a list item (`- `, `* `, `1. `)
/// or indented (code, a quoted listing) keeps its own line; blank lines
/// stay as paragraph breaks.
pub fn reflow(comment: &str) -> String {
    let mut out = String::new();
    let mut joinable = false;
    for line in comment.lines() {
        let t = line.trim_end();
        let starts_item = t.starts_with("- ")
            || t.starts_with("* ")
            || t.split_once(". ").is_some_and(|(n, _)| {
                !n.is_empty() && n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit())
            });
        let indented = t.starts_with(' ') || t.starts_with('\t');
        if t.is_empty() {
            out.push_str("\n\n");
            joinable = false;
        } else if joinable && !starts_item && !indented {
            out.push(' ');
            out.push_str(t);
        } else {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(t);
            joinable = !indented;
        }
    }
    // At most one blank line between paragraphs, none at the ends.
    while out.contains("\n\n\n") {
        out = out.replace("\n\n\n", "\n\n");
    }
    out.trim_matches('\n').to_string()
}

/// Whether `got` meets the stated `want` (as `check_expectations` rules:
/// F is met by a deadlock too).
fn agrees(want: Outcome, got: Outcome) -> bool {
    match want {
        Outcome::P => got == Outcome::P,
        Outcome::F => got != Outcome::P,
        Outcome::Deadlock => got == Outcome::Deadlock,
    }
}

/// The models of a program's table: the eleven, then its `model` line and
/// its `expect` lines' models not already there, in file order.
pub fn models_of(p: &NamedProgram) -> Vec<ScopedModel> {
    let mut models: Vec<ScopedModel> = ORDER
        .iter()
        .map(|n| ScopedModel::flat(Model::parse(n).expect("a model name")))
        .collect();
    let extra = p
        .program
        .model
        .iter()
        .chain(p.program.expect.iter().map(|e| &e.model));
    for m in extra {
        // A flat model written with a redundant scope (`OBE, workgroup=fair`)
        // is the same model: compare as flat where it is.
        let same =
            |x: &ScopedModel| x == m || (x.as_flat().is_some() && x.as_flat() == m.as_flat());
        if !models.iter().any(same) {
            models.push(*m);
        }
    }
    models
}

fn row(p: &NamedProgram, m: &ScopedModel, opts: Options) -> Row {
    let same = |x: &ScopedModel| x == m || (m.as_flat().is_some() && x.as_flat() == m.as_flat());
    let stated: Vec<Outcome> = p
        .program
        .expect
        .iter()
        .filter(|e| same(&e.model))
        .map(|e| e.outcome)
        .collect();
    let (v, s, got) = match decide(&p.program, m, opts) {
        Ok(d) => {
            let o = outcome(&d);
            (o.word().to_string(), d.states, Some(o))
        }
        Err(_) => ("?".to_string(), 0, None),
    };
    let w = match explain(&p.program, &p.name, m, opts, Show::VerdictOnly) {
        Ok(text) => text,
        Err(e) => format!("{} under {}: no verdict: {e}", p.name, m.pretty()),
    };
    Row {
        m: m.to_string(),
        p: m.pretty(),
        v,
        x: stated
            .iter()
            .map(|o| o.word())
            .collect::<Vec<_>>()
            .join(", "),
        a: match (stated.is_empty(), got) {
            (true, _) => "",
            (false, Some(got)) if stated.iter().all(|&o| agrees(o, got)) => "yes",
            (false, Some(_)) => "no",
            // No verdict: neither agreement nor disagreement (issue 20
            // item 11, as in the oracle's output).
            (false, None) => "undecided",
        },
        own: p.program.model.as_ref().is_some_and(same),
        s,
        w,
    }
}

/// The page's data for one kernel program.
pub fn data(p: &NamedProgram, code: bool) -> KernelData {
    let opts = Options::default();
    let prog = &p.program;
    let rows: Vec<Row> = models_of(p).par_iter().map(|m| row(p, m, opts)).collect();
    let v = Model::ALL
        .iter()
        .map(|m| {
            let r = &rows[ORDER.iter().position(|n| *n == m.name()).expect("in ORDER")];
            match r.v.as_str() {
                "P" => 'P',
                "?" => '?',
                _ => 'F',
            }
        })
        .collect();
    let mut shape = format!(
        "{} workgroup{} of {} invocation{}",
        prog.workgroups,
        if prog.workgroups == 1 { "" } else { "s" },
        prog.workgroup_size,
        if prog.workgroup_size == 1 { "" } else { "s" }
    );
    if prog.subgroup_size > 1 {
        shape.push_str(&format!(", subgroups of {}", prog.subgroup_size));
    }
    let launch = shape.clone();
    shape.push_str(&format!(", values mod {}", prog.values));
    KernelData {
        n: p.name.clone(),
        c: "kernel",
        shape,
        launch,
        file: p.source.display().to_string(),
        v,
        src: litmus::print(prog),
        lit: reflow(&leading_comment(&p.source)),
        r: rows,
        code: if code {
            TARGETS
                .iter()
                .map(|&(lang, name)| {
                    let cell = match emit(p, lang) {
                        Ok(text) => [text, String::new()],
                        Err(why) => [String::new(), why],
                    };
                    (name.to_string(), cell)
                })
                .collect()
        } else {
            Vec::new()
        },
    }
}

/// The data of every program, in input order.
pub fn all(programs: &[NamedProgram], code: bool) -> Vec<KernelData> {
    programs.par_iter().map(|p| data(p, code)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 23 item 6: the file's 80-column breaks are not the page's; a
    /// paragraph is one line, list items and indented lines keep theirs.
    #[test]
    fn the_literature_comment_is_reflowed_into_paragraphs() {
        let c = "Message passing between\nworkgroups.\n\nSource: Dat3M,\nbenchmarks/x.slang:\n- PASS under fair,\n  and more\n- FAIL with HSA\n    indented code\n1. first\n\n\n";
        assert_eq!(
            reflow(c),
            "Message passing between workgroups.\n\nSource: Dat3M, benchmarks/x.slang:\n- PASS under fair,\n  and more\n- FAIL with HSA\n    indented code\n1. first"
        );
        assert_eq!(reflow(""), "");
        // Every idiom's comment: no line break inside a sentence of a
        // paragraph, nothing lost but line ends.
        for e in
            std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../suites/idioms")).unwrap()
        {
            let path = e.unwrap().path();
            let raw = leading_comment(&path);
            let r = reflow(&raw);
            let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(words(&r), words(&raw), "{}", path.display());
            for para in r.split("\n\n") {
                for line in para.lines().skip(1) {
                    assert!(
                        line.starts_with("- ")
                            || line.starts_with("* ")
                            || line.starts_with(' ')
                            || line.chars().next().is_some_and(|c| c.is_ascii_digit()),
                        "{}: a hard break inside a paragraph before {line:?}",
                        path.display()
                    );
                }
            }
        }
    }

    /// Issue 20 item 11: a stated verdict the oracle cannot decide is
    /// "undecided" on the page, not "no".
    #[test]
    fn an_undecided_stated_verdict_is_neither_yes_nor_no() {
        let src = "values 2;\nworkgroups 1;\nworkgroup_size 8;\nsubgroup_size 8;\nexpect OBE, subgroup=lockstep: P;\nexpect OBE: F;\nkernel {\n  0: barrier();\n}\n";
        let p = NamedProgram {
            name: "und".into(),
            program: progress_litmus::kernel::litmus::parse(src).unwrap(),
            verdicts: None,
            source: "und.litmus".into(),
            launch: None,
        };
        let [undecided, wrong] = [&p.program.expect[0], &p.program.expect[1]];
        let r = row(&p, &undecided.model, Options::default());
        assert_eq!((r.v.as_str(), r.a), ("?", "undecided"));
        let r = row(&p, &wrong.model, Options::default());
        assert_eq!((r.v.as_str(), r.a), ("P", "no"));
    }
}
