//! Writing a run's tests: one RON suite, or a directory of artifact-format
//! files. Both are pure functions of the test set, so a run's output has the
//! same bytes whatever the engine, the core count or the sharding.

use crate::canon::name_tests;
use crate::config::Config;
use crate::shard::{note, Shard};
use axb::suite::Suite;
use axb::test::Test;
use std::path::Path;

/// The note of a suite: what was enumerated, independent of the engine.
pub fn describe(cfg: &Config) -> String {
    let mut s = format!(
        "synth: every test of {} threads, {} instructions, at most {} locations, values 0..{}",
        cfg.threads,
        cfg.instrs,
        cfg.locs,
        cfg.values - 1
    );
    if let Some(b) = cfg.max_states {
        s += &format!(", at most {b} states");
    }
    if let Some(b) = cfg.max_actions {
        s += &format!(", at most {b} actions");
    }
    if cfg.store_must_change {
        s += ", every exchange changes memory";
    }
    s += " (SPEC 4), up to location renaming";
    s
}

/// The suite `<N>t<M>i` of sorted canonical `tests`, named `<N>t<M>i_<k>`.
pub fn to_suite(cfg: &Config, tests: Vec<Test>, shard: Option<Shard>) -> Suite {
    let name = cfg.name();
    Suite {
        note: note(&describe(cfg), shard),
        tests: name_tests(&name, tests),
        name,
    }
}

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One RON suite file.
    Ron,
    /// A directory with one artifact-format `.txt` file per test.
    Txt,
}

/// Writes `suite` to `path` in `format`. For `Txt`, `path` is a directory,
/// created if needed; stale `<suite>_<k>.txt` files of an earlier, larger
/// run are removed so the directory holds exactly this suite (no other
/// file is touched).
pub fn write(suite: &Suite, path: &Path, format: Format) -> std::io::Result<()> {
    match format {
        Format::Ron => std::fs::write(path, axb::load::suite_to_ron(suite)),
        Format::Txt => {
            std::fs::create_dir_all(path)?;
            let prefix = format!("{}_", suite.name);
            for e in std::fs::read_dir(path)? {
                let e = e?;
                let name = e.file_name().to_string_lossy().into_owned();
                let ours = name
                    .strip_prefix(&prefix)
                    .and_then(|r| r.strip_suffix(".txt"))
                    .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
                if ours
                    && !suite
                        .tests
                        .iter()
                        .any(|t| format!("{}.txt", t.name) == name)
                {
                    std::fs::remove_file(e.path())?;
                }
            }
            for t in &suite.tests {
                std::fs::write(
                    path.join(format!("{}.txt", t.name)),
                    axb::text::print(&t.test),
                )?;
            }
            Ok(())
        }
    }
}
