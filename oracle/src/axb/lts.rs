//! `oracle lts`: a test's state space, on its own or in product with a
//! model's fair set, as Graphviz DOT (for people, see also [`crate::axb::dot`])
//! or JSON (for programs).
//!
//! JSON states give memory and pcs as numbers (a pc equal to the thread's
//! length is END), plus, in a product, the threads that have signalled
//! Terminate and the set F, and `text`, the same state as DOT and
//! `oracle explain` print it. Transitions give the thread, the instruction
//! and, in a product, F before the move. States are numbered in
//! exploration order, 0 being the start, so the output is deterministic.

use crate::axb::fair_set;
use crate::axb::product::{Event, Product};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use progress_litmus::axb::machine::{Machine, PState};
use progress_litmus::axb::space::{Lts, Step};
use progress_litmus::{axb::pseudo, Model, Test};
use serde_json::{json, Value};

/// The test's own state space (memory and pcs) as DOT.
pub fn program_dot(test: &Test, name: &str, lts: &Lts<PState, Step>) -> String {
    let m = Machine::new(test);
    let locs = test.num_locs().max(1);
    progress_litmus::axb::space::to_dot(
        &lts.graph,
        name,
        |_, s| m.describe(*s, locs),
        |st| {
            format!(
                "T{} {}",
                st.thread,
                pseudo::at(test, st.thread as usize, st.pc as usize)
            )
        },
    )
}

/// Memory and pcs of a program state.
fn program_state(m: &Machine, s: PState, locs: usize) -> (Vec<u8>, Vec<usize>) {
    let mem = (0..locs).map(|l| m.mem(s, l)).collect();
    let pcs = (0..m.num_threads()).map(|t| m.pc(s, t)).collect();
    (mem, pcs)
}

/// The test's own state space as JSON.
pub fn program_json(test: &Test, name: &str, lts: &Lts<PState, Step>) -> Value {
    let m = Machine::new(test);
    let locs = test.num_locs().max(1);
    let states: Vec<Value> = lts
        .graph
        .node_indices()
        .map(|n| {
            let s = lts.graph[n];
            let (mem, pc) = program_state(&m, s, locs);
            json!({
                "id": n.index(),
                "mem": mem,
                "pc": pc,
                "finished": m.all_finished(s),
                "text": m.describe(s, locs),
            })
        })
        .collect();
    let transitions: Vec<Value> = lts
        .graph
        .edge_references()
        .map(|e| {
            let st = e.weight();
            json!({
                "from": e.source().index(),
                "to": e.target().index(),
                "thread": st.thread,
                "pc": st.pc,
                "instruction": pseudo::at(test, st.thread as usize, st.pc as usize),
                "taken": st.taken,
            })
        })
        .collect();
    json!({
        "test": name,
        "model": Value::Null,
        "initial": 0,
        "states": states,
        "transitions": transitions,
    })
}

/// A product state as JSON: memory, pcs, terminated threads, F, whether it
/// is the "all done" state, and its text.
pub fn state_json(p: &Product, n: NodeIndex, locs: usize) -> Value {
    let s = p.state(n);
    let (mem, pc) = program_state(&p.machine, s.prog, locs);
    json!({
        "id": n.index(),
        "mem": mem,
        "pc": pc,
        "terminated": fair_set::members(s.terminated).collect::<Vec<_>>(),
        "f": fair_set::members(s.f).collect::<Vec<_>>(),
        "all_done": p.all_done(n),
        "text": p.describe(n, locs),
    })
}

/// A product transition's label as JSON fields (without its endpoints).
pub fn event_json(test: &Test, ev: &Event) -> serde_json::Map<String, Value> {
    let mut o = serde_json::Map::new();
    o.insert("thread".into(), ev.thread().into());
    match *ev {
        Event::Step { pc, taken, .. } => {
            o.insert("event".into(), "step".into());
            o.insert("pc".into(), pc.into());
            o.insert(
                "instruction".into(),
                pseudo::at(test, ev.thread(), pc as usize).into(),
            );
            o.insert("taken".into(), taken.into());
        }
        Event::Terminate { .. } => {
            o.insert("event".into(), "terminate".into());
        }
    }
    o.insert(
        "f_before".into(),
        fair_set::members(ev.fair()).collect::<Vec<_>>().into(),
    );
    o
}

/// The product space of `test` with `model`'s fair set as JSON.
pub fn product_json(test: &Test, name: &str, model: Model, p: &Product) -> Value {
    let locs = test.num_locs().max(1);
    let g = &p.lts.graph;
    let states: Vec<Value> = g.node_indices().map(|n| state_json(p, n, locs)).collect();
    let transitions: Vec<Value> = g
        .edge_references()
        .map(|e| {
            let mut o = serde_json::Map::new();
            o.insert("from".into(), e.source().index().into());
            o.insert("to".into(), e.target().index().into());
            o.extend(event_json(test, e.weight()));
            Value::Object(o)
        })
        .collect();
    json!({
        "test": name,
        "model": model.name(),
        "initial": 0,
        "states": states,
        "transitions": transitions,
    })
}
