//! The SIMT form of a kernel program with outcome assertions (issue 22,
//! docs/KERNEL.md §2.10): the SIMT-Step tests as CUDA, GLSL (Vulkan,
//! `GL_KHR_shader_subgroup_*`) and WGSL (`enable subgroups;`), so that a
//! device answers the paper's question: which final states does it show?
//!
//! **Structured, not dispatched.** The run form of [`super`] lowers every
//! instruction to a `case` of one dispatch loop, where the device's lanes
//! reconverge wherever its compiler likes. Here the program's structured
//! control flow (§2.8) is written as the language's own `if`/`else` and
//! loops, so that lanes diverge and reconverge only as the source structure
//! says and the device's reconvergence is what is tested. A block that is
//! not structured, a barrier, a shared location or a jump that the
//! language's `break`/`continue`/`return` cannot say is refused.
//!
//! **Subgroups are the device's.** Program subgroup `k` (of `s` lanes) is
//! the first `s` lanes of the device's subgroup `k` (CUDA: warp `k`);
//! the other lanes of the workgroup, launched as `nsub` padded subgroups
//! ([`pad`]), skip the program. Collectives are the device's own subgroup
//! operations over the lanes that execute them together (CUDA: the
//! `__activemask()` of the moment), as Property 1 of the paper reads them.
//! A device whose subgroups are smaller than `s` flags the run
//! unsupported.
//!
//! **One run, one outcome.** Every invocation writes its registers into
//! binding `regs_out` when it ends; memory is the global buffer. The
//! `// axb-simt:` first line says where each term the assertions name
//! (`observed`) is read, so that any host turns a run into one outcome
//! line, `m[0]=1 m[1]=2` (values masked to the program's `values`). Loops
//! spend a budget: an invocation that spends it leaves its loops and is
//! counted `stopped` (the run has no outcome then).

use crate::target::kernel::{
    atomic_cell, atomic_old, header, indent, index_refusal, init_words, layout, lower, registers,
    Lang, Layout, Spell,
};
use crate::target::language::SimtFile;
use progress_litmus::axb::test::Target as Jump;
use progress_litmus::kernel::assert::Probe;
use progress_litmus::kernel::litmus;
use progress_litmus::kernel::load::NamedProgram;
use progress_litmus::kernel::observe;
use progress_litmus::kernel::program::{Instr, Program};
use progress_litmus::kernel::structure::{self, Construct};
use std::fmt::Write;

pub use crate::target::language::SIMT_FIRST_LINE as FIRST_LINE;

pub use crate::target::wgsl::SUBGROUPS_ENABLE as ENABLE;

/// Loop iterations an invocation may spend in a run, all loops together.
pub const BUDGET: u32 = 1 << 20;

/// The invocations a program subgroup is padded to: a CUDA warp; in GLSL
/// and WGSL the largest subgroup Vulkan and WebGPU allow (128).
pub fn pad(lang: Lang) -> usize {
    lang.language().max_subgroup()
}

/// The largest workgroup the SIMT form launches: WebGPU's default limit
/// (256), Vulkan's required minimum of `maxComputeWorkGroupSize.x` (1024
/// on every desktop device; 128 is the minimum, and lavapipe has 1024),
/// CUDA's 1024.
fn max_launch(lang: Lang) -> usize {
    lang.language().max_workgroup()
}

/// Where an observed term is read: a word of global memory or of
/// `regs_out`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Mem(usize),
    Reg(usize),
}

/// The terms the program's assertions name, each once in text order, with
/// where a run leaves its value; or why one cannot be observed.
pub(crate) fn observed(p: &Program, lay: &Layout) -> Result<Vec<(String, Source)>, String> {
    let regs = p.codes.iter().map(|c| c.regs.len()).max().unwrap_or(0);
    let n = usize::from(p.workgroup_size);
    let mut out: Vec<(String, Source)> = Vec::new();
    for a in &p.asserts {
        for atom in a.cond.atoms() {
            let name = atom.term.to_string();
            if out.iter().any(|(t, _)| *t == name) {
                continue;
            }
            let src = match observe::resolve(&atom.term, p)? {
                Probe::Mem {
                    location, element, ..
                } => {
                    if p.locations[location].shared {
                        return Err(format!(
                            "`{name}` is a shared location: the SIMT form observes global memory and registers"
                        ));
                    }
                    Source::Mem(lay.global_off[location] + element)
                }
                Probe::Reg {
                    workgroup,
                    local,
                    reg,
                } => Source::Reg((workgroup * n + local) * regs + reg),
            };
            out.push((name, src));
        }
    }
    Ok(out)
}

/// Why `p` has no SIMT form in `lang`, before its blocks are walked.
fn refusal(p: &NamedProgram, lang: Lang) -> Option<String> {
    let prog = &p.program;
    let at = format!("{}: program `{}`", p.source.display(), p.name);
    if prog.asserts.is_empty() {
        return Some(format!("{at}: the SIMT form needs outcome assertions (`exists`/`forall`, docs/KERNEL.md §5.4): they say what a run records"));
    }
    if prog.locations.iter().any(|l| l.shared) {
        return Some(format!(
            "{at}: the SIMT form takes global locations only (a shared location needs a barrier, which the padding lanes of its subgroups never reach)"
        ));
    }
    let s = usize::from(prog.subgroup_size.max(1));
    let n = usize::from(prog.workgroup_size);
    if n % s != 0 {
        return Some(format!("{at}: workgroup_size {n} is not a multiple of subgroup_size {s}: the SIMT form runs whole subgroups"));
    }
    if s > pad(lang) {
        return Some(format!(
            "{at}: subgroup_size {s} exceeds the {}-lane subgroups of {}",
            pad(lang),
            lang.language().title()
        ));
    }
    let launch = n / s * pad(lang);
    if launch > max_launch(lang) {
        return Some(format!(
            "{at}: {} subgroups padded to {} lanes are {launch} invocations a workgroup, over the {} {} allows",
            n / s,
            pad(lang),
            max_launch(lang),
            lang.language().title()
        ));
    }
    index_refusal(p)
}

/// The SIMT form of `p` in `lang`, or why it has none.
pub fn emit_simt(p: &NamedProgram, lang: Lang) -> Result<String, String> {
    if let Some(why) = refusal(p, lang) {
        return Err(why);
    }
    let prog = &p.program;
    let lay = layout(prog);
    let at = |c: usize, pc: usize| {
        format!(
            "{}: program `{}`, `{}`",
            p.source.display(),
            p.name,
            litmus::print::at(prog, c, pc)
        )
    };
    let obs = observed(prog, &lay)
        .map_err(|e| format!("{}: program `{}`: {e}", p.source.display(), p.name))?;
    let sp = Spell {
        lang,
        mask: prog.values as u32 - 1,
        bits: prog.values.trailing_zeros(),
        bare: false,
    };
    let mut blocks = Vec::new();
    for (c, code) in prog.codes.iter().enumerate() {
        let flow = code.flow();
        let place = |pc: usize| code.place(pc);
        let st = structure::analyse(&flow, &code.constructs, &place)
            .map_err(|(pc, m)| format!("{}: {m}", at(c, pc)))?;
        structure::require(&flow, &st, "the SIMT form", &place)
            .map_err(|(pc, m)| format!("{}: {m}", at(c, pc)))?;
        let mut w = Walk {
            p: prog,
            c,
            lay: &lay,
            sp: &sp,
            loops: Vec::new(),
        };
        let mut out = String::new();
        let len = code.instrs.len();
        w.range_into(0, len, len, &mut out)
            .map_err(|(pc, m)| format!("{}: {m}", at(c, pc)))?;
        blocks.push(out);
    }
    let body = simt_body(prog, &blocks, lang);
    let observed = obs
        .iter()
        .map(|(t, src)| match *src {
            Source::Mem(k) => (t.clone(), false, k),
            Source::Reg(k) => (t.clone(), true, k),
        })
        .collect();
    Ok(lang.language().simt_file(&SimtFile {
        name: &p.name,
        first_line: simt_line(p, &lay, &obs, lang),
        comment: comment(p, lang),
        body,
        launch: usize::from(prog.workgroup_size) / usize::from(prog.subgroup_size.max(1))
            * pad(lang),
        workgroups: prog.workgroups.into(),
        invocations: usize::from(prog.workgroups) * usize::from(prog.workgroup_size),
        global_words: lay.global_words,
        init_words: init_words(prog, &lay),
        reg_words: regs_words(prog),
        values: prog.values,
        budget: BUDGET,
        observed,
    }))
}

/// A code block's walk: the instructions of a range as structured code.
struct Walk<'a> {
    p: &'a Program,
    c: usize,
    lay: &'a Layout,
    sp: &'a Spell,
    /// The enclosing loops, innermost last: (continue target, merge).
    loops: Vec<(usize, usize)>,
}

type WalkErr = (usize, String);

impl Walk<'_> {
    fn len(&self) -> usize {
        self.p.codes[self.c].instrs.len()
    }

    fn pc_of(&self, t: Jump) -> usize {
        match t {
            Jump::At(t) => t as usize,
            Jump::End => self.len(),
        }
    }

    /// Writes pcs `start..end`, whose fall-through goes to `exit` (the
    /// end of the enclosing arm, body or block).
    fn range_into(
        &mut self,
        start: usize,
        end: usize,
        exit: usize,
        out: &mut String,
    ) -> Result<(), WalkErr> {
        let mut pc = start;
        while pc < end {
            let constructs = &self.p.codes[self.c].constructs;
            // A loop headed here that fits the range (a loop whose body is
            // this range is open already: its merge lies past `end`).
            let lp = constructs
                .iter()
                .filter_map(|k| match *k {
                    Construct::Loop { header, merge } if header as usize == pc => {
                        Some(self.pc_of(merge))
                    }
                    _ => None,
                })
                .filter(|&m| m <= end)
                .max();
            if let Some(m) = lp {
                self.loop_into(pc, m, out)?;
                pc = m;
                continue;
            }
            let sel = constructs.iter().find_map(|k| match *k {
                Construct::Selection { header, merge } if header as usize == pc => {
                    Some(self.pc_of(merge))
                }
                _ => None,
            });
            if let Some(m) = sel.filter(|&m| m <= end) {
                self.selection_into(pc, m, out)?;
                pc = m;
                continue;
            }
            self.instr_into(pc, end, exit, out)?;
            pc += 1;
        }
        Ok(())
    }

    /// A loop `h..m`: its body `h..m-1` in the language's endless loop,
    /// the back edge at `m - 1` its end.
    fn loop_into(&mut self, h: usize, m: usize, out: &mut String) -> Result<(), WalkErr> {
        let cont = m - 1;
        if self.p.codes[self.c].instrs[cont]
            != (Instr::Goto {
                target: Jump::At(h as u8),
            })
        {
            return Err((
                cont,
                "the SIMT form needs a loop's back edge (`goto` its header) at its continue target"
                    .into(),
            ));
        }
        self.loops.push((cont, m));
        let mut body = String::new();
        let r = self.range_into(h, cont, cont, &mut body);
        self.loops.pop();
        r?;
        let guard = "if (budget == 0u) { left = true; break; }\nbudget = budget - 1u;\n";
        let open = if self.sp.wgsl() {
            "loop {"
        } else {
            "for (;;) {"
        };
        let _ = write!(
            out,
            "{open} // loop, merge {m}\n{}}}\n",
            indent(&format!("{guard}{body}"), 1)
        );
        Ok(())
    }

    /// A selection headed by the conditional branch at `h`, merging at `m`.
    fn selection_into(&mut self, h: usize, m: usize, out: &mut String) -> Result<(), WalkErr> {
        let ins = self.p.codes[self.c].instrs[h];
        let mut pre = String::new();
        let (cond, target) = match ins {
            Instr::Branch { a, cmp, b, target } => (
                self.sp.cmp(&self.sp.operand(a), cmp, &self.sp.operand(b)),
                target,
            ),
            Instr::Atomic {
                op,
                addr,
                dst,
                branch: Some(br),
            } => {
                let cell = atomic_cell(self.p, addr, self.lay, self.sp);
                let exact = self.lay.exact[addr.loc as usize];
                let old = atomic_old(op, &cell, exact, self.sp, &mut pre);
                let decl = if self.sp.wgsl() { "let" } else { "uint" };
                let _ = writeln!(pre, "{decl} v = {old} & {};", self.sp.u(self.sp.mask));
                if let Some(d) = dst {
                    let _ = writeln!(pre, "r{d} = v;");
                }
                (
                    self.sp.cmp("v", br.cmp, &self.sp.operand(br.rhs)),
                    br.target,
                )
            }
            _ => {
                return Err((
                    h,
                    "a selection's header must be a conditional branch".into(),
                ))
            }
        };
        let t = self.pc_of(target);
        if t <= h || t > m {
            return Err((
                h,
                format!("the branch's target {t} is not an arm of the selection merging at {m}"),
            ));
        }
        let mut fall = String::new();
        self.range_into(h + 1, t, m, &mut fall)?;
        let mut taken = String::new();
        self.range_into(t, m, m, &mut taken)?;
        let text = litmus::print::at(self.p, self.c, h).replace('\n', " ");
        let _ = writeln!(out, "{{ // {text}");
        let mut s = format!("{pre}if (!({cond})) {{\n{}}}", indent(&fall, 1));
        if t < m {
            let _ = write!(s, " else {{\n{}}}", indent(&taken, 1));
        }
        s.push('\n');
        let _ = writeln!(out, "{}}}", indent(&s, 1));
        Ok(())
    }

    /// Instruction `pc` of a range ending at `end` whose fall-through goes
    /// to `exit`.
    fn instr_into(
        &mut self,
        pc: usize,
        end: usize,
        exit: usize,
        out: &mut String,
    ) -> Result<(), WalkErr> {
        let ins = self.p.codes[self.c].instrs[pc];
        let text = litmus::print::at(self.p, self.c, pc).replace('\n', " ");
        match ins {
            Instr::Goto { target } => {
                let t = self.pc_of(target);
                let inner = self.loops.last().copied();
                let s = if t == exit && pc + 1 == end {
                    return Ok(());
                } else if inner.is_some_and(|(_, m)| m == t) {
                    "break;".to_string()
                } else if inner.is_some_and(|(c, _)| c == t) {
                    "continue;".to_string()
                } else if t == self.len() {
                    format!("{}return;", finish(self.p, self.sp.lang))
                } else {
                    return Err((pc, format!("a jump to {t} that the SIMT form cannot write as break, continue or return")));
                };
                let _ = writeln!(out, "{s} // {text}");
            }
            Instr::Branch { .. }
            | Instr::Atomic {
                branch: Some(_), ..
            } => {
                return Err((pc, "a conditional branch that heads no selection".into()));
            }
            Instr::Barrier => {
                return Err((pc, "the SIMT form takes no barriers (the padding lanes of a subgroup never reach them)".into()));
            }
            Instr::Collective { op, dst, src } => {
                let _ = writeln!(
                    out,
                    "{} // {text}",
                    self.sp
                        .l()
                        .active_collective(op, dst, &self.sp.operand(src))
                );
            }
            _ => {
                let body: String = lower(self.p, self.c, pc, self.lay, self.sp)
                    .lines()
                    .filter(|l| !l.starts_with("pc = "))
                    .map(|l| format!("{l}\n"))
                    .collect();
                let _ = write!(out, "{{ // {text}\n{}}}\n", indent(&body, 1));
            }
        }
        Ok(())
    }
}

/// What an invocation does when it ends: its registers into `regs_out`,
/// then `finished` or `stopped`.
fn finish(p: &Program, lang: Lang) -> String {
    let regs = p.codes.iter().map(|c| c.regs.len()).max().unwrap_or(0);
    let n = p.workgroup_size;
    let mut s = String::new();
    for r in 0..regs {
        let _ = writeln!(
            s,
            "regs_out[(wg_id * {n}u + local_id) * {regs}u + {r}u] = r{r};"
        );
    }
    s.push_str(lang.language().count_end());
    s
}

/// The kernel's body: the device's subgroup and lane, the program's ids
/// of the lanes that run it, and its blocks per workgroup.
fn simt_body(p: &Program, blocks: &[String], lang: Lang) -> String {
    let s = p.subgroup_size.max(1);
    let nsub = p.workgroup_size / u16::from(s);
    let l = lang.language();
    let (dev, unsupported) = l.simt_lanes(s.into());
    let decl = if lang.wgsl() { "let" } else { "uint" };
    let mut prog = format!(
        "{decl} subgroup_id = dev_sg;\n{decl} lane_id = dev_lane;\n{decl} local_id = subgroup_id * {s}u + lane_id;\n{}{}",
        l.simt_state(),
        registers(p, lang)
    );
    let discard = l.discard();
    if !discard.is_empty() {
        let _ = write!(prog, "{discard}subgroup_id;\n{discard}lane_id;\n");
    }
    if blocks.len() == 1 {
        prog.push_str(&blocks[0]);
    } else {
        for (c, b) in blocks.iter().enumerate() {
            let mask: u32 = (0..p.workgroups as usize)
                .filter(|&w| p.wg_code[w] as usize == c)
                .map(|w| 1u32 << w)
                .sum();
            let _ = write!(
                prog,
                "if ((({mask}u >> wg_id) & 1u) == 1u) {{\n{}}}\n",
                indent(b, 1)
            );
        }
    }
    prog.push_str(&finish(p, lang));
    format!(
        "{dev}{unsupported}if (dev_lane < {s}u && dev_sg < {nsub}u) {{\n{}}}\n",
        indent(&prog, 1)
    )
}

/// The `// axb-simt:` first line: how to launch the file and read a run.
fn simt_line(p: &NamedProgram, lay: &Layout, obs: &[(String, Source)], lang: Lang) -> String {
    let prog = &p.program;
    let s = usize::from(prog.subgroup_size.max(1));
    let launch = usize::from(prog.workgroup_size) / s * pad(lang);
    let regs = prog.codes.iter().map(|c| c.regs.len()).max().unwrap_or(0);
    let observe: Vec<String> = obs
        .iter()
        .map(|(t, src)| match src {
            Source::Mem(k) => format!("{t}@mem:{k}"),
            Source::Reg(k) => format!("{t}@reg:{k}"),
        })
        .collect();
    format!(
        "{FIRST_LINE} workgroups={} launch={launch} words={} init={} regs={} values={} observe={}\n",
        prog.workgroups,
        lay.global_words,
        init_words(prog, lay).join(",").replace('u', ""),
        usize::from(prog.workgroups) * usize::from(prog.workgroup_size) * regs.max(1),
        prog.values,
        observe.join(",")
    )
}

fn regs_words(p: &Program) -> usize {
    let regs = p.codes.iter().map(|c| c.regs.len()).max().unwrap_or(0);
    usize::from(p.workgroups) * usize::from(p.workgroup_size) * regs.max(1)
}

fn comment(p: &NamedProgram, lang: Lang) -> String {
    let s = p.program.subgroup_size.max(1);
    format!(
        "// The SIMT form (backends emit on a program with outcome assertions; docs/KERNEL.md §2.10):\n\
         // structured control flow as written, program subgroup k = the first {s} lanes of the\n\
         // device's subgroup k (padded to {} lanes), collectives over the lanes executing together.\n{}",
        pad(lang),
        header(p, lang, "//", None)
    )
}
