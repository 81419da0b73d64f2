//! A worker's buffers, reused from test to test: the shared space
//! ([`crate::shared_space`]), the explorer that fills it and the verdict
//! rules' work arrays ([`crate::decide`]). It sits above both so that
//! neither needs the other's buffers (the decider reads the space; the
//! space knows nothing of the decider).

use crate::decide::Work;
use crate::shared_space::{Builder, Space};
use axb::space::TooLarge;
use axb::Test;

/// Buffers reused from test to test by one worker.
#[derive(Default)]
pub struct Scratch {
    pub space: Space,
    builder: Builder,
    /// Buffers of the verdict rules (see [`crate::decide`]).
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
