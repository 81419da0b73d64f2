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
use crate::campaign::suite::{load_suite, select};
use crate::campaign::{env, finish, input, Failure};
use crate::mapping::Mapping;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What a finished campaign did.
pub struct Summary {
    pub name: String,
    pub runs: usize,
    pub ran_now: usize,
    pub non_terminating: usize,
    pub files: Vec<PathBuf>,
}

/// The flags that only some targets take, checked; the mappings, sorted,
/// each named once.
fn check_args(args: &RunArgs) -> Result<Vec<Mapping>, Failure> {
    if args.target == RunTarget::Webgpu {
        return Err(input(crate::campaign::build::WEBGPU_IS_IMPORTED));
    }
    if args.os_threads.is_some() && args.target != RunTarget::Cpp {
        return Err(input("--os-threads is for the cpp target"));
    }
    if !args.nvcc_flags.is_empty() && args.target != RunTarget::Cuda {
        return Err(input("--nvcc-flag is for the cuda target"));
    }
    if args.cuda_on_cpu && args.target != RunTarget::Cuda {
        return Err(input("--cuda-on-cpu is for the cuda target"));
    }
    let mut mappings = args.mappings.clone();
    mappings.sort();
    mappings.dedup();
    if mappings.len() != args.mappings.len() {
        return Err(input("a mapping is named twice in --mappings"));
    }
    Ok(mappings)
}

/// The journal at `path`, a new session begun in it: a new journal for a
/// new campaign, or with `--resume` the one there, if it is of the same
/// `campaign`, its torn last line (if any) cut off.
fn open_journal(args: &RunArgs, path: &Path, campaign: &Value) -> Result<journal::Writer, Failure> {
    std::fs::create_dir_all(&args.out)
        .map_err(|e| env(format!("{}: cannot create: {e}", args.out.display())))?;
    let mut writer = if path.exists() {
        if !args.resume {
            return Err(input(format!(
                "{}: a campaign is already journaled here: pass --resume to continue it, or choose another --out or --name",
                path.display()
            )));
        }
        let contents = journal::read(path).map_err(input)?;
        if contents.campaign() != campaign {
            return Err(input(format!(
                "{}: the journaled campaign differs from this command's, so its runs cannot be counted together:\n  journal: {}\n  command: {}",
                path.display(),
                contents.campaign(),
                campaign
            )));
        }
        if let Some(torn) = &contents.torn {
            eprintln!(
                "note: {}: cutting off the torn last line `{}` (a run interrupted while being recorded; it will be run again)",
                path.display(),
                torn.escape_debug()
            );
        }
        journal::Writer::resume(path, contents.complete_len).map_err(env)?
    } else {
        if args.resume {
            eprintln!(
                "note: no journal at {}: starting the campaign",
                path.display()
            );
        }
        journal::Writer::create(path, campaign).map_err(env)?
    };
    writer
        .append(&Entry::Session(Session {
            started_unix_ms: journal::now_unix_ms(),
        }))
        .map_err(env)?;
    Ok(writer)
}

/// The whole command; see the module doc.
pub fn run(args: &RunArgs) -> Result<Summary, Failure> {
    let mappings = check_args(args)?;
    let name = args.name.clone().unwrap_or_else(|| default_name(args));
    check_name(&name)?;
    let mut tests = load_suite(&args.suite)?;
    if let Some(list) = &args.only {
        tests = select(tests, list, &args.suite)?;
    }
    let source = build::source(args, &tests, &mappings)?;
    let hash = source.hash();
    let campaign = campaign(args, &name, &tests, &hash);
    let p = paths(&args.out, &name);

    // The compiler and the device first: a missing one should not leave a
    // journal behind.
    let exe = build::build(args, &source, &hash)?;
    let device = build::device_info(args, &exe)?;

    let mut writer = open_journal(args, &p.journal, &campaign)?;
    let contents = journal::read(&p.journal).map_err(input)?;
    let done = execute::recorded(&contents, &p.journal, &tests, &mappings, args.iterations)?;
    let pending = execute::pending(&tests, &args.mappings, args.iterations, &done);
    let total = tests.len() * args.mappings.len() * args.iterations as usize;
    let already = contents.results().count();
    let mut progress = Progress::new(total, already);
    execute::run_pending(args, &exe, &pending, &mut writer, &mut progress)?;
    drop(writer);

    let contents = journal::read(&p.journal).map_err(input)?;
    let runs = contents.results().count();
    if runs != total {
        return Err(env(format!(
            "{}: {runs} of {total} runs journaled after the campaign",
            p.journal.display()
        )));
    }
    let files = write_results(&args.out, args.target, &name, &tests, &contents, device)?;
    Ok(Summary {
        name,
        runs,
        ran_now: runs - already,
        non_terminating: contents.results().filter(|r| !r.terminated).count(),
        files,
    })
}

/// `backends run`.
pub fn main(args: &RunArgs) -> ExitCode {
    finish(run(args), |s| {
        format!(
            "{}: {} runs ({} now), {} did not terminate; wrote {} files under {}",
            s.name,
            s.runs,
            s.ran_now,
            s.non_terminating,
            s.files.len(),
            args.out.display()
        )
    })
}
