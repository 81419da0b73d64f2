//! Reading tests from disk: RON tests, RON suites and artifact text files,
//! single files or whole directories, with errors that name file, line and
//! column. Writing RON.
//!
//! Everything a tool reads goes through here, so the defences live here
//! once: a directory walk visits each file once and never loops on
//! symbolic links ([`expand_paths`]); only regular files are read, never a
//! FIFO or a device, and none larger than [`max_input_bytes`]
//! ([`read_input`]); RON refuses unknown fields; every fault, validation
//! included, points at its own line and column; every test name obeys
//! [`check_name`]; error messages quote at most a short excerpt of input.

use crate::axb::suite::{Entry, RawSuite, Suite};
use crate::axb::test::{bad_name_msg, check_name, validate_threads, Test, Thread};
use crate::axb::text;
use crate::error::{excerpt, tidy_message, FileError, ParseError};
use crate::locate::{invalid_test_path, Fault, Step};
use ron::extensions::Extensions;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs::Metadata;
use std::io::Read;
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

/// The largest input file read when [`MAX_INPUT_ENV`] is not set: 1 GiB.
///
/// The largest real input is the 2t5i suite, 137 MB of RON; a limit 7 times
/// that leaves room for bigger configurations, while a runaway input (a
/// symbolic link to a huge log, a generated file gone wrong) is refused at
/// once instead of being read into memory, parsed for minutes and then
/// failing. Reading and parsing a suite takes a few times its size in
/// memory, so 1 GiB stays well inside the 24 GiB of the team's machines.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 1 << 30;

/// The environment variable that overrides [`DEFAULT_MAX_INPUT_BYTES`]:
/// a number of bytes, optionally with a binary suffix `K`, `M` or `G`
/// (`AXB_MAX_INPUT_BYTES=4G`). An environment variable rather than a flag so
/// that every tool (oracle, synth, backends) honours the same setting.
pub const MAX_INPUT_ENV: &str = "AXB_MAX_INPUT_BYTES";

/// The input size limit in force: [`MAX_INPUT_ENV`] if set, else
/// [`DEFAULT_MAX_INPUT_BYTES`]; an error message if the variable is not a
/// size.
pub fn max_input_bytes() -> Result<u64, String> {
    match std::env::var(MAX_INPUT_ENV) {
        Err(std::env::VarError::NotPresent) => Ok(DEFAULT_MAX_INPUT_BYTES),
        Err(std::env::VarError::NotUnicode(v)) => Err(format!(
            "{MAX_INPUT_ENV}=`{}` is not a size (bytes, or a number with K, M or G)",
            excerpt(&v.to_string_lossy())
        )),
        Ok(v) => parse_size(&v).ok_or_else(|| {
            format!(
                "{MAX_INPUT_ENV}=`{}` is not a size (bytes, or a number with K, M or G)",
                excerpt(&v)
            )
        }),
    }
}

/// `123`, `64K`, `512M`, `2G` (binary multiples; `KiB`, `MB` and the like
/// read the same).
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..digits].parse().ok()?;
    let shift = match s[digits..].trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// `1 GiB`, `137.4 MiB`, `12 bytes`.
fn show_size(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if n >= size {
            return if n & (size - 1) == 0 {
                format!("{} {unit}", n / size)
            } else {
                format!("{:.1} {unit}", n as f64 / size as f64)
            };
        }
    }
    format!("{n} bytes")
}

/// What kind of non-regular file `m` is, for an error message.
/// What a file that is not a regular one is, for messages: "a directory",
/// "a FIFO (named pipe)", "a character device"... (from metadata that
/// followed links; a symbolic link's own metadata says "not a regular
/// file").
pub fn kind_of(m: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

fn not_regular(path: &Path, m: &Metadata) -> FileError {
    FileError::whole(
        path,
        format!(
            "{}, not a regular file: only regular files are read",
            kind_of(m)
        ),
    )
}

fn too_large(path: &Path, size: u64, limit: u64) -> FileError {
    FileError::whole(
        path,
        format!(
            "{} ({size} bytes) is over the input limit of {} (set {MAX_INPUT_ENV} to raise it)",
            show_size(size),
            show_size(limit)
        ),
    )
}

/// Reads an input file as text, defensively: only a regular file (a FIFO
/// would block, `/dev/zero` never ends), at most [`max_input_bytes`], valid
/// UTF-8 (an error names the line and column of the first bad byte), a
/// leading byte-order mark dropped.
///
/// The file is checked before it is opened (opening a device can have
/// effects of its own), opened without blocking and without becoming a
/// controlling terminal, checked again (it may have been swapped in between)
/// and read through a cap (it may grow while being read).
pub fn read_input(path: &Path) -> Result<String, FileError> {
    let limit = max_input_bytes().map_err(|e| FileError::whole(path, e))?;
    read_input_limited(path, limit)
}

/// [`read_input`] with an explicit size limit in bytes.
pub fn read_input_limited(path: &Path, limit: u64) -> Result<String, FileError> {
    let bytes = read_bytes_limited(path, limit)?;
    let mut text = String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let prefix = std::str::from_utf8(&e.as_bytes()[..good]).unwrap_or("");
        let (line, col) = crate::locate::line_col(prefix, good);
        ParseError::new(line, col, "not UTF-8 text: invalid byte sequence").in_file(path)
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// Opens an input file with the defences of [`read_input`] but no size
/// limit, for readers that stream (`synth merge` reads packed shards line
/// by line): a regular file only, checked before it is opened (a FIFO
/// would block, a device can have effects of its own), opened without
/// blocking and without becoming a controlling terminal, and checked again.
pub fn open_input(path: &Path) -> Result<std::fs::File, FileError> {
    use std::os::unix::fs::OpenOptionsExt;
    let cannot = |e: std::io::Error| FileError::whole(path, format!("cannot read: {e}"));
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    Ok(file)
}

/// The bytes of an input file, with the defences of [`read_input`] but no
/// text decoding (a packed suite is gzip).
pub fn read_bytes_limited(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let cannot = |e: std::io::Error| FileError::whole(path, format!("cannot read: {e}"));
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(path, meta.len(), limit));
    }
    let file = open_input(path)?;
    let meta = file.metadata().map_err(cannot)?;
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, bytes.len() as u64, limit));
    }
    Ok(bytes)
}

/// The rest of an open file (a journal, read through the handle that
/// holds its lock), at most [`max_input_bytes`]: a journal is input like
/// any other, and one grown huge (or forged) must be one error, not
/// memory exhausted.
pub fn read_open_limited(file: &mut impl Read, path: &Path) -> Result<Vec<u8>, FileError> {
    let limit = max_input_bytes().map_err(|e| FileError::whole(path, e))?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::whole(path, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(FileError::whole(
            path,
            format!(
                "over the input limit of {} (set {MAX_INPUT_ENV} to raise it)",
                show_size(limit)
            ),
        ));
    }
    Ok(bytes)
}

/// The error for a path a one-file command cannot read by its name: a
/// directory (where a walk was not asked for: `oracle explain DIR` said
/// "unknown format `.`", issue 20 item 11), a name without an extension,
/// or an extension no reader knows. `expected` lists what is read.
pub fn not_an_input(path: &Path, expected: &str) -> FileError {
    let msg = if path.is_dir() {
        format!("is a directory: this command takes one file, {expected}")
    } else {
        match path.extension().map(|e| e.to_string_lossy()) {
            None => format!("unknown format (no extension): expected {expected}"),
            Some(ext) => format!("unknown format `.{}`: expected {expected}", excerpt(&ext)),
        }
    };
    FileError::whole(path, msg)
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
    expand_paths_with(paths, is_test_file)
}

/// [`expand_paths`] for tools that read more kinds of file: a directory
/// walk lists the files `accept` takes (by name; a file named on the
/// command line is always listed).
pub fn expand_paths_with(
    paths: &[PathBuf],
    accept: fn(&Path) -> bool,
) -> Vec<Result<PathBuf, FileError>> {
    let mut out = Vec::new();
    for p in paths {
        let mut w = Walk {
            seen: HashSet::new(),
            out: Vec::new(),
            accept,
        };
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => w.walk(p, &m),
            Ok(m) => w.file(p, &m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let msg = if p.symlink_metadata().is_ok() {
                    "a symbolic link to nothing"
                } else {
                    "no such file or directory"
                };
                w.out.push(Err(FileError::whole(p, msg)));
            }
            Err(e) => w
                .out
                .push(Err(FileError::whole(p, format!("cannot read: {e}")))),
        }
        out.append(&mut w.out);
    }
    out
}

/// The walk of one path of [`expand_paths`]: what was seen, what was found.
struct Walk {
    /// `(device, inode)` of every directory entered and file listed.
    seen: HashSet<(u64, u64)>,
    out: Vec<Result<PathBuf, FileError>>,
    /// Which files in a directory are inputs.
    accept: fn(&Path) -> bool,
}

impl Walk {
    fn first_visit(&mut self, m: &Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        self.seen.insert((m.dev(), m.ino()))
    }

    /// A file named on the command line, or found in a walk.
    fn file(&mut self, p: &Path, m: &Metadata) {
        if !m.is_file() {
            self.out.push(Err(not_regular(p, m)));
        } else if self.first_visit(m) {
            self.out.push(Ok(p.to_path_buf()));
        }
    }

    /// Walks the directory `root` depth first, entries in sorted order,
    /// with an explicit stack (a deep tree cannot overflow the call stack).
    fn walk(&mut self, root: &Path, m: &Metadata) {
        if !self.first_visit(m) {
            return;
        }
        let mut stack: Vec<std::vec::IntoIter<PathBuf>> = vec![self.entries(root).into_iter()];
        while let Some(top) = stack.last_mut() {
            let Some(p) = top.next() else {
                stack.pop();
                continue;
            };
            // Follows symbolic links: a link is walked as what it names.
            let meta = match std::fs::metadata(&p) {
                Ok(meta) => meta,
                Err(e) => {
                    if (self.accept)(&p) {
                        let msg = if e.kind() == std::io::ErrorKind::NotFound {
                            "a symbolic link to nothing".to_string()
                        } else {
                            format!("cannot read: {e}")
                        };
                        self.out.push(Err(FileError::whole(&p, msg)));
                    }
                    continue;
                }
            };
            if meta.is_dir() {
                if self.first_visit(&meta) {
                    let children = self.entries(&p);
                    stack.push(children.into_iter());
                }
            } else if (self.accept)(&p) {
                self.file(&p, &meta);
            }
        }
    }

    /// The entries of a directory, sorted by name (compared as bytes, not
    /// as paths: a tenth of the cost).
    fn entries(&mut self, dir: &Path) -> Vec<PathBuf> {
        match std::fs::read_dir(dir) {
            Ok(rd) => {
                let mut names: Vec<std::ffi::OsString> =
                    rd.filter_map(|e| e.ok().map(|e| e.file_name())).collect();
                names.sort_unstable();
                names.into_iter().map(|n| dir.join(n)).collect()
            }
            Err(e) => {
                self.out.push(Err(FileError::whole(
                    dir,
                    format!("cannot read directory: {e}"),
                )));
                Vec::new()
            }
        }
    }
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

/// Writes a file atomically: to a temporary file beside it, then renamed
/// over it, so an interrupted run never leaves a half-written file and two
/// processes writing the same output never mix their bytes (the last
/// rename wins whole).
///
/// The temporary file is created exclusively (`O_EXCL`: never through a
/// symbolic link or into someone else's file planted under that name, which
/// matters in a shared directory such as /tmp), flushed to disk before the
/// rename, and removed when anything fails.
///
/// What is already at `path` is respected, never destroyed (see
/// [`write_atomically_with`]): a symbolic link is followed, a character
/// device (`/dev/null`) or a FIFO is written through.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    write_atomically_with(path, |f| f.write_all(bytes))
}

/// [`write_atomically`] for output made piece by piece: `write` fills the
/// temporary file (through a buffer), which then replaces `path`.
///
/// A rename replaces whatever is at its target, so the target is looked at
/// first: a symbolic link is followed (its target is replaced atomically, the
/// link kept: a link to a shared location stays a link); a character device
/// or a FIFO is written through (`-o /dev/null` as root must not turn the
/// system's `/dev/null` into a regular file, and a FIFO's reader must get
/// the bytes); a directory, a block device or a socket is an error; a
/// regular file or nothing gets the atomic replace.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<&std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write;
    let target = output_target(path)?;
    if let Some(m) = std::fs::metadata(&target).ok().filter(|m| !m.is_file()) {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if !(t.is_char_device() || t.is_fifo()) {
            let via = if target == path {
                String::new()
            } else {
                format!(" (the target of the link, {})", target.display())
            };
            return Err(std::io::Error::other(format!(
                "is {}{via}: give a regular file, a character device or a FIFO",
                kind_of(&m)
            )));
        }
        // Written through; no fsync (a device or a pipe has no disk copy).
        let file = std::fs::OpenOptions::new().write(true).open(&target)?;
        let mut w = std::io::BufWriter::new(&file);
        return write(&mut w).and_then(|()| w.flush());
    }
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let (tmp, file) = create_temporary(&target)?;
    let written = {
        let mut w = std::io::BufWriter::new(&file);
        write(&mut w).and_then(|()| w.flush())
    }
    .and_then(|()| file.sync_all())
    .and_then(|()| std::fs::rename(&tmp, &target));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// How many symbolic links an output path may go through (Linux's own
/// limit, `ELOOP`), so a link cycle is an error rather than a hang.
const MAX_LINK_HOPS: usize = 40;

/// The file an output to `path` must land in: `path` with every symbolic
/// link at its end followed (a relative link is relative to its own
/// folder), also when the last link dangles (the output then creates its
/// target, as writing through the link would).
pub fn output_target(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINK_HOPS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINK_HOPS} symbolic links (a cycle?)"
    )))
}

/// A new file `PATH.tmp<pid>[.<n>]` beside `path`, created exclusively.
fn create_temporary(path: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut attempt = 0u32;
    loop {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".tmp{}", std::process::id()));
        if attempt > 0 {
            tmp.push(format!(".{attempt}"));
        }
        let tmp = PathBuf::from(tmp);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1
            }
            Err(e) => return Err(e),
        }
    }
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
    fn sizes_parse() {
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("512 MiB"), Some(512 << 20));
        assert_eq!(parse_size("1.5G"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("99999999999T"), None);
        assert_eq!(show_size(1 << 30), "1 GiB");
        assert_eq!(show_size(137_400_000), "131.0 MiB");
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

    /// A fresh scratch folder for the output tests.
    fn out_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("axb-out-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_output_through_a_symlink_replaces_the_target_and_keeps_the_link() {
        let d = out_dir("link");
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/real"), "old").unwrap();
        // A relative link is relative to its own folder; links may chain.
        std::os::unix::fs::symlink("sub/real", d.join("link1")).unwrap();
        std::os::unix::fs::symlink("link1", d.join("link2")).unwrap();
        write_atomically(&d.join("link2"), b"new").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("sub/real")).unwrap(), "new");
        for l in ["link1", "link2"] {
            let m = std::fs::symlink_metadata(d.join(l)).unwrap();
            assert!(m.file_type().is_symlink(), "{l} was replaced");
        }
        // A dangling link: its target is created.
        std::os::unix::fs::symlink("made", d.join("dangling")).unwrap();
        write_atomically(&d.join("dangling"), b"x").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("made")).unwrap(), "x");
        // A cycle is an error, not a hang.
        std::os::unix::fs::symlink("b", d.join("a")).unwrap();
        std::os::unix::fs::symlink("a", d.join("b")).unwrap();
        let e = write_atomically(&d.join("a"), b"x").unwrap_err();
        assert!(e.to_string().contains("symbolic links"), "{e}");
        // Nothing temporary left beside anything.
        let mut names: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .chain(std::fs::read_dir(d.join("sub")).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["a", "b", "dangling", "link1", "link2", "made", "real", "sub"]
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_output_to_a_fifo_is_written_through() {
        let d = out_dir("fifo");
        let fifo = d.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("SKIPPED: mkfifo is not available");
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_atomically(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_output_to_a_device_is_written_through_and_a_folder_refused() {
        use std::os::unix::fs::FileTypeExt;
        write_atomically(Path::new("/dev/null"), b"gone").unwrap();
        let m = std::fs::symlink_metadata("/dev/null").unwrap();
        assert!(m.file_type().is_char_device(), "/dev/null was replaced");
        if Path::new("/dev/full").exists() {
            let e = write_atomically(Path::new("/dev/full"), b"x").unwrap_err();
            assert_eq!(e.raw_os_error(), Some(28), "{e}"); // ENOSPC
        }
        let d = out_dir("dir");
        let e = write_atomically(&d, b"x").unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        assert!(d.is_dir() && std::fs::read_dir(&d).unwrap().next().is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
