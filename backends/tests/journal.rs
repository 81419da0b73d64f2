//! Journals and imports (issue 10, item 6 and the smaller items). The
//! reproducers: two `backends run --resume` on one output interleaved
//! (mangled lines, runs journaled twice, no CSV); a journal line edited
//! into valid JSON was trusted; `backends import --lines F --lines F` (or a
//! copy of F) gave `F (4/4)` instead of `F (2/2)`; a 10 MB bad line was
//! echoed whole to stderr.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_second_process_on_a_campaign_is_refused_at_once() {
    let dir = scratch("lock");
    let suite = published_suite(&dir, &["2t2i_2"]);
    let out = dir.join("out");
    let journal = out.join("l.journal.jsonl");
    // 2t2i_2 hangs on one OS thread under the occupancy-bound scheduler:
    // every run lasts its deadline, 3 x 8 x 300 ms in all.
    let args = [
        "run",
        "--target",
        "cpp",
        s(&suite),
        "--iterations",
        "8",
        "--instances",
        "2",
        "--deadline-ms",
        "300",
        "--os-threads",
        "1",
        "--program-arg=--scheduler=obe",
        "--name",
        "l",
        "--out",
        s(&out),
    ];
    let mut first = bin().args(args).stderr(Stdio::null()).spawn().unwrap();
    let t0 = Instant::now();
    while std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count()) < 3 {
        assert!(t0.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut resume = args.to_vec();
    resume.push("--resume");
    for argv in [&resume[..], &args[..]] {
        let t = Instant::now();
        let o = backends(argv);
        assert_clean_failure(
            &o,
            1,
            &[
                "locked by another backends process",
                "working on this campaign",
            ],
        );
        assert!(t.elapsed() < Duration::from_secs(10), "not refused at once");
    }
    assert!(first.wait().unwrap().success());
    let text = std::fs::read_to_string(&journal).unwrap();
    let results = text
        .lines()
        .filter(|l| l.starts_with("{\"result\""))
        .count();
    assert_eq!(results, 3 * 8, "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("{\"session\""))
            .count(),
        1
    );
    let csv = std::fs::read_to_string(out.join("2_thread_2_instruction/cpp/l.csv")).unwrap();
    assert!(csv.contains("\n2,F (8/8),"), "{csv}");
    // Once it has ended, the campaign can be resumed (nothing left to run).
    let o = backends(&resume);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("24 runs (0 now)"), "{}", stderr(&o));
}

#[test]
fn every_journal_line_is_checked_on_resume_before_any_work() {
    let dir = scratch("edited");
    let suite = published_suite(&dir, &["2t2i_4", "2t3i_10"]);
    let out = dir.join("out");
    let journal = out.join("e.journal.jsonl");
    let args = [
        "run",
        "--target",
        "cpp",
        s(&suite),
        "--iterations",
        "2",
        "--instances",
        "4",
        "--mappings",
        "plain,chunked",
        "--name",
        "e",
        "--out",
        s(&out),
        "--resume",
    ];
    let o = backends(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let good = std::fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    // Line 3 is the first result; find a chunked one for the instance edit.
    let first = 3;
    assert!(lines[first - 1].starts_with("{\"result\""), "{good}");
    let chunked = lines
        .iter()
        .position(|l| l.contains("\"mapping\":\"chunked\""))
        .unwrap()
        + 1;
    let edit = |n: usize, from: &str, to: &str| {
        let mut v = lines.clone();
        let edited = v[n - 1].replacen(from, to, 1);
        assert_ne!(edited, v[n - 1], "{from} not in line {n}");
        v[n - 1] = Box::leak(edited.into_boxed_str());
        v.join("\n") + "\n"
    };
    let test = |n: usize| {
        let v: serde_json::Value = serde_json::from_str(lines[n - 1]).unwrap();
        v["result"]["test"].as_str().unwrap().to_string()
    };
    let t = test(first);
    let removed = {
        let mut v = lines.clone();
        v.remove(first - 1);
        v.join("\n") + "\n"
    };
    let cases: Vec<(String, String)> = vec![
        (
            edit(first, &format!("\"test\":\"{t}\""), "\"test\":\"2t2i_5\""),
            format!(":{first}: a run of test `2t2i_5`, which is not in this campaign's suite"),
        ),
        (
            edit(
                first,
                "\"mapping\":\"plain\"",
                "\"mapping\":\"round-robin\"",
            ),
            format!(":{first}: a run under round-robin, which this campaign does not run"),
        ),
        (
            edit(first, "\"mapping\":\"plain\"", "\"mapping\":\"diagonal\""),
            format!(":{first}: unknown mapping"),
        ),
        (
            edit(first, "\"iteration\":0", "\"iteration\":5"),
            format!(":{first}: run 5 of {t} under plain, but this campaign runs 2 iterations"),
        ),
        (
            edit(first, "\"workgroups\":2", "\"workgroups\":7"),
            format!(":{first}: 7 workgroups for 1 instances of the 2-thread test"),
        ),
        (
            edit(chunked, "\"instances\":4", "\"instances\":7"),
            format!(":{chunked}: 7 instances"),
        ),
        (
            edit(first, "\"elapsed_ms\":", "\"elapsed_ms\":-"),
            format!(":{first}: elapsed_ms -"),
        ),
        (removed, "the iterations are not 0..1".to_string()),
    ];
    for (text, needle) in cases {
        std::fs::write(&journal, &text).unwrap();
        let o = backends(&args);
        assert_clean_failure(&o, 2, &[&format!("{}", journal.display()), &needle]);
        assert!(!stderr(&o).contains("compiling"), "work was done first");
        assert_eq!(
            std::fs::read_to_string(&journal).unwrap(),
            text,
            "the journal was changed"
        );
    }
    // A 10 MB corrupt line: one short error line.
    std::fs::write(&journal, format!("{good}{}\n", "x".repeat(10_000_000))).unwrap();
    let o = backends(&args);
    assert_clean_failure(&o, 2, &["corrupt journal line"]);
    assert!(
        stderr(&o).len() < 2000,
        "{} bytes on stderr",
        stderr(&o).len()
    );
    // The journal as it was: resumed, nothing to do.
    std::fs::write(&journal, &good).unwrap();
    let o = backends(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn import_never_counts_the_same_runs_twice() {
    let dir = scratch("import");
    let suite = published_suite(&dir, &["2t2i_2", "2t2i_4"]);
    let prog = dir.join("prog");
    let o = backends(&[
        "emit",
        "--target",
        "cpp",
        s(&suite),
        "--name",
        "tests",
        "--out",
        s(&prog),
        "--check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = |file: &str, test: &str| {
        let o = Command::new(prog.join("tests"))
            .args([
                "--test",
                test,
                "--mapping",
                "plain",
                "--iterations",
                "2",
                "--deadline-ms",
                "200",
                "--threads",
                "1",
                "--scheduler",
                "obe",
            ])
            .output()
            .unwrap();
        assert!(o.status.success());
        let p = dir.join(file);
        std::fs::write(&p, &o.stdout).unwrap();
        p
    };
    let f = lines("F.jsonl", "2t2i_2");
    let g = lines("G.jsonl", "2t2i_4");
    let out = dir.join("out");
    let import = |name: &str, files: &[&Path]| {
        let mut argv = vec!["import", "--target", "cpp", s(&suite), "--out", s(&out)];
        for f in files {
            argv.extend(["--lines", s(f)]);
        }
        argv.extend(["--name", name]);
        backends(&argv)
    };
    let o = import("once", &[&f, &g]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("2_thread_2_instruction/cpp/once.csv")).unwrap();
    assert!(csv.contains("\n2,F (2/2),,,F\n"), "{csv}");

    let copy = dir.join("copy-of-F.jsonl");
    std::fs::copy(&f, &copy).unwrap();
    let link = dir.join("link-to-F.jsonl");
    std::os::unix::fs::symlink(&f, &link).unwrap();
    let both = dir.join("F-and-G.jsonl");
    std::fs::write(
        &both,
        std::fs::read_to_string(&f).unwrap() + &std::fs::read_to_string(&g).unwrap(),
    )
    .unwrap();
    let cases: [(&[&Path], &str); 4] = [
        (&[&f, &f], "is the same file as"),
        (&[&f, &link], "is the same file as"),
        (&[&f, &copy], "has the same contents as"),
        (
            &[&both, &f],
            "F.jsonl:1: every result line of this file is also in",
        ),
    ];
    for (files, needle) in cases {
        let o = import("twice", files);
        assert_clean_failure(&o, 2, &[needle, "counted twice"]);
        assert!(!out.join("twice.journal.jsonl").exists());
    }

    // Runs of one test of the suite: the other has no row (a row of empty
    // cells would count as observed in a report).
    let o = import("onlyF", &[&f]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("2_thread_2_instruction/cpp/onlyF.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    let r = backends(&[
        "report",
        s(&out.join("2_thread_2_instruction/cpp/onlyF.csv")),
        "--tests",
        s(&suite),
    ]);
    assert!(String::from_utf8_lossy(&r.stdout).contains("(1 tests observed)"));

    // Lines of another target, and a 10 MB bad line: short, clear errors.
    let cuda = dir.join("cuda.jsonl");
    std::fs::write(
        &cuda,
        std::fs::read_to_string(&f)
            .unwrap()
            .replace("\"target\":\"cpp\"", "\"target\":\"cuda\""),
    )
    .unwrap();
    assert_clean_failure(
        &import("other", &[&cuda]),
        2,
        &["cuda.jsonl:1: a result of target \"cuda\", not cpp"],
    );
    let huge = dir.join("huge.jsonl");
    std::fs::write(&huge, "y".repeat(10_000_000)).unwrap();
    let o = import("huge", &[&huge]);
    assert_clean_failure(&o, 2, &["huge.jsonl:1: not a JSON result line"]);
    assert!(
        stderr(&o).len() < 2000,
        "{} bytes on stderr",
        stderr(&o).len()
    );
}

/// Issue 20 item 11: import identified runs by the bytes of their lines,
/// so a re-formatted copy (re-indented, keys reordered, `1.50` for `1.5`)
/// counted the same runs twice; and it took lines no program can print:
/// `workgroups: 7` for the plain mapping of a 2-thread test, `finished:
/// 999`, two instances under plain. Runs are now compared by content, and
/// every line is checked against its test and mapping (file:line errors).
#[test]
fn import_compares_runs_by_content_and_refuses_impossible_lines() {
    let dir = scratch("import-content");
    let suite = published_suite(&dir, &["2t2i_2", "2t2i_4"]);
    let line = |test: &str, it: u32, ms: &str| {
        format!(
            "{{\"test\":\"{test}\",\"target\":\"cpp\",\"mapping\":\"plain\",\"instances\":1,\"workgroups\":2,\"iteration\":{it},\"terminated\":true,\"elapsed_ms\":{ms}}}"
        )
    };
    let f = dir.join("F.jsonl");
    std::fs::write(
        &f,
        format!(
            "{}\n{}\n",
            line("2t2i_2", 0, "1.5"),
            line("2t2i_2", 1, "2.25")
        ),
    )
    .unwrap();
    // The same two runs, spelt otherwise.
    let respelt = |l: String| {
        let v: serde_json::Value = serde_json::from_str(&l).unwrap();
        let o = v.as_object().unwrap();
        let mut keys: Vec<&String> = o.keys().collect();
        keys.reverse();
        let fields: Vec<String> = keys
            .iter()
            .map(|k| format!("  \"{k}\" : {}", o[*k]))
            .collect();
        format!("{{{}}}", fields.join(" ,")).replace("1.5", "1.50")
    };
    let g = dir.join("G.jsonl");
    std::fs::write(
        &g,
        format!(
            "{}\n\n{}\n",
            respelt(line("2t2i_2", 0, "1.5")),
            respelt(line("2t2i_2", 1, "2.25"))
        ),
    )
    .unwrap();
    let part = dir.join("part.jsonl");
    std::fs::write(&part, respelt(line("2t2i_2", 1, "2.25")) + "\n").unwrap();
    let out = dir.join("out");
    let import = |files: &[&Path]| {
        let mut argv = vec!["import", "--target", "cpp", s(&suite), "--out", s(&out)];
        for f in files {
            argv.extend(["--lines", s(f)]);
        }
        argv.extend(["--name", "twice"]);
        backends(&argv)
    };
    assert_clean_failure(
        &import(&[&f, &g]),
        2,
        &["has the same contents as", "counted twice"],
    );
    assert_clean_failure(
        &import(&[&part, &f]),
        2,
        &["part.jsonl:1: every result line of this file is also in"],
    );
    assert!(!out.join("twice.journal.jsonl").exists());
    // Lines no program prints: file:line errors, nothing written.
    let ok = line("2t2i_4", 0, "1");
    let impossible = [
        (
            ok.replace("\"workgroups\":2", "\"workgroups\":7"),
            "bad.jsonl:2: 7 workgroups for 1 instances of the 2-thread test 2t2i_4 under plain, whose launch has 2",
        ),
        (
            ok.replace("\"instances\":1,\"workgroups\":2", "\"instances\":2,\"workgroups\":4"),
            "bad.jsonl:2: 2 instances for test 2t2i_4 under plain, which runs one",
        ),
        (
            ok.replace("\"elapsed_ms\":1", "\"elapsed_ms\":1,\"finished\":999"),
            "bad.jsonl:2: `finished` 999 is not a count of the run's 2 workgroups",
        ),
        (
            ok.replace("\"elapsed_ms\":1", "\"elapsed_ms\":1,\"finished\":1"),
            "bad.jsonl:2: `terminated` is true but 1 of 2 workgroups finished",
        ),
    ];
    let bad = dir.join("bad.jsonl");
    for (l, needle) in impossible {
        std::fs::write(&bad, format!("{}\n{l}\n", line("2t2i_2", 0, "1"))).unwrap();
        assert_clean_failure(&import(&[&bad]), 2, &[needle]);
        assert!(!out.join("twice.journal.jsonl").exists());
    }
    // The good lines import.
    std::fs::write(&bad, format!("{}\n{ok}\n", line("2t2i_2", 0, "1"))).unwrap();
    let o = import(&[&bad]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Issue 46, item 5: journals (and run lines) were read whole, with no
/// bound. Over the input limit (`AXB_MAX_INPUT_BYTES`), `db import` of a
/// journal and `import --lines` are one error line, exit 2.
#[test]
fn journals_and_run_lines_over_the_input_limit_are_refused() {
    let dir = scratch("big");
    let suite = published_suite(&dir, &["2t2i_2"]);
    let big = dir.join("big.journal.jsonl");
    std::fs::write(&big, format!("{}\n", "x".repeat(4000))).unwrap();
    let limited = |args: &[&str]| {
        bin()
            .env("AXB_MAX_INPUT_BYTES", "1K")
            .args(args)
            .output()
            .unwrap()
    };
    let db = dir.join("r.sqlite");
    let o = limited(&["db", "import", "--db", s(&db), s(&big)]);
    assert_clean_failure(
        &o,
        2,
        &["big.journal.jsonl: 3.9 KiB (4001 bytes) is over the input limit of 1 KiB"],
    );
    let lines = dir.join("big.jsonl");
    std::fs::copy(&big, &lines).unwrap();
    let out = dir.join("out");
    let o = limited(&[
        "import",
        "--target",
        "cpp",
        s(&suite),
        "--out",
        s(&out),
        "--lines",
        s(&lines),
    ]);
    assert_clean_failure(
        &o,
        2,
        &["big.jsonl: 3.9 KiB (4001 bytes) is over the input limit of 1 KiB"],
    );
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}
