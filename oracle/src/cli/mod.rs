//! The `oracle` command line: one thin file a subcommand ([`classify`],
//! [`explain`], [`lts`], [`table`], [`label`], [`check`]) and, here, what
//! they share:
//! the clap types of the whole command (global `--max-states`, `-o`,
//! `--format`), the parsers of models and names, the way a command fails
//! ([`Failure`], one exit status each) and the way its output is written
//! (`emit`). `oracle/src/main.rs` only calls [`main`].
//!
//! AXB tests and kernel programs (`.litmus`, docs/KERNEL.md) come in
//! through one loader ([`progress_litmus::kernel::load`]). AXB tests are
//! decided by the AXB engine, kernel programs by [`crate::kernel`]; both
//! give the eleven models' verdicts, and the kernel checker agrees with
//! the AXB engine on every AXB test (oracle/tests/kernel_axb.rs).

pub mod check;
pub mod classify;
pub mod explain;
pub mod label;
pub mod lts;
pub mod outcomes;
pub mod sarif;
pub mod shader;
pub mod stats;
pub mod table;

use crate::kernel::KernelError;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use progress_litmus::axb::load::NamedTest;
use progress_litmus::error::{excerpt, printable};
use progress_litmus::kernel::load::{self, Item};
use progress_litmus::kernel::ScopedModel;
use progress_litmus::{FileError, Model};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The exit statuses, in the form of every tool's `--help`
/// ([`progress_litmus::error::exit_status_help`]).
pub fn exit_status() -> String {
    progress_litmus::error::exit_status_help(
        "a test file that cannot be read or parsed, reported as FILE:LINE:COL: message on standard error, an unknown model or test name, a bad flag; the tests that could be read are still reported",
        "an output that cannot be written, an internal error",
    )
}

/// The end of `oracle --help`: exit statuses, where output goes, limits.
fn after_help() -> String {
    format!("{}\n\n{AFTER_HELP_REST}", exit_status())
}

/// The end of `oracle --help` after the exit statuses.
const AFTER_HELP_REST: &str = "\
Output goes to standard output, or with -o FILE to FILE, which is replaced
only once the output is complete (a symbolic link is followed and its target
replaced; a character device such as /dev/null or a FIFO is written to, never
replaced); -o - is standard output. Errors and status go to standard error.

`oracle check` also exits 1 when some program is not guaranteed to terminate
under a required model (see oracle check --help).

Inputs: AXB tests (`.ron` tests and suites, artifact `.txt` tests) and kernel
programs (`.litmus` files, `Kernel` and `KernelSuite` RON files; see
docs/KERNEL.md), and compute shaders (`.wgsl`, GLSL `.comp`, `.spv`; see
`oracle translate` and the launch flags), alone or mixed, or directories of them. Kernel programs are
decided with sequentially consistent memory; classify, table and label give
their verdicts under the 11 models at the device scope (fair inside
workgroups); explain and lts take any scoped model, e.g.
--model \"OBE, subgroup=unfair\", and --occupancy K.

Test names are 1 to 64 characters from A-Z a-z 0-9 _ . + - and start with a
letter, a digit or _ (a RON test's name: field, else its file name).

Environment:
  AXB_MAX_INPUT_BYTES  the largest input file read (default 1G; K, M and G
                       suffixes)";

#[derive(Parser)]
#[command(
    name = "oracle",
    version,
    about = "Is a progress litmus test guaranteed to terminate under a progress model?",
    after_help = after_help()
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Refuse a test whose state space has more than N states (each refused
    /// test is one error line; the others are still decided). An AXB
    /// test's state takes about 100 bytes in classify, table and label,
    /// about 200 in explain and lts. A kernel program's tables (states,
    /// transitions, index, counted by what they reserve) are also held
    /// within N x 100 bytes, one budget shared by the programs decided at
    /// once (each gets at least 16 MiB): a state takes about 100 to 150
    /// bytes, more with more invocations. The default keeps a
    /// process under about 2 GB (4 GB for an AXB test in explain and lts).
    #[arg(long, global = true, value_name = "N", default_value_t = crate::DEFAULT_MAX_STATES, value_parser = parse_max_states)]
    max_states: usize,
    /// A progress line on standard error every 2 s of a long run (states
    /// stored, states a second, resident memory): `auto` when standard
    /// error is a terminal and the output is not `--format json`.
    #[arg(long, global = true, value_enum, default_value_t = ProgressArg::Auto)]
    progress: ProgressArg,
    #[command(flatten)]
    launch: shader::LaunchArgs,
}

/// `--progress`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ProgressArg {
    Auto,
    Always,
    Never,
}

impl ProgressArg {
    /// Whether to print progress lines: `json` when the command line asks
    /// for JSON output.
    fn wanted(self, json: bool) -> bool {
        use std::io::IsTerminal;
        match self {
            ProgressArg::Always => true,
            ProgressArg::Never => false,
            ProgressArg::Auto => !json && std::io::stderr().is_terminal(),
        }
    }
}

/// Whether the command line asks for JSON (`--format json`, `--format=json`).
fn json_asked() -> bool {
    let args: Vec<String> = std::env::args().collect();
    (args
        .windows(2)
        .any(|w| w[0] == "--format" && w[1] == "json"))
        || args.iter().any(|a| a == "--format=json")
}

// The variants' doc comments are the subcommands' help (the argument
// structs, in the subcommands' files, carry none, so that clap keeps these).
#[derive(Subcommand)]
enum Command {
    /// Verdicts under all 11 models for each test (files, suites, directories), in input order.
    #[command(after_help = exit_status())]
    Classify(classify::Args),
    /// Why a test passes or fails under one model, with a witness schedule.
    #[command(after_help = exit_status())]
    Explain(explain::Args),
    /// Every reachable final state under one model, with a witness schedule each, and the program's assertions answered.
    #[command(after_help = exit_status())]
    Outcomes(outcomes::Args),
    /// The state space, as Graphviz DOT or JSON.
    #[command(after_help = exit_status())]
    Lts(lts::Args),
    /// Table 4 of the paper (its buckets: distinguishing tests, bucket D, and bucket C) for the given tests.
    #[command(after_help = exit_status())]
    Table(table::Args),
    /// Write the tests as a RON suite with their verdicts under all 11 models
    /// (a `KernelSuite` when some input is a kernel program).
    #[command(after_help = exit_status())]
    Label(label::Args),
    /// Check that every program is guaranteed to terminate under the required
    /// models, for CI: the plain sentence and the witness of each one that is
    /// not (text, JSON or SARIF).
    #[command(after_help = check::after_help())]
    Check(check::Args),
    /// The kernel program a shader (.wgsl, .comp, .spv) is decided as, in
    /// the litmus format with the shader's lines as comments.
    #[command(after_help = exit_status())]
    Translate {
        /// The shader: a WGSL `.wgsl`, GLSL `.comp` or SPIR-V `.spv` compute shader.
        path: shader::ShaderPath,
        #[command(flatten)]
        out: Out,
    },
}

/// The whole command line as clap sees it (for tests that walk every
/// command and argument).
pub fn command() -> clap::Command {
    Cli::command()
}

/// Where a command's output goes.
#[derive(Args)]
pub struct Out {
    /// Write the output to FILE, replaced only once complete; `-` is standard output.
    #[arg(short, long = "out", value_name = "FILE", default_value = "-")]
    pub out: PathBuf,
}

/// The formats of the commands that list many tests (classify, table).
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
}

/// The formats of `explain`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TextFormat {
    Text,
    Json,
}

/// The formats of `lts`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum LtsFormat {
    Dot,
    Json,
}

/// `--max-states`: at least one state, at most what the engines can index.
fn parse_max_states(s: &str) -> Result<usize, String> {
    let limit = crate::axb::shared_space::MAX_STATES_LIMIT;
    match s.parse::<usize>() {
        Ok(n) if (1..=limit).contains(&n) => Ok(n),
        _ => Err(format!("expected a number of states from 1 to {limit}")),
    }
}

/// One of the eleven models (by any of its spellings), or a scoped model.
fn parse_model(s: &str) -> Result<ScopedModel, String> {
    if let Some(m) = Model::parse(s) {
        return Ok(ScopedModel::flat(m));
    }
    if s.contains(',') {
        return ScopedModel::parse(s).map_err(|e| printable(&e));
    }
    ScopedModel::parse(s).map_err(|_| {
        let names: Vec<&str> = Model::ALL.iter().map(|m| m.name()).collect();
        format!(
            "unknown model `{}`; expected one of {}, PRIORITY, PRIORITY_STRONG, or a scoped model such as \"OBE, subgroup=unfair\"",
            excerpt(s),
            names.join(", ")
        )
    })
}

/// A suite's name follows the test name rule (it is written into RON).
fn parse_suite_name(s: &str) -> Result<String, String> {
    progress_litmus::axb::test::check_name(s)
        .map(|()| s.to_string())
        .map_err(|e| e.to_string())
}

/// A path as messages show it: on one line, unprintable characters escaped.
fn shown(p: &Path) -> String {
    printable(&p.to_string_lossy())
}

/// Prints load errors; returns whether there were any.
fn report(errors: &[FileError]) -> bool {
    for e in errors {
        eprintln!("error: {}", printable(&e.to_string()));
    }
    !errors.is_empty()
}

/// The error line of a test whose space is over the bound; a state takes
/// `bytes` bytes in the space the command builds.
fn too_large(t: &NamedTest, e: crate::TooLarge, bytes: usize) -> String {
    format!(
        "{}: test `{}`: state space exceeds --max-states {} (more than {} states; a larger bound needs about {bytes} bytes a state)",
        shown(&t.source),
        t.name,
        e.bound,
        e.bound,
    )
}

/// The error line of an input the kernel checker could not decide.
fn item_failed(item: &Item, e: &KernelError) -> String {
    failed_line(item.source(), item.name(), e)
}

/// The error line of a program that got no verdict: `FILE: test `NAME`:
/// message`, or `FILE:LINE:COL: test `NAME`: message` when the error is
/// at a place in the file.
fn failed_line(source: &Path, name: &str, e: &KernelError) -> String {
    match e {
        KernelError::At { line, col, msg } => {
            format!("{}:{line}:{col}: test `{name}`: {msg}", shown(source))
        }
        _ => format!("{}: test `{name}`: {e}", shown(source)),
    }
}

/// The checker's options for the commands that decide many programs
/// (reduced spaces: the verdicts are exact, the tests prove it).
fn batch_options(max_states: usize) -> crate::kernel::Options {
    crate::kernel::Options {
        max_states,
        reductions: crate::kernel::product::Reductions::ALL,
    }
}

/// The checker's options for one witness or drawing: no reductions, so
/// that every state shown is one of the program.
fn witness_options(max_states: usize) -> crate::kernel::Options {
    crate::kernel::Options {
        max_states,
        reductions: crate::kernel::product::Reductions::NONE,
    }
}

/// The one test or program named by a path (and --test for suites).
fn one_item(path: &Path, name: Option<&str>) -> Result<Item, Failure> {
    let mut warnings = Vec::new();
    let items = load::load_file_with(path, shader::launch(), &mut warnings)
        .map_err(|e| Failure::input(e.to_string()))?;
    shader::warn(&warnings);
    match name {
        Some(n) => items.into_iter().find(|t| t.name() == n).ok_or_else(|| {
            Failure::input(format!("{}: no test named `{}`", shown(path), excerpt(n)))
        }),
        None if items.len() == 1 => Ok(items.into_iter().next().expect("one test")),
        None if progress_litmus::kernel::shader::is_shader_ext(
            path.extension().and_then(|e| e.to_str()).unwrap_or(""),
        ) =>
        {
            let names: Vec<&str> = items.iter().map(|t| t.name()).collect();
            Err(Failure::input(format!(
                "{}: the shader has {} compute entry points ({}): name one with --test NAME (or its entry point with --entry)",
                shown(path),
                items.len(),
                excerpt(&names.join(", "))
            )))
        }
        None => Err(Failure::input(format!(
            "{}: a suite of {} tests; name one with --test NAME",
            shown(path),
            items.len()
        ))),
    }
}

/// The model a kernel-checker command uses: `--model`, else the program's
/// own `model` line; `--occupancy` bounds it.
fn scoped_model(
    item: &Item,
    model: Option<ScopedModel>,
    occupancy: Option<u8>,
) -> Result<ScopedModel, Failure> {
    let mut m = match (model, item) {
        (Some(m), _) => m,
        (None, Item::Kernel(p)) => p.program.model.ok_or_else(|| {
            Failure::input(format!(
                "{}: the program has no `model` line: name one with --model (e.g. OBE, or \"OBE, subgroup=unfair\")",
                shown(&p.source)
            ))
        })?,
        (None, Item::Axb(t)) => {
            return Err(Failure::input(format!(
                "{}: name a model with --model (HSA, OBE, LOBE, WEAK_FAIR, ...)",
                shown(&t.source)
            )))
        }
    };
    if occupancy.is_some() {
        m.occupancy = occupancy;
    }
    Ok(m)
}

/// An AXB test with a model of the eleven goes to the AXB engine, whose
/// outputs are those of the paper's tool; anything else to the kernel
/// checker (an AXB test as the kernel program it embeds into).
fn axb_case(item: &Item, m: &ScopedModel) -> Option<(NamedTest, Model)> {
    match item {
        Item::Axb(t) => m.as_flat().map(|model| (t.clone(), model)),
        Item::Kernel(_) => None,
    }
}

/// Why a command stopped early: bad input or usage (status 2), anything
/// else (status 1), standard output gone away (`oracle ... | head`: a
/// quiet stop, status 0), or `oracle check` having found programs not
/// guaranteed to terminate, which its output says (quiet, status 1).
pub use progress_litmus::exit::Failure;

/// CSV records, RFC 4180-quoted (a field with a comma, quote or line break
/// is quoted, quotes doubled), `\n` line ends.
fn csv_bytes(records: impl IntoIterator<Item = Vec<String>>) -> Result<Vec<u8>, Failure> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in records {
        w.write_record(&r)
            .map_err(|e| Failure::other(e.to_string()))?;
    }
    w.into_inner().map_err(|e| Failure::other(e.to_string()))
}

/// A JSON value as the commands write it: pretty, one final line end.
fn json_bytes(v: &serde_json::Value) -> Vec<u8> {
    let mut s = crate::json::to_string_pretty(v).expect("JSON values serialize");
    s.push('\n');
    s.into_bytes()
}

/// Writes a command's complete output to standard output, or to a file
/// replaced atomically (a failed run never leaves half a file).
fn emit(out: &Out, bytes: &[u8]) -> Result<(), Failure> {
    match progress_litmus::io::write_output(&out.out, bytes) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Failure::quiet(0)),
        Err(e) => Err(Failure::cannot_write(&out.out, e)),
    }
}

/// Whether the command names a SIMT-Step model (`subgroup=cm|sm|scf|sso`),
/// which decides a shader on its structured translation (docs/KERNEL.md
/// §10.6).
fn names_simt_step(c: &Command) -> bool {
    let direct = |m: &ScopedModel| m.subgroup.direct().is_some();
    match c {
        Command::Explain(a) => a.model.as_ref().is_some_and(direct),
        Command::Outcomes(a) => a.model.as_ref().is_some_and(direct),
        Command::Lts(a) => a.model.as_ref().is_some_and(direct),
        Command::Check(a) => a.require.iter().any(direct),
        _ => false,
    }
}

/// Runs a command; `Ok(false)` when some inputs could not be read (their
/// errors are printed; the rest was reported).
fn run(cli: Cli) -> Result<bool, Failure> {
    let max_states = cli.max_states;
    let _progress = (cli.progress.wanted(json_asked())).then(|| {
        progress_litmus::progress::Reporter::start("oracle", std::time::Duration::from_secs(2))
    });
    shader::set_launch(&cli.launch, max_states, names_simt_step(&cli.command));
    match cli.command {
        Command::Classify(args) => classify::run(&args, max_states),
        Command::Explain(args) => explain::run(&args, max_states),
        Command::Outcomes(a) => outcomes::run(a, max_states),
        Command::Lts(args) => lts::run(&args, max_states),
        Command::Table(args) => table::run(&args, max_states),
        Command::Label(args) => label::run(args, max_states),
        Command::Check(args) => check::run(&args, max_states),
        Command::Translate { path, out } => {
            let text = shader::translate(&path).map_err(Failure::input)?;
            emit(&out, text.as_bytes())?;
            Ok(true)
        }
    }
}

/// `oracle`: parses the command line, runs the command and maps how it
/// ended to the documented exit statuses (0, 2 bad input, 1 otherwise).
pub fn main() -> ExitCode {
    let cli = Cli::parse(); // usage errors exit here with status 2
                            // A panic is a bug; it is reported by the panic hook and exits with 1,
                            // not Rust's 101, so that scripts see the documented statuses.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli)));
    match result {
        Ok(Ok(true)) => ExitCode::SUCCESS,
        Ok(Ok(false)) => ExitCode::from(2),
        // Every message is escaped on its way out: it may quote a path or
        // an input (one rule for the three tools, `Failure::print`).
        Ok(Err(f)) => f.exit(),
        Err(_) => ExitCode::from(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_is_rfc_4180_quoted() {
        // The name rule keeps such names out of loaded tests; the writer
        // must be right regardless.
        let rows = vec![
            vec!["a\"b".to_string(), "x,y".to_string(), "p\nq".to_string()],
            vec!["plain".to_string(), String::new(), "r\r".to_string()],
        ];
        let bytes = csv_bytes(rows).ok().unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "\"a\"\"b\",\"x,y\",\"p\nq\"\nplain,,\"r\r\"\n"
        );
    }
}
