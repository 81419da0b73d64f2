//! The litmus parser (grammar in docs/KERNEL.md §5). One pass of recursive
//! descent over the tokens; the only nesting is that of a block inside the
//! file, so no input can make it recurse deeply. Every error carries the
//! line and column of the token it is about; rule violations found by
//! [`Program::validate`] are reported at the declaration or instruction
//! they concern.
//!
//! The count bounds of the language (locations, code blocks, instructions
//! and registers per block) are enforced as each item is read, at the
//! first item too many, and names are looked up in hash maps: so the time
//! spent on any input, however long, is linear in the part of it read
//! before the first error (issue 20 item 8: 100,000 globals took 20 s to be
//! refused after parsing, 300,000 labels over two minutes).

use super::lex::{lex, Tok, Token};
use crate::axb::test::Target;
use crate::error::ParseError;
use crate::kernel::assert::{Assertion, Atom as AssertAtom, Cond, Quantifier, Term};
use crate::kernel::model::ScopedModel;
use crate::kernel::program::{
    is_name, Addr, AtomicOp, BinOp, Cmp, Code, CollectiveOp, CondBranch, Expectation, IdKind,
    Instr, Location, Operand, Outcome, Positions, Program, RmwOp, Site, KEYWORDS, MAX_CELLS,
    MAX_CODES, MAX_LOCATIONS, MAX_REGS,
};
use std::collections::HashMap;

mod block;
pub use block::MAX_NESTING;

/// Where each part of a parsed program is in its source.
#[derive(Clone, Debug, Default)]
pub struct Spans {
    pub program: (usize, usize),
    pub model: (usize, usize),
    pub locations: Vec<(usize, usize)>,
    pub codes: Vec<(usize, usize)>,
    pub instrs: Vec<Vec<(usize, usize)>>,
    pub expect: Vec<(usize, usize)>,
    pub asserts: Vec<(usize, usize)>,
}

impl Spans {
    /// The line and column of a site of the program.
    pub fn of(&self, site: Site) -> (usize, usize) {
        let get = |v: Option<&(usize, usize)>| v.copied().unwrap_or(self.program);
        match site {
            Site::Program => self.program,
            Site::Model => self.model,
            Site::Location(l) => get(self.locations.get(l)),
            Site::Code(c) => get(self.codes.get(c)),
            Site::Instr { code, pc } => get(self.instrs.get(code).and_then(|v| v.get(pc))),
            Site::Expect(e) => get(self.expect.get(e)),
            Site::Assert(a) => get(self.asserts.get(a)),
        }
    }
}

/// Parses and validates a litmus file.
pub fn parse(src: &str) -> Result<Program, ParseError> {
    let (mut p, spans) = parse_with_spans(src)?;
    p.validate().map_err(|e| {
        let (line, col) = spans.of(e.site);
        ParseError::new(line, col, e.msg)
    })?;
    crate::kernel::observe::validate(&p).map_err(|(k, msg)| {
        let (line, col) = spans.of(Site::Assert(k));
        ParseError::new(line, col, msg)
    })?;
    p.normalize();
    Ok(p)
}

/// Parses a litmus file without validating it, with the position of every
/// part.
pub fn parse_with_spans(src: &str) -> Result<(Program, Spans), ParseError> {
    let toks = lex(src)?;
    let mut p = Parser {
        src,
        toks,
        i: 0,
        locations: Vec::new(),
        location_ids: HashMap::new(),
    };
    p.file()
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    i: usize,
    locations: Vec<Location>,
    /// The index of each location by name.
    location_ids: HashMap<String, usize>,
}

/// The error for the first item over a count bound, at that item.
fn too_many(t: &Token, max: usize, what: &str) -> ParseError {
    err(
        t,
        format!("more than {max} {what}: at most {max} are supported"),
    )
}

fn err(t: &Token, msg: impl Into<String>) -> ParseError {
    ParseError::new(t.line, t.col, msg)
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Num(n) => format!("`{n}`"),
        Tok::Punct(p) => format!("`{p}`"),
        Tok::Eof => "the end of the file".into(),
    }
}

const ATOMIC_FNS: &[&str] = &[
    "load",
    "exch",
    "Exch",
    "cas",
    "fetch_add",
    "fetch_sub",
    "fetch_and",
    "fetch_or",
    "fetch_xor",
    "fetch_min",
    "fetch_max",
];

fn cmp_of(p: &str) -> Option<Cmp> {
    Cmp::ALL.into_iter().find(|c| c.symbol() == p)
}

fn binop_of(p: &str) -> Option<BinOp> {
    BinOp::ARITH
        .into_iter()
        .find(|o| o.symbol() == p)
        .or_else(|| cmp_of(p).map(BinOp::Cmp))
}

fn id_of(s: &str) -> Option<IdKind> {
    IdKind::ALL.into_iter().find(|k| k.name() == s)
}

/// The workgroups a block is the code of (`None`: all), and where it is.
type Cover = (Option<Vec<(u8, Token)>>, Token);

/// A block's registers: declared with `reg`, or named by first use.
struct Regs {
    names: Vec<String>,
    declared: bool,
}

/// A memory access as written: a location read, or a call.
enum Access {
    Load(Addr),
    Call(AtomicOp, Addr),
}

/// What `file` expects at the start of an item.
const EXPECTED_ITEM: &str = "expected a declaration (values, workgroups, workgroup_size, subgroup_size, global, shared, model, subgroups, expect), an assertion (exists, forall) or code (kernel, workgroup)";

/// At most this many assertions in a program, comparisons in one, and
/// levels of `(` and `!` in one (so parsing cannot recurse deeply).
pub const MAX_ASSERTS: usize = 64;
pub const MAX_ATOMS: usize = 64;
pub const MAX_COND_DEPTH: usize = 16;

/// The items of a file read so far.
#[derive(Default)]
struct Items {
    spans: Spans,
    values: Option<u16>,
    workgroups: Option<(u8, Token)>,
    wg_size: Option<u16>,
    sg_size: Option<u8>,
    model: Option<ScopedModel>,
    /// `subgroups hardware;` ([`Program::hardware_subgroups`]).
    hardware_subgroups: bool,
    /// `collectives tangled;` ([`Program::tangled_collectives`]).
    tangled_collectives: bool,
    expect: Vec<Expectation>,
    asserts: Vec<Assertion>,
    codes: Vec<Code>,
    /// For each block: the workgroups it covers (None: all).
    covers: Vec<Cover>,
}

/// The error for an item given twice.
fn once(seen: bool, t: &Token) -> Result<(), ParseError> {
    if seen {
        let Tok::Ident(w) = &t.tok else {
            unreachable!()
        };
        Err(err(t, format!("`{w}` is given twice")))
    } else {
        Ok(())
    }
}

/// The code block of each workgroup: exactly one each.
fn wg_code_of(covers: &[Cover], workgroups: u8) -> Result<Vec<u8>, ParseError> {
    let mut wg_code: Vec<Option<u8>> = vec![None; workgroups as usize];
    for (c, (list, _)) in covers.iter().enumerate() {
        match list {
            None => wg_code.iter_mut().for_each(|w| *w = Some(c as u8)),
            Some(list) => {
                for (w, t) in list {
                    let Some(slot) = wg_code.get_mut(*w as usize) else {
                        return Err(err(
                            t,
                            format!("workgroup {w} does not exist (workgroups {workgroups})"),
                        ));
                    };
                    if slot.is_some() {
                        return Err(err(t, format!("workgroup {w} has code twice")));
                    }
                    *slot = Some(c as u8);
                }
            }
        }
    }
    if let Some(w) = wg_code.iter().position(Option::is_none) {
        let at = &covers.last().expect("a block").1;
        return Err(err(at, format!("workgroup {w} has no code")));
    }
    Ok(wg_code.into_iter().map(|w| w.expect("checked")).collect())
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Token {
        &self.toks[self.i]
    }

    fn peek2(&self) -> &Token {
        &self.toks[(self.i + 1).min(self.toks.len() - 1)]
    }

    fn next(&mut self) -> Token {
        let t = self.toks[self.i].clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(&self.peek().tok, Tok::Punct(q) if *q == p)
    }

    fn is_ident(&self, w: &str) -> bool {
        matches!(&self.peek().tok, Tok::Ident(q) if q == w)
    }

    fn punct(&mut self, p: &str) -> Result<Token, ParseError> {
        if self.is_punct(p) {
            Ok(self.next())
        } else {
            let t = self.peek();
            Err(err(
                t,
                format!("expected `{p}`, found {}", describe(&t.tok)),
            ))
        }
    }

    fn keyword(&mut self, w: &str) -> Result<Token, ParseError> {
        if self.is_ident(w) {
            Ok(self.next())
        } else {
            let t = self.peek();
            Err(err(
                t,
                format!("expected `{w}`, found {}", describe(&t.tok)),
            ))
        }
    }

    fn number(&mut self, what: &str) -> Result<(u64, Token), ParseError> {
        let t = self.next();
        match t.tok {
            Tok::Num(n) => Ok((n, t)),
            ref other => Err(err(
                &t,
                format!("expected {what}, found {}", describe(other)),
            )),
        }
    }

    fn small(&mut self, what: &str, max: u64) -> Result<u64, ParseError> {
        let (n, t) = self.number(what)?;
        if n > max {
            return Err(err(&t, format!("{what} {n} is too large (at most {max})")));
        }
        Ok(n)
    }

    fn name(&mut self, what: &str) -> Result<(String, Token), ParseError> {
        let t = self.next();
        match &t.tok {
            Tok::Ident(s) if is_name(s) => Ok((s.clone(), t)),
            Tok::Ident(s) if KEYWORDS.contains(&s.as_str()) => Err(err(
                &t,
                format!("`{s}` is a keyword and cannot name a {what}"),
            )),
            other => Err(err(
                &t,
                format!("expected a {what} name, found {}", describe(other)),
            )),
        }
    }

    /// The source text from the current token up to (not including) the
    /// next `stop` punctuation, which is left unconsumed.
    fn text_until(&mut self, stop: &str) -> Result<(String, Token), ParseError> {
        let first = self.peek().clone();
        let mut end = first.start;
        while !self.is_punct(stop) {
            if self.peek().tok == Tok::Eof || self.is_punct(";") {
                let t = self.peek();
                return Err(err(
                    t,
                    format!("expected `{stop}`, found {}", describe(&t.tok)),
                ));
            }
            end = self.next().end;
        }
        Ok((self.src[first.start..end].trim().to_string(), first))
    }

    /// `file := item*`: each item read by its own step into [`Items`],
    /// then the program assembled by [`Parser::finish`].
    fn file(&mut self) -> Result<(Program, Spans), ParseError> {
        let mut it = Items {
            spans: Spans {
                program: (1, 1),
                model: (1, 1),
                ..Spans::default()
            },
            ..Items::default()
        };
        loop {
            let t = self.peek().clone();
            let word = match &t.tok {
                Tok::Eof => break,
                Tok::Ident(w) => w.clone(),
                other => {
                    return Err(err(
                        &t,
                        format!("{EXPECTED_ITEM}, found {}", describe(other)),
                    ))
                }
            };
            match word.as_str() {
                "values" | "workgroups" | "workgroup_size" | "subgroup_size" => {
                    self.count_item(&mut it, &t, &word)?
                }
                "global" | "shared" => {
                    if !it.codes.is_empty() {
                        return Err(err(&t, "declare memory before the code"));
                    }
                    self.next();
                    let (loc, at) = self.location(word == "shared")?;
                    it.spans.locations.push((at.line, at.col));
                    self.location_ids
                        .insert(loc.name.clone(), self.locations.len());
                    self.locations.push(loc);
                }
                "model" => {
                    once(it.model.is_some(), &t)?;
                    self.next();
                    let (text, at) = self.text_until(";")?;
                    it.model = Some(ScopedModel::parse(&text).map_err(|m| err(&at, m))?);
                    it.spans.model = (t.line, t.col);
                    self.punct(";")?;
                }
                "subgroups" => {
                    once(it.hardware_subgroups, &t)?;
                    self.next();
                    self.keyword("hardware")?;
                    self.punct(";")?;
                    it.hardware_subgroups = true;
                }
                "collectives" => {
                    once(it.tangled_collectives, &t)?;
                    self.next();
                    self.keyword("tangled")?;
                    self.punct(";")?;
                    it.tangled_collectives = true;
                }
                "expect" => self.expect_item(&mut it, &t)?,
                "exists" | "forall" => self.assert_item(&mut it, &t, &word)?,
                "kernel" | "workgroup" => self.code_item(&mut it, t, &word)?,
                _ => return Err(err(&t, format!("{EXPECTED_ITEM}, found `{word}`"))),
            }
        }
        self.finish(it)
    }

    /// `values`, `workgroups`, `workgroup_size` or `subgroup_size`.
    fn count_item(&mut self, it: &mut Items, t: &Token, word: &str) -> Result<(), ParseError> {
        let (seen, what, max) = match word {
            "values" => (it.values.is_some(), "a value count", 65535),
            "workgroups" => (it.workgroups.is_some(), "a workgroup count", 255),
            "workgroup_size" => (it.wg_size.is_some(), "a workgroup size", 65535),
            _ => (it.sg_size.is_some(), "a subgroup size", 255),
        };
        once(seen, t)?;
        self.next();
        let n = self.small(what, max)?;
        match word {
            "values" => {
                it.values = Some(n as u16);
                it.spans.program = (t.line, t.col);
            }
            "workgroups" => it.workgroups = Some((n as u8, t.clone())),
            "workgroup_size" => it.wg_size = Some(n as u16),
            _ => it.sg_size = Some(n as u8),
        }
        self.punct(";")?;
        Ok(())
    }

    /// `expect MODEL: (P | F | deadlock);`
    fn expect_item(&mut self, it: &mut Items, t: &Token) -> Result<(), ParseError> {
        self.next();
        let (text, at) = self.text_until(":")?;
        let m = ScopedModel::parse(&text).map_err(|m| err(&at, m))?;
        self.punct(":")?;
        let o = self.next();
        let outcome = match &o.tok {
            Tok::Ident(w) if w == "P" => Outcome::P,
            Tok::Ident(w) if w == "F" => Outcome::F,
            Tok::Ident(w) if w == "deadlock" => Outcome::Deadlock,
            other => {
                return Err(err(
                    &o,
                    format!("expected P, F or deadlock, found {}", describe(other)),
                ))
            }
        };
        self.punct(";")?;
        it.spans.expect.push((t.line, t.col));
        it.expect.push(Expectation { model: m, outcome });
        Ok(())
    }

    /// `(exists | forall) cond ;` (docs/KERNEL.md §5.4).
    fn assert_item(&mut self, it: &mut Items, t: &Token, word: &str) -> Result<(), ParseError> {
        if it.asserts.len() == MAX_ASSERTS {
            return Err(too_many(t, MAX_ASSERTS, "assertions"));
        }
        self.next();
        let quantifier = if word == "exists" {
            Quantifier::Exists
        } else {
            Quantifier::Forall
        };
        let mut atoms = 0;
        let cond = self.cond(0, &mut atoms)?;
        self.punct(";")?;
        it.spans.asserts.push((t.line, t.col));
        it.asserts.push(Assertion { quantifier, cond });
        Ok(())
    }

    /// `cond := conj ('||' conj)*`; `depth` bounds the nesting of
    /// parentheses and `!`, `atoms` the size, so no input recurses deeply.
    fn cond(&mut self, depth: usize, atoms: &mut usize) -> Result<Cond, ParseError> {
        let mut parts = Vec::new();
        loop {
            match self.conj(depth, atoms)? {
                Cond::Or(cs) => parts.extend(cs),
                c => parts.push(c),
            }
            if !self.is_punct("||") {
                break;
            }
            self.next();
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            Cond::Or(parts)
        })
    }

    /// `conj := unary ('&&' unary)*`
    fn conj(&mut self, depth: usize, atoms: &mut usize) -> Result<Cond, ParseError> {
        let mut parts = Vec::new();
        loop {
            match self.unary(depth, atoms)? {
                Cond::And(cs) => parts.extend(cs),
                c => parts.push(c),
            }
            if !self.is_punct("&&") {
                break;
            }
            self.next();
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            Cond::And(parts)
        })
    }

    /// `unary := '!' unary | '(' cond ')' | term CMP NUM`
    fn unary(&mut self, depth: usize, atoms: &mut usize) -> Result<Cond, ParseError> {
        let t = self.peek().clone();
        if depth == MAX_COND_DEPTH {
            return Err(err(
                &t,
                format!("a condition nested more than {MAX_COND_DEPTH} deep"),
            ));
        }
        if self.is_punct("!") {
            self.next();
            return Ok(Cond::Not(Box::new(self.unary(depth + 1, atoms)?)));
        }
        if self.is_punct("(") {
            self.next();
            let c = self.cond(depth + 1, atoms)?;
            self.punct(")")?;
            return Ok(c);
        }
        *atoms += 1;
        if *atoms > MAX_ATOMS {
            return Err(too_many(&t, MAX_ATOMS, "comparisons in an assertion"));
        }
        let term = self.term()?;
        let c = self.next();
        let cmp = match &c.tok {
            Tok::Punct(p) => cmp_of(p),
            _ => None,
        }
        .ok_or_else(|| {
            err(
                &c,
                format!("expected a comparison, found {}", describe(&c.tok)),
            )
        })?;
        let value = self.small("a value", 65535)? as u16;
        Ok(Cond::Atom(AssertAtom { term, cmp, value }))
    }

    /// `term := ('w' NUM ('.' NUM)? ':')? NAME ('[' NUM ']')?`
    fn term(&mut self) -> Result<Term, ParseError> {
        let t = self.peek().clone();
        let mut term = Term {
            workgroup: None,
            local: None,
            name: String::new(),
            index: None,
        };
        let prefix = matches!(&self.peek2().tok, Tok::Punct(":") | Tok::Punct("."));
        if let (Tok::Ident(w), true) = (&t.tok, prefix) {
            let n = w
                .strip_prefix('w')
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|d| d.parse::<u8>().ok())
                .ok_or_else(|| {
                    err(
                        &t,
                        format!("expected an invocation such as `w0`, found `{w}`"),
                    )
                })?;
            self.next();
            term.workgroup = Some(n);
            if self.is_punct(".") {
                self.next();
                term.local = Some(self.small("a local invocation id", 255)? as u8);
            }
            self.punct(":")?;
        }
        term.name = self.name("location or register")?.0;
        if self.is_punct("[") {
            self.next();
            term.index = Some(self.small("an index", 255)? as u8);
            self.punct("]")?;
        }
        Ok(term)
    }

    /// `kernel block` or `workgroup NUM (',' NUM)* block`.
    fn code_item(&mut self, it: &mut Items, t: Token, word: &str) -> Result<(), ParseError> {
        const COMBINED: &str = "a `kernel` block is the code of every workgroup: it cannot be combined with other blocks";
        let kernel = word == "kernel";
        if !kernel && it.codes.len() == MAX_CODES {
            return Err(too_many(&t, MAX_CODES, "code blocks"));
        }
        self.next();
        if (kernel && !it.covers.is_empty()) || it.covers.iter().any(|(c, _)| c.is_none()) {
            return Err(err(&t, COMBINED));
        }
        let list = if kernel {
            None
        } else {
            let mut list = Vec::new();
            loop {
                let (n, at) = self.number("a workgroup id")?;
                if n > 255 {
                    return Err(err(&at, format!("workgroup {n} is out of range")));
                }
                list.push((n as u8, at));
                if !self.is_punct(",") {
                    break;
                }
                self.next();
            }
            Some(list)
        };
        let (code, instr_spans) = self.block()?;
        it.codes.push(code);
        it.spans.codes.push((t.line, t.col));
        it.spans.instrs.push(instr_spans);
        it.covers.push((list, t));
        Ok(())
    }

    /// The program from its items: every workgroup gets exactly one block.
    fn finish(&mut self, mut it: Items) -> Result<(Program, Spans), ParseError> {
        let eof = self.peek().clone();
        let Some((workgroups, wt)) = it.workgroups else {
            return Err(err(&eof, "missing `workgroups N;`"));
        };
        if workgroups == 0 {
            return Err(err(&wt, "a program needs at least one workgroup"));
        }
        if it.codes.is_empty() {
            return Err(err(
                &eof,
                "missing code: a `kernel { ... }` block or `workgroup N { ... }` blocks",
            ));
        }
        let wg_code = wg_code_of(&it.covers, workgroups)?;
        for (code, at) in it.codes.iter_mut().zip(&it.spans.instrs) {
            code.at = Positions(at.clone());
        }
        let program = Program {
            values: it.values.unwrap_or(16),
            workgroups,
            workgroup_size: it.wg_size.unwrap_or(1),
            subgroup_size: it.sg_size.unwrap_or(1),
            locations: std::mem::take(&mut self.locations),
            codes: it.codes,
            wg_code,
            model: it.model,
            expect: it.expect,
            asserts: it.asserts,
            hardware_subgroups: it.hardware_subgroups,
            tangled_collectives: it.tangled_collectives,
        };
        Ok((program, it.spans))
    }

    fn location(&mut self, shared: bool) -> Result<(Location, Token), ParseError> {
        let (name, at) = self.name("memory location")?;
        if self.location_ids.contains_key(&name) {
            return Err(err(&at, format!("`{name}` is declared twice")));
        }
        if self.locations.len() == MAX_LOCATIONS {
            return Err(too_many(&at, MAX_LOCATIONS, "memory locations"));
        }
        let mut len = 1usize;
        let mut array = false;
        if self.is_punct("[") {
            self.next();
            len = self.small("an array length", MAX_CELLS as u64)? as usize;
            self.punct("]")?;
            array = true;
        }
        let mut init = vec![0u8; len];
        if self.is_punct("=") {
            self.next();
            if array {
                let open = self.punct("{")?;
                let mut vals = Vec::new();
                loop {
                    vals.push(self.small("an initial value", 255)? as u8);
                    if !self.is_punct(",") {
                        break;
                    }
                    self.next();
                }
                self.punct("}")?;
                if vals.len() != len {
                    return Err(err(
                        &open,
                        format!("{} initial values for {len} cells", vals.len()),
                    ));
                }
                init = vals;
            } else {
                init = vec![self.small("an initial value", 255)? as u8];
            }
        }
        self.punct(";")?;
        Ok((
            Location {
                name,
                shared,
                array,
                init,
            },
            at,
        ))
    }

    fn location_index(&self, name: &str) -> Option<usize> {
        self.location_ids.get(name).copied()
    }

    fn reg(&mut self, regs: &mut Regs, name: &str, t: &Token) -> Result<u8, ParseError> {
        if let Some(r) = regs.names.iter().position(|n| n == name) {
            return Ok(r as u8);
        }
        if regs.declared {
            return Err(err(
                t,
                format!("register `{name}` is not declared (this block declares its registers with `reg`)"),
            ));
        }
        if regs.names.len() == MAX_REGS {
            return Err(too_many(t, MAX_REGS, "registers in a block"));
        }
        regs.names.push(name.to_string());
        Ok((regs.names.len() - 1) as u8)
    }

    fn operand(&mut self, regs: &mut Regs) -> Result<Operand, ParseError> {
        let t = self.next();
        match &t.tok {
            Tok::Num(n) if *n <= u16::MAX as u64 => Ok(Operand::Imm(*n as u16)),
            Tok::Num(n) => Err(err(&t, format!("value {n} is too large"))),
            Tok::Ident(w) => {
                if let Some(id) = id_of(w) {
                    return Ok(Operand::Id(id));
                }
                if self.location_index(w).is_some() {
                    return Err(err(
                        &t,
                        format!(
                            "`{w}` is a memory location: an instruction makes at most one memory access, so load it into a register first"
                        ),
                    ));
                }
                if !is_name(w) {
                    return Err(err(&t, format!("expected a value, found `{w}`")));
                }
                Ok(Operand::Reg(self.reg(regs, w, &t)?))
            }
            Tok::Punct("-") => Err(err(
                &t,
                "negative numbers are not values: the domain is 0..values (wrap around with `values - 1`)",
            )),
            other => Err(err(&t, format!("expected a value, found {}", describe(other)))),
        }
    }

    fn target(
        &mut self,
        pc: usize,
        pending: &mut Vec<(usize, String, Token)>,
    ) -> Result<Target, ParseError> {
        let t = self.next();
        match &t.tok {
            Tok::Ident(w) if w == "END" => Ok(Target::End),
            Tok::Num(n) if *n <= 255 => Ok(Target::At(*n as u8)),
            Tok::Ident(w) if is_name(w) => {
                pending.push((pc, w.clone(), t.clone()));
                Ok(Target::End)
            }
            other => Err(err(
                &t,
                format!(
                    "expected a label, an instruction number or END, found {}",
                    describe(other)
                ),
            )),
        }
    }

    fn addr(&mut self, regs: &mut Regs) -> Result<Addr, ParseError> {
        let t = self.next();
        let Tok::Ident(name) = &t.tok else {
            return Err(err(
                &t,
                format!("expected a memory location, found {}", describe(&t.tok)),
            ));
        };
        let Some(loc) = self.location_index(name) else {
            return Err(err(
                &t,
                format!("`{name}` is not a declared memory location"),
            ));
        };
        let array = self.locations[loc].array;
        if self.is_punct("[") {
            if !array {
                return Err(err(
                    self.peek(),
                    format!("`{name}` is a scalar: it takes no index"),
                ));
            }
            self.next();
            let index = self.operand(regs)?;
            self.punct("]")?;
            Ok(Addr {
                loc: loc as u8,
                index,
            })
        } else if array {
            Err(err(
                &t,
                format!("`{name}` is an array: index it, e.g. `{name}[0]`"),
            ))
        } else {
            Ok(Addr {
                loc: loc as u8,
                index: Operand::Imm(0),
            })
        }
    }

    /// A memory access: `loc`, `loc[i]`, or a call `exch(loc, v)`, ...
    fn access(&mut self, regs: &mut Regs) -> Result<Option<Access>, ParseError> {
        let Tok::Ident(w) = self.peek().tok.clone() else {
            return Ok(None);
        };
        if self.location_index(&w).is_some() {
            return Ok(Some(Access::Load(self.addr(regs)?)));
        }
        if !ATOMIC_FNS.contains(&w.as_str()) {
            return Ok(None);
        }
        self.next();
        self.punct("(")?;
        let addr = self.addr(regs)?;
        let op = match w.as_str() {
            "load" => AtomicOp::Load,
            "exch" | "Exch" => {
                self.punct(",")?;
                AtomicOp::Exchange(self.operand(regs)?)
            }
            "cas" => {
                self.punct(",")?;
                let e = self.operand(regs)?;
                self.punct(",")?;
                AtomicOp::CompareExchange(e, self.operand(regs)?)
            }
            f => {
                let op = RmwOp::ALL
                    .into_iter()
                    .find(|o| o.name() == f)
                    .expect("an atomic function");
                self.punct(",")?;
                AtomicOp::Fetch(op, self.operand(regs)?)
            }
        };
        self.punct(")")?;
        Ok(Some(if op == AtomicOp::Load {
            Access::Load(addr)
        } else {
            Access::Call(op, addr)
        }))
    }

    fn no_second_access(&self) -> Result<(), ParseError> {
        let t = self.peek();
        if let Tok::Punct(p) = &t.tok {
            if binop_of(p).is_some() {
                return Err(err(
                    t,
                    "an instruction makes one memory access and nothing else: load into a register, then compute",
                ));
            }
        }
        Ok(())
    }

    /// `choose [finitely] goto L` (docs/KERNEL.md §2.11), at `choose`.
    fn choice(
        &mut self,
        pc: usize,
        pending: &mut Vec<(usize, String, Token)>,
    ) -> Result<Instr, ParseError> {
        self.next();
        let finite = self.is_ident("finitely");
        if finite {
            self.next();
        }
        self.keyword("goto")?;
        Ok(Instr::Choose {
            target: self.target(pc, pending)?,
            finite,
        })
    }

    fn instr(
        &mut self,
        regs: &mut Regs,
        pc: usize,
        pending: &mut Vec<(usize, String, Token)>,
    ) -> Result<Instr, ParseError> {
        let t = self.peek().clone();
        let Tok::Ident(word) = &t.tok else {
            return Err(err(
                &t,
                format!("expected an instruction, found {}", describe(&t.tok)),
            ));
        };
        let ins = match word.as_str() {
            "goto" => {
                self.next();
                Instr::Goto {
                    target: self.target(pc, pending)?,
                }
            }
            // `choose goto L;`, `choose finitely goto L;` (a register
            // named `choose` is assigned, not followed by a word).
            "choose" if matches!(&self.peek2().tok, Tok::Ident(w) if w == "goto" || w == "finitely") => {
                self.choice(pc, pending)?
            }
            "barrier" => {
                self.next();
                self.punct("(")?;
                self.punct(")")?;
                Instr::Barrier
            }
            w if ATOMIC_FNS.contains(&w) => match self.access(regs)? {
                Some(Access::Load(addr)) => Instr::Atomic {
                    op: AtomicOp::Load,
                    addr,
                    dst: None,
                    branch: None,
                },
                Some(Access::Call(op, addr)) => Instr::Atomic {
                    op,
                    addr,
                    dst: None,
                    branch: None,
                },
                None => unreachable!(),
            },
            w if self.location_index(w).is_some() => {
                let addr = self.addr(regs)?;
                self.punct("=")?;
                let v = self.operand(regs)?;
                self.no_second_access()?;
                Instr::Atomic {
                    op: AtomicOp::Store(v),
                    addr,
                    dst: None,
                    branch: None,
                }
            }
            w if is_name(w) && matches!(self.peek2().tok, Tok::Punct("(")) => {
                return Err(err(
                    &t,
                    format!(
                        "expected an instruction, found `{w}`: the calls are load, exch, cas, fetch_add, fetch_sub, fetch_and, fetch_or, fetch_xor, fetch_min, fetch_max, barrier, subgroupAll, subgroupAny, subgroupBroadcastFirst"
                    ),
                ))
            }
            w if is_name(w) => {
                let name = w.to_string();
                self.next();
                let dst = self.reg(regs, &name, &t)?;
                self.punct("=")?;
                self.rhs(regs, dst)?
            }
            w => return Err(err(&t, format!("expected an instruction, found `{w}`"))),
        };
        Ok(ins)
    }

    /// `if (c) goto L` (the `if` read): the conditional branch, or, when a
    /// `{` follows the condition, the branch with its target to be set.
    fn condition(
        &mut self,
        regs: &mut Regs,
        pc: usize,
        pending: &mut Vec<(usize, String, Token)>,
    ) -> Result<Instr, ParseError> {
        self.punct("(")?;
        let lhs = self.access(regs)?;
        let a = match lhs {
            Some(_) => None,
            None => Some(self.operand(regs)?),
        };
        let ct = self.next();
        let cmp = match &ct.tok {
            Tok::Punct(p) => cmp_of(p),
            _ => None,
        }
        .ok_or_else(|| {
            err(
                &ct,
                format!(
                    "expected a comparison (==, !=, <, <=, >, >=), found {}",
                    describe(&ct.tok)
                ),
            )
        })?;
        let rhs = self.operand(regs)?;
        self.punct(")")?;
        let target = if self.is_punct("{") {
            Target::End
        } else {
            self.keyword("goto")?;
            self.target(pc, pending)?
        };
        Ok(match (lhs, a) {
            (Some(Access::Load(addr)), _) => fused(AtomicOp::Load, addr, cmp, rhs, target),
            (Some(Access::Call(op, addr)), _) => fused(op, addr, cmp, rhs, target),
            (None, a) => Instr::Branch {
                a: a.expect("an operand"),
                cmp,
                b: rhs,
                target,
            },
        })
    }

    fn rhs(&mut self, regs: &mut Regs, dst: u8) -> Result<Instr, ParseError> {
        if let Some(acc) = self.access(regs)? {
            self.no_second_access()?;
            let (op, addr) = match acc {
                Access::Load(a) => (AtomicOp::Load, a),
                Access::Call(op, a) => (op, a),
            };
            return Ok(Instr::Atomic {
                op,
                addr,
                dst: Some(dst),
                branch: None,
            });
        }
        if let Tok::Ident(w) = self.peek().tok.clone() {
            if let Some(op) = CollectiveOp::ALL.into_iter().find(|o| o.name() == w) {
                self.next();
                self.punct("(")?;
                let src = self.operand(regs)?;
                self.punct(")")?;
                return Ok(Instr::Collective { op, dst, src });
            }
        }
        let a = self.operand(regs)?;
        let op = match &self.peek().tok {
            Tok::Punct(p) => binop_of(p),
            _ => None,
        };
        match op {
            Some(op) => {
                self.next();
                let b = self.operand(regs)?;
                Ok(Instr::Assign {
                    dst,
                    op: Some(op),
                    a,
                    b,
                })
            }
            None => Ok(Instr::Assign {
                dst,
                op: None,
                a,
                b: Operand::Imm(0),
            }),
        }
    }
}

fn fused(op: AtomicOp, addr: Addr, cmp: Cmp, rhs: Operand, target: Target) -> Instr {
    Instr::Atomic {
        op,
        addr,
        dst: None,
        branch: Some(CondBranch { cmp, rhs, target }),
    }
}

fn set_target(i: &mut Instr, t: Target) {
    match i {
        Instr::Atomic {
            branch: Some(b), ..
        } => b.target = t,
        Instr::Branch { target, .. } | Instr::Goto { target } | Instr::Choose { target, .. } => {
            *target = t
        }
        _ => unreachable!("only branches have pending targets"),
    }
}
