//! The wgpu runner, `backends-wgpu`: the WGSL shaders of
//! [`crate::target::wgsl`] run natively on Vulkan, Metal or D3D12 through
//! the `wgpu` crate, the way the webgpu page runs them in a browser, so a
//! macOS user runs a suite without the Swift harness and a Linux or Windows
//! user without a C++ toolchain. Built with the cargo feature `wgpu`
//! (`cargo build --release -p backends --features wgpu`); `backends run
//! --target wgpu` uses it.
//!
//! Its command line and JSON result lines are those of the Vulkan host
//! (`vkrun`, [`crate::target::vulkan`]) and the C++ and CUDA programs
//! ([`crate::target::host`]): `--shaders DIR` (the `.wgsl` files of
//! `backends emit --target wgsl`), `--test`, `--mapping`, `--instances`,
//! `--iterations`, `--deadline-ms`, `--list`, `--device`, `--info`,
//! `--no-canary`. As in the page, there is no stop flag: the deadline is
//! kept by the iteration budget, calibrated at start into `--deadline-ms`
//! per spinning run, and the canary (one thread waiting for a write nobody
//! makes) must spend its budget, or the device is refused: Mesa's
//! lavapipe, for one, leaves every loop after 65535 iterations.

use crate::mapping::Mapping;
use crate::target::webgpu;
use crate::target::wgsl::{BINDING_ENDS, BINDING_MEMORY, BINDING_PARAMS};
use clap::Parser;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "backends-wgpu",
    about = "Runs progress litmus tests (the WGSL shaders of `backends emit --target wgsl`) on a GPU with wgpu (Vulkan, Metal, D3D12) and prints one JSON line per run.",
    after_help = "Before any run the runner calibrates the iteration budget into --deadline-ms per spinning run and dispatches a canary, one thread waiting for a write nobody makes: if the device ends it, the device leaves loops by itself (lavapipe does, after 65535 iterations) and its runs cannot show non-termination, so the runner refuses it."
)]
pub struct Args {
    /// The directory of NAME.MAPPING.wgsl shaders.
    #[arg(long, value_name = "DIR")]
    pub shaders: Option<PathBuf>,
    /// Tests to run (default: all, by file name; see --list).
    #[arg(long = "test", value_delimiter = ',', value_name = "NAME")]
    pub tests: Vec<String>,
    /// plain, round-robin, chunked, all (default: every mapping with shaders).
    #[arg(long = "mapping", value_delimiter = ',', value_name = "LIST")]
    pub mappings: Vec<String>,
    /// Must equal the instances the shaders were emitted for.
    #[arg(long)]
    pub instances: Option<u32>,
    /// Runs of each test and mapping.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub iterations: u32,
    /// Time of a spinning run: the budget is calibrated to it; a run whose
    /// budget is spent is reported non-terminating.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub deadline_ms: u64,
    /// Print the selected tests, name and thread count.
    #[arg(long)]
    pub list: bool,
    /// Adapter index, in wgpu's order (see --info).
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Print the device, the calibration and the canary as JSON and exit.
    #[arg(long)]
    pub info: bool,
    /// Run even if the device ends loops by itself (testing the runner only).
    #[arg(long)]
    pub no_canary: bool,
}

/// Why the runner stopped: the message and the exit status (2 bad input,
/// 1 device).
type Fail = progress_litmus::exit::Failure;

fn device_err(msg: impl Into<String>) -> Fail {
    Fail::other(msg)
}

fn input_err(msg: impl Into<String>) -> Fail {
    Fail::input(msg)
}

/// A shader file: its `axb-run:` line and source.
struct Shader {
    test: String,
    mapping: Mapping,
    instances: u32,
    workgroups: u32,
    words: u64,
    source: String,
    path: PathBuf,
}

/// Parses the `// axb-run: ...` first line of a shader.
fn parse_shader(path: &Path, source: String) -> Result<Shader, Fail> {
    let first = source.lines().next().unwrap_or("");
    let bad = || {
        input_err(format!(
            "{}:1: not a shader of `backends emit --target wgsl` (no `// axb-run:` line)",
            path.display()
        ))
    };
    let rest = first.strip_prefix("// axb-run: ").ok_or_else(bad)?;
    let (fields, test) = rest.split_once(" test=").ok_or_else(bad)?;
    let mut kv = BTreeMap::new();
    for f in fields.split(' ') {
        let (k, v) = f.split_once('=').ok_or_else(bad)?;
        kv.insert(k, v);
    }
    let num =
        |k: &str| -> Result<u64, Fail> { kv.get(k).and_then(|v| v.parse().ok()).ok_or_else(bad) };
    let mapping: Mapping = kv
        .get("mapping")
        .ok_or_else(bad)?
        .parse()
        .map_err(|e: String| input_err(format!("{}:1: {e}", path.display())))?;
    let workgroups = num("workgroups")?;
    if workgroups > crate::mapping::MAX_WORKGROUPS as u64 {
        return Err(input_err(format!(
            "{}:1: {workgroups} workgroups exceed the 65535 a dispatch may have",
            path.display()
        )));
    }
    Ok(Shader {
        test: test.to_string(),
        mapping,
        instances: num("instances")? as u32,
        workgroups: workgroups as u32,
        words: num("words")?,
        source,
        path: path.to_path_buf(),
    })
}

/// The counters of one run and its time.
#[derive(Clone, Copy, Debug)]
struct Outcome {
    exhausted: u32,
    stopped: u32,
    finished: u32,
    early: u32,
    elapsed_ms: f64,
}

/// A device and the buffers every run uses.
struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    max_workgroups: u32,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    ends: wgpu::Buffer,
    params: wgpu::Buffer,
    readback: wgpu::Buffer,
    mem: Option<(wgpu::Buffer, u64, wgpu::BindGroup)>,
    lost: Arc<Mutex<Option<String>>>,
}

impl Gpu {
    fn open(index: usize) -> Result<(Gpu, Vec<wgpu::AdapterInfo>), Fail> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let mut adapters = pollster::block_on(instance.enumerate_adapters(
            wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12,
        ));
        let all: Vec<wgpu::AdapterInfo> = adapters.iter().map(|a| a.get_info()).collect();
        if adapters.is_empty() {
            return Err(device_err(
                "no Vulkan, Metal or D3D12 adapter found: install a GPU driver (Debian: mesa-vulkan-drivers)",
            ));
        }
        if index >= adapters.len() {
            return Err(input_err(format!(
                "--device {index}: there are {} adapters (0 to {})",
                adapters.len(),
                adapters.len() - 1
            )));
        }
        let adapter = adapters.swap_remove(index);
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("axb"),
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| device_err(format!("the adapter gave no device: {e}")))?;
        let lost = Arc::new(Mutex::new(None));
        let l = lost.clone();
        device.set_device_lost_callback(move |reason, msg| {
            *l.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{reason:?}: {msg}"));
        });
        let (layout, pipeline_layout) = layouts(&device);
        let buffer = |usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 16,
                usage,
                mapped_at_creation: false,
            })
        };
        use wgpu::BufferUsages as U;
        let ends = buffer(U::STORAGE | U::COPY_SRC | U::COPY_DST);
        let params = buffer(U::UNIFORM | U::COPY_DST);
        let readback = buffer(U::MAP_READ | U::COPY_DST);
        Ok((
            Gpu {
                info: adapter.get_info(),
                max_workgroups: limits.max_compute_workgroups_per_dimension,
                device,
                queue,
                layout,
                pipeline_layout,
                ends,
                params,
                readback,
                mem: None,
                lost,
            },
            all,
        ))
    }

    fn lost(&self) -> Option<String> {
        self.lost.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Runs `body` inside validation and out-of-memory error scopes.
    fn scoped<T>(&self, what: &str, body: impl FnOnce() -> Result<T, Fail>) -> Result<T, Fail> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = body();
        let errors = [
            pollster::block_on(validation.pop()),
            pollster::block_on(oom.pop()),
        ];
        if let Some(l) = self.lost() {
            return Err(device_err(format!(
                "the device was lost ({l}) while {what}"
            )));
        }
        if let Some(e) = errors.into_iter().flatten().next() {
            return Err(device_err(format!("{what}: {e}")));
        }
        value
    }

    fn pipeline(&self, s: &Shader) -> Result<wgpu::ComputePipeline, Fail> {
        self.scoped(&format!("compiling {}", s.path.display()), || {
            let module = self
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&s.test),
                    source: wgpu::ShaderSource::Wgsl(s.source.as_str().into()),
                });
            Ok(self
                .device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&s.test),
                    layout: Some(&self.pipeline_layout),
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                }))
        })
    }

    fn memory(&mut self, words: u64) -> &wgpu::BindGroup {
        let words = words.max(1);
        if self.mem.as_ref().is_none_or(|(_, w, _)| *w < words) {
            let mem = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("test memory"),
                size: words * 4,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &self.layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: BINDING_MEMORY,
                        resource: mem.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: BINDING_ENDS,
                        resource: self.ends.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: BINDING_PARAMS,
                        resource: self.params.as_entire_binding(),
                    },
                ],
            });
            self.mem = Some((mem, words, group));
        }
        &self.mem.as_ref().expect("made above").2
    }

    /// One run of `pipeline` (shader `s`) with `budget` iterations per thread.
    fn run(
        &mut self,
        s: &Shader,
        pipeline: &wgpu::ComputePipeline,
        budget: u32,
    ) -> Result<Outcome, Fail> {
        let what = format!("running {} ({})", s.test, s.mapping);
        let group = self.memory(s.words).clone();
        let (mem, words) = {
            let (b, w, _) = self.mem.as_ref().expect("made by memory()");
            (b.clone(), *w)
        };
        let outcome = self.scoped(&what, || {
            self.queue.write_buffer(
                &self.params,
                0,
                &[budget.to_le_bytes(), [0; 4], [0; 4], [0; 4]].concat(),
            );
            let mut enc = self.device.create_command_encoder(&Default::default());
            enc.clear_buffer(&mem, 0, Some(words * 4));
            enc.clear_buffer(&self.ends, 0, None);
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, &group, &[]);
                pass.dispatch_workgroups(s.workgroups, 1, 1);
            }
            enc.copy_buffer_to_buffer(&self.ends, 0, &self.readback, 0, 16);
            let t0 = Instant::now();
            self.queue.submit([enc.finish()]);
            let (tx, rx) = mpsc::channel();
            self.readback
                .slice(..)
                .map_async(wgpu::MapMode::Read, move |r| {
                    let _ = tx.send(r);
                });
            // The budget ends every run; allow a slow device 30 s plus 1 ms
            // per workgroup beyond the deadline before calling it stuck.
            let grace = Duration::from_millis(30_000 + s.workgroups as u64);
            self.device
                .poll(wgpu::PollType::Wait {
                    submission_index: None,
                    timeout: Some(grace),
                })
                .map_err(|e| device_err(format!("{what}: waiting for the dispatch: {e}")))?;
            let elapsed_ms = t0.elapsed().as_secs_f64() * 1000.0;
            let c = self.read_back(&what, &rx)?;
            Ok(Outcome {
                exhausted: c[0],
                stopped: c[1],
                finished: c[2],
                early: c[3],
                elapsed_ms,
            })
        })?;
        let sum = outcome.exhausted as u64
            + outcome.stopped as u64
            + outcome.finished as u64
            + outcome.early as u64;
        if sum != s.workgroups as u64 {
            return Err(device_err(format!(
                "{what}: {sum} of {} workgroups reported how they ended ({outcome:?}): the device did not run the whole dispatch",
                s.workgroups
            )));
        }
        Ok(outcome)
    }

    /// The four counters of a run, once the mapping of the readback buffer
    /// (requested before the wait) has arrived on `rx`: a mapping that
    /// fails or never comes is the device's error, not a hang.
    fn read_back(
        &self,
        what: &str,
        rx: &mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
    ) -> Result<Vec<u32>, Fail> {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(device_err(format!("{what}: reading the result back: {e}"))),
            Err(_) => {
                return Err(device_err(format!(
                    "{what}: the result was never read back"
                )))
            }
        }
        let c: Vec<u32> = {
            let view = self
                .readback
                .slice(..)
                .get_mapped_range()
                .map_err(|e| device_err(format!("{what}: reading the result back: {e}")))?;
            view.chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        };
        self.readback.unmap();
        Ok(c)
    }
}

/// The bind group layout every shader of `backends emit --target wgsl`
/// declares (memory, ends, params; see [`crate::target::wgsl`]) and the
/// pipeline layout of it, made once per device.
fn layouts(device: &wgpu::Device) -> (wgpu::BindGroupLayout, wgpu::PipelineLayout) {
    let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let storage = wgpu::BufferBindingType::Storage { read_only: false };
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[
            entry(BINDING_MEMORY, storage),
            entry(BINDING_ENDS, storage),
            entry(BINDING_PARAMS, wgpu::BufferBindingType::Uniform),
        ],
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    (layout, pipeline_layout)
}

/// The calibration: a budget for spinning runs of about `target_ms`, found
/// with the wide canary (65535 workgroups, every one waiting), as the
/// webgpu page finds it.
fn calibrate(gpu: &mut Gpu, wide: &Shader, target_ms: u64) -> Result<Value, Fail> {
    let p = gpu.pipeline(wide)?;
    // A first dispatch may compile lazily: not part of the overhead.
    gpu.run(wide, &p, 1)?;
    let mut budget: u64 = 1024;
    let mut r = gpu.run(wide, &p, budget as u32)?;
    let overhead = r.elapsed_ms;
    let target = target_ms as f64;
    while r.elapsed_ms < (target / 4.0).max(overhead * 4.0) && budget < u32::MAX as u64 {
        let grow = if r.elapsed_ms > 0.0 {
            (target / 2.0 / r.elapsed_ms).clamp(2.0, 16.0)
        } else {
            16.0
        };
        budget = ((budget as f64 * grow).ceil() as u64).min(u32::MAX as u64);
        r = gpu.run(wide, &p, budget as u32)?;
        if r.exhausted == 0 {
            break; // the canary ended: the canary check says why
        }
    }
    let rate = budget as f64 / (r.elapsed_ms - overhead).max(r.elapsed_ms / 4.0).max(0.001);
    let chosen = (rate * target).round().clamp(1.0, u32::MAX as f64) as u32;
    let check = gpu.run(wide, &p, chosen)?;
    Ok(json!({
        "target_ms": target_ms,
        "budget": chosen,
        "iterations_per_ms": rate.round(),
        "overhead_ms": (overhead * 1000.0).round() / 1000.0,
        "run_ms": (check.elapsed_ms * 1000.0).round() / 1000.0,
        "exhausted": check.exhausted > 0,
    }))
}

fn shader_of(name: &str, source: String) -> Shader {
    parse_shader(Path::new(name), source).expect("the built-in canary has a run line")
}

/// The shaders of `dir`, keyed by (test, mapping).
fn load_shaders(dir: &Path) -> Result<BTreeMap<(String, Mapping), Shader>, Fail> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| input_err(format!("{}: cannot read: {e}", dir.display())))?;
    let mut out = BTreeMap::new();
    for e in entries {
        let path = e
            .map_err(|e| input_err(format!("{}: {e}", dir.display())))?
            .path();
        if path.extension().is_none_or(|x| x != "wgsl") {
            continue;
        }
        let source = std::fs::read_to_string(&path)
            .map_err(|e| input_err(format!("{}: cannot read: {e}", path.display())))?;
        let s = parse_shader(&path, source)?;
        if let Some(first) = out.insert((s.test.clone(), s.mapping), s) {
            return Err(input_err(format!(
                "{}: a second shader for test {} under {}",
                first.path.display(),
                first.test,
                first.mapping
            )));
        }
    }
    if out.is_empty() {
        return Err(input_err(format!("no .wgsl shaders in {}", dir.display())));
    }
    Ok(out)
}

/// The runner's steps: the shaders and the selection checked before a
/// device is opened (`--list` needs none), then the canary and the
/// calibration (`--info` stops there), then the runs.
fn run(args: &Args) -> Result<(), Fail> {
    let shaders = match &args.shaders {
        Some(dir) => load_shaders(dir)?,
        None if args.info => BTreeMap::new(),
        None => {
            return Err(input_err(
                "--shaders DIR is required (the .wgsl files of `backends emit --target wgsl`)",
            ))
        }
    };
    let (names, mappings) = select(args, &shaders)?;
    if args.list {
        for n in &names {
            let threads = mappings
                .first()
                .and_then(|m| shaders.get(&(n.clone(), *m)))
                .map_or(0, |s| s.workgroups / s.instances.max(1));
            println!("{n}\t{threads}");
        }
        return Ok(());
    }

    let (mut gpu, adapters) = Gpu::open(args.device)?;
    for s in shaders.values() {
        if s.workgroups > gpu.max_workgroups {
            return Err(input_err(format!(
                "{}: {} workgroups exceed the device's {} per dimension: emit with fewer --instances",
                s.path.display(),
                s.workgroups,
                gpu.max_workgroups
            )));
        }
    }
    let (canary, calibration) = canary_and_calibration(args, &mut gpu)?;
    let budget = calibration["budget"].as_u64().expect("set by calibrate") as u32;
    if args.info {
        let info = &gpu.info;
        println!(
            "{}",
            json!({
                "device": info.name, "index": args.device, "backend": format!("{:?}", info.backend).to_lowercase(),
                "device_type": format!("{:?}", info.device_type), "vendor_id": info.vendor, "device_id": info.device,
                "driver_name": info.driver, "driver_info": info.driver_info, "max_workgroups_x": gpu.max_workgroups,
                "adapters": adapters.iter().map(|a| format!("{} ({:?})", a.name, a.backend)).collect::<Vec<_>>(),
                "calibration": calibration, "canary": canary,
            })
        );
        return Ok(());
    }
    run_selected(args, &mut gpu, &shaders, (&names, &mappings), budget)
}

/// The selection: tests in name order (all, or `--test`), mappings in
/// their order (`--mapping`, or those some selected test has a shader
/// for); every pair must have a shader, emitted for `--instances` if
/// given, so that a campaign never silently runs less than it asked for.
fn select(
    args: &Args,
    shaders: &BTreeMap<(String, Mapping), Shader>,
) -> Result<(Vec<String>, Vec<Mapping>), Fail> {
    let mut names: Vec<String> = shaders.keys().map(|(t, _)| t.clone()).collect();
    names.dedup();
    if !args.tests.is_empty() {
        for t in &args.tests {
            if !names.contains(t) {
                return Err(input_err(format!("no shader for test `{t}` (see --list)")));
            }
        }
        names.retain(|n| args.tests.contains(n));
    }
    let mut mappings: Vec<Mapping> = Vec::new();
    for m in &args.mappings {
        if m == "all" {
            mappings.extend(Mapping::ALL);
        } else {
            mappings.push(m.parse().map_err(input_err)?);
        }
    }
    if mappings.is_empty() {
        mappings = Mapping::ALL.to_vec();
        mappings.retain(|m| names.iter().any(|n| shaders.contains_key(&(n.clone(), *m))));
    }
    mappings.sort();
    mappings.dedup();
    for n in &names {
        for m in &mappings {
            let Some(s) = shaders.get(&(n.clone(), *m)) else {
                return Err(input_err(format!("no shader for test {n} under {m}")));
            };
            if let (Some(want), true) = (args.instances, *m != Mapping::Plain) {
                if want != s.instances {
                    return Err(input_err(format!(
                        "{}: emitted for {} instances, not --instances {want}: emit again with --instances",
                        s.path.display(),
                        s.instances
                    )));
                }
            }
        }
    }
    Ok((names, mappings))
}

/// The canary first, at the least budget, so a device that ends loops
/// after a fixed count is refused before the calibration; then again at
/// the calibrated budget, if that is more. Returns the canary's last
/// check and the calibration.
fn canary_and_calibration(args: &Args, gpu: &mut Gpu) -> Result<(Value, Value), Fail> {
    let (plain, wide) = webgpu::canaries(crate::target::codegen::Shape::Switch);
    let wide = shader_of("axb-canary.round-robin.wgsl", wide);
    let plain = shader_of("axb-canary.plain.wgsl", plain);
    let p = gpu.pipeline(&plain)?;
    let mut canary = check_canary(args, gpu, (&plain, &p), webgpu::CANARY_MIN_BUDGET)?;
    let calibration = calibrate(gpu, &wide, args.deadline_ms)?;
    let budget = calibration["budget"].as_u64().expect("set by calibrate") as u32;
    if budget > webgpu::CANARY_MIN_BUDGET {
        canary = check_canary(args, gpu, (&plain, &p), budget)?;
    }
    Ok((canary, calibration))
}

/// One run of the canary, one thread waiting for a write nobody makes:
/// it must spend its whole budget, or the device leaves loops by itself
/// and no run on it can show non-termination (an error, or with
/// `--no-canary` a warning).
fn check_canary(
    args: &Args,
    gpu: &mut Gpu,
    (plain, p): (&Shader, &wgpu::ComputePipeline),
    budget: u32,
) -> Result<Value, Fail> {
    let k = gpu.run(plain, p, budget)?;
    let ok = k.exhausted == 1 && k.finished == 0 && k.early == 0;
    if !ok {
        let how = if k.finished > 0 {
            "ended it"
        } else if k.early > 0 {
            "left its loop with budget to spare"
        } else {
            "did not spend the budget"
        };
        let info = &gpu.info;
        let msg = format!(
            "{} ({:?}) {how} on the canary, one thread waiting for a write nobody makes (budget {budget}, {:.1} ms): the device leaves loops by itself (lavapipe does after 65535 iterations), so no run on it can show non-termination. Use another device (--device), or --no-canary to test the runner only",
            info.name, info.backend, k.elapsed_ms
        );
        if !args.no_canary {
            return Err(device_err(msg));
        }
        eprintln!("warning (--no-canary): {}", crate::excerpt::printable(&msg));
    }
    Ok(json!({
        "ok": ok, "budget": budget, "exhausted": k.exhausted, "finished": k.finished,
        "early": k.early, "elapsed_ms": (k.elapsed_ms * 1000.0).round() / 1000.0,
    }))
}

/// The runs: every selected test under every selected mapping,
/// `--iterations` times, one JSON line each on stdout, flushed as it
/// comes so that `backends run` can journal it.
fn run_selected(
    args: &Args,
    gpu: &mut Gpu,
    shaders: &BTreeMap<(String, Mapping), Shader>,
    (names, mappings): (&[String], &[Mapping]),
    budget: u32,
) -> Result<(), Fail> {
    let device = gpu.info.name.clone();
    for n in names {
        for m in mappings {
            let s = &shaders[&(n.clone(), *m)];
            let p = gpu.pipeline(s)?;
            for it in 0..args.iterations {
                let r = gpu.run(s, &p, budget)?;
                let line = json!({
                    "test": s.test, "target": "wgpu", "mapping": m.name(), "instances": s.instances,
                    "workgroups": s.workgroups, "iteration": it, "terminated": r.finished == s.workgroups,
                    "elapsed_ms": (r.elapsed_ms * 1000.0).round() / 1000.0, "budget": budget,
                    "exhausted": r.exhausted, "stopped": r.stopped, "finished": r.finished, "early": r.early,
                    "device": device,
                });
                // One line at a time, on its way as soon as it is known; a
                // reader gone away (`| head`) has what it wanted: stop.
                match progress_litmus::io::write_stdout(format!("{line}\n").as_bytes()) {
                    Ok(true) => {}
                    Ok(false) => return Ok(()),
                    Err(e) => return Err(device_err(format!("writing a result: {e}"))),
                }
            }
        }
    }
    Ok(())
}

/// `backends-wgpu`: exit status 0 when every requested run happened, 2 for
/// bad input, 1 for a device error.
pub fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        // Escaped: the device's name and driver messages are the driver's text.
        Err(f) => f.exit(),
    }
}
