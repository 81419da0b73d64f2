//! Which moves the product explores from a state, decided once per
//! program and model ([`Plan::new`]): the reductions asked for
//! ([`Reductions`]) narrowed to those the model and the machine admit
//! (docs/KERNEL.md §8.2, §8.7). Each switch is derived here, in one
//! place, from the ones it depends on, so that the product reads
//! decisions (`plan.local_first`, `plan.alone`) rather than recombining
//! flags.

use super::Reductions;
use crate::kernel::independence::Accesses;
use crate::kernel::symmetry::Symmetry;
use progress_litmus::kernel::machine::Machine;
use progress_litmus::kernel::{Sched, ScopedModel};
use std::rc::Rc;

/// Of the actors whose step may go first and alone (§8.2, §8.7), which
/// are taken. The choice must commute with every permutation the
/// symmetry reduction applies, or the reduced product would depend on
/// which member of an orbit it stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Alone {
    /// The lowest actor alone (a stubborn set of one): no symmetry, or
    /// only renamings that keep the order of live workgroups, with which
    /// that choice commutes. Pending Terminates: the lowest alone too.
    Lowest,
    /// The actors of the lowest index inside their workgroup, in every
    /// workgroup (workgroups are permuted, lanes are not): a choice by a
    /// workgroup-relative index commutes with renaming workgroups.
    LowestLane,
    /// Every one of them: lanes or subgroups inside a workgroup are
    /// permuted (so no index inside a workgroup is canonical), or no
    /// partial-order reduction runs and only local steps go first.
    Every,
}

/// The product's exploring decisions (see the module doc).
pub(super) struct Plan {
    /// Some scope runs the priority scheduler: only the lowest child with
    /// a move at that scope may step ([`super::Kernel::runnable`]).
    pub priority: bool,
    /// Local, F-neutral steps off the cut go first (§8.2): asked for, no
    /// priority scope (there a step's enabledness depends on its
    /// siblings) and no SIMT-Step model (a step may move other lanes).
    pub local_first: bool,
    /// Pending Terminates go first and alone, before any actor's step is
    /// judged (§8.7): local steps go first, lanes interleave, and no
    /// occupancy bound admits a workgroup when another terminates (a
    /// Terminate then changes nobody else's moves).
    pub terminate_first: bool,
    /// The partial-order reduction's tables (§8.7), where it runs: asked
    /// for, no priority scope, no SIMT-Step model, interleaved lanes.
    pub por: Option<Rc<Accesses>>,
    /// Which of the actors that may go first are taken.
    pub alone: Alone,
    /// Ranking stubborn sets, whether the lowest lane index inside the
    /// workgroup counts: not where lanes or subgroups are permuted.
    pub rank_lanes: bool,
}

impl Plan {
    /// The plan for `machine` under `model` with the reductions `red`,
    /// the symmetry already chosen, and `accesses` building the
    /// partial-order reduction's tables if it runs.
    pub fn new(
        machine: &Machine,
        model: &ScopedModel,
        red: Reductions,
        symmetry: Option<&Symmetry>,
        accesses: impl FnOnce() -> Rc<Accesses>,
    ) -> Plan {
        let priority = [model.device, model.workgroup, model.subgroup].contains(&Sched::Priority);
        let direct = machine.direct().is_some();
        let local_first = red.local_first && !priority && !direct;
        let por = (red.partial_order && !priority && !direct && !machine.lockstep()).then(accesses);
        let workgroups = machine.program.workgroups as usize;
        let terminate_first = local_first
            && !machine.lockstep()
            && model.occupancy.is_none_or(|k| k as usize >= workgroups);
        let permutes_lanes = symmetry.is_some_and(|s| s.permutes_lanes());
        let alone = match symmetry {
            None => Alone::Lowest,
            Some(s) if s.keeps_order() => Alone::Lowest,
            Some(_) if por.is_none() || permutes_lanes => Alone::Every,
            Some(_) => Alone::LowestLane,
        };
        Plan {
            priority,
            local_first,
            terminate_first,
            por,
            alone,
            rank_lanes: !permutes_lanes,
        }
    }
}
