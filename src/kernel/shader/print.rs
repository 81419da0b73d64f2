//! `oracle translate`: the kernel program in the litmus format with the
//! shader's source lines as comments, so that a user can review the
//! abstraction line by line. The litmus printer's text is kept as is (it
//! stays canonical and parses back to the same program); a comment line
//! `// L: source` goes before the first instruction of each new shader
//! line.
//!
//! Source text shown here is the user's file, so it goes through the one
//! escaping rule for untrusted text ([`crate::error::printable`]): an
//! escape sequence in a comment must not drive the terminal, and a lone
//! carriage return inside a `/* */` comment must neither end a comment
//! line of the translation (which would then not parse back) nor move the
//! cursor over a listing line.

use super::{line_col, source_line as nth_line, Translation};
use crate::error::printable;

/// The litmus text with the shader's lines as comments.
pub fn annotated(t: &Translation, file: &str) -> String {
    let text = crate::kernel::litmus::print(&t.program);
    let mut out = format!("// Translated from {file} (memory is sequentially consistent).\n");
    if let Some(note) = t.sext_note() {
        out.push_str(&format!("// {note}\n"));
    }
    for w in &t.warnings {
        out.push_str(&format!("// warning: {}\n", printable(w)));
    }
    out.push_str(&annotate_listing(t, &text));
    out
}

/// Puts `// L: source` before the first instruction of each new shader line
/// of a printed program (lines `  N: ...`), leaving every other line as is.
pub fn annotate_listing(t: &Translation, text: &str) -> String {
    let lines: Vec<&str> = crate::locate::lines(&t.source).collect();
    let mut out = String::new();
    let mut last = 0;
    for l in text.lines() {
        if let Some(pc) = instr_pc(l) {
            let line = shader_line(t, pc);
            if line != 0 && line != last {
                let src = lines.get(line - 1).map_or("", |s| s.trim());
                out.push_str(&format!("  // {line}: {}\n", printable(src)));
                last = line;
            }
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// An `oracle explain` text in the shader's terms: the program listing with
/// the shader's lines (as [`annotated`]), and each step of a witness
/// schedule (`  K  ACTOR  N: instruction ...`) followed by the shader file,
/// line and source text of instruction N.
pub fn explain_in_shader_terms(t: &Translation, file: &str, text: &str) -> String {
    let mut out = String::new();
    for l in annotate_listing(t, text).lines() {
        out.push_str(l);
        if let Some(pc) = step_pc(l) {
            if let Some(src) = source_line(t, pc) {
                out.push_str(&format!("  [{file}:{src}]"));
            }
        }
        out.push('\n');
    }
    out
}

/// The pc of a witness step line (`   12  w1.0   16: r0 = flag; ...`).
fn step_pc(l: &str) -> Option<usize> {
    let mut it = l.split_whitespace();
    it.next()?.parse::<usize>().ok()?;
    if !it.next()?.starts_with('w') {
        return None;
    }
    it.next()?.strip_suffix(':')?.parse().ok()
}

fn shader_line(t: &Translation, pc: usize) -> usize {
    t.spans
        .get(pc)
        .and_then(|s| s.to_range())
        .map_or(0, |r| line_col(&t.source, r.start as u32).0)
}

/// The pc of a printed instruction line (`  N: ...`).
fn instr_pc(l: &str) -> Option<usize> {
    let rest = l.strip_prefix("  ")?;
    let (n, _) = rest.split_once(": ")?;
    n.parse().ok()
}

/// The shader line of instruction `pc`, as `line: source` (for witnesses).
pub fn source_line(t: &Translation, pc: usize) -> Option<String> {
    let r = t.spans.get(pc)?.to_range()?;
    let (line, _) = line_col(&t.source, r.start as u32);
    let src = nth_line(&t.source, line)?.trim();
    Some(format!("{line}: {}", printable(src)))
}
