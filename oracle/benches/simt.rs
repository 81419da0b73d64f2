//! Benchmark: the SIMT-Step base tests (suites/simt, issue 22) under the
//! four SIMT-Step direct models (subgroup=cm, sm, scf, sso) and two of our
//! subgroup scopes (lockstep, fair), beside the TLA+ times of the paper's Table 3.
//!
//! `cargo bench -p oracle --bench simt` prints, per test and scope, the
//! states of the product and the time to compute every reachable final
//! state with a witness schedule and answer both assertions (median of
//! repeated runs), then the paper's TLA+ (TLC, 20 threads on an i9-13900H)
//! figures for the same test pairs. Memory is sequentially consistent.

use oracle::kernel::outcomes::outcomes;
use progress_litmus::kernel::{litmus, ScopedModel};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The paper's Table 3: per direct model, its test pair and the TLA+ states
/// and time of the relaxed witness and of the strong verification.
const TABLE3: &str = "\
paper, Table 3 (TLA+/TLC): model  test pair               witness states, s   verification states, s
                           CM     (NA, Fig. 2)            NA                  5065, 1
                           SM     (Fig. 2, Fig. 1)        3796, 1             203, 1
                           SCF    (Fig. 1, Fig. 9 no sg)  211, 1              227, 1
                           SSO    (Fig. 9 no sg, 9 sg)    308, 1              233, 1
(times as the table gives them, in seconds; the text: every test under one second)";

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../suites/simt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("suites/simt")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
        .collect();
    files.sort();
    let runs = 9;
    let scopes = ["cm", "sm", "scf", "sso", "lockstep", "fair"];
    println!(
        "{:<22} {:<10} {:>8} {:>7} {:>9}",
        "test", "subgroup", "states", "finals", "ms"
    );
    let mut total = Duration::ZERO;
    for f in &files {
        let name = f.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
        let p = litmus::parse(&std::fs::read_to_string(f).expect("a test")).expect("valid");
        for scope in scopes {
            let m = ScopedModel::parse(&format!("WEAK_FAIR, subgroup={scope}")).expect("a model");
            let mut times = Vec::new();
            let mut shape = (0, 0);
            for _ in 0..runs {
                let t0 = Instant::now();
                let o = outcomes(&p, &m, 10_000_000).expect("outcomes");
                for a in &p.asserts {
                    std::hint::black_box(o.holds(a, &p).expect("an answer"));
                }
                times.push(t0.elapsed());
                shape = (o.states, o.finals.len());
            }
            let t = median(times);
            total += t;
            println!(
                "{name:<22} {scope:<10} {:>8} {:>7} {:>9.3}",
                shape.0,
                shape.1,
                t.as_secs_f64() * 1e3
            );
        }
    }
    println!(
        "total: {} tests x {} scopes in {:.1} ms\n\n{TABLE3}",
        files.len(),
        scopes.len(),
        total.as_secs_f64() * 1e3
    );
}
