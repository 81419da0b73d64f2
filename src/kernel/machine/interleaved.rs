//! Interleaved lanes (docs/KERNEL.md §2): every invocation is an actor,
//! with at most one step (two at a `choose`); a barrier or collective
//! waits until every member has arrived. The checker's hot path: its view
//! reads each invocation's control fields with one shift
//! ([`Machine::view`]), and its step is made in place.

use super::{collective_result, get, set, Branch, Fault, Machine, Packed, StepInfo, View};
use crate::kernel::model::Mode;
use crate::kernel::program::{CollectiveOp, Instr, Operand, MAX_INVOCATIONS};

/// An invocation's control fields in one read: the bits from its pc to
/// its waiting flag (interleaved: pc, registers, terminated, waiting).
#[derive(Clone, Copy, Debug)]
pub(super) struct Ctl {
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

impl Machine {
    /// The table [`Machine::view`] reads interleaved invocations with: empty
    /// in the other modes.
    pub(super) fn control_table(&self) -> Vec<Ctl> {
        if self.mode != Mode::Interleaved {
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

    /// The control fields of every invocation of `s`, decoded once.
    #[inline]
    pub(super) fn interleaved_view(&self, s: &[u64]) -> View {
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
        if self.mode != Mode::Interleaved || v.steppable >> a & 1 == 0 {
            return Ok(None);
        }
        debug_assert!(self.can_step(t, a) && self.pc(t, a) == v.pc[a] as usize);
        self.interleaved_step(t, a, v.pc[a] as usize).map(Some)
    }

    /// Invocation `a`'s step (it can step), and at a `choose` also its
    /// jump, each handed to `emit`.
    pub(super) fn interleaved_steps<S: Packed>(
        &self,
        s: &S,
        a: usize,
        emit: &mut impl FnMut(StepInfo, S),
    ) -> Result<(), Fault> {
        let mut t = *s;
        let pc = self.pc(s.as_ref(), a);
        let info = self.interleaved_step(t.as_mut(), a, pc)?;
        emit(info, t);
        let code = &self.program.codes[self.invs[a].code];
        if let Instr::Choose { target, finite } = code.instrs[pc] {
            let mut u = *s;
            self.set_pc(u.as_mut(), a, target.pc(code.instrs.len()));
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
    pub(super) fn interleaved_step(
        &self,
        t: &mut [u64],
        i: usize,
        pc: usize,
    ) -> Result<StepInfo, Fault> {
        let v = &self.invs[i];
        let len = self.lens[v.code];
        let instr = self.program.codes[v.code].instrs[pc];
        let mut info = StepInfo {
            pc: pc as u8,
            branch: Branch::None,
            choice: 0,
            finite: false,
        };
        let mut jump = |t: &mut [u64], taken: bool, target: crate::axb::test::Target| {
            info.branch = if taken {
                Branch::Taken
            } else {
                Branch::NotTaken
            };
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
                info.branch = Branch::NotTaken;
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
}
