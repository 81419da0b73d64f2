//! `synth plan --estimate` (issue 48): the estimate of a run from a random
//! sample of its shards, checked against runs whose true counts are known.
//!
//! Fast, in every `cargo test`: 2t5i and 3t5i estimated from 8 of 64
//! shards (their complete counts are committed in `suites/table4/`); the
//! same seed gives the same sample and counts, a second run reuses the
//! recorded samples and a larger sample of the seed holds the smaller; bad
//! flags and a tampered record are one error line, exit 2.
//!
//! Recorded: the estimates committed in `suites/table4/<config>/estimate.json`
//! (the 6-instruction ones, whose complete runs took CPU hours, and the
//! 7-instruction ones nobody has run) are what this code computes from
//! their samples, the samples are the ones their seed names, and where
//! the complete count is committed beside them, their interval holds it.

use std::path::{Path, PathBuf};

mod common;
use common::{ok, scratch, stderr, synth};
use synth::estimate::{stats, Estimate, Sample};

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The complete test count of `config`, from its committed Table 4.
fn true_tests(config: &str) -> Option<u64> {
    let p = root().join(format!("suites/table4/{config}/table4.json"));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()?;
    v["tests"].as_u64()
}

fn estimate(dir: &Path, t: &str, samples: &str, extra: &[&str]) -> (serde_json::Value, String) {
    let mut args = vec![
        "plan",
        "-t",
        t,
        "-i",
        "5",
        "--shards",
        "64",
        "--dir",
        "runs",
        "--estimate",
        samples,
        "--seed",
        "1",
        "--emit",
        "estimate",
        "--format",
        "json",
    ];
    args.extend(extra);
    let o = ok(synth(dir, &args));
    (serde_json::from_slice(&o.stdout).unwrap(), stderr(&o))
}

/// `a` and `b` equal, numbers to within 1e-12 of each other (a float read
/// back from JSON may be one unit in the last place off).
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as V;
    match (a, b) {
        (V::Number(x), V::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (V::Array(x), V::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (V::Object(x), V::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn covers(i: &serde_json::Value, x: f64) -> bool {
    i["low"].as_f64().unwrap() <= x && x <= i["high"].as_f64().unwrap()
}

#[test]
fn estimates_of_five_instructions_hold_their_true_counts() {
    for (config, t) in [("2t5i", "2"), ("3t5i", "3")] {
        let dir = scratch(config);
        let (e, said) = estimate(&dir, t, "8", &["--table"]);
        let truth = true_tests(config).unwrap();
        assert!(
            covers(&e["tests"], truth as f64),
            "{config}: {}",
            e["tests"]
        );
        assert_eq!(e["confidence"], 0.95);
        let shards: Vec<u64> = (e["samples"].as_array().unwrap().iter())
            .map(|s| s["shard"].as_u64().unwrap())
            .collect();
        assert_eq!(shards, [2, 7, 8, 9, 26, 30, 38, 53], "{config}");
        assert_eq!(said.matches("recorded earlier").count(), 0, "{said}");
        // Each sample is a complete shard of the run: its tests are what
        // its note records, and the merge would take it.
        let sampled = dir.join(format!("runs/estimate/{config}-7-of-64.axb.gz"));
        assert!(sampled.is_file());
        let rows = e["table"]["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0]["model"], "HSA");
        // Run again: every sample is reused, the same figures.
        let (again, said) = estimate(&dir, t, "8", &["--table"]);
        assert_eq!(again, e);
        assert_eq!(said.matches("recorded earlier").count(), 8, "{said}");
        // A larger sample of the seed holds the smaller: two more run.
        let (more, said) = estimate(&dir, t, "10", &[]);
        assert_eq!(said.matches("recorded earlier").count(), 8, "{said}");
        assert_eq!(more["samples"].as_array().unwrap().len(), 10);
        assert!(more["table"].is_null());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn the_estimate_sets_the_slurm_task_and_prints_before_the_plan() {
    let dir = scratch("plan");
    let o = ok(synth(
        &dir,
        &[
            "plan",
            "-t",
            "2",
            "-i",
            "4",
            "--shards",
            "8",
            "--dir",
            "r",
            "--estimate",
            "3",
            "--emit",
            "slurm",
            "--cpus",
            "2",
        ],
    ));
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "#!/bin/bash");
    // The estimate's smallest time and memory: 10 minutes, 1 GiB.
    assert!(text.contains("#SBATCH --time=00:10:00\n"), "{text}");
    assert!(text.contains("#SBATCH --mem=1024M\n"), "{text}");
    let est = lines
        .iter()
        .position(|l| l.starts_with("# Estimate of 2t4i from 3 of its 8 shards"));
    let last_sbatch = lines.iter().rposition(|l| l.starts_with("#SBATCH"));
    assert!(est.unwrap() > last_sbatch.unwrap(), "{text}");
    // Given flags win over the estimate.
    let o = ok(synth(
        &dir,
        &[
            "plan",
            "-t",
            "2",
            "-i",
            "4",
            "--shards",
            "8",
            "--dir",
            "r",
            "--estimate",
            "3",
            "--emit",
            "slurm",
            "--time",
            "2:00:00",
            "--mem",
            "6G",
            "--format",
            "json",
        ],
    ));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["slurm_task"]["time"], "2:00:00");
    assert_eq!(v["slurm_task"]["mem"], "6G");
    assert!(v["slurm"].as_str().unwrap().contains("#SBATCH --mem=6G\n"));
    assert!(v["estimate"]["tests"]["estimate"].as_f64().unwrap() > 0.0);
    assert!(v.get("jobs").is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_estimates_are_one_error_line() {
    let dir = scratch("bad");
    let plan = |extra: &[&str]| {
        let mut a = vec!["plan", "-t", "2", "-i", "3", "--shards", "4", "--dir", "r"];
        a.extend(extra);
        synth(&dir, &a)
    };
    let refused = |o: std::process::Output, says: &str| {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
    };
    refused(plan(&["--estimate", "1"]), "an interval needs two");
    refused(plan(&["--estimate", "5"]), "expected 2 to 4 samples");
    refused(plan(&["--emit", "estimate"]), "give --estimate");
    refused(plan(&["--mem", "4X"]), "not a Slurm memory size");
    refused(plan(&["--mem", "G"]), "not a Slurm memory size");
    // Flags of the estimate without it (clap's usage error).
    for f in [&["--seed", "3"][..], &["--jobs", "2"], &["--table"]] {
        let o = plan(f);
        assert_eq!(o.status.code(), Some(2), "{f:?}: {}", stderr(&o));
    }
    assert!(!dir.join("r").exists(), "a refused plan made its folder");
    // A record that does not match its shard is refused, not trusted.
    ok(plan(&["--estimate", "2", "--emit", "estimate"]));
    let rec = std::fs::read_dir(dir.join("r/estimate"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".cost.json"))
        .unwrap();
    let text = std::fs::read_to_string(&rec).unwrap();
    let mut s: Sample = serde_json::from_str(&text).unwrap();
    s.tests += 1;
    std::fs::write(&rec, serde_json::to_string(&s).unwrap()).unwrap();
    refused(
        plan(&["--estimate", "2", "--emit", "estimate"]),
        "delete both",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The committed estimates: what this code computes from their samples,
/// the samples their seed names, and holding the complete count where it
/// is known. The 6-instruction ones must be there (the issue's check).
#[test]
fn committed_estimates_are_reproducible_and_hold_the_known_counts() {
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(root().join("suites/table4")).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(dir.join("estimate.json")) else {
            continue;
        };
        let config = dir.file_name().unwrap().to_string_lossy().into_owned();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let samples: Vec<Sample> = serde_json::from_value(v["samples"].clone()).unwrap();
        let shards = v["shards"].as_u64().unwrap() as usize;
        let seed = v["seed"].as_u64().unwrap();
        let ks: Vec<usize> = samples.iter().map(|s| s.shard).collect();
        assert_eq!(ks, stats::choose(shards, ks.len(), seed), "{config}");
        assert_eq!(v["config"], config.as_str());
        let again = Estimate::new(&config, shards, seed, samples);
        let mut again = serde_json::to_value(&again).unwrap();
        // The machine is the one it was measured on.
        again["machine"] = v["machine"].clone();
        assert!(
            same(&again, &v),
            "{config}: not what the samples give: {again}"
        );
        if let Some(truth) = true_tests(&config) {
            assert!(
                covers(&v["tests"], truth as f64),
                "{config}: {} misses {truth}",
                v["tests"]
            );
        }
        checked.push(config);
    }
    for must in ["2t6i", "3t6i", "4t6i"] {
        assert!(
            checked.iter().any(|c| c == must),
            "{must}: no estimate.json: {checked:?}"
        );
    }
}
