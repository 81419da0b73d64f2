//! Plain accesses no barrier orders (docs/KERNEL.md §10.2, *Races*). The
//! translation decides the shader's plain (non-atomic) loads and stores
//! as sequentially consistent atomic accesses. In the Vulkan memory
//! model (WGSL's, GLSL's and SPIR-V's) two accesses of one location by
//! two invocations, one of them a write and one plain, race unless
//! something orders them: a barrier of their workgroup completed between
//! them, or (in GLSL and SPIR-V) atomics with release and acquire
//! semantics, which the translation does not read. So the value check,
//! which visits every step some schedule takes, names every plain access
//! of the shader that meets a conflicting access of another invocation
//! with no barrier between, on the launch line: the verdict rests on
//! sequential consistency there.
//!
//! Each state carries, per tracked cell (the cells of locations the
//! shader accesses plainly and writes) and invocation, which kinds of
//! access (plain or atomic read, plain or atomic write) it made since its
//! workgroup's last completed barrier, and per workgroup which it ever
//! made. An access conflicts with an earlier one of another invocation
//! of its workgroup since the last completion, or of another workgroup
//! ever.

use super::Written;
use crate::kernel::machine::Machine;
use crate::kernel::program::{AtomicOp, Instr, Program};

/// The kinds of access, one bit each.
const PLAIN_READ: usize = 0;
const ATOMIC_READ: usize = 1;
const PLAIN_WRITE: usize = 2;
const ATOMIC_WRITE: usize = 3;
const KINDS: usize = 4;

/// The most bits the check carries for races; past them (many cells in
/// many invocations) the translation's warning stands instead.
pub(super) const MAX_BITS: usize = 768;

/// The tracked cells, and where their bits start in the check's extra
/// bits.
pub(super) struct Tracked {
    /// Per memory cell, its index among the tracked ones.
    index: Vec<Option<usize>>,
    cells: usize,
    invocations: usize,
    workgroups: usize,
    size: usize,
    base: usize,
}

/// One access of an invocation, as the race check reads it.
#[derive(Clone, Copy)]
pub(super) struct Access {
    pub cell: usize,
    pub read: bool,
    pub write: bool,
    pub plain: bool,
}

/// A race: the access found and the earlier one it conflicts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Race {
    /// The later access wrote (else it read).
    pub write: bool,
    pub plain: bool,
    /// The earlier one, of another invocation: wrote, plain.
    pub other_write: bool,
    pub other_plain: bool,
    /// The earlier one is another workgroup's.
    pub other_workgroup: bool,
}

impl Access {
    /// Instruction `instr`'s access of `cell`, plain or not: a load
    /// reads (its value kept or not), a store writes, the others read
    /// and write.
    pub(super) fn of(instr: Instr, cell: usize, plain: bool) -> Access {
        let (read, write) = match instr {
            Instr::Atomic {
                op: AtomicOp::Load, ..
            } => (true, false),
            Instr::Atomic {
                op: AtomicOp::Store(_),
                ..
            } => (false, true),
            _ => (true, true),
        };
        Access {
            cell,
            read,
            write,
            plain,
        }
    }
}

/// Whether `p` has cells to track: a location `plain` instructions
/// access and some instruction writes.
pub(super) fn tracks(p: &Program, plain: &[bool]) -> bool {
    !tracked_locations(p, plain).is_empty()
}

impl Tracked {
    /// The cells of `m`'s locations that `plain` instructions access and
    /// some instruction writes; none where `plain` is empty.
    pub(super) fn of(m: &Machine, plain: &[bool], base: usize) -> Tracked {
        let p = &m.program;
        let locs = tracked_locations(p, plain);
        let mut index = vec![None; p.num_cells()];
        let mut cells = 0;
        for l in locs {
            let loc = &p.locations[l];
            let copies = if loc.shared { p.workgroups as usize } else { 1 };
            for copy in 0..copies {
                for k in 0..loc.len() {
                    index[m.cell_of(l, copy, k)] = Some(cells);
                    cells += 1;
                }
            }
        }
        Tracked {
            index,
            cells,
            invocations: m.num_invocations(),
            workgroups: p.workgroups as usize,
            size: p.workgroup_size as usize,
            base,
        }
    }

    /// The bits the tracked cells take.
    pub(super) fn bits(&self) -> usize {
        self.cells * (self.invocations + self.workgroups) * KINDS
    }

    /// Tracks nothing (no cell, or too many bits to carry).
    pub(super) fn none(base: usize) -> Tracked {
        Tracked {
            index: Vec::new(),
            cells: 0,
            invocations: 0,
            workgroups: 0,
            size: 1,
            base,
        }
    }

    /// Whether any cell is tracked.
    pub(super) fn any(&self) -> bool {
        self.cells > 0
    }

    /// The bit of `kind` for tracked cell `t`: of invocation `i` since
    /// its workgroup's last completed barrier, or of workgroup `w` ever.
    fn bit(&self, t: usize, who: Who, kind: usize) -> usize {
        let row = match who {
            Who::Invocation(i) => i,
            Who::Workgroup(w) => self.invocations + w,
        };
        self.base + (t * (self.invocations + self.workgroups) + row) * KINDS + kind
    }

    /// Invocation `i`'s access `a`: the race it makes with an earlier
    /// access of another invocation, if any; its bits set.
    pub(super) fn access<W: Written>(
        &self,
        w: &mut W,
        (i, wg): (usize, usize),
        a: Access,
    ) -> Option<Race> {
        let t = self.index.get(a.cell).copied().flatten()?;
        let conflicts = |w: &W, who: Who| {
            let has = |k: usize| w.has(self.bit(t, who, k));
            let mut found = None;
            for (k, other_write, other_plain) in [
                (PLAIN_WRITE, true, true),
                (ATOMIC_WRITE, true, false),
                (PLAIN_READ, false, true),
                (ATOMIC_READ, false, false),
            ] {
                let conflict = (a.write || other_write) && (a.plain || other_plain);
                if conflict && has(k) {
                    found = Some((other_write, other_plain));
                    break;
                }
            }
            found
        };
        let mut race = None;
        for j in wg * self.size..(wg + 1) * self.size {
            if j != i {
                race = race.or(conflicts(w, Who::Invocation(j)).map(|o| (o, false)));
            }
        }
        for v in (0..self.workgroups).filter(|&v| v != wg) {
            race = race.or(conflicts(w, Who::Workgroup(v)).map(|o| (o, true)));
        }
        for (on, plain_k, atomic_k) in [
            (a.read, PLAIN_READ, ATOMIC_READ),
            (a.write, PLAIN_WRITE, ATOMIC_WRITE),
        ] {
            if on {
                let k = if a.plain { plain_k } else { atomic_k };
                w.set(self.bit(t, Who::Invocation(i), k));
                w.set(self.bit(t, Who::Workgroup(wg), k));
            }
        }
        race.map(|((other_write, other_plain), other_workgroup)| Race {
            write: a.write,
            plain: a.plain,
            other_write,
            other_plain,
            other_workgroup,
        })
    }

    /// A barrier of workgroup `wg` completed: what its invocations did
    /// before is ordered before what any of them does after.
    pub(super) fn completed<W: Written>(&self, w: &mut W, wg: usize) {
        for t in 0..self.cells {
            for i in wg * self.size..(wg + 1) * self.size {
                for k in 0..KINDS {
                    w.set_to(self.bit(t, Who::Invocation(i), k), false);
                }
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Who {
    Invocation(usize),
    Workgroup(usize),
}

/// The locations that a plain instruction of `p` accesses and some
/// instruction writes.
fn tracked_locations(p: &Program, plain: &[bool]) -> Vec<usize> {
    let mut accessed = vec![false; p.locations.len()];
    let mut written = vec![false; p.locations.len()];
    for code in &p.codes {
        for (pc, i) in code.instrs.iter().enumerate() {
            if let Instr::Atomic { op, addr, .. } = *i {
                let l = addr.loc as usize;
                accessed[l] |= plain.get(pc).copied().unwrap_or(false);
                written[l] |= !matches!(op, AtomicOp::Load);
            }
        }
    }
    (0..p.locations.len())
        .filter(|&l| accessed[l] && written[l])
        .collect()
}

impl Race {
    /// The race in words, for the launch line, in the source language
    /// `lang`: WGSL's atomics are all relaxed and its only fences are its
    /// barriers; GLSL's and SPIR-V's memory barriers and atomics with
    /// release and acquire semantics order too, and are not read.
    pub(super) fn describe(&self, lang: &str) -> String {
        let kind = |write: bool, plain: bool| {
            format!(
                "{} {}",
                if plain { "plain" } else { "atomic" },
                if write { "write" } else { "read" }
            )
        };
        let whose = if self.other_workgroup {
            "another workgroup's"
        } else {
            "another invocation's"
        };
        let unless = match lang {
            "WGSL" => "",
            _ => ": a race unless memory barriers or release-acquire atomics order them, which are not read",
        };
        format!(
            "{} and {whose} {}, which no barrier orders{unless}",
            kind(self.write, self.plain),
            kind(self.other_write, self.other_plain)
        )
    }
}
