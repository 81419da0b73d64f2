//! Human-readable verdicts: the witness schedule of a failing verdict, or a
//! short reason for a passing one (`oracle explain`).

use crate::axb::check::{Lasso, Witness};
use crate::axb::fair_set;
use crate::axb::lts;
use crate::axb::product::Event;
use crate::Analysis;
use petgraph::graph::EdgeIndex;
use progress_litmus::{axb::pseudo, Base, Fairness, Test};
use serde_json::{json, Value};
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

/// Why a passing verdict passes, in one sentence.
fn pass_reason(a: &Analysis) -> String {
    let states = a.product.lts.num_states();
    match (a.model.base, a.model.fairness) {
        (Base::Unfair, _) => "the state space has no cycle, so every schedule finishes.".to_string(),
        (_, Fairness::Weak) => "no reachable cycle keeps every guaranteed thread stepping: each cycle has F empty or leaves a thread of F without a step, so a weakly fair scheduler must leave it and every schedule it allows finishes.".to_string(),
        (_, Fairness::Strong) => format!("from each of the {states} reachable states, the threads of F (with Terminates) can force the test to finish, or to a step taken while F is empty; a strongly fair scheduler cannot avoid that forever."),
    }
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
            let _ = writeln!(out, "Why: {}", pass_reason(a));
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

/// Steps as JSON: number (from `first`), thread, event, pc, instruction,
/// whether the comparison held, F before, and the state after.
fn steps_json(test: &Test, a: &Analysis, edges: &[EdgeIndex], first: usize) -> Vec<Value> {
    let g = &a.product.lts.graph;
    let locs = test.num_locs().max(1);
    edges
        .iter()
        .enumerate()
        .map(|(i, &e)| {
            let mut o = serde_json::Map::new();
            o.insert("step".into(), (first + i).into());
            o.extend(lts::event_json(test, &g[e]));
            let (_, after) = g.edge_endpoints(e).expect("a witness edge is in the space");
            o.insert(
                "state_after".into(),
                lts::state_json(&a.product, after, locs),
            );
            Value::Object(o)
        })
        .collect()
}

/// The explanation as JSON (`oracle explain --format json`): the verdict,
/// the model, the size of the product space and, when termination is not
/// guaranteed, the witness as a schedule of steps (`schedule`) followed by
/// a part that repeats forever (`repeats`); for strong fairness also the
/// trap state the schedule reaches and how many states the fair threads
/// are confined to from there. A passing verdict comes with its reason.
pub fn explain_json(test: &Test, name: &str, a: &Analysis) -> Value {
    let locs = test.num_locs().max(1);
    let witness = match &a.witness {
        None => Value::Null,
        Some(Witness::Lasso(l)) => json!({
            "kind": if a.model.base == Base::Unfair { "cycle" } else { "fair_cycle" },
            "schedule": steps_json(test, a, &l.prefix, 1),
            "repeats": steps_json(test, a, &l.cycle, l.prefix.len() + 1),
        }),
        Some(Witness::Trap {
            reach,
            trap,
            closure,
            stay,
        }) => {
            let mut schedule = steps_json(test, a, reach, 1);
            schedule.extend(steps_json(test, a, &stay.prefix, reach.len() + 1));
            json!({
                "kind": "trap",
                "trap": lts::state_json(&a.product, *trap, locs),
                "trap_reached_after": reach.len(),
                "confined_to_states": closure.len(),
                "schedule": schedule,
                "repeats": steps_json(test, a, &stay.cycle, reach.len() + stay.prefix.len() + 1),
            })
        }
    };
    json!({
        "test": name,
        "model": a.model.name(),
        "model_pretty": a.model.pretty(),
        "verdict": a.verdict.as_char().to_string(),
        "terminates": a.verdict.passes(),
        "program": pseudo::print(test),
        "states": a.product.lts.num_states(),
        "transitions": a.product.lts.num_transitions(),
        "start": lts::state_json(&a.product, a.product.lts.initial(), locs),
        "reason": if a.verdict.passes() { Value::from(pass_reason(a)) } else { Value::Null },
        "witness": witness,
    })
}
