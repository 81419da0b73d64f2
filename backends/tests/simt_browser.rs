//! The SIMT-Step page (`simt.html` of `backends emit --target wgsl` on
//! suites/simt) in headless Chromium, as `webgpu_browser.rs` drives the
//! WebGPU page: the page logs through `console.log`, which Chromium writes
//! to stderr. `#selftest` checks the page's own logic (outcome recording
//! from buffers, the four-model answer) on made-up runs, without a GPU;
//! `#runs=N` runs the tests on SwiftShader when its adapter offers the
//! `subgroups` feature (Chromium 13x's does), else the page must say so
//! plainly. Without Chromium the tests are skipped with a message, except
//! under CI (`CI=true`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("simt-browser-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            if dir.join(name).is_file() {
                return Some(dir.join(name));
            }
        }
    }
    let msg = "headless Chromium not found on PATH: install the Debian package `chromium`";
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
    eprintln!("skipped: {msg}");
    None
}

/// The page's console lines (without their `axb-` prefix kind), until
/// `axb-end:` or `limit`.
fn run_page(chromium: &Path, page: &Path, fragment: &str, limit: Duration) -> Vec<String> {
    let profile = scratch(&format!("profile-{}", fragment.replace(['=', '&'], "-")));
    let mut child = Command::new(chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--enable-unsafe-webgpu",
            "--ignore-gpu-blocklist",
        ])
        .args([
            "--enable-features=Vulkan",
            "--use-vulkan=swiftshader",
            "--use-webgpu-adapter=swiftshader",
        ])
        .args([
            "--disable-vulkan-surface",
            "--enable-unsafe-swiftshader",
            "--disable-quic",
        ])
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--no-first-run",
            "--disable-background-networking",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        // Chromium puts its singleton socket folder under TMPDIR: in the
        // profile, it goes when the profile does.
        .env("TMPDIR", profile.as_path())
        .arg(format!("file://{}#{fragment}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let start = Instant::now();
    let mut out = Vec::new();
    while let Ok(line) = rx.recv_timeout(limit.saturating_sub(start.elapsed())) {
        let Some(i) = line.find("] \"axb-") else {
            continue;
        };
        let text = &line[i + 3..];
        let text = text
            .rfind("\", source: ")
            .map_or(text, |e| &text[..e])
            .to_string();
        let end = text.starts_with("axb-end:");
        out.push(text);
        if end {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        out.iter().any(|l| l.starts_with("axb-end:")),
        "no end within {limit:?}: {out:#?}"
    );
    out
}

fn page(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new(env!("CARGO_BIN_EXE_backends"))
        .args(["emit", "--target", "wgsl", "-o"])
        .arg(dir)
        .arg(root.join("suites/simt"))
        .output()
        .unwrap();
    // The tangles (no assertions) emit in the run form or are refused.
    let page = dir.join("simt.html");
    assert!(page.is_file(), "{}", String::from_utf8_lossy(&out.stderr));
    page
}

#[test]
fn the_pages_own_logic_records_outcomes_and_answers_the_four_models() {
    let Some(chromium) = chromium() else { return };
    let dir = scratch("selftest");
    let lines = run_page(&chromium, &page(&dir), "selftest", Duration::from_secs(120));
    // The first test (branch_sync_rw): each SSO outcome once, recorded from
    // buffers holding the values plus `values` (read modulo values).
    let files: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("axb-file: "))
        .collect();
    assert_eq!(files.len(), 3, "{lines:#?}");
    assert!(
        files
            .iter()
            .any(|l| l.contains("\"outcome\":\"w0.0:r=0 w0.1:r=1\"")),
        "{files:#?}"
    );
    let answers: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("axb-answer: "))
        .collect();
    assert_eq!(answers.len(), 4);
    assert!(
        answers[0].starts_with("axb-answer: CM violated by branch_sync_rw"),
        "{answers:#?}"
    );
    assert_eq!(answers[3], "axb-answer: SSO consistent");
    assert!(
        lines
            .iter()
            .any(|l| l == "axb-webgpu: Consistent with: SSO."),
        "{lines:#?}"
    );
}

#[test]
fn on_swiftshader_the_page_runs_the_tests_or_says_subgroups_are_missing() {
    let Some(chromium) = chromium() else { return };
    let dir = scratch("swiftshader");
    let lines = run_page(&chromium, &page(&dir), "runs=2", Duration::from_secs(240));
    let files: Vec<String> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("axb-file: ").map(String::from))
        .collect();
    if files.is_empty() {
        assert!(
            lines
                .iter()
                .any(|l| l.contains("does not offer the `subgroups` feature")),
            "{lines:#?}"
        );
        return;
    }
    assert_eq!(files.len(), 20, "{lines:#?}");
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("axb-answer: "))
            .count(),
        4
    );
    // The lines import as the CUDA host's do.
    let f = dir.join("runs.jsonl");
    std::fs::write(&f, files.join("\n") + "\n").unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let r = Command::new(env!("CARGO_BIN_EXE_backends"))
        .args(["import", "--simt", "--target", "webgpu", "--name", "ss"])
        .arg(root.join("suites/simt"))
        .arg("--lines")
        .arg(&f)
        .arg("-o")
        .arg(dir.join("results"))
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}
