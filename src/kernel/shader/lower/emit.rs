//! Expressions: values as operands, temporaries in registers, pointers
//! resolved to locations and cells, built-in inputs as ids.

use super::*;

impl<'a> Lower<'a> {
    // ---- the value cache ----

    pub(super) fn refs(&self, h: Handle<E>) -> u32 {
        self.frame().refs.get(&h).copied().unwrap_or(0)
    }

    pub(super) fn put(&mut self, h: Handle<E>, val: Val, temps: Vec<u8>, deps: Vec<Handle<E>>) {
        let block = self.cur_block();
        let slot = Slot {
            val,
            temps,
            deps,
            block,
        };
        if self.refs(h) == 0 {
            self.drop_slot(slot);
        } else {
            self.frame_mut().slots.insert(h, slot);
        }
    }

    fn drop_slot(&mut self, slot: Slot) {
        for r in slot.temps {
            self.free(r);
        }
        for d in slot.deps {
            self.release(d);
        }
    }

    /// One use of `h` translated: after its last use, its registers are
    /// free and what it read through is released.
    pub(super) fn release(&mut self, h: Handle<E>) {
        let f = self.frame_mut();
        let n = f.refs.get(&h).copied().unwrap_or(0).saturating_sub(1);
        f.refs.insert(h, n);
        if n == 0 {
            if let Some(slot) = f.slots.remove(&h) {
                self.drop_slot(slot);
            }
        }
    }

    pub(super) fn release_operand(&mut self, h: Handle<E>) {
        self.release(h)
    }

    /// The value of `h` (computing it now if it needs no emit: literals,
    /// constants, arguments, variables).
    pub(super) fn get(&mut self, h: Handle<E>) -> Res<Val> {
        if let Some(s) = self.frame().slots.get(&h) {
            return Ok(s.val.clone());
        }
        let refs = self.refs(h);
        self.frame_mut().refs.insert(h, refs.max(1));
        self.emit(h)?;
        self.frame_mut().refs.insert(h, refs);
        match self.frame().slots.get(&h) {
            Some(s) => Ok(s.val.clone()),
            None => refuse(self.span, "a value used before it is computed"),
        }
    }

    /// The value of `h` as one operand (a pending comparison is computed
    /// into a register now).
    pub(super) fn take(&mut self, h: Handle<E>) -> Res<Operand> {
        match self.get(h)? {
            Val::Op(o) => Ok(o),
            Val::Cmp(..) => {
                self.materialize(h)?;
                self.take(h)
            }
            _ => refuse(
                self.span,
                "a vector, struct or pointer where a scalar is expected",
            ),
        }
    }

    /// Copies the value of `h` into a register of its own (a comparison is
    /// computed, an alias of a variable's register copied).
    fn materialize(&mut self, h: Handle<E>) -> Res<()> {
        let slot = self.frame_mut().slots.remove(&h).expect("a cached value");
        let (op, a, b) = match slot.val {
            Val::Cmp(c, a, b) => (Some(BinOp::Cmp(c)), a, b),
            Val::Op(o) => (None, o, Operand::Imm(0)),
            _ => {
                return refuse(
                    self.span,
                    "a vector, struct or pointer where a scalar is expected",
                )
            }
        };
        let dst = self.alloc()?;
        self.assign(dst, op, a, b);
        let mut temps = slot.temps;
        temps.push(dst);
        for d in slot.deps {
            self.release(d);
        }
        let block = slot.block;
        self.frame_mut().slots.insert(
            h,
            Slot {
                val: Val::Op(Operand::Reg(dst)),
                temps,
                deps: Vec::new(),
                block,
            },
        );
        Ok(())
    }

    /// Before register `r` (a variable) is written: every value still to be
    /// used that reads `r` is copied first, where that is valid (the same
    /// block); elsewhere the shader is refused rather than mistranslated.
    pub(super) fn before_write(&mut self, r: u8) -> Res<()> {
        let here = self.cur_block();
        for fi in 0..self.frames.len() {
            let stale: Vec<(Handle<E>, usize)> = self.frames[fi]
                .slots
                .iter()
                .filter(|(h, s)| {
                    self.frames[fi].refs.get(h).copied().unwrap_or(0) > 0
                        && !s.temps.contains(&r)
                        && reads(&s.val, r)
                })
                .map(|(h, s)| (*h, s.block))
                .collect();
            for (h, block) in stale {
                if fi + 1 != self.frames.len() || block != here {
                    return refuse(
                        self.span,
                        "a variable is written while a value read from it earlier, in an enclosing block, is still to be used: bind that value with `let` first",
                    );
                }
                self.materialize(h)?;
            }
        }
        Ok(())
    }

    /// Before an inlined call (which may write private variables): copies
    /// of the values still to be used that read a private register.
    pub(super) fn copy_private_aliases(&mut self) -> Res<()> {
        let privs: Vec<u8> = self
            .globals
            .values()
            .filter_map(|g| match g {
                Global::Reg(r) => Some(*r),
                _ => None,
            })
            .collect();
        for r in privs {
            self.before_write(r)?;
        }
        Ok(())
    }

    // ---- expressions ----

    pub(super) fn emit(&mut self, h: Handle<E>) -> Res<()> {
        let fun = self.frame().fun;
        let sp = fun.expressions.get_span(h);
        if sp.is_defined() {
            self.span = sp;
        }
        if self.glsl && matches!(fun.expressions[h], E::GlobalVariable(_)) {
            // naga's GLSL frontend gives a global's expression the span of
            // its declaration: a read of it is at its statement.
            self.span = self.stmt_span;
        }
        if self.spills.exprs.contains(&(fun as *const _, h)) {
            // A load of the GLSL frontend's spill copy: dropped.
            let E::Load { pointer } = fun.expressions[h] else {
                unreachable!("spill loads are loads")
            };
            self.put(h, Val::Op(Operand::Imm(0)), vec![], vec![pointer]);
            return Ok(());
        }
        if self.glsl && self.refs(h) == 0 {
            // Used by nothing that is used ([`super::stmt`]'s count): no
            // effect, so not translated.
            self.put(h, Val::Op(Operand::Imm(0)), vec![], vec![]);
            return Ok(());
        }
        self.not_64_bit(h)?;
        let (val, temps, deps) = match &fun.expressions[h] {
            E::Literal(l) => (Val::Op(self.literal(l)?), vec![], vec![]),
            E::Constant(c) => {
                let init = self.module.constants[*c].init;
                (Val::Op(self.const_expr(init)?), vec![], vec![])
            }
            E::ZeroValue(ty) if self.is_scalar(*ty) => (Val::Op(Operand::Imm(0)), vec![], vec![]),
            E::FunctionArgument(i) => (self.frame().args[*i as usize].clone(), vec![], vec![]),
            E::GlobalVariable(g) => (Val::Ptr(self.global(*g)?), vec![], vec![]),
            E::LocalVariable(l) => (Val::Ptr(Ptr::Reg(self.local_register(*l)?)), vec![], vec![]),
            E::Access { base, index } => self.access_dyn(*base, *index)?,
            E::AccessIndex { base, index } => return self.access_index(h, *base, *index),
            E::Load { pointer } => self.load_expr(h, *pointer)?,
            E::Unary { op, expr } => self.unary(*op, *expr)?,
            E::Binary { op, left, right } => self.binary(h, *op, *left, *right)?,
            E::Select {
                condition,
                accept,
                reject,
            } => self.select(*condition, *accept, *reject)?,
            E::As {
                expr,
                kind,
                convert,
            } => self.cast(h, *expr, *kind, *convert)?,
            E::Compose { ty, components } => self.compose(*ty, components)?,
            E::CallResult(_)
            | E::AtomicResult { .. }
            | E::WorkGroupUniformLoadResult { .. }
            | E::SubgroupOperationResult { .. } => {
                return refuse(self.span, "a result used before its statement")
            }
            other => {
                return refuse(
                    self.span,
                    format!("{}: outside the kernel language", expr_name(other)),
                )
            }
        };
        self.put(h, val, temps, deps);
        Ok(())
    }

    /// The register of a function's local variable: allocated at its first
    /// use and pinned, since every later access must see the same register.
    fn local_register(&mut self, l: Handle<naga::LocalVariable>) -> Res<u8> {
        if let Some(&r) = self.frame().locals.get(&l) {
            return Ok(r);
        }
        let r = self.alloc()?;
        self.pinned[r as usize] = true;
        self.frame_mut().locals.insert(l, r);
        Ok(r)
    }

    /// `h`, a member of `base` at constant `index` (a field of SPIR-V's
    /// compare-exchange result, a vector's component), kept lazily as its
    /// value; a comparison used more than once, or named, is computed now,
    /// so that later writes cannot change what it reads.
    fn access_index(&mut self, h: Handle<E>, base: Handle<E>, index: u32) -> Res<()> {
        let fun = self.frame().fun;
        let v = self.access_const(base, index)?;
        self.put(h, v, vec![], vec![base]);
        // `exchanged` used more than once, or named, is computed now.
        let lazy = self.refs(h) <= 1 && !fun.named_expressions.contains_key(&h);
        if matches!(
            self.frame().slots.get(&h),
            Some(Slot {
                val: Val::Cmp(..),
                ..
            })
        ) && !lazy
        {
            self.materialize(h)?;
        }
        Ok(())
    }

    /// A struct or vector built from scalars (SPIR-V's compare-exchange
    /// result, id vectors): a tuple whose members are read one by one.
    fn compose(
        &mut self,
        ty: Handle<naga::Type>,
        components: &[Handle<E>],
    ) -> Res<(Val, Vec<u8>, Vec<Handle<E>>)> {
        let mut vs = Vec::new();
        for &c in components {
            match self.get(c)? {
                v @ (Val::Op(_) | Val::Cmp(..)) => vs.push(v),
                _ => return refuse(self.span, "a constructor of something other than scalars"),
            }
        }
        let v = match self.module.types[ty].inner {
            T::Struct { .. } => Val::Inputs(vs),
            T::Vector { .. } if vs.iter().all(|v| matches!(v, Val::Op(_))) => Val::Vec(
                vs.into_iter()
                    .filter_map(|v| if let Val::Op(o) = v { Some(o) } else { None })
                    .collect(),
            ),
            _ => {
                return refuse(
                    self.span,
                    "a vector, matrix or array constructor: outside the kernel language",
                )
            }
        };
        Ok((v, vec![], components.to_vec()))
    }

    fn literal(&mut self, l: &naga::Literal) -> Res<Operand> {
        match *l {
            naga::Literal::U32(v) => self.constant(v as i128),
            naga::Literal::I32(v) => self.constant(v as i128),
            naga::Literal::U16(v) => self.constant(v as i128),
            naga::Literal::I16(v) => self.constant(v as i128),
            naga::Literal::U64(v) => self.constant(v as i128),
            naga::Literal::I64(v) | naga::Literal::AbstractInt(v) => self.constant(v as i128),
            naga::Literal::Bool(b) => self.constant(b as i128),
            _ => refuse(
                self.span,
                "a floating-point value: only integers and bools are translated",
            ),
        }
    }

    /// A module-scope constant: a literal or a zero value.
    fn const_expr(&mut self, h: Handle<E>) -> Res<Operand> {
        match &self.module.global_expressions[h] {
            E::Literal(l) => self.literal(l),
            E::ZeroValue(ty) if self.is_scalar(*ty) => Ok(Operand::Imm(0)),
            E::Constant(c) => self.const_expr(self.module.constants[*c].init),
            _ => refuse(
                self.span,
                "a constant that is not an integer or bool scalar",
            ),
        }
    }

    fn access_dyn(
        &mut self,
        base: Handle<E>,
        index: Handle<E>,
    ) -> Res<(Val, Vec<u8>, Vec<Handle<E>>)> {
        // An index SPIR-V gives as a constant id: a member or component.
        if let Some(i) = self.const_index(self.frame().fun, index) {
            let v = self.access_const(base, i)?;
            return Ok((v, vec![], vec![base]));
        }
        match self.get(base)? {
            Val::Ptr(Ptr::Array(loc)) => {
                let i = self.take(index)?;
                Ok((Val::Ptr(Ptr::Mem(loc, i)), vec![], vec![base, index]))
            }
            _ => refuse(
                self.span,
                "dynamic indexing of something other than a declared storage or workgroup array",
            ),
        }
    }

    fn access_const(&mut self, base: Handle<E>, index: u32) -> Res<Val> {
        let i = index as usize;
        let span = self.span;
        let bad = || ShaderError::new(span, "a component or member that is not translated");
        Ok(match self.get(base)? {
            Val::Ptr(Ptr::Array(loc)) => {
                let k = self.constant(index as i128)?;
                Val::Ptr(Ptr::Mem(loc, k))
            }
            Val::Ptr(Ptr::Struct(g)) => {
                let Some(Global::Struct(locs)) = self.globals.get(&g) else {
                    return Err(bad());
                };
                Val::Ptr(*locs.get(i).ok_or_else(bad)?)
            }
            Val::Ptr(Ptr::VecGlobal(g)) => Val::Ptr(Ptr::VecComp(g, index)),
            Val::Vec(ops) => Val::Op(*ops.get(i).ok_or_else(bad)?),
            Val::Inputs(vs) => vs.get(i).cloned().ok_or_else(bad)?,
            Val::Cas(old, cmp) => match (i, cmp) {
                (0, _) => Val::Op(old),
                (1, Some(e)) => Val::Cmp(Cmp::Eq, old, e),
                _ => return Err(bad()),
            },
            Val::Exchanged(old, ok) => match i {
                0 => Val::Op(old),
                1 => Val::Cmp(Cmp::Ne, ok, Operand::Imm(0)),
                _ => return Err(bad()),
            },
            _ => return Err(bad()),
        })
    }

    pub(super) fn loc_ptr(&self, loc: u8) -> Ptr {
        if self.locations[loc as usize].array {
            Ptr::Array(loc)
        } else {
            Ptr::Mem(loc, Operand::Imm(0))
        }
    }

    pub(super) fn pointer(&mut self, h: Handle<E>) -> Res<Ptr> {
        match self.get(h)? {
            Val::Ptr(p) => Ok(p),
            _ => refuse(self.span, "a pointer the translation cannot resolve"),
        }
    }

    /// Reads through a pointer: a memory cell is one load instruction (an
    /// atomic one: memory is sequentially consistent); a variable is its
    /// register. Returns the value and the registers it owns.
    pub(super) fn load(&mut self, pointer: Handle<E>) -> Res<(Val, Vec<u8>)> {
        match self.pointer(pointer)? {
            Ptr::Mem(loc, index) => {
                let dst = self.alloc()?;
                self.access(loc, false, true);
                self.push(Instr::Atomic {
                    op: AtomicOp::Load,
                    addr: Addr { loc, index },
                    dst: Some(dst),
                    branch: None,
                });
                if !self.atomic_loc[loc as usize] && self.loop_frees.len() > 1 {
                    self.tainted.push((dst, loc));
                }
                Ok((Val::Op(Operand::Reg(dst)), vec![dst]))
            }
            Ptr::Reg(r) => Ok((Val::Op(Operand::Reg(r)), vec![])),
            Ptr::VecGlobal(g) => Ok((Val::Vec(self.vec_global(g)?), vec![])),
            Ptr::VecComp(g, i) => {
                let ops = self.vec_global(g)?;
                let o = *ops.get(i as usize).ok_or_else(|| {
                    ShaderError::new(self.span, "a vector component out of range")
                })?;
                Ok((Val::Op(o), vec![]))
            }
            Ptr::Array(_) | Ptr::Struct(_) => refuse(
                self.span,
                "a load of a whole array or struct: load its cells one by one",
            ),
        }
    }

    fn vec_global(&self, g: Handle<naga::GlobalVariable>) -> Res<Vec<Operand>> {
        match self.globals.get(&g) {
            Some(Global::Vec(Some(ops))) => Ok(ops.clone()),
            _ => refuse(
                self.span,
                "a private vector read before it holds the built-in ids",
            ),
        }
    }

    fn load_expr(
        &mut self,
        h: Handle<E>,
        pointer: Handle<E>,
    ) -> Res<(Val, Vec<u8>, Vec<Handle<E>>)> {
        // A load whose value nothing uses (the GLSL frontend leaves some)
        // is dropped: it changes nothing.
        if self.refs(h) == 0 {
            return Ok((Val::Op(Operand::Imm(0)), vec![], vec![pointer]));
        }
        let (v, temps) = self.load(pointer)?;
        if !temps.is_empty() {
            self.release(pointer);
            return Ok((v, temps, vec![]));
        }
        // An alias of a variable's register: a named value (`let`) gets a
        // copy, as the variable may change while it is in use.
        if let (Val::Op(o @ Operand::Reg(_)), true) =
            (&v, self.frame().fun.named_expressions.contains_key(&h))
        {
            let dst = self.alloc()?;
            self.assign(dst, None, *o, Operand::Imm(0));
            self.release(pointer);
            return Ok((Val::Op(Operand::Reg(dst)), vec![dst], vec![]));
        }
        Ok((v, vec![], vec![pointer]))
    }

    /// Refuses a 64-bit integer value (`u64`, `i64`, SPIR-V's `Int64`):
    /// the translation computes in 32 bits, and the value check compares
    /// with 32-bit results, so a 64-bit shift (amounts modulo 64) or carry
    /// would be decided as a 32-bit one (issue 46: `1 << 32` on a `u64`
    /// was refused as "1 in 32 bits").
    fn not_64_bit(&self, h: Handle<E>) -> Res<()> {
        let ty = self.frame().info[h].ty.inner_with(&self.module.types);
        match ty {
            T::Scalar(s) | T::Atomic(s)
                if s.width > 4
                    && matches!(s.kind, naga::ScalarKind::Uint | naga::ScalarKind::Sint) =>
            {
                refuse(
                    self.span,
                    format!(
                        "a {}-bit integer: the translation computes in 32 bits (a 64-bit shift or carry would be decided as a 32-bit one), so 64-bit integers are refused",
                        s.width * 8
                    ),
                )
            }
            _ => Ok(()),
        }
    }

    fn scalar_operand_check(&self, h: Handle<E>) -> Res<()> {
        let ty = self.frame().info[h].ty.inner_with(&self.module.types);
        match ty {
            T::Scalar(s)
                if matches!(
                    s.kind,
                    naga::ScalarKind::Uint | naga::ScalarKind::Sint | naga::ScalarKind::Bool
                ) =>
            {
                Ok(())
            }
            T::Scalar(_) => refuse(
                self.span,
                "floating-point arithmetic: only integers and bools are translated",
            ),
            _ => refuse(
                self.span,
                "vector or matrix arithmetic: only scalars are translated",
            ),
        }
    }

    fn unary(
        &mut self,
        op: naga::UnaryOperator,
        expr: Handle<E>,
    ) -> Res<(Val, Vec<u8>, Vec<Handle<E>>)> {
        self.scalar_operand_check(expr)?;
        if op == naga::UnaryOperator::LogicalNot {
            if let Val::Cmp(c, a, b) = self.get(expr)? {
                return Ok((Val::Cmp(stmt::negate(c), a, b), vec![], vec![expr]));
            }
        }
        let (bop, a, b) = match op {
            naga::UnaryOperator::Negate => (BinOp::Sub, Operand::Imm(0), self.take(expr)?),
            naga::UnaryOperator::LogicalNot => (BinOp::Xor, self.take(expr)?, Operand::Imm(1)),
            // -1 is every bit set, in 32 bits and in b (§10.3).
            naga::UnaryOperator::BitwiseNot if self.sext => {
                (BinOp::Xor, self.take(expr)?, self.constant(-1)?)
            }
            naga::UnaryOperator::BitwiseNot => {
                let mut e = ShaderError::new(self.span, "bitwise not (`~`): its 32-bit result is never below the value bound (value bound exceeded)");
                e.sext_helps = true;
                return Err(e);
            }
        };
        self.release(expr);
        let dst = self.alloc()?;
        self.assign(dst, Some(bop), a, b);
        Ok((Val::Op(Operand::Reg(dst)), vec![dst], vec![]))
    }

    fn binary(
        &mut self,
        h: Handle<E>,
        op: naga::BinaryOperator,
        left: Handle<E>,
        right: Handle<E>,
    ) -> Res<(Val, Vec<u8>, Vec<Handle<E>>)> {
        use naga::BinaryOperator as B;
        self.scalar_operand_check(left)?;
        self.scalar_operand_check(right)?;
        let bop = match op {
            B::Add => BinOp::Add,
            B::Subtract => BinOp::Sub,
            B::Multiply => BinOp::Mul,
            B::And | B::LogicalAnd => BinOp::And,
            B::InclusiveOr | B::LogicalOr => BinOp::Or,
            B::ExclusiveOr => BinOp::Xor,
            B::ShiftLeft => BinOp::Shl,
            B::ShiftRight => BinOp::Shr,
            B::Equal => BinOp::Cmp(Cmp::Eq),
            B::NotEqual => BinOp::Cmp(Cmp::Ne),
            B::Less => BinOp::Cmp(Cmp::Lt),
            B::LessEqual => BinOp::Cmp(Cmp::Le),
            B::Greater => BinOp::Cmp(Cmp::Gt),
            B::GreaterEqual => BinOp::Cmp(Cmp::Ge),
            B::Divide | B::Modulo => {
                return self.divide(op == B::Divide, left, right);
            }
        };
        let a = self.take(left)?;
        let b = self.take(right)?;
        let signed = self.is_signed(left);
        if let (Operand::Imm(x), Operand::Imm(y)) = (a, b) {
            // Two constants: folded with the shader's 32-bit arithmetic
            // (a result outside the domain is refused as any constant).
            self.release(left);
            self.release(right);
            let (x, y) = (self.wide(x), self.wide(y));
            let v = self.constant(fold(bop, x, y, signed))?;
            return Ok((Val::Op(v), vec![], vec![]));
        }
        // Unsigned values are non-negative: a signed `>>` is the unsigned one.
        if signed && self.sext && bop == BinOp::Shr {
            self.next_exact = Exact::ShrSigned;
        }
        let ordered = matches!(bop, BinOp::Cmp(c) if !matches!(c, Cmp::Eq | Cmp::Ne));
        let (a, b, temps) = if signed && ordered && self.sext {
            self.flip_signs(a, b)?
        } else {
            (a, b, vec![])
        };
        // A comparison used once, unnamed, waits to become a branch.
        if let BinOp::Cmp(c) = bop {
            if self.refs(h) == 1 && !self.frame().fun.named_expressions.contains_key(&h) {
                return Ok((Val::Cmp(c, a, b), temps, vec![left, right]));
            }
        }
        let r = self.binary_result(left, right, bop, a, b);
        temps.into_iter().for_each(|t| self.free(t));
        r
    }

    /// Whether `h` is an `i32` (its comparisons, `>>`, `/` and `%` are
    /// signed).
    pub(super) fn is_signed(&self, h: Handle<E>) -> bool {
        let ty = self.frame().info[h].ty.inner_with(&self.module.types);
        matches!(ty, T::Scalar(s) | T::Atomic(s) if s.kind == naga::ScalarKind::Sint)
    }

    /// The 32-bit value an operand's constant `v` stands for (§10.3).
    fn wide(&self, v: u16) -> u32 {
        let values = self.launch.values.unwrap_or(MAX_VALUES);
        super::super::values::stands_for(v, values, self.sext) as i32 as u32
    }

    /// Two's complement operands of a signed `<` (or `<=`, `>`, `>=`)
    /// made operands of the unsigned one that gives the same answer: each
    /// with its top bit flipped (`x ^ 2^(b-1)`), in a register of its own
    /// unless a constant (§10.3). The registers are returned, to free.
    fn flip_signs(&mut self, a: Operand, b: Operand) -> Res<(Operand, Operand, Vec<u8>)> {
        let half = self.launch.values.unwrap_or(MAX_VALUES) / 2;
        let mut temps = Vec::new();
        let mut flip = |l: &mut Self, o: Operand| -> Res<Operand> {
            if let Operand::Imm(v) = o {
                return Ok(Operand::Imm(v ^ half));
            }
            let dst = l.alloc()?;
            l.assign(dst, Some(BinOp::Xor), o, Operand::Imm(half));
            temps.push(dst);
            Ok(Operand::Reg(dst))
        };
        let a = flip(self, a)?;
        let b = flip(self, b)?;
        Ok((a, b, temps))
    }

    /// `a bop b` into a new register, the value of an expression whose
    /// operands `left` and `right` are then released (their registers are
    /// free for the result: it is written after both are read).
    fn binary_result(
        &mut self,
        left: Handle<E>,
        right: Handle<E>,
        bop: BinOp,
        a: Operand,
        b: Operand,
    ) -> Res<(Val, Vec<u8>, Vec<Handle<E>>)> {
        self.release(left);
        self.release(right);
        let dst = self.alloc()?;
        self.assign(dst, Some(bop), a, b);
        Ok((Val::Op(Operand::Reg(dst)), vec![dst], vec![]))
    }

    /// `x / 2^k` and `x % 2^k`: a shift and a mask. Unsigned values are
    /// non-negative, so signed and unsigned agree; on two's complement
    /// values the check computes the signed ones (§10.3). Any other
    /// divisor is refused.
    fn divide(
        &mut self,
        div: bool,
        left: Handle<E>,
        right: Handle<E>,
    ) -> Res<(Val, Vec<u8>, Vec<Handle<E>>)> {
        let span = self.span;
        let a = self.take(left)?;
        let k = match self.take(right)? {
            Operand::Imm(d) if d.is_power_of_two() => d,
            _ => {
                let what = if div { "division" } else { "remainder" };
                return refuse(span, format!("{what} by something other than a constant power of two: the kernel language has no division"));
            }
        };
        let (bop, b) = if div {
            (BinOp::Shr, self.constant(k.trailing_zeros() as i128)?)
        } else {
            (BinOp::And, self.constant(k as i128 - 1)?)
        };
        if self.sext && self.is_signed(left) {
            // Rounded toward zero: the value check computes it so (§10.3).
            self.next_exact = if div {
                Exact::DivSigned
            } else {
                Exact::RemSigned
            };
        }
        self.binary_result(left, right, bop, a, b)
    }

    /// `select(reject, accept, condition)`: a branch over two assignments.
    fn select(
        &mut self,
        condition: Handle<E>,
        accept: Handle<E>,
        reject: Handle<E>,
    ) -> Res<(Val, Vec<u8>, Vec<Handle<E>>)> {
        self.scalar_operand_check(accept)?;
        let a = self.take(accept)?;
        let r = self.take(reject)?;
        let dst = self.alloc()?;
        let done = self.new_label();
        self.assign(dst, None, a, Operand::Imm(0));
        self.branch_on(condition, true, done)?;
        // A selection (§2.8) with one arm: structured, where lanes that
        // took either way reconverge.
        self.selection(done);
        self.assign(dst, None, r, Operand::Imm(0));
        self.bind(done);
        self.release(accept);
        self.release(reject);
        Ok((Val::Op(Operand::Reg(dst)), vec![dst], vec![]))
    }

    /// Conversions between u32, i32 and bool: integer conversions keep
    /// the bits, so they are the identity on unsigned values (below the
    /// domain) and on two's complement ones (§10.3); to bool is `!= 0`.
    fn cast(
        &mut self,
        h: Handle<E>,
        expr: Handle<E>,
        kind: naga::ScalarKind,
        convert: Option<u8>,
    ) -> Res<(Val, Vec<u8>, Vec<Handle<E>>)> {
        self.scalar_operand_check(expr)?;
        let _ = convert;
        match kind {
            naga::ScalarKind::Uint | naga::ScalarKind::Sint => {
                let v = match self.get(expr)? {
                    Val::Cmp(..) => Val::Op(self.take(expr)?),
                    v => v,
                };
                Ok((v, vec![], vec![expr]))
            }
            naga::ScalarKind::Bool => {
                let o = self.take(expr)?;
                if self.refs(h) == 1 {
                    return Ok((Val::Cmp(Cmp::Ne, o, Operand::Imm(0)), vec![], vec![expr]));
                }
                self.release(expr);
                let dst = self.alloc()?;
                self.assign(dst, Some(BinOp::Cmp(Cmp::Ne)), o, Operand::Imm(0));
                Ok((Val::Op(Operand::Reg(dst)), vec![dst], vec![]))
            }
            _ => refuse(
                self.span,
                "a conversion to floating point: only integers and bools are translated",
            ),
        }
    }

    // ---- types, globals, inputs ----

    pub(super) fn is_scalar(&self, ty: Handle<naga::Type>) -> bool {
        scalar_kind_ok(&self.module.types[ty].inner)
    }

    pub(super) fn type_name(&self, ty: Handle<naga::Type>) -> String {
        let t = &self.module.types[ty];
        if let Some(n) = &t.name {
            return format!("`{n}`");
        }
        match &t.inner {
            T::Scalar(s) | T::Atomic(s) => format!("{:?} scalar", s.kind),
            T::Vector { .. } => "vector".into(),
            T::Matrix { .. } => "matrix".into(),
            T::Array { .. } | T::BindingArray { .. } => "array".into(),
            T::Struct { .. } => "struct".into(),
            T::Pointer { .. } | T::ValuePointer { .. } => "pointer".into(),
            _ => "image, sampler or other opaque type".into(),
        }
    }
}

/// Whether a type is an integer or bool scalar (or an atomic integer).
pub(super) fn scalar_kind_ok(t: &naga::TypeInner) -> bool {
    let ok = |s: &naga::Scalar| {
        matches!(
            s.kind,
            naga::ScalarKind::Uint | naga::ScalarKind::Sint | naga::ScalarKind::Bool
        )
    };
    match t {
        T::Scalar(s) | T::Atomic(s) => ok(s),
        _ => false,
    }
}

/// Whether a value reads register `r`.
fn reads(v: &Val, r: u8) -> bool {
    let is = |o: &Operand| *o == Operand::Reg(r);
    match v {
        Val::Op(o) => is(o),
        Val::Cmp(_, a, b) => is(a) || is(b),
        Val::Vec(os) => os.iter().any(is),
        Val::Cas(o, x) => is(o) || x.as_ref().is_some_and(is),
        Val::Exchanged(o, ok) => is(o) || is(ok),
        Val::Inputs(vs) => vs.iter().any(|v| reads(v, r)),
        Val::Ptr(Ptr::Mem(_, i)) => is(i),
        Val::Ptr(_) => false,
    }
}

/// The expressions an expression reads (also WGSL's uniformity pass,
/// [`crate::kernel::shader::uniformity`]).
pub(in crate::kernel::shader) fn children(e: &naga::Expression, add: &mut impl FnMut(Handle<E>)) {
    match e {
        E::Access { base, index } => {
            add(*base);
            add(*index);
        }
        E::AccessIndex { base, .. } => add(*base),
        E::Load { pointer } => add(*pointer),
        E::Unary { expr, .. } | E::As { expr, .. } => add(*expr),
        E::Binary { left, right, .. } => {
            add(*left);
            add(*right);
        }
        E::Select {
            condition,
            accept,
            reject,
        } => {
            add(*condition);
            add(*accept);
            add(*reject);
        }
        E::Compose { components, .. } => components.iter().for_each(|&c| add(c)),
        E::Splat { value, .. } => add(*value),
        E::Swizzle { vector, .. } => add(*vector),
        E::Math {
            arg,
            arg1,
            arg2,
            arg3,
            ..
        } => {
            add(*arg);
            [arg1, arg2, arg3]
                .into_iter()
                .flatten()
                .for_each(|&a| add(a));
        }
        E::Relational { argument, .. } => add(*argument),
        E::ArrayLength(x) => add(*x),
        _ => {}
    }
}

fn expr_name(e: &naga::Expression) -> String {
    match e {
        E::ImageSample { .. } | E::ImageLoad { .. } | E::ImageQuery { .. } => {
            "textures and images".into()
        }
        E::Derivative { .. } => "a derivative".into(),
        E::Math { fun, .. } => format!("the math function {fun:?}"),
        E::Relational { fun, .. } => format!("the relational function {fun:?}"),
        E::ArrayLength(_) => "arrayLength (runtime-sized arrays)".into(),
        E::Compose { .. } => "a vector, matrix or struct constructor".into(),
        E::Splat { .. } | E::Swizzle { .. } => "a vector operation".into(),
        E::Override(_) => "a pipeline-overridable constant".into(),
        E::ZeroValue(_) => "a zero value of a vector, array or struct".into(),
        _ => "this expression".into(),
    }
}

/// `x op y` on 32-bit values, as the shader computes it (shift amounts
/// modulo 32, as WGSL and SPIR-V shift at run time; comparisons and `>>`
/// signed where the operands are), as a signed number so that a wrapped
/// subtraction shows as what it is in 32 bits.
fn fold(op: BinOp, x: u32, y: u32, signed: bool) -> i128 {
    if signed {
        let (a, b) = (x as i32, y as i32);
        match op {
            BinOp::Shr => return a.wrapping_shr(y).into(),
            BinOp::Cmp(c) => return i128::from(c.holds(a, b)),
            _ => {}
        }
    }
    let v = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        BinOp::Shl => x.wrapping_shl(y),
        BinOp::Shr => x.wrapping_shr(y),
        BinOp::Cmp(c) => u32::from(c.holds(x, y)),
    };
    v.into()
}
