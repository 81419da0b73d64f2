//! `backends`: progress litmus tests as GPU and CPU programs.
//!
//! A thin command-line layer over the library: each subcommand parses its
//! arguments here and calls one library function. Exit status 2 means bad
//! input or usage (arguments, test files, tests that cannot be emitted,
//! journals, results), 1 everything else (writing files, a missing or
//! failing compiler, device or program); see [`EXIT_STATUS`].

use backends::excerpt::printable;
use backends::mapping::MappingList;
use backends::report::cli::Format;
use backends::target::emit::{self, EmitOptions, Target};
use backends::Shape;
use clap::{Args, Parser, Subcommand, ValueEnum};
use progress_litmus::axb::load::NamedTest;
use progress_litmus::kernel::load::{load_all, Item, NamedProgram};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The exit statuses, as every `--help` shows them.
const EXIT_STATUS: &str = "Exit status: 0 success; 2 bad input or usage (arguments, test files, \
suites, journals, result files); 1 anything else (a missing or failing compiler, device or \
program, a file that cannot be written). Errors are one `error:` line per problem on stderr, \
naming the file and line where there is one; progress and status go to stderr, data \
(`--format json`, `report`, `emit -o -`) to stdout.";

/// `--help` of the commands that print verdicts: the words, then the
/// exit statuses (`-h` shows the exit statuses only).
fn words_and_exit_status() -> String {
    format!("Words:\n{}\n\n{EXIT_STATUS}", backends::glossary::text())
}

#[derive(Parser)]
#[command(
    name = "backends",
    version,
    about = "Turn progress litmus tests into GLSL/Amber, Vulkan, Metal, CUDA, C++ and WGSL programs and a WebGPU page, run them on devices, and report which progress models the devices are consistent with",
    after_help = EXIT_STATUS
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the programs of a target for tests or suites.
    #[command(after_help = EXIT_STATUS)]
    Emit(EmitArgs),
    /// Run a suite on this CPU (cpp), an NVIDIA GPU (cuda), a Vulkan device (vulkan) or, with backends-wgpu, a Vulkan, Metal or D3D12 GPU (wgpu): journaled, resumable, artifact-format results.
    #[command(after_help = EXIT_STATUS)]
    Run(backends::campaign::options::RunArgs),
    /// Results of a generated program run on another machine (or of the webgpu page), journaled and written as `run` would.
    #[command(after_help = EXIT_STATUS)]
    Import(backends::campaign::import::ImportArgs),
    /// Which progress models each device's observations are consistent with, and the violations.
    #[command(after_help = EXIT_STATUS, after_long_help = words_and_exit_status())]
    Report(backends::report::cli::ReportArgs),
    /// The results database (SQLite): import result files, export CSVs.
    #[command(after_help = EXIT_STATUS)]
    Db(backends::report::db_cli::DbArgs),
    /// A static results site from the database: the device x model matrix and a page per device.
    #[command(after_help = EXIT_STATUS, after_long_help = words_and_exit_status())]
    Site(backends::report::site::SiteArgs),
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
    /// Mappings of test threads to workgroups: plain, round-robin,
    /// chunked, comma-separated, or all (for cpp and cuda: the default of
    /// the program). `--mappings` is the same flag, as in `run`.
    #[arg(
        long,
        visible_alias = "mappings",
        value_name = "LIST",
        default_value = "all"
    )]
    mapping: Vec<MappingList>,
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Emit(args) => emit_cmd(args),
        Command::Run(args) => backends::campaign::run::main(&args),
        Command::Import(args) => backends::campaign::import::main(&args),
        Command::Report(args) => backends::report::cli::main(&args),
        Command::Db(args) => backends::report::db_cli::main(&args),
        Command::Site(args) => backends::report::site::main(&args),
    }
}

/// Prints an error line, escaped: a message may quote a file name or an
/// input (`backends::excerpt::printable`).
fn error(e: &dyn std::fmt::Display) {
    eprintln!("error: {}", printable(&e.to_string()));
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

fn emit_cmd(args: EmitArgs) -> ExitCode {
    let to_stdout = args.out.as_os_str() == "-";
    if to_stdout && !matches!(args.target, Target::Cpp | Target::Cuda) {
        eprintln!(
            "error: --out -: the {} target writes several files; give a directory",
            args.target.name()
        );
        return ExitCode::from(2);
    }
    if to_stdout && args.check {
        eprintln!("error: --check compiles what was written: give a directory, not --out -");
        return ExitCode::from(2);
    }
    let (tests, programs) = match load(&args.inputs) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let mut mappings = Vec::new();
    for m in args.mapping.iter().flat_map(|l| l.0.iter()) {
        if !mappings.contains(m) {
            mappings.push(*m);
        }
    }
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
    // AXB tests as the target writes them, then one file per kernel program.
    let axb_files = if tests.is_empty() {
        Ok(Vec::new())
    } else {
        emit::files(&tests, &opts)
    };
    let kernel_files = if programs.is_empty() {
        Ok((Vec::new(), Vec::new()))
    } else {
        emit::kernel_files(&programs, opts.target)
    };
    // Programs the target cannot express: an error line each, exit 2, the
    // others still written.
    let refused;
    let files = match (axb_files, kernel_files) {
        (Ok(mut a), Ok((k, errors))) => {
            for e in &errors {
                error(&e);
            }
            refused = errors.len();
            // Compared as a case-insensitive file system would.
            let folded = |f: &backends::target::File| emit::case_folded(&f.path);
            if let Some(clash) = k.iter().find(|f| a.iter().any(|g| folded(g) == folded(f))) {
                error(&format!(
                    "a kernel program and the AXB tests would both be written to {}: rename one, or pass --name",
                    clash.path.display()
                ));
                return ExitCode::from(2);
            }
            a.extend(k);
            a
        }
        (Err(e), _) | (_, Err(e)) => {
            error(&e);
            return ExitCode::from(2);
        }
    };
    if to_stdout {
        let text: String = files.iter().map(|f| f.contents.as_str()).collect();
        return match backends::report::cli::print(&text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                error(&e);
                ExitCode::from(1)
            }
        };
    }
    if let Err(e) = emit::write(&args.out, &files) {
        error(&format!("cannot write to {}: {e}", args.out.display()));
        return ExitCode::from(1);
    }
    if args.check {
        let scratch = args.out.join(".axb-check");
        let result = emit::check(&args.out, &files, &opts, &scratch);
        let _ = std::fs::remove_dir_all(&scratch);
        if let Err(e) = result {
            // A compiler's diagnostics, line by line.
            backends::campaign::Failure::from(e).print();
            return ExitCode::from(1);
        }
    }
    if refused > 0 {
        eprintln!(
            "wrote {} {} file(s) to {}; {refused} program(s) refused (see above)",
            files.len(),
            opts.target.name(),
            printable(&args.out.display().to_string())
        );
        return ExitCode::from(2);
    }
    match args.format {
        Format::Text => {
            eprintln!(
                "wrote {} {} file(s) for {} test(s) to {}",
                files.len(),
                opts.target.name(),
                tests.len() + programs.len(),
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
                "tests": tests.len() + programs.len(),
                "out": args.out.display().to_string(),
                "files": files.iter().map(|f| f.path.display().to_string()).collect::<Vec<_>>(),
                "checked": args.check,
            });
            let mut text = serde_json::to_string_pretty(&summary).expect("serializable");
            text.push('\n');
            match backends::report::cli::print(&text) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    error(&e);
                    ExitCode::from(1)
                }
            }
        }
    }
}
