//! The kernel checker against the AXB engine: AXB tests are kernel programs
//! (one invocation per workgroup), and under the eleven models the two
//! independent implementations must agree on every verdict.

use oracle::kernel::product::Reductions;
use oracle::kernel::{flat_verdicts, Options};
use progress_litmus::kernel::embed;
use progress_litmus::{Instr, Model, Target, Test, Verdicts};
use proptest::prelude::*;

fn kernel(test: &Test, reductions: Reductions) -> Verdicts {
    let p = embed::from_axb(test);
    let (v, deadlock) = flat_verdicts(
        &p,
        Options {
            max_states: 1_000_000,
            reductions,
        },
    )
    .unwrap();
    assert!(!deadlock, "AXB tests never deadlock");
    v
}

fn diff(a: &Verdicts, b: &Verdicts) -> Vec<&'static str> {
    Model::ALL
        .iter()
        .filter(|m| a.get(**m) != b.get(**m))
        .map(|m| m.name())
        .collect()
}

#[test]
fn every_published_test_gets_the_axb_engines_verdicts() {
    let tests = progress_litmus::axb::published::tests().unwrap();
    assert_eq!(tests.len(), 483);
    let mut wrong = Vec::new();
    for t in &tests {
        let want = oracle::verdicts(&t.entry.test);
        for red in [Reductions::NONE, Reductions::ALL] {
            let got = kernel(&t.entry.test, red);
            if got != want {
                wrong.push(format!("{} ({red:?}): {:?}", t.name, diff(&got, &want)));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} disagreements:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Every test of the five complete suites, with the verdicts stored in the
/// suite files (release builds only: 11,450 tests).
#[test]
fn every_suite_test_gets_its_stored_verdicts() {
    if cfg!(debug_assertions) {
        return;
    }
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../suites");
    let mut n = 0;
    let mut wrong = Vec::new();
    for cfg in ["2t2i", "2t3i", "2t4i", "3t3i", "3t4i"] {
        let path = root.join(cfg).join(format!("{cfg}.ron"));
        let tests = progress_litmus::axb::load::load_file(&path).unwrap();
        for t in tests {
            let want = t.entry.verdicts.expect("labelled");
            let got = kernel(&t.entry.test, Reductions::ALL);
            if got != want {
                wrong.push(format!("{}: {:?}", t.name, diff(&got, &want)));
            }
            n += 1;
        }
    }
    assert_eq!(n, 11450);
    assert!(
        wrong.is_empty(),
        "{} disagreements:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

fn instr(len: usize) -> impl Strategy<Value = Instr> {
    (0u8..3, 0u8..3, 0..=len, prop::option::of(0u8..3)).prop_map(move |(loc, check, j, exch)| {
        Instr {
            loc,
            check,
            jump: Target::from_pc(j, len),
            exch,
        }
    })
}

fn program() -> impl Strategy<Value = Test> {
    let thread = (1usize..=3).prop_flat_map(|len| prop::collection::vec(instr(len), len));
    prop::collection::vec(thread, 1..=4).prop_map(|threads| {
        let mut t = Test::new(threads).unwrap();
        t.normalize();
        t
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_axb_programs_agree(test in program()) {
        let want = oracle::verdicts(&test);
        let got = kernel(&test, Reductions::NONE);
        prop_assert_eq!(got, want, "{:?}", test);
        let reduced = kernel(&test, Reductions::ALL);
        prop_assert_eq!(reduced, want, "reduced: {:?}", test);
    }
}
