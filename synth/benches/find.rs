//! Targeted synthesis speed: `cargo bench -p synth --bench find`.
//!
//! Without arguments: a few queries in the published configurations, each
//! searched for every answer (`--limit all`) and for one, timed, with the
//! candidates the oracle labelled (the pruning: compare with the number of
//! tests of the configuration). `-- frontier`: the showcase queries of
//! `suites/found/` in 3t6i and 4t6i, one answer each, with a 300 s bound.

use std::time::{Duration, Instant};
use synth::find::{find, Options, Query};
use synth::Config;

fn main() {
    let frontier = std::env::args().skip(1).any(|a| a == "frontier");
    let queries: &[(&str, &str)] = &[
        ("OBE_STRONG", "HSA_STRONG,WEAK_FAIR"),
        ("LOBE", "HSA_OBE"),
        ("LOBE_STRONG", "HSA_OBE_STRONG,WEAK_FAIR"),
        ("HSA_OBE_STRONG", "HSA_STRONG,OBE_STRONG"),
    ];
    let (configs, limits): (Vec<Config>, Vec<Option<usize>>) = if frontier {
        (vec![Config::new(3, 6), Config::new(4, 6)], vec![Some(1)])
    } else {
        (
            vec![Config::new(2, 4), Config::new(3, 4)],
            vec![None, Some(1)],
        )
    };
    println!("config  limit  query                                              found  candidates  seconds");
    for cfg in &configs {
        for &(p, f) in queries {
            let q = Query::parse(p, f).expect("a satisfiable query");
            for &limit in &limits {
                let opts = Options {
                    limit,
                    timeout: frontier.then(|| Duration::from_secs(300)),
                    ..Options::default()
                };
                let t0 = Instant::now();
                let r = find(cfg, &q, &opts, None).expect("no journal, no I/O");
                println!(
                    "{:<7} {:<6} {:<50} {:>5}  {:>10}  {:>7.2}{}",
                    cfg.name(),
                    limit.map_or("all".into(), |k| k.to_string()),
                    q.describe(),
                    r.tests.len(),
                    r.candidates,
                    t0.elapsed().as_secs_f64(),
                    if r.complete { "" } else { " (timed out)" }
                );
            }
        }
    }
}
