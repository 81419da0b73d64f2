//! Input quoted in messages: a short excerpt, escaped, never the whole of
//! it. A 10 MB line in a journal, a results file or a program's output
//! must give one readable error line, not 10 MB on stderr; a test name
//! with a newline or an escape sequence must not break the line or the
//! terminal it is shown on.

/// How many characters of the input an excerpt shows.
pub const MAX_CHARS: usize = 80;

/// `s` escaped (`\n`, `\"`, `\u{1b}`...) and cut after [`MAX_CHARS`]
/// characters, saying how long the whole was.
pub fn excerpt(s: &str) -> String {
    shown(s, s.len(), true, MAX_CHARS)
}

/// [`excerpt`] cut after 400 characters: a message a program reported
/// (a webgpu page's event), shown whole when it is of a sensible length.
pub fn message(s: &str) -> String {
    shown(s, s.len(), true, 400)
}

/// [`excerpt`] of bytes that may not be UTF-8 (invalid sequences shown as
/// U+FFFD); only the first few hundred bytes are decoded.
pub fn excerpt_bytes(b: &[u8]) -> String {
    let head = &b[..b.len().min(MAX_CHARS * 4)];
    shown(
        &String::from_utf8_lossy(head),
        b.len(),
        head.len() == b.len(),
        MAX_CHARS,
    )
}

/// `s` whole, its unprintable characters escaped (`\n`, `\u{1b}`, the
/// bidirectional overrides: [`progress_litmus::error::printable`], the one rule the
/// three tools share) and nothing else: a name in a report's lines, a
/// message or status line on a terminal or in a log, where it must not
/// break a line or drive the terminal, but `"` or `\\` may stay as they are.
pub fn printable(s: &str) -> String {
    progress_litmus::error::printable(s)
}

/// `s` as XML or HTML text: [`printable`], then markup (`&`, `<`, `>`,
/// `"`) as character references, so that a device or test name cannot open
/// an element or leave an attribute (and control characters, which XML 1.0
/// does not allow, are escapes). The one rule of the report's chart and
/// site; `'` stays as it is (both quote attributes with `"`).
pub fn markup(s: &str) -> String {
    printable(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The first [`MAX_CHARS`] characters of `text` escaped, and the length
/// of the input (`total` bytes) unless they are all of it (`text` is the
/// whole input when `whole`).
fn shown(text: &str, total: usize, whole: bool, max: usize) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    for c in chars.by_ref().take(max) {
        if progress_litmus::error::unprintable(c) {
            out.extend(c.escape_default());
        } else if c == '"' || c == '\\' {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    if chars.next().is_some() || !whole {
        out.push_str(&format!("... ({total} bytes in all)"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_escaped_and_long_input_is_cut() {
        assert_eq!(excerpt("a\"b\nc"), "a\\\"b\\nc");
        let long = "x".repeat(10_000_000);
        let e = excerpt(&long);
        assert!(e.len() < 200, "{e}");
        assert!(e.ends_with("... (10000000 bytes in all)"), "{e}");
        let e = excerpt_bytes(long.as_bytes());
        assert!(
            e.len() < 200 && e.ends_with("(10000000 bytes in all)"),
            "{e}"
        );
        assert_eq!(excerpt_bytes(b"ab\xffc"), "ab\u{fffd}c");
        assert_eq!(excerpt(&"y".repeat(MAX_CHARS)), "y".repeat(MAX_CHARS));
        assert_eq!(printable("a\"b\\c"), "a\"b\\c");
        assert_eq!(printable("a\nb\u{1b}[2J"), "a\\nb\\u{1b}[2J");
        // The bidirectional overrides too, and C1 controls.
        assert_eq!(excerpt("\u{202e}x\u{9b}"), "\\u{202e}x\\u{9b}");
    }
}
