//! `backends run --target wgpu` and the runner `backends-wgpu` (cargo
//! feature `wgpu`), on this machine's Vulkan device. On a machine whose only
//! device is Mesa's lavapipe, which leaves every loop after 65535
//! iterations, the canary must refuse it, naming the reason; the plumbing
//! (shaders, calibration, result lines, journal, CSVs) is tested with the
//! canary overridden (`--no-canary`), whose results are meaningless for
//! progress but must still be complete and consistent.
//!
//! Without a Vulkan device the tests say so and pass, except under
//! `CI=true`, where they fail: `.ci/run` installs lavapipe
//! (`mesa-vulkan-drivers`), so a missing adapter there is a broken setup,
//! not a machine without a GPU.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("wgpu-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn runner(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_backends-wgpu"))
        .args(args)
        .output()
        .unwrap()
}

fn backends(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_backends"))
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The sample suite (one file) and its WGSL shaders.
fn sample(dir: &Path) -> (PathBuf, PathBuf) {
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    let published = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests");
    std::fs::copy(published.join("2t2i_0.txt"), suite.join("2t2i_0.txt")).unwrap();
    let shaders = dir.join("shaders");
    let o = backends(&[
        "emit",
        "--target",
        "wgsl",
        suite.to_str().unwrap(),
        "--out",
        shaders.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    (suite, shaders)
}

/// The device's name and whether it passes the canary, or `None` without
/// a Vulkan device (a failure under `CI=true`).
fn device() -> Option<(String, bool)> {
    let o = runner(&["--info", "--no-canary", "--deadline-ms", "20"]);
    if !o.status.success() {
        let e = text(&o.stderr);
        assert!(e.contains("no Vulkan, Metal or D3D12 adapter"), "{e}");
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{}: under CI this test must run",
            e.trim_end()
        );
        eprintln!("skipped: {e}");
        return None;
    }
    let info: Value = serde_json::from_slice(&o.stdout).unwrap();
    Some((
        info["device"].as_str().unwrap().to_string(),
        info["canary"]["ok"] == true,
    ))
}

#[test]
fn the_runner_refuses_a_device_that_ends_loops_and_runs_with_the_override() {
    let Some((name, ok)) = device() else { return };
    let dir = scratch("runner");
    let (_, shaders) = sample(&dir);
    let s = shaders.to_str().unwrap();
    if name.contains("llvmpipe") {
        assert!(!ok, "lavapipe passed the canary");
        let o = runner(&["--shaders", s, "--deadline-ms", "20"]);
        assert_eq!(o.status.code(), Some(1));
        let e = text(&o.stderr);
        assert!(
            e.contains("left its loop with budget to spare") && e.contains("--no-canary"),
            "{e}"
        );
        assert!(o.stdout.is_empty());
    }
    let o = runner(&[
        "--shaders",
        s,
        "--no-canary",
        "--deadline-ms",
        "20",
        "--mapping",
        "plain,chunked",
        "--iterations",
        "2",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let lines: Vec<Value> = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    for l in &lines {
        let n = |k: &str| l[k].as_u64().unwrap();
        assert_eq!(l["target"], "wgpu");
        assert_eq!(l["test"], "2t2i_0");
        assert_eq!(
            n("exhausted") + n("stopped") + n("finished") + n("early"),
            n("workgroups"),
            "{l}"
        );
        assert_eq!(l["terminated"], n("finished") == n("workgroups"));
    }
    // Bad input: an unknown test, a missing directory, a file that is not a shader.
    let o = runner(&["--shaders", s, "--test", "nope", "--no-canary"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no shader for test `nope`"));
    let o = runner(&["--shaders", dir.join("missing").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::write(shaders.join("junk.wgsl"), "fn main() {}\n").unwrap();
    let o = runner(&["--shaders", s, "--no-canary"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("junk.wgsl:1: not a shader"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn backends_run_target_wgpu_journals_and_writes_results() {
    let Some((name, ok)) = device() else { return };
    let dir = scratch("run");
    let (suite, _) = sample(&dir);
    let out = dir.join("results");
    let (s, r) = (suite.to_str().unwrap(), out.to_str().unwrap());
    let base = [
        "run",
        "--target",
        "wgpu",
        s,
        "--iterations",
        "1",
        "--deadline-ms",
        "20",
        "--mappings",
        "plain,round-robin",
        "--out",
        r,
    ];
    if !ok {
        let o = backends(&base);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            text(&o.stderr).contains("on the canary"),
            "{}",
            text(&o.stderr)
        );
        assert!(
            !out.join("wgpu.journal.jsonl").exists(),
            "a refused device left a journal"
        );
    }
    let mut args = base.to_vec();
    if !ok {
        args.push("--program-arg=--no-canary");
    }
    let o = backends(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let device: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("wgpu.device.json")).unwrap())
            .unwrap();
    assert_eq!(device["target"], "wgpu");
    assert_eq!(device["results"]["runs"], 2);
    assert_eq!(device["description"]["gpu"]["device"], name.as_str());
    assert!(out.join("2_thread_2_instruction/wgpu/wgpu.csv").is_file());
}
