//! The round trip of issue 21 item 6: the bare (verification) form that
//! `backends emit --bare` writes, read back by the oracle's shader
//! frontend, is decided as the program it came from.
//!
//! - Every one of the 483 published tests, as bare WGSL and bare GLSL under
//!   the plain mapping, gets exactly its 11 published verdicts (the labels
//!   of `suites/oopsla21/oopsla21.ron`), with the frontend's simplification
//!   (docs/KERNEL.md §10.5) and without it: so the simplification keeps
//!   every verdict on these 966 programs.
//! - Every idiom of `suites/idioms`, as bare WGSL and GLSL, gets every
//!   verdict its `expect` lines state, read from the file's own annotation
//!   lines; the programs the emitter or the frontend refuse are exactly
//!   those named here, for the reasons named here.

#[path = "../../tests/support/programs.rs"]
mod programs;

use backends::mapping::Mapping;
use backends::target::emit::{self, EmitOptions, Target};
use backends::target::kernel::bare::emit_bare;
use backends::target::kernel::Lang;
use backends::Shape;
use oracle::kernel::product::Reductions;
use oracle::kernel::{check_expectations, flat_verdicts, Options};
use progress_litmus::axb::load::{load_all as load_tests, NamedTest};
use progress_litmus::kernel::load::NamedProgram;
use progress_litmus::kernel::shader::{translate, Launch};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The published tests with their labels (the published suite).
fn published() -> Vec<NamedTest> {
    let (tests, errors) = load_tests(&[root().join("suites/oopsla21/oopsla21.ron")]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(tests.len(), 483);
    tests
}

fn options(target: Target) -> EmitOptions {
    EmitOptions {
        target,
        mappings: vec![Mapping::Plain],
        instances: None,
        shape: Shape::Switch,
        deadline_ms: 1000,
        program_name: "tests".into(),
        bare: true,
    }
}

const OPTS: Options = Options {
    max_states: 1_000_000,
    reductions: Reductions::ALL,
};

#[test]
fn every_published_test_read_back_from_bare_wgsl_and_glsl_gets_its_published_verdicts() {
    let tests = published();
    let mut wrong = Vec::new();
    let mut decided = 0;
    for target in [Target::Wgsl, Target::Glsl] {
        let files = emit::files(&tests, &options(target)).unwrap();
        assert_eq!(files.len(), tests.len());
        for (t, f) in tests.iter().zip(&files) {
            let want = t.entry.verdicts.expect("the published suite is labelled");
            for simplify in [true, false] {
                let launch = Launch {
                    simplify,
                    ..Launch::default()
                };
                let tr = translate(&f.path, f.contents.as_bytes(), &launch)
                    .unwrap_or_else(|e| panic!("{}: {e}\n{}", f.path.display(), f.contents));
                // The launch came from the file's `workgroups` line.
                assert_eq!(tr.program.workgroups as usize, t.entry.test.num_threads());
                let (got, deadlock) = flat_verdicts(&tr.program, OPTS).unwrap();
                assert!(!deadlock, "{}", f.path.display());
                if got != want {
                    wrong.push(format!(
                        "{} (simplify {simplify}): {got:?}, published {want:?}",
                        f.path.display()
                    ));
                }
                decided += 1;
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(decided, 483 * 2 * 2);
}

fn idioms() -> Vec<NamedProgram> {
    programs::kernel_programs(&root().join("suites/idioms"))
}

/// What became of one idiom in one language.
enum Fate {
    /// Every stated verdict held (how many).
    Held(usize),
    /// The emitter refused it (its message).
    NotEmitted(String),
    /// The frontend refused it (its message).
    NotRead(String),
}

fn round_trip(p: &NamedProgram, lang: Lang, wrong: &mut Vec<String>) -> Fate {
    let text = match emit_bare(p, lang) {
        Ok(t) => t,
        Err(e) => return Fate::NotEmitted(e),
    };
    let ext = if lang == Lang::Wgsl { "wgsl" } else { "comp" };
    let path = Path::new("bare").join(format!("{}.{ext}", p.name));
    // The idioms' stated verdicts are for subgroups scheduled as their
    // models say (fair unless named), not also in lockstep as a shader's
    // are by default (docs/KERNEL.md §10.6).
    let launch = Launch {
        fair_subgroups: true,
        ..Launch::default()
    };
    let tr = match translate(&path, text.as_bytes(), &launch) {
        Ok(t) => t,
        Err(e) => return Fate::NotRead(e.msg),
    };
    // The annotations carried the launch, the initial values and the
    // stated verdicts.
    let q = &tr.program;
    assert_eq!(
        (q.workgroups, q.workgroup_size, q.subgroup_size),
        (
            p.program.workgroups,
            p.program.workgroup_size,
            p.program.subgroup_size
        ),
        "{}",
        path.display()
    );
    assert_eq!(q.expect, p.program.expect, "{}", path.display());
    let inits = |x: &progress_litmus::kernel::program::Program| {
        x.locations
            .iter()
            .map(|l| l.init.clone())
            .collect::<Vec<_>>()
    };
    let used: Vec<Vec<u8>> = inits(q);
    assert!(
        used.iter().all(|i| inits(&p.program).contains(i)),
        "{}: initial values {used:?}",
        path.display()
    );
    let read = NamedProgram {
        name: p.name.clone(),
        program: tr.program,
        verdicts: None,
        source: path.clone(),
        launch: None,
    };
    for (m, want, got) in check_expectations(&read, OPTS) {
        wrong.push(format!(
            "{} under {m}: expected {}, got {got}",
            path.display(),
            want.word()
        ));
    }
    Fate::Held(read.program.expect.len())
}

#[test]
fn every_idiom_read_back_from_bare_wgsl_and_glsl_gets_its_stated_verdicts() {
    let all = idioms();
    assert_eq!(all.len(), 23);
    let mut wrong = Vec::new();
    let mut held = 0;
    let mut refused = Vec::new();
    for lang in [Lang::Wgsl, Lang::Glsl] {
        for p in &all {
            match round_trip(p, lang, &mut wrong) {
                Fate::Held(n) => held += n,
                Fate::NotEmitted(e) => refused.push((lang, p.name.as_str(), "emit", e)),
                Fate::NotRead(e) => refused.push((lang, p.name.as_str(), "read", e)),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // WGSL has no barrier in non-uniform control flow (the emitter
    // refuses, as for running); decoupled-lookback-parallel uses all the
    // kernel language's registers but one, and the bare form's `pc` and
    // the collective's temporaries need more than 8 at once.
    let seen: Vec<String> = refused
        .iter()
        .map(|(l, n, how, _)| format!("{l:?} {n} {how}"))
        .collect();
    assert_eq!(
        seen,
        [
            "Wgsl barrier-nonuniform-1 emit",
            "Wgsl barrier-nonuniform-2 emit",
            "Wgsl decoupled-lookback-parallel read",
            "Glsl decoupled-lookback-parallel read",
        ],
        "{refused:?}"
    );
    for (_, _, how, e) in &refused {
        let why = if *how == "emit" {
            "non-uniform control flow"
        } else {
            "8 registers"
        };
        assert!(e.contains(why), "{e}");
    }
    assert!(held >= 200, "{held} stated verdicts held");
}

/// The bare form is the program alone: `emit --bare` writes the plain
/// mapping only by default, and refuses a mapping of many copies (the
/// adversarial pass's reproducer: `--mapping all` wrote round-robin and
/// chunked files of 65,534 workgroups that the oracle refuses to read).
#[test]
fn bare_emits_the_plain_mapping_and_refuses_the_others() {
    let dir = std::env::temp_dir().join(format!("bare-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let suite = root().join("suites/2t2i/2t2i.ron");
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_backends"))
            .args(["emit", "--target", "wgsl", "--bare", "--out"])
            .arg(&dir)
            .args(extra)
            .arg(&suite)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.is_empty());
    assert!(
        names
            .iter()
            .all(|n| !n.contains("round-robin") && !n.contains("chunked")),
        "{names:?}"
    );
    for m in ["all", "chunked", "plain,round-robin"] {
        let out = run(&["--mapping", m]);
        assert_eq!(out.status.code(), Some(2), "--mapping {m}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("the bare form is the program alone"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
