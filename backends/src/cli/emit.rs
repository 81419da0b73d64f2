//! `backends emit`: the programs of a target for tests, suites and kernel
//! programs, written to a directory (or one file to stdout) and, with
//! `--check`, compiled ([`crate::target::emit`]).

use crate::campaign::Failure;
use crate::cli::error;
use crate::excerpt::printable;
use crate::mapping::{Mapping, MappingList};
use crate::report::format::{print, Format};
use crate::target::emit::{self, EmitOptions, Target};
use crate::target::File;
use crate::Shape;
use clap::{Args, ValueEnum};
use progress_litmus::axb::load::NamedTest;
use progress_litmus::kernel::load::{load_all, Item, NamedProgram};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum)]
enum ShapeArg {
    Switch,
    IfChain,
}

#[derive(Args)]
pub struct EmitArgs {
    /// Target language.
    #[arg(long, value_enum)]
    target: Target,
    /// Mappings of test threads to workgroups: plain, round-robin,
    /// chunked, comma-separated, or all (the default; for cpp and cuda: the
    /// default of the program). With --bare the default is plain, the one
    /// mapping the bare form is written for. `--mappings` is the same flag,
    /// as in `run`.
    #[arg(long, visible_alias = "mappings", value_name = "LIST")]
    mapping: Vec<MappingList>,
    /// Instances for round-robin and chunked (default floor(65535 / threads)).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    instances: Option<u32>,
    /// Code shape of the per-instruction dispatch.
    #[arg(long, value_enum, default_value = "switch")]
    shape: ShapeArg,
    /// cpp and cuda: the default deadline of a run, in milliseconds.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=crate::target::host::MAX_DEADLINE_MS))]
    deadline_ms: u64,
    /// cpp, cuda and webgpu: the program's (or page's) file stem and suite name (default: the input's stem).
    #[arg(long)]
    name: Option<String>,
    /// glsl and wgsl: the bare (verification) form, the program a verifier
    /// should see: the test or kernel program alone, without the stop flag,
    /// the iteration budget and the counters a run needs, with its launch in
    /// comment lines `oracle` reads (`oracle classify FILE` decides it).
    /// Not for running: nothing would end a spinning run.
    #[arg(long)]
    bare: bool,
    /// Compile or validate what was written (g++, nvcc, glslangValidator, clang++; vulkan: also builds `vkrun`; wgsl and webgpu: naga, in-process).
    #[arg(long)]
    check: bool,
    /// Tests or suites: `.ron` tests or suites, artifact `.txt` tests, `.litmus` kernel
    /// programs (cuda, glsl and wgsl only), or directories of them.
    #[arg(value_name = "TEST_OR_SUITE", required = true)]
    inputs: Vec<PathBuf>,
    /// Output directory; for cpp and cuda (one file) `-` writes the
    /// program to stdout.
    #[arg(short = 'o', long, value_name = "DIR")]
    out: PathBuf,
    /// `json`: what was written (and checked) as one JSON object on stdout
    /// (default: a line on stderr).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Loads AXB tests and kernel programs (`.litmus`), reporting every bad
/// file as `path:line:col: message`.
fn load(inputs: &[PathBuf]) -> Result<(Vec<NamedTest>, Vec<NamedProgram>), ExitCode> {
    let (items, errors) = load_all(inputs);
    if !errors.is_empty() {
        for e in &errors {
            error(&e);
        }
        return Err(ExitCode::from(2));
    }
    if items.is_empty() {
        let shown: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        error(&format!("no tests found in {}", shown.join(", ")));
        return Err(ExitCode::from(2));
    }
    let mut tests = Vec::new();
    let mut programs = Vec::new();
    for i in items {
        match i {
            Item::Axb(t) => tests.push(t),
            Item::Kernel(p) => programs.push(p),
        }
    }
    Ok((tests, programs))
}

/// The program's name: the stem of the one input (a file or a directory,
/// `.` resolved), else `tests`.
fn default_name(inputs: &[PathBuf]) -> String {
    let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().into_owned());
    match inputs {
        [one] => stem(one)
            .or_else(|| one.canonicalize().ok().as_deref().and_then(stem))
            .unwrap_or_else(|| "tests".to_string()),
        _ => "tests".to_string(),
    }
}

/// `backends emit`: exit 0 with the files written (and checked), 2 for bad
/// input or a program the target cannot express (the others still
/// written), 1 when writing or compiling fails.
pub fn run(args: EmitArgs) -> ExitCode {
    match emit_all(&args) {
        Ok(code) | Err(code) => code,
    }
}

/// The steps of `run`, each failing with its exit status: the usage
/// checked before anything is read, the inputs loaded, the files made,
/// then written (or printed) and checked, and the summary.
fn emit_all(args: &EmitArgs) -> Result<ExitCode, ExitCode> {
    let to_stdout = progress_litmus::io::is_stdout(&args.out);
    check_usage(args, to_stdout)?;
    let (tests, programs) = load(&args.inputs)?;
    let opts = options(args);
    let (files, refused) = files(&tests, &programs, &opts)?;
    if to_stdout {
        let text: String = files.iter().map(|f| f.contents.as_str()).collect();
        return Ok(printed(print(&text)));
    }
    write_and_check(args, &files, &opts)?;
    if refused > 0 {
        eprintln!(
            "wrote {} {} file(s) to {}; {refused} program(s) refused (see above)",
            files.len(),
            opts.target.name(),
            printable(&args.out.display().to_string())
        );
        return Err(ExitCode::from(2));
    }
    Ok(summary(args, &files, &opts, tests.len() + programs.len()))
}

/// `--out -` and `--check` refused where they cannot work, before any
/// input is read: stdout takes one file, and a check needs the files on
/// disk.
fn check_usage(args: &EmitArgs, to_stdout: bool) -> Result<(), ExitCode> {
    if to_stdout && !args.target.is_program() {
        eprintln!(
            "error: --out -: the {} target writes several files; give a directory",
            args.target.name()
        );
        return Err(ExitCode::from(2));
    }
    if args.bare && !args.target.emitter().has_bare() {
        eprintln!(
            "error: --bare: the bare (verification) form is written for {}, not {}",
            Target::names_where(|e| e.has_bare()),
            args.target.name()
        );
        return Err(ExitCode::from(2));
    }
    let copies = args
        .mapping
        .iter()
        .flat_map(|l| l.0.iter())
        .find(|m| **m != Mapping::Plain);
    if let (true, Some(m)) = (args.bare, copies) {
        eprintln!(
            "error: --bare --mapping {}: the bare form is the program alone, under the plain mapping (a launch of many copies of a test is a device run's layout, not the program a verifier reads)",
            m.name()
        );
        return Err(ExitCode::from(2));
    }
    if to_stdout && args.check {
        eprintln!("error: --check compiles what was written: give a directory, not --out -");
        return Err(ExitCode::from(2));
    }
    Ok(())
}

/// The library's options from the flags: the mappings of every
/// `--mapping` list once each, in the order first given.
fn options(args: &EmitArgs) -> EmitOptions {
    let mut mappings = Vec::new();
    let default = match args.bare {
        true => MappingList(vec![Mapping::Plain]),
        false => MappingList(Mapping::ALL.to_vec()),
    };
    let given = match args.mapping.is_empty() {
        true => std::slice::from_ref(&default),
        false => &args.mapping[..],
    };
    for m in given.iter().flat_map(|l| l.0.iter()) {
        if !mappings.contains(m) {
            mappings.push(*m);
        }
    }
    EmitOptions {
        target: args.target,
        mappings,
        instances: args.instances,
        shape: match args.shape {
            ShapeArg::Switch => Shape::Switch,
            ShapeArg::IfChain => Shape::IfChain,
        },
        deadline_ms: args.deadline_ms,
        program_name: args
            .name
            .clone()
            .unwrap_or_else(|| default_name(&args.inputs)),
        bare: args.bare,
    }
}

/// The AXB tests as the target writes them, then one file per kernel
/// program, with how many programs the target refused. A refused program
/// is an error line each (the others still written, exit 2 at the end);
/// an AXB test that cannot be emitted, or a kernel program's file that
/// would overwrite the tests' (as a case-insensitive file system sees
/// names), stops everything.
fn files(
    tests: &[NamedTest],
    programs: &[NamedProgram],
    opts: &EmitOptions,
) -> Result<(Vec<File>, usize), ExitCode> {
    let axb_files = if tests.is_empty() {
        Ok(Vec::new())
    } else {
        emit::files(tests, opts)
    };
    let kernel_files = if programs.is_empty() {
        Ok((Vec::new(), Vec::new()))
    } else {
        emit::kernel_files(programs, opts.target, opts.bare)
    };
    match (axb_files, kernel_files) {
        (Ok(mut a), Ok((k, errors))) => {
            for e in &errors {
                error(&e);
            }
            let folded = |f: &File| emit::case_folded(&f.path);
            if let Some(clash) = k.iter().find(|f| a.iter().any(|g| folded(g) == folded(f))) {
                error(&format!(
                    "a kernel program and the AXB tests would both be written to {}: rename one, or pass --name",
                    clash.path.display()
                ));
                return Err(ExitCode::from(2));
            }
            a.extend(k);
            Ok((a, errors.len()))
        }
        (Err(e), _) | (_, Err(e)) => {
            error(&e);
            Err(ExitCode::from(2))
        }
    }
}

/// The files written under `--out`, then (`--check`) compiled in a scratch
/// directory that is removed whatever the outcome; a compiler's
/// diagnostics are shown line by line.
fn write_and_check(args: &EmitArgs, files: &[File], opts: &EmitOptions) -> Result<(), ExitCode> {
    if let Err(e) = emit::write(&args.out, files) {
        error(&format!("cannot write to {}: {e}", args.out.display()));
        return Err(ExitCode::from(1));
    }
    if args.check {
        let scratch = args.out.join(".axb-check");
        let result = emit::check(&args.out, files, opts, &scratch);
        let _ = std::fs::remove_dir_all(&scratch);
        if let Err(e) = result {
            Failure::from(e).print();
            return Err(ExitCode::from(1));
        }
    }
    Ok(())
}

/// What was written: a line on stderr, or (`--format json`) an object on
/// stdout for tools.
fn summary(args: &EmitArgs, files: &[File], opts: &EmitOptions, count: usize) -> ExitCode {
    match args.format {
        Format::Text => {
            eprintln!(
                "wrote {} {} file(s) for {} test(s) to {}",
                files.len(),
                opts.target.name(),
                count,
                printable(&args.out.display().to_string())
            );
            if args.check {
                eprintln!("checked: the {} output compiles", opts.target.name());
            }
            ExitCode::SUCCESS
        }
        Format::Json => {
            let summary = serde_json::json!({
                "target": opts.target.name(),
                "tests": count,
                "out": args.out.display().to_string(),
                "files": files.iter().map(|f| f.path.display().to_string()).collect::<Vec<_>>(),
                "checked": args.check,
            });
            let mut text = oracle::json::to_string_pretty(&summary).expect("serializable");
            text.push('\n');
            printed(print(&text))
        }
    }
}

/// The exit status of writing to stdout: 0, or 1 with the error.
fn printed(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error(&e);
            ExitCode::from(1)
        }
    }
}
