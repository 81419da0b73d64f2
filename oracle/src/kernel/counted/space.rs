//! The counted product's states and steps (docs/KERNEL.md §8.10): a
//! workgroup is a multiset of invocation records, kept as sorted
//! `(record, count)` pairs.
//!
//! A *record* is what an invocation's future depends on: its pc, its
//! flags (signalled Terminate, waiting at a barrier), its registers with
//! the dead ones cleared, and its local id while some later step reads an
//! id (cleared to [`DEAD`] after the last such read). Invocations of one
//! workgroup with equal records are interchangeable, so a state holds how
//! many there are of each record, not which ones.

use super::super::proviso;
use super::super::scopes;
use super::super::KernelError;
use progress_litmus::kernel::cfg;
use progress_litmus::kernel::machine::Fault;
use progress_litmus::kernel::program::{AtomicOp, CollectiveOp, IdKind, Instr, Operand, Program};
use progress_litmus::kernel::{Sched, ScopedModel};

/// A record's local id after its last read.
pub const DEAD: u16 = u16::MAX;
/// Record flag: the invocation has signalled Terminate.
pub const DONE: u8 = 1;
/// Record flag: the invocation waits at the barrier at its pc.
pub const WAIT: u8 = 2;

/// One class of a workgroup: a record and how many invocations have it.
pub type Class = (Vec<u8>, u16);

/// A decoded state: the memory cells, the device's fair set, and each
/// workgroup's classes sorted by record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct St {
    pub cells: Vec<u8>,
    pub f: u16,
    pub wgs: Vec<Vec<Class>>,
}

/// Who moved on an edge: the workgroup, the mover's record before the
/// step, and whether it was a Terminate or a `choose finitely` jump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub wg: usize,
    pub rec: Vec<u8>,
    pub terminate: bool,
    pub finite: bool,
}

/// The program and model, compiled for counting.
pub struct Space<'a> {
    pub p: &'a Program,
    pub model: ScopedModel,
    /// Workgroups, and invocations per workgroup and per subgroup.
    pub w: usize,
    pub n: usize,
    s: usize,
    pub(super) loc_base: Vec<usize>,
    cells: usize,
    /// Each workgroup's code block.
    pub(super) code: Vec<usize>,
    /// Per code block and pc (END included): the live registers, and
    /// whether an id is read at or after it.
    live: Vec<Vec<(u8, bool)>>,
    /// Per code block: the loop heads of its cut (docs/KERNEL.md §8.2).
    pub(super) heads: Vec<u64>,
    /// Where the program only compares ids with constants: the ids
    /// that start a region of ids no comparison tells apart, so that a
    /// record keeps its region's first id ([`id_regions`]).
    regions: Option<Vec<u16>>,
    /// Explore one class's local step or waiting arrival alone where
    /// there is one (§8.10).
    pub reduce: bool,
    /// Workgroups are interchangeable: states are kept with their
    /// workgroups sorted ([`Space::canonicalize`]).
    pub sym: bool,
}

impl<'a> Space<'a> {
    /// `sym`: the workgroups are interchangeable
    /// ([`super::symmetry::workgroups_interchangeable`]) and symmetry is
    /// asked for.
    pub fn new(p: &'a Program, model: ScopedModel, reduce: bool, sym: bool) -> Space<'a> {
        let mut loc_base = Vec::new();
        let mut cells = 0;
        for l in &p.locations {
            loc_base.push(cells);
            cells += l.len() * if l.shared { p.workgroups as usize } else { 1 };
        }
        Space {
            p,
            model,
            w: p.workgroups as usize,
            n: p.workgroup_size as usize,
            s: p.subgroup_size.max(1) as usize,
            loc_base,
            cells,
            code: p.wg_code.iter().map(|&c| c as usize).collect(),
            live: p.codes.iter().map(liveness).collect(),
            heads: p.codes.iter().map(|c| proviso::cut(c).0).collect(),
            regions: id_regions(p),
            reduce: reduce && model.device != Sched::Priority,
            sym,
        }
    }

    /// Bytes of a record of workgroup `w`: pc, flags, registers, id.
    fn rec_len(&self, w: usize) -> usize {
        4 + self.p.codes[self.code[w]].regs.len()
    }

    /// The start: every invocation at pc 0 with zero registers.
    pub fn initial(&self) -> St {
        let f = if self.w > 1 {
            scopes::initial(self.model.device, self.w)
        } else {
            0
        };
        let wgs = (0..self.w)
            .map(|w| {
                let mut recs: Vec<Class> = (0..self.n)
                    .map(|l| {
                        let mut r = vec![0u8; self.rec_len(w)];
                        self.set_id(&mut r, self.region(l as u16));
                        self.clear_dead(w, &mut r);
                        (r, 1)
                    })
                    .collect();
                merge(&mut recs);
                recs
            })
            .collect();
        St {
            cells: self
                .p
                .locations
                .iter()
                .flat_map(|l| self.copies(l))
                .collect(),
            f,
            wgs,
        }
    }

    fn copies(&self, l: &progress_litmus::kernel::program::Location) -> Vec<u8> {
        let k = if l.shared { self.w } else { 1 };
        (0..k).flat_map(|_| l.init.iter().copied()).collect()
    }

    /// The id a record keeps for local id `l`: the first id of its
    /// region where ids are only compared with constants, else `l`.
    fn region(&self, l: u16) -> u16 {
        match &self.regions {
            Some(cuts) => cuts
                .iter()
                .copied()
                .take_while(|&c| c <= l)
                .last()
                .unwrap_or(0),
            None => l,
        }
    }

    fn set_id(&self, r: &mut [u8], id: u16) {
        let at = r.len() - 2;
        r[at..].copy_from_slice(&id.to_be_bytes());
    }

    fn id(&self, r: &[u8]) -> u16 {
        u16::from_be_bytes([r[r.len() - 2], r[r.len() - 1]])
    }

    /// Clears the registers no later step reads, and the id after its
    /// last read (§8.5).
    fn clear_dead(&self, w: usize, r: &mut [u8]) {
        let (regs, id) = self.live[self.code[w]][r[0] as usize];
        let nregs = r.len() - 4;
        for k in 0..nregs {
            if regs >> k & 1 == 0 {
                r[2 + k] = 0;
            }
        }
        if !id {
            self.set_id(r, DEAD);
        }
    }

    /// The state as bytes: cells, F (2 bytes), then per workgroup its
    /// number of classes and each class's record and count.
    pub fn encode(&self, st: &St, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&st.cells);
        out.extend_from_slice(&st.f.to_be_bytes());
        for classes in &st.wgs {
            out.extend_from_slice(&(classes.len() as u16).to_be_bytes());
            for (r, c) in classes {
                out.extend_from_slice(r);
                out.extend_from_slice(&c.to_be_bytes());
            }
        }
    }

    pub fn decode(&self, b: &[u8]) -> St {
        let cells = b[..self.cells].to_vec();
        let f = u16::from_be_bytes([b[self.cells], b[self.cells + 1]]);
        let mut at = self.cells + 2;
        let wgs = (0..self.w)
            .map(|w| {
                let k = u16::from_be_bytes([b[at], b[at + 1]]) as usize;
                at += 2;
                let rl = self.rec_len(w);
                (0..k)
                    .map(|_| {
                        let r = b[at..at + rl].to_vec();
                        let c = u16::from_be_bytes([b[at + rl], b[at + rl + 1]]);
                        at += rl + 2;
                        (r, c)
                    })
                    .collect()
            })
            .collect();
        St { cells, f, wgs }
    }

    /// The device's fair set read off encoded state bytes.
    pub fn f_of(&self, b: &[u8]) -> u16 {
        u16::from_be_bytes([b[self.cells], b[self.cells + 1]])
    }

    pub fn wg_done(st: &St, w: usize) -> bool {
        st.wgs[w].iter().all(|(r, _)| r[1] & DONE != 0)
    }

    pub fn all_done(st: &St) -> bool {
        (0..st.wgs.len()).all(|w| Self::wg_done(st, w))
    }

    pub(super) fn terminated(&self, st: &St) -> u16 {
        (0..self.w)
            .filter(|&w| Self::wg_done(st, w))
            .fold(0, |a, w| a | 1 << w)
    }

    /// Whether workgroup `w` is guaranteed (in the device's P) in `st`.
    pub fn wg_guaranteed(&self, f: u16, w: usize) -> bool {
        self.w == 1 || f >> w & 1 == 1
    }

    /// The movers of `st` in order (workgroup, class index): every class
    /// of a resident workgroup that neither waits nor has signalled
    /// Terminate; under the priority scheduler only the lowest such
    /// workgroup's steps, and every pending Terminate (§3.4: Terminates
    /// are not restricted).
    pub fn movers(&self, st: &St) -> Vec<(usize, usize)> {
        let term = self.terminated(st);
        let admitted = match self.model.occupancy {
            None => self.w,
            Some(k) => (k as usize + term.count_ones() as usize).min(self.w),
        };
        let priority = self.model.device == Sched::Priority;
        let mut out = Vec::new();
        let mut lowest = None;
        for w in 0..admitted {
            if term >> w & 1 == 1 {
                continue;
            }
            let len = self.p.codes[self.code[w]].instrs.len();
            for (ci, (r, _)) in st.wgs[w].iter().enumerate() {
                if r[1] & (DONE | WAIT) == 0 {
                    let lowest = *lowest.get_or_insert(w);
                    if !priority || lowest == w || r[0] as usize >= len {
                        out.push((w, ci));
                    }
                }
            }
        }
        out
    }

    /// The successors of `times` members of class `ci` of `w` of `st`
    /// stepping one after the other, with the first step's label.
    /// `times` > 1 only for a Terminate, a local step other than a
    /// `choose`, or an arrival that waits ([`Space::explored`]): those
    /// read no memory, so every member's step gives the same record, and
    /// only the last could end the workgroup (its F update is made
    /// then), so the members move together.
    pub fn steps(
        &self,
        st: &St,
        w: usize,
        ci: usize,
        times: u16,
    ) -> Result<Vec<(Label, St)>, KernelError> {
        let rec = st.wgs[w][ci].0.clone();
        let pc = rec[0] as usize;
        let code = &self.p.codes[self.code[w]];
        let len = code.instrs.len();
        let label = |terminate, finite| Label {
            wg: w,
            rec: rec.clone(),
            terminate,
            finite,
        };
        let mut t = st.clone();
        take(&mut t.wgs[w], ci, times);
        if pc >= len {
            let mut r = rec.clone();
            r[1] |= DONE;
            put(&mut t.wgs[w], r, times);
            if self.w > 1 && Self::wg_done(&t, w) {
                let term = self.terminated(&t);
                t.f = scopes::after_terminate(self.model.device, t.f, w, self.w, term);
            }
            return Ok(vec![(label(true, false), t)]);
        }
        if self.w > 1 {
            t.f = scopes::after_step(self.model.device, t.f, w, self.terminated(st));
        }
        let mut out = Vec::new();
        let mut r = rec.clone();
        match code.instrs[pc] {
            Instr::Choose { target, finite } => {
                let mut u = t.clone();
                let mut j = rec.clone();
                j[0] = target.pc(len) as u8;
                self.clear_dead(w, &mut j);
                put(&mut u.wgs[w], j, 1);
                out.push((label(false, finite), u));
                r[0] += 1;
            }
            Instr::Barrier => {
                r[1] |= WAIT;
                put(&mut t.wgs[w], r, times);
                self.release(&mut t, w, pc);
                out.push((label(false, false), t));
                return Ok(out);
            }
            _ => r[0] = self.execute(&mut t.cells, w, &mut r, pc)? as u8,
        }
        self.clear_dead(w, &mut r);
        put(&mut t.wgs[w], r, times);
        out.insert(0, (label(false, false), t));
        Ok(out)
    }

    /// Releases workgroup `w`'s invocations when every one waits at the
    /// barrier at `pc`.
    fn release(&self, t: &mut St, w: usize, pc: usize) {
        if !t.wgs[w]
            .iter()
            .all(|(r, _)| r[1] & WAIT != 0 && r[0] as usize == pc)
        {
            return;
        }
        let classes = std::mem::take(&mut t.wgs[w]);
        let mut next: Vec<Class> = classes
            .into_iter()
            .map(|(mut r, c)| {
                r[1] &= !WAIT;
                r[0] += 1;
                self.clear_dead(w, &mut r);
                (r, c)
            })
            .collect();
        merge(&mut next);
        t.wgs[w] = next;
    }

    /// Executes the instruction at `pc` (not a barrier or `choose`) for
    /// an invocation of `w` with record `r`: its next pc.
    fn execute(
        &self,
        cells: &mut [u8],
        w: usize,
        r: &mut [u8],
        pc: usize,
    ) -> Result<usize, KernelError> {
        let code = &self.p.codes[self.code[w]];
        let len = code.instrs.len();
        let vals = self.p.values;
        let instr = code.instrs[pc];
        let ev = |r: &[u8], o: Operand| self.eval(w, r, o);
        Ok(match instr {
            Instr::Assign { dst, op, a, b } => {
                let x = ev(r, a)?;
                let v = match op {
                    Some(op) => op.eval(x, ev(r, b)?, vals),
                    None => x,
                };
                r[2 + dst as usize] = v as u8;
                pc + 1
            }
            Instr::Branch { a, cmp, b, target } => {
                if cmp.eval(ev(r, a)?, ev(r, b)?) {
                    target.pc(len)
                } else {
                    pc + 1
                }
            }
            Instr::Goto { target } => target.pc(len),
            Instr::Atomic {
                op,
                addr,
                dst,
                branch,
            } => {
                let old = self.atomic(cells, w, r, pc, op, addr)?;
                let taken = match branch {
                    Some(b) => Some((b.cmp.eval(old, ev(r, b.rhs)?), b.target)),
                    None => None,
                };
                if let Some(d) = dst {
                    r[2 + d as usize] = old as u8;
                }
                match taken {
                    Some((true, t)) => t.pc(len),
                    _ => pc + 1,
                }
            }
            // One lane: the collective is the lane's own value.
            Instr::Collective { op, dst, src } => {
                let v = ev(r, src)?;
                r[2 + dst as usize] = match op {
                    CollectiveOp::All | CollectiveOp::Any => u16::from(v != 0),
                    CollectiveOp::BroadcastFirst => v,
                } as u8;
                pc + 1
            }
            Instr::Barrier | Instr::Choose { .. } => unreachable!("stepped by Space::step"),
        })
    }

    /// An atomic access of an invocation of `w` with record `r` at
    /// `pc`: the cell's old value.
    fn atomic(
        &self,
        cells: &mut [u8],
        w: usize,
        r: &[u8],
        pc: usize,
        op: AtomicOp,
        addr: progress_litmus::kernel::program::Addr,
    ) -> Result<u16, KernelError> {
        let ev = |o: Operand| self.eval(w, r, o);
        let loc = &self.p.locations[addr.loc as usize];
        let k = ev(addr.index)? as usize;
        if k >= loc.len() {
            return Err(self.fault(w, r, pc, k, loc));
        }
        let cell =
            self.loc_base[addr.loc as usize] + if loc.shared { w * loc.len() } else { 0 } + k;
        let old = u16::from(cells[cell]);
        let new = match op {
            AtomicOp::Load => None,
            AtomicOp::Store(x) | AtomicOp::Exchange(x) => Some(ev(x)?),
            AtomicOp::CompareExchange(e, d) if old == ev(e)? => Some(ev(d)?),
            AtomicOp::CompareExchange(..) => None,
            AtomicOp::Fetch(f, x) => Some(f.apply(old, ev(x)?, self.p.values)),
        };
        if let Some(v) = new {
            cells[cell] = v as u8;
        }
        Ok(old)
    }

    fn eval(&self, w: usize, r: &[u8], o: Operand) -> Result<u16, KernelError> {
        Ok(match o {
            Operand::Reg(k) => u16::from(r[2 + k as usize]),
            Operand::Imm(v) => v,
            Operand::Id(IdKind::WgId) => w as u16,
            Operand::Id(kind) => {
                let id = self.id(r);
                if id == DEAD {
                    return Err(KernelError::Internal(format!(
                        "the counted product cleared an id still read at instruction {} of workgroup {w}",
                        r[0]
                    )));
                }
                let s = self.s as u16;
                match kind {
                    IdKind::SubgroupId => id / s,
                    IdKind::LaneId => id % s,
                    _ => id,
                }
            }
        })
    }

    /// An index out of bounds: the invocation is named where its id is
    /// still kept, else the lowest id of its workgroup is not claimed.
    fn fault(
        &self,
        w: usize,
        r: &[u8],
        pc: usize,
        k: usize,
        loc: &progress_litmus::kernel::program::Location,
    ) -> KernelError {
        let id = self.id(r);
        let msg = format!(
            "index {k} is out of bounds: `{}` has {} cell{}",
            loc.name,
            loc.len(),
            if loc.len() == 1 { "" } else { "s" }
        );
        if id == DEAD {
            return KernelError::Unsupported(format!(
                "a schedule goes wrong: an invocation of workgroup {w} at instruction {pc}: {msg}"
            ));
        }
        KernelError::Fault(Fault {
            wg: w,
            local: id as usize,
            pc,
            msg,
        })
    }
}

/// Where every read of an id compares it with a constant (a branch or a
/// comparison into a register: `local_id != 0`), and the subgroups have
/// one lane (so `subgroup_id` is `local_id` and `lane_id` is 0): the cut
/// points `c` and `c + 1` of every constant `c`, sorted. Two ids between
/// the same cut points compare alike with every constant, so the
/// invocations that hold them have the same futures.
pub(super) fn id_regions(p: &Program) -> Option<Vec<u16>> {
    let mut cuts = vec![0u16];
    let is_id = |o: Operand| {
        matches!(
            o,
            Operand::Id(IdKind::LocalId | IdKind::SubgroupId | IdKind::LaneId)
        )
    };
    for code in &p.codes {
        for i in &code.instrs {
            let pair = match *i {
                Instr::Branch { a, b, .. } => Some((a, b)),
                Instr::Assign {
                    op: Some(progress_litmus::kernel::program::BinOp::Cmp(_)),
                    a,
                    b,
                    ..
                } => Some((a, b)),
                _ => None,
            };
            let other = match pair {
                Some((a, b)) if is_id(a) && !is_id(b) => Some(b),
                Some((a, b)) if is_id(b) && !is_id(a) => Some(a),
                _ => None,
            };
            match (other, i.operands().into_iter().any(is_id)) {
                (_, false) => {}
                (Some(Operand::Imm(c)), true) if p.subgroup_size <= 1 => {
                    cuts.push(c);
                    cuts.push(c.saturating_add(1));
                }
                _ => return None,
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    Some(cuts)
}

/// Per pc (END included): the registers read at or after it before being
/// written, and whether an id is read at or after it.
fn liveness(code: &progress_litmus::kernel::program::Code) -> Vec<(u8, bool)> {
    let len = code.instrs.len();
    let mut live = vec![(0u8, false); len + 1];
    loop {
        let mut changed = false;
        for pc in (0..len).rev() {
            let i = &code.instrs[pc];
            let (mut regs, mut id) = (0u8, false);
            for n in cfg::successors(code, pc) {
                regs |= live[n].0;
                id |= live[n].1;
            }
            if let Some(d) = i.dst() {
                regs &= !(1 << d);
            }
            for o in i.operands() {
                match o {
                    Operand::Reg(k) => regs |= 1 << k,
                    Operand::Id(IdKind::WgId) | Operand::Imm(_) => {}
                    Operand::Id(_) => id = true,
                }
            }
            if live[pc] != (regs, id) {
                live[pc] = (regs, id);
                changed = true;
            }
        }
        if !changed {
            return live;
        }
    }
}

/// Sorts classes by record and adds the counts of equal records.
fn merge(classes: &mut Vec<Class>) {
    classes.sort();
    let mut out: Vec<Class> = Vec::with_capacity(classes.len());
    for (r, c) in classes.drain(..) {
        match out.last_mut() {
            Some((q, d)) if *q == r => *d += c,
            _ => out.push((r, c)),
        }
    }
    *classes = out;
}

/// Takes `k` invocations out of class `ci`.
fn take(classes: &mut Vec<Class>, ci: usize, k: u16) {
    classes[ci].1 -= k;
    if classes[ci].1 == 0 {
        classes.remove(ci);
    }
}

/// Adds `n` invocations with record `r`, keeping the classes sorted.
fn put(classes: &mut Vec<Class>, r: Vec<u8>, n: u16) {
    match classes.binary_search_by(|(q, _)| q.as_slice().cmp(&r)) {
        Ok(k) => classes[k].1 += n,
        Err(k) => classes.insert(k, (r, n)),
    }
}
