//! Human-readable verdicts: the witness schedule of a failing verdict, or a
//! short reason for a passing one (`oracle explain`).

use crate::check::{Lasso, Witness};
use crate::fair_set;
use crate::product::Event;
use crate::Analysis;
use axb::{pseudo, Base, Fairness, Test};
use petgraph::graph::EdgeIndex;
use std::fmt::Write;

/// One line per event: number, thread, instruction, F before, state after.
fn schedule_lines(out: &mut String, test: &Test, a: &Analysis, edges: &[EdgeIndex], first: usize) {
    let g = &a.product.lts.graph;
    let locs = test.num_locs().max(1);
    for (i, &e) in edges.iter().enumerate() {
        let ev = g[e];
        let what = match ev {
            Event::Step {
                thread, pc, taken, ..
            } => {
                let th = &test.threads[thread as usize];
                let branch = if test.threads[thread as usize][pc as usize]
                    .is_branching(pc as usize, th.len())
                {
                    if taken {
                        "  (taken)"
                    } else {
                        "  (not taken)"
                    }
                } else {
                    ""
                };
                format!("{}{branch}", pseudo::at(test, thread as usize, pc as usize))
            }
            Event::Terminate { .. } => "terminates".to_string(),
        };
        let after = g.edge_endpoints(e).unwrap().1;
        let _ = writeln!(
            out,
            "  {:>3}  T{}  {:<44} F={:<9} -> {}",
            first + i,
            ev.thread(),
            what,
            fair_set::show(ev.fair()),
            a.product.describe(after, locs)
        );
    }
}

fn lasso_lines(out: &mut String, test: &Test, a: &Analysis, l: &Lasso, first: usize, from: &str) {
    if l.prefix.is_empty() {
        let _ = writeln!(out, "  (from {from})");
    }
    schedule_lines(out, test, a, &l.prefix, first);
    let _ = writeln!(out, "  --- repeats forever from here ---");
    schedule_lines(out, test, a, &l.cycle, first + l.prefix.len());
}

/// The full explanation of an analysis of `test` (called `name`).
pub fn explain(test: &Test, name: &str, a: &Analysis) -> String {
    let mut out = String::new();
    let states = a.product.lts.num_states();
    let transitions = a.product.lts.num_transitions();
    let verdict = if a.verdict.passes() {
        "P: termination is guaranteed"
    } else {
        "F: termination is NOT guaranteed"
    };
    let _ = writeln!(out, "{name} under {}: {verdict}", a.model.pretty());
    let _ = writeln!(out);
    out.push_str(&pseudo::print(test));
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Product space: {states} states, {transitions} transitions (memory, pcs, terminated threads, F)."
    );
    let locs = test.num_locs().max(1);
    let init = a.product.describe(a.product.lts.initial(), locs);
    let _ = writeln!(out, "Start: {init}");
    let _ = writeln!(out);
    match &a.witness {
        None => {
            let reason = match (a.model.base, a.model.fairness) {
                (Base::Unfair, _) => "the state space has no cycle, so every schedule finishes.".to_string(),
                (_, Fairness::Weak) => "no reachable cycle keeps every guaranteed thread stepping: each cycle has F empty or leaves a thread of F without a step, so a weakly fair scheduler must leave it and every schedule it allows finishes.".to_string(),
                (_, Fairness::Strong) => format!("from each of the {states} reachable states, the threads of F (with Terminates) can force the test to finish, or to a step taken while F is empty; a strongly fair scheduler cannot avoid that forever."),
            };
            let _ = writeln!(out, "Why: {reason}");
        }
        Some(Witness::Lasso(l)) => {
            let cycle_f = l
                .cycle
                .first()
                .map(|&e| a.product.lts.graph[e].fair())
                .unwrap_or(0);
            let intro = if a.model.base == Base::Unfair {
                "A schedule that never finishes (an unfair scheduler may pick it):".to_string()
            } else {
                format!(
                    "A weakly fair schedule that never finishes: every thread of F={} takes a step in the repeated part, yet the test never finishes.",
                    fair_set::show(cycle_f)
                )
            };
            let _ = writeln!(out, "{intro}");
            let _ = writeln!(out, "  F is the set of threads guaranteed fair execution before each step; the state is the one after it.");
            lasso_lines(&mut out, test, a, l, 1, "the start state");
        }
        Some(Witness::Trap {
            reach,
            trap,
            closure,
            stay,
        }) => {
            let _ = writeln!(
                out,
                "A reachable state from which the threads of F cannot force termination:"
            );
            let _ = writeln!(out, "  {}", a.product.describe(*trap, locs));
            let _ = writeln!(out, "Reached by:");
            if reach.is_empty() {
                let _ = writeln!(out, "  (it is the start state)");
            }
            schedule_lines(&mut out, test, a, reach, 1);
            let _ = writeln!(
                out,
                "From there, steps of threads in F and Terminates reach only {} state{}, none of which finishes or lets a thread step while F is empty. A strongly fair schedule that stays there forever:",
                closure.len(),
                if closure.len() == 1 { "" } else { "s" }
            );
            lasso_lines(&mut out, test, a, stay, reach.len() + 1, "that state");
        }
    }
    out
}
