//! Where a value sits in a RON document.
//!
//! The `ron` crate reports syntax and type errors at their position, but it
//! keeps no positions for values it has parsed, so a fault found afterwards
//! (validation: a location out of range, an empty thread, a bad name) would
//! have no place to point at. [`locate`] finds it: given the path of the
//! offending value (`tests[3].threads[1][2].loc`), it walks the source text
//! and returns the line and column where that value starts. The checks
//! (`suite.rs`, `load.rs`) describe what they find as a [`Fault`]: a
//! message and such a path.
//!
//! It only ever runs on text that `ron` has just parsed successfully, so it
//! needs to know RON's lexical structure (strings, raw strings, chars,
//! comments, brackets), not its grammar. It is iterative, so nesting depth
//! cannot overflow the stack, and total: on text it does not understand it
//! stops at the deepest value it found.

use crate::axb::test::{InvalidTest, Thread, MAX_THREADS, MAX_THREAD_LEN};
use crate::error::ParseError;

/// One step of a path into a RON value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// A field of a struct: `(name: value)` or `Name(name: value)`.
    Field(&'a str),
    /// An element of a list or tuple, from 0.
    Index(usize),
    /// The key of a map entry whose key is the string literal `"..."`.
    Key(&'a str),
}

/// The line and column (both from 1; columns count bytes, as `ron`'s do) of
/// the value at `path` in `src`; when the path cannot be followed to the
/// end, of the deepest value on the way (at worst, the document itself).
pub fn locate(src: &str, path: &[Step]) -> (usize, usize) {
    let mut c = Cursor {
        s: src.as_bytes(),
        i: 0,
    };
    c.skip_ws_and_attributes();
    let mut found = c.i;
    for step in path {
        let ok = match *step {
            Step::Field(name) => c.enter_field(name),
            Step::Index(k) => c.enter_index(k),
            Step::Key(k) => c.enter_key(k),
        };
        if !ok {
            break;
        }
        found = c.i;
    }
    line_col(src, found)
}

/// A fault found in a test or suite after parsing (see [`locate`]): the message and the path
/// (from the document's root) of the value it is about; `first` is the path
/// of an earlier value it clashes with (a duplicate name).
#[derive(Clone, Debug)]
pub struct Fault<'a> {
    pub msg: String,
    pub path: Vec<Step<'a>>,
    pub first: Option<Vec<Step<'a>>>,
}

impl Fault<'_> {
    pub fn at<'a>(msg: String, path: Vec<Step<'a>>) -> Fault<'a> {
        Fault {
            msg,
            path,
            first: None,
        }
    }

    /// The error for this fault in `src`, at the value it is about (and
    /// naming where the value it clashes with is).
    pub fn in_source(self, src: &str) -> ParseError {
        let (line, col) = locate(src, &self.path);
        let msg = match &self.first {
            Some(first) => {
                let (l, c) = locate(src, first);
                format!("{} (first at {l}:{c})", self.msg)
            }
            None => self.msg,
        };
        ParseError::new(line, col, msg)
    }
}

/// The path, inside a test value (a struct with a `threads` field), of the
/// value a validation fault is about: the out-of-range field of an
/// instruction, the empty thread, the first instruction or thread too many.
pub fn invalid_test_path(threads: &[Thread], e: &InvalidTest) -> Vec<Step<'static>> {
    use Step::{Field, Index};
    let th = Field("threads");
    match *e {
        InvalidTest::NoThreads => vec![th],
        InvalidTest::TooManyThreads(_) => vec![th, Index(MAX_THREADS)],
        InvalidTest::EmptyThread(t) => vec![th, Index(t)],
        InvalidTest::ThreadTooLong { thread, .. } => vec![th, Index(thread), Index(MAX_THREAD_LEN)],
        InvalidTest::LocOutOfRange { thread, pc, .. } => {
            vec![th, Index(thread), Index(pc), Field("loc")]
        }
        InvalidTest::ValueOutOfRange { thread, pc, value } => {
            let check = threads
                .get(thread)
                .and_then(|th| th.get(pc))
                .is_some_and(|i| i.check == value);
            let field = if check { "check" } else { "exch" };
            vec![th, Index(thread), Index(pc), Field(field)]
        }
        InvalidTest::JumpOutOfRange { thread, pc, .. } => {
            vec![th, Index(thread), Index(pc), Field("jump")]
        }
    }
}

/// Line and column counting, the one rule of every parser that reports
/// positions: `\n`, `\r\n` and a lone `\r` each end one line (issue 20
/// item 11: a file with CR line ends was reported as one long line).
/// Both count from 1; the caller decides whether a column is a byte or a
/// character by what it passes to [`Position::advance`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub col: usize,
    after_cr: bool,
}

impl Default for Position {
    fn default() -> Position {
        Position {
            line: 1,
            col: 1,
            after_cr: false,
        }
    }
}

impl Position {
    /// Moves past one unit of text (a byte or a character).
    pub fn advance(&mut self, c: char) {
        match c {
            // The `\n` of a `\r\n`: the `\r` ended the line.
            '\n' if self.after_cr => self.after_cr = false,
            '\n' | '\r' => {
                self.line += 1;
                self.col = 1;
                self.after_cr = c == '\r';
            }
            _ => {
                self.col += 1;
                self.after_cr = false;
            }
        }
    }
}

/// The line and column (columns in bytes) of byte offset `at`.
pub fn line_col(src: &str, at: usize) -> (usize, usize) {
    let mut p = Position::default();
    for &b in &src.as_bytes()[..at.min(src.len())] {
        // Only the ASCII `\r` and `\n` matter; any other byte is a column.
        p.advance(if b.is_ascii() { b as char } else { '?' });
    }
    (p.line, p.col)
}

/// The lines of `src` by [`Position`]'s rule, without their ends.
pub fn lines(src: &str) -> impl Iterator<Item = &str> {
    let mut rest = (!src.is_empty()).then_some(src);
    std::iter::from_fn(move || {
        let s = rest?;
        match s.find(['\r', '\n']) {
            Some(i) => {
                let end = if s[i..].starts_with("\r\n") {
                    i + 2
                } else {
                    i + 1
                };
                rest = Some(&s[end..]).filter(|r| !r.is_empty());
                Some(&s[..i])
            }
            None => {
                rest = None;
                Some(s)
            }
        }
    })
}

/// The position, by [`Position`]'s rule, of a `ron` error position (whose
/// lines end at `\n` only, columns in bytes).
pub fn from_ron(src: &str, line: usize, col: usize) -> (usize, usize) {
    let start = if line <= 1 {
        0
    } else {
        src.match_indices('\n')
            .nth(line - 2)
            .map_or(src.len(), |(i, _)| i + 1)
    };
    let at = start.saturating_add(col.saturating_sub(1)).min(src.len());
    line_col(src, at)
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn at(&self, k: usize) -> Option<u8> {
        self.s.get(self.i + k).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// Skips whitespace and comments (`//` to the end of the line, `/* */`
    /// nested, as RON has them).
    fn skip_ws(&mut self) {
        loop {
            match (self.peek(), self.at(1)) {
                (Some(b' ' | b'\t' | b'\n' | b'\r'), _) => self.i += 1,
                (Some(b'/'), Some(b'/')) => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.i += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    self.i += 2;
                    let mut depth = 1usize;
                    while depth > 0 {
                        match (self.peek(), self.at(1)) {
                            (None, _) => return,
                            (Some(b'/'), Some(b'*')) => {
                                depth += 1;
                                self.i += 2;
                            }
                            (Some(b'*'), Some(b'/')) => {
                                depth -= 1;
                                self.i += 2;
                            }
                            _ => self.i += 1,
                        }
                    }
                }
                _ => return,
            }
        }
    }

    /// Skips blanks, comments and `#![enable(..)]` attributes before the
    /// document's value.
    fn skip_ws_and_attributes(&mut self) {
        loop {
            self.skip_ws();
            if self.peek() == Some(b'#') && self.at(1) == Some(b'!') {
                self.i += 2;
                self.skip_ws();
                self.skip_group();
            } else {
                return;
            }
        }
    }

    fn is_ident_start(b: u8) -> bool {
        b.is_ascii_alphabetic() || b == b'_'
    }

    fn is_ident_char(b: u8) -> bool {
        b.is_ascii_alphanumeric() || b == b'_'
    }

    /// An identifier (`name`, or the raw `r#name`), if one starts here.
    fn ident(&mut self) -> Option<&[u8]> {
        let start = self.i;
        if self.peek() == Some(b'r') && self.at(1) == Some(b'#') {
            if self.at(2).is_some_and(Self::is_ident_char) {
                self.i += 2;
                let body = self.i;
                while self.peek().is_some_and(Self::is_ident_char) {
                    self.i += 1;
                }
                return Some(&self.s[body..self.i]);
            }
            return None;
        }
        if !self.peek().is_some_and(Self::is_ident_start) {
            return None;
        }
        // `r"..."` and `b"..."` are strings, not identifiers.
        if matches!(self.peek(), Some(b'r' | b'b')) && matches!(self.at(1), Some(b'"' | b'#')) {
            return None;
        }
        while self.peek().is_some_and(Self::is_ident_char) {
            self.i += 1;
        }
        Some(&self.s[start..self.i])
    }

    /// Skips a string literal starting here (`"..."`, `b"..."`, `r#"..."#`).
    fn skip_string(&mut self) -> bool {
        if self.peek() == Some(b'b') {
            self.i += 1;
        }
        if self.peek() == Some(b'r') {
            self.i += 1;
            let mut hashes = 0;
            while self.eat(b'#') {
                hashes += 1;
            }
            if !self.eat(b'"') {
                return false;
            }
            loop {
                match self.peek() {
                    None => return false,
                    Some(b'"') => {
                        self.i += 1;
                        let mut n = 0;
                        while n < hashes && self.peek() == Some(b'#') {
                            self.i += 1;
                            n += 1;
                        }
                        if n == hashes {
                            return true;
                        }
                    }
                    Some(_) => self.i += 1,
                }
            }
        }
        self.skip_quoted(b'"')
    }

    /// Skips a `"..."` or `'.'` literal with backslash escapes.
    fn skip_quoted(&mut self, q: u8) -> bool {
        if !self.eat(q) {
            return false;
        }
        loop {
            match self.peek() {
                None => return false,
                Some(b'\\') => self.i += 2,
                Some(b) if b == q => {
                    self.i += 1;
                    return true;
                }
                Some(_) => self.i += 1,
            }
        }
    }

    /// Skips a bracketed group `(..)`, `[..]` or `{..}` starting here, with
    /// everything nested in it.
    fn skip_group(&mut self) -> bool {
        let mut depth = 0usize;
        loop {
            self.skip_ws();
            match self.peek() {
                None => return false,
                Some(b'(' | b'[' | b'{') => {
                    depth += 1;
                    self.i += 1;
                }
                Some(b')' | b']' | b'}') => {
                    self.i += 1;
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return true;
                    }
                }
                Some(b'"') => {
                    if !self.skip_string() {
                        return false;
                    }
                }
                Some(b'\'') => {
                    if !self.skip_quoted(b'\'') {
                        return false;
                    }
                }
                Some(b'r' | b'b') if matches!(self.at(1), Some(b'"' | b'#')) => {
                    if self.ident().is_none() && !self.skip_string() {
                        return false;
                    }
                }
                Some(b) if Self::is_ident_start(b) => {
                    self.ident();
                }
                Some(_) => self.i += 1,
            }
            if depth == 0 {
                return true;
            }
        }
    }

    /// Skips one value starting here.
    fn skip_value(&mut self) -> bool {
        self.skip_ws();
        match self.peek() {
            None => false,
            Some(b'(' | b'[' | b'{') => self.skip_group(),
            Some(b'"') => self.skip_string(),
            Some(b'\'') => self.skip_quoted(b'\''),
            Some(b'r' | b'b') if matches!(self.at(1), Some(b'"' | b'#')) => {
                self.ident().is_some() || self.skip_string()
            }
            Some(b) if Self::is_ident_start(b) => {
                self.ident();
                let save = self.i;
                self.skip_ws();
                if self.peek() == Some(b'(') {
                    self.skip_group()
                } else {
                    self.i = save;
                    true
                }
            }
            Some(_) => {
                // A number, possibly signed; ends at a delimiter or blank.
                let start = self.i;
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b')' | b']' | b'}' | b':' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.i += 1;
                }
                self.i > start
            }
        }
    }

    /// Skips the comma after an element, if any; false at a closing bracket
    /// or the end.
    fn next_element(&mut self) -> bool {
        self.skip_ws();
        self.eat(b',');
        self.skip_ws();
        !matches!(self.peek(), None | Some(b')' | b']' | b'}'))
    }

    /// At a struct value: moves to the value of field `name`.
    fn enter_field(&mut self, name: &str) -> bool {
        self.skip_ws();
        if self.peek().is_some_and(Self::is_ident_start) {
            self.ident();
            self.skip_ws();
        }
        if !self.eat(b'(') {
            return false;
        }
        self.skip_ws();
        loop {
            if matches!(self.peek(), None | Some(b')')) {
                return false;
            }
            let is_it = self.ident().is_some_and(|k| k == name.as_bytes());
            self.skip_ws();
            if !self.eat(b':') {
                return false;
            }
            self.skip_ws();
            if is_it {
                return true;
            }
            if !self.skip_value() || !self.next_element() {
                return false;
            }
        }
    }

    /// At a list or tuple: moves to element `k`.
    fn enter_index(&mut self, k: usize) -> bool {
        self.skip_ws();
        if !(self.eat(b'[') || self.eat(b'(')) {
            return false;
        }
        self.skip_ws();
        if matches!(self.peek(), None | Some(b']' | b')')) {
            return false;
        }
        for _ in 0..k {
            if !self.skip_value() || !self.next_element() {
                return false;
            }
        }
        true
    }

    /// At a map: moves to the key `"k"`.
    fn enter_key(&mut self, k: &str) -> bool {
        self.skip_ws();
        if !self.eat(b'{') {
            return false;
        }
        self.skip_ws();
        loop {
            if matches!(self.peek(), None | Some(b'}')) {
                return false;
            }
            let start = self.i;
            if !self.skip_value() {
                return false;
            }
            let key = &self.s[start..self.i];
            if key.len() >= 2 && key[0] == b'"' && &key[1..key.len() - 1] == k.as_bytes() {
                self.i = start;
                return true;
            }
            self.skip_ws();
            if !self.eat(b':') || !self.skip_value() || !self.next_element() {
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Step::*;

    const SUITE: &str = r##"#![enable(implicit_some)]
// a comment with ( and "
Suite(
    name: "s",
    note: r#"a raw ") string"#,
    tests: [
        (name: "a", threads: [[(loc: 0, check: 0, jump: At(0), exch: Some(1))]]),
        /* nested /* comment */ ] */
        (
            name: "b",
            threads: [
                [(loc: 0, check: 0, jump: End)],
                [(loc: 1, check: '\'', jump: End), (loc: 9, check: 0, jump: End)],
            ],
            verdicts: {"HSA": P, "BOGUS": F},
        ),
    ],
)
"##;

    #[test]
    fn finds_fields_elements_and_keys() {
        assert_eq!(locate(SUITE, &[]), (3, 1));
        assert_eq!(locate(SUITE, &[Field("name")]), (4, 11));
        assert_eq!(locate(SUITE, &[Field("tests"), Index(0)]), (7, 9));
        let b = [Field("tests"), Index(1)];
        assert_eq!(locate(SUITE, &b), (9, 9));
        assert_eq!(locate(SUITE, &[b[0], b[1], Field("name")]), (10, 19));
        let loc = [
            b[0],
            b[1],
            Field("threads"),
            Index(1),
            Index(1),
            Field("loc"),
        ];
        assert_eq!(locate(SUITE, &loc), (13, 58));
        let key = [b[0], b[1], Field("verdicts"), Key("BOGUS")];
        assert_eq!(locate(SUITE, &key), (15, 34));
    }

    #[test]
    fn stops_at_the_deepest_value_found() {
        let path = [Field("tests"), Index(7), Field("name")];
        assert_eq!(locate(SUITE, &path), (6, 12));
        assert_eq!(locate("", &[Field("x")]), (1, 1));
        assert_eq!(locate("[[[[", &[Index(0), Index(0), Index(9)]), (1, 3));
    }

    /// Issue 20 item 11: `\r`, `\r\n` and `\n` each end one line, in
    /// positions and in line splitting alike.
    #[test]
    fn every_line_end_counts_once() {
        for (src, at, want) in [
            ("a\nb\nc", 4, (3, 1)),
            ("a\rb\rc", 4, (3, 1)),
            ("a\r\nb\r\nc", 6, (3, 1)),
            ("a\r\rb", 3, (3, 1)),
            ("a\n\rb", 3, (3, 1)),
            ("a\r\nxy", 4, (2, 2)),
            ("é\rxy", 4, (2, 2)),
        ] {
            assert_eq!(line_col(src, at), want, "{src:?}");
        }
        let split = |s| lines(s).collect::<Vec<_>>();
        assert_eq!(split("a\rb\r\nc\nd"), ["a", "b", "c", "d"]);
        assert_eq!(split("a\r\r\n"), ["a", ""]);
        assert_eq!(split("a\n"), "a\n".lines().collect::<Vec<_>>());
        assert_eq!(split(""), Vec::<&str>::new());
        assert_eq!(split("\n\nx"), ["", "", "x"]);
        // `ron` counts `\n` only: its (1, 5) in a CR file is line 2.
        assert_eq!(from_ron("ab\rcd\nef", 1, 5), (2, 2));
        assert_eq!(from_ron("ab\rcd\nef", 2, 2), (3, 2));
        assert_eq!(from_ron("ab", 9, 9), (1, 3));
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let deep = "[".repeat(1_000_000);
        assert_eq!(locate(&deep, &[Index(0), Index(3)]), (1, 2));
    }
}
