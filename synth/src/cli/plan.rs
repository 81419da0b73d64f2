//! `synth plan`: the shard/merge split of a run printed for a batch
//! scheduler (the plan itself: [`crate::plan`]).

use super::Failure;
use crate::enumerate::config::Config;
use crate::enumerate::output::Format;
use crate::enumerate::shard::{Shard, MAX_SHARDS};
use crate::estimate::measure::Runner;
use crate::estimate::{stats, Estimate};
use crate::plan::{check_slurm_path, is_slurm_mem, is_slurm_time, path_text, Plan, Task, MAX_CPUS};
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
    /// the Slurm array script (`slurm`), all three with comments (`all`),
    /// or only `--estimate`'s estimate (`estimate`).
    #[arg(long, value_enum, default_value_t = Emit::All)]
    pub emit: Emit,
    /// The `synth` program the jobs run (default: this one).
    #[arg(long, value_name = "PATH")]
    pub synth: Option<PathBuf>,
    /// Slurm: the time limit of one array task (default: from
    /// `--estimate`, three times its slowest shard on `--cpus` cores, at
    /// least 10 minutes; else 01:00:00).
    #[arg(long)]
    pub time: Option<String>,
    /// Slurm: the time limit of the merge job (default: from `--estimate`,
    /// 30 CPU microseconds a test at the high end of its interval over
    /// `--cpus` cores, at least an hour; else `--time`).
    #[arg(long, value_name = "TIME")]
    pub merge_time: Option<String>,
    /// Slurm: cores per array task (each shard uses them all).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=MAX_CPUS))]
    pub cpus: u32,
    /// Slurm: memory per array task and for the merge, as Slurm writes it
    /// (`4G`, `3328M`; default: from `--estimate`, three times its largest
    /// shard's peak, at least 1 GiB; else 4G).
    #[arg(long, value_name = "SIZE")]
    pub mem: Option<String>,
    /// Before planning, run SAMPLES of the shards, chosen uniformly at
    /// random without replacement (`--seed`), one core each, in
    /// `DIR/estimate/`, and print the estimated tests, CPU hours and packed
    /// bytes of the whole run with 95% intervals (and set `--time` and
    /// `--mem` from them). The sampled shards are shards of the run: moved
    /// into DIR, the jobs skip them. Run again with the same seed, it
    /// measures only the samples not yet finished.
    #[arg(long, value_name = "SAMPLES")]
    pub estimate: Option<usize>,
    /// The seed of `--estimate`'s sample (the same seed, the same shards).
    #[arg(long, default_value_t = 0, requires = "estimate")]
    pub seed: u64,
    /// How many of `--estimate`'s samples run at once (default: the
    /// machine's cores).
    #[arg(long, value_name = "N", requires = "estimate", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,
    /// With `--estimate`: also Table 4 of each sampled shard (`synth
    /// table`, one core), and so Table 4 of the whole run estimated row by
    /// row, with `synth table`'s CPU hours.
    #[arg(long, requires = "estimate")]
    pub table: bool,
    /// How to print: `text` (the plan as shell text, an estimate as `#`
    /// lines before it) or `json` (one object: the estimate and what
    /// `--emit` selects).
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
    /// Write the plan to FILE, replaced only once complete; `-` (the
    /// default) is standard output.
    #[arg(short = 'o', long = "out", value_name = "FILE", default_value = "-")]
    pub out: PathBuf,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum OutFormat {
    /// Shell text.
    Text,
    /// One JSON object.
    Json,
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
    Estimate,
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
    for (flag, t) in [("--time", &args.time), ("--merge-time", &args.merge_time)] {
        if let Some(t) = t.as_deref().filter(|t| !is_slurm_time(t)) {
            return Err(format!(
                "{flag} {t:?}: not a Slurm time limit; expected M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED"
            ));
        }
    }
    if let Some(m) = args.mem.as_deref().filter(|m| !is_slurm_mem(m)) {
        return Err(format!(
            "--mem {m:?}: not a Slurm memory size; expected a number of MiB or one with K, M, G or T (4G, 3328M)"
        ));
    }
    if args.emit == Emit::Estimate && args.estimate.is_none() {
        return Err("--emit estimate: give --estimate SAMPLES".into());
    }
    if let Some(n) = args.estimate {
        if n < 2 || n > args.shards {
            return Err(format!(
                "--estimate {n}: expected 2 to {} samples (of --shards {}); an interval needs two",
                args.shards.max(2),
                args.shards
            ));
        }
    }
    Ok(())
}

/// The validated configuration and shard count of `args` (usage errors,
/// exit status 2), checked as the jobs will check them.
fn config_of(args: &PlanArgs) -> Result<Config, Failure> {
    let cfg = Config {
        locs: args.locs,
        values: args.values,
        ..Config::new(args.threads, args.instrs)
    };
    cfg.validate().map_err(|e| Failure::input(e.to_string()))?;
    if args.shards == 0 || args.shards > MAX_SHARDS {
        return Err(Failure::input(format!(
            "--shards {}: expected 1 to {MAX_SHARDS} shards",
            args.shards
        )));
    }
    // The same check as `--shard K/N` of the jobs.
    format!("1/{}", args.shards)
        .parse::<Shard>()
        .map_err(Failure::input)?;
    Ok(cfg)
}

/// `synth plan`: writes the plan to `-o` (standard output by default),
/// as every command writes its output ([`super::write_text`]), after the
/// estimate's samples when `--estimate` asks for them.
pub fn run(args: PlanArgs) -> Result<(), Failure> {
    let cfg = config_of(&args)?;
    let synth = match args.synth.clone() {
        Some(p) => p,
        None => this_program()?,
    };
    check_pasted(&args, &synth).map_err(Failure::input)?;
    // A bad output path (a directory, an unwritable folder) is bad usage,
    // found before anything is written, as for `gen` and `find`.
    crate::enumerate::output::prepare(&args.out, Format::Ron).map_err(Failure::input)?;
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
    let estimate = match args.estimate {
        Some(n) => Some(estimate(&args, &plan.cfg, n)?),
        None => None,
    };
    let e = estimate.as_ref();
    let time = (args.time.clone())
        .or_else(|| e.map(|e| e.slurm_time(args.cpus)))
        .unwrap_or_else(|| "01:00:00".into());
    let task = Task {
        cpus: args.cpus,
        mem: (args.mem.clone())
            .or_else(|| e.map(Estimate::slurm_mem))
            .unwrap_or_else(|| "4G".into()),
        merge_time: (args.merge_time.clone())
            .or_else(|| e.map(|e| e.merge_time(args.cpus)))
            .unwrap_or_else(|| time.clone()),
        time,
    };
    let text = match args.format {
        OutFormat::Text => text(&plan, args.emit, &task, estimate.as_ref()),
        OutFormat::Json => json(&plan, args.emit, &task, estimate.as_ref()),
    };
    super::write_text(&args.out, text.as_bytes())
}

fn this_program() -> Result<PathBuf, Failure> {
    std::env::current_exe()
        .map_err(|e| Failure::other(format!("cannot find this program's path: {e}")))
}

/// Runs `samples` shards of the plan's split in `DIR/estimate/` and
/// estimates the whole run from them; one line on stderr per sample.
fn estimate(args: &PlanArgs, cfg: &Config, samples: usize) -> Result<Estimate, Failure> {
    let exe = this_program()?;
    let dir = args.dir.join("estimate");
    let runner = Runner {
        exe: &exe,
        cfg,
        count: args.shards,
        dir: &dir,
        jobs: args.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |j| j as usize,
        ),
        table: args.table,
    };
    let ks = stats::choose(args.shards, samples, args.seed);
    eprintln!(
        "synth: estimate {}: running {samples} of {} shards (seed {}) in {}",
        cfg.name(),
        args.shards,
        args.seed,
        dir.display()
    );
    let measured = runner.measure(&ks)?;
    Ok(Estimate::new(&cfg.name(), args.shards, args.seed, measured))
}

/// The plan as shell text, an estimate's `#` lines first (in the Slurm
/// script, after its `#SBATCH` lines, which must come first).
fn text(plan: &Plan, emit: Emit, task: &Task, estimate: Option<&Estimate>) -> String {
    let note = estimate.map(Estimate::text).unwrap_or_default();
    match emit {
        Emit::Jobs => note + &plan.jobs(),
        Emit::Merge => note + &plan.merge(),
        Emit::Slurm => plan.slurm(task, &note),
        Emit::All => note + &plan.all(task),
        Emit::Estimate => note,
    }
}

/// The plan as one JSON object: the configuration, the estimate (or
/// null), the Slurm task's settings, and what `--emit` selects (`jobs` a
/// list of commands, `merge` a command, `slurm` the script); for `--emit
/// estimate`, the estimate alone.
fn json(plan: &Plan, emit: Emit, task: &Task, estimate: Option<&Estimate>) -> String {
    if let (Emit::Estimate, Some(e)) = (emit, estimate) {
        return oracle::json::to_string_pretty(e).expect("JSON serializes") + "\n";
    }
    let mut o = serde_json::json!({
        "config": plan.cfg.name(),
        "shards": plan.shards,
        "dir": plan.dir.display().to_string(),
        "estimate": estimate,
        "slurm_task": {"cpus": task.cpus, "mem": task.mem, "time": task.time, "merge_time": task.merge_time},
    });
    if matches!(emit, Emit::Jobs | Emit::All) {
        o["jobs"] = plan.jobs().lines().collect::<Vec<_>>().into();
    }
    if matches!(emit, Emit::Merge | Emit::All) {
        o["merge"] = plan.merge().trim_end().into();
    }
    if matches!(emit, Emit::Slurm | Emit::All) {
        let note = estimate.map(Estimate::text).unwrap_or_default();
        o["slurm"] = plan.slurm(task, &note).into();
    }
    oracle::json::to_string_pretty(&o).expect("JSON serializes") + "\n"
}
