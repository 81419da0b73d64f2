//! GLSL atomics. naga's GLSL frontend knows no `atomic*` built-in, so
//! [`crate::kernel::shader::glsl`] renames each call (`atomicAdd` becomes
//! `AtomicAdd`, same length, so positions stay put) and declares those
//! names as functions with an `inout` first parameter. naga passes a buffer
//! or shared variable to an `inout` parameter through a spill variable:
//!
//! ```text
//! spill = load(orig); r = AtomicAdd(&spill, v); orig = load(spill);
//! ```
//!
//! This module finds that pattern in a block before it is translated, and
//! the call is translated as one atomic read-modify-write on `orig`; the
//! two copies are dropped (they are the frontend's, not the shader's).

use super::*;

/// The renamed GLSL atomics and what each is.
pub const FUNCTIONS: [(&str, Option<RmwOp>); 10] = [
    ("AtomicLoad", None),
    ("AtomicStore", None),
    ("AtomicAdd", Some(RmwOp::Add)),
    ("AtomicMin", Some(RmwOp::Min)),
    ("AtomicMax", Some(RmwOp::Max)),
    ("AtomicAnd", Some(RmwOp::And)),
    ("AtomicOr", Some(RmwOp::Or)),
    ("AtomicXor", Some(RmwOp::Xor)),
    ("AtomicExchange", None),
    ("AtomicCompSwap", None),
];

/// The copies around one renamed atomic call.
#[derive(Default, Debug)]
pub(super) struct Spills {
    /// Statements to drop (the copy in and the copy back), by address.
    pub stmts: Vec<*const naga::Statement>,
    /// Expressions to drop (the loads of the copies), with the function
    /// whose arena holds them: a handle names an expression of one
    /// function only (a helper's own handle 2 is not the entry point's).
    pub exprs: Vec<(*const naga::Function, Handle<E>)>,
    /// The original pointer of each call (by the call's address).
    pub orig: Vec<(*const naga::Statement, Handle<E>)>,
}

impl<'a> Lower<'a> {
    /// Whether `f` is a renamed GLSL atomic (only in GLSL modules).
    pub(super) fn glsl_atomic(&self, f: Handle<naga::Function>) -> Option<&'static str> {
        let name = self.module.functions[f].name.as_deref()?;
        self.glsl
            .then(|| FUNCTIONS.iter().find(|(n, _)| *n == name).map(|(n, _)| *n))
            .flatten()
    }

    /// Finds the spill pattern of every renamed atomic call of block `b`.
    pub(super) fn find_spills(&mut self, b: &'a naga::Block) {
        let fun = self.frame().fun;
        let stmts: Vec<&naga::Statement> = b.iter().collect();
        for (i, st) in stmts.iter().enumerate() {
            let S::Call {
                function,
                arguments,
                ..
            } = st
            else {
                continue;
            };
            if self.glsl_atomic(*function).is_none() {
                continue;
            }
            let Some(&spill) = arguments.first() else {
                continue;
            };
            let before = stmts[..i].iter().rev().find(|s| !matches!(s, S::Emit(_)));
            let after = stmts[i + 1..].iter().find(|s| !matches!(s, S::Emit(_)));
            let (
                Some(S::Store {
                    pointer: p1,
                    value: v1,
                }),
                Some(S::Store {
                    pointer: orig,
                    value: v2,
                }),
            ) = (before.copied(), after.copied())
            else {
                continue;
            };
            let loads_orig =
                matches!(fun.expressions[*v1], E::Load { pointer } if pointer == *orig);
            let loads_spill =
                matches!(fun.expressions[*v2], E::Load { pointer } if pointer == spill);
            if *p1 != spill || !loads_orig || !loads_spill {
                continue;
            }
            let sp = &mut self.spills;
            sp.stmts.push(*before.unwrap() as *const _);
            sp.stmts.push(*after.unwrap() as *const _);
            sp.exprs.push((fun as *const _, *v1));
            sp.exprs.push((fun as *const _, *v2));
            sp.orig.push((*st as *const _, *orig));
        }
    }

    /// A dropped copy statement: its uses released, nothing emitted.
    pub(super) fn skip_spill_store(&mut self, pointer: Handle<E>, value: Handle<E>) {
        self.release(value);
        self.release(pointer);
    }

    /// A renamed atomic call, as one atomic instruction on the original
    /// variable.
    pub(super) fn glsl_atomic_call(
        &mut self,
        st: &naga::Statement,
        name: &str,
        arguments: &[Handle<E>],
        result: Option<Handle<E>>,
    ) -> Res<()> {
        let orig = self
            .spills
            .orig
            .iter()
            .find(|(s, _)| std::ptr::eq(*s, st))
            .map(|(_, o)| *o);
        let Some(orig) = orig else {
            return refuse(
                self.span,
                format!(
                    "`{}` on something other than a buffer or shared variable",
                    name.replacen('A', "a", 1)
                ),
            );
        };
        let rmw = FUNCTIONS
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, r)| *r);
        // The scoped forms: the scope, then storage and memory semantics
        // (memory is sequentially consistent: only the scope is read).
        let (args, rest) = match (name, arguments.len()) {
            ("AtomicLoad", 4) => arguments.split_at(1),
            ("AtomicCompSwap", 8) => arguments.split_at(3),
            (_, 5) => arguments.split_at(2),
            _ => arguments.split_at(arguments.len()),
        };
        let scope = match rest.first() {
            Some(&sc) => Some(self.scope_of(sc)?),
            None => None,
        };
        for &a in rest {
            self.release(a);
        }
        let (fun, value) = match (name, args) {
            ("AtomicLoad", [_]) => (None, None),
            ("AtomicStore", [_, v]) => (None, Some(*v)),
            ("AtomicCompSwap", [_, c, v]) => (
                Some(naga::AtomicFunction::Exchange { compare: Some(*c) }),
                Some(*v),
            ),
            ("AtomicExchange", [_, v]) => (
                Some(naga::AtomicFunction::Exchange { compare: None }),
                Some(*v),
            ),
            (_, [_, v]) if rmw.is_some() => (Some(rmw_function(rmw)), Some(*v)),
            _ => return refuse(self.span, "an atomic call with unexpected arguments"),
        };
        match (fun, value) {
            (Some(fun), Some(value)) => {
                self.glsl_result = true;
                let r = self.atomic(orig, &fun, value, result);
                self.glsl_result = false;
                r?;
            }
            (None, Some(value)) => self.atomic_store(orig, value)?,
            _ => self.glsl_atomic_load(orig, result)?,
        }
        self.release(arguments[0]);
        // The scope is checked once the launch is known (finish.rs).
        if let (Some(scope), Some(Instr::Atomic { addr, .. })) = (scope, self.instrs.last()) {
            let loc = addr.loc;
            self.scoped
                .push((loc, scope, self.stmt_span, glsl_name(name)));
        }
        Ok(())
    }

    /// `atomicStore(m, v, scope, ...)`: one atomic store to `orig`.
    fn atomic_store(&mut self, orig: Handle<E>, value: Handle<E>) -> Res<()> {
        let Ptr::Mem(loc, index) = self.pointer(orig)? else {
            return refuse(
                self.span,
                "`atomicStore` on something other than a buffer or shared variable",
            );
        };
        let v = self.take(value)?;
        self.span = self.stmt_span;
        self.access(loc, true, false);
        self.push(Instr::Atomic {
            op: AtomicOp::Store(v),
            addr: Addr { loc, index },
            dst: None,
            branch: None,
        });
        self.release(orig);
        self.release_operand(value);
        Ok(())
    }

    /// A scope argument: a constant GL_KHR_memory_scope_semantics scope.
    fn scope_of(&self, h: Handle<E>) -> Res<u32> {
        let fun = self.frame().fun;
        let lit = match &fun.expressions[h] {
            E::Literal(l) => Some(*l),
            E::Constant(c) => {
                match self.module.global_expressions[self.module.constants[*c].init] {
                    E::Literal(l) => Some(l),
                    _ => None,
                }
            }
            _ => None,
        };
        let v = match lit {
            Some(naga::Literal::I32(v)) => i64::from(v),
            Some(naga::Literal::U32(v)) => i64::from(v),
            _ => -1,
        };
        match v {
            1..=5 => Ok(v as u32),
            _ => refuse(
                self.span,
                "an atomic's scope that is not a constant gl_Scope* value (1 to 5): the scope decides whether the access races",
            ),
        }
    }

    /// `atomicLoad(m, scope, ...)`: one atomic load of `orig`.
    fn glsl_atomic_load(&mut self, orig: Handle<E>, result: Option<Handle<E>>) -> Res<()> {
        let Ptr::Mem(loc, index) = self.pointer(orig)? else {
            return refuse(
                self.span,
                "`atomicLoad` on something other than a buffer or shared variable",
            );
        };
        let live = result.is_some_and(|r| self.refs(r) > 0);
        let dst = if live { Some(self.alloc()?) } else { None };
        self.span = self.stmt_span;
        self.access(loc, false, false);
        self.push(Instr::Atomic {
            op: AtomicOp::Load,
            addr: Addr { loc, index },
            dst,
            branch: None,
        });
        self.release(orig);
        if let (Some(r), Some(d)) = (result, dst) {
            self.put(r, Val::Op(Operand::Reg(d)), vec![d], vec![]);
        }
        Ok(())
    }
}

/// A renamed atomic's GLSL name (`AtomicLoad` is `atomicLoad`).
fn glsl_name(renamed: &str) -> &'static str {
    crate::kernel::shader::glsl::ATOMICS
        .iter()
        .find(|n| n[1..] == renamed[1..])
        .copied()
        .unwrap_or("an atomic")
}

fn rmw_function(r: Option<RmwOp>) -> naga::AtomicFunction {
    match r {
        Some(RmwOp::Add) => naga::AtomicFunction::Add,
        Some(RmwOp::Sub) => naga::AtomicFunction::Subtract,
        Some(RmwOp::Min) => naga::AtomicFunction::Min,
        Some(RmwOp::Max) => naga::AtomicFunction::Max,
        Some(RmwOp::And) => naga::AtomicFunction::And,
        Some(RmwOp::Or) => naga::AtomicFunction::InclusiveOr,
        _ => naga::AtomicFunction::ExclusiveOr,
    }
}
