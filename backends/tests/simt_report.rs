//! SIMT-Step results (issue 22): `backends import --simt` tallies a SIMT
//! form's run lines into `<device>.simt.csv`, and `backends report --simt`
//! says which of CM, SM, SCF, SSO a device is consistent with, from the
//! oracle's outcome sets of suites/simt. Synthetic devices: one showing an
//! outcome only SSO allows is consistent with SSO only, and so on down the
//! hierarchy.

mod common;

use common::{backends_at_root as backends, repo, scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `backends import --simt` of `lines` (SIMT form runs of suites/simt,
/// from the CUDA target) into `out`, as the device `name`.
fn import_simt(lines: &Path, out: &Path, name: Option<&str>) -> Output {
    let mut args = vec!["import", "--simt", "--target", "cuda"];
    if let Some(name) = name {
        args.extend(["--name", name]);
    }
    args.extend([
        "suites/simt",
        "--lines",
        lines.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    backends(&args)
}

fn device(dir: &Path, name: &str, rows: &[(&str, &str, u64)]) -> PathBuf {
    let mut s = String::from("test,outcome,count,runs\n");
    for (test, outcome, count) in rows {
        let runs: u64 = rows.iter().filter(|r| r.0 == *test).map(|r| r.2).sum();
        s.push_str(&format!("{test},{outcome},{count},{runs}\n"));
    }
    let f = dir.join(format!("{name}.simt.csv"));
    std::fs::write(&f, s).unwrap();
    f
}

/// The models each device is consistent with, from the JSON report.
fn consistent(dir: &Path) -> Vec<(String, Vec<String>)> {
    let out = backends(&[
        "report",
        "--simt",
        dir.to_str().unwrap(),
        "--programs",
        "suites/simt",
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut by: Vec<(String, Vec<String>)> = Vec::new();
    for row in v.as_array().unwrap() {
        let d = row["device"].as_str().unwrap().to_string();
        if by.last().is_none_or(|(n, _)| *n != d) {
            by.push((d.clone(), Vec::new()));
        }
        if row["consistent"].as_bool().unwrap() {
            by.last_mut()
                .unwrap()
                .1
                .push(row["model"].as_str().unwrap().to_string());
        }
    }
    by
}

const CONVERGED_BS: &str = "m[0]=2 m[1]=2";
const RELAXED_BS: &str = "m[0]=1 m[1]=2";

#[test]
fn each_synthetic_device_is_consistent_with_the_models_allowing_what_it_showed() {
    let dir = scratch("hierarchy");
    device(
        &dir,
        "a-converged",
        &[
            ("branch_sync_ww", CONVERGED_BS, 10),
            ("collective_mem", "w0.0:ok=1 w0.2:ok=1", 5),
        ],
    );
    device(
        &dir,
        "b-sm",
        &[
            ("collective_mem", "w0.0:ok=0 w0.2:ok=1", 1),
            ("collective_mem", "w0.0:ok=1 w0.2:ok=1", 9),
        ],
    );
    device(
        &dir,
        "c-scf",
        &[
            ("mem_lockstep_ww", RELAXED_BS, 2),
            ("mem_lockstep_ww", CONVERGED_BS, 8),
        ],
    );
    device(
        &dir,
        "d-sso",
        &[
            ("branch_sync_ww", RELAXED_BS, 3),
            ("branch_sync_ww", CONVERGED_BS, 7),
        ],
    );
    device(&dir, "e-none", &[("subgroup_sync_ww", RELAXED_BS, 1)]);
    let all = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        consistent(&dir),
        vec![
            ("a-converged".to_string(), all(&["CM", "SM", "SCF", "SSO"])),
            ("b-sm".to_string(), all(&["SM", "SCF", "SSO"])),
            ("c-scf".to_string(), all(&["SCF", "SSO"])),
            ("d-sso".to_string(), all(&["SSO"])),
            ("e-none".to_string(), all(&[])),
        ]
    );
    let out = backends(&[
        "report",
        "--simt",
        dir.join("d-sso.simt.csv").to_str().unwrap(),
        "--programs",
        "suites/simt",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("device d-sso: 1 tests, 10 runs (0 without an outcome): consistent with SSO"),
        "{text}"
    );
    assert!(
        text.contains("branch_sync_ww: m[0]=1 m[1]=2 (3 of 10 runs)"),
        "{text}"
    );
}

#[test]
fn import_tallies_run_lines_and_the_report_reads_the_file() {
    let dir = scratch("import");
    let lines = dir.join("runs.jsonl");
    let mut s = String::new();
    for k in 0..6 {
        let o = if k < 2 { RELAXED_BS } else { CONVERGED_BS };
        s.push_str(&format!("{{\"test\":\"branch_sync_ww\",\"run\":{k},\"terminated\":true,\"finished\":2,\"stopped\":0,\"unsupported\":false,\"outcome\":\"{o}\"}}\n"));
    }
    s.push_str("{\"test\":\"branch_sync_ww\",\"run\":6,\"terminated\":false,\"finished\":1,\"stopped\":1,\"unsupported\":false,\"outcome\":\"\"}\n");
    std::fs::write(&lines, s).unwrap();
    let out = dir.join("results");
    let r = import_simt(&lines, &out, Some("gpu"));
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let csv = std::fs::read_to_string(out.join("gpu.simt.csv")).unwrap();
    assert_eq!(
        csv,
        "test,outcome,count,runs\nbranch_sync_ww,-,1,7\nbranch_sync_ww,m[0]=1 m[1]=2,2,7\nbranch_sync_ww,m[0]=2 m[1]=2,4,7\n"
    );
    assert_eq!(
        consistent(&out),
        vec![("gpu".to_string(), vec!["SSO".to_string()])]
    );
    // Again into the same folder: refused, nothing overwritten.
    let r = import_simt(&lines, &out, Some("gpu"));
    assert_eq!(r.status.code(), Some(2));
}

#[test]
fn bad_simt_input_is_one_error_naming_where() {
    let dir = scratch("bad");
    let cases: [(&str, &str, &str); 5] = [
        (
            "unknown",
            "test,outcome,count,runs\nno_such_test,x=1,1,1\n",
            "test `no_such_test` is none of the 10 programs",
        ),
        (
            "terms",
            "test,outcome,count,runs\nbranch_sync_ww,m[0]=1,1,1\n",
            "is not `m[0]=V m[1]=V`",
        ),
        (
            "count",
            "test,outcome,count,runs\nbranch_sync_ww,m[0]=1 m[1]=2,x,1\n",
            "unknown.simt.csv",
        ),
        ("header", "test,result\n", ":1: expected the header"),
        (
            "sum",
            "test,outcome,count,runs\nbranch_sync_ww,m[0]=1 m[1]=2,1,3\n",
            "add up to 1, not its 3 runs",
        ),
    ];
    for (name, text, want) in cases {
        let f = dir.join(format!("{name}.simt.csv"));
        std::fs::write(&f, text).unwrap();
        let out = backends(&[
            "report",
            "--simt",
            f.to_str().unwrap(),
            "--programs",
            "suites/simt",
        ]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        let want = if name == "count" {
            format!("{name}.simt.csv:2: count `x` is not a number")
        } else {
            want.to_string()
        };
        assert!(err.contains(&want), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let lines = dir.join("bad.jsonl");
    std::fs::write(&lines, "{\"test\":\"branch_sync_ww\",\"terminated\":true,\"outcome\":\"m[0]=1 m[1]=2\"}\nnot json\n").unwrap();
    let r = import_simt(&lines, &dir.join("o"), None);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("bad.jsonl:2: not JSON"));
    // --programs is needed, and --simt stands alone.
    let r = backends(&["report", "--simt", dir.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--simt needs --programs"));
}

#[test]
fn the_committed_results_cpu_threads_sso_only_swiftshader_and_h200_all_four() {
    let all = ["CM", "SM", "SCF", "SSO"].map(String::from).to_vec();
    assert_eq!(
        consistent(&repo("results/simt")),
        vec![
            ("cpu-threads".to_string(), vec!["SSO".to_string()]),
            ("h200".to_string(), all.clone()),
            ("swiftshader".to_string(), all),
        ]
    );
}

/// The whole loop on this machine: emit the SIMT form's CUDA, compile it
/// with g++ against the warp emulation, run it, import the lines, report.
/// The emulation's lanes are OS threads with rendezvous collectives: what
/// they show is always within SSO (Subgroup Sync's relaxed outcome never).
#[test]
fn the_cpu_emulation_runs_end_to_end_within_sso() {
    let Ok(gxx) = backends::toolchain::find(backends::toolchain::Tool::Gxx) else {
        eprintln!("skipped: g++ is missing");
        return;
    };
    let dir = scratch("cpu");
    let cu = dir.join("cu");
    let r = backends(&[
        "emit",
        "--target",
        "cuda",
        "-o",
        cu.to_str().unwrap(),
        "suites/simt",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let shim = repo("backends/cuda-shim");
    let mut lines = String::new();
    for t in ["subgroup_sync_ww", "branch_sync_ww", "collective_mem"] {
        let bin = cu.join(t);
        let out = Command::new(&gxx)
            .args(["-std=c++17", "-O1", "-pthread", "-x", "c++", "-I"])
            .arg(&shim)
            .arg("-include")
            .arg(shim.join("simt_warp.h"))
            .arg(cu.join(format!("{t}.cu")))
            .args(["-x", "none", "-o"])
            .arg(&bin)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{t}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run = Command::new(&bin).arg("20").output().unwrap();
        assert!(run.status.success());
        let text = String::from_utf8(run.stdout).unwrap();
        assert_eq!(text.lines().count(), 20);
        if t == "subgroup_sync_ww" {
            assert!(
                text.lines()
                    .all(|l| l.contains("\"outcome\":\"m[0]=2 m[1]=2\"")),
                "{text}"
            );
        }
        lines.push_str(&text);
    }
    std::fs::write(dir.join("runs.jsonl"), lines).unwrap();
    let out = dir.join("results");
    let r = import_simt(&dir.join("runs.jsonl"), &out, Some("cpu"));
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let c = consistent(&out);
    assert_eq!(c[0].0, "cpu");
    assert!(c[0].1.contains(&"SSO".to_string()), "{c:?}");
}

/// `report --simt` of one file or folder: exit code and stderr.
fn report_err(path: &Path) -> (Option<i32>, String) {
    let out = backends(&[
        "report",
        "--simt",
        path.to_str().unwrap(),
        "--programs",
        "suites/simt",
    ]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Outcomes are values, not strings: a value outside the program's domain
/// (`values 4`) or spelled otherwise than the oracle writes it (`02`, `+2`)
/// is refused at FILE:LINE, not judged "consistent with none"; an unknown
/// test names its place too; counts summed past a u64 are an error naming
/// the file.
#[test]
fn forged_csv_rows_are_refused_at_their_line() {
    let dir = scratch("forged-csv");
    let cases: [(&str, &str, &str); 5] = [
        (
            "range",
            "test,outcome,count,runs\nbranch_sync_ww,m[0]=9 m[1]=2,1,1\n",
            "range.simt.csv:2: test `branch_sync_ww`: outcome `m[0]=9 m[1]=2` is not",
        ),
        (
            "spelling",
            "test,outcome,count,runs\nbranch_sync_ww,m[0]=2 m[1]=2,1,2\nbranch_sync_ww,m[0]=02 m[1]=+2,1,2\n",
            "spelling.simt.csv:3: test `branch_sync_ww`: outcome `m[0]=02 m[1]=+2` is not",
        ),
        (
            "unknown",
            "test,outcome,count,runs\nbranch_sync_ww,-,1,1\nnosuch,-,1,1\n",
            "unknown.simt.csv:3: test `nosuch` is none of the 10 programs",
        ),
        (
            "twice",
            "test,outcome,count,runs\nbranch_sync_ww,m[0]=2 m[1]=2,1,2\nbranch_sync_ww,m[0]=2 m[1]=2,1,2\n",
            "twice.simt.csv:3: test `branch_sync_ww`, outcome `m[0]=2 m[1]=2` given twice",
        ),
        (
            "overflow",
            "test,outcome,count,runs\nbranch_sync_ww,-,18446744073709551615,18446744073709551615\nbranch_sync_rw,-,18446744073709551615,18446744073709551615\n",
            "overflow.simt.csv: the runs of all tests add up to more than a u64",
        ),
    ];
    for (name, text, want) in cases {
        let f = dir.join(format!("{name}.simt.csv"));
        std::fs::write(&f, text).unwrap();
        let (code, err) = report_err(&f);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// A device name comes from a file name: one with a newline or an escape
/// byte is refused (escaped in the error), never printed as a report line.
#[test]
fn unprintable_device_names_are_refused_escaped() {
    for (k, name) in ["x\ndevice forged: consistent with CM", "x\u{1b}[2J"]
        .iter()
        .enumerate()
    {
        let dir = scratch(&format!("names-{k}"));
        std::fs::write(
            dir.join(format!("{name}.simt.csv")),
            "test,outcome,count,runs\nbranch_sync_ww,-,1,1\n",
        )
        .unwrap();
        let (code, err) = report_err(&dir);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("must be printable"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!err.contains('\u{1b}'), "{err:?}");
    }
}

/// Forged run lines for `import --simt`: each refused at FILE:LINE.
#[test]
fn forged_run_lines_are_refused_at_their_line() {
    let dir = scratch("forged-lines");
    let line = |run: &str, finished: &str, outcome: &str| {
        format!("{{\"test\":\"branch_sync_ww\",\"run\":{run},\"terminated\":true,\"finished\":{finished},\"stopped\":0,\"unsupported\":false,\"outcome\":\"{outcome}\"}}\n")
    };
    let good = line("0", "2", CONVERGED_BS);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "range",
            good.clone() + &line("1", "2", "m[0]=9 m[1]=2"),
            "range.jsonl:2: test `branch_sync_ww`: outcome `m[0]=9 m[1]=2` is not",
        ),
        (
            "spelling",
            line("0", "2", "m[0]=02 m[1]=+2"),
            "spelling.jsonl:1: test `branch_sync_ww`: outcome",
        ),
        (
            "unknown",
            good.clone() + "{\"test\":\"nosuch\",\"terminated\":true,\"outcome\":\"\"}\n",
            "unknown.jsonl:2: test `nosuch` is none of the 10 programs",
        ),
        (
            "negative",
            line("-1", "2", CONVERGED_BS),
            "negative.jsonl:1: `run` is -1, not 0 to",
        ),
        (
            "huge",
            line("18446744073709551615", "2", CONVERGED_BS),
            "huge.jsonl:1: `run` is 18446744073709551615, not 0 to",
        ),
        (
            "finished",
            line("0", "3", CONVERGED_BS),
            "finished.jsonl:1: `finished` is 3, not 0 to 2",
        ),
        (
            "again",
            good.clone() + &line("0", "2", RELAXED_BS),
            "again.jsonl:2: test `branch_sync_ww`, run 0 again (first at",
        ),
        (
            // A key given twice: serde_json alone would keep the last
            // `outcome` and tally a run nobody can tell apart.
            "twice",
            good.clone()
                + &line("1", "2", RELAXED_BS).replacen(
                    "\"outcome\"",
                    &format!("\"outcome\":\"{CONVERGED_BS}\",\"outcome\""),
                    1,
                ),
            "twice.jsonl:2: the key `outcome` is given twice in one object (line 1, column",
        ),
        (
            "test-twice",
            "{\"test\":\"branch_sync_ww\",\"test\":\"nosuch\",\"terminated\":true,\"outcome\":\"\"}\n"
                .to_string(),
            "test-twice.jsonl:1: the key `test` is given twice",
        ),
    ];
    for (name, text, want) in cases {
        let lines = dir.join(format!("{name}.jsonl"));
        std::fs::write(&lines, text).unwrap();
        let out = dir.join(format!("out-{name}"));
        let r = import_simt(&lines, &out, None);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!out.exists(), "{name}");
    }
}
