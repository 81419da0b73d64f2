//! Benchmark: the kernel checker's speed in states (issue 24 item 1).
//!
//! `cargo bench -p oracle --bench states` decides every program of the idiom
//! library (suites/idioms) and some larger launches under the eleven
//! models (six products a program, with the reductions, as `oracle
//! classify` does), on one thread, and prints per program the states and
//! transitions stored, the time, the states stored per second, the states
//! explored per second (chain states, expanded but not stored, included:
//! docs/KERNEL.md §8.8) and the bytes
//! a stored state took in the largest product (all its tables, and its
//! state table alone: states and index, what SPIN's and LTSmin's figures
//! count); then the idioms' totals.
//! Anchors (issue 24): LTSmin explores about 0.6M states/s a core; SPIN's
//! and LTSmin's compressed tables hold a state in about 8 bytes.
//!
//! The goals of issue 24 item 2 come last: Dat3M's seqlock
//! (benches/data/seqlock.litmus) and a parallel decoupled look-back of 4
//! workgroups of 4 invocations (benches/data/lookback-4x4.litmus), after
//! the look-back at 3 x 3, 4 x 2 and 4 x 3 (docs/KERNEL.md §8.7 has
//! their states with each reduction).
//!
//! `cargo bench -p oracle --bench states -- SECTION...` runs only the named
//! sections (`idioms`, `large`, `goals`). `STATES_BENCH_MAX=N` bounds each
//! product (default 20,000,000 states).
//!
//! Times are the time the thread ran on a core (its CPU-time clock), not
//! the wall clock, so that a shared machine's load does not count; the
//! states/s are per core.

use oracle::kernel::product::Reductions;
use oracle::kernel::stats::Stats;
use oracle::kernel::{flat_verdicts_stats, Options};
use progress_litmus::kernel::load::{load_all, Item};
use progress_litmus::kernel::program::Program;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn max_states() -> usize {
    std::env::var("STATES_BENCH_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000_000)
}

/// The time this thread has run on a core (the thread's CPU-time clock,
/// which the kernel brings up to date when read), or `None` where there
/// is none. States per second per core are states per second of this
/// time: on a shared machine the wall clock also counts the time other
/// processes had the core.
fn cpu_time() -> Option<Duration> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    ok.then(|| Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
}

/// The core time since `cpu0`, or the wall time since `t0` where core
/// time is not known.
fn elapsed(t0: Instant, cpu0: Option<Duration>) -> Duration {
    match (cpu0, cpu_time()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => t0.elapsed(),
    }
}

/// Decides a program `runs` times; the median core time and the cost.
fn measure(p: &Program, runs: usize) -> Result<(Stats, Duration), String> {
    let opts = Options {
        max_states: max_states(),
        reductions: Reductions::ALL,
    };
    let mut times = Vec::new();
    let mut stats = Stats::default();
    for _ in 0..runs {
        let (t0, cpu0) = (Instant::now(), cpu_time());
        let (_, _, s) = flat_verdicts_stats(p, opts).map_err(|e| e.to_string())?;
        times.push(elapsed(t0, cpu0));
        stats = s;
    }
    times.sort();
    Ok((stats, times[times.len() / 2]))
}

fn row(name: &str, r: &Result<(Stats, Duration), String>) {
    match r {
        Ok((s, t)) => println!(
            "{name:<34} {:>10} {:>11} {:>10.3} {:>12.0} {:>12.0} {:>11.1} {:>11.1}",
            s.states,
            s.transitions,
            t.as_secs_f64(),
            s.states as f64 / t.as_secs_f64().max(1e-9),
            (s.states + s.passed) as f64 / t.as_secs_f64().max(1e-9),
            s.bytes_per_state(),
            s.state_bytes_per_state()
        ),
        Err(e) => println!("{name:<34} no verdict: {e}"),
    }
}

fn header(what: &str) {
    println!(
        "{what:<34} {:>10} {:>11} {:>10} {:>12} {:>12} {:>11} {:>11}",
        "states", "transitions", "core s", "states/s", "explored/s", "bytes/state", "table B/st"
    );
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms");
    let sections: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |s: &str| sections.is_empty() || sections.iter().any(|x| x == s);
    if run("idioms") {
        idioms(&dir);
    }
    if run("large") {
        let progs = large(&dir)
            .into_iter()
            .map(|(name, src)| (name, parse(&src)))
            .collect();
        launches("large launch (11 models, one run)", progs);
    }
    if run("goals") {
        let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/data");
        let read = |f: &str| parse(&std::fs::read_to_string(data.join(f)).unwrap());
        let progs = vec![
            ("seqlock (Dat3M) 7wg", read("seqlock.litmus")),
            ("decoupled-lookback 3wg x 3inv", read("lookback-3x3.litmus")),
            ("decoupled-lookback 4wg x 2inv", read("lookback-4x2.litmus")),
            ("decoupled-lookback 4wg x 3inv", read("lookback-4x3.litmus")),
            ("decoupled-lookback 4wg x 4inv", read("lookback-4x4.litmus")),
        ];
        // Real launch sizes, decided by the counted product (§8.10).
        let leader = std::fs::read_to_string(data.join("ticket-lock-leader.litmus")).unwrap();
        let sized = |w: u32, n: u32| {
            parse(
                &leader
                    .replace("workgroups 3;", &format!("workgroups {w};"))
                    .replace("workgroup_size 2;", &format!("workgroup_size {n};")),
            )
        };
        let mut progs = progs;
        progs.push(("ticket lock, one leader, 4wg x 64inv", sized(4, 64)));
        progs.push(("ticket lock, one leader, 4wg x 256inv", sized(4, 256)));
        launches("goal (11 models, one run)", progs);
    }
}

fn parse(src: &str) -> Program {
    progress_litmus::kernel::litmus::parse(src).expect("a benchmark program parses")
}

fn idioms(dir: &std::path::Path) {
    let (items, errors) = load_all(&[dir.to_path_buf()]);
    assert!(errors.is_empty(), "{errors:?}");
    header("idiom (11 models, median of 5)");
    let (mut states, mut time) = (0usize, Duration::ZERO);
    for item in items {
        let Item::Kernel(p) = item else { continue };
        let r = measure(&p.program, 5);
        row(&p.name, &r);
        if let Ok((s, t)) = r {
            states += s.states;
            time += t;
        }
    }
    println!(
        "idioms total: {states} states in {:.3} s: {:.0} states/s on one core\n",
        time.as_secs_f64(),
        states as f64 / time.as_secs_f64()
    );
}

fn launches(what: &str, progs: Vec<(&str, Program)>) {
    header(what);
    let (mut states, mut time) = (0usize, Duration::ZERO);
    for (name, p) in progs {
        let r = measure(&p, 1);
        row(name, &r);
        if let Ok((s, t)) = r {
            states += s.states;
            time += t;
        }
    }
    println!(
        "total: {states} states in {:.3} s: {:.0} states/s on one core\n",
        time.as_secs_f64(),
        states as f64 / time.as_secs_f64().max(1e-9)
    );
}

/// Larger launches of some idioms (their `expect` lines dropped: they are
/// about the original launch).
fn large(dir: &std::path::Path) -> Vec<(&'static str, String)> {
    let read = |name: &str| std::fs::read_to_string(dir.join(format!("{name}.litmus"))).unwrap();
    let v = vec![
        (
            "ticket-lock 5wg",
            read("ticket-lock")
                .replace("workgroups 3;", "workgroups 5;")
                .replace("values 4;", "values 8;"),
        ),
        (
            "discovery-barrier 5wg",
            read("discovery-barrier")
                .replace("workgroups 3;", "workgroups 5;")
                .replace("values 4;", "values 8;"),
        ),
        (
            "decoupled-lookback 6wg",
            read("decoupled-lookback")
                .replace("workgroups 3;", "workgroups 6;")
                .replace("values 4;", "values 8;")
                .replace("flag[3]", "flag[6]"),
        ),
        (
            "decoupled-lookback-parallel 3x2",
            read("decoupled-lookback-parallel")
                .replace("workgroups 2;", "workgroups 3;")
                .replace("values 4;", "values 8;")
                .replace("flag[4]", "flag[6]"),
        ),
        (
            "mutex 2wg x 8inv",
            read("mutex").replace("workgroups 2;", "workgroups 2;\nworkgroup_size 8;"),
        ),
    ];
    v.into_iter()
        .map(|(n, s)| {
            let s = s
                .lines()
                .filter(|l| !l.starts_with("expect"))
                .map(|l| format!("{l}\n"))
                .collect();
            (n, s)
        })
        .collect()
}
