//! WGSL's uniformity rule for barriers, where it surely fails
//! (docs/KERNEL.md §10.3).
//!
//! WGSL requires `workgroupBarrier`, `storageBarrier` and
//! `workgroupUniformLoad` in uniform control flow, and its uniformity
//! analysis rejects at shader creation a barrier under a condition it
//! takes as non-uniform; naga does not run that analysis (naga issue
//! 1744). The value check finds a barrier some invocations pass by on a
//! schedule (`values/barriers.rs`), but a shader whose condition happens
//! to be uniform on every run (every invocation loads the same 0 from an
//! atomic) is still one WGSL rejects, which no GPU runs, so it has no
//! verdict. This pass refuses the barriers the analysis surely rejects: one
//! under an `if` or `switch` whose condition reads, through any operation,
//! a value the analysis takes as non-uniform (a local or global
//! invocation id, a load from `read_write` storage or workgroup memory, an
//! atomic's or a subgroup operation's result). The analysis is a taint
//! analysis: a value computed from a non-uniform one is non-uniform, so
//! such a condition is non-uniform whatever else it reads. Conditions
//! through function-scope variables or calls, and barriers in loops left
//! non-uniformly, are left to the value check: this pass never refuses a
//! shader WGSL accepts.

use super::{ShaderError, Span};
use naga::{AddressSpace, BuiltIn, Expression as E, Function, Handle, Module, Statement as S};

/// Refuses the entry point `f` of `module` where a barrier stands under a
/// condition WGSL's uniformity analysis surely takes as non-uniform.
/// `src` is the shader's text, for the condition's line.
pub fn check(module: &Module, f: &Function, src: &str) -> Result<(), ShaderError> {
    walk(&Ctx { module, f, src }, &f.body, &[])
}

/// What the walk reads: the module, the entry point and the source.
struct Ctx<'a> {
    module: &'a Module,
    f: &'a Function,
    src: &'a str,
}

/// The barriers of `block`, under the enclosing conditions `under` (each
/// with its statement's span).
fn walk(c: &Ctx, block: &naga::Block, under: &[(Handle<E>, Span)]) -> Result<(), ShaderError> {
    for (st, span) in block.span_iter() {
        let inner = |cond: Handle<E>| {
            let mut v = under.to_vec();
            v.push((cond, *span));
            v
        };
        match st {
            S::ControlBarrier(_) | S::WorkGroupUniformLoad { .. } => {
                barrier(c, *span, under)?;
            }
            S::Block(b) => walk(c, b, under)?,
            S::If {
                condition,
                accept,
                reject,
            } => {
                let v = inner(*condition);
                walk(c, accept, &v)?;
                walk(c, reject, &v)?;
            }
            S::Switch { selector, cases } => {
                let v = inner(*selector);
                for case in cases {
                    walk(c, &case.body, &v)?;
                }
            }
            S::Loop {
                body, continuing, ..
            } => {
                walk(c, body, under)?;
                walk(c, continuing, under)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The barrier at `span` is refused where one of the conditions it
/// stands under is surely non-uniform.
fn barrier(c: &Ctx, span: Span, under: &[(Handle<E>, Span)]) -> Result<(), ShaderError> {
    let Some((what, at)) = under
        .iter()
        .find_map(|&(cond, at)| non_uniform(c.module, c.f, cond).map(|w| (w, at)))
    else {
        return Ok(());
    };
    let place = match at.to_range() {
        Some(r) => format!(" at line {}", super::line_col(c.src, r.start as u32).0),
        None => String::new(),
    };
    Err(ShaderError::new(
        span,
        format!("a workgroup barrier in non-uniform control flow: it stands under the condition{place}, which reads {what}, non-uniform to WGSL's uniformity analysis; WGSL rejects such a shader at creation (naga does not check it), so no GPU runs it"),
    ))
}

/// What makes expression `e` surely non-uniform to WGSL's uniformity
/// analysis, if anything: the first such source it reads.
fn non_uniform(module: &Module, f: &Function, e: Handle<E>) -> Option<String> {
    let any = |hs: &[Handle<E>]| hs.iter().find_map(|&h| non_uniform(module, f, h));
    match &f.expressions[e] {
        E::FunctionArgument(i) => builtin(module, f, *i as usize, None),
        E::AccessIndex { base, index } => match f.expressions[*base] {
            E::FunctionArgument(i) => builtin(module, f, i as usize, Some(*index)),
            _ => non_uniform(module, f, *base),
        },
        E::Load { pointer } => load(module, f, *pointer),
        E::AtomicResult { .. } => Some("an atomic's result".into()),
        E::SubgroupBallotResult | E::SubgroupOperationResult { .. } => {
            Some("a subgroup operation's result".into())
        }
        E::Access { base, index } => any(&[*base, *index]),
        E::Binary { left, right, .. } => any(&[*left, *right]),
        E::Unary { expr, .. } | E::As { expr, .. } | E::Splat { value: expr, .. } => any(&[*expr]),
        E::Swizzle { vector, .. } => any(&[*vector]),
        E::Select {
            condition,
            accept,
            reject,
        } => any(&[*condition, *accept, *reject]),
        E::Relational { argument, .. } => any(&[*argument]),
        E::Math {
            arg,
            arg1,
            arg2,
            arg3,
            ..
        } => {
            let args: Vec<_> = [Some(*arg), *arg1, *arg2, *arg3]
                .into_iter()
                .flatten()
                .collect();
            any(&args)
        }
        E::Compose { components, .. } => any(components),
        _ => None,
    }
}

/// What makes argument `i` (member `member` of a struct argument) of the
/// entry point non-uniform: a built-in that differs between the
/// invocations of a workgroup.
fn builtin(module: &Module, f: &Function, i: usize, member: Option<u32>) -> Option<String> {
    let arg = f.arguments.get(i)?;
    let binding = match member {
        None => arg.binding.as_ref(),
        Some(m) => match &module.types[arg.ty].inner {
            naga::TypeInner::Struct { members, .. } => members.get(m as usize)?.binding.as_ref(),
            _ => arg.binding.as_ref(),
        },
    };
    let Some(naga::Binding::BuiltIn(b)) = binding else {
        return None;
    };
    let name = match b {
        BuiltIn::LocalInvocationId => "local_invocation_id",
        BuiltIn::LocalInvocationIndex => "local_invocation_index",
        BuiltIn::GlobalInvocationId => "global_invocation_id",
        BuiltIn::SubgroupInvocationId => "subgroup_invocation_id",
        BuiltIn::SubgroupId => "subgroup_id",
        _ => return None,
    };
    Some(format!("the built-in {name}"))
}

/// What makes a load through `pointer` non-uniform: memory every
/// invocation may write (`read_write` storage, workgroup memory), or a
/// non-uniform index into it.
fn load(module: &Module, f: &Function, pointer: Handle<E>) -> Option<String> {
    match &f.expressions[pointer] {
        E::GlobalVariable(g) => {
            let var = &module.global_variables[*g];
            let name = var.name.as_deref().unwrap_or("a variable");
            let writable = match var.space {
                AddressSpace::WorkGroup => true,
                AddressSpace::Storage { access } => access.contains(naga::StorageAccess::STORE),
                _ => false,
            };
            writable.then(|| format!("`{name}` (memory other invocations may write)"))
        }
        E::Access { base, index } => {
            load(module, f, *base).or_else(|| non_uniform(module, f, *index))
        }
        E::AccessIndex { base, .. } => load(module, f, *base),
        _ => None,
    }
}
