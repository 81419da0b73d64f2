//! `choose goto L;` and `choose finitely goto L;` (docs/KERNEL.md §2.11):
//! a step the program does not decide, and one whose jump a run takes only
//! finitely often. Every expected verdict below is derived by hand in its
//! comment; the property tests (kernel_props.rs) check the reductions, the
//! lean tables and the witnesses on random programs with choices.

use oracle::kernel::{decide, flat_verdicts, KernelError, Options};
use progress_litmus::kernel::litmus;
use progress_litmus::kernel::ScopedModel;
use progress_litmus::Verdict;

fn row(src: &str) -> String {
    let p = litmus::parse(src).unwrap();
    let (v, _) = flat_verdicts(&p, Options::default()).unwrap();
    v.0.iter()
        .map(|v| if *v == Verdict::P { 'P' } else { 'F' })
        .collect()
}

fn under(src: &str, model: &str) -> Result<Verdict, KernelError> {
    let p = litmus::parse(src).unwrap();
    let m = ScopedModel::parse(model).unwrap();
    decide(&p, &m, Options::default()).map(|d| d.verdict)
}

const ALONE_FINITE: &str =
    "values 2;\nworkgroups 1;\nglobal x;\n\nkernel {\n  0: choose finitely goto 0;\n  1: x = 1;\n}\n";
const ALONE: &str =
    "values 2;\nworkgroups 1;\nglobal x;\n\nkernel {\n  0: choose goto 0;\n  1: x = 1;\n}\n";

#[test]
fn a_finite_choice_ends_and_an_unbounded_one_need_not() {
    // One invocation: its only infinite run jumps back to 0 forever. With
    // `finitely` that run is not a run (finitely many jumps): P under
    // every model, `unfair` included. Without, it is a run on which the
    // invocation steps all the time, so every fairness admits it: F.
    assert_eq!(row(ALONE_FINITE), "PPPPPPPPPPP");
    assert_eq!(row(ALONE), "FFFFFFFFFFF");
}

#[test]
fn a_finite_choice_does_not_excuse_a_wait() {
    // Workgroup 0 jumps finitely often, then sets x; workgroup 1 waits for
    // x. Under HSA the lowest-numbered workgroup still running, here
    // workgroup 0, is guaranteed: it runs out its finitely many jumps and
    // sets x: P. Under OBE only a workgroup that has started is, and
    // workgroup 0 may never start: F. Unfair: F. The same row as the
    // program with `goto 1` in place of the choice.
    let src = "values 2;\nworkgroups 2;\nglobal x;\nworkgroup 0 {\n  0: choose finitely goto 0;\n  1: x = 1;\n}\nworkgroup 1 {\n  0: if (x == 0) goto 0;\n}\n";
    let plain = src.replace("choose finitely goto 0", "goto 1");
    assert_eq!(row(src), row(&plain));
    assert_eq!(under(src, "unfair").unwrap(), Verdict::F);
    assert_eq!(under(src, "HSA").unwrap(), Verdict::P);
    assert_eq!(under(src, "OBE").unwrap(), Verdict::F);
    assert_eq!(under(src, "LOBE").unwrap(), Verdict::P);
}

#[test]
fn lockstep_lanes_choose_each_for_itself() {
    // Two lanes of one lockstep subgroup: each lane may jump on its own, so
    // the subgroup diverges; with finitely many jumps both lanes end: P.
    // Without, a lane may jump forever: F.
    let finite = "values 2;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal x;\n\nkernel {\n  0: choose finitely goto 0;\n  1: x = 1;\n}\n";
    let unbounded = finite.replace(" finitely", "");
    assert_eq!(
        under(finite, "fair, subgroup=lockstep").unwrap(),
        Verdict::P
    );
    assert_eq!(
        under(&unbounded, "fair, subgroup=lockstep").unwrap(),
        Verdict::F
    );
    // A lane that jumped waits at a barrier for the other: a lane that
    // never jumps reaches it, the other arrives after finitely many jumps.
    let barrier = "values 2;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal x;\n\nkernel {\n  0: choose finitely goto 0;\n  1: barrier();\n}\n";
    assert_eq!(
        under(barrier, "fair, subgroup=lockstep").unwrap(),
        Verdict::P
    );
    assert_eq!(under(barrier, "fair").unwrap(), Verdict::P);
}

/// CM, SM and SCF branch collectively and refuse a choice; under SSO a
/// lane branches alone, so it chooses alone (docs/KERNEL.md §2.11): a
/// finite choice ends, an unbounded one need not, as interleaved.
#[test]
fn the_collective_simt_step_models_refuse_a_choice_and_sso_takes_it() {
    for m in ["cm", "sm", "scf"] {
        let e = under(ALONE_FINITE, &format!("fair, subgroup={m}")).unwrap_err();
        assert!(
            e.to_string().contains("the SIMT-Step models whose branches are collective (cm, sm, scf) take deterministic programs only"),
            "{e}"
        );
    }
    assert_eq!(
        under(ALONE_FINITE, "fair, subgroup=sso").unwrap(),
        Verdict::P
    );
    assert_eq!(under(ALONE, "fair, subgroup=sso").unwrap(), Verdict::F);
    // Lanes that chose apart meet at the merge, and vote together.
    let two = "values 2;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal x;\n\nkernel {\n  0: choose goto 2 merge 2;\n  1: x = 1;\n  2: r = subgroupAll(1);\n  3: x = r;\n}\n";
    assert_eq!(under(two, "fair, subgroup=sso").unwrap(), Verdict::P);
}

#[test]
fn choices_print_and_parse_back_and_choose_is_still_a_name() {
    for src in [ALONE_FINITE, ALONE] {
        let p = litmus::parse(src).unwrap();
        assert_eq!(litmus::print(&p), src);
    }
    // A register named `choose` is assigned; a label named `finitely` is
    // a target.
    let named = "values 2;\nworkgroups 1;\nglobal x;\n\nkernel {\n  choose = 1;\n  x = choose;\n  choose goto finitely;\n  finitely: x = 0;\n}\n";
    let p = litmus::parse(named).unwrap();
    assert_eq!(p.codes[0].instrs.len(), 4);
    assert!(litmus::print(&p).contains("choose goto finitely;"));
    assert_eq!(row(named), "PPPPPPPPPPP");
}

#[test]
fn bad_choices_and_subgroup_lines_are_one_positioned_error() {
    let cases = [
        ("values 2;\nworkgroups 1;\nsubgroups hardware;\nsubgroups hardware;\nglobal x;\nkernel {\n  x = 1;\n}\n", "4:1: `subgroups` is given twice"),
        ("values 2;\nworkgroups 1;\nsubgroups soft;\nglobal x;\nkernel {\n  x = 1;\n}\n", "3:11: expected `hardware`, found `soft`"),
        ("values 2;\nworkgroups 1;\nglobal x;\nkernel {\n  choose finitely x;\n}\n", "5:19: expected `goto`, found `x`"),
        ("values 2;\nworkgroups 1;\nglobal x;\nkernel {\n  choose goto 7;\n}\n", "5:3: jump target 7 is past END (1)"),
    ];
    for (src, want) in cases {
        let e = litmus::parse(src).unwrap_err().to_string();
        assert!(e.contains(want), "{want}: {e}");
    }
    // `subgroups hardware;` round-trips, and is what a translation writes.
    let src = "values 2;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nsubgroups hardware;\nglobal x;\n\nkernel {\n  x = 1;\n}\n";
    let p = litmus::parse(src).unwrap();
    assert!(p.hardware_subgroups);
    let printed = litmus::print(&p);
    assert!(printed.contains("\nsubgroups hardware;\n"), "{printed}");
    assert_eq!(litmus::parse(&printed).unwrap(), p);
}
