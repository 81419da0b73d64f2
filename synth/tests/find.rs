//! `synth find` against complete enumeration: every answer is a test of the
//! enumerated set with the required verdicts, `--limit all` returns exactly
//! that subset, and no family blocked by a generalised refutation holds a
//! valid answer (the soundness of the generalisation). Also: impossible
//! queries, resuming after a timeout or kill -9, the journal lock, and the
//! committed findings under `suites/found/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use synth::find::{find, Options, Query};
use synth::Config;

fn synth() -> Command {
    Command::new(env!("CARGO_BIN_EXE_synth"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("synth-find-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Queries across the hierarchy: distinguishing pairs, Table 4 buckets,
/// fail-only and pass-only vectors.
const QUERIES: &[(&str, &str)] = &[
    ("OBE_STRONG", "HSA_STRONG"),
    ("OBE_STRONG", "HSA_STRONG,WEAK_FAIR"),
    ("HSA", "OBE"),
    ("LOBE", "HSA,OBE"),
    ("LOBE_STRONG", "HSA_OBE_STRONG"),
    ("HSA_OBE", "HSA,OBE"),
    ("STRONG_FAIR", "WEAK_FAIR"),
    ("", "STRONG_FAIR"),
    ("WEAK_FAIR", ""),
];

/// The cross-check of one configuration, for `queries`.
fn cross_check(cfg: &Config, queries: &[(&str, &str)]) {
    let all = synth::enumerate(cfg).unwrap();
    let labels = oracle::verdicts_all(&all.iter().collect::<Vec<_>>());
    for &(p, f) in queries {
        let q = Query::parse(p, f).unwrap();
        let want: Vec<progress_litmus::Test> = all
            .iter()
            .zip(&labels)
            .filter(|(_, v)| q.accepts(v))
            .map(|(t, _)| t.clone())
            .collect();
        let opts = Options {
            keep_families: true,
            ..Options::default()
        };
        let got = find(cfg, &q, &opts, None).unwrap();
        assert!(got.complete);
        assert_eq!(
            got.tests,
            want,
            "{} {}: find --limit all differs from the enumerated subset",
            cfg.name(),
            q.describe()
        );
        // Soundness of the generalisation: no blocked family holds an answer.
        for fam in &got.families {
            for t in &want {
                assert!(
                    !fam.contains(t),
                    "{} {}: a blocked family {fam:?} holds the answer\n{}",
                    cfg.name(),
                    q.describe(),
                    progress_litmus::axb::text::print(t)
                );
            }
        }
        // No test is proposed twice (blocking works).
        assert!(got.candidates as usize <= all.len());
        // Failure witnesses prune whole families: far fewer candidates than
        // tests when the required passes fail for most tests.
        if (p, f) == ("OBE_STRONG", "HSA_STRONG,WEAK_FAIR") && all.len() > 1000 {
            assert!(
                (got.candidates as usize) < all.len() * 3 / 4,
                "{} {}: {} candidates for {} tests",
                cfg.name(),
                q.describe(),
                got.candidates,
                all.len()
            );
        }
        // A limited search returns answers, the first in piece order.
        let one = find(
            cfg,
            &q,
            &Options {
                limit: Some(3),
                ..Options::default()
            },
            None,
        )
        .unwrap();
        assert_eq!(one.tests.len(), want.len().min(3));
        assert!(one.tests.iter().all(|t| want.contains(t)));
    }
}

/// The debug-build check: 2t3i, a few queries.
#[test]
fn find_is_the_enumerated_subset_2t3i() {
    cross_check(&Config::new(2, 3), &QUERIES[..3]);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "release only: cargo test --release")]
fn find_is_the_enumerated_subset_2t3i_3t3i_all_queries() {
    cross_check(&Config::new(2, 3), QUERIES);
    cross_check(&Config::new(3, 3), QUERIES);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "release only: cargo test --release")]
fn find_is_the_enumerated_subset_2t4i() {
    cross_check(&Config::new(2, 4), &QUERIES[..4]);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "release only: cargo test --release")]
fn find_is_the_enumerated_subset_3t4i() {
    cross_check(&Config::new(3, 4), &QUERIES[..2]);
}

/// 2t5i (416,280 tests): every answer of a limited search (5 answers) is an enumerated
/// test with the required verdicts.
#[test]
#[cfg_attr(debug_assertions, ignore = "release only: cargo test --release")]
fn find_answers_are_enumerated_tests_2t5i() {
    let cfg = Config::new(2, 5);
    let all = synth::enumerate(&cfg).unwrap();
    let labels = oracle::verdicts_all(&all.iter().collect::<Vec<_>>());
    let index: std::collections::HashMap<&progress_litmus::Test, progress_litmus::Verdicts> =
        all.iter().zip(labels).collect();
    for &(p, f) in &QUERIES[..3] {
        let q = Query::parse(p, f).unwrap();
        let opts = Options {
            limit: Some(5),
            ..Options::default()
        };
        let got = find(&cfg, &q, &opts, None).unwrap();
        assert_eq!(got.tests.len(), 5, "{}", q.describe());
        for t in &got.tests {
            let v = index.get(t).expect("an enumerated test");
            assert!(
                q.accepts(v),
                "{}\n{}",
                q.describe(),
                progress_litmus::axb::text::print(t)
            );
        }
    }
}

/// `--minimal` returns tests of the smallest size that has any.
#[test]
#[cfg_attr(debug_assertions, ignore = "release only: cargo test --release")]
fn minimal_finds_the_smallest_size() {
    let q = Query::parse("OBE", "HSA").unwrap();
    let opts = Options {
        minimal: true,
        ..Options::default()
    };
    let got = find(&Config::new(3, 4), &q, &opts, None).unwrap();
    let t = &got.tests[0];
    let size = (t.num_instrs(), t.num_threads(), t.num_locs());
    // Nothing smaller: every smaller configuration, enumerated, has none.
    for instrs in 2..=4 {
        for threads in 2..=3.min(instrs) {
            for locs in 1..=2 {
                if (instrs, threads, locs) >= size {
                    continue;
                }
                let mut c = Config::new(threads, instrs);
                c.locs = locs;
                let all = synth::enumerate(&c).unwrap();
                assert!(
                    all.iter()
                        .all(|t| t.num_locs() < locs || !q.accepts(&oracle::verdicts(t))),
                    "{} with {locs} locations has an answer smaller than {size:?}",
                    c.name()
                );
            }
        }
    }
    assert!(got
        .tests
        .iter()
        .all(|t| (t.num_instrs(), t.num_threads(), t.num_locs()) == size));
    assert!(q.accepts(&oracle::verdicts(t)));
}

#[test]
fn impossible_vectors_are_refused_with_the_implication() {
    let out = synth()
        .args([
            "find",
            "-t",
            "2",
            "-i",
            "3",
            "--passes",
            "HSA",
            "--fails",
            "WEAK_FAIR",
            "-o",
            "-",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("weak HSA => weak HSA+OBE => weak LOBE => weak fair"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

fn find_cmd(out: &Path, extra: &[&str]) -> Command {
    let mut c = synth();
    c.args([
        "find",
        "-t",
        "2",
        "-i",
        "3",
        "--passes",
        "STRONG_FAIR",
        "--fails",
        "WEAK_FAIR",
    ])
    .args(["--limit", "all", "-o"])
    .arg(out)
    .args(extra);
    c
}

#[test]
fn a_stopped_find_resumes_to_the_same_bytes() {
    let d = scratch("resume");
    let full = d.join("full.ron");
    assert!(find_cmd(&full, &[]).status().unwrap().success());
    let want = std::fs::read(&full).unwrap();
    // A timeout that stops it at once: exit 1, journal kept.
    let part = d.join("part.ron");
    let st = find_cmd(&part, &["--timeout", "0.000001"])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(1));
    let journal = d.join("part.ron.journal");
    assert!(journal.exists());
    // Without --resume an existing journal is refused.
    assert_eq!(find_cmd(&part, &[]).status().unwrap().code(), Some(2));
    // A line torn by kill -9 is dropped.
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.push_str("{\"piece\":\"2t3i.l2.s0\",\"ans");
    std::fs::write(&journal, text).unwrap();
    assert!(find_cmd(&part, &["--resume"]).status().unwrap().success());
    assert_eq!(std::fs::read(&part).unwrap(), want);
    assert!(!journal.exists());
    // Another run's journal is refused.
    std::fs::write(&journal, "{\"journal\":\"other\"}\n").unwrap();
    assert_eq!(
        find_cmd(&part, &["--resume"]).status().unwrap().code(),
        Some(2)
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
#[cfg_attr(debug_assertions, ignore = "release only: cargo test --release")]
fn kill_9_then_resume_gives_the_same_bytes() {
    let d = scratch("kill");
    let full = d.join("full.ron");
    let args = [
        "--passes",
        "OBE_STRONG",
        "--fails",
        "HSA_STRONG",
        "--limit",
        "all",
    ];
    let run = |out: &Path| {
        let mut c = synth();
        c.args(["find", "-t", "3", "-i", "4"])
            .args(args)
            .arg("-o")
            .arg(out);
        c
    };
    assert!(run(&full).status().unwrap().success());
    let part = d.join("part.ron");
    let mut child = run(&part).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    let mut resume = run(&part);
    resume.arg("--resume");
    assert!(resume.status().unwrap().success());
    assert_eq!(std::fs::read(&part).unwrap(), std::fs::read(&full).unwrap());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_second_find_on_the_same_output_is_refused() {
    let d = scratch("lock");
    let out = d.join("o.ron");
    let journal = d.join("o.ron.journal");
    let header = "{}";
    let held = synth::find::journal::Journal::open(&journal, header, false).unwrap();
    let r = synth::find::journal::Journal::open(&journal, header, true);
    assert!(r.err().unwrap().contains("another synth find"));
    drop(held);
    let _ = out;
    std::fs::remove_dir_all(&d).unwrap();
}

/// Each committed finding has the verdicts recorded with it, and those
/// answer the query its suite note states.
#[test]
fn committed_findings_have_their_verdicts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites/found");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "ron") {
            continue;
        }
        let suite =
            progress_litmus::axb::load::parse_suite(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let rest = suite
            .note
            .split("tests that passes ")
            .nth(1)
            .expect("a query note");
        let (passes, rest) = rest.split_once(" fails ").unwrap();
        let fails = rest.split_once(' ').unwrap().0;
        let dash = |s: &str| {
            if s == "-" {
                String::new()
            } else {
                s.to_string()
            }
        };
        let q = Query::parse(&dash(passes), &dash(fails)).unwrap();
        assert!(!suite.tests.is_empty(), "{}", p.display());
        for t in &suite.tests {
            let v = oracle::verdicts(&t.test);
            assert_eq!(Some(v), t.verdicts, "{}: {}", p.display(), t.name);
            assert!(q.accepts(&v), "{}: {}", p.display(), t.name);
            assert!(synth::check(
                &t.test,
                &Config::new(t.test.num_threads(), t.test.num_instrs())
            )
            .is_ok());
            n += 1;
        }
    }
    assert!(n > 0);
}
