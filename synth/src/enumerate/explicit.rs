//! The explicit engine: every program of a unit, one by one.
//!
//! Programs are generated position by position (thread 0 first) with the
//! location of each instruction at most one above the highest used so far
//! (first-use order, so each test up to location renaming is generated once)
//! and only instructions allowed by the meaningful-comparisons rule. Each
//! complete program goes through [`crate::enumerate::constraints::check`]: the cheap
//! syntactic clauses first, then the state-space clauses on buffers reused
//! from program to program ([`crate::enumerate::space_check`], the same
//! answer as the definition, which builds `progress_litmus`'s general
//! state space).
//! Units are independent and run in parallel (see [`mod@crate::enumerate`]).

use crate::enumerate::config::Config;
use crate::enumerate::constraints;
use crate::enumerate::program::{positions, shapes, Unit};
use crate::enumerate::progress::Progress;
use crate::enumerate::space_check::SpaceCheck;
use progress_litmus::axb::test::{Instr, Test};

/// Every test of the configuration in `unit`, in generation order.
pub fn enumerate_unit(unit: &Unit, cfg: &Config, progress: &Progress) -> Vec<Test> {
    let pos = positions(&unit.lens);
    let choices: Vec<Vec<Instr>> = pos
        .iter()
        .map(|&(t, pc)| shapes(unit.lens[t], pc, cfg.values))
        .collect();
    let mut test = Test {
        threads: unit
            .lens
            .iter()
            .map(|&len| vec![unit.first(); len])
            .collect(),
    };
    for (&(t, pc), &i) in pos.iter().zip(&unit.prefix) {
        test.threads[t][pc] = i;
    }
    let mut search = Search {
        cfg,
        pos: &pos,
        choices: &choices,
        found: Vec::new(),
        pending: 0,
        progress,
        space: SpaceCheck::new(),
    };
    // The first instructions are the unit's prefix (in first-use order).
    search.go(&mut test, unit.prefix.len(), unit.used_locs());
    progress.add(search.pending, 0);
    search.found
}

struct Search<'a> {
    cfg: &'a Config,
    pos: &'a [(usize, usize)],
    choices: &'a [Vec<Instr>],
    found: Vec<Test>,
    /// Programs examined since the last report to `progress`.
    pending: u64,
    progress: &'a Progress,
    space: SpaceCheck,
}

impl Search<'_> {
    /// Fills positions `p..` given that locations `0..used` are in use.
    fn go(&mut self, test: &mut Test, p: usize, used: usize) {
        if p == self.pos.len() {
            self.pending += 1;
            if constraints::check_program(test, self.cfg).is_ok()
                && self.space.satisfies(test, self.cfg)
            {
                self.found.push(test.clone());
                self.progress.add(0, 1);
            }
            if self.pending >= 1 << 14 {
                self.progress.add(self.pending, 0);
                self.pending = 0;
            }
            return;
        }
        let (t, pc) = self.pos[p];
        let max_loc = used.min(self.cfg.locs - 1);
        for loc in 0..=max_loc {
            for k in 0..self.choices[p].len() {
                test.threads[t][pc] = Instr {
                    loc: loc as u8,
                    ..self.choices[p][k]
                };
                self.go(test, p + 1, used.max(loc + 1));
            }
        }
    }
}
