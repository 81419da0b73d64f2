//! `backends serve`, end to end on loopback (issue 44 item 5): the server
//! starts on a free port; uploads of the WebGPU page's result file are
//! stored once and appear on the served site; two at once store nothing
//! twice; a forged, an oversized and a too-frequent upload are refused
//! with a clear message and store nothing; a server killed (`kill -9`)
//! during an upload leaves the database whole; and headless Chromium runs
//! the served page on SwiftShader and sends its results itself.
//!
//! HTTP is spoken by hand here (a request line, headers, a body): the
//! test needs no client library, and sees the status codes as sent.

mod common;

use progress_litmus::axb::load::load_all;
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_backends");
const SAMPLE: [&str; 2] = ["2t2i_0", "2t2i_5"];

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("serve-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A result file of the page, as it sends it: the header, a session,
/// and a run of each sample test under plain for each of `iterations`.
fn result_file(suite: &Path, vendor: &str, iterations: u32, fnv64: Option<&str>) -> String {
    let (tests, _) = load_all(&[suite.to_path_buf()]);
    let fp = progress_litmus::fingerprint::suite(&tests);
    let device = json!({"vendor": vendor, "architecture": "x"});
    let header = json!({"axb": "webgpu-results", "format": 1, "target": "webgpu",
        "suite": {"name": "sample", "tests": tests.len(), "fnv64": fnv64.unwrap_or(&fp)},
        "device": device, "settings": {"iterations": iterations}});
    let session = json!({"event": "session", "at_unix_ms": 1_700_000_000_000u64, "device": device});
    let mut lines = vec![header.to_string(), session.to_string()];
    for i in 0..iterations {
        for t in SAMPLE {
            lines.push(
                json!({"test": t, "target": "webgpu", "mapping": "plain", "instances": 1,
                "workgroups": 2, "iteration": i, "terminated": true, "elapsed_ms": 1.5,
                "budget": 1000, "exhausted": 0, "stopped": 0, "finished": 2, "early": 0})
                .to_string(),
            );
        }
    }
    lines.join("\n") + "\n"
}

/// A running `backends serve` and its address.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(dir: &Path, suite: &Path, page: &Path, extra: &[&str]) -> Server {
    let mut child = Command::new(BIN)
        .arg("serve")
        .arg("--db")
        .arg(dir.join("results.sqlite"))
        .arg("--page")
        .arg(page)
        .arg(suite)
        .args(["--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = first
        .strip_prefix("serving http://")
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("not a serving line: {first:?}"))
        .to_string();
    Server { child, addr }
}

/// One HTTP request; the status code and the body.
fn http(addr: &str, method: &str, path: &str, body: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    let _ = s.write_all(body);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_string());
    (code, body)
}

fn runs(dir: &Path) -> i64 {
    let db = dir.join("results.sqlite");
    if !db.exists() {
        return 0;
    }
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn uploads_are_stored_once_and_shown_and_bad_ones_store_nothing() {
    let dir = scratch("uploads");
    let (suite, page) = common::webgpu_sample(&dir, &SAMPLE);
    let server = serve(&dir, &suite, &page, &["--per-minute", "100"]);
    let a = &server.addr;
    // The page and the (empty) site are served.
    let (code, body) = http(a, "GET", "/", b"");
    assert_eq!(code, 200);
    assert!(body.contains("Send my results"));
    let (code, body) = http(a, "GET", "/site/", b"");
    assert_eq!(code, 200);
    assert!(body.contains("No results yet"), "{body}");

    let file = result_file(&suite, "acme", 2, None);
    let (code, body) = http(a, "POST", "/upload", file.as_bytes());
    assert_eq!(code, 200, "{body}");
    assert!(
        body.contains("stored 4 runs of device webgpu-acme-x"),
        "{body}"
    );
    assert_eq!(runs(&dir), 4);
    let (code, site) = http(a, "GET", "/site/index.html", b"");
    assert_eq!(code, 200);
    assert!(site.contains("webgpu-acme-x"), "the site shows it at once");
    let (code, _) = http(a, "GET", "/site/devices/webgpu-acme-x.html", b"");
    assert_eq!(code, 200);
    // Sent again: nothing new.
    let (code, body) = http(a, "POST", "/upload", file.as_bytes());
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("stored before"), "{body}");
    assert_eq!(runs(&dir), 4);

    // Two at once, of new runs: stored once.
    let more = result_file(&suite, "acme", 3, None);
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let (a, more) = (a.clone(), more.clone());
            std::thread::spawn(move || http(&a, "POST", "/upload", more.as_bytes()))
        })
        .collect();
    for h in handles {
        let (code, body) = h.join().unwrap();
        assert_eq!(code, 200, "{body}");
    }
    // The same campaign (the page's first session): its third iteration's
    // two runs are new, stored once.
    assert_eq!(runs(&dir), 4 + 2);

    // Forged: another suite's fingerprint. Refused, saying why.
    let forged = result_file(&suite, "evil", 1, Some("0123456789abcdef"));
    let (code, body) = http(a, "POST", "/upload", forged.as_bytes());
    assert_eq!(code, 400);
    assert!(
        body.contains("0123456789abcdef") && body.contains("fingerprint"),
        "{body}"
    );
    // Not result lines at all, and not UTF-8.
    let (code, body) = http(a, "POST", "/upload", b"hello\n");
    assert_eq!(code, 400);
    assert!(body.contains("header"), "{body}");
    let (code, _) = http(a, "POST", "/upload", &[0xff, 0xfe, 0x00]);
    assert_eq!(code, 400);
    // A run line forged after a good header: refused at its line.
    let bad_line = file.replace("\"iteration\":1", "\"iteration\":-1");
    let (code, body) = http(a, "POST", "/upload", bad_line.as_bytes());
    assert_eq!(code, 400, "{body}");
    assert_eq!(runs(&dir), 6, "nothing stored by the refused uploads");
    // Only the site's pages are served from its folder.
    for p in [
        "/site/../results.sqlite",
        "/site/devices/..%2F..%2Fresults.sqlite",
        "/site/x.html",
    ] {
        assert_eq!(http(a, "GET", p, b"").0, 404, "{p}");
    }
}

#[test]
fn oversized_and_too_frequent_uploads_are_refused() {
    let dir = scratch("limits");
    let (suite, page) = common::webgpu_sample(&dir, &SAMPLE);
    let server = serve(
        &dir,
        &suite,
        &page,
        &["--max-upload", "3000", "--per-minute", "2"],
    );
    let a = &server.addr;
    let big = result_file(&suite, "acme", 40, None);
    assert!(big.len() > 3000);
    let (code, _) = http(a, "POST", "/upload", big.as_bytes());
    assert_eq!(code, 413);
    assert_eq!(runs(&dir), 0);
    let small = result_file(&suite, "acme", 1, None);
    for _ in 0..2 {
        assert_eq!(http(a, "POST", "/upload", small.as_bytes()).0, 200);
    }
    let (code, body) = http(a, "POST", "/upload", small.as_bytes());
    assert_eq!(code, 429, "{body}");
    assert!(body.contains("uploads from this address"), "{body}");
}

/// A server killed during an upload (the body half sent) loses nothing
/// stored before and stores nothing of it; a new server takes the upload.
#[test]
fn a_server_killed_during_an_upload_leaves_the_database_whole() {
    let dir = scratch("kill");
    let (suite, page) = common::webgpu_sample(&dir, &SAMPLE);
    let mut server = serve(&dir, &suite, &page, &[]);
    let first = result_file(&suite, "acme", 1, None);
    assert_eq!(
        http(&server.addr, "POST", "/upload", first.as_bytes()).0,
        200
    );
    let second = result_file(&suite, "acme", 2, None);
    let mut s = TcpStream::connect(&server.addr).unwrap();
    let head = format!(
        "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        second.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(&second.as_bytes()[..second.len() / 2]).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    assert_eq!(runs(&dir), 2);
    let server = serve(&dir, &suite, &page, &[]);
    assert_eq!(
        http(&server.addr, "POST", "/upload", second.as_bytes()).0,
        200
    );
    assert_eq!(runs(&dir), 4);
}

/// Headless Chromium opens the served page, runs it on SwiftShader and
/// sends its results (`#send`); the device appears on the served site.
#[test]
fn the_served_page_runs_in_chromium_and_sends_its_results() {
    let Some(browser) = common::find_chromium() else {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "headless Chromium not found on PATH: apt-get install -y chromium"
        );
        eprintln!("skipped: headless Chromium not found (apt-get install -y chromium)");
        return;
    };
    let dir = scratch("browser");
    let (suite, page) = common::webgpu_sample(&dir, &SAMPLE);
    let server = serve(&dir, &suite, &page, &[]);
    let url = format!(
        "http://{}/#autorun&fresh&log&send&iterations=1&run-ms=50",
        server.addr
    );
    let mut child = Command::new(browser)
        .args(["--headless=new", "--no-sandbox"])
        .args(common::SWIFTSHADER)
        .args(["--enable-logging=stderr", "--v=0", "--no-first-run"])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        // Chromium puts its singleton socket folder under TMPDIR: in the
        // test's scratch folder, it goes when the folder does.
        .env("TMPDIR", &dir)
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let start = Instant::now();
    let mut sent = None;
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        if let Some(i) = line.find("axb-sent: ") {
            sent = Some(line[i..].to_string());
            break;
        }
        if start.elapsed() > Duration::from_secs(240) {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let sent = sent.expect("the page sent its results");
    println!("the page: {sent}");
    assert!(sent.contains("sent: stored"), "{sent}");
    let (code, site) = http(&server.addr, "GET", "/site/", b"");
    assert_eq!(code, 200);
    assert!(site.contains("webgpu-google-swiftshader"), "{site}");
}
