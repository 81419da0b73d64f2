#![allow(dead_code)] // each user calls only some of the checks
//! What "the parsers cope" means, shared by the property tests
//! (`tests/parsers.rs`) and the cargo-fuzz targets (`fuzz/`): on any input
//! a parser either returns something valid that survives a round trip, or
//! an error whose line and column lie inside the input, with a short,
//! one-line message. Never a panic.

use progress_litmus::axb::load::{self, Document};
use progress_litmus::axb::test::check_name;
use progress_litmus::{axb::text, ParseError};

/// The lines of `src` by the parsers' one rule (`progress_litmus::locate::Position`):
/// `\n`, `\r\n` and a lone `\r` each end a line; the text after the last
/// end (perhaps empty) is a line too.
fn split_lines(src: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut rest = src;
    while let Some(i) = rest.find(['\r', '\n']) {
        lines.push(&rest[..i]);
        let end = if rest[i..].starts_with("\r\n") {
            i + 2
        } else {
            i + 1
        };
        rest = &rest[end..];
    }
    lines.push(rest);
    lines
}

/// Asserts that `e` points at a line of `src` and at most one column past
/// its end, with a short one-line message.
pub fn assert_inside(src: &str, e: &ParseError) {
    let lines = split_lines(src);
    assert!(
        e.line >= 1 && e.line <= lines.len(),
        "line {} outside 1..={}: {e}",
        e.line,
        lines.len()
    );
    let len = lines[e.line - 1].len();
    assert!(
        e.col >= 1 && e.col <= len + 1,
        "column {} outside 1..={} of line {}: {e}",
        e.col,
        len + 1,
        e.line
    );
    assert!(!e.msg.is_empty());
    assert!(
        e.msg.len() <= 600,
        "an error quotes too much: {} bytes",
        e.msg.len()
    );
    assert!(!e.msg.contains('\n'), "{e}");
}

/// The artifact text parser on `src`.
pub fn check_text(src: &str) {
    match text::parse(src) {
        Ok(t) => {
            t.validate().expect("parsed tests are valid");
            assert_eq!(text::parse(&text::print(&t)).as_ref(), Ok(&t));
        }
        Err(e) => assert_inside(src, &e),
    }
}

/// The RON loader (tests and suites) on `src`.
pub fn check_ron(src: &str) {
    match load::parse_ron(src) {
        Ok(Document::Test { name, test }) => {
            test.validate().expect("valid");
            if let Some(n) = name {
                check_name(&n).expect("a loaded name obeys the rule");
            }
            assert_eq!(load::parse_ron_test(&load::test_to_ron(&test)), Ok(test));
        }
        Ok(Document::Suite(s)) => {
            check_name(&s.name).expect("suite name obeys the rule");
            let mut names = std::collections::HashSet::new();
            for e in &s.tests {
                e.test.validate().expect("valid");
                check_name(&e.name).expect("test name obeys the rule");
                assert!(names.insert(e.name.clone()), "duplicate name {}", e.name);
            }
            assert_eq!(load::parse_suite(&load::suite_to_ron(&s)), Ok(s));
        }
        Err(e) => assert_inside(src, &e),
    }
}
