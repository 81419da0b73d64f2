//! The reproducers of issue 10 (synth's part) and the shard/merge split of
//! issue 15, each as a regression test: a locked and checked journal, the
//! output checked before any work, `-o -`, exit statuses, finer shards whose
//! merge is byte-identical to the unsharded run, packed suites, `synth plan`
//! through GNU parallel.

use std::path::{Path, PathBuf};
use std::process::Command;
use synth::enumerate::checkpoint::{journal_path, Journal};
use synth::{Config, Engine};

mod common;
use common::{ok, scratch, stderr, synth};

/// FNV-1a 64 of a line body, as the journal writes it: what someone
/// editing the journal by hand would recompute to get past the checksum.
fn sum(body: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in body.as_bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x} {body}")
}

/// A finished journal of 2t3i (the run's output not written, as if killed
/// just before the end), as lines.
fn journal_lines(dir: &Path) -> (PathBuf, Vec<String>) {
    let cfg = Config::new(2, 3);
    let path = journal_path(&dir.join("out.ron"));
    let j = Journal::create(&path, &cfg, Engine::Explicit, None).unwrap();
    let p = synth::new_progress(&cfg, Engine::Explicit, None);
    synth::enumerate_resumable(&cfg, Engine::Explicit, None, &p, &j).unwrap();
    drop(j);
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text.lines().map(String::from).collect())
}

fn resume_err(path: &Path, lines: &[String]) -> String {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
    Journal::resume(path, &Config::new(2, 3), Engine::Explicit, None)
        .err()
        .expect("the journal must be refused")
}

/// The line with the most tests, its body as JSON.
fn busiest(lines: &[String]) -> (usize, serde_json::Value) {
    let (k, l) = lines
        .iter()
        .enumerate()
        .skip(1)
        .max_by_key(|(_, l)| l.len())
        .unwrap();
    (k, serde_json::from_str(&l[17..]).unwrap())
}

#[test]
fn an_edited_journal_line_is_refused_by_its_checksum() {
    let dir = scratch("edit");
    let (path, lines) = journal_lines(&dir);
    // The untouched journal resumes.
    Journal::resume(&path, &Config::new(2, 3), Engine::Explicit, None).unwrap();
    // A test dropped from a line, the line still valid JSON.
    let (k, mut v) = busiest(&lines);
    v["tests"].as_array_mut().unwrap().pop();
    let mut edited = lines.clone();
    edited[k] = format!("{} {v}", &lines[k][..16]);
    let e = resume_err(&path, &edited);
    assert!(
        e.contains(&format!("out.ron.journal:{}: ", k + 1)) && e.contains("checksum"),
        "{e}"
    );
    // A line without a checksum (the old format, or typed by hand).
    let mut edited = lines.clone();
    edited[k] = lines[k][17..].to_string();
    let e = resume_err(&path, &edited);
    assert!(e.contains(&format!(":{}: ", k + 1)), "{e}");
}

#[test]
fn journal_tests_are_checked_against_the_run_even_with_a_good_checksum() {
    let dir = scratch("revalidate");
    let (path, lines) = journal_lines(&dir);
    let (k, v) = busiest(&lines);
    let at = format!("out.ron.journal:{}: ", k + 1);
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = v.clone();
        f(&mut v);
        let mut edited = lines.clone();
        edited[k] = sum(&v.to_string());
        resume_err(&path, &edited)
    };
    // `loc: 200`: refused (it used to panic after all the work was done).
    let e = edit(&|v| v["tests"][0]["threads"][0][0]["loc"] = 200.into());
    assert!(e.contains(&at) && e.contains("location"), "{e}");
    // A location within axb's range but outside --locs 2.
    let e = edit(&|v| v["tests"][0]["threads"][1][0]["loc"] = 3.into());
    assert!(e.contains(&at) && e.contains("--locs"), "{e}");
    // A value outside --values 2.
    let e = edit(&|v| v["tests"][0]["threads"][1][0]["check"] = 5.into());
    assert!(e.contains(&at) && e.contains("--values"), "{e}");
    // A test added: a copy of one from another unit.
    let other = lines
        .iter()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(&l[17..]).unwrap())
        .find(|o| o["unit"] != v["unit"] && !o["tests"].as_array().unwrap().is_empty())
        .unwrap();
    let e = edit(&|v| {
        v["tests"]
            .as_array_mut()
            .unwrap()
            .push(other["tests"][0].clone())
    });
    assert!(e.contains(&at) && e.contains("not in the unit"), "{e}");
    // The unit renumbered past the unit count.
    let e = edit(&|v| v["unit"] = 100_000.into());
    assert!(e.contains(&at) && e.contains("out of range"), "{e}");
    // A line repeated (its checksum is fine).
    let mut edited = lines.clone();
    edited.push(lines[k].clone());
    let e = resume_err(&path, &edited);
    assert!(e.contains("recorded twice"), "{e}");
}

#[test]
fn a_second_process_on_the_same_output_is_refused_at_once() {
    let dir = scratch("lock");
    let cfg = Config::new(2, 3);
    let path = journal_path(&dir.join("out.ron"));
    let held = Journal::create(&path, &cfg, Engine::Explicit, None).unwrap();
    // In-process, a second journal on the file.
    let e = Journal::resume(&path, &cfg, Engine::Explicit, None)
        .err()
        .unwrap();
    assert!(e.contains("another synth process"), "{e}");
    // Another process, with and without --resume: exit 2, output untouched.
    for resume in [true, false] {
        let mut args = vec!["-t", "2", "-i", "3", "-o", "out.ron"];
        if resume {
            args.push("--resume");
        }
        let o = synth(&dir, &args);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("another synth process"),
            "{}",
            stderr(&o)
        );
        assert!(!dir.join("out.ron").exists());
    }
    drop(held);
    // Once the first is gone, resuming works and removes the journal.
    ok(synth(
        &dir,
        &["-t", "2", "-i", "3", "-o", "out.ron", "--resume"],
    ));
    assert!(dir.join("out.ron").exists() && !path.exists());
}

#[test]
fn the_output_is_checked_before_any_work() {
    let dir = scratch("out");
    std::fs::write(dir.join("file"), "x").unwrap();
    // 2t6i takes CPU hours: these must fail at once, with exit 2.
    for out in ["file/x.ron", "/proc/no/such/dir/x.ron", "."] {
        let o = synth(&dir, &["-t", "2", "-i", "6", "-o", out]);
        assert_eq!(o.status.code(), Some(2), "{out}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("error: --out {out}")),
            "{}",
            stderr(&o)
        );
    }
    let o = synth(&dir, &["-t", "2", "-i", "6", "--format", "txt", "-o", "-"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = synth(&dir, &["-t", "2", "-i", "6", "--resume", "-o", "-"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Bad options: exit 2, `error:` first.
    let o = synth(&dir, &["-t", "0", "-i", "3", "-o", "x.ron"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
}

#[test]
fn stdout_and_a_trailing_slash_work() {
    let dir = scratch("stdout");
    ok(synth(&dir, &["-t", "2", "-i", "3", "-o", "2t3i.ron"]));
    let o = ok(synth(&dir, &["-t", "2", "-i", "3", "-o", "-"]));
    assert_eq!(o.stdout, std::fs::read(dir.join("2t3i.ron")).unwrap());
    assert!(!dir.join("-").exists() && !dir.join("-.journal").exists());
    // `--out 2t3i/`: a directory of .txt files; the journal beside it.
    ok(synth(
        &dir,
        &["gen", "-t", "2", "-i", "3", "--out", "2t3i/"],
    ));
    let n = std::fs::read_dir(dir.join("2t3i")).unwrap().count();
    assert_eq!(n, 176);
    assert!(!dir.join("2t3i.journal").exists());
    // Merge to stdout too.
    for k in 1..=2 {
        let out = format!("p{k}.ron");
        ok(synth(
            &dir,
            &[
                "-t",
                "2",
                "-i",
                "3",
                "--shard",
                &format!("{k}/2"),
                "-o",
                &out,
            ],
        ));
    }
    let o = ok(synth(&dir, &["merge", "p1.ron", "p2.ron", "-o", "-"]));
    assert_eq!(o.stdout, std::fs::read(dir.join("2t3i.ron")).unwrap());
}

#[test]
fn explorer_status_on_stderr_and_exit_2_for_bad_input() {
    let dir = scratch("explorer");
    let o = synth(&dir, &["explorer", "missing.ron", "-o", "x.html"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("error: missing.ron"),
        "{}",
        stderr(&o)
    );
    // A test whose file name is too long for a test name.
    let long = format!("{}.txt", "a".repeat(100));
    std::fs::write(dir.join(&long), "THREAD0\natomic_store(0,1)\n").unwrap();
    let o = synth(&dir, &["explorer", &long, "-o", "x.html"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    ok(synth(&dir, &["-t", "2", "-i", "2", "-o", "s.ron"]));
    let o = ok(synth(&dir, &["explorer", "s.ron", "-o", "s.html"]));
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("8 tests"), "{}", stderr(&o));
}

/// Runs every shard of `K/n`, merges, and compares with the unsharded run.
fn shards_merge_to_the_unsharded_bytes(threads: usize, instrs: usize, n: usize, ext: &str) {
    let dir = scratch(&format!("shards-{threads}-{instrs}-{n}{ext}"));
    let (t, i) = (threads.to_string(), instrs.to_string());
    let whole = format!("whole{ext}");
    ok(synth(&dir, &["-t", &t, "-i", &i, "-o", &whole]));
    let cfg = Config::new(threads, instrs);
    let mut parts = Vec::new();
    let mut empty = 0;
    for k in 1..=n {
        let out = format!("p{k}{ext}");
        ok(synth(
            &dir,
            &[
                "-t",
                &t,
                "-i",
                &i,
                "--shard",
                &format!("{k}/{n}"),
                "-o",
                &out,
            ],
        ));
        let shard = synth::Shard { index: k, count: n };
        if synth::shard_units(&cfg, Some(shard)).is_empty() {
            empty += 1;
        }
        parts.push(out);
    }
    assert_eq!(empty, 0, "every shard has work");
    parts.reverse(); // order of the parts does not matter
    let mut args = vec!["merge".to_string()];
    args.extend(parts);
    args.extend(["-o".into(), format!("merged{ext}")]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(synth(&dir, &args));
    let a = std::fs::read(dir.join(&whole)).unwrap();
    let b = std::fs::read(dir.join(format!("merged{ext}"))).unwrap();
    assert!(
        a == b,
        "{threads}t{instrs}i over {n} shards ({ext}) differs"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn more_shards_than_units_merge_to_the_same_bytes() {
    // 2t3i has 14 units: 64 shards used to leave most of them empty.
    shards_merge_to_the_unsharded_bytes(2, 3, 7, ".ron");
    shards_merge_to_the_unsharded_bytes(2, 3, 64, ".ron");
    shards_merge_to_the_unsharded_bytes(3, 4, 7, ".axb.gz");
}

/// The same for 3t4i (28 units) over 64 shards: 130 processes, so release
/// builds only.
#[test]
#[cfg_attr(debug_assertions, ignore)]
fn sixty_four_shards_of_3t4i_merge_to_the_same_bytes() {
    shards_merge_to_the_unsharded_bytes(3, 4, 7, ".ron");
    shards_merge_to_the_unsharded_bytes(3, 4, 64, ".ron");
    shards_merge_to_the_unsharded_bytes(2, 3, 7, ".axb.gz");
}

#[test]
fn packed_suites_hold_the_same_tests_as_ron() {
    let dir = scratch("packed");
    ok(synth(&dir, &["-t", "3", "-i", "4", "-o", "s.ron"]));
    ok(synth(&dir, &["-t", "3", "-i", "4", "-o", "s.axb.gz"]));
    let ron = progress_litmus::axb::load::load_file(&dir.join("s.ron")).unwrap();
    let packed = progress_litmus::axb::load::load_file(&dir.join("s.axb.gz")).unwrap();
    assert_eq!(ron.len(), 4260);
    let strip = |v: Vec<progress_litmus::axb::load::NamedTest>| -> Vec<_> {
        v.into_iter().map(|t| (t.name, t.entry.test)).collect()
    };
    assert_eq!(strip(ron), strip(packed));
    // A packed merge output of RON shards equals the packed unsharded run.
    for k in 1..=3 {
        let out = format!("p{k}.ron");
        ok(synth(
            &dir,
            &[
                "-t",
                "3",
                "-i",
                "4",
                "--shard",
                &format!("{k}/3"),
                "-o",
                &out,
            ],
        ));
    }
    ok(synth(
        &dir,
        &["merge", "p1.ron", "p2.ron", "p3.ron", "-o", "m.axb.gz"],
    ));
    assert_eq!(
        std::fs::read(dir.join("m.axb.gz")).unwrap(),
        std::fs::read(dir.join("s.axb.gz")).unwrap()
    );
    // A shard with its tests out of order is refused, naming the line.
    let bad = progress_litmus::axb::packed::suite_to_packed(&{
        let mut s = match progress_litmus::axb::load::load_document(&dir.join("p1.ron")).unwrap() {
            progress_litmus::axb::load::Document::Suite(s) => s,
            _ => unreachable!(),
        };
        s.tests.swap(0, 1);
        s
    });
    std::fs::write(dir.join("p1.axb.gz"), bad).unwrap();
    for k in 2..=3 {
        let out = format!("p{k}.axb.gz");
        ok(synth(
            &dir,
            &[
                "-t",
                "3",
                "-i",
                "4",
                "--shard",
                &format!("{k}/3"),
                "-o",
                &out,
            ],
        ));
    }
    let o = synth(
        &dir,
        &[
            "merge",
            "p1.axb.gz",
            "p2.axb.gz",
            "p3.axb.gz",
            "-o",
            "m2.axb.gz",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("p1.axb.gz:5"), "{}", stderr(&o));
    assert!(!dir.join("m2.axb.gz").exists());
}

#[test]
fn plan_runs_four_shards_through_gnu_parallel() {
    if Command::new("parallel").arg("--version").output().is_err() {
        eprintln!("SKIPPED: GNU parallel is not installed (apt-get install parallel)");
        return;
    }
    let dir = scratch("plan");
    ok(synth(&dir, &["-t", "3", "-i", "4", "-o", "whole.axb.gz"]));
    let plan = |emit: &str| {
        let o = ok(synth(
            &dir,
            &[
                "plan", "-t", "3", "-i", "4", "--shards", "4", "--dir", "shards", "--emit", emit,
            ],
        ));
        String::from_utf8(o.stdout).unwrap()
    };
    let jobs = plan("jobs");
    assert_eq!(jobs.lines().count(), 4);
    std::fs::write(dir.join("jobs"), &jobs).unwrap();
    let o = Command::new("parallel")
        .current_dir(&dir)
        .args(["--will-cite", "-j", "2", "--halt", "now,fail=1"])
        .stdin(std::fs::File::open(dir.join("jobs")).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let merge = plan("merge");
    let o = Command::new("sh")
        .current_dir(&dir)
        .args(["-c", &merge])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(dir.join("shards/3t4i.axb.gz")).unwrap(),
        std::fs::read(dir.join("whole.axb.gz")).unwrap()
    );
    // Running the jobs again skips the finished shards.
    let o = Command::new("sh")
        .current_dir(&dir)
        .args(["-c", &jobs])
        .output()
        .unwrap();
    assert!(o.status.success() && o.stderr.is_empty(), "{}", stderr(&o));
    // The Slurm script is an array of the same four shards.
    let slurm = plan("slurm");
    assert!(slurm.contains("#SBATCH --array=1-4"), "{slurm}");
    assert!(
        slurm.contains("--shard \"$SLURM_ARRAY_TASK_ID/4\""),
        "{slurm}"
    );
}

#[test]
fn suites_refuses_a_missing_published_folder_with_exit_2() {
    let dir = scratch("suites-bad");
    let o = synth(&dir, &["suites", "--published", "nowhere", "--out", "s"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
    assert!(!dir.join("s").exists());
}

/// Issue 46, item 2, as a user meets it: a list folder of `-o DIR` that
/// is a link to elsewhere is one error line, exit 2, and the link's
/// target keeps its files.
#[test]
fn suites_refuses_a_link_in_its_output_with_exit_2() {
    let dir = scratch("suites-link");
    std::fs::create_dir_all(dir.join("s/2t2i")).unwrap();
    std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
    std::fs::write(dir.join("elsewhere/precious.txt"), "mine\n").unwrap();
    std::os::unix::fs::symlink("../../elsewhere", dir.join("s/2t2i/conformance")).unwrap();
    let o = synth(&dir, &["suites", "--out", "s"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("s/2t2i/conformance: a symbolic link inside the output folder"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_dir(dir.join("elsewhere")).unwrap().count(), 1);
    assert!(!dir.join("s/README.md").exists(), "nothing written");
}

/// `synth suites --format json`: one JSON object with every suite's counts
/// (a full regeneration: release builds only).
#[test]
#[cfg_attr(debug_assertions, ignore)]
fn suites_summary_as_json() {
    let dir = scratch("suites-json");
    let o = ok(synth(
        &dir,
        &[
            "suites",
            "--out",
            "s",
            "--format",
            "json",
            "--summary",
            "sum.json",
        ],
    ));
    assert!(o.stdout.is_empty());
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("sum.json")).unwrap()).unwrap();
    let suites = v["suites"].as_array().unwrap();
    let count = |name: &str| {
        suites.iter().find(|s| s["suite"] == name).unwrap()["tests"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(
        (count("oopsla21"), count("2t3i"), count("3t4i")),
        (483, 176, 4260)
    );
    assert_eq!(v["written"], v["files"]);
    // To stdout by default.
    let o = ok(synth(&dir, &["suites", "--out", "s", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["written"], 0);
}
