//! The reproducers of issue 20 (hardening, round 2) for `synth`, each as a
//! regression test: a hostile `--dir` in `synth plan` runs nothing in any
//! context (item 1); `-o` never destroys a FIFO, a symbolic link or a device
//! (item 2); numeric flags are bounded before any work and standard output
//! ends quietly on a closed pipe, with one error line on a full disk
//! (item 7).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;
use common::{ok, scratch, stderr, synth};

/// Exit status 2, one `error:` line, nothing on stdout.
fn refused(o: &Output, says: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    let e = stderr(o);
    assert!(e.starts_with("error: ") && e.contains(says), "{e}");
    assert!(o.stdout.is_empty());
}

fn bash(dir: &Path, script: &str, env: &[(&str, &str)]) -> Output {
    Command::new("bash")
        .current_dir(dir)
        .args(["-c", script])
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// A folder name that runs `touch P` wherever it is expanded by a shell, and
/// holds the other characters each context treats specially.
const HOSTILE: &str = "runs/x$(touch P) `touch P` 'q' \"d\" #h %a !!";

#[test]
fn plan_with_a_hostile_out_runs_nothing_in_any_context() {
    let dir = scratch("hostile");
    let plan = |emit: &str| {
        let o = ok(synth(
            &dir,
            &[
                "plan", "-t", "2", "-i", "2", "--shards", "2", "--dir", HOSTILE, "--emit", emit,
            ],
        ));
        String::from_utf8(o.stdout).unwrap()
    };
    // The job list, run by a shell line by line (as GNU parallel does).
    let jobs = plan("jobs");
    assert_eq!(jobs.lines().count(), 2, "{jobs}");
    for job in jobs.lines() {
        let o = bash(&dir, job, &[]);
        assert!(o.status.success(), "{job}: {}", stderr(&o));
    }
    assert!(!dir.join("P").exists(), "the job list ran `touch P`");
    let shards = dir.join(HOSTILE);
    assert!(shards.join("2t2i-1-of-2.axb.gz").is_file());
    assert!(shards.join("2t2i-2-of-2.axb.gz").is_file());
    // The merge command.
    let o = bash(&dir, &plan("merge"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(shards.join("2t2i.axb.gz").is_file());
    // The Slurm script, as an array task runs it.
    let slurm = plan("slurm");
    std::fs::remove_file(shards.join("2t2i-1-of-2.axb.gz")).unwrap();
    let o = bash(&dir, &slurm, &[("SLURM_ARRAY_TASK_ID", "1")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(shards.join("2t2i-1-of-2.axb.gz").is_file(), "{slurm}");
    // Its submission branch (`bash SCRIPT`, outside Slurm), with an
    // `sbatch` that records its arguments: the log folder made, only the
    // missing shard submitted, the merge after it with the merge command as
    // it is, its log in the folder with `%` doubled, nothing run.
    std::fs::remove_file(shards.join("2t2i-2-of-2.axb.gz")).unwrap();
    std::fs::remove_dir_all(shards.join("logs")).ok();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("sbatch"),
        "#!/bin/bash\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done >> \"$SBATCH_ARGS\"\nprintf '\\n' >> \"$SBATCH_ARGS\"\necho 42\n",
    )
    .unwrap();
    std::fs::write(dir.join("s.sbatch"), &slurm).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let args_file = dir.join("sbatch-args");
    let o = Command::new("bash")
        .current_dir(&dir)
        .arg("-c")
        .arg("chmod +x bin/sbatch && bash s.sbatch")
        .env("PATH", &path)
        .env("SBATCH_ARGS", &args_file)
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("shards 2 submitted as array job 42"),
        "{said}"
    );
    assert!(shards.join("logs").is_dir());
    let calls = std::fs::read_to_string(&args_file).unwrap();
    let calls: Vec<Vec<&str>> = calls
        .lines()
        .map(|l| l.trim_end_matches('\0').split('\0').collect())
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0], ["--parsable", "--array=2", "s.sbatch"]);
    let merge = &calls[1];
    assert!(merge.contains(&"--dependency=afterok:42"), "{merge:?}");
    assert!(merge.contains(&"--kill-on-invalid-dep=yes"), "{merge:?}");
    let wrap = merge.iter().position(|a| *a == "--wrap").unwrap();
    assert_eq!(merge[wrap + 1], plan("merge").trim_end());
    assert!(
        merge.contains(
            &r#"--output=runs/x$(touch P) `touch P` 'q' "d" #h %%a !!/logs/2t2i-merge.log"#
        ),
        "{merge:?}"
    );
    assert!(!dir.join("P").exists(), "the Slurm script ran `touch P`");
    // The #SBATCH line: one quoted word, `%` of the folder doubled (Slurm's
    // pattern), `%a` kept.
    let output = slurm
        .lines()
        .find(|l| l.starts_with("#SBATCH --output="))
        .unwrap();
    assert_eq!(
        output,
        r#"#SBATCH --output="runs/x$(touch P) `touch P` 'q' \"d\" #h %%a !!/logs/2t2i-%a.log""#
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn plan_refuses_control_characters_bad_times_and_too_many_shards() {
    let dir = scratch("plan-bad");
    let plan = |extra: &[&str]| {
        let mut a = vec!["plan", "-t", "2", "-i", "3"];
        for (flag, default) in [("--shards", "2"), ("--dir", "r")] {
            if !extra.iter().any(|a| a.starts_with(flag)) {
                a.extend([flag, default]);
            }
        }
        a.extend(extra);
        synth(&dir, &a)
    };
    // A newline would split a job of the list and end an #SBATCH line.
    refused(&plan(&["--dir", "runs/x\ny"]), "control character");
    refused(&plan(&["--synth", "/bin/synth\r"]), "control character");
    refused(
        &plan(&["--dir", "r\u{1b}]0;title\u{7}"]),
        "control character",
    );
    refused(
        &plan(&["--time", "1:00\n#SBATCH --x"]),
        "not a Slurm time limit",
    );
    refused(&plan(&["--time", "1h"]), "not a Slurm time limit");
    refused(&plan(&["--dir=-rf"]), "starting with `-`");
    // An empty folder would put the shards in `/` (clap refuses it).
    assert_eq!(plan(&["--dir", ""]).status.code(), Some(2));
    refused(&plan(&["--dir", r"a\b", "--emit", "slurm"]), "backslash");
    assert!(plan(&["--dir", r"a\b", "--emit", "jobs"]).status.success());
    for t in ["30", "2-12:30:00", "UNLIMITED"] {
        let o = ok(plan(&["--time", t, "--emit", "slurm"]));
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains(&format!("#SBATCH --time={t}\n")), "{text}");
    }
    // `--shards 4294967296` printed for minutes; `--cpus 0` asked Slurm
    // for nothing.
    let o = plan(&["--shards", "4294967296"]);
    refused(&o, "1 to 10000 shards");
    refused(&plan(&["--shards", "10001"]), "1 to 10000 shards");
    assert_eq!(plan(&["--cpus", "0"]).status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stdout_ends_quietly_on_a_closed_pipe_and_fails_once_on_a_full_disk() {
    let dir = scratch("pipe");
    // 10000 shards: far more than a pipe holds, so the writer sees EPIPE.
    let mut child = Command::new(env!("CARGO_BIN_EXE_synth"))
        .current_dir(&dir)
        .args([
            "plan", "-t", "3", "-i", "4", "--shards", "10000", "--dir", "r",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap(); // `| head -1`: the reader goes away here
    let o = child.wait_with_output().unwrap();
    assert!(first.starts_with("# GNU parallel"), "{first}");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    // A streaming merge to a reader that is gone before (or while) it writes.
    ok(synth(
        &dir,
        &["-t", "2", "-i", "3", "--shard", "1/2", "-o", "s1.axb.gz"],
    ));
    ok(synth(
        &dir,
        &["-t", "2", "-i", "3", "--shard", "2/2", "-o", "s2.axb.gz"],
    ));
    let child = Command::new(env!("CARGO_BIN_EXE_synth"))
        .current_dir(&dir)
        .args([
            "merge",
            "s1.axb.gz",
            "s2.axb.gz",
            "-o",
            "-",
            "--format",
            "packed",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = child;
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("error"), "{}", stderr(&o));
    if !Path::new("/dev/full").exists() {
        return;
    }
    for args in [
        &["plan", "-t", "2", "-i", "3", "--shards", "2", "--dir", "r"][..],
        &["-t", "2", "-i", "2", "-o", "-"],
        &["find", "-t", "2", "-i", "2", "--fails", "HSA", "-o", "-"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_synth"))
            .current_dir(&dir)
            .args(args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.matches("error: ").count(), 1, "{e}");
        assert!(
            e.contains("cannot write to standard output: No space left"),
            "{e}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn numeric_flags_are_bounded_before_any_work() {
    let dir = scratch("flags");
    // A deadline past what the clock holds panicked (exit 101).
    let o = synth(
        &dir,
        &[
            "find",
            "-t",
            "2",
            "-i",
            "2",
            "--fails",
            "HSA",
            "--timeout",
            "1e19",
            "-o",
            "f.ron",
        ],
    );
    refused(&o, "--timeout");
    // SAT encodings that do not fit in memory aborted on allocation.
    let o = synth(
        &dir,
        &[
            "find", "-t", "2", "-i", "3", "--values", "16", "--fails", "HSA", "-o", "f.ron",
        ],
    );
    refused(&o, "clauses");
    let o = synth(
        &dir,
        &[
            "-t", "2", "-i", "3", "--values", "12", "--engine", "sat", "-o", "g.ron",
        ],
    );
    refused(&o, "clauses");
    let o = synth(
        &dir,
        &[
            "find", "-t", "8", "-i", "16", "--fails", "HSA", "-o", "f.ron",
        ],
    );
    refused(&o, "clauses");
    // The limit can be raised on a machine with the memory (and a bad
    // setting is one clear error).
    let o = Command::new(env!("CARGO_BIN_EXE_synth"))
        .current_dir(&dir)
        .args([
            "find", "-t", "8", "-i", "16", "--fails", "HSA", "-o", "f.ron",
        ])
        .env("SYNTH_MAX_SAT_CLAUSES", "lots")
        .output()
        .unwrap();
    refused(&o, "SYNTH_MAX_SAT_CLAUSES");
    // A split into 10^9 shards aborted on allocation and left a journal.
    let o = synth(
        &dir,
        &[
            "-t",
            "2",
            "-i",
            "3",
            "--shard",
            "1/1000000000",
            "-o",
            "s.ron",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("N <= 10000"), "{}", stderr(&o));
    // Nothing was made: no output, no journal.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    // The explicit engine and small SAT encodings still run.
    ok(synth(
        &dir,
        &[
            "-t", "2", "-i", "2", "--values", "3", "--engine", "sat", "-o", "ok.ron",
        ],
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn mkfifo(p: &Path) -> bool {
    Command::new("mkfifo")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn outputs_respect_fifos_links_and_devices() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("outputs");
    // A FIFO: its reader gets the suite, the FIFO stays, no journal beside.
    if mkfifo(&dir.join("fifo")) {
        let fifo = dir.join("fifo");
        let reader = std::thread::spawn(move || std::fs::read(fifo).unwrap());
        ok(synth(&dir, &["-t", "2", "-i", "2", "-o", "fifo"]));
        let got = String::from_utf8(reader.join().unwrap()).unwrap();
        assert!(got.starts_with("Suite("), "{got}");
        let m = std::fs::symlink_metadata(dir.join("fifo")).unwrap();
        assert!(m.file_type().is_fifo());
        assert!(!dir.join("fifo.journal").exists());
    }
    // A symbolic link: the target replaced, the link kept (gen, merge, find).
    std::fs::create_dir(dir.join("real")).unwrap();
    for (link, args) in [
        ("gen.ron", vec!["-t", "2", "-i", "2", "-o", "gen.ron"]),
        (
            "find.ron",
            vec![
                "find", "-t", "2", "-i", "2", "--fails", "HSA", "-o", "find.ron",
            ],
        ),
    ] {
        std::fs::write(dir.join("real").join(link), "old").unwrap();
        std::os::unix::fs::symlink(Path::new("real").join(link), dir.join(link)).unwrap();
        ok(synth(&dir, &args));
        assert!(std::fs::symlink_metadata(dir.join(link))
            .unwrap()
            .file_type()
            .is_symlink());
        let text = std::fs::read_to_string(dir.join("real").join(link)).unwrap();
        assert!(text.starts_with("Suite("), "{link}: {text}");
    }
    // A journal is a file: never a device (it is removed at the end).
    let o = synth(
        &dir,
        &[
            "-t",
            "2",
            "-i",
            "2",
            "-o",
            "j.ron",
            "--journal",
            "/dev/null",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    assert!(!dir.join("j.ron").exists());
    // A character device: written through, still a device, no journal.
    ok(synth(&dir, &["-t", "2", "-i", "2", "-o", "/dev/null"]));
    ok(synth(
        &dir,
        &[
            "find",
            "-t",
            "2",
            "-i",
            "2",
            "--fails",
            "HSA",
            "-o",
            "/dev/null",
        ],
    ));
    let m = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device(), "/dev/null was replaced");
    assert!(!Path::new("/dev/null.journal").exists());
    // A full disk: one error line, exit 1.
    if Path::new("/dev/full").exists() {
        ok(synth(
            &dir,
            &["-t", "2", "-i", "2", "--shard", "1/2", "-o", "s1.axb.gz"],
        ));
        ok(synth(
            &dir,
            &["-t", "2", "-i", "2", "--shard", "2/2", "-o", "s2.axb.gz"],
        ));
        let o = synth(
            &dir,
            &[
                "merge",
                "s1.axb.gz",
                "s2.axb.gz",
                "-o",
                "/dev/full",
                "--format",
                "packed",
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_eq!(stderr(&o).matches("error: ").count(), 1, "{}", stderr(&o));
        assert!(!Path::new("/dev/full.journal").exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_large_explorer_page_is_announced() {
    use synth::explorer::{size_warning, LARGE_PAGE_BYTES};
    assert_eq!(size_warning(LARGE_PAGE_BYTES, false), None);
    let w = size_warning(671_000_000, false).unwrap();
    assert!(w.contains("671 MB") && w.contains("--no-code"), "{w}");
    let w = size_warning(LARGE_PAGE_BYTES + 1, true).unwrap();
    assert!(!w.contains("--no-code"), "{w}");
}

/// Issue 23 item 7: `synth plan` writes its plan as every command writes
/// its output: `-o FILE` (replaced whole), `-o -` and no `-o` on standard
/// output, the same bytes; the shards' folder is `--dir`, and the old
/// spelling `--out DIR` without `--dir` is refused, not taken for the file.
#[test]
fn plan_writes_to_o_like_every_command() {
    let dir = scratch("plan-o");
    let args = ["plan", "-t", "2", "-i", "3", "--shards", "2", "--dir", "r"];
    let stdout = ok(synth(&dir, &args)).stdout;
    assert!(!stdout.is_empty());
    let dash = ok(synth(&dir, &[&args[..], &["-o", "-"]].concat())).stdout;
    assert_eq!(dash, stdout);
    let o = ok(synth(&dir, &[&args[..], &["-o", "plan.txt"]].concat()));
    assert!(o.stdout.is_empty());
    assert_eq!(std::fs::read(dir.join("plan.txt")).unwrap(), stdout);
    let old = synth(
        &dir,
        &["plan", "-t", "2", "-i", "3", "--shards", "2", "--out", "r"],
    );
    assert_eq!(old.status.code(), Some(2));
    assert!(stderr(&old).contains("--dir"), "{}", stderr(&old));
    assert!(!dir.join("r").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A bad output path is bad usage (exit 2, as `gen` and every help text
/// say), found before any work: the adversarial pass's reproducers gave 1
/// for `plan -o DIR`, `find -o DIR` and `find --format txt -o FILE`.
#[test]
fn a_bad_output_path_is_exit_2_for_plan_and_find() {
    let dir = scratch("badout");
    std::fs::create_dir_all(dir.join("adir")).unwrap();
    std::fs::write(dir.join("afile.txt"), "keep").unwrap();
    for args in [
        &[
            "plan", "-t", "2", "-i", "3", "--shards", "2", "--dir", "d", "-o", "adir",
        ][..],
        &[
            "find", "-t", "2", "-i", "3", "--passes", "OBE", "--fails", "HSA", "-o", "adir",
        ],
        &[
            "find",
            "-t",
            "2",
            "-i",
            "3",
            "--passes",
            "OBE",
            "--fails",
            "HSA",
            "--format",
            "txt",
            "-o",
            "afile.txt",
        ],
    ] {
        let o = synth(&dir, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("adir") || stderr(&o).contains("afile.txt"));
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("afile.txt")).unwrap(),
        "keep"
    );
    assert!(!dir.join("d").exists(), "plan wrote nothing");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-o` a dangling symbolic link into a folder that does not exist is
/// refused (exit 2) and the folder is not created (the adversarial pass's
/// reproducer: `synth plan ... -o dangl` with `dangl -> /nonexist/x` made
/// `/nonexist`).
#[test]
fn a_dangling_link_into_a_missing_folder_is_refused_not_made_real() {
    let dir = scratch("dangling");
    let missing = dir.join("nowhere");
    std::os::unix::fs::symlink(missing.join("x"), dir.join("dangl")).unwrap();
    for args in [
        &[
            "plan", "-t", "2", "-i", "3", "--shards", "2", "--dir", "d", "-o", "dangl",
        ][..],
        &["-t", "2", "-i", "2", "-o", "dangl"],
    ] {
        let o = synth(&dir, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("whose folder does not exist"),
            "{}",
            stderr(&o)
        );
        assert!(!missing.exists(), "{args:?} created the link's folder");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
