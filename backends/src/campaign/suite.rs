//! The suite of a campaign: its tests, loaded (every file readable) and
//! selected by a list of names, and its paths as messages show them and
//! as a campaign records them.

use crate::campaign::{input, Failure};
use crate::target::host::{self, ProgramError};
use progress_litmus::axb::load::{load_all, NamedTest};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The suite paths as one string for messages: `a, b`.
pub(crate) fn show_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The suite paths as recorded in a campaign: a string for one path (as
/// journals have always had it), a list for several.
pub(crate) fn suite_json(paths: &[PathBuf]) -> Value {
    match paths {
        [one] => Value::String(one.display().to_string()),
        _ => paths.iter().map(|p| p.display().to_string()).collect(),
    }
}

/// Checks that `tests` (of `suite`) can be one campaign: at least one,
/// names unique, every name one the programs, journals and CSVs carry
/// ([`crate::target::names`]). Done before anything is built or run, so
/// that no campaign fails on a name after its work is done.
pub(crate) fn check_tests(tests: &[NamedTest], suite: &[PathBuf]) -> Result<(), Failure> {
    host::check_names(tests).map_err(|e| match e {
        ProgramError::Empty => input(format!("{}: no tests found", show_paths(suite))),
        e => input(e.to_string()),
    })
}

/// The tests of a suite, every file readable.
pub(crate) fn load_suite(suite: &[PathBuf]) -> Result<Vec<NamedTest>, Failure> {
    if let Some(missing) = suite.iter().find(|p| !p.exists()) {
        return Err(input(format!(
            "{}: no such file or directory",
            missing.display()
        )));
    }
    let (tests, errors) = load_all(suite);
    if !errors.is_empty() {
        let msgs: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(input(msgs.join("\n")));
    }
    Ok(tests)
}

/// The tests of `suite` named in the file `list` (one name per line; blank
/// lines and `#` comments skipped), in the suite's order. A name that is
/// not in the suite is an error naming the line.
pub(crate) fn select(
    tests: Vec<NamedTest>,
    list: &Path,
    suite: &[PathBuf],
) -> Result<Vec<NamedTest>, Failure> {
    let text = std::fs::read_to_string(list)
        .map_err(|e| input(format!("{}: cannot read: {e}", list.display())))?;
    let known: BTreeSet<&str> = tests.iter().map(|t| t.name.as_str()).collect();
    let mut wanted = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let name = line.trim();
        if name.is_empty() || name.starts_with('#') {
            continue;
        }
        if !known.contains(name) {
            return Err(input(format!(
                "{}:{}: no test named `{}` in {}",
                list.display(),
                n + 1,
                crate::excerpt::excerpt(name),
                show_paths(suite)
            )));
        }
        wanted.insert(name.to_string());
    }
    if wanted.is_empty() {
        return Err(input(format!("{}: names no test", list.display())));
    }
    Ok(tests
        .into_iter()
        .filter(|t| wanted.contains(&t.name))
        .collect())
}
