//! Enumeration speed: `cargo bench -p synth --bench enumerate`.
//!
//! Without arguments: the five published configurations (2t2i, 2t3i, 2t4i,
//! 3t3i, 3t4i; L = 2, V = 2) completely enumerated with the default engine,
//! each timed, and the total (the target is under 3 s on 2 cores).
//! `-- frontier [sat|explicit]...`: the larger configurations 4t4i, 2t5i,
//! 3t5i, 4t5i with the given engines (both by default), checking that the
//! engines agree. `-- <N>t<M>i ...` picks configurations.

use std::time::Instant;
use synth::{default_engine, enumerate_with, new_progress, Config, Engine};

fn parse_config(s: &str) -> Option<Config> {
    let (n, m) = s.strip_suffix('i')?.split_once('t')?;
    Some(Config::new(n.parse().ok()?, m.parse().ok()?))
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let frontier = args.iter().any(|a| a == "frontier");
    let mut engines: Vec<Engine> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let mut configs: Vec<Config> = args.iter().filter_map(|a| parse_config(a)).collect();
    if configs.is_empty() {
        let names: &[&str] = if frontier {
            &["4t4i", "2t5i", "3t5i", "4t5i"]
        } else {
            &["2t2i", "2t3i", "2t4i", "3t3i", "3t4i"]
        };
        configs = names.iter().map(|n| parse_config(n).unwrap()).collect();
    }
    let default_only = engines.is_empty() && !frontier;
    if engines.is_empty() {
        engines = vec![Engine::Explicit, Engine::Sat];
    }
    println!("config  engine    tests     seconds");
    let mut total = 0.0;
    for cfg in &configs {
        let mut first: Option<Vec<progress_litmus::Test>> = None;
        let run: Vec<Engine> = if default_only {
            vec![default_engine(cfg)]
        } else {
            engines.clone()
        };
        for &engine in &run {
            let t0 = Instant::now();
            let tests =
                enumerate_with(cfg, engine, None, &new_progress(cfg, engine, None)).unwrap();
            let secs = t0.elapsed().as_secs_f64();
            total += secs;
            println!(
                "{:<7} {:<9} {:>7} {:>11.3}",
                cfg.name(),
                engine.name(),
                tests.len(),
                secs
            );
            match &first {
                Some(f) => assert_eq!(f, &tests, "{}: engines disagree", cfg.name()),
                None => first = Some(tests),
            }
        }
    }
    println!(
        "total {total:.3} s on {} threads",
        rayon::current_num_threads()
    );
}
