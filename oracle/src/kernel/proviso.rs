//! The cycle proviso of the reductions (docs/KERNEL.md §8.2): which steps
//! never go first, so that no cycle of a reduced product consists of
//! reduced states alone.
//!
//! A *cut* of a code block is a set of points every cycle of its control
//! flow passes through. Two kinds of point are used:
//!
//! - a *sync point*: a barrier or collective on a cycle. An invocation
//!   passes it only when some member's arrival completes it, so if
//!   completing arrivals there never go first, every cycle of the product
//!   on which someone passes it has a state where all moves are explored.
//!   Arrivals that wait still go first: the lanes of a spin loop around a
//!   collective arrive in one order, not in every order.
//! - a *loop head*: the target of a jump back (to an earlier pc or
//!   itself), for the loops whose every cycle does not pass a sync point;
//!   no step from it goes first.
//!
//! Every cycle holds a jump back (only those go to an earlier pc), and a
//! head is added for every jump back whose target reaches its source
//! avoiding the points already chosen, so a cycle avoiding every point
//! would have been cut at its own jump back's target.

use progress_litmus::axb::test::Target;
use progress_litmus::kernel::cfg;
use progress_litmus::kernel::program::{Code, Instr};

/// A code block's cut: `(heads, syncs)`, one bit a pc.
pub fn cut(code: &Code) -> (u64, u64) {
    let len = code.instrs.len();
    let succ: Vec<Vec<usize>> = (0..len).map(|pc| cfg::successors(code, pc)).collect();
    let syncs = (0..len)
        .filter(|&pc| {
            matches!(code.instrs[pc], Instr::Barrier | Instr::Collective { .. })
                && succ[pc].iter().any(|&n| reaches(&succ, n, pc, 0))
        })
        .fold(0u64, |m, pc| m | 1 << pc);
    let mut heads = 0u64;
    for (pc, ins) in code.instrs.iter().enumerate() {
        if let Some(Target::At(t)) = ins.target() {
            let t = t as usize;
            if t <= pc && reaches(&succ, t, pc, syncs | heads) {
                heads |= 1 << t;
            }
        }
    }
    (heads, syncs)
}

/// Whether `to` is reachable from `from` (a path of zero steps included)
/// through pcs outside `avoid` (`from` and `to` included).
fn reaches(succ: &[Vec<usize>], from: usize, to: usize, avoid: u64) -> bool {
    let len = succ.len();
    let mut seen = avoid;
    let mut stack = vec![from];
    while let Some(pc) = stack.pop() {
        if pc >= len || seen >> pc & 1 != 0 {
            continue;
        }
        if pc == to {
            return true;
        }
        seen |= 1 << pc;
        stack.extend(&succ[pc]);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use progress_litmus::kernel::litmus;

    fn cut_of(src: &str) -> (u64, u64) {
        let p = litmus::parse(src).unwrap();
        cut(&p.codes[0])
    }

    #[test]
    fn a_spin_loop_around_a_collective_is_cut_at_the_collective() {
        let (heads, syncs) = cut_of(
            "values 4;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal x;\nkernel {\nl:\n  v = x;\n  v = subgroupAll(v);\n  if (v == 0) goto l;\n}\n",
        );
        assert_eq!((heads, syncs), (0, 1 << 1));
    }

    #[test]
    fn a_loop_with_a_path_around_its_barrier_is_cut_at_its_head() {
        // The loop body may skip the barrier: the head is needed too.
        let (heads, syncs) = cut_of(
            "values 4;\nworkgroups 1;\nglobal x;\nkernel {\nl:\n  v = x;\n  if (v == 1) goto s;\n  barrier();\ns:\n  if (v == 0) goto l;\n}\n",
        );
        assert_eq!((heads, syncs), (1, 1 << 2));
        // A barrier on no cycle is no point; a plain spin loop its head.
        let (heads, syncs) = cut_of(
            "values 4;\nworkgroups 1;\nglobal x;\nkernel {\n  barrier();\nl:\n  v = x;\n  if (v == 0) goto l;\n}\n",
        );
        assert_eq!((heads, syncs), (1 << 1, 0));
    }
}
