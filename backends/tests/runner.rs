//! `backends run` and `backends report` end to end on this machine's CPU (a
//! small sample of the published suite; the full campaign is in
//! `results/cpu/`), including interruption by `kill -9`, torn and corrupt
//! journal lines, and bad input.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Five published tests: two that only fair schedulers guarantee (2t2i_2,
/// 2t3i_10, 2t4i_64 fail weak LOBE) and two 3-thread weak-LOBE conformance
/// tests among the eleven the A12 and g77 violate.
const SAMPLE: [&str; 5] = ["2t2i_2", "2t3i_10", "2t4i_64", "3t3i_7", "3t4i_34"];

/// A directory holding the sample tests.
fn sample_suite(dir: &Path) -> PathBuf {
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    for t in SAMPLE {
        std::fs::copy(published(t), suite.join(format!("{t}.txt"))).unwrap();
    }
    suite
}

fn results_in(journal: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(journal)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|v| v.get("result").cloned())
        .collect()
}

#[test]
fn a_cpu_sample_terminates_everywhere_and_is_consistent_with_every_model() {
    let dir = scratch("sample");
    let suite = sample_suite(&dir);
    let out = dir.join("out");
    let o = backends(&[
        "run",
        "--target",
        "cpp",
        s(&suite),
        "--iterations",
        "2",
        "--instances",
        "256",
        "--deadline-ms",
        "20000",
        "--out",
        s(&out),
        "--name",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(results_in(&out.join("cpu.journal.jsonl")).len(), 5 * 3 * 2);
    for config in [
        "2_thread_2_instruction",
        "2_thread_3_instruction",
        "2_thread_4_instruction",
        "3_thread_3_instruction",
        "3_thread_4_instruction",
    ] {
        let csv = std::fs::read_to_string(out.join(config).join("cpp/cpu.csv")).unwrap();
        assert!(csv.ends_with("Total failures:,0,0,0,0\n"), "{csv}");
    }
    let device: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("cpu.device.json")).unwrap())
            .unwrap();
    assert_eq!(device["results"]["runs"], 30);
    assert!(
        device["description"]["host"]["hardware_threads"]
            .as_u64()
            .unwrap()
            >= 1
    );

    let r = backends(&["report", s(&out), "--tests", s(&suite), "--format", "json"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let list: Vec<serde_json::Value> = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(list.len(), 11);
    assert!(list
        .iter()
        .all(|f| f["device"] == "cpu" && f["consistent"] == true));
}

/// The harness's occupancy-bound scheduler on one OS thread runs workgroup
/// 0 to END first: 2t2i_2's thread 0 waits forever for thread 1. The runner
/// must record that as non-termination (by the deadline) and the report
/// must turn it into a deterministic weak-fairness violation.
#[test]
fn hangs_are_recorded_by_the_deadline_and_reported_as_violations() {
    let dir = scratch("hang");
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::copy(published("2t2i_2"), suite.join("2t2i_2.txt")).unwrap();
    let out = dir.join("out");
    let o = backends(&[
        "run",
        "--target",
        "cpp",
        s(&suite),
        "--iterations",
        "2",
        "--instances",
        "4",
        "--deadline-ms",
        "200",
        "--os-threads",
        "1",
        "--program-arg=--scheduler=obe",
        "--mappings",
        "plain,chunked",
        "--out",
        s(&out),
        "--name",
        "obe1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("2_thread_2_instruction/cpp/obe1.csv")).unwrap();
    assert_eq!(
        csv.lines().nth(1),
        Some("2,F (2/2),,F (2/2),F"),
        "round-robin was not run: an empty cell\n{csv}"
    );
    let r = backends(&["report", s(&out), "--tests", s(&suite), "--format", "json"]);
    let list: Vec<serde_json::Value> = serde_json::from_slice(&r.stdout).unwrap();
    let fair = list.iter().find(|f| f["model"] == "WEAK_FAIR").unwrap();
    assert_eq!(fair["consistent"], false);
    assert_eq!(
        fair["violations"],
        serde_json::json!([
            {"test": "2t2i_2", "mapping": "plain", "failed": 2, "runs": 2},
            {"test": "2t2i_2", "mapping": "chunked", "failed": 2, "runs": 2}
        ])
    );
    let lobe = list.iter().find(|f| f["model"] == "LOBE").unwrap();
    assert_eq!(
        lobe["consistent"], true,
        "2t2i_2 is no weak LOBE conformance test"
    );
}

#[test]
fn a_campaign_killed_with_sigkill_resumes_without_losing_or_double_counting() {
    let dir = scratch("kill");
    let suite = sample_suite(&dir);
    let out = dir.join("out");
    let journal = out.join("k.journal.jsonl");
    let args = [
        "run",
        "--target",
        "cpp",
        s(&suite),
        "--iterations",
        "20",
        "--instances",
        "2048",
        "--deadline-ms",
        "20000",
        "--out",
        s(&out),
        "--name",
        "k",
    ];
    let mut child = bin().args(args).stderr(Stdio::null()).spawn().unwrap();
    let t0 = Instant::now();
    loop {
        let n = std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count());
        if n >= 40 || t0.elapsed() > Duration::from_secs(120) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = std::fs::read_to_string(&journal).unwrap();
    let recorded = before.lines().count();
    assert!(recorded >= 40, "only {recorded} lines");
    assert!(recorded < 2 + 300, "the campaign finished before the kill");
    // As if the kill had come in the middle of a write.
    let complete = before.rfind('\n').map_or(0, |i| i + 1);
    let mut torn = before[..complete].to_string();
    torn.push_str("{\"result\":{\"test\":\"2t4i_64\",\"mapping\":\"chu");
    std::fs::write(&journal, &torn).unwrap();

    let mut resume: Vec<&str> = args.to_vec();
    resume.push("--resume");
    let o = backends(&resume);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("torn last line"), "{}", stderr(&o));
    let after = std::fs::read_to_string(&journal).unwrap();
    assert!(
        after.starts_with(&before[..complete]),
        "recorded lines changed"
    );
    let results = results_in(&journal);
    assert_eq!(results.len(), 5 * 3 * 20);
    let keys: BTreeSet<(String, String, u64)> = results
        .iter()
        .map(|r| {
            (
                r["test"].as_str().unwrap().to_string(),
                r["mapping"].as_str().unwrap().to_string(),
                r["iteration"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(keys.len(), 300);
    assert!(keys.iter().all(|k| k.2 < 20));
    let sessions = after
        .lines()
        .filter(|l| l.starts_with("{\"session\""))
        .count();
    assert!(sessions >= 2);
    let csv = std::fs::read_to_string(out.join("3_thread_4_instruction/cpp/k.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");

    // A finished campaign resumed again runs nothing and changes nothing.
    let o = backends(&resume);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("300 runs (0 now)"), "{}", stderr(&o));

    // A complete line that is not a journal entry is an error, not repaired.
    let mut lines: Vec<&str> = after.lines().collect();
    lines[4] = "{\"result\":{\"test\":\"2t2i_2\"}}";
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let o = backends(&resume);
    assert_clean_failure(
        &o,
        2,
        &[&format!("{}:5: corrupt journal line", journal.display())],
    );
    // Nor is a run recorded twice.
    let mut lines: Vec<&str> = after.lines().collect();
    let dup = lines[3];
    lines.push(dup);
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    assert_clean_failure(&backends(&resume), 2, &["recorded twice"]);
}

#[test]
fn a_journal_is_never_mixed_with_another_campaign() {
    let dir = scratch("mix");
    let suite = sample_suite(&dir);
    let out = dir.join("out");
    let base = [
        "run",
        "--target",
        "cpp",
        s(&suite),
        "--iterations",
        "1",
        "--instances",
        "16",
        "--mappings",
        "plain",
        "--out",
        s(&out),
        "--name",
        "m",
    ];
    assert!(backends(&base).status.success());
    assert_clean_failure(&backends(&base), 2, &["pass --resume"]);
    let mut other: Vec<&str> = base.to_vec();
    other[5] = "3";
    other.push("--resume");
    assert_clean_failure(&backends(&other), 2, &["differs from this command"]);
}

#[test]
fn bad_run_input_and_missing_compilers_are_clear_errors() {
    let dir = scratch("bad-run");
    let out = dir.join("out");
    assert_clean_failure(
        &backends(&[
            "run",
            "--target",
            "cpp",
            s(&dir.join("nope")),
            "--out",
            s(&out),
        ]),
        2,
        &["no such file"],
    );
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "THREAD0\natomic_chk_branch(0,0,7)\n").unwrap();
    assert_clean_failure(
        &backends(&["run", "--target", "cpp", s(&bad), "--out", s(&out)]),
        2,
        &["bad.txt"],
    );
    let suite = sample_suite(&dir);
    assert_clean_failure(
        &backends(&[
            "run",
            "--target",
            "cuda",
            s(&suite),
            "--os-threads",
            "4",
            "--out",
            s(&out),
        ]),
        2,
        &["--os-threads is for the cpp target"],
    );
    // No compiler on PATH: the message names the package, and no journal
    // is left behind.
    let empty = dir.join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    for (target, needles) in [
        ("cpp", ["`g++` not found", "apt-get install g++"]),
        ("cuda", ["`nvcc` not found", "cuda-toolkit"]),
        ("vulkan", ["`glslangValidator` not found", "glslang-tools"]),
    ] {
        let o = bin()
            .args(["run", "--target", target, s(&suite), "--out", s(&out)])
            .env("PATH", &empty)
            .output()
            .unwrap();
        assert_clean_failure(&o, 1, &needles);
    }
    assert!(!out.exists());
}

#[test]
fn bad_report_input_is_a_clear_error_with_status_2() {
    let dir = scratch("bad-report");
    let suite = sample_suite(&dir);
    let header = "Test File Name,No saturation Result,Round Robin Saturation Result,Chunking Saturation Result,All Passed";
    let write = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    };
    // Results of another suite: 2t2i_5 is not in the sample.
    let other = write(
        "other/2_thread_2_instruction/x/dev.csv",
        &format!("{header}\n2,P,P,P,P\n5,P,F (1/20),P,F\nTotal failures:,0,1,0,1\n"),
    );
    assert_clean_failure(
        &backends(&["report", s(&other), "--tests", s(&suite)]),
        2,
        &[
            "dev.csv:3: test 2t2i_5 (device dev) is not among the tests",
            "another suite",
        ],
    );
    // A cell that is neither P nor F (k/n).
    let corrupt = write(
        "corrupt/2_thread_2_instruction/x/dev.csv",
        &format!("{header}\n2,P,maybe,P,P\nTotal failures:,0,0,0,0\n"),
    );
    assert_clean_failure(
        &backends(&["report", s(&corrupt), "--tests", s(&suite)]),
        2,
        &["dev.csv:2: bad result cell `maybe`"],
    );
    // A truncated file.
    let cut = write(
        "cut/2_thread_2_instruction/x/dev.csv",
        &format!("{header}\n2,P,P,P,P\n"),
    );
    assert_clean_failure(
        &backends(&["report", s(&cut), "--tests", s(&suite)]),
        2,
        &["truncated"],
    );
    // Missing results and missing tests.
    assert_clean_failure(
        &backends(&["report", s(&dir.join("none")), "--tests", s(&suite)]),
        2,
        &["no such file"],
    );
    let good = write(
        "good/2_thread_2_instruction/x/dev.csv",
        &format!("{header}\n2,P,P,P,P\nTotal failures:,0,0,0,0\n"),
    );
    assert_clean_failure(
        &backends(&["report", s(&good), "--tests", s(&dir.join("no-tests"))]),
        2,
        &["no-tests: no such file"],
    );
    // The same test twice for one device.
    write(
        "good/2_thread_2_instruction/y/dev.csv",
        &format!("{header}\n2,P,P,P,P\nTotal failures:,0,0,0,0\n"),
    );
    assert_clean_failure(
        &backends(&["report", s(&dir.join("good")), "--tests", s(&suite)]),
        2,
        &["already read from"],
    );
    // Links in a loop (issue 10: `ln -s . x` twice hung a walk, one link
    // read files twice) and a link to /dev/zero: each file read once, the
    // walk ends, the device is not read.
    let looped = dir.join("looped");
    let config = looped.join("2_thread_2_instruction/x");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("dev.csv"),
        format!("{header}\n2,P,P,P,P\nTotal failures:,0,0,0,0\n"),
    )
    .unwrap();
    std::os::unix::fs::symlink(".", looped.join("x")).unwrap();
    std::os::unix::fs::symlink(".", looped.join("y")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", config.join("zero.csv")).unwrap();
    let o = backends(&[
        "report",
        s(&looped),
        "--tests",
        s(&suite),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert!(list.iter().all(|f| f["device"] == "dev"));
}

/// The CUDA path without a GPU: the program compiled by g++ against the
/// CPU emulation of the runtime (an occupancy-bound "GPU" with 2 SMs), so
/// the device query, the result lines and the journal are those of CUDA.
#[test]
fn the_cuda_runner_works_against_the_cpu_emulation_of_the_runtime() {
    let dir = scratch("cuda");
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::copy(published("2t2i_2"), suite.join("2t2i_2.txt")).unwrap();
    let out = dir.join("out");
    let o = backends(&[
        "run",
        "--target",
        "cuda",
        "--cuda-on-cpu",
        s(&suite),
        "--iterations",
        "1",
        "--instances",
        "8",
        "--deadline-ms",
        "1000",
        "--mappings",
        "plain,chunked",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let device: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("cuda.device.json")).unwrap())
            .unwrap();
    assert!(device["description"]["gpu"]["device"]
        .as_str()
        .unwrap()
        .contains("cuda-shim"));
    assert!(device["description"]["gpu"]["sms"].as_u64().is_some());
    let results = results_in(&out.join("cuda.journal.jsonl"));
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["extra"]["launch"] == "normal"));
    // 16 chunked workgroups on an occupancy-bound 2-SM emulation: the eight
    // thread-0 blocks spin and starve the thread-1 blocks.
    let chunked = results.iter().find(|r| r["mapping"] == "chunked").unwrap();
    assert_eq!(chunked["terminated"], false);
    assert!(out.join("2_thread_2_instruction/CUDA/cuda.csv").is_file());
}

/// `backends run --target vulkan` on the machine's Vulkan device (CI:
/// lavapipe). A device that ends the canary by itself is refused before
/// anything is journaled; `--no-canary` runs the campaign
/// anyway, and its results land in artifact `Vulkan` directories that
/// `backends report` reads.
#[test]
fn the_vulkan_runner_checks_the_canary_then_journals_and_reports() {
    use backends::toolchain::Tool;
    if !tools(&[Tool::Glslang, Tool::Gxx]) {
        return;
    }
    let dir = scratch("vulkan");
    let suite = sample_suite(&dir);
    let out = dir.join("out");
    let run = |extra: &[&str]| {
        let mut argv = vec![
            "run",
            "--target",
            "vulkan",
            s(&suite),
            "--iterations",
            "2",
            "--instances",
            "4",
            "--deadline-ms",
            "5000",
            "--out",
            s(&out),
        ];
        argv.extend_from_slice(extra);
        backends(&argv)
    };
    let checked = run(&[]);
    if !checked.status.success() {
        // lavapipe: the canary ends after 65535 loop iterations.
        assert_clean_failure(&checked, 1, &["ended the canary", "--no-canary"]);
        assert!(!out.exists(), "no journal for a refused device");
        // Every flag the message names is one `run` takes (issue 23 item
        // 7: it named `--device`, a flag of the program only): the device
        // through --program-arg, and --no-canary.
        let e = stderr(&checked);
        assert!(e.contains("--program-arg=--device=N"), "{e}");
        let other = run(&["--program-arg=--device=0", "--name", "dev0"]);
        assert!(
            !stderr(&other).contains("unexpected argument"),
            "{}",
            stderr(&other)
        );
        let _ = std::fs::remove_dir_all(&out);
    }
    let _ = std::fs::remove_dir_all(&out);
    // The canary's message says `--no-canary`: `run` takes it as it says.
    let o = run(&["--no-canary", "--name", "vk"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let device: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("vk.device.json")).unwrap())
            .unwrap();
    assert!(device["description"]["vulkan"]["device"].is_string());
    assert_eq!(device["target"], "vulkan");
    let results = results_in(&out.join("vk.journal.jsonl"));
    assert_eq!(results.len(), SAMPLE.len() * 3 * 2);
    assert!(results
        .iter()
        .filter(|r| r["mapping"] == "plain")
        .all(|r| r["terminated"] == true));
    assert!(out.join("3_thread_4_instruction/Vulkan/vk.csv").is_file());
    let report = backends(&["report", s(&out), "--tests", s(&suite), "--format", "json"]);
    assert!(report.status.success(), "{}", stderr(&report));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&report.stdout).unwrap();
    assert!(rows.iter().any(|r| r["device"] == "vk"));
}

/// `backends import`: the output of a program run elsewhere (here: the
/// emitted C++ program, run by hand twice) becomes the same journal, CSVs
/// and report as a campaign; bad lines are named by file and line.
#[test]
fn results_of_a_program_run_elsewhere_are_imported_and_checked() {
    let dir = scratch("import");
    let suite = sample_suite(&dir);
    let prog = dir.join("prog");
    let o = backends(&[
        "emit",
        "--target",
        "cpp",
        s(&suite),
        "--out",
        s(&prog),
        "--name",
        "tests",
        "--check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let exe = prog.join("tests");
    let lines = |file: &str, args: &[&str]| {
        let o = Command::new(&exe).args(args).output().unwrap();
        assert!(o.status.success());
        let path = dir.join(file);
        std::fs::write(&path, &o.stdout).unwrap();
        path
    };
    let base = [
        "--instances",
        "4",
        "--deadline-ms",
        "5000",
        "--threads",
        "2",
    ];
    let a = lines("a.jsonl", &[&base[..], &["--iterations", "2"]].concat());
    let b = lines("b.jsonl", &[&base[..], &["--mapping", "chunked"]].concat());
    let out = dir.join("out");
    let import = |extra: &[&str]| {
        let mut argv = vec!["import", "--target", "cpp", s(&suite), "--out", s(&out)];
        argv.extend_from_slice(extra);
        backends(&argv)
    };
    let o = import(&["--lines", s(&a), "--lines", s(&b), "--name", "remote"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let results = results_in(&out.join("remote.journal.jsonl"));
    assert_eq!(results.len(), SAMPLE.len() * (3 * 2 + 1));
    // b's chunked runs follow a's: iterations 0, 1, 2.
    let chunked: BTreeSet<u64> = results
        .iter()
        .filter(|r| r["test"] == "2t2i_2" && r["mapping"] == "chunked")
        .map(|r| r["iteration"].as_u64().unwrap())
        .collect();
    assert_eq!(chunked, BTreeSet::from([0, 1, 2]));
    assert!(out.join("3_thread_4_instruction/cpp/remote.csv").is_file());
    assert!(out.join("remote.device.json").is_file());
    let report = backends(&["report", s(&out), "--tests", s(&suite), "--format", "json"]);
    assert!(report.status.success(), "{}", stderr(&report));
    // The same name again: refused, nothing overwritten.
    assert_clean_failure(
        &import(&["--lines", s(&a), "--name", "remote"]),
        2,
        &["already here"],
    );

    // Bad lines, each named by file and line.
    let first = std::fs::read_to_string(&a).unwrap();
    let first = first.lines().next().unwrap();
    let bad = |file: &str, text: String| {
        let p = dir.join(file);
        std::fs::write(&p, text).unwrap();
        p
    };
    let cases = [
        (
            bad("torn.jsonl", format!("{first}\n{{\"test\":")),
            "torn.jsonl:2:",
        ),
        (
            // serde_json alone keeps the last `test`: a run of 2t2i_2
            // would be counted as one of 2t2i_5.
            bad(
                "key-twice.jsonl",
                format!(
                    "{first}\n{}\n",
                    first.replacen("{", "{\"test\":\"2t2i_5\",", 1)
                ),
            ),
            "key-twice.jsonl:2: the key `test` is given twice in one object",
        ),
        (
            bad(
                "other.jsonl",
                format!("\n{}\n", first.replace("2t2i_2", "2t2i_5")),
            ),
            "other.jsonl:2: test `2t2i_5` is not in the suite",
        ),
        (
            bad("twice.jsonl", format!("{first}\n{first}\n")),
            "twice.jsonl:2: run 0 of",
        ),
        (bad("empty.jsonl", String::new()), "no result lines in"),
    ];
    for (path, needle) in cases {
        let o = import(&["--lines", s(&path), "--name", "bad"]);
        assert_clean_failure(&o, 2, &[needle]);
        assert!(!out.join("bad.journal.jsonl").exists());
    }
    // The device description comes from the program's --info line.
    let not_json = bad("info-bad.json", "\nGPU 0\n".to_string());
    let o = import(&["--lines", s(&a), "--info", s(&not_json), "--name", "bad"]);
    assert_clean_failure(&o, 2, &["info-bad.json:2: not JSON"]);
    let twice = bad(
        "info-twice.json",
        "{\"device\":\"a\",\"device\":\"b\"}\n".to_string(),
    );
    let o = import(&["--lines", s(&a), "--info", s(&twice), "--name", "bad"]);
    assert_clean_failure(
        &o,
        2,
        &["info-twice.json:1: the key `device` is given twice"],
    );
    let info = bad("info.json", "{\"device\":\"far away\"}\n".to_string());
    let o = import(&["--lines", s(&a), "--info", s(&info), "--name", "far"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let device: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("far.device.json")).unwrap())
            .unwrap();
    assert_eq!(device["description"]["host"]["device"], "far away");
    assert_eq!(device["description"]["imported"], true);
}

/// `--only LIST` runs the named tests of a suite (a conformance list of
/// `synth suites`); a name the suite lacks is an error naming the line.
#[test]
fn only_runs_the_tests_of_a_list_and_names_a_stranger_by_line() {
    let dir = scratch("only");
    let suite = sample_suite(&dir);
    let list = dir.join("list.txt");
    std::fs::write(&list, "# two of the sample\n2t3i_10\n\n3t3i_7\n").unwrap();
    let out = dir.join("out");
    let run = |list: &Path| {
        backends(&[
            "run",
            "--target",
            "cpp",
            s(&suite),
            "--only",
            s(list),
            "--iterations",
            "1",
            "--instances",
            "4",
            "--name",
            "only",
            "--out",
            s(&out),
        ])
    };
    let o = run(&list);
    assert!(o.status.success(), "{}", stderr(&o));
    let tests: BTreeSet<String> = results_in(&out.join("only.journal.jsonl"))
        .iter()
        .map(|r| r["test"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        tests,
        BTreeSet::from(["2t3i_10".to_string(), "3t3i_7".to_string()])
    );
    let stranger = dir.join("stranger.txt");
    std::fs::write(&stranger, "2t3i_10\n2t2i_5\n").unwrap();
    let _ = std::fs::remove_dir_all(&out);
    assert_clean_failure(
        &run(&stranger),
        2,
        &["stranger.txt:2: no test named `2t2i_5`"],
    );
    assert!(!out.exists());
}

/// Several suite paths make one campaign; a test name in two of them is an
/// error naming both files.
#[test]
fn several_suites_make_one_campaign_and_names_must_be_unique() {
    let dir = scratch("several");
    let (a, b) = (dir.join("a"), dir.join("b"));
    for (d, t) in [(&a, "2t2i_2"), (&b, "3t3i_7"), (&b, "2t3i_10")] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::copy(published(t), d.join(format!("{t}.txt"))).unwrap();
    }
    let out = dir.join("out");
    let run = |paths: &[&Path]| {
        let mut argv = vec!["run", "--target", "cpp"];
        argv.extend(paths.iter().map(|p| s(p)));
        argv.extend([
            "--iterations",
            "1",
            "--instances",
            "4",
            "--name",
            "both",
            "--out",
            s(&out),
        ]);
        backends(&argv)
    };
    let o = run(&[&a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(results_in(&out.join("both.journal.jsonl")).len(), 3 * 3);
    let device: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("both.device.json")).unwrap())
            .unwrap();
    assert_eq!(device["options"]["suite"].as_array().unwrap().len(), 2);
    let _ = std::fs::remove_dir_all(&out);
    let o = run(&[&a, &a]);
    assert_clean_failure(&o, 2, &["two tests are named `2t2i_2`"]);
}

/// From the first Hopper campaign (results/h200): round-robin runs that
/// terminated took up to 296 ms against a 300 ms deadline, so some runs
/// reported non-terminating may have been slow ones. `import` says so per
/// mapping (stderr, and `warnings` in JSON) and records the figures in the
/// device file; the cooperative runs (at most 22 ms) draw no warning.
#[test]
fn import_warns_when_a_terminating_run_came_close_to_the_deadline() {
    let dir = scratch("import-deadline");
    let import = |file: &str, name: &str, format: &str| {
        backends_at_root(&[
            "import",
            "--target",
            "cuda",
            "suites/oopsla21/oopsla21.ron",
            "--lines",
            file,
            "--info",
            "results/h200/raw/call1/info.json",
            "--out",
            s(&dir),
            "--name",
            name,
            "--format",
            format,
        ])
    };
    let o = import("results/h200/raw/call1/pub/r1-pub-p08.jsonl", "rr", "json");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let w: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].starts_with("rr, chunked: a run that terminated took 230.2 ms"));
    assert!(w[1].starts_with("rr, round-robin: a run that terminated took 239.3 ms"));
    assert!(
        stderr(&o).contains("warning: rr, round-robin: "),
        "{}",
        stderr(&o)
    );
    let device: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rr.device.json")).unwrap())
            .unwrap();
    let rr = &device["times"]["mappings"]["round-robin"];
    assert_eq!(rr["slowest_terminated_ms"], 239.349);
    assert_eq!(rr["quickest_stopped_ms"], 303.472);
    assert_eq!(device["times"]["mappings"]["plain"]["terminated"], 30);

    let o = import(
        "results/h200/raw/call1/coop/r1-pub-p08.jsonl",
        "coop",
        "text",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));

    // From an adversarial pass: an elapsed_ms of 1e306 was accepted, then
    // rounded to infinity and written as null. Past the longest deadline
    // and as long again to stop, it is refused, naming the file and line.
    let src = std::fs::read_to_string(repo("results/h200/raw/call1/pub/r1-pub-p08.jsonl")).unwrap();
    let first = src.lines().next().unwrap();
    let at = first.find("\"elapsed_ms\":").unwrap() + "\"elapsed_ms\":".len();
    let end = at + first[at..].find(',').unwrap();
    let huge = dir.join("huge.jsonl");
    std::fs::write(&huge, format!("{}1e306{}\n", &first[..at], &first[end..])).unwrap();
    let o = import(s(&huge), "huge", "text");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("huge.jsonl:1: `elapsed_ms` is not a time in ms"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("huge.device.json").exists());
}
