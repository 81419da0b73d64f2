//! The canonical litmus text of a program (docs/KERNEL.md §5.3):
//! `parse(&print(p)) == p` for every valid normalized program, and
//! `print(&parse(s)) == s` for every canonical text `s`.

use crate::axb::test::Target;
use crate::kernel::program::{Addr, AtomicOp, Code, Construct, Instr, Operand, Program};
use std::fmt::Write;

/// The program as canonical litmus text.
pub fn print(p: &Program) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "values {};", p.values);
    let _ = writeln!(out, "workgroups {};", p.workgroups);
    if p.workgroup_size != 1 {
        let _ = writeln!(out, "workgroup_size {};", p.workgroup_size);
    }
    if p.subgroup_size != 1 {
        let _ = writeln!(out, "subgroup_size {};", p.subgroup_size);
    }
    for l in &p.locations {
        let kind = if l.shared { "shared" } else { "global" };
        let _ = write!(out, "{kind} {}", l.name);
        if l.array {
            let _ = write!(out, "[{}]", l.len());
            if l.init.iter().any(|&v| v != 0) {
                let vals: Vec<String> = l.init.iter().map(|v| v.to_string()).collect();
                let _ = write!(out, " = {{{}}}", vals.join(", "));
            }
        } else if l.init[0] != 0 {
            let _ = write!(out, " = {}", l.init[0]);
        }
        out.push_str(";\n");
    }
    if let Some(m) = &p.model {
        let _ = writeln!(out, "model {m};");
    }
    if p.hardware_subgroups {
        out.push_str("subgroups hardware;\n");
    }
    if p.tangled_collectives {
        out.push_str("collectives tangled;\n");
    }
    for e in &p.expect {
        let _ = writeln!(out, "expect {}: {};", e.model, e.outcome.word());
    }
    for a in &p.asserts {
        let _ = writeln!(out, "{a};");
    }
    for (c, code) in p.codes.iter().enumerate() {
        out.push('\n');
        if p.codes.len() == 1 {
            out.push_str("kernel {\n");
        } else {
            let wgs: Vec<String> = p
                .wg_code
                .iter()
                .enumerate()
                .filter(|&(_, &k)| k as usize == c)
                .map(|(w, _)| w.to_string())
                .collect();
            let _ = writeln!(out, "workgroup {} {{", wgs.join(", "));
        }
        print_code(&mut out, p, code);
        out.push_str("}\n");
    }
    out
}

/// Whether the registers are named in order of first use by the
/// instructions (then the block needs no `reg` line).
fn regs_in_first_use_order(code: &Code) -> bool {
    let mut seen: Vec<u8> = Vec::new();
    for i in &code.instrs {
        for r in text_order_regs(i) {
            if !seen.contains(&r) {
                seen.push(r);
            }
        }
    }
    seen.len() == code.regs.len() && seen.iter().enumerate().all(|(k, &r)| r as usize == k)
}

/// The registers of an instruction in the order its text names them.
fn text_order_regs(i: &Instr) -> Vec<u8> {
    let regs = |ops: &[Operand]| -> Vec<u8> {
        ops.iter()
            .filter_map(|o| match o {
                Operand::Reg(r) => Some(*r),
                _ => None,
            })
            .collect()
    };
    match *i {
        Instr::Assign { dst, op, a, b } => {
            let mut v = vec![dst];
            v.extend(regs(&[a]));
            if op.is_some() {
                v.extend(regs(&[b]));
            }
            v
        }
        Instr::Atomic {
            op,
            addr,
            dst,
            branch,
        } => {
            let mut v: Vec<u8> = dst.into_iter().collect();
            if let AtomicOp::Store(x) = op {
                v.extend(regs(&[addr.index, x]));
                return v;
            }
            v.extend(regs(&[addr.index]));
            match op {
                AtomicOp::Exchange(x) | AtomicOp::Fetch(_, x) => v.extend(regs(&[x])),
                AtomicOp::CompareExchange(e, d) => v.extend(regs(&[e, d])),
                _ => {}
            }
            if let Some(b) = branch {
                v.extend(regs(&[b.rhs]));
            }
            v
        }
        Instr::Branch { a, b, .. } => regs(&[a, b]),
        Instr::Collective { dst, src, .. } => {
            let mut v = vec![dst];
            v.extend(regs(&[src]));
            v
        }
        Instr::Goto { .. } | Instr::Choose { .. } | Instr::Barrier => Vec::new(),
    }
}

fn print_code(out: &mut String, p: &Program, code: &Code) {
    if !regs_in_first_use_order(code) {
        let _ = writeln!(out, "  reg {};", code.regs.join(", "));
    }
    for (pc, i) in code.instrs.iter().enumerate() {
        if let Some(l) = &code.labels[pc] {
            let _ = writeln!(out, "{l}:");
        }
        let _ = writeln!(out, "  {pc}: {}", annotated(p, code, pc, i));
    }
}

/// An instruction with the merges of the constructs it heads (§2.8):
/// `if (a == 0) goto 4 merge 6;`, `m[0] = 1 loop_merge 5;`.
fn annotated(p: &Program, code: &Code, pc: usize, i: &Instr) -> String {
    let mut s = instr(p, code, i);
    for k in code.constructs.iter().filter(|k| k.header() == pc) {
        s.pop();
        let word = match k {
            Construct::Selection { .. } => "merge",
            Construct::Loop { .. } => "loop_merge",
        };
        let _ = write!(s, " {word} {};", target(code, k.merge()));
    }
    s
}

/// An operand as written.
pub fn operand(code: &Code, o: Operand) -> String {
    match o {
        Operand::Reg(r) => code
            .regs
            .get(r as usize)
            .cloned()
            .unwrap_or_else(|| format!("?r{r}")),
        Operand::Imm(v) => v.to_string(),
        Operand::Id(id) => id.name().to_string(),
    }
}

fn addr(p: &Program, code: &Code, a: Addr) -> String {
    let loc = &p.locations[a.loc as usize];
    if loc.array {
        format!("{}[{}]", loc.name, operand(code, a.index))
    } else {
        loc.name.clone()
    }
}

fn target(code: &Code, t: Target) -> String {
    match t {
        Target::End => "END".into(),
        Target::At(pc) => match code.labels.get(pc as usize) {
            Some(Some(l)) => l.clone(),
            _ => pc.to_string(),
        },
    }
}

/// One instruction as written (without its number), e.g.
/// `if (exch(lock, 1) == 1) goto spin;`.
pub fn instr(p: &Program, code: &Code, i: &Instr) -> String {
    let o = |x: Operand| operand(code, x);
    let reg = |r: u8| operand(code, Operand::Reg(r));
    match *i {
        Instr::Assign { dst, op, a, b } => match op {
            None => format!("{} = {};", reg(dst), o(a)),
            Some(op) => format!("{} = {} {} {};", reg(dst), o(a), op.symbol(), o(b)),
        },
        Instr::Atomic {
            op,
            addr: ad,
            dst,
            branch,
        } => {
            let loc = addr(p, code, ad);
            let expr = match op {
                AtomicOp::Store(x) => return format!("{loc} = {};", o(x)),
                AtomicOp::Load => {
                    if dst.is_none() && branch.is_none() {
                        return format!("load({loc});");
                    }
                    loc
                }
                AtomicOp::Exchange(x) => format!("exch({loc}, {})", o(x)),
                AtomicOp::CompareExchange(e, d) => format!("cas({loc}, {}, {})", o(e), o(d)),
                AtomicOp::Fetch(f, x) => format!("{}({loc}, {})", f.name(), o(x)),
            };
            match (dst, branch) {
                (Some(d), _) => format!("{} = {expr};", reg(d)),
                (None, Some(b)) => format!(
                    "if ({expr} {} {}) goto {};",
                    b.cmp.symbol(),
                    o(b.rhs),
                    target(code, b.target)
                ),
                (None, None) => format!("{expr};"),
            }
        }
        Instr::Branch {
            a,
            cmp,
            b,
            target: t,
        } => format!(
            "if ({} {} {}) goto {};",
            o(a),
            cmp.symbol(),
            o(b),
            target(code, t)
        ),
        Instr::Goto { target: t } => format!("goto {};", target(code, t)),
        Instr::Choose { target: t, finite } => format!(
            "choose {}goto {};",
            if finite { "finitely " } else { "" },
            target(code, t)
        ),
        Instr::Barrier => "barrier();".into(),
        Instr::Collective { op, dst, src } => format!("{} = {}({});", reg(dst), op.name(), o(src)),
    }
}

/// Instruction `pc` of code block `c`, numbered: `3: barrier();`.
pub fn at(p: &Program, c: usize, pc: usize) -> String {
    let code = &p.codes[c];
    format!("{pc}: {}", instr(p, code, &code.instrs[pc]))
}
