//! The plain sentence of a failing verdict (issue 42 item 3): which
//! invocations never finish, where they are stuck, what they wait for, who
//! could release them, and why the model lets that not happen, in the words
//! a shader's author uses ("Workgroup 0 spins at line 27 (...) waiting for
//! `lock`; of the other invocations still running, only workgroup 1 (at
//! line 27) can write it, and under HSA only the lowest-numbered workgroup
//! still running (workgroup 0) is guaranteed to be scheduled, so workgroup
//! 1 may never be scheduled again."). `oracle explain` opens with it and
//! `oracle check` prints it per failing program (docs/KERNEL.md §4.6).
//!
//! Every clause is read off the witness (docs/KERNEL.md §4.5) or the
//! program's code, never guessed:
//!
//! - *never finish*: the invocations not terminated on the witness's
//!   repeated part (a lasso's cycle, a trap's cycle) or in its deadlock
//!   state;
//! - *spins at* and *waiting for*: the instructions an invocation executes
//!   on the cycle, and the memory cells its atomic instructions there
//!   read, at the indexes the witness's registers give;
//! - *can write*: a write (store, exchange, compare-exchange, read-modify-
//!   write) of one of those cells reachable from the invocation's pc on
//!   the cycle through its control flow, a branch on ids and constants
//!   followed its one way (ids are fixed), every other branch both ways:
//!   an over-approximation, so "only X can write it" and "no other
//!   invocation still running can write it" are safe to say;
//! - *why*: the guaranteed entities of the cycle's states (their fair sets,
//!   docs/KERNEL.md §3.2), the model's rule at the scope where a writer
//!   drops out of them, the steps and moves the product has there.
//!
//! Invocations are named as people say them: `workgroup 1` (one invocation
//! a workgroup, or all of them), `invocation 2 of workgroup 0`, `subgroup
//! 1 of workgroup 0`; places as the user's source has them ([`Places`]):
//! a shader's line and text, a `.litmus` file's line and the instruction,
//! else `instruction N`. Shader text is the user's, shown escaped
//! ([`progress_litmus::error::printable`]).

use super::product::{Kernel, Product};
use super::scopes::{inv_bit, sg_bit, wg_bit};
use super::witness::Witness;
use petgraph::graph::{EdgeIndex, NodeIndex};
use progress_litmus::error::printable;
use progress_litmus::kernel::machine::Packed;
use progress_litmus::kernel::program::{AtomicOp, IdKind, Instr, Operand, Program};
use progress_litmus::kernel::{cfg, litmus, Sched, ScopedModel};
use progress_litmus::Fairness;

/// Where an instruction is in the user's source: its line and column
/// (from 1), and for a shader the text of that line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub line: usize,
    pub col: usize,
    pub text: Option<String>,
}

/// The place of every instruction, by code block and pc (none where the
/// source is unknown: RON programs, AXB tests, SPIR-V).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Places(pub Vec<Vec<Option<Place>>>);

impl Places {
    /// The positions a `.litmus` program was parsed from
    /// (`Code::at`), without source text: the instruction is shown.
    pub fn of_program(p: &Program) -> Places {
        Places(
            p.codes
                .iter()
                .map(|c| {
                    c.at.0
                        .iter()
                        .map(|&(line, col)| {
                            (line > 0).then_some(Place {
                                line,
                                col,
                                text: None,
                            })
                        })
                        .collect()
                })
                .collect(),
        )
    }

    /// The place of instruction `pc` of code block `code`, if known.
    pub fn get(&self, code: usize, pc: usize) -> Option<&Place> {
        self.0.get(code)?.get(pc)?.as_ref()
    }
}

/// The sentence, and the instruction it is about (code block, pc): where
/// `oracle check` points (FILE:LINE:COL).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub text: String,
    pub at: Option<(usize, usize)>,
}

/// The sentence of a witness of `k`'s product `p`.
pub fn summarize<S: Packed>(
    k: &Kernel,
    p: &Product<S>,
    w: &Witness,
    model: &ScopedModel,
    places: &Places,
) -> Summary {
    let f = Facts {
        k,
        g: &p.lts.graph,
        guaranteed: &p.guaranteed,
        model,
        places,
    };
    let (mut summary, all) = match w {
        Witness::Deadlock { state, path } => (f.deadlock(*state), path.clone()),
        Witness::Lasso { lasso, .. } => {
            let all: Vec<EdgeIndex> = lasso.prefix.iter().chain(&lasso.cycle).copied().collect();
            (f.cycle(&lasso.cycle, &all), all)
        }
        Witness::Trap { reach, stay, .. } => {
            let all: Vec<EdgeIndex> = reach
                .iter()
                .chain(&stay.prefix)
                .chain(&stay.cycle)
                .copied()
                .collect();
            (f.cycle(&stay.cycle, &all), all)
        }
    };
    summary.text.push_str(&f.choices(&all));
    summary
}

/// What the sentence is read from.
struct Facts<'a, S> {
    k: &'a Kernel,
    g: &'a petgraph::graph::DiGraph<S, super::product::Move>,
    guaranteed: &'a [u64],
    model: &'a ScopedModel,
    places: &'a Places,
}

impl<S: Packed> Facts<'_, S> {
    /// What the schedule `path` chooses (docs/KERNEL.md §2.11): the lines
    /// of the `choose` instructions whose jump it takes, a translated weak
    /// compare-exchange's spurious failure; empty if none.
    fn choices(&self, path: &[EdgeIndex]) -> String {
        let m = &self.k.machine;
        let mut lines = std::collections::BTreeSet::new();
        for &e in path {
            let mv = self.g[e];
            if !mv.is_step() || !mv.branch().jumped() {
                continue;
            }
            let code = m.code_index(m.actor_invocations(mv.who()).start);
            let instr = m.program.codes[code].instrs.get(mv.pc());
            if matches!(instr, Some(Instr::Choose { .. })) {
                lines.insert(self.places.get(code, mv.pc()).map(|p| p.line));
            }
        }
        let at: Vec<String> = lines
            .iter()
            .map(|l| {
                l.map_or("an instruction without a line".to_string(), |l| {
                    format!("line {l}")
                })
            })
            .collect();
        match at.len() {
            0 => String::new(),
            _ => format!(
                " On this schedule the weak compare-exchange at {} fails spuriously (its translation's `choose` jumps), as the launch line allows.",
                join(&at)
            ),
        }
    }
}

/// A memory cell: location, copy (a shared location's workgroup, else 0),
/// index.
type Cell = (usize, usize, usize);

/// A set of invocations, bit `i` for invocation `i`.
type Invs = u32;

/// A name and whether it takes a plural verb.
struct Named {
    text: String,
    plural: bool,
}

impl Named {
    fn verb(&self, one: &'static str, many: &'static str) -> &'static str {
        if self.plural {
            many
        } else {
            one
        }
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [a] => a.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn members(set: Invs) -> impl Iterator<Item = usize> {
    (0..32).filter(move |i| set & (1 << i) != 0)
}

/// The first letter in upper case.
fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A model as the sentence names it (back-quoted when it has scopes, whose
/// commas would read as the sentence's).
fn model_name(m: &ScopedModel) -> String {
    let s = m.to_string();
    if s.contains(',') {
        format!("`{s}`")
    } else {
        s
    }
}

/// A line of user source in a sentence: trimmed, escaped, at most 60
/// characters.
fn quoted(text: &str) -> String {
    let t = text.trim();
    let short: String = t.chars().take(60).collect();
    let more = if short.len() < t.len() { "…" } else { "" };
    format!("`{}{more}`", printable(&short))
}

/// The scopes of the model, from the device in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    Device,
    Workgroup,
    Subgroup,
}

impl<S: Packed> Facts<'_, S> {
    fn program(&self) -> &Program {
        &self.k.machine.program
    }

    fn state(&self, n: NodeIndex) -> &[u64] {
        self.g[n].as_ref()
    }

    fn live(&self, n: NodeIndex) -> Invs {
        let m = &self.k.machine;
        (0..m.num_invocations())
            .filter(|&i| !m.terminated(self.state(n), i))
            .fold(0, |acc, i| acc | 1 << i)
    }

    /// The value of operand `o` for invocation `i` in state `s`.
    fn value(&self, s: &[u64], i: usize, o: Operand) -> u16 {
        match o {
            Operand::Reg(r) => self.k.machine.reg(s, i, r as usize),
            _ => self.fixed(i, o).unwrap_or(0),
        }
    }

    /// The value of a constant or id operand for invocation `i`.
    fn fixed(&self, i: usize, o: Operand) -> Option<u16> {
        let (wg, local, _, lane) = self.k.machine.coords(i);
        let s = self.program().subgroup_size as usize;
        Some(match o {
            Operand::Imm(v) => v,
            Operand::Id(IdKind::WgId) => wg as u16,
            Operand::Id(IdKind::LocalId) => local as u16,
            Operand::Id(IdKind::SubgroupId) => (local / s) as u16,
            Operand::Id(IdKind::LaneId) => lane as u16,
            Operand::Reg(_) => return None,
        })
    }

    fn instr(&self, i: usize, pc: usize) -> Option<Instr> {
        let c = self.k.machine.code_index(i);
        self.program().codes[c].instrs.get(pc).copied()
    }

    /// The pcs invocation `i` can reach from `pc` (bit per pc; END left
    /// out), a branch on ids and constants followed its one way.
    fn reach(&self, i: usize, pc: usize) -> u64 {
        let code = &self.program().codes[self.k.machine.code_index(i)];
        let len = code.instrs.len();
        let (mut seen, mut work) = (0u64, vec![pc]);
        while let Some(at) = work.pop() {
            if at >= len || seen & (1 << at) != 0 {
                continue;
            }
            seen |= 1 << at;
            let fixed = match code.instrs[at] {
                Instr::Branch { a, cmp, b, target } => {
                    self.fixed(i, a).zip(self.fixed(i, b)).map(|(x, y)| {
                        if cmp.eval(x, y) {
                            target.pc(len)
                        } else {
                            at + 1
                        }
                    })
                }
                _ => None,
            };
            match fixed {
                Some(next) => work.push(next),
                None => work.extend(cfg::successors(code, at)),
            }
        }
        seen
    }

    /// Whether invocation `i`, from `pc` on, can write one of `cells`.
    fn can_write(&self, i: usize, pc: usize, cells: &[Cell]) -> bool {
        let reach = self.reach(i, pc);
        let wg = self.k.machine.coords(i).0;
        let code = &self.program().codes[self.k.machine.code_index(i)];
        code.instrs.iter().enumerate().any(|(at, ins)| {
            let Instr::Atomic { op, addr, .. } = *ins else {
                return false;
            };
            if reach & (1 << at) == 0 || op == AtomicOp::Load {
                return false;
            }
            let loc = addr.loc as usize;
            let copy = if self.program().locations[loc].shared {
                wg
            } else {
                0
            };
            let index = self.fixed(i, addr.index).map(usize::from);
            cells
                .iter()
                .any(|&(l, c, k)| l == loc && c == copy && index.is_none_or(|x| x == k))
        })
    }

    /// The cell an atomic at `addr` of invocation `i` touches in `s`.
    fn cell(&self, s: &[u64], i: usize, addr: progress_litmus::kernel::program::Addr) -> Cell {
        let loc = addr.loc as usize;
        let copy = if self.program().locations[loc].shared {
            self.k.machine.coords(i).0
        } else {
            0
        };
        (loc, copy, self.value(s, i, addr.index) as usize)
    }

    /// A cell by the program's names: `flag`, `data[2]`.
    fn cell_name(&self, (loc, _, k): Cell) -> String {
        let l = &self.program().locations[loc];
        let name = printable(&l.name);
        if l.array {
            format!("`{name}[{k}]`")
        } else {
            format!("`{name}`")
        }
    }

    /// Invocations by the names people use.
    fn names(&self, set: Invs) -> Named {
        let p = self.program();
        let (n, s) = (p.workgroup_size as usize, p.subgroup_size as usize);
        let m = &self.k.machine;
        let mut whole = Vec::new();
        let mut parts = Vec::new();
        let mut count = 0;
        for w in 0..p.workgroups as usize {
            let locals: Vec<usize> = members(set)
                .filter(|&i| m.coords(i).0 == w)
                .map(|i| m.coords(i).1)
                .collect();
            count += locals.len();
            if locals.len() == n {
                whole.push(w.to_string());
                parts.push(format!("workgroup {w}"));
            } else if s > 1
                && locals.len() == s
                && locals[0].is_multiple_of(s)
                && locals[s - 1] == locals[0] + s - 1
            {
                parts.push(format!("subgroup {} of workgroup {w}", locals[0] / s));
            } else if !locals.is_empty() {
                let ids: Vec<String> = locals.iter().map(|l| l.to_string()).collect();
                let noun = if ids.len() == 1 {
                    "invocation"
                } else {
                    "invocations"
                };
                parts.push(format!("{noun} {} of workgroup {w}", join(&ids)));
            }
        }
        if whole.len() > 1 && whole.len() == parts.len() {
            return Named {
                text: format!("workgroups {}", join(&whole)),
                plural: true,
            };
        }
        Named {
            plural: parts.len() > 1 || (count > 1 && whole.is_empty()),
            text: join(&parts),
        }
    }

    /// Instruction `pc` of invocation `i`'s code without its number.
    fn instr_text(&self, i: usize, pc: usize) -> String {
        let c = self.k.machine.code_index(i);
        let t = litmus::print::at(self.program(), c, pc);
        let t = t.split_once(": ").map_or(t.as_str(), |x| x.1).to_string();
        format!("`{}`", printable(&t))
    }

    /// Where instruction `pc` of invocation `i` is, in full: `line 27
    /// (`source`)`, `line 12, instruction 3 (`r0 = flag;`)` or
    /// `instruction 3 (`r0 = flag;`)`.
    fn place(&self, i: usize, pc: usize) -> String {
        if pc >= self.k.machine.code_len(i) {
            return "its end".into();
        }
        let c = self.k.machine.code_index(i);
        match self.places.get(c, pc) {
            Some(Place {
                line,
                text: Some(t),
                ..
            }) => format!("line {line} ({})", quoted(t)),
            Some(Place { line, .. }) => {
                format!("line {line}, instruction {pc} ({})", self.instr_text(i, pc))
            }
            None => format!("instruction {pc} ({})", self.instr_text(i, pc)),
        }
    }

    /// Where instruction `pc` is, in short: `line 27` or `instruction 3`.
    fn short_place(&self, i: usize, pc: usize) -> String {
        if pc >= self.k.machine.code_len(i) {
            return "its end".into();
        }
        match self.places.get(self.k.machine.code_index(i), pc) {
            Some(pl) => format!("line {}", pl.line),
            None => format!("instruction {pc}"),
        }
    }

    /// The pcs of `set` in state `s`, if they are all at one.
    fn common_pc(&self, s: &[u64], set: Invs) -> Option<usize> {
        let mut pcs = members(set).map(|i| self.k.machine.pc(s, i));
        let first = pcs.next()?;
        pcs.all(|pc| pc == first).then_some(first)
    }

    /// The guaranteed entity bit of invocation `i` (its subgroup's in
    /// lockstep, where lanes carry no obligation).
    fn entity(&self, i: usize) -> u64 {
        if self.k.machine.lockstep() {
            sg_bit(self.k.machine.coords(i).2)
        } else {
            inv_bit(i)
        }
    }

    /// The scope at which invocation `i` is not guaranteed under `g`, if
    /// it is not.
    fn drops_at(&self, g: u64, i: usize) -> Option<Scope> {
        let (w, _, sg, _) = self.k.machine.coords(i);
        if g & wg_bit(w) == 0 {
            Some(Scope::Device)
        } else if g & sg_bit(sg) == 0 {
            Some(Scope::Workgroup)
        } else if g & self.entity(i) == 0 {
            Some(Scope::Subgroup)
        } else {
            None
        }
    }
}

/// What an invocation does on the repeated part of a witness.
struct Steps {
    /// (pc, state before, state after) of each of its steps.
    steps: Vec<(usize, NodeIndex, NodeIndex)>,
}

impl<S: Packed> Facts<'_, S> {
    /// The steps of every invocation on `cycle` (in lockstep, the steps
    /// of its subgroup in which it is active).
    fn steps_on(&self, cycle: &[EdgeIndex]) -> Vec<Steps> {
        let m = &self.k.machine;
        let mut out: Vec<Steps> = (0..m.num_invocations())
            .map(|_| Steps { steps: Vec::new() })
            .collect();
        for &e in cycle {
            let mv = self.g[e];
            if !mv.is_step() {
                continue;
            }
            let (a, b) = self.g.edge_endpoints(e).expect("an edge");
            for i in self.k.move_invocations(mv) {
                if !m.lockstep() || m.pc(self.state(a), i) == mv.pc() {
                    out[i].steps.push((mv.pc(), a, b));
                }
            }
        }
        out
    }

    /// The cells invocation `i` reads on its steps, and the first pc that
    /// reads one.
    fn reads(&self, i: usize, st: &Steps) -> (Vec<Cell>, Option<usize>) {
        let mut cells = Vec::new();
        let mut first = None;
        for &(pc, a, _) in &st.steps {
            if let Some(Instr::Atomic { addr, .. }) = self.instr(i, pc) {
                cells.push(self.cell(self.state(a), i, addr));
                first = Some(first.map_or(pc, |f: usize| f.min(pc)));
            }
        }
        cells.sort_unstable();
        cells.dedup();
        (cells, first)
    }

    /// Whether invocation `i` writes one of `cells` on its steps.
    fn writes(&self, i: usize, st: &Steps, cells: &[Cell]) -> bool {
        st.steps.iter().any(|&(pc, a, _)| {
            let Some(Instr::Atomic { op, addr, .. }) = self.instr(i, pc) else {
                return false;
            };
            let s = self.state(a);
            let cell = self.cell(s, i, addr);
            let wrote = match op {
                AtomicOp::Load => false,
                AtomicOp::CompareExchange(e, _) => {
                    let m = &self.k.machine;
                    let at = m.cell_of(cell.0, cell.1, cell.2);
                    m.mem(s, at) == self.value(s, i, e)
                }
                _ => true,
            };
            wrote && cells.contains(&cell)
        })
    }

    /// Whether any step of `edges` moves one of `set`.
    fn stepped(&self, edges: &[EdgeIndex], set: Invs) -> bool {
        edges.iter().any(|&e| {
            let mv = self.g[e];
            mv.is_step() && self.k.move_invocations(mv).any(|i| set & (1 << i) != 0)
        })
    }
}

/// Why a writer does not write: its category on the repeated part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    /// Its workgroup is not resident (occupancy bound).
    NotResident,
    /// Not guaranteed, at this scope.
    Unguaranteed(Scope),
    /// A lane its lockstep subgroup leaves aside while others run.
    SetAside,
    /// Guaranteed, but waiting at a barrier or collective.
    Waits,
    /// Guaranteed, with no move on the repeated part.
    NoMove,
    /// Guaranteed, with a move at some states of it only.
    Sometimes,
    /// Steps, and writes a waited-for cell, on the repeated part.
    WritesToo,
    /// Steps, without writing one, on the repeated part.
    SpinsToo,
}

impl<S: Packed> Facts<'_, S> {
    /// The category of writer `j` on `cycle`, whose first state is `s0`.
    fn held(
        &self,
        j: usize,
        st: &Steps,
        cells: &[Cell],
        s0: NodeIndex,
        cycle: &[NodeIndex],
    ) -> Held {
        let m = &self.k.machine;
        let s = self.state(s0);
        if !st.steps.is_empty() {
            return if self.writes(j, st, cells) {
                Held::WritesToo
            } else {
                Held::SpinsToo
            };
        }
        if self.k.scopes.resident(m, s) & (1 << m.coords(j).0) == 0 {
            return Held::NotResident;
        }
        let g = self.guaranteed[s0.index()];
        if let Some(scope) = self.drops_at(g, j) {
            return Held::Unguaranteed(scope);
        }
        if m.lockstep()
            && cycle
                .iter()
                .any(|&n| self.k.enabled(self.state(n)) & self.entity(j) != 0)
        {
            return Held::SetAside;
        }
        if m.waiting(s, j) {
            return Held::Waits;
        }
        let moves = cycle
            .iter()
            .filter(|&&n| self.k.enabled(self.state(n)) & inv_bit(j) != 0)
            .count();
        match moves {
            0 => Held::NoMove,
            _ => Held::Sometimes,
        }
    }
}

/// The guaranteed-entity rule of a scheduler at a scope, for people.
struct Rule {
    /// The children at the scope, singular and plural, and their parent
    /// (`""`, ` of a workgroup`, ` of a subgroup`).
    child: (&'static str, &'static str),
    parent: &'static str,
}

impl<S: Packed> Facts<'_, S> {
    fn rule_words(&self, scope: Scope) -> (Sched, Rule) {
        let one_lane = self.program().subgroup_size == 1;
        match scope {
            Scope::Device => (
                self.model.device,
                Rule {
                    child: ("workgroup", "workgroups"),
                    parent: "",
                },
            ),
            Scope::Workgroup => (
                self.model.workgroup,
                Rule {
                    child: if one_lane {
                        ("invocation", "invocations")
                    } else {
                        ("subgroup", "subgroups")
                    },
                    parent: " of a workgroup",
                },
            ),
            Scope::Subgroup => (
                self.model.subgroup,
                Rule {
                    child: ("invocation", "invocations"),
                    parent: " of a subgroup",
                },
            ),
        }
    }

    /// The invocations of the entities at `scope` around `x`, and of those
    /// among their siblings that `g` guarantees.
    fn at_scope(&self, scope: Scope, x: Invs, g: u64) -> (Invs, Invs) {
        let m = &self.k.machine;
        let all = (0..m.num_invocations()).fold(0u32, |a, i| a | 1 << i);
        let key = |i: usize| {
            let (w, _, sg, _) = m.coords(i);
            match scope {
                Scope::Device => w,
                Scope::Workgroup => sg,
                Scope::Subgroup => i,
            }
        };
        let parent = |i: usize| {
            let (w, _, sg, _) = m.coords(i);
            match scope {
                Scope::Device => 0,
                Scope::Workgroup => w,
                Scope::Subgroup => sg,
            }
        };
        let mut around = 0;
        let mut here = 0;
        for i in members(all) {
            if members(x).any(|j| key(j) == key(i)) {
                around |= 1 << i;
            }
            let sibling = members(x).any(|j| parent(j) == parent(i));
            let bit = match scope {
                Scope::Device => wg_bit(m.coords(i).0),
                Scope::Workgroup => sg_bit(m.coords(i).2),
                Scope::Subgroup => inv_bit(i),
            };
            if sibling && g & bit != 0 {
                here |= 1 << i;
            }
        }
        (around, here)
    }

    /// Why the writers `x`, not guaranteed at `scope`, need not run:
    /// the model's rule there, with who it guarantees.
    fn rule(&self, scope: Scope, x: Invs, g: u64) -> (String, String) {
        let (sched, r) = self.rule_words(scope);
        let (around, here) = self.at_scope(scope, x, g);
        let subject = |n: &Named| n.verb("it", "they").to_string();
        let them = self.names(around);
        let here = match here {
            0 => "none".to_string(),
            h => self.names(h).text,
        };
        let (one, many) = r.child;
        let within = match scope {
            Scope::Device => "",
            Scope::Workgroup => " in its workgroup",
            Scope::Subgroup => " in its subgroup",
        };
        let xn = self.names(x);
        let text = match sched {
            Sched::Unfair => format!("no {one}{} is guaranteed to be scheduled", r.parent),
            Sched::Hsa | Sched::Priority => format!(
                "only the lowest-numbered {one} still running{within} is guaranteed to be scheduled (here {here})"
            ),
            Sched::Obe => format!(
                "only {many} that have started are guaranteed to be scheduled (here {here}), and {} {} not started",
                them.text,
                them.verb("has", "have")
            ),
            Sched::HsaObe => format!(
                "only the lowest-numbered {one} still running{within} and {many} that have started are guaranteed to be scheduled (here {here}), and {} {} neither",
                them.text,
                them.verb("is", "are")
            ),
            Sched::Lobe => format!(
                "only {many} that have started, and those numbered below one that has, are guaranteed to be scheduled (here {here}), and {} {} neither",
                them.text,
                them.verb("is", "are")
            ),
            _ => format!(
                "{} {} not guaranteed to be scheduled",
                them.text,
                them.verb("is", "are")
            ),
        };
        // A pronoun where the rule has just named the writers themselves.
        let named = !matches!(sched, Sched::Unfair | Sched::Hsa | Sched::Priority);
        let subject = if named && around == x {
            subject(&xn)
        } else {
            xn.text.clone()
        };
        (text, subject)
    }
}

/// The repeated part of a witness: its first state, its states, every
/// invocation's steps on it, and every step of the witness.
struct Round<'r> {
    s0: NodeIndex,
    states: &'r [NodeIndex],
    steps: &'r [Steps],
    all: &'r [EdgeIndex],
}

/// What the sentence of a cycle says of its main spinners.
struct Wait {
    group: Invs,
    cells: Vec<Cell>,
    /// The spinners' loop holds a barrier or collective.
    syncs: bool,
}

impl<S: Packed> Facts<'_, S> {
    /// The sentence of a witness whose `cycle` repeats forever; `all` is
    /// every step of the witness (for "again").
    fn cycle(&self, cycle: &[EdgeIndex], all: &[EdgeIndex]) -> Summary {
        let states: Vec<NodeIndex> = cycle
            .iter()
            .map(|&e| self.g.edge_endpoints(e).expect("an edge").0)
            .collect();
        let Some(&s0) = states.first() else {
            return self.plain("the schedule repeats a cycle that never finishes");
        };
        let live = self.live(s0);
        let steps = self.steps_on(cycle);
        let reads: Vec<(Vec<Cell>, Option<usize>)> = steps
            .iter()
            .enumerate()
            .map(|(i, st)| self.reads(i, st))
            .collect();
        let spinners: Vec<usize> = members(live)
            .filter(|&i| !steps[i].steps.is_empty())
            .collect();
        let main = spinners
            .iter()
            .copied()
            .find(|&i| reads[i].1.is_some())
            .or(spinners.first().copied());
        let Some(main) = main else {
            return self.plain("the schedule repeats a cycle that never finishes");
        };
        let Some(pc) = reads[main].1 else {
            let pc = steps[main].steps.iter().map(|s| s.0).min().unwrap_or(0);
            let who = self.names(1 << main);
            let text = format!(
                "{} {} at {} without reading memory, so nothing another invocation does can end the loop.",
                capital(&who.text),
                who.verb("loops", "loop"),
                self.place(main, pc)
            );
            return self.finish(text, main, pc, live & !(1 << main), s0);
        };
        let wait = self.wait_of(main, &spinners, &reads, &steps);
        let round = Round {
            s0,
            states: &states,
            steps: &steps,
            all,
        };
        let text = self.spin_text(&wait, main, pc, &round);
        let rest = live & !wait.group & !self.writers(&wait, live, s0);
        self.finish(text, main, pc, rest, s0)
    }

    /// The main spinner's group (the spinners reading the same locations
    /// from the same instruction), what they read, and whether their loop
    /// synchronises.
    fn wait_of(
        &self,
        main: usize,
        spinners: &[usize],
        reads: &[(Vec<Cell>, Option<usize>)],
        steps: &[Steps],
    ) -> Wait {
        let m = &self.k.machine;
        let key = |i: usize| {
            let locs: Vec<(usize, usize)> = reads[i].0.iter().map(|c| (c.0, c.2)).collect();
            (m.code_index(i), reads[i].1, locs)
        };
        let group = spinners
            .iter()
            .filter(|&&i| key(i) == key(main))
            .fold(0u32, |a, &i| a | 1 << i);
        let mut cells: Vec<Cell> = members(group).flat_map(|i| reads[i].0.clone()).collect();
        cells.sort_unstable();
        cells.dedup();
        let syncs = members(group).any(|i| {
            steps[i].steps.iter().any(|&(pc, ..)| {
                matches!(
                    self.instr(i, pc),
                    Some(Instr::Barrier | Instr::Collective { .. })
                )
            })
        });
        Wait {
            group,
            cells,
            syncs,
        }
    }

    /// The live invocations outside the group that can still write what
    /// it waits for.
    fn writers(&self, wait: &Wait, live: Invs, s0: NodeIndex) -> Invs {
        let s = self.state(s0);
        members(live & !wait.group)
            .filter(|&j| self.can_write(j, self.k.machine.pc(s, j), &wait.cells))
            .fold(0, |a, j| a | 1 << j)
    }
}

impl<S: Packed> Facts<'_, S> {
    /// The sentence of the main spinners of a cycle: where they spin, for
    /// what, who can still write it, and why those writers do not.
    fn spin_text(&self, wait: &Wait, main: usize, pc: usize, r: &Round) -> String {
        let (steps, s0) = (r.steps, r.s0);
        let who = self.names(wait.group);
        let cells: Vec<String> = wait.cells.iter().map(|&c| self.cell_name(c)).collect();
        let mut text = format!(
            "{} {} at {} waiting for {}",
            capital(&who.text),
            who.verb("spins", "spin"),
            self.place(main, pc),
            join(&cells)
        );
        let it = if wait.cells.len() == 1 { "it" } else { "them" };
        let writers = self.writers(wait, self.live(s0), s0);
        if writers == 0 {
            text.push_str(", which no other invocation still running can write");
            if !wait.syncs {
                text.push_str(", so nothing another invocation does can end the wait");
            }
            text.push('.');
            return text;
        }
        let stopped = members(writers).all(|j| steps[j].steps.is_empty());
        let at = match self.common_pc(self.state(s0), writers) {
            Some(pc) if stopped => format!(
                " (at {})",
                self.short_place(members(writers).next().unwrap_or(0), pc)
            ),
            _ => String::new(),
        };
        text.push_str(&format!(
            "; of the other invocations still running, only {}{at} can write {it}",
            self.names(writers).text
        ));
        let mut by: Vec<(Held, Invs)> = Vec::new();
        for j in members(writers) {
            let h = self.held(j, &steps[j], &wait.cells, s0, r.states);
            match by.iter_mut().find(|(k, _)| *k == h) {
                Some((_, x)) => *x |= 1 << j,
                None => by.push((h, 1 << j)),
            }
        }
        let clauses: Vec<String> = by
            .iter()
            .map(|&(h, x)| self.held_text(h, x, wait, it, r))
            .collect();
        for c in clauses {
            text.push_str(", and ");
            text.push_str(&c);
        }
        text.push('.');
        text
    }

    /// The clause of the writers `x`, all held the same way.
    fn held_text(&self, h: Held, x: Invs, wait: &Wait, it: &str, r: &Round) -> String {
        let (s0, steps, all) = (r.s0, r.steps, r.all);
        let m = &self.k.machine;
        let s = self.state(s0);
        let xn = self.names(x);
        let first = members(x).next().unwrap_or(0);
        let short = self.short_place(first, m.pc(s, first));
        let model = model_name(self.model);
        match h {
            Held::NotResident => {
                let wgs = self.names(self.at_scope(Scope::Device, x, 0).0);
                let k = self.model.occupancy.unwrap_or(0);
                let (noun, verb) = if k == 1 { ("workgroup", "is") } else { ("workgroups", "are") };
                format!(
                    "under {model} at most {k} {noun} {verb} resident at once, and {} {} not, so {} cannot start while they run",
                    wgs.text,
                    wgs.verb("is", "are"),
                    xn.text
                )
            }
            Held::Unguaranteed(scope) => {
                let again = if self.stepped(all, x) { " again" } else { "" };
                let (rule, subject) = self.rule(scope, x, self.guaranteed[s0.index()]);
                format!("under {model} {rule}, so {subject} may never be scheduled{again}")
            }
            Held::SetAside => format!(
                "{} {} at {short} in a lockstep subgroup that only ever runs its other lanes",
                xn.text,
                xn.verb("is", "are")
            ),
            Held::Waits => format!(
                "{} {} guaranteed but {} at {} at {short}",
                xn.text,
                xn.verb("is", "are"),
                xn.verb("waits", "wait"),
                self.sync_name(first, m.pc(s, first))
            ),
            Held::NoMove => format!(
                "{} {} guaranteed but cannot move on the repeated part",
                xn.text,
                xn.verb("is", "are")
            ),
            Held::Sometimes if self.model.fairness == Fairness::Weak => format!(
                "{} can move only at some states of the repeated part, and weak fairness owes a step only to one that can move all along it",
                xn.text
            ),
            Held::Sometimes => format!(
                "{} {} never scheduled on the repeated part",
                xn.text,
                xn.verb("is", "are")
            ),
            Held::WritesToo => format!(
                "{} {} {it} too, yet the schedule never lets {} read a value that ends the wait",
                xn.text,
                xn.verb("writes", "write"),
                self.names(wait.group).text
            ),
            Held::SpinsToo => {
                let pc = steps[first].steps.iter().map(|s| s.0).min().unwrap_or(0);
                format!(
                    "{} {} too, at {}, without writing {it}",
                    xn.text,
                    xn.verb("spins", "spin"),
                    self.short_place(first, pc)
                )
            }
        }
    }

    /// `the barrier` or `` `subgroupAll` `` for the instruction at `pc`.
    fn sync_name(&self, i: usize, pc: usize) -> String {
        match self.instr(i, pc) {
            Some(Instr::Collective { op, .. }) => format!("`{}`", op.name()),
            Some(Instr::Barrier) => "the barrier".into(),
            _ => "the instruction".into(),
        }
    }

    /// The summary of `text` about instruction `pc` of invocation `main`,
    /// with the invocations of `rest` said never to finish either.
    fn finish(
        &self,
        mut text: String,
        main: usize,
        pc: usize,
        rest: Invs,
        s0: NodeIndex,
    ) -> Summary {
        if rest != 0 {
            let r = self.names(rest);
            let at = self
                .common_pc(self.state(s0), rest)
                .map(|pc| {
                    format!(
                        " (at {})",
                        self.short_place(members(rest).next().unwrap_or(0), pc)
                    )
                })
                .unwrap_or_default();
            text.push_str(&format!(
                " {}{at} never {} either.",
                capital(&r.text),
                r.verb("finishes", "finish")
            ));
        }
        Summary {
            text,
            at: Some((self.k.machine.code_index(main), pc)),
        }
    }

    /// A sentence without a place (a witness the rules above do not read).
    fn plain(&self, text: &str) -> Summary {
        Summary {
            text: format!("{}.", capital(text)),
            at: None,
        }
    }
}

impl<S: Packed> Facts<'_, S> {
    /// The sentence of a deadlock: who waits where, who never arrives.
    fn deadlock(&self, n: NodeIndex) -> Summary {
        let m = &self.k.machine;
        let s = self.state(n);
        let live = self.live(n);
        let Some(main) = members(live)
            .find(|&i| m.waiting(s, i))
            .or(members(live).next())
        else {
            return self.plain("the schedule ends where nothing can move");
        };
        let pc = m.pc(s, main);
        let (w, _, sg, _) = m.coords(main);
        let peers: Invs = (0..m.num_invocations())
            .filter(|&j| match self.instr(main, pc) {
                Some(Instr::Barrier) => m.coords(j).0 == w,
                Some(Instr::Collective { .. }) => m.coords(j).2 == sg,
                _ => false,
            })
            .fold(0, |a, j| a | 1 << j);
        if !m.waiting(s, main) || peers == 0 {
            let who = self.names(1 << main);
            let text = format!(
                "{} cannot move at {}, and nothing else can move: the schedule ends in a deadlock, which no scheduler can undo.",
                capital(&who.text),
                self.place(main, pc)
            );
            return self.finish(text, main, pc, live & !(1 << main), n);
        }
        let group = members(peers & live)
            .filter(|&j| m.waiting(s, j) && m.pc(s, j) == pc)
            .fold(0u32, |a, j| a | 1 << j);
        let missing = peers & !group;
        let text = self.barrier_text(group, missing, main, pc, n);
        self.finish(text, main, pc, live & !group & !missing, n)
    }

    /// `S wait(s) at the barrier at P, which M never reach(es) (...); ...`
    fn barrier_text(
        &self,
        group: Invs,
        missing: Invs,
        main: usize,
        pc: usize,
        n: NodeIndex,
    ) -> String {
        let m = &self.k.machine;
        let s = self.state(n);
        let who = self.names(group);
        let what = self.sync_name(main, pc);
        let (kind, scope) = match self.instr(main, pc) {
            Some(Instr::Collective { .. }) => ("a collective", "subgroup"),
            _ => ("a barrier", "workgroup"),
        };
        let head = format!(
            "{} {} at {what} at {}",
            capital(&who.text),
            who.verb("waits", "wait"),
            self.place(main, pc)
        );
        if missing == 0 {
            return format!("{head}, which never completes, and nothing else can move: the schedule ends in a deadlock, which no scheduler can undo.");
        }
        let why: Vec<String> = members(missing)
            .map(|j| {
                let at = m.pc(s, j);
                if m.terminated(s, j) || m.finished(s, j) {
                    "finished".to_string()
                } else if m.waiting(s, j) {
                    format!(
                        "waits at {} at {}",
                        self.sync_name(j, at),
                        self.short_place(j, at)
                    )
                } else {
                    format!("is at {}", self.short_place(j, at))
                }
            })
            .collect();
        let mn = self.names(missing);
        let why = match why.iter().all(|w| *w == why[0]) {
            true if why[0] == "finished" => {
                format!(" ({} finished)", mn.verb("it has", "they have"))
            }
            true if mn.plural => {
                let w = why[0]
                    .replacen("waits ", "wait ", 1)
                    .replacen("is ", "are ", 1);
                format!(" (they {w})")
            }
            true => format!(" (it {})", why[0]),
            false => String::new(),
        };
        format!(
            "{head}, which {} never {}{why}; {kind} completes only when every invocation of its {scope} arrives at it, so the schedule ends in a deadlock, which no scheduler can undo.",
            mn.text,
            mn.verb("reaches", "reach")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::explain::{explain_with, Show};
    use crate::kernel::Options;
    use progress_litmus::kernel::litmus;

    /// The sentence of `src` under `model` (None when it passes).
    fn sentence(src: &str, model: &str) -> Option<Summary> {
        let p = litmus::parse(src).unwrap();
        let m = ScopedModel::parse(model).unwrap();
        let places = Places::of_program(&p);
        explain_with(&p, "t", &m, Options::default(), Show::VerdictOnly, &places)
            .unwrap()
            .summary
    }

    /// The mutex of suites/idioms/mutex.litmus (lines 6 and 7 hold
    /// instructions 0 and 1).
    const MUTEX: &str = "values 2;\nworkgroups 2;\nglobal lock;\nkernel {\nacquire:\n  0: if (exch(lock, 1) == 1) goto acquire;\n  1: lock = 0;\n}\n";

    const BARRIER: &str = "values 2;\nworkgroups 1;\nworkgroup_size 2;\nkernel {\n  0: if (local_id != 0) goto END;\n  1: barrier();\n}\n";
    const NOBODY: &str =
        "values 2;\nworkgroups 2;\nglobal flag;\nkernel {\n  0: if (flag == 0) goto 0;\n}\n";
    const LOCAL: &str = "values 2;\nworkgroups 1;\nkernel {\n  0: goto 0;\n}\n";
    const SIMT: &str = "values 2;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal lock;\nkernel {\nacquire:\n  0: if (exch(lock, 1) == 1) goto acquire;\n  1: lock = 0;\n}\n";
    const MP: &str = "values 2;\nworkgroups 2;\nworkgroup_size 2;\nglobal flag;\nkernel {\n  0: if (local_id != 0) goto END;\n  1: if (wg_id != 0) goto 3;\n  2: flag = 1;\n  3: if (flag == 0) goto 3;\n}\n";

    const COLLECTIVE: &str = "values 2;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nkernel {\n  0: if (local_id != 0) goto END;\n  1: r = subgroupAll(1);\n}\n";

    fn text(src: &str, model: &str) -> String {
        sentence(src, model).expect("a failing verdict").text
    }

    /// HSA guarantees only the lowest-numbered live workgroup: workgroup 1
    /// takes the lock (the shortest schedule), workgroup 0 spins on it.
    #[test]
    fn a_lasso_under_hsa_names_the_spinner_the_holder_and_the_rule() {
        let s = sentence(MUTEX, "HSA").unwrap();
        assert_eq!(
            s.text,
            "Workgroup 0 spins at line 6, instruction 0 (`if (exch(lock, 1) == 1) goto acquire;`) waiting for `lock`; of the other invocations still running, only workgroup 1 (at line 7) can write it, and under HSA only the lowest-numbered workgroup still running is guaranteed to be scheduled (here workgroup 0), so workgroup 1 may never be scheduled again."
        );
        assert_eq!(s.at, Some((0, 0)));
        // Where nothing is known of the source: the instruction alone.
        let p = litmus::parse(MUTEX).unwrap();
        let m = ScopedModel::parse("HSA").unwrap();
        let e = explain_with(
            &p,
            "t",
            &m,
            Options::default(),
            Show::VerdictOnly,
            &Places::default(),
        )
        .unwrap();
        assert!(
            e.summary.unwrap().text.starts_with("Workgroup 0 spins at instruction 0 (`if (exch(lock, 1) == 1) goto acquire;`) waiting for `lock`; of the other invocations still running, only workgroup 1 (at instruction 1) can write it"),
        );
    }

    /// Unfair guarantees nothing; OBE passes: no sentence.
    #[test]
    fn unfair_guarantees_nothing_and_a_pass_has_no_sentence() {
        assert_eq!(
            text(MUTEX, "UNFAIR"),
            "Workgroup 1 spins at line 6, instruction 0 (`if (exch(lock, 1) == 1) goto acquire;`) waiting for `lock`; of the other invocations still running, only workgroup 0 (at line 7) can write it, and under UNFAIR no workgroup is guaranteed to be scheduled, so workgroup 0 may never be scheduled again."
        );
        assert_eq!(sentence(MUTEX, "OBE"), None);
        assert_eq!(sentence(MP, "HSA_STRONG"), None);
    }

    /// OBE guarantees started workgroups: the consumer has started, the
    /// producer has not. Invocation 1 of workgroup 0 is never run either.
    /// Only invocation 0 of workgroup 0 can write `flag`: invocation 1's
    /// branch on `local_id` is followed its one way.
    #[test]
    fn obe_names_the_workgroup_that_has_not_started() {
        assert_eq!(
            text(MP, "OBE"),
            "Invocation 0 of workgroup 1 spins at line 9, instruction 3 (`if (flag == 0) goto 3;`) waiting for `flag`; of the other invocations still running, only invocation 0 of workgroup 0 (at line 6) can write it, and under OBE only workgroups that have started are guaranteed to be scheduled (here workgroup 1), and workgroup 0 has not started, so invocation 0 of workgroup 0 may never be scheduled. Invocation 1 of workgroup 0 (at line 6) never finishes either."
        );
    }

    #[test]
    fn a_deadlock_names_the_barrier_and_who_never_reaches_it() {
        let s = sentence(BARRIER, "WEAK_FAIR").unwrap();
        assert_eq!(
            s.text,
            "Invocation 0 of workgroup 0 waits at the barrier at line 6, instruction 1 (`barrier();`), which invocation 1 of workgroup 0 never reaches (it has finished); a barrier completes only when every invocation of its workgroup arrives at it, so the schedule ends in a deadlock, which no scheduler can undo."
        );
        assert_eq!(s.at, Some((0, 1)));
        assert_eq!(
            text(COLLECTIVE, "STRONG_FAIR"),
            "Invocation 0 of workgroup 0 waits at `subgroupAll` at line 7, instruction 1 (`r = subgroupAll(1);`), which invocation 1 of workgroup 0 never reaches (it has finished); a collective completes only when every invocation of its subgroup arrives at it, so the schedule ends in a deadlock, which no scheduler can undo."
        );
    }

    /// Never more than the witness shows: a location no one else writes,
    /// a loop that reads nothing, a lane lockstep leaves aside.
    #[test]
    fn waits_nothing_can_end_are_said_so() {
        assert_eq!(
            text(NOBODY, "WEAK_FAIR"),
            "Workgroups 0 and 1 spin at line 5, instruction 0 (`if (flag == 0) goto 0;`) waiting for `flag`, which no other invocation still running can write, so nothing another invocation does can end the wait."
        );
        assert_eq!(
            text(LOCAL, "STRONG_FAIR"),
            "Workgroup 0 loops at line 4, instruction 0 (`goto 0;`) without reading memory, so nothing another invocation does can end the loop."
        );
        assert_eq!(
            text(SIMT, "WEAK_FAIR, subgroup=lockstep"),
            "Invocation 1 of workgroup 0 spins at line 8, instruction 0 (`if (exch(lock, 1) == 1) goto acquire;`) waiting for `lock`; of the other invocations still running, only invocation 0 of workgroup 0 (at line 9) can write it, and invocation 0 of workgroup 0 is at line 9 in a lockstep subgroup that only ever runs its other lanes."
        );
        assert_eq!(
            text(SIMT, "WEAK_FAIR, subgroup=unfair"),
            "Invocation 1 of workgroup 0 spins at line 8, instruction 0 (`if (exch(lock, 1) == 1) goto acquire;`) waiting for `lock`; of the other invocations still running, only invocation 0 of workgroup 0 (at line 9) can write it, and under `WEAK_FAIR, subgroup=unfair` no invocation of a subgroup is guaranteed to be scheduled, so invocation 0 of workgroup 0 may never be scheduled again."
        );
    }

    #[test]
    fn lists_read_as_english() {
        assert_eq!(join(&[]), "");
        assert_eq!(join(&["a".into()]), "a");
        assert_eq!(join(&["a".into(), "b".into()]), "a and b");
        assert_eq!(join(&["a".into(), "b".into(), "c".into()]), "a, b and c");
        assert_eq!(capital("workgroup 0"), "Workgroup 0");
        assert_eq!(quoted("  x\u{1b}[2J  "), "`x\\u{1b}[2J`");
        assert_eq!(quoted(&"y".repeat(70)), format!("`{}…`", "y".repeat(60)));
    }
}
