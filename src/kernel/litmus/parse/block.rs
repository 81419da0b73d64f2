//! A code block's statements (docs/KERNEL.md §5): instructions with their
//! labels, and the structured statements `if (c) { } else { }`, `loop { }`,
//! `break;` and `continue;`, lowered to goto code with the constructs that
//! say where the lanes merge (§2.8). Nesting is bounded by
//! [`MAX_NESTING`], so no input makes the parser recurse deeply.

use super::{err, too_many, Parser, Regs};
use crate::axb::test::Target;
use crate::error::ParseError;
use crate::kernel::litmus::lex::{Tok, Token};
use crate::kernel::program::{is_name, Cmp, Code, Construct, Instr, MAX_CODE_LEN, MAX_REGS};
use std::collections::HashMap;

/// At most this many structured statements inside one another.
pub const MAX_NESTING: usize = 16;

/// The instructions of a block being read, and what is left to resolve.
#[derive(Default)]
pub(super) struct Body {
    instrs: Vec<Instr>,
    labels: Vec<Option<String>>,
    spans: Vec<(usize, usize)>,
    /// Targets named by label: (pc, name, where), resolved at the end.
    pub(super) pending: Vec<(usize, String, Token)>,
    /// Merges named by label: (construct, name, where).
    merges: Vec<(usize, String, Token)>,
    label_at: HashMap<String, (usize, Token)>,
    label: Option<String>,
    constructs: Vec<Construct>,
    /// Per enclosing loop, the pcs of its `break`s and `continue`s.
    loops: Vec<(Vec<usize>, Vec<usize>)>,
}

impl Body {
    pub(super) fn pc(&self) -> usize {
        self.instrs.len()
    }

    /// Appends an instruction (with the label written before it).
    fn emit(&mut self, ins: Instr, at: &Token) -> Result<usize, ParseError> {
        if self.instrs.len() == MAX_CODE_LEN {
            return Err(too_many(at, MAX_CODE_LEN, "instructions in a block"));
        }
        self.instrs.push(ins);
        self.labels.push(self.label.take());
        self.spans.push((at.line, at.col));
        Ok(self.instrs.len() - 1)
    }

    fn patch(&mut self, pc: usize, to: usize) {
        let t = Target::At(to as u8);
        super::set_target(&mut self.instrs[pc], t);
    }
}

/// `c` negated: the branch to the else arm of `if (c)`.
fn negate(c: Cmp) -> Cmp {
    match c {
        Cmp::Eq => Cmp::Ne,
        Cmp::Ne => Cmp::Eq,
        Cmp::Lt => Cmp::Ge,
        Cmp::Ge => Cmp::Lt,
        Cmp::Le => Cmp::Gt,
        Cmp::Gt => Cmp::Le,
    }
}

impl Parser<'_> {
    /// `{ [reg r, ...;] statement* }`.
    pub(super) fn block(&mut self) -> Result<(Code, Vec<(usize, usize)>), ParseError> {
        self.punct("{")?;
        let mut regs = Regs {
            names: Vec::new(),
            declared: false,
        };
        if self.is_ident("reg") {
            self.next();
            regs.declared = true;
            self.reg_decls(&mut regs)?;
        }
        let mut b = Body::default();
        self.statements(&mut regs, &mut b, 0)?;
        self.resolve(regs, b)
    }

    fn reg_decls(&mut self, regs: &mut Regs) -> Result<(), ParseError> {
        loop {
            let (r, at) = self.name("register")?;
            if self.location_index(&r).is_some() {
                return Err(err(&at, format!("`{r}` is a memory location")));
            }
            if regs.names.contains(&r) {
                return Err(err(&at, format!("register `{r}` is declared twice")));
            }
            if regs.names.len() == MAX_REGS {
                return Err(too_many(&at, MAX_REGS, "registers in a block"));
            }
            regs.names.push(r);
            if !self.is_punct(",") {
                break;
            }
            self.next();
        }
        self.punct(";")?;
        Ok(())
    }

    /// Label targets and merges by name, then the code.
    fn resolve(
        &mut self,
        regs: Regs,
        mut b: Body,
    ) -> Result<(Code, Vec<(usize, usize)>), ParseError> {
        let len = b.instrs.len();
        let find = |b: &Body, name: &str, t: &Token| {
            b.label_at
                .get(name)
                .map(|(target, _)| Target::from_pc(*target, len))
                .ok_or_else(|| err(t, format!("no label `{name}` in this block")))
        };
        for (pc, name, t) in std::mem::take(&mut b.pending) {
            let target = find(&b, &name, &t)?;
            super::set_target(&mut b.instrs[pc], target);
        }
        for (k, name, t) in std::mem::take(&mut b.merges) {
            let target = find(&b, &name, &t)?;
            match &mut b.constructs[k] {
                Construct::Selection { merge, .. } | Construct::Loop { merge, .. } => {
                    *merge = target
                }
            }
        }
        for k in &mut b.constructs {
            let m = k.merge().pc(len);
            match k {
                Construct::Selection { merge, .. } | Construct::Loop { merge, .. } => {
                    *merge = Target::from_pc(m, len)
                }
            }
        }
        b.constructs.sort_by_key(|k| {
            (
                k.header(),
                matches!(k, Construct::Selection { .. }),
                std::cmp::Reverse(k.merge().pc(len)),
            )
        });
        let code = Code {
            regs: regs.names,
            instrs: b.instrs,
            labels: b.labels,
            constructs: b.constructs,
            at: Default::default(),
        };
        Ok((code, b.spans))
    }

    /// Statements up to and including the `}` that closes them.
    fn statements(
        &mut self,
        regs: &mut Regs,
        b: &mut Body,
        depth: usize,
    ) -> Result<(), ParseError> {
        loop {
            if self.is_punct("}") {
                let close = self.next();
                if b.label.is_some() {
                    return Err(err(&close, "a label must be followed by an instruction"));
                }
                return Ok(());
            }
            if self.peek().tok == Tok::Eof {
                let t = self.peek();
                return Err(err(t, "expected `}` to close the block"));
            }
            self.prefixes(b)?;
            self.statement(regs, b, depth)?;
        }
    }

    /// Labels `name:` and the optional instruction number `N:`.
    fn prefixes(&mut self, b: &mut Body) -> Result<(), ParseError> {
        let pc = b.pc();
        loop {
            let second_is_colon = matches!(self.peek2().tok, Tok::Punct(":"));
            match self.peek().tok.clone() {
                Tok::Ident(w) if second_is_colon => {
                    let t = self.next();
                    self.next();
                    if !is_name(&w) {
                        return Err(err(&t, format!("`{w}` cannot be a label")));
                    }
                    if b.label.is_some() {
                        return Err(err(&t, "an instruction has at most one label"));
                    }
                    if let Some((_, first)) = b.label_at.get(&w) {
                        return Err(err(
                            &t,
                            format!(
                                "label `{w}` is defined twice (first at {}:{})",
                                first.line, first.col
                            ),
                        ));
                    }
                    b.label_at.insert(w.clone(), (pc, t));
                    b.label = Some(w);
                }
                Tok::Num(n) if second_is_colon => {
                    let t = self.next();
                    self.next();
                    if n != pc as u64 {
                        return Err(err(
                            &t,
                            format!("instruction number {n} does not match its position {pc}"),
                        ));
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn statement(&mut self, regs: &mut Regs, b: &mut Body, depth: usize) -> Result<(), ParseError> {
        let at = self.peek().clone();
        let word = match &at.tok {
            Tok::Ident(w) => w.clone(),
            _ => String::new(),
        };
        match word.as_str() {
            "if" => self.if_statement(regs, b, depth),
            "loop" if matches!(self.peek2().tok, Tok::Punct("{")) => {
                self.loop_statement(regs, b, depth)
            }
            "break" | "continue" if matches!(self.peek2().tok, Tok::Punct(";")) => {
                self.next();
                self.next();
                let Some(l) = b.loops.len().checked_sub(1) else {
                    return Err(err(&at, format!("`{word}` outside a loop")));
                };
                let pc = b.emit(
                    Instr::Goto {
                        target: Target::End,
                    },
                    &at,
                )?;
                let (breaks, continues) = &mut b.loops[l];
                if word == "break" { breaks } else { continues }.push(pc);
                Ok(())
            }
            _ => {
                let pc = b.pc();
                let ins = self.instr(regs, pc, &mut b.pending)?;
                self.annotations(b, pc)?;
                self.punct(";")?;
                b.emit(ins, &at).map(|_| ())
            }
        }
    }

    /// `if (c) goto L [merge M];` or `if (c) { ... } [else { ... }]`.
    fn if_statement(
        &mut self,
        regs: &mut Regs,
        b: &mut Body,
        depth: usize,
    ) -> Result<(), ParseError> {
        let at = self.next();
        let pc = b.pc();
        let mut ins = self.condition(regs, pc, &mut b.pending)?;
        if !self.is_punct("{") {
            self.annotations(b, pc)?;
            self.punct(";")?;
            return b.emit(ins, &at).map(|_| ());
        }
        nesting(&at, depth)?;
        // The branch goes to the else arm when the condition fails.
        negate_branch(&mut ins);
        let h = b.emit(ins, &at)?;
        self.next();
        self.statements(regs, b, depth + 1)?;
        let merge = if self.is_ident("else") {
            let e = self.next();
            let j = b.emit(
                Instr::Goto {
                    target: Target::End,
                },
                &e,
            )?;
            b.patch(h, b.pc());
            if self.is_ident("if") {
                self.prefixes(b)?;
                self.statement(regs, b, depth + 1)?;
            } else {
                self.punct("{")?;
                self.statements(regs, b, depth + 1)?;
            }
            b.patch(j, b.pc());
            b.pc()
        } else {
            b.patch(h, b.pc());
            b.pc()
        };
        b.constructs.push(Construct::Selection {
            header: h as u8,
            merge: Target::At(merge as u8),
        });
        Ok(())
    }

    /// `loop { ... }`: the body, then its back edge.
    fn loop_statement(
        &mut self,
        regs: &mut Regs,
        b: &mut Body,
        depth: usize,
    ) -> Result<(), ParseError> {
        let at = self.next();
        nesting(&at, depth)?;
        self.punct("{")?;
        let h = b.pc();
        let label = b.label.take();
        b.loops.push((Vec::new(), Vec::new()));
        b.label = label;
        self.statements(regs, b, depth + 1)?;
        if b.pc() == h {
            return Err(err(&at, "`loop { }` has an empty body: it would never end"));
        }
        let c = b.emit(
            Instr::Goto {
                target: Target::At(h as u8),
            },
            &at,
        )?;
        let (breaks, continues) = b.loops.pop().expect("pushed above");
        for pc in breaks {
            b.patch(pc, c + 1);
        }
        for pc in continues {
            b.patch(pc, c);
        }
        b.constructs.push(Construct::Loop {
            header: h as u8,
            merge: Target::At((c + 1) as u8),
        });
        Ok(())
    }

    /// `merge M` and `loop_merge M` after an instruction: the constructs
    /// it heads (§2.8).
    fn annotations(&mut self, b: &mut Body, pc: usize) -> Result<(), ParseError> {
        let mut selection = false;
        while self.is_ident("merge") || self.is_ident("loop_merge") {
            let t = self.next();
            let is_loop = t.tok == Tok::Ident("loop_merge".into());
            if !is_loop && std::mem::replace(&mut selection, true) {
                return Err(err(&t, "an instruction heads at most one selection"));
            }
            let mt = self.next();
            let merge = match &mt.tok {
                Tok::Ident(w) if w == "END" => Target::End,
                Tok::Num(n) if *n <= 255 => Target::At(*n as u8),
                Tok::Ident(w) if is_name(w) => {
                    b.merges.push((b.constructs.len(), w.clone(), mt.clone()));
                    Target::End
                }
                _ => {
                    return Err(err(
                        &mt,
                        "expected the merge: a label, an instruction number or END",
                    ))
                }
            };
            let header = pc as u8;
            b.constructs.push(if is_loop {
                Construct::Loop { header, merge }
            } else {
                Construct::Selection { header, merge }
            });
        }
        Ok(())
    }
}

fn nesting(at: &Token, depth: usize) -> Result<(), ParseError> {
    if depth == MAX_NESTING {
        return Err(err(
            at,
            format!("more than {MAX_NESTING} levels of nested statements"),
        ));
    }
    Ok(())
}

/// Negates the comparison of a conditional branch.
fn negate_branch(ins: &mut Instr) {
    match ins {
        Instr::Branch { cmp, .. } => *cmp = negate(*cmp),
        Instr::Atomic {
            branch: Some(b), ..
        } => b.cmp = negate(b.cmp),
        _ => unreachable!("a condition is a conditional branch"),
    }
}
