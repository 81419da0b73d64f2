//! Stable fingerprints of generated programs and suites: FNV-1a, 64 bits,
//! as hex (not a security hash: the build cache uses SHA-256).
//!
//! A suite's fingerprint is what ties device results to the tests they are
//! of: test names are not unique across suites (`3t3i_3` of
//! `suites/3t3i` is not the published `3t3i_3`), so the WebGPU page's
//! result file and every `backends run` or `import` output record it, and
//! `backends report` refuses to judge runs against other tests.

use crate::axb::load::NamedTest;
use crate::axb::test::Test;

/// FNV-1a, 64 bits, as 16 hex digits.
pub fn fnv64(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// The identity of one program, whatever it is named: [`fnv64`] of its
/// text in the artifact's format. Results refer to a test by it where
/// names are ambiguous (`2t2i_0` of the published suite and of
/// `suites/2t2i` are different programs).
pub fn test(t: &Test) -> String {
    fnv64(crate::axb::text::print(t).as_bytes())
}

/// The identity of a set of named tests: [`fnv64`] of their names and
/// programs (in the artifact's text format), sorted by name, so the same
/// tests give the same fingerprint whichever files or order they came in.
pub fn tests<'a>(tests: impl IntoIterator<Item = (&'a str, &'a Test)>) -> String {
    let mut items: Vec<(&str, String)> = tests
        .into_iter()
        .map(|(name, t)| (name, crate::axb::text::print(t)))
        .collect();
    items.sort();
    let mut bytes = Vec::new();
    for (name, text) in items {
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(text.as_bytes());
        bytes.push(0);
    }
    fnv64(&bytes)
}

/// [`tests`] of a loaded suite.
pub fn suite(tests: &[NamedTest]) -> String {
    self::tests(tests.iter().map(|t| (t.name.as_str(), &t.entry.test)))
}
