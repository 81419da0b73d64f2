//! Serializing to JSON text for every output of the three tools: printed
//! (`--format json`), written (`-o`, device files, manifests, pages) or
//! kept in journals that are read back and shown. serde_json, then
//! [`progress_litmus::json::escape_unprintable`]: no C1 control, DEL,
//! line separator or bidi mark of an input reaches a terminal raw through
//! JSON, and the text parses back to the same value.
//!
//! `tests/layout.rs` checks that no crate's code calls serde_json's
//! writers other than here.

use progress_litmus::json::escape_unprintable;
use serde::Serialize;

/// Compact JSON text of `value` (as `serde_json::to_string`), escaped.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string(value).map(|s| escape_unprintable(&s))
}

/// Pretty JSON text of `value` (as `serde_json::to_string_pretty`), escaped.
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(value).map(|s| escape_unprintable(&s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn unprintable_characters_round_trip_and_none_is_left_raw() {
        let value = json!({
            "device": "csi\u{9b}31mX",
            "label": "\u{9b}2J\u{9d}0;pwned\u{9c}",
            "host": "\u{85}nel \u{7f} \u{2028}\u{2029} \u{202e}\u{2066}\u{61c}",
            "plain": "é ü 日本 \u{1f600}",
            "nested": [{"k\u{9b}": "v\u{200f}"}],
        });
        for text in [
            to_string(&value).unwrap(),
            to_string_pretty(&value).unwrap(),
        ] {
            assert!(
                !text.contains(
                    |c: char| (c as u32) >= 0x20 && progress_litmus::error::unprintable(c)
                ),
                "{text:?}"
            );
            assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
        }
    }
}
