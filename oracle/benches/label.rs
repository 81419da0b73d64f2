//! Benchmark: label all 483 published tests under all 11 models.
//!
//! `cargo bench -p oracle` prints two figures: the in-process time (read and
//! parse the files, build the product spaces, decide the verdicts), and the
//! wall time of the whole `oracle classify --format csv` process, which is
//! what a user waits for. Each is the median of repeated runs. The published
//! toolchain (CADP) took about 880 minutes for the same job.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests");
    let runs = 30;

    let mut inproc = Vec::new();
    let mut labelled = 0;
    for _ in 0..runs {
        let t0 = Instant::now();
        let (tests, errors) = axb::load::load_all(std::slice::from_ref(&dir));
        assert!(errors.is_empty());
        let refs: Vec<&axb::Test> = tests.iter().map(|t| &t.entry.test).collect();
        let v = oracle::verdicts_all(&refs);
        inproc.push(t0.elapsed());
        labelled = v.len();
    }

    let mut process = Vec::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        let status = Command::new(env!("CARGO_BIN_EXE_oracle"))
            .args(["classify", "--format", "csv"])
            .arg(&dir)
            .stdout(Stdio::null())
            .status()
            .expect("run oracle");
        process.push(t0.elapsed());
        assert!(status.success());
    }

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "label {labelled} tests x 11 models: in-process {:.2} ms (median of {runs}), whole `oracle classify` process {:.2} ms (median of {runs}, min {:.2} ms); {} threads",
        ms(median(inproc)),
        ms(median(process.clone())),
        ms(*process.iter().min().unwrap()),
        rayon::current_num_threads()
    );
}
