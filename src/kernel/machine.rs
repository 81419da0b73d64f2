//! Kernel execution on packed states (docs/KERNEL.md §2).
//!
//! A program state (memory, and per invocation its pc, registers, whether it
//! waits at a barrier or collective and whether it has signalled Terminate;
//! in lockstep mode per subgroup its reconvergence stack) is packed into a
//! few machine words, `[u64; W]` with `W <= 8`: the oracle hashes states
//! millions of times. The oracle appends its own fields (fair sets) after
//! [`Machine::bits`] bits.
//!
//! The actors are the invocations (interleaving) or, when subgroups run in
//! lockstep, the subgroups. [`Machine::steps`] gives every successor of one
//! actor's step; [`Machine::terminate`] is the separate Terminate event of
//! an invocation that has reached END.

use crate::kernel::cfg;
use crate::kernel::model::Direct;
use crate::kernel::program::{
    Addr, AtomicOp, CollectiveOp, CondBranch, Instr, Operand, Program, MAX_INVOCATIONS,
    MAX_LOCKSTEP_SUBGROUP,
};
use crate::kernel::structure::Structure;

mod simt;
use std::fmt;
use std::hash::Hash;

/// A packed state: a fixed number of words.
pub trait Packed:
    Copy + Eq + Hash + Default + AsRef<[u64]> + AsMut<[u64]> + Send + Sync + fmt::Debug + 'static
{
}

impl<const N: usize> Packed for [u64; N] where [u64; N]: Default {}

/// The most words a state may take.
pub const MAX_WORDS: usize = 8;
/// The most bits of a program's packed state: one word is left for the
/// fair sets of the product.
pub const MAX_STATE_BITS: usize = MAX_WORDS * 64 - 64;
/// The most bits of a product state (the program's and the fair sets).
pub const MAX_PRODUCT_BITS: usize = MAX_WORDS * 64;

#[inline]
fn get(s: &[u64], off: u32, w: u32) -> u64 {
    let i = (off / 64) as usize;
    let b = off % 64;
    let mut v = s[i] >> b;
    if b + w > 64 {
        v |= s[i + 1] << (64 - b);
    }
    v & ((1u64 << w) - 1)
}

#[inline]
fn set(s: &mut [u64], off: u32, w: u32, v: u64) {
    let i = (off / 64) as usize;
    let b = off % 64;
    let mask = (1u64 << w) - 1;
    s[i] = (s[i] & !(mask << b)) | ((v & mask) << b);
    if b + w > 64 {
        let hi = w - (64 - b);
        let m2 = (1u64 << hi) - 1;
        s[i + 1] = (s[i + 1] & !m2) | ((v & mask) >> (64 - b));
    }
}

/// Reads `w` bits at `off` of a packed state (`w < 64`).
#[inline]
pub fn get_bits(s: &[u64], off: u32, w: u32) -> u64 {
    get(s, off, w)
}

/// Writes `w` bits at `off` of a packed state (`w < 64`).
#[inline]
pub fn set_bits(s: &mut [u64], off: u32, w: u32, v: u64) {
    set(s, off, w, v)
}

/// Bits needed to hold the numbers `0..=max`.
pub fn bits_for(max: usize) -> u32 {
    (usize::BITS - max.leading_zeros()).max(1)
}

/// A run-time error of the program: it is not a verdict, the program is
/// wrong (an array index out of bounds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub wg: usize,
    pub local: usize,
    pub pc: usize,
    pub msg: String,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invocation {}.{} at instruction {}: {}",
            self.wg, self.local, self.pc, self.msg
        )
    }
}

/// Why a program cannot be compiled for stepping (under a model): the
/// message, and the line and column in the source it is about, when known
/// (structure errors of the SIMT-Step models in a parsed litmus program).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    pub at: Option<(usize, usize)>,
    pub msg: String,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some((l, c)) => write!(f, "{l}:{c}: {}", self.msg),
            None => f.write_str(&self.msg),
        }
    }
}

impl From<String> for BuildError {
    fn from(msg: String) -> BuildError {
        BuildError { at: None, msg }
    }
}

/// What one step did, for labels and witnesses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StepInfo {
    /// The pc of the instruction executed.
    pub pc: u8,
    /// 0: not a branch; 1: taken; 2: not taken; 3: divergent (lockstep).
    pub branch: u8,
    /// Which of several successors of one lockstep step this is.
    pub choice: u8,
    /// The step took the jump of a `choose finitely` (some lane did,
    /// under lockstep): a run makes such steps only finitely often, so
    /// the verdict rules leave them out of cycles (docs/KERNEL.md §2.11).
    pub finite: bool,
}

/// The control fields of every invocation of one state, decoded once
/// ([`Machine::view`]): what choosing a state's moves reads again and
/// again (pcs, waiting and terminated flags, which actors can step).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct View {
    /// Per invocation, its pc ([`Machine::pc`]: its code length when it
    /// has finished).
    pub pc: [u8; MAX_INVOCATIONS],
    /// Per actor that can step, the pc of its next instruction
    /// ([`Machine::stepping_instr`]).
    pub next: [u8; MAX_INVOCATIONS],
    /// Bit `i`: invocation `i` has signalled Terminate.
    pub terminated: u32,
    /// Bit `i`: invocation `i` waits ([`Machine::waiting`]).
    pub waiting: u32,
    /// Bit `i`: invocation `i` has reached END.
    pub finished: u32,
    /// Bit `a`: actor `a` can step ([`Machine::can_step`]).
    pub steppable: u32,
}

impl View {
    /// The invocations that may signal Terminate ([`Machine::can_terminate`]).
    #[inline]
    pub fn can_terminate(&self) -> u32 {
        self.finished & !self.terminated
    }
}

#[derive(Clone, Debug)]
struct Inv {
    wg: usize,
    local: usize,
    sg: usize,
    lane: usize,
    code: usize,
    pc_off: u32,
    regs_off: u32,
    term_off: u32,
    wait_off: u32,
    /// SIMT-Step state (§2.9): the lanes of the invocation's dynamic block
    /// (`cur`), then per scope depth the lanes of the scope's instance,
    /// then the merge-wait and synchronised flags; `end` is one past them.
    /// Under SSO, which keeps no masks, the iteration counts of the counted
    /// loops containing its pc start here instead.
    cur_off: u32,
    end: u32,
}

#[derive(Clone, Debug)]
struct Sg {
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

/// A program compiled for stepping packed states.
#[derive(Clone, Debug)]
pub struct Machine {
    pub program: Program,
    lockstep: bool,
    vb: u32,
    pcb: u32,
    n: usize,
    s: usize,
    lens: Vec<usize>,
    ipdom: Vec<Vec<usize>>,
    /// First cell of each location (of workgroup 0 for shared ones).
    loc_base: Vec<usize>,
    invs: Vec<Inv>,
    sgs: Vec<Sg>,
    depth_bits: u32,
    entry_bits: u32,
    max_depth: usize,
    bits: u32,
    /// The SIMT-Step direct model, if the lanes execute under one (§2.9).
    direct: Option<Direct>,
    /// Whether some instruction is a `choose` ([`Machine::at_choice`]).
    has_choose: bool,
    /// The scopes of each code block (direct models only).
    structs: Vec<Structure>,
    /// The most scopes containing one pc, over the blocks.
    scope_depth: usize,
    /// SSO (§2.9): per code block, per pc `0..=len`, the loop scopes
    /// containing the pc that contain a subgroup operation, outermost
    /// first; an invocation keeps an iteration count for each.
    counted: Vec<Vec<Vec<usize>>>,
    /// SSO: the most counted loops containing one pc, and the bits of one
    /// iteration count.
    iter_slots: usize,
    iter_bits: u32,
    /// Interleaved lanes without a direct model: per invocation, where
    /// [`Machine::view`] reads its pc, registers and flags at once.
    ctl: Vec<Ctl>,
}

/// An invocation's control fields in one read: the bits from its pc to
/// its waiting flag (interleaved: pc, registers, terminated, waiting).
#[derive(Clone, Copy, Debug)]
struct Ctl {
    off: u32,
    /// Bits from the pc to the waiting flag, both included (at most 63,
    /// else the fields are read one by one).
    width: u32,
    /// `off`'s word and bit in it, and the mask of `width` bits (read
    /// with no division per state).
    word: u32,
    shift: u32,
    mask: u64,
    /// Where the terminated flag is from `off` (the waiting flag follows).
    flags: u32,
    len: u32,
}

/// Whether some instruction of `p` is a `choose` (docs/KERNEL.md §2.11);
/// refused under a SIMT-Step model (`direct`).
fn choices(p: &Program, direct: Option<Direct>) -> Result<bool, BuildError> {
    let any = (p.codes.iter()).any(|c| c.instrs.iter().any(|i| matches!(i, Instr::Choose { .. })));
    if any && direct.is_some() {
        return Err("a `choose` (a weak compare-exchange's spurious failure): the SIMT-Step models take deterministic programs only".to_string().into());
    }
    Ok(any)
}

impl Machine {
    /// Compiles a valid program (see [`Program::validate`]). `lockstep`:
    /// the lanes of each subgroup execute together (SIMT). Fails if the
    /// state does not fit the packed representation.
    pub fn new(program: &Program, lockstep: bool) -> Result<Machine, String> {
        Machine::with_direct(program, lockstep, None).map_err(|e| e.to_string())
    }

    /// [`Machine::new`], or with the lanes of each subgroup executing under
    /// a SIMT-Step direct model (§2.9); fails if the program's control flow
    /// is not structured as the model needs.
    pub fn with_direct(
        program: &Program,
        lockstep: bool,
        direct: Option<Direct>,
    ) -> Result<Machine, BuildError> {
        let p = program.clone();
        let n = p.workgroup_size as usize;
        let s = p.subgroup_size as usize;
        let lockstep = lockstep && s > 1 && direct.is_none();
        if lockstep && s > MAX_LOCKSTEP_SUBGROUP {
            return Err(format!(
                "subgroups of {s} invocations: lockstep supports at most {MAX_LOCKSTEP_SUBGROUP} (each step tries every order of the lanes' atomics)"
            )
            .into());
        }
        let has_choose = choices(&p, direct)?;
        let structs = match direct {
            Some(d) => simt::structures(&p, d)?,
            None => Vec::new(),
        };
        let scope_depth = structs.iter().map(|st| st.max_depth).max().unwrap_or(0);
        let counted = match direct {
            Some(Direct::Sso) => simt::counted_loops(&p, &structs),
            _ => Vec::new(),
        };
        let iter_slots = counted.iter().flatten().map(Vec::len).max().unwrap_or(0);
        let vb = p.value_bits();
        let lens: Vec<usize> = p.codes.iter().map(|c| c.instrs.len()).collect();
        let max_len = lens.iter().copied().max().unwrap_or(0);
        let pcb = bits_for(max_len);
        let ipdom = p.codes.iter().map(cfg::ipdoms).collect();
        let mut loc_base = Vec::new();
        let mut cell = 0usize;
        for l in &p.locations {
            loc_base.push(cell);
            cell += if l.shared {
                l.len() * p.workgroups as usize
            } else {
                l.len()
            };
        }
        let mut m = Machine {
            program: p,
            has_choose,
            lockstep,
            vb,
            pcb,
            n,
            s,
            lens,
            ipdom,
            loc_base,
            invs: Vec::new(),
            sgs: Vec::new(),
            depth_bits: bits_for(2 * s - 1),
            entry_bits: 2 * pcb + s as u32,
            max_depth: 2 * s - 1,
            bits: 0,
            direct,
            structs,
            scope_depth,
            counted,
            iter_slots,
            iter_bits: simt::iter_bits(vb),
            ctl: Vec::new(),
        };
        let off = m.lay_out_invocations((cell as u32) * vb);
        let off = m.lay_out_subgroups(off);
        if off as usize > MAX_STATE_BITS {
            return Err(format!(
                "the program's state takes {off} bits: at most {MAX_STATE_BITS} fit (fewer workgroups, invocations, registers, cells or a smaller value domain)",
            )
            .into());
        }
        m.bits = off;
        m.ctl = m.control_table();
        Ok(m)
    }

    /// Places every invocation's fields from bit `off`; returns the end.
    fn lay_out_invocations(&mut self, mut off: u32) -> u32 {
        let (n, s) = (self.n, self.s);
        let direct = self.direct.is_some() && self.direct != Some(Direct::Sso);
        for wg in 0..self.program.workgroups as usize {
            let code = self.program.wg_code[wg] as usize;
            let nregs = self.program.codes[code].regs.len() as u32;
            for local in 0..n {
                let pc_off = off;
                if !self.lockstep {
                    off += self.pcb;
                }
                let regs_off = off;
                off += nregs * self.vb;
                let term_off = off;
                off += 1;
                let wait_off = off;
                if !self.lockstep {
                    off += 1;
                }
                let cur_off = off;
                if direct {
                    off += (1 + self.scope_depth as u32) * s as u32 + 2;
                }
                off += self.iter_slots as u32 * self.iter_bits;
                self.invs.push(Inv {
                    wg,
                    local,
                    sg: wg * (n / s) + local / s,
                    lane: local % s,
                    code,
                    pc_off,
                    regs_off,
                    term_off,
                    wait_off,
                    cur_off,
                    end: off,
                });
            }
        }
        off
    }

    /// [`Machine::ctl`]: empty in lockstep or under a direct model.
    fn control_table(&self) -> Vec<Ctl> {
        if self.lockstep || self.direct.is_some() {
            return Vec::new();
        }
        self.invs
            .iter()
            .map(|v| {
                debug_assert_eq!(v.wait_off, v.term_off + 1);
                let width = v.wait_off + 1 - v.pc_off;
                Ctl {
                    off: v.pc_off,
                    width,
                    word: v.pc_off / 64,
                    shift: v.pc_off % 64,
                    mask: if width < 64 { (1 << width) - 1 } else { !0 },
                    flags: v.term_off - v.pc_off,
                    len: self.lens[v.code] as u32,
                }
            })
            .collect()
    }

    /// Places every lockstep subgroup's stack from bit `off`; returns the end.
    fn lay_out_subgroups(&mut self, mut off: u32) -> u32 {
        if !self.lockstep {
            return off;
        }
        let per = self.n / self.s;
        for g in 0..self.program.workgroups as usize * per {
            let wg = g / per;
            let depth_off = off;
            off += self.depth_bits;
            let entries_off = off;
            off += self.entry_bits * self.max_depth as u32;
            let wait_off = off;
            off += 1;
            self.sgs.push(Sg {
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

    /// Bits of the program state; the oracle's fields come after.
    #[inline]
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Whether subgroups step in lockstep (the actors are subgroups).
    #[inline]
    pub fn lockstep(&self) -> bool {
        self.lockstep
    }

    /// The SIMT-Step direct model the lanes execute under, if any (§2.9).
    #[inline]
    pub fn direct(&self) -> Option<Direct> {
        self.direct
    }

    #[inline]
    pub fn num_invocations(&self) -> usize {
        self.invs.len()
    }

    /// Invocations (interleaving) or subgroups (lockstep).
    #[inline]
    pub fn num_actors(&self) -> usize {
        if self.lockstep {
            self.sgs.len()
        } else {
            self.invs.len()
        }
    }

    /// The invocations an actor moves.
    #[inline]
    pub fn actor_invocations(&self, a: usize) -> std::ops::Range<usize> {
        if self.lockstep {
            a * self.s..(a + 1) * self.s
        } else {
            a..a + 1
        }
    }

    /// The invocations that take part in actor `a`'s next step, which
    /// can step ([`Machine::can_step`]): the invocation itself, or under
    /// lockstep the active lanes of its subgroup (the top of its
    /// reconvergence stack). Not for the SIMT-Step models but SSO, whose
    /// lanes step alone but for subgroup operations (which write the
    /// participants' registers, but access no memory and cannot wrap).
    pub fn stepping_invocations(&self, s: &[u64], a: usize) -> Vec<usize> {
        debug_assert!(matches!(self.direct, None | Some(Direct::Sso)) && self.can_step(s, a));
        if !self.lockstep {
            return vec![a];
        }
        let first = self.sgs[a].first_inv;
        let mask = self.read_stack(s, a).last().map_or(0, |e| e.mask);
        (0..self.s)
            .filter(|l| mask >> l & 1 == 1)
            .map(|l| first + l)
            .collect()
    }

    /// The actor that moves invocation `i`.
    #[inline]
    pub fn actor_of(&self, i: usize) -> usize {
        if self.lockstep {
            i / self.s
        } else {
            i
        }
    }

    /// Workgroup, id within the workgroup, global subgroup index and lane of
    /// invocation `i`.
    #[inline]
    pub fn coords(&self, i: usize) -> (usize, usize, usize, usize) {
        let v = &self.invs[i];
        (v.wg, v.local, v.sg, v.lane)
    }

    /// The length (END pc) of invocation `i`'s code.
    #[inline]
    pub fn code_len(&self, i: usize) -> usize {
        self.lens[self.invs[i].code]
    }

    /// The code block index of invocation `i`.
    #[inline]
    pub fn code_index(&self, i: usize) -> usize {
        self.invs[i].code
    }

    /// The initial state: memory as declared, every pc 0, registers 0.
    pub fn init(&self, s: &mut [u64]) {
        for (l, loc) in self.program.locations.iter().enumerate() {
            let copies = if loc.shared {
                self.program.workgroups as usize
            } else {
                1
            };
            for c in 0..copies {
                for (k, &v) in loc.init.iter().enumerate() {
                    let cell = self.loc_base[l] + c * loc.len() + k;
                    set(s, cell as u32 * self.vb, self.vb, v as u64);
                }
            }
        }
        self.simt_init(s);
        if self.lockstep {
            for g in 0..self.sgs.len() {
                let len = self.lens[self.sgs[g].code];
                if len > 0 {
                    self.write_stack(
                        s,
                        g,
                        &[Entry {
                            pc: 0,
                            rpc: len,
                            mask: (1 << self.s) - 1,
                        }],
                    );
                }
            }
        }
    }

    /// The cell of element `k` of workgroup `copy`'s copy of location `l`
    /// (copy 0 for a global location).
    #[inline]
    pub fn cell_of(&self, l: usize, copy: usize, k: usize) -> usize {
        self.loc_base[l] + copy * self.program.locations[l].len() + k
    }

    #[inline]
    pub fn mem(&self, s: &[u64], cell: usize) -> u16 {
        get(s, cell as u32 * self.vb, self.vb) as u16
    }

    #[inline]
    fn set_mem(&self, s: &mut [u64], cell: usize, v: u16) {
        set(s, cell as u32 * self.vb, self.vb, v as u64)
    }

    #[inline]
    pub fn reg(&self, s: &[u64], i: usize, r: usize) -> u16 {
        get(s, self.invs[i].regs_off + r as u32 * self.vb, self.vb) as u16
    }

    #[inline]
    fn set_reg(&self, s: &mut [u64], i: usize, r: usize, v: u16) {
        set(
            s,
            self.invs[i].regs_off + r as u32 * self.vb,
            self.vb,
            v as u64,
        )
    }

    /// Whether invocation `i` has signalled Terminate.
    #[inline]
    pub fn terminated(&self, s: &[u64], i: usize) -> bool {
        get(s, self.invs[i].term_off, 1) != 0
    }

    /// The offset of invocation `i`'s Terminate flag in a state.
    pub fn terminated_bit(&self, i: usize) -> u32 {
        self.invs[i].term_off
    }

    /// Bit `i` set iff invocation `i` has signalled Terminate.
    #[inline]
    pub fn terminated_mask(&self, s: &[u64]) -> u32 {
        self.invs
            .iter()
            .enumerate()
            .fold(0, |m, (i, v)| m | (get(s, v.term_off, 1) as u32) << i)
    }

    /// Whether invocation `i` waits at a barrier or collective (in lockstep:
    /// whether its subgroup does and it is among the waiting lanes).
    #[inline]
    pub fn waiting(&self, s: &[u64], i: usize) -> bool {
        if self.lockstep {
            self.lockstep_waiting(s, i)
        } else {
            get(s, self.invs[i].wait_off, 1) != 0 || self.merge_waiting(s, i)
        }
    }

    /// [`Machine::waiting`] in lockstep, off the interleaved path.
    #[inline(never)]
    fn lockstep_waiting(&self, s: &[u64], i: usize) -> bool {
        let g = self.invs[i].sg;
        get(s, self.sgs[g].wait_off, 1) != 0
            && self
                .read_stack(s, g)
                .last()
                .is_some_and(|e| e.mask & (1 << self.invs[i].lane) != 0)
    }

    /// The pc of invocation `i` (its code length when it has finished).
    #[inline]
    pub fn pc(&self, s: &[u64], i: usize) -> usize {
        if self.lockstep {
            self.lockstep_pc(s, i)
        } else {
            get(s, self.invs[i].pc_off, self.pcb) as usize
        }
    }

    /// [`Machine::pc`] in lockstep, off the interleaved path (which then
    /// inlines where it is called).
    #[inline(never)]
    fn lockstep_pc(&self, s: &[u64], i: usize) -> usize {
        let v = &self.invs[i];
        self.read_stack(s, v.sg)
            .iter()
            .rev()
            .find(|e| e.mask & (1 << v.lane) != 0)
            .map_or(self.lens[v.code], |e| e.pc)
    }

    #[inline]
    fn set_pc(&self, s: &mut [u64], i: usize, pc: usize) {
        set(s, self.invs[i].pc_off, self.pcb, pc as u64)
    }

    /// The control fields of every invocation of `s`, decoded once.
    #[inline]
    pub fn view(&self, s: &[u64]) -> View {
        if self.lockstep || self.direct.is_some() {
            return self.view_slow(s);
        }
        let mut pcs = [0u8; MAX_INVOCATIONS];
        let (mut terminated, mut waiting, mut finished) = (0u32, 0u32, 0u32);
        let pc_mask = (1u64 << self.pcb) - 1;
        for (i, c) in self.ctl.iter().enumerate().take(MAX_INVOCATIONS) {
            let (pc, flags) = if c.width < 64 {
                let w = c.word as usize;
                let mut x = s[w] >> c.shift;
                if c.shift + c.width > 64 {
                    x |= s[w + 1] << (64 - c.shift);
                }
                let x = x & c.mask;
                (x & pc_mask, x >> c.flags)
            } else {
                (get(s, c.off, self.pcb), get(s, c.off + c.flags, 2))
            };
            pcs[i] = pc as u8;
            terminated |= (flags as u32 & 1) << i;
            waiting |= (flags as u32 >> 1 & 1) << i;
            finished |= ((pc as u32 >= c.len) as u32) << i;
        }
        let all = (1u32 << self.invs.len()) - 1;
        View {
            pc: pcs,
            next: pcs,
            terminated,
            waiting,
            finished,
            steppable: all & !(terminated | waiting | finished),
        }
    }

    /// [`Machine::view`] of lockstep and SIMT-Step machines, field by field.
    #[inline(never)]
    fn view_slow(&self, s: &[u64]) -> View {
        if self.lockstep {
            return self.lockstep_view(s);
        }
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

    /// [`Machine::view`] in lockstep: each subgroup's stack read once.
    fn lockstep_view(&self, s: &[u64]) -> View {
        let mut v = View::default();
        for (g, sg) in self.sgs.iter().enumerate() {
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

    /// Whether invocation `i` has reached END.
    #[inline]
    pub fn finished(&self, s: &[u64], i: usize) -> bool {
        self.pc(s, i) >= self.code_len(i)
    }

    /// Whether invocation `i` may signal Terminate: it has finished and not
    /// yet signalled.
    #[inline]
    pub fn can_terminate(&self, s: &[u64], i: usize) -> bool {
        !self.terminated(s, i) && self.finished(s, i)
    }

    /// The Terminate event of invocation `i` (see [`Machine::can_terminate`]).
    #[inline]
    pub fn terminate(&self, s: &mut [u64], i: usize) {
        set(s, self.invs[i].term_off, 1, 1)
    }

    /// Whether actor `a` can take a step (not finished, not waiting).
    #[inline]
    pub fn can_step(&self, s: &[u64], a: usize) -> bool {
        if self.lockstep {
            let g = &self.sgs[a];
            get(s, g.depth_off, self.depth_bits) > 0 && get(s, g.wait_off, 1) == 0
        } else {
            let v = &self.invs[a];
            get(s, v.term_off, 1) == 0
                && get(s, v.wait_off, 1) == 0
                && (get(s, v.pc_off, self.pcb) as usize) < self.lens[v.code]
                && (self.direct.is_none() || self.simt_enabled(s, a))
        }
    }

    /// The instruction actor `a` would execute next, if it can step.
    #[inline]
    pub fn next_instr(&self, s: &[u64], a: usize) -> Option<(usize, Instr)> {
        if !self.can_step(s, a) {
            return None;
        }
        self.stepping_instr(s, a)
    }

    /// [`Machine::next_instr`] of an actor known to be able to step
    /// ([`Machine::can_step`]), without checking it again.
    #[inline]
    pub fn stepping_instr(&self, s: &[u64], a: usize) -> Option<(usize, Instr)> {
        debug_assert!(self.can_step(s, a));
        let i = self.actor_invocations(a).start;
        let pc = if self.lockstep {
            self.read_stack(s, a).last()?.pc
        } else {
            self.pc(s, i)
        };
        Some((pc, self.program.codes[self.invs[i].code].instrs[pc]))
    }

    fn read_stack(&self, s: &[u64], g: usize) -> Vec<Entry> {
        let sg = &self.sgs[g];
        let d = get(s, sg.depth_off, self.depth_bits) as usize;
        (0..d)
            .map(|k| {
                let off = sg.entries_off + k as u32 * self.entry_bits;
                Entry {
                    pc: get(s, off, self.pcb) as usize,
                    rpc: get(s, off + self.pcb, self.pcb) as usize,
                    mask: get(s, off + 2 * self.pcb, self.s as u32) as u32,
                }
            })
            .collect()
    }

    fn write_stack(&self, s: &mut [u64], g: usize, st: &[Entry]) {
        let sg = &self.sgs[g];
        debug_assert!(st.len() <= self.max_depth);
        set(s, sg.depth_off, self.depth_bits, st.len() as u64);
        for k in 0..self.max_depth {
            let off = sg.entries_off + k as u32 * self.entry_bits;
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

    #[inline]
    fn eval(&self, s: &[u64], i: usize, o: Operand) -> u16 {
        match o {
            Operand::Reg(r) => self.reg(s, i, r as usize),
            Operand::Imm(v) => v,
            Operand::Id(id) => {
                let v = &self.invs[i];
                use crate::kernel::program::IdKind::*;
                (match id {
                    WgId => v.wg,
                    LocalId => v.local,
                    SubgroupId => v.local / self.s,
                    LaneId => v.lane,
                }) as u16
            }
        }
    }

    /// The memory cell an address denotes for invocation `i`.
    fn cell(&self, s: &[u64], i: usize, pc: usize, a: Addr) -> Result<usize, Fault> {
        let loc = &self.program.locations[a.loc as usize];
        let k = self.eval(s, i, a.index) as usize;
        if k >= loc.len() {
            let v = &self.invs[i];
            return Err(Fault {
                wg: v.wg,
                local: v.local,
                pc,
                msg: format!(
                    "index {k} is out of bounds: `{}` has {} cell{}",
                    loc.name,
                    loc.len(),
                    if loc.len() == 1 { "" } else { "s" }
                ),
            });
        }
        let copy = if loc.shared {
            self.invs[i].wg * loc.len()
        } else {
            0
        };
        Ok(self.loc_base[a.loc as usize] + copy + k)
    }

    /// Executes one atomic for invocation `i`; returns the old value.
    fn atomic(
        &self,
        t: &mut [u64],
        i: usize,
        pc: usize,
        op: AtomicOp,
        addr: Addr,
    ) -> Result<u16, Fault> {
        let cell = self.cell(t, i, pc, addr)?;
        let old = self.mem(t, cell);
        let vals = self.program.values;
        let new = match op {
            AtomicOp::Load => None,
            AtomicOp::Store(x) | AtomicOp::Exchange(x) => Some(self.eval(t, i, x)),
            AtomicOp::CompareExchange(e, d) => {
                (old == self.eval(t, i, e)).then(|| self.eval(t, i, d))
            }
            AtomicOp::Fetch(f, x) => Some(f.apply(old, self.eval(t, i, x), vals)),
        };
        if let Some(v) = new {
            self.set_mem(t, cell, v);
        }
        Ok(old)
    }

    /// Every successor of one step of actor `a` (none if it cannot step).
    pub fn steps<S: Packed>(
        &self,
        s: &S,
        a: usize,
        out: &mut Vec<(StepInfo, S)>,
    ) -> Result<(), Fault> {
        self.steps_into(s, a, &mut |info, t| out.push((info, t)))
    }

    /// The one step of actor `a` where lanes interleave (no lockstep, no
    /// SIMT-Step model: an actor is an invocation and has at most one
    /// step), made in place in `t`, a copy of the state whose view is `v`
    /// ([`Machine::view`]: whether `a` can step and its pc are read off
    /// it, not the state): its [`StepInfo`], or `None` (and `t`
    /// unchanged) if it cannot step; `None` for every actor under
    /// lockstep or a SIMT-Step model, which [`Machine::steps_into`]
    /// steps. Inlined, so that the step is not handed back through
    /// memory: the checker's callers build the successor in its place
    /// among the others.
    #[inline]
    pub fn interleaved_step_in_place(
        &self,
        t: &mut [u64],
        a: usize,
        v: &View,
    ) -> Result<Option<StepInfo>, Fault> {
        if self.lockstep || self.direct.is_some() || v.steppable >> a & 1 == 0 {
            return Ok(None);
        }
        debug_assert!(self.can_step(t, a) && self.pc(t, a) == v.pc[a] as usize);
        self.interleaved_step(t, a, v.pc[a] as usize).map(Some)
    }

    /// [`Machine::steps`], handing each successor to `emit`.
    pub fn steps_into<S: Packed>(
        &self,
        s: &S,
        a: usize,
        emit: &mut impl FnMut(StepInfo, S),
    ) -> Result<(), Fault> {
        if !self.can_step(s.as_ref(), a) {
            return Ok(());
        }
        if self.direct.is_some() {
            return self.simt_steps(s, a, emit);
        }
        if self.lockstep {
            let mut out = Vec::new();
            self.lockstep_steps(s, a, &mut out)?;
            for (info, t) in out {
                emit(info, t);
            }
            Ok(())
        } else {
            let mut t = *s;
            let pc = self.pc(s.as_ref(), a);
            let info = self.interleaved_step(t.as_mut(), a, pc)?;
            emit(info, t);
            let code = &self.program.codes[self.invs[a].code];
            if let Instr::Choose { target, finite } = code.instrs[pc] {
                let mut u = *s;
                self.set_pc(u.as_mut(), a, target.pc(code.instrs.len()));
                emit(
                    StepInfo {
                        branch: 1,
                        finite,
                        ..info
                    },
                    u,
                );
            }
            Ok(())
        }
    }

    /// Whether actor `a`'s next instruction is a `choose`, whose step has
    /// two successors ([`Machine::interleaved_step_in_place`] makes the
    /// fall-through only); `v`: the state's view.
    #[inline]
    pub fn at_choice(&self, a: usize, v: &View) -> bool {
        self.has_choose && {
            let code = &self.program.codes[self.invs[a].code];
            matches!(
                code.instrs.get(v.pc[a] as usize),
                Some(Instr::Choose { .. })
            )
        }
    }

    #[inline]
    /// Invocation `i`'s step from `pc`, its pc in `t`.
    fn interleaved_step(&self, t: &mut [u64], i: usize, pc: usize) -> Result<StepInfo, Fault> {
        let v = &self.invs[i];
        let len = self.lens[v.code];
        let instr = self.program.codes[v.code].instrs[pc];
        let mut info = StepInfo {
            pc: pc as u8,
            branch: 0,
            choice: 0,
            finite: false,
        };
        let mut jump = |t: &mut [u64], taken: bool, target: crate::axb::test::Target| {
            info.branch = if taken { 1 } else { 2 };
            self.set_pc(t, i, if taken { target.pc(len) } else { pc + 1 });
        };
        match instr {
            Instr::Assign { dst, op, a, b } => {
                let x = self.eval(t, i, a);
                let r = match op {
                    Some(op) => op.eval(x, self.eval(t, i, b), self.program.values),
                    None => x,
                };
                self.set_reg(t, i, dst as usize, r);
                self.set_pc(t, i, pc + 1);
            }
            Instr::Branch { a, cmp, b, target } => {
                let taken = cmp.eval(self.eval(t, i, a), self.eval(t, i, b));
                jump(t, taken, target);
            }
            Instr::Goto { target } => self.set_pc(t, i, target.pc(len)),
            // The fall-through; [`Machine::steps_into`] adds the jump.
            Instr::Choose { .. } => {
                info.branch = 2;
                self.set_pc(t, i, pc + 1);
            }
            Instr::Atomic {
                op,
                addr,
                dst,
                branch,
            } => {
                let old = self.atomic(t, i, pc, op, addr)?;
                if let Some(d) = dst {
                    self.set_reg(t, i, d as usize, old);
                }
                match branch {
                    Some(b) => {
                        let taken = b.cmp.eval(old, self.eval(t, i, b.rhs));
                        jump(t, taken, b.target);
                    }
                    None => self.set_pc(t, i, pc + 1),
                }
            }
            Instr::Barrier => {
                set(t, v.wait_off, 1, 1);
                self.release_if_all_wait(t, v.wg * self.n..(v.wg + 1) * self.n, pc, None);
            }
            Instr::Collective { op, dst, src } => {
                set(t, v.wait_off, 1, 1);
                let first = i - v.lane;
                self.release_if_all_wait(t, first..first + self.s, pc, Some((op, dst, src)));
            }
        }
        Ok(info)
    }

    /// Interleaving barriers and collectives: when every member waits at
    /// `pc`, all of them go on (a collective writes its result first).
    fn release_if_all_wait(
        &self,
        t: &mut [u64],
        members: std::ops::Range<usize>,
        pc: usize,
        collective: Option<(CollectiveOp, u8, Operand)>,
    ) {
        let all = members
            .clone()
            .all(|j| get(t, self.invs[j].wait_off, 1) != 0 && self.pc(t, j) == pc);
        if !all {
            return;
        }
        if let Some((op, dst, src)) = collective {
            // The members' operands, on the stack (a subgroup has at most
            // a workgroup's invocations).
            let mut vals = [0u16; MAX_INVOCATIONS];
            for (k, j) in members.clone().enumerate() {
                vals[k] = self.eval(t, j, src);
            }
            let r = collective_result(op, &vals[..members.len()]);
            for j in members.clone() {
                self.set_reg(t, j, dst as usize, r);
            }
        }
        for j in members {
            set(t, self.invs[j].wait_off, 1, 0);
            self.set_pc(t, j, pc + 1);
        }
    }

    fn lockstep_steps<S: Packed>(
        &self,
        s: &S,
        g: usize,
        out: &mut Vec<(StepInfo, S)>,
    ) -> Result<(), Fault> {
        let sg = &self.sgs[g];
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
            branch: 0,
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
        let inv = |l: usize| self.sgs[g].first_inv + l;
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
        let sg = &self.sgs[g];
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
            branch: 0,
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
            branch: 0,
            choice: 0,
            finite: false,
        };
        let uniform = |to: usize, b: u8| {
            let mut st = stack.to_vec();
            st.last_mut().unwrap().pc = to;
            let mut i = info;
            i.branch = b;
            (i, st)
        };
        if taken == top.mask {
            return vec![uniform(target, 1)];
        }
        if taken == 0 {
            return vec![uniform(pc + 1, 2)];
        }
        info.branch = 3;
        let code = self.sgs[g].code;
        let join = self.ipdom[code][pc];
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
        let len = self.lens[self.sgs[g].code];
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
            st.len() <= self.max_depth,
            "a reconvergence stack deeper than 2S-1"
        );
        self.write_stack(t, g, &st);
    }

    fn lockstep_barrier_release(&self, t: &mut [u64], wg: usize, pc: usize) {
        let per = self.n / self.s;
        let full = (1u32 << self.s) - 1;
        let gs: Vec<usize> = (wg * per..(wg + 1) * per).collect();
        let all = gs.iter().all(|&g| {
            get(t, self.sgs[g].wait_off, 1) != 0
                && self
                    .read_stack(t, g)
                    .last()
                    .is_some_and(|e| e.pc == pc && e.mask == full)
        });
        if !all {
            return;
        }
        for g in gs {
            set(t, self.sgs[g].wait_off, 1, 0);
            let mut st = self.read_stack(t, g);
            st.last_mut().unwrap().pc = pc + 1;
            self.finish_lockstep(t, g, st);
        }
    }

    /// The bit range (offset, width) of register `r` of invocation `i`
    /// (the oracle clears registers no later step reads).
    pub fn reg_range(&self, i: usize, r: usize) -> (u32, u32) {
        (self.invs[i].regs_off + r as u32 * self.vb, self.vb)
    }

    /// The bit range (offset, width) of invocation `i`'s own fields (pc,
    /// registers, Terminate and wait flags), contiguous in the state: what
    /// symmetry reduction permutes.
    pub fn invocation_range(&self, i: usize) -> (u32, u32) {
        let v = &self.invs[i];
        let start = if self.lockstep { v.regs_off } else { v.pc_off };
        let end = if self.lockstep { v.term_off + 1 } else { v.end };
        (start, end - start)
    }

    /// The bit range of lockstep subgroup `g`'s stack and wait flag.
    pub fn subgroup_range(&self, g: usize) -> Option<(u32, u32)> {
        let sg = self.sgs.get(g)?;
        Some((sg.depth_off, sg.wait_off + 1 - sg.depth_off))
    }

    /// The bit ranges of workgroup `w`'s copies of the shared locations.
    pub fn shared_ranges(&self, w: usize) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for (l, loc) in self.program.locations.iter().enumerate() {
            if loc.shared {
                let first = self.loc_base[l] + w * loc.len();
                v.push((first as u32 * self.vb, loc.len() as u32 * self.vb));
            }
        }
        v
    }

    /// Whether every invocation has signalled Terminate.
    #[inline]
    pub fn all_terminated(&self, s: &[u64]) -> bool {
        (0..self.invs.len()).all(|i| self.terminated(s, i))
    }

    /// `Mem=[..] flag=.. pc=[..]` for people: every location (shared ones
    /// per workgroup as `name@w`), the pc of every invocation (END when
    /// finished, `w` after it when waiting), and registers that are not 0
    /// (`regs w1:r=1` or, with several invocations per workgroup,
    /// `regs w1.0:r=1`).
    pub fn describe(&self, s: &[u64]) -> String {
        let mut parts = Vec::new();
        for (l, loc) in self.program.locations.iter().enumerate() {
            let copies = if loc.shared {
                self.program.workgroups as usize
            } else {
                1
            };
            for c in 0..copies {
                let vals: Vec<String> = (0..loc.len())
                    .map(|k| {
                        self.mem(s, self.loc_base[l] + c * loc.len() + k)
                            .to_string()
                    })
                    .collect();
                let name = if loc.shared {
                    format!("{}@{c}", loc.name)
                } else {
                    loc.name.clone()
                };
                parts.push(if loc.array {
                    format!("{name}=[{}]", vals.join(","))
                } else {
                    format!("{name}={}", vals[0])
                });
            }
        }
        let pcs: Vec<String> = (0..self.invs.len())
            .map(|i| {
                let mut p = if self.finished(s, i) {
                    "END".to_string()
                } else {
                    self.pc(s, i).to_string()
                };
                if self.waiting(s, i) {
                    p.push('w');
                }
                p
            })
            .collect();
        parts.push(format!("pc=[{}]", pcs.join(",")));
        let mut regs = Vec::new();
        for i in 0..self.invs.len() {
            let code = &self.program.codes[self.invs[i].code];
            let set: Vec<String> = code
                .regs
                .iter()
                .enumerate()
                .filter(|&(r, _)| self.reg(s, i, r) != 0)
                .map(|(r, name)| format!("{name}={}", self.reg(s, i, r)))
                .collect();
            if !set.is_empty() {
                let v = &self.invs[i];
                let who = if self.n == 1 {
                    format!("w{}", v.wg)
                } else {
                    format!("w{}.{}", v.wg, v.local)
                };
                regs.push(format!("{who}:{}", set.join(",")));
            }
        }
        if !regs.is_empty() {
            parts.push(format!("regs {}", regs.join(" ")));
        }
        parts.join(" ")
    }
}

fn collective_result(op: CollectiveOp, vals: &[u16]) -> u16 {
    match op {
        CollectiveOp::All => vals.iter().all(|&v| v != 0) as u16,
        CollectiveOp::Any => vals.iter().any(|&v| v != 0) as u16,
        CollectiveOp::BroadcastFirst => vals.first().copied().unwrap_or(0),
    }
}

/// The next permutation in lexicographic order; false after the last.
fn next_permutation(v: &mut [usize]) -> bool {
    let n = v.len();
    if n < 2 {
        return false;
    }
    let mut i = n - 1;
    while i > 0 && v[i - 1] >= v[i] {
        i -= 1;
    }
    if i == 0 {
        return false;
    }
    let mut j = n - 1;
    while v[j] <= v[i - 1] {
        j -= 1;
    }
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_fields_cross_word_boundaries() {
        let mut s = [0u64; 3];
        set(&mut s, 60, 9, 0x1ab);
        assert_eq!(get(&s, 60, 9), 0x1ab);
        set(&mut s, 120, 12, 0xfff);
        assert_eq!(get(&s, 120, 12), 0xfff);
        assert_eq!(get(&s, 60, 9), 0x1ab);
        set(&mut s, 60, 9, 0);
        assert_eq!(s[0] >> 60, 0);
        assert_eq!(s[1] & 0x1f, 0);
        assert_eq!(get(&s, 120, 12), 0xfff);
    }

    #[test]
    fn permutations_cover_every_order() {
        let mut v = vec![0, 1, 2];
        let mut n = 1;
        while next_permutation(&mut v) {
            n += 1;
        }
        assert_eq!(n, 6);
        assert_eq!(bits_for(0), 1);
        assert_eq!(bits_for(7), 3);
        assert_eq!(bits_for(8), 4);
    }
}

#[cfg(test)]
mod semantics {
    use super::*;
    use crate::kernel::litmus;

    type S = [u64; 4];

    fn machine(src: &str, lockstep: bool) -> Machine {
        Machine::new(&litmus::parse(src).unwrap(), lockstep).unwrap()
    }

    fn init(m: &Machine) -> S {
        let mut s = S::default();
        m.init(&mut s);
        s
    }

    fn step(m: &Machine, s: &S, a: usize) -> Vec<(StepInfo, S)> {
        let mut out = Vec::new();
        m.steps(s, a, &mut out).unwrap();
        out
    }

    #[test]
    fn a_barrier_releases_when_the_last_invocation_arrives() {
        let m = machine(
            "values 4;\nworkgroups 1;\nworkgroup_size 2;\nglobal x;\nkernel {\n  barrier();\n  x = 1;\n}\n",
            false,
        );
        let s0 = init(&m);
        let (_, s1) = step(&m, &s0, 0)[0];
        assert!(m.waiting(&s1, 0) && !m.can_step(&s1, 0));
        assert_eq!(m.describe(&s1), "x=0 pc=[0w,0]");
        let (_, s2) = step(&m, &s1, 1)[0];
        assert!(!m.waiting(&s2, 0) && !m.waiting(&s2, 1));
        assert_eq!((m.pc(&s2, 0), m.pc(&s2, 1)), (1, 1));
    }

    #[test]
    fn a_barrier_an_invocation_skips_never_releases() {
        let m = machine(
            "values 4;\nworkgroups 1;\nworkgroup_size 2;\nkernel {\n  if (local_id == 1) goto END;\n  barrier();\n}\n",
            false,
        );
        let s = init(&m);
        let (_, s) = step(&m, &s, 1)[0];
        assert!(m.finished(&s, 1));
        let (_, s) = step(&m, &s, 0)[0];
        let (_, s) = step(&m, &s, 0)[0];
        assert!(m.waiting(&s, 0));
        assert!(!m.can_step(&s, 0) && !m.can_step(&s, 1));
        assert!(m.can_terminate(&s, 1) && !m.can_terminate(&s, 0));
    }

    #[test]
    fn atomics_wrap_and_faults_are_reported() {
        let m = machine(
            "values 4;\nworkgroups 1;\nglobal a[2] = {3, 0};\nkernel {\n  r = fetch_add(a[0], 2);\n  q = cas(a[1], 0, r);\n  p = a[r];\n}\n",
            false,
        );
        let s = init(&m);
        let (_, s) = step(&m, &s, 0)[0];
        assert_eq!((m.mem(&s, 0), m.reg(&s, 0, 0)), (1, 3));
        let (_, s) = step(&m, &s, 0)[0];
        assert_eq!((m.mem(&s, 1), m.reg(&s, 0, 1)), (3, 0));
        let mut out = Vec::new();
        let e = m.steps(&s, 0, &mut out).unwrap_err();
        assert!(e.msg.contains("index 3 is out of bounds"), "{e}");
    }

    #[test]
    fn interleaved_collectives_wait_for_the_whole_subgroup() {
        let m = machine(
            "values 4;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nkernel {\n  r = subgroupAll(local_id);\n  q = subgroupBroadcastFirst(lane_id);\n}\n",
            false,
        );
        let s = init(&m);
        let (_, s) = step(&m, &s, 1)[0];
        assert!(m.waiting(&s, 1));
        let (_, s) = step(&m, &s, 0)[0];
        assert_eq!((m.reg(&s, 0, 0), m.reg(&s, 1, 0)), (0, 0));
        assert_eq!((m.pc(&s, 0), m.pc(&s, 1)), (1, 1));
    }

    #[test]
    fn lockstep_spin_lock_diverges_and_the_spinning_lanes_run_first() {
        // Both lanes exchange; one gets the lock. The loser loops while the
        // winner waits at the reconvergence point: the classic SIMT deadlock.
        let m = machine(
            "values 2;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal lock;\nkernel {\n  0: if (exch(lock, 1) == 1) goto 0;\n  1: lock = 0;\n}\n",
            true,
        );
        assert_eq!(m.num_actors(), 1);
        let s = init(&m);
        let succ = step(&m, &s, 0);
        // Two lane orders (who wins), each divergent with two stack orders
        // that give the same state (the winners' entry is at its
        // reconvergence point and is popped at once).
        assert_eq!(succ.len(), 2);
        for (info, t) in &succ {
            assert_eq!(info.branch, 3);
            let spinning: Vec<usize> = (0..2).filter(|&i| m.pc(t, i) == 0).collect();
            assert_eq!(spinning.len(), 1);
            // Only the loser runs, forever.
            let (_, u) = step(&m, t, 0)[0];
            assert_eq!(u, *t);
        }
    }

    #[test]
    fn lockstep_collectives_see_only_the_active_lanes() {
        let m = machine(
            "values 4;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nkernel {\n  0: if (lane_id == 0) goto 2;\n  1: goto END;\n  2: r = subgroupAll(1);\n  3: q = subgroupBroadcastFirst(lane_id);\n}\n",
            true,
        );
        let s = init(&m);
        let succ = step(&m, &s, 0);
        assert_eq!(succ.len(), 2);
        let (_, mut t) = succ.iter().find(|(i, _)| i.choice == 0).copied().unwrap();
        // Lane 0 (taken) runs first: the collective sees only lane 0.
        for _ in 0..2 {
            t = step(&m, &t, 0)[0].1;
        }
        assert_eq!((m.reg(&t, 0, 0), m.reg(&t, 0, 1)), (1, 0));
        assert!(m.finished(&t, 0));
        t = step(&m, &t, 0)[0].1;
        assert!(m.finished(&t, 1));
        assert!(!m.can_step(&t, 0));
    }

    /// Every state reachable from the initial one (terminating finished
    /// invocations too), at most `cap`.
    fn reachable(m: &Machine, cap: usize) -> Vec<S> {
        let mut seen = std::collections::HashSet::new();
        let mut work = vec![init(m)];
        let mut all = Vec::new();
        while let Some(s) = work.pop() {
            if all.len() >= cap || !seen.insert(s) {
                continue;
            }
            all.push(s);
            for a in 0..m.num_actors() {
                work.extend(step(m, &s, a).into_iter().map(|(_, t)| t));
            }
            for i in (0..m.num_invocations()).filter(|&i| m.can_terminate(&s, i)) {
                let mut t = s;
                m.terminate(&mut t, i);
                work.push(t);
            }
        }
        all
    }

    #[test]
    fn a_view_holds_what_the_accessors_read() {
        let src = "values 4;\nworkgroups 2;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal x;\nkernel {\n  if (lane_id == 0) {\n    r = subgroupAll(1);\n  }\n  barrier();\n  r = x;\n  x = 1;\n  if (r != 0) {\n    q = subgroupAny(r);\n  }\n}\n";
        let p = litmus::parse(src).unwrap();
        let machines = [
            Machine::new(&p, false).unwrap(),
            Machine::new(&p, true).unwrap(),
            Machine::with_direct(&p, false, Some(Direct::Scf)).unwrap(),
        ];
        for m in &machines {
            let states = reachable(m, 5000);
            assert!(states.len() > 20, "{} states", states.len());
            for s in &states {
                let v = m.view(s);
                for i in 0..m.num_invocations() {
                    assert_eq!(v.pc[i] as usize, m.pc(s, i));
                    assert_eq!(v.terminated >> i & 1 != 0, m.terminated(s, i));
                    assert_eq!(v.waiting >> i & 1 != 0, m.waiting(s, i));
                    assert_eq!(v.finished >> i & 1 != 0, m.finished(s, i));
                    assert_eq!(v.can_terminate() >> i & 1 != 0, m.can_terminate(s, i));
                }
                assert_eq!(v.terminated, m.terminated_mask(s));
                for a in 0..m.num_actors() {
                    assert_eq!(v.steppable >> a & 1 != 0, m.can_step(s, a));
                    if m.can_step(s, a) {
                        let pc = m.stepping_instr(s, a).unwrap().0;
                        assert_eq!(v.next[a] as usize, pc);
                    }
                }
            }
        }
    }
}
