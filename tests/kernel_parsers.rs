//! The litmus and kernel RON parsers never panic: arbitrary text and
//! mutations of valid programs either parse to a valid program or give an
//! error with a line and column.

use progress_litmus::kernel::{litmus, ron};
use proptest::prelude::*;

const VALID: &str = "values 4;
workgroups 2;
workgroup_size 2;
subgroup_size 2;
global flag[2] = {0, 1};
shared part;
model OBE, subgroup=lockstep;
expect OBE: P;

kernel {
  0: if (local_id != 0) goto sync;
  1: t = fetch_add(flag[0], 1);
  2: part = t;
sync:
  3: barrier();
  4: p = part;
  5: all = subgroupAll(p);
  6: if (exch(flag[1], 1) == 0) goto END;
}
";

fn check(src: &str) {
    match litmus::parse(src) {
        Ok(p) => {
            p.validate().expect("parsed programs are valid");
            assert_eq!(litmus::parse(&litmus::print(&p)).unwrap(), p);
        }
        Err(e) => assert!(e.line >= 1 && e.col >= 1 && !e.msg.is_empty(), "{e}"),
    }
    if let Ok(p) = ron::parse_program(src) {
        p.validate().expect("valid");
    }
}

#[test]
fn the_valid_program_parses() {
    let p = litmus::parse(VALID).unwrap();
    assert_eq!(litmus::print(&p), VALID);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text(src in ".*") {
        check(&src);
    }

    #[test]
    fn mutated_programs(pos in 0usize..VALID.len(), len in 0usize..8, insert in "[a-z0-9(){}\\[\\];:=!<>+,_ \n]{0,6}") {
        let mut s = VALID.to_string();
        let end = (pos + len).min(s.len());
        s.replace_range(pos..end, &insert);
        check(&s);
    }

    #[test]
    fn mutated_ron(pos in 0usize..400, len in 0usize..6, insert in "[A-Za-z0-9(),:_\\[\\] ]{0,4}") {
        let p = litmus::parse(VALID).unwrap();
        let mut s = ron::program_to_ron(&p);
        let pos = pos.min(s.len());
        let end = (pos + len).min(s.len());
        if s.is_char_boundary(pos) && s.is_char_boundary(end) {
            s.replace_range(pos..end, &insert);
            check(&s);
        }
    }
}
