//! Runtime-sized arrays (`array<u32>`, SPIR-V's `OpTypeRuntimeArray`, the
//! form clspv and Slang give every buffer) indexed only by constants: the
//! array gets the cells those constants reach, 1 + the largest index (one
//! cell if none is used). A run-time index into one is refused: its size
//! comes from the host (docs/KERNEL.md §10.2).

use super::*;

/// Where a location's cells come from: a global variable, or one member of
/// a global struct.
pub(super) type Origin = (Handle<naga::GlobalVariable>, Option<u32>);

impl<'a> Lower<'a> {
    /// The number of cells of the runtime-sized array at `origin`, from the
    /// constant indices every function of the module uses into it.
    pub(super) fn runtime_len(&self, origin: Origin, name: &str) -> Res<usize> {
        let mut len = 1usize;
        let functions = self
            .module
            .functions
            .iter()
            .map(|(_, f)| f)
            .chain(self.module.entry_points.iter().map(|e| &e.function));
        for fun in functions {
            for (h, e) in fun.expressions.iter() {
                let (base, index) = match *e {
                    E::Access { base, index } => (base, self.const_index(fun, index)),
                    E::AccessIndex { base, index } => (base, Some(index)),
                    _ => continue,
                };
                if !is_origin(fun, base, origin) {
                    continue;
                }
                let Some(i) = index else {
                    return refuse(
                        fun.expressions.get_span(h),
                        format!("`{name}`: a runtime-sized array indexed by a run-time value (its size comes from the host); declare a fixed size (array<u32, N>)"),
                    );
                };
                len = len.max(i as usize + 1);
            }
        }
        Ok(len)
    }

    /// The value of `h` where it is an integer literal or a module
    /// constant of one (an index SPIR-V's `OpAccessChain` gives as an id).
    pub(super) fn const_index(&self, fun: &naga::Function, h: Handle<E>) -> Option<u32> {
        let lit = |l: &naga::Literal| match *l {
            naga::Literal::U32(v) => Some(v),
            naga::Literal::I32(v) => u32::try_from(v).ok(),
            _ => None,
        };
        match &fun.expressions[h] {
            E::Literal(l) => lit(l),
            E::Constant(c) => match &self.module.global_expressions[self.module.constants[*c].init]
            {
                E::Literal(l) => lit(l),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whether `base` is the variable (or the member of it) of `origin`.
fn is_origin(fun: &naga::Function, base: Handle<E>, origin: Origin) -> bool {
    match (&fun.expressions[base], origin.1) {
        (E::GlobalVariable(g), None) => *g == origin.0,
        (E::AccessIndex { base, index }, Some(m)) => {
            *index == m && matches!(fun.expressions[*base], E::GlobalVariable(g) if g == origin.0)
        }
        _ => false,
    }
}
