//! # Enumeration: every test of a configuration
//!
//! A configuration ([`config`]) splits into units of programs
//! ([`program`]); each is searched by the SAT engine ([`sat`]) or the
//! explicit one ([`explicit`]), every test checked against SPEC §4
//! ([`constraints`]) and kept once up to location renaming ([`canon`]);
//! finished units are journaled ([`checkpoint`]), runs can be sharded
//! ([`shard`]), and the result is written by [`output`] with progress on
//! stderr ([`progress`]).

pub mod canon;
pub mod checkpoint;
pub mod config;
pub mod constraints;
pub mod explicit;
pub mod output;
pub mod program;
pub mod progress;
pub mod sat;
pub mod shard;
pub mod space_check;

pub use config::{Config, ConfigError};
pub use constraints::{check, satisfies, Violation};
pub use progress::Progress;
pub use shard::Shard;

use progress_litmus::axb::test::Test;
use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

/// Which engine enumerates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    Sat,
    Explicit,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sat => "sat",
            Engine::Explicit => "explicit",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> Result<Engine, String> {
        match s {
            "sat" => Ok(Engine::Sat),
            "explicit" => Ok(Engine::Explicit),
            _ => Err(format!(
                "unknown engine `{s}`: expected `sat` or `explicit`"
            )),
        }
    }
}

/// The faster engine for a configuration, chosen from the measurements in
/// the crate's README: the explicit engine pays per candidate program, the
/// SAT engine per test found plus a per-instance cost, so SAT wins only once
/// programs vastly outnumber tests.
pub fn default_engine(cfg: &Config) -> Engine {
    let _ = cfg;
    Engine::Explicit
}

/// Every test of `cfg` with the default engine, canonical and sorted.
pub fn enumerate(cfg: &Config) -> Result<Vec<Test>, ConfigError> {
    let engine = default_engine(cfg);
    cfg.validate()?;
    enumerate_with(cfg, engine, None, &new_progress(cfg, engine, None))
}

/// The pieces of work of `cfg` that `shard` owns (all units for `None`),
/// in order, with their positions among all pieces of the split (see
/// [`shard::pieces`]).
fn indexed_units(cfg: &Config, shard: Option<Shard>) -> Vec<(usize, program::Unit)> {
    shard::owned(cfg, shard)
}

/// The pieces of work of `cfg` that `shard` owns (all units for `None`), in
/// order.
pub fn shard_units(cfg: &Config, shard: Option<Shard>) -> Vec<program::Unit> {
    indexed_units(cfg, shard)
        .into_iter()
        .map(|(_, u)| u)
        .collect()
}

/// Counters for a run: the explicit engine counts programs (out of the size
/// of the search space), the SAT engine counts units. `cfg` must be valid.
pub fn new_progress(cfg: &Config, engine: Engine, shard: Option<Shard>) -> Progress {
    let units = shard_units(cfg, shard);
    match engine {
        Engine::Explicit => Progress::new(
            "programs",
            units.iter().map(|u| program::unit_size(u, cfg)).sum(),
        ),
        Engine::Sat => Progress::new("units", units.len() as f64),
    }
}

/// Every test of `cfg` in the units of `shard` (all units if `None`) with
/// `engine`: canonical representatives up to location renaming, sorted.
/// `progress` counts units done and tests found.
pub fn enumerate_with(
    cfg: &Config,
    engine: Engine,
    shard: Option<Shard>,
    progress: &Progress,
) -> Result<Vec<Test>, ConfigError> {
    cfg.validate()?;
    Ok(run_units(cfg, engine, shard, progress, None).expect("only a journal can fail"))
}

/// [`enumerate_with`], recording every finished unit in `journal` and
/// skipping the units it already holds (see [`checkpoint`]).
pub fn enumerate_resumable(
    cfg: &Config,
    engine: Engine,
    shard: Option<Shard>,
    progress: &Progress,
    journal: &checkpoint::Journal,
) -> Result<Vec<Test>, String> {
    cfg.validate().map_err(|e| e.to_string())?;
    run_units(cfg, engine, shard, progress, Some(journal))
}

fn run_units(
    cfg: &Config,
    engine: Engine,
    shard: Option<Shard>,
    progress: &Progress,
    journal: Option<&checkpoint::Journal>,
) -> Result<Vec<Test>, String> {
    let units = indexed_units(cfg, shard);
    let per_unit: Result<Vec<Vec<Test>>, String> = units
        .par_iter()
        .map(|(k, u)| {
            if let Some(tests) = journal.and_then(|j| j.done(*k)) {
                let work = match engine {
                    Engine::Explicit => program::unit_size(u, cfg) as u64,
                    Engine::Sat => 1,
                };
                progress.add(work, tests.len() as u64);
                return Ok(tests.clone());
            }
            let found = match engine {
                Engine::Explicit => explicit::enumerate_unit(u, cfg, progress),
                Engine::Sat => sat::enumerate_unit(u, cfg),
            };
            if engine == Engine::Sat {
                progress.add(1, found.len() as u64);
            }
            if let Some(j) = journal {
                j.record(*k, &found)?;
            }
            Ok(found)
        })
        .collect();
    Ok(canon::canonical_set(per_unit?.into_iter().flatten()))
}
