//! `backends run`: a campaign of a suite on this machine's CPU (`cpp`), an
//! NVIDIA GPU (`cuda`) or any Vulkan device (`vulkan`).
//!
//! The suite becomes one program, compiled once ([`crate::campaign::build`]).
//! Every test x mapping x iteration is then run by that program, each
//! result journaled the moment it arrives ([`crate::campaign::execute`]);
//! an interrupted campaign continues with `--resume`. When every run is
//! journaled, the results are written from the journal
//! ([`crate::campaign::output`]): artifact-format CSVs and the device file.

use crate::campaign::build;
use crate::campaign::execute::{self, Progress};
use crate::campaign::journal::{self, Entry, Session};
use crate::campaign::options::{campaign, default_name, RunArgs, RunTarget};
use crate::campaign::output::{check_name, paths, write_results};
use crate::campaign::suite::{check_tests, load_suite, select};
use crate::campaign::timing;
use crate::campaign::{env, input, Failure};
use crate::excerpt::excerpt;
use crate::mapping::Mapping;
use progress_litmus::axb::load::NamedTest;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a finished campaign did.
pub struct Summary {
    pub name: String,
    pub runs: usize,
    pub ran_now: usize,
    pub non_terminating: usize,
    pub files: Vec<PathBuf>,
    /// Mappings whose deadline may have cut slow runs short
    /// ([`crate::campaign::timing`]).
    pub warnings: Vec<String>,
}

/// The flags that only some targets take, checked; the mappings, sorted,
/// each named once.
fn check_args(args: &RunArgs) -> Result<Vec<Mapping>, Failure> {
    let facts = args.target.facts();
    if !facts.runs_here {
        return Err(input(crate::campaign::options::WEBGPU_IS_IMPORTED));
    }
    if args.os_threads.is_some() && !facts.os_threads {
        return Err(input("--os-threads is for the cpp target"));
    }
    if !args.nvcc_flags.is_empty() && !facts.cuda {
        return Err(input("--nvcc-flag is for the cuda target"));
    }
    if args.cuda_on_cpu && !facts.cuda {
        return Err(input("--cuda-on-cpu is for the cuda target"));
    }
    if args.no_canary && !facts.canary {
        return Err(input(format!(
            "--no-canary is for the targets whose program runs a canary ({}); the {} program has none",
            crate::campaign::options::run_targets_where(|f| f.canary),
            facts.name
        )));
    }
    if progress_litmus::io::is_stdout(&args.out) {
        return Err(input(
            "--out -: run writes a directory of results (CSVs, journal, device file), not one stream; give a directory",
        ));
    }
    let given = args.mapping_list();
    let mut mappings = given.clone();
    mappings.sort();
    mappings.dedup();
    if mappings.len() != given.len() {
        return Err(input("a mapping is named twice in --mappings"));
    }
    Ok(mappings)
}

/// Refuses, before the compile, an `--instances` the cpp program would
/// refuse at its first run: it counts workgroups (threads x instances) in 32
/// bits, and `--instances 4294967295` failed only after the compile, with
/// the program's usage text and exit status 1.
fn check_instances(
    args: &RunArgs,
    tests: &[NamedTest],
    mappings: &[Mapping],
) -> Result<(), Failure> {
    let (Some(m), RunTarget::Cpp) = (args.instances, args.target) else {
        return Ok(());
    };
    let threads = tests
        .iter()
        .map(|t| t.entry.test.num_threads())
        .max()
        .unwrap_or(0);
    for &mapping in mappings {
        let workgroups = crate::mapping::Layout::new(mapping, threads, Some(m)).workgroups();
        if workgroups > u64::from(u32::MAX) {
            return Err(input(format!(
                "--instances {m}: {workgroups} workgroups ({threads} threads x {m} instances) under {}, more than the cpp program runs ({}): lower --instances",
                mapping.name(),
                u32::MAX
            )));
        }
    }
    Ok(())
}

/// The journal at `path`, locked (a second process on the campaign is
/// refused here, before any work), and what it holds: `None` for a new
/// campaign, else (with `--resume`) its contents, checked to be of this
/// same `campaign`, every run in it checked against it
/// ([`execute::recorded`]).
fn open_journal<'t>(
    args: &RunArgs,
    path: &Path,
    campaign: &Value,
    tests: &'t [NamedTest],
    mappings: &[Mapping],
) -> Result<(journal::Locked, Option<Resumed<'t>>), Failure> {
    std::fs::create_dir_all(&args.out)
        .map_err(|e| env(format!("{}: cannot create: {e}", args.out.display())))?;
    let locked = journal::Locked::open(path).map_err(env)?;
    if locked.is_empty().map_err(env)? {
        if args.resume {
            eprintln!(
                "note: no journal at {}: starting the campaign",
                crate::excerpt::printable(&path.display().to_string())
            );
        }
        return Ok((locked, None));
    }
    if !args.resume {
        return Err(input(format!(
            "{}: a campaign is already journaled here: pass --resume to continue it, or choose another --out or --name",
            path.display()
        )));
    }
    let contents = journal::read(path).map_err(input)?;
    if contents.campaign() != campaign {
        return Err(input(format!(
            "{}:1: the journaled campaign differs from this command's, so its runs cannot be counted together:\n  journal: {}\n  command: {}",
            path.display(),
            excerpt(&contents.campaign().to_string()),
            excerpt(&campaign.to_string())
        )));
    }
    let done = execute::recorded(&contents, path, args, tests, mappings)?;
    if let Some(torn) = &contents.torn {
        eprintln!(
            "note: {}: cutting off the torn last line `{}` (a run interrupted while being recorded; it will be run again)",
            crate::excerpt::printable(&path.display().to_string()),
            excerpt(torn)
        );
    }
    Ok((locked, Some(Resumed { contents, done })))
}

/// A journal to resume: what it holds, and the runs per test and mapping.
struct Resumed<'t> {
    contents: journal::Contents,
    done: BTreeMap<(&'t str, Mapping), u32>,
}

/// The whole command; see the module doc.
pub fn run(args: &RunArgs) -> Result<Summary, Failure> {
    let mappings = check_args(args)?;
    // --no-canary is the program's flag: passed to it like any other (and
    // journaled so, as when given with --program-arg).
    let mut args = args.clone();
    if args.no_canary && !args.program_args.iter().any(|a| a == "--no-canary") {
        args.program_args.push("--no-canary".to_string());
    }
    let args = &args;
    let name = args.name.clone().unwrap_or_else(|| default_name(args));
    check_name(&name)?;
    let mut tests = load_suite(&args.suite)?;
    if let Some(list) = &args.only {
        tests = select(tests, list, &args.suite)?;
    }
    check_tests(&tests, &args.suite)?;
    check_instances(args, &tests, &mappings)?;
    let source = build::source(args, &tests, &mappings)?;
    let hash = source.hash();
    let campaign = campaign(args, &name, &tests, &hash);
    let p = paths(&args.out, &name);

    // The journal first, locked and checked, so that a second process or a
    // bad journal is refused before any work; then the compiler and the
    // device: a missing one leaves no journal behind.
    let new_out = !args.out.exists();
    let (locked, resumed) = open_journal(args, &p.journal, &campaign, &tests, &mappings)?;
    let built = build::build(args, &source).and_then(|exe| {
        let device = build::device_info(args, &exe)?;
        Ok((exe, device))
    });
    let (exe, device) = match built {
        Ok(b) => b,
        Err(e) => {
            locked.discard_if_empty();
            if new_out {
                // Only if empty: nothing of anybody else's is removed.
                let _ = std::fs::remove_dir(&args.out);
            }
            return Err(e);
        }
    };
    let (mut writer, done, already) = match resumed {
        None => (locked.start(&campaign).map_err(env)?, BTreeMap::new(), 0),
        Some(r) => (
            locked.resume(r.contents.complete_len).map_err(env)?,
            r.done,
            r.contents.results().count(),
        ),
    };
    writer
        .append(&Entry::Session(Session {
            started_unix_ms: journal::now_unix_ms(),
        }))
        .map_err(env)?;
    let pending = execute::pending(&tests, &args.mapping_list(), args.iterations, &done);
    let total = tests.len() * mappings.len() * args.iterations as usize;
    let mut progress = Progress::new(total, already);
    execute::run_pending(args, &exe, &tests, &pending, &mut writer, &mut progress)?;

    let contents = journal::read(&p.journal).map_err(input)?;
    let runs = contents.results().count();
    if runs != total {
        return Err(env(format!(
            "{}: {runs} of {total} runs journaled after the campaign",
            p.journal.display()
        )));
    }
    let files = write_results(&args.out, args.target, &name, &tests, &contents, device)?;
    drop(writer);
    Ok(Summary {
        warnings: timing::warnings(&name, &timing::per_mapping(&contents)),
        name,
        runs,
        ran_now: runs - already,
        non_terminating: contents.results().filter(|r| !r.terminated).count(),
        files,
    })
}
