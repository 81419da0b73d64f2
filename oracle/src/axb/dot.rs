//! Graphviz rendering of a product space (`oracle lts --dot`).

use crate::axb::fair_set;
use crate::axb::product::{Event, Product};
use progress_litmus::{axb::pseudo, Test};

/// The product space as DOT: memory, pcs, terminated threads and F on
/// states (the all-done states drawn double); thread, instruction and F on
/// edges. The start state has a thick border.
pub fn to_dot(test: &Test, name: &str, p: &Product) -> String {
    let locs = test.num_locs().max(1);
    let mut dot = progress_litmus::axb::space::to_dot(
        &p.lts.graph,
        name,
        |n, _| p.describe(n, locs),
        |e: &Event| match *e {
            Event::Step { thread, pc, f, .. } => format!(
                "T{thread} {} F={}",
                pseudo::at(test, thread as usize, pc as usize),
                fair_set::show(f)
            ),
            Event::Terminate { thread, f } => {
                format!("T{thread} terminates F={}", fair_set::show(f))
            }
        },
    );
    // Mark the all-done states.
    let extra: String = p
        .lts
        .graph
        .node_indices()
        .filter(|&n| p.all_done(n))
        .map(|n| format!("  s{} [peripheries=2];\n", n.index()))
        .collect();
    dot.truncate(dot.len() - 2);
    dot.push_str(&extra);
    dot.push_str("}\n");
    dot
}
