//! Barriers in non-uniform control flow (docs/KERNEL.md §10.3,
//! *Barriers*). Every source language asks that all invocations of a
//! workgroup execute the same dynamic instance of a workgroup barrier
//! (WGSL refuses the shader, GLSL and SPIR-V leave anything else
//! undefined); the kernel language's barrier (§2.4) instead completes
//! when every invocation waits at the same instruction, or never. So the
//! value check, which visits every step some schedule takes, also finds,
//! between independently scheduled invocations, an invocation waiting at
//! a barrier that another invocation of its workgroup has passed by (it
//! finished, or waits at another barrier): named as undefined behaviour
//! (GLSL, SPIR-V) or refused (WGSL); and two invocations completing a
//! barrier in different iterations of a loop around it: refused.
//!
//! Only barriers a jump crosses ([`cfg::top_level`]) are looked at: one
//! no jump crosses is executed exactly once by every invocation that
//! starts and ends its block.

use super::{Ctx, Refused, ShaderError, Written};
use crate::kernel::cfg;
use crate::kernel::machine::{Machine, StepInfo};
use crate::kernel::program::{Instr, Program};

/// Whether some barrier of `p` is one a jump crosses, in a workgroup of
/// two invocations or more.
pub(super) fn crossed(p: &Program) -> bool {
    p.workgroup_size > 1
        && p.codes.iter().any(|c| {
            (c.instrs.iter().enumerate())
                .any(|(pc, i)| *i == Instr::Barrier && !cfg::top_level(&c.instrs, pc))
        })
}

/// Bits per invocation and loop: a *fresh* bit (the invocation entered
/// the loop since its workgroup's last barrier completed) and a count of
/// the loop's back edges it took since then (or since it entered).
const FIELD: usize = 5;
const FRESH: u64 = 1 << (FIELD - 1);
/// The most back edges counted between two barriers of a workgroup.
const MAX_COUNT: u64 = FRESH - 1;

/// The loops whose iterations the check counts: per code block, each
/// loop (its head pc and its last pc) around a barrier a jump crosses;
/// their fields start at bit `base` of the check's extra bits.
pub(super) struct Loops {
    per_code: Vec<CodeLoops>,
    width: usize,
    base: usize,
}

/// The loops of one code block: every one, as (head pc, last back
/// edge pc), the loop each back edge belongs to, by pc, and which loops
/// the check counts (those around a barrier a jump crosses), in the
/// order of their fields.
#[derive(Default)]
struct CodeLoops {
    all: Vec<(usize, usize)>,
    edge: Vec<Option<usize>>,
    counted: Vec<usize>,
}

impl CodeLoops {
    /// The loop whose back edge a step from `p0` to `p1` takes: the
    /// instruction at `p0` is one, and the step jumped to its head
    /// (`jumped`: the invocation took the jump).
    fn iterated(&self, p0: usize, p1: usize, jumped: bool) -> Option<usize> {
        let x = (*self.edge.get(p0)?)?;
        (p1 == self.all[x].0 && (p1 < p0 || jumped)).then_some(x)
    }
}

/// Two invocations at one barrier in different iterations of a loop
/// around it, or an invocation that went around such a loop too often
/// to tell.
pub(super) enum Instance {
    /// `edge`: the loop's (last) back edge, whose line names the loop.
    Split {
        pc: usize,
        edge: usize,
        a: usize,
        b: usize,
    },
    Overflow {
        edge: usize,
        i: usize,
    },
}

impl Loops {
    /// The loops of `p` to count (none unless `counted`); fields from
    /// bit `base`.
    ///
    /// A loop is its back edges, the jumps `back_edges` gives its number
    /// (a shader's; else each jump to the same or an earlier pc is a loop
    /// of its own), and their target, its head.
    pub(super) fn of(p: &Program, counted: bool, back_edges: &[Option<u16>], base: usize) -> Loops {
        let per_code: Vec<CodeLoops> = (p.codes.iter())
            .map(|c| {
                if counted {
                    loops_around_barriers(&c.instrs, back_edges)
                } else {
                    CodeLoops::default()
                }
            })
            .collect();
        let width = per_code.iter().map(|c| c.counted.len()).max().unwrap_or(0);
        Loops {
            per_code,
            width,
            base,
        }
    }

    /// The bits the fields of `invocations` invocations take.
    pub(super) fn bits(&self, invocations: usize) -> usize {
        invocations * self.width * FIELD
    }

    fn field(&self, i: usize, k: usize) -> usize {
        self.base + (i * self.width + k) * FIELD
    }

    /// The fields after actor `a`'s step `info` from `s` to `n`, which
    /// may complete a barrier (`completed`): that clears its workgroup's;
    /// an invocation entering a loop is fresh with no back edge; one
    /// taking a back edge counts it.
    pub(super) fn after<W: Written>(
        &self,
        m: &Machine,
        (s, n): (&[u64], &[u64]),
        (a, info): (usize, &StepInfo),
        completed: Option<Completed>,
        mut w: W,
    ) -> Result<W, Instance> {
        if self.width == 0 {
            return Ok(w);
        }
        if let Some(done) = completed {
            self.complete(m, done, &mut w)?;
        }
        let stepped = m.stepping_invocations(s, a);
        for i in 0..m.num_invocations() {
            let (p0, p1) = (m.pc(s, i), m.pc(n, i));
            let jumped = info.branch.jumped() && stepped.contains(&i);
            let loops = &self.per_code[m.code_index(i)];
            let iterated = loops.iterated(p0, p1, jumped);
            for (k, &x) in loops.counted.iter().enumerate() {
                let (head, last) = loops.all[x];
                let inside = |p: usize| head <= p && p <= last;
                let f = self.field(i, k);
                if inside(p1) && !inside(p0) {
                    w.put(f, FIELD, FRESH);
                } else if iterated == Some(x) {
                    let v = w.get(f, FIELD);
                    if v & MAX_COUNT == MAX_COUNT {
                        return Err(Instance::Overflow { edge: last, i });
                    }
                    w.put(f, FIELD, v + 1);
                }
            }
        }
        Ok(w)
    }
}

impl Loops {
    /// The barrier `done` completed: its members were at one dynamic
    /// instance of it only with equal fields for its loops; then their
    /// fields are cleared.
    fn complete<W: Written>(
        &self,
        m: &Machine,
        done: Completed,
        w: &mut W,
    ) -> Result<(), Instance> {
        let size = m.program.workgroup_size as usize;
        let members = done.wg * size..(done.wg + 1) * size;
        let (pc, first) = (done.pc, done.first);
        let loops = &self.per_code[m.code_index(first)];
        for (k, &x) in loops.counted.iter().enumerate() {
            let (head, last) = loops.all[x];
            if head <= pc && pc <= last {
                let f = |i: usize| w.get(self.field(i, k), FIELD);
                if let Some(b) = members.clone().find(|&b| f(b) != f(first)) {
                    return Err(Instance::Split {
                        pc,
                        edge: last,
                        a: first,
                        b,
                    });
                }
            }
        }
        for i in members {
            for k in 0..self.width {
                w.put(self.field(i, k), FIELD, 0);
            }
        }
        Ok(())
    }
}

/// A barrier completed by a step: its workgroup, its pc and the
/// invocation whose arrival completed it.
#[derive(Clone, Copy)]
pub(super) struct Completed {
    pub wg: usize,
    pub pc: usize,
    pub first: usize,
}

/// The barrier actor `a`'s step `info` from `s` to `n` completed, if it
/// did: an arrival at a barrier after which the arriving invocation no
/// longer waits.
pub(super) fn completed(
    m: &Machine,
    (s, n): (&[u64], &[u64]),
    (a, info): (usize, &StepInfo),
) -> Option<Completed> {
    let pc = info.pc as usize;
    let first = *m.stepping_invocations(s, a).first()?;
    let code = &m.program.codes[m.code_index(first)].instrs;
    (code[pc] == Instr::Barrier && !m.waiting(n, first)).then(|| Completed {
        wg: m.coords(first).0,
        pc,
        first,
    })
}

/// The loops of a code block (see [`Loops::of`]), those around a barrier
/// a jump crosses counted.
fn loops_around_barriers(instrs: &[Instr], back_edges: &[Option<u16>]) -> CodeLoops {
    let len = instrs.len();
    let mut ids: Vec<usize> = Vec::new();
    let mut all: Vec<(usize, usize)> = Vec::new();
    let mut edge = vec![None; len];
    for (pc, i) in instrs.iter().enumerate() {
        let Some(h) = i.target().map(|t| t.pc(len)).filter(|&h| h <= pc) else {
            continue;
        };
        let id = match back_edges.get(pc) {
            _ if back_edges.is_empty() => pc,
            Some(Some(id)) => usize::from(*id),
            _ => continue,
        };
        let x = match ids.iter().position(|&k| k == id) {
            Some(x) => x,
            None => {
                ids.push(id);
                all.push((h, pc));
                all.len() - 1
            }
        };
        all[x] = (all[x].0.min(h), pc);
        edge[pc] = Some(x);
    }
    let barriers: Vec<usize> = (0..len)
        .filter(|&pc| instrs[pc] == Instr::Barrier && !cfg::top_level(instrs, pc))
        .collect();
    let counted = (0..all.len())
        .filter(|&x| barriers.iter().any(|&b| all[x].0 <= b && b <= all[x].1))
        .collect();
    CodeLoops { all, edge, counted }
}

/// The pc of the barrier invocation `i` waits at in `s`, if it does.
fn barrier_at(m: &Machine, s: &[u64], i: usize) -> Option<usize> {
    let pc = m.pc(s, i);
    let code = &m.program.codes[m.code_index(i)].instrs;
    (m.waiting(s, i) && code.get(pc) == Some(&Instr::Barrier)).then_some(pc)
}

/// A barrier its workgroup can no longer complete: invocation `waits`
/// waits at the barrier at `pc`, and `other`, of its workgroup, is apart.
pub(super) struct Unmatched {
    waits: usize,
    pc: usize,
    other: usize,
    apart: Apart,
}

/// Where an invocation is that keeps a barrier from completing.
enum Apart {
    /// It has finished.
    Finished,
    /// It waits at the barrier at this other pc.
    Elsewhere(usize),
}

/// An invocation of state `s` waiting at a barrier that not every
/// invocation of its workgroup will reach: another has finished, or
/// waits at another barrier.
/// None of them can step again (a barrier completes only with every
/// member at it), so every continuation keeps the state's mismatch.
pub(super) fn unmatched(m: &Machine, s: &[u64]) -> Option<Unmatched> {
    let size = m.program.workgroup_size as usize;
    for i in 0..m.num_invocations() {
        let Some(pc) = barrier_at(m, s, i) else {
            continue;
        };
        let wg = m.coords(i).0;
        for other in wg * size..(wg + 1) * size {
            let apart = if m.finished(s, other) {
                Apart::Finished
            } else if let Some(b) = barrier_at(m, s, other).filter(|&b| b != pc) {
                Apart::Elsewhere(b)
            } else {
                continue;
            };
            return Some(Unmatched {
                waits: i,
                pc,
                other,
                apart,
            });
        }
    }
    None
}

impl Ctx<'_> {
    /// `pc`'s line and column in words (` (line 8, column 5)`), or
    /// nothing where the source is unknown (SPIR-V).
    fn line_of(&self, pc: usize) -> String {
        let start = self.at(pc).to_range().map_or(u32::MAX, |r| r.start as u32);
        match super::super::line_col(self.source, start) {
            (0, _) => String::new(),
            (line, col) => format!(" (line {line}, column {col})"),
        }
    }

    /// The refusal of a barrier not every invocation of its workgroup
    /// reaches (WGSL's shader-creation error).
    pub(super) fn unmatched(&self, m: &Machine, lang: &str, u: &Unmatched) -> Refused {
        self.non_uniform(u.pc, lang, self.apart(m, u, "here"))
    }

    /// The same barrier where the language leaves it undefined: how it
    /// happens and what the language says, for the launch line.
    pub(super) fn undefined(&self, m: &Machine, lang: &str, u: &Unmatched) -> ShaderError {
        let what = self.apart(m, u, "there");
        ShaderError::new(
            self.at(u.pc),
            format!("on some schedule {what}; {}", rule(lang)),
        )
    }

    fn apart(&self, m: &Machine, u: &Unmatched, here: &str) -> String {
        let (waits, other) = (inv(m, u.waits), inv(m, u.other));
        let apart = match u.apart {
            Apart::Finished => format!("{other} has finished without reaching it"),
            Apart::Elsewhere(pc) => {
                format!("{other} waits at another barrier{}", self.line_of(pc))
            }
        };
        format!("invocation {waits} waits {here} while {apart}")
    }

    /// The refusal of a barrier two invocations reach in different
    /// iterations of a loop around it, or of one the check cannot follow.
    pub(super) fn instance(&self, m: &Machine, lang: &str, x: Instance) -> Refused {
        match x {
            Instance::Split { pc, edge, a, b } => self.non_uniform(
                pc,
                lang,
                format!(
                    "invocations {} and {} reach it in different iterations of its loop{}",
                    inv(m, a.min(b)),
                    inv(m, a.max(b)),
                    self.line_of(edge)
                ),
            ),
            Instance::Overflow { edge, i } => Refused::from(ShaderError::new(
                self.at(edge),
                format!(
                    "the check cannot follow this loop: invocation {} may go around it more than {MAX_COUNT} times between two barriers, so it cannot tell whether every invocation reaches the barrier inside it in the same iteration (or it is undefined behaviour); move the barrier out of the loop's conditional code",
                    inv(m, i)
                ),
            )),
        }
    }

    fn non_uniform(&self, pc: usize, lang: &str, what: String) -> Refused {
        Refused::from(ShaderError::new(
            self.at(pc),
            format!(
                "a workgroup barrier in non-uniform control flow: on some schedule {what}; {}, and the tools pick no answer; move it where every invocation reaches it together",
                rule(lang)
            ),
        ))
    }
}

/// Invocation `i` as `w.l`.
fn inv(m: &Machine, i: usize) -> String {
    let (wg, l, _, _) = m.coords(i);
    format!("{wg}.{l}")
}

/// What the source language `lang` says of a barrier not every
/// invocation of the workgroup executes as one dynamic instance.
fn rule(lang: &str) -> &'static str {
    match lang {
        "WGSL" => "WGSL requires its barriers (workgroupBarrier, storageBarrier, workgroupUniformLoad) in uniform control flow (a shader-creation error naga does not check)",
        "GLSL" => "GLSL requires barrier() in uniform control flow and leaves any other call undefined",
        "SPIR-V" => "SPIR-V leaves a barrier undefined unless every invocation of the workgroup executes the same dynamic instance of it",
        _ => "the barrier is not one every invocation of the workgroup executes together",
    }
}
