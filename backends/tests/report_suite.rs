//! `backends report` judges runs only against the tests they were run
//! from (issue 23 item 2). Test names are not unique across suites:
//! `3t3i_3` of `suites/3t3i` is not the published `3t3i_3`, and both land
//! in `3_thread_3_instruction/<framework>/<device>.csv` as id 3. A run's
//! `device.json` records the fingerprint of its tests and the suite files
//! it ran from: the report finds them there, checks them, and refuses
//! other tests of the same names, the published default included; beside
//! results of another suite, a name of two programs is shown with the
//! program's fingerprint (issue 44 item 1).

use progress_litmus::axb::load::load_all;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn backends(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_backends"))
        .args(args)
        .output()
        .unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The complete 3t3i suite's `3t3i_3` run on a (pretend) WebGPU device,
/// imported into `dir/out`.
fn imported(dir: &Path) -> PathBuf {
    let suite = root().join("suites/3t3i/3t3i.ron");
    let (tests, errors) = load_all(std::slice::from_ref(&suite));
    assert!(errors.is_empty());
    let header = json!({"axb": "webgpu-results", "format": 1, "target": "webgpu",
        "suite": {"name": "3t3i", "tests": tests.len(), "fnv64": progress_litmus::fingerprint::suite(&tests)},
        "device": {"vendor": "acme", "architecture": "x"}, "settings": {"iterations": 1}});
    let run = json!({"test": "3t3i_3", "target": "webgpu", "mapping": "plain", "instances": 1,
        "workgroups": 3, "iteration": 0, "terminated": false, "elapsed_ms": 1.5, "budget": 1000,
        "exhausted": 1, "stopped": 0, "finished": 2, "early": 0});
    let lines = dir.join("results.jsonl");
    std::fs::write(&lines, format!("{header}\n{run}\n")).unwrap();
    let out = dir.join("out");
    let o = backends(&[
        "import",
        "--target",
        "webgpu",
        suite.to_str().unwrap(),
        "--lines",
        lines.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--name",
        "acme",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    out
}

#[test]
fn runs_are_judged_only_against_their_own_suite() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-suite");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = imported(&dir);
    let device: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("acme.device.json")).unwrap())
            .unwrap();
    let recorded = device["suite"]["fnv64"].as_str().unwrap().to_string();
    assert_eq!(device["suite"]["tests"], 1, "the tests with a result");
    let out_s = out.to_str().unwrap();

    // The device file records the suite it ran from: the report finds it
    // with no --tests, checks it against the fingerprint, and judges the
    // hang of `3t3i_3` against it.
    let o = backends(&["report", out_s]);
    assert!(o.status.success(), "{}", err(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("acme"), "{text}");
    assert!(text.contains("3t3i.ron"), "{text}");
    assert!(text.contains("  3t3i_3 "), "{text}");
    // Beside the published results, whose `3t3i_3` is another program, the
    // published one keeps its name and this one is named by content.
    let empirical = root().join("data/empirical");
    let o = backends(&["report", out_s, empirical.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let suite = root().join("suites/3t3i/3t3i.ron");
    let (tests, _) = load_all(std::slice::from_ref(&suite));
    let ours = tests.iter().find(|t| t.name == "3t3i_3").unwrap();
    let key = format!(
        "3t3i_3@{}",
        &progress_litmus::fingerprint::test(&ours.entry.test)[..8]
    );
    assert!(text.contains(&key), "{key}: {text}");

    // Where the recorded suite is not found, the published default (other
    // programs of the same names) is refused, naming the fingerprint.
    let moved = dir.join("elsewhere.ron");
    let file = out.join("acme.device.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace(suite.to_str().unwrap(), moved.to_str().unwrap()),
    )
    .unwrap();
    let o = backends(&["report", out_s]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    let e = err(&o);
    assert!(e.contains(&recorded), "{e}");
    assert!(e.contains("acme.device.json"), "{e}");
    assert!(e.contains("elsewhere.ron"), "{e}");
    assert!(e.contains("--tests"), "{e}");
    assert!(o.stdout.is_empty());
    // So is the published set given explicitly.
    let published = root().join("data/oopsla21/tests");
    let o = backends(&["report", out_s, "--tests", published.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    // Its own suite given: judged.
    let o = backends(&["report", out_s, "--tests", suite.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("acme"));

    // A forged or damaged record is an error, not a skipped check.
    let file = out.join("acme.device.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace(&recorded, "not-a-fingerprint")).unwrap();
    let o = backends(&["report", out_s, "--tests", suite.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("fnv64"), "{}", err(&o));
}

/// The artifact's own CSVs (no `device.json`) are read as before.
#[test]
fn artifact_results_without_a_record_are_read_as_before() {
    let empirical = root().join("data/empirical");
    let o = backends(&["report", empirical.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
}
