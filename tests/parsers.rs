//! The parsers never panic, and every error points inside its input:
//! bounded property tests over arbitrary text and mutations of valid files
//! (byte flips, truncation, deletions, inserted tokens, huge numbers, deep
//! nesting), for the artifact text format, RON tests and RON suites. They
//! run in CI on every `cargo test`; `AXB_FUZZ_CASES=100000 cargo test
//! --release --test parsers` runs them longer. The `fuzz/` directory has
//! the same checks as cargo-fuzz targets.
//!
//! Every crash found becomes a case in `regressions` below.

#[path = "support/checks.rs"]
mod checks;

use checks::{assert_inside, check_ron, check_text};
use progress_litmus::axb::load;
use progress_litmus::axb::suite::{Entry, Suite};
use progress_litmus::axb::test::{Instr, Target, Test};
use progress_litmus::{axb::text, Verdict, Verdicts};
use proptest::prelude::*;
use proptest::sample::Index;

/// Cases per property: 1000 by default (a few seconds in debug builds),
/// `AXB_FUZZ_CASES` to run longer.
fn config() -> ProptestConfig {
    let cases = std::env::var("AXB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Published tests of several shapes, in the artifact format.
fn artifact_samples() -> Vec<&'static str> {
    let pick = ["2t2i_3.txt", "2t3i_20.txt", "3t3i_5.txt", "2t4i_40.txt"];
    progress_litmus::axb::published::FILES
        .iter()
        .filter(|(f, _)| pick.contains(f))
        .map(|(_, src)| *src)
        .collect()
}

/// A small suite with every optional field used.
fn sample_suite() -> Suite {
    let tests: Vec<Entry> = artifact_samples()
        .iter()
        .enumerate()
        .map(|(k, src)| {
            let mut e = Entry::new(format!("t{k}"), text::parse(src).unwrap());
            if k % 2 == 0 {
                let v: Vec<Verdict> = (0..11)
                    .map(|i| {
                        if (i + k) % 3 == 0 {
                            Verdict::F
                        } else {
                            Verdict::P
                        }
                    })
                    .collect();
                e.verdicts = Some(Verdicts(v.try_into().unwrap()));
            }
            if k == 1 {
                e.idioms = vec!["mutex".into()];
                e.duplicate_of = Some("t0".into());
            }
            e
        })
        .collect();
    Suite {
        name: "sample".into(),
        note: "a note with \"quotes\", (brackets) and // slashes".into(),
        tests,
    }
}

/// Valid documents to mutate: artifact text, RON tests (with and without a
/// name), a RON suite, pretty and compact.
fn ron_samples() -> Vec<String> {
    let mut v: Vec<String> = artifact_samples()
        .iter()
        .map(|s| load::test_to_ron(&text::parse(s).unwrap()))
        .collect();
    v.push(
        "// a hand-written test\nTest(name: \"spin\", threads: [[(loc: 0, check: 0, jump: At(0), exch: 1)]])\n"
            .to_string(),
    );
    let suite = sample_suite();
    v.push(load::suite_to_ron(&suite));
    v.push(ron::to_string(&suite).unwrap());
    v
}

/// Pieces that mean something to one of the parsers.
const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "\"",
    "'",
    "\n",
    " ",
    "//",
    "/*",
    "*/",
    "#![enable(implicit_some)]",
    "Some(",
    "None",
    "At(",
    "End",
    "END",
    "AXB",
    "Test",
    "Suite",
    "loc",
    "check",
    "jump",
    "exch",
    "exhc",
    "name",
    "threads",
    "tests",
    "verdicts",
    "idioms",
    "duplicate_of",
    "note",
    "\"HSA\"",
    "P",
    "F",
    "r#\"",
    "\"#",
    "\\",
    "-1",
    "255",
    "256",
    "16",
    "8",
    "15",
    "99999999999999999999999999",
    "1e400",
    "0x10",
    "THREAD0",
    "THREAD1",
    "THREAD8",
    "atomic_store(",
    "atomic_chk_branch(",
    "atomic_exch_branch(",
    "\u{feff}",
    "\r\n",
    "é",
    "\u{202e}",
];

#[derive(Clone, Debug)]
enum Mutation {
    Flip(Index, u8),
    Truncate(Index),
    Delete(Index, usize),
    Insert(Index, &'static str),
    /// A number replaced by a huge one.
    HugeNumber(Index),
    /// `k` opening brackets inserted.
    Nest(Index, usize, &'static str),
    /// A piece of the document copied elsewhere.
    Splice(Index, Index, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), 1usize..20).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<Index>(), prop::sample::select(TOKENS)).prop_map(|(i, t)| Mutation::Insert(i, t)),
        any::<Index>().prop_map(Mutation::HugeNumber),
        (
            any::<Index>(),
            1usize..3000,
            prop::sample::select(&["[", "(", "{", "Some(", "At("][..])
        )
            .prop_map(|(i, k, t)| Mutation::Nest(i, k, t)),
        (any::<Index>(), any::<Index>(), 1usize..80)
            .prop_map(|(a, b, n)| Mutation::Splice(a, b, n)),
    ]
}

/// Applies mutations to the bytes of `src`; invalid UTF-8 is replaced, as
/// the loader refuses it before any parser sees it.
fn mutate(src: &str, ms: &[Mutation]) -> String {
    let mut b = src.as_bytes().to_vec();
    for m in ms {
        let at = |i: &Index, b: &Vec<u8>| {
            if b.is_empty() {
                0
            } else {
                i.index(b.len() + 1)
            }
        };
        match m {
            Mutation::Flip(i, x) => {
                if !b.is_empty() {
                    let k = i.index(b.len());
                    b[k] = *x;
                }
            }
            Mutation::Truncate(i) => b.truncate(at(i, &b)),
            Mutation::Delete(i, n) => {
                let k = at(i, &b);
                let end = (k + n).min(b.len());
                b.drain(k..end);
            }
            Mutation::Insert(i, t) => {
                let k = at(i, &b);
                b.splice(k..k, t.bytes());
            }
            Mutation::HugeNumber(i) => {
                let k = at(i, &b);
                if let Some(d) = b[k..].iter().position(u8::is_ascii_digit) {
                    let d = k + d;
                    b.splice(d..d, b"99999999999999999999".iter().copied());
                }
            }
            Mutation::Nest(i, k, t) => {
                let p = at(i, &b);
                let open = t.repeat(*k);
                b.splice(p..p, open.bytes());
            }
            Mutation::Splice(from, to, n) => {
                if !b.is_empty() {
                    let f = from.index(b.len());
                    let piece: Vec<u8> = b[f..(f + n).min(b.len())].to_vec();
                    let t = at(to, &b);
                    b.splice(t..t, piece);
                }
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_text(src in ".*") {
        check_text(&src);
        check_ron(&src);
    }

    #[test]
    fn mutated_artifact_files(k in any::<Index>(), ms in prop::collection::vec(mutation(), 1..5)) {
        let samples = artifact_samples();
        let src = mutate(samples[k.index(samples.len())], &ms);
        check_text(&src);
    }

    #[test]
    fn mutated_ron_tests_and_suites(k in any::<Index>(), ms in prop::collection::vec(mutation(), 1..5)) {
        let samples = ron_samples();
        let src = mutate(&samples[k.index(samples.len())], &ms);
        check_ron(&src);
    }

    /// A fault planted in one test of a suite is reported at the planted
    /// value itself, whatever the layout.
    #[test]
    fn planted_faults_are_reported_where_they_are(
        test in any::<Index>(), thread in any::<Index>(), pc in any::<Index>(),
        kind in 0usize..4, bad in 16u8..=255, compact in any::<bool>(),
    ) {
        let mut suite = sample_suite();
        let t = test.index(suite.tests.len());
        let threads = &mut suite.tests[t].test.threads;
        let th = thread.index(threads.len());
        let i = pc.index(threads[th].len());
        let want = match kind {
            0 => { threads[th][i].loc = bad; bad.to_string() }
            1 => { threads[th][i].check = bad; bad.to_string() }
            2 => { threads[th][i].exch = Some(bad); format!("Some({bad})") }
            _ => { threads[th].clear(); "[]".to_string() }
        };
        let src = if compact { ron::to_string(&suite).unwrap() } else { load::suite_to_ron(&suite) };
        let e = load::parse_suite(&src).unwrap_err();
        let line = src.split('\n').nth(e.line - 1).unwrap();
        prop_assert!(line[e.col - 1..].starts_with(&want), "{e}: `{}`", &line[e.col - 1..]);
        prop_assert!(e.msg.starts_with(&format!("test `t{t}`: thread {th}")), "{e}");
    }
}

/// Inputs that once crashed or misbehaved, kept as they were found.
#[test]
fn regressions() {
    // Issue 10: a misspelt field read as a different test.
    let e = load::parse_ron("Test(threads: [[(loc: 0, check: 0, jump: At(0), exhc: Some(1))]])")
        .unwrap_err();
    assert!(e.msg.contains("unknown field `exhc`"), "{e}");
    // Deep nesting stops at the types or at ron's recursion limit.
    for deep in [
        "[".repeat(200_000),
        format!("Test(threads: {}", "[".repeat(200_000)),
    ] {
        let e = load::parse_ron(&deep).unwrap_err();
        assert_inside(&deep, &e);
    }
    // A jump target past u8 in the artifact format.
    let e = text::parse("THREAD0\natomic_chk_branch(0,0,256)\n").unwrap_err();
    assert!(e.msg.contains("past END"), "{e}");
    // Instructions built from any bytes are caught by validation.
    let t = Test {
        threads: vec![vec![Instr {
            loc: 255,
            check: 255,
            jump: Target::At(255),
            exch: Some(255),
        }]],
    };
    assert!(t.validate().is_err());
    let src = load::test_to_ron(&t);
    let e = load::parse_ron_test(&src).unwrap_err();
    let line = src.lines().nth(e.line - 1).unwrap();
    assert!(
        line[e.col - 1..].starts_with("loc: 255") || line[e.col - 1..].starts_with("255"),
        "{e}"
    );
}
