//! What to synthesize: the configuration of a run and its validation.
//!
//! A configuration fixes the shape of the tests (threads, total
//! instructions, location and value ranges) and the optional filters of
//! SPEC §4 (the Alloy bounds of Table 2 and the stricter store-must-change
//! clause). Both engines take the same [`Config`], so their outputs can be
//! compared set for set.

use progress_litmus::axb::test::{MAX_LOCS, MAX_THREADS, MAX_THREAD_LEN, MAX_VALUES};
use std::fmt;

/// A synthesis configuration: `threads` threads with `instrs` instructions in
/// total, locations `0..locs`, values `0..values`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub threads: usize,
    pub instrs: usize,
    /// At most this many locations (every location `0..L'` used, `L' <= locs`).
    pub locs: usize,
    /// Values `0..values` (checks and exchanges).
    pub values: usize,
    /// Alloy's `states` bound: at most this many reachable states.
    pub max_states: Option<usize>,
    /// Alloy's `actions` bound: at most this many transitions in the
    /// program's state space (one per unfinished thread per reachable state).
    pub max_actions: Option<usize>,
    /// Every exchange must change the stored value in some execution (the
    /// public Alloy model's clause, not used for the published suite).
    pub store_must_change: bool,
}

impl Config {
    /// `threads` x `instrs` with the published defaults: 2 locations, values
    /// 0 and 1, no bounds, no store-must-change.
    pub fn new(threads: usize, instrs: usize) -> Config {
        Config {
            threads,
            instrs,
            locs: 2,
            values: 2,
            max_states: None,
            max_actions: None,
            store_must_change: false,
        }
    }

    /// The configuration with the bounds of the paper's Table 2 for the five
    /// published configurations (`None` for any other).
    pub fn with_table2_bounds(mut self) -> Option<Config> {
        let (actions, states) = match (self.threads, self.instrs) {
            (2, 2) => (8, 8),
            (2, 3) => (14, 12),
            (2, 4) | (3, 3) | (3, 4) => (16, 24),
            _ => return None,
        };
        self.max_actions = Some(actions);
        self.max_states = Some(states);
        Some(self)
    }

    /// `<N>t<M>i`, the name of the configuration and prefix of its tests.
    pub fn name(&self) -> String {
        format!("{}t{}i", self.threads, self.instrs)
    }

    /// Checks that the configuration can be represented and is not
    /// trivially empty by mistake (fewer instructions than threads, no
    /// locations, ...).
    pub fn validate(&self) -> Result<(), ConfigError> {
        use ConfigError::*;
        if self.threads == 0 {
            return Err(NoThreads);
        }
        if self.threads > MAX_THREADS {
            return Err(TooManyThreads(self.threads));
        }
        if self.instrs < self.threads {
            return Err(FewerInstrsThanThreads {
                threads: self.threads,
                instrs: self.instrs,
            });
        }
        // The longest thread of some split has instrs - (threads - 1).
        let longest = self.instrs - (self.threads - 1);
        if longest > MAX_THREAD_LEN {
            return Err(ThreadTooLong(longest));
        }
        if self.locs == 0 || self.locs > MAX_LOCS {
            return Err(BadLocs(self.locs));
        }
        if self.values == 0 || self.values > MAX_VALUES {
            return Err(BadValues(self.values));
        }
        if self.max_states == Some(0) {
            return Err(ZeroBound("--max-states"));
        }
        Ok(())
    }
}

/// Why a configuration cannot be synthesized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    NoThreads,
    TooManyThreads(usize),
    FewerInstrsThanThreads { threads: usize, instrs: usize },
    ThreadTooLong(usize),
    BadLocs(usize),
    BadValues(usize),
    ZeroBound(&'static str),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ConfigError::*;
        match self {
            NoThreads => write!(f, "--threads must be at least 1"),
            TooManyThreads(n) => write!(f, "--threads {n}: at most {MAX_THREADS} threads are supported"),
            FewerInstrsThanThreads { threads, instrs } => write!(
                f,
                "--instrs {instrs} is fewer than --threads {threads}: every thread needs at least one instruction"
            ),
            ThreadTooLong(len) => write!(
                f,
                "a thread could have {len} instructions: at most {MAX_THREAD_LEN} per thread are supported"
            ),
            BadLocs(l) => write!(f, "--locs {l}: must be between 1 and {MAX_LOCS}"),
            BadValues(v) => write!(f, "--values {v}: must be between 1 and {MAX_VALUES}"),
            ZeroBound(flag) => write!(f, "{flag} 0: no test has an empty state space (the start state always exists)"),
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_bounds_are_rejected() {
        assert_eq!(Config::new(2, 4).validate(), Ok(()));
        assert_eq!(Config::new(0, 4).validate(), Err(ConfigError::NoThreads));
        assert!(matches!(
            Config::new(3, 2).validate(),
            Err(ConfigError::FewerInstrsThanThreads { .. })
        ));
        assert!(matches!(
            Config::new(MAX_THREADS + 1, 20).validate(),
            Err(ConfigError::TooManyThreads(_))
        ));
        let mut c = Config::new(2, 4);
        c.locs = 0;
        assert_eq!(c.validate(), Err(ConfigError::BadLocs(0)));
        c.locs = 2;
        c.values = 0;
        assert_eq!(c.validate(), Err(ConfigError::BadValues(0)));
        assert!(Config::new(1, 40).validate().is_err());
    }
}
