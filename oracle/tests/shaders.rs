//! Shaders through the oracle (issue 21): the stated verdicts of
//! `suites/shaders/` hold, and the command line takes shaders with their
//! launch flags, `translate` included, with bad shaders as one error line
//! each while the rest of the batch is decided.

use axb::kernel::load::{load_all_with, Item, Launch};
use oracle::kernel::{check_expectations, Options};
use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn oracle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oracle"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_stated_shader_verdict_holds() {
    let mut warnings = Vec::new();
    let (items, errors) = load_all_with(
        &[root().join("suites/shaders")],
        &Launch::default(),
        &mut warnings,
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert!(items.len() >= 3);
    let mut stated = 0;
    for i in &items {
        let Item::Kernel(p) = i else {
            panic!("a shader is a kernel program")
        };
        let wrong = check_expectations(
            p,
            Options {
                max_states: 1_000_000,
                ..Options::default()
            },
        );
        assert!(wrong.is_empty(), "{}: {wrong:?}", p.name);
        stated += p.program.expect.len();
    }
    assert!(stated >= 12, "{stated}");
    // Plain accesses are named in a warning (the GLSL shaders use plain
    // buffer members).
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("peterson_glsl.comp") && w.contains("`turn`")),
        "{warnings:?}"
    );
}

#[test]
fn classify_takes_shaders_and_bad_ones_do_not_stop_the_batch() {
    let o = oracle(&[
        "classify",
        "suites/shaders/spinlock.wgsl",
        "tests/data/shaders/bad/division.wgsl",
        "suites/shaders/spinlock_glsl.comp",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains("spinlock ") && out.contains("spinlock_glsl"),
        "{out}"
    );
    assert!(out.contains("sequentially consistent"), "{out}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors, ["error: tests/data/shaders/bad/division.wgsl:5:21: Divide: the kernel language has no division"]);
}

#[test]
fn launch_flags_change_the_program() {
    let o = oracle(&[
        "translate",
        "--workgroups",
        "3",
        "--values",
        "8",
        "suites/shaders/spinlock.wgsl",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("values 8;") && out.contains("workgroups 3;"),
        "{out}"
    );
    assert!(
        out.contains("  // 27: if atomicCompareExchangeWeak(&lock, 0u, 1u).exchanged {"),
        "{out}"
    );
    // Three workgroups under HSA: still F; under OBE: P.
    let o = oracle(&[
        "classify",
        "--workgroups",
        "3",
        "--format",
        "csv",
        "suites/shaders/spinlock.wgsl",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().count() == 2, "{out}");
    let o = oracle(&["translate", "suites/README.md"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn explain_a_shader() {
    let o = oracle(&["explain", "--model", "HSA", "suites/shaders/spinlock.wgsl"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("F: termination is NOT guaranteed"), "{out}");
}
