//! `synth explorer`: a suite as one self-contained, offline HTML page.
//!
//! In the spirit of the artifact's test explorer: a list of tests filterable
//! by configuration, verdict under any model, Table 4 bucket and idiom (a
//! page of kernel programs has the filters that fit them instead: launch,
//! verdict, and how the oracle meets the literature's verdicts; a link to a
//! name the page does not hold says so); for
//! the chosen test its pseudo-code, its program state space drawn as SVG
//! (with the states and transitions of a failing model's witness
//! highlighted), its verdict under each of the eleven models, and the
//! witness schedule.
//!
//! The page must stay small for the biggest suite (about 7,000 tests), so
//! nothing is rendered ahead of time: per test the page embeds only compact
//! data (pseudo-code lines, the program space as a successor table, and
//! each distinct witness as a list of small integer tuples) and the page's
//! script (`explorer/explorer.js`) lays the graph out and draws it when the
//! test is chosen. The layout is a deterministic function of the data
//! (layers by breadth-first depth, ordered by the barycentre of their
//! predecessors), so the same test always gives the same picture.
//!
//! The code `backends emit` writes for the test (GLSL, Amber, Metal, WGSL
//! per mapping; the C++ and CUDA function) is embedded too, exactly as
//! [`backends::target::test_sources`] gives it. Raw, it would be about 33 KB
//! per test (230 MB for the 6,946 tests of 2t4i), but it is very
//! repetitive, so it is gzip-compressed in chunks of [`CODE_CHUNK`] tests,
//! the texts of one target and mapping side by side (3.9 MB for 2t4i, 5.2
//! MB as base64, of a 9.9 MB page), that the page decompresses with the
//! browser's own `DecompressionStream` when a test of the chunk is first
//! shown.
//!
//! "Run this test on my GPU" runs the test's WGSL shaders with WebGPU in
//! the visitor's browser, per mapping, showing the runs that terminated and
//! those whose iteration budget was exhausted. It uses the runner of the
//! page of `backends emit --target webgpu`, embedded from
//! [`backends::target::runner_script`] (one source for both pages).
//!
//! The program space drawn is [`progress_litmus::axb::space::program_space`]: node `i` of
//! the embedded table is node `i` of that space and edges come in its order
//! (per state, by thread). Witnesses come from [`oracle::analyse`], which
//! works on the product of the program with a model; each product event is
//! projected onto the program space (a Step of thread t from a state is the
//! t-transition of its program state; a Terminate does not move), which is
//! what gets highlighted.
//!
//! Kernel programs (docs/KERNEL.md, e.g. the idiom library `suites/idioms`)
//! can be shown on the same page, alone or beside AXB tests: see
//! [`kernel`] for what the page shows of them.

pub mod kernel;

use backends::target::{runner_script, test_sources, Shape};
use oracle::axb::check::{Lasso, Witness};
use oracle::axb::product::{Event, Product};
use petgraph::graph::EdgeIndex;
use progress_litmus::axb::machine::Machine;
use progress_litmus::axb::space::program_space;
use progress_litmus::axb::suite::Entry;
use progress_litmus::axb::test::Test;
use progress_litmus::buckets::{distinguishing_for, in_bucket_c};
use progress_litmus::kernel::load::{Item, NamedProgram};
use progress_litmus::model::{Model, Verdicts};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;

use crate::idioms::Recogniser;
use crate::suites::table4_models;

const CSS: &str = include_str!("explorer.css");
const JS: &str = include_str!("explorer.js");

/// One event of a witness, projected for drawing: `[thread, pc (-1 for a
/// Terminate), taken (0/1), F before, program node after, terminated
/// threads after, F after]`.
type EventRow = [i32; 7];

/// A witness as the page draws it; embedded flat (see [`WitnessData::flat`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct WitnessData {
    /// `"lasso"` (weak fairness, unfair) or `"trap"` (strong fairness).
    k: &'static str,
    /// The events from the start state, then the repeated part.
    e: Vec<EventRow>,
    /// Index in `e` where the repeated part starts.
    c: usize,
    /// For a trap: events before the trap state is reached.
    r: Option<usize>,
    /// For a trap: how many states the fair threads can reach from it.
    x: Option<usize>,
}

impl WitnessData {
    /// `[kind (0 lasso, 1 trap), c, r (-1), x (-1), events...]` with the
    /// events' seven numbers each, one after the other: field names would
    /// double the size of the biggest suites' pages.
    fn flat(&self) -> Vec<i32> {
        let mut v = vec![
            (self.k == "trap") as i32,
            self.c as i32,
            self.r.map_or(-1, |r| r as i32),
            self.x.map_or(-1, |x| x as i32),
        ];
        v.extend(self.e.iter().flatten());
        v
    }
}

/// Everything the page knows about one test.
#[derive(Serialize)]
struct TestData {
    /// Name.
    n: String,
    /// Configuration, `<N>t<M>i`.
    c: String,
    /// Verdicts, one letter per model in [`Model::ALL`] order.
    v: String,
    /// The Table 4 model the test is distinguishing for (CSV name), or "".
    d: &'static str,
    /// The Table 4 rows whose bucket C holds it (not the models it is a
    /// conformance test of: those are the P of `v`).
    cf: Vec<&'static str>,
    /// Idiom tags.
    i: Vec<String>,
    /// `duplicate_of`, or "".
    u: String,
    /// Pseudo-code, per thread, per pc, as indices into the page's `lines`.
    p: Vec<Vec<u32>>,
    /// Locations shown in states.
    l: usize,
    /// Program states in node order: memory digits (hex), `.`, pcs (hex,
    /// `x` for END).
    s: Vec<String>,
    /// Successor table: `g[node * threads + t]`, -1 if t has finished.
    g: Vec<i32>,
    /// Per model ([`Model::ALL`] order): index into `w`, or -1 (passes).
    m: Vec<i32>,
    /// The distinct witnesses, flat.
    w: Vec<Vec<i32>>,
}

/// The whole page's data.
#[derive(Serialize)]
struct PageData {
    suite: String,
    note: String,
    /// CSV names and readable names of the models, [`Model::ALL`] order.
    models: Vec<&'static str>,
    pretty: Vec<String>,
    /// The Table 4 models, weak row order then strong.
    table4: Vec<&'static str>,
    /// Idiom tags and their titles, catalogue order.
    idioms: Vec<(String, String)>,
    /// Every distinct line of pseudo-code (tests refer to them by index).
    lines: Vec<String>,
    tests: Vec<TestData>,
    /// Tests per code chunk.
    chunk: usize,
    /// Per chunk of [`CODE_CHUNK`] tests, in test order: base64 of the gzip
    /// of a JSON object with one column per `"target/mapping"` (mapping
    /// empty for C++ and CUDA; `"error/"` for a test that cannot be
    /// emitted), each a list with the text of every test of the chunk (null
    /// where a test has none). A column's texts are alike, so side by side
    /// they compress far better than test by test (gzip looks back 32 KB,
    /// less than one test's sources). Empty when the page is made without
    /// code.
    code: Vec<String>,
    /// The kernel programs, after the tests in the list.
    kernels: Vec<kernel::KernelData>,
}

/// Tests per compressed code chunk: big enough for gzip to share the
/// repeated text of neighbouring tests, small enough that showing a test
/// decompresses little (about 1.2 MB of text).
pub const CODE_CHUNK: usize = 64;

/// How to make the page.
#[derive(Clone, Copy, Debug)]
pub struct PageOptions {
    /// Embed the emitted code of every test.
    pub code: bool,
    /// The code shape of the embedded code.
    pub shape: Shape,
}

impl Default for PageOptions {
    fn default() -> PageOptions {
        PageOptions {
            code: true,
            shape: Shape::Switch,
        }
    }
}

/// The compressed code chunks of `entries` (see [`PageData::code`]).
fn code_chunks(entries: &[Entry], shape: Shape) -> Vec<String> {
    use base64::Engine;
    use std::io::Write;
    entries
        .par_chunks(CODE_CHUNK)
        .map(|chunk| {
            let mut columns: std::collections::BTreeMap<String, Vec<Option<String>>> =
                std::collections::BTreeMap::new();
            for (k, e) in chunk.iter().enumerate() {
                let sources: Vec<[String; 3]> = {
                    let named = progress_litmus::axb::load::NamedTest {
                        name: e.name.clone(),
                        entry: e.clone(),
                        source: PathBuf::new(),
                    };
                    match test_sources(&named, shape) {
                        Ok(sources) => sources
                            .into_iter()
                            .map(|s| {
                                [
                                    s.target.name().to_string(),
                                    s.mapping.map_or(String::new(), |m| m.name().to_string()),
                                    s.text,
                                ]
                            })
                            .collect(),
                        Err(err) => vec![["error".to_string(), String::new(), err.to_string()]],
                    }
                };
                for [target, mapping, text] in sources {
                    let column = columns
                        .entry(format!("{target}/{mapping}"))
                        .or_insert_with(|| vec![None; chunk.len()]);
                    column[k] = Some(text);
                }
            }
            let json = oracle::json::to_string(&columns)
                .expect("code serializes")
                .into_bytes();
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&json).expect("in-memory gzip");
            let bytes = gz.finish().expect("in-memory gzip");
            base64::engine::general_purpose::STANDARD.encode(bytes)
        })
        .collect()
}

fn hex(v: usize) -> char {
    char::from_digit(v as u32, 16).expect("below 16")
}

/// The program-space node of each product state, and the data of a witness.
fn witness_data(product: &Product, w: &Witness, node_of: &impl Fn(u64) -> i32) -> WitnessData {
    let g = &product.lts.graph;
    let rows = |edges: &[EdgeIndex]| -> Vec<EventRow> {
        edges
            .iter()
            .map(|&e| {
                let after = g[g.edge_endpoints(e).expect("an edge").1];
                let (pc, taken) = match g[e] {
                    Event::Step { pc, taken, .. } => (pc as i32, taken as i32),
                    Event::Terminate { .. } => (-1, 0),
                };
                [
                    g[e].thread() as i32,
                    pc,
                    taken,
                    g[e].fair() as i32,
                    node_of(after.prog),
                    after.terminated as i32,
                    after.f as i32,
                ]
            })
            .collect()
    };
    let lasso = |l: &Lasso| -> (Vec<EventRow>, usize) {
        let mut e = rows(&l.prefix);
        let c = e.len();
        e.extend(rows(&l.cycle));
        (e, c)
    };
    match w {
        Witness::Lasso(l) => {
            let (e, c) = lasso(l);
            WitnessData {
                k: "lasso",
                e,
                c,
                r: None,
                x: None,
            }
        }
        Witness::Trap {
            reach,
            closure,
            stay,
            ..
        } => {
            let mut e = rows(reach);
            let r = e.len();
            let (rest, c) = lasso(stay);
            e.extend(rest);
            WitnessData {
                k: "trap",
                e,
                c: r + c,
                r: Some(r),
                x: Some(closure.len()),
            }
        }
    }
}

/// The data of one test, and its pseudo-code lines (per thread, per pc) for
/// the caller to intern into the page's `lines`.
fn test_data(e: &Entry, verdicts: Verdicts, idioms: Vec<String>) -> (TestData, Vec<Vec<String>>) {
    let test = &e.test;
    let n = test.num_threads();
    let lts = program_space(test);
    let machine = Machine::new(test);
    let locs = test.num_locs().max(1);
    let states: Vec<String> = lts
        .graph
        .node_weights()
        .map(|&s| {
            let mut out: String = (0..locs).map(|l| hex(machine.mem(s, l) as usize)).collect();
            out.push('.');
            out.extend((0..n).map(|t| {
                if machine.finished(s, t) {
                    'x'
                } else {
                    hex(machine.pc(s, t))
                }
            }));
            out
        })
        .collect();
    let mut succ = vec![-1i32; lts.num_states() * n];
    for edge in lts.graph.raw_edges() {
        succ[edge.source().index() * n + edge.weight.thread as usize] =
            edge.target().index() as i32;
    }
    let node_of = |prog: u64| -> i32 { lts.index[&prog].index() as i32 };
    let mut witnesses: Vec<WitnessData> = Vec::new();
    let mut per_model = Vec::with_capacity(Model::ALL.len());
    for m in Model::ALL {
        if verdicts.passes(m) {
            per_model.push(-1);
            continue;
        }
        let a = oracle::analyse(test, m);
        let w = a.witness.as_ref().expect(
            "a failing verdict has a witness (oracle::analyse agrees with the suite's verdicts)",
        );
        let data = witness_data(&a.product, w, &node_of);
        let k = match witnesses.iter().position(|x| *x == data) {
            Some(k) => k,
            None => {
                witnesses.push(data);
                witnesses.len() - 1
            }
        };
        per_model.push(k as i32);
    }
    let code = test
        .threads
        .iter()
        .enumerate()
        .map(|(t, th)| {
            (0..th.len())
                .map(|pc| progress_litmus::axb::pseudo::at(test, t, pc))
                .collect()
        })
        .collect();
    let data = TestData {
        n: e.name.clone(),
        c: test.config(),
        v: verdicts.0.iter().map(|v| v.as_char()).collect(),
        d: distinguishing_for(&verdicts).map_or("", Model::name),
        cf: table4_models()
            .into_iter()
            .filter(|&m| in_bucket_c(&verdicts, m))
            .map(Model::name)
            .collect(),
        i: idioms,
        u: e.duplicate_of.clone().unwrap_or_default(),
        p: Vec::new(),
        l: locs,
        s: states,
        g: succ,
        m: per_model,
        w: witnesses.iter().map(WitnessData::flat).collect(),
    };
    (data, code)
}

/// The page for `entries`. Entries without verdicts are labelled here
/// (verdicts by the oracle, idioms by [`Recogniser`]); labelled entries are
/// shown as they are, but a stored verdict that the oracle cannot back with
/// a witness is an error.
pub fn render(suite: &str, note: &str, entries: &[Entry]) -> String {
    render_with(suite, note, entries, PageOptions::default())
}

/// [`render`] with options.
pub fn render_with(suite: &str, note: &str, entries: &[Entry], opts: PageOptions) -> String {
    render_all(suite, note, entries, &[], opts)
}

/// The page for AXB `entries` (as [`render_with`]) and kernel `programs`
/// (listed after them, see [`kernel`]).
pub fn render_all(
    suite: &str,
    note: &str,
    entries: &[Entry],
    programs: &[NamedProgram],
    opts: PageOptions,
) -> String {
    let recogniser = Recogniser::default();
    let labelled: Vec<(TestData, Vec<Vec<String>>)> = entries
        .par_iter()
        .map(|e| match e.verdicts {
            Some(v) => test_data(e, v, e.idioms.clone()),
            None => test_data(e, oracle::verdicts(&e.test), recogniser.tags(&e.test)),
        })
        .collect();
    let (lines, tests) = intern_lines(labelled);
    let data = PageData {
        suite: suite.to_string(),
        note: note.to_string(),
        models: Model::ALL.iter().map(|m| m.name()).collect(),
        pretty: Model::ALL.iter().map(|m| m.pretty()).collect(),
        table4: table4_models().into_iter().map(Model::name).collect(),
        idioms: idiom_titles(&recogniser),
        lines,
        tests,
        chunk: CODE_CHUNK,
        code: if opts.code {
            code_chunks(entries, opts.shape)
        } else {
            Vec::new()
        },
        kernels: kernel::all(programs, opts.code),
    };
    page_html(suite, &data, opts.shape)
}

/// The tests with their pseudo-code as indices into one list of the
/// distinct lines (the page's `lines`), in first-use order.
fn intern_lines(labelled: Vec<(TestData, Vec<Vec<String>>)>) -> (Vec<String>, Vec<TestData>) {
    let mut lines: Vec<String> = Vec::new();
    let mut line_ids: HashMap<String, u32> = HashMap::new();
    let mut tests = Vec::with_capacity(labelled.len());
    for (mut t, code) in labelled {
        t.p = code
            .into_iter()
            .map(|th| {
                th.into_iter()
                    .map(|l| {
                        *line_ids.entry(l.clone()).or_insert_with(|| {
                            lines.push(l);
                            lines.len() as u32 - 1
                        })
                    })
                    .collect()
            })
            .collect();
        tests.push(t);
    }
    (lines, tests)
}

/// Every idiom tag of the catalogue with its title, catalogue order.
fn idiom_titles(recogniser: &Recogniser) -> Vec<(String, String)> {
    recogniser
        .all_tags()
        .into_iter()
        .map(|t| {
            let (idiom, swapped) = recogniser.idiom_of(&t).expect("a catalogue tag");
            let title = if swapped {
                format!("{} (threads swapped)", idiom.title)
            } else {
                idiom.title.to_string()
            };
            (t, title)
        })
        .collect()
}

/// The HTML of the page around its data.
fn page_html(suite: &str, data: &PageData, shape: Shape) -> String {
    // `<` is escaped so that no string in the data can close the script.
    let json = oracle::json::to_string(data)
        .expect("page data serializes")
        .replace('<', "\\u003c");
    let title = html_escape(&format!("{suite}: progress litmus test explorer"));
    // The words a newcomer needs, one sentence each, as on every page of
    // the project (issue 23 item 5).
    let body = BODY.replacen(
        "</main>",
        &format!(
            "<section id=\"words-box\"><h3>Words</h3>{}</section>\n</main>",
            backends::glossary::html()
        ),
        1,
    );
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n{body}<script id=\"data\" type=\"application/json\">{json}</script>\n<script>\n{runner}</script>\n<script>\n{JS}</script>\n</body>\n</html>\n",
        runner = runner_script(shape),
    )
}

/// The static skeleton the script fills in.
const BODY: &str = r#"<header><h1 id="suite"></h1><span id="note"></span></header>
<div id="main">
<nav id="side">
<div id="filters">
<label class="axb-filter">Configuration <select id="f-config"></select></label>
<label class="kernel-filter">Launch <select id="f-launch"></select></label>
<label>Verdict <select id="f-vmodel"></select> <select id="f-verdict"><option value="">any</option><option value="P">P (passes)</option><option value="F">F (fails)</option></select></label>
<label class="axb-filter">Bucket <select id="f-bucket"></select></label>
<label class="axb-filter">Idiom <select id="f-idiom"></select></label>
<label class="kernel-filter">Literature <select id="f-lit"><option value="">any</option><option value="agrees">the oracle agrees with every stated verdict</option><option value="disagrees">the oracle disagrees with one</option><option value="undecided">a stated verdict has no oracle verdict</option><option value="none">the file states no verdict</option></select></label>
<label>Name <input id="f-name" type="search"></label>
</div>
<div id="count-line"><span id="count"></span> <span id="count-word">tests</span></div>
<ul id="list"></ul>
</nav>
<main id="view">
<section id="test-head"><p id="notice" hidden></p><h2 id="title"></h2><div id="facts"></div></section>
<section id="code-box"><h3 id="code-title">Pseudo-code</h3><pre id="code"></pre></section>
<section id="lit-box" class="kernel-only"><h3>From the literature (the file's comment)</h3><pre id="k-lit"></pre></section>
<section id="verdict-box"><h3>Verdicts</h3><table id="verdicts"></table></section>
<section id="graph-box" class="axb-only"><h3>State space <span id="graph-info"></span></h3><div id="legend"></div><div id="graph"></div></section>
<section id="witness-box"><h3 id="witness-title">Witness</h3><p id="witness-intro"></p><table id="schedule" class="axb-only"></table><pre id="k-witness" class="kernel-only"></pre></section>
<section id="emitted-box"><h3>Emitted code <select id="c-target"></select> <select id="c-mapping"></select></h3><p id="emitted-note"></p><pre id="emitted"></pre></section>
<section id="gpu-box" class="axb-only"><h3>Run this test on my GPU (WebGPU)</h3><p><label>Runs per mapping <input id="g-runs" type="number" min="1" max="1000" value="5"></label><label>Time per run (ms) <input id="g-ms" type="number" min="1" max="10000" value="100"></label><button id="g-run" type="button">Run on my GPU</button></p><p id="g-status"></p><table id="g-results"></table></section>
</main>
</div>
"#;

/// Text for the page: `<>&"'` and control characters escaped (one rule
/// for every page of the three tools).
fn html_escape(s: &str) -> String {
    progress_litmus::error::html_escape(s)
}

/// What `synth explorer` shows: a page name, a note, AXB tests and
/// kernel programs.
pub struct Loaded {
    pub name: String,
    pub note: String,
    pub entries: Vec<Entry>,
    pub programs: Vec<NamedProgram>,
}

/// The most AXB tests one page shows: 2^19 = 524,288. Every test costs
/// about 1.6 KB of page (2t5i, 416,280 tests, the largest complete suite
/// that is RON, makes a 671 MB page) and more while it is made, so a page
/// of millions of tests (a packed 6-instruction suite, or a gzip bomb of
/// 204 KB that inflates to millions of one-instruction tests, which ran
/// for 79 s before memory ran out) is refused up front, naming the count.
pub const MAX_TESTS: usize = 1 << 19;

/// Loads `paths` (suites, tests, kernel programs, directories) with the one
/// loader of AXB tests and kernel programs. The page is named after the
/// inputs' file stems (joined by `+`); its note is the notes of the suites
/// among them. The first bad file is the error, as is more than
/// [`MAX_TESTS`] tests.
pub fn load(paths: &[PathBuf]) -> Result<Loaded, String> {
    load_at_most(paths, MAX_TESTS)
}

/// [`load`] with at most `max_tests` AXB tests: files are read one at a
/// time and the first that goes over the bound is the error, so no more
/// than one file beyond the bound is ever held.
pub fn load_at_most(paths: &[PathBuf], max_tests: usize) -> Result<Loaded, String> {
    let mut items = Vec::new();
    let mut tests = 0;
    for p in progress_litmus::kernel::load::expand_paths(paths) {
        let mut v = p
            .and_then(|p| progress_litmus::kernel::load::load_file(&p))
            .map_err(|e| e.to_string())?;
        tests += v.iter().filter(|i| matches!(i, Item::Axb(_))).count();
        if tests > max_tests {
            let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            return Err(format!(
                "{}: more than {max_tests} tests: a page shows at most {max_tests} (about 1.6 KB of page a test); give fewer inputs, or a part of the suite",
                shown.join(", ")
            ));
        }
        items.append(&mut v);
    }
    if items.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(format!("{}: no tests found", shown.join(", ")));
    }
    let name = paths
        .iter()
        .map(|p| {
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" + ");
    let note = paths
        .iter()
        .filter_map(|p| match progress_litmus::axb::load::load_document(p) {
            Ok(progress_litmus::axb::load::Document::Suite(s)) if !s.note.is_empty() => {
                Some(s.note)
            }
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("; ");
    let mut entries = Vec::new();
    let mut programs = Vec::new();
    for item in items {
        match item {
            Item::Axb(t) => entries.push(t.entry),
            Item::Kernel(p) => programs.push(p),
        }
    }
    Ok(Loaded {
        name,
        note,
        entries,
        programs,
    })
}

/// Pages above this many bytes get a warning: browsers struggle well
/// before the 671 MB page of the whole 2t5i suite, which used to be written
/// without a word.
pub const LARGE_PAGE_BYTES: usize = 50_000_000;

/// The warning for a page of `bytes` bytes, if it is large: its size and
/// how to get a smaller one (the emitted code is most of a page).
pub fn size_warning(bytes: usize, no_code: bool) -> Option<String> {
    (bytes > LARGE_PAGE_BYTES).then(|| {
        format!(
            "synth explorer: warning: the page is {:.0} MB (over {} MB), more than a browser opens comfortably; show fewer tests (one directory, or the tests of a conformance list){}",
            bytes as f64 / 1e6,
            LARGE_PAGE_BYTES / 1_000_000,
            if no_code { "" } else { ", or leave out the emitted code with --no-code" }
        )
    })
}

/// Program-space transitions as `(source node, thread)`.
pub type Transitions = Vec<(usize, usize)>;

/// The page's data for one test, for tests of the page: the witness of
/// `model` projected onto the program space, as the transitions the page
/// highlights, split into the part before the repeated cycle and the cycle.
pub fn highlighted(test: &Test, model: Model) -> Option<(Transitions, Transitions)> {
    let lts = program_space(test);
    let a = oracle::analyse(test, model);
    let w = a.witness.as_ref()?;
    let node_of = |prog: u64| -> i32 { lts.index[&prog].index() as i32 };
    let data = witness_data(&a.product, w, &node_of);
    let (mut pre, mut cyc) = (Vec::new(), Vec::new());
    let mut cur = 0usize;
    for (k, ev) in data.e.iter().enumerate() {
        if ev[1] >= 0 {
            let step = (cur, ev[0] as usize);
            if k < data.c {
                pre.push(step);
            } else {
                cyc.push(step);
            }
        }
        cur = ev[4] as usize;
    }
    Some((pre, cyc))
}
