//! JSON read from files this toolchain did not write itself (run lines of
//! a device, `--info` lines, journals, device files): a key given twice in
//! one object is an error, never a silent choice.
//!
//! `serde_json::Value` keeps the last of a repeated key (`{"test": "a",
//! "test": "b"}` reads as test `b`), and a derived struct refuses only its
//! own fields given twice, not the keys of a `Value` or a map inside it.
//! [`parse`] and [`strict_value`] (for `#[serde(deserialize_with)]`) read
//! a value at every depth and refuse the second occurrence of a key,
//! naming it and where it is.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Why [`parse`] refused a text.
#[derive(Debug)]
pub enum Error {
    /// Not JSON at all (serde_json's message, with line and column).
    Syntax(serde_json::Error),
    /// An object gives `key` twice; the line and column (from 1) are
    /// just after its second occurrence.
    Duplicate {
        key: String,
        line: usize,
        column: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Syntax(e) => write!(f, "not JSON ({e})"),
            Error::Duplicate { key, line, column } => write!(
                f,
                "{BEFORE}{key}{AFTER} (line {line}, column {column}): keep one"
            ),
        }
    }
}

/// The two halves of a duplicate key's message inside serde's error
/// (which adds " at line L column C"); [`parse`] turns it back into
/// [`Error::Duplicate`]. The only data error that building a `Value` can
/// raise, so it is told from a syntax error by its category.
const BEFORE: &str = "the key `";
const AFTER: &str = "` is given twice in one object";

/// `text` as one JSON value, refusing a key given twice in any object.
pub fn parse(text: &str) -> Result<Value, Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = Strict.deserialize(&mut de).map_err(classify)?;
    de.end().map_err(Error::Syntax)?;
    Ok(v)
}

fn classify(e: serde_json::Error) -> Error {
    if e.classify() != serde_json::error::Category::Data {
        return Error::Syntax(e);
    }
    let shown = e.to_string();
    let key = shown
        .strip_prefix(BEFORE)
        .and_then(|rest| rest.rsplit_once(AFTER))
        .map(|(k, _)| k.to_string());
    match key {
        Some(key) => Error::Duplicate {
            key,
            line: e.line(),
            column: e.column(),
        },
        None => Error::Syntax(e),
    }
}

/// For `#[serde(deserialize_with = "crate::json::strict_value")]`: a
/// `Value` field that refuses a key given twice at any depth.
pub fn strict_value<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    Strict.deserialize(d)
}

/// As [`strict_value`], for a field that is an object.
pub fn strict_map<'de, D: Deserializer<'de>>(d: D) -> Result<Map<String, Value>, D::Error> {
    match Strict.deserialize(d)? {
        Value::Object(m) => Ok(m),
        other => Err(de::Error::invalid_type(unexpected(&other), &"an object")),
    }
}

fn unexpected(v: &Value) -> de::Unexpected<'_> {
    match v {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

/// The seed and visitor that build a `Value` as serde_json does, except
/// for a repeated key.
#[derive(Clone, Copy)]
struct Strict;

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element_seed(self)? {
            v.push(x);
        }
        Ok(Value::Array(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut m = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if m.contains_key(&k) {
                let k = crate::excerpt::excerpt(&k);
                return Err(de::Error::custom(format!("{BEFORE}{k}{AFTER}")));
            }
            let v = map.next_value_seed(self)?;
            m.insert(k, v);
        }
        Ok(Value::Object(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_json_alone_keeps_the_last_of_a_repeated_key() {
        // The hole this module closes: if serde_json ever refuses it, the
        // check here is still right, only no longer needed.
        let v: Value = serde_json::from_str(r#"{"a": 1, "a": 2}"#).unwrap();
        assert_eq!(v["a"], 2);
        let m: Map<String, Value> = serde_json::from_str(r#"{"a": 1, "a": 2}"#).unwrap();
        assert_eq!(m["a"], 2);
    }

    #[test]
    fn a_repeated_key_is_refused_at_any_depth() {
        for (text, key, column) in [
            (r#"{"a": 1, "a": 2}"#, "a", 12),
            (r#"{"x": [{"b": 1, "c": 2, "b": 3}]}"#, "b", 27),
            (r#"{"t": {"u": {"k": 1}}, "t": 0}"#, "t", 26),
        ] {
            match parse(text) {
                Err(Error::Duplicate {
                    key: k,
                    line: 1,
                    column: c,
                }) => assert_eq!((k.as_str(), c), (key, column), "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        let e = parse(r#"{"a": 1, "a": 2}"#).unwrap_err().to_string();
        assert_eq!(
            e,
            "the key `a` is given twice in one object (line 1, column 12): keep one"
        );
    }

    #[test]
    fn what_serde_json_reads_is_read_the_same() {
        for text in [
            r#"{"a": [1, -2, 3.5, "s", null, true, {"b": {}}], "c": "\u00e9\n"}"#,
            "18446744073709551615",
            "-9223372036854775808",
            "1e300",
            "[]",
            r#""a""#,
        ] {
            let want: Value = serde_json::from_str(text).unwrap();
            assert_eq!(parse(text).unwrap(), want, "{text}");
        }
    }

    #[test]
    fn not_json_is_a_syntax_error() {
        for text in ["{", r#"{"a": 1} x"#, "", r#"{"a" 1}"#] {
            assert!(matches!(parse(text), Err(Error::Syntax(_))), "{text}");
        }
        // A key that looks like the message is an ordinary key.
        let text = r#"{"the key `a` is given twice in one object": 1}"#;
        assert!(parse(text).is_ok());
    }
}
