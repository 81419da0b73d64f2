//! The committed results (`results/`) are what the code says today: each
//! `REPORT.txt` and chart is exactly what `backends report` prints for the
//! committed CSVs with the command in that directory's README, and the CPU
//! campaigns hold every run they claim, none of them non-terminating.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_backends");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `backends report ARGS --svg TMP` from the project root (where the
/// READMEs' commands run); the text report and the chart.
fn report(name: &str, args: &[&str]) -> (String, String) {
    let svg = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("committed-{name}.svg"));
    let out = Command::new(BIN)
        .current_dir(root())
        .arg("report")
        .args(args)
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        std::fs::read_to_string(&svg).unwrap(),
    )
}

fn committed(dir: &str) -> (String, String) {
    let d = root().join("results").join(dir);
    (
        std::fs::read_to_string(d.join("REPORT.txt")).unwrap(),
        std::fs::read_to_string(d.join("nonterminating.svg")).unwrap(),
    )
}

fn device_runs(dir: &str, name: &str) -> (u64, u64) {
    let path = root()
        .join("results")
        .join(dir)
        .join(format!("{name}.device.json"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (
        v["results"]["runs"].as_u64().unwrap(),
        v["results"]["non_terminating_runs"].as_u64().unwrap(),
    )
}

#[test]
fn the_published_analysis_is_current() {
    let now = report("published", &["data/empirical", "--max-listed", "12"]);
    assert!(
        now == committed("published"),
        "results/published is stale: regenerate it with the command in its README"
    );
}

#[test]
fn the_cpu_campaign_on_the_published_suite_is_current() {
    let now = report("cpu", &["results/cpu"]);
    assert!(
        now == committed("cpu"),
        "results/cpu is stale: regenerate REPORT.txt with the command in its README"
    );
    assert_eq!(device_runs("cpu", "cpu-2threads-full"), (483 * 3 * 20, 0));
    assert_eq!(device_runs("cpu", "cpu-200threads-over"), (483 * 3 * 3, 0));
}

#[test]
fn the_cpu_campaign_on_the_complete_weak_fair_suites_is_current() {
    // The device files record the suite (issue 44 item 1): no --tests.
    let now = report("cpu-complete", &["results/cpu-complete"]);
    assert!(
        now == committed("cpu-complete"),
        "results/cpu-complete is stale: regenerate REPORT.txt with the command in its README"
    );
    assert_eq!(
        device_runs("cpu-complete", "cpu-2threads-full"),
        (5231 * 3 * 20, 0)
    );
    assert_eq!(
        device_runs("cpu-complete", "cpu-200threads-over"),
        (5231 * 3, 0)
    );
    // The complete suites' weak-fair conformance lists are what ran.
    let listed: usize = ["2t2i", "2t3i", "2t4i", "3t3i", "3t4i"]
        .iter()
        .map(|c| {
            std::fs::read_to_string(root().join(format!("suites/{c}/conformance/WEAK_FAIR.txt")))
                .unwrap()
                .lines()
                .count()
        })
        .sum();
    assert_eq!(listed, 5231);
}

#[test]
fn the_h200_campaign_is_current() {
    let now = report("h200", &["results/h200"]);
    assert!(
        now == committed("h200"),
        "results/h200 is stale: regenerate it with the commands in its README"
    );
    // The published suite: two full iterations and part of a third (the
    // device time ran out), each test and mapping at least twice.
    assert_eq!(device_runs("h200", "h200"), (3627, 895));
    assert_eq!(device_runs("h200", "h200-intra-warp"), (483 * 2, 69));
    assert_eq!(device_runs("h200", "h200-cooperative"), (483 * 3, 138));
}
