//! Verdicts for people (`oracle explain` on kernel programs): the verdict
//! under the model, the plain sentence of a failing verdict
//! ([`super::sentence`]), the program, and the witness schedule of a
//! failing verdict or the reason of a passing one. Every verdict line says that
//! memory is sequentially consistent: the checker assumes it.

use super::product::{build, Chains, Kernel, Move, Product, Reductions};
use super::replay;
use super::scopes;
use super::sentence::{self, Places, Summary};
use super::witness::{self, Lasso, Witness};
use super::{with_words, KernelError, Options};
use petgraph::graph::{EdgeIndex, NodeIndex};
use progress_litmus::kernel::litmus;
use progress_litmus::kernel::machine::{Branch, Packed};
use progress_litmus::kernel::program::Program;
use progress_litmus::kernel::ScopedModel;
use progress_litmus::Fairness;
use std::fmt::Write;

/// The name of an actor or invocation in schedules: `w1` for the one
/// invocation of workgroup 1, `w1.2` for invocation 2 of workgroup 1,
/// `w1.s0` for subgroup 0 of workgroup 1 stepping in lockstep.
pub fn who(k: &Kernel, m: Move) -> String {
    let mc = &k.machine;
    let p = &mc.program;
    if m.is_step() && mc.lockstep() {
        let per = k.scopes.per;
        return format!("w{}.s{}", m.who() / per, m.who() % per);
    }
    let (w, local, ..) = mc.coords(m.who());
    if p.workgroup_size == 1 {
        format!("w{w}")
    } else {
        format!("w{w}.{local}")
    }
}

/// The state without its fair sets, then `term={..}`.
pub fn describe_state(k: &Kernel, s: &[u64]) -> String {
    let m = &k.machine;
    let term: Vec<String> = (0..m.num_invocations())
        .filter(|&i| m.terminated(s, i))
        .map(|i| i.to_string())
        .collect();
    format!("{} term={{{}}}", m.describe(s), term.join(","))
}

/// The whole state, fair sets included.
pub fn describe_full(k: &Kernel, s: &[u64]) -> String {
    let f = k.scopes.describe(s);
    if f.is_empty() {
        describe_state(k, s)
    } else {
        format!("{} {f}", describe_state(k, s))
    }
}

/// What a move does, for schedules and graphs.
pub fn move_text(k: &Kernel, m: Move) -> String {
    if !m.is_step() {
        return "terminates".into();
    }
    let p = &k.machine.program;
    let c = k.machine.code_index(k.move_invocations(m).start);
    let mut s = litmus::print::at(p, c, m.pc());
    match m.branch() {
        Branch::Taken => s.push_str("  (taken)"),
        Branch::NotTaken => s.push_str("  (not taken)"),
        // A SIMT-Step branch splits its dynamic block; the two sides then
        // interleave (docs/KERNEL.md §2.9).
        Branch::Divergent if k.machine.direct().is_some() => s.push_str("  (divergent)"),
        Branch::Divergent => s.push_str(if m.choice() == 0 {
            "  (divergent: taken lanes first)"
        } else {
            "  (divergent: other lanes first)"
        }),
        Branch::None => {}
    }
    s
}

/// One step of a witness schedule, as `explain` shows it and `check`
/// reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Its number in the schedule (from 1).
    pub number: usize,
    /// Who moves: `w1`, `w1.0`, `w1.s0`.
    pub actor: String,
    /// What it does: the instruction with its branch outcome, or
    /// `terminates`.
    pub action: String,
    /// The fair sets before the step (`F: dev={0}`; empty where no scope
    /// keeps one).
    pub fair: String,
    /// The state after the step.
    pub state: String,
    /// The instruction stepped, as (code block, pc); none for a Terminate.
    pub at: Option<(usize, usize)>,
    /// The repeated part of the schedule starts at this step.
    pub repeats: bool,
}

impl Step {
    /// The schedule line of `explain`: number, actor, action, F, state.
    pub fn line(&self) -> String {
        format!(
            "  {:>3}  {:<6} {:<48} {}{}-> {}",
            self.number,
            self.actor,
            self.action,
            self.fair,
            if self.fair.is_empty() { "" } else { "  " },
            self.state
        )
    }
}

/// The steps of `edges`, numbered from `first`.
fn steps_of<S: Packed>(k: &Kernel, p: &Product<S>, edges: &[EdgeIndex], first: usize) -> Vec<Step> {
    let g = &p.lts.graph;
    edges
        .iter()
        .enumerate()
        .map(|(i, &e)| {
            let (from, to) = g.edge_endpoints(e).unwrap();
            let m = g[e];
            let inv = k.move_invocations(m).start;
            Step {
                number: first + i,
                actor: who(k, m),
                action: move_text(k, m),
                fair: k.scopes.describe(g[from].as_ref()),
                state: describe_state(k, g[to].as_ref()),
                at: m.is_step().then(|| (k.machine.code_index(inv), m.pc())),
                repeats: false,
            }
        })
        .collect()
}

/// A lasso's steps, numbered from `first`, the repeated part marked.
fn lasso_steps<S: Packed>(k: &Kernel, p: &Product<S>, l: &Lasso, first: usize) -> Vec<Step> {
    let mut steps = steps_of(k, p, &l.prefix, first);
    let mut cycle = steps_of(k, p, &l.cycle, first + l.prefix.len());
    if let Some(s) = cycle.first_mut() {
        s.repeats = true;
    }
    steps.append(&mut cycle);
    steps
}

/// Every step of a witness, in order: the path to a deadlock, a lasso,
/// or the path to a trap followed by the lasso that stays there.
pub fn witness_steps<S: Packed>(k: &Kernel, p: &Product<S>, w: &Witness) -> Vec<Step> {
    match w {
        Witness::Deadlock { path, .. } => steps_of(k, p, path, 1),
        Witness::Lasso { lasso, .. } => lasso_steps(k, p, lasso, 1),
        Witness::Trap { reach, stay, .. } => {
            let mut steps = steps_of(k, p, reach, 1);
            steps.extend(lasso_steps(k, p, stay, reach.len() + 1));
            steps
        }
    }
}

fn schedule_lines(out: &mut String, steps: &[Step]) {
    for s in steps {
        if s.repeats {
            let _ = writeln!(out, "  --- repeats forever from here ---");
        }
        let _ = writeln!(out, "{}", s.line());
    }
}

fn lasso_lines<S: Packed>(
    out: &mut String,
    k: &Kernel,
    p: &Product<S>,
    l: &Lasso,
    first: usize,
    from: &str,
) {
    if l.prefix.is_empty() {
        let _ = writeln!(out, "  (from {from})");
    }
    let steps = lasso_steps(k, p, l, first);
    schedule_lines(out, &steps);
    if l.cycle.is_empty() {
        let _ = writeln!(out, "  --- repeats forever from here ---");
    }
}

/// Names of entity bits: `w0`, `w0.s1`, `w0.1`.
fn entities(k: &Kernel, mask: u64) -> String {
    let sc = &k.scopes;
    let mut names = Vec::new();
    for w in 0..sc.w {
        if mask & scopes::wg_bit(w) != 0 {
            names.push(format!("w{w}"));
        }
    }
    for g in 0..sc.w * sc.per {
        if mask & scopes::sg_bit(g) != 0 && sc.per > 1 {
            names.push(format!("w{}.s{}", g / sc.per, g % sc.per));
        }
    }
    for i in 0..sc.w * sc.n {
        if mask & scopes::inv_bit(i) != 0 && sc.n > 1 {
            names.push(format!("w{}.{}", i / sc.n, i % sc.n));
        }
    }
    format!("{{{}}}", names.join(", "))
}

/// An explanation: the text `oracle explain` prints, and the parts of it
/// `oracle check` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explained {
    pub text: String,
    /// The plain sentence of a failing verdict ([`sentence`]); none when
    /// the program passes.
    pub summary: Option<Summary>,
    /// The witness schedule, step by step (empty when the program passes).
    pub steps: Vec<Step>,
    /// The witness is a deadlock.
    pub deadlock: bool,
    /// States and transitions of the product the verdict was decided on
    /// (the header's `Product space`).
    pub states: usize,
    pub transitions: usize,
}

/// The size of the product a verdict was decided on, as the header says it.
#[derive(Clone, Copy, Debug)]
struct Space {
    states: usize,
    transitions: usize,
    /// Built with the reductions of `classify` (its witness, if any,
    /// replayed on the full product: [`super::replay`]).
    reduced: bool,
}

impl Space {
    fn of<S: Packed>(p: &Product<S>, reduced: bool) -> Space {
        Space {
            states: p.lts.num_states(),
            transitions: p.lts.num_transitions(),
            reduced,
        }
    }
}

/// What an explanation is made of besides its witness.
struct Parts<'a> {
    program: &'a Program,
    name: &'a str,
    model: &'a ScopedModel,
    with_program: bool,
    places: &'a Places,
}

/// The explanation on the full product of the program with the model's
/// fair sets, in `S` words a state.
fn explain_w<S: Packed>(
    parts: &Parts,
    k: &Kernel,
    max_states: usize,
) -> Result<Explained, KernelError> {
    let p = build::<S>(k, max_states)?;
    let fairness = parts.model.fairness;
    let w = witness::find(k, &p, fairness);
    // The same check as a reduced product's witness gets: none is shown
    // that is not one.
    if let Some(w) = &w {
        if replay::replay(k, k, &p, w, fairness).is_none() {
            return Err(KernelError::Internal(format!(
                "the witness found for `{}` does not check on the program's states",
                parts.name
            )));
        }
    }
    Ok(render(parts, k, &p, Space::of(&p, false), w))
}

/// The explanation on the product `classify` decides on (`reduced`, built
/// by `red`, without symmetry), its witness replayed and checked on the
/// full kernel `full`; `None` where the witness does not replay (the
/// caller then builds the full product).
fn explain_reduced<S: Packed>(
    parts: &Parts,
    red: &Kernel,
    full: &Kernel,
    max_states: usize,
) -> Result<Option<Explained>, KernelError> {
    let p = build::<S>(red, max_states)?;
    let space = Space::of(&p, true);
    let fairness = parts.model.fairness;
    Ok(match witness::find(red, &p, fairness) {
        None => Some(render(parts, full, &p, space, None)),
        Some(w) => replay::replay(red, full, &p, &w, fairness)
            .map(|(shown, w)| render(parts, full, &shown, space, Some(w))),
    })
}

/// The header, the sentence of a failing verdict, then what the witness
/// (a witness on `p`, or none) shows.
fn render<S: Packed>(
    parts: &Parts,
    k: &Kernel,
    p: &Product<S>,
    space: Space,
    w: Option<Witness>,
) -> Explained {
    let model = parts.model;
    let summary = w
        .as_ref()
        .map(|w| sentence::summarize(k, p, w, model, parts.places));
    let mut out = String::new();
    let shown = parts.with_program.then_some(parts.program);
    header::<S>(&mut out, shown, parts.name, model, k, space, w.as_ref());
    // The sentence opens the explanation, after the verdict line.
    if let Some(s) = &summary {
        let at = out.find('\n').map_or(out.len(), |i| i + 1);
        out.insert_str(at, &format!("{}\n", s.text));
    }
    match &w {
        None => why_it_passes(&mut out, model, space),
        Some(Witness::Deadlock { path, state }) => deadlock_lines(&mut out, k, p, path, *state),
        Some(Witness::Lasso { lasso, must_step }) => {
            weak_lasso_lines(&mut out, k, p, lasso, *must_step)
        }
        Some(Witness::Trap {
            reach,
            trap,
            region,
            stay,
        }) => trap_lines(&mut out, k, p, reach, *trap, *region, stay),
    }
    Explained {
        text: out,
        steps: w
            .as_ref()
            .map(|w| witness_steps(k, p, w))
            .unwrap_or_default(),
        deadlock: matches!(w, Some(Witness::Deadlock { .. })),
        summary,
        states: space.states,
        transitions: space.transitions,
    }
}

/// The verdict line (with the memory model the checker assumes), the
/// model, the program (when given), the size of the product and its
/// start: what a reader needs before the witness makes sense.
fn header<S: Packed>(
    out: &mut String,
    program: Option<&Program>,
    name: &str,
    model: &ScopedModel,
    k: &Kernel,
    space: Space,
    w: Option<&Witness>,
) {
    let verdict = match w {
        None => "P: termination is guaranteed".to_string(),
        Some(Witness::Deadlock { .. }) => {
            "F: termination is NOT guaranteed (a schedule deadlocks)".to_string()
        }
        Some(_) => "F: termination is NOT guaranteed".to_string(),
    };
    let _ = writeln!(
        out,
        "{name} under {} (memory sequentially consistent): {verdict}",
        model.pretty()
    );
    let _ = writeln!(out, "Model: {model}");
    let _ = writeln!(out);
    if let Some(program) = program {
        out.push_str(&litmus::print(program));
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "Product space: {} states, {} transitions (memory, pcs, registers, waits, terminated invocations, fair sets per scope){}.",
        space.states,
        space.transitions,
        if !space.reduced {
            ""
        } else if w.is_some() {
            ", reduced as classify reduces it (partial order, local steps first, dead registers: docs/KERNEL.md §8); the schedule below was replayed and checked on the full product (§8.9)"
        } else {
            ", reduced as classify reduces it (partial order, local steps first, dead registers: docs/KERNEL.md §8)"
        }
    );
    let _ = writeln!(
        out,
        "Start: {}",
        describe_full(k, k.initial::<S>().as_ref())
    );
    let _ = writeln!(out);
}

/// A passing verdict has no witness: the reason says which rule of the
/// fairness held on the whole product.
fn why_it_passes(out: &mut String, model: &ScopedModel, space: Space) {
    let reason = match model.fairness {
        Fairness::Weak => "no schedule deadlocks, and every reachable cycle leaves some guaranteed entity (workgroup, subgroup or invocation) that can move everywhere on it without a step, so a weakly fair scheduler must leave it: every schedule it allows finishes.".to_string(),
        Fairness::Strong => format!("from each of the {} reachable states of the product above, termination can be forced: by a Terminate, or by a guaranteed entity all of whose moves lead closer to it; a strongly fair scheduler cannot avoid that forever.", space.states),
    };
    let _ = writeln!(out, "Why: {reason}");
}

/// A deadlock fails under every fairness: the schedule to it and the
/// state where nothing can move.
fn deadlock_lines<S: Packed>(
    out: &mut String,
    k: &Kernel,
    p: &Product<S>,
    path: &[EdgeIndex],
    state: NodeIndex,
) {
    let _ = writeln!(
        out,
        "A schedule that deadlocks: nothing can move in its last state, yet not every invocation has terminated (a barrier or collective some invocation never reaches, or waits at another one):"
    );
    if path.is_empty() {
        let _ = writeln!(out, "  (the start state)");
    }
    schedule_lines(out, &steps_of(k, p, path, 1));
    let _ = writeln!(
        out,
        "Stuck in: {}",
        describe_full(k, p.lts.graph[state].as_ref())
    );
}

/// A weak (or unfair) failure: a lasso whose repeated part the scheduler
/// may keep to, with the guaranteed entities that step in it named, so
/// that the reader can check the fairness rule on the cycle.
fn weak_lasso_lines<S: Packed>(
    out: &mut String,
    k: &Kernel,
    p: &Product<S>,
    lasso: &Lasso,
    must_step: u64,
) {
    let g = &p.lts.graph;
    let cycle_state = lasso
        .cycle
        .first()
        .map(|&e| g.edge_endpoints(e).unwrap().0)
        .unwrap_or(p.lts.initial());
    let guaranteed = p.guaranteed[cycle_state.index()] & !scopes::DEVICE;
    if guaranteed == 0 {
        let _ = writeln!(out, "A schedule that never finishes (no entity is guaranteed on it, so the scheduler may pick it):");
    } else {
        let _ = writeln!(
            out,
            "A weakly fair schedule that never finishes: guaranteed are {}; every one of them that can move all along the repeated part ({}) steps in it, yet the program never finishes.",
            entities(k, guaranteed),
            entities(k, must_step)
        );
    }
    let _ = writeln!(
        out,
        "  F (fair sets per scope) is shown before each step; the state is the one after it."
    );
    lasso_lines(out, k, p, lasso, 1, "the start state");
}

/// A strong failure: a reachable trap from which termination cannot be
/// forced, the schedule to it, and a strongly fair schedule that stays in
/// its region forever.
fn trap_lines<S: Packed>(
    out: &mut String,
    k: &Kernel,
    p: &Product<S>,
    reach: &[EdgeIndex],
    trap: NodeIndex,
    region: usize,
    stay: &Lasso,
) {
    let _ = writeln!(
        out,
        "A reachable state from which the guaranteed entities cannot force termination:"
    );
    let _ = writeln!(out, "  {}", describe_full(k, p.lts.graph[trap].as_ref()));
    let _ = writeln!(out, "Reached by:");
    if reach.is_empty() {
        let _ = writeln!(out, "  (it is the start state)");
    }
    schedule_lines(out, &steps_of(k, p, reach, 1));
    let _ = writeln!(
        out,
        "From there a scheduler can keep to {region} state{} of the product above, none of which can force termination, giving every guaranteed entity its moves. A strongly fair schedule that stays there forever:",
        if region == 1 { "" } else { "s" }
    );
    lasso_lines(out, k, p, stay, reach.len() + 1, "that state");
}

/// What an explanation shows besides the verdict and its witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Show {
    /// The program's text too (`oracle explain`).
    Program,
    /// Only the verdict and the witness: for pages that show the program
    /// once beside the explanations of its verdicts under several models
    /// (`synth explorer`).
    VerdictOnly,
}

/// The explanation of `program`'s verdict under `model`, with a witness.
/// With `opts.reductions` (those of `classify`), the verdict is decided on
/// the reduced product and a witness found there is replayed and checked
/// on the full one ([`super::replay`]); one that does not check, and
/// `Reductions::NONE`, build the full product. Either way every state of
/// the schedule shown is one of the program. Places in the sentence are
/// the program's own positions, if any.
pub fn explain(
    program: &Program,
    name: &str,
    model: &ScopedModel,
    opts: Options,
    show: Show,
) -> Result<String, KernelError> {
    let places = Places::of_program(program);
    explain_with(program, name, model, opts, show, &places).map(|e| e.text)
}

/// [`explain`] with the places of the user's source (a shader's lines),
/// and the sentence and witness steps apart.
pub fn explain_with(
    program: &Program,
    name: &str,
    model: &ScopedModel,
    opts: Options,
    show: Show,
    places: &Places,
) -> Result<Explained, KernelError> {
    let parts = Parts {
        program,
        name,
        model,
        with_program: show == Show::Program,
        places,
    };
    let full = Kernel::new(program, model, Reductions::NONE)?;
    if opts.reductions != Reductions::NONE {
        // Symmetry's states stand for several of the program's, and the
        // lean tables' chains skip states: the witness's product keeps
        // every state it reaches, each one of the program's.
        let red = Reductions {
            symmetry: false,
            chains: Chains::Never,
            ..opts.reductions
        };
        let k = Kernel::new(program, model, red)?;
        if k.words == full.words {
            let reduced =
                with_words!(k.words, explain_reduced(&parts, &k, &full, opts.max_states))?;
            if let Some(e) = reduced {
                return Ok(e);
            }
        }
    }
    with_words!(full.words, explain_w(&parts, &full, opts.max_states))
}
