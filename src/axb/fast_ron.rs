//! A fast reader for the RON the tools write, used before `ron` itself.
//!
//! `ron` 0.8 reads a byte at a time, keeps line and column for every byte,
//! and builds and drops error values on the successful path: on a 137 MB
//! suite (every test of 2t5i) it took longer than deciding all the
//! verdicts. This is a serde deserializer for a strict subset of RON:
//! named or anonymous structs, lists, maps, `Some(..)`/`None`, enum
//! variants (unit or newtype), decimal unsigned integers, and strings
//! without escapes, separated by ASCII blanks, with no comments and no
//! `#![enable(..)]` extensions. That is everything `suite_to_ron` writes.
//!
//! It only ever answers "the value" or "not handled": anything outside the
//! subset, and any error at all (a type mismatch, a validation error from a
//! `try_from`), makes the caller parse the same text again with `ron`,
//! whose answer (and error position) then stands. Since serde runs the
//! same derived visitors, defaults, `deny_unknown_fields` and `try_from`
//! checks whichever deserializer feeds them, the only obligation here is
//! that every text this module accepts means the same to `ron`; the tests
//! check that on every committed suite and on many mangled ones.

use serde::de::{self, DeserializeSeed, Visitor};
use serde::forward_to_deserialize_any;
use std::borrow::Cow;
use std::fmt;

/// "Not handled here": parse with `ron` instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unhandled;

impl fmt::Display for Unhandled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not in the RON subset the fast reader handles")
    }
}

impl std::error::Error for Unhandled {}

impl de::Error for Unhandled {
    fn custom<T: fmt::Display>(_: T) -> Unhandled {
        Unhandled
    }
}

type Result<T> = std::result::Result<T, Unhandled>;

/// Reads a whole document as `T`, or says it is not handled here.
pub fn from_str<'a, T: de::Deserialize<'a>>(src: &'a str) -> Result<T> {
    let mut de = Reader {
        src,
        bytes: src.as_bytes(),
        at: 0,
    };
    let value = T::deserialize(&mut de)?;
    de.blanks();
    if de.at != de.bytes.len() {
        return Err(Unhandled);
    }
    Ok(value)
}

struct Reader<'a> {
    src: &'a str,
    bytes: &'a [u8],
    at: usize,
}

fn ident_first(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn ident_other(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'a> Reader<'a> {
    /// Skips ASCII blanks (a subset of what RON skips; a comment is not
    /// handled).
    #[inline]
    fn blanks(&mut self) {
        while let Some(&c) = self.bytes.get(self.at) {
            if !matches!(c, b' ' | b'\n' | b'\t' | b'\r') {
                break;
            }
            self.at += 1;
        }
    }

    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.blanks();
        self.bytes.get(self.at).copied()
    }

    #[inline]
    fn expect(&mut self, c: u8) -> Result<()> {
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(Unhandled)
        }
    }

    /// An identifier (ASCII; raw identifiers are not handled).
    #[inline]
    fn ident(&mut self) -> Result<&'a str> {
        match self.peek() {
            Some(c) if ident_first(c) => {}
            _ => return Err(Unhandled),
        }
        let start = self.at;
        self.at += 1;
        while self.bytes.get(self.at).is_some_and(|&c| ident_other(c)) {
            self.at += 1;
        }
        if self.bytes.get(self.at) == Some(&b'#') {
            // `r#ident`.
            return Err(Unhandled);
        }
        Ok(&self.src[start..self.at])
    }

    /// A decimal integer without sign, separators or leading zeros.
    #[inline]
    fn unsigned(&mut self) -> Result<u64> {
        self.blanks();
        let start = self.at;
        let mut v: u64 = 0;
        while let Some(&c) = self.bytes.get(self.at) {
            if !c.is_ascii_digit() {
                break;
            }
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add((c - b'0') as u64))
                .ok_or(Unhandled)?;
            self.at += 1;
        }
        let len = self.at - start;
        let next = self.bytes.get(self.at).copied().unwrap_or(b' ');
        if len == 0 || (len > 1 && self.bytes[start] == b'0') || ident_other(next) || next == b'.' {
            return Err(Unhandled);
        }
        Ok(v)
    }

    /// A string: borrowed when it has no escape, else unescaped (the
    /// one-character escapes only; `\x..` and `\u{..}` are not handled).
    #[inline]
    fn string(&mut self) -> Result<Cow<'a, str>> {
        self.expect(b'"')?;
        let start = self.at;
        let end = |from: usize| {
            self.bytes[from..]
                .iter()
                .position(|&c| c == b'"' || c == b'\\')
                .map(|k| from + k)
                .ok_or(Unhandled)
        };
        let mut at = end(start)?;
        if self.bytes[at] == b'"' {
            self.at = at + 1;
            return Ok(Cow::Borrowed(&self.src[start..at]));
        }
        let mut s = String::from(&self.src[start..at]);
        loop {
            // At a backslash.
            s.push(match self.bytes.get(at + 1) {
                Some(b'\'') => '\'',
                Some(b'"') => '"',
                Some(b'\\') => '\\',
                Some(b'n') => '\n',
                Some(b'r') => '\r',
                Some(b't') => '\t',
                Some(b'0') => '\0',
                _ => return Err(Unhandled),
            });
            let from = at + 2;
            at = end(from)?;
            s.push_str(&self.src[from..at]);
            if self.bytes[at] == b'"' {
                self.at = at + 1;
                return Ok(Cow::Owned(s));
            }
        }
    }

    /// A comma, if there is one.
    #[inline]
    fn comma(&mut self) -> bool {
        if self.peek() == Some(b',') {
            self.at += 1;
            true
        } else {
            false
        }
    }
}

impl<'de> de::Deserializer<'de> for &mut Reader<'de> {
    type Error = Unhandled;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value> {
        Err(Unhandled)
    }

    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let v = self.unsigned()?;
        visitor.visit_u8(u8::try_from(v).map_err(|_| Unhandled)?)
    }

    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let v = self.unsigned()?;
        visitor.visit_u16(u16::try_from(v).map_err(|_| Unhandled)?)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let v = self.unsigned()?;
        visitor.visit_u32(u32::try_from(v).map_err(|_| Unhandled)?)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let v = self.unsigned()?;
        visitor.visit_u64(v)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.string()? {
            Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
            Cow::Owned(s) => visitor.visit_string(s),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.ident()? {
            "None" => visitor.visit_none(),
            "Some" => {
                self.expect(b'(')?;
                let v = visitor.visit_some(&mut *self)?;
                self.comma();
                self.expect(b')')?;
                Ok(v)
            }
            _ => Err(Unhandled),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.expect(b'[')?;
        let v = visitor.visit_seq(Commas::new(self, b']'))?;
        self.expect(b']')?;
        Ok(v)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.expect(b'{')?;
        let v = visitor.visit_map(Commas::new(self, b'}'))?;
        self.expect(b'}')?;
        Ok(v)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        // `Name(..)` or `(..)`; a different name is an error for RON too.
        if self.peek() != Some(b'(') && self.ident()? != name {
            return Err(Unhandled);
        }
        self.expect(b'(')?;
        let v = visitor.visit_map(Commas::new(self, b')'))?;
        self.expect(b')')?;
        Ok(v)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_enum(self)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let id = self.ident()?;
        visitor.visit_borrowed_str(id)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value> {
        Err(Unhandled)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u128 f32 f64 char bytes byte_buf unit
        unit_struct newtype_struct tuple tuple_struct
    }
}

/// The elements of a list, map or struct: RON's comma rules (a trailing
/// comma is allowed, a missing one between elements is not).
struct Commas<'r, 'de> {
    de: &'r mut Reader<'de>,
    end: u8,
    had_comma: bool,
}

impl<'r, 'de> Commas<'r, 'de> {
    fn new(de: &'r mut Reader<'de>, end: u8) -> Self {
        Commas {
            de,
            end,
            had_comma: true,
        }
    }

    fn has_element(&mut self) -> Result<bool> {
        match self.de.peek() {
            None => Err(Unhandled),
            Some(c) if c == self.end => Ok(false),
            Some(_) if self.had_comma => Ok(true),
            Some(_) => Err(Unhandled),
        }
    }
}

impl<'de> de::SeqAccess<'de> for Commas<'_, 'de> {
    type Error = Unhandled;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if !self.has_element()? {
            return Ok(None);
        }
        let v = seed.deserialize(&mut *self.de)?;
        self.had_comma = self.de.comma();
        Ok(Some(v))
    }
}

impl<'de> de::MapAccess<'de> for Commas<'_, 'de> {
    type Error = Unhandled;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if !self.has_element()? {
            return Ok(None);
        }
        if self.end == b')' {
            // A struct's field name: an identifier.
            let id = self.de.ident()?;
            let key = de::value::BorrowedStrDeserializer::<'de, Unhandled>::new(id);
            seed.deserialize(key).map(Some)
        } else {
            seed.deserialize(&mut *self.de).map(Some)
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        self.de.expect(b':')?;
        let v = seed.deserialize(&mut *self.de)?;
        self.had_comma = self.de.comma();
        Ok(v)
    }
}

impl<'de> de::EnumAccess<'de> for &mut Reader<'de> {
    type Error = Unhandled;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        let id = self.ident()?;
        let key = de::value::BorrowedStrDeserializer::<'de, Unhandled>::new(id);
        Ok((seed.deserialize(key)?, self))
    }
}

impl<'de> de::VariantAccess<'de> for &mut Reader<'de> {
    type Error = Unhandled;

    fn unit_variant(self) -> Result<()> {
        // `End`, not `End()` (which RON reads differently).
        match self.peek() {
            Some(b'(') => Err(Unhandled),
            _ => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        self.expect(b'(')?;
        let v = seed.deserialize(&mut *self)?;
        self.comma();
        self.expect(b')')?;
        Ok(v)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value> {
        Err(Unhandled)
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], _: V) -> Result<V::Value> {
        Err(Unhandled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axb::load::{parse_suite, suite_to_ron};
    use crate::axb::suite::Suite;

    fn both(
        src: &str,
    ) -> (
        Result<Suite>,
        std::result::Result<Suite, ron::error::SpannedError>,
    ) {
        (from_str::<Suite>(src), ron::from_str::<Suite>(src))
    }

    /// Whatever the fast reader accepts, `ron` reads the same way.
    fn agrees(src: &str) {
        let (fast, slow) = both(src);
        if let Ok(f) = fast {
            assert_eq!(Ok(f), slow.map_err(|e| e.to_string()), "{src}");
        }
    }

    #[test]
    fn reads_every_committed_suite_as_ron_does() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("suites");
        let mut read = 0;
        for config in std::fs::read_dir(&root).unwrap() {
            let dir = config.unwrap().path();
            let Some(name) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
                continue;
            };
            let file = dir.join(format!("{name}.ron"));
            if !file.exists() {
                continue;
            }
            let src = std::fs::read_to_string(&file).unwrap();
            let fast = from_str::<Suite>(&src).expect("the fast reader handles what synth writes");
            if !cfg!(debug_assertions) || src.len() < 1_000_000 {
                assert_eq!(
                    fast,
                    ron::from_str::<Suite>(&src).unwrap(),
                    "{}",
                    file.display()
                );
            }
            assert_eq!(parse_suite(&src).unwrap(), fast);
            // And what it writes back.
            assert_eq!(from_str::<Suite>(&suite_to_ron(&fast)).unwrap(), fast);
            read += 1;
        }
        assert!(read >= 6, "{read} suites");
    }

    #[test]
    fn the_subset_reads_like_ron() {
        let ok = [
            "Suite(name: \"s\", tests: [])",
            "(name: \"s\", tests: [],)",
            "  Suite(\n  name: \"s\",\n  note: \"a note\",\n  tests: [],\n)\n",
            "Suite(tests: [Test(name: \"a\", threads: [[AXB(loc: 0, check: 1, jump: End, exch: Some(1))]])], name: \"s\")",
            "Suite(name: \"s\", tests: [(name: \"a\", threads: [[(loc: 0, check: 0, jump: At(0), exch: None)]],),])",
            "Suite(name: \"s\", tests: [Test(name: \"b\", threads: [[AXB(loc: 0, check: 0, jump: End)]]), Test(name: \"a\", threads: [[AXB(loc: 1, check: 0, jump: At(1)), AXB(check: 0, loc: 0, jump: End)]], idioms: [\"x\"], duplicate_of: Some(\"b\"))])",
            "Suite(name: \"s\", note: \"a\\\"b\\\\c\\'d\\ne\\tf\\0\\\"\", tests: [])",
        ];
        for src in ok {
            let (fast, slow) = both(src);
            assert_eq!(fast.ok(), Some(slow.unwrap()), "{src}");
        }
        // Outside the subset, or wrong: not handled here (ron decides).
        let unhandled = [
            "// comment\nSuite(name: \"s\", tests: [])",
            "#![enable(implicit_some)]\nSuite(name: \"s\", tests: [])",
            "Suite(name: \"a\\x41\", tests: [])",
            "Suite(name: \"a\\u{41}\", tests: [])",
            "Suite(name: r\"s\", tests: [])",
            "Suite(name: \"s\", tests: []) x",
            "Suite(name: \"s\" tests: [])",
            "Suite(name: \"s\", tests: [],,)",
            "Suit(name: \"s\", tests: [])",
            "Suite(name: \"s\", tests: [Test(name: \"a\", threads: [[AXB(loc: 0x1, check: 0, jump: End)]])])",
            "Suite(name: \"s\", tests: [Test(name: \"a\", threads: [[AXB(loc: 01, check: 0, jump: End)]])])",
            "Suite(name: \"s\", tests: [Test(name: \"a\", threads: [[AXB(loc: 300, check: 0, jump: End)]])])",
            "Suite(name: \"s\", tests: [Test(name: \"a\", threads: [[AXB(loc: 0, check: 0, jump: End())]])])",
            "Suite(name: \"s\", tests: [Test(name: \"a\", threads: [[AXB(loc: 0, check: 0, jump: At(9))]])])",
            "Suite(name: \"s\", tests: [Test(name: \"a\", threads: [[]])])",
            "Suite(name: \"s\", tests: [Test(name: \"a\", threads: [[AXB(loc: 0, check: 0, jump: End)]], verdicts: {\"HSA\": P})])",
            "Suite(name: \"s\", tests: [Test(name: \"a\", threads: [[AXB(loc: 0, check: 0, jump: End)]], bogus: 1)])",
            "Suite(name: \"s\", name: \"t\", tests: [])",
        ];
        for src in unhandled {
            assert_eq!(from_str::<Suite>(src), Err(Unhandled), "{src}");
        }
    }

    /// Mangled suites: delete, duplicate or replace a byte anywhere.
    #[test]
    fn mangled_suites_are_read_as_ron_reads_them_or_not_at_all() {
        let src = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/2t2i/2t2i.ron"),
        )
        .unwrap();
        let src = &src[..src.len().min(1500)];
        // Keep it a whole suite: cut after a test and close the brackets.
        let cut = src.rfind("    ),\n").unwrap() + 7;
        let base = format!("{}  ],\n)\n", &src[..cut]);
        agrees(&base);
        assert!(from_str::<Suite>(&base).is_ok());
        let bytes = base.as_bytes();
        let replacements = [
            b' ', b',', b'(', b')', b'[', b']', b'"', b'0', b'9', b'x', b':', b'\n',
        ];
        for i in 0..bytes.len() {
            let mut cases: Vec<Vec<u8>> = Vec::new();
            let mut del = bytes.to_vec();
            del.remove(i);
            cases.push(del);
            let mut dup = bytes.to_vec();
            dup.insert(i, bytes[i]);
            cases.push(dup);
            for &r in &replacements {
                let mut rep = bytes.to_vec();
                rep[i] = r;
                cases.push(rep);
            }
            for c in cases {
                if let Ok(s) = std::str::from_utf8(&c) {
                    agrees(s);
                }
            }
        }
    }
}
