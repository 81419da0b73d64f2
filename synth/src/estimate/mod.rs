//! What a configuration costs before anyone runs it: the number of tests,
//! the CPU hours and the packed bytes of a complete run, estimated from a
//! random sample of its shards that is actually run, with 95% intervals.
//!
//! Why measure rather than extrapolate from smaller configurations: from 5
//! to 6 instructions the test count grew 25x to 130x and the CPU time
//! more, by no rule anyone could state. A shard split (`--shard K/N`)
//! cuts a run into `N` parts whose tests, CPU time and bytes add up to the
//! whole run's, so the mean of a random sample of shards times `N` is an
//! unbiased estimate of each total, and the sample's spread gives its
//! interval ([`stats`]). The sampled shards are complete shards of the
//! run: moved into the run's folder, the jobs skip them.
//!
//! [`measure`] runs and measures the samples; this file turns them into an
//! [`Estimate`] and prints it.

pub mod measure;
pub mod stats;

use serde::{Deserialize, Serialize};
use stats::{Interval, CONFIDENCE};

/// One sampled shard, measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Sample {
    /// `K` of `--shard K/N`.
    pub shard: usize,
    pub tests: u64,
    /// The shard's packed output (`.axb.gz`).
    pub packed_bytes: u64,
    /// User + system CPU seconds of the process, on one core.
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
    /// Peak resident memory of the process.
    pub maxrss_kib: u64,
    /// Table 4 of the shard (`synth table`), with `--table`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<TableSample>,
}

/// Table 4 of one sampled shard: its counts, row by row, and the CPU
/// seconds `synth table` took on one core.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableSample {
    pub cpu_seconds: f64,
    pub rows: Vec<Row<u64>>,
}

/// One row of Table 4 (SPEC §5): the distinguishing (bucket D) and bucket C counts
/// under weak and strong fairness, counts of a shard or intervals of a
/// whole run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row<T> {
    pub model: String,
    pub weak_distinguishing: T,
    pub weak_bucket_c: T,
    pub strong_distinguishing: T,
    pub strong_bucket_c: T,
}

/// Table 4 of the whole run, estimated from the samples' tables.
#[derive(Debug, Serialize)]
pub struct TableEstimate {
    /// `synth table` on the whole suite (summed over its shards).
    pub cpu_hours: Interval,
    pub rows: Vec<Row<Interval>>,
}

/// The estimate of a whole run from its measured samples.
#[derive(Debug, Serialize)]
pub struct Estimate {
    pub config: String,
    /// `N`: the run's shard count.
    pub shards: usize,
    pub seed: u64,
    /// Two-sided, of every interval.
    pub confidence: f64,
    /// How the intervals are made.
    pub method: &'static str,
    /// The CPU the samples ran on, and its core count.
    pub machine: String,
    pub tests: Interval,
    pub cpu_hours: Interval,
    /// The shards' packed outputs together (the merged suite is within a
    /// few percent of it).
    pub packed_bytes: Interval,
    /// The largest of the sample: what one array task needs.
    pub shard_cpu_seconds_max: f64,
    pub shard_maxrss_kib_max: u64,
    /// Cores of this machine's speed that finish the run in 24 hours at
    /// the interval's high end of CPU hours.
    pub one_day_cores: u64,
    /// Table 4, when the samples have theirs.
    pub table: Option<TableEstimate>,
    pub samples: Vec<Sample>,
}

/// The method, as stated with every estimate.
pub const METHOD: &str = "shards sampled uniformly without replacement (seeded); total = N x sample mean; Student t interval with finite-population correction";

impl Estimate {
    /// The estimate of a run of `shards` shards from `samples` (at least
    /// two, in shard order).
    pub fn new(config: &str, shards: usize, seed: u64, samples: Vec<Sample>) -> Estimate {
        let of = |f: fn(&Sample) -> f64| {
            let v: Vec<f64> = samples.iter().map(f).collect();
            stats::total(&v, shards)
        };
        let cpu_hours = hours(of(|s| s.cpu_seconds));
        Estimate {
            config: config.to_string(),
            shards,
            seed,
            confidence: CONFIDENCE,
            method: METHOD,
            machine: machine(),
            tests: of(|s| s.tests as f64),
            packed_bytes: of(|s| s.packed_bytes as f64),
            shard_cpu_seconds_max: samples.iter().map(|s| s.cpu_seconds).fold(0.0, f64::max),
            shard_maxrss_kib_max: samples.iter().map(|s| s.maxrss_kib).max().unwrap_or(0),
            one_day_cores: (cpu_hours.high / 24.0).ceil().max(1.0) as u64,
            table: table_estimate(&samples, shards),
            cpu_hours,
            samples,
        }
    }

    /// A Slurm time limit for one array task of `cpus` cores: three times
    /// the slowest sample's CPU time spread over the cores (other shards,
    /// other CPUs), at least 10 minutes, in whole 10 minutes, `D-HH:MM:00`.
    pub fn slurm_time(&self, cpus: u32) -> String {
        let secs = 3.0 * self.shard_cpu_seconds_max / f64::from(cpus.max(1));
        slurm_minutes(((secs / 600.0).ceil().max(1.0) as u64) * 10)
    }

    /// A Slurm time limit for the merge on `cpus` cores: 30 CPU
    /// microseconds a test (three times the 6-10 the 6-instruction merges
    /// took: every test is checked against SPEC §4 again, in parallel, and
    /// written through one gzip stream) at the high end of the tests'
    /// interval, at least an hour, in whole hours.
    pub fn merge_time(&self, cpus: u32) -> String {
        let secs = 30e-6 * self.tests.high / f64::from(cpus.max(1));
        slurm_minutes(((secs / 3600.0).ceil().max(1.0) as u64) * 60)
    }

    /// A Slurm memory request for one array task: three times the largest
    /// sample's peak (a shard's memory follows its tests, and an unsampled
    /// shard may hold several times the median: 3t6i's shard 77 held 7.7x;
    /// a task killed for memory would fail again on resuming, as its
    /// journal's tests are held too), in whole 256 MiB, at least 1 GiB.
    pub fn slurm_mem(&self) -> String {
        let mib = (3 * self.shard_maxrss_kib_max).div_ceil(1024);
        format!("{}M", mib.div_ceil(256).max(4) * 256)
    }

    /// The estimate as `# ` comment lines (for the plan's scripts).
    pub fn text(&self) -> String {
        let n = self.samples.len();
        let pct = (self.confidence * 100.0).round();
        let iv = |i: &Interval, f: &dyn Fn(f64) -> String| {
            format!("{} ({} .. {})", f(i.estimate), f(i.low), f(i.high))
        };
        let count = |x: f64| sig(x, "");
        let bytes = |x: f64| sig(x, "B");
        let hours = |x: f64| plain3(x);
        format!(
            "# Estimate of {cfg} from {n} of its {shards} shards (seed {seed}), run and measured on {machine}, one core each;\n\
             # {pct}% intervals: {method}.\n\
             #   tests:            {tests}\n\
             #   CPU hours:        {cpu}\n\
             #   packed output:    {bytes}\n\
             #   largest shard:    {shard_cpu:.1} CPU s, {rss} MiB peak memory\n\
             #   one-day finish:   {cores} core{s} of this speed\n",
            cfg = self.config,
            shards = self.shards,
            seed = self.seed,
            machine = self.machine,
            method = self.method,
            tests = iv(&self.tests, &count),
            cpu = iv(&self.cpu_hours, &hours),
            bytes = iv(&self.packed_bytes, &bytes),
            shard_cpu = self.shard_cpu_seconds_max,
            rss = self.shard_maxrss_kib_max / 1024,
            cores = self.one_day_cores,
            s = if self.one_day_cores == 1 { "" } else { "s" },
        ) + &self.table_text()
    }

    /// Table 4's estimate as `# ` lines (none without one).
    fn table_text(&self) -> String {
        let Some(t) = &self.table else {
            return String::new();
        };
        let iv = |i: &Interval| {
            format!(
                "{} ({} .. {})",
                sig(i.estimate, ""),
                sig(i.low, ""),
                sig(i.high, "")
            )
        };
        let mut o = format!(
            "#   Table 4 (distinguishing D, bucket C; synth table: {} CPU hours ({} .. {})):\n",
            plain3(t.cpu_hours.estimate),
            plain3(t.cpu_hours.low),
            plain3(t.cpu_hours.high)
        );
        for r in &t.rows {
            o += &format!(
                "#     {:<5} weak   D {}  C {}\n#     {:<5} strong D {}  C {}\n",
                r.model,
                iv(&r.weak_distinguishing),
                iv(&r.weak_bucket_c),
                r.model,
                iv(&r.strong_distinguishing),
                iv(&r.strong_bucket_c),
            );
        }
        o
    }
}

/// `minutes` as a Slurm time limit, `HH:MM:00` or `D-HH:MM:00`.
fn slurm_minutes(minutes: u64) -> String {
    let (d, h, m) = (minutes / 1440, minutes % 1440 / 60, minutes % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:00")
    } else {
        format!("{h:02}:{m:02}:00")
    }
}

/// An interval of seconds in hours.
fn hours(i: Interval) -> Interval {
    Interval {
        estimate: i.estimate / 3600.0,
        low: i.low / 3600.0,
        high: i.high / 3600.0,
    }
}

/// Table 4 of the run from the samples' tables (when every sample has one
/// with the same rows), count by count.
fn table_estimate(samples: &[Sample], shards: usize) -> Option<TableEstimate> {
    let tables: Vec<&TableSample> = samples
        .iter()
        .map(|s| s.table.as_ref())
        .collect::<Option<_>>()?;
    let first = tables.first()?;
    let models: Vec<&str> = first.rows.iter().map(|r| r.model.as_str()).collect();
    if tables.iter().any(|t| {
        !t.rows
            .iter()
            .map(|r| r.model.as_str())
            .eq(models.iter().copied())
    }) {
        return None;
    }
    let total = |f: &dyn Fn(&TableSample) -> f64| {
        let v: Vec<f64> = tables.iter().map(|t| f(t)).collect();
        stats::total(&v, shards)
    };
    let rows = (0..models.len())
        .map(|k| Row {
            model: models[k].to_string(),
            weak_distinguishing: total(&|t| t.rows[k].weak_distinguishing as f64),
            weak_bucket_c: total(&|t| t.rows[k].weak_bucket_c as f64),
            strong_distinguishing: total(&|t| t.rows[k].strong_distinguishing as f64),
            strong_bucket_c: total(&|t| t.rows[k].strong_bucket_c as f64),
        })
        .collect();
    Some(TableEstimate {
        cpu_hours: hours(total(&|t| t.cpu_seconds)),
        rows,
    })
}

/// `x` with three significant digits and an SI prefix (`4.17G`).
fn sig(x: f64, unit: &str) -> String {
    let prefixes = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (scale, p) in prefixes {
        if x.abs() >= scale {
            let v = x / scale;
            let digits = if v >= 100.0 {
                0
            } else if v >= 10.0 {
                1
            } else {
                2
            };
            return format!("{v:.digits$}{p}{unit}");
        }
    }
    format!("{x:.0}{unit}")
}

/// `x` with three significant digits in plain notation (`0.00334`,
/// `108`, `4170`).
fn plain3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

/// This machine's CPU (`model name` of `/proc/cpuinfo`) and core count.
fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {cores} cores")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(shard: usize, tests: u64, cpu: f64, kib: u64) -> Sample {
        Sample {
            shard,
            tests,
            packed_bytes: tests * 5,
            cpu_seconds: cpu,
            wall_seconds: cpu,
            maxrss_kib: kib,
            table: None,
        }
    }

    #[test]
    fn an_estimate_and_its_slurm_settings() {
        let e = Estimate::new(
            "2t5i",
            16,
            1,
            vec![
                sample(3, 20_000, 0.4, 30_000),
                sample(9, 30_000, 0.6, 40_000),
            ],
        );
        assert_eq!(e.tests.estimate, 400_000.0);
        assert!(e.tests.covers(416_280.0), "{:?}", e.tests);
        assert_eq!(e.shard_cpu_seconds_max, 0.6);
        assert_eq!(e.one_day_cores, 1);
        assert_eq!(e.slurm_time(4), "00:10:00");
        assert_eq!(e.slurm_mem(), "1024M");
        let big = Estimate::new(
            "2t7i",
            1000,
            1,
            vec![
                sample(1, 4_000_000, 7_000.0, 1_600_000),
                sample(2, 3_000_000, 5_000.0, 1_200_000),
            ],
        );
        // 3 x 7000 s on 4 cores: 87.5 minutes, in whole 10 minutes.
        assert_eq!(big.slurm_time(4), "01:30:00");
        assert_eq!(big.slurm_time(1), "05:50:00");
        // The merge: 30 us a test of the interval's high end, on 4 cores.
        let merge_secs = 30e-6 * big.tests.high / 4.0;
        let hours = (merge_secs / 3600.0).ceil() as u64;
        assert_eq!(big.merge_time(4), slurm_minutes(hours * 60));
        assert_eq!(e.merge_time(4), "01:00:00");
        // 3 x 1,600,000 KiB = 4688 MiB, up to 4864 (19 x 256).
        assert_eq!(big.slurm_mem(), "4864M");
        assert!(big.one_day_cores >= 70, "{}", big.one_day_cores);
        let text = big.text();
        assert!(text.lines().all(|l| l.starts_with('#')), "{text}");
        assert!(text.contains("tests:            3.50G"), "{text}");
        let json = serde_json::to_value(&big).unwrap();
        assert_eq!(json["tests"]["estimate"], 3.5e9);
        assert_eq!(json["confidence"], 0.95);
        assert_eq!(json["samples"][1]["shard"], 2);
    }

    #[test]
    fn long_limits_count_days() {
        let e = Estimate::new(
            "x",
            10,
            0,
            vec![sample(1, 1, 100_000.0, 1), sample(2, 1, 1.0, 1)],
        );
        // 300,000 s = 5,000 minutes: 3 days 11:20.
        assert_eq!(e.slurm_time(1), "3-11:20:00");
        assert_eq!(sig(1234.0, "B"), "1.23kB");
        assert_eq!(sig(999.0, ""), "999");
        assert_eq!(sig(36_056_092.0, ""), "36.1M");
        assert_eq!(plain3(0.003_336_88), "0.00334");
        assert_eq!(plain3(108.44), "108");
        assert_eq!(plain3(4_170.2), "4170");
        assert_eq!(plain3(1.5), "1.50");
    }
}
