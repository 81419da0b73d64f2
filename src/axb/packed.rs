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
/// most `limit` bytes (a small file can inflate enormously).
pub fn parse_packed(compressed: &[u8], limit: u64) -> Result<Suite, ParseError> {
    let gz = flate2::read::GzDecoder::new(compressed);
    let input = std::io::BufReader::new(LimitedRead {
        inner: gz,
        left: limit,
        limit,
    });
    let mut r = Reader::new(input)?;
    let mut tests = Vec::new();
    while let Some((name, test)) = r.next_test()? {
        tests.push(Entry::new(name, test));
    }
    Ok(Suite {
        name: r.name,
        note: r.note,
        tests,
    })
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
