//! JSON text safe to show: the one escape every JSON output of the three
//! tools goes through (adversarial finding 12).
//!
//! serde_json escapes only the characters below U+0020 inside strings, so
//! the C1 controls (U+0080..U+009F: U+009B is a CSI that a terminal in
//! UTF-8 acts on), DEL, the line and paragraph separators and the bidi
//! marks of a device name or a file path went out raw in every `--format
//! json`, while the text outputs escape them ([`crate::error::printable`]).
//! [`escape_unprintable`] writes each character that
//! [`crate::error::unprintable`] flags as a `\uXXXX` escape (a surrogate
//! pair above U+FFFF). The result is the same JSON value: outside strings
//! JSON text holds only ASCII punctuation, literals and whitespace, so
//! such a character can only be inside a string, where the escape means
//! the same character.
//!
//! The crate has no JSON serializer of its own; `oracle::json` serializes
//! with serde_json and then calls this, and the tools use that.

use crate::error::unprintable;
use std::fmt::Write as _;

/// `json` (JSON text as serde_json writes it) with every character that
/// [`unprintable`] flags, other than the whitespace between tokens, written
/// as a `\uXXXX` escape.
pub fn escape_unprintable(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        // C0 controls are escaped inside strings by every JSON writer;
        // raw, they are the layout between tokens (newlines of pretty
        // output), which must stay.
        if (c as u32) < 0x20 || !unprintable(c) {
            out.push(c);
            continue;
        }
        let mut units = [0u16; 2];
        for u in c.encode_utf16(&mut units) {
            let _ = write!(out, "\\u{:04x}", u);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unprintable_characters_become_escapes_and_the_rest_stays() {
        let text = "[\n  \"csi\u{9b}31m \u{85}nel \u{7f}del \u{2028}ls \u{202e}rlo é ok\"\n]";
        assert_eq!(
            escape_unprintable(text),
            "[\n  \"csi\\u009b31m \\u0085nel \\u007fdel \\u2028ls \\u202erlo é ok\"\n]"
        );
        assert_eq!(escape_unprintable("{\"a\":1}"), "{\"a\":1}");
    }
}
