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
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The most cores `--cpus` may ask of one array task (no node has more).
pub const MAX_CPUS: i64 = 65_536;

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

/// `s` for the inside of a double-quoted shell word: `$`, `` ` ``, `"` and
/// `\` escaped, so that nothing in it expands (`$(...)` in a path must stay
/// text) while a variable written around it still does.
fn in_double_quotes(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '$' | '`' | '"' | '\\') {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

/// `s` as one argument of an `#SBATCH` line: sbatch splits those lines at
/// white space, ends them at an unquoted `#` and takes `"..."` as quoting,
/// so a value with anything but plain characters is double-quoted (`"`
/// escaped; a backslash is refused earlier, see [`check_slurm_path`]).
fn sbatch_word(s: &str) -> String {
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_./-+=:,@%".contains(&b))
    {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\\\""))
    }
}

/// Refuses a control character (a newline above all) in a value printed
/// into the plan: it would split a job of the GNU parallel list (one job a
/// line), end an `#SBATCH` line early, or hide text on the terminal.
fn check_text(flag: &str, s: &str) -> Result<(), String> {
    match s.chars().find(|c| c.is_control()) {
        Some(c) => Err(format!(
            "{flag} {:?}: holds the control character {:?}; the job list and the Slurm script take one line per command, so control characters are refused",
            s, c
        )),
        None => Ok(()),
    }
}

/// A path flag as text: UTF-8 (the plan is text) without control
/// characters.
pub(crate) fn path_text(flag: &str, p: &Path) -> Result<String, String> {
    let s = p.to_str().ok_or_else(|| {
        format!(
            "{flag} {}: not valid UTF-8; the plan is text, give a UTF-8 path",
            p.display()
        )
    })?;
    check_text(flag, s)?;
    Ok(s.to_string())
}

/// Slurm's `--output` pattern turns `%x` into job fields (a literal `%` is
/// written `%%`, which [`Plan::slurm`] does) and a backslash anywhere turns
/// that off, so the log of every task would go to one file: refused.
pub(crate) fn check_slurm_path(dir: &str) -> Result<(), String> {
    if dir.contains('\\') {
        return Err(format!(
            "--dir {dir:?}: a backslash cannot be passed to Slurm's --output pattern (it turns off %a); give another folder or --emit jobs"
        ));
    }
    Ok(())
}

/// Whether `s` is a time limit in one of Slurm's formats: `M`, `M:S`,
/// `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S` (numbers of at most 9 digits), or
/// `UNLIMITED` / `INFINITE`. Anything else would be pasted into the
/// `#SBATCH --time=` line unchecked.
pub(crate) fn is_slurm_time(s: &str) -> bool {
    if s.eq_ignore_ascii_case("unlimited") || s.eq_ignore_ascii_case("infinite") {
        return true;
    }
    let num = |x: &str| !x.is_empty() && x.len() <= 9 && x.bytes().all(|b| b.is_ascii_digit());
    let (days, rest) = match s.split_once('-') {
        Some((d, r)) => (Some(d), r),
        None => (None, s),
    };
    let fields: Vec<&str> = rest.split(':').collect();
    days.is_none_or(num) && fields.len() <= 3 && fields.iter().all(|f| num(f))
}

/// Whether `s` is a memory size as Slurm's `--mem` takes it: a number
/// (MiB) of at most 12 digits, optionally with `K`, `M`, `G` or `T`.
pub(crate) fn is_slurm_mem(s: &str) -> bool {
    let digits = s.trim_end_matches(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't']);
    s.len() - digits.len() <= 1
        && !digits.is_empty()
        && digits.len() <= 12
        && digits.bytes().all(|b| b.is_ascii_digit())
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

    /// All three, each with a comment saying how to use it: the job list,
    /// the merge command, and the Slurm script commented out (so that the
    /// whole text is one shell script for GNU parallel users).
    pub fn all(&self, task: &Task) -> String {
        format!(
            "# GNU parallel: save the job list, then\n#   parallel --joblog {log} < JOBS\n{jobs}\n# then the merge:\n{merge}\n# Slurm array script:\n{slurm}",
            log = shell_quote(&self.dir.join("joblog").display().to_string()),
            jobs = self
                .jobs()
                .lines()
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
            merge = self.merge(),
            slurm = self
                .slurm(task, "")
                .lines()
                .map(|l| format!("#   {l}\n"))
                .collect::<String>(),
        )
    }

    /// A Slurm array script, one task per shard, with `note` (comment
    /// lines, such as an estimate) after the `#SBATCH` lines. Run by `bash`
    /// rather than `sbatch`, it submits itself (`SUBMIT`). Its defaults
    /// are an HPC user's: a log a task, appended to when a task runs again
    /// (`--open-mode=append`), requeued when its node fails or it is
    /// preempted (`--requeue`; it resumes its journal).
    pub fn slurm(&self, task: &Task, note: &str) -> String {
        let name = self.cfg.name();
        let dir = self.dir.display().to_string();
        // Slurm's `--output` pattern: a literal `%` doubled.
        let logs = format!("{}/logs", dir.replace('%', "%%"));
        let header = format!(
            "#!/bin/bash\n\
             #SBATCH --job-name=synth-{name}\n\
             #SBATCH --array=1-{n}\n\
             #SBATCH --cpus-per-task={cpus}\n\
             #SBATCH --mem={mem}\n\
             #SBATCH --time={time}\n\
             #SBATCH --requeue\n\
             #SBATCH --open-mode=append\n\
             #SBATCH --output={log}\n\
             # {name} in {n} shards, one array task a shard; shards, journals,\n\
             # logs and the merged suite go to the folder `dir` below.\n",
            n = self.shards,
            cpus = task.cpus,
            mem = task.mem,
            time = task.time,
            log = sbatch_word(&format!("{logs}/{name}-%a.log")),
        );
        let limit = if self.shards > 1000 {
            "# Note: Slurm's default MaxArraySize (1001) takes array indices up to\n\
             # 1000; ask for it to be raised (scontrol show config), or plan at\n\
             # most 1000 shards.\n"
        } else {
            ""
        };
        let header = header + limit;
        let merge_opts = format!(
            "--job-name=synth-{name}-merge --cpus-per-task={} --mem={} --time={} --open-mode=append",
            task.cpus, task.mem, task.merge_time
        );
        format!(
            "{header}{note}{SUBMIT}\
             set -euo pipefail\n\
             dir=\"{dir}\"\n\
             logs=\"{logs}\"\n\
             merge_cmd={merge}\n\
             shard() {{ printf '%s/{name}-%s-of-{n}{ext}' \"$dir\" \"$1\"; }}\n\
             if [ -z \"${{SLURM_ARRAY_TASK_ID:-}}\" ]; then\n\
             {submit}\
             fi\n\
             export RAYON_NUM_THREADS=\"${{SLURM_CPUS_PER_TASK:-{cpus}}}\"\n\
             out=\"$(shard \"$SLURM_ARRAY_TASK_ID\")\"\n\
             test -e \"$out\" || exec {gen} --shard \"$SLURM_ARRAY_TASK_ID/{n}\" --resume --out \"$out\"\n",
            n = self.shards,
            ext = self.ext(),
            cpus = task.cpus,
            dir = in_double_quotes(&dir),
            logs = in_double_quotes(&logs),
            merge = shell_quote(self.merge().trim_end()),
            submit = submit_branch(&name, self.shards, &merge_opts),
            gen = self.gen_args(),
        )
    }
}

/// What one Slurm array task asks for: cores, memory, time limit.
pub struct Task {
    pub cpus: u32,
    /// `--mem`, in Slurm's form (`4G`, `3328M`).
    pub mem: String,
    /// `--time`, in Slurm's form (`is_slurm_time`).
    pub time: String,
    /// The merge job's `--time`.
    pub merge_time: String,
}

/// How the Slurm script is used, as its comment says.
const SUBMIT: &str = "\
# Submit with `bash THIS_FILE` on a login node (not sbatch): it makes the
# log folder (Slurm does not, and a task whose log cannot be opened fails),
# submits the shards not yet written as this array, and the merge as a job
# that starts once all of them have succeeded. After a task failed or was
# cancelled, and once the earlier jobs have ended (squeue), run it again:
# it submits only what is missing, and each shard resumes its journal.
# (`sbatch THIS_FILE` runs every shard but not the merge; make the log
# folder first: `mkdir -p \"$dir/logs\"`.)
";

/// The script's branch outside Slurm: submit the missing shards (as
/// ranges, `1-3,7`) and the merge after them.
fn submit_branch(name: &str, shards: usize, merge_opts: &str) -> String {
    format!(
        "  mkdir -p \"$dir/logs\"\n\
         \x20 todo=\"\" a=\"\" b=\"\"\n\
         \x20 add() {{ [ -z \"$a\" ] || {{ [ \"$a\" = \"$b\" ] && todo=\"$todo,$a\" || todo=\"$todo,$a-$b\"; }}; }}\n\
         \x20 for k in $(seq 1 {n}); do\n\
         \x20   test -e \"$(shard \"$k\")\" && continue\n\
         \x20   if [ -n \"$b\" ] && [ \"$k\" -eq $((b + 1)) ]; then b=$k; else add; a=$k b=$k; fi\n\
         \x20 done\n\
         \x20 add\n\
         \x20 todo=\"${{todo#,}}\"\n\
         \x20 after=()\n\
         \x20 if [ -n \"$todo\" ]; then\n\
         \x20   job=$(sbatch --parsable --array=\"$todo\" \"$0\")\n\
         \x20   job=\"${{job%%;*}}\"\n\
         \x20   echo \"synth: {name}: shards $todo submitted as array job $job\"\n\
         \x20   after=(--dependency=\"afterok:$job\" --kill-on-invalid-dep=yes)\n\
         \x20 fi\n\
         \x20 merge=$(sbatch --parsable \"${{after[@]}}\" {merge_opts} --output=\"$logs/{name}-merge.log\" --wrap \"$merge_cmd\")\n\
         \x20 echo \"synth: {name}: merge submitted as job ${{merge%%;*}}\"\n\
         \x20 exit 0\n",
        n = shards
    )
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

    #[test]
    fn slurm_times() {
        for ok in [
            "30",
            "30:00",
            "01:00:00",
            "2-0",
            "2-12:30",
            "2-12:30:00",
            "UNLIMITED",
            "infinite",
        ] {
            assert!(is_slurm_time(ok), "{ok}");
        }
        for bad in [
            "",
            "1:",
            ":1",
            "1:2:3:4",
            "1-",
            "-1",
            "1-2-3",
            "1h",
            "01:00:00\n#SBATCH --x",
            "1 2",
            "1234567890",
        ] {
            assert!(!is_slurm_time(bad), "{bad:?}");
        }
    }

    #[test]
    fn quoting_per_context() {
        // Inside double quotes nothing expands; plain text stays as it was.
        assert_eq!(in_double_quotes("a/b-1"), "a/b-1");
        assert_eq!(in_double_quotes(r#"x$(y)`z`"\"#), r#"x\$(y)\`z\`\"\\"#);
        // An #SBATCH value with a space, a quote or a # is one quoted word.
        assert_eq!(
            sbatch_word("runs/logs/2t3i-%a.log"),
            "runs/logs/2t3i-%a.log"
        );
        assert_eq!(sbatch_word(r#"a b#"c"#), r#""a b#\"c""#);
        assert!(check_text("--out", "a\nb").is_err());
        assert!(check_text("--out", "a\u{1b}]0;x").is_err());
        assert!(check_text("--out", "runs/é x$'").is_ok());
    }
}
