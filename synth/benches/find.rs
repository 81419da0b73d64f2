//! Targeted synthesis speed: `cargo bench -p synth --bench find`.
//!
//! Without arguments: a few queries in the published configurations, each
//! searched for every answer (`--limit all`) and for one, timed, with the
//! candidates the oracle labelled (the pruning: compare with the number of
//! tests of the configuration). `-- 3t5i`: the same queries in 3t5i, one
//! answer each (a configuration past the committed suites whose thin
//! strong queries take tens of seconds on a shared 2-core machine: the
//! representative of the 6-instruction frontier).
//! `-- frontier`: the showcase queries of `suites/found/` in 3t6i and 4t6i,
//! one answer each, with a 300 s bound.
//!
//! Besides wall-clock seconds each line gives the CPU seconds of the whole
//! process over the search (all threads; Linux only, else `-`), which a
//! loaded machine disturbs less.

use std::time::{Duration, Instant};
use synth::find::{find, Options, Query};
use synth::Config;

/// CPU seconds used so far by this process (user + system, all threads),
/// from `/proc/self/stat`; `None` where that file is not there.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses): state is
    // field 3, utime 14 and stime 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn main() {
    let arg = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let frontier = arg.as_deref() == Some("frontier");
    let queries: &[(&str, &str)] = &[
        ("OBE_STRONG", "HSA_STRONG,WEAK_FAIR"),
        ("LOBE", "HSA_OBE"),
        ("LOBE_STRONG", "HSA_OBE_STRONG,WEAK_FAIR"),
        ("HSA_OBE_STRONG", "HSA_STRONG,OBE_STRONG"),
    ];
    let (configs, limits): (Vec<Config>, Vec<Option<usize>>) = match arg.as_deref() {
        Some("frontier") => (vec![Config::new(3, 6), Config::new(4, 6)], vec![Some(1)]),
        Some("3t5i") => (vec![Config::new(3, 5)], vec![Some(1)]),
        _ => (
            vec![Config::new(2, 4), Config::new(3, 4)],
            vec![None, Some(1)],
        ),
    };
    println!("config  limit  query                                              found  candidates  seconds  cpu-s");
    for cfg in &configs {
        for &(p, f) in queries {
            let q = Query::parse(p, f).expect("a satisfiable query");
            for &limit in &limits {
                let opts = Options {
                    limit,
                    timeout: frontier.then(|| Duration::from_secs(300)),
                    ..Options::default()
                };
                let (t0, c0) = (Instant::now(), cpu_seconds());
                let r = find(cfg, &q, &opts, None).expect("no journal, no I/O");
                let cpu = match (c0, cpu_seconds()) {
                    (Some(a), Some(b)) => format!("{:.2}", b - a),
                    _ => "-".into(),
                };
                println!(
                    "{:<7} {:<6} {:<50} {:>5}  {:>10}  {:>7.2}  {:>5}{}",
                    cfg.name(),
                    limit.map_or("all".into(), |k| k.to_string()),
                    q.describe(),
                    r.tests.len(),
                    r.candidates,
                    t0.elapsed().as_secs_f64(),
                    cpu,
                    if r.complete { "" } else { " (timed out)" }
                );
            }
        }
    }
}
