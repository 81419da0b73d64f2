//! Errors that point at a place in an input file.

use std::fmt;
use std::path::{Path, PathBuf};

/// A syntax or validity error at a line and column (both from 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

impl ParseError {
    pub fn new(line: usize, col: usize, msg: impl Into<String>) -> ParseError {
        ParseError {
            line,
            col,
            msg: msg.into(),
        }
    }

    /// Attaches the file the error was found in.
    pub fn in_file(self, path: &Path) -> FileError {
        FileError {
            path: path.to_path_buf(),
            line: self.line,
            col: self.col,
            msg: self.msg,
        }
    }
}

impl fmt::Display for ParseError {
    /// One line whatever the message quotes (see [`FileError`]'s).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, printable(&self.msg))
    }
}

impl std::error::Error for ParseError {}

/// An error in a named file, printed `path:line:col: message` as compilers
/// do, so editors can jump to it. Line 0 means the file as a whole (it could
/// not be read, or its kind is unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    pub path: PathBuf,
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

impl FileError {
    /// An error about the file as a whole.
    pub fn whole(path: &Path, msg: impl Into<String>) -> FileError {
        FileError {
            path: path.to_path_buf(),
            line: 0,
            col: 0,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for FileError {
    /// One line whatever the path or the message holds: their
    /// unprintable characters are escaped. Messages quote their input
    /// through [`excerpt`] or [`tidy_message`] where they are made; this
    /// is the last guard, for a quote that was not (issue 46: a model
    /// name running across lines, a SPIR-V `OpName` with a carriage
    /// return, both found by the fuzzer).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = printable(&self.path.to_string_lossy());
        let msg = printable(&self.msg);
        if self.line == 0 {
            write!(f, "{path}: {msg}")
        } else {
            write!(f, "{path}:{}:{}: {msg}", self.line, self.col)
        }
    }
}

impl std::error::Error for FileError {}

/// At most this many characters of input are quoted in an error message:
/// enough to recognise the offending text, never a whole 10 MB line.
pub const EXCERPT_CHARS: usize = 40;

/// Whether `c` must not reach a terminal, a log or a page raw: the control
/// characters C0, DEL and C1 (a newline would break the one-line error
/// format and forge a status line after it, an escape sequence would drive
/// the terminal: set its title, clear lines), the Unicode line and
/// paragraph separators, and the bidirectional marks and overrides that
/// reorder the text around them. The one rule of the three tools: every
/// string read from an input (a message, a device name, a path, a comment)
/// goes through [`printable`] or [`excerpt`] before it is shown.
pub fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// A short printable excerpt of input for an error message: at most
/// [`EXCERPT_CHARS`] characters, control characters escaped (`\n`,
/// `\u{1b}`), and `…` where the text was cut.
pub fn excerpt(s: &str) -> String {
    let mut out = String::new();
    for (shown, c) in s.chars().enumerate() {
        if shown == EXCERPT_CHARS {
            out.push('…');
            break;
        }
        if unprintable(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A message from a parser library made safe to print on one line:
/// quoted runs (between backticks or double quotes) longer than
/// [`EXCERPT_CHARS`] are cut with [`excerpt`], control characters are
/// escaped, and the whole is capped, so that an error never echoes a huge
/// or hostile piece of input.
pub fn tidy_message(msg: &str) -> String {
    const MAX: usize = 400;
    let mut out = String::new();
    let mut rest = msg;
    while let Some(open) = rest.find(['`', '"']) {
        let q = rest.as_bytes()[open] as char;
        out.push_str(&printable(&rest[..=open]));
        let inner = &rest[open + 1..];
        match inner.find(q) {
            Some(close) => {
                out.push_str(&excerpt(&inner[..close]));
                out.push(q);
                rest = &inner[close + 1..];
            }
            None => {
                out.push_str(&excerpt(inner));
                rest = "";
            }
        }
    }
    out.push_str(&printable(rest));
    if out.chars().count() > MAX {
        out = out.chars().take(MAX).collect();
        out.push('…');
    }
    out
}

/// `s` with its [`unprintable`] characters escaped visibly (`\n`,
/// `\u{1b}`, `\u{202e}`), uncut: for file names in messages, and for every
/// line a tool prints to a terminal or a log (a name or a message read from
/// a file may hold a newline or an escape sequence).
pub fn printable(s: &str) -> String {
    if !s.chars().any(unprintable) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unprintable(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `s` as HTML text or an attribute value: markup (`<`, `>`, `&`, `"`,
/// `'`) as character references, so that text read from a file cannot
/// open an element or leave an attribute, and [`unprintable`] characters
/// escaped as [`printable`] does.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in printable(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The exit-status paragraph of every `--help` of the three tools, in one
/// form: `Exit status: 0 success; 2 bad input or usage (BAD); 1 anything
/// else (OTHER).` Each tool fills in what counts as what for it; the words
/// and their order are the same everywhere (checked by
/// `synth/tests/interface.rs`, which walks every command of the three).
pub fn exit_status_help(bad_input: &str, other: &str) -> String {
    format!(
        "Exit status: 0 success; 2 bad input or usage ({bad_input}); 1 anything else ({other})."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_short_and_printable() {
        assert_eq!(excerpt("abc"), "abc");
        let long = "x".repeat(10_000_000);
        let e = excerpt(&long);
        assert_eq!(e.chars().count(), EXCERPT_CHARS + 1);
        assert!(e.ends_with('…'));
        assert_eq!(excerpt("a\nb\u{1b}[2J"), "a\\nb\\u{1b}[2J");
        assert_eq!(excerpt("\u{202e}evil"), "\\u{202e}evil");
    }

    #[test]
    fn printable_escapes_c0_del_c1_separators_and_bidi() {
        let hostile =
            "a\n imported 9999 runs\u{1b}]0;pwned\u{7}\u{7f}\u{9b}2J\u{2028}\u{2067}\u{61c}z";
        assert_eq!(
            printable(hostile),
            "a\\n imported 9999 runs\\u{1b}]0;pwned\\u{7}\\u{7f}\\u{9b}2J\\u{2028}\\u{2067}\\u{61c}z"
        );
        assert!(!printable(hostile).chars().any(unprintable));
        assert_eq!(printable("plain é ü"), "plain é ü");
        assert_eq!(
            html_escape("<a href='x'>\"&\"</a>\u{1b}"),
            "&lt;a href=&#39;x&#39;&gt;&quot;&amp;&quot;&lt;/a&gt;\\u{1b}"
        );
    }

    #[test]
    fn tidy_messages_cut_quoted_runs() {
        let field = "e".repeat(100_000);
        let msg = format!("Unexpected field named `{field}` in `AXB`, expected `loc`");
        let t = tidy_message(&msg);
        assert!(t.len() < 200, "{t}");
        assert!(t.starts_with("Unexpected field named `eeee"), "{t}");
        assert!(t.ends_with("in `AXB`, expected `loc`"), "{t}");
        assert_eq!(
            tidy_message("invalid type: string \"a\nb\", expected u8"),
            "invalid type: string \"a\\nb\", expected u8"
        );
        assert!(tidy_message(&"z".repeat(5000)).chars().count() <= 401);
    }
}
