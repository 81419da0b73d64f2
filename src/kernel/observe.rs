//! What outcome assertions observe (docs/KERNEL.md §5.4): the terms of
//! [`super::assert`] resolved against a program, and the check that every
//! term of a program's assertions names something of it. Apart from the
//! assertion types so that `program` can hold assertions without the two
//! modules importing each other.

use super::assert::{Probe, Term};
use super::program::Program;

/// Resolves a term in `p`, or says why it names nothing.
pub fn resolve(this: &Term, p: &Program) -> Result<Probe, String> {
    if let Some(w) = this.workgroup {
        if w >= p.workgroups {
            return Err(format!(
                "`{this}`: workgroup {w} does not exist (workgroups {})",
                p.workgroups
            ));
        }
    }
    if let Some(l) = this.local {
        if u16::from(l) >= p.workgroup_size {
            return Err(format!(
                "`{this}`: invocation {l} does not exist (workgroup_size {})",
                p.workgroup_size
            ));
        }
    }
    if let Some(loc) = p.locations.iter().position(|l| l.name == this.name) {
        return resolve_location(this, p, loc);
    }
    let Some(w) = this.workgroup else {
        return Err(format!(
            "`{this}` names no memory location (a register is read as `wN:{}`)",
            this.name
        ));
    };
    if this.index.is_some() {
        return Err(format!("`{this}`: a register has no elements"));
    }
    let code = &p.codes[p.wg_code[w as usize] as usize];
    let Some(reg) = code.regs.iter().position(|r| *r == this.name) else {
        return Err(format!(
            "`{this}` names no location and no register of workgroup {w}'s code"
        ));
    };
    Ok(Probe::Reg {
        workgroup: w as usize,
        local: this.local.unwrap_or(0) as usize,
        reg,
    })
}

fn resolve_location(this: &Term, p: &Program, loc: usize) -> Result<Probe, String> {
    let l = &p.locations[loc];
    let copy = match (l.shared, this.workgroup) {
        (true, None) => {
            return Err(format!(
                "`{this}`: `{}` is shared: name a workgroup's copy (`w0:{}`)",
                l.name, l.name
            ))
        }
        (false, Some(_)) => {
            return Err(format!(
                "`{this}`: `{}` is global: it has no workgroup copies",
                l.name
            ))
        }
        (true, Some(w)) => w as usize,
        (false, None) => 0,
    };
    if this.local.is_some() {
        return Err(format!(
            "`{this}`: memory belongs to no invocation (drop `.{}`)",
            this.local.unwrap_or(0)
        ));
    }
    let element = match (l.array, this.index) {
        (true, None) => return Err(format!("`{this}`: `{}` is an array: name a cell", l.name)),
        (false, Some(_)) => return Err(format!("`{this}`: `{}` is not an array", l.name)),
        (true, Some(i)) if i as usize >= l.len() => {
            return Err(format!(
                "`{this}`: index {i} is out of bounds (`{}` has {} cells)",
                l.name,
                l.len()
            ))
        }
        (true, Some(i)) => i as usize,
        (false, None) => 0,
    };
    Ok(Probe::Mem {
        location: loc,
        copy,
        element,
    })
}

/// Checks that every term of every assertion names something of `p` and
/// every value is in its domain: the index of the first bad assertion and
/// why.
pub fn validate(p: &Program) -> Result<(), (usize, String)> {
    for (k, a) in p.asserts.iter().enumerate() {
        for atom in a.cond.atoms() {
            resolve(&atom.term, p).map_err(|m| (k, m))?;
            if atom.value >= p.values {
                return Err((
                    k,
                    format!(
                        "value {} is outside the domain 0..{}",
                        atom.value,
                        p.values - 1
                    ),
                ));
            }
        }
    }
    Ok(())
}
