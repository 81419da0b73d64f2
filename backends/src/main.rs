//! `backends`: progress litmus tests as GPU and CPU programs.
//!
//! A thin command-line layer over the library: each subcommand parses its
//! arguments here and calls one library function. Exit status 2 means bad
//! input (arguments, test files, tests that cannot be emitted), 1 a failure
//! of the environment (writing files, a missing or failing compiler).

use axb::load::{load_all, NamedTest};
use backends::target::emit::{self, EmitOptions, Target};
use backends::{Mapping, Shape};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "backends",
    version,
    about = "Turn progress litmus tests into GLSL/Amber, Vulkan, Metal, CUDA, C++ and WGSL programs and a WebGPU page, run them on devices, and report which progress models the devices are consistent with"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the programs of a target for tests or suites.
    Emit(EmitArgs),
    /// Run a suite on this CPU (cpp), an NVIDIA GPU (cuda), a Vulkan device (vulkan) or, with backends-wgpu, a Vulkan, Metal or D3D12 GPU (wgpu): journaled, resumable, artifact-format results.
    Run(backends::campaign::options::RunArgs),
    /// Results of a generated program run on another machine (or of the webgpu page), journaled and written as `run` would.
    Import(backends::campaign::import::ImportArgs),
    /// Which progress models each device's observations are consistent with, and the violations.
    Report(backends::report::cli::ReportArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum MappingArg {
    Plain,
    RoundRobin,
    Chunked,
    All,
}

#[derive(Clone, Copy, ValueEnum)]
enum ShapeArg {
    Switch,
    IfChain,
}

#[derive(Args)]
struct EmitArgs {
    /// Target language.
    #[arg(long, value_enum)]
    target: Target,
    /// Mapping of test threads to workgroups (for cpp and cuda: the default of the program).
    #[arg(long, value_enum, default_value = "all")]
    mapping: MappingArg,
    /// Instances for round-robin and chunked (default floor(65535 / threads)).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    instances: Option<u32>,
    /// Code shape of the per-instruction dispatch.
    #[arg(long, value_enum, default_value = "switch")]
    shape: ShapeArg,
    /// cpp and cuda: the default deadline of a run, in milliseconds.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..))]
    deadline_ms: u64,
    /// cpp, cuda and webgpu: the program's (or page's) file stem and suite name (default: the input's stem).
    #[arg(long)]
    name: Option<String>,
    /// Compile or validate what was written (g++, nvcc, glslangValidator, clang++; vulkan: also builds `vkrun`; wgsl and webgpu: naga, in-process).
    #[arg(long)]
    check: bool,
    /// Tests or suites: `.ron` tests or suites, artifact `.txt` tests, or directories of them.
    #[arg(value_name = "TEST_OR_SUITE", required = true)]
    inputs: Vec<PathBuf>,
    /// Output directory.
    #[arg(long)]
    out: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Emit(args) => emit_cmd(args),
        Command::Run(args) => backends::campaign::run::main(&args),
        Command::Import(args) => backends::campaign::import::main(&args),
        Command::Report(args) => backends::report::cli::main(&args),
    }
}

/// Loads tests, reporting every bad file as `path:line:col: message`.
fn load(inputs: &[PathBuf]) -> Result<Vec<NamedTest>, ExitCode> {
    let (tests, errors) = load_all(inputs);
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("error: {e}");
        }
        return Err(ExitCode::from(2));
    }
    if tests.is_empty() {
        let shown: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        eprintln!("error: no tests found in {}", shown.join(", "));
        return Err(ExitCode::from(2));
    }
    Ok(tests)
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

fn emit_cmd(args: EmitArgs) -> ExitCode {
    let tests = match load(&args.inputs) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let mappings = match args.mapping {
        MappingArg::Plain => vec![Mapping::Plain],
        MappingArg::RoundRobin => vec![Mapping::RoundRobin],
        MappingArg::Chunked => vec![Mapping::Chunked],
        MappingArg::All => Mapping::ALL.to_vec(),
    };
    let opts = EmitOptions {
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
    };
    let files = match emit::files(&tests, &opts) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = emit::write(&args.out, &files) {
        eprintln!("error: cannot write to {}: {e}", args.out.display());
        return ExitCode::from(1);
    }
    eprintln!(
        "wrote {} {} file(s) for {} test(s) to {}",
        files.len(),
        opts.target.name(),
        tests.len(),
        args.out.display()
    );
    if args.check {
        let scratch = args.out.join(".axb-check");
        let result = emit::check(&args.out, &files, &opts, &scratch);
        let _ = std::fs::remove_dir_all(&scratch);
        if let Err(e) = result {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
        eprintln!("checked: the {} output compiles", opts.target.name());
    }
    ExitCode::SUCCESS
}
