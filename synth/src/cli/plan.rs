//! `synth plan`: the shard/merge split of a run printed for a batch
//! scheduler (the plan itself: [`crate::plan`]).

use super::Fail;
use crate::enumerate::config::Config;
use crate::enumerate::output::Format;
use crate::enumerate::shard::{Shard, MAX_SHARDS};
use crate::plan::{check_slurm_path, is_slurm_time, path_text, Plan, MAX_CPUS};
use std::path::{Path, PathBuf};

/// The arguments of `synth plan`.
#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    /// Exactly this many threads.
    #[arg(long, short = 't')]
    pub threads: usize,
    /// Exactly this many instructions in total.
    #[arg(long, short = 'i')]
    pub instrs: usize,
    /// At most this many memory locations.
    #[arg(long, default_value_t = 2)]
    pub locs: usize,
    /// Values 0..V-1.
    #[arg(long, default_value_t = 2)]
    pub values: usize,
    /// How many shards.
    #[arg(long)]
    pub shards: usize,
    /// The folder the shard outputs, the journals and the merged suite go
    /// to (made by the jobs).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// The shards' format: `packed` (default; `.axb.gz`) or `ron`.
    #[arg(long, value_enum, default_value_t = ShardFormat::Packed)]
    pub shard_format: ShardFormat,
    /// What to print: the job list (`jobs`), the merge command (`merge`),
    /// the Slurm array script (`slurm`), or all three with comments
    /// (`all`).
    #[arg(long, value_enum, default_value_t = Emit::All)]
    pub emit: Emit,
    /// The `synth` program the jobs run (default: this one).
    #[arg(long, value_name = "PATH")]
    pub synth: Option<PathBuf>,
    /// Slurm: the time limit of one array task.
    #[arg(long, default_value = "01:00:00")]
    pub time: String,
    /// Slurm: cores per array task (each shard uses them all).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=MAX_CPUS))]
    pub cpus: u32,
    /// Write the plan to FILE, replaced only once complete; `-` (the
    /// default) is standard output.
    #[arg(short = 'o', long = "out", value_name = "FILE", default_value = "-")]
    pub out: PathBuf,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ShardFormat {
    Packed,
    Ron,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    Jobs,
    Merge,
    Slurm,
    All,
}

/// Checks everything pasted into the plan, before anything is printed:
/// the paths as text, the folder's first character, what Slurm cannot
/// take, the time limit.
fn check_pasted(args: &PlanArgs, synth: &Path) -> Result<(), String> {
    path_text("--synth", synth)?;
    let dir = path_text("--dir", &args.dir)?;
    if dir.starts_with('-') {
        // `test -e -x/...`, `mkdir -p -x/logs` and `--out -x/...` would
        // read it as an option.
        return Err(format!(
            "--dir {dir}: a folder starting with `-` reads as an option in the jobs; write ./{dir}"
        ));
    }
    if matches!(args.emit, Emit::Slurm | Emit::All) {
        check_slurm_path(&dir)?;
    }
    if !is_slurm_time(&args.time) {
        return Err(format!(
            "--time {:?}: not a Slurm time limit; expected M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED",
            args.time
        ));
    }
    Ok(())
}

/// The validated configuration and shard count of `args` (usage errors,
/// exit status 2), checked as the jobs will check them.
fn config_of(args: &PlanArgs) -> Result<Config, Fail> {
    let cfg = Config {
        locs: args.locs,
        values: args.values,
        ..Config::new(args.threads, args.instrs)
    };
    cfg.validate().map_err(|e| Fail(2, e.to_string()))?;
    if args.shards == 0 || args.shards > MAX_SHARDS {
        return Err(Fail(
            2,
            format!(
                "--shards {}: expected 1 to {MAX_SHARDS} shards",
                args.shards
            ),
        ));
    }
    // The same check as `--shard K/N` of the jobs.
    format!("1/{}", args.shards)
        .parse::<Shard>()
        .map_err(|e| Fail(2, e))?;
    Ok(cfg)
}

/// `synth plan`: writes the plan to `-o` (standard output by default),
/// as every command writes its output ([`super::write_text`]).
pub fn run(args: PlanArgs) -> Result<(), Fail> {
    let cfg = config_of(&args)?;
    let synth = match args.synth.clone() {
        Some(p) => p,
        None => std::env::current_exe()
            .map_err(|e| Fail(1, format!("cannot find this program's path: {e}")))?,
    };
    check_pasted(&args, &synth).map_err(|e| Fail(2, e))?;
    // A bad output path (a directory, an unwritable folder) is bad usage,
    // found before anything is written, as for `gen` and `find`.
    crate::enumerate::output::prepare(&args.out, Format::Ron).map_err(|e| Fail(2, e))?;
    let plan = Plan {
        cfg,
        shards: args.shards,
        dir: args.dir.clone(),
        format: match args.shard_format {
            ShardFormat::Packed => Format::Packed,
            ShardFormat::Ron => Format::Ron,
        },
        synth,
    };
    let text = match args.emit {
        Emit::Jobs => plan.jobs(),
        Emit::Merge => plan.merge(),
        Emit::Slurm => plan.slurm(&args.time, args.cpus),
        Emit::All => plan.all(&args.time, args.cpus),
    };
    super::write_text(&args.out, text.as_bytes())
}
