//! The litmus format: kernel programs as people write them, in a C-like
//! syntax close to the pseudo-code `oracle explain` prints (docs/KERNEL.md
//! §5). [`parse()`] gives positioned errors; [`print()`] gives the canonical
//! text back.

pub mod lex;
pub mod parse;
pub mod print;

pub use parse::{parse, parse_with_spans, Spans};
pub use print::print;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::embed;

    const TICKET: &str = "values 8;
workgroups 3;
global next;
global serving;
global counter;
model OBE;
expect OBE: P;
expect HSA: F;

kernel {
  0: t = fetch_add(next, 1);
spin:
  1: s = serving;
  2: if (s != t) goto spin;
  3: c = counter;
  4: c = c + 1;
  5: counter = c;
  6: fetch_add(serving, 1);
}
";

    #[test]
    fn canonical_text_prints_back_byte_for_byte() {
        let p = parse(TICKET).unwrap();
        assert_eq!(print(&p), TICKET);
        assert_eq!(p.codes[0].regs, vec!["t", "s", "c"]);
        assert_eq!(p.codes[0].labels[1].as_deref(), Some("spin"));
    }

    #[test]
    fn embedded_axb_tests_print_and_parse_back() {
        for t in crate::axb::published::tests().unwrap() {
            let p = embed::from_axb(&t.entry.test);
            let s = print(&p);
            assert_eq!(parse(&s).unwrap(), p, "{}:\n{s}", t.name);
        }
        let t = crate::axb::text::parse("THREAD0\natomic_exch_branch(0,0,1,0)\natomic_store(0,0)\nTHREAD1\natomic_chk_branch(1,0,END)\n").unwrap();
        assert_eq!(
            print(&embed::from_axb(&t)),
            "values 2;\nworkgroups 2;\nglobal Mem[2];\n\nworkgroup 0 {\n  0: if (exch(Mem[0], 1) == 0) goto 0;\n  1: Mem[0] = 0;\n}\n\nworkgroup 1 {\n  0: if (Mem[1] == 0) goto END;\n}\n"
        );
    }

    #[test]
    fn every_construct_round_trips() {
        let src = "values 16;
workgroups 2;
workgroup_size 4;
subgroup_size 2;
global x = 3;
global a[3] = {0, 1, 2};
global b[2];
shared s[2];
model HSA_STRONG, workgroup=obe, subgroup=lockstep, occupancy=1;
expect OBE: P;
expect STRONG_FAIR, subgroup=unfair: deadlock;

workgroup 0 {
  reg q, p;
  0: p = x;
  1: q = a[p];
  2: b[lane_id] = wg_id;
  3: load(s[1]);
  4: p = exch(x, 1);
  5: exch(x, q);
  6: if (exch(x, 2) != 0) goto 4;
  7: p = cas(a[0], 0, 1);
  8: if (cas(a[1], p, q) < 2) goto END;
  9: p = fetch_add(x, 1);
  10: fetch_sub(x, 1);
  11: p = fetch_and(x, 1);
  12: p = fetch_or(x, 1);
  13: p = fetch_xor(x, 1);
  14: p = fetch_min(x, q);
  15: p = fetch_max(x, q);
  16: if (x >= 3) goto 0;
  17: p = q + 1;
  18: p = q - p;
  19: p = q * 3;
  20: p = q & 1;
  21: p = q | 1;
  22: p = q ^ 1;
  23: p = q << 1;
  24: p = q >> 1;
  25: p = q == 1;
  26: p = q != 1;
  27: p = q < 1;
  28: p = q <= 1;
  29: p = q > 1;
  30: p = q >= local_id;
  31: p = subgroup_id;
  32: if (p <= 1) goto 0;
  33: if (p > q) goto 0;
  34: goto END;
  35: barrier();
  36: p = subgroupAll(q);
  37: p = subgroupAny(q);
  38: p = subgroupBroadcastFirst(q);
}

workgroup 1 {
  0: goto 0;
}
";
        let p = parse(src).unwrap();
        assert_eq!(print(&p), src);
        assert_eq!(p.codes[0].regs, vec!["q", "p"]);
    }

    /// Issue 20 item 8: the count bounds are enforced as the items are
    /// read, so a huge input is refused at its first item too many (whose
    /// line the error names), not after a quadratic parse of all of it.
    #[test]
    fn count_bounds_are_enforced_at_the_first_item_too_many() {
        let mut src = String::from("values 2;\nworkgroups 1;\n");
        for i in 0..100_000 {
            src.push_str(&format!("global g{i};\n"));
        }
        src.push_str("kernel {\n  barrier();\n}\n");
        let (l, c, m) = error(&src);
        assert_eq!((l, c), (2 + 17, 8), "{m}");
        assert_eq!(m, "more than 16 memory locations: at most 16 are supported");

        let mut src = String::from("values 2;\nworkgroups 1;\nkernel {\n");
        for i in 0..300_000 {
            src.push_str(&format!("l{i}: goto l{};\n", i + 1));
        }
        src.push_str("}\n");
        let (l, c, m) = error(&src);
        assert_eq!((l, c), (3 + 64, 6), "{m}");
        assert_eq!(
            m,
            "more than 63 instructions in a block: at most 63 are supported"
        );

        let mut src = String::from("values 2;\nworkgroups 9;\n");
        for w in 0..9 {
            src.push_str(&format!("workgroup {w} {{\n  barrier();\n}}\n"));
        }
        let (l, c, m) = error(&src);
        assert_eq!((l, c), (3 + 8 * 3, 1), "{m}");
        assert!(m.starts_with("more than 8 code blocks"), "{m}");

        let regs: Vec<String> = (0..9).map(|r| format!("r{r}")).collect();
        let src = format!(
            "values 2;\nworkgroups 1;\nkernel {{\n  reg {};\n  barrier();\n}}\n",
            regs.join(", ")
        );
        let (l, c, m) = error(&src);
        assert_eq!((l, c), (4, 39), "{m}");
        assert!(m.starts_with("more than 8 registers in a block"), "{m}");
        let mut src = String::from("values 2;\nworkgroups 1;\nkernel {\n");
        for r in 0..9 {
            src.push_str(&format!("  r{r} = 0;\n"));
        }
        src.push_str("}\n");
        let (l, c, m) = error(&src);
        assert_eq!((l, c), (12, 3), "{m}");
        assert!(m.starts_with("more than 8 registers in a block"), "{m}");
    }

    /// Issue 22: assertions print back byte for byte, with parentheses
    /// only where precedence needs them, and nested `&&`/`||` flatten.
    #[test]
    fn assertions_round_trip() {
        let src = "values 4;
workgroups 2;
workgroup_size 2;
global x;
global a[2];
shared s[2];
exists x == 1 && w1.1:r != 0;
forall a[1] < 2 || !(x >= 1 && w0:s[1] <= 3) || !!x > 0;
exists (x == 1 || x == 2) && !(a[0] == 0 || a[1] == 0);

kernel {
  0: r = x;
}
";
        let p = parse(src).unwrap();
        assert_eq!(print(&p), src);
        assert_eq!(p.asserts.len(), 3);
        let flat = "values 2;\nworkgroups 1;\nglobal x;\nexists ((x == 1 && (x == 0)) && x == 1) || (x == 0 || x == 1);\n\nkernel {\n  0: x = 1;\n}\n";
        let p = parse(flat).unwrap();
        let canon = "values 2;\nworkgroups 1;\nglobal x;\nexists x == 1 && x == 0 && x == 1 || x == 0 || x == 1;\n\nkernel {\n  0: x = 1;\n}\n";
        assert_eq!(print(&p), canon);
        assert_eq!(parse(canon).unwrap(), p);
        let ron = crate::kernel::ron::program_to_ron(&p);
        assert_eq!(crate::kernel::ron::parse_program(&ron).unwrap(), p);
    }

    fn error(src: &str) -> (usize, usize, String) {
        let e = parse(src).unwrap_err();
        (e.line, e.col, e.msg)
    }

    #[test]
    fn errors_name_line_and_column() {
        let head = "values 4;\nworkgroups 2;\nglobal x;\n";
        let (l, c, m) = error(&format!("{head}kernel {{\n  r = x + 1;\n}}\n"));
        assert_eq!((l, c), (5, 9), "{m}");
        assert!(m.contains("one memory access"), "{m}");
        let (l, c, m) = error(&format!("{head}kernel {{\n  goto nowhere;\n}}\n"));
        assert_eq!((l, c), (5, 8));
        assert!(m.contains("no label `nowhere`"), "{m}");
        let (l, c, m) = error(&format!("{head}kernel {{\n  x = 9;\n}}\n"));
        assert_eq!((l, c), (5, 3));
        assert!(m.contains("outside the domain"), "{m}");
        let (l, c, m) = error(&format!(
            "{head}kernel {{\n  y = 1;\n  z = y;\n  if (z == 0) goto 7;\n}}\n"
        ));
        assert_eq!((l, c), (7, 3));
        assert!(m.contains("past END"), "{m}");
        let (l, _, m) = error(&format!("{head}kernel {{\n  r = y[0];\n}}\n"));
        assert_eq!(l, 5);
        assert!(m.contains("expected"), "{m}");
        let (l, c, m) = error("values 3;\nworkgroups 1;\nkernel {\n}\n");
        assert_eq!((l, c), (1, 1));
        assert!(m.contains("power of two"), "{m}");
        let (_, _, m) = error("values 4;\nkernel {\n}\n");
        assert!(m.contains("workgroups"), "{m}");
        let (l, c, m) = error(&format!("{head}workgroup 0 {{\n}}\n"));
        assert_eq!((l, c), (4, 1));
        assert!(m.contains("workgroup 1 has no code"), "{m}");
        let (l, c, m) = error(&format!("{head}model OBE, subgroup=odd;\nkernel {{\n}}\n"));
        assert_eq!((l, c), (4, 7));
        assert!(m.contains("unknown scheduler"), "{m}");
        let (l, c, m) = error(&format!("{head}kernel {{\n  1: barrier();\n}}\n"));
        assert_eq!((l, c), (5, 3));
        assert!(m.contains("does not match"), "{m}");
        let (l, c, _) = error(&format!("{head}kernel {{\n  x[0] = 1;\n}}\n"));
        assert_eq!((l, c), (5, 4));
        let (l, c, m) = error(&format!("{head}kernel {{\n  barrier();\n"));
        assert_eq!((l, c), (6, 1));
        assert!(m.contains("`}`"), "{m}");
        let (_, _, m) = error("values 4;\nworkgroups 9;\nkernel {\n}\n");
        assert!(m.contains("9 workgroups"), "{m}");
    }
}
