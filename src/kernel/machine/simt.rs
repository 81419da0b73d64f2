//! The SIMT-Step direct models on packed states (docs/KERNEL.md §2.9):
//! which instructions execute independently, synchronously or
//! collectively (the paper's Fig. 7), branches and merges (its Fig. 8), and
//! the dynamic blocks they need, kept per invocation as lane masks: the
//! lanes of its current dynamic block (`cur`) and, per scope containing
//! its pc, the lanes of that scope's instance (the merge block's threads).
//! SSO keeps no masks: its participants are computed from the pcs (§2.9).

use super::{
    collective_result, get, next_permutation, set, Branch, BuildError, Fault, Machine, Packed,
    StepInfo, View,
};
use crate::kernel::model::Direct;
use crate::kernel::program::{AtomicOp, Instr, Program};
use crate::kernel::structure::{self, Kind, Structure};
use std::cmp::Ordering;

/// How an instruction executes under a direct model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exec {
    Independent,
    Synchronous,
    Collective,
}

/// The paper's Table 1 and Sec. 4: CM loads collectively and writes
/// synchronously, SM accesses memory synchronously, SCF independently;
/// these three branch collectively; SSO only runs subgroup operations
/// collectively.
fn exec(d: Direct, i: &Instr) -> Exec {
    use Exec::*;
    match *i {
        Instr::Assign { .. } | Instr::Barrier => Independent,
        Instr::Collective { .. } => Collective,
        Instr::Branch { .. }
        | Instr::Goto { .. }
        | Instr::Choose { .. }
        | Instr::Atomic {
            branch: Some(_), ..
        } => {
            if d == Direct::Sso {
                Independent
            } else {
                Collective
            }
        }
        Instr::Atomic {
            op: AtomicOp::Load, ..
        } => match d {
            Direct::Cm => Collective,
            Direct::Sm => Synchronous,
            _ => Independent,
        },
        Instr::Atomic { .. } => match d {
            Direct::Cm | Direct::Sm => Synchronous,
            _ => Independent,
        },
    }
}

fn word(d: Direct) -> &'static str {
    match d {
        Direct::Cm => "cm",
        Direct::Sm => "sm",
        Direct::Scf => "scf",
        Direct::Sso => "sso",
    }
}

/// The scopes of every block, checked against what the model needs:
/// structured control flow for CM, SM and SCF (with subgroups of more
/// than one lane), and for SSO in blocks with subgroup operations.
fn structures(p: &Program, d: Direct) -> Result<Vec<Structure>, BuildError> {
    let who = format!("subgroup={}", word(d));
    let blocks = p.codes.len();
    let mut out = Vec::new();
    for (c, code) in p.codes.iter().enumerate() {
        // Where the source is known the error is at the construct's line
        // and column; else it names the block and instruction.
        let at = |(pc, msg): (usize, String)| match code
            .at
            .0
            .get(pc.min(code.instrs.len().saturating_sub(1)))
        {
            Some(&pos) => BuildError { at: Some(pos), msg },
            None if blocks > 1 => format!("code block {c}, instruction {pc}: {msg}").into(),
            None => format!("instruction {pc}: {msg}").into(),
        };
        let flow = code.flow();
        let place = |pc: usize| code.place(pc);
        let st = structure::analyse(&flow, &code.constructs, &place).map_err(at)?;
        let collective = code
            .instrs
            .iter()
            .any(|i| matches!(i, Instr::Collective { .. }));
        if p.subgroup_size > 1 && (d != Direct::Sso || collective) {
            structure::require(&flow, &st, &who, &place).map_err(at)?;
        }
        out.push(st);
    }
    Ok(out)
}

/// SSO (§2.9): per code block, per pc `0..=len`, the loops containing the
/// pc that contain a subgroup operation (whose iterations SSO must tell
/// apart), outermost first. A loop containing a counted loop is counted.
fn counted_loops(p: &Program, structs: &[Structure]) -> Vec<Vec<Vec<usize>>> {
    p.codes
        .iter()
        .zip(structs)
        .map(|(code, st)| {
            let counted: Vec<bool> = st
                .scopes
                .iter()
                .map(|sc| {
                    sc.kind == Kind::Loop
                        && code.instrs[sc.start..sc.end]
                            .iter()
                            .any(|i| matches!(i, Instr::Collective { .. }))
                })
                .collect();
            st.enclosing
                .iter()
                .map(|ks| ks.iter().copied().filter(|&k| counted[k]).collect())
                .collect()
        })
        .collect()
}

/// The bits of an SSO iteration count: the value bits, from 3 to 8, so
/// that lanes may be as many iterations apart as a register can count.
fn iter_bits(vb: u32) -> u32 {
    vb.clamp(3, 8)
}

/// Whether a lane may yet join a subgroup operation (SSO).
#[derive(PartialEq, Eq)]
enum Relation {
    Participant,
    Potential,
    Not,
}

/// What the SIMT-Step models keep beside the shared layout (empty for
/// the other modes).
#[derive(Clone, Debug, Default)]
pub(super) struct Simt {
    /// The scopes of each code block.
    pub(super) structs: Vec<Structure>,
    /// The most scopes containing one pc, over the blocks.
    pub(super) scope_depth: usize,
    /// SSO (§2.9): per code block, per pc `0..=len`, the loop scopes
    /// containing the pc that contain a subgroup operation, outermost
    /// first; an invocation keeps an iteration count for each.
    pub(super) counted: Vec<Vec<Vec<usize>>>,
    /// SSO: the most counted loops containing one pc, and the bits of one
    /// iteration count.
    pub(super) iter_slots: usize,
    pub(super) iter_bits: u32,
}

impl Simt {
    /// The scopes and counted loops of `p` under `direct` (`vb`: bits of
    /// a value); fails where the control flow is not structured as the
    /// model needs.
    pub(super) fn new(p: &Program, direct: Option<Direct>, vb: u32) -> Result<Simt, BuildError> {
        let Some(d) = direct else {
            return Ok(Simt::default());
        };
        let structs = structures(p, d)?;
        let counted = match d {
            Direct::Sso => counted_loops(p, &structs),
            _ => Vec::new(),
        };
        Ok(Simt {
            scope_depth: structs.iter().map(|st| st.max_depth).max().unwrap_or(0),
            iter_slots: counted.iter().flatten().map(Vec::len).max().unwrap_or(0),
            iter_bits: iter_bits(vb),
            structs,
            counted,
        })
    }
}

impl Machine {
    /// [`Machine::view`] under a direct model, field by field.
    #[inline(never)]
    pub(super) fn simt_view(&self, s: &[u64]) -> View {
        let mut v = View::default();
        for i in 0..self.invs.len() {
            v.pc[i] = self.pc(s, i) as u8;
            v.terminated |= (self.terminated(s, i) as u32) << i;
            v.waiting |= (self.waiting(s, i) as u32) << i;
            v.finished |= ((v.pc[i] as usize >= self.code_len(i)) as u32) << i;
        }
        for a in 0..self.num_actors() {
            if self.can_step(s, a) {
                v.steppable |= 1 << a;
                v.next[a] = self.stepping_instr(s, a).map_or(0, |(pc, _)| pc as u8);
            }
        }
        v
    }

    fn first_lane(&self, i: usize) -> usize {
        i - self.invs[i].lane
    }

    fn full(&self) -> u32 {
        (1u32 << self.s) - 1
    }

    fn masks(&self) -> bool {
        matches!(self.direct(), Some(d) if d != Direct::Sso)
    }

    /// The lanes of invocation `i`'s dynamic block (itself included).
    fn cur(&self, s: &[u64], i: usize) -> u32 {
        get(s, self.invs[i].cur_off, self.s as u32) as u32 | 1 << self.invs[i].lane
    }

    /// [`Self::cur`] where the state keeps dynamic blocks (CM, SM, SCF);
    /// 0 under SSO, which keeps none: it has no such field to read (the
    /// last invocation's would lie past the state's end).
    fn block(&self, s: &[u64], i: usize) -> u32 {
        if self.masks() {
            self.cur(s, i)
        } else {
            0
        }
    }

    fn set_cur(&self, s: &mut [u64], i: usize, m: u32) {
        set(s, self.invs[i].cur_off, self.s as u32, m as u64)
    }

    fn frame_off(&self, i: usize, d: usize) -> u32 {
        self.invs[i].cur_off + (1 + d as u32) * self.s as u32
    }

    fn frame(&self, s: &[u64], i: usize, d: usize) -> u32 {
        get(s, self.frame_off(i, d), self.s as u32) as u32
    }

    fn set_frame(&self, s: &mut [u64], i: usize, d: usize, m: u32) {
        set(s, self.frame_off(i, d), self.s as u32, m as u64)
    }

    fn flag_off(&self, i: usize, k: u32) -> u32 {
        self.frame_off(i, self.simt.scope_depth) + k
    }

    /// Whether invocation `i` waits at a merge for the lanes of its
    /// construct (direct models; §2.9).
    pub(super) fn merge_waiting(&self, s: &[u64], i: usize) -> bool {
        self.masks() && get(s, self.flag_off(i, 0), 1) != 0
    }

    fn set_flag(&self, s: &mut [u64], i: usize, k: u32, v: bool) {
        set(s, self.flag_off(i, k), 1, v as u64)
    }

    /// Every lane in its subgroup's one dynamic block, in every scope
    /// containing pc 0.
    pub(super) fn simt_init(&self, s: &mut [u64]) {
        if !self.masks() {
            return;
        }
        for i in 0..self.invs.len() {
            self.set_cur(s, i, self.full());
            let st = &self.simt.structs[self.invs[i].code];
            for &k in &st.enclosing[0] {
                self.set_frame(s, i, st.depth[k], self.full());
            }
        }
    }

    /// Whether every lane of `i`'s dynamic block is at `pc` (Aligned).
    fn aligned(&self, s: &[u64], i: usize, pc: usize) -> bool {
        let first = self.first_lane(i);
        lanes(self.cur(s, i))
            .all(|l| self.pc(s, first + l) == pc && !self.merge_waiting(s, first + l))
    }

    /// Whether invocation `i` (not finished, not waiting at a barrier) can
    /// execute its instruction now.
    pub(super) fn simt_enabled(&self, s: &[u64], i: usize) -> bool {
        let d = self.direct().expect("a direct model");
        if self.merge_waiting(s, i) {
            return false;
        }
        let pc = self.pc(s, i);
        let ins = self.program.codes[self.invs[i].code].instrs[pc];
        match exec(d, &ins) {
            Exec::Independent => true,
            Exec::Synchronous => get(s, self.flag_off(i, 1), 1) != 0 || self.aligned(s, i, pc),
            Exec::Collective if d == Direct::Sso => self.sso_participants(s, i, pc).is_some(),
            Exec::Collective => self.aligned(s, i, pc),
        }
    }

    /// Every successor of a step of invocation `i` under the direct model.
    pub(super) fn simt_steps<S: Packed>(
        &self,
        s: &S,
        i: usize,
        emit: &mut impl FnMut(StepInfo, S),
    ) -> Result<(), Fault> {
        let d = self.direct().expect("a direct model");
        let pc = self.pc(s.as_ref(), i);
        let ins = self.program.codes[self.invs[i].code].instrs[pc];
        let mut t = *s;
        match exec(d, &ins) {
            Exec::Independent => {}
            Exec::Synchronous => {
                // The first lane of the block to execute it releases the
                // others (Synchronous Arrive); each then goes on alone.
                let u = t.as_mut();
                if get(u, self.flag_off(i, 1), 1) == 0 {
                    let first = self.first_lane(i);
                    for l in lanes(self.cur(u, i) & !(1 << self.invs[i].lane)) {
                        self.set_flag(u, first + l, 1, true);
                    }
                }
                self.set_flag(u, i, 1, false);
            }
            Exec::Collective => return self.simt_collective(s, i, pc, &ins, emit),
        }
        let info = self.simt_single(t.as_mut(), i, pc)?;
        emit(info, t);
        // Under SSO a `choose` is the lane's own branch (§2.11): it also
        // jumps, then arrives where it lands as any step does.
        if let Instr::Choose { target, finite } = ins {
            let mut u = *s;
            self.set_pc(u.as_mut(), i, target.pc(self.lens[self.invs[i].code]));
            self.arrive_alone(u.as_mut(), i, pc)?;
            let branch = Branch::Taken;
            emit(
                StepInfo {
                    branch,
                    finite,
                    ..info
                },
                u,
            );
        }
        Ok(())
    }

    /// One invocation's own step, then its arrival at the next pc.
    fn simt_single(&self, t: &mut [u64], i: usize, pc: usize) -> Result<StepInfo, Fault> {
        let info = self.interleaved_step(t, i, self.pc(t, i))?;
        let barrier = matches!(
            self.program.codes[self.invs[i].code].instrs[pc],
            Instr::Barrier
        );
        if barrier {
            // A completed barrier moved its whole workgroup on.
            if get(t, self.invs[i].wait_off, 1) == 0 {
                let w = self.invs[i].wg;
                for j in w * self.n..(w + 1) * self.n {
                    let cur = self.block(t, j);
                    self.arrive(t, j, 1 << self.invs[j].lane, pc, pc + 1, cur);
                }
            }
            return Ok(info);
        }
        self.arrive_alone(t, i, pc)?;
        Ok(info)
    }

    /// Invocation `i`'s arrival alone at its pc, from `pc`.
    fn arrive_alone(&self, t: &mut [u64], i: usize, pc: usize) -> Result<(), Fault> {
        let q = self.pc(t, i);
        let cur = self.block(t, i);
        if let Some(h) = self.arrive(t, i, 1 << self.invs[i].lane, pc, q, cur) {
            let v = &self.invs[i];
            return Err(Fault {
                wg: v.wg,
                local: v.local,
                pc,
                msg: format!(
                    "under subgroup=sso the lanes of subgroup {} grow more than {} iterations apart in the loop at {}: SSO tells the dynamic blocks of its iterations apart, and the checker counts {} bits of iterations (docs/KERNEL.md §2.9)",
                    v.sg,
                    (1u32 << self.simt.iter_bits) - 1,
                    self.program.codes[v.code].place(h),
                    self.simt.iter_bits
                ),
            });
        }
        Ok(())
    }

    /// A collective step of the lanes of `i`'s dynamic block.
    fn simt_collective<S: Packed>(
        &self,
        s: &S,
        i: usize,
        pc: usize,
        ins: &Instr,
        emit: &mut impl FnMut(StepInfo, S),
    ) -> Result<(), Fault> {
        let first = self.first_lane(i);
        let group = if self.direct() == Some(Direct::Sso) {
            self.sso_participants(s.as_ref(), i, pc).expect("enabled")
        } else {
            self.cur(s.as_ref(), i)
        };
        let ls: Vec<usize> = lanes(group).collect();
        let len = self.lens[self.invs[i].code];
        let info = StepInfo {
            pc: pc as u8,
            branch: Branch::None,
            choice: 0,
            finite: false,
        };
        let mut t = *s;
        let u = t.as_mut();
        match *ins {
            Instr::Collective { op, dst, src } => {
                let vals: Vec<u16> = ls
                    .iter()
                    .map(|&l| self.eval(s.as_ref(), first + l, src))
                    .collect();
                let r = collective_result(op, &vals);
                for &l in &ls {
                    self.set_reg(u, first + l, dst as usize, r);
                }
                self.arrive(u, i, group, pc, pc + 1, group);
            }
            Instr::Atomic {
                op,
                addr,
                dst,
                branch: None,
            } => {
                // A collective load: every lane reads in the same step.
                for &l in &ls {
                    let old = self.atomic(u, first + l, pc, op, addr)?;
                    if let Some(d) = dst {
                        self.set_reg(u, first + l, d as usize, old);
                    }
                }
                self.arrive(u, i, group, pc, pc + 1, group);
            }
            Instr::Goto { target } => {
                self.arrive(u, i, group, pc, target.pc(len), group);
            }
            Instr::Branch { a, cmp, b, target } => {
                let taken = ls
                    .iter()
                    .filter(|&&l| cmp.eval(self.eval(u, first + l, a), self.eval(u, first + l, b)))
                    .fold(0u32, |m, &l| m | 1 << l);
                let info = self.simt_branch(u, i, group, taken, pc, target.pc(len));
                emit(info, t);
                return Ok(());
            }
            Instr::Atomic { .. } => return self.simt_fused(s, i, group, pc, ins, emit),
            Instr::Assign { .. } | Instr::Barrier => unreachable!("independent instructions"),
            Instr::Choose { .. } => unreachable!("refused by Machine::new but under SSO"),
        }
        emit(info, t);
        Ok(())
    }

    /// A collective fused atomic branch: the lanes' atomics one after the
    /// other, in every order (as in lockstep, §2.6), then the branch.
    fn simt_fused<S: Packed>(
        &self,
        s: &S,
        i: usize,
        group: u32,
        pc: usize,
        ins: &Instr,
        emit: &mut impl FnMut(StepInfo, S),
    ) -> Result<(), Fault> {
        let Instr::Atomic {
            op,
            addr,
            branch: Some(b),
            ..
        } = *ins
        else {
            unreachable!("a fused atomic branch")
        };
        let first = self.first_lane(i);
        let len = self.lens[self.invs[i].code];
        let mut order: Vec<usize> = lanes(group).collect();
        let mut seen: Vec<S> = Vec::new();
        loop {
            let mut t = *s;
            let u = t.as_mut();
            let mut taken = 0u32;
            for &l in &order {
                let old = self.atomic(u, first + l, pc, op, addr)?;
                if b.cmp.eval(old, self.eval(u, first + l, b.rhs)) {
                    taken |= 1 << l;
                }
            }
            let info = self.simt_branch(u, i, group, taken, pc, b.target.pc(len));
            if !seen.contains(&t) {
                seen.push(t);
                emit(info, t);
            }
            if !next_permutation(&mut order) {
                return Ok(());
            }
        }
    }

    /// The lanes of `group` branch: `taken` ones to `target`, the others
    /// to `pc + 1`, each side a dynamic block of its own when they differ.
    fn simt_branch(
        &self,
        t: &mut [u64],
        i: usize,
        group: u32,
        taken: u32,
        pc: usize,
        target: usize,
    ) -> StepInfo {
        let mut info = StepInfo {
            pc: pc as u8,
            branch: Branch::None,
            choice: 0,
            finite: false,
        };
        let rest = group & !taken;
        if rest == 0 {
            info.branch = Branch::Taken;
            self.arrive(t, i, group, pc, target, group);
        } else if taken == 0 {
            info.branch = Branch::NotTaken;
            self.arrive(t, i, group, pc, pc + 1, group);
        } else {
            info.branch = Branch::Divergent;
            self.arrive(t, i, taken, pc, target, taken);
            self.arrive(t, i, rest, pc, pc + 1, rest);
        }
        info
    }

    /// The lanes `movers` of `i`'s subgroup, of the dynamic block `db`, go
    /// from `p` to `q`: they leave the scopes containing `p` but not `q`
    /// (reconverging at the merge when `q` is the end of the outermost,
    /// escaping the others), and enter those that start at `q`.
    /// Under SSO it counts iterations instead ([`Machine::sso_count`]), and
    /// returns the header of a loop whose counts outgrew their bits.
    fn arrive(
        &self,
        t: &mut [u64],
        i: usize,
        movers: u32,
        p: usize,
        q: usize,
        db: u32,
    ) -> Option<usize> {
        let first = self.first_lane(i);
        for l in lanes(movers) {
            self.set_pc(t, first + l, q);
        }
        if !self.masks() {
            return self.sso_count(t, i, movers, p, q);
        }
        let st = &self.simt.structs[self.invs[i].code];
        if q >= self.lens[self.invs[i].code] {
            self.leave(t, first, movers);
            return None;
        }
        let (from, to) = (&st.enclosing[p], &st.enclosing[q]);
        let exited: Vec<usize> = from.iter().copied().filter(|k| !to.contains(k)).collect();
        let merge = exited.first().copied().filter(|&o| st.scopes[o].end == q);
        for &k in exited.iter().filter(|&&k| st.scopes[k].end != q) {
            self.escape(t, first, st, k, movers);
        }
        let any = first + movers.trailing_zeros() as usize;
        let cur = merge.map_or(db, |o| self.frame(t, any, st.depth[o])) | movers;
        for l in lanes(movers) {
            let j = first + l;
            self.set_cur(t, j, cur);
            for d in to.len()..self.simt.scope_depth {
                self.set_frame(t, j, d, 0);
            }
            for &e in to.iter().filter(|k| !from.contains(k)) {
                self.set_frame(t, j, st.depth[e], cur);
            }
            self.set_flag(t, j, 0, merge.is_some());
        }
        self.release(t, first);
        None
    }

    /// Lanes that finished leave every dynamic block and scope instance.
    fn leave(&self, t: &mut [u64], first: usize, movers: u32) {
        for l in 0..self.s {
            let j = first + l;
            if movers & 1 << l != 0 {
                self.set_cur(t, j, 0);
                for d in 0..self.simt.scope_depth {
                    self.set_frame(t, j, d, 0);
                }
                self.set_flag(t, j, 0, false);
                self.set_flag(t, j, 1, false);
                continue;
            }
            let c = self.cur(t, j) & !movers;
            self.set_cur(t, j, c);
            for d in 0..self.simt.scope_depth {
                let f = self.frame(t, j, d) & !movers;
                self.set_frame(t, j, d, f);
            }
        }
        self.release(t, first);
    }

    /// Lanes that jump out of scope `k` past its merge (a `break`, a
    /// `continue` out of a selection): the others stop waiting for them
    /// there.
    fn escape(&self, t: &mut [u64], first: usize, st: &Structure, k: usize, movers: u32) {
        for l in (0..self.s).filter(|l| movers & 1 << l == 0) {
            let j = first + l;
            let pj = self.pc(t, j);
            if pj >= self.lens[self.invs[j].code] {
                continue;
            }
            let inside = st.enclosing[pj].contains(&k);
            if inside {
                let f = self.frame(t, j, st.depth[k]) & !movers;
                self.set_frame(t, j, st.depth[k], f);
            }
            if inside || (self.merge_waiting(t, j) && pj == st.scopes[k].end) {
                let c = self.cur(t, j) & !movers;
                self.set_cur(t, j, c);
            }
        }
    }

    /// Reconvergence: lanes waiting at a merge go on once every lane of
    /// their construct waits there (the collective label of Fig. 8).
    fn release(&self, t: &mut [u64], first: usize) {
        for l in 0..self.s {
            let j = first + l;
            if !self.merge_waiting(t, j) {
                continue;
            }
            let (c, pc) = (self.cur(t, j), self.pc(t, j));
            let all = lanes(c).all(|m| {
                let k = first + m;
                self.merge_waiting(t, k) && self.pc(t, k) == pc && self.cur(t, k) == c
            });
            if all {
                for m in lanes(c) {
                    self.set_flag(t, first + m, 0, false);
                }
            }
        }
    }

    /// SSO: the lanes that execute `i`'s subgroup operation at `pc` with
    /// it, or `None` while some lane may still join (its unknown lanes).
    fn sso_participants(&self, s: &[u64], i: usize, pc: usize) -> Option<u32> {
        let first = self.first_lane(i);
        let st = &self.simt.structs[self.invs[i].code];
        let len = self.lens[self.invs[i].code];
        let mut group = 1u32 << self.invs[i].lane;
        for l in 0..self.s {
            let j = first + l;
            if j == i || self.terminated(s, j) || self.pc(s, j) >= len {
                continue;
            }
            let cnt = &self.simt.counted[self.invs[i].code][pc];
            let by_iter = |d: usize| self.iter(s, j, d).cmp(&self.iter(s, i, d));
            match relation(st, cnt, pc, self.pc(s, j), by_iter) {
                Relation::Potential => return None,
                Relation::Participant => group |= 1 << l,
                Relation::Not => {}
            }
        }
        Some(group)
    }

    /// SSO: invocation `i`'s iteration count of the `d`th counted loop
    /// containing its pc.
    fn iter(&self, s: &[u64], i: usize, d: usize) -> u32 {
        let off = self.invs[i].cur_off + d as u32 * self.simt.iter_bits;
        get(s, off, self.simt.iter_bits) as u32
    }

    fn set_iter(&self, s: &mut [u64], i: usize, d: usize, v: u32) {
        let off = self.invs[i].cur_off + d as u32 * self.simt.iter_bits;
        set(s, off, self.simt.iter_bits, v as u64)
    }

    /// SSO: the iteration counts of the lanes `movers` of `i`'s subgroup
    /// after going from `p` to `q`: a loop's back edge counts one more,
    /// entering a loop starts at 0, leaving it drops its count; then the
    /// subgroup's counts are normalised ([`Machine::sso_normalize`]). The
    /// header of a loop whose counts outgrow their bits, if one does.
    fn sso_count(&self, t: &mut [u64], i: usize, movers: u32, p: usize, q: usize) -> Option<usize> {
        if self.simt.iter_slots == 0 {
            return None;
        }
        let code = self.invs[i].code;
        let (first, len) = (self.first_lane(i), self.lens[code]);
        let (cnt, st) = (&self.simt.counted[code], &self.simt.structs[code]);
        let mut it: Vec<Vec<u32>> = (0..self.s)
            .map(|l| {
                (0..self.simt.iter_slots)
                    .map(|d| self.iter(t, first + l, d))
                    .collect()
            })
            .collect();
        let (from, to) = (&cnt[p.min(len)], &cnt[q.min(len)]);
        for l in lanes(movers) {
            for (d, v) in it[l].iter_mut().enumerate() {
                *v = match to.get(d) {
                    Some(&k) if from.get(d) == Some(&k) => *v + (q == st.scopes[k].start) as u32,
                    _ => 0,
                };
            }
        }
        self.sso_normalize(t, first, code, &mut it);
        let max = (1u32 << self.simt.iter_bits) - 1;
        for (l, v) in it.iter().enumerate() {
            if let Some(d) = v.iter().position(|&x| x > max) {
                let pc = self.pc(t, first + l).min(len);
                return Some(st.scopes[cnt[pc][d]].start);
            }
            for (d, &x) in v.iter().enumerate() {
                self.set_iter(t, first + l, d, x);
            }
        }
        None
    }

    /// SSO: the iteration counts of a subgroup in canonical form. Only how
    /// the counts of the lanes in one instance of a loop compare matters
    /// (§2.9), so those of each instance (its lanes: inside the loop, with
    /// equal counts of the loops around it) are lowered together until the
    /// least is 0, unless a lane may still enter the instance (at count 0).
    fn sso_normalize(&self, t: &[u64], first: usize, code: usize, it: &mut [Vec<u32>]) {
        let (len, cnt, st) = (
            self.lens[code],
            &self.simt.counted[code],
            &self.simt.structs[code],
        );
        let pcs: Vec<usize> = (0..self.s)
            .map(|l| self.pc(t, first + l).min(len))
            .collect();
        for d in 0..self.simt.iter_slots {
            let mut done = 0u32;
            for l in 0..self.s {
                let Some(&k) = cnt[pcs[l]].get(d) else {
                    continue;
                };
                if done & 1 << l != 0 {
                    continue;
                }
                let group = (0..self.s)
                    .filter(|&m| cnt[pcs[m]].get(d) == Some(&k) && it[m][..d] == it[l][..d])
                    .fold(0u32, |g, m| g | 1 << m);
                done |= group;
                let h = st.scopes[k].start;
                let entrant = (0..self.s)
                    .filter(|&m| group & 1 << m == 0 && pcs[m] < len)
                    .any(|m| {
                        let by_iter = |e: usize| it[m][e].cmp(&it[l][e]);
                        relation(st, &cnt[h], h, pcs[m], by_iter) == Relation::Potential
                    });
                let least = lanes(group).map(|m| it[m][d]).min().unwrap_or(0);
                if !entrant {
                    for m in lanes(group) {
                        it[m][d] -= least;
                    }
                }
            }
        }
    }
}

/// How a lane at `pj` stands to the dynamic block of a subgroup operation
/// at `pc`, in a structured block (§2.9): on its path and there, on its
/// path and behind, or gone another way. `cnt` are the counted loops
/// containing `pc`, and `by_iter(d)` compares the lane's iteration count of
/// the `d`th with that of the operation's dynamic block.
fn relation(
    st: &Structure,
    cnt: &[usize],
    pc: usize,
    pj: usize,
    by_iter: impl Fn(usize) -> Ordering,
) -> Relation {
    for &k in &st.enclosing[pc] {
        let sc = st.scopes[k];
        if (sc.start..sc.end).contains(&pj) {
            if let Some(d) = cnt.iter().position(|&x| x == k) {
                // The same loop: an earlier iteration will come, a later
                // one has passed.
                match by_iter(d) {
                    Ordering::Less => return Relation::Potential,
                    Ordering::Greater => return Relation::Not,
                    Ordering::Equal => continue,
                }
            }
            // A lane at the start of a scope has not chosen its arm yet,
            // unless the operation is that start itself (a loop whose
            // body opens with the subgroup operation, issue 42): then the
            // two are at one instruction.
            if pj == sc.start && pc != sc.start {
                return Relation::Potential;
            }
            if st.arm[k][pj - sc.start] != st.arm[k][pc - sc.start] {
                return Relation::Not;
            }
        } else if pj < sc.start {
            return Relation::Potential;
        } else {
            return Relation::Not;
        }
    }
    match pj.cmp(&pc) {
        Ordering::Equal => Relation::Participant,
        Ordering::Less => Relation::Potential,
        Ordering::Greater => Relation::Not,
    }
}

/// The lanes of a mask, lowest first.
fn lanes(m: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |l| m & 1 << l != 0)
}
