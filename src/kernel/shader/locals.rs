//! Uninitialised locals (docs/KERNEL.md §10.3): WGSL zero-initialises a
//! function's variables; GLSL and SPIR-V leave a local declared without an
//! initializer undefined until it is written. The kernel program's
//! registers start at 0, so a read of such a local before any write would
//! be decided as a read of 0: a value the shader never promised. This pass
//! refuses, at the read, a GLSL or SPIR-V shader in which a local may be
//! read before it is written.
//!
//! The analysis is definite assignment over naga's structured IR, one
//! function at a time (the entry point and every function it calls): a
//! local is assigned after a `Store` to it; after an `if`, where both arms
//! assigned it; a loop's body and continuing block, and each case of a
//! switch, start from what was assigned before them, and after a loop or a
//! switch only that holds (a `break` may leave before any write). A local
//! whose address is passed to a call is read there (GLSL's `inout`). Every
//! path's assigned set only grows, so a read checked against a subset of
//! what is assigned on every path to it is safe: the pass may refuse a
//! shader whose reads are in fact preceded by writes on every schedule
//! (the message says "may"), never accept one whose read is not.

use super::{ShaderError, Span};
use naga::{Expression as E, Handle, Statement as S};
use std::collections::HashSet;

type Set = HashSet<Handle<naga::LocalVariable>>;

/// Refuses the first read of a local that may be unassigned, in the entry
/// point `entry` of `module` and the functions it calls. `glsl`: the
/// module came through naga's GLSL frontend, whose own temporaries
/// (unnamed, no initializer) are always written first and are skipped.
pub fn check(
    module: &naga::Module,
    entry: &naga::Function,
    lang: &str,
    glsl: bool,
) -> Result<(), ShaderError> {
    let mut done = HashSet::new();
    let mut todo = vec![entry];
    while let Some(fun) = todo.pop() {
        let mut pass = Pass {
            fun,
            lang,
            tracked: fun
                .local_variables
                .iter()
                .filter(|(_, lv)| lv.init.is_none() && !(glsl && lv.name.is_none()))
                .map(|(h, _)| h)
                .collect(),
            calls: Vec::new(),
        };
        pass.block(&fun.body, Set::new())?;
        for f in pass.calls {
            if done.insert(f) {
                todo.push(&module.functions[f]);
            }
        }
    }
    Ok(())
}

struct Pass<'a> {
    fun: &'a naga::Function,
    lang: &'a str,
    /// The locals declared without an initializer.
    tracked: Set,
    /// The functions called.
    calls: Vec<Handle<naga::Function>>,
}

impl Pass<'_> {
    /// The locals assigned at the end of `b` entered with `st` assigned;
    /// `None` where `b` does not fall through (it returns, breaks,
    /// continues or kills on every path).
    fn block(&mut self, b: &naga::Block, mut st: Set) -> Result<Option<Set>, ShaderError> {
        for (s, span) in b.span_iter() {
            match s {
                S::Emit(range) => {
                    for h in range.clone() {
                        if let E::Load { pointer } = self.fun.expressions[h] {
                            self.read(pointer, &st, self.fun.expressions.get_span(h))?;
                        }
                    }
                }
                S::Store { pointer, .. } => {
                    if let Some(l) = self.local(*pointer) {
                        st.insert(l);
                    }
                }
                S::Call {
                    function,
                    arguments,
                    ..
                } => {
                    self.calls.push(*function);
                    for &a in arguments {
                        self.read(a, &st, *span)?;
                        if let Some(l) = self.local(a) {
                            st.insert(l);
                        }
                    }
                }
                S::Block(inner) => match self.block(inner, st)? {
                    Some(after) => st = after,
                    None => return Ok(None),
                },
                S::If { accept, reject, .. } => {
                    let a = self.block(accept, st.clone())?;
                    let r = self.block(reject, st.clone())?;
                    st = match (a, r) {
                        (Some(a), Some(r)) => a.intersection(&r).copied().collect(),
                        (Some(x), None) | (None, Some(x)) => x,
                        (None, None) => return Ok(None),
                    };
                }
                S::Loop {
                    body, continuing, ..
                } => {
                    self.block(body, st.clone())?;
                    self.block(continuing, st.clone())?;
                }
                S::Switch { cases, .. } => {
                    for c in cases {
                        self.block(&c.body, st.clone())?;
                    }
                }
                S::Return { .. } | S::Kill | S::Break | S::Continue => return Ok(None),
                _ => {}
            }
        }
        Ok(Some(st))
    }

    /// The tracked local `pointer` points to, if it points to one.
    fn local(&self, pointer: Handle<E>) -> Option<Handle<naga::LocalVariable>> {
        match self.fun.expressions[pointer] {
            E::LocalVariable(l) if self.tracked.contains(&l) => Some(l),
            _ => None,
        }
    }

    /// Refuses a read through `pointer` of a tracked local not in `st`.
    fn read(&self, pointer: Handle<E>, st: &Set, span: Span) -> Result<(), ShaderError> {
        match self.local(pointer) {
            Some(l) if !st.contains(&l) => {
                let name = self.fun.local_variables[l]
                    .name
                    .as_deref()
                    .filter(|n| !n.is_empty())
                    .map_or("a local variable".to_string(), |n| format!("`{n}`"));
                let span = if span.is_defined() {
                    span
                } else {
                    self.fun.local_variables.get_span(l)
                };
                Err(ShaderError::new(
                    span,
                    format!(
                        "{name} may be read before it is written: {} leaves a local variable without an initializer undefined, and the tools pick no value; give it one where it is declared",
                        self.lang
                    ),
                ))
            }
            _ => Ok(()),
        }
    }
}
