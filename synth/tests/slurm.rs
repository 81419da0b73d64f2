//! `synth plan --emit slurm` run by a real Slurm (issue 48): a script that
//! has never met its scheduler is a guess.
//!
//! The test starts a single-node cluster of its own: `munged`, `slurmctld`
//! and `slurmd` (Debian's `munge` and `slurm-wlm`) in a scratch folder,
//! with their own key, socket, `slurm.conf`, state, spool and log folders,
//! on free localhost ports, found by every Slurm command through
//! `SLURM_CONF`. It submits the plan of 2t5i in 16 shards as the script
//! says (`bash SCRIPT`: the array and the merge after it), and checks the
//! merged suite is byte-identical to the unsharded run; then it cancels one
//! array task of a 4-shard plan mid-shard (its journal holds a finished
//! unit, its output is not written), checks that the merge was cancelled
//! with it, runs the script again, and checks that the task resumed its
//! journal and the merge gives the same bytes. The guard stops the daemons
//! on every exit path (a panic included) and the test checks that no
//! process of its cluster is left.
//!
//! Slurm needs root (`slurmd` runs jobs as their users) and the two
//! packages: without them the test is skipped with the reason printed,
//! except under `CI=true` (`.ci/run` installs them), where it fails.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{ok, scratch, stderr, synth};

/// The daemons of one test cluster, stopped when dropped.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
}

/// Why a cluster cannot start here, or `None` when it can.
fn missing() -> Option<String> {
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root: slurmd runs jobs as their users and needs root".into());
    }
    let tools = [
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "squeue",
        "scancel",
        "scontrol",
        "sinfo",
    ];
    let absent: Vec<&str> = tools
        .into_iter()
        .filter(|t| {
            !["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
                .iter()
                .any(|d| Path::new(d).join(t).is_file())
        })
        .collect();
    (!absent.is_empty()).then(|| {
        format!(
            "{} not found: install Debian's slurm-wlm and munge (`.ci/run` does)",
            absent.join(", ")
        )
    })
}

/// A free TCP port on localhost (free when asked; the daemons take it a
/// moment later).
fn free_ports() -> (u16, u16) {
    let a = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let b = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    )
}

fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// This machine's memory in MiB, less a tenth (slurmd drains a node that
/// claims more than it has).
fn real_memory() -> u64 {
    let info = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kib: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib / 1024 * 9 / 10
}

fn slurm_conf(dir: &Path) -> String {
    let (ctld, slurmd) = free_ports();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let d = dir.display();
    format!(
        "ClusterName=synthtest\n\
         SlurmctldHost=localhost\n\
         SlurmUser=root\n\
         SlurmdUser=root\n\
         SlurmctldPort={ctld}\n\
         SlurmdPort={slurmd}\n\
         AuthType=auth/munge\n\
         AuthInfo=socket={d}/sock/munge.socket\n\
         CredType=cred/munge\n\
         StateSaveLocation={d}/state\n\
         SlurmdSpoolDir={d}/spool\n\
         SlurmctldPidFile={d}/slurmctld.pid\n\
         SlurmdPidFile={d}/slurmd.pid\n\
         SlurmctldLogFile={d}/log/slurmctld.log\n\
         SlurmdLogFile={d}/log/slurmd.log\n\
         PlugStackConfig={d}/plugstack.conf\n\
         ProctrackType=proctrack/linuxproc\n\
         TaskPlugin=task/none\n\
         MpiDefault=none\n\
         MailProg=/bin/true\n\
         SchedulerType=sched/builtin\n\
         SelectType=select/cons_tres\n\
         SelectTypeParameters=CR_Core\n\
         ReturnToService=2\n\
         KillWait=5\n\
         MinJobAge=600\n\
         NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={mem} State=UNKNOWN\n\
         PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n",
        mem = real_memory(),
    )
}

impl Cluster {
    /// Starts the cluster in `dir`, or says why it cannot (a failure under
    /// `CI=true`).
    fn start(dir: &Path) -> Option<Cluster> {
        if let Some(why) = missing() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{why}: under CI this test must run"
            );
            eprintln!("skipped: {why}");
            return None;
        }
        let dir = dir.join("slurm");
        for sub in ["munge", "sock", "state", "spool", "log"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        // munged refuses a key others can read, and a socket folder that
        // not everyone may enter.
        chmod(&dir.join("munge"), 0o700);
        chmod(&dir.join("sock"), 0o755);
        let mut key = vec![0u8; 128];
        std::fs::File::open("/dev/urandom")
            .unwrap()
            .read_exact(&mut key)
            .unwrap();
        let key_path = dir.join("munge/munge.key");
        std::fs::write(&key_path, key).unwrap();
        chmod(&key_path, 0o600);
        let conf = dir.join("slurm.conf");
        std::fs::write(&conf, slurm_conf(&dir)).unwrap();
        std::fs::write(dir.join("plugstack.conf"), "").unwrap();
        let mut c = Cluster {
            dir,
            conf,
            daemons: Vec::new(),
        };
        c.spawn_daemons();
        c.wait_for_node();
        Some(c)
    }

    fn spawn_daemons(&mut self) {
        let d = self.dir.clone();
        let munge = |f: &str| format!("--{f}={}", d.join("munge").join(f).display());
        let mut munged = Command::new("munged");
        munged
            .arg("--foreground")
            .arg(format!(
                "--socket={}",
                d.join("sock/munge.socket").display()
            ))
            .arg(format!(
                "--key-file={}",
                d.join("munge/munge.key").display()
            ))
            .args([munge("log-file"), munge("pid-file"), munge("seed-file")]);
        self.daemon("munged", munged);
        let sock = d.join("sock/munge.socket");
        self.wait(Duration::from_secs(20), "munged's socket", || sock.exists());
        let conf = self.conf.display().to_string();
        let mut ctld = Command::new("slurmctld");
        ctld.args(["-D", "-c", "-f", &conf]);
        self.daemon("slurmctld", ctld);
        let mut slurmd = Command::new("slurmd");
        slurmd.args(["-D", "-N", "localhost", "-f", &conf]);
        self.daemon("slurmd", slurmd);
    }

    /// Starts one daemon in the foreground (finding this cluster through
    /// `SLURM_CONF`), its output in `log/NAME.out`.
    fn daemon(&mut self, name: &'static str, mut cmd: Command) {
        let out = std::fs::File::create(self.dir.join(format!("log/{name}.out"))).unwrap();
        let err = out.try_clone().unwrap();
        let child = cmd
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        self.daemons.push((name, child));
    }

    /// A Slurm command (or any) that finds this cluster.
    fn cmd(&self, prog: &str) -> Command {
        let mut c = Command::new(prog);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn run(&self, prog: &str, args: &[&str], cwd: &Path) -> Output {
        self.cmd(prog).args(args).current_dir(cwd).output().unwrap()
    }

    /// Polls `ready` every 50 ms until it holds; panics with the daemons'
    /// logs after `limit`.
    fn wait(&self, limit: Duration, what: &str, mut ready: impl FnMut() -> bool) {
        let start = Instant::now();
        while !ready() {
            if start.elapsed() > limit {
                panic!("{what}: not within {limit:?}\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_for_node(&self) {
        let dir = self.dir.clone();
        self.wait(Duration::from_secs(60), "the node idle", || {
            let o = self.run("sinfo", &["-h", "-o", "%T"], &dir);
            String::from_utf8_lossy(&o.stdout).trim() == "idle"
        });
    }

    /// Waits until none of `jobs` is pending or running.
    fn wait_jobs(&self, jobs: &[&str], limit: Duration) {
        let list = jobs.join(",");
        let dir = self.dir.clone();
        self.wait(limit, &format!("jobs {list} to end"), || {
            let o = self.run("squeue", &["-h", "-j", &list, "-o", "%i %T"], &dir);
            o.status.success() && o.stdout.is_empty()
        });
    }

    /// A job's state and reason, as `scontrol show job` says.
    fn state(&self, job: &str) -> String {
        let o = self.run("scontrol", &["show", "job", job], &self.dir);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        text.lines()
            .find(|l| l.trim_start().starts_with("JobState="))
            .unwrap_or("")
            .trim()
            .to_string()
    }

    /// The ends of the daemons' logs, for a failure message.
    fn logs(&self) -> String {
        let mut s = String::new();
        for f in ["slurmctld.log", "slurmd.log", "munged.out", "slurmctld.out"] {
            let t = std::fs::read_to_string(self.dir.join("log").join(f)).unwrap_or_default();
            let tail: Vec<&str> = t.lines().rev().take(15).collect();
            s += &format!("--- {f}\n");
            for l in tail.into_iter().rev() {
                s += l;
                s.push('\n');
            }
        }
        s
    }

    /// The processes this cluster started that are still there: the
    /// daemons, and anything carrying its `SLURM_CONF` (slurmstepd, jobs).
    fn leftovers(&self) -> Vec<u32> {
        let mark = format!("SLURM_CONF={}\0", self.conf.display());
        let me = std::process::id();
        let mut left: Vec<u32> = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| pid != me)
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.windows(mark.len()).any(|w| w == mark.as_bytes()))
            })
            .collect();
        for (_, child) in &self.daemons {
            let pid = child.id();
            if Path::new(&format!("/proc/{pid}")).exists() && !left.contains(&pid) {
                left.push(pid);
            }
        }
        left
    }

    /// Cancels every job, stops the daemons (TERM, then KILL after 10 s),
    /// reaps them, and kills whatever of the cluster is left. Returns what
    /// was still there at the end (nothing, when all went well).
    fn stop(&mut self) -> Vec<u32> {
        if self.daemons.is_empty() {
            return Vec::new();
        }
        let _ = self.run("scancel", &["--user=root"], &self.dir.clone());
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(15) {
            let o = self.run("squeue", &["-h"], &self.dir.clone());
            if !o.status.success() || o.stdout.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        for (_, child) in self.daemons.iter_mut().rev() {
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let start = Instant::now();
            while child.try_wait().ok().flatten().is_none() {
                if start.elapsed() > Duration::from_secs(10) {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        for pid in self.leftovers() {
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(200));
        let left = self.leftovers();
        self.daemons.clear();
        left
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let left = self.stop();
        if !left.is_empty() {
            eprintln!("slurm test: processes left after stopping: {left:?}");
        }
    }
}

/// Submits `script` the way it says (`bash SCRIPT`): the ids of the array
/// job (if any shard was missing) and of the merge job.
fn submit(c: &Cluster, dir: &Path, script: &str) -> (Option<String>, String, String) {
    let o = c.run("bash", &[script], dir);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{out}{}", stderr(&o));
    let id = |what: &str| {
        out.lines()
            .find_map(|l| l.split_once(what).map(|(_, id)| id.trim().to_string()))
    };
    let merge = id("merge submitted as job ").unwrap_or_else(|| panic!("{out}"));
    (id("submitted as array job "), merge, out)
}

/// Writes the Slurm script of 2t5i in `shards` shards to `file`.
fn plan(dir: &Path, shards: &str, into: &str, file: &str) {
    let o = ok(synth(
        dir,
        &[
            "plan", "-t", "2", "-i", "5", "--shards", shards, "--dir", into, "--emit", "slurm",
            "--cpus", "1", "--mem", "512M", "--time", "15", "-o", file,
        ],
    ));
    assert!(o.stdout.is_empty());
}

#[test]
fn the_slurm_script_runs_on_slurm_and_a_cancelled_task_resumes() {
    let dir = scratch("slurm");
    let Some(mut cluster) = Cluster::start(&dir) else {
        return;
    };
    let start = Instant::now();
    ok(synth(&dir, &["-t", "2", "-i", "5", "-o", "whole.axb.gz"]));
    let whole = std::fs::read(dir.join("whole.axb.gz")).unwrap();
    let limit = Duration::from_secs(240);

    // 16 shards into a folder whose name needs quoting everywhere (a
    // space; a `%`, which Slurm's log pattern would expand).
    let runs = "runs/2t5i 16%x";
    plan(&dir, "16", runs, "16.sbatch");
    let (array, merge, out) = submit(&cluster, &dir, "16.sbatch");
    let array = array.unwrap_or_else(|| panic!("{out}"));
    assert!(out.contains("shards 1-16 submitted"), "{out}");
    cluster.wait_jobs(&[&array, &merge], limit);
    assert!(cluster.state(&merge).starts_with("JobState=COMPLETED"));
    let merged = dir.join(runs).join("2t5i.axb.gz");
    assert!(
        std::fs::read(&merged).unwrap() == whole,
        "{}",
        cluster.logs()
    );
    for k in 1..=16 {
        assert!(dir.join(runs).join(format!("logs/2t5i-{k}.log")).is_file());
    }

    // 4 shards (a few seconds each): cancel task 1 once its journal holds
    // a finished unit.
    plan(&dir, "4", "runs/k", "4.sbatch");
    let (array, merge, _) = submit(&cluster, &dir, "4.sbatch");
    let array = array.unwrap();
    let journal = dir.join("runs/k/2t5i-1-of-4.axb.gz.journal");
    let shard1 = dir.join("runs/k/2t5i-1-of-4.axb.gz");
    cluster.wait(limit, "shard 1's first unit", || {
        std::fs::read_to_string(&journal).is_ok_and(|j| j.lines().count() >= 2)
    });
    let o = cluster.run("scancel", &[&format!("{array}_1")], &dir);
    assert!(o.status.success(), "{}", stderr(&o));
    cluster.wait_jobs(&[&array, &merge], limit);
    assert!(!shard1.exists(), "shard 1 finished before it was cancelled");
    assert!(journal.is_file());
    let state = cluster.state(&format!("{array}_1"));
    assert!(state.starts_with("JobState=CANCELLED"), "{state}");
    // The merge depended on every task: cancelled with it, not left
    // pending for ever.
    let state = cluster.state(&merge);
    assert!(state.starts_with("JobState=CANCELLED"), "{state}");
    assert!(!dir.join("runs/k/2t5i.axb.gz").exists());

    // Run again: only shard 1 is submitted, it resumes its journal, and
    // the merge gives the unsharded bytes.
    let (array, merge, out) = submit(&cluster, &dir, "4.sbatch");
    assert!(out.contains("shards 1 submitted"), "{out}");
    cluster.wait_jobs(&[&array.unwrap(), &merge], limit);
    assert!(cluster.state(&merge).starts_with("JobState=COMPLETED"));
    let log = std::fs::read_to_string(dir.join("runs/k/logs/2t5i-1.log")).unwrap();
    assert!(log.contains("CANCELLED"), "{log}");
    assert!(log.contains("resuming:"), "{log}");
    let merged = std::fs::read(dir.join("runs/k/2t5i.axb.gz")).unwrap();
    assert!(merged == whole, "{}", cluster.logs());
    assert!(!journal.exists());

    let left = cluster.stop();
    assert!(left.is_empty(), "left running: {left:?}");
    eprintln!(
        "slurm: 2t5i in 16 shards, and 4 with one cancelled and resumed, in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
