//! Buffers seen through two declarations (aliased, issue 42): GLSL and
//! SPIR-V may bind two storage blocks to one binding, and Vulkan allows it
//! ("it is valid for multiple shader variables to be assigned the same
//! descriptor set and binding values, as long as all those that are
//! statically used by the entry point being compiled are compatible with
//! the descriptor type"). Both then view the memory of one buffer from
//! its first byte, each member at its std430 offset. The translation lays
//! the views side by side in 32-bit words and gives each group of words
//! that overlap one location; the views' members become pointers into it
//! (docs/KERNEL.md §10.2, *Two variables on one binding*).

use super::*;

/// One member of an aliased view (or the whole view, when it is not a
/// struct), in 32-bit words from the buffer's start.
struct Piece {
    g: Handle<naga::GlobalVariable>,
    member: Option<u32>,
    /// The name the location takes when this piece is the one declared.
    name: String,
    /// The shader's own name for it (a member's bare name).
    shown: String,
    ty: Handle<naga::Type>,
    start: u32,
    len: u32,
    array: bool,
    runtime: bool,
    kind: naga::ScalarKind,
    atomic: bool,
}

impl<'a> Lower<'a> {
    /// The storage variables the entry point uses on `g`'s binding, `g`
    /// among them, in declaration order; just `g` when it has the binding
    /// to itself.
    pub(super) fn views_of(
        &self,
        g: Handle<naga::GlobalVariable>,
    ) -> Vec<Handle<naga::GlobalVariable>> {
        let gv = &self.module.global_variables[g];
        let Some(binding) = gv.binding.as_ref() else {
            return vec![g];
        };
        let Ok((index, _)) = pick_entry(self.module, self.launch) else {
            return vec![g];
        };
        let uses = self.minfo.get_entry_point(index);
        self.module
            .global_variables
            .iter()
            .filter(|(h, v)| {
                *h == g
                    || (!uses[*h].is_empty()
                        && v.binding.as_ref() == Some(binding)
                        && matches!(v.space, naga::AddressSpace::Storage { .. }))
            })
            .map(|(h, _)| h)
            .collect()
    }

    /// Declares every view of one aliased buffer at once (so the layout
    /// does not depend on which view the code names first): overlapping
    /// words share one location, and each view's members point into it.
    pub(super) fn declare_aliased(&mut self, views: &[Handle<naga::GlobalVariable>]) -> Res<()> {
        let mut pieces = Vec::new();
        for &g in views {
            self.pieces_of(g, &mut pieces)?;
        }
        pieces.sort_by_key(|p| (p.start, std::cmp::Reverse(p.len), !p.array));
        let mut ptrs: Vec<(Handle<naga::GlobalVariable>, Option<u32>, Ptr)> = Vec::new();
        let mut i = 0;
        while i < pieces.len() {
            let c = &pieces[i];
            let end = c.start + c.len;
            let mut j = i + 1;
            while j < pieces.len() && pieces[j].start < end {
                j += 1;
            }
            // Named after every view of its words: `part_bitArray`.
            let mut name: Vec<&str> = Vec::new();
            for p in &pieces[i..j] {
                if !name.contains(&p.name.as_str()) {
                    name.push(&p.name);
                }
            }
            let joined = name.join("_");
            let l = self.declare_location(&joined, c.ty, false, (c.g, c.member))?;
            for p in &pieces[i..j] {
                let ptr = self.overlay(c, p, l)?;
                if let Ptr::Mem(_, Operand::Imm(cell)) = ptr {
                    if self.locations[l as usize].array {
                        for n in [&p.shown, &p.name] {
                            self.cells.push((n.clone(), l, cell));
                        }
                        ptrs.push((p.g, p.member, ptr));
                        continue;
                    }
                }
                // The shader's names: the member (`x`) and, for a
                // struct with an instance name, `b_x`, as unaliased.
                self.names.push((p.shown.clone(), l));
                if p.name != p.shown && p.name != joined {
                    self.names.push((p.name.clone(), l));
                }
                ptrs.push((p.g, p.member, ptr));
            }
            // A location of plain accesses unless every view is atomic.
            self.atomic_loc[l as usize] = pieces[i..j].iter().all(|p| p.atomic);
            i = j;
        }
        for &g in views {
            let mine = ptrs.iter().filter(|(h, ..)| *h == g);
            let kind = match &self.module.types[self.module.global_variables[g].ty].inner {
                T::Struct { members, .. } => {
                    let mut v = vec![Ptr::Reg(0); members.len()];
                    for (_, m, p) in mine {
                        v[m.unwrap_or(0) as usize] = *p;
                    }
                    Global::Struct(v)
                }
                _ => Global::Alias(mine.map(|(.., p)| *p).next().unwrap_or(Ptr::Reg(0))),
            };
            self.globals.insert(g, kind);
        }
        Ok(())
    }

    /// Where `p` points in the location `l` declared for `c`, the first
    /// (widest) piece of its group of overlapping words: all of it (the
    /// same words, both arrays or both scalars; runtime-sized arrays reach
    /// what their constant indices reach), or one cell (a scalar inside
    /// an array). Any other overlap is refused, naming both.
    fn overlay(&mut self, c: &Piece, p: &Piece, l: u8) -> Res<Ptr> {
        let both = || {
            format!(
                "`{}` (words {}..{}) and `{}` (words {}..{})",
                c.shown,
                c.start,
                c.start + c.len,
                p.shown,
                p.start,
                p.start + p.len
            )
        };
        let at = self.module.global_variables.get_span(p.g);
        if p.kind != c.kind {
            let sign = |k| {
                if k == naga::ScalarKind::Sint {
                    "signed"
                } else {
                    "unsigned"
                }
            };
            return refuse(
                at,
                format!("{} of one buffer overlap as {} and {} integers: aliased views of one word are translated when they agree on signedness", both(), sign(c.kind), sign(p.kind)),
            );
        }
        let whole = p.start == c.start && p.array == c.array && (p.len == c.len || p.runtime);
        if whole {
            return Ok(self.loc_ptr(l));
        }
        if c.array && !p.array {
            let k = self.constant(i128::from(p.start - c.start))?;
            return Ok(Ptr::Mem(l, k));
        }
        refuse(
            at,
            format!("{} of one buffer overlap in part: aliased views are translated when they overlap in the same words, or one is an integer inside the other's array", both()),
        )
    }

    /// The pieces of the view `g`: one per member of a struct, or one.
    fn pieces_of(&self, g: Handle<naga::GlobalVariable>, out: &mut Vec<Piece>) -> Res<()> {
        let gv = &self.module.global_variables[g];
        let name = stmt::name_of(&gv.name).to_string();
        let anonymous = gv.name.as_deref().is_none_or(str::is_empty);
        let gv_span = self.module.global_variables.get_span(g);
        match &self.module.types[gv.ty].inner {
            T::Struct { members, .. } => {
                for (k, m) in members.iter().enumerate() {
                    let member = stmt::name_of(&m.name).to_string();
                    let full = if anonymous {
                        member.clone()
                    } else if members.len() == 1 {
                        name.clone()
                    } else {
                        format!("{name}_{member}")
                    };
                    if m.offset % 4 != 0 {
                        return refuse(gv_span, format!("`{member}` at byte {} of an aliased buffer: aliased views are translated in 32-bit words", m.offset));
                    }
                    out.push(self.piece(g, Some(k as u32), full, member, m.ty, m.offset / 4)?);
                }
            }
            _ => out.push(self.piece(g, None, name.clone(), name, gv.ty, 0)?),
        }
        Ok(())
    }

    fn piece(
        &self,
        g: Handle<naga::GlobalVariable>,
        member: Option<u32>,
        name: String,
        shown: String,
        ty: Handle<naga::Type>,
        start: u32,
    ) -> Res<Piece> {
        let word = |t: &T| match t {
            T::Scalar(s) | T::Atomic(s)
                if s.width == 4
                    && matches!(s.kind, naga::ScalarKind::Uint | naga::ScalarKind::Sint) =>
            {
                Some((s.kind, matches!(t, T::Atomic(_))))
            }
            _ => None,
        };
        let at = self.module.global_variables.get_span(g);
        let inner = &self.module.types[ty].inner;
        let (len, array, runtime, (kind, atomic)) = match inner {
            t if word(t).is_some() => (1, false, false, word(t).unwrap_or((naga::ScalarKind::Uint, false))),
            T::Array { base, size, stride: 4 } if word(&self.module.types[*base].inner).is_some() => {
                let w = word(&self.module.types[*base].inner).unwrap_or((naga::ScalarKind::Uint, false));
                match size {
                    naga::ArraySize::Constant(n) => (n.get(), true, false, w),
                    naga::ArraySize::Dynamic => (self.runtime_len((g, member), &shown)? as u32, true, true, w),
                    naga::ArraySize::Pending(_) => {
                        return refuse(at, format!("`{shown}`: an array sized by a pipeline-overridable constant; declare a fixed size"))
                    }
                }
            }
            T::Array { base, stride, .. } if word(&self.module.types[*base].inner).is_some() => {
                return refuse(
                    at,
                    format!("`{shown}`: an array whose elements are {stride} bytes apart (std140 pads them to 16), in a buffer bound with another (aliased): aliased views are translated in 32-bit words; declare the block std430"),
                )
            }
            _ => {
                return refuse(
                    at,
                    format!("`{shown}` of type {}, in a buffer bound with another (aliased): aliased views are translated when each member is a 32-bit integer, an atomic one, or an array of them", self.type_name(ty)),
                )
            }
        };
        Ok(Piece {
            g,
            member,
            name,
            shown,
            ty,
            start,
            len,
            array,
            runtime,
            kind,
            atomic,
        })
    }
}
