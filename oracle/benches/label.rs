//! Benchmark: label tests under all 11 models.
//!
//! `cargo bench -p oracle` measures three workloads, each as the in-process
//! time (read and parse the files, build the state spaces, decide the
//! verdicts) and as the wall time of the whole `oracle classify --format
//! csv` process, which is what a user waits for (medians of repeated runs):
//!
//! - the 483 published tests (data/oopsla21/tests; the published toolchain,
//!   CADP, took about 880 minutes for them);
//! - the 11,450 tests of the complete published configurations
//!   (suites/{2t2i,2t3i,2t4i,3t3i,3t4i});
//! - the 416,280 tests of 2t5i, when `target/2t5i.ron` exists (or the file
//!   named by `ORACLE_BENCH_2T5I`); make it once with
//!   `cargo run --release -p synth -- --threads 2 --instrs 5 -o target/2t5i.ron`
//!   (137 MB, not committed).
//!
//! `ORACLE_BENCH_PYTHON=1 cargo bench -p oracle` (or `cargo bench -p oracle
//! --bench label -- --python`) also runs the independent Python
//! implementation of the SPEC (benches/reference_oracle.py) on the 11,450
//! tests, checks that it prints the same CSV, and reports the speed-up of
//! the whole `oracle` process over it. By hand:
//!
//! ```sh
//! S="suites/2t2i/2t2i.ron suites/2t3i/2t3i.ron suites/2t4i/2t4i.ron suites/3t3i/3t3i.ron suites/3t4i/3t4i.ron"
//! time python3 oracle/benches/reference_oracle.py $S > /tmp/py.csv
//! time target/release/oracle classify --format csv $S > /tmp/rs.csv
//! cmp /tmp/py.csv /tmp/rs.csv
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// In-process: load and label, `runs` times; returns the median and the
/// number of tests.
fn in_process(paths: &[PathBuf], runs: usize) -> (Duration, usize) {
    let mut times = Vec::new();
    let mut labelled = 0;
    for _ in 0..runs {
        let t0 = Instant::now();
        let (tests, errors) = progress_litmus::axb::load::load_all(paths);
        assert!(errors.is_empty(), "{errors:?}");
        let refs: Vec<&progress_litmus::Test> = tests.iter().map(|t| &t.entry.test).collect();
        let v = oracle::try_verdicts_all(&refs, oracle::DEFAULT_MAX_STATES);
        assert!(v.iter().all(Result::is_ok));
        times.push(t0.elapsed());
        labelled = v.len();
    }
    (median(times), labelled)
}

fn classify(paths: &[PathBuf]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_oracle"));
    c.args(["classify", "--format", "csv"]).args(paths);
    c
}

/// The whole `oracle classify --format csv` process, `runs` times: median
/// and minimum.
fn whole_process(paths: &[PathBuf], runs: usize) -> (Duration, Duration) {
    let mut times = Vec::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        let status = classify(paths)
            .stdout(Stdio::null())
            .status()
            .expect("run oracle");
        times.push(t0.elapsed());
        assert!(status.success());
    }
    let min = *times.iter().min().unwrap();
    (median(times), min)
}

fn report(what: &str, paths: &[PathBuf], runs: usize) -> Duration {
    let (inproc, n) = in_process(paths, runs);
    let (process, min) = whole_process(paths, runs);
    println!(
        "{what}: {n} tests x 11 models: in-process {:.1} ms ({:.2} us a test), whole `oracle classify` process {:.1} ms (median of {runs}, min {:.1} ms)",
        ms(inproc),
        inproc.as_secs_f64() * 1e6 / n as f64,
        ms(process),
        ms(min),
    );
    process
}

fn complete_suites() -> Vec<PathBuf> {
    ["2t2i", "2t3i", "2t4i", "3t3i", "3t4i"]
        .iter()
        .map(|c| root().join(format!("suites/{c}/{c}.ron")))
        .collect()
}

fn python(paths: &[PathBuf], oracle_process: Duration) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/reference_oracle.py");
    let t0 = Instant::now();
    let out = Command::new("python3").arg(&script).args(paths).output();
    let elapsed = t0.elapsed();
    let out = match out {
        Ok(o) if o.status.success() => o,
        Ok(o) => panic!(
            "reference_oracle.py failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            println!("python comparison skipped: cannot run python3 ({e})");
            return;
        }
    };
    let ours = classify(paths).output().expect("run oracle");
    assert_eq!(
        out.stdout, ours.stdout,
        "the Python reference and the oracle disagree"
    );
    println!(
        "python reference (same CSV, byte for byte): {:.2} s; the whole oracle process is {:.0}x faster",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() / oracle_process.as_secs_f64()
    );
}

fn main() {
    let with_python = std::env::args().any(|a| a == "--python")
        || std::env::var_os("ORACLE_BENCH_PYTHON").is_some_and(|v| v != "0");
    println!("{} rayon threads", rayon::current_num_threads());

    let published = vec![root().join("data/oopsla21/tests")];
    report("published", &published, 30);

    let complete = complete_suites();
    let process = report("complete 2t2i..3t4i", &complete, 15);
    if with_python {
        python(&complete, process);
    }

    let big = std::env::var_os("ORACLE_BENCH_2T5I")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/2t5i.ron"));
    if Path::new(&big).is_file() {
        report("2t5i", &[big], 3);
    } else {
        println!(
            "2t5i skipped: no {} (make it with `cargo run --release -p synth -- --threads 2 --instrs 5 -o target/2t5i.ron`)",
            big.display()
        );
    }
}
