//! `backends import --target webgpu` on result files written here (no
//! browser needed): what it accepts, and every way a file is refused.

use backends::target::webgpu;
use progress_litmus::axb::load::load_all;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("webgpu-import-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn backends(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_backends"))
        .args(args)
        .output()
        .unwrap()
}

/// A two-test suite and the header a page of it writes.
fn suite(dir: &Path) -> (PathBuf, String) {
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    let published = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests");
    for t in ["2t2i_0", "2t2i_5"] {
        std::fs::copy(
            published.join(format!("{t}.txt")),
            suite.join(format!("{t}.txt")),
        )
        .unwrap();
    }
    let (tests, _) = load_all(std::slice::from_ref(&suite));
    let header = json!({"axb": "webgpu-results", "format": 1, "target": "webgpu",
        "suite": {"name": "suite", "tests": 2, "fnv64": webgpu::suite_fingerprint(&tests)},
        "device": {"vendor": "acme", "architecture": "x"}, "settings": {"iterations": 1}});
    (suite, header.to_string())
}

fn run_line(test: &str, mapping: &str, terminated: bool) -> String {
    let w = if mapping == "plain" { 2 } else { 65534 };
    json!({"test": test, "target": "webgpu", "mapping": mapping, "instances": w / 2, "workgroups": w,
        "iteration": 0, "terminated": terminated, "elapsed_ms": 1.5, "budget": 1000,
        "exhausted": u32::from(!terminated), "stopped": 0, "finished": if terminated { w } else { w - 1 }, "early": 0})
    .to_string()
}

/// Imports `lines` as one file; the output.
fn import(dir: &Path, suite: &Path, lines: &[String], extra: &[&str]) -> Output {
    let file = dir.join("results.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let mut args = vec![
        "import",
        "--target",
        "webgpu",
        suite.to_str().unwrap(),
        "--lines",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    backends(&args)
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_result_file_imports_with_its_device_sessions_and_events() {
    let dir = scratch("ok");
    let (suite, header) = suite(&dir);
    let session =
        json!({"event": "session", "canary": {"ok": true}, "calibration": {"budget": 1000}})
            .to_string();
    let oom = json!({"event": "out-of-memory", "message": "dispatch failed", "test": "2t2i_5", "mapping": "chunked"}).to_string();
    let lines = vec![
        header,
        session,
        run_line("2t2i_0", "plain", true),
        run_line("2t2i_0", "chunked", false),
        oom,
        run_line("2t2i_5", "plain", true),
    ];
    let o = import(&dir, &suite, &lines, &["--name", "acme"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains("results.jsonl:5: the page reported \"out-of-memory\": dispatch failed"),
        "{}",
        err(&o)
    );
    let device: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/acme.device.json")).unwrap())
            .unwrap();
    assert_eq!(device["target"], "webgpu");
    assert_eq!(device["description"]["webgpu"]["vendor"], "acme");
    assert_eq!(device["description"]["sessions"][0]["canary"]["ok"], true);
    assert_eq!(device["description"]["events"][0]["event"], "out-of-memory");
    assert_eq!(device["results"]["runs"], 3);
    assert_eq!(device["results"]["non_terminating_runs"], 1);
    let csv =
        std::fs::read_to_string(dir.join("out/2_thread_2_instruction/WebGPU/acme.csv")).unwrap();
    assert!(csv.contains("F (1/1)"), "{csv}");
}

#[test]
fn result_files_of_another_suite_target_or_shape_are_refused() {
    let dir = scratch("refused");
    let (suite, header) = suite(&dir);
    let run = run_line("2t2i_0", "plain", true);
    let refused = |lines: Vec<String>, extra: &[&str], want: &str| {
        let o = import(&dir, &suite, &lines, extra);
        assert_eq!(o.status.code(), Some(2), "{lines:?}: {}", err(&o));
        assert!(
            err(&o).contains(want),
            "{lines:?}: wanted `{want}` in: {}",
            err(&o)
        );
    };
    // No header; a header not first; two headers.
    refused(
        vec![run.clone()],
        &[],
        "results.jsonl:1: not a result file of the webgpu page",
    );
    refused(
        vec![run.clone(), header.clone()],
        &[],
        "its first line must be the header",
    );
    refused(
        vec![header.clone(), run.clone(), header.clone()],
        &[],
        "results.jsonl:3: a second header",
    );
    // Another suite (one test changed), another target, another format.
    let other = header.replace(&webgpu_fp(&header), "0123456789abcdef");
    refused(vec![other, run.clone()], &[], "fingerprint");
    refused(
        vec![
            header.replace("\"target\":\"webgpu\"", "\"target\":\"cuda\""),
            run.clone(),
        ],
        &[],
        "of target \"cuda\", not webgpu",
    );
    refused(
        vec![header.replace("\"format\":1", "\"format\":2"), run.clone()],
        &[],
        "format 2",
    );
    // A line of another program; a run of a test not in the suite.
    refused(
        vec![
            header.clone(),
            run.replace("\"target\":\"webgpu\"", "\"target\":\"cuda\""),
        ],
        &[],
        "a result of target \"cuda\", not webgpu",
    );
    refused(
        vec![header.clone(), run.replace("2t2i_0", "2t2i_9")],
        &[],
        "not in the suite",
    );
    // --info: the file holds the device.
    refused(
        vec![header.clone(), run.clone()],
        &["--info", "x.json"],
        "--info is not for webgpu",
    );
    // Events only: nothing to import, and the reason said.
    let unsupported = json!({"event": "unsupported", "message": "no WebGPU"}).to_string();
    refused(
        vec![header, unsupported],
        &[],
        "the page reported \"unsupported\": no WebGPU",
    );
}

fn webgpu_fp(header: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(header).unwrap();
    v["suite"]["fnv64"].as_str().unwrap().to_string()
}

/// Issue 20 item 10: a page's event message (and event name) is the
/// browser's text, i.e. anyone's: its newlines must not forge status lines
/// ("imported 9999 runs") and its escape sequences (an OSC that sets the
/// terminal's title, a BEL) must not reach the terminal; both are shown
/// escaped, on the warning's one line, and in the error of a file with no
/// runs.
#[test]
fn event_messages_are_escaped_before_they_reach_the_terminal() {
    let dir = scratch("hostile-message");
    let (suite, header) = suite(&dir);
    let hostile = "x\n imported 9999 runs\u{1b}]0;pwned\u{7}\u{9b}2K\u{202e}";
    let event = json!({"event": "lost\n ok", "message": hostile}).to_string();
    let clean = |o: &Output| {
        let e = err(o);
        assert!(
            !e.chars()
                .any(|c| c != '\n' && progress_litmus::error::unprintable(c)),
            "{e:?}"
        );
        assert!(
            !e.lines().any(|l| l.trim_start().starts_with("imported")),
            "{e}"
        );
        assert!(
            e.contains("x\\n imported 9999 runs\\u{1b}]0;pwned\\u{7}\\u{9b}2K\\u{202e}"),
            "{e}"
        );
        e
    };
    let lines = vec![
        header.clone(),
        event.clone(),
        run_line("2t2i_0", "plain", true),
    ];
    let o = import(&dir, &suite, &lines, &["--name", "acme"]);
    assert!(o.status.success(), "{}", err(&o));
    let e = clean(&o);
    // The warning and the summary: two lines.
    assert_eq!(e.lines().count(), 2, "{e}");
    assert!(e.contains("the page reported \"lost\\n ok\": x\\n"), "{e}");
    // No runs at all: the events are quoted in the error line.
    let o = import(&dir, &suite, &[header, event], &["--name", "acme"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    let e = clean(&o);
    assert_eq!(
        e.lines().filter(|l| l.starts_with("error: ")).count(),
        1,
        "{e}"
    );
}
