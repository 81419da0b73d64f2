//! The state-space clauses of SPEC §4 on reusable buffers: the explicit
//! engine's inner loop.
//!
//! [`crate::enumerate::constraints::check_space`] is the definition: it
//! reads a petgraph [`progress_litmus::axb::space::Lts`] built by axb's
//! general explorer. Profiled on one shard of 4t6i (issue 24), that
//! definition spent about three quarters of the explicit engine's time in
//! building the graph: a fresh hash map, node and edge vectors and a
//! compiled [`progress_litmus::axb::machine::Machine`] for each of the
//! hundreds of thousands of programs that pass the syntactic clauses, and
//! their frees. [`SpaceCheck`] decides the same clauses (the bounds,
//! §4.4 every branch both taken and not taken, §4.5 termination always
//! possible, §4.6 a cycle, and `--store-must-change`) on buffers it keeps
//! from program to program: states in breadth-first order with their
//! edges grouped by source (so the forward graph needs no adjacency
//! lists), the reversed edges by counting sort, Kahn's algorithm on the
//! in-degrees. The step is the one of `machine.rs` (SPEC §1). States are
//! numbered through a dense table indexed by a mixed-radix number (each
//! used location's value, each thread's pc), updated by a difference per
//! step and reset by a round stamp, not cleared; only a test whose radix
//! product passes `DENSE_MAX` falls back to hashing.
//!
//! Only the yes/no answer is computed, never which clause failed: the
//! journal check and the SAT engine keep the definition, and
//! `synth/tests/engines.rs` and this file's tests hold the two to the same
//! answer on every program of small configurations.

use crate::enumerate::config::Config;
use progress_litmus::axb::test::{Test, MAX_THREADS};
use rustc_hash::FxHashMap;

/// One instruction compiled for stepping (as in axb's `machine.rs`).
#[derive(Clone, Copy, Debug, Default)]
struct Op {
    loc_shift: u32,
    check: u64,
    /// The value written, if any.
    exch: Option<u64>,
    jump: u64,
    /// The dense index's stride of the location and of the thread's pc.
    loc_stride: i64,
    pc_stride: i64,
}

const PC_SHIFT: u32 = 32;
/// Slots per thread in `ops`: pcs 0..15.
const SLOTS: usize = 16;
/// The largest dense state index: past it, states are hashed.
const DENSE_MAX: usize = 1 << 16;

/// Reusable buffers for deciding the state-space clauses of many programs.
#[derive(Default)]
pub struct SpaceCheck {
    ops: Vec<Op>,
    lens: [u8; MAX_THREADS],
    /// Reachable states, breadth-first order (index 0: the initial one).
    states: Vec<u64>,
    index: FxHashMap<u64, u32>,
    /// The dense index of each state in `states` (when `dense_size > 0`).
    dense_of: Vec<u32>,
    /// Number of dense indexes (mixed radix over memory values and pcs),
    /// 0 when too many: then `index` is used.
    dense_size: usize,
    /// Per dense index: the state's number, valid where `stamp == round`.
    slot: Vec<u32>,
    stamp: Vec<u32>,
    round: u32,
    /// The largest dense table to use ([`DENSE_MAX`]; 0: always hash).
    dense_max: usize,
    /// Edge targets, grouped by source in `states` order.
    dst: Vec<u32>,
    /// `first[k]..first[k + 1]`: the edges out of state `k`.
    first: Vec<u32>,
    /// Per `(thread, pc)`: bit 0 taken, bit 1 not taken, bit 2 changing.
    seen: Vec<u8>,
    /// Reversed edges by counting sort: `rfirst[k]..rfirst[k + 1]` in `rsrc`.
    rfirst: Vec<u32>,
    rsrc: Vec<u32>,
    mark: Vec<bool>,
    stack: Vec<u32>,
    indegree: Vec<u32>,
}

impl SpaceCheck {
    pub fn new() -> SpaceCheck {
        SpaceCheck {
            dense_max: DENSE_MAX,
            ..SpaceCheck::default()
        }
    }

    /// Whether `test`'s state space satisfies the clauses of
    /// [`crate::enumerate::constraints::check_space`] (with the bound on
    /// states of [`crate::enumerate::constraints::check`]). `test` must be
    /// valid (at most [`MAX_THREADS`] threads, pcs and values under 16).
    pub fn satisfies(&mut self, test: &Test, cfg: &Config) -> bool {
        if !branches_can_go_both_ways(test) {
            return false;
        }
        self.compile(test);
        let max_states = cfg.max_states.unwrap_or(usize::MAX);
        if !self.explore(test.threads.len(), max_states, cfg.store_must_change) {
            return false;
        }
        if cfg.max_actions.is_some_and(|b| self.dst.len() > b) {
            return false;
        }
        for (t, th) in test.threads.iter().enumerate() {
            for (pc, i) in th.iter().enumerate() {
                let s = self.seen[t * SLOTS + pc];
                if i.is_branching(pc, th.len()) && s & 3 != 3 {
                    return false;
                }
                if cfg.store_must_change && i.exch.is_some() && s & 4 == 0 {
                    return false;
                }
            }
        }
        self.reverse();
        self.all_can_finish(test.threads.len()) && self.has_cycle()
    }

    fn compile(&mut self, test: &Test) {
        let n = test.threads.len();
        self.ops.clear();
        self.ops.resize(n * SLOTS, Op::default());
        self.seen.clear();
        self.seen.resize(n * SLOTS, 0);
        // Memory holds 0 or a value written; locations 0..locs are used.
        let values = 1 + test
            .instrs()
            .filter_map(|(_, _, i)| i.exch)
            .max()
            .unwrap_or(0) as usize;
        let locs = 1 + test.instrs().map(|(_, _, i)| i.loc).max().unwrap_or(0) as usize;
        let mut size = values.saturating_pow(locs as u32);
        let mut pc_strides = [0i64; MAX_THREADS];
        for (t, th) in test.threads.iter().enumerate() {
            pc_strides[t] = size as i64;
            size = size.saturating_mul(th.len() + 1);
        }
        self.dense_size = if size <= self.dense_max { size } else { 0 };
        for (t, th) in test.threads.iter().enumerate() {
            self.lens[t] = th.len() as u8;
            for (pc, i) in th.iter().enumerate() {
                self.ops[t * SLOTS + pc] = Op {
                    loc_shift: 4 * i.loc as u32,
                    check: i.check as u64,
                    exch: i.exch.map(u64::from),
                    jump: i.jump.pc(th.len()) as u64,
                    loc_stride: (values as i64).pow(i.loc as u32),
                    pc_stride: pc_strides[t],
                };
            }
        }
    }

    /// Starts a new exploration's dense table (no clearing: a new round).
    fn new_round(&mut self) {
        if self.slot.len() < self.dense_size {
            self.slot.resize(self.dense_size, 0);
            self.stamp.resize(self.dense_size, 0);
        }
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            self.stamp.fill(0);
            self.round = 1;
        }
    }

    /// The number of state `next` (dense index `di` when dense), `fresh`
    /// if it is new (then recorded as that).
    #[inline]
    fn lookup(&mut self, next: u64, di: usize, fresh: u32) -> u32 {
        if self.dense_size == 0 {
            return *self.index.entry(next).or_insert(fresh);
        }
        if self.stamp[di] == self.round {
            return self.slot[di];
        }
        self.stamp[di] = self.round;
        self.slot[di] = fresh;
        fresh
    }

    /// Builds the reachable states and edges from memory 0, pcs 0; false
    /// once there would be more than `max_states` states.
    fn explore(&mut self, n: usize, max_states: usize, store_must_change: bool) -> bool {
        self.states.clear();
        self.index.clear();
        self.dst.clear();
        self.first.clear();
        self.dense_of.clear();
        self.states.push(0);
        self.dense_of.push(0);
        if self.dense_size == 0 {
            self.index.insert(0, 0);
        } else {
            self.new_round();
            self.lookup(0, 0, 0);
        }
        let mut k = 0;
        while k < self.states.len() {
            let s = self.states[k];
            let ds = self.dense_of[k] as i64;
            self.first.push(self.dst.len() as u32);
            for t in 0..n {
                let pc_shift = PC_SHIFT + 4 * t as u32;
                let pc = (s >> pc_shift) & 0xf;
                if pc >= self.lens[t] as u64 {
                    continue;
                }
                let slot = t * SLOTS + pc as usize;
                let op = self.ops[slot];
                let old = (s >> op.loc_shift) & 0xf;
                let mut next = s;
                if let Some(x) = op.exch {
                    next = (next & !(0xf << op.loc_shift)) | (x << op.loc_shift);
                    if store_must_change && old != x {
                        self.seen[slot] |= 4;
                    }
                }
                let taken = old == op.check;
                self.seen[slot] |= if taken { 1 } else { 2 };
                let new_pc = if taken { op.jump } else { pc + 1 };
                next = (next & !(0xf << pc_shift)) | (new_pc << pc_shift);
                let di = if self.dense_size > 0 {
                    let written = op.exch.map_or(0, |x| x as i64 - old as i64);
                    ds + written * op.loc_stride + (new_pc as i64 - pc as i64) * op.pc_stride
                } else {
                    0
                };
                let fresh = self.states.len() as u32;
                let m = self.lookup(next, di as usize, fresh);
                if m == fresh {
                    if self.states.len() >= max_states {
                        return false;
                    }
                    self.states.push(next);
                    self.dense_of.push(di as u32);
                }
                self.dst.push(m);
            }
            k += 1;
        }
        self.first.push(self.dst.len() as u32);
        true
    }

    /// The reversed edges (counting sort on targets) and the in-degrees.
    fn reverse(&mut self) {
        let ns = self.states.len();
        self.indegree.clear();
        self.indegree.resize(ns, 0);
        for &d in &self.dst {
            self.indegree[d as usize] += 1;
        }
        self.rfirst.clear();
        self.rfirst.push(0);
        let mut acc = 0;
        for &d in &self.indegree {
            acc += d;
            self.rfirst.push(acc);
        }
        self.rsrc.clear();
        self.rsrc.resize(self.dst.len(), 0);
        // Fill from the back of each target's range.
        let mut fill: Vec<u32> = std::mem::take(&mut self.stack);
        fill.clear();
        fill.extend_from_slice(&self.rfirst[1..]);
        for src in 0..ns {
            for e in self.first[src]..self.first[src + 1] {
                let d = self.dst[e as usize] as usize;
                fill[d] -= 1;
                self.rsrc[fill[d] as usize] = src as u32;
            }
        }
        self.stack = fill;
    }

    /// §4.5: every state reaches one where every thread has finished.
    fn all_can_finish(&mut self, n: usize) -> bool {
        let ns = self.states.len();
        self.mark.clear();
        self.mark.resize(ns, false);
        self.stack.clear();
        for (k, &s) in self.states.iter().enumerate() {
            let done =
                (0..n).all(|t| ((s >> (PC_SHIFT + 4 * t as u32)) & 0xf) >= self.lens[t] as u64);
            if done {
                self.mark[k] = true;
                self.stack.push(k as u32);
            }
        }
        let mut reached = self.stack.len();
        while let Some(k) = self.stack.pop() {
            let k = k as usize;
            for e in self.rfirst[k]..self.rfirst[k + 1] {
                let p = self.rsrc[e as usize] as usize;
                if !self.mark[p] {
                    self.mark[p] = true;
                    reached += 1;
                    self.stack.push(p as u32);
                }
            }
        }
        reached == ns
    }

    /// §4.6: a cycle (Kahn's algorithm on the in-degrees; consumes them).
    fn has_cycle(&mut self) -> bool {
        let ns = self.states.len();
        self.stack.clear();
        for (k, &d) in self.indegree.iter().enumerate() {
            if d == 0 {
                self.stack.push(k as u32);
            }
        }
        let mut removed = 0;
        while let Some(k) = self.stack.pop() {
            removed += 1;
            let k = k as usize;
            for e in self.first[k]..self.first[k + 1] {
                let d = self.dst[e as usize] as usize;
                self.indegree[d] -= 1;
                if self.indegree[d] == 0 {
                    self.stack.push(d as u32);
                }
            }
        }
        removed < ns
    }
}

/// A necessary condition of §4.4 read off the program text: a location
/// only ever holds 0 or a value some exchange writes there, so a branching
/// instruction on it can be taken only if its check value is one of those,
/// and not taken only if one of those differs from it. False means some
/// branch is impossible whatever the schedule (the state space would say
/// `BranchImpossible`), so no state space need be built.
fn branches_can_go_both_ways(test: &Test) -> bool {
    // Bit v of `held[l]`: location l can hold value v.
    let mut held = [1u32; 8];
    for (_, _, i) in test.instrs() {
        if let Some(x) = i.exch {
            held[i.loc as usize & 7] |= 1 << (x & 31);
        }
    }
    test.threads.iter().all(|th| {
        th.iter().enumerate().all(|(pc, i)| {
            let h = held[i.loc as usize & 7];
            let c = 1u32 << (i.check & 31);
            i.is_store_like(pc, th.len()) || (h & c != 0 && h & !c != 0)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enumerate::constraints::{check, check_program};
    use crate::enumerate::program::{positions, shapes, units};
    use progress_litmus::axb::test::Instr;

    /// Every program of `cfg` (first-use locations), through `f`.
    fn each_program(cfg: &Config, f: &mut dyn FnMut(&Test)) {
        for u in units(cfg) {
            let pos = positions(&u.lens);
            let mut test = Test {
                threads: u.lens.iter().map(|&l| vec![u.first(); l]).collect(),
            };
            fn go(
                cfg: &Config,
                pos: &[(usize, usize)],
                lens: &[usize],
                test: &mut Test,
                p: usize,
                used: usize,
                f: &mut dyn FnMut(&Test),
            ) {
                if p == pos.len() {
                    return f(test);
                }
                let (t, pc) = pos[p];
                for loc in 0..=used.min(cfg.locs - 1) {
                    for s in shapes(lens[t], pc, cfg.values) {
                        test.threads[t][pc] = Instr {
                            loc: loc as u8,
                            ..s
                        };
                        go(cfg, pos, lens, test, p + 1, used.max(loc + 1), f);
                    }
                }
            }
            go(cfg, &pos, &u.lens, &mut test, 1, 1, f);
        }
    }

    /// The fast check answers as the definition on every program that
    /// passes the syntactic clauses, with and without bounds and
    /// store-must-change, with the dense table and with hashing; it is not
    /// vacuous (both answers occur).
    #[test]
    fn agrees_with_the_definition_on_every_program() {
        let mut cfgs = vec![Config::new(2, 3), Config::new(3, 3), Config::new(2, 4)];
        let mut b = Config::new(2, 3);
        b.max_states = Some(6);
        b.max_actions = Some(9);
        cfgs.push(b);
        let mut s = Config::new(2, 3);
        s.store_must_change = true;
        s.values = 3;
        cfgs.push(s);
        let mut l3 = Config::new(3, 3);
        l3.locs = 3;
        cfgs.push(l3);
        let mut dense = SpaceCheck::new();
        let mut hashed = SpaceCheck::default();
        for cfg in &cfgs {
            let (mut yes, mut no) = (0, 0);
            each_program(cfg, &mut |t| {
                if check_program(t, cfg).is_err() {
                    return;
                }
                let want = check(t, cfg).is_ok();
                assert_eq!(dense.satisfies(t, cfg), want, "{} {t:?}", cfg.name());
                assert_eq!(hashed.satisfies(t, cfg), want, "{} {t:?}", cfg.name());
                if want {
                    yes += 1
                } else {
                    no += 1
                }
            });
            assert!(yes > 0 && no > 0, "{}: {yes} {no}", cfg.name());
        }
    }
}
