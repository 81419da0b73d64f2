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
pub const FUNCTIONS: [(&str, Option<RmwOp>); 8] = [
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
    /// Expressions to drop (the loads of the copies).
    pub exprs: Vec<Handle<E>>,
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
            sp.exprs.push(*v1);
            sp.exprs.push(*v2);
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
        let (fun, value, compare) = match (name, arguments) {
            ("AtomicCompSwap", [_, c, v]) => (
                naga::AtomicFunction::Exchange { compare: Some(*c) },
                *v,
                Some(*c),
            ),
            ("AtomicExchange", [_, v]) => {
                (naga::AtomicFunction::Exchange { compare: None }, *v, None)
            }
            (_, [_, v]) => (rmw_function(rmw), *v, None),
            _ => return refuse(self.span, "an atomic call with unexpected arguments"),
        };
        let _ = compare;
        self.glsl_result = true;
        let r = self.atomic(orig, &fun, value, result);
        self.glsl_result = false;
        self.release(arguments[0]);
        r
    }
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
