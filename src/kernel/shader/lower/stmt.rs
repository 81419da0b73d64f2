//! Statements: structured control flow to goto code, memory, barriers,
//! atomics, collectives and inlined calls.

use super::*;

impl<'a> Lower<'a> {
    /// The entry point: built-in arguments as operands, its locals as
    /// registers (0 at the start, as registers are), then its body.
    pub(super) fn entry(
        &mut self,
        ep: &'a naga::EntryPoint,
        info: &'a naga::valid::FunctionInfo,
    ) -> Res<()> {
        let fun = &ep.function;
        self.span = fun
            .body
            .span_iter()
            .next()
            .map_or(Span::UNDEFINED, |(_, s)| *s);
        self.declare_privates()?;
        let mut args = Vec::new();
        for (i, a) in fun.arguments.iter().enumerate() {
            let used = fun
                .expressions
                .iter()
                .any(|(_, e)| matches!(e, E::FunctionArgument(k) if *k as usize == i));
            args.push(self.input(a.binding.as_ref(), a.ty, used)?);
        }
        self.frames.push(Frame::new(fun, info, args, self.glsl));
        self.declare_locals(true)?;
        self.block(&fun.body)?;
        self.frames.pop();
        Ok(())
    }

    /// Registers for a function's local variables, with their initial
    /// values (skipped in the entry point for 0: registers start at 0).
    fn declare_locals(&mut self, entry: bool) -> Res<()> {
        let fun = self.frame().fun;
        for (h, lv) in fun.local_variables.iter() {
            // The GLSL frontend's own temporaries (unnamed, no initial
            // value, always written first) get a register on first use.
            if lv.name.is_none() && lv.init.is_none() {
                continue;
            }
            self.span = fun.local_variables.get_span(h);
            if !self.is_scalar(lv.ty) {
                return refuse(
                    self.span,
                    format!("local variable `{}` of type {}: only integer and bool scalars become registers", name_of(&lv.name), self.type_name(lv.ty)),
                );
            }
            let r = self.alloc()?;
            self.pinned[r as usize] = true;
            self.frame_mut().locals.insert(h, r);
            let init = match lv.init {
                Some(e) => {
                    let o = self.take(e)?;
                    self.release(e);
                    o
                }
                None => Operand::Imm(0),
            };
            if !(init == Operand::Imm(0) && (entry || self.still_zero(r))) {
                self.assign(r, None, init, Operand::Imm(0));
            }
        }
        Ok(())
    }

    pub(super) fn block(&mut self, b: &'a naga::Block) -> Res<()> {
        let id = self.next_block;
        self.next_block += 1;
        self.blocks.push(id);
        if self.glsl {
            self.find_spills(b);
        }
        for (st, span) in b.span_iter() {
            if span.is_defined() {
                self.span = *span;
                self.stmt_span = *span;
            }
            if self.instrs.len() > MAX_EMITTED {
                return refuse(
                    self.span,
                    format!("the translation passes {MAX_EMITTED} instructions before simplification (the kernel language allows {} per block): refused here", crate::kernel::program::MAX_CODE_LEN),
                );
            }
            if let S::Store { pointer, value } = st {
                if self.spills.stmts.contains(&(st as *const _)) {
                    self.skip_spill_store(*pointer, *value);
                    continue;
                }
            }
            if let S::Call {
                function,
                arguments,
                result,
            } = st
            {
                if let Some(name) = self.glsl_atomic(*function) {
                    self.glsl_atomic_call(st, name, arguments, *result)?;
                    continue;
                }
                if let (Some(op), [a], Some(r)) =
                    (self.glsl_collective(*function), &arguments[..], result)
                {
                    self.collective(op, *a, *r)?;
                    continue;
                }
            }
            self.statement(st)?;
        }
        self.blocks.pop();
        Ok(())
    }

    fn statement(&mut self, st: &'a naga::Statement) -> Res<()> {
        match st {
            S::Emit(range) => {
                for h in range.clone() {
                    self.emit(h)?;
                }
                Ok(())
            }
            S::Block(b) => self.block(b),
            S::If {
                condition,
                accept,
                reject,
            } => self.if_(*condition, accept, reject),
            S::Switch { selector, cases } => self.switch(*selector, cases),
            S::Loop {
                body,
                continuing,
                break_if,
            } => self.loop_(body, continuing, *break_if),
            S::Break => {
                let l = self.frame().breaks.last().map(|b| b.0);
                let l = l.ok_or_else(|| ShaderError::new(self.span, "`break` outside a loop"))?;
                self.goto(l);
                Ok(())
            }
            S::Continue => {
                let l = self.frame().breaks.iter().rev().find_map(|b| b.1);
                let l =
                    l.ok_or_else(|| ShaderError::new(self.span, "`continue` outside a loop"))?;
                self.goto(l);
                Ok(())
            }
            S::Return { value } => self.return_(*value),
            other => self.effect(other),
        }
    }

    /// Statements with an effect: barriers, memory, atomics, calls,
    /// collectives; anything else is refused.
    fn effect(&mut self, st: &'a naga::Statement) -> Res<()> {
        match st {
            S::ControlBarrier(b) => {
                // GLSL's barrier() sets every flag: a workgroup barrier
                // subsumes the subgroup one. Only a subgroup barrier alone
                // is outside the language.
                if *b == naga::Barrier::SUB_GROUP {
                    return refuse(self.span, "subgroupBarrier: the kernel language has no subgroup barrier");
                }
                self.push(Instr::Barrier);
                Ok(())
            }
            // Memory is sequentially consistent: a memory barrier orders
            // nothing more (docs/KERNEL.md §10).
            S::MemoryBarrier(_) => Ok(()),
            S::Store { pointer, value } => self.store(*pointer, *value),
            S::Atomic {
                pointer,
                fun,
                value,
                result,
            } => self.atomic(*pointer, fun, *value, *result),
            S::WorkGroupUniformLoad { pointer, result } => {
                self.push(Instr::Barrier);
                let (v, temps) = self.load(*pointer)?;
                self.release(*pointer);
                self.put(*result, v, temps, Vec::new());
                self.push(Instr::Barrier);
                Ok(())
            }
            S::Call {
                function,
                arguments,
                result,
            } => self.call(*function, arguments, *result),
            S::SubgroupCollectiveOperation {
                op,
                collective_op,
                argument,
                result,
            } => {
                let cop = match (op, collective_op) {
                    (naga::SubgroupOperation::All, naga::CollectiveOperation::Reduce) => CollectiveOp::All,
                    (naga::SubgroupOperation::Any, naga::CollectiveOperation::Reduce) => CollectiveOp::Any,
                    _ => {
                        return refuse(
                            self.span,
                            format!("subgroup operation {op:?} ({collective_op:?}): the kernel language has subgroupAll, subgroupAny and subgroupBroadcastFirst"),
                        )
                    }
                };
                self.collective(cop, *argument, *result)
            }
            S::SubgroupGather {
                mode,
                argument,
                result,
            } => match mode {
                naga::GatherMode::BroadcastFirst => {
                    self.collective(CollectiveOp::BroadcastFirst, *argument, *result)
                }
                m => refuse(
                    self.span,
                    format!("subgroup gather {m:?}: the kernel language has subgroupBroadcastFirst only"),
                ),
            },
            S::Kill => refuse(self.span, "discard: not a compute construct"),
            S::ImageStore { .. } | S::ImageAtomic { .. } => {
                refuse(self.span, "textures and images are outside the kernel language")
            }
            S::SubgroupBallot { .. } => refuse(self.span, "subgroupBallot: the kernel language has no ballots"),
            other => refuse(
                self.span,
                format!("statement {}: outside the kernel language", stmt_name(other)),
            ),
        }
    }

    fn if_(
        &mut self,
        cond: Handle<E>,
        accept: &'a naga::Block,
        reject: &'a naga::Block,
    ) -> Res<()> {
        let else_l = self.new_label();
        let end_l = self.new_label();
        let span = self.span;
        self.branch_on(cond, false, else_l)?;
        self.selection(end_l);
        self.block(accept)?;
        self.span = span;
        if !reject.is_empty() {
            self.goto(end_l);
        }
        self.bind(else_l);
        self.block(reject)?;
        self.bind(end_l);
        Ok(())
    }

    /// Jumps to `label` when `cond` is (`when`) true or false; one
    /// instruction.
    pub(super) fn branch_on(&mut self, cond: Handle<E>, when: bool, label: usize) -> Res<()> {
        let v = self.get(cond)?;
        let (a, cmp, b) = match v {
            Val::Cmp(c, a, b) => (a, if when { c } else { negate(c) }, b),
            Val::Op(o) => (o, if when { Cmp::Ne } else { Cmp::Eq }, Operand::Imm(0)),
            _ => return refuse(self.span, "a condition that is not a scalar"),
        };
        self.push_jump(
            Instr::Branch {
                a,
                cmp,
                b,
                target: Target::End,
            },
            label,
        );
        self.release(cond);
        Ok(())
    }

    /// Makes the conditional branch just pushed the header of a selection
    /// merging at `merge` (when lowering structured, §2.8).
    pub(super) fn selection(&mut self, merge: usize) {
        if self.structured {
            let h = self.new_label();
            self.labels[h] = Some(self.instrs.len() - 1);
            self.constructs.push((false, h, merge));
        }
    }

    fn switch(&mut self, selector: Handle<E>, cases: &'a [naga::SwitchCase]) -> Res<()> {
        let falls = |c: &naga::SwitchCase| falls_through(c) && !c.body.is_empty();
        if self.structured && !cases.iter().any(falls) {
            return self.structured_switch(selector, cases);
        }
        let sel = self.take(selector)?;
        let end = self.new_label();
        let labels: Vec<usize> = cases.iter().map(|_| self.new_label()).collect();
        let mut default = end;
        for (c, &l) in cases.iter().zip(&labels) {
            let v = match c.value {
                naga::SwitchValue::I32(v) => v as i128,
                naga::SwitchValue::U32(v) => v as i128,
                naga::SwitchValue::Default => {
                    default = l;
                    continue;
                }
            };
            let b = self.constant(v)?;
            self.push_jump(
                Instr::Branch {
                    a: sel,
                    cmp: Cmp::Eq,
                    b,
                    target: Target::End,
                },
                l,
            );
        }
        self.goto(default);
        self.release_operand(selector);
        for (i, (c, &l)) in cases.iter().zip(&labels).enumerate() {
            self.bind(l);
            self.frame_mut().breaks.push((end, None));
            self.block(&c.body)?;
            self.frame_mut().breaks.pop();
            if !c.fall_through && i + 1 < cases.len() {
                self.goto(end);
            }
        }
        self.bind(end);
        Ok(())
    }

    /// A switch as nested selections, one per case (its values grouped
    /// with the empty cases that fall into it), all merging at the
    /// switch's end, the default case last: `if (sel != v) goto next
    /// merge end; case; goto end; next: ...`.
    fn structured_switch(&mut self, selector: Handle<E>, cases: &'a [naga::SwitchCase]) -> Res<()> {
        // The tests run between the cases, which may write the selector's
        // variable (a state machine's `pc`): a register is copied first.
        let mut sel = self.take(selector)?;
        let copy = match sel {
            Operand::Reg(_) => {
                let t = self.alloc()?;
                self.assign(t, None, sel, Operand::Imm(0));
                sel = Operand::Reg(t);
                Some(t)
            }
            _ => None,
        };
        self.release_operand(selector);
        let end = self.new_label();
        let mut groups: Vec<(Vec<i128>, &'a naga::Block)> = Vec::new();
        let (mut values, mut default) = (Vec::new(), None);
        let mut in_default = false;
        for c in cases {
            match c.value {
                naga::SwitchValue::I32(v) => values.push(v as i128),
                naga::SwitchValue::U32(v) => values.push(v as i128),
                naga::SwitchValue::Default => in_default = true,
            }
            if falls_through(c) {
                continue;
            }
            if in_default {
                default = Some(&c.body);
            } else {
                groups.push((std::mem::take(&mut values), &c.body));
            }
            (values, in_default) = (Vec::new(), false);
        }
        for (vals, body) in groups {
            let next = self.new_label();
            self.case_test(sel, &vals, next)?;
            self.selection(end);
            self.frame_mut().breaks.push((end, None));
            self.block(body)?;
            self.frame_mut().breaks.pop();
            self.goto(end);
            self.bind(next);
        }
        if let Some(body) = default {
            self.frame_mut().breaks.push((end, None));
            self.block(body)?;
            self.frame_mut().breaks.pop();
        }
        if let Some(t) = copy {
            self.free(t);
        }
        self.bind(end);
        Ok(())
    }

    /// One conditional branch to `next` unless `sel` is one of `vals`.
    fn case_test(&mut self, sel: Operand, vals: &[i128], next: usize) -> Res<()> {
        let mut ops = Vec::new();
        for &v in vals {
            ops.push(self.constant(v)?);
        }
        let (a, b) = match ops[..] {
            [b] => (sel, b),
            _ => {
                // Several values: r = (sel == v0) | (sel == v1) | ...
                let (r, t) = (self.alloc()?, self.alloc()?);
                let eq = Some(BinOp::Cmp(Cmp::Eq));
                self.assign(r, eq, sel, ops[0]);
                for &o in &ops[1..] {
                    self.assign(t, eq, sel, o);
                    self.assign(r, Some(BinOp::Or), Operand::Reg(r), Operand::Reg(t));
                }
                self.free(t);
                self.free(r);
                (Operand::Reg(r), Operand::Imm(1))
            }
        };
        let target = Target::End;
        self.push_jump(
            Instr::Branch {
                a,
                cmp: Cmp::Ne,
                b,
                target,
            },
            next,
        );
        Ok(())
    }

    fn loop_(
        &mut self,
        body: &'a naga::Block,
        continuing: &'a naga::Block,
        break_if: Option<Handle<E>>,
    ) -> Res<()> {
        // The back jump is the loop's own line, not its last statement's.
        let span = self.span;
        let (top, cont, exit) = (self.new_label(), self.new_label(), self.new_label());
        self.loop_frees.push(Vec::new());
        self.bind(top);
        let first = self.instrs.len();
        self.frame_mut().breaks.push((exit, Some(cont)));
        self.block(body)?;
        self.frame_mut().breaks.pop();
        self.bind(cont);
        self.block(continuing)?;
        if let Some(c) = break_if {
            if self.structured {
                // `if (c) { break; }`: the conditional branch heads a
                // selection, as every one must (§2.8).
                let skip = self.new_label();
                self.branch_on(c, false, skip)?;
                self.selection(skip);
                self.goto(exit);
                self.bind(skip);
            } else {
                self.branch_on(c, true, exit)?;
            }
        }
        self.span = span;
        self.next_back_edge = Some(self.loops_made);
        self.loops_made += 1;
        self.goto(top);
        if self.structured {
            self.constructs.push((true, top, exit));
        }
        // The back edge carries what the body loaded to the branches
        // before it (a `while (x == 0u) { x = flag; }` tests at the top).
        let back: Vec<Instr> = self.instrs[first..].to_vec();
        for i in &back {
            if let Instr::Branch { a, b, .. } = *i {
                for o in [a, b] {
                    let hit = self.tainted.iter().filter(|(r, _)| Operand::Reg(*r) == o);
                    let ls: Vec<u8> = hit.map(|&(_, l)| l).collect();
                    self.spun.extend(ls);
                }
            }
        }
        self.bind(exit);
        for r in self.loop_frees.pop().unwrap_or_default() {
            self.free(r);
        }
        Ok(())
    }

    fn return_(&mut self, value: Option<Handle<E>>) -> Res<()> {
        match self.frame().ret {
            None => {
                let end = self.end;
                self.goto(end);
            }
            Some((label, reg)) => {
                if let (Some(v), Some(r)) = (value, reg) {
                    let o = self.take(v)?;
                    self.assign(r, None, o, Operand::Imm(0));
                    self.release(v);
                }
                self.goto(label);
            }
        }
        Ok(())
    }

    fn store(&mut self, pointer: Handle<E>, value: Handle<E>) -> Res<()> {
        let ptr = self.pointer(pointer)?;
        match ptr {
            Ptr::Mem(loc, index) => {
                let v = self.take(value)?;
                self.span = self.stmt_span;
                self.access(loc, true, true);
                self.push(Instr::Atomic {
                    op: AtomicOp::Store(v),
                    addr: Addr { loc, index },
                    dst: None,
                    branch: None,
                });
            }
            Ptr::Reg(r) => {
                let v = self.take(value)?;
                let len = self.instrs.len();
                self.before_write(r)?;
                if !self.retarget(value, v, r, len) {
                    self.assign(r, None, v, Operand::Imm(0));
                }
            }
            Ptr::VecGlobal(g) => {
                let v = self.get(value)?;
                let Val::Vec(ops) = v else {
                    return refuse(
                        self.span,
                        "a private vector that does not hold the built-in ids",
                    );
                };
                self.globals.insert(g, Global::Vec(Some(ops)));
            }
            _ => {
                return refuse(
                    self.span,
                    "a store to a whole array, struct or vector component",
                )
            }
        }
        self.release(value);
        self.release(pointer);
        Ok(())
    }

    pub(super) fn atomic(
        &mut self,
        pointer: Handle<E>,
        fun: &naga::AtomicFunction,
        value: Handle<E>,
        result: Option<Handle<E>>,
    ) -> Res<()> {
        let (loc, index) = self.atomic_cell(pointer)?;
        let v = self.take(value)?;
        let minmax = matches!(fun, naga::AtomicFunction::Min | naga::AtomicFunction::Max);
        if minmax && self.sext && self.is_signed(value) {
            return refuse(
                self.span,
                "a signed atomicMin or atomicMax where values may be negative: the kernel language's min and max are unsigned",
            );
        }
        let mut cmp = None;
        let op = match fun {
            naga::AtomicFunction::Add => AtomicOp::Fetch(RmwOp::Add, v),
            naga::AtomicFunction::Subtract => AtomicOp::Fetch(RmwOp::Sub, v),
            naga::AtomicFunction::And => AtomicOp::Fetch(RmwOp::And, v),
            naga::AtomicFunction::ExclusiveOr => AtomicOp::Fetch(RmwOp::Xor, v),
            naga::AtomicFunction::InclusiveOr => AtomicOp::Fetch(RmwOp::Or, v),
            naga::AtomicFunction::Min => AtomicOp::Fetch(RmwOp::Min, v),
            naga::AtomicFunction::Max => AtomicOp::Fetch(RmwOp::Max, v),
            naga::AtomicFunction::Exchange { compare: None } => AtomicOp::Exchange(v),
            naga::AtomicFunction::Exchange { compare: Some(c) } => {
                let e = self.take(*c)?;
                cmp = Some((*c, e));
                AtomicOp::CompareExchange(e, v)
            }
        };
        if let (Some(finite), Some((c, e))) = (self.weak_cas, cmp) {
            let addr = Addr { loc, index };
            let regs = self.weak_compare_exchange(addr, e, v, finite, result)?;
            self.weak_result(pointer, value, c, result, regs);
            return Ok(());
        }
        let live = result.is_some_and(|r| self.refs(r) > 0);
        let dst = if live { Some(self.alloc()?) } else { None };
        self.span = self.stmt_span;
        self.access(loc, true, false);
        self.push(Instr::Atomic {
            op,
            addr: Addr { loc, index },
            dst,
            branch: None,
        });
        let (Some(r), Some(d)) = (result, dst) else {
            self.release(pointer);
            self.release_operand(value);
            if let Some((c, _)) = cmp {
                self.release_operand(c);
            }
            return Ok(());
        };
        let temps = vec![d];
        let mut deps = Vec::new();
        let val = match cmp {
            None => Val::Op(Operand::Reg(d)),
            // `exchanged` is `old == compare`, computed where it is used;
            // the compare value is kept alive until then.
            Some(_) if self.glsl_result => Val::Op(Operand::Reg(d)),
            Some((c, e)) => {
                deps.push(c);
                Val::Cas(Operand::Reg(d), Some(e))
            }
        };
        self.release(pointer);
        self.release_operand(value);
        self.put(r, val, temps, deps);
        Ok(())
    }

    /// The cell an atomic's pointer points to.
    fn atomic_cell(&mut self, pointer: Handle<E>) -> Res<(u8, Operand)> {
        match self.pointer(pointer)? {
            Ptr::Mem(loc, index) => Ok((loc, index)),
            _ if self.glsl_result => refuse(
                self.span,
                "an atomic on something other than a buffer or shared variable",
            ),
            _ => refuse(
                self.span,
                "an atomic on something other than a storage or workgroup variable",
            ),
        }
    }

    /// WGSL's `atomicCompareExchangeWeak` (docs/KERNEL.md §2.11): the
    /// strong compare-exchange, or, chosen by nobody in the program, a
    /// spurious failure that reads the cell and writes nothing (`choose
    /// finitely` where a run fails spuriously only finitely often, the
    /// default, else `choose`). The registers of `old_value` and
    /// `exchanged` (0 or 1) where the result is used.
    fn weak_compare_exchange(
        &mut self,
        addr: Addr,
        e: Operand,
        v: Operand,
        finite: bool,
        result: Option<Handle<E>>,
    ) -> Res<Option<(u8, u8)>> {
        let live = result.is_some_and(|r| self.refs(r) > 0);
        let (spurious, join) = (self.new_label(), self.new_label());
        self.span = self.stmt_span;
        self.access(addr.loc, true, false);
        let choose = Instr::Choose {
            target: Target::End,
            finite,
        };
        self.push_jump(choose, spurious);
        // A selection (§2.8) whose arms meet after the access: where the
        // lanes' own choices reconverge.
        let merge = if live { join } else { spurious };
        self.selection(merge);
        let cas = |dst| Instr::Atomic {
            op: AtomicOp::CompareExchange(e, v),
            addr,
            dst,
            branch: None,
        };
        if !live {
            // A spurious failure changes nothing the program reads.
            self.push(cas(None));
            self.bind(spurious);
            return Ok(None);
        }
        let (d, ok) = (self.alloc()?, self.alloc()?);
        self.push(cas(Some(d)));
        self.assign(ok, Some(BinOp::Cmp(Cmp::Eq)), Operand::Reg(d), e);
        self.goto(join);
        self.bind(spurious);
        self.push(Instr::Atomic {
            op: AtomicOp::Load,
            addr,
            dst: Some(d),
            branch: None,
        });
        self.assign(ok, None, Operand::Imm(0), Operand::Imm(0));
        self.bind(join);
        Ok(Some((d, ok)))
    }

    /// Releases a weak compare-exchange's operands and binds its result
    /// (`regs`: [`Lower::weak_compare_exchange`]'s registers).
    fn weak_result(
        &mut self,
        pointer: Handle<E>,
        value: Handle<E>,
        compare: Handle<E>,
        result: Option<Handle<E>>,
        regs: Option<(u8, u8)>,
    ) {
        self.release(pointer);
        self.release_operand(value);
        self.release_operand(compare);
        if let (Some(r), Some((d, ok))) = (result, regs) {
            let val = Val::Exchanged(Operand::Reg(d), Operand::Reg(ok));
            self.put(r, val, vec![d, ok], Vec::new());
        }
    }

    /// The collective a renamed GLSL subgroup function stands for (only in
    /// GLSL modules; [`crate::kernel::shader::glsl`]).
    fn glsl_collective(&self, f: Handle<naga::Function>) -> Option<CollectiveOp> {
        match self.module.functions[f].name.as_deref()? {
            "SubgroupAll" if self.glsl => Some(CollectiveOp::All),
            "SubgroupAny" if self.glsl => Some(CollectiveOp::Any),
            "SubgroupBroadcastFirst" if self.glsl => Some(CollectiveOp::BroadcastFirst),
            _ => None,
        }
    }

    fn collective(&mut self, op: CollectiveOp, argument: Handle<E>, result: Handle<E>) -> Res<()> {
        let src = self.take(argument)?;
        let dst = self.alloc()?;
        self.push(Instr::Collective { op, dst, src });
        self.release_operand(argument);
        self.put(result, Val::Op(Operand::Reg(dst)), vec![dst], Vec::new());
        Ok(())
    }

    /// Inlines a call: arguments as values, the callee's locals as fresh
    /// registers, `return` as a jump to the end with the value in a
    /// register. Recursion is refused.
    fn call(
        &mut self,
        function: Handle<naga::Function>,
        arguments: &[Handle<E>],
        result: Option<Handle<E>>,
    ) -> Res<()> {
        let fun = &self.module.functions[function];
        if self.calls.contains(&function) {
            return refuse(
                self.span,
                format!(
                    "recursive call of `{}`: recursion is refused",
                    name_of(&fun.name)
                ),
            );
        }
        if self.calls.len() >= MAX_CALL_DEPTH {
            return refuse(
                self.span,
                format!("calls nested more than {MAX_CALL_DEPTH} deep"),
            );
        }
        self.inlined += 1;
        if self.inlined > MAX_INLINED_CALLS {
            return refuse(
                self.span,
                format!("more than {MAX_INLINED_CALLS} calls inlined (each call is a copy of its function's body): refused"),
            );
        }
        self.copy_private_aliases()?;
        let mut args = Vec::new();
        for &a in arguments {
            match self.get(a)? {
                v @ (Val::Op(_) | Val::Vec(_)) => args.push(v),
                Val::Cmp(..) => args.push(Val::Op(self.take(a)?)),
                _ => return refuse(self.span, "a pointer or struct argument: only scalar values are passed to inlined functions"),
            }
        }
        let live = result.is_some_and(|r| self.refs(r) > 0);
        let ret_reg = if live { Some(self.alloc()?) } else { None };
        let label = self.new_label();
        let outer_span = self.span;
        self.calls.push(function);
        let mut frame = Frame::new(fun, &self.minfo[function], args, self.glsl);
        frame.ret = Some((label, ret_reg));
        self.frames.push(frame);
        self.declare_locals(false)?;
        self.block(&fun.body)?;
        self.bind(label);
        let done = self.frames.pop().expect("the callee's frame");
        for &r in done.locals.values() {
            self.pinned[r as usize] = false;
            self.free(r);
        }
        for (_, slot) in done.slots {
            for r in slot.temps {
                self.free(r);
            }
        }
        self.calls.pop();
        self.span = outer_span;
        for &a in arguments {
            self.release(a);
        }
        if let (Some(r), Some(d)) = (result, ret_reg) {
            self.put(r, Val::Op(Operand::Reg(d)), vec![d], Vec::new());
        }
        Ok(())
    }

    /// Whether register `r` still holds its initial 0 here: outside every
    /// loop, and no instruction so far writes it.
    fn still_zero(&self, r: u8) -> bool {
        self.loop_frees.len() == 1 && self.instrs.iter().all(|i| i.dst() != Some(r))
    }

    /// `x = <temp just computed>`: the instruction that computed the temp
    /// writes `x` instead (when this is the temp's last use and nothing was
    /// emitted since). Returns whether it did.
    fn retarget(&mut self, value: Handle<E>, v: Operand, r: u8, len: usize) -> bool {
        let Operand::Reg(t) = v else { return false };
        let owns = self
            .frame()
            .slots
            .get(&value)
            .is_some_and(|s| s.temps == [t]);
        if !owns || self.refs(value) != 1 || self.instrs.len() != len || len == 0 {
            return false;
        }
        if self.labels.contains(&Some(len)) || self.labels.contains(&Some(len - 1)) {
            return false;
        }
        match &mut self.instrs[len - 1] {
            Instr::Assign { dst, .. } if *dst == t => *dst = r,
            Instr::Atomic { dst: Some(d), .. } if *d == t => *d = r,
            _ => return false,
        }
        // What `t` held, `r` holds now (a spin's load into a variable).
        self.tainted.retain(|(x, _)| *x != r);
        for e in self.tainted.iter_mut().filter(|(x, _)| *x == t) {
            e.0 = r;
        }
        true
    }

    /// Records an access to a location (for the plain-access warning).
    /// `plain`: a load or store (not a read-modify-write); on a location
    /// of atomic type it is WGSL's atomicLoad/atomicStore, not plain.
    pub(super) fn access(&mut self, loc: u8, write: bool, plain: bool) {
        if write {
            self.written.insert(loc);
        }
        if plain && !self.atomic_loc[loc as usize] {
            self.plain.insert(loc);
            self.next_plain = true;
        }
    }

    /// Follows the values of plain loads made inside a loop (`tainted`:
    /// register, location) through the assignments after them, and marks
    /// a location spun on (`spun`) when a branch inside a loop reads one:
    /// a spin whose load a compiler may hoist (§10.2, *Races*). A
    /// barrier-ordered read whose value only feeds arithmetic is not one.
    pub(super) fn track_spins(&mut self, i: &Instr) {
        let locs_of = |o: Operand, tainted: &[(u8, u8)]| -> Vec<u8> {
            match o {
                Operand::Reg(r) => tainted
                    .iter()
                    .filter(|(x, _)| *x == r)
                    .map(|&(_, l)| l)
                    .collect(),
                _ => Vec::new(),
            }
        };
        match *i {
            Instr::Branch { a, b, .. } if self.loop_frees.len() > 1 => {
                let mut ls = locs_of(a, &self.tainted);
                ls.extend(locs_of(b, &self.tainted));
                self.spun.extend(ls);
            }
            Instr::Assign { dst, a, b, .. } => {
                let mut ls = locs_of(a, &self.tainted);
                ls.extend(locs_of(b, &self.tainted));
                self.tainted.retain(|(r, _)| *r != dst);
                self.tainted.extend(ls.into_iter().map(|l| (dst, l)));
            }
            _ => {
                if let Some(d) = i.dst() {
                    self.tainted.retain(|(r, _)| *r != d);
                }
            }
        }
    }
}

impl<'a> Frame<'a> {
    fn new(
        fun: &'a naga::Function,
        info: &'a naga::valid::FunctionInfo,
        args: Vec<Val>,
        glsl: bool,
    ) -> Frame<'a> {
        Frame {
            fun,
            info,
            slots: HashMap::new(),
            refs: count_refs(fun, glsl),
            locals: HashMap::new(),
            args,
            ret: None,
            breaks: Vec::new(),
        }
    }
}

pub(super) fn negate(c: Cmp) -> Cmp {
    match c {
        Cmp::Eq => Cmp::Ne,
        Cmp::Ne => Cmp::Eq,
        Cmp::Lt => Cmp::Ge,
        Cmp::Ge => Cmp::Lt,
        Cmp::Gt => Cmp::Le,
        Cmp::Le => Cmp::Gt,
    }
}

pub(super) fn name_of(n: &Option<String>) -> &str {
    n.as_deref().unwrap_or("(unnamed)")
}

fn stmt_name(s: &naga::Statement) -> &'static str {
    match s {
        S::RayQuery { .. } => "ray query",
        S::RayPipelineFunction(_) => "ray pipeline function",
        S::CooperativeStore { .. } => "cooperative matrix store",
        _ => "(unsupported)",
    }
}

/// How many times each expression is used (by statements and by
/// expressions), so that a temp's register is freed after its last use.
/// With `prune` (GLSL modules), only uses by expressions that are
/// themselves used count, so an expression nothing uses, directly or
/// through others, counts 0 and is not translated: naga's GLSL frontend
/// leaves some (`b.x` as an `inout` argument is also read as a load of the
/// whole block `b`), and an expression has no effect of its own. naga's
/// validation keeps an expression's operands before it in the arena, so
/// one sweep from the last expression back counts every use. (Other
/// modules keep every use: their translations, locations in order of
/// first use included, stay as they were.)
fn count_refs(fun: &naga::Function, prune: bool) -> HashMap<Handle<E>, u32> {
    let mut refs: HashMap<Handle<E>, u32> = HashMap::new();
    let mut add = |h: Handle<E>| *refs.entry(h).or_insert(0) += 1;
    let mut stack = vec![&fun.body];
    while let Some(b) = stack.pop() {
        for st in b.iter() {
            statement_refs(st, &mut add, &mut stack);
        }
    }
    for (h, e) in fun.expressions.iter().rev() {
        if !prune || refs.get(&h).is_some_and(|&n| n > 0) {
            super::emit::children(e, &mut |c| *refs.entry(c).or_insert(0) += 1);
        }
    }
    refs
}

fn statement_refs<'b>(
    st: &'b naga::Statement,
    add: &mut impl FnMut(Handle<E>),
    stack: &mut Vec<&'b naga::Block>,
) {
    match st {
        S::Block(b) => stack.push(b),
        S::If {
            condition,
            accept,
            reject,
        } => {
            add(*condition);
            stack.push(accept);
            stack.push(reject);
        }
        S::Switch { selector, cases } => {
            add(*selector);
            stack.extend(cases.iter().map(|c| &c.body));
        }
        S::Loop {
            body,
            continuing,
            break_if,
        } => {
            stack.push(body);
            stack.push(continuing);
            if let Some(c) = break_if {
                add(*c);
            }
        }
        S::Return { value: Some(v) } => add(*v),
        S::Store { pointer, value } => {
            add(*pointer);
            add(*value);
        }
        S::Atomic {
            pointer,
            fun,
            value,
            ..
        } => {
            add(*pointer);
            add(*value);
            if let naga::AtomicFunction::Exchange { compare: Some(c) } = fun {
                add(*c);
            }
        }
        S::WorkGroupUniformLoad { pointer, .. } => add(*pointer),
        S::Call { arguments, .. } => arguments.iter().for_each(|&a| add(a)),
        S::SubgroupCollectiveOperation { argument, .. } | S::SubgroupGather { argument, .. } => {
            add(*argument)
        }
        _ => {}
    }
}

/// Whether a case runs on into the next: it says so (GLSL's cases all do,
/// in naga's reading) and its body does not end in a jump (`break;`).
fn falls_through(c: &naga::SwitchCase) -> bool {
    fn ends_in_jump(b: &naga::Block) -> bool {
        match b.last() {
            Some(S::Break | S::Continue | S::Return { .. } | S::Kill) => true,
            Some(S::Block(inner)) => ends_in_jump(inner),
            _ => false,
        }
    }
    c.fall_through && !ends_in_jump(&c.body)
}
