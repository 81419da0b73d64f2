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
//!
//! One machine per execution mode ([`Mode`]), a file each:
//! `interleaved.rs`, `lockstep.rs` and `simt.rs` (the SIMT-Step direct
//! models) step the lanes; `layout.rs` places the fields every mode
//! shares. This file holds what all modes share (the step's record, the
//! view, the semantics of an operand, an address and an atomic) and hands
//! each call to its mode.

use crate::kernel::model::{Direct, Mode};
use crate::kernel::program::{
    Addr, AtomicOp, CollectiveOp, Instr, Operand, Program, MAX_INVOCATIONS, MAX_LOCKSTEP_SUBGROUP,
    MAX_WG_SIZE,
};

mod interleaved;
mod layout;
mod lockstep;
mod simt;
#[cfg(test)]
mod tests;

use interleaved::Ctl;
use layout::Inv;
use lockstep::Stacks;
use simt::Simt;
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
pub(super) fn get(s: &[u64], off: u32, w: u32) -> u64 {
    let i = (off / 64) as usize;
    let b = off % 64;
    let mut v = s[i] >> b;
    if b + w > 64 {
        v |= s[i + 1] << (64 - b);
    }
    v & ((1u64 << w) - 1)
}

#[inline]
pub(super) fn set(s: &mut [u64], off: u32, w: u32, v: u64) {
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

/// How a step branched: the lanes it moved jumped, fell through, or (in
/// lockstep and the SIMT-Step models) split between the two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Branch {
    /// Not a branch.
    #[default]
    None = 0,
    Taken = 1,
    NotTaken = 2,
    /// Some lanes jumped and the others fell through.
    Divergent = 3,
}

impl Branch {
    /// The branch kind stored in the low 2 bits of `bits` (as `as u8`
    /// gives it).
    pub fn from_bits(bits: u32) -> Branch {
        match bits & 3 {
            0 => Branch::None,
            1 => Branch::Taken,
            2 => Branch::NotTaken,
            _ => Branch::Divergent,
        }
    }

    /// Whether some lane jumped (taken or divergent).
    pub fn jumped(self) -> bool {
        matches!(self, Branch::Taken | Branch::Divergent)
    }
}

/// What one step did, for labels and witnesses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StepInfo {
    /// The pc of the instruction executed.
    pub pc: u8,
    /// Whether the step branched, and how.
    pub branch: Branch,
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

/// A program compiled for stepping packed states, in one execution mode.
#[derive(Clone, Debug)]
pub struct Machine {
    pub program: Program,
    /// How the lanes execute; every field below that one mode alone
    /// needs lives in that mode's part (`ctl`, `stacks`, `simt`).
    mode: Mode,
    vb: u32,
    pcb: u32,
    n: usize,
    s: usize,
    lens: Vec<usize>,
    /// First cell of each location (of workgroup 0 for shared ones).
    loc_base: Vec<usize>,
    invs: Vec<Inv>,
    bits: u32,
    /// Whether some instruction is a `choose` ([`Machine::at_choice`]).
    has_choose: bool,
    /// Interleaved: per invocation, where [`Machine::view`] reads its pc,
    /// registers and flags at once (empty in the other modes).
    ctl: Vec<Ctl>,
    /// Lockstep: the subgroups' reconvergence stacks.
    stacks: Stacks,
    /// The SIMT-Step direct models: the scopes and counted loops.
    simt: Simt,
}

/// Whether some instruction of `p` is a `choose` (docs/KERNEL.md §2.11);
/// refused under the SIMT-Step models whose branches are collective (CM,
/// SM, SCF): under SSO a lane branches on its own, and so chooses alone.
fn choices(p: &Program, direct: Option<Direct>) -> Result<bool, BuildError> {
    let any = (p.codes.iter()).any(|c| c.instrs.iter().any(|i| matches!(i, Instr::Choose { .. })));
    if any && direct.is_some_and(|d| d != Direct::Sso) {
        return Err("a `choose` (a weak compare-exchange's spurious failure): the SIMT-Step models whose branches are collective (cm, sm, scf) take deterministic programs only".to_string().into());
    }
    Ok(any)
}
/// Why `program` is too large for the explicit product, which keeps
/// every invocation's pc and registers in its packed states: at most
/// [`MAX_WG_SIZE`] invocations per workgroup and [`MAX_INVOCATIONS`] in
/// all (the counted product of the oracle decides larger workgroups).
pub fn explicit_fits(program: &Program) -> Result<(), String> {
    let (w, n) = (program.workgroups as usize, program.workgroup_size as usize);
    if n > MAX_WG_SIZE || w * n > MAX_INVOCATIONS {
        return Err(format!(
            "{w} workgroup{} of {n} invocation{}: the explicit product holds at most {MAX_WG_SIZE} invocations per workgroup and {MAX_INVOCATIONS} in all",
            if w == 1 { "" } else { "s" },
            if n == 1 { "" } else { "s" },
        ));
    }
    Ok(())
}

impl Machine {
    /// Compiles a valid program (see [`Program::validate`]) for stepping
    /// in `mode` (lockstep of one-lane subgroups is interleaving). Fails if
    /// the state does not fit the packed representation, or under a
    /// SIMT-Step model if the program's control flow is not structured as
    /// the model needs.
    pub fn new(program: &Program, mode: Mode) -> Result<Machine, BuildError> {
        explicit_fits(program)?;
        let p = program.clone();
        let n = p.workgroup_size as usize;
        let s = p.subgroup_size as usize;
        let mode = match mode {
            Mode::Lockstep if s == 1 => Mode::Interleaved,
            m => m,
        };
        if mode == Mode::Lockstep && s > MAX_LOCKSTEP_SUBGROUP {
            return Err(format!(
                "subgroups of {s} invocations: lockstep supports at most {MAX_LOCKSTEP_SUBGROUP} (each step tries every order of the lanes' atomics)"
            )
            .into());
        }
        let has_choose = choices(&p, mode.direct())?;
        let vb = p.value_bits();
        let simt = Simt::new(&p, mode.direct(), vb)?;
        let lens: Vec<usize> = p.codes.iter().map(|c| c.instrs.len()).collect();
        let pcb = bits_for(lens.iter().copied().max().unwrap_or(0));
        let stacks = Stacks::new(&p, pcb);
        let mut loc_base = Vec::new();
        let mut cell = 0usize;
        for l in &p.locations {
            loc_base.push(cell);
            cell += l.len() * if l.shared { p.workgroups as usize } else { 1 };
        }
        let mut m = Machine {
            program: p,
            mode,
            vb,
            pcb,
            n,
            s,
            lens,
            loc_base,
            invs: Vec::new(),
            bits: 0,
            has_choose,
            ctl: Vec::new(),
            stacks,
            simt,
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

    /// Bits of the program state; the oracle's fields come after.
    #[inline]
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The execution mode the lanes step in.
    #[inline]
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether subgroups step in lockstep (the actors are subgroups).
    #[inline]
    pub fn lockstep(&self) -> bool {
        self.mode == Mode::Lockstep
    }

    /// The SIMT-Step direct model the lanes execute under, if any (§2.9).
    #[inline]
    pub fn direct(&self) -> Option<Direct> {
        self.mode.direct()
    }

    #[inline]
    pub fn num_invocations(&self) -> usize {
        self.invs.len()
    }

    /// Invocations (interleaving) or subgroups (lockstep).
    #[inline]
    pub fn num_actors(&self) -> usize {
        if self.lockstep() {
            self.stacks.sgs.len()
        } else {
            self.invs.len()
        }
    }

    /// The invocations an actor moves.
    #[inline]
    pub fn actor_invocations(&self, a: usize) -> std::ops::Range<usize> {
        if self.lockstep() {
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
        debug_assert!(matches!(self.direct(), None | Some(Direct::Sso)) && self.can_step(s, a));
        if self.lockstep() {
            self.active_invocations(s, a)
        } else {
            vec![a]
        }
    }

    /// The actor that moves invocation `i`.
    #[inline]
    pub fn actor_of(&self, i: usize) -> usize {
        if self.lockstep() {
            i / self.s
        } else {
            i
        }
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
        match self.mode {
            Mode::Interleaved => {}
            Mode::Lockstep => self.lockstep_init(s),
            Mode::Simt(_) => self.simt_init(s),
        }
    }

    /// Whether invocation `i` waits at a barrier or collective (in lockstep:
    /// whether its subgroup does and it is among the waiting lanes).
    #[inline]
    pub fn waiting(&self, s: &[u64], i: usize) -> bool {
        match self.mode {
            Mode::Interleaved => get(s, self.invs[i].wait_off, 1) != 0,
            Mode::Lockstep => self.lockstep_waiting(s, i),
            Mode::Simt(_) => get(s, self.invs[i].wait_off, 1) != 0 || self.merge_waiting(s, i),
        }
    }

    /// The pc of invocation `i` (its code length when it has finished).
    #[inline]
    pub fn pc(&self, s: &[u64], i: usize) -> usize {
        if self.lockstep() {
            self.lockstep_pc(s, i)
        } else {
            get(s, self.invs[i].pc_off, self.pcb) as usize
        }
    }

    /// The control fields of every invocation of `s`, decoded once.
    #[inline]
    pub fn view(&self, s: &[u64]) -> View {
        match self.mode {
            Mode::Interleaved => self.interleaved_view(s),
            Mode::Lockstep => self.lockstep_view(s),
            Mode::Simt(_) => self.simt_view(s),
        }
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
        if self.lockstep() {
            return self.lockstep_can_step(s, a);
        }
        let v = &self.invs[a];
        get(s, v.term_off, 1) == 0
            && get(s, v.wait_off, 1) == 0
            && (get(s, v.pc_off, self.pcb) as usize) < self.lens[v.code]
            && (self.direct().is_none() || self.simt_enabled(s, a))
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
        let pc = if self.lockstep() {
            self.lockstep_next_pc(s, a)?
        } else {
            self.pc(s, i)
        };
        Some((pc, self.program.codes[self.invs[i].code].instrs[pc]))
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
        match self.mode {
            Mode::Interleaved => self.interleaved_steps(s, a, emit),
            Mode::Lockstep => {
                let mut out = Vec::new();
                self.lockstep_steps(s, a, &mut out)?;
                for (info, t) in out {
                    emit(info, t);
                }
                Ok(())
            }
            Mode::Simt(_) => self.simt_steps(s, a, emit),
        }
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

/// The result of a subgroup operation over the members' operands.
pub(super) fn collective_result(op: CollectiveOp, vals: &[u16]) -> u16 {
    match op {
        CollectiveOp::All => vals.iter().all(|&v| v != 0) as u16,
        CollectiveOp::Any => vals.iter().any(|&v| v != 0) as u16,
        CollectiveOp::BroadcastFirst => vals.first().copied().unwrap_or(0),
    }
}

/// The next permutation in lexicographic order; false after the last.
pub(super) fn next_permutation(v: &mut [usize]) -> bool {
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
