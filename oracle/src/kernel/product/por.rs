//! Which steps of a state go alone (docs/KERNEL.md §8.2, §8.7): local
//! steps first, and the partial-order reduction's search for a stubborn
//! set (memory steps nobody else can disturb or observe any more,
//! arrivals that wait, blind loads, and the closures of the steps a seed
//! needs), each under the cycle proviso's cut. `Kernel::moves_into`
//! asks [`Kernel::first_actors`] once a state.

use super::{Alone, Kernel};
use crate::kernel::independence::{self, Futures, Lazy};
use progress_litmus::kernel::machine::{Packed, View};
use progress_litmus::kernel::program::{Instr, MAX_INVOCATIONS};

impl Kernel {
    /// The instruction at `pc` of invocation `i`'s code.
    #[inline]
    fn instr(&self, i: usize, pc: usize) -> &Instr {
        let m = &self.machine;
        &m.program.codes[m.code_index(i)].instrs[pc]
    }

    /// Actor `a`'s next instruction and its pc, if the step (of an actor
    /// that can step: a runnable one) is off the cut (not from a loop head, not a completing arrival at a
    /// sync point: so no cycle consists of such steps alone, §8.2's and
    /// §8.7's cycle proviso) and it leaves every F set as it is.
    fn may_go_first<S: Packed>(&self, s: &S, v: &View, a: usize) -> Option<(usize, &Instr)> {
        let pc = v.next[a] as usize;
        let ins = self.instr(self.machine.actor_invocations(a).start, pc);
        self.off_cut_keeps_f(s.as_ref(), v, a, pc, ins)
            .then_some((pc, ins))
    }

    /// [`Kernel::may_go_first`] of actor `a` whose next instruction,
    /// at `pc`, is `ins`.
    fn off_cut_keeps_f(&self, s: &[u64], v: &View, a: usize, pc: usize, ins: &Instr) -> bool {
        let m = &self.machine;
        let i = m.actor_invocations(a).start;
        let (heads, syncs) = self.cut[m.code_index(i)];
        !(heads >> pc & 1 != 0 || syncs >> pc & 1 != 0 && !self.arrival_waits(v, i, pc, ins))
            && self.scopes.step_keeps_f(m, s, i, v.terminated)
    }

    /// Whether actor `a`'s next step may go first and alone (§8.2, §8.7):
    /// it is local (registers and pc only), or with the partial-order
    /// reduction a memory step no other invocation can disturb or observe
    /// any more, or an arrival at a barrier or collective that does not
    /// complete it, or a blind load; and it is off the cut and leaves every F set as it is
    /// ([`Kernel::may_go_first`]). Asked of runnable actors only.
    fn reducible<S: Packed>(&self, s: &S, v: &View, a: usize, fut: &mut Lazy) -> bool {
        let m = &self.machine;
        let first = m.actor_invocations(a).start;
        let pc = v.next[a] as usize;
        // A step from a loop head never goes first: asked before the
        // kind, which may read other invocations' futures.
        if self.cut[m.code_index(first)].0 >> pc & 1 != 0 {
            return false;
        }
        let ins = self.instr(first, pc);
        let kind = if ins.is_local() {
            // A lockstep branch may diverge: two successors, not a local step.
            self.plan.local_first && !(m.lockstep() && matches!(ins, Instr::Branch { .. }))
        } else if self.plan.por.is_some() {
            match ins {
                Instr::Barrier | Instr::Collective { .. } => self.arrival_waits(v, first, pc, ins),
                _ => independence::unconflicted_or(m, s.as_ref(), first, ins, fut, || {
                    self.blind(s.as_ref(), v, first, pc, ins)
                }),
            }
        } else {
            false
        };
        kind && self.off_cut_keeps_f(s.as_ref(), v, a, pc, ins)
    }

    /// Whether invocation `i`'s next instruction is a blind load (§8.7,
    /// [`Liveness::blind`]): nobody reads what it loads.
    fn blind(&self, s: &[u64], v: &View, i: usize, pc: usize, ins: &Instr) -> bool {
        self.live
            .as_ref()
            .is_some_and(|l| l.blind(&self.machine, s, &v.pc, i, pc, ins))
    }

    /// Whether invocation `i`'s arrival at the barrier or collective at
    /// `pc` leaves it waiting: some other member of its workgroup
    /// (barrier) or subgroup (collective) is not waiting at `pc`.
    fn arrival_waits(&self, v: &View, i: usize, pc: usize, ins: &Instr) -> bool {
        self.members(i, ins)
            .any(|j| j != i && !(v.waiting >> j & 1 != 0 && v.pc[j] as usize == pc))
    }

    /// The invocations that meet invocation `i` at the barrier (its
    /// workgroup) or collective (its subgroup) `ins`.
    fn members(&self, i: usize, ins: &Instr) -> std::ops::Range<usize> {
        let m = &self.machine;
        let (w, _, _, lane) = m.coords(i);
        if matches!(ins, Instr::Barrier) {
            let n = m.program.workgroup_size as usize;
            w * n..(w + 1) * n
        } else {
            i - lane..i - lane + m.program.subgroup_size as usize
        }
    }

    /// What invocation `i` asks of a stubborn set holding it (§8.7), as
    /// (the invocations it must then hold too, whether it may be in one,
    /// whether its step may be the set's key step): an actor about to
    /// step (off the cut, not changing F) needs every invocation whose future
    /// conflicts with its memory step, or every member of the barrier or
    /// collective it arrives at (its step is a key unless it completes
    /// it); a waiting one needs every member of what it waits at, so that
    /// nobody outside the set can release it; a terminated one nothing.
    /// Any other (a pending Terminate, a workgroup not resident, a step
    /// going back or changing F, a fault) may not be in one.
    fn demand<S: Packed>(
        &self,
        s: &S,
        v: &View,
        i: usize,
        runnable: u32,
        futures: &Futures,
    ) -> (u32, bool, bool) {
        let m = &self.machine;
        let st = s.as_ref();
        let others = |r: std::ops::Range<usize>| r.fold(0u32, |acc, j| acc | 1 << j) & !(1 << i);
        if runnable & (1 << i) == 0 {
            if v.terminated >> i & 1 != 0 {
                return (0, true, false);
            }
            if v.waiting >> i & 1 == 0 {
                return (0, false, false);
            }
            let ins = self.instr(i, v.pc[i] as usize);
            return (others(self.members(i, ins)), true, false);
        }
        let Some((pc, ins)) = self.may_go_first(s, v, i) else {
            return (0, false, false);
        };
        match ins {
            Instr::Barrier | Instr::Collective { .. } => (
                others(self.members(i, ins)),
                true,
                self.arrival_waits(v, i, pc, ins),
            ),
            Instr::Atomic { .. } => match independence::conflicts(m, st, i, ins, futures) {
                Some(_) if self.blind(st, v, i, pc, ins) => (0, true, true),
                Some(c) => (c, true, true),
                None => (0, false, false),
            },
            _ => (0, true, true),
        }
    }

    /// A stubborn set of several actors (§8.7), for a state where no
    /// actor's step may go first alone: the actors whose steps alone are
    /// explored, or none. For each runnable seed, the least set holding it
    /// and closed under [`Kernel::demand`]; a closure is usable if every
    /// member may be in one and some member's step is a key. Of the usable
    /// closures, those with the fewest runnable actors (then, unless lanes
    /// are interchangeable, the lowest id inside the workgroup) are taken,
    /// all of them: a choice that commutes with every permutation symmetry
    /// uses (without symmetry, the first of them alone).
    fn stubborn<S: Packed>(&self, s: &S, v: &View, runnable: u32, fut: &mut Lazy) -> u32 {
        if self.plan.por.is_none() || runnable.count_ones() < 2 {
            return 0;
        }
        let m = &self.machine;
        // A closure holds its seed, which may be in one only off the cut:
        // where every runnable actor's step is from a loop head, none is
        // usable, and no future need be read.
        let mut rest = runnable;
        let mut off_heads = false;
        while rest != 0 && !off_heads {
            let a = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            off_heads = self.cut[m.code_index(a)].0 >> v.next[a] & 1 == 0;
        }
        if !off_heads || !self.some_seed(s, v, runnable, fut) {
            return 0;
        }
        self.closures(s, v, runnable, fut)
    }

    /// Whether some runnable actor may seed a usable stubborn set,
    /// judged from the view, the cut and the futures of the few
    /// invocations that may not be in one (`false` only where
    /// [`Kernel::closures`] finds no usable closure; most states where
    /// no actor's step goes first alone have none: of the discovery
    /// barrier of 5 workgroups' 49,892 such states, all but 151). An
    /// actor seeds a usable closure only if it may be in one and what
    /// it demands first (the other members of its barrier or
    /// collective, the invocations whose futures conflict with its
    /// memory step) holds no invocation that may not be in one; which
    /// may not is read here without the conflicts (a runnable actor
    /// whose step may not go first; an invocation neither runnable,
    /// terminated nor waiting): fewer than [`Kernel::demand`] finds, so
    /// no seed it finds usable is passed over.
    pub(super) fn some_seed<S: Packed>(
        &self,
        s: &S,
        v: &View,
        runnable: u32,
        fut: &mut Lazy,
    ) -> bool {
        let m = &self.machine;
        let (mut bad, mut seeds) = (0u32, 0u32);
        for i in 0..m.num_invocations() {
            let ok = if runnable & (1 << i) != 0 {
                let first = self.may_go_first(s, v, i).is_some();
                seeds |= (first as u32) << i;
                first
            } else {
                (v.terminated | v.waiting) & (1 << i) != 0
            };
            bad |= (!ok as u32) << i;
        }
        let others = |r: std::ops::Range<usize>| r.fold(0u32, |acc, j| acc | 1 << j);
        while seeds != 0 {
            let a = seeds.trailing_zeros() as usize;
            seeds &= seeds - 1;
            let pc = v.next[a] as usize;
            let ins = self.instr(a, pc);
            let first = match ins {
                Instr::Barrier | Instr::Collective { .. } => {
                    others(self.members(a, ins)) & !(1 << a)
                }
                Instr::Atomic { .. } => match fut.conflicts_among(a, ins, bad) {
                    None => continue,
                    Some(_) if self.blind(s.as_ref(), v, a, pc, ins) => 0,
                    Some(c) => c,
                },
                _ => 0,
            };
            if first & bad == 0 {
                return true;
            }
        }
        false
    }

    /// [`Kernel::stubborn`]'s closures, once some actor may seed a
    /// usable one ([`Kernel::some_seed`]).
    pub(super) fn closures<S: Packed>(
        &self,
        s: &S,
        v: &View,
        runnable: u32,
        fut: &mut Lazy,
    ) -> u32 {
        let m = &self.machine;
        let futures = fut.get();
        let (mut need, mut ok, mut key) = ([0u32; 32], 0u32, 0u32);
        for (i, need) in need.iter_mut().enumerate().take(m.num_invocations()) {
            let (n, o, k) = self.demand(s, v, i, runnable, futures);
            *need = n;
            ok |= (o as u32) << i;
            key |= (k as u32) << i;
        }
        let (mut best, mut chosen) = ((u32::MAX, usize::MAX), 0u32);
        // A seed that may not be in one makes no usable closure.
        let mut seeds = runnable & ok;
        while seeds != 0 {
            let seed = seeds.trailing_zeros() as usize;
            seeds &= seeds - 1;
            let mut t = 1u32 << seed;
            loop {
                let mut more = t;
                let mut rest = t;
                while rest != 0 {
                    let i = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    more |= need[i];
                }
                if more == t {
                    break;
                }
                t = more;
            }
            if t & !ok != 0 || t & key == 0 {
                continue;
            }
            let lane = if !self.plan.rank_lanes {
                0
            } else {
                (0..m.num_invocations())
                    .filter(|&i| t & (1 << i) != 0)
                    .map(|i| m.coords(i).1)
                    .min()
                    .unwrap_or(0)
            };
            let rank = ((t & runnable).count_ones(), lane);
            if rank < best {
                (best, chosen) = (rank, t & runnable);
            } else if rank == best && self.plan.alone != Alone::Lowest {
                chosen |= t & runnable;
            }
        }
        chosen
    }

    /// The actors whose steps alone are explored from `s`, if any: of
    /// those with a reducible step, the plan's choice ([`Alone`]: the
    /// lowest alone, those of the lowest index inside their workgroup, or
    /// all, whichever commutes with the permutations symmetry applies);
    /// failing one, a stubborn set.
    pub(super) fn first_actors<S: Packed>(&self, s: &S, v: &View, actors: u32) -> u32 {
        if !self.plan.local_first && self.plan.por.is_none() {
            return 0;
        }
        let m = &self.machine;
        let mut buf = [(0, 0); MAX_INVOCATIONS];
        let mut fut = Lazy::new(self.plan.por.as_deref(), m, s.as_ref(), v, &mut buf);
        let alone = match self.plan.alone {
            Alone::Lowest => (0..m.num_actors())
                .find(|&a| actors & (1 << a) != 0 && self.reducible(s, v, a, &mut fut))
                .map_or(0, |a| 1 << a),
            Alone::Every => (0..m.num_actors())
                .filter(|&a| actors & (1 << a) != 0 && self.reducible(s, v, a, &mut fut))
                .fold(0, |acc, a| acc | 1 << a),
            Alone::LowestLane => self.lowest_reducible(s, v, actors, &mut fut),
        };
        if alone != 0 {
            return alone;
        }
        self.stubborn(s, v, actors, &mut fut)
    }

    /// Interleaved lanes (the partial-order reduction's case): actor
    /// `w * n + k` is invocation k of workgroup w; the actors of the
    /// lowest k with a reducible step.
    fn lowest_reducible<S: Packed>(&self, s: &S, v: &View, actors: u32, fut: &mut Lazy) -> u32 {
        let m = &self.machine;
        let n = m.program.workgroup_size as usize;
        for k in 0..n {
            let chosen = (k..m.num_actors())
                .step_by(n)
                .filter(|&a| actors & (1 << a) != 0 && self.reducible(s, v, a, fut))
                .fold(0u32, |acc, a| acc | 1 << a);
            if chosen != 0 {
                return chosen;
            }
        }
        0
    }
}
