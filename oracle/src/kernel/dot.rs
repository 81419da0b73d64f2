//! Graphviz rendering of a kernel program's state space (`oracle lts
//! --dot`): the product with a model (fair sets on states, all-terminated
//! states drawn double), or the program's own space (steps only).

use super::explain::{describe_full, move_text, who};
use super::product::{Kernel, Move, Reductions};
use super::{with_words, KernelError, Options};
use progress_litmus::axb::space::{explore_metered, Meter};
use progress_litmus::kernel::machine::Packed;
use progress_litmus::kernel::program::Program;
use progress_litmus::kernel::{Sched, ScopedModel};
use std::cell::RefCell;

fn product_dot<S: Packed>(
    k: &Kernel,
    name: &str,
    max_states: usize,
) -> Result<String, KernelError> {
    let p = super::product::build::<S>(k, max_states)?;
    let mut dot = progress_litmus::axb::space::to_dot(
        &p.lts.graph,
        name,
        |_, s| describe_full(k, s.as_ref()),
        |m: &Move| format!("{} {}", who(k, *m), move_text(k, *m)),
    );
    let extra: String = p
        .lts
        .graph
        .node_indices()
        .filter(|&n| k.all_done(p.lts.graph[n].as_ref()))
        .map(|n| format!("  s{} [peripheries=2];\n", n.index()))
        .collect();
    dot.truncate(dot.len() - 2);
    dot.push_str(&extra);
    dot.push_str("}\n");
    Ok(dot)
}

fn program_dot<S: Packed>(
    k: &Kernel,
    name: &str,
    max_states: usize,
) -> Result<String, KernelError> {
    let m = &k.machine;
    let fault = RefCell::new(None);
    let mut init = S::default();
    m.init(init.as_mut());
    let mut buf = Vec::new();
    let mut meter = Meter::new(super::budget(max_states));
    let lts = explore_metered(init, max_states, &mut meter, 0, |s: S, emit| {
        for a in 0..m.num_actors() {
            buf.clear();
            if let Err(f) = m.steps(&s, a, &mut buf) {
                fault.borrow_mut().get_or_insert(f);
                return;
            }
            for &(info, t) in &buf {
                emit(Move::step(a, info), t);
            }
        }
    })
    .map_err(|e| super::product::exceeded(max_states, e))?;
    if let Some(f) = fault.into_inner() {
        return Err(KernelError::Fault(f));
    }
    Ok(progress_litmus::axb::space::to_dot(
        &lts.graph,
        name,
        |_, s| m.describe(s.as_ref()),
        |mv: &Move| format!("{} {}", who(k, *mv), move_text(k, *mv)),
    ))
}

/// The state space as DOT: the product with `model`, or without one the
/// program's own space (lanes in lockstep if the program's model says so).
pub fn to_dot(
    program: &Program,
    name: &str,
    model: Option<&ScopedModel>,
    opts: Options,
) -> Result<String, KernelError> {
    match model {
        Some(m) => {
            let k = Kernel::new(program, m, Reductions::NONE)?;
            with_words!(k.words, product_dot(&k, name, opts.max_states))
        }
        None => {
            let lockstep = program.model.is_some_and(|m| m.subgroup == Sched::Lockstep);
            let mut m = ScopedModel::flat(progress_litmus::Model::ALL[3]);
            if lockstep {
                m.subgroup = Sched::Lockstep;
            }
            let k = Kernel::new(program, &m, Reductions::NONE)?;
            with_words!(k.words, program_dot(&k, name, opts.max_states))
        }
    }
}
