//! The byte budget of a state bound, one rule for every exploration of a
//! kernel program: the oracle's checker (`oracle::kernel`) and the shader
//! frontend's value check ([`crate::kernel::shader::values`]).

/// Bytes of tables a bound of one state allows: a check under
/// `max_states` holds at most `max_states * BYTES_PER_STATE` bytes of
/// state space (the product, its transitions, its index and the per-state
/// tables of the verdict rules, counted by capacity), and at least
/// [`MIN_BUDGET`]. In the lean tables a state is charged about 100 to 150
/// bytes with the rules' tables (more with more invocations, which have
/// more transitions; the full product of witnesses 100 to 250), so the
/// budget, not the state count, is what stops a large program (issue 20
/// item 3: 2 workgroups of 8 invocations aborted the process at 3.4 GB
/// under a count alone; issue 46: the value check of 8 invocations doing
/// 30 `atomicAdd`s reached 3 GB under the count alone).
pub const BYTES_PER_STATE: usize = 100;

/// The smallest budget: small bounds stay bounds on states.
pub const MIN_BUDGET: usize = 16 << 20;

/// The byte budget of a check under `max_states` (see [`BYTES_PER_STATE`]).
pub fn budget(max_states: usize) -> usize {
    max_states.saturating_mul(BYTES_PER_STATE).max(MIN_BUDGET)
}
