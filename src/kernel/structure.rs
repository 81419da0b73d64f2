//! Structured control flow of a code block (docs/KERNEL.md §2.8): the
//! *scopes* its constructs make, nested intervals of pcs each with the pc
//! where the lanes that entered it reconverge (its end), and the rules a
//! block must keep to be executed by the SIMT-Step models (§2.9).
//!
//! A selection `header..merge` is one scope; a loop is two: the loop
//! `header..merge` and its body `header..merge - 1`, whose end is the
//! continue target (a `goto header`), so that every iteration is a scope
//! of its own, entered again by the back edge.

use crate::axb::test::Target;
use serde::{Deserialize, Serialize};

/// A structured construct (SPIR-V's `OpSelectionMerge` / `OpLoopMerge`):
/// where the lanes that entered it reconverge (docs/KERNEL.md §2.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Construct {
    /// The conditional branch at `header` selects one of two arms, which
    /// merge at `merge`: the region is `header..merge`.
    Selection { header: u8, merge: Target },
    /// A loop: its body `header..merge - 1` (one dynamic block per
    /// iteration, which merge at the continue target `merge - 1`, a `goto
    /// header`), and the whole loop `header..merge`, which merges at `merge`.
    Loop { header: u8, merge: Target },
}

impl Construct {
    /// The pc of the header.
    pub fn header(&self) -> usize {
        match *self {
            Construct::Selection { header, .. } | Construct::Loop { header, .. } => header as usize,
        }
    }

    /// The merge target.
    pub fn merge(&self) -> Target {
        match *self {
            Construct::Selection { merge, .. } | Construct::Loop { merge, .. } => merge,
        }
    }

    /// Sets the merge target.
    pub fn set_merge(&mut self, t: Target) {
        match self {
            Construct::Selection { merge, .. } | Construct::Loop { merge, .. } => *merge = t,
        }
    }
}

/// What the analysis reads of a block (`Code::flow`): per pc, its
/// successors (END is the block's length), its target if it is a
/// conditional branch, and its target if it is a `goto`.
#[derive(Clone, Debug, Default)]
pub struct Flow {
    pub succ: Vec<Vec<usize>>,
    pub cond: Vec<Option<usize>>,
    pub goto: Vec<Option<usize>>,
}

/// What a scope is part of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A whole loop: ends at the loop's merge.
    Loop,
    /// One iteration of a loop: ends at its continue target.
    Body,
    /// A selection: ends at its merge.
    Selection,
}

/// One scope: the pcs `start..end`, entered only at `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

/// The scopes of a block, outermost first, and which contain each pc.
#[derive(Clone, Debug, Default)]
pub struct Structure {
    pub scopes: Vec<Scope>,
    /// Per pc `0..=len`, the scopes containing it, outermost first.
    pub enclosing: Vec<Vec<usize>>,
    /// Per scope, its nesting depth (0: outermost).
    pub depth: Vec<usize>,
    /// The most scopes containing one pc.
    pub max_depth: usize,
    /// Per selection scope, per pc of its region: 0 on the not-taken arm,
    /// 1 on the taken arm, 2 the header, 3 on neither (unreachable).
    pub arm: Vec<Vec<u8>>,
}

/// How a message names the instruction at a pc (`Code::place`).
pub type Place<'a> = &'a dyn Fn(usize) -> String;

/// What a message calls a scope of this kind.
fn what(k: Kind) -> &'static str {
    match k {
        Kind::Selection => "selection",
        Kind::Loop | Kind::Body => "loop",
    }
}

/// Checks the constructs a block declares and computes its scopes; an
/// error names the pc of the construct at fault, and the message names
/// instructions as `at` does (`Code::place`: by their place in the source).
pub fn analyse(
    flow: &Flow,
    constructs: &[Construct],
    at: Place,
) -> Result<Structure, (usize, String)> {
    let len = flow.succ.len();
    let mut scopes = Vec::new();
    for k in constructs {
        scopes.extend(scopes_of(flow, k, at)?);
    }
    scopes.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end), s.kind));
    for (i, a) in scopes.iter().enumerate() {
        for b in &scopes[i + 1..] {
            if a == b {
                return Err((
                    a.start,
                    format!(
                        "two constructs at {} merge at the same point {}",
                        at(a.start),
                        at(a.end)
                    ),
                ));
            }
            if b.start < a.end && b.end > a.end {
                return Err((
                    b.start,
                    format!(
                        "the {} at {} overlaps the {} at {} without nesting in it",
                        what(b.kind),
                        at(b.start),
                        what(a.kind),
                        at(a.start)
                    ),
                ));
            }
        }
    }
    let enclosing: Vec<Vec<usize>> = (0..=len)
        .map(|pc| {
            (0..scopes.len())
                .filter(|&k| scopes[k].start <= pc && pc < scopes[k].end)
                .collect()
        })
        .collect();
    let depth = (0..scopes.len())
        .map(|k| {
            enclosing[scopes[k].start]
                .iter()
                .position(|&j| j == k)
                .unwrap_or(0)
        })
        .collect();
    let max_depth = enclosing.iter().map(Vec::len).max().unwrap_or(0);
    let arm = scopes
        .iter()
        .map(|s| arms(flow, s, at))
        .collect::<Result<_, _>>()?;
    Ok(Structure {
        scopes,
        enclosing,
        depth,
        max_depth,
        arm,
    })
}

/// The scopes of one construct, after checking its header and merge.
fn scopes_of(flow: &Flow, k: &Construct, at: Place) -> Result<Vec<Scope>, (usize, String)> {
    let len = flow.succ.len();
    let mut out = Vec::new();
    let (h, m) = (k.header(), k.merge().pc(len));
    let kind = match k {
        Construct::Selection { .. } => "selection",
        Construct::Loop { .. } => "loop",
    };
    if h >= len || m <= h || m > len {
        return Err((
            h.min(len),
            format!(
                "the {kind} at {} must merge after its header (its merge is {})",
                at(h),
                if m > len {
                    format!("instruction {m}")
                } else {
                    at(m)
                }
            ),
        ));
    }
    match k {
        Construct::Selection { .. } => {
            let Some(t) = flow.cond[h] else {
                return Err((
                    h,
                    "a selection merge must be on a conditional branch".into(),
                ));
            };
            if t <= h || t > m {
                return Err((
                    h,
                    format!(
                        "the branch at {} must jump inside its selection (forward, at most to its merge {}); it jumps to {}",
                        at(h),
                        at(m),
                        at(t)
                    ),
                ));
            }
            out.push(Scope {
                start: h,
                end: m,
                kind: Kind::Selection,
            });
        }
        Construct::Loop { .. } => {
            let c = m - 1;
            let back = flow.goto[c] == Some(h);
            if c <= h || !back {
                return Err((h, format!("the loop at {} must end with its back edge, a `goto` to its header, at {}, just before its merge", at(h), at(c))));
            }
            out.push(Scope {
                start: h,
                end: m,
                kind: Kind::Loop,
            });
            out.push(Scope {
                start: h,
                end: c,
                kind: Kind::Body,
            });
        }
    }
    Ok(out)
}

/// Which arm of a selection every pc of its region is on; the two arms
/// must not share an instruction.
fn arms(flow: &Flow, s: &Scope, at: Place) -> Result<Vec<u8>, (usize, String)> {
    let mut arm = vec![3u8; s.end - s.start];
    if s.kind != Kind::Selection {
        return Ok(arm);
    }
    arm[0] = 2;
    let target = flow.cond[s.start].unwrap_or(s.end);
    for (side, first) in [(0u8, s.start + 1), (1, target)] {
        let mut todo = vec![first];
        while let Some(pc) = todo.pop() {
            if pc <= s.start || pc >= s.end {
                continue;
            }
            let a = &mut arm[pc - s.start];
            if *a == side {
                continue;
            }
            if *a != 3 {
                return Err((
                    s.start,
                    format!(
                        "the two arms of the selection at {} share the instruction at {}",
                        at(s.start),
                        at(pc)
                    ),
                ));
            }
            *a = side;
            todo.extend(flow.succ[pc].iter().copied());
        }
    }
    Ok(arm)
}

/// The rules a block must keep for the SIMT-Step models (§2.9): every
/// conditional branch heads a selection, and every jump stays in its
/// scopes, enters a scope only at its start and leaves scopes only for
/// the end of the outermost one it leaves (or END); backward jumps are
/// loops' back edges. `who` names the model in the message.
pub fn require(flow: &Flow, st: &Structure, who: &str, at: Place) -> Result<(), (usize, String)> {
    let len = flow.succ.len();
    let headers: Vec<usize> = st
        .scopes
        .iter()
        .filter(|s| s.kind == Kind::Selection)
        .map(|s| s.start)
        .collect();
    for pc in 0..len {
        if flow.cond[pc].is_some() && !headers.contains(&pc) {
            return Err((pc, format!(
                "unstructured control flow: the conditional branch at {} declares no merge, and {who} {} (write `if (...) {{ ... }} else {{ ... }}` or `loop {{ ... }}`, or add `merge L` to the branch)",
                at(pc),
                if who.ends_with("sso") {
                    "finds the lanes of a subgroup operation from the merges"
                } else {
                    "reconverges lanes at merges"
                }
            )));
        }
        for &q in &flow.succ[pc] {
            edge(st, pc, q, len, at).map_err(|m| {
                (
                    pc,
                    format!("unstructured control flow: {m}, which {who} needs"),
                )
            })?;
        }
    }
    Ok(())
}

fn edge(st: &Structure, p: usize, q: usize, len: usize, at: Place) -> Result<(), String> {
    let (from, to) = (&st.enclosing[p], &st.enclosing[q.min(len)]);
    let exited: Vec<usize> = from.iter().copied().filter(|k| !to.contains(k)).collect();
    let entered: Vec<usize> = to.iter().copied().filter(|k| !from.contains(k)).collect();
    if let Some(&k) = entered.iter().find(|&&k| st.scopes[k].start != q) {
        let sc = st.scopes[k];
        return Err(format!(
            "the jump at {} to {} enters the {} at {} past its start",
            at(p),
            at(q),
            what(sc.kind),
            at(sc.start)
        ));
    }
    if let Some(&o) = exited.first() {
        let sc = st.scopes[o];
        if q != sc.end && q < len {
            return Err(format!(
                "the jump at {} to {} leaves the {} at {} for another point than its {} {}",
                at(p),
                at(q),
                what(sc.kind),
                at(sc.start),
                if sc.kind == Kind::Body {
                    "continue target"
                } else {
                    "merge"
                },
                at(sc.end)
            ));
        }
    } else if entered.is_empty() && q <= p {
        return Err(format!(
            "the jump at {} back to {} is not a loop's back edge",
            at(p),
            at(q)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::litmus;
    use crate::kernel::program::Code;

    fn code(body: &str) -> Code {
        let src = format!("values 4; workgroups 1; workgroup_size 2; subgroup_size 2; global m[2];\nkernel {{ {body} }}");
        litmus::parse(&src).unwrap().codes.remove(0)
    }

    #[test]
    fn an_if_else_in_a_loop_makes_three_nested_scopes() {
        let c = code("a = 0; loop { if (a == 0) { m[0] = 1; } else { m[1] = 1; } a = a + 1; if (a == 2) { break; } }");
        let at = |pc: usize| c.place(pc);
        let st = analyse(&c.flow(), &c.constructs, &at).unwrap();
        let kinds: Vec<Kind> = st.scopes.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            vec![Kind::Loop, Kind::Body, Kind::Selection, Kind::Selection]
        );
        assert_eq!(st.max_depth, 3);
        require(&c.flow(), &st, "subgroup=scf", &at).unwrap();
    }

    #[test]
    fn a_plain_branch_is_unstructured() {
        let c = code("if (local_id == 0) goto 2; m[0] = 1; m[1] = 1;");
        let at = |pc: usize| c.place(pc);
        let st = analyse(&c.flow(), &c.constructs, &at).unwrap();
        let (pc, msg) = require(&c.flow(), &st, "subgroup=scf", &at).unwrap_err();
        assert_eq!(pc, 0);
        assert!(msg.contains("declares no merge"), "{msg}");
        let src = "values 4; workgroups 1; global m[2]; kernel { a = 1; if (a == 1) goto 0 merge 2; m[0] = 1; }";
        let e = litmus::parse(src).unwrap_err();
        assert!(
            e.to_string().contains("must jump inside its selection"),
            "{e}"
        );
    }
}
