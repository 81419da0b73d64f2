//! # Shaders in: WGSL, GLSL and SPIR-V compute shaders as kernel programs
//!
//! A user's shader is read by naga's frontends (one file per source
//! language: [`wgsl`], [`glsl`], [`spirv`]), validated by naga, and one
//! compute entry point is translated from naga's IR into a kernel program
//! ([`lower`]) under a launch given on the command line ([`Launch`]). The
//! translation is checked for the one thing the kernel language cannot
//! express by construction, 32-bit values: [`values`] explores every
//! schedule of the translated program and refuses it if any step's 32-bit
//! result differs from its `b`-bit one (docs/KERNEL.md §10). The result
//! keeps, per instruction, the shader position it came from, so that errors,
//! faults and `oracle translate` ([`mod@print`]) speak of the user's lines.
//!
//! This lives beside the kernel language it produces (not in the oracle):
//! the one loader ([`crate::kernel::load`]) reads shaders like any other
//! program, so every command of every tool takes them.

pub mod glsl;
pub mod launch;
pub mod locals;
pub mod lower;
pub mod print;
pub mod shape;
pub mod spirv;
pub mod uniformity;
pub mod values;
pub mod wgsl;

use crate::error::FileError;
use crate::kernel::program::{Program, MAX_VALUES};
use std::path::Path;

/// How a shader is launched: the parts of a kernel program a shader does
/// not say (or that the command line overrides).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Number of workgroups (`--workgroups`); `None`: the shader's
    /// `workgroups W;` line, else 2.
    pub workgroups: Option<u8>,
    /// Invocations per workgroup; `None`: the shader's attribute.
    pub workgroup_size: Option<u8>,
    /// Invocations per subgroup (`--subgroup-size`); `None`: the shader's
    /// `subgroup_size S;` line, else the translation's default
    /// ([`launch::default_subgroup`]); one wider than the workgroup is
    /// taken as the workgroup's size.
    pub subgroup_size: Option<u8>,
    /// The entry point, where a module has several (`--entry`).
    pub entry: Option<String>,
    /// The value domain; `None`: the shader's `values V;` line, else
    /// chosen from the constants and ids.
    pub values: Option<u16>,
    /// The state bound of the value check (the command's `--max-states`).
    pub max_states: usize,
    /// GLSL and SPIR-V workgroup memory without an initializer starts at
    /// 0 (`--workgroup-memory zero`: a launch that zeroes it, such as
    /// Vulkan's VK_KHR_zero_initialize_workgroup_memory, or a peer's
    /// stated input); otherwise it is undefined, as the languages say.
    pub zero_workgroup_memory: bool,
    /// WGSL's `atomicCompareExchangeWeak` fails spuriously only finitely
    /// often on a run (`--spurious-failures finite`, the default: C++'s
    /// recommended practice, which WGSL does not promise); otherwise any
    /// number of times (docs/KERNEL.md §2.11).
    pub spurious_finite: bool,
    /// Invocations of a subgroup are scheduled fairly, as CUDA's
    /// independent thread scheduling does (`--subgroup-scheduling fair`);
    /// otherwise a verdict holds for lockstep subgroups too
    /// ([`crate::kernel::program::Program::hardware_subgroups`]).
    pub fair_subgroups: bool,
    /// Simplify the translation (jump threading, unreachable code, dead
    /// registers: `lower/thread.rs`, §10.5); off only to check that the
    /// simplification keeps every verdict.
    pub simplify: bool,
    /// Keep a shader's structured control flow (no jump threading) even
    /// without subgroup operations: for the SIMT-Step models, which
    /// reconverge lanes at its merges (docs/KERNEL.md §10.6).
    pub structured: bool,
}

impl Default for Launch {
    fn default() -> Launch {
        Launch {
            workgroups: None,
            workgroup_size: None,
            subgroup_size: None,
            entry: None,
            values: None,
            max_states: 2_000_000,
            zero_workgroup_memory: false,
            spurious_finite: true,
            fair_subgroups: false,
            simplify: true,
            structured: false,
        }
    }
}

impl Launch {
    /// The number of workgroups (2 unless given).
    pub fn workgroups(&self) -> u8 {
        self.workgroups.unwrap_or(2)
    }

    /// Invocations per subgroup (1 unless given; the translation gives it).
    pub fn subgroup_size(&self) -> u8 {
        self.subgroup_size.unwrap_or(1)
    }

    /// This launch where it is given, else the shader's annotations.
    fn or_annotated(&self, a: &Annotations) -> Launch {
        Launch {
            workgroups: self.workgroups.or(a.workgroups),
            subgroup_size: self.subgroup_size.or(a.subgroup_size),
            values: self.values.or(a.values),
            ..self.clone()
        }
    }
}

/// The file extensions read as shaders.
pub const EXTENSIONS: [&str; 3] = ["wgsl", "comp", "spv"];

/// Whether `ext` names a shader language.
pub fn is_shader_ext(ext: &str) -> bool {
    EXTENSIONS.contains(&ext)
}

/// A position in the shader: byte range into its source (empty for
/// SPIR-V, which has no source text).
pub type Span = naga::Span;

/// A refusal or error of the frontend, at a shader position.
#[derive(Clone, Debug, PartialEq)]
pub struct ShaderError {
    pub span: Span,
    pub msg: String,
    /// Translating with two's complement values could take what was
    /// refused (a negative constant: docs/KERNEL.md §10.3).
    pub sext_helps: bool,
}

impl ShaderError {
    pub fn new(span: Span, msg: impl Into<String>) -> ShaderError {
        ShaderError {
            span,
            msg: msg.into(),
            sext_helps: false,
        }
    }
}

/// A translated shader: the program, the shader position of every
/// instruction (of its one code block), and the warnings to print.
#[derive(Clone, Debug)]
pub struct Translation {
    pub program: Program,
    pub spans: Vec<Span>,
    /// The shader's operation of each instruction where the value check
    /// computes it otherwise than the instruction's own (signed `>>`,
    /// `/`, `%`), by pc.
    pub exact: Vec<values::Exact>,
    /// Which instructions (by pc) are the shader's plain (non-atomic)
    /// loads and stores, translated as sequentially consistent atomic
    /// ones: the value check names those no barrier orders with another
    /// invocation's access (docs/KERNEL.md §10.2, *Races*).
    pub plain: Vec<bool>,
    /// Which instructions (by pc) are back edges of the shader's loops,
    /// and of which loop (numbered in the order lowered): the jump at the
    /// end of its body, and any jump threaded through it (a `continue`,
    /// a `do ... while` test). Where two loops begin at one pc (a loop
    /// whose body starts with one), these tell them apart, as the value
    /// check's count of iterations needs (docs/KERNEL.md §10.3, *Barriers
    /// in non-uniform control flow*).
    pub back_edges: Vec<Option<u16>>,
    /// The program's values are two's complement (docs/KERNEL.md §10.3):
    /// a `b`-bit value with its top bit set stands for a negative `i32`
    /// (or a `u32` near 2^32). Taken where unsigned values cannot hold
    /// what the shader computes.
    pub sext: bool,
    pub warnings: Vec<String>,
    /// The source text (empty for SPIR-V).
    pub source: String,
    /// The shader's names of each location: its variable's, and for a
    /// struct member also the member's (`init` lines name either).
    pub names: Vec<(String, u8)>,
    /// The shader's names of single cells of array locations: an integer
    /// of one view of an aliased buffer inside another view's array
    /// (`second` is `flags[1]`, `lower/alias.rs`), with its cell.
    pub cells: Vec<(String, u8, u16)>,
    /// The names of the storage and workgroup variables (and members) the
    /// entry point does not use, which became no location.
    pub unused: Vec<String>,
    /// The launch it was translated for, and where each number came from.
    pub launch: launch::Taken,
    /// The workgroup locations whose initial contents the source language
    /// leaves undefined (GLSL `shared`, SPIR-V Workgroup variables without
    /// an initializer), with the shader's name of each: the value check
    /// refuses the shader if one may be read before it is written
    /// (docs/KERNEL.md §10.3).
    pub undefined: Vec<(u8, String)>,
    /// Data races in the Vulkan memory model that the translation decides
    /// as sequentially consistent accesses, each said on the verdict's
    /// launch line (docs/KERNEL.md §10.2, *Races*).
    pub races: Vec<Race>,
    /// A barrier in non-uniform control flow that some invocation passes
    /// by on some schedule, in a language that leaves it undefined (GLSL,
    /// SPIR-V): where and how, in words. The program deadlocks there, so
    /// every verdict is F, as it must be (undefined behaviour guarantees
    /// no termination); the launch line says so (docs/KERNEL.md §10.3,
    /// *Barriers in non-uniform control flow*).
    pub undefined_barrier: Option<String>,
}

/// A data race the translation decides as sequentially consistent.
#[derive(Clone, Debug, PartialEq)]
pub struct Race {
    /// The variable raced on, as the kernel program names its location.
    pub name: String,
    /// Where (undefined for races of the whole program, and in SPIR-V).
    pub span: Span,
    /// Where in a SPIR-V module (`instruction 57, byte 1234`).
    pub at: Option<String>,
    /// What races, in words (`atomicLoad with invocation scope`).
    pub what: String,
}

/// Line and column (both from 1; columns in characters) of byte `offset`
/// of `src`, lines ending at `\n`, `\r` or `\r\n` (the tools' one rule,
/// [`crate::locate::Position`], which is also GLSL's: "terminated by
/// carriage-return or line-feed"); `(0, 0)` when the source is unknown
/// (SPIR-V) or the offset is past it. Never panics on a span that does not
/// fall on a character boundary.
pub fn line_col(src: &str, offset: u32) -> (usize, usize) {
    let off = offset as usize;
    if src.is_empty() || off > src.len() {
        return (0, 0);
    }
    let mut p = crate::locate::Position::default();
    for c in String::from_utf8_lossy(&src.as_bytes()[..off]).chars() {
        p.advance(c);
    }
    (p.line, p.col)
}

/// Line `n` (from 1) of `src` by [`line_col`]'s rule, without its end.
pub fn source_line(src: &str, n: usize) -> Option<&str> {
    crate::locate::lines(src).nth(n.checked_sub(1)?)
}

/// The error as `file:line:col: message` (the whole file where the span is
/// unknown).
pub fn file_error(path: &Path, src: &str, e: &ShaderError) -> FileError {
    let (line, col) = if e.span.is_defined() {
        line_col(src, e.span.to_range().map_or(0, |r| r.start as u32))
    } else {
        (0, 0)
    };
    FileError {
        path: path.to_path_buf(),
        line,
        col,
        msg: e.msg.clone(),
    }
}

/// Reads a shader file's bytes (already read by the loader's rules) into
/// naga's IR, by extension.
fn parse_module(
    path: &Path,
    bytes: &[u8],
    workgroup_size: Option<u8>,
) -> Result<(naga::Module, String, Option<glsl::Prepared>), FileError> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext == "spv" {
        return Ok((
            spirv::parse(path, bytes, workgroup_size)?,
            String::new(),
            None,
        ));
    }
    let src = std::str::from_utf8(bytes)
        .map_err(|e| FileError::whole(path, format!("not UTF-8 text: {e}")))?
        .to_string();
    if ext == "comp" {
        let prepared = glsl::prepare(&src);
        glsl::check_shape(path, &src, &prepared)?;
        let mut module = glsl::parse(path, &src, &prepared)?;
        for (_, gv) in module.global_variables.iter_mut() {
            if let Some((_, name)) = prepared
                .aliases
                .iter()
                .find(|(alias, _)| gv.name.as_ref() == Some(alias))
            {
                gv.name = Some(name.clone());
            }
        }
        return Ok((module, src, Some(prepared)));
    }
    shape::check_wgsl(&src).map_err(|(at, msg)| {
        let (line, col) = line_col(&src, at as u32);
        FileError {
            path: path.to_path_buf(),
            line,
            col,
            msg: format!("WGSL: {msg}"),
        }
    })?;
    Ok((wgsl::parse(path, &src)?, src, None))
}

/// A span of the text naga parsed as a span of the user's text.
fn user_span(prepared: Option<&glsl::Prepared>, s: Span) -> Span {
    match (prepared, s.to_range()) {
        (Some(p), Some(r)) => Span::new(p.original(r.start) as u32, p.original(r.end) as u32),
        _ => s,
    }
}

/// Translates a shader file's bytes into a kernel program under `launch`:
/// parse, validate (naga), translate one compute entry point, check the
/// program (KERNEL.md §1.4) and its values (§10). Every refusal is one
/// error naming the file and, where the source is text, line and column.
pub fn translate(path: &Path, bytes: &[u8], launch: &Launch) -> Result<Translation, FileError> {
    guarded(path, bytes, || translate_unguarded(path, bytes, launch))
}

/// The names of the module's compute entry points, in its order (read by
/// naga's frontends, guarded as [`translate`] is).
pub fn compute_entries(
    path: &Path,
    bytes: &[u8],
    launch: &Launch,
) -> Result<Vec<String>, FileError> {
    guarded(path, bytes, || {
        let (module, ..) = parse_module(path, bytes, launch.workgroup_size)?;
        Ok(module
            .entry_points
            .iter()
            .filter(|e| e.stage == naga::ShaderStage::Compute)
            .map(|e| e.name.clone())
            .collect())
    })
}

/// `f`, which runs naga's frontends on `bytes`, on a thread of its own
/// with its panics caught.
fn guarded<T: Send>(
    path: &Path,
    bytes: &[u8],
    f: impl FnOnce() -> Result<T, FileError> + Send,
) -> Result<T, FileError> {
    // naga is a large dependency fed with the user's text (its SPIR-V
    // reader panics on some corrupt binaries): should it panic on some
    // input, that input gets one error line, not an abort or a backtrace.
    // Its readers recurse as deep as the input nests: the frontend runs
    // on a thread of its own, with a stack sized for the bounds the
    // readers are held to (`glsl::check_shape`; naga's WGSL reader has
    // its own), whatever thread the caller is on (rayon's have 2 MiB).
    quiet_panics();
    let guarded = || {
        QUIET.with(|q| q.set(true));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        QUIET.with(|q| q.set(false));
        r.unwrap_or_else(|_| {
            let what = PANIC.with(|p| p.take()).unwrap_or_default();
            // A panic of this crate's translation is ours to own, not naga's.
            if what.contains(", at src/kernel/") {
                return Err(FileError::whole(
                    path,
                    format!("internal error: the translation panicked on this input ({what}); please report it"),
                ));
            }
            let hint = if bytes.starts_with(&MAGIC_BYTES) || bytes.starts_with(&MAGIC_BYTES_BE) {
                "; naga's SPIR-V reader assumes a valid module: `spirv-val` names what is wrong in it"
            } else {
                ""
            };
            Err(FileError::whole(
                path,
                format!(
                    "internal error: the shader frontend (naga) panicked on this input ({what}){hint}; please report it"
                ),
            ))
        })
    };
    let r = std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("shader frontend".into())
            .stack_size(FRONTEND_STACK)
            .spawn_scoped(s, guarded)
            .map_err(|e| {
                FileError::whole(
                    path,
                    format!("cannot start the shader frontend's thread: {e}"),
                )
            })?;
        worker.join().unwrap_or_else(|_| {
            Err(FileError::whole(
                path,
                "internal error: the shader frontend's thread failed; please report it",
            ))
        })
    });
    // naga's messages and the translation's quote the shader (identifiers
    // of any length, SPIR-V names with any bytes): one short line each.
    r.map_err(|mut e| {
        e.msg = crate::error::tidy_message(&e.msg);
        e
    })
}

/// The stack of the frontend's thread: the deepest input the readers
/// take (glsl.rs's bounds; `tests/shader_limits.rs`) runs in 4 MiB in the
/// test build, and an unoptimised build's frames are a few times larger.
/// Reserved, not committed: only the pages a deep input touches are used.
const FRONTEND_STACK: usize = 64 << 20;

thread_local! {
    /// Set while this thread runs the frontend: its panics are not printed.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The message and place of the frontend's last panic on this thread.
    static PANIC: std::cell::Cell<Option<String>> = const { std::cell::Cell::new(None) };
}

/// A SPIR-V module's first four bytes, in either byte order.
const MAGIC_BYTES: [u8; 4] = 0x0723_0203u32.to_le_bytes();
const MAGIC_BYTES_BE: [u8; 4] = 0x0723_0203u32.to_be_bytes();

/// Installs (once) a panic hook that stays silent for a thread inside the
/// frontend and defers to the previous hook everywhere else.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                prev(info);
                return;
            }
            // Kept for the error line: naga's message (which may quote
            // the input: escaped) and its place in naga's sources.
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            let at = info.location().map_or(String::new(), |l| {
                let file = l.file().rsplit_once("/src/").map_or(l.file(), |(_, f)| f);
                format!(", at {file}:{}", l.line())
            });
            let text = crate::error::tidy_message(&format!("{msg}{at}"));
            PANIC.with(|p| p.set(Some(text)));
        }));
    });
}

fn translate_unguarded(
    path: &Path,
    bytes: &[u8],
    launch: &Launch,
) -> Result<Translation, FileError> {
    let (module, src, prepared) = parse_module(path, bytes, launch.workgroup_size)?;
    let fail = |mut e: ShaderError| {
        e.span = user_span(prepared.as_ref(), e.span);
        file_error(path, &src, &e)
    };
    let at_size = |e| fail(at_size_line(prepared.as_ref(), e));
    let at_line = |(line, msg)| FileError {
        path: path.to_path_buf(),
        line,
        col: 1,
        msg,
    };
    let notes = read_annotations(&src).map_err(at_line)?;
    let flags = launch;
    let launch = launch.or_annotated(&notes);
    shape::check_ir_depth(&module).map_err(|(span, msg)| fail(ShaderError::new(span, msg)))?;
    let lang = language(path);
    let info = checked(&module, &launch, lang, &src).map_err(fail)?;
    let size_from = size_from(path, bytes, &module, &launch).map_err(at_size)?;
    let width_named = launch.subgroup_size.is_some();
    let launch = with_subgroups(&module, launch).map_err(at_size)?;
    // WGSL's compare-exchange is weak; SPIR-V's OpAtomicCompareExchangeWeak
    // "has the same semantics as OpAtomicCompareExchange", GLSL's is strong.
    let weak_cas = (lang == "WGSL").then_some(launch.spurious_finite);
    // The domain: the launch's, else the least one the value check
    // accepts, from the constants' and ids' (docs/KERNEL.md §10.3).
    let mut domain = launch.clone();
    // Unsigned values first; two's complement ones where those cannot
    // hold what the shader computes (a negative value).
    let mut sext = notes.has_negative_init();
    loop {
        let mut t = match lower::lower(&module, &info, &src, &domain, weak_cas, sext) {
            Err(e) if e.sext_helps && !sext => {
                sext = true;
                continue;
            }
            Ok(t) if sext && domain.values.is_none() => {
                // This translation only picks the domain its constants need.
                domain.values = Some(t.program.values);
                continue;
            }
            t => t.map_err(fail)?,
        };
        if !width_named {
            width_known(&module, &t, &launch).map_err(at_size)?;
        }
        launched(&mut t, (&launch, flags, &notes), size_from);
        user_positions(&mut t, prepared.as_ref());
        source_positions(&mut t, lang, path, bytes)?;
        if !notes.init_fits(&t) && launch.values.is_none() && t.program.values < MAX_VALUES {
            // A wider domain holds the `init` lines' values too.
            domain.values = Some(2 * t.program.values);
            continue;
        }
        notes.initialise(&mut t).map_err(at_line)?;
        t.launch.memory = initial_memory(&mut t, &notes, lang, launch.zero_workgroup_memory);
        match values::check(&t, lang, launch.max_states) {
            Ok(found) => return Ok(with_findings(t, found)),
            Err(e) if e.sext_helps && !sext => {
                sext = true;
                domain = launch.clone();
            }
            Err(e) if e.wider_helps && launch.values.is_none() && t.program.values < MAX_VALUES => {
                domain.values = Some(2 * t.program.values);
            }
            Err(e) => return Err(file_error(path, &src, &e.error)),
        }
    }
}

/// naga's validation of `module`, after the checks naga does not make:
/// two variables on one binding, WGSL's uniformity of barriers, GLSL's
/// and SPIR-V's locals read before they are written.
fn checked(
    module: &naga::Module,
    launch: &Launch,
    lang: &str,
    src: &str,
) -> Result<naga::valid::ModuleInfo, ShaderError> {
    let (index, entry) = lower::entry_point(module, launch)?;
    // naga's binding check refuses two variables on one binding; only
    // where it fails is the module validated again without it, for
    // [`check_bindings`] to say what such a pair is (naga's own error
    // where the relaxed validation finds no such pair): once, as a rule.
    let info = match validate(module, true) {
        Ok(info) => info,
        Err(strict) => {
            let Ok(relaxed) = validate(module, false) else {
                return Err(strict);
            };
            if !check_bindings(module, relaxed.get_entry_point(index), lang == "WGSL")? {
                return Err(strict);
            }
            relaxed
        }
    };
    if lang == "WGSL" {
        uniformity::check(module, entry, src)?;
    } else {
        locals::check(module, entry, lang, lang == "GLSL")?;
    }
    Ok(info)
}

/// `e`, an error about the workgroup size, where the entry point's body
/// has no place (GLSL's statements have none in naga): at the
/// `local_size_x` that declares the size.
fn at_size_line(prepared: Option<&glsl::Prepared>, mut e: ShaderError) -> ShaderError {
    if !e.span.is_defined() {
        if let Some(s) = prepared.and_then(|p| glsl::size_span(&p.text)) {
            e.span = s;
        }
    }
    e
}

/// Refuses `t`, translated with the default subgroup size, where that
/// default cannot stand for the width GPUs give its workgroup
/// ([`launch::width_matters`], docs/KERNEL.md §10.1), at its entry point.
fn width_known(module: &naga::Module, t: &Translation, launch: &Launch) -> Result<(), ShaderError> {
    match launch::width_matters(&t.program, launch.fair_subgroups) {
        None => Ok(()),
        Some(msg) => Err(ShaderError::new(
            lower::declared_size(module, launch)?.1,
            msg,
        )),
    }
}

/// Each instruction's place in the source (GLSL and WGSL), or for SPIR-V,
/// its races' instructions.
fn source_positions(
    t: &mut Translation,
    lang: &str,
    path: &Path,
    bytes: &[u8],
) -> Result<(), FileError> {
    if lang != "SPIR-V" {
        positions(t);
        return Ok(());
    }
    spirv_races(t, bytes).map_err(|msg| FileError::whole(path, format!("SPIR-V: {msg}")))
}

/// `t` with what the value check found: the barrier in non-uniform
/// control flow ([`Translation::undefined_barrier`]) and the plain
/// accesses no barrier orders, as races on the launch line (but on a
/// location the translation names already as spun on, and one per
/// variable and place). Where the check
/// looked for those, the translation's warning about plain accesses
/// gives way to them.
fn with_findings(mut t: Translation, found: values::Findings) -> Translation {
    t.undefined_barrier = (found.undefined_barrier).map(|e| undefined_barrier(&t.source, &e));
    if found.races_tracked {
        t.warnings.retain(|w| !w.starts_with(lower::PLAIN_WARNING));
    }
    for ((loc, pc), what) in found.races {
        let name = t.program.locations[loc as usize].name.clone();
        let span = t.spans.get(pc).copied().unwrap_or(Span::UNDEFINED);
        // One race per variable and line (a read and a write of one
        // statement are one), none beside a spin already named.
        let line = |sp: Span| sp.to_range().map(|r| line_col(&t.source, r.start as u32).0);
        let named =
            |r: &Race| r.name == name && (r.span == Span::UNDEFINED || line(r.span) == line(span));
        if t.races.iter().any(named) {
            continue;
        }
        t.races.push(Race {
            name,
            span,
            at: None,
            what,
        });
    }
    t
}

/// The launch line's words for the barrier in non-uniform control flow
/// the value check found (`e`), at its line where the source is known.
fn undefined_barrier(src: &str, e: &ShaderError) -> String {
    let at = match e.span.to_range() {
        Some(r) => match line_col(src, r.start as u32) {
            (0, _) => String::new(),
            (line, col) => format!(" at line {line}, column {col}"),
        },
        None => String::new(),
    };
    format!("{}{at} ({})", launch::UNDEFINED_BARRIER, e.msg)
}

/// `launch` with its subgroup size: the one named, else the default
/// ([`launch::default_subgroup`]); one at least as wide as the workgroup
/// holds all of it (the lanes past it inactive, docs/KERNEL.md §10.1).
fn with_subgroups(module: &naga::Module, launch: Launch) -> Result<Launch, ShaderError> {
    let size = lower::launched_size(module, &launch)?;
    let subgroup = (launch.subgroup_size).map_or(launch::default_subgroup(size), |s| s.min(size));
    Ok(Launch {
        subgroup_size: Some(subgroup),
        ..launch
    })
}

/// Where the workgroup size of the entry point `launch` selects comes
/// from: its literal, a SPIR-V specialization constant's default, or the
/// flag (which must agree with a literal).
fn size_from(
    path: &Path,
    bytes: &[u8],
    module: &naga::Module,
    launch: &Launch,
) -> Result<launch::SizeFrom, ShaderError> {
    let (declared, span) = lower::declared_size(module, launch)?;
    let spec = (path.extension().is_some_and(|e| e == "spv"))
        .then(|| spirv::spec_size_of(bytes))
        .flatten();
    launch::size_origin(launch, declared, spec, span)
}

/// Records in `t` the launch it was translated for (`launch`: the flags
/// with the shader's own lines `notes`), where its size came from, and
/// the model and verdicts the lines state.
fn launched(
    t: &mut Translation,
    (launch, flags, notes): (&Launch, &Launch, &Annotations),
    size_from: launch::SizeFrom,
) {
    t.launch = taken(launch, flags, notes, size_from, &t.program);
    t.program.model = notes.model;
    t.program.expect = notes.expect.clone();
    inside_subgroups(t, launch);
    if let launch::SizeFrom::SpecDefault(id) = size_from {
        t.warnings
            .push(launch::spec_default_warning(t.program.workgroup_size, id));
    }
}

/// The spans of `t` (instructions and races) in the user's source, where
/// the GLSL reader moved it (`prepared`).
fn user_positions(t: &mut Translation, prepared: Option<&glsl::Prepared>) {
    for s in &mut t.spans {
        *s = user_span(prepared, *s);
    }
    for r in &mut t.races {
        r.span = user_span(prepared, r.span);
    }
}

/// The launch a translation was made for (`launch`: the flags `flags`
/// with the shader's own lines `notes`), and where each number came from.
fn taken(
    launch: &Launch,
    flags: &Launch,
    notes: &Annotations,
    size_from: launch::SizeFrom,
    p: &Program,
) -> launch::Taken {
    launch::Taken {
        workgroups: (
            launch.workgroups(),
            launch::origin(flags.workgroups, notes.workgroups, notes.from_layout.0),
        ),
        workgroup_size: (p.workgroup_size, size_from),
        subgroup_size: (
            launch.subgroup_size(),
            launch::origin(
                flags.subgroup_size,
                notes.subgroup_size,
                notes.from_layout.1,
            ),
        ),
        subgroup_asked: (flags.subgroup_size.or(notes.subgroup_size))
            .filter(|&s| s > launch.subgroup_size()),
        memory: Default::default(),
        weak_cas: has_choice(p).then_some(launch.spurious_finite),
        subgroups: (launch.subgroup_size() > 1).then_some(!launch.fair_subgroups),
        tangled: false,
    }
}

/// Two variables on one binding (issue 42): one buffer seen through two
/// declarations, aliased. WGSL forbids it ("two different resource
/// variables in a shader must not have the same group and binding
/// values"), so a WGSL shader is refused, naming both, at the second
/// (naga's validator says only "Bindings for [1] conflict"); so is a pair
/// of which one is not a storage buffer (Vulkan asks every variable on a
/// binding to be compatible with its one descriptor type). GLSL and
/// SPIR-V storage blocks on one binding are translated as one buffer
/// (`lower/alias.rs`). Only the variables the entry point uses (`uses`,
/// naga's analysis: a read, a write or a query, not a mere mention, which
/// naga's GLSL reader makes of every global in every function) count:
/// other entry points may use the same binding for their own.
/// Returns whether two views share a binding.
fn check_bindings(
    module: &naga::Module,
    uses: &naga::valid::FunctionInfo,
    wgsl: bool,
) -> Result<bool, ShaderError> {
    let mut seen: Vec<(&naga::ResourceBinding, String, bool)> = Vec::new();
    let mut aliased = false;
    for (h, gv) in module.global_variables.iter() {
        let Some(binding) = gv.binding.as_ref().filter(|_| !uses[h].is_empty()) else {
            continue;
        };
        let name = match (&gv.name, module.types[gv.ty].name.as_deref()) {
            (Some(n), _) if !n.is_empty() => n.clone(),
            (_, Some(t)) => t.to_string(),
            _ => format!("variable {}", h.index()),
        };
        let storage = matches!(gv.space, naga::AddressSpace::Storage { .. });
        if let Some((_, first, other)) = seen.iter().find(|(b, ..)| *b == binding) {
            // Two of one kind go on: storage buffers are one buffer
            // (`lower/alias.rs`), a uniform one is refused where it is used.
            let why = if wgsl {
                "WGSL forbids two resource variables with the same group and binding; give each its own binding, or declare the buffer once"
            } else if storage != *other {
                "a storage buffer and another kind of resource: one binding holds one kind of descriptor"
            } else {
                aliased = true;
                continue;
            };
            return Err(ShaderError::new(
                module.global_variables.get_span(h),
                format!(
                    "`{first}` and `{name}` are both at binding {} of group {} (aliased): {why}",
                    binding.binding, binding.group
                ),
            ));
        }
        seen.push((binding, name, storage));
    }
    Ok(aliased)
}

/// The races of a SPIR-V module's atomics whose scope does not hold the
/// invocations that may access their memory (§10.2, *Races*), on the
/// variables the translation kept.
fn spirv_races(t: &mut Translation, bytes: &[u8]) -> Result<(), String> {
    let p = &t.program;
    let sizes = (
        u32::from(p.workgroups),
        u32::from(p.workgroup_size),
        u32::from(p.subgroup_size),
    );
    for a in spirv::scoped_atomics_of(bytes)? {
        // The location of the first of its names the translation knows.
        // (A module without names: the variable's id.)
        let name = a
            .names
            .iter()
            .find_map(|want| t.names.iter().find(|(n, _)| n == want))
            .map_or(format!("%{}", a.var), |&(_, k)| {
                p.locations[k as usize].name.clone()
            });
        if let Some(what) = launch::scope_race(a.op, a.scope, a.shared, sizes) {
            t.races.push(Race {
                name,
                span: Span::UNDEFINED,
                at: Some(a.at),
                what,
            });
        }
    }
    Ok(())
}

/// Whether some instruction of `p` is a `choose` (a weak compare-exchange).
/// Each instruction's line and column in the shader's text, so that a
/// message about an instruction (a structure error under a SIMT-Step
/// model) names them.
fn positions(t: &mut Translation) {
    let at = (t.spans.iter())
        .map(|s| line_col(&t.source, s.to_range().map_or(0, |r| r.start as u32)))
        .collect();
    t.program.codes[0].at = crate::kernel::program::Positions(at);
}

/// What happens inside a subgroup of two or more (§10.6): a verdict must
/// hold for lockstep too unless `--subgroup-scheduling fair`; subgroup
/// operations are tangled, and the launch line says so.
fn inside_subgroups(t: &mut Translation, launch: &Launch) {
    let lanes = launch.subgroup_size() > 1;
    t.program.hardware_subgroups = !launch.fair_subgroups && lanes;
    t.program.tangled_collectives = lanes && t.program.tangles();
    t.launch.tangled = t.program.tangled_collectives;
}

fn has_choice(p: &crate::kernel::program::Program) -> bool {
    (p.codes.iter()).any(|c| {
        (c.instrs.iter()).any(|i| matches!(i, crate::kernel::program::Instr::Choose { .. }))
    })
}

/// The source language of a shader file, by extension, as messages name it.
fn language(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("spv") => "SPIR-V",
        Some("comp") => "GLSL",
        _ => "WGSL",
    }
}

/// What the translated shader's memory holds at the start (§10.3): WGSL
/// zero-initialises workgroup memory; GLSL and SPIR-V leave it undefined,
/// and keep in [`Translation::undefined`] the locations the value check
/// must find written before they are read, unless the launch zeroes them
/// (`--workgroup-memory zero`). An `// init` line states a location's
/// start, which then is not undefined.
fn initial_memory(
    t: &mut Translation,
    notes: &Annotations,
    lang: &'static str,
    zero: bool,
) -> launch::Memory {
    let given = |l: u8| {
        notes
            .init
            .iter()
            .any(|(_, name, _)| t.names.iter().any(|(n, k)| n == name && *k == l))
    };
    let mut undefined = std::mem::take(&mut t.undefined);
    undefined.retain(|&(l, _)| !given(l));
    let workgroup = match (undefined.is_empty(), lang) {
        (true, _) => launch::Workgroup::None,
        (false, "WGSL") => launch::Workgroup::Zero,
        (false, _) if zero => launch::Workgroup::ZeroByFlag,
        (false, lang) => {
            t.undefined = undefined;
            launch::Workgroup::Undefined(lang)
        }
    };
    let init = |shared: bool| {
        notes.init.iter().any(|(_, name, _)| {
            t.names
                .iter()
                .any(|(n, k)| n == name && t.program.locations[*k as usize].shared == shared)
        })
    };
    launch::Memory {
        init_storage: init(false),
        init_workgroup: init(true),
        workgroup,
    }
}

/// Reads and translates one shader file (the loader's arm for shaders):
/// the input rules of [`crate::io::read_bytes_limited`], then
/// [`translate`]; warnings are appended as `file: message`. With the
/// program, what its verdicts rest on: the launch it was translated for
/// and the races it decides as sequentially consistent
/// ([`Translation::assumptions`]).
pub fn load(
    path: &Path,
    launch: &Launch,
    warnings: &mut Vec<String>,
) -> Result<(Program, String), FileError> {
    let limit = crate::io::max_input_bytes().map_err(|e| FileError::whole(path, e))?;
    let bytes = crate::io::read_bytes_limited(path, limit)?;
    loaded(path, translate(path, &bytes, launch)?, warnings)
}

/// The most entry points of one module decided one by one: each is parsed
/// and translated on its own, so a module of thousands of tiny entry
/// points would cost their square (400 take 1 s, 4,000 would take 100).
pub const MAX_ENTRIES: usize = 64;

/// One program a shader file holds: its entry point's name where the
/// module has several compute entry points, the program, and what its
/// verdicts rest on.
pub type Entry = (Option<String>, Program, String);

/// [`load`], for every compute entry point of a module that has several
/// and no `--entry` names one: each is a dispatch of its own, decided on
/// its own (GPUPrefixSums' reduce-then-scan is three). Where one of them
/// cannot be translated, that is the file's error, naming the entry point.
pub fn load_entries(
    path: &Path,
    launch: &Launch,
    warnings: &mut Vec<String>,
) -> Result<Vec<Entry>, FileError> {
    let limit = crate::io::max_input_bytes().map_err(|e| FileError::whole(path, e))?;
    let bytes = crate::io::read_bytes_limited(path, limit)?;
    // A module with one entry point, or one chosen, is translated once;
    // the entry points are listed only where that fails.
    let err = match translate(path, &bytes, launch) {
        Ok(t) => {
            let (program, assumptions) = loaded(path, t, warnings)?;
            return Ok(vec![(None, program, assumptions)]);
        }
        Err(e) => e,
    };
    if launch.entry.is_some() {
        return Err(err);
    }
    let names = match compute_entries(path, &bytes, launch) {
        Ok(names) if names.len() > MAX_ENTRIES => {
            return Err(FileError::whole(
                path,
                format!(
                    "the module has {} compute entry points: at most {MAX_ENTRIES} are decided one by one; name one with --entry",
                    names.len()
                ),
            ))
        }
        Ok(names) if names.len() > 1 => names,
        _ => return Err(err),
    };
    names
        .into_iter()
        .map(|name| {
            let one = Launch {
                entry: Some(name.clone()),
                ..launch.clone()
            };
            let t = translate(path, &bytes, &one).map_err(|mut e| {
                e.msg = format!("entry point `{}`: {}", crate::error::excerpt(&name), e.msg);
                e
            })?;
            let (program, assumptions) = loaded(path, t, warnings)?;
            Ok((Some(name), program, assumptions))
        })
        .collect()
}

/// A translation's program and launch line, its warnings appended to
/// `warnings` as `file: message`.
fn loaded(
    path: &Path,
    t: Translation,
    warnings: &mut Vec<String>,
) -> Result<(Program, String), FileError> {
    let file = crate::error::printable(&path.to_string_lossy());
    warnings.extend(t.warnings.iter().map(|w| format!("{file}: {w}")));
    let assumptions = t.assumptions();
    Ok((t.program, assumptions))
}

impl Translation {
    /// How to read the program's values where they are two's complement
    /// (docs/KERNEL.md §10.3); `None` where they are the shader's own.
    pub fn sext_note(&self) -> Option<String> {
        (self.sext).then(|| {
            format!(
                "{} (in outcomes and witnesses too)",
                values::reading(self.program.values)
            )
        })
    }

    /// What the verdicts rest on, for the launch line: the launch
    /// ([`launch::Taken::describe`]), then the data races decided as
    /// sequentially consistent accesses, each naming its variable and,
    /// where it has one, its line (`; data races, decided as sequentially
    /// consistent: `msg` at line 20: atomicLoad with invocation scope,
    /// ...`).
    pub fn assumptions(&self) -> String {
        let mut s = self.launch.describe();
        if let Some(note) = self.sext_note() {
            s.push_str("; ");
            s.push_str(&note);
        }
        if let Some(u) = &self.undefined_barrier {
            s.push_str("; ");
            s.push_str(u);
        }
        if self.races.is_empty() {
            return s;
        }
        let races: Vec<String> = self
            .races
            .iter()
            .map(|r| {
                let name = &r.name;
                let (line, _) = match r.span.to_range() {
                    Some(range) => line_col(&self.source, range.start as u32),
                    None => (0, 0),
                };
                match (&r.at, line) {
                    (Some(at), _) => format!("`{name}` at {at}: {}", r.what),
                    (None, 0) => format!("`{name}`: {}", r.what),
                    (None, line) => format!("`{name}` at line {line}: {}", r.what),
                }
            })
            .collect();
        s.push_str(launch::RACES);
        s.push_str(&races.join("; "));
        s
    }
}

/// naga's validation: types, uniformity of barriers, and the analysis the
/// translation reads expression types from. The message is naga's whole
/// chain of causes ("function `f` is invalid: expression [3] is invalid:
/// ..."), not only its outermost line, and names a function without a
/// name (SPIR-V's usually have none) by the entry point whose body it is.
/// `bindings`: with naga's binding checks, which refuse two variables on
/// one binding.
fn validate(module: &naga::Module, bindings: bool) -> Result<naga::valid::ModuleInfo, ShaderError> {
    let mut flags = naga::valid::ValidationFlags::all();
    if !bindings {
        flags.remove(naga::valid::ValidationFlags::BINDINGS);
    }
    naga::valid::Validator::new(flags, naga::valid::Capabilities::all())
        .validate(module)
        .map_err(|e| {
            let span = e.spans().next().map_or(Span::UNDEFINED, |(s, _)| *s);
            let inner = e.as_inner();
            let head = match inner {
                naga::valid::ValidationError::Function { handle, name, .. } => {
                    format!("{} is invalid", function_name(module, *handle, name))
                }
                other => other.to_string(),
            };
            let mut msg = format!("invalid shader: {head}");
            let mut cause = std::error::Error::source(inner);
            while let Some(c) = cause {
                let text = c.to_string();
                // thiserror's `transparent` repeats its source's line.
                if !msg.ends_with(&text) {
                    msg.push_str(": ");
                    msg.push_str(&text);
                }
                cause = c.source();
            }
            ShaderError::new(span, crate::error::printable(&msg))
        })
}

/// A function of `module` for a message: `function `f``, or for one
/// without a name, the entry point whose body it is (naga's SPIR-V reader
/// calls an entry point's function from a wrapper), else its index.
fn function_name(
    module: &naga::Module,
    handle: naga::Handle<naga::Function>,
    name: &str,
) -> String {
    if !name.is_empty() {
        return format!("function `{name}`");
    }
    let calls = |f: &naga::Function| {
        f.body
            .iter()
            .any(|s| matches!(s, naga::Statement::Call { function, .. } if *function == handle))
    };
    match module.entry_points.iter().find(|e| calls(&e.function)) {
        Some(e) => format!("the body of entry point `{}`", e.name),
        None => format!("function {} (it has no name)", handle.index()),
    }
}

/// What a shader's annotation lines say (docs/KERNEL.md §10.1): comment
/// lines `// KEYWORD ...;` in the litmus format's words, so that a shader
/// can carry its stated verdicts, and its launch, domain and initial
/// values (as the bare form `backends emit --bare` writes). The command
/// line's flags win over the launch lines.
#[derive(Clone, Debug, Default)]
pub struct Annotations {
    pub model: Option<crate::kernel::model::ScopedModel>,
    pub expect: Vec<crate::kernel::program::Expectation>,
    pub workgroups: Option<u8>,
    pub subgroup_size: Option<u8>,
    pub values: Option<u16>,
    /// `init NAME = v, ...;`: (line, variable, values); a value below 0
    /// is a two's complement one (docs/KERNEL.md §10.3).
    pub init: Vec<(usize, String, Vec<i32>)>,
    /// The number of workgroups and the subgroup size came from the TLA+
    /// forward-progress project's GLSL launch lines
    /// ([`glsl::launch_line`]), not from `//` lines.
    pub from_layout: (bool, bool),
}

/// Reads the annotation lines of `src`: `model M;`, `expect M:
/// P|F|deadlock;` (as in a litmus file, KERNEL.md §5.2), `workgroups W;`,
/// `subgroup_size S;`, `values V;` and `init NAME = v, v, ...;`, each a
/// `//` comment line of its own that ends with `;` (a comment that merely
/// starts with one of these words is prose, not an annotation); and the
/// GLSL launch lines of the TLA+ forward-progress project, which say the
/// same in its words ([`glsl::launch_line`]). Errors are (line, message).
pub fn read_annotations(src: &str) -> Result<Annotations, (usize, String)> {
    use crate::kernel::model::ScopedModel;
    use crate::kernel::program::{Expectation, Outcome};
    let mut a = Annotations::default();
    // The line each once-only keyword (and each `init` variable) was
    // given on: a second one is an error, as in a litmus file, never a
    // silent override.
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    for (n, line) in crate::locate::lines(src).enumerate() {
        let Some((kw, body, layout)) = annotation_of(line) else {
            continue;
        };
        match kw {
            "workgroups" => a.from_layout.0 |= layout,
            "subgroup_size" => a.from_layout.1 |= layout,
            _ => {}
        }
        let body = body.trim();
        let err = |m: String| (n + 1, m);
        let once = match kw {
            "model" | "workgroups" | "subgroup_size" | "values" => Some(kw.to_string()),
            "init" => body
                .split_once('=')
                .map(|(v, _)| format!("init {}", v.trim())),
            _ => None,
        };
        if let Some(key) = once {
            if let Some(first) = seen.get(&key) {
                return Err(err(format!(
                    "`{key}` is given twice (first on line {first})"
                )));
            }
            seen.insert(key, n + 1);
        }
        match kw {
            "model" => a.model = Some(ScopedModel::parse(body).map_err(err)?),
            "expect" => {
                let (m, o) = body
                    .rsplit_once(':')
                    .ok_or_else(|| err("expected `expect MODEL: P|F|deadlock;`".to_string()))?;
                let outcome = match o.trim() {
                    "P" => Outcome::P,
                    "F" => Outcome::F,
                    "deadlock" => Outcome::Deadlock,
                    w => return Err(err(format!("`{w}`: expected P, F or deadlock"))),
                };
                let model = ScopedModel::parse(m.trim()).map_err(err)?;
                a.expect.push(Expectation { model, outcome });
            }
            "workgroups" => a.workgroups = Some(number(body, 1, 8).map_err(err)? as u8),
            "subgroup_size" => a.subgroup_size = Some(number(body, 1, 128).map_err(err)? as u8),
            "values" => {
                let v = number(body, 2, 256).map_err(err)?;
                if !v.is_power_of_two() {
                    return Err(err(format!("values {v}: a power of two from 2 to 256")));
                }
                a.values = Some(v as u16);
            }
            "init" => {
                let (name, vs) = body
                    .split_once('=')
                    .ok_or_else(|| err("expected `init NAME = v, v, ...;`".to_string()))?;
                let vs = vs
                    .split(',')
                    .map(|v| match v.trim().parse::<i32>() {
                        Ok(x) if (-128..=255).contains(&x) => Ok(x),
                        _ => Err(format!(
                            "`{}`: expected a number from -128 to 255",
                            v.trim()
                        )),
                    })
                    .collect::<Result<Vec<i32>, String>>()
                    .map_err(err)?;
                a.init.push((n + 1, name.trim().to_string(), vs));
            }
            _ => {}
        }
    }
    Ok(a)
}

/// The keyword and body of an annotation line, and whether it is one of
/// the TLA+ project's GLSL launch lines ([`glsl::launch_line`]) rather
/// than a `// KEYWORD body;` comment.
fn annotation_of(line: &str) -> Option<(&str, &str, bool)> {
    if let Some((kw, body)) = glsl::launch_line(line) {
        return Some((kw, body, kw != "model"));
    }
    let rest = line.trim_start().strip_prefix("//")?;
    let (kw, body) = rest.trim().strip_suffix(';')?.split_once(' ')?;
    Some((kw, body, false))
}

/// A decimal number in `lo..=hi`.
fn number(s: &str, lo: u32, hi: u32) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("`{s}`: expected a number from {lo} to {hi}")),
    }
}

/// Why a domain does not hold an `init` value, and what to do.
fn init_bound(t: &Translation) -> String {
    let v = t.program.values;
    match (v == MAX_VALUES, t.sext) {
        (true, true) => format!("the kernel language's values are below {MAX_VALUES}, which as two's complement values are -128 to 127"),
        (true, false) => format!("the kernel language's values are below {MAX_VALUES}"),
        (false, true) => format!("raise --values (the domain is {v}, of two's complement values: those from its half up are negative)"),
        (false, false) => format!("raise --values (the domain is {v})"),
    }
}

/// Whether the domain of `t` holds the value `v`: below it, or, with two's
/// complement values, from minus half of it to below half (§10.3).
fn fits(t: &Translation, v: i32) -> bool {
    let values = i32::from(t.program.values);
    if t.sext {
        (-values / 2..values / 2).contains(&v)
    } else {
        (0..values).contains(&v)
    }
}

impl Annotations {
    /// Whether an `init` line gives a value below 0 (two's complement
    /// values hold it).
    fn has_negative_init(&self) -> bool {
        self.init.iter().any(|(_, _, vs)| vs.iter().any(|&v| v < 0))
    }

    /// Whether every `init` value fits the domain of `t`.
    fn init_fits(&self, t: &Translation) -> bool {
        self.init
            .iter()
            .all(|(_, _, vs)| vs.iter().all(|&v| fits(t, v)))
    }

    /// Sets the initial values of the `init` lines: each names a storage
    /// or workgroup variable of the shader (one the entry point uses: an
    /// unused one has no location, and its line is ignored) and gives one
    /// value per cell, each below the domain.
    fn initialise(&self, t: &mut Translation) -> Result<(), (usize, String)> {
        // What each line set: (location, its one cell or all, line).
        let mut set: Vec<(u8, Option<u16>, usize)> = Vec::new();
        for (line, name, vs) in &self.init {
            if let Some(&(_, k, cell)) = t.cells.iter().find(|(n, ..)| n == name) {
                init_cell(t, &mut set, (*line, name, vs), (k, cell))?;
                continue;
            }
            // A name two variables answer to (a member `x` of two blocks,
            // or `b_x` for both a block member and a shared variable) is
            // ambiguous: refused, never applied to one of them.
            let mut locs: Vec<u8> = t
                .names
                .iter()
                .filter(|(n, _)| n == name)
                .map(|&(_, k)| k)
                .collect();
            locs.sort_unstable();
            locs.dedup();
            if locs.len() > 1 {
                let which: Vec<String> = locs
                    .iter()
                    .map(|&k| format!("`{}`", t.program.locations[k as usize].name))
                    .collect();
                return Err((
                    *line,
                    format!(
                        "init `{name}`: the name of more than one variable ({}): ambiguous",
                        which.join(", ")
                    ),
                ));
            }
            let Some(&(_, k)) = t.names.iter().find(|(n, _)| n == name) else {
                if t.unused.contains(name) {
                    continue;
                }
                return Err((
                    *line,
                    format!("init `{name}`: no storage or workgroup variable of that name"),
                ));
            };
            if let Some(v) = vs.iter().find(|&&v| !fits(t, v)) {
                return Err((
                    *line,
                    format!(
                        "init `{name}`: value {v}: value bound exceeded: {}",
                        init_bound(t)
                    ),
                ));
            }
            let loc = &mut t.program.locations[k as usize];
            if vs.len() != loc.init.len() {
                return Err((
                    *line,
                    format!(
                        "init `{name}`: {} values for {} cells",
                        vs.len(),
                        loc.init.len()
                    ),
                ));
            }
            let v = i32::from(t.program.values);
            loc.init = vs.iter().map(|&x| x.rem_euclid(v) as u8).collect();
            set_once(&mut set, (k, None, *line), name)?;
        }
        Ok(())
    }
}

/// An `init` line (`line`, `name`, one value) that sets one cell `cell`
/// of the location `k`: an integer of an aliased buffer's view that is
/// another view's array cell.
fn init_cell(
    t: &mut Translation,
    set: &mut Vec<(u8, Option<u16>, usize)>,
    (line, name, vs): (usize, &str, &[i32]),
    (k, cell): (u8, u16),
) -> Result<(), (usize, String)> {
    let [x] = vs else {
        return Err((
            line,
            format!("init `{name}`: {} values for 1 cell", vs.len()),
        ));
    };
    if !fits(t, *x) {
        let msg = format!(
            "init `{name}`: value {x}: value bound exceeded: {}",
            init_bound(t)
        );
        return Err((line, msg));
    }
    let v = i32::from(t.program.values);
    t.program.locations[k as usize].init[cell as usize] = x.rem_euclid(v) as u8;
    set_once(set, (k, Some(cell), line), name)
}

/// Records that `line` set the cell (or, with `None`, every cell) of a
/// location; refuses a second line that sets a cell an earlier one set
/// (two names of one aliased word, or one name twice), never letting the
/// last line win.
fn set_once(
    set: &mut Vec<(u8, Option<u16>, usize)>,
    (k, cell, line): (u8, Option<u16>, usize),
    name: &str,
) -> Result<(), (usize, String)> {
    let clash = set
        .iter()
        .find(|&&(k2, c2, _)| k2 == k && (cell.is_none() || c2.is_none() || cell == c2));
    if let Some(&(_, _, first)) = clash {
        return Err((
            line,
            format!("init `{name}`: memory the init line at line {first} sets already (one variable, or two views of one buffer): give each word one value"),
        ));
    }
    set.push((k, cell, line));
    Ok(())
}
