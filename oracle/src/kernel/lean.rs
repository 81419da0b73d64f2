//! The lean checker (issue 24 item 2): the verdicts of [`super::check`]
//! and [`super::lifted`] on the product stored in [`super::arena`]'s
//! tables (states collapsed under a 32-bit index, edges in rows of
//! variable-length bytes, per-state tables of the rules computed from the
//! state when needed rather than stored), which is what `decide`,
//! `classify` and `table` use.
//!
//! The rules are the same, written once (docs/KERNEL.md §4; the weak
//! rule's component facts are [`super::check::Components`], the strong
//! rule's attractor the graph toolkit's, each over these tables through a
//! trait): a deadlock
//! is a state with no edge that is not all-terminated; weak fairness
//! fails iff some component with an internal edge has every guaranteed
//! entity stepping inside it or disabled somewhere in it (on the lifted
//! components when the product is reduced by symmetry); strong fairness
//! passes iff every state is in the attractor of termination. The full
//! product ([`super::product::build`]) stays the reference: the tests
//! compare the two on random programs and models, and witnesses are
//! found there. With the rules shared, that comparison holds these
//! tables and their exploration to the full product's; the rules
//! themselves are held to SPEC §3 by the AXB engines, an independent
//! implementation, on one-invocation programs (`oracle/tests/kernel_axb.rs`).

use super::arena::{self, ExploreError, Graph};
use super::check::{Components, Moves};
use super::product::{exceeded, Kernel, Move};
use super::KernelError;
use progress_litmus::axb::space::Meter;
use progress_litmus::graph::{attractor, NodeSet, Reversed, Rule};
use progress_litmus::kernel::machine::{Fault, Packed};

/// Bytes a state of capacity is charged for the rules' tables: the
/// component search (index, low link, component id 12; its stacks at
/// most 12) and per-component masks 17; the attractor (flags, reversed
/// rows and work list 9) comes after them.
pub const RULE_BYTES_PER_STATE: usize = 41;
/// Bytes an edge of capacity is charged for the attractor's reversed edges.
pub const RULE_BYTES_PER_EDGE: usize = 4;

/// A lean product: its graph, the bound it was built under and its meter.
pub struct Lean<S> {
    pub graph: Graph<S>,
    pub max_states: usize,
    pub meter: Meter,
    /// Chain states passed while exploring (§8.8).
    pub passed: usize,
    /// Moves of twins (§8.1) explored but not stored: their twins'
    /// edges stand for them.
    pub twin_moves: usize,
}

fn explore_error(max_states: usize, e: ExploreError<Fault>) -> KernelError {
    match e {
        ExploreError::Exceeded(e) => exceeded(max_states, e),
        ExploreError::Succ(f) => KernelError::Fault(f),
    }
}

/// Builds the reachable product (as [`super::product::build`] does, the
/// same states in the same order) in the lean tables.
pub fn build<S: Packed>(k: &Kernel, max_states: usize) -> Result<Lean<S>, KernelError> {
    let mut meter = Meter::new(super::budget(max_states));
    let mut graph = Graph::new(RULE_BYTES_PER_STATE, RULE_BYTES_PER_EDGE);
    let mut chains = Vec::new();
    let (mut passed, mut twin_moves) = (0usize, 0usize);
    graph
        .explore(&[k.start::<S>()], &mut meter, max_states, |s, out| {
            twin_moves += k.successors_chained(s, out, true, &mut chains, false)?;
            passed += chains.iter().map(|c| c.len as usize).sum::<usize>();
            Ok(())
        })
        .map_err(|e| explore_error(max_states, e))?;
    graph.shrink();
    Ok(Lean {
        graph,
        max_states,
        meter,
        passed,
        twin_moves,
    })
}

/// Whether some reachable state has no move and not every invocation has
/// terminated.
pub fn deadlock<S: Packed>(k: &Kernel, p: &Lean<S>) -> bool {
    let g = &p.graph;
    (0..g.num_states()).any(|n| g.rows.is_empty(n) && !k.all_done(g.state(n).as_ref()))
}

/// Whether some component of `g` witnesses non-termination under weak
/// fairness ([`Components`]: the rule written once): it has an internal
/// edge, and every entity guaranteed in it steps on an internal edge or
/// is disabled somewhere in it. With chains (§8.8) an internal edge also
/// stands for the chain states it passed, which lie in the component:
/// their steppers and enabled entities are found again by following the
/// edges of the component's states (`canon`: as the graph was built).
fn weak_witness<S: Packed>(k: &Kernel, g: &Graph<S>, canon: bool) -> Result<bool, KernelError> {
    let moves = LeanMoves {
        g,
        masks: k.kind_masks(),
    };
    let mut c = Components::of(&moves, |v| k.enabled(g.state(v).as_ref()));
    if k.chains {
        chain_facts(k, g, &mut c, canon)?;
    }
    Ok(
        c.witness(|v, open| k.guarantees_any(g.state(v).as_ref(), open))
            .is_some(),
    )
}

/// What the chain states an internal edge of a cyclic component passed
/// add to its facts: their steppers, and the entities enabled in all of
/// them.
fn chain_facts<S: Packed>(
    k: &Kernel,
    g: &Graph<S>,
    c: &mut Components,
    canon: bool,
) -> Result<(), KernelError> {
    let (mut out, mut chains) = (Vec::new(), Vec::new());
    for (n, &id) in c.id.iter().enumerate() {
        let id = id as usize;
        if !c.internal[id] {
            continue;
        }
        out.clear();
        k.successors_chained(&g.state(n), &mut out, canon, &mut chains, true)
            .map_err(KernelError::Fault)?;
        for (&(mv, t), ch) in out.iter().zip(&chains) {
            // A `choose finitely` jump's edge is not stored (§2.11).
            if ch.len > 0
                && !mv.is_finite()
                && g.table
                    .get(&t)
                    .is_some_and(|x| c.id[x as usize] as usize == id)
            {
                c.steppers[id] |= ch.steppers;
                c.always[id] &= ch.always;
            }
        }
    }
    Ok(())
}

/// The lean tables' edges as the rules read them: every stored edge is
/// one a run may repeat (a `choose finitely` jump's is not stored).
struct LeanMoves<'a, S> {
    g: &'a Graph<S>,
    masks: [u64; 32],
}

impl<S: Packed> progress_litmus::graph::Successors for LeanMoves<'_, S> {
    fn node_count(&self) -> usize {
        self.g.num_states()
    }
    fn successors(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        self.g.out(v).map(arena::target)
    }
}

impl<S: Packed> Moves for LeanMoves<'_, S> {
    fn moves(&self, v: usize) -> impl Iterator<Item = (usize, u64, bool)> + '_ {
        (self.g.out(v)).map(|e| {
            (
                arena::target(e),
                self.masks[arena::kind(e)],
                arena::is_step(e),
            )
        })
    }
}

/// Whether the program is guaranteed to terminate under weak fairness
/// (deadlocks not checked here), on a product reduced by symmetry or not.
pub fn weak_passes<S: Packed>(k: &Kernel, p: &Lean<S>) -> Result<bool, KernelError> {
    let g = &p.graph;
    if k.symmetry.is_none() {
        return Ok(!weak_witness(k, g, true)?);
    }
    let (comp, count) = progress_litmus::graph::scc(&g.rows);
    lifted_passes(k, p, &comp, count)
}

/// The weak rule by lifting each cyclic component of a product reduced by
/// symmetry ([`super::lifted`]'s method): its original states are
/// explored from its canonical ones, keeping the moves whose canonical
/// target is in the component, and the rule is checked on their
/// components. Components are taken in the order of their first state.
fn lifted_passes<S: Packed>(
    k: &Kernel,
    p: &Lean<S>,
    comp: &[u32],
    count: usize,
) -> Result<bool, KernelError> {
    let g = &p.graph;
    let members = cyclic_members(g, comp, count);
    let mut groups: Vec<&[(u32, u32)]> = members.chunk_by(|a, b| a.0 == b.0).collect();
    groups.sort_unstable_by_key(|grp| grp[0].1);
    let mut lift: Graph<S> = Graph::new(RULE_BYTES_PER_STATE, 0);
    let mut meter = p.meter.rest();
    let mut out = Vec::new();
    for grp in groups {
        match unlifted_witness(k, g, comp, grp, &mut out)? {
            Some(true) => return Ok(false),
            Some(false) => continue,
            None => {}
        }
        let roots: Vec<S> = grp.iter().map(|&(_, n)| g.state(n as usize)).collect();
        if lifted_witness(k, p, comp, grp[0].0, &roots, &mut lift, &mut meter)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// (component, state) of every state of `g` in a cyclic component
/// (`comp`: the states' components, `count` of them), grouped by
/// component.
fn cyclic_members<S: Packed>(g: &Graph<S>, comp: &[u32], count: usize) -> Vec<(u32, u32)> {
    let mut internal = vec![false; count];
    for n in 0..g.num_states() {
        if g.out(n).any(|e| comp[arena::target(e)] == comp[n]) {
            internal[comp[n] as usize] = true;
        }
    }
    let mut members: Vec<(u32, u32)> = (0..g.num_states())
        .filter(|&n| internal[comp[n] as usize])
        .map(|n| (comp[n], n as u32))
        .collect();
    members.sort_unstable();
    members
}

/// The weak rule on cyclic component `grp` (its (component, state)
/// pairs) of a product reduced by symmetry, where the component is its
/// own lift: from each of its states every move that stays in it (an
/// edge of its row into it) reaches a state of it as it is, not through
/// a permutation, so that the original states it stands for and their
/// edges inside it are its own (its images are lifted components of
/// their own, with the same verdict). Then the rule is [`weak_witness`]'s
/// on the component; `None` where some move reaches it only through a
/// permutation (the component is lifted), or with chains (a chain's
/// steppers, followed on canonical states, may be permuted ones).
/// Each move of a state's row is one of its original successors, whose
/// canonical form is the row's target, and a mover's moves are all in
/// the row or none: so the moves of the movers of the edges into the
/// component that reach it as they are number those edges exactly when
/// none reaches it permuted. Of the mutex of 2 workgroups
/// of 8 invocations' 1,577 cyclic components, all are such (a spin
/// loop's step back to its own state).
fn unlifted_witness<S: Packed>(
    k: &Kernel,
    g: &Graph<S>,
    comp: &[u32],
    grp: &[(u32, u32)],
    out: &mut Vec<(Move, S)>,
) -> Result<Option<bool>, KernelError> {
    if k.chains {
        return Ok(None);
    }
    let sym = k.symmetry.as_ref().expect("symmetry");
    let c = grp[0].0;
    let masks = k.kind_masks();
    let (mut steppers, mut always) = (0u64, u64::MAX);
    for &(_, n) in grp {
        let n = n as usize;
        let s = g.state(n);
        let mut edges = [0usize; 32];
        for e in g.out(n).filter(|&e| comp[arena::target(e)] == c) {
            edges[arena::kind(e)] += 1;
        }
        // A twin's moves are left out of the row: its kind has those of
        // the kind it repeats.
        let rep = k.twin_kinds(&sym.twins(s.as_ref()));
        let (mut inside, mut movers) = (0, 0u32);
        for (kind, &r) in rep.iter().enumerate() {
            let e = edges[r as usize];
            if e > 0 {
                inside += e;
                movers |= 1 << kind;
                steppers |= if kind < 16 { masks[kind] } else { 0 };
            }
        }
        // Every move of a mover is in the row: those of the movers of
        // the edges inside are the successors to compare.
        out.clear();
        k.moves_of(&s, movers & 0xffff, movers >> 16, out)
            .map_err(KernelError::Fault)?;
        let as_they_are = out
            .iter()
            .filter(|(m, t)| {
                !m.is_finite() && (*t == s || g.table.get(t).is_some_and(|x| comp[x as usize] == c))
            })
            .count();
        if as_they_are != inside {
            return Ok(None);
        }
        always &= k.enabled(s.as_ref());
    }
    Ok(Some(grp.iter().any(|&(_, n)| {
        !k.guarantees_any(g.state(n as usize).as_ref(), always & !steppers)
    })))
}

/// Explores the original states of one reduced component into `lift`
/// (cleared first) and checks the weak rule on their components.
fn lifted_witness<S: Packed>(
    k: &Kernel,
    p: &Lean<S>,
    comp: &[u32],
    c: u32,
    roots: &[S],
    lift: &mut Graph<S>,
    meter: &mut Meter,
) -> Result<bool, KernelError> {
    let sym = k.symmetry.as_ref().expect("symmetry");
    let table = &p.graph.table;
    let in_component = |t: &S| {
        let mut canon = *t;
        sym.canonicalize(canon.as_mut());
        table.get(&canon).is_some_and(|n| comp[n as usize] == c)
    };
    lift.clear();
    let mut chains = Vec::new();
    lift.explore(roots, meter, p.max_states, |s, out| {
        k.successors_chained(s, out, false, &mut chains, false)?;
        out.retain(|(m, t)| !m.is_finite() && in_component(t));
        Ok(())
    })
    .map_err(|e| explore_error(p.max_states, e))?;
    weak_witness(k, lift, false)
}

/// Sweeps over every state [`strong_passes`] makes before it falls back
/// on a work list over reversed edges: breadth-first ids mostly grow
/// along edges, so a sweep from the last state to the first carries the
/// attractor back along most paths, reading the rows in order. The
/// seqlock's products reach the fixpoint in 4 or 5 sweeps, the 4 x 3
/// look-back's largest in 6; a graph whose paths run against the ids
/// would need a sweep per step, which the cap bounds.
const SWEEPS: usize = 8;

/// Whether every state is in the attractor of termination under strong
/// fairness: the least set holding the all-terminated states and every
/// state from which a Terminate leads into it, or in which some
/// guaranteed entity has a move and all its moves lead into it.
pub fn strong_passes<S: Packed>(k: &Kernel, p: &Lean<S>) -> bool {
    attractor_covers(k, p, SWEEPS).0
}

/// [`strong_passes`] with at most `sweeps` sweeps (0: the work list
/// alone), and the sweeps that reached the fixpoint (`None`: the work
/// list completed it): the toolkit's [`attractor`], whose least fixpoint
/// does not depend on the order states join it in.
fn attractor_covers<S: Packed>(k: &Kernel, p: &Lean<S>, sweeps: usize) -> (bool, Option<usize>) {
    let g = &p.graph;
    // An all-terminated state has no move: only states without edges
    // are read back.
    let mut good = NodeSet::new(g.num_states());
    for x in 0..g.num_states() {
        if g.rows.is_empty(x) && k.all_done(g.state(x).as_ref()) {
            good.insert(x);
        }
    }
    let rule = Strong {
        k,
        g,
        masks: k.kind_masks(),
    };
    let swept = attractor(&mut good, &rule, sweeps, || Reversed::of(&g.rows));
    (good.is_full(), swept)
}

/// The strong rule (§4.3): a state joins the attractor where a
/// Terminate leads into it, or some guaranteed entity has a move and all
/// its moves lead into it.
struct Strong<'a, S> {
    k: &'a Kernel,
    g: &'a Graph<S>,
    masks: [u64; 32],
}

impl<S: Packed> Rule for &Strong<'_, S> {
    #[inline(always)]
    fn joins(&self, good: &NodeSet, x: usize) -> bool {
        let (mut has, mut bad) = (0u64, 0u64);
        for e in self.g.out(x) {
            let mask = self.masks[arena::kind(e)];
            has |= mask;
            if good.contains(arena::target(e)) {
                if !arena::is_step(e) {
                    return true;
                }
            } else {
                bad |= mask;
            }
        }
        // Reading the guaranteed entities off the state costs more than
        // the edges: only when some entity has every move good.
        let open = has & !bad;
        open != 0 && self.k.guarantees_any(self.g.state(x).as_ref(), open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::product::Reductions;
    use crate::kernel::with_words;
    use progress_litmus::kernel::load::{load_all, Item};
    use progress_litmus::kernel::ScopedModel;
    use progress_litmus::{Base, Fairness, Model};

    /// The strong verdict of `k` with every cap on the sweeps, which
    /// must agree, and the sweeps that reached the fixpoint at the cap of
    /// 1 and at [`SWEEPS`].
    fn with_every_cap<S: Packed>(k: &Kernel) -> (bool, Option<usize>, Option<usize>) {
        let p = build::<S>(k, 1 << 20).unwrap();
        let all: Vec<_> = [0, 1, 2, SWEEPS, usize::MAX]
            .iter()
            .map(|&c| attractor_covers(k, &p, c))
            .collect();
        assert!(all.iter().all(|r| r.0 == all[0].0), "{all:?}");
        assert_eq!(all[0].1, None);
        (all[0].0, all[1].1, all[3].1)
    }

    /// Counts, over the cyclic components of `k`'s product, those
    /// [`unlifted_witness`] judges (passing, witnessing) and those it
    /// leaves to lifting (passing, witnessing), checking that each one
    /// it judges gets the verdict of lifting it.
    fn unlifted_against_lifted<S: Packed>(k: &Kernel, seen: &mut [usize; 4]) {
        let p = build::<S>(k, 1 << 20).unwrap();
        let g = &p.graph;
        let (comp, count) = progress_litmus::graph::scc(&g.rows);
        let members = cyclic_members(g, &comp, count);
        let mut lift: Graph<S> = Graph::new(RULE_BYTES_PER_STATE, 0);
        let mut meter = p.meter.rest();
        let mut out = Vec::new();
        for grp in members.chunk_by(|a, b| a.0 == b.0) {
            let roots: Vec<S> = grp.iter().map(|&(_, n)| g.state(n as usize)).collect();
            let c = grp[0].0;
            let lifted = lifted_witness(k, &p, &comp, c, &roots, &mut lift, &mut meter).unwrap();
            match unlifted_witness(k, g, &comp, grp, &mut out).unwrap() {
                Some(w) => {
                    assert_eq!(w, lifted, "component {c} of {} states", grp.len());
                    seen[usize::from(w)] += 1;
                }
                None => seen[2 + usize::from(lifted)] += 1,
            }
        }
    }

    /// A cyclic component that is its own lift gets, unlifted, the
    /// verdict lifting it gives: on the idiom library, the mutex of 2
    /// workgroups of 8 invocations and the parallel look-back of 3
    /// workgroups of 2 under the eleven models, with symmetry;
    /// components judged unlifted and lifted, witnessing and passing,
    /// are all met. (Judging every component unlifted gives the
    /// look-back's a witness that lifting refutes.)
    #[test]
    fn components_that_are_their_own_lift_keep_the_lifted_verdict() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms");
        let (items, errors) = load_all(std::slice::from_ref(&dir));
        assert!(errors.is_empty());
        let mut programs: Vec<_> = items
            .into_iter()
            .filter_map(|item| match item {
                Item::Kernel(p) => Some(p.program),
                _ => None,
            })
            .collect();
        let mutex = std::fs::read_to_string(dir.join("mutex.litmus")).unwrap();
        let mutex = mutex.replace("workgroups 2;", "workgroups 2;\nworkgroup_size 8;");
        programs.push(progress_litmus::kernel::litmus::parse(&mutex).unwrap());
        let lb = std::fs::read_to_string(dir.join("decoupled-lookback-parallel.litmus")).unwrap();
        let lb = lb
            .replace("workgroups 2;", "workgroups 3;")
            .replace("values 4;", "values 8;")
            .replace("flag[4]", "flag[6]");
        programs.push(progress_litmus::kernel::litmus::parse(&lb).unwrap());
        let mut seen = [0usize; 4];
        for p in &programs {
            for m in Model::ALL {
                let k = Kernel::new(p, &ScopedModel::flat(m), Reductions::ALL).unwrap();
                if k.symmetry.is_some() {
                    with_words!(k.words, unlifted_against_lifted(&k, &mut seen));
                }
            }
        }
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    }

    /// The lean product stores a twin's moves once (§8.1) and keeps the
    /// full product's verdicts, deadlocks and state and transition
    /// counts: on the mutex of 2 workgroups of 8 invocations (whose
    /// lanes, subgroups and workgroups are twins) and the parallel
    /// look-back of 3 workgroups of 2, under the eleven models; some
    /// products leave moves out, and both verdicts are met.
    #[test]
    fn twins_moves_stored_once_keep_the_full_products_verdicts() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms");
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        let sources = [
            read("mutex.litmus").replace("workgroups 2;", "workgroups 2;\nworkgroup_size 8;"),
            read("decoupled-lookback-parallel.litmus")
                .replace("workgroups 2;", "workgroups 3;")
                .replace("values 4;", "values 8;")
                .replace("flag[4]", "flag[6]"),
        ];
        let opts = crate::kernel::Options {
            max_states: 1 << 20,
            reductions: Reductions::ALL,
        };
        let (mut left_out, mut verdicts) = (0, [0usize; 2]);
        for src in &sources {
            let p = progress_litmus::kernel::litmus::parse(src).unwrap();
            for m in Model::ALL {
                let m = ScopedModel::flat(m);
                let k = Kernel::new(&p, &m, Reductions::ALL).unwrap();
                left_out += with_words!(k.words, twin_moves_of(&k));
                let lean = crate::kernel::decide_both(&p, &m, opts).unwrap();
                let full = crate::kernel::decide_both_full(&p, &m, opts).unwrap();
                for (l, f) in [(&lean.0, &full.0), (&lean.1, &full.1)] {
                    let key = |d: &crate::kernel::Decision| {
                        (d.verdict, d.deadlock, d.states, d.transitions)
                    };
                    assert_eq!(key(l), key(f), "under {m}");
                    verdicts[usize::from(l.verdict.passes())] += 1;
                }
            }
        }
        assert!(
            left_out > 0 && verdicts.iter().all(|&v| v > 0),
            "{left_out} {verdicts:?}"
        );
    }

    fn twin_moves_of<S: Packed>(k: &Kernel) -> usize {
        build::<S>(k, 1 << 20).unwrap().twin_moves
    }

    /// The sweeps, the work list alone and the work list after too few
    /// sweeps give the same strong verdicts on the idiom library under
    /// the five fair flat models; both ends are met: products that pass
    /// and fail, reached by sweeping and left to the work list.
    #[test]
    fn sweeps_and_the_work_list_find_the_same_attractor() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms");
        let (items, errors) = load_all(&[dir]);
        assert!(errors.is_empty());
        let (mut pass, mut fail, mut swept, mut listed) = (0, 0, 0, 0);
        for item in items {
            let Item::Kernel(p) = item else { continue };
            for base in [Base::Obe, Base::Fair, Base::Lobe, Base::HsaObe, Base::Hsa] {
                let m = ScopedModel::flat(Model::new(base, Fairness::Strong));
                let k = Kernel::new(&p.program, &m, Reductions::ALL).unwrap();
                let (ok, at_one, at_cap) = with_words!(k.words, with_every_cap(&k));
                (pass, fail) = if ok {
                    (pass + 1, fail)
                } else {
                    (pass, fail + 1)
                };
                listed += usize::from(at_one.is_none());
                swept += usize::from(at_cap.is_some_and(|s| s > 1));
            }
        }
        assert!(pass > 0 && fail > 0 && listed > 0 && swept > 0);
    }
}
