//! Reachable final states and outcome assertions (docs/KERNEL.md §5.4).
//!
//! A final state is a state of the product in which every invocation has
//! terminated; its *outcome* is what the program leaves behind: every
//! memory cell and every register of every invocation. The outcomes are
//! read off the product reduced by the reductions that keep every final
//! state ([`OUTCOME_REDUCTIONS`], docs/KERNEL.md §8.9) under a model (the
//! model matters where it changes which moves exist: the priority
//! scheduler, occupancy, and lockstep subgroups; fairness does not, as it
//! constrains only infinite schedules), each with a schedule that reaches
//! it, shortest on that product.

use super::explain::{move_text, who};
use super::product::{build, Kernel, Reductions};
use super::{with_words, KernelError};
use petgraph::graph::NodeIndex;
use progress_litmus::graph::{breadth_first, tree_path};
use progress_litmus::kernel::assert::{Assertion, Probe, Quantifier};
use progress_litmus::kernel::machine::{Machine, Packed};
use progress_litmus::kernel::observe;
use progress_litmus::kernel::program::Program;
use progress_litmus::kernel::ScopedModel;
use std::collections::BTreeMap;

/// What an outcome records, in order: every memory cell (`x`, `a[1]`,
/// shared ones per workgroup as `w0:s`), then every register of every
/// invocation (`w1:r`, or `w1.2:r` with several invocations a workgroup).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observables {
    pub names: Vec<String>,
    probes: Vec<Probe>,
}

impl Observables {
    pub fn of(p: &Program) -> Observables {
        let mut names = Vec::new();
        let mut probes = Vec::new();
        for (l, loc) in p.locations.iter().enumerate() {
            let copies = if loc.shared { p.workgroups as usize } else { 1 };
            for copy in 0..copies {
                for element in 0..loc.len() {
                    let prefix = if loc.shared {
                        format!("w{copy}:")
                    } else {
                        String::new()
                    };
                    let index = if loc.array {
                        format!("[{element}]")
                    } else {
                        String::new()
                    };
                    names.push(format!("{prefix}{}{index}", loc.name));
                    probes.push(Probe::Mem {
                        location: l,
                        copy,
                        element,
                    });
                }
            }
        }
        for w in 0..p.workgroups as usize {
            let code = &p.codes[p.wg_code[w] as usize];
            for local in 0..p.workgroup_size as usize {
                for (reg, r) in code.regs.iter().enumerate() {
                    names.push(if p.workgroup_size == 1 {
                        format!("w{w}:{r}")
                    } else {
                        format!("w{w}.{local}:{r}")
                    });
                    probes.push(Probe::Reg {
                        workgroup: w,
                        local,
                        reg,
                    });
                }
            }
        }
        Observables { names, probes }
    }

    /// The position of a probe among the observables.
    pub fn position(&self, probe: Probe) -> Option<usize> {
        self.probes.iter().position(|&q| q == probe)
    }

    fn read(&self, m: &Machine, s: &[u64]) -> Vec<u16> {
        let inv = |w: usize, local: usize| {
            (0..m.num_invocations())
                .find(|&i| {
                    let (iw, il, ..) = m.coords(i);
                    iw == w && il == local
                })
                .expect("an invocation of the program")
        };
        self.probes
            .iter()
            .map(|&p| match p {
                Probe::Mem {
                    location,
                    copy,
                    element,
                } => m.mem(s, m.cell_of(location, copy, element)),
                Probe::Reg {
                    workgroup,
                    local,
                    reg,
                } => m.reg(s, inv(workgroup, local), reg),
            })
            .collect()
    }
}

/// One reachable outcome with a shortest schedule to it: `who: what` lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Final {
    pub values: Vec<u16>,
    pub schedule: Vec<String>,
}

/// Every reachable outcome of a program under a model, sorted by value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcomes {
    pub observables: Observables,
    pub finals: Vec<Final>,
    /// States of the product they were read from.
    pub states: usize,
}

impl Outcomes {
    /// Whether the assertion holds: `exists C` when some outcome satisfies
    /// C (C is allowed), `forall C` when every one does.
    pub fn holds(&self, a: &Assertion, p: &Program) -> Result<bool, String> {
        let mut index = BTreeMap::new();
        for atom in a.cond.atoms() {
            let probe = observe::resolve(&atom.term, p)?;
            let k = self
                .observables
                .position(probe)
                .ok_or_else(|| format!("`{}` is not observed", atom.term))?;
            index.insert(atom.term.to_string(), k);
        }
        let sat = |f: &Final| a.cond.eval(&mut |t| f.values[index[&t.to_string()]]);
        Ok(match a.quantifier {
            Quantifier::Exists => self.finals.iter().any(sat),
            Quantifier::Forall => self.finals.iter().all(sat),
        })
    }

    /// The first outcome (in sorted order) satisfying an `exists`
    /// assertion's condition, or violating a `forall`'s: its witness.
    pub fn witness(&self, a: &Assertion, p: &Program) -> Option<&Final> {
        self.finals.iter().find(|f| {
            let one = Outcomes {
                observables: self.observables.clone(),
                finals: vec![(*f).clone()],
                states: 0,
            };
            let h = one.holds(a, p).unwrap_or(false);
            match a.quantifier {
                Quantifier::Exists => h,
                Quantifier::Forall => !h,
            }
        })
    }
}

fn outcomes_w<S: Packed>(k: &Kernel, max_states: usize) -> Result<Outcomes, KernelError> {
    let prod = build::<S>(k, max_states)?;
    let g = &prod.lts.graph;
    let obs = Observables::of(&k.machine.program);
    // One breadth-first search from the start: each outcome's first final
    // node found is one of those nearest the start, and its tree path a
    // shortest schedule (the search and the product are deterministic).
    let mut first: BTreeMap<Vec<u16>, NodeIndex> = BTreeMap::new();
    let record = |n: NodeIndex| {
        let s = g[n].as_ref();
        if k.all_done(s) {
            first.entry(obs.read(&k.machine, s)).or_insert(n);
        }
        false
    };
    let (parent, _) = breadth_first(g, prod.lts.initial(), |_, _| true, record);
    let finals = first
        .into_iter()
        .map(|(values, n)| {
            let path = tree_path(g, &parent, n);
            let schedule = path
                .iter()
                .map(|&e| format!("{}: {}", who(k, g[e]), move_text(k, g[e])))
                .collect();
            Final { values, schedule }
        })
        .collect();
    Ok(Outcomes {
        observables: obs,
        finals,
        states: prod.lts.num_states(),
    })
}

/// The reductions outcomes are read under: those of `classify` that keep
/// every final state as it is (docs/KERNEL.md §8.9): the partial-order
/// reduction and local steps first keep every reachable state where no
/// move is left, final states among them, and change no state; not
/// symmetry (it would merge outcomes that differ by which invocation did
/// what) nor dead registers (a finished invocation's registers are all
/// dead, and they are part of an outcome).
pub const OUTCOME_REDUCTIONS: Reductions = Reductions {
    symmetry: false,
    dead_registers: false,
    chains: super::product::Chains::Never,
    ..Reductions::ALL
};

/// Every reachable outcome of `program` under `model` (whose fairness is
/// ignored), on the product reduced by [`OUTCOME_REDUCTIONS`], each with
/// a shortest schedule there.
pub fn outcomes(
    program: &Program,
    model: &ScopedModel,
    max_states: usize,
) -> Result<Outcomes, KernelError> {
    outcomes_with(program, model, max_states, OUTCOME_REDUCTIONS)
}

/// [`outcomes`] on the product reduced by `red` (`Reductions::NONE`: the
/// full product, which the tests compare with).
pub fn outcomes_with(
    program: &Program,
    model: &ScopedModel,
    max_states: usize,
    red: Reductions,
) -> Result<Outcomes, KernelError> {
    let k = Kernel::new(program, model, red)?;
    with_words!(k.words, outcomes_w(&k, max_states))
}

/// The words for an assertion's answer: an `exists` outcome is allowed or
/// forbidden, a `forall` holds or fails.
pub fn answer_word(a: &Assertion, holds: bool) -> &'static str {
    match (a.quantifier, holds) {
        (Quantifier::Exists, true) => "allowed",
        (Quantifier::Exists, false) => "forbidden",
        (Quantifier::Forall, true) => "holds",
        (Quantifier::Forall, false) => "fails",
    }
}

/// The terms a program's assertions name, each once, in text order (what
/// a device run of its SIMT form records, `backends emit`), and the
/// reachable outcomes under `model` projected onto them, each as
/// `name=value` pairs joined by spaces (`m[0]=1 m[1]=2`).
pub fn observed_outcomes(
    program: &Program,
    model: &ScopedModel,
    max_states: usize,
) -> Result<(Vec<String>, std::collections::BTreeSet<String>), String> {
    let o = outcomes(program, model, max_states).map_err(|e| e.to_string())?;
    let mut index: Vec<(String, usize)> = Vec::new();
    for atom in program.asserts.iter().flat_map(|a| a.cond.atoms()) {
        let name = atom.term.to_string();
        if index.iter().any(|(t, _)| *t == name) {
            continue;
        }
        let probe = observe::resolve(&atom.term, program)?;
        let k = o
            .observables
            .position(probe)
            .ok_or_else(|| format!("`{name}` is not observed"))?;
        index.push((name, k));
    }
    let set = o
        .finals
        .iter()
        .map(|f| {
            index
                .iter()
                .map(|(t, k)| format!("{t}={}", f.values[*k]))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    Ok((index.into_iter().map(|(t, _)| t).collect(), set))
}
