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
//! verdict. This pass refuses the barriers the analysis surely rejects:
//! one in control flow non-uniform because of a value the analysis takes
//! as non-uniform (a local or global invocation id, a load from
//! `read_write` storage or workgroup memory, an atomic's or a subgroup
//! operation's result, a function-scope variable set from one or in
//! such control flow): under an `if` or `switch` on it, after a
//! `return`, `break` or `continue` taken under one, or in a loop such an
//! exit may leave. The analysis is a taint analysis: a value computed
//! from a non-uniform one is non-uniform, so such a condition is
//! non-uniform whatever else it reads. Calls, a variable a later
//! iteration sets, and the code after a loop a `break` left
//! non-uniformly are left to the value check: this pass never refuses a
//! shader WGSL accepts.

use super::{ShaderError, Span};
use naga::{AddressSpace, BuiltIn, Expression as E, Function, Handle, Module, Statement as S};
use std::collections::HashMap;

/// Refuses the entry point `f` of `module` where a barrier stands in
/// control flow WGSL's uniformity analysis surely takes as non-uniform.
/// `src` is the shader's text, for the lines messages name.
pub fn check(module: &Module, f: &Function, src: &str) -> Result<(), ShaderError> {
    let mut w = Walk {
        module,
        f,
        src,
        vars: HashMap::new(),
    };
    w.block(&f.body, None).map(|_| ())
}

/// The walk: the module, the entry point, the source, and the
/// function-scope variables last stored with a non-uniform value or in
/// non-uniform control flow (why). Stores are followed in program order
/// only, so a variable a loop's later iteration taints is missed: the
/// walk may miss a rejection, never invent one.
struct Walk<'a> {
    module: &'a Module,
    f: &'a Function,
    src: &'a str,
    vars: HashMap<Handle<naga::LocalVariable>, String>,
}

/// Why the control flow is non-uniform: `it stands under the condition
/// at line 8, which reads ...`, and the like.
type Why = Option<String>;

/// What leaves a block in non-uniform control flow: a `return` (the rest
/// of the function is then non-uniform) or a `break`/`continue` of the
/// loop around it (the rest of its body, and its later iterations).
#[derive(Default)]
struct Exits {
    ret: Why,
    brk: Why,
}

impl Walk<'_> {
    fn line(&self, span: Span) -> String {
        match span.to_range() {
            Some(r) => format!(" at line {}", super::line_col(self.src, r.start as u32).0),
            None => String::new(),
        }
    }

    /// The condition at `span` reading `e`, where it is surely non-uniform.
    fn condition(&self, e: Handle<E>, span: Span) -> Why {
        let what = self.non_uniform(e)?;
        Some(format!(
            "the condition{}, which reads {what}",
            self.line(span)
        ))
    }

    /// The barriers of `block` in control flow `cf` (`None`: uniform).
    fn block(&mut self, block: &naga::Block, cf: Why) -> Result<Exits, ShaderError> {
        let mut cf = cf;
        let mut out = Exits::default();
        for (st, span) in block.span_iter() {
            let e = match st {
                S::ControlBarrier(_) | S::WorkGroupUniformLoad { .. } => {
                    if let Some(why) = &cf {
                        return Err(refusal(*span, why));
                    }
                    Exits::default()
                }
                S::Store { pointer, value } => {
                    self.store(*pointer, *value, &cf);
                    Exits::default()
                }
                S::Block(b) => self.block(b, cf.clone())?,
                S::If {
                    condition,
                    accept,
                    reject,
                } => {
                    let under = (cf.clone()).or_else(|| self.under(*condition, *span));
                    let before = self.vars.clone();
                    let a = self.block(accept, under.clone())?;
                    let after_accept = std::mem::replace(&mut self.vars, before);
                    let b = self.block(reject, under)?;
                    // A variable either arm leaves non-uniform is so after.
                    for (v, why) in after_accept {
                        self.vars.entry(v).or_insert(why);
                    }
                    Exits {
                        ret: a.ret.or(b.ret),
                        brk: a.brk.or(b.brk),
                    }
                }
                S::Switch { selector, cases } => {
                    let under = (cf.clone()).or_else(|| self.under(*selector, *span));
                    let (before, mut after) = (self.vars.clone(), HashMap::new());
                    let mut ret = None;
                    for case in cases {
                        self.vars = before.clone();
                        // A `break` in a case leaves the switch only.
                        ret = ret.or(self.block(&case.body, under.clone())?.ret);
                        after.extend(self.vars.drain());
                    }
                    self.vars = after;
                    Exits { ret, brk: None }
                }
                S::Loop {
                    body,
                    continuing,
                    break_if,
                } => self.looped(body, continuing, *break_if, *span, &cf)?,
                S::Return { .. } | S::Kill => Exits {
                    ret: cf.clone(),
                    brk: None,
                },
                S::Break | S::Continue => Exits {
                    ret: None,
                    brk: cf.clone(),
                },
                _ => Exits::default(),
            };
            // After a non-uniform exit, the rest runs for some invocations
            // only.
            if cf.is_none() {
                cf = (e.ret.clone())
                    .or(e.brk.clone())
                    .map(|why| after_exit(&why));
            }
            out.ret = out.ret.or(e.ret);
            out.brk = out.brk.or(e.brk);
        }
        Ok(out)
    }

    fn under(&self, cond: Handle<E>, span: Span) -> Why {
        let why = self.condition(cond, span)?;
        Some(format!("it stands under {why}"))
    }

    /// A loop in control flow `cf`: where a `break` or `return` may leave
    /// it non-uniformly, invocations go around it different numbers of
    /// times, so its whole body is non-uniform (walked again so). After
    /// it, the rest of the function is non-uniform where a `return` may
    /// have left it and it can also end normally.
    fn looped(
        &mut self,
        body: &naga::Block,
        continuing: &naga::Block,
        break_if: Option<Handle<E>>,
        span: Span,
        cf: &Why,
    ) -> Result<Exits, ShaderError> {
        let vars = self.vars.clone();
        let mut e = self.block(body, cf.clone())?;
        let c = self.block(continuing, cf.clone())?;
        e.ret = e.ret.or(c.ret);
        let brk = (e.brk.take()).or(c.brk).or_else(|| {
            let b = break_if?;
            let why = self.condition(b, span)?;
            Some(format!("it stands under {why}"))
        });
        if let (None, Some(why)) = (cf, brk.clone().or(e.ret.clone())) {
            self.vars = vars;
            let inside = Some(format!(
                "its loop may be left by some invocations only: {why}"
            ));
            self.block(body, inside.clone())?;
            self.block(continuing, inside)?;
        }
        let ends = break_if.is_some() || breaks(body);
        Ok(Exits {
            ret: e.ret.filter(|_| ends),
            brk: None,
        })
    }

    /// A store through `pointer` of `value` in control flow `cf`: a
    /// function-scope variable is non-uniform after it where the value or
    /// the control flow is, else uniform.
    fn store(&mut self, pointer: Handle<E>, value: Handle<E>, cf: &Why) {
        let E::LocalVariable(v) = self.f.expressions[pointer] else {
            return;
        };
        let why = match cf {
            Some(why) => Some(format!("a variable set where {why}")),
            None => (self.non_uniform(value)).map(|what| format!("a variable set from {what}")),
        };
        match why {
            Some(w) => {
                self.vars.insert(v, w);
            }
            None => {
                self.vars.remove(&v);
            }
        }
    }
}

/// `why` as the reason for what follows an exit it governs.
fn after_exit(why: &str) -> String {
    format!("it follows a return, break or continue taken by some invocations only ({why})")
}

/// Whether `block` may `break` out of the loop it is the body of (a
/// `break` outside any inner loop or switch).
fn breaks(block: &naga::Block) -> bool {
    block.iter().any(|st| match st {
        S::Break => true,
        S::Block(b) => breaks(b),
        S::If { accept, reject, .. } => breaks(accept) || breaks(reject),
        _ => false,
    })
}

/// The refusal of the barrier at `span`, in control flow non-uniform for
/// `why`.
fn refusal(span: Span, why: &str) -> ShaderError {
    ShaderError::new(
        span,
        format!("a workgroup barrier in non-uniform control flow: {why}, non-uniform to WGSL's uniformity analysis; WGSL rejects such a shader at creation (naga does not check it), so no GPU runs it"),
    )
}

impl Walk<'_> {
    /// What makes expression `e` surely non-uniform to WGSL's uniformity
    /// analysis, if anything: the first such source it reads.
    fn non_uniform(&self, e: Handle<E>) -> Option<String> {
        let (module, f) = (self.module, self.f);
        match &f.expressions[e] {
            E::FunctionArgument(i) => builtin(module, f, *i as usize, None),
            E::AccessIndex { base, index } => match f.expressions[*base] {
                E::FunctionArgument(i) => builtin(module, f, i as usize, Some(*index)),
                _ => self.non_uniform(*base),
            },
            E::Load { pointer } => self.load(*pointer),
            E::AtomicResult { .. } => Some("an atomic's result".into()),
            E::SubgroupBallotResult | E::SubgroupOperationResult { .. } => {
                Some("a subgroup operation's result".into())
            }
            E::Literal(_) | E::Constant(_) | E::ZeroValue(_) | E::Override(_) => None,
            // Any other operation: non-uniform where an operand is (WGSL's
            // analysis is a taint analysis).
            other => {
                let mut found = None;
                super::lower::children(other, &mut |h| {
                    if found.is_none() {
                        found = self.non_uniform(h);
                    }
                });
                found
            }
        }
    }

    /// What makes a load through `pointer` non-uniform: memory every
    /// invocation may write (`read_write` storage, workgroup memory), or a
    /// non-uniform index into it.
    fn load(&self, pointer: Handle<E>) -> Option<String> {
        let (module, f) = (self.module, self.f);
        match &f.expressions[pointer] {
            E::LocalVariable(v) => self.vars.get(v).cloned(),
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
            E::Access { base, index } => self.load(*base).or_else(|| self.non_uniform(*index)),
            E::AccessIndex { base, .. } => self.load(*base),
            _ => None,
        }
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
