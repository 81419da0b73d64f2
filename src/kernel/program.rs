//! Kernel programs: workgroups of invocations running goto code with
//! registers, atomics, barriers and subgroup collectives (docs/KERNEL.md §1).
//!
//! Every instruction is one atomic step of one invocation (or, in lockstep,
//! of one subgroup). The instruction set is what a GPU backend can lower one
//! for one: register arithmetic, compare-and-branch, atomic read-modify-write
//! (optionally with its result compared and branched on in the same step, as
//! AXB does), workgroup barrier, subgroup collectives.
//!
//! The program type keeps the names a person wrote (locations, registers,
//! labels), so that the litmus printer gives back the text it was parsed
//! from (see [`crate::kernel::litmus`]).

use crate::axb::test::Target;
pub use crate::kernel::cmp::Cmp;
use crate::kernel::model::{Direct, Mode, ScopedModel};
pub use crate::kernel::structure::Construct;
use crate::kernel::structure::Flow;
use serde::{Deserialize, Serialize};
use std::fmt;

/// At most this many workgroups (a device-scope fair set is one byte).
pub const MAX_WORKGROUPS: usize = 8;
/// At most this many invocations per workgroup in a program: the limit
/// of the APIs (Vulkan's guaranteed `maxComputeWorkGroupInvocations`,
/// WebGPU's `maxComputeInvocationsPerWorkgroup` is 256, CUDA's 1024).
pub const MAX_LAUNCH_WG_SIZE: usize = 1024;
/// At most this many invocations per workgroup in the explicit product,
/// which keeps every invocation's pc and registers in a packed state
/// (docs/KERNEL.md §4.1); larger workgroups are decided by the counted
/// product (§8.10).
pub const MAX_WG_SIZE: usize = 8;
/// At most this many invocations in all in the explicit product.
pub const MAX_INVOCATIONS: usize = 16;
/// Lockstep subgroups execute their lanes' atomics in every order; this
/// bounds the orders (4! = 24).
pub const MAX_LOCKSTEP_SUBGROUP: usize = 4;
/// At most this many instructions per code block (pcs 0..=63, END = len).
pub const MAX_CODE_LEN: usize = 63;
/// At most this many registers per code block.
pub const MAX_REGS: usize = 8;
/// At most this many code blocks.
pub const MAX_CODES: usize = 8;
/// At most this many declared locations.
pub const MAX_LOCATIONS: usize = 16;
/// At most this many memory cells in all (shared cells count once per
/// workgroup).
pub const MAX_CELLS: usize = 64;
/// The largest value domain: values are `0..V`, `V = 2^b`, `b <= 8`.
pub const MAX_VALUES: u16 = 256;
/// At most this many characters in a name (location, register, label).
pub const MAX_NAME_LEN: usize = 64;

/// A kernel program: the launch shape, the memory, the code, and optionally
/// the model to check it under and the verdicts the literature states.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename = "Kernel")]
pub struct Program {
    /// The value domain: integers modulo `values` (a power of two, 2..=256).
    pub values: u16,
    /// Number of workgroups.
    pub workgroups: u8,
    /// Invocations per workgroup (up to [`MAX_LAUNCH_WG_SIZE`]; the
    /// explicit product takes up to [`MAX_WG_SIZE`]).
    pub workgroup_size: u16,
    /// Invocations per subgroup (divides `workgroup_size`).
    pub subgroup_size: u8,
    /// Memory locations, global (one copy) or shared (one copy per workgroup).
    #[serde(default, deserialize_with = "bounded::locations")]
    pub locations: Vec<Location>,
    /// Code blocks; every invocation of a workgroup runs its workgroup's block.
    #[serde(deserialize_with = "bounded::codes")]
    pub codes: Vec<Code>,
    /// The code block of each workgroup.
    #[serde(deserialize_with = "bounded::wg_code")]
    pub wg_code: Vec<u8>,
    /// The model the program is meant to be checked under, if the file says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ScopedModel>,
    /// Verdicts stated for the program (from the literature), checked by tests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expectation>,
    /// Outcome assertions over the final states (docs/KERNEL.md §5.4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asserts: Vec<crate::kernel::assert::Assertion>,
    /// `subgroups hardware;`, written by the translation of a shader with
    /// subgroups of two or more without `--subgroup-scheduling fair`: a
    /// model's fair scheduling inside subgroups stands for what GPUs do
    /// there, lockstep with reconvergence at the immediate post-dominator
    /// or independent fair scheduling, so a verdict is P only where it is
    /// P under both (docs/KERNEL.md §10.6). `.litmus` programs: false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hardware_subgroups: bool,
    /// `collectives tangled;`, written by the translation of a shader
    /// with subgroup operations: with interleaved lanes (every scope but
    /// lockstep and the four SIMT-Step models) a subgroup operation is
    /// executed by the lanes of its dynamic block, as under
    /// `subgroup=sso`, not by a rendezvous of the whole subgroup
    /// (docs/KERNEL.md §2.5, §10.6). `.litmus` programs: false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tangled_collectives: bool,
}

/// A memory location: a scalar or an array of cells.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Location {
    pub name: String,
    /// One copy per workgroup (`shared`) or one for the device (`global`).
    #[serde(default)]
    pub shared: bool,
    /// Declared with `[len]` (an array, even of one cell) or as a scalar.
    #[serde(default)]
    pub array: bool,
    /// Initial value of each cell; its length is the number of cells.
    #[serde(deserialize_with = "bounded::cells")]
    pub init: Vec<u8>,
}

impl Location {
    pub fn len(&self) -> usize {
        self.init.len()
    }

    pub fn is_empty(&self) -> bool {
        self.init.is_empty()
    }
}

/// One code block: registers, instructions, and labels for people.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Code {
    /// Register names; register `r` of an instruction is `regs[r]`.
    #[serde(default, deserialize_with = "bounded::regs")]
    pub regs: Vec<String>,
    #[serde(deserialize_with = "bounded::instrs")]
    pub instrs: Vec<Instr>,
    /// A label name per instruction (same length as `instrs`), if any.
    #[serde(default, deserialize_with = "bounded::labels")]
    pub labels: Vec<Option<String>>,
    /// The structured constructs of the block (selections and loops with
    /// their merge points, docs/KERNEL.md §2.8), in order of their headers;
    /// empty for plain goto code.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "bounded::constructs"
    )]
    pub constructs: Vec<Construct>,
    /// Where each instruction is in its source, for error messages (the
    /// litmus parser fills it; empty for other sources). Not part of the
    /// program: never serialised, ignored by `==` and hashing.
    #[serde(skip)]
    pub at: Positions,
}

/// The line and column of each instruction of a code block in its source
/// (empty when unknown). Any two compare equal, so that a program read
/// from different texts is still the same program.
#[derive(Clone, Debug, Default)]
pub struct Positions(pub Vec<(usize, usize)>);

impl PartialEq for Positions {
    fn eq(&self, _: &Positions) -> bool {
        true
    }
}

impl Eq for Positions {}

impl std::hash::Hash for Positions {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl Code {
    /// How a message names the instruction at `pc`: its `line:col` when the
    /// source is known, `END` past the last, else `instruction N`.
    pub fn place(&self, pc: usize) -> String {
        match self.at.0.get(pc) {
            _ if pc >= self.instrs.len() => "END".into(),
            Some((l, c)) => format!("{l}:{c}"),
            None => format!("instruction {pc}"),
        }
    }

    /// The control flow the structure analysis reads (docs/KERNEL.md
    /// §2.8): successors, conditional branch targets, goto targets.
    pub fn flow(&self) -> Flow {
        let len = self.instrs.len();
        let cond = |i: &Instr| match *i {
            Instr::Branch { target, .. } | Instr::Choose { target, .. } => Some(target.pc(len)),
            Instr::Atomic {
                branch: Some(b), ..
            } => Some(b.target.pc(len)),
            _ => None,
        };
        Flow {
            succ: (0..len)
                .map(|pc| match self.instrs[pc] {
                    Instr::Goto { target } => vec![target.pc(len)],
                    ref i => match cond(i) {
                        Some(t) if t != pc + 1 => vec![pc + 1, t],
                        _ => vec![pc + 1],
                    },
                })
                .collect(),
            cond: self.instrs.iter().map(cond).collect(),
            goto: self
                .instrs
                .iter()
                .map(|i| match *i {
                    Instr::Goto { target } => Some(target.pc(len)),
                    _ => None,
                })
                .collect(),
        }
    }
}

/// Deserializers of the lists of a program that have a count bound: a
/// list is refused at its first element too many, while it is read, so a
/// RON error is at the excess and no input makes the reader hold more than
/// the bound (issue 20 item 8: 100,000 locations were all read, then
/// refused at the end of the document).
mod bounded {
    use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};
    use std::fmt;
    use std::marker::PhantomData;

    struct Bounded<T> {
        max: usize,
        what: &'static str,
        item: PhantomData<T>,
    }

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Bounded<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "a list of at most {} {}", self.max, self.what)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut v = Vec::new();
            while let Some(x) = seq.next_element()? {
                if v.len() == self.max {
                    let max = self.max;
                    return Err(A::Error::custom(format!(
                        "more than {max} {}: at most {max} are supported",
                        self.what
                    )));
                }
                v.push(x);
            }
            Ok(v)
        }
    }

    fn seq<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
        max: usize,
        what: &'static str,
    ) -> Result<Vec<T>, D::Error> {
        d.deserialize_seq(Bounded {
            max,
            what,
            item: PhantomData,
        })
    }

    macro_rules! bounded {
        ($($name:ident: $t:ty, $max:expr, $what:literal;)*) => {$(
            pub fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<$t>, D::Error> {
                seq(d, $max, $what)
            }
        )*};
    }

    bounded! {
        locations: super::Location, super::MAX_LOCATIONS, "memory locations";
        codes: super::Code, super::MAX_CODES, "code blocks";
        wg_code: u8, super::MAX_WORKGROUPS, "workgroups";
        cells: u8, super::MAX_CELLS, "cells in a location";
        regs: String, super::MAX_REGS, "registers in a block";
        instrs: super::Instr, super::MAX_CODE_LEN, "instructions in a block";
        labels: Option<String>, super::MAX_CODE_LEN, "labels in a block";
        constructs: super::Construct, 2 * super::MAX_CODE_LEN, "constructs in a block";
    }
}

/// A value operand: a register, a constant of the domain, or an id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    Reg(u8),
    Imm(u16),
    Id(IdKind),
}

/// The ids an invocation can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IdKind {
    /// The workgroup's id, `0..workgroups`.
    WgId,
    /// The invocation's id within its workgroup, `0..workgroup_size`.
    LocalId,
    /// The subgroup's id within the workgroup, `local_id / subgroup_size`.
    SubgroupId,
    /// The invocation's id within its subgroup, `local_id % subgroup_size`.
    LaneId,
}

impl IdKind {
    pub const ALL: [IdKind; 4] = [
        IdKind::WgId,
        IdKind::LocalId,
        IdKind::SubgroupId,
        IdKind::LaneId,
    ];

    pub fn name(self) -> &'static str {
        match self {
            IdKind::WgId => "wg_id",
            IdKind::LocalId => "local_id",
            IdKind::SubgroupId => "subgroup_id",
            IdKind::LaneId => "lane_id",
        }
    }
}

/// A memory address: a location and a cell index in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Addr {
    pub loc: u8,
    pub index: Operand,
}

/// Register arithmetic, modulo the domain; comparisons give 0 or 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Cmp(Cmp),
}

impl BinOp {
    pub const ARITH: [BinOp; 8] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Shl,
        BinOp::Shr,
    ];

    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Cmp(c) => c.symbol(),
        }
    }

    /// `a op b` modulo `values` (a power of two). Shifts by `bits` or more
    /// give 0.
    pub fn eval(self, a: u16, b: u16, values: u16) -> u16 {
        let mask = (values as u32) - 1;
        let (a32, b32) = (a as u32, b as u32);
        let bits = values.trailing_zeros();
        let r = match self {
            BinOp::Add => a32.wrapping_add(b32),
            BinOp::Sub => a32.wrapping_sub(b32),
            BinOp::Mul => a32.wrapping_mul(b32),
            BinOp::And => a32 & b32,
            BinOp::Or => a32 | b32,
            BinOp::Xor => a32 ^ b32,
            BinOp::Shl => {
                if b32 >= bits {
                    0
                } else {
                    a32 << b32
                }
            }
            BinOp::Shr => {
                if b32 >= bits {
                    0
                } else {
                    a32 >> b32
                }
            }
            BinOp::Cmp(c) => c.eval(a, b) as u32,
        };
        (r & mask) as u16
    }
}

/// The read-modify-write operations of `fetch_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RmwOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Min,
    Max,
}

impl RmwOp {
    pub const ALL: [RmwOp; 7] = [
        RmwOp::Add,
        RmwOp::Sub,
        RmwOp::And,
        RmwOp::Or,
        RmwOp::Xor,
        RmwOp::Min,
        RmwOp::Max,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RmwOp::Add => "fetch_add",
            RmwOp::Sub => "fetch_sub",
            RmwOp::And => "fetch_and",
            RmwOp::Or => "fetch_or",
            RmwOp::Xor => "fetch_xor",
            RmwOp::Min => "fetch_min",
            RmwOp::Max => "fetch_max",
        }
    }

    /// The new value of the cell, modulo `values`.
    pub fn apply(self, old: u16, v: u16, values: u16) -> u16 {
        match self {
            RmwOp::Add => BinOp::Add.eval(old, v, values),
            RmwOp::Sub => BinOp::Sub.eval(old, v, values),
            RmwOp::And => old & v,
            RmwOp::Or => old | v,
            RmwOp::Xor => old ^ v,
            RmwOp::Min => old.min(v),
            RmwOp::Max => old.max(v),
        }
    }
}

/// What an atomic instruction does to its cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AtomicOp {
    /// Reads the cell.
    Load,
    /// Writes the operand; returns nothing.
    Store(Operand),
    /// Writes the operand, returns the old value.
    Exchange(Operand),
    /// If the cell equals the first operand, writes the second; returns the
    /// old value either way.
    CompareExchange(Operand, Operand),
    /// Writes `old op v`, returns the old value.
    Fetch(RmwOp, Operand),
}

/// `if (old cmp rhs) goto target`, fused into an atomic instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CondBranch {
    pub cmp: Cmp,
    pub rhs: Operand,
    pub target: Target,
}

/// Subgroup collectives: a value from every participating lane, one result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CollectiveOp {
    /// 1 if the operand is non-zero in every participating lane, else 0.
    All,
    /// 1 if the operand is non-zero in some participating lane, else 0.
    Any,
    /// The operand of the participating lane with the lowest lane id.
    BroadcastFirst,
}

impl CollectiveOp {
    pub const ALL: [CollectiveOp; 3] = [
        CollectiveOp::All,
        CollectiveOp::Any,
        CollectiveOp::BroadcastFirst,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CollectiveOp::All => "subgroupAll",
            CollectiveOp::Any => "subgroupAny",
            CollectiveOp::BroadcastFirst => "subgroupBroadcastFirst",
        }
    }
}

/// One instruction: one atomic step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Instr {
    /// `dst = a` (when `op` is `None`) or `dst = a op b`.
    Assign {
        dst: u8,
        op: Option<BinOp>,
        a: Operand,
        b: Operand,
    },
    /// An atomic access to one memory cell; the old value goes to `dst`, or
    /// is compared and branched on (`branch`), or is dropped.
    Atomic {
        op: AtomicOp,
        addr: Addr,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dst: Option<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<CondBranch>,
    },
    /// `if (a cmp b) goto target` on registers, constants and ids.
    Branch {
        a: Operand,
        cmp: Cmp,
        b: Operand,
        target: Target,
    },
    /// `goto target`.
    Goto { target: Target },
    /// `choose goto target` (`choose finitely goto target`): goes to
    /// `target` or to the next instruction, either, chosen by nobody in
    /// the program (docs/KERNEL.md §2.11). With `finite`, a run takes
    /// the jump only finitely often: what a weak compare-exchange's
    /// spurious failure is assumed to do.
    Choose {
        target: Target,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        finite: bool,
    },
    /// Workgroup barrier: waits until every invocation of the workgroup has
    /// arrived at this same instruction.
    Barrier,
    /// A subgroup collective into `dst`.
    Collective {
        op: CollectiveOp,
        dst: u8,
        src: Operand,
    },
}

impl Instr {
    /// Whether the instruction touches nothing but the invocation's own
    /// registers and pc (no memory, no barrier, no collective).
    pub fn is_local(&self) -> bool {
        matches!(
            self,
            Instr::Assign { .. } | Instr::Branch { .. } | Instr::Goto { .. } | Instr::Choose { .. }
        )
    }

    /// The branch target, if the instruction can jump.
    pub fn target(&self) -> Option<Target> {
        match *self {
            Instr::Atomic {
                branch: Some(b), ..
            } => Some(b.target),
            Instr::Branch { target, .. }
            | Instr::Goto { target }
            | Instr::Choose { target, .. } => Some(target),
            _ => None,
        }
    }

    fn target_mut(&mut self) -> Option<&mut Target> {
        match self {
            Instr::Atomic {
                branch: Some(b), ..
            } => Some(&mut b.target),
            Instr::Branch { target, .. }
            | Instr::Goto { target }
            | Instr::Choose { target, .. } => Some(target),
            _ => None,
        }
    }

    /// Every operand the instruction reads.
    pub fn operands(&self) -> Vec<Operand> {
        let mut v = Vec::new();
        match *self {
            Instr::Assign { op, a, b, .. } => {
                v.push(a);
                if op.is_some() {
                    v.push(b);
                }
            }
            Instr::Atomic {
                op, addr, branch, ..
            } => {
                v.push(addr.index);
                match op {
                    AtomicOp::Load => {}
                    AtomicOp::Store(x) | AtomicOp::Exchange(x) | AtomicOp::Fetch(_, x) => v.push(x),
                    AtomicOp::CompareExchange(e, d) => {
                        v.push(e);
                        v.push(d);
                    }
                }
                if let Some(b) = branch {
                    v.push(b.rhs);
                }
            }
            Instr::Branch { a, b, .. } => {
                v.push(a);
                v.push(b);
            }
            Instr::Goto { .. } | Instr::Choose { .. } | Instr::Barrier => {}
            Instr::Collective { src, .. } => v.push(src),
        }
        v
    }

    /// The register the instruction writes, if any.
    pub fn dst(&self) -> Option<u8> {
        match *self {
            Instr::Assign { dst, .. } | Instr::Collective { dst, .. } => Some(dst),
            Instr::Atomic { dst, .. } => dst,
            _ => None,
        }
    }
}

/// A verdict the literature states for the program under a model.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Expectation {
    pub model: ScopedModel,
    pub outcome: Outcome,
}

/// What is expected: termination guaranteed, not guaranteed, or not
/// guaranteed because some schedule deadlocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Outcome {
    P,
    F,
    Deadlock,
}

impl Outcome {
    pub fn word(self) -> &'static str {
        match self {
            Outcome::P => "P",
            Outcome::F => "F",
            Outcome::Deadlock => "deadlock",
        }
    }
}

/// Where a problem is in a program: a code block and instruction, or a
/// location, or the program as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    Program,
    Location(usize),
    Code(usize),
    Instr {
        code: usize,
        pc: usize,
    },
    Expect(usize),
    Model,
    /// An outcome assertion (`exists` or `forall`).
    Assert(usize),
}

/// Why a program is not well formed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidProgram {
    pub site: Site,
    pub msg: String,
}

impl fmt::Display for InvalidProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.site {
            Site::Program | Site::Model => f.write_str(&self.msg),
            Site::Location(l) => write!(f, "location {l}: {}", self.msg),
            Site::Code(c) => write!(f, "code block {c}: {}", self.msg),
            Site::Instr { code, pc } => {
                write!(f, "code block {code} instruction {pc}: {}", self.msg)
            }
            Site::Expect(e) => write!(f, "expectation {e}: {}", self.msg),
            Site::Assert(a) => write!(f, "assertion {a}: {}", self.msg),
        }
    }
}

impl std::error::Error for InvalidProgram {}

/// Words that cannot name a location, register or label.
pub const KEYWORDS: &[&str] = &[
    "values",
    "workgroups",
    "workgroup_size",
    "subgroup_size",
    "global",
    "shared",
    "model",
    "expect",
    "kernel",
    "workgroup",
    "reg",
    "if",
    "goto",
    "END",
    "barrier",
    "load",
    "exch",
    "Exch",
    "cas",
    "fetch_add",
    "fetch_sub",
    "fetch_and",
    "fetch_or",
    "fetch_xor",
    "fetch_min",
    "fetch_max",
    "subgroupAll",
    "subgroupAny",
    "subgroupBroadcastFirst",
    "wg_id",
    "local_id",
    "subgroup_id",
    "lane_id",
];

/// Whether `s` is an identifier that may name a location, register or label.
pub fn is_name(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&s)
        && s.len() <= MAX_NAME_LEN
}

fn err(site: Site, msg: impl Into<String>) -> InvalidProgram {
    InvalidProgram {
        site,
        msg: msg.into(),
    }
}

impl Program {
    /// Total invocations.
    pub fn num_invocations(&self) -> usize {
        self.workgroups as usize * self.workgroup_size as usize
    }

    /// Subgroups per workgroup.
    pub fn subgroups_per_wg(&self) -> usize {
        (self.workgroup_size / u16::from(self.subgroup_size.max(1))) as usize
    }

    /// Whether some code block has a subgroup operation.
    pub fn has_collectives(&self) -> bool {
        (self.codes.iter()).any(|c| {
            c.instrs
                .iter()
                .any(|i| matches!(i, Instr::Collective { .. }))
        })
    }

    /// Whether a shader's subgroup operations are tangled
    /// ([`Program::tangled_collectives`]): it has some (SSO's machine runs
    /// them, a `choose` included: a lane's own branch).
    pub fn tangles(&self) -> bool {
        self.has_collectives()
    }

    /// The mode a machine for this program runs its lanes in, given the
    /// one its subgroup scope names (`named`): that one, but SSO's
    /// subgroup operations where the collectives are tangled
    /// ([`Program::tangled_collectives`]) and the lanes interleaved.
    pub fn mode_for(&self, named: Mode) -> Mode {
        if named == Mode::Interleaved && self.tangled_collectives && self.has_collectives() {
            return Mode::Simt(Direct::Sso);
        }
        named
    }

    /// Bits per value (`values = 2^bits`).
    pub fn value_bits(&self) -> u32 {
        self.values.trailing_zeros()
    }

    /// The code block of workgroup `w`.
    pub fn code_of(&self, w: usize) -> &Code {
        &self.codes[self.wg_code[w] as usize]
    }

    /// Memory cells: global locations once, shared ones once per workgroup.
    pub fn num_cells(&self) -> usize {
        self.locations
            .iter()
            .map(|l| {
                if l.shared {
                    l.len() * self.workgroups as usize
                } else {
                    l.len()
                }
            })
            .sum()
    }

    /// The largest value an id takes in this launch.
    pub fn id_max(&self, id: IdKind) -> usize {
        match id {
            IdKind::WgId => self.workgroups as usize - 1,
            IdKind::LocalId => self.workgroup_size as usize - 1,
            IdKind::SubgroupId => self.subgroups_per_wg() - 1,
            IdKind::LaneId => self.subgroup_size as usize - 1,
        }
    }

    /// Whether any instruction of code block `c` reads `id`.
    pub fn reads_id(&self, c: usize, id: IdKind) -> bool {
        self.codes[c]
            .instrs
            .iter()
            .any(|i| i.operands().contains(&Operand::Id(id)))
    }

    /// Replaces jump targets equal to the block length by END, so equal
    /// programs compare equal.
    pub fn normalize(&mut self) {
        for code in &mut self.codes {
            let len = code.instrs.len();
            for i in &mut code.instrs {
                if let Some(t) = i.target_mut() {
                    *t = Target::from_pc(t.pc(len), len);
                }
            }
            for k in &mut code.constructs {
                k.set_merge(Target::from_pc(k.merge().pc(len), len));
            }
        }
    }

    /// Checks every rule of docs/KERNEL.md §1.3 (bounds, names, operands).
    pub fn validate(&self) -> Result<(), InvalidProgram> {
        self.validate_launch()?;
        self.validate_locations()?;
        self.validate_blocks()?;
        if let Some(m) = &self.model {
            m.validate().map_err(|e| err(Site::Model, e))?;
        }
        for (i, e) in self.expect.iter().enumerate() {
            e.model.validate().map_err(|m| err(Site::Expect(i), m))?;
        }
        Ok(())
    }

    /// The value domain and the launch shape.
    fn validate_launch(&self) -> Result<(), InvalidProgram> {
        let p = Site::Program;
        if !(2..=MAX_VALUES).contains(&self.values) || !self.values.is_power_of_two() {
            return Err(err(
                p,
                format!(
                    "values {}: the domain must be a power of two from 2 to {MAX_VALUES}",
                    self.values
                ),
            ));
        }
        let w = self.workgroups as usize;
        if w == 0 || w > MAX_WORKGROUPS {
            return Err(err(
                p,
                format!("{w} workgroups: from 1 to {MAX_WORKGROUPS} are supported"),
            ));
        }
        let n = self.workgroup_size as usize;
        if n == 0 || n > MAX_LAUNCH_WG_SIZE {
            return Err(err(
                p,
                format!("workgroup size {n}: from 1 to {MAX_LAUNCH_WG_SIZE} are supported"),
            ));
        }
        let s = self.subgroup_size as usize;
        if s == 0 || (n / s) * s != n {
            return Err(err(
                p,
                format!("subgroup size {s} must divide the workgroup size {n}"),
            ));
        }
        Ok(())
    }

    /// The locations: names, cells, initial values.
    fn validate_locations(&self) -> Result<(), InvalidProgram> {
        let p = Site::Program;
        if self.locations.len() > MAX_LOCATIONS {
            return Err(err(
                p,
                format!(
                    "{} locations: at most {MAX_LOCATIONS} are supported",
                    self.locations.len()
                ),
            ));
        }
        for (i, l) in self.locations.iter().enumerate() {
            let site = Site::Location(i);
            if !is_name(&l.name) {
                return Err(err(site, format!("`{}` is not a usable name", l.name)));
            }
            if self.locations[..i].iter().any(|m| m.name == l.name) {
                return Err(err(site, format!("`{}` is declared twice", l.name)));
            }
            if l.init.is_empty() || (!l.array && l.init.len() != 1) {
                return Err(err(
                    site,
                    format!("`{}` must have at least one cell", l.name),
                ));
            }
            if l.init.len() > MAX_CELLS {
                return Err(err(
                    site,
                    format!(
                        "`{}` has {} cells: at most {MAX_CELLS}",
                        l.name,
                        l.init.len()
                    ),
                ));
            }
            if let Some(v) = l.init.iter().find(|&&v| v as u16 >= self.values) {
                return Err(err(
                    site,
                    format!(
                        "initial value {v} of `{}` is outside the domain 0..{}",
                        l.name, self.values
                    ),
                ));
            }
        }
        if self.num_cells() > MAX_CELLS {
            return Err(err(
                p,
                format!(
                    "{} memory cells (shared locations count once per workgroup): at most {MAX_CELLS} are supported",
                    self.num_cells()
                ),
            ));
        }
        Ok(())
    }

    /// The code blocks and which workgroup runs which.
    fn validate_blocks(&self) -> Result<(), InvalidProgram> {
        let (p, w) = (Site::Program, self.workgroups as usize);
        if self.codes.is_empty() || self.codes.len() > MAX_CODES {
            return Err(err(
                p,
                format!(
                    "{} code blocks: from 1 to {MAX_CODES} are supported",
                    self.codes.len()
                ),
            ));
        }
        if self.wg_code.len() != w {
            return Err(err(
                p,
                format!(
                    "{} workgroups but code is given for {}",
                    w,
                    self.wg_code.len()
                ),
            ));
        }
        for (c, _) in self.codes.iter().enumerate() {
            if !self.wg_code.iter().any(|&k| k as usize == c) {
                return Err(err(Site::Code(c), "no workgroup runs this code"));
            }
        }
        if let Some(&k) = self
            .wg_code
            .iter()
            .find(|&&k| k as usize >= self.codes.len())
        {
            return Err(err(p, format!("code block {k} does not exist")));
        }
        for (c, code) in self.codes.iter().enumerate() {
            self.validate_code(c, code)?;
        }
        Ok(())
    }

    fn validate_code(&self, c: usize, code: &Code) -> Result<(), InvalidProgram> {
        let site = Site::Code(c);
        let len = code.instrs.len();
        if len > MAX_CODE_LEN {
            return Err(err(
                site,
                format!("{len} instructions: at most {MAX_CODE_LEN} are supported"),
            ));
        }
        if code.regs.len() > MAX_REGS {
            return Err(err(
                site,
                format!(
                    "{} registers: at most {MAX_REGS} are supported",
                    code.regs.len()
                ),
            ));
        }
        for (i, r) in code.regs.iter().enumerate() {
            if !is_name(r) {
                return Err(err(site, format!("`{r}` is not a usable register name")));
            }
            if code.regs[..i].contains(r) {
                return Err(err(site, format!("register `{r}` is declared twice")));
            }
            if self.locations.iter().any(|l| &l.name == r) {
                return Err(err(
                    site,
                    format!("register `{r}` has the name of a memory location"),
                ));
            }
        }
        if code.labels.len() != len {
            return Err(err(
                site,
                format!("{} labels for {len} instructions", code.labels.len()),
            ));
        }
        for (pc, l) in code.labels.iter().enumerate() {
            if let Some(l) = l {
                if !is_name(l) {
                    return Err(err(
                        Site::Instr { code: c, pc },
                        format!("`{l}` is not a usable label"),
                    ));
                }
                if code.labels[..pc].iter().flatten().any(|m| m == l) {
                    return Err(err(
                        Site::Instr { code: c, pc },
                        format!("label `{l}` is defined twice"),
                    ));
                }
            }
        }
        if !code.constructs.is_empty() {
            let at = |pc: usize| code.place(pc);
            crate::kernel::structure::analyse(&code.flow(), &code.constructs, &at)
                .map_err(|(pc, msg)| err(Site::Instr { code: c, pc }, msg))?;
        }
        self.validate_instrs(c, code)
    }

    /// Every instruction's operands, registers, target and access.
    fn validate_instrs(&self, c: usize, code: &Code) -> Result<(), InvalidProgram> {
        let len = code.instrs.len();
        let nregs = code.regs.len();
        for (pc, ins) in code.instrs.iter().enumerate() {
            let site = Site::Instr { code: c, pc };
            for o in ins.operands() {
                self.check_operand(site, o, nregs)?;
            }
            if let Some(d) = ins.dst() {
                if d as usize >= nregs {
                    return Err(err(site, format!("register {d} is not declared")));
                }
            }
            if let Some(Target::At(t)) = ins.target() {
                if t as usize > len {
                    return Err(err(site, format!("jump target {t} is past END ({len})")));
                }
            }
            match *ins {
                Instr::Atomic {
                    op,
                    addr,
                    dst,
                    branch,
                } => {
                    let Some(loc) = self.locations.get(addr.loc as usize) else {
                        return Err(err(site, format!("location {} does not exist", addr.loc)));
                    };
                    if let Operand::Imm(i) = addr.index {
                        if i as usize >= loc.len() {
                            return Err(err(
                                site,
                                format!(
                                    "index {i} is out of bounds: `{}` has {} cell{}",
                                    loc.name,
                                    loc.len(),
                                    if loc.len() == 1 { "" } else { "s" }
                                ),
                            ));
                        }
                    }
                    if !loc.array && addr.index != Operand::Imm(0) {
                        return Err(err(
                            site,
                            format!("`{}` is a scalar: it takes no index", loc.name),
                        ));
                    }
                    if matches!(op, AtomicOp::Store(_)) && (dst.is_some() || branch.is_some()) {
                        return Err(err(site, "a store returns no value"));
                    }
                    if dst.is_some() && branch.is_some() {
                        return Err(err(
                            site,
                            "an atomic either keeps its old value in a register or branches on it, not both",
                        ));
                    }
                }
                Instr::Assign { op: None, b, .. } if b != Operand::Imm(0) => {
                    return Err(err(site, "a copy has one operand (b must be 0)"));
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn check_operand(&self, site: Site, o: Operand, nregs: usize) -> Result<(), InvalidProgram> {
        match o {
            Operand::Reg(r) if r as usize >= nregs => {
                Err(err(site, format!("register {r} is not declared")))
            }
            Operand::Imm(v) if v >= self.values => Err(err(
                site,
                format!("value {v} is outside the domain 0..{}", self.values),
            )),
            Operand::Id(id) if self.id_max(id) >= self.values as usize => Err(err(
                site,
                format!(
                    "{} takes values up to {}, outside the domain 0..{}",
                    id.name(),
                    self.id_max(id),
                    self.values
                ),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_wraps_modulo_the_domain() {
        assert_eq!(BinOp::Add.eval(3, 1, 4), 0);
        assert_eq!(BinOp::Sub.eval(0, 1, 4), 3);
        assert_eq!(BinOp::Mul.eval(3, 3, 4), 1);
        assert_eq!(BinOp::Shl.eval(1, 2, 4), 0);
        assert_eq!(BinOp::Shl.eval(1, 1, 4), 2);
        assert_eq!(BinOp::Shr.eval(3, 5, 4), 0);
        assert_eq!(BinOp::Cmp(Cmp::Lt).eval(1, 2, 4), 1);
        assert_eq!(RmwOp::Add.apply(255, 1, 256), 0);
        assert_eq!(RmwOp::Sub.apply(0, 1, 256), 255);
        assert_eq!(RmwOp::Max.apply(2, 7, 8), 7);
        assert_eq!(RmwOp::Min.apply(2, 7, 8), 2);
        assert_eq!(RmwOp::Or.apply(1, 2, 4), 3);
    }

    #[test]
    fn names_exclude_keywords() {
        assert!(is_name("lock"));
        assert!(is_name("_x1"));
        assert!(!is_name("1x"));
        assert!(!is_name("barrier"));
        assert!(!is_name("END"));
        assert!(!is_name(""));
    }
}
