//! The SAT and explicit engines compute the same sets.

use progress_litmus::axb::test::Test;
use synth::{enumerate_with, new_progress, Config, Engine, Shard};

fn run(cfg: &Config, engine: Engine, shard: Option<Shard>) -> Vec<Test> {
    enumerate_with(cfg, engine, shard, &new_progress(cfg, engine, shard)).unwrap()
}

fn agree(cfg: &Config, shard: Option<Shard>) -> usize {
    let explicit = run(cfg, Engine::Explicit, shard);
    let sat = run(cfg, Engine::Sat, shard);
    assert_eq!(sat, explicit, "{cfg:?} shard {shard:?}");
    explicit.len()
}

/// Every configuration of at most 3 instructions, and 4t4i, in full.
#[test]
fn engines_agree_up_to_3_instructions_and_4t4i() {
    let mut counts = Vec::new();
    for instrs in 1..=3 {
        for threads in 1..=instrs {
            counts.push((threads, instrs, agree(&Config::new(threads, instrs), None)));
        }
    }
    counts.push((4, 4, agree(&Config::new(4, 4), None)));
    counts.push((1, 4, agree(&Config::new(1, 4), None)));
    assert_eq!(
        counts,
        vec![
            (1, 1, 0),
            (1, 2, 0),
            (2, 2, 8),
            (1, 3, 0),
            (2, 3, 176),
            (3, 3, 60),
            (4, 4, 484),
            (1, 4, 0)
        ]
    );
}

/// 2t4i and 3t4i are too slow for the SAT engine in debug builds; one shard
/// of each runs always, the whole in release (`cargo test --release`).
#[test]
fn engines_agree_on_a_shard_of_2t4i_and_3t4i() {
    let shard = Some(Shard {
        index: 3,
        count: 16,
    });
    assert!(agree(&Config::new(2, 4), shard) > 0);
    assert!(agree(&Config::new(3, 4), shard) > 0);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "SAT enumeration of 11k tests; run with --release"
)]
fn engines_agree_on_2t4i_and_3t4i() {
    assert_eq!(agree(&Config::new(2, 4), None), 6946);
    assert_eq!(agree(&Config::new(3, 4), None), 4260);
}

/// The optional clauses and other ranges go through the same encodings.
#[test]
fn engines_agree_with_bounds_and_options() {
    let mut cfgs = Vec::new();
    for (n, m) in [(2, 2), (2, 3), (3, 3)] {
        cfgs.push(Config::new(n, m).with_table2_bounds().unwrap());
        let mut c = Config::new(n, m);
        c.store_must_change = true;
        cfgs.push(c);
        let mut c = Config::new(n, m);
        c.max_states = Some(5);
        c.max_actions = Some(7);
        cfgs.push(c);
        let mut c = Config::new(n, m);
        c.locs = 3;
        cfgs.push(c);
        let mut c = Config::new(n, m);
        c.locs = 1;
        c.values = 3;
        cfgs.push(c);
    }
    for c in &cfgs {
        agree(c, None);
    }
    let bounded = Config::new(2, 4).with_table2_bounds().unwrap();
    agree(
        &bounded,
        Some(Shard {
            index: 5,
            count: 16,
        }),
    );
}

/// Shards partition the output.
#[test]
fn shards_partition_the_output() {
    let cfg = Config::new(2, 4);
    let whole = run(&cfg, Engine::Explicit, None);
    let mut parts: Vec<Test> = (1..=5)
        .flat_map(|k| run(&cfg, Engine::Explicit, Some(Shard { index: k, count: 5 })))
        .collect();
    parts.sort();
    assert_eq!(parts, whole);
}
