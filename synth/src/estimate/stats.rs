//! The statistics of a cost estimate: which shards to run (a seeded
//! uniform sample without replacement) and how far the scaled-up sample
//! can be trusted (a Student t interval with the finite-population
//! correction).
//!
//! Why this scheme: a run is cut into `N` shards whose totals add up to
//! the whole run exactly, so a total (tests, CPU seconds, bytes) is `N`
//! times the mean shard. Shards are balanced by program count, not by
//! tests, and their test counts differ by up to 2.5x, so the spread of the
//! sample, not a guess, sets the interval. Sampling without replacement
//! from a finite population of shards makes the variance of the mean
//! `(1 - n/N) s^2 / n`; with every shard sampled the interval is the
//! exact total.

/// The confidence level of every interval (two-sided).
pub const CONFIDENCE: f64 = 0.95;

/// SplitMix64: a small, fixed generator, so that a seed names the same
/// sample on every machine and in every version (the estimate of a seed is
/// reproducible; `tests` pins a sample).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound > 0`), without modulo bias.
    fn below(&mut self, bound: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % bound;
        loop {
            let x = self.next();
            if x < zone {
                return x % bound;
            }
        }
    }
}

/// `n` of the shards `1..=count`, each subset of that size equally likely
/// (a partial Fisher-Yates shuffle seeded by `seed`), in increasing order.
/// `n` is at most `count`. The first `n` draws do not depend on `n`, so a
/// larger sample of the same seed holds the smaller one: an estimate is
/// made finer by asking for more samples, reusing those already run.
pub fn choose(count: usize, n: usize, seed: u64) -> Vec<usize> {
    let mut all: Vec<usize> = (1..=count).collect();
    let mut rng = SplitMix(seed);
    let n = n.min(count);
    for i in 0..n {
        let j = i + rng.below((count - i) as u64) as usize;
        all.swap(i, j);
    }
    let mut picked = all[..n].to_vec();
    picked.sort_unstable();
    picked
}

/// The upper 97.5% point of Student's t with `df` degrees of freedom (the
/// two-sided 95% interval's factor): exact to three decimals from the
/// table for `df <= 30`, the Cornish-Fisher expansion beyond (within
/// 0.001 there).
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    if (1..=30).contains(&df) {
        return TABLE[df - 1];
    }
    let v = df.max(1) as f64;
    let z: f64 = 1.959_963_984_540_054;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v * v * v)
}

/// A population total estimated from a sample: the point estimate and its
/// interval at [`CONFIDENCE`].
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Whether `x` lies in the interval.
    pub fn covers(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// The total over `count` shards of a quantity (never negative: tests,
/// seconds, bytes) measured on the sampled shards `values` (at least two,
/// at most `count`): `count` times their
/// mean, plus or minus `t975(n - 1)` standard errors of that total, with
/// the finite-population correction `1 - n/count`. The low end is never
/// below the sample's own sum (those shards are known).
pub fn total(values: &[f64], count: usize) -> Interval {
    let n = values.len();
    assert!(n >= 2 && n <= count, "{n} samples of {count}");
    let nf = n as f64;
    let big = count as f64;
    let sum: f64 = values.iter().sum();
    let mean = sum / nf;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (nf - 1.0);
    let fpc = 1.0 - nf / big;
    let se = big * (var * fpc / nf).sqrt();
    let estimate = big * mean;
    let half = t975(n - 1) * se;
    Interval {
        estimate,
        low: (estimate - half).max(sum),
        high: estimate + half,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_names_one_sample() {
        // Pinned: a seed must name the same shards in every version, or a
        // recorded estimate could not be run again.
        assert_eq!(choose(256, 8, 0), choose(256, 8, 0));
        assert_eq!(choose(256, 8, 1), [35, 36, 41, 52, 85, 194, 206, 231]);
        assert_ne!(choose(256, 8, 0), choose(256, 8, 1));
        // A larger sample of a seed holds the smaller.
        let (small, large) = (choose(10_000, 8, 5), choose(10_000, 20, 5));
        assert!(small.iter().all(|k| large.contains(k)));
        let all = choose(5, 9, 3);
        assert_eq!(all, [1, 2, 3, 4, 5]);
        let s = choose(10_000, 20, 7);
        assert_eq!(s.len(), 20);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert!(s.iter().all(|&k| (1..=10_000).contains(&k)));
    }

    #[test]
    fn the_sample_is_uniform() {
        // Every shard of 10 is picked about 3/10 of the time over many seeds.
        let mut hits = [0usize; 10];
        for seed in 0..20_000 {
            for k in choose(10, 3, seed) {
                hits[k - 1] += 1;
            }
        }
        for h in hits {
            assert!((5_700..=6_300).contains(&h), "{hits:?}");
        }
    }

    #[test]
    fn t_points() {
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(19), 2.093);
        // The expansion meets the table and the normal limit.
        assert!((t975(31) - 2.040).abs() < 0.001, "{}", t975(31));
        assert!((t975(40) - 2.021).abs() < 0.001, "{}", t975(40));
        assert!((t975(120) - 1.980).abs() < 0.001, "{}", t975(120));
        assert!((t975(1_000_000) - 1.960).abs() < 0.001);
    }

    #[test]
    fn interval_math() {
        // Four of ten shards: mean 5, s^2 = 20/3, fpc 0.6.
        let i = total(&[2.0, 4.0, 6.0, 8.0], 10);
        assert_eq!(i.estimate, 50.0);
        let se = 10.0 * (20.0 / 3.0 * 0.6 / 4.0f64).sqrt();
        assert!((i.high - (50.0 + 3.182 * se)).abs() < 1e-9);
        // 50 - 31.82 is below the 20 the four shards hold.
        assert_eq!(i.low, 20.0);
        let j = total(&[4.0, 5.0, 6.0, 5.0], 10);
        let se = 10.0 * (2.0 / 3.0 * 0.6 / 4.0f64).sqrt();
        assert!((j.low - (50.0 - 3.182 * se)).abs() < 1e-9);
        // Every shard sampled: the exact total, no interval.
        let all = total(&[1.0, 2.0, 3.0], 3);
        assert_eq!((all.low, all.estimate, all.high), (6.0, 6.0, 6.0));
        // The low end is at least what the sample itself holds.
        let skewed = total(&[0.0, 0.0, 100.0], 4);
        assert!(skewed.low >= 100.0, "{skewed:?}");
        assert!(skewed.covers(133.0) && !skewed.covers(99.0));
    }

    #[test]
    fn intervals_cover_at_their_level() {
        // A skewed population of 256 shards (test counts differ by 2.5x):
        // over 2,000 seeds, the 95% interval of 16 samples covers the true
        // total at close to its stated rate.
        let pop: Vec<f64> = (0..256)
            .map(|k| 80_000.0 + 120_000.0 * ((k * 37 % 256) as f64 / 255.0).powi(2))
            .collect();
        let truth: f64 = pop.iter().sum();
        let mut covered = 0;
        for seed in 0..2_000 {
            let v: Vec<f64> = choose(256, 16, seed).iter().map(|&k| pop[k - 1]).collect();
            covered += usize::from(total(&v, 256).covers(truth));
        }
        assert!((1_840..=1_960).contains(&covered), "{covered} of 2000");
    }
}
