//! SPIR-V in: naga's `spv-in` frontend (binary modules, `.spv`). SPIR-V has
//! no source text, so its errors name the file only.
//!
//! Before naga reads a module, [`prepare`] rewrites the few things
//! producers such as clspv and Slang emit that naga's reader does not take
//! and that carry no meaning under sequential consistency (docs/KERNEL.md
//! §10.2): non-semantic instructions (`NonSemantic.*` extended instruction
//! sets, such as clspv's reflection) are removed, the memory operands of
//! `OpLoad` and `OpStore` (alignment, and the Vulkan memory model's
//! availability and visibility) are dropped, specialization constants take
//! their default values (those of the `WorkgroupSize` built-in the
//! launch's workgroup size), a compute entry point without a `LocalSize`
//! gets the one its `WorkgroupSize` built-in states, and where clspv's
//! reflection says the push constants hold only the region group offset
//! (0 for one dispatch of the whole grid), loads of them are 0.

use crate::error::FileError;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Parses a SPIR-V binary into naga's IR (structured control flow is
/// recovered by naga). `workgroup_size` is the launch's, which a
/// specialization-constant workgroup size takes.
pub fn parse(
    path: &Path,
    bytes: &[u8],
    workgroup_size: Option<u8>,
) -> Result<naga::Module, FileError> {
    if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
        return Err(FileError::whole(
            path,
            "SPIR-V: not a SPIR-V binary (its length is not a multiple of 4 words of header)",
        ));
    }
    let mut words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    // A module in the other byte order is turned around, so that the
    // checks below see it too; one that is not SPIR-V at all goes to naga
    // as it is (its error names it).
    if words[0] == MAGIC.swap_bytes() {
        words.iter_mut().for_each(|w| *w = w.swap_bytes());
    }
    let prepared = if words[0] == MAGIC {
        check_structure(&words)
            .and_then(|()| check_array_lengths(&words, workgroup_size))
            .and_then(|()| scoped_atomics(&words).map(|_| ()))
            .and_then(|()| check_undef(&words))
            .map_err(|msg| FileError::whole(path, format!("SPIR-V: {msg}")))?;
        Some(prepare(&words, workgroup_size).unwrap_or(words))
    } else {
        None
    };
    let bytes: Vec<u8> = match prepared {
        Some(w) => w.iter().flat_map(|w| w.to_le_bytes()).collect(),
        None => bytes.to_vec(),
    };
    let options = naga::front::spv::Options::default();
    // naga's message may quote the module's own strings (an extension's
    // name), which may hold any byte: escaped, so that it stays one line.
    naga::front::spv::parse_u8_slice(&bytes, &options).map_err(|e| {
        let msg = crate::error::printable(&e.to_string());
        FileError::whole(path, format!("SPIR-V: {msg}"))
    })
}

const MAGIC: u32 = 0x0723_0203;

// Opcodes and operands of the SPIR-V specification used here.
const OP_NAME: u16 = 5;
const OP_EXT_INST_IMPORT: u16 = 11;
const OP_EXT_INST: u16 = 12;
const OP_ENTRY_POINT: u16 = 15;
const OP_EXECUTION_MODE: u16 = 16;
const OP_CONSTANT_TRUE: u16 = 41;
const OP_CONSTANT_FALSE: u16 = 42;
const OP_CONSTANT: u16 = 43;
const OP_CONSTANT_COMPOSITE: u16 = 44;
const OP_SPEC_CONSTANT_TRUE: u16 = 48;
const OP_SPEC_CONSTANT_FALSE: u16 = 49;
const OP_SPEC_CONSTANT: u16 = 50;
const OP_SPEC_CONSTANT_COMPOSITE: u16 = 51;
const OP_LOAD: u16 = 61;
const OP_STORE: u16 = 62;
const OP_DECORATE: u16 = 71;
const OP_CONSTANT_NULL: u16 = 46;
const OP_TYPE_ARRAY: u16 = 28;
const OP_FUNCTION: u16 = 54;
const OP_VARIABLE: u16 = 59;
const OP_ACCESS_CHAIN: u16 = 65;
const OP_IN_BOUNDS_ACCESS_CHAIN: u16 = 66;
const OP_COPY_OBJECT: u16 = 83;
const STORAGE_CLASS_PUSH_CONSTANT: u32 = 9;
/// clspv's `PushConstantRegionGroupOffset` (NonSemantic.ClspvReflection).
const CLSPV_PUSH_CONSTANT_REGION_GROUP_OFFSET: u32 = 20;
const DECORATION_SPEC_ID: u32 = 1;
const DECORATION_BUILT_IN: u32 = 11;
const BUILT_IN_WORKGROUP_SIZE: u32 = 25;
const EXECUTION_MODE_LOCAL_SIZE: u32 = 17;
const EXECUTION_MODE_LOCAL_SIZE_ID: u32 = 38;
const EXECUTION_MODEL_GL_COMPUTE: u32 = 5;

/// The instructions of a module: (start, word count, opcode) after the
/// five header words; `None` where a word count is 0 or runs past the end
/// (naga then reports the module as it is).
fn instructions(words: &[u32]) -> Option<Vec<(usize, usize, u16)>> {
    let mut out = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let n = (words[i] >> 16) as usize;
        if n == 0 || i + n > words.len() {
            return None;
        }
        out.push((i, n, (words[i] & 0xffff) as u16));
        i += n;
    }
    Some(out)
}

/// What the rewrite needs to know of the whole module.
#[derive(Default)]
struct Facts {
    /// Result ids of `NonSemantic.*` extended instruction sets.
    non_semantic: HashSet<u32>,
    /// Targets of `SpecId` decorations.
    spec_ids: HashSet<u32>,
    /// The constant composites decorated `BuiltIn WorkgroupSize`.
    workgroup_size: HashSet<u32>,
    /// Constituents of those composites: x, y, z by id.
    size_parts: HashMap<u32, usize>,
    /// Compute entry points, and those with a local size mode.
    compute: Vec<u32>,
    sized: HashSet<u32>,
    /// Push-constant variables and the access chains into them, where
    /// clspv's reflection says they hold only zero offsets.
    zero_push: HashSet<u32>,
}

/// The string of a literal-string operand.
fn string_at(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn facts(words: &[u32], ins: &[(usize, usize, u16)]) -> Facts {
    let mut f = Facts::default();
    for &(at, n, op) in ins {
        let w = &words[at..at + n];
        match op {
            OP_EXT_INST_IMPORT if n >= 3 && string_at(&w[2..]).starts_with("NonSemantic.") => {
                f.non_semantic.insert(w[1]);
            }
            OP_DECORATE if n >= 3 && w[2] == DECORATION_SPEC_ID => {
                f.spec_ids.insert(w[1]);
            }
            OP_DECORATE
                if n >= 4 && w[2] == DECORATION_BUILT_IN && w[3] == BUILT_IN_WORKGROUP_SIZE =>
            {
                f.workgroup_size.insert(w[1]);
            }
            OP_ENTRY_POINT if n >= 3 && w[1] == EXECUTION_MODEL_GL_COMPUTE => f.compute.push(w[2]),
            OP_EXECUTION_MODE
                if n >= 3
                    && (w[2] == EXECUTION_MODE_LOCAL_SIZE
                        || w[2] == EXECUTION_MODE_LOCAL_SIZE_ID) =>
            {
                f.sized.insert(w[1]);
            }
            _ => {}
        }
    }
    zero_pushes(words, ins, &mut f);
    for &(at, n, op) in ins {
        let w = &words[at..at + n];
        let composite = op == OP_SPEC_CONSTANT_COMPOSITE || op == OP_CONSTANT_COMPOSITE;
        if composite && n >= 3 && f.workgroup_size.contains(&w[2]) {
            for (k, &part) in w[3..].iter().enumerate() {
                f.size_parts.insert(part, k);
            }
        }
    }
    f
}

/// The push constants that are 0: where clspv's reflection (the module's
/// own account of its push constants) names only the region group offset,
/// which one dispatch of the whole grid sets to 0, every push-constant
/// variable and access chain into one.
fn zero_pushes(words: &[u32], ins: &[(usize, usize, u16)], f: &mut Facts) {
    let mut clspv = HashSet::new();
    let mut only_offsets = false;
    for &(at, n, op) in ins {
        let w = &words[at..at + n];
        if op == OP_EXT_INST_IMPORT
            && n >= 3
            && string_at(&w[2..]).starts_with("NonSemantic.ClspvReflection.")
        {
            clspv.insert(w[1]);
        }
        // Instructions 7 (a kernel argument in push constants) and 15 to
        // 20 (PushConstant*) describe push constants.
        if op == OP_EXT_INST && n >= 5 && clspv.contains(&w[3]) {
            match w[4] {
                CLSPV_PUSH_CONSTANT_REGION_GROUP_OFFSET => only_offsets = true,
                7 | 15..=19 => return,
                _ => {}
            }
        }
    }
    if !only_offsets {
        return;
    }
    for &(at, n, op) in ins {
        let w = &words[at..at + n];
        let push_var = op == OP_VARIABLE && n >= 4 && w[3] == STORAGE_CLASS_PUSH_CONSTANT;
        let chain = (op == OP_ACCESS_CHAIN || op == OP_IN_BOUNDS_ACCESS_CHAIN)
            && n >= 4
            && f.zero_push.contains(&w[3]);
        if push_var || chain {
            f.zero_push.insert(w[2]);
        }
    }
}

/// [`spec_size`] of a module's bytes, in either byte order.
pub fn spec_size_of(bytes: &[u8]) -> Option<(u32, Option<u32>)> {
    spec_size(&words_of(bytes))
}

/// A module's words, turned around where it is in the other byte order
/// (bytes past the last whole word are dropped).
fn words_of(bytes: &[u8]) -> Vec<u32> {
    let mut words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if words.first() == Some(&MAGIC.swap_bytes()) {
        words.iter_mut().for_each(|w| *w = w.swap_bytes());
    }
    words
}

/// Where a module's workgroup size (x) is a specialization constant: its
/// default value and its `SpecId` (if decorated). Looked for where the
/// size is given: the x constituent of the `WorkgroupSize` built-in, or
/// the x operand of a `LocalSizeId` execution mode. `None`: a literal (a
/// `LocalSize` mode, or ordinary constants), or a module this cannot read
/// (naga then reports it).
pub fn spec_size(words: &[u32]) -> Option<(u32, Option<u32>)> {
    if words.first() != Some(&MAGIC) {
        return None;
    }
    let ins = instructions(words)?;
    let f = facts(words, &ins);
    let mut x_ids: HashSet<u32> = f
        .size_parts
        .iter()
        .filter(|(_, &k)| k == 0)
        .map(|(&id, _)| id)
        .collect();
    let mut spec_id = HashMap::new();
    for &(at, n, op) in &ins {
        let w = &words[at..at + n];
        if op == OP_EXECUTION_MODE && n >= 4 && w[2] == EXECUTION_MODE_LOCAL_SIZE_ID {
            x_ids.insert(w[3]);
        }
        if op == OP_DECORATE && n >= 4 && w[2] == DECORATION_SPEC_ID {
            spec_id.insert(w[1], w[3]);
        }
    }
    ins.iter().find_map(|&(at, n, op)| {
        let w = &words[at..at + n];
        (op == OP_SPEC_CONSTANT && n == 4 && x_ids.contains(&w[2]))
            .then(|| (w[3], spec_id.get(&w[2]).copied()))
    })
}

/// The most structured control-flow constructs (`OpSelectionMerge`,
/// `OpLoopMerge`) a module may have. naga's reader nests a body per
/// construct and walks the nesting for every value it looks up, and its
/// validator recurses through the nesting: 200,000 nested selections
/// (10 MB) ran for minutes. Far more than a shader the kernel language
/// can hold (63 instructions a block) has.
pub const MAX_CONSTRUCTS: usize = 1024;
/// The most instructions a module may have: naga's readers take time
/// quadratic in a function's expressions (`shape::MAX_TOKENS`); the
/// peers' modules have a few hundred.
pub const MAX_INSTRUCTIONS: usize = 32_768;

/// Refuses a module with more than [`MAX_INSTRUCTIONS`] instructions,
/// [`MAX_CONSTRUCTS`] structured constructs or
/// [`super::shape::MAX_STRUCTS`] struct types,
/// naming the instruction where the count passes it (its number and byte
/// offset: SPIR-V has no lines); and a malformed instruction stream, which
/// naga would read up to the bad word, functions and all, before it
/// complains (one zero word after `OpFunctionEnd` once let any nesting
/// through).
pub fn check_structure(words: &[u32]) -> Result<(), String> {
    const OP_TYPE_STRUCT: u16 = 30;
    const OP_LOOP_MERGE: u16 = 246;
    const OP_SELECTION_MERGE: u16 = 247;
    const MAX_STRUCTS: usize = super::shape::MAX_STRUCTS;
    let instrs = instructions(words).ok_or_else(|| malformed(words))?;
    if instrs.len() > MAX_INSTRUCTIONS {
        let at = instrs[MAX_INSTRUCTIONS].0 * 4;
        return Err(format!(
            "more than {MAX_INSTRUCTIONS} instructions: refused at instruction {MAX_INSTRUCTIONS} (byte {at}); naga's readers take time quadratic in a function's expressions"
        ));
    }
    let (mut constructs, mut structs) = (0, 0);
    for (k, &(start, _, op)) in instrs.iter().enumerate() {
        let at = start * 4;
        if op == OP_LOOP_MERGE || op == OP_SELECTION_MERGE {
            constructs += 1;
            if constructs > MAX_CONSTRUCTS {
                return Err(format!(
                    "more than {MAX_CONSTRUCTS} structured constructs (OpSelectionMerge, OpLoopMerge): refused at instruction {k} (byte {at}); naga's reader and validator nest a body per construct"
                ));
            }
        }
        if op == OP_TYPE_STRUCT {
            structs += 1;
            if structs > MAX_STRUCTS {
                return Err(format!(
                    "more than {MAX_STRUCTS} struct types (OpTypeStruct): refused at instruction {k} (byte {at})"
                ));
            }
        }
    }
    Ok(())
}

/// Where and how a module's instruction stream is malformed (a word count
/// of 0, or one that runs past the end).
fn malformed(words: &[u32]) -> String {
    let (mut i, mut k) = (5, 0);
    while i < words.len() {
        let n = (words[i] >> 16) as usize;
        if n == 0 || i + n > words.len() {
            let left = words.len() - i;
            let s = if left == 1 { "" } else { "s" };
            return format!(
                "a malformed module: instruction {k} (byte {}) has a word count of {n}, with {left} word{s} left: refused",
                i * 4
            );
        }
        i += n;
        k += 1;
    }
    "a malformed module: refused".into()
}

/// Refuses an array whose length is a constant above the kernel
/// language's cells ([`crate::kernel::program::MAX_CELLS`] in all): such
/// an array can never be a program's memory, and naga's reader panics on
/// one of 2^31 bytes or more (an `OpSpecConstant %uint 4294967295` as a
/// length). The error names the length's constant (its `OpName`, and
/// `SpecId` for a specialization constant) and the `OpTypeArray`'s place:
/// its instruction number and byte offset, SPIR-V having no lines. A
/// malformed instruction stream is left to naga.
pub fn check_array_lengths(words: &[u32], workgroup_size: Option<u8>) -> Result<(), String> {
    let Some(ins) = instructions(words) else {
        return Ok(());
    };
    let f = facts(words, &ins);
    let mut names: HashMap<u32, String> = HashMap::new();
    let mut spec_id: HashMap<u32, u32> = HashMap::new();
    let mut constants: HashMap<u32, (u64, bool)> = HashMap::new();
    for &(at, n, op) in &ins {
        let w = &words[at..at + n];
        match op {
            OP_NAME if n >= 3 => {
                names.insert(w[1], string_at(&w[2..]));
            }
            OP_DECORATE if n >= 4 && w[2] == DECORATION_SPEC_ID => {
                spec_id.insert(w[1], w[3]);
            }
            OP_CONSTANT | OP_SPEC_CONSTANT if n == 4 || n == 5 => {
                let high = if n == 5 { u64::from(w[4]) << 32 } else { 0 };
                let mut v = high | u64::from(w[3]);
                // The launch's workgroup size replaces a spec constant's.
                if let (true, Some(&k), Some(s)) = (
                    op == OP_SPEC_CONSTANT,
                    f.size_parts.get(&w[2]),
                    workgroup_size,
                ) {
                    v = if k == 0 { u64::from(s) } else { 1 };
                }
                constants.insert(w[2], (v, op == OP_SPEC_CONSTANT));
            }
            _ => {}
        }
    }
    let most = crate::kernel::program::MAX_CELLS as u64;
    for (k, &(at, n, op)) in ins.iter().enumerate() {
        let w = &words[at..at + n];
        if op != OP_TYPE_ARRAY || n != 4 {
            continue;
        }
        let Some(&(len, spec)) = constants.get(&w[3]) else {
            continue;
        };
        if len <= most {
            continue;
        }
        let shown = |id: u32| match names.get(&id) {
            Some(s) => format!("%{id} `{}`", crate::error::printable(s)),
            None => format!("%{id}"),
        };
        let what = match (spec, spec_id.get(&w[3])) {
            (true, Some(sid)) => format!(
                "the specialization constant {} (SpecId {sid}), whose default is {len}",
                shown(w[3])
            ),
            (true, None) => format!(
                "the specialization constant {}, whose default is {len}",
                shown(w[3])
            ),
            (false, _) => format!("the constant {} = {len}", shown(w[3])),
        };
        return Err(format!(
            "instruction {} (byte {}): the length of the array type {} is {what}: more than the {most} cells the kernel language holds in all (give the constant a smaller value)",
            k + 1,
            at * 4,
            shown(w[1])
        ));
    }
    Ok(())
}

/// The rewritten module, or `None` where nothing needed rewriting (or the
/// instruction stream is malformed: naga reports it).
pub fn prepare(words: &[u32], workgroup_size: Option<u8>) -> Option<Vec<u32>> {
    let ins = instructions(words)?;
    let f = facts(words, &ins);
    let mut out: Vec<u32> = words[..5].to_vec();
    let mut changed = false;
    let last_entry = ins.iter().rposition(|i| i.2 == OP_ENTRY_POINT);
    let first_function = ins.iter().position(|i| i.2 == OP_FUNCTION);
    let nulls = null_constants(words, &ins, &f, &mut out);
    for (k, &(at, n, op)) in ins.iter().enumerate() {
        let w = &words[at..at + n];
        if Some(k) == first_function {
            for (&ty, &id) in &nulls {
                out.extend_from_slice(&[(3 << 16) | OP_CONSTANT_NULL as u32, ty, id]);
            }
        }
        let zero = op == OP_LOAD && n >= 4 && f.zero_push.contains(&w[3]);
        // An access chain into zero push constants is dropped: its loads
        // become the null constant (any other use is left undefined, which
        // naga reports).
        let chain = op == OP_ACCESS_CHAIN || op == OP_IN_BOUNDS_ACCESS_CHAIN;
        if chain && n >= 4 && f.zero_push.contains(&w[2]) {
            changed = true;
            continue;
        }
        let kept = match zero.then(|| nulls.get(&w[1])).flatten() {
            Some(&null) => Some(vec![(4 << 16) | OP_COPY_OBJECT as u32, w[1], w[2], null]),
            None => rewrite(w, op, &f, workgroup_size),
        };
        changed |= kept.as_deref() != Some(w);
        if let Some(k) = kept {
            out.extend_from_slice(&k);
        }
        if Some(k) == last_entry {
            changed |= add_local_sizes(&mut out, &f, words, &ins, workgroup_size);
        }
    }
    changed.then_some(out)
}

/// A fresh `OpConstantNull` id for the type of every load of a zero push
/// constant (the module's id bound in `out`'s header is raised).
fn null_constants(
    words: &[u32],
    ins: &[(usize, usize, u16)],
    f: &Facts,
    out: &mut [u32],
) -> std::collections::BTreeMap<u32, u32> {
    let mut nulls = std::collections::BTreeMap::new();
    for &(at, n, op) in ins {
        let w = &words[at..at + n];
        if op == OP_LOAD && n >= 4 && f.zero_push.contains(&w[3]) && !nulls.contains_key(&w[1]) {
            nulls.insert(w[1], out[3]);
            out[3] = out[3].wrapping_add(1);
        }
    }
    nulls
}

/// One instruction as it is kept (`None`: removed).
fn rewrite(w: &[u32], op: u16, f: &Facts, wg: Option<u8>) -> Option<Vec<u32>> {
    let n = w.len();
    let with = |op: u16, body: &[u32]| {
        let mut v = vec![((body.len() as u32 + 1) << 16) | op as u32];
        v.extend_from_slice(body);
        v
    };
    if n < 2 {
        return Some(w.to_vec());
    }
    match op {
        OP_EXT_INST_IMPORT if f.non_semantic.contains(&w[1]) => None,
        OP_EXT_INST if n >= 4 && f.non_semantic.contains(&w[3]) => None,
        OP_DECORATE if n >= 3 && w[2] == DECORATION_SPEC_ID => None,
        OP_LOAD if n > 4 => Some(with(OP_LOAD, &w[1..4])),
        OP_STORE if n > 3 => Some(with(OP_STORE, &w[1..3])),
        OP_SPEC_CONSTANT_TRUE => Some(with(OP_CONSTANT_TRUE, &w[1..])),
        OP_SPEC_CONSTANT_FALSE => Some(with(OP_CONSTANT_FALSE, &w[1..])),
        OP_SPEC_CONSTANT_COMPOSITE => Some(with(OP_CONSTANT_COMPOSITE, &w[1..])),
        OP_SPEC_CONSTANT if n == 4 => {
            let mut body = w[1..].to_vec();
            // The launch's size in x; y and z are 1 (one-dimensional
            // workgroups, §10.1).
            match (f.size_parts.get(&w[2]), wg) {
                (Some(0), Some(s)) => body[2] = s as u32,
                (Some(1 | 2), Some(_)) => body[2] = 1,
                _ => {}
            }
            Some(with(OP_CONSTANT, &body))
        }
        OP_SPEC_CONSTANT => Some(with(OP_CONSTANT, &w[1..])),
        _ => Some(w.to_vec()),
    }
}

/// `OpExecutionMode E LocalSize x y z` for each compute entry point that
/// has none, from its `WorkgroupSize` built-in (else the launch's size, else
/// 1): appended after the last entry point, where execution modes begin.
fn add_local_sizes(
    out: &mut Vec<u32>,
    f: &Facts,
    words: &[u32],
    ins: &[(usize, usize, u16)],
    wg: Option<u8>,
) -> bool {
    // The built-in's constituents are declared after the entry points:
    // their values are read from the module itself.
    let mut size = [wg.map_or(1, u32::from), 1, 1];
    for &(at, n, op) in ins {
        let w = &words[at..at + n];
        if (op == OP_CONSTANT || op == OP_SPEC_CONSTANT) && n == 4 {
            if let Some(&k) = f.size_parts.get(&w[2]) {
                if wg.is_none() || op == OP_CONSTANT {
                    size[k] = w[3];
                }
            }
        }
    }
    let mut changed = false;
    for &e in f.compute.iter().filter(|e| !f.sized.contains(e)) {
        out.extend_from_slice(&[
            (6 << 16) | OP_EXECUTION_MODE as u32,
            e,
            EXECUTION_MODE_LOCAL_SIZE,
            size[0],
            size[1],
            size[2],
        ]);
        changed = true;
    }
    changed
}

/// An atomic instruction of a module with its memory scope
/// (docs/KERNEL.md §10.2, *Races*).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopedAtomic {
    /// The names its memory may go by (`names_of`).
    pub names: Vec<String>,
    /// Its variable's id (what names it where the module has no names).
    pub var: u32,
    /// Its storage class is Workgroup.
    pub shared: bool,
    /// SPIR-V's scope number (Device 1, Workgroup 2, Subgroup 3,
    /// Invocation 4, QueueFamily 5).
    pub scope: u32,
    /// `OpAtomicLoad`, ...
    pub op: &'static str,
    /// Its place: `instruction K (byte B)`.
    pub at: String,
}

/// The atomics of a SPIR-V binary's bytes (either byte order) and their
/// scopes; empty for bytes that are not a module.
pub fn scoped_atomics_of(bytes: &[u8]) -> Result<Vec<ScopedAtomic>, String> {
    let words = words_of(bytes);
    if words.first() != Some(&MAGIC) {
        return Ok(Vec::new());
    }
    scoped_atomics(&words)
}

/// The atomic instructions, their pointers' operand and scope operand
/// positions (SPIR-V 1.6, 3.37.18).
fn atomic_operands(op: u16) -> Option<(&'static str, usize, usize)> {
    Some(match op {
        227 => ("OpAtomicLoad", 3, 4),
        228 => ("OpAtomicStore", 1, 2),
        229 => ("OpAtomicExchange", 3, 4),
        230 => ("OpAtomicCompareExchange", 3, 4),
        231 => ("OpAtomicCompareExchangeWeak", 3, 4),
        232 => ("OpAtomicIIncrement", 3, 4),
        233 => ("OpAtomicIDecrement", 3, 4),
        234 => ("OpAtomicIAdd", 3, 4),
        235 => ("OpAtomicISub", 3, 4),
        236 => ("OpAtomicSMin", 3, 4),
        237 => ("OpAtomicUMin", 3, 4),
        238 => ("OpAtomicSMax", 3, 4),
        239 => ("OpAtomicUMax", 3, 4),
        240 => ("OpAtomicAnd", 3, 4),
        241 => ("OpAtomicOr", 3, 4),
        242 => ("OpAtomicXor", 3, 4),
        318 => ("OpAtomicFlagTestAndSet", 3, 4),
        319 => ("OpAtomicFlagClear", 1, 2),
        _ => return None,
    })
}

/// Every atomic instruction's variable and scope. A scope operand that is
/// not the id of a constant is refused: SPIR-V requires one, and naga's
/// reader drops scopes unread (issue 42: an undefined scope id was
/// accepted).
fn scoped_atomics(words: &[u32]) -> Result<Vec<ScopedAtomic>, String> {
    const STORAGE_CLASS_WORKGROUP: u32 = 4;
    const OP_PTR_ACCESS_CHAIN: u16 = 67;
    const OP_MEMBER_NAME: u16 = 6;
    const OP_TYPE_POINTER: u16 = 32;
    let ins = instructions(words).unwrap_or_default();
    let mut constants: HashMap<u32, u32> = HashMap::new();
    let mut names: HashMap<u32, String> = HashMap::new();
    let mut members: HashMap<(u32, u32), String> = HashMap::new();
    let mut pointee: HashMap<u32, u32> = HashMap::new();
    // Pointer id -> (variable, storage class, member name it selects).
    let mut root: HashMap<u32, (u32, u32, Option<String>)> = HashMap::new();
    let mut var_type: HashMap<u32, u32> = HashMap::new();
    let mut out = Vec::new();
    for (k, &(at, n, op)) in ins.iter().enumerate() {
        let w = &words[at..at + n];
        let text = |from: usize| crate::error::printable(&string_at(&w[from..]));
        match op {
            OP_NAME if n >= 3 => drop(names.insert(w[1], text(2))),
            OP_MEMBER_NAME if n >= 4 => drop(members.insert((w[1], w[2]), text(3))),
            OP_TYPE_POINTER if n >= 4 => drop(pointee.insert(w[1], w[3])),
            // A scope is an OpConstant (spirv-val refuses a specialization
            // constant there: the host could narrow it), or OpConstantNull,
            // 0: CrossDevice.
            OP_CONSTANT | OP_CONSTANT_NULL if n >= 3 => {
                constants.insert(w[2], w.get(3).copied().unwrap_or(0));
            }
            OP_VARIABLE if n >= 4 => {
                root.insert(w[2], (w[2], w[3], None));
                if let Some(&t) = pointee.get(&w[1]) {
                    var_type.insert(w[2], t);
                }
            }
            OP_ACCESS_CHAIN | OP_IN_BOUNDS_ACCESS_CHAIN | OP_PTR_ACCESS_CHAIN | OP_COPY_OBJECT
                if n >= 4 =>
            {
                if let Some((var, class, member)) = root.get(&w[3]).cloned() {
                    // The first index into a variable of struct type
                    // selects a member.
                    let first = (op != OP_COPY_OBJECT && w[3] == var && n >= 5).then(|| w[4]);
                    let selected = first.and_then(|i| {
                        members
                            .get(&(*var_type.get(&var)?, *constants.get(&i)?))
                            .cloned()
                    });
                    root.insert(w[2], (var, class, selected.or(member)));
                }
            }
            _ => {}
        }
        let Some((name, ptr, scope)) = atomic_operands(op) else {
            continue;
        };
        let (Some(&p), Some(&sc)) = (w.get(ptr), w.get(scope)) else {
            continue;
        };
        let place = format!("instruction {k} (byte {})", at * 4);
        let value = constants
            .get(&sc)
            .filter(|&&v| v <= 5)
            .ok_or_else(|| not_a_scope(name, &place, sc))?;
        if let Some((var, class, member)) = root.get(&p) {
            out.push(ScopedAtomic {
                names: names_of(member.as_ref(), names.get(var)),
                var: *var,
                shared: *class == STORAGE_CLASS_WORKGROUP,
                scope: *value,
                op: name,
                at: place,
            });
        }
    }
    Ok(out)
}

/// The refusal of a scope operand that is not a constant scope.
fn not_a_scope(op: &str, place: &str, id: u32) -> String {
    format!(
        "{op} at {place}: its scope, %{id}, is not the id of a constant scope (an OpConstant from 0, CrossDevice, to 5, QueueFamily: SPIR-V requires one; the scope decides whether the access races)"
    )
}

/// The names memory may go by in the translation, most particular first:
/// its variable's (the translation names a one-member block after it),
/// `variable_member` (a member of a block of several), then the member's
/// (a block without an instance name).
fn names_of(member: Option<&String>, var: Option<&String>) -> Vec<String> {
    let var = var.filter(|v| !v.is_empty());
    let member = member.filter(|m| !m.is_empty());
    let mut names: Vec<String> = Vec::new();
    if let Some(v) = var {
        names.push(v.clone());
        if let Some(m) = member {
            names.insert(0, format!("{v}_{m}"));
        }
    }
    names.extend(member.cloned());
    names
}

/// Refuses a module whose computations use an `OpUndef` (docs/KERNEL.md
/// §10.3): an undefined value, which naga reads as 0 (spirv-opt makes one
/// of an uninitialised variable, past the check of locals). The id
/// operands looked at are those of the instructions whose operands are
/// all ids (arithmetic, logic, comparisons, conversions, `OpSelect`,
/// `OpPhi`, `OpCompositeConstruct`, `OpCopyObject`, calls) and the value
/// operands of stores, conditional branches, returns and atomics, so that
/// no literal is taken for an id.
pub fn check_undef(words: &[u32]) -> Result<(), String> {
    const OP_UNDEF: u16 = 1;
    let Some(ins) = instructions(words) else {
        return Ok(());
    };
    let undef: HashSet<u32> = ins
        .iter()
        .filter(|&&(_, n, op)| op == OP_UNDEF && n >= 3)
        .map(|&(at, _, _)| words[at + 2])
        .collect();
    if undef.is_empty() {
        return Ok(());
    }
    for (k, &(at, n, op)) in ins.iter().enumerate() {
        let w = &words[at..at + n];
        let ids: &[u32] = match op {
            124..=200 | 245 | 80 | 83 if n > 3 => &w[3..],
            57 if n > 4 => &w[4..],
            62 if n >= 3 => &w[1..3],
            250 | 254 if n >= 2 => &w[1..2],
            228 if n >= 5 => &w[4..5],
            229 | 232..=242 if n >= 7 => &w[6..7],
            230 | 231 if n >= 9 => &w[7..9],
            _ => continue,
        };
        if let Some(u) = ids.iter().find(|i| undef.contains(i)) {
            return Err(format!(
                "instruction {k} (byte {}) uses %{u}, an OpUndef: a value SPIR-V leaves undefined (spirv-opt makes one of an uninitialised variable), and the tools pick none",
                at * 4
            ));
        }
    }
    Ok(())
}
