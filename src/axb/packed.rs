//! The packed suite format (`.axb.gz`): one line per test, gzip'd.
//!
//! Why a second format: the 6-instruction configurations hold millions of
//! tests. As RON a test takes about 330 bytes (2t5i: 137 MB for 416,280
//! tests), and reading RON needs the whole file in memory at once. A packed
//! test is one short line (`2t3i_0<TAB>000- 000100.1`, about 25 bytes before
//! compression, a few after), and a reader or `synth merge` goes through it
//! line by line in constant memory. Plain text inside gzip, rather than a
//! binary encoding, so `zcat` and `grep` still work on it, and so the reader
//! is a few lines of code that report errors at `file:line:col`.
//!
//! The file, after decompression:
//!
//! ```text
//! axb-packed 1
//! suite 2t3i
//! note synth: every test of 2 threads, 3 instructions, ...
//! 2t3i_0<TAB>000- 000100.1
//! ```
//!
//! A test line is the test's name, a tab, and its threads separated by
//! single spaces; a thread is its instructions, four characters each:
//! location (hex digit), check value (hex digit), jump (hex digit of the
//! target pc, or `.` for END), exchange value (hex digit, or `-` for
//! none). Only names and tests are stored: a labelled suite (verdicts,
//! idioms) stays RON.
//!
//! Reading defends against what gzip makes easy ([`decoder`],
//! [`parse_packed`]): every gzip member is read (`bgzip` writes many, and
//! a reader that stopped at the first would return a silent prefix); a
//! second `axb-packed` header inside the text (`cat a.axb.gz b.axb.gz`) is
//! an error at its line; a suite read whole is bounded both in inflated
//! bytes and in tests held ([`max_tests`]), since a file of a few hundred
//! kilobytes can inflate to hundreds of megabytes of one-instruction
//! tests; and test names are unique within a suite, as in a RON suite.

use crate::axb::suite::{Entry, Suite};
use crate::axb::test::{bad_name_msg, check_name, validate_threads, Instr, Target, Test};
use crate::error::{excerpt, ParseError};
use std::io::{BufRead, Write};

/// The file name ending that marks a packed suite.
pub const EXT: &str = ".axb.gz";

/// The first line of every packed suite (the format's version).
const MAGIC: &str = "axb-packed 1";

/// Whether `path` names a packed suite (by its ending [`EXT`]).
pub fn is_packed(path: &std::path::Path) -> bool {
    path.to_str().is_some_and(|p| p.ends_with(EXT))
}

/// The decompressor of every packed-suite reader: all gzip members in
/// turn. `bgzip`, `pigz --independent` and `cat a.gz b.gz` write several
/// members, and a single-member decoder stops silently at the end of the
/// first (50 of 176 tests, no error). Bytes after the last member that are
/// not another member are an error, never ignored.
pub fn decoder<R: std::io::Read>(compressed: R) -> flate2::read::MultiGzDecoder<R> {
    flate2::read::MultiGzDecoder::new(compressed)
}

/// Bytes of the input limit per test held when a packed suite is read
/// whole (see [`max_tests`]).
pub const BYTES_PER_TEST: u64 = 256;

/// The most tests a packed suite read whole may hold under an input limit
/// of `limit` bytes: one per [`BYTES_PER_TEST`] bytes (4,194,304 at the
/// default 1 GiB, about 1.2 GB held at the peak), about as many as a RON
/// suite at the limit holds (a synthesized RON test is about 330 bytes),
/// so a packed suite costs no more memory than a RON one. Without the
/// bound, a 814 KB file of one-instruction tests inflated to 400 MiB,
/// within the byte limit, and its 60 million tests took the oracle to 5 GB
/// and an abort (a test held costs about 280 bytes at the peak: 16,777,216
/// took 4.7 GB). Every complete suite of up to 5 instructions fits (2t5i:
/// 416,280 tests); a 6-instruction one (millions) is merged and read
/// streaming (`synth merge`), or needs `AXB_MAX_INPUT_BYTES` raised.
pub fn max_tests(limit: u64) -> u64 {
    limit / BYTES_PER_TEST
}

fn hex(v: u8) -> char {
    char::from_digit(v as u32, 16).expect("values and locations are below 16")
}

/// One test in the packed line form (without its name).
pub fn test_to_line(test: &Test) -> String {
    let mut s = String::with_capacity(5 * test.threads.iter().map(Vec::len).sum::<usize>());
    for (t, th) in test.threads.iter().enumerate() {
        if t > 0 {
            s.push(' ');
        }
        for i in th {
            s.push(hex(i.loc));
            s.push(hex(i.check));
            s.push(match i.jump {
                Target::At(j) => hex(j),
                Target::End => '.',
            });
            s.push(i.exch.map_or('-', hex));
        }
    }
    s
}

/// Reads the test part of a line (see [`test_to_line`]); `col` is the
/// 1-based column where it starts, for errors.
pub fn parse_test(s: &str, line: usize, col: usize) -> Result<Test, ParseError> {
    let mut threads = Vec::new();
    let mut at = col;
    for word in s.split(' ') {
        let b = word.as_bytes();
        if b.is_empty() || b.len() % 4 != 0 {
            return Err(ParseError::new(
                line,
                at,
                format!(
                    "thread `{}`: expected 4 characters per instruction",
                    excerpt(word)
                ),
            ));
        }
        let mut th = Vec::with_capacity(b.len() / 4);
        for (k, c) in b.chunks(4).enumerate() {
            let digit = |n: usize, what: &str| {
                (c[n] as char).to_digit(16).map(|d| d as u8).ok_or_else(|| {
                    ParseError::new(
                        line,
                        at + 4 * k + n,
                        format!("expected a hex digit for the {what}"),
                    )
                })
            };
            let loc = digit(0, "location")?;
            let check = digit(1, "check value")?;
            let jump = if c[2] == b'.' {
                Target::End
            } else {
                Target::At(digit(2, "jump (or `.` for END)")?)
            };
            let exch = if c[3] == b'-' {
                None
            } else {
                Some(digit(3, "exchange value (or `-` for none)")?)
            };
            th.push(Instr {
                loc,
                check,
                jump,
                exch,
            });
        }
        threads.push(th);
        at += word.len() + 1;
    }
    validate_threads(&threads).map_err(|e| ParseError::new(line, col, e.to_string()))?;
    Ok(Test { threads })
}

/// Writes a packed suite test by test, so a suite of millions of tests
/// never has to be in memory at once.
pub struct Writer<W: Write> {
    gz: flate2::write::GzEncoder<W>,
}

impl<W: Write> Writer<W> {
    /// Starts a suite `name` with `note` (one line: newlines become spaces).
    pub fn new(out: W, name: &str, note: &str) -> std::io::Result<Writer<W>> {
        // Level 6: within a few percent of level 9's size at a third of the
        // time.
        let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::new(6));
        writeln!(
            gz,
            "{MAGIC}\nsuite {name}\nnote {}",
            note.replace('\n', " ")
        )?;
        Ok(Writer { gz })
    }

    /// Appends one test.
    pub fn push(&mut self, name: &str, test: &Test) -> std::io::Result<()> {
        writeln!(self.gz, "{name}\t{}", test_to_line(test))
    }

    /// Ends the gzip stream and returns the writer.
    pub fn finish(self) -> std::io::Result<W> {
        self.gz.finish()
    }
}

/// The whole packed form of `suite` (names and tests only).
pub fn suite_to_packed(suite: &Suite) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), &suite.name, &suite.note).expect("writing to memory");
    for e in &suite.tests {
        w.push(&e.name, &e.test).expect("writing to memory");
    }
    w.finish().expect("writing to memory")
}

/// Reads a packed suite test by test: its header on opening, then one
/// `(name, test)` per [`Reader::next_test`], with errors at their line.
pub struct Reader<R: BufRead> {
    input: R,
    pub name: String,
    pub note: String,
    line: usize,
    buf: String,
}

impl<R: BufRead> Reader<R> {
    /// Reads the header of a packed suite from its decompressed bytes.
    pub fn new(mut input: R) -> Result<Reader<R>, ParseError> {
        let mut header = Vec::new();
        for (n, field) in [(1, ""), (2, "suite "), (3, "note ")] {
            let mut l = String::new();
            read_line(&mut input, &mut l, n)?;
            let l = l.strip_suffix('\n').unwrap_or(&l).to_string();
            if n == 1 {
                if l != MAGIC {
                    return Err(ParseError::new(
                        1,
                        1,
                        format!("not a packed suite: the first line is not `{MAGIC}`"),
                    ));
                }
                continue;
            }
            let v = l.strip_prefix(field).ok_or_else(|| {
                ParseError::new(n, 1, format!("expected `{}...`", field.trim_end()))
            })?;
            header.push(v.to_string());
        }
        let note = header.pop().unwrap_or_default();
        let name = header.pop().unwrap_or_default();
        if let Err(e) = check_name(&name) {
            return Err(ParseError::new(2, 7, bad_name_msg("suite", &name, &e)));
        }
        Ok(Reader {
            input,
            name,
            note,
            line: 3,
            buf: String::new(),
        })
    }

    /// The line number of the test last read.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The next test, `None` at the end.
    pub fn next_test(&mut self) -> Result<Option<(String, Test)>, ParseError> {
        self.buf.clear();
        self.line += 1;
        if read_line(&mut self.input, &mut self.buf, self.line)? == 0 {
            return Ok(None);
        }
        let l = self.buf.strip_suffix('\n').ok_or_else(|| {
            ParseError::new(self.line, 1, "the last line is cut short (no newline)")
        })?;
        if l == MAGIC {
            return Err(ParseError::new(
                self.line,
                1,
                "a second packed suite starts here (two files joined, as `cat a.axb.gz b.axb.gz` does): give them separately, or join shards with `synth merge`",
            ));
        }
        let (name, test) = l.split_once('\t').ok_or_else(|| {
            ParseError::new(
                self.line,
                1,
                format!("expected `<name><TAB><test>`, found `{}`", excerpt(l)),
            )
        })?;
        check_name(name)
            .map_err(|e| ParseError::new(self.line, 1, bad_name_msg("test", name, &e)))?;
        let test = parse_test(test, self.line, name.len() + 2)?;
        Ok(Some((name.to_string(), test)))
    }
}

/// One line, at most 64 KiB (a test line is under 1 KiB): a corrupt file
/// cannot make the reader swallow gigabytes looking for a newline.
fn read_line<R: BufRead>(
    input: &mut R,
    buf: &mut String,
    line: usize,
) -> Result<usize, ParseError> {
    const MAX_LINE: u64 = 1 << 16;
    let n = std::io::Read::take(&mut *input, MAX_LINE)
        .read_line(buf)
        .map_err(|e| ParseError::new(line, 1, format!("cannot read: {e}")))?;
    if n as u64 == MAX_LINE && !buf.ends_with('\n') {
        return Err(ParseError::new(line, 1, "line longer than 64 KiB"));
    }
    Ok(n)
}

/// A packed suite read whole from its compressed bytes, decompressing at
/// most `limit` bytes and holding at most [`max_tests`]`(limit)` tests (a
/// small file can inflate enormously). A test name used twice is an error
/// at its line naming the first, as in a RON suite: every tool reads
/// packed suites through here, so they all apply the one rule.
pub fn parse_packed(compressed: &[u8], limit: u64) -> Result<Suite, ParseError> {
    let input = std::io::BufReader::new(LimitedRead::new(decoder(compressed), limit));
    let mut r = Reader::new(input)?;
    let most = max_tests(limit);
    let mut tests = Vec::new();
    while let Some((name, test)) = r.next_test()? {
        if tests.len() as u64 >= most {
            return Err(ParseError::new(
                r.line(),
                1,
                format!(
                    "more than {most} tests: a packed suite is read whole with at most one test per {BYTES_PER_TEST} bytes of the input limit ({limit} bytes)"
                ),
            ));
        }
        tests.push(Entry::new(name, test));
    }
    if let Some((first, again)) = first_repeated_name(&tests) {
        return Err(ParseError::new(
            again + HEADER_LINES + 1,
            1,
            format!(
                "test name `{}` is used twice in the suite (first at line {})",
                tests[again].name,
                first + HEADER_LINES + 1
            ),
        ));
    }
    Ok(Suite {
        name: r.name,
        note: r.note,
        tests,
    })
}

/// The lines before the first test: magic, `suite`, `note`.
const HEADER_LINES: usize = 3;

/// The first test (in file order) whose name an earlier test already has,
/// as `(index of the earlier, index of the repeat)`. By sorting indices
/// rather than hashing names: 8 bytes a test, not a second copy of every
/// name, for suites of millions of tests.
fn first_repeated_name(tests: &[Entry]) -> Option<(usize, usize)> {
    let mut order: Vec<usize> = (0..tests.len()).collect();
    order.sort_unstable_by(|&a, &b| tests[a].name.cmp(&tests[b].name).then(a.cmp(&b)));
    order
        .windows(2)
        .filter(|w| tests[w[0]].name == tests[w[1]].name)
        .map(|w| (w[0], w[1]))
        .min_by_key(|&(_, again)| again)
}

/// A reader that fails once more than `limit` bytes came through.
pub struct LimitedRead<R> {
    pub inner: R,
    pub left: u64,
    pub limit: u64,
}

impl<R: std::io::Read> LimitedRead<R> {
    pub fn new(inner: R, limit: u64) -> LimitedRead<R> {
        LimitedRead {
            inner,
            left: limit,
            limit,
        }
    }
}

impl<R: std::io::Read> std::io::Read for LimitedRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            let mut one = [0u8];
            return match self.inner.read(&mut one)? {
                0 => Ok(0),
                _ => Err(std::io::Error::other(format!(
                    "decompresses to more than the input limit of {} bytes",
                    self.limit
                ))),
            };
        }
        let cap = buf.len().min(self.left as usize);
        let n = self.inner.read(&mut buf[..cap])?;
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let t = crate::axb::text::parse(
            "THREAD0\natomic_chk_branch(1,0,0)\natomic_exch_branch(0,1,0,1)\nTHREAD1\natomic_store(1,1)\n",
        )
        .unwrap();
        let suite = Suite {
            name: "s".into(),
            note: "a\nnote".into(),
            tests: vec![Entry::new("s_0", t.clone()), Entry::new("s_1", t.clone())],
        };
        let bytes = suite_to_packed(&suite);
        let back = parse_packed(&bytes, 1 << 20).unwrap();
        assert_eq!(back.note, "a note");
        assert_eq!(back.tests.len(), 2);
        assert_eq!(back.tests[1].test, t);
        assert_eq!(back.tests[1].name, "s_1");
        assert!(parse_packed(&bytes, 20).is_err());
    }

    /// A packed suite of `n` one-instruction tests named `s_0..`, gzip'd
    /// as `members` members (the lines dealt out in order, as `bgzip`
    /// cuts a file into blocks).
    fn packed_in_members(n: usize, members: usize) -> Vec<u8> {
        let mut text = format!("{MAGIC}\nsuite s\nnote n\n");
        for k in 0..n {
            text += &format!("s_{k}\t00.-\n");
        }
        let cut = text.len().div_ceil(members);
        let mut out = Vec::new();
        for chunk in text.as_bytes().chunks(cut) {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(chunk).unwrap();
            out.extend(gz.finish().unwrap());
        }
        out
    }

    /// Regression (issue 20 item 4): a multi-member gzip file (`bgzip`,
    /// `cat a.gz b.gz`) was read up to its first member only, a silent
    /// prefix with exit 0.
    #[test]
    fn every_gzip_member_is_read() {
        let suite = parse_packed(&packed_in_members(176, 4), 1 << 20).unwrap();
        assert_eq!(suite.tests.len(), 176);
        assert_eq!(suite.tests[175].name, "s_175");
        // Trailing bytes that are not a gzip member are an error.
        let mut bytes = packed_in_members(10, 1);
        bytes.extend(b"garbage after the last member");
        assert!(parse_packed(&bytes, 1 << 20).is_err());
    }

    /// Regression (issue 20 item 4): two packed suites joined by `cat`.
    #[test]
    fn a_second_suite_in_the_stream_is_an_error_at_its_header() {
        let mut bytes = packed_in_members(5, 1);
        bytes.extend(packed_in_members(5, 1));
        let e = parse_packed(&bytes, 1 << 20).unwrap_err();
        assert_eq!((e.line, e.col), (9, 1), "{e}");
        assert!(e.msg.contains("a second packed suite starts here"), "{e}");
    }

    /// Regression (issue 20 item 4): a gzip bomb of one-instruction tests,
    /// within the byte limit, held tests until memory ran out. The count
    /// bound refuses it at the first test too many, naming the line.
    #[test]
    fn tests_held_are_bounded_by_the_input_limit() {
        let limit = 256 * 1000;
        let n = max_tests(limit) as usize;
        assert_eq!(n, 1000);
        // 7 bytes a line: far fewer bytes than the limit, too many tests.
        parse_packed(&packed_in_members(n, 1), limit).unwrap();
        let e = parse_packed(&packed_in_members(n + 1, 1), limit).unwrap_err();
        assert_eq!(e.line, n + 4, "{e}");
        assert!(e.msg.contains("more than 1000 tests"), "{e}");
        assert!(e.msg.contains("the input limit (256000 bytes)"), "{e}");
        assert_eq!(max_tests(crate::io::DEFAULT_MAX_INPUT_BYTES), 1 << 22);
    }

    /// Regression (issue 20 item 4): duplicate names were accepted here and
    /// refused by `backends`; the one rule is a RON suite's: refused, at the
    /// repeat, naming the first.
    #[test]
    fn a_test_name_used_twice_is_refused_naming_both_lines() {
        let mut w = Writer::new(Vec::new(), "s", "n").unwrap();
        for name in ["a", "b", "c", "b", "a"] {
            w.gz.write_all(format!("{name}\t00.-\n").as_bytes())
                .unwrap();
        }
        let e = parse_packed(&w.finish().unwrap(), 1 << 20).unwrap_err();
        assert_eq!((e.line, e.col), (7, 1), "{e}");
        assert!(
            e.msg
                .contains("test name `b` is used twice in the suite (first at line 5)"),
            "{e}"
        );
    }

    #[test]
    fn errors_point_at_line_and_column() {
        let mut w = Writer::new(Vec::new(), "s", "n").unwrap();
        w.gz.write_all(b"s_0\t00.- 0z.-\n").unwrap();
        let e = parse_packed(&w.finish().unwrap(), 1 << 20).unwrap_err();
        assert_eq!((e.line, e.col), (4, 11), "{e}");
        let mut w = Writer::new(Vec::new(), "s", "n").unwrap();
        w.gz.write_all(b"s_0\tc0.-\n").unwrap();
        let e = parse_packed(&w.finish().unwrap(), 1 << 20).unwrap_err();
        assert!(e.msg.contains("location"), "{e}");
    }
}
