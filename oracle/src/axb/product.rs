//! The product of a test with a progress model (SPEC §3): states are
//! (memory, pcs, threads that have signalled Terminate, F); transitions are
//! Steps (labelled with F as it was before the step) and Terminates. The
//! final "all done" transition of the all-terminated state is implicit:
//! [`Product::all_done`] tells which states have it.

use crate::axb::fair_set::{self, ThreadSet};
use petgraph::graph::NodeIndex;
use progress_litmus::axb::machine::{Machine, PState};
use progress_litmus::axb::space::{explore_bounded, Lts, TooLarge};
use progress_litmus::{Base, Test};

/// A state of the product space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// Memory and pcs (see [`progress_litmus::axb::machine`]).
    pub prog: PState,
    /// Threads that have signalled Terminate.
    pub terminated: ThreadSet,
    /// Threads currently guaranteed fair execution.
    pub f: ThreadSet,
}

/// A transition of the product space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// `thread` executed its instruction `pc`; `f` is F before the step.
    Step {
        thread: u8,
        pc: u8,
        taken: bool,
        f: ThreadSet,
    },
    /// `thread`, at END, signalled that it is done; `f` is F before.
    Terminate { thread: u8, f: ThreadSet },
}

impl Event {
    /// The thread that moves.
    pub fn thread(&self) -> usize {
        match *self {
            Event::Step { thread, .. } | Event::Terminate { thread, .. } => thread as usize,
        }
    }

    /// F before the event.
    pub fn fair(&self) -> ThreadSet {
        match *self {
            Event::Step { f, .. } | Event::Terminate { f, .. } => f,
        }
    }

    pub fn is_step(&self) -> bool {
        matches!(self, Event::Step { .. })
    }
}

/// The reachable product space of a test and a base model (the weak and
/// strong variants of a model share it).
pub struct Product {
    pub base: Base,
    pub machine: Machine,
    pub lts: Lts<State, Event>,
    all: ThreadSet,
}

impl Product {
    /// The product space of `test` and `base` (unbounded).
    pub fn build(test: &Test, base: Base) -> Product {
        Product::build_bounded(test, base, usize::MAX).expect("unbounded")
    }

    /// The product space, or [`TooLarge`] past `max_states` states.
    pub fn build_bounded(test: &Test, base: Base, max_states: usize) -> Result<Product, TooLarge> {
        let machine = Machine::new(test);
        let n = machine.num_threads();
        let all = ((1u16 << n) - 1) as ThreadSet;
        let init = State {
            prog: machine.initial(),
            terminated: 0,
            f: fair_set::initial(base, n),
        };
        let lts = explore_bounded(init, max_states, |s: State, emit| {
            for t in 0..n {
                let bit = 1 << t;
                if s.terminated & bit != 0 {
                    continue;
                }
                match machine.step(s.prog, t) {
                    Some((prog, info)) => emit(
                        Event::Step {
                            thread: t as u8,
                            pc: info.pc as u8,
                            taken: info.taken,
                            f: s.f,
                        },
                        State {
                            prog,
                            terminated: s.terminated,
                            f: fair_set::after_step(base, s.f, t, s.terminated),
                        },
                    ),
                    None => {
                        let terminated = s.terminated | bit;
                        emit(
                            Event::Terminate {
                                thread: t as u8,
                                f: s.f,
                            },
                            State {
                                prog: s.prog,
                                terminated,
                                f: fair_set::after_terminate(base, s.f, t, n, terminated),
                            },
                        )
                    }
                }
            }
        })?;
        Ok(Product {
            base,
            machine,
            lts,
            all,
        })
    }

    pub fn state(&self, n: NodeIndex) -> State {
        self.lts.graph[n]
    }

    /// Whether every thread has terminated in `n`: the state with the final
    /// "all done" transition.
    pub fn all_done(&self, n: NodeIndex) -> bool {
        self.lts.graph[n].terminated == self.all
    }

    /// `Mem=[..] pc=[..] term={..} F={..}` for people.
    pub fn describe(&self, n: NodeIndex, locs: usize) -> String {
        let s = self.state(n);
        format!(
            "{} term={} F={}",
            self.machine.describe(s.prog, locs),
            fair_set::show(s.terminated),
            fair_set::show(s.f)
        )
    }
}
