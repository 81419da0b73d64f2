//! The complete enumeration against the published OOPSLA'21 suite.

mod common;

use progress_litmus::axb::test::Test;
use std::collections::BTreeSet;
use synth::enumerate::canon::{canonical, duplicate_groups};
use synth::{enumerate, Config, Violation};

fn config(name: &str) -> Config {
    let (n, m) = name.trim_end_matches('i').split_once('t').unwrap();
    Config::new(n.parse().unwrap(), m.parse().unwrap())
}

fn published_set(name: &str) -> BTreeSet<Test> {
    common::published(name)
        .iter()
        .map(|(_, t)| canonical(t))
        .collect()
}

fn ours(cfg: &Config) -> BTreeSet<Test> {
    enumerate(cfg).unwrap().into_iter().collect()
}

#[test]
fn complete_2t2i_and_2t3i_are_exactly_the_published_tests() {
    for name in ["2t2i", "2t3i"] {
        let published = published_set(name);
        assert_eq!(
            published.len(),
            common::published(name).len(),
            "{name}: no duplicates"
        );
        assert_eq!(ours(&config(name)), published, "{name}");
    }
    assert_eq!(ours(&config("2t2i")).len(), 8);
    assert_eq!(ours(&config("2t3i")).len(), 176);
}

/// Published tests missing from our output under `cfg`, by name.
fn missing(name: &str, cfg: &Config) -> Vec<String> {
    let got = ours(cfg);
    common::published(name)
        .into_iter()
        .filter(|(_, t)| !got.contains(&canonical(t)))
        .map(|(n, _)| n)
        .collect()
}

#[test]
fn every_published_test_is_found() {
    for name in ["2t4i", "3t3i", "3t4i"] {
        assert_eq!(missing(name, &config(name)), Vec::<String>::new(), "{name}");
    }
}

/// With the Table 2 bounds, read as SPEC §4 says (states = reachable states,
/// actions = transitions of the program's state space), five published
/// 2t4i tests are out of bounds: they have 16 states and 20 transitions
/// (> 16). Every other published test is found. The Alloy runs must have
/// counted actions differently for those five; this test pins the
/// discrepancy down so that any change to it is noticed.
#[test]
fn every_published_test_within_the_table2_bounds_is_found() {
    let over: Vec<String> = (168..=172).map(|k| format!("2t4i_{k}")).collect();
    for name in ["2t4i", "3t3i", "3t4i"] {
        let cfg = config(name).with_table2_bounds().unwrap();
        let expected = if name == "2t4i" { over.clone() } else { vec![] };
        assert_eq!(missing(name, &cfg), expected, "{name}");
    }
    for (n, t) in common::published("2t4i") {
        let lts = progress_litmus::axb::space::program_space(&t);
        if over.contains(&n) {
            assert_eq!((lts.num_states(), lts.num_transitions()), (16, 20), "{n}");
            let cfg = config("2t4i").with_table2_bounds().unwrap();
            assert_eq!(
                synth::check(&t, &cfg),
                Err(Violation::TooManyActions),
                "{n}"
            );
        } else {
            assert!(lts.num_transitions() <= 16, "{n}");
        }
    }
}

/// The paper's Fig. 2 exchange-lock mutex, which the Alloy runs missed, is a
/// 2t4i test.
#[test]
fn the_exchange_lock_mutex_is_in_2t4i() {
    let mutex = progress_litmus::axb::text::parse(
        "THREAD0\natomic_exch_branch(0,1,1,0)\natomic_store(0,0)\n\
         THREAD1\natomic_exch_branch(0,1,1,0)\natomic_store(0,0)\n",
    )
    .unwrap();
    assert!(ours(&config("2t4i")).contains(&canonical(&mutex)));
    assert!(!published_set("2t4i").contains(&canonical(&mutex)));
    // It is even within the Table 2 bounds.
    assert!(synth::satisfies(
        &mutex,
        &config("2t4i").with_table2_bounds().unwrap()
    ));
}

/// Published tests that are the same up to location renaming.
#[test]
fn published_duplicates() {
    let pairs = |name: &str| {
        let p = common::published(name);
        duplicate_groups(p.iter().map(|(n, t)| (n.as_str(), t)))
    };
    for name in ["2t2i", "2t3i", "3t3i"] {
        assert!(pairs(name).is_empty(), "{name}");
    }
    let d = pairs("2t4i");
    assert_eq!(d.len(), 14);
    assert!(d.contains(&vec!["2t4i_30".to_string(), "2t4i_75".to_string()]));
    let d = pairs("3t4i");
    assert_eq!(d.len(), 6);
    assert!(d.iter().all(|g| g.len() == 2));
}

/// The stricter store-must-change filter removes exactly the published 2t3i
/// tests that break it (SPEC §4 names 2t3i_14).
#[test]
fn store_must_change_is_stricter() {
    let mut cfg = config("2t3i");
    cfg.store_must_change = true;
    let gone = missing("2t3i", &cfg);
    assert!(gone.contains(&"2t3i_14".to_string()));
    assert_eq!(gone.len(), 14);
    let strict = ours(&cfg);
    assert!(strict.is_subset(&ours(&config("2t3i"))));
}
