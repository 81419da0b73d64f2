//! The artifact's text format (SPEC §1), imported and exported byte for byte.
//!
//! ```text
//! THREAD0
//! atomic_exch_branch(0,1,0,0)
//!
//! atomic_store(0,0)
//!
//!
//! THREAD1
//! atomic_chk_branch(0,0,END)
//! ```
//!
//! `atomic_store(loc, val)`, `atomic_chk_branch(loc, check, target)` and
//! `atomic_exch_branch(loc, check, exch, target)` (note the argument order);
//! `target` is an instruction index or `END`; blank lines are free. Lines
//! starting with `//` or `#` are comments (an extension; the printer never
//! writes them).

use crate::axb::test::{Instr, Target, Test, MAX_LOCS, MAX_THREADS, MAX_THREAD_LEN, MAX_VALUES};
use crate::error::{excerpt, ParseError};

/// Parses a test in the artifact's text format.
pub fn parse(src: &str) -> Result<Test, ParseError> {
    let mut threads: Vec<Vec<Instr>> = Vec::new();
    // For each thread, where its header and each numeric jump target were
    // written, to report a target past END at its own position.
    let mut header_pos: Vec<(usize, usize)> = Vec::new();
    let mut target_pos: Vec<Vec<(usize, usize)>> = Vec::new();

    // Lines end at `\n`, `\r\n` or `\r` (the one rule of every parser).
    for (lineno, line) in crate::locate::lines(src).enumerate() {
        let line_no = lineno + 1;
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let trimmed = trimmed.trim_end();
        if trimmed.is_empty() || trimmed.starts_with("//") || trimmed.starts_with('#') {
            continue;
        }
        let col = indent + 1;
        if let Some(rest) = trimmed.strip_prefix("THREAD") {
            let expected = threads.len();
            match rest.parse::<usize>() {
                Ok(k) if k == expected && rest.bytes().all(|b| b.is_ascii_digit()) => {}
                _ => {
                    return Err(ParseError::new(
                        line_no,
                        col,
                        format!("expected `THREAD{expected}`, found `{}`", excerpt(trimmed)),
                    ))
                }
            }
            if expected == MAX_THREADS {
                return Err(ParseError::new(
                    line_no,
                    col,
                    format!(
                        "a test has at most {MAX_THREADS} threads (THREAD0 to THREAD{})",
                        MAX_THREADS - 1
                    ),
                ));
            }
            threads.push(Vec::new());
            header_pos.push((line_no, col));
            target_pos.push(Vec::new());
            continue;
        }
        let Some(thread) = threads.last_mut() else {
            return Err(ParseError::new(
                line_no,
                col,
                format!(
                    "expected `THREAD0` before the first instruction, found `{}`",
                    excerpt(trimmed)
                ),
            ));
        };
        if thread.len() == MAX_THREAD_LEN {
            return Err(ParseError::new(
                line_no,
                col,
                format!(
                    "THREAD{} has more than {MAX_THREAD_LEN} instructions, the most a thread can have",
                    threads.len() - 1
                ),
            ));
        }
        let (instr, tpos) = parse_instr(trimmed, line_no, col, thread.len())?;
        thread.push(instr);
        target_pos.last_mut().unwrap().push(tpos);
    }

    if threads.is_empty() {
        return Err(ParseError::new(
            1,
            1,
            "no `THREAD0` header: not an AXB test",
        ));
    }
    for (t, th) in threads.iter_mut().enumerate() {
        if th.is_empty() {
            let (l, c) = header_pos[t];
            return Err(ParseError::new(
                l,
                c,
                format!("THREAD{t} has no instruction"),
            ));
        }
        let len = th.len();
        for (pc, i) in th.iter_mut().enumerate() {
            if let Target::At(j) = i.jump {
                if j as usize > len {
                    let (l, c) = target_pos[t][pc];
                    return Err(ParseError::new(
                        l,
                        c,
                        format!(
                            "jump target {j} is past END: THREAD{t} has {len} instruction{}",
                            if len == 1 { "" } else { "s" }
                        ),
                    ));
                }
            }
            i.jump = Target::from_pc(i.jump.pc(len), len);
        }
    }
    // Every rule of `Test::validate` was checked above, where its fault is.
    let test = Test { threads };
    debug_assert_eq!(test.validate(), Ok(()));
    Ok(test)
}

/// Parses one instruction line; returns it and the position of its target.
fn parse_instr(
    s: &str,
    line: usize,
    col: usize,
    pc: usize,
) -> Result<(Instr, (usize, usize)), ParseError> {
    let open = s.find('(').ok_or_else(|| {
        ParseError::new(
            line,
            col,
            format!("expected `atomic_store(..)`, `atomic_chk_branch(..)` or `atomic_exch_branch(..)`, found `{}`", excerpt(s)),
        )
    })?;
    let name = s[..open].trim_end();
    let arity = match name {
        "atomic_store" => 2,
        "atomic_chk_branch" => 3,
        "atomic_exch_branch" => 4,
        _ => {
            return Err(ParseError::new(
                line,
                col,
                format!("unknown instruction `{}` (expected atomic_store, atomic_chk_branch or atomic_exch_branch)", excerpt(name)),
            ))
        }
    };
    if !s.ends_with(')') {
        return Err(ParseError::new(
            line,
            col + s.len(),
            "expected `)` at the end of the instruction",
        ));
    }
    let inner = &s[open + 1..s.len() - 1];
    let mut args: Vec<(&str, usize)> = Vec::new();
    let mut start = 0;
    for piece in inner.split(',') {
        let lead = piece.len() - piece.trim_start().len();
        args.push((piece.trim(), col + open + 1 + start + lead));
        start += piece.len() + 1;
    }
    if inner.trim().is_empty() {
        args.clear();
    }
    if args.len() != arity {
        return Err(ParseError::new(
            line,
            col + open,
            format!("`{name}` takes {arity} arguments, found {}", args.len()),
        ));
    }
    let num = |i: usize, what: &str, max: usize| -> Result<u8, ParseError> {
        let (a, c) = args[i];
        match a.parse::<usize>() {
            Ok(v) if v < max => Ok(v as u8),
            Ok(v) => Err(ParseError::new(
                line,
                c,
                format!("{what} {v} out of range (at most {})", max - 1),
            )),
            Err(_) if is_number(a) => Err(ParseError::new(
                line,
                c,
                format!("{what} {} out of range (at most {})", excerpt(a), max - 1),
            )),
            Err(_) => Err(ParseError::new(
                line,
                c,
                format!("expected a {what} (a number), found `{}`", excerpt(a)),
            )),
        }
    };
    let target = |i: usize| -> Result<Target, ParseError> {
        let (a, c) = args[i];
        if a == "END" {
            return Ok(Target::End);
        }
        let past_end = || {
            ParseError::new(
                line,
                c,
                format!(
                    "jump target {} is past END: a thread has at most {MAX_THREAD_LEN} instructions",
                    excerpt(a)
                ),
            )
        };
        match a.parse::<usize>() {
            Ok(v) if v <= MAX_THREAD_LEN => Ok(Target::At(v as u8)),
            Ok(_) => Err(past_end()),
            Err(_) if is_number(a) => Err(past_end()),
            Err(_) => Err(ParseError::new(
                line,
                c,
                format!(
                    "expected a jump target (an instruction index or END), found `{}`",
                    excerpt(a)
                ),
            )),
        }
    };
    let instr = match arity {
        2 => Instr {
            loc: num(0, "location", MAX_LOCS)?,
            check: 0,
            jump: Target::At((pc + 1) as u8),
            exch: Some(num(1, "value", MAX_VALUES)?),
        },
        3 => Instr {
            loc: num(0, "location", MAX_LOCS)?,
            check: num(1, "value", MAX_VALUES)?,
            jump: target(2)?,
            exch: None,
        },
        _ => Instr {
            loc: num(0, "location", MAX_LOCS)?,
            check: num(1, "value", MAX_VALUES)?,
            exch: Some(num(2, "value", MAX_VALUES)?),
            jump: target(3)?,
        },
    };
    let tpos = (line, args[arity - 1].1);
    Ok((instr, tpos))
}

/// Whether `s` is a decimal number (too big for any field when it does not
/// parse).
fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Prints a test in the artifact's text format, exactly as the artifact's
/// files are laid out (each instruction followed by a blank line, each thread
/// by one more).
pub fn print(test: &Test) -> String {
    let mut out = String::new();
    for (t, th) in test.threads.iter().enumerate() {
        out.push_str(&format!("THREAD{t}\n"));
        let len = th.len();
        for (pc, i) in th.iter().enumerate() {
            out.push_str(&instr_line(i, pc, len));
            out.push_str("\n\n");
        }
        out.push('\n');
    }
    out
}

/// One instruction in the artifact's syntax.
pub fn instr_line(i: &Instr, pc: usize, len: usize) -> String {
    match i.exch {
        Some(x) if i.check == 0 && i.is_store_like(pc, len) => {
            format!("atomic_store({},{x})", i.loc)
        }
        Some(x) => format!(
            "atomic_exch_branch({},{},{x},{})",
            i.loc,
            i.check,
            Target::from_pc(i.jump.pc(len), len)
        ),
        None => format!(
            "atomic_chk_branch({},{},{})",
            i.loc,
            i.check,
            Target::from_pc(i.jump.pc(len), len)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_all_three_forms() {
        let t = parse("THREAD0\natomic_exch_branch(0,1,0,0)\n\natomic_store(1,1)\n\nTHREAD1\natomic_chk_branch(0,0,END)\n").unwrap();
        assert_eq!(t.threads.len(), 2);
        assert_eq!(
            t.threads[0][0],
            Instr {
                loc: 0,
                check: 1,
                jump: Target::At(0),
                exch: Some(0)
            }
        );
        assert_eq!(t.threads[0][1].jump, Target::End);
        assert_eq!(t.threads[0][1].exch, Some(1));
        assert_eq!(t.threads[1][0].jump, Target::End);
    }

    #[test]
    fn errors_have_positions() {
        let e = parse("THREAD0\natomic_chk_branch(0,0,3)\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 23), "{e}");
        assert!(e.msg.contains("past END"), "{e}");
        let e = parse("THREAD0\natomic_store(0)\n").unwrap_err();
        assert!(e.msg.contains("takes 2 arguments"), "{e}");
        let e = parse("THREAD0\n\nTHREAD1\natomic_store(0,1)").unwrap_err();
        assert_eq!((e.line, e.col), (1, 1));
        assert!(e.msg.contains("no instruction"), "{e}");
        let e = parse("THREAD1\n").unwrap_err();
        assert!(e.msg.contains("THREAD0"), "{e}");
        let e = parse("THREAD0\n  atomic_foo(1)\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 3));
        let e = parse("").unwrap_err();
        assert!(e.msg.contains("THREAD0"));
    }

    #[test]
    fn limits_are_reported_where_they_are_passed() {
        // These were reported at 1:1 (the test's validation, not the line).
        let nine: String = (0..9)
            .map(|t| format!("THREAD{t}\natomic_store(0,1)\n"))
            .collect();
        let e = parse(&nine).unwrap_err();
        assert_eq!((e.line, e.col), (17, 1), "{e}");
        assert!(e.msg.contains("at most 8 threads"), "{e}");
        let long = format!("THREAD0\n{}", "  atomic_store(0,1)\n".repeat(15));
        let e = parse(&long).unwrap_err();
        assert_eq!((e.line, e.col), (16, 3), "{e}");
        assert!(e.msg.contains("more than 14 instructions"), "{e}");
        let e = parse("THREAD0\natomic_chk_branch(0,0,300)\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 23), "{e}");
        assert!(e.msg.contains("past END"), "{e}");
        let e = parse("THREAD0\natomic_store(99999999999999999999999,1)\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 14), "{e}");
        assert!(e.msg.contains("out of range"), "{e}");
    }

    #[test]
    fn errors_quote_only_an_excerpt() {
        let huge = "x".repeat(10_000_000);
        for src in [
            format!("{huge}\n"),
            format!("THREAD0\n{huge}\n"),
            format!("THREAD0\n{huge}(1)\n"),
            format!("THREAD0\natomic_store({huge},1)\n"),
            format!("THREAD0\natomic_chk_branch(0,0,{huge})\n"),
            format!("THREAD{huge}\n"),
            format!("THREAD0\n\u{1b}[2J{huge}\n"),
        ] {
            let e = parse(&src).unwrap_err();
            assert!(e.msg.len() < 200, "{}", &e.msg[..200]);
            assert!(!e.msg.contains('\u{1b}'), "{e}");
        }
    }

    #[test]
    fn print_round_trips() {
        let src = "THREAD0\natomic_exch_branch(0,1,1,0)\n\n\nTHREAD1\natomic_store(0,1)\n\natomic_chk_branch(1,0,END)\n\n\n";
        assert_eq!(print(&parse(src).unwrap()), src);
    }
}
