//! The shared-space engine ([`oracle::verdicts`]) against the per-model
//! products ([`oracle::verdicts_per_model`], the rules of `check` on one
//! product space per base model) and against the verdicts stored in every
//! committed suite.

use progress_litmus::{Instr, Model, Target, Test, Verdicts};
use proptest::prelude::*;
use std::path::PathBuf;

/// Programs past what the synthesizer makes: up to four threads, four
/// instructions per thread, three locations and values 0..3, so that
/// HSA's and LOBE's preference for low ids, terminated threads in F
/// updates, and values the memory packing must widen for are all exercised.
fn program() -> impl Strategy<Value = Test> {
    let instr = |len: usize| {
        (0u8..3, 0u8..4, 0..=len, prop::option::of(0u8..4)).prop_map(
            move |(loc, check, j, exch)| Instr {
                loc,
                check,
                jump: Target::from_pc(j, len),
                exch,
            },
        )
    };
    let thread = (1usize..=4).prop_flat_map(move |len| prop::collection::vec(instr(len), len));
    prop::collection::vec(thread, 1..=4).prop_map(|threads| Test::new(threads).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(debug_assertions) { 300 } else { 3000 },
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_shared_space_agrees_with_the_per_model_products(test in program()) {
        let shared = oracle::verdicts(&test);
        let per_model = oracle::verdicts_per_model(&test);
        for m in Model::ALL {
            prop_assert_eq!(shared.get(m), per_model.get(m), "{} {:?}", m, test);
        }
        // The bounded and batch forms give the same answer.
        prop_assert_eq!(oracle::try_verdicts(&test, usize::MAX), Ok(shared));
        prop_assert_eq!(oracle::try_verdicts_all(&[&test], usize::MAX), vec![Ok(shared)]);
    }
}

fn committed_suites() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../suites");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&root).unwrap() {
        let dir = e.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let file = dir.join(format!("{name}.ron"));
        if file.is_file() {
            out.push(file);
        }
    }
    out.sort();
    out
}

/// Every committed suite stores the verdicts the oracle gave when it was
/// made (by the per-model engine); the shared space re-derives them all.
#[test]
fn every_stored_verdict_of_the_committed_suites_is_re_derived() {
    let mut checked = 0;
    for file in committed_suites() {
        let tests = progress_litmus::axb::load::load_file(&file).unwrap();
        let refs: Vec<&Test> = tests.iter().map(|t| &t.entry.test).collect();
        let got = oracle::try_verdicts_all(&refs, oracle::DEFAULT_MAX_STATES);
        for (t, v) in tests.iter().zip(got) {
            let stored = t.entry.verdicts.expect("committed suites are labelled");
            assert_eq!(v, Ok(stored), "{} {}", file.display(), t.name);
            checked += 1;
        }
    }
    // oopsla21 483, 2t2i .. 3t4i 11,450.
    assert!(checked >= 483 + 11_450, "{checked}");
}

/// The per-model products on every committed test (release builds only:
/// six product spaces per test).
#[test]
fn the_per_model_products_agree_on_every_committed_test() {
    if cfg!(debug_assertions) {
        eprintln!("skipped in debug builds: run `cargo test --release`");
        return;
    }
    for file in committed_suites() {
        let tests = progress_litmus::axb::load::load_file(&file).unwrap();
        for t in &tests {
            let v: Verdicts = oracle::verdicts_per_model(&t.entry.test);
            assert_eq!(Some(v), t.entry.verdicts, "{} {}", file.display(), t.name);
        }
    }
}

/// A test whose states need more than 64 bits (eight threads, a thread of
/// fourteen instructions, values up to 15 at eight locations) takes the
/// u128 packing: its verdicts against the per-model products (release
/// builds; 400 thousand states).
#[test]
fn a_test_wider_than_64_bits_decides_like_the_per_model_products() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/wide-8t.txt");
    let test = progress_litmus::axb::text::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(!oracle::axb::shared_space::Layout::new(&test).fits_u64());
    let v = oracle::verdicts(&test);
    assert_eq!(v.csv(), "F,F,F,P,F,F,F,P,F,F,F");
    if cfg!(debug_assertions) {
        eprintln!("per-model comparison skipped in debug builds: run `cargo test --release`");
        return;
    }
    assert_eq!(oracle::verdicts_per_model(&test), v);
}
