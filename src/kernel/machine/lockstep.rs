//! Lockstep subgroups (docs/KERNEL.md §2.4): the actors are subgroups,
//! whose active lanes step together; a divergent branch splits them at a
//! reconvergence stack, the paths meeting again at the branch's immediate
//! post-dominator. Per subgroup the state holds its stack (depth, then
//! entries of pc, reconvergence pc and lane mask) and a wait flag.

use super::{
    collective_result, get, next_permutation, set, Branch, Fault, Machine, Packed, StepInfo, View,
};
use crate::kernel::cfg;
use crate::kernel::program::{Addr, AtomicOp, CondBranch, Instr, Program};

/// What lockstep keeps beside the shared layout: per subgroup where its
/// stack lies, and per code block the immediate post-dominators.
#[derive(Clone, Debug, Default)]
pub(super) struct Stacks {
    pub(super) sgs: Vec<Sg>,
    pub(super) ipdom: Vec<Vec<usize>>,
    pub(super) depth_bits: u32,
    pub(super) entry_bits: u32,
    pub(super) max_depth: usize,
}

impl Stacks {
    /// The stacks' widths for `p` (`pcb`: bits of a pc); the subgroups are
    /// placed by [`Machine::lay_out_subgroups`].
    pub(super) fn new(p: &Program, pcb: u32) -> Stacks {
        let s = p.subgroup_size as usize;
        Stacks {
            sgs: Vec::new(),
            ipdom: p.codes.iter().map(cfg::ipdoms).collect(),
            depth_bits: super::bits_for(2 * s - 1),
            entry_bits: 2 * pcb + s as u32,
            max_depth: 2 * s - 1,
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Sg {
    wg: usize,
    code: usize,
    first_inv: usize,
    depth_off: u32,
    entries_off: u32,
    wait_off: u32,
}

/// A stack entry of a lockstep subgroup: the lanes of `mask` are at `pc`
/// and reconverge with the entry below at `rpc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    pc: usize,
    rpc: usize,
    mask: u32,
}

impl Machine {
    /// Places every lockstep subgroup's stack from bit `off`; returns the end.
    pub(super) fn lay_out_subgroups(&mut self, mut off: u32) -> u32 {
        if !self.lockstep() {
            return off;
        }
        let per = self.n / self.s;
        for g in 0..self.program.workgroups as usize * per {
            let wg = g / per;
            let depth_off = off;
            off += self.stacks.depth_bits;
            let entries_off = off;
            off += self.stacks.entry_bits * self.stacks.max_depth as u32;
            let wait_off = off;
            off += 1;
            self.stacks.sgs.push(Sg {
                wg,
                code: self.program.wg_code[wg] as usize,
                first_inv: g * self.s,
                depth_off,
                entries_off,
                wait_off,
            });
        }
        off
    }

    /// The top of every subgroup's stack at the start: all lanes at pc 0.
    pub(super) fn lockstep_init(&self, s: &mut [u64]) {
        for g in 0..self.stacks.sgs.len() {
            let len = self.lens[self.stacks.sgs[g].code];
            if len > 0 {
                let mask = (1 << self.s) - 1;
                self.write_stack(
                    s,
                    g,
                    &[Entry {
                        pc: 0,
                        rpc: len,
                        mask,
                    }],
                );
            }
        }
    }

    /// The active lanes of subgroup `g` (the top of its stack), as
    /// invocations.
    pub(super) fn active_invocations(&self, s: &[u64], g: usize) -> Vec<usize> {
        let first = self.stacks.sgs[g].first_inv;
        let mask = self.read_stack(s, g).last().map_or(0, |e| e.mask);
        (0..self.s)
            .filter(|l| mask >> l & 1 == 1)
            .map(|l| first + l)
            .collect()
    }

    /// Whether subgroup `g` can step: it has lanes left, and does not wait.
    #[inline]
    pub(super) fn lockstep_can_step(&self, s: &[u64], g: usize) -> bool {
        let sg = &self.stacks.sgs[g];
        get(s, sg.depth_off, self.stacks.depth_bits) > 0 && get(s, sg.wait_off, 1) == 0
    }

    /// The pc of the active lanes of subgroup `g`.
    pub(super) fn lockstep_next_pc(&self, s: &[u64], g: usize) -> Option<usize> {
        self.read_stack(s, g).last().map(|e| e.pc)
    }

    /// [`Machine::waiting`] in lockstep, off the interleaved path.
    #[inline(never)]
    pub(super) fn lockstep_waiting(&self, s: &[u64], i: usize) -> bool {
        let g = self.invs[i].sg;
        get(s, self.stacks.sgs[g].wait_off, 1) != 0
            && self
                .read_stack(s, g)
                .last()
                .is_some_and(|e| e.mask & (1 << self.invs[i].lane) != 0)
    }

    /// [`Machine::pc`] in lockstep, off the interleaved path (which then
    /// inlines where it is called).
    #[inline(never)]
    pub(super) fn lockstep_pc(&self, s: &[u64], i: usize) -> usize {
        let v = &self.invs[i];
        self.read_stack(s, v.sg)
            .iter()
            .rev()
            .find(|e| e.mask & (1 << v.lane) != 0)
            .map_or(self.lens[v.code], |e| e.pc)
    }

    /// [`Machine::view`] in lockstep: each subgroup's stack read once.
    pub(super) fn lockstep_view(&self, s: &[u64]) -> View {
        let mut v = View::default();
        for (g, sg) in self.stacks.sgs.iter().enumerate() {
            let stack = self.read_stack(s, g);
            let wait = get(s, sg.wait_off, 1) != 0;
            let len = self.lens[sg.code];
            let top = stack.last();
            for lane in 0..self.s {
                let i = sg.first_inv + lane;
                let pc = stack
                    .iter()
                    .rev()
                    .find(|e| e.mask & (1 << lane) != 0)
                    .map_or(len, |e| e.pc);
                v.pc[i] = pc as u8;
                v.terminated |= (get(s, self.invs[i].term_off, 1) as u32) << i;
                v.waiting |= ((wait && top.is_some_and(|e| e.mask & (1 << lane) != 0)) as u32) << i;
                v.finished |= ((pc >= len) as u32) << i;
            }
            if let (Some(e), false) = (top, wait) {
                v.steppable |= 1 << g;
                v.next[g] = e.pc as u8;
            }
        }
        v
    }

    fn read_stack(&self, s: &[u64], g: usize) -> Vec<Entry> {
        let sg = &self.stacks.sgs[g];
        let d = get(s, sg.depth_off, self.stacks.depth_bits) as usize;
        (0..d)
            .map(|k| {
                let off = sg.entries_off + k as u32 * self.stacks.entry_bits;
                Entry {
                    pc: get(s, off, self.pcb) as usize,
                    rpc: get(s, off + self.pcb, self.pcb) as usize,
                    mask: get(s, off + 2 * self.pcb, self.s as u32) as u32,
                }
            })
            .collect()
    }

    fn write_stack(&self, s: &mut [u64], g: usize, st: &[Entry]) {
        let sg = &self.stacks.sgs[g];
        debug_assert!(st.len() <= self.stacks.max_depth);
        set(s, sg.depth_off, self.stacks.depth_bits, st.len() as u64);
        for k in 0..self.stacks.max_depth {
            let off = sg.entries_off + k as u32 * self.stacks.entry_bits;
            let e = st.get(k).copied().unwrap_or(Entry {
                pc: 0,
                rpc: 0,
                mask: 0,
            });
            set(s, off, self.pcb, e.pc as u64);
            set(s, off + self.pcb, self.pcb, e.rpc as u64);
            set(s, off + 2 * self.pcb, self.s as u32, e.mask as u64);
        }
    }

    pub(super) fn lockstep_steps<S: Packed>(
        &self,
        s: &S,
        g: usize,
        out: &mut Vec<(StepInfo, S)>,
    ) -> Result<(), Fault> {
        let sg = &self.stacks.sgs[g];
        let len = self.lens[sg.code];
        let mut stack = self.read_stack(s.as_ref(), g);
        let top = *stack.last().expect("a subgroup that can step has a stack");
        let pc = top.pc;
        let instr = self.program.codes[sg.code].instrs[pc];
        let lanes: Vec<usize> = (0..self.s).filter(|l| top.mask & (1 << l) != 0).collect();
        let inv = |l: usize| sg.first_inv + l;
        let first = out.len();
        let push = |t: S, info: StepInfo, out: &mut Vec<(StepInfo, S)>| {
            if !out[first..].iter().any(|(_, u)| *u == t) {
                out.push((info, t));
            }
        };
        let info = StepInfo {
            pc: pc as u8,
            branch: Branch::None,
            choice: 0,
            finite: false,
        };
        match instr {
            Instr::Assign { .. } | Instr::Collective { .. } => {
                let mut t = *s;
                self.lockstep_registers(t.as_mut(), g, &lanes, instr);
                stack.last_mut().unwrap().pc = pc + 1;
                self.finish_lockstep(t.as_mut(), g, stack);
                push(t, info, out);
            }
            Instr::Goto { target } => {
                let mut t = *s;
                stack.last_mut().unwrap().pc = target.pc(len);
                self.finish_lockstep(t.as_mut(), g, stack);
                push(t, info, out);
            }
            Instr::Branch { a, cmp, b, target } => {
                let taken = lanes
                    .iter()
                    .filter(|&&l| {
                        cmp.eval(
                            self.eval(s.as_ref(), inv(l), a),
                            self.eval(s.as_ref(), inv(l), b),
                        )
                    })
                    .fold(0u32, |m, &l| m | 1 << l);
                for (info, stack) in self.branch_stacks(g, &stack, taken, target.pc(len), pc) {
                    let mut t = *s;
                    self.finish_lockstep(t.as_mut(), g, stack);
                    push(t, info, out);
                }
            }
            Instr::Choose { target, finite } => {
                for (info, stack) in self.choice_stacks(g, &stack, target.pc(len), pc, finite) {
                    let mut t = *s;
                    self.finish_lockstep(t.as_mut(), g, stack);
                    push(t, info, out);
                }
            }
            Instr::Atomic {
                op,
                addr,
                dst,
                branch,
            } => self.lockstep_atomic(s, g, &stack, (op, addr, dst, branch), out)?,
            Instr::Barrier => {
                let mut t = *s;
                set(t.as_mut(), sg.wait_off, 1, 1);
                self.lockstep_barrier_release(t.as_mut(), sg.wg, pc);
                push(t, info, out);
            }
        }
        Ok(())
    }

    /// The register writes of a lockstep assignment or collective, for
    /// every active lane (a collective over the active lanes, §2.5).
    fn lockstep_registers(&self, t: &mut [u64], g: usize, lanes: &[usize], instr: Instr) {
        let inv = |l: usize| self.stacks.sgs[g].first_inv + l;
        match instr {
            Instr::Assign { dst, op, a, b } => {
                for &l in lanes {
                    let x = self.eval(t, inv(l), a);
                    let r = match op {
                        Some(op) => op.eval(x, self.eval(t, inv(l), b), self.program.values),
                        None => x,
                    };
                    self.set_reg(t, inv(l), dst as usize, r);
                }
            }
            Instr::Collective { op, dst, src } => {
                let vals: Vec<u16> = lanes.iter().map(|&l| self.eval(t, inv(l), src)).collect();
                let r = collective_result(op, &vals);
                for &l in lanes {
                    self.set_reg(t, inv(l), dst as usize, r);
                }
            }
            _ => unreachable!("only assignments and collectives"),
        }
    }

    /// A lockstep atomic: the active lanes' accesses one after the other,
    /// in every order, each order a successor (then the fused branch).
    fn lockstep_atomic<S: Packed>(
        &self,
        s: &S,
        g: usize,
        stack: &[Entry],
        (op, addr, dst, branch): (AtomicOp, Addr, Option<u8>, Option<CondBranch>),
        out: &mut Vec<(StepInfo, S)>,
    ) -> Result<(), Fault> {
        let sg = &self.stacks.sgs[g];
        let len = self.lens[sg.code];
        let top = *stack.last().expect("a subgroup that can step has a stack");
        let pc = top.pc;
        let lanes: Vec<usize> = (0..self.s).filter(|l| top.mask & (1 << l) != 0).collect();
        let inv = |l: usize| sg.first_inv + l;
        let first = out.len();
        let push = |t: S, info: StepInfo, out: &mut Vec<(StepInfo, S)>| {
            if !out[first..].iter().any(|(_, u)| *u == t) {
                out.push((info, t));
            }
        };
        let info = StepInfo {
            pc: pc as u8,
            branch: Branch::None,
            choice: 0,
            finite: false,
        };
        // The lanes' atomics happen one after the other, in any order.
        let mut order = lanes;
        loop {
            let mut t = *s;
            let mut taken = 0u32;
            for &l in &order {
                let old = self.atomic(t.as_mut(), inv(l), pc, op, addr)?;
                if let Some(d) = dst {
                    self.set_reg(t.as_mut(), inv(l), d as usize, old);
                }
                if let Some(b) = branch {
                    if b.cmp.eval(old, self.eval(t.as_ref(), inv(l), b.rhs)) {
                        taken |= 1 << l;
                    }
                }
            }
            match branch {
                Some(b) => {
                    for (info, st) in self.branch_stacks(g, stack, taken, b.target.pc(len), pc) {
                        let mut u = t;
                        self.finish_lockstep(u.as_mut(), g, st);
                        push(u, info, out);
                    }
                }
                None => {
                    let mut st = stack.to_vec();
                    st.last_mut().unwrap().pc = pc + 1;
                    self.finish_lockstep(t.as_mut(), g, st);
                    push(t, info, out);
                }
            }
            if !next_permutation(&mut order) {
                break;
            }
        }
        Ok(())
    }

    /// The stacks after a `choose` of the top entry (§2.11): each lane
    /// chooses for itself, so every subset of the lanes jumps (a subset
    /// is a bit mask below the top's), each as a branch would.
    fn choice_stacks(
        &self,
        g: usize,
        stack: &[Entry],
        target: usize,
        pc: usize,
        finite: bool,
    ) -> Vec<(StepInfo, Vec<Entry>)> {
        let mask = stack.last().expect("a stack").mask;
        let mut all = Vec::new();
        let mut taken = 0u32;
        loop {
            for (mut info, st) in self.branch_stacks(g, stack, taken, target, pc) {
                info.finite = finite && taken != 0;
                all.push((info, st));
            }
            if taken == mask {
                return all;
            }
            taken = (taken | !mask).wrapping_add(1) & mask;
        }
    }

    /// The stacks after a branch of the top entry: `taken` lanes go to
    /// `target`, the others to `pc + 1`. Divergent lanes split: the top
    /// entry becomes the reconvergence entry at the branch's immediate
    /// post-dominator, and the two paths are pushed above it in either
    /// order (both orders are SIMT implementations).
    fn branch_stacks(
        &self,
        g: usize,
        stack: &[Entry],
        taken: u32,
        target: usize,
        pc: usize,
    ) -> Vec<(StepInfo, Vec<Entry>)> {
        let top = *stack.last().unwrap();
        let mut info = StepInfo {
            pc: pc as u8,
            branch: Branch::None,
            choice: 0,
            finite: false,
        };
        let uniform = |to: usize, b: Branch| {
            let mut st = stack.to_vec();
            st.last_mut().unwrap().pc = to;
            let mut i = info;
            i.branch = b;
            (i, st)
        };
        if taken == top.mask {
            return vec![uniform(target, Branch::Taken)];
        }
        if taken == 0 {
            return vec![uniform(pc + 1, Branch::NotTaken)];
        }
        info.branch = Branch::Divergent;
        let code = self.stacks.sgs[g].code;
        let join = self.stacks.ipdom[code][pc];
        let mut base = stack.to_vec();
        *base.last_mut().unwrap() = Entry {
            pc: join,
            rpc: top.rpc,
            mask: top.mask,
        };
        let t_entry = Entry {
            pc: target,
            rpc: join,
            mask: taken,
        };
        let n_entry = Entry {
            pc: pc + 1,
            rpc: join,
            mask: top.mask & !taken,
        };
        let mut a = base.clone();
        a.push(n_entry);
        a.push(t_entry);
        let mut b = base;
        b.push(t_entry);
        b.push(n_entry);
        let mut ia = info;
        ia.choice = 0;
        let mut ib = info;
        ib.choice = 1;
        vec![(ia, a), (ib, b)]
    }

    /// Pops finished paths and reached reconvergence points, then writes
    /// the stack.
    fn finish_lockstep(&self, t: &mut [u64], g: usize, mut st: Vec<Entry>) {
        let len = self.lens[self.stacks.sgs[g].code];
        while let Some(&top) = st.last() {
            if top.pc >= len {
                // These lanes are done: they leave every entry.
                for e in st.iter_mut() {
                    e.mask &= !top.mask;
                }
                st.retain(|e| e.mask != 0);
            } else if top.pc == top.rpc || top.mask == 0 {
                st.pop();
            } else {
                break;
            }
        }
        // An entry at its reconvergence point below the top would only be
        // popped when it comes up: drop it now, so that both push orders of
        // a divergence whose one side is already there give one state.
        st.retain(|e| e.pc != e.rpc);
        assert!(
            st.len() <= self.stacks.max_depth,
            "a reconvergence stack deeper than 2S-1"
        );
        self.write_stack(t, g, &st);
    }

    fn lockstep_barrier_release(&self, t: &mut [u64], wg: usize, pc: usize) {
        let per = self.n / self.s;
        let full = (1u32 << self.s) - 1;
        let gs: Vec<usize> = (wg * per..(wg + 1) * per).collect();
        let all = gs.iter().all(|&g| {
            get(t, self.stacks.sgs[g].wait_off, 1) != 0
                && self
                    .read_stack(t, g)
                    .last()
                    .is_some_and(|e| e.pc == pc && e.mask == full)
        });
        if !all {
            return;
        }
        for g in gs {
            set(t, self.stacks.sgs[g].wait_off, 1, 0);
            let mut st = self.read_stack(t, g);
            st.last_mut().unwrap().pc = pc + 1;
            self.finish_lockstep(t, g, st);
        }
    }

    /// The bit range of lockstep subgroup `g`'s stack and wait flag.
    pub fn subgroup_range(&self, g: usize) -> Option<(u32, u32)> {
        let sg = self.stacks.sgs.get(g)?;
        Some((sg.depth_off, sg.wait_off + 1 - sg.depth_off))
    }
}
