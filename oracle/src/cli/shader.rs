//! The command line of shader inputs (issue 21, docs/KERNEL.md §10): the
//! launch flags every command takes, and `oracle translate`. Kept apart
//! from `main.rs` so that the command line's other parts stay as they are.

use crate::kernel::sentence::{Place, Places};
use clap::Args;
use progress_litmus::kernel::load::Item;
use progress_litmus::kernel::shader::{self, Launch};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How shader inputs (`.wgsl`, `.comp`, `.spv`) are launched; ignored for
/// other inputs.
#[derive(Args, Clone, Debug)]
pub struct LaunchArgs {
    /// Shaders: the number of workgroups (default: the shader's
    /// `// workgroups W;` line, else 2).
    #[arg(long, global = true, value_name = "W", value_parser = clap::value_parser!(u8).range(1..=8))]
    pub workgroups: Option<u8>,
    /// Shaders: invocations per workgroup (default: the shader's attribute).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=8))]
    pub workgroup_size: Option<u8>,
    /// Shaders: invocations per subgroup, the device's width (default: the
    /// shader's `// subgroup_size S;` line, else the workgroup in one
    /// subgroup, up to 4 lanes); a width of the workgroup size or more
    /// puts each workgroup in one subgroup.
    #[arg(long, global = true, value_name = "S", value_parser = clap::value_parser!(u8).range(1..=128))]
    pub subgroup_size: Option<u8>,
    /// Shaders: the compute entry point, where a module has several (default: each of them, a program of its own named `FILE.ENTRY`).
    #[arg(long, global = true, value_name = "NAME")]
    pub entry: Option<String>,
    /// Shaders: the value domain 2^b (default: the shader's `// values V;`
    /// line, else the least power of two, up to 256, above the shader's
    /// constants and W x N in which no step of any schedule wraps). A step
    /// whose 32-bit result differs from its b-bit one refuses the shader,
    /// never a verdict.
    #[arg(long, global = true, value_name = "V", value_parser = parse_values)]
    pub values: Option<u16>,
    /// Shaders: what GLSL and SPIR-V workgroup memory without an
    /// initializer holds at the start. `undefined`, as the languages say:
    /// a shader that may read it before writing it is refused. `zero`: the
    /// launch zeroes it (Vulkan's VK_KHR_zero_initialize_workgroup_memory,
    /// or a peer's stated input); every verdict line says so. WGSL always
    /// zero-initialises it.
    #[arg(long, global = true, value_name = "WHAT", value_enum, default_value_t = WorkgroupMemory::Undefined)]
    pub workgroup_memory: WorkgroupMemory,
    /// Shaders: how often WGSL's atomicCompareExchangeWeak may fail
    /// spuriously (fail although the value matched) on one run. `finite`:
    /// only finitely often, as C++ recommends of a weak compare-exchange
    /// (WGSL's text does not promise it); a retry loop then succeeds,
    /// but a single attempt may fail. `unbounded`: any number of times,
    /// all WGSL allows; a retry loop may then fail forever. Every verdict
    /// line of a shader with one says which. SPIR-V's and GLSL's
    /// compare-exchanges are strong.
    #[arg(long, global = true, value_name = "HOW", value_enum, default_value_t = SpuriousFailures::Finite)]
    pub spurious_failures: SpuriousFailures,
    /// Shaders with subgroups of two or more: how the invocations of a
    /// subgroup are scheduled. `hardware` (default): a verdict is P only
    /// if it holds both in lockstep (reconvergence at the immediate
    /// post-dominator, as SIMT GPUs without independent scheduling do)
    /// and under fair independent scheduling; Vulkan, SPIR-V, WGSL and
    /// GLSL promise neither. `fair`: fairly only, as CUDA's independent
    /// thread scheduling promises (Volta and later). `--model "M,
    /// subgroup=S"` names any other.
    #[arg(long, global = true, value_name = "HOW", value_enum, default_value_t = SubgroupScheduling::Hardware)]
    pub subgroup_scheduling: SubgroupScheduling,
}

/// `--subgroup-scheduling`: how the invocations of a subgroup are
/// scheduled.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubgroupScheduling {
    Hardware,
    Fair,
}

/// `--spurious-failures`: how often a weak compare-exchange may fail
/// spuriously on a run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpuriousFailures {
    Finite,
    Unbounded,
}

/// `--workgroup-memory`: what uninitialised workgroup memory holds.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkgroupMemory {
    Undefined,
    Zero,
}

fn parse_values(s: &str) -> Result<u16, String> {
    let v: u16 = s.parse().map_err(|e| format!("`{s}`: {e}"))?;
    if !(2..=256).contains(&v) || !v.is_power_of_two() {
        return Err(format!("{v}: a power of two from 2 to 256"));
    }
    Ok(v)
}

static LAUNCH: OnceLock<Launch> = OnceLock::new();

/// Records the launch of this run (once, before any input is read).
/// `structured`: keep the shaders' structured control flow for a
/// SIMT-Step model ([`Launch::structured`]).
pub fn set_launch(a: &LaunchArgs, max_states: usize, structured: bool) {
    let _ = LAUNCH.set(Launch {
        workgroups: a.workgroups,
        workgroup_size: a.workgroup_size,
        subgroup_size: a.subgroup_size,
        entry: a.entry.clone(),
        values: a.values,
        max_states,
        zero_workgroup_memory: a.workgroup_memory == WorkgroupMemory::Zero,
        spurious_finite: a.spurious_failures == SpuriousFailures::Finite,
        fair_subgroups: a.subgroup_scheduling == SubgroupScheduling::Fair,
        simplify: true,
        structured,
    });
}

/// The launch of this run.
pub fn launch() -> &'static Launch {
    LAUNCH.get_or_init(Launch::default)
}

/// Prints the shaders' translation warnings on standard error.
pub fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
}

/// `oracle translate SHADER`: the kernel program the oracle decides for
/// the shader, as litmus text with the shader's lines as comments.
pub fn translate(path: &Path) -> Result<String, String> {
    let shown = progress_litmus::error::printable(&path.to_string_lossy());
    if !shader::is_shader_ext(path.extension().and_then(|e| e.to_str()).unwrap_or("")) {
        return Err(format!(
            "{shown}: not a shader: expected a .wgsl, .comp or .spv file"
        ));
    }
    let limit = progress_litmus::io::max_input_bytes().map_err(|e| format!("{shown}: {e}"))?;
    let bytes = progress_litmus::io::read_bytes_limited(path, limit).map_err(|e| e.to_string())?;
    let t = shader::translate(path, &bytes, launch()).map_err(|e| e.to_string())?;
    warn(
        &t.warnings
            .iter()
            .map(|w| format!("{shown}: {w}"))
            .collect::<Vec<_>>(),
    );
    Ok(shader::print::annotated(&t, &shown))
}

/// The translation of a shader input, again (the loaded program keeps no
/// spans); none for other inputs or when it fails (it did not when the
/// input was loaded).
fn translation(source: &Path) -> Option<shader::Translation> {
    let ext = source.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !shader::is_shader_ext(ext) {
        return None;
    }
    let limit = progress_litmus::io::max_input_bytes().ok()?;
    let bytes = progress_litmus::io::read_bytes_limited(source, limit).ok()?;
    shader::translate(source, &bytes, launch()).ok()
}

/// `oracle explain` on a shader speaks of the shader: its lines in the
/// listing and after each witness step (other inputs: the text as is).
pub fn in_shader_terms(source: &Path, text: String) -> String {
    let Some(t) = translation(source) else {
        return text;
    };
    let file = progress_litmus::error::printable(&source.to_string_lossy());
    shader::print::explain_in_shader_terms(&t, &file, &text)
}

/// Where each instruction of an input is in the user's source: a
/// shader's line, column and line text, else the program's own positions
/// (a `.litmus` file's), else nothing.
pub fn places(item: &Item) -> Places {
    let program = item.program();
    let Some(t) = translation(item.source()) else {
        return Places::of_program(&program);
    };
    let at = |pc: usize| {
        let r = t.spans.get(pc)?.to_range()?;
        let (line, col) = shader::line_col(&t.source, r.start as u32);
        let text = shader::source_line(&t.source, line)?.to_string();
        (line > 0).then_some(Place {
            line,
            col,
            text: Some(text),
        })
    };
    Places(
        program
            .codes
            .iter()
            .map(|c| (0..c.instrs.len()).map(at).collect())
            .collect(),
    )
}

/// The paths argument of `translate` (one shader).
pub type ShaderPath = PathBuf;
