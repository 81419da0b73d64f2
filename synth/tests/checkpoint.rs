//! Resumable enumeration: an interrupted run continued from its journal
//! gives exactly the uninterrupted result, and bad journals are errors.

#[path = "../../tests/support/scratch.rs"]
#[allow(dead_code)]
mod scratch;
use scratch::Scratch;

use synth::enumerate::checkpoint::{journal_path, Journal};
use synth::{Config, Engine};

/// A scratch folder and the journal path of an output in it.
fn scratch(name: &str) -> (Scratch, std::path::PathBuf) {
    let d = Scratch::new("synth-ckpt", name);
    let path = journal_path(&d.join("out.ron"));
    (d, path)
}

fn run(cfg: &Config, j: &Journal) -> Vec<progress_litmus::Test> {
    let progress = synth::new_progress(cfg, Engine::Explicit, None);
    synth::enumerate_resumable(cfg, Engine::Explicit, None, &progress, j).unwrap()
}

#[test]
fn an_interrupted_run_resumes_to_the_same_tests() {
    let cfg = Config::new(3, 4);
    let (_dir, path) = scratch("resume");
    let full = run(
        &cfg,
        &Journal::create(&path, &cfg, Engine::Explicit, None).unwrap(),
    );
    assert_eq!(full, synth::enumerate(&cfg).unwrap());
    let units = synth::shard_units(&cfg, None).len();
    // Keep the header and three units, then a line cut short by a kill.
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + units);
    let torn = &lines[4][..lines[4].len() / 2];
    std::fs::write(&path, format!("{}\n{torn}", lines[..4].join("\n"))).unwrap();

    let j = Journal::resume(&path, &cfg, Engine::Explicit, None).unwrap();
    assert_eq!(j.units_done(), 3);
    assert_eq!(run(&cfg, &j), full);
    drop(j);
    // Every unit is now recorded exactly once (resume would reject a repeat).
    let j = Journal::resume(&path, &cfg, Engine::Explicit, None).unwrap();
    assert_eq!(j.units_done(), units);
    j.finish().unwrap();
    assert!(!path.exists());
}

#[test]
fn bad_journals_are_errors_naming_file_and_line() {
    let cfg = Config::new(2, 3);
    let (_dir, path) = scratch("bad");
    run(
        &cfg,
        &Journal::create(&path, &cfg, Engine::Explicit, None).unwrap(),
    );

    // An existing journal is not silently overwritten.
    let e = Journal::create(&path, &cfg, Engine::Explicit, None)
        .err()
        .unwrap();
    assert!(e.contains("--resume"), "{e}");
    // Another configuration or engine.
    let e = Journal::resume(&path, &Config::new(2, 4), Engine::Explicit, None)
        .err()
        .unwrap();
    assert!(e.contains("another run"), "{e}");
    let e = Journal::resume(&path, &cfg, Engine::Sat, None)
        .err()
        .unwrap();
    assert!(e.contains("another run"), "{e}");
    // A corrupt complete line.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines[2] = "{\"unit\": oops}".into();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let e = Journal::resume(&path, &cfg, Engine::Explicit, None)
        .err()
        .unwrap();
    assert!(e.contains(":3: corrupt journal line"), "{e}");
}
