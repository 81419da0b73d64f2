//! The product of a kernel program with a scoped model (docs/KERNEL.md §4):
//! states are the packed program state followed by the F sets; transitions
//! are the steps of the actors (invocations, or lockstep subgroups) that the
//! model lets run, and the Terminate events of finished invocations.
//!
//! Which actors may run: only those of resident workgroups (occupancy
//! bound), and at a scope run by the priority scheduler only the lowest-id
//! child that has a move. Reductions (docs/KERNEL.md §8) are optional:
//! symmetry between interchangeable workgroups and lanes
//! ([`crate::kernel::symmetry`]), and the steps that go alone (local
//! steps first, the partial-order reduction's stubborn sets: `por`).

use super::independence::Accesses;
use super::liveness::Liveness;
use super::proviso;
use super::scopes::{self, Scopes, DEVICE};
use super::symmetry::Symmetry;
use super::KernelError;
use progress_litmus::axb::space::{explore_metered, Exceeded, Lts, Meter};
use progress_litmus::kernel::machine::{Branch, Fault, Machine, Packed, StepInfo, View};
use progress_litmus::kernel::program::{Instr, Program, MAX_INVOCATIONS};
use progress_litmus::kernel::{Sched, ScopedModel};
use std::cell::RefCell;
use std::rc::Rc;

mod plan;
mod por;

use plan::{Alone, Plan};

/// A transition: a step of an actor (with what the step did) or the
/// Terminate of an invocation. Packed in a word: edges are stored by the
/// million.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move(u32);

const TERMINATE: u32 = 1 << 31;
/// The bit of [`Move::is_finite`] (above the choice's byte).
const FINITE_BIT: u32 = 21;

impl Move {
    pub fn step(actor: usize, info: StepInfo) -> Move {
        Move(
            actor as u32
                | (info.pc as u32) << 5
                | (info.branch as u32) << 11
                | (info.choice as u32) << 13
                | (info.finite as u32) << FINITE_BIT,
        )
    }

    /// Whether the step took the jump of a `choose finitely`
    /// ([`StepInfo::finite`]): the verdict rules leave it out of cycles.
    pub fn is_finite(self) -> bool {
        self.0 >> FINITE_BIT & 1 != 0
    }

    /// The same step (pc, branch, choice) by actor `actor`.
    pub fn by(self, actor: usize) -> Move {
        debug_assert!(self.is_step());
        Move(self.0 & !31 | actor as u32)
    }

    pub fn terminate(inv: usize) -> Move {
        Move(TERMINATE | inv as u32)
    }

    pub fn is_step(self) -> bool {
        self.0 & TERMINATE == 0
    }

    /// The actor that stepped, or the invocation that terminated.
    pub fn who(self) -> usize {
        (self.0 & 31) as usize
    }

    pub fn pc(self) -> usize {
        ((self.0 >> 5) & 63) as usize
    }

    /// Whether the step branched, and how.
    pub fn branch(self) -> Branch {
        Branch::from_bits(self.0 >> 11)
    }

    pub fn choice(self) -> u8 {
        ((self.0 >> 13) & 255) as u8
    }

    /// What the verdict rules need of a move, in 5 bits: the mover (an
    /// actor or invocation, below 16) and 16 for a Terminate.
    pub fn kind(self) -> u8 {
        (self.who() & 15) as u8 | if self.is_step() { 0 } else { 16 }
    }
}

/// Which reductions to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reductions {
    /// Identify states that differ by a permutation of interchangeable
    /// workgroups or lanes.
    pub symmetry: bool,
    /// Let a local, F-neutral step off the cycle proviso's cut go first and
    /// alone, and pending Terminates before any step (§8.2, §8.7).
    pub local_first: bool,
    /// Clear registers no later step reads ([`super::liveness`]).
    pub dead_registers: bool,
    /// Partial-order reduction (docs/KERNEL.md §8.7): memory steps no other
    /// invocation can disturb or observe any more and arrivals at a barrier
    /// or collective that do not complete it go first too, and of the
    /// actors with such a step only those of the lowest index inside their
    /// workgroup (all of them where lanes are interchangeable).
    pub partial_order: bool,
    /// Store no state with exactly one explored step (a reduced step of
    /// one actor): an edge goes on through such states to the next state
    /// with several moves or none (docs/KERNEL.md §8.8). The lean tables
    /// only; the full product, witnesses' ground, keeps every state.
    pub chains: Chains,
}

/// When the lean tables skip chain states (§8.8): they store 2 to 5
/// times fewer states but take 2 to 3 times longer, so by default only
/// a product that does not fit its bound without them is built again
/// with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chains {
    Never,
    /// Again with chains, when the bound or budget stops the product.
    WhenLarge,
    Always,
}

impl Reductions {
    pub const NONE: Reductions = Reductions {
        symmetry: false,
        local_first: false,
        dead_registers: false,
        partial_order: false,
        chains: Chains::Never,
    };
    pub const ALL: Reductions = Reductions {
        symmetry: true,
        local_first: true,
        dead_registers: true,
        partial_order: true,
        chains: Chains::WhenLarge,
    };
}

/// A program compiled for building its product with one scoped model.
pub struct Kernel {
    pub machine: Machine,
    pub scopes: Scopes,
    /// Words of a packed product state.
    pub words: usize,
    actor_mask: Vec<u64>,
    inv_mask: Vec<u64>,
    /// Per workgroup, its invocations and its actors, one bit each.
    wg_invs: Vec<u32>,
    wg_actors: Vec<u32>,
    /// Per actor, the invocations it moves, one bit each.
    actor_invs: Vec<u32>,
    /// Which moves are explored from a state: the reductions the model
    /// and machine admit, decided once ([`Plan`]).
    plan: Plan,
    pub symmetry: Option<Symmetry>,
    live: Option<Rc<Liveness>>,
    /// Whether the lean tables skip chain states (§8.8).
    pub chains: bool,
    /// Per code block, its cut (`proviso::cut`, one bit a pc): the loop
    /// heads, whose steps never go first, and the sync points, where a
    /// completing arrival never goes first (the cycle proviso, §8.2, §8.7).
    cut: Vec<(u64, u64)>,
    /// Interleaved lanes without a SIMT-Step model: per code block, the
    /// pcs of its barriers and collectives, one bit each (steps that may
    /// move other invocations); empty otherwise (any step may).
    syncs: Vec<u64>,
}

/// The tables of a kernel that depend on the program and its machine
/// alone, not on the rest of the model: the partial-order reduction's
/// future cells ([`Accesses`], filled as the products ask) and the dead
/// registers ([`Liveness`]). The products of one program under models
/// with the same subgroup scheduler (the six flat products) share them
/// ([`Kernel::new_sharing`]): each would otherwise build them again and
/// compute the same futures (about 5% of deciding the idiom library).
/// One `Shared` serves one program: it does not know which.
#[derive(Default)]
pub struct Shared {
    /// The subgroup scheduler of the machine they were built for (the
    /// machine is the program's under it).
    sub: Option<Sched>,
    accesses: Option<Rc<Accesses>>,
    live: Option<Option<Rc<Liveness>>>,
}

impl Shared {
    /// Forgets the tables if they were built for another machine.
    fn for_machine(&mut self, sub: Sched) {
        if self.sub != Some(sub) {
            *self = Shared {
                sub: Some(sub),
                ..Shared::default()
            };
        }
    }

    fn accesses(&mut self, m: &Machine) -> Rc<Accesses> {
        self.accesses
            .get_or_insert_with(|| Rc::new(Accesses::new(m)))
            .clone()
    }

    fn live(&mut self, m: &Machine) -> Option<Rc<Liveness>> {
        self.live
            .get_or_insert_with(|| Liveness::new(m).map(Rc::new))
            .clone()
    }
}

impl Kernel {
    pub fn new(p: &Program, model: &ScopedModel, red: Reductions) -> Result<Kernel, KernelError> {
        Kernel::new_sharing(p, model, red, &mut Shared::default())
    }

    /// [`Kernel::new`], with the machine's tables of `shared` where it
    /// has them for the same machine (else built and left there);
    /// `shared` must have served no program but `p`.
    pub fn new_sharing(
        p: &Program,
        model: &ScopedModel,
        red: Reductions,
        shared: &mut Shared,
    ) -> Result<Kernel, KernelError> {
        model.validate().map_err(KernelError::Unsupported)?;
        shared.for_machine(model.subgroup);
        let machine = machine_of(p, model.subgroup)?;
        let scopes = Scopes::new(&machine, model);
        let bits = scopes.end as usize;
        if bits > progress_litmus::kernel::machine::MAX_PRODUCT_BITS {
            return Err(KernelError::Unsupported(format!(
                "the program's state with its fair sets takes {bits} bits: at most {} fit",
                progress_litmus::kernel::machine::MAX_PRODUCT_BITS
            )));
        }
        let words = bits.div_ceil(64).max(1);
        let per = scopes.per;
        let inv_mask: Vec<u64> = (0..machine.num_invocations())
            .map(|i| {
                let (w, _, g, _) = machine.coords(i);
                DEVICE | scopes::wg_bit(w) | scopes::sg_bit(g) | scopes::inv_bit(i)
            })
            .collect();
        let actor_mask: Vec<u64> = (0..machine.num_actors())
            .map(|a| {
                if machine.lockstep() {
                    DEVICE | scopes::wg_bit(a / per) | scopes::sg_bit(a)
                } else {
                    inv_mask[a]
                }
            })
            .collect();
        let (wg_invs, wg_actors, actor_invs) = bit_tables(&machine, scopes.w);
        let syncs = sync_pcs(&machine);
        let symmetry = if red.symmetry {
            Symmetry::new(&machine, &scopes)
        } else {
            None
        };
        let live = if red.dead_registers {
            shared.live(&machine)
        } else {
            None
        };
        let plan = Plan::new(&machine, model, red, symmetry.as_ref(), || {
            shared.accesses(&machine)
        });
        Ok(Kernel {
            machine,
            scopes,
            words,
            actor_mask,
            inv_mask,
            wg_invs,
            wg_actors,
            actor_invs,
            plan,
            symmetry,
            live,
            chains: red.chains == Chains::Always,
            cut: p.codes.iter().map(proviso::cut).collect(),
            syncs,
        })
    }

    /// The entities a move is a move of (its actor or invocation, the
    /// subgroup and workgroup around it, the device).
    pub fn move_mask(&self, m: Move) -> u64 {
        if m.is_step() {
            self.actor_mask[m.who()]
        } else {
            self.inv_mask[m.who()]
        }
    }

    /// [`Kernel::move_mask`] of every [`Move::kind`].
    pub fn kind_masks(&self) -> [u64; 32] {
        let mut masks = [0u64; 32];
        for (a, &m) in self.actor_mask.iter().enumerate() {
            masks[a] = m;
        }
        for (i, &m) in self.inv_mask.iter().enumerate() {
            masks[16 + i] = m;
        }
        masks
    }

    /// The invocations a move moves.
    pub fn move_invocations(&self, m: Move) -> std::ops::Range<usize> {
        if m.is_step() {
            self.machine.actor_invocations(m.who())
        } else {
            m.who()..m.who() + 1
        }
    }

    pub fn initial<S: Packed>(&self) -> S {
        let mut s = S::default();
        self.machine.init(s.as_mut());
        self.scopes.init(s.as_mut());
        s
    }

    pub fn all_done(&self, s: &[u64]) -> bool {
        self.machine.all_terminated(s)
    }

    pub fn guaranteed(&self, s: &[u64]) -> u64 {
        self.scopes.guaranteed(s)
    }

    /// Whether some entity of `open` is guaranteed in `s`
    /// ([`Scopes::guarantees_any`]).
    pub fn guarantees_any(&self, s: &[u64], open: u64) -> bool {
        self.scopes.guarantees_any(s, open)
    }

    /// The entities that have a move in `s` in the unreduced product: the
    /// actors allowed to step and the invocations that may terminate (with
    /// their subgroups, workgroups and the device). The weak rule needs
    /// this, not the moves a reduced product explores.
    pub fn enabled(&self, s: &[u64]) -> u64 {
        self.enabled_in(&self.machine.view(s))
    }

    /// [`Kernel::enabled`] of the state `v` views.
    fn enabled_in(&self, v: &View) -> u64 {
        let resident = self.scopes.resident_of(v.terminated);
        let mut en = 0u64;
        let mut invs = v.can_terminate() & of_resident(&self.wg_invs, resident);
        while invs != 0 {
            let i = invs.trailing_zeros() as usize;
            invs &= invs - 1;
            en |= self.inv_mask[i];
        }
        let mut actors = self.runnable(v, resident);
        while actors != 0 {
            let a = actors.trailing_zeros() as usize;
            actors &= actors - 1;
            en |= self.actor_mask[a];
        }
        en
    }

    /// The actors allowed to step: resident, able to step, and lowest among
    /// their siblings with a move at every scope run by the priority
    /// scheduler.
    fn runnable(&self, v: &View, resident: u16) -> u32 {
        let mut actors = v.steppable & of_resident(&self.wg_actors, resident);
        if !self.plan.priority {
            return actors;
        }
        let m = &self.machine;
        let sc = &self.scopes;
        let model = sc.model;
        // A child "has a move" if an actor in it can step or an invocation
        // in it can terminate.
        let mut moving = v.can_terminate() & of_resident(&self.wg_invs, resident);
        let mut rest = actors;
        while rest != 0 {
            moving |= self.actor_invs[rest.trailing_zeros() as usize];
            rest &= rest - 1;
        }
        // The first block of `unit` invocations in `range` with a move.
        let lowest = |range: std::ops::Range<usize>, unit: usize| {
            range
                .step_by(unit)
                .find(|&first| (moving >> first) & ((1u32 << unit) - 1) != 0)
        };
        let (n, sz) = (sc.n, sc.s);
        for a in 0..m.num_actors() {
            if actors & (1 << a) == 0 {
                continue;
            }
            let i = m.actor_invocations(a).start;
            let (w, _, g, _) = m.coords(i);
            let blocked = (model.device == Sched::Priority
                && lowest(0..sc.w * n, n) != Some(w * n))
                || (model.workgroup == Sched::Priority
                    && lowest(w * n..(w + 1) * n, sz) != Some(g * sz))
                || (model.subgroup == Sched::Priority
                    && !m.lockstep()
                    && lowest(g * sz..(g + 1) * sz, 1) != Some(i));
            if blocked {
                actors &= !(1 << a);
            }
        }
        actors
    }

    /// Every transition out of `s`.
    pub fn successors<S: Packed>(&self, s: &S, out: &mut Vec<(Move, S)>) -> Result<(), Fault> {
        self.successors_with(s, out, true)
    }

    /// Every transition out of `s`, with successors made canonical (when
    /// reducing by symmetry; `s` is then canonical too, as every state
    /// the products expand is) or left as they are.
    ///
    /// With the local-first reduction, when some actors' next steps are
    /// local, off the cut and F-neutral, only those steps are taken (all of
    /// them, so that the choice does not depend on ids and commutes with
    /// symmetry): they commute with every other move and nobody can observe
    /// them, and as every cycle of the program passes the cut no cycle consists of them alone.
    /// The partial-order reduction adds memory steps nobody else can still
    /// disturb or observe and arrivals that leave their actor waiting, and
    /// takes only the actors of the lowest index inside their workgroup
    /// (`Kernel::first_actors`, docs/KERNEL.md §8.7).
    pub fn successors_with<S: Packed>(
        &self,
        s: &S,
        out: &mut Vec<(Move, S)>,
        canon: bool,
    ) -> Result<(), Fault> {
        self.moves_into(s, out, canon, true).map(drop)
    }

    /// [`Kernel::successors_with`]; with `copies` false, the moves of an
    /// actor interchangeable with an earlier one in `s` (its *twin*'s
    /// moves by another mover, to the same canonical states: §8.1) are
    /// counted, not put in `out`: the lean product stores the twin's
    /// alone (the verdict rules read them back: docs/KERNEL.md §8.1).
    /// The moves left out.
    fn moves_into<S: Packed>(
        &self,
        s: &S,
        out: &mut Vec<(Move, S)>,
        canon: bool,
        copies: bool,
    ) -> Result<usize, Fault> {
        let m = &self.machine;
        let v = m.view(s.as_ref());
        let resident = self.scopes.resident_of(v.terminated);
        let mut actors = self.runnable(&v, resident);
        let mut invs = v.can_terminate() & of_resident(&self.wg_invs, resident);
        let firsts = if self.plan.terminate_first && invs != 0 {
            // Pending Terminates alone (§8.7): all of them, or without
            // symmetry (or keeping the order of live workgroups) the
            // lowest; no actor's step is judged.
            if self.plan.alone == Alone::Lowest {
                invs &= invs.wrapping_neg();
            }
            actors = 0;
            0
        } else {
            self.first_actors(s, &v, actors)
        };
        let local_only = firsts != 0;
        if local_only {
            actors = firsts;
        }
        let twins = match &self.symmetry {
            Some(sym)
                if canon && !sym.keeps_order() && (actors.count_ones() > 1 || !local_only) =>
            {
                Some(sym.twins(s.as_ref()))
            }
            _ => None,
        };
        let mut left_out = 0;
        if !local_only {
            let twins = twins.as_ref().map(|t| (t, copies));
            left_out += self.terminates(s, v.terminated, invs, twins, out, canon);
        }
        // Where each actor's steps (or its twin's) lie in `out`.
        let mut at = [(0u32, 0u32); MAX_INVOCATIONS];
        while actors != 0 {
            let a = actors.trailing_zeros() as usize;
            actors &= actors - 1;
            let from = out.len();
            match twins.and_then(|t| self.twin_steps(&t, a, &at)) {
                Some((b, e)) if !copies => {
                    left_out += e - b;
                    at[a] = (b as u32, e as u32);
                    continue;
                }
                Some((b, e)) => {
                    for k in b..e {
                        let (mv, t) = out[k];
                        out.push((mv.by(a), t));
                    }
                }
                None => self.step_actor(s, a, &v, out, canon)?,
            }
            at[a] = (from as u32, out.len() as u32);
        }
        Ok(left_out)
    }

    /// Per move kind ([`Move::kind`]), the kind whose moves it repeats
    /// in a state whose twins are `twins` ([`Symmetry::twins`]): a twin
    /// actor's steps (or a twin invocation's Terminate) are its earlier
    /// twin's by another mover, to the same canonical states, which the
    /// lean product stores alone (`Kernel::moves_into`); itself where
    /// it has no twin. Twins are alike, so one is moved where the other
    /// is.
    pub fn twin_kinds(&self, twins: &[u8; MAX_INVOCATIONS]) -> [u8; 32] {
        let m = &self.machine;
        let mut rep: [u8; 32] = std::array::from_fn(|k| k as u8);
        for a in 0..m.num_actors() {
            let f = m.actor_invocations(a).start;
            let t = twins[f] as usize;
            let b = m.actor_of(t);
            if t != f && m.actor_invocations(b).start == t {
                rep[a] = rep[b];
            }
        }
        for i in 0..m.num_invocations() {
            let t = twins[i] as usize;
            if t != i {
                rep[16 + i] = rep[16 + t];
            }
        }
        rep
    }

    /// The moves out of `s` of the actors `steps` and the Terminates of
    /// the invocations `ends`, as they are (not made canonical): those
    /// of [`Kernel::successors_with`] by these movers, where it moves
    /// them, without stepping the others.
    pub fn moves_of<S: Packed>(
        &self,
        s: &S,
        mut steps: u32,
        ends: u32,
        out: &mut Vec<(Move, S)>,
    ) -> Result<(), Fault> {
        let v = self.machine.view(s.as_ref());
        self.terminates(s, v.terminated, ends, None, out, false);
        while steps != 0 {
            let a = steps.trailing_zeros() as usize;
            steps &= steps - 1;
            self.step_actor(s, a, &v, out, false)?;
        }
        Ok(())
    }

    /// The Terminates of invocations `invs` from `s`, where `terminated`
    /// have terminated (the view's: not read from the state again); one
    /// of an invocation interchangeable with an earlier one (`twins`:
    /// [`Symmetry::twins`]) leads to the earlier one's canonical state,
    /// made once, and with `copies` false (the twins' second field)
    /// counted, not put in `out`. The Terminates left out.
    fn terminates<S: Packed>(
        &self,
        s: &S,
        terminated: u32,
        mut invs: u32,
        twins: Option<(&[u8; MAX_INVOCATIONS], bool)>,
        out: &mut Vec<(Move, S)>,
        canon: bool,
    ) -> usize {
        let m = &self.machine;
        let mut at = [u32::MAX; MAX_INVOCATIONS];
        let mut left_out = 0;
        while invs != 0 {
            let i = invs.trailing_zeros() as usize;
            invs &= invs - 1;
            let twin = twins.and_then(|(t, copies)| {
                let k = at[t[i] as usize];
                (k != u32::MAX).then_some((k, copies))
            });
            at[i] = out.len() as u32;
            match twin {
                Some((k, false)) => {
                    at[i] = k;
                    left_out += 1;
                    continue;
                }
                Some((k, true)) => {
                    let t = out[k as usize].1;
                    out.push((Move::terminate(i), t));
                    continue;
                }
                None => {}
            }
            let mut t = *s;
            m.terminate(t.as_mut(), i);
            self.scopes
                .on_terminate_with(m, t.as_mut(), i, terminated | 1 << i);
            if let Some(sym) = self.symmetry.as_ref().filter(|_| canon) {
                sym.canonicalize_after(s.as_ref(), t.as_mut());
            }
            out.push((Move::terminate(i), t));
        }
        left_out
    }

    /// Where the steps of an actor interchangeable with actor `a` in the
    /// state (`twins`: [`Symmetry::twins`]) lie among those already made
    /// (`at`), if any: `a`'s steps lead to the same canonical states
    /// (docs/KERNEL.md §8.1), made once. In the mutex of 2 workgroups of
    /// 8 invocations 70% of the successors are such.
    fn twin_steps(
        &self,
        twins: &[u8; MAX_INVOCATIONS],
        a: usize,
        at: &[(u32, u32); MAX_INVOCATIONS],
    ) -> Option<(usize, usize)> {
        let m = &self.machine;
        let first = m.actor_invocations(a).start;
        let t = twins[first] as usize;
        let b = m.actor_of(t);
        let (from, to) = at[b];
        (t != first && m.actor_invocations(b).start == t && to > from)
            .then_some((from as usize, to as usize))
    }

    /// The steps of actor `a` from `s` (one, or two where a lockstep
    /// branch diverges); `v`: the view of `s` ([`Machine::view`]).
    fn step_actor<S: Packed>(
        &self,
        s: &S,
        a: usize,
        v: &View,
        out: &mut Vec<(Move, S)>,
        canon: bool,
    ) -> Result<(), Fault> {
        let m = &self.machine;
        let tm = v.terminated;
        if !m.lockstep() && m.direct().is_none() && !m.at_choice(a, v) {
            // One step at most, made in its place in `out`: a successor
            // built on the stack and pushed was read back in pieces
            // other than those it was written in (docs/KERNEL.md §8.6).
            out.push((Move::step(a, StepInfo::default()), *s));
            let (mv, t) = out.last_mut().expect("pushed");
            match m.interleaved_step_in_place(t.as_mut(), a, v) {
                Ok(Some(info)) => {
                    self.after_step(s, a, info, tm, t, canon);
                    *mv = Move::step(a, info);
                    return Ok(());
                }
                Ok(None) => {}
                Err(e) => {
                    out.pop();
                    return Err(e);
                }
            }
            out.pop();
            return Ok(());
        }
        m.steps_into(s, a, &mut |info, mut t: S| {
            self.after_step(s, a, info, tm, &mut t, canon);
            out.push((Move::step(a, info), t));
        })
    }

    /// What follows actor `a`'s step (`info`) into `t` from `s`, whose
    /// terminated invocations are `tm`: the F sets, the dead registers
    /// (§8.5) and, with `canon`, the canonical form (`s` is canonical).
    #[inline]
    fn after_step<S: Packed>(
        &self,
        s: &S,
        a: usize,
        info: StepInfo,
        tm: u32,
        t: &mut S,
        canon: bool,
    ) {
        let m = &self.machine;
        let first = m.actor_invocations(a).start;
        self.scopes.on_step(m, t.as_mut(), first, tm);
        if let Some(live) = &self.live {
            // Only the stepping invocation changed, unless it
            // arrived at a barrier or collective (§8.5).
            match self.syncs.get(m.code_index(first)) {
                Some(syncs) if syncs >> info.pc & 1 == 0 => live.clear_one(m, t.as_mut(), first),
                _ => live.clear(m, t.as_mut(), first),
            }
        }
        if let Some(sym) = self.symmetry.as_ref().filter(|_| canon) {
            sym.canonicalize_after_step(s.as_ref(), t.as_mut());
        }
    }

    /// The actor whose step alone is explored from `s`, if exactly one
    /// actor's is (reduced: local steps first or the partial-order
    /// reduction chose it alone): then `s` has exactly one explored
    /// transition, and with chains ([`Reductions::chains`]) it is a *chain state*,
    /// not stored (§8.8). Reduced steps are deterministic (a lockstep
    /// branch, which may diverge, is never reduced); a step with two
    /// successors would end the chain.
    fn sole_step<S: Packed>(&self, s: &S, v: &View) -> Option<usize> {
        let resident = self.scopes.resident_of(v.terminated);
        if self.plan.terminate_first
            && v.can_terminate() & of_resident(&self.wg_invs, resident) != 0
        {
            return None;
        }
        let firsts = self.first_actors(s, v, self.runnable(v, resident));
        (firsts.count_ones() == 1).then(|| firsts.trailing_zeros() as usize)
    }

    /// [`Kernel::successors_with`], each transition followed through the
    /// chain states after it (with chains, [`Reductions::chains`]) to the first
    /// state that has several explored transitions or none; `chains`
    /// gets, per transition, what the chain states it passed had
    /// (their enabled entities and their steppers, when `weak`: only the
    /// weak rule asks). The moves of twins are left out and counted
    /// (`Kernel::moves_into`): the count.
    pub fn successors_chained<S: Packed>(
        &self,
        s: &S,
        out: &mut Vec<(Move, S)>,
        canon: bool,
        chains: &mut Vec<Chain>,
        weak: bool,
    ) -> Result<usize, Fault> {
        let left_out = self.moves_into(s, out, canon, false)?;
        chains.clear();
        let mut one = Vec::new(); // allocated at the first chain state only
        for (_, t) in out.iter_mut() {
            let mut ch = Chain {
                steppers: 0,
                always: u64::MAX,
                len: 0,
            };
            // A chain has at most 64 steps an actor (no step from a loop
            // head, so none repeats a pc); the cap only guards the proof.
            while self.chains && ch.len < MAX_CHAIN {
                let v = self.machine.view(t.as_ref());
                let Some(a) = self.sole_step(t, &v) else {
                    break;
                };
                one.clear();
                self.step_actor(t, a, &v, &mut one, canon)?;
                let &[(mv, next)] = &one[..] else {
                    break;
                };
                if weak {
                    ch.always &= self.enabled_in(&v);
                    ch.steppers |= self.move_mask(mv);
                }
                ch.len += 1;
                *t = next;
            }
            chains.push(ch);
        }
        Ok(left_out)
    }

    fn canon<S: Packed>(&self, t: &mut S) {
        if let Some(sym) = &self.symmetry {
            sym.canonicalize(t.as_mut());
        }
    }

    /// `s` with every workgroup's dead registers cleared, as the
    /// dead-register reduction stores states (§8.5; `s` itself without
    /// that reduction): two states the reduced product cannot tell apart
    /// have the same image ([`super::replay`] compares them so).
    pub fn dead_cleared<S: Packed>(&self, s: &S) -> S {
        let mut t = *s;
        if let Some(live) = &self.live {
            for &invs in &self.wg_invs {
                if invs != 0 {
                    live.clear(&self.machine, t.as_mut(), invs.trailing_zeros() as usize);
                }
            }
        }
        t
    }

    /// The initial state, canonical when reducing by symmetry.
    pub fn start<S: Packed>(&self) -> S {
        let mut s = self.initial::<S>();
        self.canon(&mut s);
        s
    }
}

/// The machine of `p` under subgroup scheduler `sub` (lockstep lanes,
/// or a SIMT-Step model's direct steps); the rest of a model does not
/// change it.
fn machine_of(p: &Program, sub: Sched) -> Result<Machine, KernelError> {
    Machine::new(p, p.mode_for(sub.mode())).map_err(|e| match e.at {
        Some((line, col)) => KernelError::At {
            line,
            col,
            msg: e.msg,
        },
        None => KernelError::Unsupported(e.msg),
    })
}

/// Per workgroup its invocations and its actors, and per actor its
/// invocations, one bit each ([`Kernel`]'s `wg_invs`, `wg_actors`,
/// `actor_invs`).
fn bit_tables(m: &Machine, workgroups: usize) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let (mut wg_invs, mut wg_actors) = (vec![0u32; workgroups], vec![0u32; workgroups]);
    for i in 0..m.num_invocations() {
        wg_invs[m.coords(i).0] |= 1 << i;
    }
    let actor_invs = (0..m.num_actors())
        .map(|a| {
            let r = m.actor_invocations(a);
            wg_actors[m.coords(r.start).0] |= 1 << a;
            r.fold(0, |acc, i| acc | 1 << i)
        })
        .collect();
    (wg_invs, wg_actors, actor_invs)
}

/// [`Kernel`]'s `syncs`: per code block the pcs of its barriers and
/// collectives, with interleaved lanes and no SIMT-Step model (else
/// empty).
fn sync_pcs(m: &Machine) -> Vec<u64> {
    if m.lockstep() || m.direct().is_some() {
        return Vec::new();
    }
    (m.program.codes.iter())
        .map(|c| {
            (c.instrs.iter().enumerate())
                .filter(|(_, i)| matches!(i, Instr::Barrier | Instr::Collective { .. }))
                .fold(0u64, |b, (pc, _)| b | 1 << pc)
        })
        .collect()
}

/// The invocations or actors (`by_wg`, per workgroup) of the `resident`
/// workgroups.
#[inline]
fn of_resident(by_wg: &[u32], resident: u16) -> u32 {
    let mut r = resident as u32;
    let mut all = 0u32;
    while r != 0 {
        all |= by_wg.get(r.trailing_zeros() as usize).copied().unwrap_or(0);
        r &= r - 1;
    }
    all
}

/// The most chain states one edge passes (§8.8): more than any chain can
/// have (each actor's steps in it are at most its code's length); a
/// longer one would end there and store its state.
const MAX_CHAIN: u32 = 4096;

/// What a transition of the lean tables passed through: chain states not
/// stored (§8.8). Their moves lead on to the transition's target, so the
/// strong rule and deadlocks need nothing of them; the weak rule needs
/// the entities stepping on the way and those enabled at every one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chain {
    /// The entities that step between the transition's first move and
    /// its target.
    pub steppers: u64,
    /// The entities with a move at every chain state passed.
    pub always: u64,
    /// The chain states passed.
    pub len: u32,
}

/// A built product: the graph and the guaranteed entities of every state.
pub struct Product<S> {
    pub lts: Lts<S, Move>,
    pub guaranteed: Vec<u64>,
    /// The state bound it was built under.
    pub max_states: usize,
    /// Its byte budget ([`super::budget`]), with what the product took.
    pub meter: Meter,
}

/// Bytes a state of capacity is charged beyond the graph and index: the
/// tables of the verdict rules (guaranteed and enabled entities 16, the
/// component ids and their search 20, per-component masks 17, the
/// attractor and its work list 5), rounded up.
pub const RULE_BYTES_PER_STATE: usize = 64;

/// The error for an exploration stopped by the bound or the budget.
pub fn exceeded(max_states: usize, e: Exceeded) -> KernelError {
    match e {
        Exceeded::States(t) => KernelError::TooLarge(t.bound),
        Exceeded::Memory(err) => KernelError::OutOfMemory {
            bound: max_states,
            err,
        },
    }
}

/// Builds the reachable product, giving up past `max_states` states or
/// the byte budget of that bound.
pub fn build<S: Packed>(k: &Kernel, max_states: usize) -> Result<Product<S>, KernelError> {
    let fault: RefCell<Option<Fault>> = RefCell::new(None);
    let mut out: Vec<(Move, S)> = Vec::new();
    let mut meter = Meter::new(super::budget(max_states));
    let extra = RULE_BYTES_PER_STATE;
    let lts = explore_metered(
        k.start::<S>(),
        max_states,
        &mut meter,
        extra,
        |s: S, emit| {
            if fault.borrow().is_some() {
                return;
            }
            out.clear();
            match k.successors(&s, &mut out) {
                Ok(()) => {
                    for &(mv, t) in &out {
                        emit(mv, t);
                    }
                }
                Err(f) => *fault.borrow_mut() = Some(f),
            }
        },
    )
    .map_err(|e| exceeded(max_states, e))?;
    if let Some(f) = fault.into_inner() {
        return Err(KernelError::Fault(f));
    }
    let guaranteed = lts
        .graph
        .node_weights()
        .map(|s| k.guaranteed(s.as_ref()))
        .collect();
    Ok(Product {
        lts,
        guaranteed,
        max_states,
        meter,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::independence::Lazy;
    use progress_litmus::kernel::litmus;

    /// Explores `src` under `model` with every reduction: at every state,
    /// each explored actor's moves (made in place, or copied from a
    /// twin's) are exactly the machine's steps of it, canonicalized, and
    /// each Terminate is its invocation's. The number of states with
    /// twins.
    fn twins_copied(src: &str, model: &str) -> usize {
        type S = [u64; 4];
        let p = litmus::parse(src).unwrap();
        let k = Kernel::new(&p, &ScopedModel::parse(model).unwrap(), Reductions::ALL).unwrap();
        assert!(k.words <= 4);
        let mut seen = std::collections::HashSet::new();
        let mut todo = vec![k.start::<S>()];
        let mut copied = 0;
        while let Some(s) = todo.pop() {
            if !seen.insert(s) {
                continue;
            }
            let mut out = Vec::new();
            k.successors(&s, &mut out).unwrap();
            let tm = k.machine.view(&s).terminated;
            let mut actors: Vec<usize> = out
                .iter()
                .filter(|(m, _)| m.is_step())
                .map(|(m, _)| m.who())
                .collect();
            actors.dedup();
            for &a in &actors {
                // The machine's steps, one or several, not the in-place
                // one (Machine::interleaved_step_in_place).
                let mut own = Vec::new();
                let mut steps = Vec::new();
                k.machine.steps(&s, a, &mut steps).unwrap();
                for (info, mut t) in steps {
                    // Made canonical whole: the products sort only the
                    // groups a step changed (Symmetry::canonicalize_after).
                    k.after_step(&s, a, info, tm, &mut t, false);
                    k.canon(&mut t);
                    own.push((Move::step(a, info), t));
                }
                let made: Vec<_> = out
                    .iter()
                    .filter(|(m, _)| m.is_step() && m.who() == a)
                    .copied()
                    .collect();
                assert_eq!(made, own, "actor {a} at {s:?}");
            }
            for &(mv, t) in out.iter().filter(|(m, _)| !m.is_step()) {
                let mut own = s;
                k.machine.terminate(&mut own, mv.who());
                k.scopes.on_terminate(&k.machine, &mut own, mv.who());
                k.canon(&mut own);
                assert_eq!(t, own, "Terminate of {} at {s:?}", mv.who());
            }
            if let Some(sym) = &k.symmetry {
                let t = sym.twins(&s);
                copied += usize::from((0..16).any(|i| t[i] as usize != i));
            }
            todo.extend(out.iter().map(|&(_, t)| t));
        }
        copied
    }

    /// Twins' moves are made once (`Symmetry::twins`), interleaved steps
    /// in place, and both are the moves their actors make: interchangeable
    /// lanes, subgroups in lockstep and workgroups, and HSA's symmetry of
    /// lanes alone.
    #[test]
    fn twins_moves_are_their_actors_own() {
        let mutex = "values 2;\nworkgroups 2;\nworkgroup_size 4;\nglobal lock;\nkernel {\nacquire:\n  0: if (exch(lock, 1) == 1) goto acquire;\n  1: lock = 0;\n}\n";
        let barrier = "values 2;\nworkgroups 2;\nworkgroup_size 4;\nsubgroup_size 2;\nglobal x;\nkernel {\n  r = x;\n  x = 1;\n  barrier();\n  s = subgroupAll(r);\n}\n";
        for (src, model) in [
            (mutex, "OBE"),
            (mutex, "WEAK_FAIR"),
            (barrier, "OBE"),
            (barrier, "OBE, subgroup=lockstep"),
        ] {
            assert!(twins_copied(src, model) > 0, "{model}: no twins");
        }
        for src in [mutex, barrier] {
            twins_copied(src, "HSA");
        }
    }

    /// The flat products of a program share its machine's tables; a model
    /// with another machine (lockstep subgroups) gets tables of its own.
    /// Counts the states of `k`'s product with two runnable actors or
    /// more where [`Kernel::some_seed`] finds no seed, finds one but the
    /// closures no stubborn set, and both find one; checks that no
    /// state without a seed has a stubborn set.
    fn seeds_against_closures<S: Packed>(k: &Kernel, counts: &mut [usize; 3]) {
        let p = crate::kernel::lean::build::<S>(k, 1 << 20).unwrap();
        for n in 0..p.graph.num_states() {
            let s = p.graph.state(n);
            let v = k.machine.view(s.as_ref());
            let runnable = k.runnable(&v, k.scopes.resident_of(v.terminated));
            if runnable.count_ones() < 2 {
                continue;
            }
            let mut buf = [(0, 0); MAX_INVOCATIONS];
            let mut fut = Lazy::new(k.plan.por.as_deref(), &k.machine, s.as_ref(), &v, &mut buf);
            let seeded = k.some_seed(&s, &v, runnable, &mut fut);
            let found = k.closures(&s, &v, runnable, &mut fut);
            assert!(seeded || found == 0, "{}", k.machine.describe(s.as_ref()));
            counts[usize::from(seeded) + usize::from(found != 0)] += 1;
        }
    }

    /// A state where no runnable actor may seed a usable stubborn set
    /// ([`Kernel::some_seed`]) has none ([`Kernel::closures`]): at every
    /// state of the products of the idiom library, the discovery barrier
    /// of 5 workgroups and the parallel look-back of 3 workgroups of 2,
    /// under the eleven models; states of the three kinds are met.
    #[test]
    fn a_state_without_a_seed_has_no_stubborn_set() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms");
        let (items, errors) = progress_litmus::kernel::load::load_all(std::slice::from_ref(&dir));
        assert!(errors.is_empty());
        let mut programs: Vec<Program> = items
            .into_iter()
            .filter_map(|item| match item {
                progress_litmus::kernel::load::Item::Kernel(p) => Some(p.program),
                _ => None,
            })
            .collect();
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        let larger = [
            read("discovery-barrier.litmus")
                .replace("workgroups 3;", "workgroups 5;")
                .replace("values 4;", "values 8;"),
            read("decoupled-lookback-parallel.litmus")
                .replace("workgroups 2;", "workgroups 3;")
                .replace("values 4;", "values 8;")
                .replace("flag[4]", "flag[6]"),
        ];
        programs.extend(larger.iter().map(|src| litmus::parse(src).unwrap()));
        let mut counts = [0usize; 3];
        for p in &programs {
            for m in progress_litmus::Model::ALL {
                let k = Kernel::new(p, &ScopedModel::flat(m), Reductions::ALL).unwrap();
                if k.plan.por.is_some() {
                    crate::kernel::with_words!(k.words, seeds_against_closures(&k, &mut counts));
                }
            }
        }
        assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
    }

    #[test]
    fn the_machines_tables_are_shared_only_by_the_same_machine() {
        let p = litmus::parse(
            "values 4;\nworkgroups 2;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal x;\nkernel {\n  r = x;\n  x = r;\n}\n",
        )
        .unwrap();
        let model = |s: &str| ScopedModel::parse(s).unwrap();
        let mut shared = Shared::default();
        let obe = Kernel::new_sharing(&p, &model("OBE"), Reductions::ALL, &mut shared).unwrap();
        let hsa = Kernel::new_sharing(&p, &model("HSA"), Reductions::ALL, &mut shared).unwrap();
        let (a, b) = (
            obe.plan.por.as_ref().unwrap(),
            hsa.plan.por.as_ref().unwrap(),
        );
        assert!(Rc::ptr_eq(a, b));
        assert!(Rc::ptr_eq(
            obe.live.as_ref().unwrap(),
            hsa.live.as_ref().unwrap()
        ));
        let lockstep = Kernel::new_sharing(
            &p,
            &model("OBE, subgroup=lockstep"),
            Reductions::ALL,
            &mut shared,
        )
        .unwrap();
        assert_eq!(shared.sub, Some(Sched::Lockstep));
        assert!(!Rc::ptr_eq(
            lockstep.live.as_ref().unwrap(),
            obe.live.as_ref().unwrap()
        ));
        // Back to the flat machine: built again, not the lockstep one's.
        let again = Kernel::new_sharing(&p, &model("LOBE"), Reductions::ALL, &mut shared).unwrap();
        assert!(!Rc::ptr_eq(again.plan.por.as_ref().unwrap(), a));
        assert!(!Rc::ptr_eq(
            again.live.as_ref().unwrap(),
            lockstep.live.as_ref().unwrap()
        ));
    }
}
