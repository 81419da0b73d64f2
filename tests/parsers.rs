//! The parsers never panic: arbitrary bytes and mutations of valid files
//! either parse to a valid test or give a positioned error.

use axb::{load, text};
use proptest::prelude::*;

const VALID: &str = "THREAD0\natomic_exch_branch(0,1,1,0)\n\natomic_store(1,1)\n\n\nTHREAD1\natomic_chk_branch(0,0,END)\n\n\n";

fn check_text(src: &str) {
    match text::parse(src) {
        Ok(t) => t.validate().expect("parsed tests are valid"),
        Err(e) => assert!(e.line >= 1 && e.col >= 1, "{e}"),
    }
}

fn check_ron(src: &str) {
    match load::parse_ron(src) {
        Ok(load::Document::Test { test: t, .. }) => t.validate().expect("valid"),
        Ok(load::Document::Suite(s)) => s
            .tests
            .iter()
            .for_each(|e| e.test.validate().expect("valid")),
        Err(e) => assert!(!e.msg.is_empty()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text(src in ".*") {
        check_text(&src);
        check_ron(&src);
    }

    #[test]
    fn mutated_artifact_files(pos in 0usize..VALID.len(), len in 0usize..6, insert in "[A-Z0-9(),_ \n]{0,4}") {
        let mut s = VALID.to_string();
        let end = (pos + len).min(s.len());
        s.replace_range(pos..end, &insert);
        check_text(&s);
    }

    #[test]
    fn mutated_ron_files(pos in 0usize..200, len in 0usize..6, insert in "[A-Za-z0-9(),:_\\[\\] ]{0,4}") {
        let t = text::parse(VALID).unwrap();
        let mut s = load::test_to_ron(&t);
        let pos = pos.min(s.len());
        let end = (pos + len).min(s.len());
        if s.is_char_boundary(pos) && s.is_char_boundary(end) {
            s.replace_range(pos..end, &insert);
            check_ron(&s);
        }
    }
}
