//! `oracle translate`: the kernel program in the litmus format with the
//! shader's source lines as comments, so that a user can review the
//! abstraction line by line. The litmus printer's text is kept as is (it
//! stays canonical and parses back to the same program); a comment line
//! `// L: source` goes before the first instruction of each new shader
//! line.

use super::{line_col, Translation};

/// The litmus text with the shader's lines as comments.
pub fn annotated(t: &Translation, file: &str) -> String {
    let text = crate::kernel::litmus::print(&t.program);
    let lines: Vec<&str> = t.source.lines().collect();
    let mut out = format!("// Translated from {file} (memory is sequentially consistent).\n");
    for w in &t.warnings {
        out.push_str(&format!("// warning: {w}\n"));
    }
    let mut last = 0;
    for l in text.lines() {
        if let Some(pc) = instr_pc(l) {
            let line = t
                .spans
                .get(pc)
                .and_then(|s| s.to_range())
                .map_or(0, |r| line_col(&t.source, r.start as u32).0);
            if line != 0 && line != last {
                let src = lines.get(line - 1).map_or("", |s| s.trim());
                out.push_str(&format!("  // {line}: {src}\n"));
                last = line;
            }
        }
        out.push_str(l);
        out.push('\n');
    }
    out
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
    let src = t.source.lines().nth(line.checked_sub(1)?)?.trim();
    Some(format!("{line}: {src}"))
}
