//! Recognising the classic synchronisation idioms among synthesized tests.
//!
//! The paper (§5.5, Table 3, Figs. 2, 3 and 8) names a handful of tests after
//! the idioms they capture: one-way producer-consumer with increasing and
//! decreasing id, bidirectional producer-consumer, the simplified mutex, the
//! simplified dining philosophers, and the exchange-lock mutex of Fig. 2 that
//! the published synthesis missed. Each idiom is defined here by its
//! reference program, transcribed from the paper's figures.
//!
//! # Which equivalence, and why
//!
//! A test *is* an idiom when its reachable program state space (memory and
//! pcs, one transition per step of a thread, labelled by the thread id only)
//! is **strongly bisimilar** to the reference program's. Text would be the
//! wrong criterion: the same blocking behaviour can be written with a load or
//! an exchange, with other values or locations, or with a different but
//! equally useless instruction (the published bidirectional producer-consumer
//! `2t4i_64` spins on an exchange where the figure spins on a load).
//!
//! Bisimilarity rather than isomorphism of the spaces, because bisimilarity
//! is exactly what the progress models can observe. A thread is enabled in a
//! state iff it has not reached END (AXB never blocks), so "thread t has
//! finished" is visible in the labelled space as "no t-transition leaves
//! here". The product with any progress model (SPEC §2) is driven by nothing
//! but the thread of each step and which threads have finished, so bisimilar
//! program spaces give bisimilar product spaces and identical verdicts under
//! all eleven models; isomorphism would additionally separate tests that no
//! scheduler can tell apart (e.g. a spin loop unrolled into two identical
//! instructions).
//!
//! # How it is computed cheaply
//!
//! AXB is deterministic: from a state each thread has at most one
//! transition. For such deterministic labelled systems bisimilarity is
//! language equivalence, and the quotient by the coarsest bisimulation is
//! the minimal deterministic automaton, unique up to isomorphism. So each
//! space is reduced once by partition refinement (Moore's algorithm on the
//! signature "successor block per thread"), and the quotient is written down
//! in a canonical form: blocks numbered in breadth-first order from the
//! initial block, successors visited in thread order. Two tests are
//! bisimilar iff their [`Behaviour`]s are equal, so recognising idioms in a
//! whole suite is one hash lookup per test.

use progress_litmus::axb::space::program_space;
use progress_litmus::axb::test::Test;
use progress_litmus::axb::text;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// No transition of that thread (it has finished).
const NONE: u32 = u32::MAX;

/// The canonical form of a test's thread-labelled program state space up to
/// strong bisimilarity: the minimal quotient, states numbered breadth first
/// from the initial one. Equal iff the spaces are bisimilar.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Behaviour {
    /// Number of threads (labels).
    pub threads: usize,
    /// `succ[s * threads + t]`: the t-successor of quotient state `s`, or
    /// `u32::MAX` when thread t has finished in `s`.
    pub succ: Vec<u32>,
}

impl Behaviour {
    /// States of the minimal quotient.
    pub fn num_states(&self) -> usize {
        self.succ.len() / self.threads.max(1)
    }
}

/// The thread-labelled program space of `test` as a deterministic successor
/// table: `table[s * n + t]` is the t-successor of state `s` (node order of
/// [`program_space`], so state 0 is initial).
fn successor_table(test: &Test) -> (usize, Vec<u32>) {
    let lts = program_space(test);
    let n = test.num_threads();
    let mut table = vec![NONE; lts.num_states() * n];
    for e in lts.graph.raw_edges() {
        let slot = &mut table[e.source().index() * n + e.weight.thread as usize];
        debug_assert_eq!(*slot, NONE, "AXB steps are deterministic per thread");
        *slot = e.target().index() as u32;
    }
    (n, table)
}

/// The coarsest bisimulation of a deterministic table, as a block per state
/// (Moore's partition refinement: split blocks by the blocks of the
/// successors until nothing splits).
fn coarsest_partition(n: usize, table: &[u32]) -> Vec<u32> {
    let states = table.len() / n.max(1);
    let mut block = vec![0u32; states];
    let mut count = 1;
    loop {
        let mut ids: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
        let mut next = Vec::with_capacity(states);
        for s in 0..states {
            let mut sig = Vec::with_capacity(n + 1);
            sig.push(block[s]);
            sig.extend(table[s * n..(s + 1) * n].iter().map(|&d| {
                if d == NONE {
                    NONE
                } else {
                    block[d as usize]
                }
            }));
            let fresh = ids.len() as u32;
            next.push(*ids.entry(sig).or_insert(fresh));
        }
        let new_count = ids.len();
        block = next;
        // Refinement only ever splits blocks: same count means stable.
        if new_count == count {
            return block;
        }
        count = new_count;
    }
}

/// The [`Behaviour`] of a (valid) test.
pub fn behaviour(test: &Test) -> Behaviour {
    let (n, table) = successor_table(test);
    let block = coarsest_partition(n, &table);
    let blocks = block.iter().map(|&b| b as usize + 1).max().unwrap_or(0);
    // One representative state per block; all members have successors in the
    // same blocks (the partition is stable), so any member will do.
    let mut rep = vec![usize::MAX; blocks];
    for (s, &b) in block.iter().enumerate() {
        if rep[b as usize] == usize::MAX {
            rep[b as usize] = s;
        }
    }
    let mut order = vec![NONE; blocks];
    let mut queue = VecDeque::from([block[0]]);
    order[block[0] as usize] = 0;
    let mut succ = Vec::with_capacity(blocks * n);
    let mut numbered = 1u32;
    while let Some(b) = queue.pop_front() {
        let s = rep[b as usize];
        for t in 0..n {
            let d = table[s * n + t];
            if d == NONE {
                succ.push(NONE);
                continue;
            }
            let db = block[d as usize] as usize;
            if order[db] == NONE {
                order[db] = numbered;
                numbered += 1;
                queue.push_back(db as u32);
            }
            succ.push(order[db]);
        }
    }
    Behaviour { threads: n, succ }
}

/// Whether two tests have bisimilar thread-labelled program state spaces.
pub fn bisimilar(a: &Test, b: &Test) -> bool {
    behaviour(a) == behaviour(b)
}

/// A classic idiom and its reference program.
#[derive(Clone, Debug)]
pub struct Idiom {
    /// The tag written into suite entries, e.g. `prodcons-increasing`.
    pub tag: &'static str,
    /// The paper's name for it.
    pub title: &'static str,
    /// Where in the paper the reference program comes from, and what it
    /// does (thread roles as in the reference).
    pub source: &'static str,
    /// The reference program.
    pub reference: Test,
    /// Whether the reference's thread order is incidental. The order of
    /// thread ids is the whole point of the two one-way producer-consumers
    /// (each is the other with its threads swapped), so those are matched
    /// as they are; for the others the paper's figures and its published
    /// tests disagree on which thread is which, so a test that matches the
    /// reference with its threads swapped is tagged `<tag>-swapped`
    /// (thread ids still matter for HSA and LOBE, hence a separate tag).
    pub swappable: bool,
}

/// The reference programs, in the paper's artifact format (SPEC §1).
const CATALOGUE: [(&str, &str, &str, bool, &str); 6] = [
    (
        "prodcons-increasing",
        "one-way producer-consumer (increasing id)",
        "Fig. 3 (T1 spins until T0 has stored the flag)",
        false,
        "THREAD0\natomic_store(0,1)\nTHREAD1\natomic_chk_branch(0,0,0)\n",
    ),
    (
        "prodcons-decreasing",
        "one-way producer-consumer (decreasing id)",
        "Fig. 8 (T0 spins until T1 has stored the flag)",
        false,
        "THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(0,1)\n",
    ),
    (
        "prodcons-bidirectional",
        "bidirectional producer-consumer",
        "Fig. 8 (T0 raises the flag and waits for T1 to lower it)",
        true,
        "THREAD0\natomic_store(0,1)\natomic_chk_branch(0,1,1)\nTHREAD1\natomic_chk_branch(0,0,0)\natomic_store(0,0)\n",
    ),
    (
        "mutex-simplified",
        "simplified mutex",
        "Fig. 8 (T1 locks and unlocks with plain stores, T0 spins while locked)",
        true,
        "THREAD0\natomic_chk_branch(0,1,0)\nTHREAD1\natomic_store(0,1)\natomic_store(0,0)\n",
    ),
    (
        "dining-simplified",
        "simplified dining philosophers",
        "Fig. 8 (each thread exchanges its id in and retries while it reads the other's)",
        true,
        "THREAD0\natomic_exch_branch(0,1,0,0)\nTHREAD1\natomic_exch_branch(0,0,1,0)\n",
    ),
    (
        "mutex-exchange",
        "exchange-lock mutex",
        "Fig. 2 (both threads acquire by exchange, then release)",
        true,
        "THREAD0\natomic_exch_branch(0,1,1,0)\natomic_store(0,0)\nTHREAD1\natomic_exch_branch(0,1,1,0)\natomic_store(0,0)\n",
    ),
];

/// The idioms, in the paper's order.
pub fn catalogue() -> Vec<Idiom> {
    CATALOGUE
        .iter()
        .map(|&(tag, title, source, swappable, src)| Idiom {
            tag,
            title,
            source,
            reference: text::parse(src).expect("reference programs parse"),
            swappable,
        })
        .collect()
}

/// The test with its thread order reversed (thread ids renamed).
pub fn swap_threads(test: &Test) -> Test {
    Test {
        threads: test.threads.iter().rev().cloned().collect(),
    }
}

/// Recognises idioms by one hash lookup per test.
#[derive(Clone, Debug)]
pub struct Recogniser {
    idioms: Vec<Idiom>,
    by_behaviour: FxHashMap<Behaviour, Vec<String>>,
}

impl Default for Recogniser {
    fn default() -> Self {
        Recogniser::new(catalogue())
    }
}

impl Recogniser {
    /// A recogniser for `idioms` (each tag for the reference as written,
    /// plus `<tag>-swapped` for swappable ones whose swapped reference
    /// behaves differently).
    pub fn new(idioms: Vec<Idiom>) -> Recogniser {
        let mut by_behaviour: FxHashMap<Behaviour, Vec<String>> = FxHashMap::default();
        for idiom in &idioms {
            let b = behaviour(&idiom.reference);
            if idiom.swappable && idiom.reference.num_threads() == 2 {
                let sb = behaviour(&swap_threads(&idiom.reference));
                if sb != b {
                    by_behaviour
                        .entry(sb)
                        .or_default()
                        .push(format!("{}-swapped", idiom.tag));
                }
            }
            by_behaviour
                .entry(b)
                .or_default()
                .push(idiom.tag.to_string());
        }
        for tags in by_behaviour.values_mut() {
            tags.sort();
        }
        Recogniser {
            idioms,
            by_behaviour,
        }
    }

    pub fn idioms(&self) -> &[Idiom] {
        &self.idioms
    }

    /// Every tag this recogniser can give, in catalogue order (each tag,
    /// then its swapped variant).
    pub fn all_tags(&self) -> Vec<String> {
        let mut out = Vec::new();
        for idiom in &self.idioms {
            out.push(idiom.tag.to_string());
            let swapped = format!("{}-swapped", idiom.tag);
            if self.by_behaviour.values().any(|ts| ts.contains(&swapped)) {
                out.push(swapped);
            }
        }
        out
    }

    /// The idiom that a tag names, and whether it is the swapped variant.
    pub fn idiom_of(&self, tag: &str) -> Option<(&Idiom, bool)> {
        self.idioms.iter().find_map(|i| {
            if tag == i.tag {
                Some((i, false))
            } else if tag.strip_suffix("-swapped") == Some(i.tag) {
                Some((i, true))
            } else {
                None
            }
        })
    }

    /// The tags of the idioms `test` is bisimilar to (sorted; usually none).
    pub fn tags(&self, test: &Test) -> Vec<String> {
        // Different thread counts can never be bisimilar: every thread has
        // a transition from the initial state.
        if !self
            .idioms
            .iter()
            .any(|i| i.reference.num_threads() == test.num_threads())
        {
            return Vec::new();
        }
        self.by_behaviour
            .get(&behaviour(test))
            .cloned()
            .unwrap_or_default()
    }
}
