//! The counted product (docs/KERNEL.md §8.10): workgroups of real launch
//! sizes, decided by counting the invocations of each record instead of
//! naming them.
//!
//! The explicit product ([`super::product`]) keeps every invocation's pc
//! and registers, at most 16 invocations in all. Real shaders declare
//! `@workgroup_size(64)` to `(256)`, and most of their invocations do the
//! same thing: wait at a barrier while one leader works. Here a workgroup
//! is a multiset of invocation records (`counted/space.rs`); once its last read of
//! an id is behind it, an invocation is one of a count, so a workgroup
//! of 256 whose leader spins while 255 wait is a handful of states.
//!
//! The verdict rules are those of §4.3, with one entity per *class*
//! (workgroup, record) inside a workgroup whose invocations are
//! guaranteed: a class that can move at every state of a component and
//! never moves inside it blocks the component (some invocation of it never
//! moves); where every such class moves, taking its members in the order
//! they joined it is a weakly fair run (§8.10 argues both). Workgroups and
//! the device keep their identities, so every device scheduler, the
//! occupancy bound and the priority scheduler apply as in the explicit
//! product.
//!
//! It decides programs whose invocations are interchangeable inside a
//! workgroup: interleaved lanes, a fair or unfair scheduler at the
//! workgroup and subgroup scopes, and subgroup collectives only in
//! subgroups of one lane ([`supports`]). The tests compare it with the
//! explicit product on every program both decide.

mod reduce;
mod rules;
mod space;
mod symmetry;

use super::stats::Stats;
use super::{Decision, KernelError, Options};
use progress_litmus::axb::space::OutOfMemory;
use progress_litmus::kernel::budget::budget;
use progress_litmus::kernel::model::Mode;
use progress_litmus::kernel::program::{Instr, Program, MAX_WG_SIZE};
use progress_litmus::kernel::{Sched, ScopedModel};
use progress_litmus::Verdict;
use space::{Space, St};
use std::collections::HashMap;

/// Whether the counted product decides `program` under `model`; the
/// reason it does not otherwise.
pub fn supports(program: &Program, model: &ScopedModel) -> Result<(), String> {
    let why = |m: &str| {
        Err(format!(
            "the counted product, which decides workgroups of more than 8 invocations, {m}"
        ))
    };
    if program.subgroup_size.max(1) > 1 && program.hardware_subgroups {
        return why("does not model lockstep subgroups: give --subgroup-size 1, or --subgroup-scheduling fair");
    }
    if model.subgroup.mode() != Mode::Interleaved {
        return why(&format!(
            "does not model `subgroup={}`: its lanes interleave",
            model.subgroup.word()
        ));
    }
    let s = program.subgroup_size.max(1) as usize;
    let subgroups = program.workgroup_size as usize / s;
    let blind = |x: Sched| matches!(x, Sched::Fair | Sched::Unfair);
    if (subgroups > 1 && !blind(model.workgroup)) || (s > 1 && !blind(model.subgroup)) {
        return why("needs a fair or unfair scheduler inside workgroups (one that ignores ids)");
    }
    if subgroups > 1 && s > 1 && model.workgroup == Sched::Fair && model.subgroup == Sched::Unfair {
        return why("does not keep subgroups apart: `workgroup=fair, subgroup=unfair` guarantees each subgroup as a whole");
    }
    let collective = program.codes.iter().any(|c| {
        c.instrs
            .iter()
            .any(|i| matches!(i, Instr::Collective { .. }))
    });
    if s > 1 && collective {
        return why("takes subgroup collectives only in subgroups of one invocation");
    }
    if program.workgroup_size as usize > MAX_WG_SIZE && space::id_regions(program).is_none() {
        return why(&format!(
            "counts a workgroup of more than {MAX_WG_SIZE} only where every read of an id compares it with a constant, in subgroups of one invocation: reading ids as data makes each of its {} invocations a class of its own",
            program.workgroup_size
        ));
    }
    if program.codes.iter().any(|c| c.regs.len() > 8) {
        return why("takes at most 8 registers per code block");
    }
    Ok(())
}

/// Whether the invocations of a guaranteed workgroup are guaranteed (each
/// scope between the workgroup and them fair, or with one child).
fn invocations_guaranteed(program: &Program, model: &ScopedModel) -> bool {
    let s = program.subgroup_size.max(1) as usize;
    let subgroups = program.workgroup_size as usize / s;
    (subgroups == 1 || model.workgroup == Sched::Fair) && (s == 1 || model.subgroup == Sched::Fair)
}

/// The weak and strong verdicts of `program` under `model` (its own
/// fairness ignored) on the counted product.
pub fn decide_both(
    program: &Program,
    model: &ScopedModel,
    opts: Options,
) -> Result<(Decision, Decision), KernelError> {
    supports(program, model).map_err(KernelError::Unsupported)?;
    let red = opts.reductions;
    let sym = red.symmetry && symmetry::workgroups_interchangeable(program, model);
    let sp = Space::new(program, *model, red.local_first, sym);
    let g = build(&sp, opts.max_states)?;
    let inv = invocations_guaranteed(program, model);
    let deadlock = rules::deadlock(&sp, &g);
    let strong = !deadlock && rules::strong_passes(&sp, &g, inv);
    let weak = !deadlock && strong && rules::weak_passes(&sp, &g, inv, opts.max_states)?;
    let stats = Stats {
        products: 1,
        states: g.states.len(),
        transitions: g.edges.len(),
        max_states: g.states.len(),
        max_bytes: g.bytes,
        max_state_bytes: g.state_bytes,
        passed: 0,
    };
    let d = |pass: bool| Decision {
        verdict: Verdict::from_pass(pass),
        deadlock,
        states: g.states.len(),
        transitions: g.edges.len(),
        stats,
    };
    Ok((d(weak), d(strong)))
}

/// An edge: its target, the class that moved (an index into
/// [`Graph::classes`]) and [`TERMINATE`] or [`FINITE`].
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub to: u32,
    pub class: u32,
    pub kind: u8,
}

/// The edge is a Terminate.
pub const TERMINATE: u8 = 1;
/// The edge takes the jump of a `choose finitely`.
pub const FINITE: u8 = 2;

/// The explored counted product: states in breadth-first order, each
/// one's edges from `off[i]` to `off[i + 1]`.
pub struct Graph {
    pub states: Vec<Box<[u8]>>,
    pub off: Vec<usize>,
    pub edges: Vec<Edge>,
    /// The classes that moved: (workgroup, record).
    pub classes: Vec<(usize, Vec<u8>)>,
    /// A state's id from its bytes.
    pub index: HashMap<Box<[u8]>, u32>,
    pub bytes: usize,
    pub state_bytes: usize,
}

impl Graph {
    pub fn out(&self, x: usize) -> &[Edge] {
        &self.edges[self.off[x]..self.off[x + 1]]
    }
}

/// Explores the counted product breadth-first, up to `max_states` states
/// and the byte budget of that bound, its states canonical
/// ([`Space::canonicalize`]).
fn build(sp: &Space, max_states: usize) -> Result<Graph, KernelError> {
    let mut start = sp.initial();
    sp.canonicalize(&mut start);
    explore(sp, vec![start], max_states, true, |_, _| true)
}

/// Explores from `roots` breadth-first the successors `keep` accepts
/// (canonicalized first where `canon`).
fn explore(
    sp: &Space,
    roots: Vec<St>,
    max_states: usize,
    canon: bool,
    mut keep: impl FnMut(&space::Label, &St) -> bool,
) -> Result<Graph, KernelError> {
    let limit = budget(max_states);
    let mut g = Graph {
        states: Vec::new(),
        off: vec![0],
        edges: Vec::new(),
        classes: Vec::new(),
        index: HashMap::new(),
        bytes: 0,
        state_bytes: 0,
    };
    let mut class_ix: HashMap<(usize, Vec<u8>), u32> = HashMap::new();
    let mut buf = Vec::new();
    for r in &roots {
        sp.encode(r, &mut buf);
        if !g.index.contains_key(&buf[..]) {
            add(&mut g, &buf, max_states, limit)?;
        }
    }
    let (mut i, mut told) = (0, 0);
    while i < g.states.len() {
        if i % 1024 == 0 {
            // Stored states for the progress line (issue 43 item 5).
            progress_litmus::progress::stored((g.states.len() - told) as u64);
            told = g.states.len();
        }
        let st: St = sp.decode(&g.states[i]);
        for (w, ci, times) in sp.explored(&st) {
            for (label, mut t) in sp.steps(&st, w, ci, times)? {
                if canon {
                    sp.canonicalize(&mut t);
                }
                if !keep(&label, &t) {
                    continue;
                }
                sp.encode(&t, &mut buf);
                let to = match g.index.get(&buf[..]) {
                    Some(&k) => k,
                    None => add(&mut g, &buf, max_states, limit)?,
                };
                let key = (label.wg, label.rec);
                let class = match class_ix.get(&key) {
                    Some(&c) => c,
                    None => {
                        let c = g.classes.len() as u32;
                        g.classes.push(key.clone());
                        class_ix.insert(key, c);
                        c
                    }
                };
                let kind = if label.terminate { TERMINATE } else { 0 }
                    | if label.finite { FINITE } else { 0 };
                g.edges.push(Edge { to, class, kind });
                g.bytes += std::mem::size_of::<Edge>();
            }
        }
        g.off.push(g.edges.len());
        i += 1;
    }
    progress_litmus::progress::stored((g.states.len() - told) as u64);
    Ok(g)
}

/// Stores a new state: its id, or the bound it passes.
fn add(g: &mut Graph, bytes: &[u8], max_states: usize, limit: usize) -> Result<u32, KernelError> {
    if g.states.len() >= max_states {
        return Err(KernelError::TooLarge(max_states));
    }
    // The state twice (table and index) and their headers.
    let cost = 2 * (bytes.len() + 16) + 24;
    if g.bytes + cost > limit {
        return Err(KernelError::OutOfMemory {
            bound: max_states,
            err: OutOfMemory {
                limit,
                wanted: g.bytes + cost,
                refused_by_system: false,
            },
        });
    }
    g.bytes += cost;
    g.state_bytes += cost;
    let id = g.states.len() as u32;
    let b: Box<[u8]> = bytes.into();
    g.index.insert(b.clone(), id);
    g.states.push(b);
    Ok(id)
}
