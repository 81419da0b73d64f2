//! What a check costs, in states (issue 24 item 1): the states and
//! transitions of the products that decided a program, and the bytes their
//! tables hold per stored state. Speed is measured in states so that a
//! change to the checker can be told from a change to the program, and so
//! that the figures compare with other explicit-state checkers (LTSmin
//! explores about 0.6M states/s a core; SPIN's and LTSmin's compressed
//! tables hold a state in about 8 bytes).

use super::product::{Move, Product};
use petgraph::graph::{Edge, Node, NodeIndex};
use progress_litmus::kernel::machine::Packed;
use std::ops::AddAssign;

/// The cost of deciding a program: summed over the products built, with
/// the largest product's table bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Products built (one a model and fairness pair of strengths).
    pub products: usize,
    /// States stored, summed over the products.
    pub states: usize,
    /// Transitions stored, summed over the products.
    pub transitions: usize,
    /// States of the largest product.
    pub max_states: usize,
    /// Bytes of the largest product's tables, by capacity: the states, the
    /// transitions, the index from states to ids and the guaranteed
    /// entities (not the verdict rules' passing tables, freed after each).
    pub max_bytes: usize,
    /// Of these, the bytes of the largest product's states and index
    /// alone (what SPIN's and LTSmin's state tables hold).
    pub max_state_bytes: usize,
    /// Chain states passed while exploring (docs/KERNEL.md §8.8): states
    /// expanded but not stored, counted each time an edge goes through
    /// one. States explored are `states + passed`.
    pub passed: usize,
}

impl Stats {
    /// The bytes a stored state costs in the largest product.
    pub fn bytes_per_state(&self) -> f64 {
        if self.max_states == 0 {
            0.0
        } else {
            self.max_bytes as f64 / self.max_states as f64
        }
    }

    /// The bytes a state takes in the largest product's state table
    /// (states and index, without transitions).
    pub fn state_bytes_per_state(&self) -> f64 {
        if self.max_states == 0 {
            0.0
        } else {
            self.max_state_bytes as f64 / self.max_states as f64
        }
    }

    /// The cost of one product.
    pub fn of<S: Packed>(p: &Product<S>) -> Stats {
        let g = &p.lts.graph;
        let (nodes, edges) = g.capacity();
        // A swiss table: its buckets (8 for 7 entries, a power of two)
        // each hold an entry and a control byte.
        let buckets = (p.lts.index.capacity() * 8 / 7).next_power_of_two();
        let state_bytes = nodes * std::mem::size_of::<Node<S>>()
            + buckets * (std::mem::size_of::<(S, NodeIndex)>() + 1);
        let bytes =
            state_bytes + edges * std::mem::size_of::<Edge<Move>>() + p.guaranteed.capacity() * 8;
        Stats {
            products: 1,
            states: g.node_count(),
            transitions: g.edge_count(),
            max_states: g.node_count(),
            max_bytes: bytes,
            max_state_bytes: state_bytes,
            passed: 0,
        }
    }
}

impl Stats {
    /// The cost of one lean product ([`super::lean`]): its packed states,
    /// index and edge rows, by capacity.
    pub fn of_lean<S: Packed>(p: &super::lean::Lean<S>) -> Stats {
        let g = &p.graph;
        Stats {
            products: 1,
            states: g.num_states(),
            transitions: g.num_transitions() + p.twin_moves,
            max_states: g.num_states(),
            max_bytes: g.bytes(),
            max_state_bytes: g.table.bytes(),
            passed: p.passed,
        }
    }
}

impl AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        self.products += o.products;
        self.states += o.states;
        self.transitions += o.transitions;
        self.passed += o.passed;
        if o.max_states > self.max_states {
            self.max_states = o.max_states;
            self.max_bytes = o.max_bytes;
            self.max_state_bytes = o.max_state_bytes;
        }
    }
}
