//! Single-pass scans (issue 49): the hand-translated control skeletons of
//! GPUPrefixSums' shipped WGSL scans (suites/scans/README.md) give their
//! authors' verdicts, with and without reductions where the unreduced
//! product fits.

use oracle::kernel::product::Reductions;
use oracle::kernel::{check_expectations, decide, outcome, Options};
#[path = "../../tests/support/programs.rs"]
mod programs;

use progress_litmus::kernel::load::NamedProgram;
use progress_litmus::kernel::ScopedModel;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn skeletons() -> Vec<NamedProgram> {
    programs::kernel_programs(&root().join("suites/scans"))
}

#[test]
fn the_skeletons_give_the_authors_verdicts() {
    let all = skeletons();
    let names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["scan-csdl", "scan-csdldf"]);
    for p in &all {
        assert_eq!(p.program.expect.len(), 6, "{}", p.name);
        let opts = Options {
            max_states: 2_000_000,
            reductions: Reductions::ALL,
        };
        let wrong = check_expectations(p, opts);
        assert!(wrong.is_empty(), "{}: {wrong:?}", p.name);
    }
}

/// The look-back fails exactly where a workgroup that has started may
/// stop being scheduled (HSA, unfair); the fallback under none. At 2
/// workgroups, where the unreduced products fit 2M states (at 3 they do
/// not), reduced and unreduced agree.
#[test]
fn the_verdicts_hold_on_the_unreduced_product_under_every_flat_model() {
    for mut p in skeletons() {
        p.program.workgroups = 2;
        p.program.wg_code.truncate(2);
        for m in ScopedModel::all_flat() {
            let full = Options {
                max_states: 2_000_000,
                reductions: Reductions::NONE,
            };
            let reduced = Options {
                reductions: Reductions::ALL,
                ..full
            };
            let a = decide(&p.program, &m, reduced).unwrap();
            let b = decide(&p.program, &m, full).unwrap();
            assert_eq!(outcome(&a), outcome(&b), "{} under {m}", p.name);
            let fails = p.name == "scan-csdl"
                && ["HSA", "HSA_STRONG", "UNFAIR"].contains(&m.to_string().as_str());
            assert_eq!(a.verdict.passes(), !fails, "{} under {m}", p.name);
            assert!(!a.deadlock, "{} under {m}", p.name);
        }
    }
}
