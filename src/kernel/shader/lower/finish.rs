//! Globals as locations, built-in inputs as ids, and the program at the
//! end: labels resolved, the value domain chosen, the program validated.

use super::*;

impl<'a> Lower<'a> {
    /// The pointer a global variable denotes, declaring its location(s) on
    /// first use (so unused globals cost nothing).
    pub(super) fn global(&mut self, g: Handle<naga::GlobalVariable>) -> Res<Ptr> {
        if !self.globals.contains_key(&g) {
            let kind = self.declare_global(g)?;
            self.globals.insert(g, kind);
        }
        Ok(match &self.globals[&g] {
            Global::Loc(l) => {
                if self.locations[*l as usize].array {
                    Ptr::Array(*l)
                } else {
                    Ptr::Mem(*l, Operand::Imm(0))
                }
            }
            Global::Struct(_) => Ptr::Struct(g),
            Global::Alias(p) => *p,
            Global::Reg(r) => Ptr::Reg(*r),
            Global::Vec(_) => Ptr::VecGlobal(g),
        })
    }

    fn declare_global(&mut self, g: Handle<naga::GlobalVariable>) -> Res<Global> {
        let gv = &self.module.global_variables[g];
        // An anonymous block (GLSL's `uniform U { ... };`) by its type's name.
        let name = match (&gv.name, &self.module.types[gv.ty].name) {
            (Some(n), _) if !n.is_empty() => n.clone(),
            (_, Some(t)) => t.clone(),
            _ => stmt::name_of(&gv.name).to_string(),
        };
        let shared = match gv.space {
            naga::AddressSpace::Storage { .. } => false,
            naga::AddressSpace::WorkGroup => true,
            naga::AddressSpace::Private => return self.declare_private(g),
            naga::AddressSpace::Uniform => {
                return refuse(self.span, format!("uniform buffer `{name}`: its values come from the host; use a constant or a storage buffer"))
            }
            naga::AddressSpace::Handle => {
                return refuse(self.span, format!("`{name}`: textures, images and samplers are outside the kernel language"))
            }
            naga::AddressSpace::Immediate => {
                return refuse(self.span, format!("push constant `{name}`: its values come from the host; use a constant or a storage buffer"))
            }
            s => return refuse(self.span, format!("`{name}` in address space {s:?}: outside the kernel language")),
        };
        if !shared {
            let views = self.views_of(g);
            if views.len() > 1 {
                self.declare_aliased(&views)?;
                return Ok(self.globals[&g].clone());
            }
        }
        let declared = self.locations.len();
        let kind = self.declare_global_locations(g, &name, shared)?;
        // Workgroup memory without an initializer: zero in WGSL, undefined
        // in GLSL and SPIR-V (which of the two, `translate` decides).
        if shared && gv.init.is_none() {
            for l in declared..self.locations.len() {
                let shown = match self.names.iter().find(|(_, k)| *k as usize == l) {
                    Some((n, _)) if n != "(unnamed)" => format!("`{n}`"),
                    _ => format!(
                        "an unnamed workgroup variable (`{}` in `oracle translate`)",
                        self.locations[l].name
                    ),
                };
                self.undefined.push((l as u8, shown));
            }
        }
        Ok(kind)
    }

    /// The location(s) of a storage or workgroup variable: one, or one per
    /// member of a struct.
    fn declare_global_locations(
        &mut self,
        g: Handle<naga::GlobalVariable>,
        name: &str,
        shared: bool,
    ) -> Res<Global> {
        let gv = &self.module.global_variables[g];
        let name = name.to_string();
        match &self.module.types[gv.ty].inner {
            T::Struct { members, .. } => {
                let mut locs = Vec::new();
                let anonymous = gv.name.as_deref().is_none_or(str::is_empty);
                // A struct of one member (SPIR-V's buffer blocks) is named
                // after its variable.
                if members.len() == 1 && !anonymous {
                    let l = self.declare_location(&name, members[0].ty, shared, (g, Some(0)))?;
                    self.names
                        .push((stmt::name_of(&members[0].name).to_string(), l));
                    return Ok(Global::Struct(vec![self.loc_ptr(l)]));
                }
                for (k, m) in members.iter().enumerate() {
                    let member = stmt::name_of(&m.name);
                    let mname = if anonymous {
                        member.to_string()
                    } else {
                        format!("{name}_{member}")
                    };
                    let l = self.declare_location(&mname, m.ty, shared, (g, Some(k as u32)))?;
                    if !anonymous {
                        self.names.push((member.to_string(), l));
                    }
                    locs.push(self.loc_ptr(l));
                }
                Ok(Global::Struct(locs))
            }
            _ => Ok(Global::Loc(self.declare_location(
                &name,
                gv.ty,
                shared,
                (g, None),
            )?)),
        }
    }

    /// One location: a scalar, an atomic, or a fixed-size array of them (a
    /// runtime-sized one indexed by constants only: `arrays.rs`).
    pub(super) fn declare_location(
        &mut self,
        name: &str,
        ty: Handle<naga::Type>,
        shared: bool,
        origin: arrays::Origin,
    ) -> Res<u8> {
        let want_name = name;
        let inner = &self.module.types[ty].inner;
        let (len, array, atomic) = match inner {
            t if emit::scalar_kind_ok(t) => (1, false, matches!(t, T::Atomic(_))),
            T::Array { base, size, .. } if emit::scalar_kind_ok(&self.module.types[*base].inner) => {
                let n = match size {
                    naga::ArraySize::Constant(n) => n.get() as usize,
                    naga::ArraySize::Dynamic => self.runtime_len(origin, name)?,
                    naga::ArraySize::Pending(_) => {
                        return refuse(self.span, format!("`{name}`: an array sized by a pipeline-overridable constant; declare a fixed size (array<u32, N>)"))
                    }
                };
                (n, true, matches!(self.module.types[*base].inner, T::Atomic(_)))
            }
            _ => {
                return refuse(
                    self.span,
                    format!("`{name}` of type {}: storage and workgroup variables are translated when they are integer scalars, atomics, fixed-size arrays of them, or structs of those", self.type_name(ty)),
                )
            }
        };
        if self.locations.len() >= crate::kernel::program::MAX_LOCATIONS {
            return refuse(
                self.span,
                format!(
                    "more than {} memory locations",
                    crate::kernel::program::MAX_LOCATIONS
                ),
            );
        }
        if len > crate::kernel::program::MAX_CELLS {
            return refuse(
                self.span,
                format!(
                    "`{name}` has {len} cells: at most {} in all",
                    crate::kernel::program::MAX_CELLS
                ),
            );
        }
        let name = self.fresh_name(name);
        self.locations.push(Location {
            name,
            shared,
            array,
            init: vec![0; len],
        });
        self.atomic_loc.push(atomic);
        let l = (self.locations.len() - 1) as u8;
        self.names.push((want_name.to_string(), l));
        Ok(l)
    }

    /// A location name the litmus text can carry: an identifier, not a
    /// keyword, not a register name (`rN`), not taken.
    fn fresh_name(&self, want: &str) -> String {
        let mut base: String = want
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let reg_like = base
            .strip_prefix('r')
            .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()));
        if !crate::kernel::program::is_name(&base) || reg_like {
            base = format!("m_{base}");
        }
        let mut name = base.clone();
        let mut k = 1;
        while self.locations.iter().any(|l| l.name == name)
            || !crate::kernel::program::is_name(&name)
        {
            name = format!("{base}_{k}");
            k += 1;
        }
        name
    }

    /// A private global: a scalar is a register for the whole run (its
    /// initial value set at the start); a vector may only hold a copy of an
    /// id vector (what GLSL's frontend makes of `gl_LocalInvocationID`).
    fn declare_private(&mut self, g: Handle<naga::GlobalVariable>) -> Res<Global> {
        let gv = &self.module.global_variables[g];
        match &self.module.types[gv.ty].inner {
            T::Vector { scalar, .. } if scalar.kind == naga::ScalarKind::Uint => {
                Ok(Global::Vec(None))
            }
            t if emit::scalar_kind_ok(t) => {
                let r = self.alloc()?;
                self.pinned[r as usize] = true;
                Ok(Global::Reg(r))
            }
            _ => refuse(
                // The declaration's place: none may have been translated yet.
                self.module.global_variables.get_span(g),
                format!(
                    "private variable `{}` of type {}: only integer scalars become registers",
                    stmt::name_of(&gv.name),
                    self.type_name(gv.ty)
                ),
            ),
        }
    }

    /// Declares every private scalar global at the start of the entry point
    /// (their registers must hold their initial values from the start).
    pub(super) fn declare_privates(&mut self) -> Res<()> {
        for (g, gv) in self.module.global_variables.iter() {
            if gv.space != naga::AddressSpace::Private {
                continue;
            }
            let kind = self.declare_private(g)?;
            if let (Global::Reg(r), Some(init)) = (&kind, gv.init) {
                let o = self.global_init(init)?;
                if o != Operand::Imm(0) {
                    self.assign(*r, None, o, Operand::Imm(0));
                }
            }
            self.globals.insert(g, kind);
        }
        Ok(())
    }

    fn global_init(&mut self, h: Handle<E>) -> Res<Operand> {
        match &self.module.global_expressions[h] {
            E::Literal(naga::Literal::U32(v)) => self.constant(*v as i128),
            E::Literal(naga::Literal::I32(v)) => self.constant(*v as i128),
            E::Literal(naga::Literal::Bool(b)) => self.constant(*b as i128),
            E::ZeroValue(_) => Ok(Operand::Imm(0)),
            _ => refuse(
                self.span,
                "a private variable's initial value that is not an integer literal",
            ),
        }
    }

    /// An entry-point argument: a built-in input (or a struct of them).
    pub(super) fn input(
        &mut self,
        binding: Option<&naga::Binding>,
        ty: Handle<naga::Type>,
        used: bool,
    ) -> Res<Val> {
        use naga::BuiltIn as B;
        let b = match binding {
            Some(naga::Binding::BuiltIn(b)) => *b,
            Some(naga::Binding::Location { .. }) => {
                return refuse(self.span, "a location-bound input: not a compute construct")
            }
            None => {
                let T::Struct { members, .. } = &self.module.types[ty].inner else {
                    return refuse(self.span, "an entry-point argument without a binding");
                };
                let mut vs = Vec::new();
                for m in members.clone() {
                    vs.push(self.input(m.binding.as_ref(), m.ty, used)?);
                }
                return Ok(Val::Inputs(vs));
            }
        };
        let (w, n, s) = (
            self.launch.workgroups(),
            self.wg_size,
            self.launch.subgroup_size(),
        );
        let vec3 = |x: Operand| Val::Vec(vec![x, Operand::Imm(0), Operand::Imm(0)]);
        Ok(match b {
            B::LocalInvocationId => vec3(Operand::Id(IdKind::LocalId)),
            B::LocalInvocationIndex => Val::Op(Operand::Id(IdKind::LocalId)),
            B::WorkGroupId => vec3(Operand::Id(IdKind::WgId)),
            B::NumWorkGroups => Val::Vec(vec![
                self.constant(w as i128)?,
                self.constant(1)?,
                self.constant(1)?,
            ]),
            B::WorkGroupSize => Val::Vec(vec![
                self.constant(n as i128)?,
                self.constant(1)?,
                self.constant(1)?,
            ]),
            B::NumSubgroups => Val::Op(self.constant((n / s.max(1)) as i128)?),
            B::SubgroupSize => Val::Op(self.constant(s as i128)?),
            B::SubgroupId => Val::Op(Operand::Id(IdKind::SubgroupId)),
            B::SubgroupInvocationId => Val::Op(Operand::Id(IdKind::LaneId)),
            B::GlobalInvocationId if !used => vec3(Operand::Imm(0)),
            B::GlobalInvocationId => {
                // wg_id * N + local_id, computed once at the start.
                let r = self.alloc()?;
                self.pinned[r as usize] = true;
                let nn = self.constant(n as i128)?;
                self.assign(r, Some(BinOp::Mul), Operand::Id(IdKind::WgId), nn);
                self.assign(
                    r,
                    Some(BinOp::Add),
                    Operand::Reg(r),
                    Operand::Id(IdKind::LocalId),
                );
                vec3(Operand::Reg(r))
            }
            other => return refuse(self.span, format!("the built-in {other:?}: not translated")),
        })
    }

    /// Resolves the labels, picks the value domain, builds and validates
    /// the program.
    pub(super) fn finish(mut self) -> Res<Translation> {
        let end = self.end;
        self.bind(end);
        if self.launch.simplify {
            self.simplify();
        } else {
            self.drop_fallthrough_jumps();
        }
        let len = self.instrs.len();
        if len > crate::kernel::program::MAX_CODE_LEN {
            let span = self.spans[crate::kernel::program::MAX_CODE_LEN];
            return refuse(
                span,
                format!("the translation has {len} instructions: the kernel language allows {} per block (this is where it overflows)", crate::kernel::program::MAX_CODE_LEN),
            );
        }
        for &(pc, label) in &self.fixups {
            let at = self.labels[label]
                .ok_or_else(|| ShaderError::new(self.spans[pc], "a jump to nowhere"))?;
            let t = Target::from_pc(at, len);
            match &mut self.instrs[pc] {
                Instr::Goto { target }
                | Instr::Branch { target, .. }
                | Instr::Choose { target, .. } => *target = t,
                _ => {}
            }
        }
        let constructs = self.constructs_at(len);
        let values = self.domain()?;
        let nregs = self.registers_used();
        let mut program = Program {
            values,
            workgroups: self.launch.workgroups(),
            workgroup_size: u16::from(self.wg_size),
            subgroup_size: self.launch.subgroup_size(),
            locations: self.locations.clone(),
            codes: vec![Code {
                regs: (0..nregs).map(|r| format!("r{r}")).collect(),
                instrs: self.instrs.clone(),
                labels: vec![None; len],
                constructs,
                at: Default::default(),
            }],
            wg_code: vec![0; self.launch.workgroups() as usize],
            model: None,
            expect: Vec::new(),
            asserts: Vec::new(),
            hardware_subgroups: false,
            tangled_collectives: false,
        };
        program.normalize();
        self.validate(&program)?;
        let warnings = self.warnings();
        let races = self.races();
        let unused = self.unused_globals();
        Ok(Translation {
            program,
            spans: self.spans,
            exact: self.exact,
            plain: self.plain_at,
            back_edges: self.back_edge_at,
            sext: self.sext,
            warnings,
            source: self.src.to_string(),
            names: self.names,
            cells: self.cells,
            unused,
            launch: Default::default(),
            undefined: self.undefined,
            races,
            undefined_barrier: None,
        })
    }

    /// The constructs recorded while lowering structured (§2.8), at their
    /// pcs, in order of their headers (a loop before a selection of the
    /// same header); a selection whose header is no conditional branch
    /// any more is left out.
    fn constructs_at(&self, len: usize) -> Vec<Construct> {
        let mut out: Vec<Construct> = (self.constructs.iter())
            .filter_map(|&(lp, h, m)| {
                let (h, m) = (self.labels[h]?, self.labels[m]?);
                let merge = Target::from_pc(m, len);
                let header = u8::try_from(h).ok()?;
                if lp {
                    return Some(Construct::Loop { header, merge });
                }
                let branch = matches!(
                    self.instrs.get(h),
                    Some(
                        Instr::Branch { .. }
                            | Instr::Choose { .. }
                            | Instr::Atomic {
                                branch: Some(_),
                                ..
                            }
                    )
                );
                branch.then_some(Construct::Selection { header, merge })
            })
            .collect();
        out.sort_by_key(|c| (c.header(), matches!(c, Construct::Selection { .. })));
        out.dedup();
        out
    }

    /// The number of registers the code names (one past the highest).
    fn registers_used(&self) -> usize {
        self.instrs
            .iter()
            .filter_map(|i| i.dst())
            .chain(self.instrs.iter().flat_map(|i| {
                i.operands().into_iter().filter_map(|o| match o {
                    Operand::Reg(r) => Some(r),
                    _ => None,
                })
            }))
            .max()
            .map_or(0, |r| r as usize + 1)
    }

    /// Removes every `goto` to the next instruction (structured control
    /// flow leaves many), renumbering labels and jumps.
    pub(super) fn drop_fallthrough_jumps(&mut self) {
        let jumps: HashMap<usize, usize> = self.fixups.iter().copied().collect();
        let keep: Vec<bool> = (0..self.instrs.len())
            .map(|pc| {
                !matches!(self.instrs[pc], Instr::Goto { .. })
                    || self.labels[jumps[&pc]] != Some(pc + 1)
            })
            .collect();
        self.remove(&keep);
    }

    /// `--values`, or the least power of two above every constant and
    /// above W x N (so ids, and counts of invocations, fit).
    fn domain(&self) -> Res<u16> {
        let w = self.launch.workgroups() as u32;
        let n = self.wg_size as u32;
        if self.sext {
            return self.sext_domain(w * n);
        }
        if let Some(v) = self.launch.values {
            if self.max_const >= v as u32 {
                return refuse(Span::UNDEFINED, format!("--values {v}: the shader uses the constant {}: value bound exceeded: raise --values", self.max_const));
            }
            return Ok(v);
        }
        let need = self.max_const.max(w * n).max(1) + 1;
        let v = need.next_power_of_two();
        if v > MAX_VALUES as u32 {
            return refuse(Span::UNDEFINED, format!("the shader's constants and ids need values up to {}: value bound exceeded (the kernel language's values are below {MAX_VALUES})", need - 1));
        }
        Ok(v as u16)
    }

    /// Checks the translated program, naming the shader position of an
    /// invalid instruction. A two's complement translation without a
    /// domain only picks one: its constants are in 256 values, not yet in
    /// the domain it picks, so it is not checked.
    fn validate(&self, program: &Program) -> Res<()> {
        if self.sext && self.launch.values.is_none() {
            return Ok(());
        }
        program.validate().map_err(|e| {
            let span = match e.site {
                crate::kernel::program::Site::Instr { pc, .. } => {
                    self.spans.get(pc).copied().unwrap_or(Span::UNDEFINED)
                }
                _ => Span::UNDEFINED,
            };
            ShaderError::new(span, format!("the translated program is not valid: {e}"))
        })
    }

    /// The domain of two's complement values (§10.3): `--values`, or the
    /// least power of two whose upper half holds every constant's
    /// magnitude, every id (below `ids`) and every index of an array (so
    /// an index that stands for a negative value is past every array).
    fn sext_domain(&self, ids: u32) -> Res<u16> {
        let cells = self.locations.iter().map(|l| l.len() as u32).max();
        let half = (self.max_const + 1).max(ids).max(cells.unwrap_or(1));
        let beyond = 2 * half > MAX_VALUES as u32;
        if let Some(v) = self.launch.values.filter(|_| !beyond) {
            if half > v as u32 / 2 {
                return refuse(Span::UNDEFINED, format!("--values {v}: the shader's constants, ids or arrays need two's complement values up to {}: value bound exceeded: raise --values", half));
            }
            return Ok(v);
        }
        let v = (2 * half).next_power_of_two();
        if v > MAX_VALUES as u32 {
            return refuse(Span::UNDEFINED, format!("the shader's constants, ids or arrays need two's complement values up to {half}: value bound exceeded (the kernel language's values are below {MAX_VALUES}, -128 to 127 as two's complement values)"));
        }
        Ok(v as u16)
    }

    /// The names of the storage and workgroup variables (and their
    /// members) that became no location: the entry point does not use them.
    fn unused_globals(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (g, gv) in self.module.global_variables.iter() {
            let memory = matches!(
                gv.space,
                naga::AddressSpace::Storage { .. } | naga::AddressSpace::WorkGroup
            );
            if !memory || self.globals.contains_key(&g) {
                continue;
            }
            out.push(stmt::name_of(&gv.name).to_string());
            if let T::Struct { members, .. } = &self.module.types[gv.ty].inner {
                out.extend(members.iter().map(|m| stmt::name_of(&m.name).to_string()));
            }
        }
        out
    }

    /// The data races of the translation (docs/KERNEL.md §10.2, *Races*):
    /// plain loads in a loop of memory that is written, and GLSL atomics whose
    /// scope does not hold every invocation of the launch that may access
    /// their memory (every one of the dispatch for a storage buffer, of
    /// its workgroup for workgroup memory).
    fn races(&self) -> Vec<super::super::Race> {
        use super::super::Race;
        let (w, n, s) = (
            u32::from(self.launch.workgroups()),
            u32::from(self.wg_size),
            u32::from(self.launch.subgroup_size()),
        );
        // A plain load in a loop races with a write where more than one
        // invocation may access the memory: the spin the issue names (a
        // plain write and read a barrier orders are not this race).
        let many = |loc: u8| n > 1 || (w > 1 && !self.locations[loc as usize].shared);
        let mut races: Vec<Race> = self
            .spun
            .intersection(&self.written)
            .filter(|&&loc| many(loc))
            .map(|&loc| Race {
                name: self.locations[loc as usize].name.clone(),
                span: Span::UNDEFINED,
                at: None,
                what: "read by plain (non-atomic) loads in a loop while it is written (a compiler may hoist the load out of the loop)".into(),
            })
            .collect();
        for &(loc, scope, span, what) in &self.scoped {
            let shared = self.locations[loc as usize].shared;
            if let Some(what) = super::super::launch::scope_race(what, scope, shared, (w, n, s)) {
                let name = self.locations[loc as usize].name.clone();
                races.push(Race {
                    name,
                    span,
                    at: None,
                    what,
                });
            }
        }
        races
    }

    fn warnings(&self) -> Vec<String> {
        let racy: Vec<&str> = self
            .plain
            .intersection(&self.written)
            .map(|&l| self.locations[l as usize].name.as_str())
            .collect();
        if racy.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "{} {} (memory other invocations write) are translated as sequentially consistent atomic accesses",
            super::PLAIN_WARNING,
            racy.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
        )]
    }
}
