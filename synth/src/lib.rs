//! # synth: complete enumeration of progress litmus tests
//!
//! Given a configuration (N threads, M instructions, L locations, V values;
//! [`Config`]) this crate finds *every* AXB test that satisfies the synthesis
//! constraints of SPEC §4, each once up to location renaming, in a canonical
//! order that depends only on the set. Two engines compute the same set:
//!
//! - [`Engine::Sat`]: a varisat encoding of programs, their state spaces and
//!   the constraints, enumerated with blocking clauses
//!   ([`enumerate::sat`]);
//! - [`Engine::Explicit`]: program-by-program enumeration on
//!   `progress_litmus`'s state-space builder ([`enumerate::explicit`]).
//!
//! Both split the search space into the same
//! [`enumerate::program::Unit`]s, run units in parallel (rayon) and check
//! every test with the one constraint checker ([`enumerate::constraints`]).
//! Sharding ([`enumerate::shard`]) runs a subset of units.
//!
//! [`find`] is targeted synthesis: tests with a required verdict vector,
//! found by a counterexample-guided loop over the SAT encoding without
//! enumerating the configuration.
//!
//! [`cli`] is the command line of the `synth` binary, one file per
//! subcommand; the rest of the crate is the library it calls.

pub mod checksum;
pub mod cli;
pub mod enumerate;
pub mod estimate;
pub mod explorer;
pub mod find;
pub mod idioms;
pub mod plan;
pub mod suites;
pub mod table;

pub use enumerate::{
    check, default_engine, enumerate, enumerate_resumable, enumerate_with, new_progress, satisfies,
    shard_units, Config, ConfigError, Engine, Progress, Shard, Violation,
};
