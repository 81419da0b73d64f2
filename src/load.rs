//! Reading tests from disk: RON tests, RON suites and artifact text files,
//! single files or whole directories, with errors that name file, line and
//! column. Writing RON.

use crate::error::{FileError, ParseError};
use crate::suite::{Entry, Suite};
use crate::test::{Test, Thread};
use crate::text;
use ron::extensions::Extensions;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A single test in RON: `Test(threads: [[(loc: 0, check: 0, jump: End)]])`.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Test")]
struct RawRonTest {
    threads: Vec<Thread>,
}

/// A validated RON test: validation runs inside deserialization so that an
/// invalid test is reported at its position in the file.
#[derive(Deserialize)]
#[serde(try_from = "RawRonTest")]
struct RonTest(Test);

impl TryFrom<RawRonTest> for RonTest {
    type Error = String;
    fn try_from(raw: RawRonTest) -> Result<RonTest, String> {
        let mut test = Test {
            threads: raw.threads,
        };
        test.validate().map_err(|e| e.to_string())?;
        test.normalize();
        Ok(RonTest(test))
    }
}

/// What a file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Document {
    Test(Test),
    Suite(Suite),
}

fn ron_error(e: ron::error::SpannedError) -> ParseError {
    ParseError::new(e.position.line, e.position.col, e.code.to_string())
}

/// The first identifier of a RON document, skipping blanks, comments and
/// `#![enable(..)]` attributes: tells a `Test(..)` from a `Suite(..)`.
fn leading_ident(src: &str) -> &str {
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

/// Parses a RON test.
pub fn parse_ron_test(src: &str) -> Result<Test, ParseError> {
    let t: RonTest = ron::from_str(src).map_err(ron_error)?;
    Ok(t.0)
}

/// Parses a RON suite: with [`crate::fast_ron`] when it handles the text
/// (everything the tools write), else with `ron`, which also reports errors.
pub fn parse_suite(src: &str) -> Result<Suite, ParseError> {
    if let Ok(suite) = crate::fast_ron::from_str(src) {
        return Ok(suite);
    }
    ron::from_str(src).map_err(ron_error)
}

/// Parses a RON document, a test or a suite.
pub fn parse_ron(src: &str) -> Result<Document, ParseError> {
    match leading_ident(src) {
        "Suite" => parse_suite(src).map(Document::Suite),
        "Test" => parse_ron_test(src).map(Document::Test),
        _ => match parse_ron_test(src) {
            Ok(t) => Ok(Document::Test(t)),
            Err(te) => match parse_suite(src) {
                Ok(s) => Ok(Document::Suite(s)),
                // Report whichever reading got further into the file.
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
    /// File stem for a single-test file; the entry name in a suite.
    pub name: String,
    pub entry: Entry,
    /// The file it came from.
    pub source: PathBuf,
}

/// Reads one file: `.ron` (test or suite) or `.txt` (artifact format).
pub fn load_document(path: &Path) -> Result<Document, FileError> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext != "ron" && ext != "txt" {
        return Err(FileError::whole(
            path,
            format!(
                "unknown format `.{ext}`: expected a `.ron` test or suite, or a `.txt` test in the artifact format"
            ),
        ));
    }
    let bytes =
        std::fs::read(path).map_err(|e| FileError::whole(path, format!("cannot read: {e}")))?;
    let src = String::from_utf8(bytes)
        .map_err(|e| FileError::whole(path, format!("not UTF-8 text: {e}")))?;
    let doc = if ext == "ron" {
        parse_ron(&src)
    } else {
        text::parse(&src).map(Document::Test)
    };
    doc.map_err(|e| e.in_file(path))
}

/// Reads one file as a list of named tests (one for a test file).
pub fn load_file(path: &Path) -> Result<Vec<NamedTest>, FileError> {
    Ok(match load_document(path)? {
        Document::Test(test) => {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
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

/// Expands paths into the files to read: a file stands for itself; a
/// directory for every `.ron` and `.txt` file below it, recursively, in
/// sorted order. A path that does not exist is an error in the list.
pub fn expand_paths(paths: &[PathBuf]) -> Vec<Result<PathBuf, FileError>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out);
        } else if p.exists() {
            out.push(Ok(p.clone()));
        } else {
            out.push(Err(FileError::whole(p, "no such file or directory")));
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<Result<PathBuf, FileError>>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            out.push(Err(FileError::whole(
                dir,
                format!("cannot read directory: {e}"),
            )));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            walk(&p, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("ron" | "txt")) {
            out.push(Ok(p));
        }
    }
}

/// Loads everything under `paths`. Bad files do not stop the others: their
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

/// Writes a file atomically: to a temporary file beside it, then renamed
/// over it, so an interrupted run never leaves a half-written file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ron_test_round_trips() {
        let t = text::parse("THREAD0\natomic_exch_branch(0,1,1,0)\nTHREAD1\natomic_store(0,1)\natomic_chk_branch(1,0,END)\n").unwrap();
        let s = test_to_ron(&t);
        assert_eq!(parse_ron(&s).unwrap(), Document::Test(t));
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
