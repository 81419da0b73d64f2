//! # Kernel programs: beyond AXB
//!
//! The language of real GPU idioms (docs/KERNEL.md): workgroups of
//! invocations (and subgroups), ids as values, registers with integer
//! arithmetic modulo a bounded domain, branches and jumps, atomic loads,
//! stores, exchanges, compare-exchanges and read-modify-writes, workgroup
//! barriers and subgroup collectives. Memory is sequentially consistent.
//!
//! - [`program`]: the program type and its validation;
//! - [`mod@assert`], [`observe`]: outcome assertions over final states and
//!   the terms they read;
//! - [`model`]: scoped progress models (their names and text form; the
//!   semantics is in the oracle);
//! - [`embed`]: AXB tests as kernel programs, losslessly;
//! - [`litmus`]: the hand-written text format, parser and printer;
//! - [`ron`]: the RON forms (a program, a suite of programs);
//! - [`mod@cfg`], [`machine`]: control flow and the packed-state semantics;
//! - [`independence`]: the memory cells an invocation may still write or
//!   access (the partial-order reduction of the oracle and of the value
//!   check);
//! - [`load`]: reading programs from files and directories;
//! - [`shader`]: WGSL, GLSL and SPIR-V compute shaders as kernel programs.

pub mod assert;
pub mod budget;
pub mod cfg;
pub mod cmp;
pub mod embed;
pub mod independence;
pub mod litmus;
pub mod load;
pub mod machine;
pub mod model;
pub mod observe;
pub mod program;
pub mod ron;
pub mod shader;
pub mod structure;

pub use model::{Sched, ScopedModel};
pub use program::{Outcome, Program};

#[cfg(test)]
mod tests {
    use super::litmus::lex::MAX_NUMBER;
    use super::machine::{MAX_PRODUCT_BITS, MAX_STATE_BITS};
    use super::program::*;
    use crate::io::DEFAULT_MAX_INPUT_BYTES;

    /// Issue 20 item 11: docs/KERNEL.md's input limits were not the ones
    /// enforced. Its §1.4 table names the constant of every bound: each
    /// number must be that constant's value, and every constant must be
    /// there, so the two cannot drift apart again.
    #[test]
    fn the_documented_bounds_are_the_enforced_ones() {
        let doc = include_str!("../../docs/KERNEL.md");
        let section = doc
            .split("### 1.4 Bounds")
            .nth(1)
            .and_then(|s| s.split("\n### ").next())
            .expect("docs/KERNEL.md has a section 1.4 Bounds");
        let constants: [(&str, u64); 17] = [
            ("MAX_WORKGROUPS", MAX_WORKGROUPS as u64),
            ("MAX_LAUNCH_WG_SIZE", MAX_LAUNCH_WG_SIZE as u64),
            ("MAX_WG_SIZE", MAX_WG_SIZE as u64),
            ("MAX_INVOCATIONS", MAX_INVOCATIONS as u64),
            ("MAX_LOCKSTEP_SUBGROUP", MAX_LOCKSTEP_SUBGROUP as u64),
            ("MAX_CODES", MAX_CODES as u64),
            ("MAX_CODE_LEN", MAX_CODE_LEN as u64),
            ("MAX_REGS", MAX_REGS as u64),
            ("MAX_LOCATIONS", MAX_LOCATIONS as u64),
            ("MAX_CELLS", MAX_CELLS as u64),
            ("MAX_VALUES", MAX_VALUES as u64),
            ("MAX_NAME_LEN", MAX_NAME_LEN as u64),
            ("MAX_NUMBER", MAX_NUMBER),
            ("MAX_STATE_BITS", MAX_STATE_BITS as u64),
            ("MAX_PRODUCT_BITS", MAX_PRODUCT_BITS as u64),
            ("RECURSION_LIMIT", super::ron::RECURSION_LIMIT as u64),
            ("DEFAULT_MAX_INPUT_BYTES", DEFAULT_MAX_INPUT_BYTES),
        ];
        let mut seen = Vec::new();
        for row in section.lines().filter(|l| l.starts_with("| ")) {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            if cells.len() < 4 || cells[1] == "bound" {
                continue;
            }
            let name = cells[3].trim_matches('`');
            let documented: u64 = cells[2]
                .replace(',', "")
                .parse()
                .unwrap_or_else(|_| panic!("not a number: {row}"));
            let (_, enforced) = constants
                .iter()
                .find(|(c, _)| *c == name)
                .unwrap_or_else(|| panic!("no such constant: {row}"));
            assert_eq!(documented, *enforced, "{row}");
            seen.push(name);
        }
        let missing: Vec<&str> = constants
            .iter()
            .map(|(c, _)| *c)
            .filter(|c| !seen.contains(c))
            .collect();
        assert!(missing.is_empty(), "not in the table: {missing:?}");
    }
}
