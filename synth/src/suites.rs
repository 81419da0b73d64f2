//! `synth suites`: the committed conformance suites, regenerated from
//! scratch.
//!
//! One run enumerates the five published configurations completely, imports
//! the 483 published tests under their published names, labels every test
//! with its verdicts under the eleven models (the oracle) and the idioms it
//! behaves like ([`crate::idioms`]), writes each model's conformance list
//! (every test that must terminate under it, verdict P: what a driver team
//! runs) and, apart, the buckets of the paper's Table 4 (SPEC §5), and a
//! README with Table 4 for the published and the complete suites side by
//! side.
//!
//! Layout under the output directory (`suites/` by default):
//!
//! ```text
//! README.md
//! <suite>/<suite>.ron                 every test, verdicts and idiom tags
//! <suite>/conformance/<MODEL>.txt     the conformance list: every test P under MODEL
//! <suite>/buckets/D/<ROW>.txt         Table 4's bucket D (distinguishing tests)
//! <suite>/buckets/C/<ROW>.txt         Table 4's bucket C (the paper's C. Tests)
//! <suite>/idioms/<tag>.txt            tests that behave like the idiom
//! oopsla21/in-complete.txt            published name -> complete-suite name
//! MANIFEST                            what was written, with hashes
//! ```
//!
//! `<suite>` is `oopsla21` or a configuration (`2t2i`, ...). `<MODEL>` is
//! the CSV name of every model but unfair ([`conformance_models`]); `<ROW>`
//! that of a Table 4 row (`HSA`, `OBE`, `LOBE`, `WEAK_FAIR` and their
//! `_STRONG` / `STRONG_FAIR` variants). The buckets have a folder of their
//! own so that nothing named `conformance` is anything but a conformance
//! list: `buckets`, as the library module ([`progress_litmus::buckets`])
//! and the explorer's filter call them, with the paper's column letters.
//!
//! Everything is a pure function of the published tests and the code: all
//! orders are fixed, nothing records a time or a path, and files whose
//! bytes would not change are not rewritten, so a second run on an
//! unchanged tree changes nothing.

use crate::enumerate::canon::canonical;
use crate::enumerate::config::Config;
use crate::idioms::Recogniser;
use progress_litmus::axb::load::{load_all, suite_to_ron};
use progress_litmus::axb::suite::{Entry, Suite};
use progress_litmus::axb::test::Test;
use progress_litmus::buckets::{distinguishing_for, in_bucket_c, Table4, ROWS};
use progress_litmus::model::{Base, Fairness, Model, Verdicts};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod output;
pub use output::{manifest, write, WriteError, WriteStats, MANIFEST};

/// The published configurations, `(threads, instructions)`, in the paper's
/// order.
pub const CONFIGS: [(usize, usize); 5] = [(2, 2), (2, 3), (2, 4), (3, 3), (3, 4)];

/// The name of the suite of published tests.
pub const PUBLISHED: &str = "oopsla21";

/// The eight Table 4 models (rows x fairness), weak first, in row order.
pub fn table4_models() -> Vec<Model> {
    [Fairness::Weak, Fairness::Strong]
        .into_iter()
        .flat_map(|f| ROWS.iter().map(move |&b| Model::new(b, f)))
        .collect()
}

/// Reads the published tests (artifact `.txt` files named
/// `<N>t<M>i_<k>.txt`; `None`: the ones compiled in, see
/// [`progress_litmus::axb::published`]) as one suite in configuration order, then by `k`,
/// each keeping its published name; a test that equals an earlier one up to
/// location renaming gets [`Entry::duplicate_of`] that earlier name.
pub fn import_published(dir: Option<&Path>) -> Result<Suite, String> {
    let tests = match dir {
        None => progress_litmus::axb::published::tests().map_err(|e| e.to_string())?,
        Some(dir) => {
            if !dir.is_dir() {
                return Err(format!(
                    "published tests not found at {} (expected the artifact's .txt files; see --published)",
                    dir.display()
                ));
            }
            let (tests, errors) = load_all(&[dir.to_path_buf()]);
            if let Some(e) = errors.first() {
                return Err(e.to_string());
            }
            tests
        }
    };
    let mut keyed = Vec::new();
    for t in tests {
        let key = published_key(&t.name).ok_or_else(|| {
            format!(
                "{}: a published test name must be <N>t<M>i_<k>",
                t.source.display()
            )
        })?;
        if t.entry.test.config() != t.name[..t.name.find('_').unwrap_or(0)] {
            return Err(format!(
                "{}: the test is {}, not what its name says",
                t.source.display(),
                t.entry.test.config()
            ));
        }
        keyed.push((key, t.entry));
    }
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let mut first: HashMap<Test, String> = HashMap::new();
    let mut entries = Vec::with_capacity(keyed.len());
    for (_, mut e) in keyed {
        let canon = canonical(&e.test);
        match first.get(&canon) {
            Some(earlier) => e.duplicate_of = Some(earlier.clone()),
            None => {
                first.insert(canon, e.name.clone());
            }
        }
        entries.push(e);
    }
    Ok(Suite {
        name: PUBLISHED.to_string(),
        note: format!(
            "The {} progress litmus tests of the OOPSLA'21 artifact under their published names; duplicate_of names an earlier published test that is the same up to location renaming. Verdicts by the oracle, idioms by synth::idioms.",
            entries.len()
        ),
        tests: entries,
    })
}

/// Sort key of a published name: configuration position (unknown ones
/// last, by name), then the numeric id.
fn published_key(name: &str) -> Option<(usize, String, u64)> {
    let (config, id) = name.split_once('_')?;
    let id: u64 = id.parse().ok()?;
    let pos = CONFIGS
        .iter()
        .position(|&(n, m)| format!("{n}t{m}i") == config)
        .unwrap_or(CONFIGS.len());
    Some((pos, config.to_string(), id))
}

/// Every test of a published configuration, named `<N>t<M>i_<k>` in the
/// synthesizer's canonical order.
pub fn complete_suite(threads: usize, instrs: usize) -> Result<Suite, String> {
    let cfg = Config::new(threads, instrs);
    let tests = crate::enumerate(&cfg).map_err(|e| e.to_string())?;
    let mut suite = crate::enumerate::output::to_suite(&cfg, tests, None);
    suite
        .note
        .push_str(". Verdicts by the oracle, idioms by synth::idioms.");
    Ok(suite)
}

/// Fills in every entry's verdicts (all eleven models) and idiom tags.
pub fn label(suite: &mut Suite, recogniser: &Recogniser) {
    let tests: Vec<&Test> = suite.tests.iter().map(|e| &e.test).collect();
    let verdicts = oracle::verdicts_all(&tests);
    let tags: Vec<Vec<String>> = tests.par_iter().map(|t| recogniser.tags(t)).collect();
    for ((e, v), t) in suite.tests.iter_mut().zip(verdicts).zip(tags) {
        e.verdicts = Some(v);
        e.idioms = t;
    }
}

/// The models with a conformance list: every model but unfair, which
/// guarantees nothing (no test must terminate under it), in the column
/// order of `oracle classify --format csv`.
pub fn conformance_models() -> Vec<Model> {
    Model::ALL
        .into_iter()
        .filter(|m| m.base != Base::Unfair)
        .collect()
}

/// A model's conformance list: the names of a labelled suite's tests that
/// must terminate under it (verdict P), in the suite's order. A device
/// with the model never hangs on one of them.
pub fn conformance_list(suite: &Suite, model: Model) -> Vec<&str> {
    names_where(suite, |v| v.passes(model))
}

/// One of the two buckets of the paper's Table 4 (SPEC §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bucket {
    /// The distinguishing tests of a row (the paper's "D. Tests").
    D,
    /// The paper's "C. Tests": HSA = D(HSA), OBE = D(OBE), LOBE =
    /// D(HSA)+D(OBE)+D(LOBE), fair = every test of the fairness.
    C,
}

impl Bucket {
    /// Its folder under `<suite>/`.
    pub fn folder(self) -> &'static str {
        match self {
            Bucket::D => "buckets/D",
            Bucket::C => "buckets/C",
        }
    }
}

/// The names of a labelled suite's tests in one bucket of a Table 4 row.
pub fn bucket_list(suite: &Suite, row: Model, bucket: Bucket) -> Vec<&str> {
    names_where(suite, |v| match bucket {
        Bucket::D => distinguishing_for(v) == Some(row),
        Bucket::C => in_bucket_c(v, row),
    })
}

/// The names of the labelled tests whose verdicts satisfy `keep`.
fn names_where(suite: &Suite, keep: impl Fn(&Verdicts) -> bool) -> Vec<&str> {
    suite
        .tests
        .iter()
        .filter(|e| e.verdicts.as_ref().is_some_and(&keep))
        .map(|e| e.name.as_str())
        .collect()
}

/// Table 4 of a labelled suite.
pub fn table4(suite: &Suite) -> Table4 {
    Table4::from_verdicts(suite.tests.iter().filter_map(|e| e.verdicts.as_ref()))
}

/// The generated tree: relative path -> bytes, and the suites it came from.
pub struct Generated {
    pub files: BTreeMap<PathBuf, Vec<u8>>,
    /// The published suite first, then the complete suites in [`CONFIGS`]
    /// order.
    pub suites: Vec<Suite>,
    /// Seconds spent on enumeration, and on labelling (oracle + idioms).
    pub enumerate_s: f64,
    pub label_s: f64,
}

fn lines(names: &[&str]) -> Vec<u8> {
    let mut s = String::new();
    for n in names {
        s.push_str(n);
        s.push('\n');
    }
    s.into_bytes()
}

/// The files of one labelled suite (without the README).
fn suite_files(suite: &Suite, tags: &[String], files: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let dir = PathBuf::from(&suite.name);
    files.insert(
        dir.join(format!("{}.ron", suite.name)),
        suite_to_ron(suite).into_bytes(),
    );
    for m in conformance_models() {
        files.insert(
            dir.join("conformance").join(format!("{}.txt", m.name())),
            lines(&conformance_list(suite, m)),
        );
    }
    for m in table4_models() {
        for b in [Bucket::D, Bucket::C] {
            files.insert(
                dir.join(b.folder()).join(format!("{}.txt", m.name())),
                lines(&bucket_list(suite, m, b)),
            );
        }
    }
    for tag in tags {
        let names: Vec<&str> = suite
            .tests
            .iter()
            .filter(|e| e.idioms.contains(tag))
            .map(|e| e.name.as_str())
            .collect();
        if !names.is_empty() {
            files.insert(dir.join("idioms").join(format!("{tag}.txt")), lines(&names));
        }
    }
}

/// Computes every file of the suites directory. `published` is the
/// directory of published tests (`None`: the ones compiled in).
pub fn generate(published: Option<&Path>) -> Result<Generated, String> {
    let recogniser = Recogniser::default();
    let tags = recogniser.all_tags();
    let t0 = Instant::now();
    let mut suites = vec![import_published(published)?];
    for (n, m) in CONFIGS {
        suites.push(complete_suite(n, m)?);
    }
    let enumerate_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    for s in &mut suites {
        label(s, &recogniser);
    }
    let label_s = t1.elapsed().as_secs_f64();
    let mut files = BTreeMap::new();
    for s in &suites {
        suite_files(s, &tags, &mut files);
    }
    files.insert(
        PathBuf::from(PUBLISHED).join("in-complete.txt"),
        in_complete(&suites).into_bytes(),
    );
    files.insert(
        PathBuf::from("README.md"),
        readme(&suites, &recogniser).into_bytes(),
    );
    files.insert(PathBuf::from(MANIFEST), manifest(&files));
    Ok(Generated {
        files,
        suites,
        enumerate_s,
        label_s,
    })
}

/// For each published test, the name of the same test (up to location
/// renaming) in the complete suite of its configuration, or `-`.
fn in_complete(suites: &[Suite]) -> String {
    let index = complete_index(suites);
    let mut out = String::new();
    for e in &suites[0].tests {
        let found = index.get(&canonical(&e.test)).map_or("-", |s| s.as_str());
        let _ = writeln!(out, "{} {found}", e.name);
    }
    out
}

/// Canonical test -> its name in the complete suites.
fn complete_index(suites: &[Suite]) -> HashMap<Test, String> {
    suites[1..]
        .iter()
        .flat_map(|s| s.tests.iter())
        .map(|e| (canonical(&e.test), e.name.clone()))
        .collect()
}

fn dc(t: &Table4, fairness: usize, row: usize) -> String {
    format!("{}/{}", t.d[fairness][row], t.c[fairness][row])
}

/// The README of the suites directory: what the suites are, how to
/// regenerate them, and their counts beside the paper's, section by
/// section (each section one function, written in order).
pub fn readme(suites: &[Suite], recogniser: &Recogniser) -> String {
    let published = &suites[0];
    let complete = &suites[1..];
    let all_complete = Suite {
        name: "complete".into(),
        note: String::new(),
        tests: complete.iter().flat_map(|s| s.tests.clone()).collect(),
    };
    let index = complete_index(suites);
    let mut o = String::new();
    readme_intro(&mut o, published);
    readme_conformance(&mut o, published, complete);
    readme_table4(&mut o, published, &all_complete);
    readme_counts(&mut o, published, complete, &all_complete, &index);
    readme_duplicates(&mut o, published);
    readme_idioms(&mut o, published, complete, recogniser);
    readme_browse(&mut o);
    o
}

/// The README's title, how to regenerate the suites, their layout and
/// the definitions of the lists: what a reader needs before the numbers.
fn readme_intro(o: &mut String, published: &Suite) {
    readme_head(o, published);
    readme_definitions(o, published);
}

/// The README's title, what the folder holds, how to regenerate it and
/// its layout.
fn readme_head(o: &mut String, published: &Suite) {
    let _ = writeln!(o, "# Conformance suites\n");
    let _ = writeln!(
        o,
        "Generated by `synth suites`; do not edit by hand. Every test of the five published configurations \
         (2 memory locations, values 0 and 1, the constraints of SPEC §4), the {} published tests of the \
         OOPSLA'21 artifact, each labelled with its verdicts under all 11 progress models and tagged with the \
         classic idioms it behaves like; per suite each model's conformance list and, apart, the buckets of the \
         paper's Table 4 (SPEC §5).\n",
        published.tests.len()
    );
    let _ = writeln!(o, "## Regenerate\n");
    let _ = writeln!(
        o,
        "From the project root (the published tests are compiled in from `{}`):\n",
        progress_litmus::axb::published::DIR
    );
    let _ = writeln!(
        o,
        "```sh\ncargo build --release -p synth\n./target/release/synth suites --out suites\n```\n"
    );
    let _ = writeln!(
        o,
        "It enumerates, labels and writes everything from scratch in a few seconds and prints a summary. \
         Re-running it on an unchanged tree changes no byte.\n"
    );
    let _ = writeln!(o, "## Layout\n");
    let _ = writeln!(o, "| path | contents |\n|---|---|");
    let _ = writeln!(o, "| `<suite>/<suite>.ron` | the suite (RON, `progress_litmus::axb::suite::Suite`): every test with its verdicts under the 11 models, its idiom tags, and for published duplicates `duplicate_of` |");
    let _ = writeln!(o, "| `<suite>/conformance/<MODEL>.txt` | the model's conformance list: every test of the suite that must terminate under the model (verdict P), one name per line; what a driver team runs (`backends run --only`) |");
    let _ = writeln!(
        o,
        "| `<suite>/buckets/D/<ROW>.txt` | bucket D of a Table 4 row: its distinguishing tests |"
    );
    let _ = writeln!(o, "| `<suite>/buckets/C/<ROW>.txt` | bucket C of a Table 4 row, the paper's C. Tests (not a conformance list) |");
    let _ = writeln!(o, "| `<suite>/idioms/<tag>.txt` | the tests that behave like an idiom (absent if none does) |");
    let _ = writeln!(o, "| `{PUBLISHED}/in-complete.txt` | each published name and the name of the same test (up to location renaming) in the complete suite of its configuration |");
    let _ = writeln!(o, "| `{MANIFEST}` | every file `synth suites` wrote here with the hash of its bytes: a list it no longer writes is removed only if it is listed there unchanged (and its folder, if that leaves it empty and the run writes nothing there), never through a symbolic link, and any other file is left alone |\n");
}

/// What the names of the layout are, and what a conformance list is
/// beside Table 4's buckets, with the published suite's weak and strong
/// OBE as the example of how they differ.
fn readme_definitions(o: &mut String, published: &Suite) {
    let conformance: Vec<String> = conformance_models()
        .iter()
        .map(|m| format!("`{}`", m.name()))
        .collect();
    let _ = writeln!(
        o,
        "Suites: `{PUBLISHED}` (the published tests, published names) and one complete suite per configuration \
         (`2t2i`, `2t3i`, `2t4i`, `3t3i`, `3t4i`; tests named `<config>_<k>` in the synthesizer's canonical order). \
         `<MODEL>` is the CSV name of a model: {}. Unfair guarantees nothing, so no test must terminate under it \
         and it has no list. `<ROW>` is the CSV name of a Table 4 row: `HSA`, `OBE`, `LOBE`, `WEAK_FAIR` (weak) \
         and `HSA_STRONG`, `OBE_STRONG`, `LOBE_STRONG`, `STRONG_FAIR` (strong); HSA+OBE is not a row of Table 4.\n",
        conformance.join(", ")
    );
    let n = |m: Model| conformance_list(published, m).len();
    let t = table4(published);
    let (obe, obe_strong) = (
        Model::new(Base::Obe, Fairness::Weak),
        Model::new(Base::Obe, Fairness::Strong),
    );
    let _ = writeln!(
        o,
        "A model's **conformance list** is every test that must terminate under it (verdict P), whatever the \
         test does under other models: a device with the model never hangs on any of them, so one hang is a \
         violation (`backends report` counts the same tests). The **buckets** of Table 4 are the paper's, and \
         smaller. A test is *weak* if it passes under weak fair, else *strong* if it passes under strong fair; \
         it is in bucket D (distinguishing) of the first of HSA, OBE, LOBE of its fairness under which it \
         passes, else of fair. Bucket C (the paper's C. Tests): HSA = D(HSA), OBE = D(OBE), LOBE = \
         D(HSA)+D(OBE)+D(LOBE), fair = every test of that fairness. So a row's buckets hold tests of one \
         fairness only, and OBE's only tests that fail HSA: of the published tests, {} terminate under weak \
         OBE and {} under strong OBE, but bucket C holds {} and {}.\n",
        n(obe),
        n(obe_strong),
        t.c[0][1],
        t.c[1][1]
    );
}

/// The README's table of conformance list sizes, one row a suite.
fn readme_conformance(o: &mut String, published: &Suite, complete: &[Suite]) {
    let models = conformance_models();
    let _ = writeln!(o, "## Conformance lists\n");
    let _ = writeln!(
        o,
        "Tests in `<suite>/conformance/<MODEL>.txt`: every test that must terminate under the model.\n"
    );
    let names: Vec<&str> = models.iter().map(|m| m.name()).collect();
    let _ = writeln!(o, "| suite | tests | {} |", names.join(" | "));
    let _ = writeln!(o, "|---|--:|{}", "--:|".repeat(models.len()));
    for s in std::iter::once(published).chain(complete) {
        let sizes: Vec<String> = models
            .iter()
            .map(|&m| conformance_list(s, m).len().to_string())
            .collect();
        let _ = writeln!(
            o,
            "| {} | {} | {} |",
            s.name,
            s.tests.len(),
            sizes.join(" | ")
        );
    }
    let _ = writeln!(o);
}

/// The README's Table 4, published and complete side by side, so that
/// the paper's numbers can be checked against the complete suites'.
fn readme_table4(o: &mut String, published: &Suite, all_complete: &Suite) {
    let tp = table4(published);
    let tc = table4(all_complete);
    let _ = writeln!(
        o,
        "## Table 4's buckets: published and complete, side by side\n"
    );
    let _ = writeln!(
        o,
        "D/C = bucket D (distinguishing tests) / bucket C (the paper's C. Tests); not conformance lists. Published: the {} tests of the artifact (duplicates included, as in the paper). \
         Complete: the {} tests of the five complete suites.\n",
        published.tests.len(),
        all_complete.tests.len()
    );
    let _ = writeln!(
        o,
        "| model | published weak D | published weak C | complete weak D | complete weak C | published strong D | published strong C | complete strong D | complete strong C |"
    );
    let _ = writeln!(o, "|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    for (ri, name) in ["HSA", "OBE", "LOBE", "fair"].iter().enumerate() {
        let _ = writeln!(
            o,
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |",
            tp.d[0][ri],
            tp.c[0][ri],
            tc.d[0][ri],
            tc.c[0][ri],
            tp.d[1][ri],
            tp.c[1][ri],
            tc.d[1][ri],
            tc.c[1][ri]
        );
    }
    if tp.unbucketed + tc.unbucketed > 0 {
        let _ = writeln!(
            o,
            "\nTests that fail even under strong fairness (in no bucket): published {}, complete {}.",
            tp.unbucketed, tc.unbucketed
        );
    }
    let _ = writeln!(o);
}

/// The README's counts per suite (per configuration for the published
/// tests), with how many published tests the complete suites contain.
fn readme_counts(
    o: &mut String,
    published: &Suite,
    complete: &[Suite],
    all_complete: &Suite,
    index: &HashMap<Test, String>,
) {
    let _ = writeln!(o, "## Table 4's buckets per suite\n");
    let _ = writeln!(
        o,
        "| suite | tests | distinct up to location renaming | in the complete suite | weak | strong | weak HSA D/C | weak OBE D/C | weak LOBE D/C | weak fair D/C | strong HSA D/C | strong OBE D/C | strong LOBE D/C | strong fair D/C |"
    );
    let _ = writeln!(
        o,
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    let mut rows: Vec<(String, Vec<&Entry>)> = Vec::new();
    for &(n, m) in &CONFIGS {
        let c = format!("{n}t{m}i");
        let es: Vec<&Entry> = published
            .tests
            .iter()
            .filter(|e| e.test.config() == c)
            .collect();
        rows.push((format!("{PUBLISHED} {c}"), es));
    }
    rows.push((
        format!("{PUBLISHED} (all)"),
        published.tests.iter().collect(),
    ));
    for s in complete {
        rows.push((s.name.clone(), s.tests.iter().collect()));
    }
    rows.push(("complete (all)".into(), all_complete.tests.iter().collect()));
    for (name, es) in rows {
        let t = Table4::from_verdicts(es.iter().filter_map(|e| e.verdicts.as_ref()));
        let distinct = es.iter().filter(|e| e.duplicate_of.is_none()).count();
        let found = es
            .iter()
            .filter(|e| index.contains_key(&canonical(&e.test)))
            .count();
        let weak: usize = t.c[0][3];
        let strong: usize = t.c[1][3];
        let _ = writeln!(
            o,
            "| {name} | {} | {distinct} | {found} | {weak} | {strong} | {} | {} | {} | {} | {} | {} | {} | {} |",
            es.len(),
            dc(&t, 0, 0),
            dc(&t, 0, 1),
            dc(&t, 0, 2),
            dc(&t, 0, 3),
            dc(&t, 1, 0),
            dc(&t, 1, 1),
            dc(&t, 1, 2),
            dc(&t, 1, 3),
        );
    }
}

/// The README's line on the published tests that are duplicates up to
/// location renaming, so that the published counts can be explained.
fn readme_duplicates(o: &mut String, published: &Suite) {
    let by_name: HashMap<&str, &Test> = published
        .tests
        .iter()
        .map(|e| (e.name.as_str(), &e.test))
        .collect();
    let mut identical = 0;
    let dups: Vec<String> = published
        .tests
        .iter()
        .filter_map(|e| {
            e.duplicate_of.as_ref().map(|d| {
                if by_name.get(d.as_str()) == Some(&&e.test) {
                    identical += 1;
                    format!("`{}` = `{d}` (identical)", e.name)
                } else {
                    format!("`{}` = `{d}`", e.name)
                }
            })
        })
        .collect();
    let _ = writeln!(
        o,
        "\nPublished duplicates up to location renaming ({}, of which {identical} identical): {}.\n",
        dups.len(),
        if dups.is_empty() {
            "none".to_string()
        } else {
            dups.join(", ")
        }
    );
}

/// The README's table of idioms: each tag, its reference program and the
/// tests that behave like it.
fn readme_idioms(o: &mut String, published: &Suite, complete: &[Suite], recogniser: &Recogniser) {
    let _ = writeln!(o, "## Idioms\n");
    let _ = writeln!(
        o,
        "A test is tagged with an idiom when its program state space, with transitions labelled by thread id, \
         is strongly bisimilar to the idiom's reference program (`synth/src/idioms.rs`; bisimilar tests have \
         the same verdicts under every model). `<tag>-swapped` means: like the reference with its two threads \
         exchanged. Full lists in `<suite>/idioms/<tag>.txt`.\n"
    );
    let _ = writeln!(
        o,
        "| tag | idiom (paper) | reference | published | complete suites |\n|---|---|---|---|---|"
    );
    for tag in recogniser.all_tags() {
        let (idiom, swapped) = recogniser.idiom_of(&tag).expect("a catalogue tag");
        let where_in = |ss: &[Suite]| -> String {
            let names: Vec<String> = ss
                .iter()
                .flat_map(|s| s.tests.iter())
                .filter(|e| e.idioms.contains(&tag))
                .map(|e| format!("`{}`", e.name))
                .collect();
            match names.len() {
                0 => "none".to_string(),
                n if n <= 12 => names.join(", "),
                n => format!("{n} tests: {}, ...", names[..12].join(", ")),
            }
        };
        let program = if swapped {
            crate::idioms::swap_threads(&idiom.reference)
        } else {
            idiom.reference.clone()
        };
        let reference = progress_litmus::axb::pseudo::print(&program)
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ");
        let _ = writeln!(
            o,
            "| `{tag}` | {}{} | {} ({}) | {} | {} |",
            idiom.title,
            if swapped { ", threads swapped" } else { "" },
            reference.replace('|', "\\|"),
            if swapped {
                format!("{} with T0 and T1 exchanged", idiom.source)
            } else {
                idiom.source.to_string()
            },
            where_in(std::slice::from_ref(published)),
            where_in(complete)
        );
    }
    let _ = writeln!(o);
}

/// The README's pointer to `synth explorer`, for browsing a suite.
fn readme_browse(o: &mut String) {
    let _ = writeln!(o, "## Browse\n");
    let _ = writeln!(
        o,
        "`synth explorer` turns a suite into one self-contained HTML page that works offline: a list of tests \
         filterable by configuration, verdict under any model, Table 4 bucket and idiom; for the chosen test \
         its pseudo-code, its state space drawn as a graph, its verdict under each model and, for a failing \
         verdict, the witness schedule highlighted in the graph; and the code `backends emit` writes for \
         it, per target (GLSL, Amber, Metal, CUDA, C++) and mapping.\n"
    );
    let _ = writeln!(
        o,
        "```sh\n./target/release/synth explorer suites/2t3i/2t3i.ron -o 2t3i.html\n```\n\nOpen the file in a browser; `2t3i.html#test=2t3i_14&model=HSA` opens a test with the witness of a model selected; add `&target=cuda` or `&mapping=chunked` for the code."
    );
}

/// Everything `synth suites` reports.
pub struct Summary {
    pub text: String,
    pub json: serde_json::Value,
}

/// Why `synth suites` stopped: the output folder refused as it is (bad
/// input: exit status 2), or anything else (1).
#[derive(Debug)]
pub enum SuitesError {
    Refused(String),
    Failed(String),
}

/// One suite's line of the summary and its JSON: its tests, weak and
/// strong, idiom-tagged, the size of each conformance list (weak models,
/// then strong) and each row's bucket D.
fn suite_summary(s: &Suite) -> (String, serde_json::Value) {
    let t = table4(s);
    let tagged = s.tests.iter().filter(|e| !e.idioms.is_empty()).count();
    let models = conformance_models();
    let sizes: BTreeMap<&str, usize> = models
        .iter()
        .map(|&m| (m.name(), conformance_list(s, m).len()))
        .collect();
    let side = |f: Fairness| -> String {
        let n: Vec<String> = [Base::Hsa, Base::Obe, Base::HsaObe, Base::Lobe, Base::Fair]
            .iter()
            .map(|&b| sizes[Model::new(b, f).name()].to_string())
            .collect();
        n.join("/")
    };
    let d = |f: usize| format!("{}/{}/{}/{}", t.d[f][0], t.d[f][1], t.d[f][2], t.d[f][3]);
    let line = format!(
        "{:<9} {:>5} tests  weak {:>5}  strong {:>5}  idiom-tagged {:>3}  conformance HSA/OBE/HSA+OBE/LOBE/fair weak {} strong {}  bucket D HSA/OBE/LOBE/fair weak {} strong {}\n",
        s.name,
        s.tests.len(),
        t.c[0][3],
        t.c[1][3],
        tagged,
        side(Fairness::Weak),
        side(Fairness::Strong),
        d(0),
        d(1)
    );
    let row = serde_json::json!({
        "suite": s.name,
        "tests": s.tests.len(),
        "weak": t.c[0][3],
        "strong": t.c[1][3],
        "idiom_tagged": tagged,
        "conformance": sizes,
        "distinguishing_weak": {"HSA": t.d[0][0], "OBE": t.d[0][1], "LOBE": t.d[0][2], "fair": t.d[0][3]},
        "distinguishing_strong": {"HSA": t.d[1][0], "OBE": t.d[1][1], "LOBE": t.d[1][2], "fair": t.d[1][3]},
    });
    (line, row)
}

/// Regenerates the suites directory `out` from the published tests in
/// `published`; returns the summary to print.
pub fn run(out: &Path, published: Option<&Path>) -> Result<Summary, SuitesError> {
    let start = Instant::now();
    let g = generate(published).map_err(SuitesError::Failed)?;
    let stats = write(out, &g.files).map_err(|e| match e {
        WriteError::Refused(m) => SuitesError::Refused(m),
        WriteError::Io(e) => SuitesError::Failed(format!("cannot write {}: {e}", out.display())),
    })?;
    let mut text = String::new();
    let mut rows = Vec::new();
    for s in &g.suites {
        let (line, row) = suite_summary(s);
        text.push_str(&line);
        rows.push(row);
    }
    let total = start.elapsed().as_secs_f64();
    let _ = writeln!(
        text,
        "{} files: {} written, {} unchanged, {} stale removed; enumeration {:.2} s, labelling {:.2} s, total {:.2} s -> {}",
        g.files.len(),
        stats.written,
        stats.unchanged,
        stats.removed.len(),
        g.enumerate_s,
        g.label_s,
        total,
        progress_litmus::error::printable(&out.display().to_string())
    );
    let json = serde_json::json!({
        "suites": rows,
        "files": g.files.len(),
        "written": stats.written,
        "unchanged": stats.unchanged,
        "removed": stats.removed.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "enumerate_s": g.enumerate_s,
        "label_s": g.label_s,
        "total_s": total,
        "out": out.display().to_string(),
    });
    Ok(Summary { text, json })
}
