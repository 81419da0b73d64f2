//! Uninitialised variables (docs/KERNEL.md §10.3): WGSL zero-initialises a
//! function's variables and its private globals; GLSL and SPIR-V leave a
//! local or a private global declared without an initializer undefined
//! until it is written. The kernel program's registers start at 0, so a
//! read of such a variable before any write would be decided as a read of
//! 0: a value the shader never promised. This pass refuses, at the read, a
//! GLSL or SPIR-V shader in which one may be read before it is written.
//!
//! The analysis is definite assignment over naga's structured IR, from the
//! entry point through every call (a callee is analysed at each call with
//! the private globals assigned there, its locals fresh): a variable is
//! assigned after a `Store` to it; after an `if`, where both arms assigned
//! it; a loop's body and continuing block, and each case of a switch,
//! start from what was assigned before them, and after a loop or a switch
//! only that holds (a `break` may leave early); after a call, what the
//! callee assigned on every way out; a variable whose address is passed to
//! a call is read there (GLSL's `inout`). Every path's assigned set only
//! grows, so a read checked against a subset of what is assigned on every
//! path to it is safe: the pass may refuse a shader whose reads are in
//! fact preceded by writes on every schedule (the message says "may"),
//! never accept one whose read is not.

use super::{ShaderError, Span};
use naga::{Expression as E, Handle, Statement as S};
use std::collections::HashSet;

/// A tracked variable: a function's local, or a private global.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Var {
    Local(Handle<naga::LocalVariable>),
    Global(Handle<naga::GlobalVariable>),
}

type Set = HashSet<Var>;

/// The most calls analysed (each call is analysed again: a function
/// calling another ten times, eight deep, would be 10^8), as the
/// translation's own bound on inlined calls.
const MAX_CALLS: usize = super::lower::MAX_INLINED_CALLS;

/// Refuses the first read of a variable that may be unassigned, in the
/// entry point `entry` of `module` and the functions it calls. `glsl`:
/// the module came through naga's GLSL frontend, whose own temporaries
/// (unnamed locals without an initializer) are always written first and
/// are not tracked.
pub fn check(
    module: &naga::Module,
    entry: &naga::Function,
    lang: &str,
    glsl: bool,
) -> Result<(), ShaderError> {
    let globals: HashSet<Handle<naga::GlobalVariable>> = module
        .global_variables
        .iter()
        .filter(|(_, g)| g.space == naga::AddressSpace::Private && g.init.is_none())
        .map(|(h, _)| h)
        .collect();
    let mut calls = 0;
    analyse(module, entry, lang, glsl, &globals, Set::new(), &mut calls)?;
    Ok(())
}

/// Analyses `fun` entered with the private globals `assigned`; the globals
/// assigned on every way out of it.
fn analyse(
    module: &naga::Module,
    fun: &naga::Function,
    lang: &str,
    glsl: bool,
    globals: &HashSet<Handle<naga::GlobalVariable>>,
    assigned: Set,
    calls: &mut usize,
) -> Result<Set, ShaderError> {
    let mut pass = Pass {
        module,
        fun,
        lang,
        glsl,
        globals,
        tracked: fun
            .local_variables
            .iter()
            .filter(|(_, lv)| lv.init.is_none() && !(glsl && lv.name.is_none()))
            .map(|(h, _)| h)
            .collect(),
        returns: None,
        calls,
    };
    let end = pass.block(&fun.body, assigned)?;
    let out = match (end, pass.returns) {
        (Some(a), Some(r)) => a.intersection(&r).copied().collect(),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => Set::new(),
    };
    Ok(out
        .into_iter()
        .filter(|v| matches!(v, Var::Global(_)))
        .collect())
}

struct Pass<'a, 'c> {
    module: &'a naga::Module,
    fun: &'a naga::Function,
    lang: &'a str,
    glsl: bool,
    globals: &'a HashSet<Handle<naga::GlobalVariable>>,
    /// The locals declared without an initializer.
    tracked: HashSet<Handle<naga::LocalVariable>>,
    /// What is assigned at every `return` so far (intersected).
    returns: Option<Set>,
    calls: &'c mut usize,
}

impl Pass<'_, '_> {
    /// The variables assigned at the end of `b` entered with `st`
    /// assigned; `None` where `b` does not fall through (it returns,
    /// breaks, continues or kills on every path).
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
                    if let Some(v) = self.var(*pointer) {
                        st.insert(v);
                    }
                }
                S::Call {
                    function,
                    arguments,
                    ..
                } => st = self.call(*function, arguments, st, *span)?,
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
                S::Return { .. } => {
                    self.returns = Some(match self.returns.take() {
                        Some(r) => r.intersection(&st).copied().collect(),
                        None => st,
                    });
                    return Ok(None);
                }
                S::Kill | S::Break | S::Continue => return Ok(None),
                _ => {}
            }
        }
        Ok(Some(st))
    }

    /// A call: its pointer arguments read (and then assigned, as `inout`),
    /// the callee analysed with the globals assigned here.
    fn call(
        &mut self,
        function: Handle<naga::Function>,
        arguments: &[Handle<E>],
        mut st: Set,
        span: Span,
    ) -> Result<Set, ShaderError> {
        for &a in arguments {
            self.read(a, &st, span)?;
            if let Some(v) = self.var(a) {
                st.insert(v);
            }
        }
        *self.calls += 1;
        if *self.calls > MAX_CALLS {
            return Err(ShaderError::new(
                span,
                format!("more than {MAX_CALLS} calls to follow: refused"),
            ));
        }
        let globals_in: Set = st
            .iter()
            .copied()
            .filter(|v| matches!(v, Var::Global(_)))
            .collect();
        let callee = &self.module.functions[function];
        let out = analyse(
            self.module,
            callee,
            self.lang,
            self.glsl,
            self.globals,
            globals_in,
            self.calls,
        )?;
        st.extend(out);
        Ok(st)
    }

    /// The tracked variable `pointer` points to, if it points to one.
    fn var(&self, pointer: Handle<E>) -> Option<Var> {
        match self.fun.expressions[pointer] {
            E::LocalVariable(l) if self.tracked.contains(&l) => Some(Var::Local(l)),
            E::GlobalVariable(g) if self.globals.contains(&g) => Some(Var::Global(g)),
            _ => None,
        }
    }

    /// Refuses a read through `pointer` of a tracked variable not in `st`.
    fn read(&self, pointer: Handle<E>, st: &Set, span: Span) -> Result<(), ShaderError> {
        let Some(v) = self.var(pointer).filter(|v| !st.contains(v)) else {
            return Ok(());
        };
        let (name, what, decl) = match v {
            Var::Local(l) => {
                let lv = &self.fun.local_variables[l];
                (
                    lv.name.clone(),
                    "a local variable",
                    self.fun.local_variables.get_span(l),
                )
            }
            Var::Global(g) => {
                let gv = &self.module.global_variables[g];
                (
                    gv.name.clone(),
                    "a private global variable",
                    self.module.global_variables.get_span(g),
                )
            }
        };
        let name = name
            .filter(|n| !n.is_empty())
            .map_or(what.to_string(), |n| format!("`{n}`"));
        let span = if span.is_defined() { span } else { decl };
        Err(ShaderError::new(
            span,
            format!(
                "{name} may be read before it is written: {} leaves {what} without an initializer undefined, and the tools pick no value; give it one where it is declared",
                self.lang
            ),
        ))
    }
}
