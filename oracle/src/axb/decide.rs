//! All eleven verdicts of SPEC §3 from one shared space
//! ([`crate::axb::shared_space`]), in one pass of Tarjan's algorithm:
//!
//! - a strongly connected component with an internal transition is a cycle
//!   (unfair fails); F is constant on it (F only grows on Steps and
//!   Terminates are irreversible, so no Terminate is internal), and a weak
//!   model fails when its F there is non-empty and every thread of it steps
//!   inside the component;
//! - the strong rule is a backward fixpoint, computed for the five strong
//!   models at once (a bit per model in a byte per state): a state is good
//!   for a model when it is all done, or has a Step taken while the model's
//!   F is empty, or reaches a good state by a fair move of that model (a
//!   Step of a thread in F, or a Terminate). A strong model passes when
//!   every state is good for it. Components complete in reverse
//!   topological order, so when one completes, every state its transitions
//!   leave it for is final: the component's own states settle by a few
//!   sweeps over its transitions. A component that takes more sweeps than
//!   `SWEEPS` (a long chain of fair moves inside one large component)
//!   hands the whole space to `strong`, the plain backward search over
//!   predecessor rows, so the cost stays linear.
//!
//! Nothing recurses: the depth-first search keeps its frames in a vector,
//! so no state space is too deep for it.
//!
//! This Tarjan is its own on purpose, not the shared one of
//! [`progress_litmus::graph`]: the verdicts computed here are compared with
//! those of the product engines ([`crate::axb::check`], on the graph
//! toolkit) in the tests, and a shared component search would make that
//! check agree with itself.

use crate::axb::shared_space::{Info, Space};
#[cfg(test)]
use progress_litmus::Base;
use progress_litmus::{Verdict, Verdicts};

/// The five models with a fair set, in the bit order of the masks below.
#[cfg(test)]
const BASES: [Base; 5] = [Base::Hsa, Base::Obe, Base::HsaObe, Base::Lobe, Base::Fair];
const ALL_MODELS: u8 = 0b1_1111;

/// F of each of the five bases (in [`BASES`] order) in a state, from T and
/// S \ T (see the table in [`crate::axb::shared_space`]). `all` has a bit per
/// thread.
#[inline(always)]
fn fair_sets(info: Info, all: u8) -> [u8; 5] {
    let term = info.term();
    let obe = info.started();
    let live = all & !term;
    let min_live = live & live.wrapping_neg();
    let started = obe | term;
    let lobe = if started == 0 {
        0
    } else {
        let top = 7 - started.leading_zeros();
        (((1u16 << (top + 1)) - 1) as u8) & !term
    };
    [min_live, obe, obe | min_live, lobe, live]
}

/// `SPREAD[x]` has bit `t` of `x` as the low bit of its byte `t`.
const SPREAD: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut x = 0;
    while x < 256 {
        let mut t = 0;
        while t < 8 {
            table[x] |= (((x >> t) & 1) as u64) << (8 * t);
            t += 1;
        }
        x += 1;
    }
    table
};

/// The fair sets transposed: byte `t` has the models (bits in [`BASES`]
/// order) whose F contains thread `t`.
#[inline(always)]
fn fair_by_thread(f: &[u8; 5]) -> u64 {
    SPREAD[f[0] as usize]
        | SPREAD[f[1] as usize] << 1
        | SPREAD[f[2] as usize] << 2
        | SPREAD[f[3] as usize] << 3
        | SPREAD[f[4] as usize] << 4
}

/// Buffers of the passes, reused from test to test.
#[derive(Default)]
pub(crate) struct Work {
    index: Vec<u32>,
    low: Vec<u32>,
    stack: Vec<u32>,
    frames: Vec<(u32, u32)>,
    good: Vec<u8>,
    pred_start: Vec<u32>,
    pred: Vec<u32>,
    /// The models under which each predecessor transition is a fair move.
    pred_fair: Vec<u8>,
    queue: Vec<u32>,
}

/// Positions in [`Verdicts`] of the weak and strong variants of [`BASES`],
/// and of unfair.
const WEAK_AT: [usize; 5] = [0, 1, 8, 2, 3];
const STRONG_AT: [usize; 5] = [4, 5, 9, 6, 7];
const UNFAIR_AT: usize = 10;

/// Sweeps over a component's transitions before the strong rule falls back
/// to the backward search over the whole space ([`strong`]).
const SWEEPS: usize = 8;

/// Larger components go to the backward search at once.
const SWEEP_MEMBERS: usize = 4096;

/// The eleven verdicts of the test whose shared space is `sp`.
pub(crate) fn decide(sp: &Space, w: &mut Work) -> Verdicts {
    decide_with(sp, w, SWEEPS)
}

fn decide_with(sp: &Space, w: &mut Work, sweeps: usize) -> Verdicts {
    let r = components(sp, w, sweeps);
    let strong_passes = match r.strong_passes {
        Some(p) => p,
        None => {
            if sp.num_states() > crate::axb::shared_space::LARGE {
                // Give the depth-first search's buffers back first.
                w.index = Vec::new();
                w.low = Vec::new();
                w.stack = Vec::new();
                w.frames = Vec::new();
            }
            strong(sp, w)
        }
    };
    let mut v = [Verdict::F; 11];
    for i in 0..5 {
        v[WEAK_AT[i]] = Verdict::from_pass(r.weak_fails & 1 << i == 0);
        v[STRONG_AT[i]] = Verdict::from_pass(strong_passes & 1 << i != 0);
    }
    v[UNFAIR_AT] = Verdict::from_pass(!r.cyclic);
    Verdicts(v)
}

/// What one pass of [`components`] finds.
struct Found {
    /// The space has a cycle.
    cyclic: bool,
    /// The weak models (bits in [`BASES`] order) that fail.
    weak_fails: u8,
    /// The strong models that pass, unless a component took too many
    /// sweeps.
    strong_passes: Option<u8>,
}

/// The models (bits in [`BASES`] order) under which each label out of a
/// state with fair sets `f` is a fair move, indexed by label: a Terminate
/// (labels 0..8) under every model, a Step of t (label 8 + t) under those
/// whose F holds t.
#[inline(always)]
fn fair_by_label(f: &[u8; 5]) -> [u8; 16] {
    ((fair_by_thread(f) as u128) << 64 | 0x1f1f_1f1f_1f1f_1f1f).to_le_bytes()
}

/// The models for which a state is good by itself: all done, or a Step
/// taken while F is empty (only OBE's and LOBE's F can be empty while a
/// thread is live). `steps`: whether some transition out of it is a Step.
#[inline(always)]
fn seed(info: Info, f: &[u8; 5], all: u8, steps: bool) -> u8 {
    if info.term() == all {
        ALL_MODELS
    } else if steps {
        (((f[1] == 0) as u8) << 1) | (((f[3] == 0) as u8) << 3)
    } else {
        0
    }
}

/// A state not reached yet (in `index`).
const UNSEEN: u32 = u32::MAX;
/// A state whose component is complete (in `index`); `low` then holds the
/// component's number.
const DONE: u32 = u32::MAX - 1;

/// Tarjan's algorithm with an explicit stack, from state 0 (every state is
/// reachable from it), deciding the weak and unfair rules per component and
/// the strong rule per state as components complete ([`Component`]).
#[inline(never)]
fn components(sp: &Space, w: &mut Work, sweeps: usize) -> Found {
    let n = sp.num_states();
    let all = ((1u16 << sp.n) - 1) as u8;
    let (start, succ) = (&sp.start[..], &sp.succ[..]);
    w.index.clear();
    w.index.resize(n, UNSEEN);
    w.low.clear();
    w.low.resize(n, 0);
    w.good.clear();
    w.good.resize(n, 0);
    let (index, low, good) = (&mut w.index[..], &mut w.low[..], &mut w.good[..]);
    let stack = &mut w.stack;
    let frames = &mut w.frames;
    stack.clear();
    frames.clear();
    // The strong models every completed state is good for start as all;
    // None once a component needed too many sweeps.
    let mut found = Found {
        cyclic: false,
        weak_fails: 0,
        strong_passes: Some(ALL_MODELS),
    };
    let mut next = 1u32;
    let mut comp = 0u32;
    index[0] = 0;
    low[0] = 0;
    stack.push(0);
    frames.push((0, start[0]));
    while let Some(top) = frames.last_mut() {
        let v = top.0 as usize;
        let e = top.1;
        if e < start[v + 1] {
            top.1 = e + 1;
            let x = succ[e as usize] as usize;
            let ix = index[x];
            if ix == UNSEEN {
                index[x] = next;
                low[x] = next;
                next += 1;
                stack.push(x as u32);
                frames.push((x as u32, start[x]));
            } else if ix < DONE && ix < low[v] {
                // x is on the stack.
                low[v] = ix;
            }
            continue;
        }
        frames.pop();
        let lv = low[v];
        if let Some(&(p, _)) = frames.last() {
            let p = p as usize;
            low[p] = low[p].min(lv);
        }
        if lv != index[v] {
            continue;
        }
        // v is the root of a component: the stack from v up.
        let mut at = stack.len() - 1;
        while stack[at] as usize != v {
            at -= 1;
        }
        let members = &stack[at..];
        for &m in members {
            index[m as usize] = DONE;
            low[m as usize] = comp;
        }
        let c = Component {
            sp,
            all,
            id: comp,
            members,
        };
        c.decide(v, index, low, good, sweeps, &mut found);
        stack.truncate(at);
        comp += 1;
    }
    found
}

/// A component that [`components`] has just completed: its members are
/// marked `DONE` with `id` in `low`, and every state it leaves to is in a
/// component completed before it, so `good` is final there.
struct Component<'a> {
    sp: &'a Space,
    /// Every thread's bit.
    all: u8,
    /// Its number, held in `low` by its members.
    id: u32,
    /// Its states, in discovery order.
    members: &'a [u32],
}

impl Component<'_> {
    /// Whether state `x` is one of the component's.
    #[inline(always)]
    fn holds(&self, index: &[u32], low: &[u32], x: usize) -> bool {
        low[x] == self.id && index[x] == DONE
    }

    /// Decides what the component adds to `found`: the unfair and weak
    /// rules on its internal transitions (from the root `v`'s fair sets:
    /// the terminated and started threads only grow, so on a cycle every
    /// member has the same), the strong rule on its states' `good` bits.
    #[inline(always)]
    fn decide(
        &self,
        v: usize,
        index: &[u32],
        low: &[u32],
        good: &mut [u8],
        sweeps: usize,
        found: &mut Found,
    ) {
        let (internal, steppers) = self.seed(index, low, good);
        if internal {
            found.cyclic = true;
            for (i, &f) in fair_sets(self.sp.info[v], self.all).iter().enumerate() {
                if f != 0 && f & !steppers == 0 {
                    found.weak_fails |= 1 << i;
                }
            }
            // Good states inside the component make their fair
            // predecessors inside it good: sweep until nothing changes.
            if found.strong_passes.is_some() && !self.settle(index, low, good, sweeps) {
                found.strong_passes = None;
            }
        }
        if let Some(p) = &mut found.strong_passes {
            for &m in self.members {
                *p &= good[m as usize];
            }
        }
    }

    /// Each member's `good` from its own state and the transitions that
    /// leave the component (their targets are final). Returns whether the
    /// component has an internal transition (a cycle) and which threads
    /// step on those (Terminates are never internal: every internal
    /// transition is a Step).
    #[inline(always)]
    fn seed(&self, index: &[u32], low: &[u32], good: &mut [u8]) -> (bool, u8) {
        let sp = self.sp;
        let (start, succ, labels, info) =
            (&sp.start[..], &sp.succ[..], &sp.labels[..], &sp.info[..]);
        let mut internal = false;
        let mut steppers = 0u8;
        for &m in self.members {
            let m = m as usize;
            let f = fair_sets(info[m], self.all);
            let by_label = fair_by_label(&f);
            let mut steps = 0u8;
            let mut g = 0u8;
            for e in start[m] as usize..start[m + 1] as usize {
                let x = succ[e] as usize;
                let l = labels[e];
                steps |= l;
                if self.holds(index, low, x) {
                    internal = true;
                    steppers |= 1 << (l & 7);
                } else {
                    // Leaves the component: x is final.
                    g |= good[x] & by_label[l as usize & 15];
                }
            }
            good[m] = g | seed(info[m], &f, self.all, steps & 8 != 0);
        }
        (internal, steppers)
    }

    /// Spreads `good` inside the component until nothing changes, in at
    /// most `sweeps` sweeps (none for a component over
    /// [`SWEEP_MEMBERS`] states: the whole-space fixpoint is cheaper
    /// then). Returns whether it settled.
    #[inline(always)]
    fn settle(&self, index: &[u32], low: &[u32], good: &mut [u8], sweeps: usize) -> bool {
        let sp = self.sp;
        let (start, succ, labels, info) =
            (&sp.start[..], &sp.succ[..], &sp.labels[..], &sp.info[..]);
        let tries = if self.members.len() <= SWEEP_MEMBERS {
            sweeps
        } else {
            0
        };
        for _ in 0..tries {
            let mut changed = false;
            // Reverse discovery order: along the depth-first tree, good
            // flows from child to parent in one sweep.
            for &m in self.members.iter().rev() {
                let m = m as usize;
                let by_label = fair_by_label(&fair_sets(info[m], self.all));
                let mut g = good[m];
                for e in start[m] as usize..start[m + 1] as usize {
                    let x = succ[e] as usize;
                    if self.holds(index, low, x) {
                        g |= good[x] & by_label[labels[e] as usize & 15];
                    }
                }
                if g != good[m] {
                    good[m] = g;
                    changed = true;
                }
            }
            if !changed {
                return true;
            }
        }
        false
    }
}

/// The backward fixpoint of the strong rule for the five models at once,
/// over the whole space by predecessor rows; returns the models (bits in
/// [`BASES`] order) that pass.
#[inline(never)]
fn strong(sp: &Space, w: &mut Work) -> u8 {
    let n = sp.num_states();
    let m = sp.num_transitions();
    let all = ((1u16 << sp.n) - 1) as u8;
    let (start, succ, labels, info) = (&sp.start[..], &sp.succ[..], &sp.labels[..], &sp.info[..]);
    // Predecessor rows: count, sum, then fill backwards. Each predecessor
    // transition carries the models under which it is a fair move; the good
    // transitions ("all done", a Step taken while F is empty) seed the
    // fixpoint.
    w.pred_start.clear();
    w.pred_start.resize(n + 1, 0);
    let pred_start = &mut w.pred_start[..];
    for &x in succ {
        pred_start[x as usize] += 1;
    }
    let mut acc = 0;
    for c in pred_start.iter_mut() {
        acc += *c;
        *c = acc;
    }
    w.pred.clear();
    w.pred.resize(m, 0);
    w.pred_fair.clear();
    w.pred_fair.resize(m, 0);
    w.good.clear();
    w.good.resize(n, 0);
    w.queue.clear();
    let (pred, pred_fair, good, queue) = (
        &mut w.pred[..],
        &mut w.pred_fair[..],
        &mut w.good[..],
        &mut w.queue,
    );
    for v in (0..n).rev() {
        let f = fair_sets(info[v], all);
        let by_label = fair_by_label(&f);
        let mut steps = 0u8;
        let edges = start[v] as usize..start[v + 1] as usize;
        for (&x, &l) in succ[edges.clone()].iter().zip(&labels[edges]).rev() {
            let x = x as usize;
            pred_start[x] -= 1;
            let at = pred_start[x] as usize;
            pred[at] = v as u32;
            pred_fair[at] = by_label[l as usize & 15];
            steps |= l;
        }
        let g = seed(info[v], &f, all, steps & 8 != 0);
        if g != 0 {
            good[v] = g;
            queue.push(v as u32);
        }
    }
    while let Some(x) = queue.pop() {
        let x = x as usize;
        let g = good[x];
        for i in pred_start[x] as usize..pred_start[x + 1] as usize {
            let s = pred[i] as usize;
            let add = g & pred_fair[i] & !good[s];
            if add != 0 {
                good[s] |= add;
                queue.push(s as u32);
            }
        }
    }
    good.iter().fold(ALL_MODELS, |a, &g| a & g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axb::fair_set;

    /// The closed forms of F agree with the SPEC §2 update rules on every
    /// path of a few steps, for every thread count.
    /// The per-component strong rule agrees with the backward search over
    /// the whole space, on random programs (with sweeps, and with every
    /// cyclic component sent to the fallback).
    #[test]
    fn component_sweeps_agree_with_the_backward_search() {
        use progress_litmus::{Instr, Target, Test};
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let mut builder = crate::axb::shared_space::Builder::default();
        let (mut space, mut work) = (Space::default(), Work::default());
        let mut fell_back = 0;
        for _ in 0..3000 {
            let threads = (0..1 + rand(4))
                .map(|_| {
                    let len = 1 + rand(4) as usize;
                    (0..len)
                        .map(|_| Instr {
                            loc: rand(3) as u8,
                            check: rand(3) as u8,
                            jump: Target::from_pc(rand(len as u64 + 1) as usize, len),
                            exch: (rand(3) > 0).then(|| rand(3) as u8),
                        })
                        .collect()
                })
                .collect();
            let test = Test::new(threads).unwrap();
            builder.build(&test, usize::MAX, &mut space).unwrap();
            let (space, work) = (&space, &mut work);
            let swept = components(space, work, SWEEPS);
            let forced = components(space, work, 0);
            let global = strong(space, work);
            assert_eq!(forced.strong_passes.is_none(), forced.cyclic, "{test:?}");
            if let Some(p) = swept.strong_passes {
                assert_eq!(p, global, "{test:?}");
            } else {
                fell_back += 1;
            }
            assert_eq!(
                decide_with(space, work, SWEEPS),
                decide_with(space, work, 0),
                "{test:?}"
            );
            assert_eq!(
                (swept.cyclic, swept.weak_fails),
                (forced.cyclic, forced.weak_fails)
            );
        }
        // The sweeps settle nearly every component of programs this size.
        assert!(fell_back < 30, "{fell_back}");
    }

    #[test]
    fn verdict_positions_follow_the_model_order() {
        use progress_litmus::{Fairness, Model};
        for (i, &b) in BASES.iter().enumerate() {
            assert_eq!(WEAK_AT[i], Model::new(b, Fairness::Weak).index());
            assert_eq!(STRONG_AT[i], Model::new(b, Fairness::Strong).index());
        }
        assert_eq!(UNFAIR_AT, Model::new(Base::Unfair, Fairness::Weak).index());
    }

    #[test]
    fn closed_forms_follow_the_update_rules() {
        for n in 1..=8usize {
            let all = ((1u16 << n) - 1) as u8;
            // Random walks of events: (thread, terminate?).
            let mut seed = 0x9e37_79b9u64 + n as u64;
            for _ in 0..2000 {
                let mut term = 0u8;
                let mut started = 0u8;
                let mut f = BASES.map(|b| fair_set::initial(b, n));
                for _ in 0..12 {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let t = (seed % n as u64) as usize;
                    let bit = 1u8 << t;
                    if term & bit != 0 {
                        continue;
                    }
                    // A thread may terminate only after it has stepped.
                    let terminate = started & bit != 0 && (seed >> 8) % 3 == 1;
                    if terminate {
                        term |= bit;
                        started &= !bit;
                        for (i, &b) in BASES.iter().enumerate() {
                            f[i] = fair_set::after_terminate(b, f[i], t, n, term);
                        }
                    } else {
                        for (i, &b) in BASES.iter().enumerate() {
                            f[i] = fair_set::after_step(b, f[i], t, term);
                        }
                        started |= bit;
                    }
                    assert_eq!(fair_sets(Info::new(term, started), all), f);
                }
            }
        }
    }
}
