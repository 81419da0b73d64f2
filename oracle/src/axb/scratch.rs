//! A worker's buffers, reused from test to test: the shared space
//! ([`crate::axb::shared_space`]), the explorer that fills it and the verdict
//! rules' work arrays ([`crate::axb::decide`]). It sits above both so that
//! neither needs the other's buffers (the decider reads the space; the
//! space knows nothing of the decider).

use crate::axb::decide::Work;
use crate::axb::shared_space::{Builder, Space};
use progress_litmus::axb::space::TooLarge;
use progress_litmus::Test;

/// Buffers reused from test to test by one worker.
#[derive(Default)]
pub struct Scratch {
    pub space: Space,
    builder: Builder,
    /// Buffers of the verdict rules (see [`crate::axb::decide`]).
    pub(crate) work: Work,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch::default()
    }

    /// Builds the shared space of `test` into `self.space`, giving up once
    /// it has more than `max_states` states.
    pub fn build(&mut self, test: &Test, max_states: usize) -> Result<&Space, TooLarge> {
        self.builder.build(test, max_states, &mut self.space)?;
        Ok(&self.space)
    }
}
