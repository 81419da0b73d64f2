//! A mutational fuzzer on stable Rust, shared by the crates' `fuzz` tests
//! (issue 46, item 6: the cargo-fuzz targets of `fuzz/` need libFuzzer and
//! ran nowhere, and covered two parsers).
//!
//! A target is a corpus of valid inputs (the repository's own files of
//! that kind), a dictionary of tokens that matter to its parser, and a
//! check that must hold for every input: the code under test returns an
//! answer or one clean error, never panics, and never takes long. Each
//! case takes a corpus input and applies one to four mutations: bit
//! flips, interesting bytes, dictionary tokens, deletions, duplications,
//! a piece repeated up to thousands of times (deep nesting, long runs),
//! splices from another input, truncation, numbers at their bounds.
//!
//! The run is deterministic (a fixed seed, `FUZZ_SEED` to change it) and
//! bounded: `FUZZ_CASES` cases per target (the default keeps `cargo test
//! --release` fast), or `FUZZ_SECONDS` per target for a longer run. Every
//! input of `tests/data/fuzz/<target>/` (the regression inputs: each a
//! crash found once) is replayed first. A failing case is saved under
//! `target/fuzz-failures/<target>/` and the test fails naming the file:
//! copy it into `tests/data/fuzz/<target>/` with the fix.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A small, fast, seedable generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// What is fuzzed: a name (the folder of its regression inputs), valid
/// inputs to start from, tokens worth inserting, and the check.
pub struct Target<'a> {
    pub name: &'a str,
    pub corpus: Vec<Vec<u8>>,
    pub dict: Vec<Vec<u8>>,
    /// `Err(why)` when the input shows a bug (a panic is one too).
    pub check: &'a (dyn Fn(&[u8]) -> Result<(), String> + Sync),
}

/// The largest input a mutation may make.
const MAX_LEN: usize = 1 << 20;

/// A case slower than this is a bug (a hang, or work out of proportion).
const SLOW: Duration = Duration::from_secs(20);

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Bytes that change how text parses.
const INTERESTING: &[u8] = b"\x00\x01\x1b\x7f\xff\n\r\t \"'\\/*{}()[]<>;:,.=!-+&|^~#@%$0129";

/// Numbers at the bounds the readers check.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "7",
    "8",
    "63",
    "64",
    "127",
    "128",
    "255",
    "256",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999999",
    "1e9",
    "0x10",
];

/// Applies one mutation to `v`.
pub fn mutate(v: &mut Vec<u8>, rng: &mut Rng, dict: &[Vec<u8>], corpus: &[Vec<u8>]) {
    let len = v.len();
    let at = rng.below(len + 1);
    match rng.below(10) {
        0 if len > 0 => {
            let i = rng.below(len);
            v[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            v[i] = INTERESTING[rng.below(INTERESTING.len())];
        }
        2 if !dict.is_empty() => {
            let t = &dict[rng.below(dict.len())];
            v.splice(at..at, t.iter().copied());
        }
        3 if len > 0 => {
            let i = rng.below(len);
            let n = 1 + rng.below(16.min(len - i));
            v.drain(i..i + n);
        }
        4 if len > 0 => {
            // A piece copied elsewhere.
            let i = rng.below(len);
            let n = 1 + rng.below(64.min(len - i));
            let piece: Vec<u8> = v[i..i + n].to_vec();
            v.splice(at..at, piece);
        }
        5 if len > 0 => {
            // A short piece repeated: deep nesting, long chains, big runs.
            let i = rng.below(len);
            let n = 1 + rng.below(8.min(len - i));
            let times = [2, 10, 100, 1000, 5000][rng.below(5)];
            let piece: Vec<u8> = v[i..i + n].repeat(times);
            v.splice(i..i, piece);
        }
        6 if !corpus.is_empty() => {
            let other = &corpus[rng.below(corpus.len())];
            if !other.is_empty() {
                let i = rng.below(other.len());
                let n = 1 + rng.below(256.min(other.len() - i));
                let end = (at + rng.below(64)).min(len);
                v.splice(at..end, other[i..i + n].iter().copied());
            }
        }
        7 => v.truncate(at),
        8 => {
            // A number replaced by one at a bound.
            let digits: Vec<usize> = (0..len).filter(|&i| v[i].is_ascii_digit()).collect();
            let num = NUMBERS[rng.below(NUMBERS.len())].as_bytes();
            if digits.is_empty() {
                v.splice(at..at, num.iter().copied());
            } else {
                let i = digits[rng.below(digits.len())];
                let mut j = i;
                while j < len && v[j].is_ascii_digit() {
                    j += 1;
                }
                v.splice(i..j, num.iter().copied());
            }
        }
        _ => {
            let b = INTERESTING[rng.below(INTERESTING.len())];
            v.insert(at, b);
        }
    }
    v.truncate(MAX_LEN);
}

/// Runs `input` through the check, catching a panic as a failure.
fn run_one(target: &Target, input: &[u8]) -> Result<(), String> {
    let start = Instant::now();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (target.check)(input)))
        .unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(format!("panicked: {msg}"))
        });
    let took = start.elapsed();
    r.and_then(|()| {
        if took > SLOW {
            Err(format!("took {took:?} (more than {SLOW:?})"))
        } else {
            Ok(())
        }
    })
}

/// The repository root (tests of every crate run from their own folder).
pub fn root() -> PathBuf {
    let mut d = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !d.join("ARCHITECTURE.md").exists() {
        assert!(d.pop(), "no repository root above the crate");
    }
    d
}

/// Saves a failing input and describes it.
fn failure(target: &Target, input: &[u8], why: &str) -> String {
    let dir = root().join("target/fuzz-failures").join(target.name);
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join(format!(
        "{}.bin",
        progress_litmus::fingerprint::fnv64(input)
    ));
    let _ = std::fs::write(&file, input);
    format!(
        "fuzz target `{}`: {why}\n  the input ({} bytes) is saved in {}; once fixed, copy it into tests/data/fuzz/{}/ as a regression input",
        target.name,
        input.len(),
        file.display(),
        target.name
    )
}

/// The regression inputs of a target.
fn regressions(name: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = root().join("tests/data/fuzz").join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect()
}

/// Replays the target's regression inputs, then fuzzes it: `default_cases`
/// cases (or `FUZZ_CASES`, or for `FUZZ_SECONDS`). Returns the number of
/// cases run. Panics on the first failure, naming the saved input.
pub fn run(target: &Target, default_cases: u64) -> u64 {
    assert!(
        !target.corpus.is_empty(),
        "{}: an empty corpus",
        target.name
    );
    for (path, input) in regressions(target.name) {
        if let Err(why) = run_one(target, &input) {
            panic!("regression input {}: {why}", path.display());
        }
    }
    for input in &target.corpus {
        if let Err(why) = run_one(target, input) {
            panic!(
                "{}",
                failure(target, input, &format!("a corpus input fails: {why}"))
            );
        }
    }
    let seed = env_number("FUZZ_SEED").unwrap_or(0x46_46_46);
    // One stream per target, so that adding a target changes no other's.
    let name = progress_litmus::fingerprint::fnv64(target.name.as_bytes());
    let mut rng = Rng::new(seed ^ u64::from_str_radix(&name, 16).unwrap_or(0));
    let deadline = env_number("FUZZ_SECONDS").map(|s| Instant::now() + Duration::from_secs(s));
    let cases = env_number("FUZZ_CASES").unwrap_or(default_cases);
    let mut n = 0;
    loop {
        match deadline {
            Some(d) if Instant::now() >= d => break,
            None if n >= cases => break,
            _ => {}
        }
        let mut input = target.corpus[rng.below(target.corpus.len())].clone();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut input, &mut rng, &target.dict, &target.corpus);
        }
        if let Err(why) = run_one(target, &input) {
            panic!("{}", failure(target, &input, &why));
        }
        n += 1;
    }
    n
}

/// Tokens as dictionary entries.
pub fn dict(tokens: &[&str]) -> Vec<Vec<u8>> {
    tokens.iter().map(|t| t.as_bytes().to_vec()).collect()
}

/// The files under `dir` (relative to the root, recursively) whose names
/// end with `suffix`, read, in sorted order, at most `most` of them.
pub fn corpus(dir: &str, suffix: &str, most: usize) -> Vec<Vec<u8>> {
    fn walk(d: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(d) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, suffix, out);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join(dir), suffix, &mut files);
    files.sort();
    files
        .into_iter()
        .take(most)
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}
