//! An independent second implementation of SPEC §2-3, used only here to
//! cross-check the oracle on every published test and on random programs.
//!
//! Nothing is shared with the oracle but the `Test` type: states are plain
//! vectors and sets, the F rules are re-read from the SPEC table, the weak
//! check is an Emerson-Lei greatest fixpoint instead of SCCs, the strong
//! check a forward search from every state instead of a backward fixpoint,
//! and the unfair check a depth-first search for a back edge.

use progress_litmus::{axb::text, Base, Fairness, Model, Target, Test, Verdict};
use proptest::prelude::*;
use std::collections::{BTreeSet, HashMap, VecDeque};

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct St {
    mem: Vec<u8>,
    pcs: Vec<usize>,
    term: Vec<bool>,
    f: BTreeSet<usize>,
}

#[derive(Clone, Debug)]
struct Edge {
    to: usize,
    thread: usize,
    step: bool,
    f: BTreeSet<usize>,
}

struct Space {
    states: Vec<St>,
    edges: Vec<Vec<Edge>>,
}

fn smallest_live(term: &[bool]) -> BTreeSet<usize> {
    term.iter().position(|t| !t).into_iter().collect()
}

fn build(test: &Test, base: Base) -> Space {
    let n = test.threads.len();
    let f0: BTreeSet<usize> = match base {
        Base::Unfair | Base::Obe | Base::Lobe => BTreeSet::new(),
        Base::Fair => (0..n).collect(),
        Base::Hsa | Base::HsaObe => [0].into(),
    };
    let init = St {
        mem: vec![0; 8],
        pcs: vec![0; n],
        term: vec![false; n],
        f: f0,
    };
    let mut index: HashMap<St, usize> = HashMap::new();
    let mut states = vec![init.clone()];
    index.insert(init, 0);
    let mut edges: Vec<Vec<Edge>> = vec![Vec::new()];
    let mut queue = VecDeque::from([0]);
    while let Some(i) = queue.pop_front() {
        let s = states[i].clone();
        for t in 0..n {
            if s.term[t] {
                continue;
            }
            let th = &test.threads[t];
            let mut next = s.clone();
            let step = s.pcs[t] < th.len();
            if step {
                let ins = th[s.pcs[t]];
                let old = s.mem[ins.loc as usize];
                if let Some(x) = ins.exch {
                    next.mem[ins.loc as usize] = x;
                }
                next.pcs[t] = if old == ins.check {
                    match ins.jump {
                        Target::At(j) => j as usize,
                        Target::End => th.len(),
                    }
                } else {
                    s.pcs[t] + 1
                };
                match base {
                    Base::Obe | Base::HsaObe => {
                        next.f.insert(t);
                    }
                    Base::Lobe => next.f.extend((0..=t).filter(|&u| !s.term[u])),
                    _ => {}
                }
            } else {
                next.term[t] = true;
                match base {
                    Base::Unfair => {}
                    Base::Fair | Base::Obe | Base::Lobe => {
                        next.f.remove(&t);
                    }
                    Base::Hsa => next.f = smallest_live(&next.term),
                    Base::HsaObe => {
                        next.f.remove(&t);
                        next.f.extend(smallest_live(&next.term));
                    }
                }
            }
            let j = *index.entry(next.clone()).or_insert_with(|| {
                states.push(next);
                edges.push(Vec::new());
                queue.push_back(states.len() - 1);
                states.len() - 1
            });
            edges[i].push(Edge {
                to: j,
                thread: t,
                step,
                f: s.f.clone(),
            });
        }
    }
    Space { states, edges }
}

fn all_done(s: &St) -> bool {
    s.term.iter().all(|&t| t)
}

/// Emerson-Lei: the greatest set Z of states s with F(s) non-empty such
/// that, for every t in F(s), s reaches inside Z, along edges that keep F
/// equal to F(s), a step of t between two states of Z. Z is non-empty iff a
/// weakly fair non-terminating run exists.
fn weak_fails(sp: &Space) -> bool {
    let n = sp.states.len();
    let mut z = vec![true; n];
    loop {
        let mut changed = false;
        for s in 0..n {
            if !z[s] {
                continue;
            }
            let f = &sp.states[s].f;
            let ok = !f.is_empty()
                && f.iter().all(|&t| {
                    let mut seen = vec![false; n];
                    let mut stack = vec![s];
                    seen[s] = true;
                    while let Some(u) = stack.pop() {
                        for e in &sp.edges[u] {
                            if !z[e.to] || sp.states[e.to].f != *f {
                                continue;
                            }
                            if e.step && e.thread == t {
                                return true;
                            }
                            if !seen[e.to] {
                                seen[e.to] = true;
                                stack.push(e.to);
                            }
                        }
                    }
                    false
                });
            if !ok {
                z[s] = false;
                changed = true;
            }
        }
        if !changed {
            return z.iter().any(|&b| b);
        }
    }
}

/// From every state, search forward along fair moves for a finishing move.
fn strong_fails(sp: &Space) -> bool {
    let n = sp.states.len();
    let finishing =
        |u: usize| all_done(&sp.states[u]) || sp.edges[u].iter().any(|e| e.step && e.f.is_empty());
    (0..n).any(|s| {
        let mut seen = vec![false; n];
        let mut queue = VecDeque::from([s]);
        seen[s] = true;
        while let Some(u) = queue.pop_front() {
            if finishing(u) {
                return false;
            }
            for e in &sp.edges[u] {
                let fair = !e.step || e.f.contains(&e.thread);
                if fair && !seen[e.to] {
                    seen[e.to] = true;
                    queue.push_back(e.to);
                }
            }
        }
        true
    })
}

/// Depth-first search with colours: a grey target is a back edge.
fn has_cycle(sp: &Space) -> bool {
    fn dfs(sp: &Space, u: usize, colour: &mut [u8]) -> bool {
        colour[u] = 1;
        for e in &sp.edges[u] {
            if colour[e.to] == 1 || (colour[e.to] == 0 && dfs(sp, e.to, colour)) {
                return true;
            }
        }
        colour[u] = 2;
        false
    }
    let mut colour = vec![0u8; sp.states.len()];
    dfs(sp, 0, &mut colour)
}

fn reference(test: &Test, m: Model) -> Verdict {
    let sp = build(test, m.base);
    let fails = match (m.base, m.fairness) {
        (Base::Unfair, _) => has_cycle(&sp),
        (_, Fairness::Weak) => weak_fails(&sp),
        (_, Fairness::Strong) => strong_fails(&sp),
    };
    Verdict::from_pass(!fails)
}

#[test]
fn agrees_on_every_published_test_and_model() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests");
    let mut checked = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let t = text::parse(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let v = oracle::verdicts(&t);
        for m in Model::ALL {
            assert_eq!(v.get(m), reference(&t, m), "{} {m}", p.display());
            checked += 1;
        }
    }
    assert_eq!(checked, 483 * 11);
}

fn program() -> impl Strategy<Value = Test> {
    let instr = |len: usize| {
        (0u8..2, 0u8..2, 0..=len, prop::option::of(0u8..2)).prop_map(
            move |(loc, check, j, exch)| progress_litmus::Instr {
                loc,
                check,
                jump: Target::from_pc(j, len),
                exch,
            },
        )
    };
    let thread = (1usize..=3).prop_flat_map(move |len| prop::collection::vec(instr(len), len));
    prop::collection::vec(thread, 1..=3).prop_map(|threads| Test::new(threads).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn agrees_on_random_programs(test in program()) {
        let v = oracle::verdicts(&test);
        for m in Model::ALL {
            prop_assert_eq!(v.get(m), reference(&test, m), "{} {:?}", m, test);
        }
    }
}
