//! Idiom recognition by bisimilarity of the thread-labelled state space.

use progress_litmus::axb::load::load_all;
use progress_litmus::axb::space::program_space;
use progress_litmus::axb::test::Test;
use progress_litmus::axb::text;
use std::collections::BTreeMap;
use std::path::PathBuf;
use synth::idioms::{behaviour, bisimilar, catalogue, swap_threads, Recogniser};

fn parse(src: &str) -> Test {
    text::parse(src).unwrap()
}

fn published() -> BTreeMap<String, Test> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests");
    let (tests, errors) = load_all(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(tests.len(), 483);
    tests.into_iter().map(|t| (t.name, t.entry.test)).collect()
}

#[test]
fn reference_programs_have_the_paper_state_space_sizes() {
    // Table 3 counts states and actions of the program space (termination
    // folded into the last step); the references are minimal, so the
    // quotient has as many states as the space itself.
    let sizes: BTreeMap<&str, (usize, usize)> = [
        ("prodcons-increasing", (3, 3)),
        ("prodcons-decreasing", (3, 3)),
        ("prodcons-bidirectional", (5, 7)),
        ("mutex-simplified", (6, 7)),
        ("mutex-exchange", (8, 10)),
    ]
    .into_iter()
    .collect();
    for idiom in catalogue() {
        let lts = program_space(&idiom.reference);
        if let Some(&(states, actions)) = sizes.get(idiom.tag) {
            assert_eq!(
                (lts.num_states(), lts.num_transitions()),
                (states, actions),
                "{}",
                idiom.tag
            );
            assert_eq!(behaviour(&idiom.reference).num_states(), states);
        }
    }
}

#[test]
fn bisimilarity_ignores_text_but_not_thread_ids() {
    // Spinning on an exchange that writes back what it reads is the same
    // behaviour as spinning on a load.
    let load = parse("THREAD0\natomic_store(0,1)\nTHREAD1\natomic_chk_branch(0,0,0)\n");
    let exch = parse("THREAD0\natomic_store(0,1)\nTHREAD1\natomic_exch_branch(0,0,0,0)\n");
    let other_loc = parse("THREAD0\natomic_store(1,1)\nTHREAD1\natomic_chk_branch(1,0,0)\n");
    assert_ne!(load, exch);
    assert!(bisimilar(&load, &exch));
    assert!(bisimilar(&load, &other_loc));
    // Swapping the threads turns increasing into decreasing id.
    assert!(!bisimilar(&load, &swap_threads(&load)));
    // A spin loop unrolled twice (each copy exits as soon as the flag is
    // up) has a bigger space but the same behaviour.
    let unrolled = parse(
        "THREAD0\natomic_store(0,1)\nTHREAD1\natomic_chk_branch(0,1,END)\natomic_chk_branch(0,0,0)\n",
    );
    assert!(program_space(&unrolled).num_states() > program_space(&load).num_states());
    assert!(bisimilar(&load, &unrolled));
    // A producer that stores a value the consumer does not wait for is not
    // the same: the consumer never leaves.
    let wrong = parse("THREAD0\natomic_store(0,0)\nTHREAD1\natomic_chk_branch(0,0,0)\n");
    assert!(!bisimilar(&load, &wrong));
}

#[test]
fn every_reference_is_recognised_as_itself_only() {
    let r = Recogniser::default();
    for idiom in catalogue() {
        assert_eq!(r.tags(&idiom.reference), vec![idiom.tag.to_string()]);
    }
    // Swapping the exchange-lock mutex gives the same program: no variant.
    assert!(!r.all_tags().contains(&"mutex-exchange-swapped".to_string()));
    assert!(r
        .all_tags()
        .contains(&"prodcons-bidirectional-swapped".to_string()));
    // Three-thread tests are never two-thread idioms.
    let three = parse("THREAD0\natomic_store(0,1)\nTHREAD1\natomic_chk_branch(0,0,0)\nTHREAD2\natomic_chk_branch(0,0,0)\n");
    assert!(r.tags(&three).is_empty());
}

#[test]
fn published_idioms_are_where_table_3_says() {
    // Table 3 gives the synthesis-run ids, which are the published names,
    // for four idioms.
    let tests = published();
    let r = Recogniser::default();
    let tags_of = |name: &str| r.tags(&tests[name]);
    assert_eq!(tags_of("2t2i_5"), ["prodcons-increasing"]);
    assert_eq!(tags_of("2t2i_4"), ["prodcons-decreasing"]);
    assert_eq!(tags_of("2t2i_0"), ["dining-simplified"]);
    // The published test has the threads of Fig. 8 the other way round.
    assert_eq!(tags_of("2t4i_64"), ["prodcons-bidirectional-swapped"]);
    // The paper could not find the exchange-lock mutex (§5.5).
    assert!(tests
        .values()
        .all(|t| !r.tags(t).contains(&"mutex-exchange".to_string())));
}
