//! The synth journal reader under mutated input (issue 10, item 10): a
//! journal of a real run, with bytes flipped, inserted or removed, lines
//! repeated or cut. Reading it back must never panic, and a journal it
//! accepts must never change the result: the resumed run writes exactly
//! the tests of an uninterrupted one.

use proptest::prelude::*;
use std::path::PathBuf;
use synth::enumerate::checkpoint::Journal;
use synth::{Config, Engine};

fn cfg() -> Config {
    Config {
        threads: 2,
        instrs: 3,
        locs: 2,
        values: 2,
        max_states: None,
        max_actions: None,
        store_must_change: false,
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("journal-fuzz-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A complete journal of 2t3i (every unit recorded) and the run's tests.
fn complete_journal() -> (Vec<u8>, Vec<progress_litmus::axb::test::Test>) {
    let dir = scratch("clean");
    let path = dir.join("2t3i.journal");
    let cfg = cfg();
    let journal = Journal::create(&path, &cfg, Engine::Explicit, None).unwrap();
    let progress = synth::new_progress(&cfg, Engine::Explicit, None);
    let tests =
        synth::enumerate_resumable(&cfg, Engine::Explicit, None, &progress, &journal).unwrap();
    drop(journal);
    (std::fs::read(&path).unwrap(), tests)
}

#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Truncate(usize),
    RepeatLine(usize),
    DropLine(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(i, b)| Edit::Flip(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<usize>().prop_map(Edit::Remove),
        any::<usize>().prop_map(Edit::Truncate),
        any::<usize>().prop_map(Edit::RepeatLine),
        any::<usize>().prop_map(Edit::DropLine),
    ]
}

fn apply(bytes: &mut Vec<u8>, e: &Edit) {
    let n = bytes.len().max(1);
    match *e {
        Edit::Flip(i, b) if !bytes.is_empty() => bytes[i % n] ^= b,
        Edit::Insert(i, b) => bytes.insert(i % (bytes.len() + 1), b),
        Edit::Remove(i) if !bytes.is_empty() => {
            bytes.remove(i % n);
        }
        Edit::Truncate(i) => bytes.truncate(i % n),
        Edit::RepeatLine(i) | Edit::DropLine(i) => {
            let mut lines: Vec<Vec<u8>> = bytes
                .split_inclusive(|&b| b == b'\n')
                .map(<[u8]>::to_vec)
                .collect();
            if lines.is_empty() {
                return;
            }
            let k = i % lines.len();
            if matches!(e, Edit::RepeatLine(_)) {
                let l = lines[k].clone();
                lines.insert(k, l);
            } else {
                lines.remove(k);
            }
            *bytes = lines.concat();
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn a_mutated_journal_is_refused_or_gives_the_same_tests(
        edits in proptest::collection::vec(edit(), 1..4)
    ) {
        thread_local! {
            static CLEAN: (Vec<u8>, Vec<progress_litmus::axb::test::Test>) = complete_journal();
        }
        let (mut bytes, want) = CLEAN.with(|c| c.clone());
        for e in &edits {
            apply(&mut bytes, e);
        }
        let dir = scratch(&format!("case-{}", std::process::id()));
        let path = dir.join("2t3i.journal");
        std::fs::write(&path, &bytes).unwrap();
        let cfg = cfg();
        // Refusing is fine (one error message); a panic fails the test.
        if let Ok(journal) = Journal::resume(&path, &cfg, Engine::Explicit, None) {
            let progress = synth::new_progress(&cfg, Engine::Explicit, None);
            let got = synth::enumerate_resumable(&cfg, Engine::Explicit, None, &progress, &journal)
                .unwrap();
            prop_assert_eq!(got, want);
        }
    }
}
