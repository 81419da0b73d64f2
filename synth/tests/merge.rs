//! `synth merge` trusts nothing in its shards (issue 20 item 5): every
//! shard records its run's configuration, its test count and a checksum
//! in its note, and every merged test is checked against the run (shape,
//! the shard's pieces, SPEC §4 under the run's options). Each reproducer
//! is a shard edited after `synth --shard` wrote it; some edits recompute
//! the record (a forgery), which only the checks of the tests can catch.

use progress_litmus::axb::suite::Suite;
use std::path::Path;
use std::process::Command;
use synth::{Config, Shard};

mod common;
use common::{scratch, stderr, synth};

/// Writes shards 1/2 and 2/2 of `-t t -i i` (plus `extra` options) as
/// `p1.ron`, `p2.ron` and returns them.
fn two_shards(dir: &Path, t: &str, i: &str, extra: &[&str]) -> (Suite, Suite) {
    let load = |p: &str| match progress_litmus::axb::load::load_document(&dir.join(p)).unwrap() {
        progress_litmus::axb::load::Document::Suite(s) => s,
        _ => unreachable!(),
    };
    for k in 1..=2 {
        let mut args = vec!["-t", t, "-i", i, "--shard"];
        let shard = format!("{k}/2");
        let out = format!("p{k}.ron");
        args.extend([shard.as_str(), "-o", out.as_str()]);
        args.extend(extra);
        let o = synth(dir, &args);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    (load("p1.ron"), load("p2.ron"))
}

/// Merges `p1` (as written to `file`) with the genuine shard 2: exit 2,
/// the error containing `want`, no output.
fn refused(dir: &Path, file: &str, want: &str) {
    let o = synth(dir, &["merge", file, "p2.ron", "-o", "m.axb.gz"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{want}: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(want), "want `{want}`: {err}");
    assert!(!dir.join("m.axb.gz").exists());
}

/// `suite` with its note recomputed for its tests, as a forger would.
fn forged(mut suite: Suite, cfg: &Config) -> Suite {
    let base = synth::enumerate::output::describe(cfg);
    suite.note =
        synth::enumerate::shard::note(&base, cfg, Some(Shard { index: 1, count: 2 }), &suite.tests);
    suite
}

#[test]
fn a_test_of_another_configuration_is_refused() {
    let dir = scratch("config");
    let (p1, _) = two_shards(&dir, "2", "3", &[]);
    let cfg = Config::new(2, 3);
    // The reproducer: a 4-instruction test inside a 2t3i shard.
    let four = progress_litmus::axb::text::parse(
        "THREAD0\natomic_chk_branch(1,0,0)\natomic_exch_branch(0,1,0,1)\nTHREAD1\natomic_store(1,1)\natomic_store(0,1)\n",
    )
    .unwrap();
    // In place of a test (the count unchanged), and added with the record
    // recomputed.
    let mut replaced = p1.clone();
    replaced.tests[1].test = four.clone();
    let mut added = p1;
    added
        .tests
        .push(progress_litmus::axb::suite::Entry::new("2t3i_999", four));
    for (file, suite, name) in [
        ("bad.ron", replaced, "2t3i_1"),
        ("forged.ron", forged(added, &cfg), "2t3i_999"),
    ] {
        std::fs::write(
            dir.join(file),
            progress_litmus::axb::load::suite_to_ron(&suite),
        )
        .unwrap();
        refused(
            &dir,
            file,
            &format!("{file}: test `{name}`: not a test of 2t3i: 4 instructions, not 3"),
        );
    }
}

#[test]
fn a_packed_shard_with_a_line_deleted_or_changed_is_refused() {
    let dir = scratch("deleted");
    let (p1, _) = two_shards(&dir, "2", "3", &[]);
    let n = p1.tests.len();
    let mut cut = p1.clone();
    cut.tests.remove(n / 2);
    std::fs::write(
        dir.join("cut.axb.gz"),
        progress_litmus::axb::packed::suite_to_packed(&cut),
    )
    .unwrap();
    refused(
        &dir,
        "cut.axb.gz",
        &format!(
            "cut.axb.gz: {} tests, but shard 1/2 recorded {n} when it was written",
            n - 1
        ),
    );
    let mut grown = p1.clone();
    grown.tests.push(grown.tests[0].clone());
    grown.tests[n].name = "2t3i_999".into();
    std::fs::write(
        dir.join("grown.axb.gz"),
        progress_litmus::axb::packed::suite_to_packed(&grown),
    )
    .unwrap();
    refused(
        &dir,
        "grown.axb.gz",
        &format!("grown.axb.gz: more than the {n} tests shard 1/2 recorded"),
    );
    let mut renamed = p1.clone();
    renamed.tests[n - 1].name = "2t3i_99999".into();
    std::fs::write(
        dir.join("renamed.axb.gz"),
        progress_litmus::axb::packed::suite_to_packed(&renamed),
    )
    .unwrap();
    refused(&dir, "renamed.axb.gz", "renamed.axb.gz: checksum mismatch");
    // The genuine shard, packed, merges.
    std::fs::write(
        dir.join("p1.axb.gz"),
        progress_litmus::axb::packed::suite_to_packed(&p1),
    )
    .unwrap();
    let o = synth(&dir, &["merge", "p1.axb.gz", "p2.ron", "-o", "m.axb.gz"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_test_of_the_other_shard_or_outside_the_options_is_refused() {
    let dir = scratch("forged");
    let (p1, p2) = two_shards(&dir, "2", "3", &[]);
    let cfg = Config::new(2, 3);
    // A test of shard 2 copied into shard 1, in order, record recomputed.
    let mut moved = p1.clone();
    moved.tests.push(p2.tests[0].clone());
    moved.tests.sort_by(|a, b| a.test.cmp(&b.test));
    for (k, e) in moved.tests.iter_mut().enumerate() {
        e.name = format!("2t3i_{k}");
    }
    std::fs::write(
        dir.join("moved.ron"),
        progress_litmus::axb::load::suite_to_ron(&forged(moved, &cfg)),
    )
    .unwrap();
    refused(&dir, "moved.ron", "a test of shard 2/2, not of shard 1/2");
    // Shards of a run with --max-states 4: a test of the unbounded run
    // (more states) is not one of its tests.
    let dir = scratch("options");
    let (p1, _) = two_shards(&dir, "2", "3", &["--max-states", "4"]);
    let bounded = Config {
        max_states: Some(4),
        ..Config::new(2, 3)
    };
    let all = synth::enumerate(&Config::new(2, 3)).unwrap();
    let mine = synth::enumerate::shard::owned(&bounded, Some(Shard { index: 1, count: 2 }));
    let extra = all
        .into_iter()
        .find(|t| mine.iter().any(|(_, u)| u.contains(t)) && !p1.tests.iter().any(|e| e.test == *t))
        .expect("a test of shard 1 over the bound");
    let mut over = p1.clone();
    over.tests
        .push(progress_litmus::axb::suite::Entry::new("x", extra));
    over.tests.sort_by(|a, b| a.test.cmp(&b.test));
    for (k, e) in over.tests.iter_mut().enumerate() {
        e.name = format!("2t3i_{k}");
    }
    std::fs::write(
        dir.join("over.ron"),
        progress_litmus::axb::load::suite_to_ron(&forged(over, &bounded)),
    )
    .unwrap();
    refused(&dir, "over.ron", "not a test of this run");
}

#[test]
fn a_shard_without_its_record_is_refused() {
    let dir = scratch("old");
    let (mut p1, _) = two_shards(&dir, "2", "3", &[]);
    // The note of shards written before the record existed.
    p1.note = format!(
        "{}; shard 1/2",
        synth::enumerate::output::describe(&Config::new(2, 3))
    );
    std::fs::write(
        dir.join("old.ron"),
        progress_litmus::axb::load::suite_to_ron(&p1),
    )
    .unwrap();
    refused(
        &dir,
        "old.ron",
        "old.ron: shard 1/2 records no configuration, test count or checksum (written by an older synth): run the shard again",
    );
}

/// A shard that is not a regular file (a FIFO would block the merge for
/// ever) is refused before it is opened.
#[test]
fn a_shard_that_is_a_fifo_is_refused() {
    let dir = scratch("fifo");
    two_shards(&dir, "2", "3", &[]);
    let st = Command::new("mkfifo")
        .arg(dir.join("p1.axb.gz"))
        .status()
        .unwrap();
    assert!(st.success());
    refused(&dir, "p1.axb.gz", "p1.axb.gz: a FIFO");
}
