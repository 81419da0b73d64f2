//! The counted product (docs/KERNEL.md §8.10, issue 43 items 1 and 2):
//! workgroups of real launch sizes. It agrees with the explicit product
//! on every idiom and look-back it decides, and decides the leader ticket
//! lock at 64 and 256 invocations per workgroup with the row it has at 2.
//! (Random programs: oracle/tests/kernel_props.rs.)

use oracle::kernel::counted;
use oracle::kernel::product::Reductions;
use oracle::kernel::{decide_both, flat_verdicts, Options};
use progress_litmus::kernel::litmus;
use progress_litmus::kernel::program::Program;
use progress_litmus::kernel::ScopedModel;
#[path = "../../tests/support/programs.rs"]
mod programs;

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn opts(reduce: bool) -> Options {
    Options {
        max_states: 2_000_000,
        reductions: if reduce {
            Reductions::ALL
        } else {
            Reductions::NONE
        },
    }
}

/// Verdict and deadlock of both fairnesses, for comparing.
fn show(d: (oracle::kernel::Decision, oracle::kernel::Decision)) -> String {
    format!("{:?} {:?} {}", d.0.verdict, d.1.verdict, d.0.deadlock)
}

#[test]
fn the_counted_product_agrees_on_every_idiom_it_decides() {
    let mut compared = 0;
    for dir in ["../suites/idioms", "../suites/scans", "benches/data"] {
        for p in programs::kernel_programs(&root().join(dir)) {
            if p.name.starts_with("lookback-4x") || p.name == "seqlock" {
                continue; // seconds each in debug builds; the 3 x 3 stays
            }
            let mut models: Vec<ScopedModel> = ScopedModel::all_flat().to_vec();
            models.extend(p.program.expect.iter().map(|e| e.model));
            for m in models {
                if counted::supports(&p.program, &m).is_err() {
                    continue;
                }
                let Ok(explicit) = decide_both(&p.program, &m, opts(true)) else {
                    continue;
                };
                for reduce in [true, false] {
                    // The counted product has no symmetry between
                    // workgroups and no partial-order reduction yet: the
                    // scan skeletons pass the bound.
                    let small = Options {
                        max_states: 30_000,
                        ..opts(reduce)
                    };
                    match counted::decide_both(&p.program, &m, small) {
                        Err(e) if e.is_bound() => continue,
                        Err(e) => panic!("{} under {m}: {e}", p.name),
                        Ok(got) => assert_eq!(
                            show(got),
                            show(explicit),
                            "{} under {m}, reduced: {reduce}",
                            p.name
                        ),
                    }
                    compared += 1;
                }
            }
        }
    }
    eprintln!("{compared} program, model and reduction triples compared");
    assert!(
        compared >= 300,
        "{compared} program, model and reduction triples"
    );
}

/// The leader ticket lock at `w` workgroups of `n`.
fn leader(w: u32, n: u32) -> Program {
    let src =
        std::fs::read_to_string(root().join("benches/data/ticket-lock-leader.litmus")).unwrap();
    let src = src
        .replace("workgroups 3;", &format!("workgroups {w};"))
        .replace("workgroup_size 2;", &format!("workgroup_size {n};"));
    litmus::parse(&src).unwrap()
}

#[test]
fn a_leader_ticket_lock_keeps_its_row_at_real_workgroup_sizes() {
    let row = |p: &Program| flat_verdicts(p, opts(true)).unwrap();
    let at_two = row(&leader(3, 2));
    let sizes: &[(u32, u32)] = if cfg!(debug_assertions) {
        &[(3, 64)]
    } else {
        &[(3, 64), (3, 256), (4, 64), (4, 256)]
    };
    for &(w, n) in sizes {
        assert_eq!(row(&leader(w, n)), at_two, "{w} x {n}");
    }
    // Also its own stated verdicts at 3 x 2, and the counted product
    // agrees with the explicit one there.
    for e in &leader(3, 2).expect {
        let both = counted::decide_both(&leader(3, 2), &e.model, opts(true)).unwrap();
        let d = if e.model.fairness == progress_litmus::Fairness::Weak {
            both.0
        } else {
            both.1
        };
        assert_eq!(oracle::kernel::outcome(&d), e.outcome, "{}", e.model);
    }
}

#[test]
fn what_the_counted_product_does_not_model_is_one_clear_error() {
    let big = leader(2, 16);
    let lockstep = ScopedModel::parse("OBE, subgroup=lockstep").unwrap();
    let hsa_inside = ScopedModel::parse("OBE, workgroup=hsa").unwrap();
    for m in [lockstep, hsa_inside] {
        let mut p = big.clone();
        p.subgroup_size = 4;
        let e = decide_both(&p, &m, opts(true)).unwrap_err().to_string();
        assert!(
            e.contains("the explicit product holds at most 8 invocations per workgroup"),
            "{e}"
        );
        assert!(e.contains("the counted product"), "{e}");
    }
}

#[test]
fn a_fault_in_a_large_workgroup_is_refused_not_decided() {
    let src = "values 4;\nworkgroups 1;\nworkgroup_size 32;\nglobal a[2];\n\nkernel {\n  0: r = 3;\n  1: a[r] = 1;\n}\n";
    let p = litmus::parse(src).unwrap();
    let e = decide_both(&p, &ScopedModel::parse("OBE").unwrap(), opts(true))
        .unwrap_err()
        .to_string();
    assert!(e.contains("index 3 is out of bounds"), "{e}");
}

/// Ids read as data make every invocation of a workgroup a class of its
/// own: at 8 workgroups of 256 the counted product explored for minutes
/// before the budget stopped it. It is refused at once, saying why.
#[test]
fn a_large_workgroup_reading_ids_as_data_is_refused_at_once() {
    let src = "values 256;\nworkgroups 8;\nworkgroup_size 256;\nglobal a[2];\n\nkernel {\n  0: r = local_id & 1;\n  1: a[r] = 1;\n  2: barrier();\n}\n";
    let p = litmus::parse(src).unwrap();
    let e = decide_both(&p, &ScopedModel::parse("OBE").unwrap(), opts(true))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("reading ids as data makes each of its 256 invocations a class of its own"),
        "{e}"
    );
}
