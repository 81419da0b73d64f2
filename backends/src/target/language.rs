//! The languages the targets write, as objects: what an emitter asks of a
//! language, so that the AXB emitters ([`crate::target::codegen`]) and the
//! kernel emitter ([`crate::target::kernel`]) spell a language the same way
//! and a new language is one file.
//!
//! [`Language`] is what every target's language answers (the AXB tests'
//! exchange and load, the statement syntax); [`KernelLanguage`] adds what
//! a kernel program needs on a GPU (every read-modify-write, barriers,
//! ids, collectives, the files of the run and SIMT forms), and
//! [`BareLanguage`] the bare (verification) form's spelling where the
//! oracle reads the language back. Each object lives in its
//! language's file, beside that language's AXB emitter: `cuda::Cuda`,
//! `glsl::Glsl`, `wgsl::Wgsl` (the kernel traits too), `metal::Metal`
//! and `cpp::Cpp` (AXB tests only). The traits know no emitter (they take
//! strings and numbers), so the files of the languages depend on this one
//! and on nothing that uses them.

use progress_litmus::kernel::program::{CollectiveOp, RmwOp};

/// The statement syntax a target's code is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// C, C++, CUDA, GLSL, Metal: `x ? a : b`, `case 0u:` arms ending in
    /// `break;`, `if (c) break;`.
    C,
    /// WGSL: `select(b, a, x)`, `case 0u: { ... }` arms (no fall-through)
    /// and a `default` arm, braces around every `if` body.
    Wgsl,
}

/// A language's spelling of what every target writes.
pub trait Language: Sync {
    /// The name the command line gives it (`cuda`, `glsl`, ...).
    fn name(&self) -> &'static str;
    /// The statement syntax of its code.
    fn syntax(&self) -> Syntax;
    /// The prefix that discards a value in an expression statement
    /// (`(void)` in the C family, `_ = ` in WGSL); empty where a bare
    /// expression statement needs none (GLSL).
    fn discard(&self) -> &'static str;
    /// Atomic exchange of the word `cell` (an lvalue: `mem[3u]`) with `v`,
    /// as an expression of the old value.
    fn exchange(&self, cell: &str, v: &str) -> String;
    /// Atomic add of `v` to the word `cell`, as an expression of the old
    /// value (an add of `0u` is how the AXB tests load: paper §6.2).
    fn fetch_add(&self, cell: &str, v: &str) -> String;
}

/// An atomic operation of a kernel program on a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Atomic {
    Load,
    Store,
    Exchange,
    CompareExchange,
    Fetch(RmwOp),
}

/// What a kernel program on a GPU needs of its language, beyond
/// [`Language`]: its run form (the termination detection, how an
/// invocation ended, the file around a kernel) and its SIMT form.
pub trait KernelLanguage: Language {
    /// The emitted file's extension.
    fn extension(&self) -> &'static str;
    /// The language and its API, in messages (`GLSL/Vulkan`).
    fn title(&self) -> &'static str;
    /// Atomic `op` on the word `cell` (an lvalue) with `args` (the value;
    /// the expected and the new value of a compare-exchange), as an
    /// expression: the old value, except for a store, and except for
    /// WGSL's compare-exchange, whose result has the old value in
    /// `.old_value`.
    fn atomic(&self, op: Atomic, cell: &str, args: &[&str]) -> String;
    /// The largest subgroup the API allows (a CUDA warp; 128 in Vulkan
    /// and WebGPU): what the SIMT form pads a program subgroup to.
    fn max_subgroup(&self) -> usize;
    /// The largest workgroup the SIMT form launches: CUDA's 1024, Vulkan's
    /// `maxComputeWorkGroupSize.x` on every desktop device and lavapipe
    /// (1024; 128 is the required minimum), WebGPU's default limit (256).
    fn max_workgroup(&self) -> usize;
    /// The workgroup barrier statement.
    fn barrier(&self) -> &'static str;
    /// Why a barrier that a jump crosses cannot be emitted, if it cannot.
    fn crossed_barrier_refusal(&self) -> Option<&'static str> {
        None
    }
    /// Why a collective over subgroups of `s` invocations in workgroups of
    /// `n` cannot be emitted in the run form, if it cannot.
    fn collective_refusal(&self, n: usize, s: usize) -> Option<String>;
    /// The first statement of each dispatch loop iteration of the run
    /// form: leave (setting `left`) when the run is to stop.
    fn stop(&self) -> &'static str;
    /// The ids, for subgroups of `s` invocations.
    fn ids(&self, s: usize) -> String;
    /// What collectives over subgroups of `s` invocations need after the
    /// ids (the run form).
    fn subgroup_setup(&self, s: usize) -> String;
    /// The note of the header on how the run form's collectives take the
    /// program's subgroups; `{comment}` stands for the comment marker
    /// starting its second line.
    fn collectives_note(&self) -> &'static str;
    /// The run form's value of collective `op` of `v` over the program's
    /// subgroups of `s` invocations; statements it needs first go to `out`.
    fn collective(&self, op: CollectiveOp, v: &str, s: usize, out: &mut String) -> String;
    /// The dispatch state of the run form: `pc`, `left` and any budget.
    fn run_state(&self) -> &'static str;
    /// The statement that counts how the invocation ended (`left`: stopped).
    fn count_end(&self) -> &'static str;
    /// The statement that sets shared word `cell` to `v` (before a barrier).
    fn shared_store(&self, cell: usize, v: u16) -> String;
    /// The run form's file around the kernel's body.
    fn kernel_file(&self, f: &KernelFile) -> String;

    /// The SIMT form's statement setting register `dst` to collective `op`
    /// of `v` over the lanes that execute it together (the SIMT-Step
    /// paper's Property 1).
    fn active_collective(&self, op: CollectiveOp, dst: u8, v: &str) -> String;
    /// The SIMT form's device lane, device subgroup and workgroup id, and
    /// the check that leaves (counted `unsupported`) where the device's
    /// subgroups are narrower than the program's `s` lanes.
    fn simt_lanes(&self, s: usize) -> (String, String);
    /// The SIMT form's state: `left` and the loop budget.
    fn simt_state(&self) -> &'static str;
    /// The SIMT form's file around its body.
    fn simt_file(&self, f: &SimtFile) -> String;

    /// The bare (verification) form's spelling, where the language has
    /// one: a shader the oracle's frontend reads back (GLSL and WGSL).
    fn bare(&self) -> Option<&'static dyn BareLanguage> {
        None
    }
}

/// The bare (verification) form of a kernel program in a shading
/// language (`kernel/bare.rs`): one variable a location, the launch in
/// comment lines.
pub trait BareLanguage: Sync {
    /// What the file starts with (`#version 450`).
    fn prologue(&self) -> &'static str;
    /// What a program with collectives adds after its comment lines.
    fn subgroup_enable(&self) -> &'static str;
    /// Whether workgroup memory starts undefined and takes no
    /// initializer (GLSL's `shared`), so that its `init` line is written
    /// even where it is all zeros.
    fn shared_starts_undefined(&self) -> bool;
    /// The declaration of location `name` (`len` words, an array when
    /// `array`), in workgroup memory when `shared`, else storage buffer
    /// `binding`: one or more lines, each ending in a newline.
    fn declaration(
        &self,
        name: &str,
        len: usize,
        array: bool,
        shared: bool,
        binding: usize,
    ) -> String;
    /// The built-in workgroup id and local invocation id (their x).
    fn builtin_ids(&self) -> (&'static str, &'static str);
    /// The declarations of `pc` (and where needed of `v`) before the
    /// registers.
    fn state(&self) -> &'static str;
    /// The entry point of a workgroup of `n` around `body` (indented).
    fn entry_point(&self, n: usize, body: &str) -> String;
}

/// What a kernel file is made of: computed once by the kernel emitter,
/// assembled by the language.
pub struct KernelFile<'a> {
    /// The program's name.
    pub name: &'a str,
    /// The `axb-kernel:` first line and the comment block after it.
    pub run_line: String,
    pub header: String,
    /// The kernel's body, not indented.
    pub body: String,
    pub workgroups: usize,
    pub workgroup_size: usize,
    /// Words of the global memory, and their initial values (`0u`, ...).
    pub global_words: usize,
    pub init_words: Vec<String>,
    /// Words of workgroup memory (at least 1).
    pub shared_words: usize,
    /// Whether the program takes collectives.
    pub collectives: bool,
}

/// `fetch_*`'s name in the atomics of the C family, GLSL and WGSL
/// (`atomicAdd`, ...).
pub fn rmw_suffix(op: RmwOp) -> &'static str {
    match op {
        RmwOp::Add => "Add",
        RmwOp::Sub => "Sub",
        RmwOp::And => "And",
        RmwOp::Or => "Or",
        RmwOp::Xor => "Xor",
        RmwOp::Min => "Min",
        RmwOp::Max => "Max",
    }
}

/// What a SIMT-form file is made of (`kernel/simt.rs`), assembled by the
/// language.
pub struct SimtFile<'a> {
    pub name: &'a str,
    /// The `// axb-simt:` first line and the comment block after it.
    pub first_line: String,
    pub comment: String,
    /// The kernel's body, not indented.
    pub body: String,
    /// Invocations a workgroup is launched with (program subgroups padded
    /// to [`KernelLanguage::max_subgroup`] lanes).
    pub launch: usize,
    pub workgroups: usize,
    /// The program's invocations, all workgroups together.
    pub invocations: usize,
    pub global_words: usize,
    pub init_words: Vec<String>,
    /// Words of the registers' output (every invocation's registers).
    pub reg_words: usize,
    pub values: u16,
    /// Loop iterations an invocation may spend in a run.
    pub budget: u32,
    /// The observed terms: name, read from the registers (else memory),
    /// index.
    pub observed: Vec<(String, bool, usize)>,
}

/// The languages a kernel program is emitted in; `kernel::Lang::language`
/// gives each one's object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    Cuda,
    Glsl,
    Wgsl,
}

/// How a kernel program's CUDA and WGSL file begins (GLSL: the line after `#version`).
pub const KERNEL_FIRST_LINE: &str = "// axb-kernel:";

/// How a SIMT form file begins (GLSL: the line after `#version`).
pub const SIMT_FIRST_LINE: &str = "// axb-simt:";
