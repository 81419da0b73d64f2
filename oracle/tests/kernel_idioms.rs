//! The idiom library (suites/idioms): every stated verdict holds, with and
//! without reductions, every file is canonical up to comments, names its
//! sources, and explains.

use oracle::kernel::product::Reductions;
use oracle::kernel::{check_expectations, outcome};
use oracle::kernel::{decide, explain, Options};
use progress_litmus::kernel::litmus;
#[path = "../../tests/support/programs.rs"]
mod programs;

use progress_litmus::kernel::load::NamedProgram;
use progress_litmus::kernel::Outcome;
use std::path::PathBuf;

fn idioms() -> Vec<NamedProgram> {
    programs::kernel_programs(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms"))
}

#[test]
fn every_stated_verdict_holds() {
    let all = idioms();
    assert!(all.len() >= 20, "{} idioms", all.len());
    let mut wrong = Vec::new();
    let mut stated = 0;
    for p in &all {
        assert!(
            !p.program.expect.is_empty(),
            "{}: no expected verdict",
            p.name
        );
        for red in [Reductions::ALL, Reductions::NONE] {
            let opts = Options {
                max_states: 2_000_000,
                reductions: red,
            };
            for (m, want, got) in check_expectations(p, opts) {
                wrong.push(format!(
                    "{} under {m} ({red:?}): expected {}, got {got}",
                    p.name,
                    want.word()
                ));
            }
        }
        stated += p.program.expect.len();
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(stated >= 100, "{stated} stated verdicts");
}

#[test]
fn reductions_change_no_verdict_and_no_deadlock_on_any_idiom_model() {
    // Beyond the stated verdicts: the 11 flat models and each file's own
    // expectation models, both fairness strengths, reduced and not.
    for p in idioms() {
        let mut models: Vec<_> = progress_litmus::kernel::ScopedModel::all_flat().to_vec();
        models.extend(p.program.expect.iter().map(|e| e.model));
        for m in models {
            let full = Options {
                max_states: 2_000_000,
                reductions: Reductions::NONE,
            };
            let reduced = Options {
                reductions: Reductions::ALL,
                ..full
            };
            let a = decide(&p.program, &m, full).unwrap();
            let b = decide(&p.program, &m, reduced).unwrap();
            assert_eq!(outcome(&a), outcome(&b), "{} under {m}", p.name);
            assert!(b.states <= a.states, "{} under {m}", p.name);
        }
    }
}

#[test]
fn idiom_files_are_canonical_up_to_comments_and_name_their_sources() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms");
    for p in idioms() {
        let src = std::fs::read_to_string(&p.source).unwrap();
        assert!(src.contains("Source"), "{}: names no source", p.name);
        let code: String = src
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(litmus::print(&p.program), code, "{}", p.name);
        assert_eq!(litmus::parse(&code).unwrap(), p.program);
        assert!(p.source.starts_with(&dir));
    }
}

#[test]
fn failing_verdicts_explain_with_a_witness_and_deadlocks_say_so() {
    for p in idioms() {
        for e in &p.program.expect {
            let text = explain::explain(
                &p.program,
                &p.name,
                &e.model,
                Options::default(),
                explain::Show::Program,
            )
            .unwrap();
            assert!(text.contains("memory sequentially consistent"), "{text}");
            match e.outcome {
                Outcome::P => assert!(text.contains("P: termination is guaranteed"), "{text}"),
                Outcome::F => assert!(
                    text.contains("repeats forever") || text.contains("deadlocks"),
                    "{}: {text}",
                    p.name
                ),
                Outcome::Deadlock => assert!(text.contains("a schedule deadlocks"), "{text}"),
            }
        }
    }
}
