//! Outcome assertions (docs/KERNEL.md §5.4): herd-style `exists` and
//! `forall` clauses over the final memory and registers of a program.
//! Termination is not the only question a litmus test asks: the SIMT-Step
//! tests (issue 22) ask which final states a model allows, so a program can
//! name outcomes and the oracle says, per model, whether each is reachable.
//!
//! A final state is one in which every invocation has terminated. `exists C`
//! holds (the outcome C is *allowed*) when some reachable final state
//! satisfies C, and is *forbidden* otherwise; `forall C` holds when every
//! reachable final state satisfies C (vacuously when none is reachable).

use super::cmp::Cmp;
use serde::{Deserialize, Serialize};
use std::fmt;

/// `exists` or `forall`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Quantifier {
    Exists,
    Forall,
}

impl Quantifier {
    pub fn word(self) -> &'static str {
        match self {
            Quantifier::Exists => "exists",
            Quantifier::Forall => "forall",
        }
    }
}

/// One assertion: a quantifier over the reachable final states.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Assertion {
    pub quantifier: Quantifier,
    pub cond: Cond,
}

/// A condition on one final state. The parser flattens nested `&&` into one
/// `And` (and `||` into one `Or`) and never makes one of a single operand,
/// so the printed text parses back to the same tree.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Cond {
    Atom(Atom),
    Not(Box<Cond>),
    And(Vec<Cond>),
    Or(Vec<Cond>),
}

/// `term CMP value`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Atom {
    pub term: Term,
    pub cmp: Cmp,
    pub value: u16,
}

/// What a condition reads: a global location (`x`, `a[1]`), a workgroup's
/// copy of a shared location (`w1:s`, `w1:s[0]`), or a register of an
/// invocation (`w1:r` for local invocation 0, `w1.2:r`): the names the
/// oracle's state descriptions use.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Term {
    pub workgroup: Option<u8>,
    pub local: Option<u8>,
    pub name: String,
    pub index: Option<u8>,
}

/// A term resolved against a program: a memory cell (location, copy,
/// element) or a register (workgroup, local invocation, register).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    Mem {
        location: usize,
        copy: usize,
        element: usize,
    },
    Reg {
        workgroup: usize,
        local: usize,
        reg: usize,
    },
}

impl Cond {
    /// Every atom, in text order.
    pub fn atoms(&self) -> Vec<&Atom> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a Atom>) {
        match self {
            Cond::Atom(a) => out.push(a),
            Cond::Not(c) => c.collect(out),
            Cond::And(cs) | Cond::Or(cs) => cs.iter().for_each(|c| c.collect(out)),
        }
    }

    /// The truth of the condition where `value` gives each atom's term.
    pub fn eval(&self, value: &mut impl FnMut(&Term) -> u16) -> bool {
        match self {
            Cond::Atom(a) => a.cmp.eval(value(&a.term), a.value),
            Cond::Not(c) => !c.eval(value),
            Cond::And(cs) => cs.iter().all(|c| c.eval(value)),
            Cond::Or(cs) => cs.iter().any(|c| c.eval(value)),
        }
    }

    /// Writes the condition; `tight`: as an operand of `&&` or `!`, where
    /// an `Or` needs parentheses (an `And` needs them only under `!`).
    fn write(&self, f: &mut fmt::Formatter<'_>, under_not: bool, under_and: bool) -> fmt::Result {
        match self {
            Cond::Atom(a) => write!(f, "{} {} {}", a.term, a.cmp.symbol(), a.value),
            Cond::Not(c) => {
                f.write_str("!")?;
                match **c {
                    Cond::Atom(_) | Cond::Not(_) => c.write(f, true, true),
                    _ => {
                        f.write_str("(")?;
                        c.write(f, false, false)?;
                        f.write_str(")")
                    }
                }
            }
            Cond::And(cs) | Cond::Or(cs) => {
                let and = matches!(self, Cond::And(_));
                let paren = under_not || (under_and && !and);
                if paren {
                    f.write_str("(")?;
                }
                for (k, c) in cs.iter().enumerate() {
                    if k > 0 {
                        f.write_str(if and { " && " } else { " || " })?;
                    }
                    c.write(f, false, and)?;
                }
                if paren {
                    f.write_str(")")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(w) = self.workgroup {
            write!(f, "w{w}")?;
            if let Some(l) = self.local {
                write!(f, ".{l}")?;
            }
            f.write_str(":")?;
        }
        f.write_str(&self.name)?;
        if let Some(i) = self.index {
            write!(f, "[{i}]")?;
        }
        Ok(())
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, false, false)
    }
}

impl fmt::Display for Assertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.quantifier.word(), self.cond)
    }
}
