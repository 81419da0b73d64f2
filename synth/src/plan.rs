//! `synth plan`: a run split into shards for a batch scheduler.
//!
//! The 6-instruction configurations take CPU hours; rather than cluster code
//! of its own, `synth` prints what existing schedulers take: a job list for
//! GNU parallel (one shard command per line), the merge command, and a Slurm
//! array script (one array task per shard). Every shard command is
//! restartable: it skips a shard whose output exists and otherwise resumes
//! its journal (`--resume` starts afresh when there is none), so a
//! preempted or failed job is simply run again. Shards are balanced by
//! program count ([`crate::enumerate::shard`]), so a shard's time is about the whole
//! run's CPU time divided by the shard count.

use crate::enumerate::config::Config;
use crate::enumerate::output::Format;
use crate::enumerate::shard::Shard;
use std::fmt::Write as _;
use std::path::PathBuf;

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
    pub out: PathBuf,
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
    #[arg(long, default_value_t = 4)]
    pub cpus: usize,
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

/// `s` quoted for a POSIX shell (as is when it needs no quoting).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./-+=:,@%".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A planned run: the configuration, the split and where things go.
pub struct Plan {
    pub cfg: Config,
    pub shards: usize,
    pub dir: PathBuf,
    pub format: Format,
    pub synth: PathBuf,
}

impl Plan {
    fn ext(&self) -> &'static str {
        match self.format {
            Format::Packed => ".axb.gz",
            _ => ".ron",
        }
    }

    /// The output of shard `k` (a shell word; `k` may be a variable).
    fn shard_out(&self, k: &str) -> String {
        format!(
            "{}/{}-{k}-of-{}{}",
            self.dir.display(),
            self.cfg.name(),
            self.shards,
            self.ext()
        )
    }

    /// The merged suite.
    pub fn merged(&self) -> PathBuf {
        self.dir.join(format!("{}{}", self.cfg.name(), self.ext()))
    }

    fn gen_args(&self) -> String {
        format!(
            "{} gen --threads {} --instrs {} --locs {} --values {}",
            shell_quote(&self.synth.display().to_string()),
            self.cfg.threads,
            self.cfg.instrs,
            self.cfg.locs,
            self.cfg.values
        )
    }

    /// One shell command per shard: skip a finished shard, else run or
    /// resume it.
    pub fn jobs(&self) -> String {
        let mut o = String::new();
        for k in 1..=self.shards {
            let out = shell_quote(&self.shard_out(&k.to_string()));
            let _ = writeln!(
                o,
                "test -e {out} || {} --shard {k}/{} --resume --out {out}",
                self.gen_args(),
                self.shards
            );
        }
        o
    }

    /// The command that joins the shards (run after every job succeeded).
    pub fn merge(&self) -> String {
        let dir = shell_quote(&self.dir.display().to_string());
        format!(
            "{} merge {dir}/{}-*-of-{}{} --out {}\n",
            shell_quote(&self.synth.display().to_string()),
            self.cfg.name(),
            self.shards,
            self.ext(),
            shell_quote(&self.merged().display().to_string())
        )
    }

    /// A Slurm array script, one task per shard.
    pub fn slurm(&self, time: &str, cpus: usize) -> String {
        let name = self.cfg.name();
        let dir = shell_quote(&self.dir.display().to_string());
        let out = self.shard_out("${SLURM_ARRAY_TASK_ID}");
        format!(
            "#!/bin/bash\n\
             #SBATCH --job-name=synth-{name}\n\
             #SBATCH --array=1-{n}\n\
             #SBATCH --cpus-per-task={cpus}\n\
             #SBATCH --time={time}\n\
             #SBATCH --output={log}/{name}-%a.log\n\
             # Submit: mkdir -p {dir}/logs && sbatch THIS_FILE\n\
             # Then, once every task has succeeded:\n\
             #   sbatch --dependency=afterok:<JOBID> --wrap \"{merge}\"\n\
             set -euo pipefail\n\
             export RAYON_NUM_THREADS=\"${{SLURM_CPUS_PER_TASK:-{cpus}}}\"\n\
             out=\"{out}\"\n\
             test -e \"$out\" || exec {gen} --shard \"${{SLURM_ARRAY_TASK_ID}}/{n}\" --resume --out \"$out\"\n",
            n = self.shards,
            log = self.dir.join("logs").display(),
            merge = self.merge().trim_end().replace('"', "\\\""),
            gen = self.gen_args(),
        )
    }
}

/// `synth plan`: prints the plan on stdout.
pub fn cli(args: PlanArgs) -> Result<(), (u8, String)> {
    let cfg = Config {
        locs: args.locs,
        values: args.values,
        ..Config::new(args.threads, args.instrs)
    };
    cfg.validate().map_err(|e| (2, e.to_string()))?;
    if args.shards == 0 {
        return Err((2, "--shards 0: at least one shard".into()));
    }
    // The same check as `--shard K/N` of the jobs.
    format!("1/{}", args.shards)
        .parse::<Shard>()
        .map_err(|e| (2, e))?;
    let synth = match args.synth {
        Some(p) => p,
        None => std::env::current_exe()
            .map_err(|e| (1, format!("cannot find this program's path: {e}")))?,
    };
    let plan = Plan {
        cfg,
        shards: args.shards,
        dir: args.out,
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
        Emit::All => format!(
            "# GNU parallel: save the job list, then\n#   parallel --joblog {log} < JOBS\n{jobs}\n# then the merge:\n{merge}\n# Slurm array script:\n{slurm}",
            log = shell_quote(&plan.dir.join("joblog").display().to_string()),
            jobs = plan
                .jobs()
                .lines()
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
            merge = plan.merge(),
            slurm = plan
                .slurm(&args.time, args.cpus)
                .lines()
                .map(|l| format!("#   {l}\n"))
                .collect::<String>(),
        ),
    };
    print!("{text}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("a/b-1.ron"), "a/b-1.ron");
        assert_eq!(shell_quote("it's here"), "'it'\\''s here'");
        assert_eq!(shell_quote(""), "''");
    }
}
