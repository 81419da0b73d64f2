//! Reading tests from disk: RON tests, RON suites and artifact text files,
//! single files or whole directories, with errors that name file, line and
//! column. Writing RON.
//!
//! Files are found and read through [`crate::io`], which holds the
//! defences of every tool's input (a directory walk that visits each file
//! once, regular files only, a size limit). Here: RON refuses unknown
//! fields; every fault, validation included, points at its own line and
//! column; every test name obeys [`check_name`]; error messages quote at
//! most a short excerpt of input.

use crate::axb::suite::{Entry, RawSuite, Suite};
use crate::axb::test::{bad_name_msg, check_name, validate_threads, Test, Thread};
use crate::axb::text;
use crate::error::{excerpt, tidy_message, FileError, ParseError};
use crate::io::{max_input_bytes, not_an_input, read_bytes_limited, read_input, MAX_INPUT_ENV};
use crate::locate::{invalid_test_path, Fault, Step};
use ron::extensions::Extensions;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A single test in RON: `Test(threads: [[(loc: 0, check: 0, jump: End)]])`,
/// optionally with `name: "..."` (which then names the test instead of the
/// file stem). Unknown fields are refused: `exhc: Some(1)` for `exch` must
/// not silently read as a different test.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Test", deny_unknown_fields)]
struct RawRonTest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    threads: Vec<Thread>,
}

impl RawRonTest {
    fn fault(&self) -> Option<Fault<'static>> {
        if let Some(name) = &self.name {
            if let Err(e) = check_name(name) {
                let msg = bad_name_msg("test", name, &e);
                return Some(Fault::at(msg, vec![Step::Field("name")]));
            }
        }
        let e = validate_threads(&self.threads).err()?;
        Some(Fault::at(
            e.to_string(),
            invalid_test_path(&self.threads, &e),
        ))
    }
}

/// What a file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Document {
    /// A single test; `name` is the RON test's own `name:`, if it has one.
    Test {
        name: Option<String>,
        test: Test,
    },
    Suite(Suite),
}

/// How deeply RON values may nest: far more than any test or suite needs
/// (a suite is 6 levels deep), far less than would overflow a stack.
const RON_RECURSION_LIMIT: usize = 128;

/// How RON is read: optional values may be written bare (`exch: 1`,
/// `name: "x"`) as well as `Some(1)`, which is what people write by hand.
fn ron_options() -> ron::Options {
    ron::Options::default()
        .with_recursion_limit(RON_RECURSION_LIMIT)
        .with_default_extension(Extensions::IMPLICIT_SOME)
}

/// `` `AXB` `` as the reader knows it.
fn ron_struct_name(outer: &Option<String>) -> String {
    match outer.as_deref() {
        Some("AXB") => " in an instruction".to_string(),
        Some("Test") => " in a test".to_string(),
        Some("Suite") => " in a suite".to_string(),
        Some(o) => format!(" in `{}`", excerpt(o)),
        None => String::new(),
    }
}

fn one_of(alts: &[&str]) -> String {
    let alts: Vec<String> = alts.iter().map(|a| format!("`{a}`")).collect();
    match alts.len() {
        0 => "nothing".to_string(),
        1 => alts[0].clone(),
        _ => format!("one of {}", alts.join(", ")),
    }
}

/// A `ron` error as one short line: its position, and its message in our
/// words where `ron`'s would confuse (a missing space, advice to use another
/// crate), with any quoted input cut short.
fn ron_error(src: &str, e: ron::error::SpannedError) -> ParseError {
    use ron::error::Error as E;
    let msg = match &e.code {
        E::NoSuchStructField {
            expected,
            found,
            outer,
        } => format!(
            "unknown field `{}`{}; expected {}",
            excerpt(found),
            ron_struct_name(outer),
            one_of(expected)
        ),
        E::NoSuchEnumVariant {
            expected, found, ..
        } => format!(
            "unknown variant `{}`; expected {}",
            excerpt(found),
            one_of(expected)
        ),
        E::MissingStructField { field, outer } => {
            format!("missing field `{field}`{}", ron_struct_name(outer))
        }
        E::DuplicateStructField { field, outer } => {
            format!("field `{field}` given twice{}", ron_struct_name(outer))
        }
        E::ExceededRecursionLimit => {
            format!("nested more than {RON_RECURSION_LIMIT} levels deep")
        }
        E::IntegerOutOfBounds => "number out of range for this field".to_string(),
        other => {
            let m = tidy_message(&other.to_string());
            let mut c = m.chars();
            match c.next() {
                Some(first) => first.to_lowercase().chain(c).collect(),
                None => m,
            }
        }
    };
    // `ron` reports some faults just after the offending token: point at
    // its start instead, where an editor should put the cursor.
    let token = match &e.code {
        E::NoSuchStructField { found, .. }
        | E::NoSuchEnumVariant { found, .. }
        | E::ExpectedDifferentStructName { found, .. } => Some(found.as_str()),
        _ => None,
    };
    let (line, mut col) = (e.position.line, e.position.col);
    let line_text = src.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let before = line_text.get(..col.saturating_sub(1)).unwrap_or("");
    match token {
        Some(t) if !t.is_empty() && before.ends_with(t) => col -= t.len(),
        _ if matches!(e.code, E::IntegerOutOfBounds) => {
            let digits = before
                .bytes()
                .rev()
                .take_while(|b| b.is_ascii_alphanumeric() || b"_+-".contains(b))
                .count();
            col -= digits;
        }
        _ => {}
    }
    let (line, col) = crate::locate::from_ron(src, line, col);
    ParseError::new(line, col, msg)
}

/// The first identifier of a RON document, skipping blanks, comments and
/// `#![enable(..)]` attributes: tells a `Test(..)` from a `Suite(..)` (and,
/// in [`crate::kernel::load`], a `Kernel(..)` from both).
pub fn leading_ident(src: &str) -> &str {
    let mut s = src;
    loop {
        s = s.trim_start();
        if let Some(r) = s.strip_prefix("//") {
            s = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = s.strip_prefix("/*") {
            s = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else if s.starts_with("#!") {
            s = s.find(']').map_or("", |i| &s[i + 1..]);
        } else {
            break;
        }
    }
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// Reads `src` as RON of type `T`: syntax, types and unknown fields only.
fn read_ron<'a, T: Deserialize<'a>>(src: &'a str) -> Result<T, ParseError> {
    ron_options().from_str(src).map_err(|e| ron_error(src, e))
}

/// Checks a test read by [`read_ron`] and builds it, with its `name:`.
fn finish_test(src: &str, raw: RawRonTest) -> Result<(Option<String>, Test), ParseError> {
    if let Some(f) = raw.fault() {
        return Err(f.in_source(src));
    }
    let mut test = Test {
        threads: raw.threads,
    };
    test.normalize();
    Ok((raw.name, test))
}

fn test_document((name, test): (Option<String>, Test)) -> Document {
    Document::Test { name, test }
}

/// Checks a suite read by [`read_ron`] and builds it.
fn finish_suite(src: &str, raw: RawSuite) -> Result<Suite, ParseError> {
    if let Some(f) = raw.fault() {
        return Err(f.in_source(src));
    }
    Ok(raw.into_suite())
}

/// Parses a RON test.
pub fn parse_ron_test(src: &str) -> Result<Test, ParseError> {
    finish_test(src, read_ron(src)?).map(|(_, test)| test)
}

/// Parses a RON suite: with [`crate::axb::fast_ron`] when it handles the text
/// (everything the tools write), else with `ron`, which also reports errors.
pub fn parse_suite(src: &str) -> Result<Suite, ParseError> {
    let raw = match crate::axb::fast_ron::from_str::<RawSuite>(src) {
        Ok(raw) => raw,
        Err(_) => read_ron(src)?,
    };
    finish_suite(src, raw)
}

/// Parses a RON document, a test or a suite: `Test(..)` or `Suite(..)`,
/// or an unnamed `(..)` read as whichever of the two it fits.
pub fn parse_ron(src: &str) -> Result<Document, ParseError> {
    match leading_ident(src) {
        "Suite" => parse_suite(src).map(Document::Suite),
        "Test" => finish_test(src, read_ron(src)?).map(test_document),
        _ => match read_ron::<RawRonTest>(src) {
            Ok(raw) => finish_test(src, raw).map(test_document),
            Err(te) => match read_ron::<RawSuite>(src) {
                // The shape of a suite: its faults are the ones to report.
                Ok(raw) => finish_suite(src, raw).map(Document::Suite),
                // Neither shape: whichever reading got further.
                Err(se) if (se.line, se.col) > (te.line, te.col) => Err(se),
                Err(_) => Err(te),
            },
        },
    }
}

fn pretty() -> ron::ser::PrettyConfig {
    ron::ser::PrettyConfig::new()
        .depth_limit(3)
        .struct_names(true)
        .indentor("  ".to_string())
}

/// A single test as RON.
pub fn test_to_ron(test: &Test) -> String {
    let raw = RawRonTest {
        name: None,
        threads: test.threads.clone(),
    };
    let mut s = ron::Options::default()
        .without_recursion_limit()
        .with_default_extension(Extensions::empty())
        .to_string_pretty(&raw, pretty().depth_limit(2))
        .expect("a test serializes");
    s.push('\n');
    s
}

/// A suite as RON, one test per block.
pub fn suite_to_ron(suite: &Suite) -> String {
    let mut s =
        ron::ser::to_string_pretty(suite, pretty().depth_limit(4)).expect("a suite serializes");
    s.push('\n');
    s
}

/// A test read from somewhere, with the name tools show for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedTest {
    /// The RON test's `name:`, else the file stem, for a single-test file;
    /// the entry name in a suite. Always obeys [`check_name`].
    pub name: String,
    pub entry: Entry,
    /// The file it came from.
    pub source: PathBuf,
}

/// Reads one file: `.ron` (test or suite), `.txt` (artifact format) or
/// `.axb.gz` (a packed suite, [`crate::axb::packed`]; decompressed within the
/// same input limit).
pub fn load_document(path: &Path) -> Result<Document, FileError> {
    if crate::axb::packed::is_packed(path) {
        let limit = max_input_bytes().map_err(|e| FileError::whole(path, e))?;
        let bytes = read_bytes_limited(path, limit)?;
        return crate::axb::packed::parse_packed(&bytes, limit)
            .map(Document::Suite)
            .map_err(|mut e| {
                // The packed reader's bounds (bytes inflated, tests held)
                // follow the input limit, set here.
                if e.msg.contains("the input limit") {
                    e.msg += &format!("; set {MAX_INPUT_ENV} to raise it");
                }
                e.in_file(path)
            });
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext != "ron" && ext != "txt" {
        return Err(not_an_input(
            path,
            "a `.ron` test or suite, a `.txt` test in the artifact format, or a packed `.axb.gz` suite",
        ));
    }
    let src = read_input(path)?;
    parse_document(path, &src)
}

/// Parses the text of a `.ron` or (any other name) `.txt` file already
/// read; errors name the file.
pub fn parse_document(path: &Path, src: &str) -> Result<Document, FileError> {
    let doc = if path.extension().is_some_and(|e| e == "ron") {
        parse_ron(src)
    } else {
        text::parse(src).map(|test| Document::Test { name: None, test })
    };
    doc.map_err(|e| e.in_file(path))
}

/// Reads one file as a list of named tests (one for a test file), in file
/// order.
pub fn load_file(path: &Path) -> Result<Vec<NamedTest>, FileError> {
    named_tests(path, load_document(path)?)
}

/// The tests of a document read from `path`: a single test is named by its
/// `name:` or else by the file name (which must then follow the name rule).
pub fn named_tests(path: &Path, doc: Document) -> Result<Vec<NamedTest>, FileError> {
    Ok(match doc {
        Document::Test { name, test } => {
            let name = match name {
                Some(name) => name,
                None => {
                    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                    check_name(&stem).map_err(|e| {
                        let advice = if path.extension().is_some_and(|e| e == "ron") {
                            "rename the file or give the test a `name:`"
                        } else {
                            "rename the file"
                        };
                        FileError::whole(
                            path,
                            format!(
                                "test name `{}` (from the file name) is not valid: {e}; {advice}",
                                excerpt(&stem)
                            ),
                        )
                    })?;
                    stem.into_owned()
                }
            };
            vec![NamedTest {
                entry: Entry::new(name.clone(), test),
                name,
                source: path.to_path_buf(),
            }]
        }
        Document::Suite(suite) => suite
            .tests
            .into_iter()
            .map(|entry| NamedTest {
                name: entry.name.clone(),
                entry,
                source: path.to_path_buf(),
            })
            .collect(),
    })
}

/// Whether a directory walk reads `path` (by its extension).
fn is_test_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("ron" | "txt")
    ) || crate::axb::packed::is_packed(path)
}

/// Expands paths into the files to read, in order: a file stands for
/// itself; a directory for every `.ron` and `.txt` file below it,
/// recursively (and every packed `.axb.gz` suite), each directory's
/// entries in sorted order. A path that does
/// not exist is an error in the list.
///
/// Within the walk of one path, files and directories are identified by
/// device and inode, so a file reached twice (through a symbolic or hard
/// link, or through a linked directory) is listed once, at its first
/// occurrence, and a symbolic link to a directory already being walked
/// (`ln -s . x`, a link to a parent) is not followed again: the walk always
/// ends. Paths given separately are expanded separately: a file named
/// twice is listed twice, as it was asked for (and the tools that need
/// unique names say so). A `.ron` or `.txt` entry that is not a regular
/// file (a FIFO, a device, a socket) is an error in the list and is never
/// opened.
pub fn expand_paths(paths: &[PathBuf]) -> Vec<Result<PathBuf, FileError>> {
    crate::io::expand_paths_with(paths, is_test_file)
}

/// Loads everything under `paths`, in input order (see [`expand_paths`];
/// a suite's tests in suite order). Bad files do not stop the others: their
/// errors are returned beside the tests that did load.
pub fn load_all(paths: &[PathBuf]) -> (Vec<NamedTest>, Vec<FileError>) {
    let mut tests = Vec::new();
    let mut errors = Vec::new();
    for p in expand_paths(paths) {
        match p.and_then(|p| load_file(&p)) {
            Ok(mut ts) => tests.append(&mut ts),
            Err(e) => errors.push(e),
        }
    }
    (tests, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ron_test_round_trips() {
        let t = text::parse("THREAD0\natomic_exch_branch(0,1,1,0)\nTHREAD1\natomic_store(0,1)\natomic_chk_branch(1,0,END)\n").unwrap();
        let s = test_to_ron(&t);
        assert_eq!(
            parse_ron(&s).unwrap(),
            Document::Test {
                name: None,
                test: t
            }
        );
    }

    #[test]
    fn suite_round_trips() {
        let t = text::parse("THREAD0\natomic_exch_branch(0,1,1,0)\nTHREAD1\natomic_store(0,1)\n")
            .unwrap();
        let suite = Suite {
            name: "s".into(),
            note: String::new(),
            tests: vec![Entry::new("a", t)],
        };
        let s = suite_to_ron(&suite);
        assert_eq!(parse_ron(&s).unwrap(), Document::Suite(suite));
    }

    /// The line:col of an error, and its message.
    fn err(src: &str) -> ((usize, usize), String) {
        let e = parse_ron(src).unwrap_err();
        ((e.line, e.col), e.msg)
    }

    #[test]
    fn unknown_fields_are_refused_where_they_are() {
        // The reproducer: a typo for `exch` read as a test without it.
        let (pos, msg) = err("Test(threads: [[(loc: 0, check: 0, jump: End, exhc: Some(1))]])");
        assert_eq!(pos, (1, 47), "{msg}");
        assert_eq!(msg, "unknown field `exhc` in an instruction; expected one of `loc`, `check`, `jump`, `exch`");
        let (pos, msg) = err("Test(thread: [])");
        assert_eq!(pos, (1, 6), "{msg}");
        assert!(msg.contains("unknown field `thread` in a test"), "{msg}");
        let (pos, msg) = err("Suite(name: \"s\", tsts: [])");
        assert_eq!(pos, (1, 18), "{msg}");
        assert!(msg.contains("in a suite"), "{msg}");
        let (pos, msg) =
            err("Suite(name: \"s\", tests: [\n  (name: \"a\", threads: [[(loc: 0, check: 0, jump: End)]], verdict: {}),\n])");
        assert_eq!(pos, (2, 59), "{msg}");
        assert!(msg.contains("unknown field `verdict`"), "{msg}");
    }

    #[test]
    fn validation_errors_point_at_the_offending_value() {
        let t = |threads: &str| format!("Test(\n  threads: [\n{threads}\n  ],\n)\n");
        let ok = "    [(loc: 0, check: 0, jump: End)],";
        let cases = [
            (
                t("    [(loc: 9, check: 0, jump: End)],"),
                (3, 12),
                "location 9 out of range",
            ),
            (
                t("    [(loc: 0, check: 16, jump: End)],"),
                (3, 22),
                "value 16 out of range",
            ),
            (
                t("    [(loc: 0, check: 0, jump: End, exch: Some(16))],"),
                (3, 42),
                "value 16 out of range",
            ),
            (
                t("    [(loc: 0, check: 0, jump: At(5))],"),
                (3, 31),
                "past END",
            ),
            (
                format!("{}\n    [],", t(ok).trim_end_matches("\n  ],\n)\n")),
                (4, 5),
                "thread 1 has no instruction",
            ),
            (t(&[ok; 9].join("\n")), (11, 5), "9 threads"),
            (
                t(&format!(
                    "    [{}],",
                    ["(loc: 0, check: 0, jump: End)"; 15].join(", ")
                )),
                (3, 440),
                "15 instructions",
            ),
            (
                "Test(threads: [])".to_string(),
                (1, 15),
                "at least one thread",
            ),
        ];
        for (src, pos, want) in cases {
            let src = if src.starts_with("Test(\n") && !src.ends_with(")\n") {
                format!("{src}\n  ],\n)\n")
            } else {
                src
            };
            let (got, msg) = err(&src);
            assert!(msg.contains(want), "{src}\n{msg}");
            assert_eq!(got, pos, "{src}\n{msg}");
        }
    }

    #[test]
    fn suite_faults_point_at_their_test() {
        let entry = |name: &str, body: &str| {
            format!("    (\n      name: \"{name}\",\n      threads: [[{body}]],\n    ),\n")
        };
        let good = "(loc: 0, check: 0, jump: End)";
        let suite =
            |entries: &str| format!("Suite(\n  name: \"s\",\n  tests: [\n{entries}  ],\n)\n");
        // Test 2 (from 0) starts at line 12; its bad location on line 14.
        let src = suite(
            &(entry("a", good) + &entry("b", good) + &entry("c", "(loc: 8, check: 0, jump: End)")),
        );
        let (pos, msg) = err(&src);
        assert_eq!(pos, (14, 24), "{msg}");
        assert!(
            msg.starts_with("test `c`: thread 0 instruction 0: location 8"),
            "{msg}"
        );
        let src = suite(&(entry("a", good) + &entry("a,b", good)));
        let (pos, msg) = err(&src);
        assert_eq!(pos, (9, 13), "{msg}");
        assert!(
            msg.starts_with("test name `a,b` is not valid: character 2 (`,`)"),
            "{msg}"
        );
        let src = suite(&(entry("a", good) + &entry("a", good)));
        let (pos, msg) = err(&src);
        assert_eq!(pos, (9, 13), "{msg}");
        assert_eq!(
            msg,
            "test name `a` is used twice in the suite (first at 5:13)"
        );
        let src = "Suite(name: \"two words\", tests: [])";
        assert_eq!(err(src).0, (1, 13));
        let src = suite(&entry("a", good)).replace(
            "]],\n    ),",
            "]],\n      verdicts: {\"HSA\": P, \"HAS_STRONG\": F},\n    ),",
        );
        let (pos, msg) = err(&src);
        assert_eq!(pos, (7, 28), "{msg}");
        assert!(msg.contains("unknown model `HAS_STRONG`"), "{msg}");
        let src = suite(&entry("a", good))
            .replace("]],\n    ),", "]],\n      duplicate_of: \"z\",\n    ),");
        let (pos, msg) = err(&src);
        assert_eq!(pos, (7, 21), "{msg}");
        assert!(msg.contains("not an earlier test"), "{msg}");
    }

    #[test]
    fn a_ron_test_may_name_itself() {
        let src = "Test(name: \"spin-lock\", threads: [[(loc: 0, check: 0, jump: End, exch: 1)]])";
        match parse_ron(src).unwrap() {
            Document::Test { name, test } => {
                assert_eq!(name.as_deref(), Some("spin-lock"));
                assert_eq!(test.threads[0][0].exch, Some(1));
            }
            d => panic!("{d:?}"),
        }
        // The name obeys the rule, at its position.
        for bad in ["a\\\"b", "a\\nb", "a,b", ""] {
            let src = format!("Test(name: \"{bad}\", threads: [[(loc: 0, check: 0, jump: End)]])");
            let (pos, msg) = err(&src);
            assert_eq!(pos, (1, 12), "{msg}");
            assert!(msg.starts_with("test name `"), "{msg}");
            assert!(!msg.contains('\n'), "{msg}");
        }
    }

    #[test]
    fn ron_errors_quote_little_and_nest_boundedly() {
        let huge = "x".repeat(10_000_000);
        for src in [
            format!("Test(threads: [[(loc: 0, check: 0, jump: End, {huge}: 1)]])"),
            format!("Test(threads: [[(loc: \"{huge}\", check: 0, jump: End)]])"),
            format!("Test(name: \"{huge}\", threads: [[(loc: 0, check: 0, jump: End)]])"),
            format!("{huge}(threads: [])"),
            format!("Test(threads: [[(loc: 0, check: 0, jump: {huge})]])"),
        ] {
            let e = parse_ron(&src).unwrap_err();
            assert!(e.msg.len() < 300, "{}", &e.msg[..300]);
        }
        let open = |c: &str| c.repeat(100_000);
        for deep in [
            format!("Test(threads: {}", open("[")),
            format!(
                "Suite(name: \"s\", tests: [(name: \"a\", threads: {})])",
                open("[")
            ),
        ] {
            // The types bound the depth: a third `[` is a type error at once.
            let e = parse_ron(&deep).unwrap_err();
            let shown = excerpt(&e.to_string());
            assert!(e.msg.contains("expected opening `(`"), "{shown}");
            assert!(e.line == 1 && e.col < 100, "{shown}");
        }
        // Without a leading `Test` or `Suite`, both readings stop at once.
        for deep in [open("["), open("(")] {
            let e = parse_ron(&deep).unwrap_err();
            assert!(e.line == 1 && e.col <= 2, "{e}");
        }
    }

    #[test]
    fn unnamed_documents_report_the_faults_of_the_shape_they_fit() {
        // A test without `Test`, with a bad name: the test's fault, not
        // "unknown field `threads` in a suite".
        let (pos, msg) = err("(name: \"a,b\", threads: [[(loc: 0, check: 0, jump: End)]])");
        assert_eq!(pos, (1, 8), "{msg}");
        assert!(msg.starts_with("test name `a,b`"), "{msg}");
        // A suite without `Suite`, with a bad test deep inside.
        let (pos, msg) = err("(name: \"s\", tests: [(name: \"t\", threads: [[]])])");
        assert_eq!(pos, (1, 43), "{msg}");
        assert!(
            msg.starts_with("test `t`: thread 0 has no instruction"),
            "{msg}"
        );
        // Neither: the reading that got further.
        let (pos, msg) = err("(name: \"s\", tests: [], bogus: 1)");
        assert_eq!(pos, (1, 24), "{msg}");
        assert!(msg.contains("unknown field `bogus` in a suite"), "{msg}");
    }

    #[test]
    fn ron_errors_have_positions() {
        let e = parse_ron("Test(threads: [[(loc: 0, check: 0, jump: Nowhere)]])").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.col > 30, "{e}");
        let e = parse_ron("Test(threads: [[]])").unwrap_err();
        assert!(e.msg.contains("no instruction"), "{e}");
        let e = parse_ron("Test(threads: [[(loc: 0, check: 0, jump: At(5))]])").unwrap_err();
        assert!(e.msg.contains("past END"), "{e}");
        let e = parse_ron("Suite(name: \"x\", tests: [(name: \"a\", threads: [[]])])").unwrap_err();
        assert!(e.msg.contains("test `a`"), "{e}");
    }
}
