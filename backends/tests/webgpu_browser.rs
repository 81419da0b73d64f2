//! The webgpu page in a real browser: headless Chromium (Debian package
//! `chromium`) runs WebGPU on SwiftShader, Chrome's CPU implementation of
//! Vulkan. As in `synth/tests/explorer.rs`, the browser is a child process
//! driven by its command line: the page is opened with URL-fragment options
//! (`#autorun&fresh&log&...`), and it reports through `console.log`, which
//! Chromium writes to stderr (`INFO:CONSOLE`) with `--enable-logging=stderr`.
//! No driver library (DevTools protocol, WebDriver) is needed for a page
//! that runs by itself: the test reads the result file from the console
//! (the same text the page's download button offers), imports it with
//! `backends import --target webgpu` and reports it with `backends report`.
//!
//! Without Chromium the tests are skipped with a message, except under CI
//! (`CI=true`), where a missing browser is a failure.

mod common;

use common::SWIFTSHADER;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A sample of the published suite: tests that SwiftShader terminates
/// under every mapping and tests it starves under chunked.
const SAMPLE: [&str; 6] = [
    "2t2i_0", "2t2i_5", "2t3i_22", "2t4i_100", "3t3i_7", "3t4i_34",
];

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("webgpu-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Chromium, or `None` (skip, with a message) on a machine without it;
/// under CI a missing browser fails the test.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = common::find_chromium() {
        return Some(p);
    }
    let msg = "headless Chromium not found on PATH: install the Debian package `chromium` \
               (apt-get install -y chromium) to run the WebGPU page in a browser";
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("skipped: {msg}");
    None
}

/// What the page said: its `axb-webgpu:` messages, the result file and how
/// it ended (`axb-end: STATUS`).
struct Console {
    messages: Vec<String>,
    file: Vec<String>,
    end: String,
    /// `MODEL VERDICT RUN HUNG` per model: the page's answer at the end.
    answers: Vec<String>,
    /// The page's answer sentence and import command, as shown.
    answer_text: String,
}

/// The text of a console message in a Chromium log line, if it is one.
fn console_text(line: &str) -> Option<&str> {
    let i = line.find(":INFO:CONSOLE")?;
    let rest = &line[i..];
    let start = rest.find("] \"")? + 3;
    let end = rest.rfind("\", source: ")?;
    (end >= start).then(|| &rest[start..end])
}

/// Opens `page#fragment` in Chromium with `flags`, until the page logs
/// `axb-end:` (or `limit` passes: a failure), then ends the browser.
fn run_page(
    chromium: &Path,
    page: &Path,
    fragment: &str,
    flags: &[&str],
    limit: Duration,
) -> Console {
    // A profile of its own: a second browser on the same profile would hand
    // the page to the first and exit.
    static PROFILES: AtomicUsize = AtomicUsize::new(0);
    let profile = scratch(&format!(
        "profile-{}-{}",
        std::process::id(),
        PROFILES.fetch_add(1, Ordering::Relaxed)
    ));
    let c = run_page_in(chromium, page, fragment, flags, limit, &profile);
    let _ = std::fs::remove_dir_all(&profile);
    c
}

/// [`run_page`] with the browser profile (and so the page's storage) in
/// `profile`, kept.
fn run_page_in(
    chromium: &Path,
    page: &Path,
    fragment: &str,
    flags: &[&str],
    limit: Duration,
    profile: &Path,
) -> Console {
    let url = format!("file://{}#{fragment}", page.display());
    let mut child = Command::new(chromium)
        .args(["--headless=new", "--no-sandbox"])
        .args(flags)
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        // Chromium puts its singleton socket folder under TMPDIR: in the
        // profile, it goes when the profile does.
        .env("TMPDIR", profile)
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let start = Instant::now();
    let mut c = Console {
        messages: Vec::new(),
        file: Vec::new(),
        end: String::new(),
        answers: Vec::new(),
        answer_text: String::new(),
    };
    while c.end.is_empty() {
        let left = limit.saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) => {
                let Some(text) = console_text(&line) else {
                    continue;
                };
                if let Some(l) = text.strip_prefix("axb-file: ") {
                    c.file.push(l.to_string());
                } else if let Some(a) = text.strip_prefix("axb-answer-text: ") {
                    c.answer_text = a.to_string();
                } else if let Some(a) = text.strip_prefix("axb-answer: ") {
                    c.answers.push(a.to_string());
                } else if let Some(s) = text.strip_prefix("axb-end: ") {
                    c.end = s.to_string();
                } else if let Some(m) = text.strip_prefix("axb-webgpu: ") {
                    c.messages.push(m.to_string());
                }
            }
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        !c.end.is_empty(),
        "the page did not finish within {limit:?} on {url}; it said:\n{}",
        c.messages.join("\n")
    );
    c
}

fn backends(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_backends"))
        .args(args)
        .output()
        .unwrap()
}

fn json(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

#[test]
fn the_page_runs_a_sample_on_swiftshader_and_its_results_import_and_report() {
    let Some(chromium) = chromium() else { return };
    let dir = scratch("sample");
    let (suite, page) = common::webgpu_sample(&dir, &SAMPLE);
    let iterations = 2;
    let c = run_page(
        &chromium,
        &page,
        &format!("autorun&fresh&log&iterations={iterations}&run-ms=50"),
        &SWIFTSHADER,
        Duration::from_secs(400),
    );
    assert_eq!(c.end, "complete", "{}", c.messages.join("\n"));

    // The header: target, suite, the adapter.
    let header = json(&c.file[0]);
    assert_eq!(header["axb"], "webgpu-results");
    assert_eq!(header["target"], "webgpu");
    assert_eq!(header["suite"]["tests"], SAMPLE.len());
    assert_eq!(header["device"]["vendor"], "google");
    assert_eq!(header["device"]["architecture"], "swiftshader");

    // The canary on SwiftShader: it spends its budget, so SwiftShader never
    // ends a loop by itself and its runs can show non-termination.
    let session = json(&c.file[1]);
    assert_eq!(session["event"], "session");
    let canary = &session["canary"];
    assert_eq!(
        canary["ok"], true,
        "SwiftShader failed the canary: {canary}"
    );
    assert_eq!(canary["exhausted"], 1);
    assert_eq!(canary["early"], 0);
    assert!(session["calibration"]["budget"].as_u64().unwrap() > 0);

    // Every run: counters that add up, and `terminated` as they say.
    let runs: Vec<Value> = c.file[2..].iter().map(|l| json(l)).collect();
    assert_eq!(runs.len(), SAMPLE.len() * 3 * iterations);
    let mut hung = 0;
    for r in &runs {
        let n = |k: &str| r[k].as_u64().unwrap();
        assert_eq!(r["target"], "webgpu");
        assert_eq!(
            n("exhausted") + n("stopped") + n("finished") + n("early"),
            n("workgroups"),
            "{r}"
        );
        assert_eq!(n("early"), 0, "{r}");
        assert_eq!(r["terminated"], n("finished") == n("workgroups"), "{r}");
        hung += (r["terminated"] == false) as usize;
    }
    // SwiftShader runs a few workgroups at a time, in order: under chunked
    // the thread 0s of 2t4i_100 come first and wait for thread 1s that never
    // start, so SwiftShader shows non-termination. (Which other runs end in
    // time depends on the machine's load: not asserted.)
    assert!(runs
        .iter()
        .filter(|r| r["test"] == "2t4i_100" && r["mapping"] == "chunked")
        .all(|r| r["terminated"] == false));
    assert!(hung > 0);

    // The file imports and reports as a CUDA program's output does.
    let file = dir.join("sample.webgpu.jsonl");
    std::fs::write(&file, c.file.join("\n") + "\n").unwrap();
    let results = dir.join("results");
    let (s, f, r) = (
        suite.to_str().unwrap(),
        file.to_str().unwrap(),
        results.to_str().unwrap(),
    );
    let o = backends(&[
        "import",
        "--target",
        "webgpu",
        s,
        "--lines",
        f,
        "--out",
        r,
        "--name",
        "swiftshader",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let device: Value = serde_json::from_str(
        &std::fs::read_to_string(results.join("swiftshader.device.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        device["description"]["webgpu"]["architecture"],
        "swiftshader"
    );
    assert_eq!(device["description"]["sessions"][0]["canary"]["ok"], true);
    assert_eq!(device["results"]["runs"], runs.len());
    assert_eq!(device["results"]["non_terminating_runs"], hung);
    assert!(results
        .join("2_thread_2_instruction/WebGPU/swiftshader.csv")
        .is_file());
    let o = backends(&["report", r]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("swiftshader"));

    // The page's answer per model (issue 23 item 1) is the report's, an
    // implementation of its own: violated iff the report finds the device
    // inconsistent, with as many (test, mapping) violations.
    let o = backends(&["report", r, "--format", "json"]);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c.answers.len(), 11, "{:?}", c.answers);
    // SwiftShader starves 2t4i_100 under chunked: some model is violated,
    // and the page says so in words, with the command to import the runs.
    assert!(
        c.answer_text
            .contains("Your GPU hung on a conformance test of")
            && c.answer_text.contains("backends import --target webgpu"),
        "{}",
        c.answer_text
    );
    for a in &c.answers {
        let f: Vec<&str> = a.split(' ').collect();
        let finding = report
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["model"] == f[0])
            .unwrap_or_else(|| panic!("{a}"));
        let violations = finding["violations"].as_array().unwrap().len();
        assert_eq!(f[1] == "violated", finding["consistent"] == false, "{a}");
        if f[1] != "nothing" {
            assert_eq!(f[f.len() - 1], violations.to_string(), "{a}");
        }
    }

    // A result file is refused for another suite or another target.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(suite.join("2t2i_0.txt"), other.join("2t2i_0.txt")).unwrap();
    let o = backends(&[
        "import",
        "--target",
        "webgpu",
        other.to_str().unwrap(),
        "--lines",
        f,
        "--out",
        r,
        "--name",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("fingerprint"));
    let o = backends(&[
        "import", "--target", "cuda", s, "--lines", f, "--out", r, "--name", "y",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not cuda"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_lost_device_and_a_browser_without_webgpu_are_reported_not_dropped() {
    let Some(chromium) = chromium() else { return };
    let dir = scratch("bad");
    let (suite, page) = common::webgpu_sample(&dir, &SAMPLE);
    let s = suite.to_str().unwrap();

    // The device is destroyed after 4 runs: the page records why it
    // stopped, keeps the runs so far, and import shows the event.
    let c = run_page(
        &chromium,
        &page,
        "autorun&fresh&log&iterations=1&run-ms=20&lose-after=4",
        &SWIFTSHADER,
        Duration::from_secs(300),
    );
    assert_eq!(c.end, "error");
    let lost: Vec<Value> = c
        .file
        .iter()
        .map(|l| json(l))
        .filter(|v| v["event"] == "lost")
        .collect();
    assert_eq!(lost.len(), 1, "{:?}", c.file);
    assert!(lost[0]["message"].as_str().unwrap().contains("lost"));
    let runs = c.file.iter().filter(|l| l.contains("\"test\"")).count();
    assert_eq!(runs, 4);
    let file = dir.join("lost.jsonl");
    std::fs::write(&file, c.file.join("\n") + "\n").unwrap();
    let out = dir.join("results");
    let o = backends(&[
        "import",
        "--target",
        "webgpu",
        s,
        "--lines",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--name",
        "lost",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("the page reported \"lost\""));
    let device = std::fs::read_to_string(out.join("lost.device.json")).unwrap();
    assert!(device.contains("\"event\": \"lost\""), "{device}");

    // No WebGPU adapter (the GPU disabled): the page says so, and so does
    // the result file, which import refuses naming the reason.
    let c = run_page(
        &chromium,
        &page,
        "autorun&fresh&log",
        &["--disable-gpu"],
        Duration::from_secs(120),
    );
    assert_eq!(c.end, "error");
    let events: Vec<Value> = c
        .file
        .iter()
        .map(|l| json(l))
        .filter(|v| v["event"] == "unsupported")
        .collect();
    assert_eq!(events.len(), 1, "{:?}", c.file);
    let file = dir.join("unsupported.jsonl");
    std::fs::write(&file, c.file.join("\n") + "\n").unwrap();
    let o = backends(&[
        "import",
        "--target",
        "webgpu",
        s,
        "--lines",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--name",
        "none",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no result lines") && err.contains("unsupported"),
        "{err}"
    );
}

#[test]
fn a_stopped_run_resumes_from_the_browsers_storage() {
    let Some(chromium) = chromium() else { return };
    let dir = scratch("resume");
    let (_, page) = common::webgpu_sample(&dir, &SAMPLE);
    let profile = dir.join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    let limit = Duration::from_secs(300);
    // Stopped after 5 runs, as the Stop button does.
    let first = run_page_in(
        &chromium,
        &page,
        "autorun&fresh&log&iterations=1&run-ms=20&stop-after=5",
        &SWIFTSHADER,
        limit,
        &profile,
    );
    assert_eq!(first.end, "stopped");
    let runs = |c: &Console| -> Vec<Value> {
        c.file
            .iter()
            .map(|l| json(l))
            .filter(|v| v.get("test").is_some())
            .collect()
    };
    assert_eq!(runs(&first).len(), 5);
    // The page opened again, in the same browser profile: the 5 runs are
    // there and the rest run, each once, with the settings of the first
    // visit (iterations=3 here is ignored: the stored settings win).
    let second = run_page_in(
        &chromium,
        &page,
        "autorun&log&iterations=3",
        &SWIFTSHADER,
        limit,
        &profile,
    );
    assert_eq!(second.end, "complete");
    let all = runs(&second);
    assert_eq!(all.len(), SAMPLE.len() * 3);
    assert_eq!(runs(&first)[..], all[..5]);
    let mut keys: Vec<(String, String)> = all
        .iter()
        .map(|r| (r["test"].to_string(), r["mapping"].to_string()))
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), all.len(), "a run was done twice");
    let sessions = second
        .file
        .iter()
        .filter(|l| l.contains("\"event\":\"session\""))
        .count();
    assert_eq!(sessions, 2);
    assert_eq!(json(&second.file[0])["settings"]["iterations"], 1);
}

/// Issue 23 item 6: long entries of the page's list of tests with
/// non-terminating runs wrap inside their column instead of running into
/// the next one. The list is filled as the page fills it (`name: mapping
/// k/n, ...`, with names of the longest kind, 64 characters) by a script
/// appended to the page, which measures what a reader sees; no GPU needed.
#[test]
fn long_entries_of_the_non_terminating_list_do_not_overlap() {
    let Some(chromium) = chromium() else { return };
    let dir = scratch("nonterm");
    let (_, page) = common::webgpu_sample(&dir, &SAMPLE);
    let probe = r##"<script>
(function () {
  const ul = document.getElementById("nonterm");
  ul.textContent = "";
  for (let k = 0; k < 24; k++) {
    const li = document.createElement("li");
    li.textContent = ("t" + k + "_a_long_test_name_of_sixty_four_characters_").padEnd(64, "x") + ": plain 20/20, round-robin 19/20, chunked 20/20";
    ul.appendChild(li);
  }
  const bad = [];
  for (const li of ul.children) if (li.scrollWidth > li.clientWidth + 1) { bad.push("an entry runs out of its column"); break; }
  const r = [...ul.children].map((li) => li.getBoundingClientRect());
  for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++) {
    const a = r[i], b = r[j];
    if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) bad.push("entries " + i + " and " + j + " overlap");
  }
  if (ul.getBoundingClientRect().right > document.documentElement.clientWidth + 1) bad.push("the list runs off the page");
  document.body.setAttribute("data-fits", bad.length ? bad.join("; ") : "yes");
})();
</script>
</body>"##;
    let html = std::fs::read_to_string(&page).unwrap();
    let probed = dir.join("probed.html");
    std::fs::write(&probed, html.replacen("</body>", probe, 1)).unwrap();
    for width in [800, 1400] {
        let out = Command::new("timeout")
            .arg("60")
            .arg(&chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--virtual-time-budget=3000",
                "--dump-dom",
            ])
            .arg(format!("--window-size={width},1200"))
            .arg(format!("--user-data-dir={}", dir.join("profile").display()))
            // Chromium puts its singleton socket folder under TMPDIR: in the
            // test's scratch folder, it goes when the folder does.
            .env("TMPDIR", &dir)
            .arg(format!("file://{}", probed.display()))
            .stdin(Stdio::null())
            .output()
            .expect("chromium starts");
        assert!(out.status.success(), "chromium failed: {}", out.status);
        let dom = String::from_utf8_lossy(&out.stdout);
        let i = dom.find("data-fits=\"").expect("the probe ran") + "data-fits=\"".len();
        let fits = &dom[i..i + dom[i..].find('"').unwrap()];
        assert_eq!(fits, "yes", "{width} px");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
