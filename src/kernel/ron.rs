//! RON forms of kernel programs (docs/KERNEL.md §6): a single program
//! `Kernel(values: 4, workgroups: 2, ...)`, and a suite of named programs
//! with their verdicts `KernelSuite(name: "...", tests: [...])`, the output
//! of `oracle label` for litmus inputs.
//!
//! Programs are validated while they are deserialized, so that an invalid
//! one is reported at its position in the file.

use crate::error::ParseError;
use crate::kernel::program::Program;
use crate::model::{Model, Verdict, Verdicts};
use ron::extensions::Extensions;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A program that passed [`Program::validate`] during deserialization.
#[derive(Deserialize)]
#[serde(try_from = "Program")]
struct Valid(Program);

impl TryFrom<Program> for Valid {
    type Error = String;
    fn try_from(mut p: Program) -> Result<Valid, String> {
        p.validate().map_err(|e| e.to_string())?;
        crate::kernel::observe::validate(&p).map_err(|(k, m)| format!("assertion {k}: {m}"))?;
        p.normalize();
        Ok(Valid(p))
    }
}

/// A named program of a suite, with its verdicts under the eleven flat
/// models when labelled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawEntry", into = "RawEntry")]
pub struct KernelEntry {
    pub name: String,
    pub program: Program,
    pub verdicts: Option<Verdicts>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename = "Entry")]
struct RawEntry {
    name: String,
    program: Program,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    verdicts: BTreeMap<String, Verdict>,
}

impl TryFrom<RawEntry> for KernelEntry {
    type Error = String;
    fn try_from(raw: RawEntry) -> Result<KernelEntry, String> {
        let Valid(program) =
            Valid::try_from(raw.program).map_err(|e| format!("program `{}`: {e}", raw.name))?;
        let verdicts = if raw.verdicts.is_empty() {
            None
        } else {
            let mut v = [Verdict::F; 11];
            let mut seen = [false; 11];
            for (k, val) in &raw.verdicts {
                let m = Model::parse(k).filter(|m| m.name() == k).ok_or_else(|| {
                    format!("program `{}`: unknown model `{k}` in verdicts", raw.name)
                })?;
                v[m.index()] = *val;
                seen[m.index()] = true;
            }
            if let Some(i) = seen.iter().position(|s| !s) {
                return Err(format!(
                    "program `{}`: verdicts lack model {}",
                    raw.name,
                    Model::ALL[i].name()
                ));
            }
            Some(Verdicts(v))
        };
        Ok(KernelEntry {
            name: raw.name,
            program,
            verdicts,
        })
    }
}

impl From<KernelEntry> for RawEntry {
    fn from(e: KernelEntry) -> RawEntry {
        RawEntry {
            name: e.name,
            program: e.program,
            verdicts: e
                .verdicts
                .map(|v| {
                    Model::ALL
                        .iter()
                        .map(|m| (m.name().to_string(), v.get(*m)))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// Named kernel programs, e.g. an idiom library with its verdicts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename = "KernelSuite")]
pub struct KernelSuite {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    pub tests: Vec<KernelEntry>,
}

/// A `ron` error at its position by the one line-end rule
/// ([`crate::locate::Position`]).
fn ron_error(src: &str, e: ron::error::SpannedError) -> ParseError {
    let (line, col) = crate::locate::from_ron(src, e.position.line, e.position.col);
    ParseError::new(line, col, crate::error::tidy_message(&e.code.to_string()))
}

/// How deep a RON kernel document may nest (a program nests 6 levels).
pub const RECURSION_LIMIT: usize = 64;

fn options() -> ron::Options {
    ron::Options::default()
        .with_default_extension(Extensions::empty())
        .with_recursion_limit(RECURSION_LIMIT)
}

/// Parses a RON program (`Kernel(...)`), validating it.
pub fn parse_program(src: &str) -> Result<Program, ParseError> {
    let v: Valid = options().from_str(src).map_err(|e| ron_error(src, e))?;
    Ok(v.0)
}

/// Parses a RON suite of programs (`KernelSuite(...)`).
pub fn parse_suite(src: &str) -> Result<KernelSuite, ParseError> {
    options().from_str(src).map_err(|e| ron_error(src, e))
}

fn pretty(depth: usize) -> ron::ser::PrettyConfig {
    ron::ser::PrettyConfig::new()
        .depth_limit(depth)
        .struct_names(true)
        .indentor("  ".to_string())
}

/// A program as RON.
pub fn program_to_ron(p: &Program) -> String {
    let mut s = ron::Options::default()
        .with_default_extension(Extensions::empty())
        .to_string_pretty(p, pretty(4))
        .expect("a program serializes");
    s.push('\n');
    s
}

/// A suite as RON.
pub fn suite_to_ron(s: &KernelSuite) -> String {
    let mut out = ron::Options::default()
        .with_default_extension(Extensions::empty())
        .to_string_pretty(s, pretty(5))
        .expect("a suite serializes");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::embed;
    use crate::kernel::litmus;

    const MP: &str = "values 4;
workgroups 2;
workgroup_size 2;
global flag;
shared wg_flag;
model OBE, subgroup=hsa;
expect OBE: P;

kernel {
  0: if (local_id != 0) goto 3;
  1: wg_flag = 1;
  2: goto END;
  3: r = wg_flag;
  4: if (r == 0) goto 3;
  5: barrier();
}
";

    /// Issue 20 item 8: a list past its bound is refused at its first
    /// element too many, as it is read, not after all of it.
    #[test]
    fn count_bounds_are_enforced_while_reading() {
        let head = "Kernel(values: 2, workgroups: 1, workgroup_size: 1, subgroup_size: 1, ";
        let locs: Vec<String> = (0..100_000)
            .map(|i| format!("(name: \"g{i}\", init: [0])"))
            .collect();
        let src = format!(
            "{head}locations: [{}], codes: [(instrs: [Barrier])], wg_code: [0])",
            locs.join(", ")
        );
        let e = parse_program(&src).unwrap_err();
        assert_eq!(
            e.msg,
            "more than 16 memory locations: at most 16 are supported"
        );
        let (g16, g17) = (src.find("\"g16\"").unwrap(), src.find("\"g17\"").unwrap());
        assert_eq!(e.line, 1);
        assert!(g16 < e.col && e.col <= g17, "{e}");

        let instrs = vec!["Barrier"; 300_000].join(", ");
        let src = format!("{head}codes: [(instrs: [{instrs}])], wg_code: [0])");
        let e = parse_program(&src).unwrap_err();
        assert_eq!(
            e.msg,
            "more than 63 instructions in a block: at most 63 are supported"
        );
        // After the 64th instruction (and its comma), by the 65th.
        let start_64th = head.len() + "codes: [(instrs: [".len() + 63 * "Barrier, ".len();
        let start_65th = start_64th + "Barrier, ".len();
        assert_eq!(e.line, 1);
        assert!(start_64th < e.col && e.col <= start_65th + 1, "{e}");
    }

    #[test]
    fn programs_round_trip_through_ron() {
        let p = litmus::parse(MP).unwrap();
        let s = program_to_ron(&p);
        assert_eq!(parse_program(&s).unwrap(), p, "{s}");
        for t in crate::axb::published::tests().unwrap().iter().take(40) {
            let p = embed::from_axb(&t.entry.test);
            assert_eq!(parse_program(&program_to_ron(&p)).unwrap(), p);
        }
    }

    #[test]
    fn suites_round_trip_and_invalid_programs_have_positions() {
        let p = litmus::parse(MP).unwrap();
        let suite = KernelSuite {
            name: "s".into(),
            note: String::new(),
            tests: vec![KernelEntry {
                name: "mp".into(),
                program: p.clone(),
                verdicts: Some(Verdicts([Verdict::P; 11])),
            }],
        };
        let s = suite_to_ron(&suite);
        assert_eq!(parse_suite(&s).unwrap(), suite, "{s}");
        let mut bad = p;
        bad.values = 3;
        let e = parse_program(&program_to_ron(&bad)).unwrap_err();
        assert!(e.msg.contains("power of two"), "{e}");
        assert!(e.line > 1);
    }
}
