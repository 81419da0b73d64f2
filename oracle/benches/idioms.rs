//! Benchmark: the idiom library (suites/idioms) under the models its files
//! state verdicts for.
//!
//! `cargo bench -p oracle --bench idioms` prints, per program and model,
//! the states of the product without and with reductions (symmetry and
//! local steps first) and the time to decide both fairness strengths from
//! one product (median of repeated runs), then the totals. Memory is
//! sequentially consistent throughout.

use oracle::kernel::product::Reductions;
use oracle::kernel::{decide_both, Options};
use progress_litmus::kernel::load::{load_all, Item};
use progress_litmus::kernel::ScopedModel;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms");
    let (items, errors) = load_all(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let runs = 9;
    println!(
        "{:<28} {:<40} {:>9} {:>9} {:>10} {:>10}",
        "program", "model (weak and strong)", "states", "reduced", "ms", "ms reduced"
    );
    let (mut total_full, mut total_red) = (Duration::ZERO, Duration::ZERO);
    let (mut states_full, mut states_red) = (0usize, 0usize);
    let mut rows = 0;
    for item in items {
        let Item::Kernel(p) = item else { continue };
        // One product decides a model's weak and strong variants.
        let mut models: BTreeSet<String> = BTreeSet::new();
        let mut list: Vec<ScopedModel> = Vec::new();
        for e in &p.program.expect {
            let mut m = e.model;
            m.fairness = progress_litmus::Fairness::Weak;
            if models.insert(m.to_string()) {
                list.push(m);
            }
        }
        for m in list {
            let time = |reductions| {
                let opts = Options {
                    max_states: 10_000_000,
                    reductions,
                };
                let mut times = Vec::new();
                let mut states = 0;
                for _ in 0..runs {
                    let t0 = Instant::now();
                    let (w, _) = decide_both(&p.program, &m, opts).expect("a verdict");
                    times.push(t0.elapsed());
                    states = w.states;
                }
                (states, median(times))
            };
            let (sf, tf) = time(Reductions::NONE);
            let (sr, tr) = time(Reductions::ALL);
            println!(
                "{:<28} {:<40} {:>9} {:>9} {:>10.3} {:>10.3}",
                p.name,
                m.to_string(),
                sf,
                sr,
                tf.as_secs_f64() * 1e3,
                tr.as_secs_f64() * 1e3
            );
            total_full += tf;
            total_red += tr;
            states_full += sf;
            states_red += sr;
            rows += 1;
        }
    }
    println!(
        "total: {rows} program/model pairs, {states_full} states ({:.1} ms) without reductions, {states_red} states ({:.1} ms) with; median of {runs} runs each, one thread",
        total_full.as_secs_f64() * 1e3,
        total_red.as_secs_f64() * 1e3
    );
    scaled();
}

/// Larger launches of some idioms: how far the reductions carry.
fn scaled() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms");
    let read = |name: &str| std::fs::read_to_string(dir.join(format!("{name}.litmus"))).unwrap();
    // (name, idiom, replacements)
    let variants: Vec<(&str, String)> = vec![
        (
            "ticket-lock x4",
            read("ticket-lock")
                .replace("workgroups 3;", "workgroups 4;")
                .replace("values 4;", "values 8;"),
        ),
        (
            "ticket-lock x5",
            read("ticket-lock")
                .replace("workgroups 3;", "workgroups 5;")
                .replace("values 4;", "values 8;"),
        ),
        (
            "discovery-barrier x4",
            read("discovery-barrier")
                .replace("workgroups 3;", "workgroups 4;")
                .replace("values 4;", "values 8;"),
        ),
        (
            "discovery-barrier x5",
            read("discovery-barrier")
                .replace("workgroups 3;", "workgroups 5;")
                .replace("values 4;", "values 8;"),
        ),
        (
            "decoupled-lookback x5",
            read("decoupled-lookback")
                .replace("workgroups 3;", "workgroups 5;")
                .replace("values 4;", "values 8;")
                .replace("flag[3]", "flag[5]"),
        ),
        (
            "decoupled-lookback-parallel x3",
            read("decoupled-lookback-parallel")
                .replace("workgroups 2;", "workgroups 3;")
                .replace("values 4;", "values 8;")
                .replace("flag[4]", "flag[6]"),
        ),
        (
            "mp-wg_obe-t_obe x3",
            read("mp-wg_obe-t_obe").replace("workgroups 2;", "workgroups 3;"),
        ),
    ];
    println!();
    println!(
        "{:<32} {:<8} {:>10} {:>9} {:>10} {:>10}",
        "scaled program", "model", "states", "reduced", "s", "s reduced"
    );
    for (name, src) in variants {
        // Drop the stated verdicts: they are about the original launch.
        let src: String = src
            .lines()
            .filter(|l| !l.starts_with("expect"))
            .map(|l| format!("{l}\n"))
            .collect();
        let p = progress_litmus::kernel::litmus::parse(&src).expect("a scaled idiom parses");
        for model in ["OBE", "WEAK_FAIR"] {
            let m = ScopedModel::parse(model).unwrap();
            let run = |reductions, max_states| {
                let t0 = Instant::now();
                let r = decide_both(
                    &p,
                    &m,
                    Options {
                        max_states,
                        reductions,
                    },
                );
                (r.map(|(w, _)| w.states), t0.elapsed())
            };
            let (full, tf) = run(Reductions::NONE, 3_000_000);
            let (red, tr) = run(Reductions::ALL, 10_000_000);
            let cell = |r: Result<usize, _>| match r {
                Ok(n) => n.to_string(),
                Err(_) => ">3000000".to_string(),
            };
            println!(
                "{:<32} {:<8} {:>10} {:>9} {:>10.3} {:>10.3}",
                name,
                model,
                cell(full),
                cell(red),
                tf.as_secs_f64(),
                tr.as_secs_f64()
            );
        }
    }
}
