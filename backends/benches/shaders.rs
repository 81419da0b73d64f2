//! Benchmark: translating a shader against deciding it (issue 21).
//!
//! `cargo bench -p backends --bench shaders` writes the bare WGSL and GLSL
//! of the 483 published tests (plain mapping) and of the idiom library
//! (`backends emit --bare`), then times, in-process on one thread, what
//! `oracle classify` does with each: the shader frontend's translation
//! (naga's parse and validation, the lowering, its simplification and the
//! value check) and the decision under the 11 models. Medians of repeated
//! runs over the whole set.

use backends::mapping::Mapping;
use backends::target::emit::{self, EmitOptions, Target};
use backends::target::kernel::bare::emit_bare;
use backends::target::kernel::Lang;
use backends::Shape;
use oracle::kernel::product::Reductions;
use oracle::kernel::{flat_verdicts, Options};
use progress_litmus::axb::published;
use progress_litmus::kernel::load::{load_all, Item};
use progress_litmus::kernel::shader::{translate, Launch};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Shaders as (file name, text).
type Shaders = Vec<(PathBuf, String)>;

/// The bare shaders of the published tests and of the idioms.
fn shaders() -> (Shaders, Shaders) {
    let tests = published::tests().expect("the published tests");
    let mut axb = Vec::new();
    for target in [Target::Wgsl, Target::Glsl] {
        let opts = EmitOptions {
            target,
            mappings: vec![Mapping::Plain],
            instances: None,
            shape: Shape::Switch,
            deadline_ms: 1000,
            program_name: "tests".into(),
            bare: true,
        };
        let files = emit::files(&tests, &opts).expect("bare shaders");
        axb.extend(files.into_iter().map(|f| (f.path, f.contents)));
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms");
    let (items, _) = load_all(&[dir]);
    let mut idioms = Vec::new();
    for i in items {
        let Item::Kernel(p) = i else { continue };
        for (lang, ext) in [(Lang::Wgsl, "wgsl"), (Lang::Glsl, "comp")] {
            if let Ok(text) = emit_bare(&p, lang) {
                idioms.push((PathBuf::from(format!("{}.{ext}", p.name)), text));
            }
        }
    }
    (axb, idioms)
}

/// Median times to translate every shader of `set` and to decide every
/// translation under the 11 models, and how many were decided.
fn measure(set: &[(PathBuf, String)], runs: usize) -> (Duration, Duration, usize) {
    let launch = Launch::default();
    let opts = Options {
        max_states: 2_000_000,
        reductions: Reductions::ALL,
    };
    let mut translating = Vec::new();
    let mut deciding = Vec::new();
    let mut decided = 0;
    for _ in 0..runs {
        let t0 = Instant::now();
        let programs: Vec<_> = set
            .iter()
            .filter_map(|(p, s)| translate(p, s.as_bytes(), &launch).ok())
            .collect();
        translating.push(t0.elapsed());
        let t1 = Instant::now();
        decided = programs
            .iter()
            .filter(|t| flat_verdicts(&t.program, opts).is_ok())
            .count();
        deciding.push(t1.elapsed());
    }
    (median(translating), median(deciding), decided)
}

fn main() {
    let (axb, idioms) = shaders();
    println!("set                                  shaders  decided  translate (ms)  decide (ms)");
    for (name, set) in [
        ("483 published tests, bare WGSL+GLSL", &axb),
        ("idiom library, bare WGSL+GLSL", &idioms),
    ] {
        let (tr, de, n) = measure(set, 5);
        println!(
            "{name:<37}{:>7}  {n:>7}  {:>14.1}  {:>11.1}",
            set.len(),
            tr.as_secs_f64() * 1e3,
            de.as_secs_f64() * 1e3
        );
    }
}
