//! Shaders through the oracle (issue 21): the stated verdicts of
//! `suites/shaders/` hold, and the command line takes shaders with their
//! launch flags, `translate` included, with bad shaders as one error line
//! each while the rest of the batch is decided.

#[path = "../../tests/support/scratch.rs"]
#[allow(dead_code)]
mod scratch;
use scratch::Scratch;
#[path = "../../tests/support/spirv.rs"]
mod spirv;

use oracle::kernel::{check_expectations, Options};
use progress_litmus::kernel::load::{load_all_with, Item, Launch};
use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn oracle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oracle"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

/// Each `(file, want)` of folder `dir` is refused by `classify` with exit
/// status 2 and one error line, `error: PATH` then `want`.
fn refused_at(dir: &str, refused: &[(&str, &str)]) {
    for (file, want) in refused {
        let path = format!("{dir}/{file}");
        let o = oracle(&["classify", &path]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{file}: {err}");
        assert!(
            err.starts_with(&format!("error: {path}{want}")),
            "{file}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// Loads `paths` (files or folders), `count` shaders, each with stated
/// verdicts, and checks that every one holds.
fn stated_verdicts_hold(paths: &[PathBuf], count: usize) {
    let mut warnings = Vec::new();
    let (items, errors) = load_all_with(paths, &Launch::default(), &mut warnings);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(items.len(), count);
    for i in &items {
        let Item::Kernel(p) = i else {
            panic!("a shader is a kernel program")
        };
        assert!(!p.program.expect.is_empty(), "{}", p.name);
        let wrong = check_expectations(p, Options::default());
        assert!(wrong.is_empty(), "{}: {wrong:?}", p.name);
    }
}

/// The standard output of a successful `oracle` run.
fn stdout_of(args: &[&str]) -> String {
    let o = oracle(args);
    assert!(o.status.success(), "{args:?}: {o:?}");
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn every_stated_shader_verdict_holds() {
    let mut warnings = Vec::new();
    let (items, errors) = load_all_with(
        &[root().join("suites/shaders")],
        &Launch::default(),
        &mut warnings,
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert!(items.len() >= 3);
    let mut stated = 0;
    for i in &items {
        let Item::Kernel(p) = i else {
            panic!("a shader is a kernel program")
        };
        let wrong = check_expectations(
            p,
            Options {
                max_states: 1_000_000,
                ..Options::default()
            },
        );
        assert!(wrong.is_empty(), "{}: {wrong:?}", p.name);
        stated += p.program.expect.len();
    }
    assert!(stated >= 12, "{stated}");
    // Plain accesses no barrier orders are named on the launch line (the
    // GLSL shaders use plain buffer members), no longer in a warning.
    let peterson = items.iter().find(|i| i.name() == "peterson_glsl").unwrap();
    let Item::Kernel(p) = peterson else {
        panic!("a shader is a kernel program")
    };
    assert!(
        p.launch.as_deref().unwrap().contains("`counter` at line 36: plain read and another workgroup's plain write, which no barrier orders"),
        "{:?}",
        p.launch
    );
    assert!(
        !warnings.iter().any(|w| w.contains("plain (non-atomic)")),
        "{warnings:?}"
    );
}

#[test]
fn classify_takes_shaders_and_bad_ones_do_not_stop_the_batch() {
    let o = oracle(&[
        "classify",
        "suites/shaders/spinlock.wgsl",
        "tests/data/shaders/bad/division.wgsl",
        "suites/shaders/spinlock_glsl.comp",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains("spinlock ") && out.contains("spinlock_glsl"),
        "{out}"
    );
    assert!(out.contains("sequentially consistent"), "{out}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors, ["error: tests/data/shaders/bad/division.wgsl:5:21: division by something other than a constant power of two: the kernel language has no division"]);
}

#[test]
fn launch_flags_change_the_program() {
    let o = oracle(&[
        "translate",
        "--workgroups",
        "3",
        "--values",
        "8",
        "suites/shaders/spinlock.wgsl",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("values 8;") && out.contains("workgroups 3;"),
        "{out}"
    );
    assert!(
        out.contains("  // 27: if atomicCompareExchangeWeak(&lock, 0u, 1u).exchanged {"),
        "{out}"
    );
    // Three workgroups under HSA: still F; under OBE: P.
    let o = oracle(&[
        "classify",
        "--workgroups",
        "3",
        "--format",
        "csv",
        "suites/shaders/spinlock.wgsl",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().count() == 2, "{out}");
    let o = oracle(&["translate", "suites/README.md"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn explain_a_shader() {
    let o = oracle(&["explain", "--model", "HSA", "suites/shaders/spinlock.wgsl"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("F: termination is NOT guaranteed"), "{out}");
}

/// SPIR-V in: every WGSL shader of the suite, written as SPIR-V by naga
/// (spv-out, without its loop bound), gets the WGSL's stated verdicts.
#[test]
fn spirv_gets_the_wgsl_verdicts() {
    let dir = Scratch::new("oracle-spv", "dir");
    let mut checked = 0;
    for e in std::fs::read_dir(root().join("suites/shaders")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("wgsl") {
            continue;
        }
        let bytes = spirv::spirv_of_wgsl(&std::fs::read_to_string(&p).unwrap());
        let spv = dir.join(p.file_stem().unwrap()).with_extension("spv");
        std::fs::write(&spv, &bytes).unwrap();
        let mut w = Vec::new();
        let (mut items, errors) = load_all_with(&[p.clone(), spv], &Launch::default(), &mut w);
        assert!(errors.is_empty(), "{errors:?}");
        let (Item::Kernel(wgsl), Item::Kernel(mut bin)) = (items.remove(0), items.remove(0)) else {
            panic!()
        };
        bin.program.expect = wgsl.program.expect.clone();
        let wrong = check_expectations(
            &bin,
            Options {
                max_states: 1_000_000,
                ..Options::default()
            },
        );
        assert!(wrong.is_empty(), "{}: {wrong:?}", p.display());
        checked += 1;
    }
    assert!(checked >= 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `explain` on a shader shows the shader's lines in the listing and after
/// every witness step (issue 21 item 4).
#[test]
fn explain_speaks_of_the_shader() {
    let o = oracle(&["explain", "--model", "HSA", "suites/shaders/spinlock.wgsl"]);
    let out = String::from_utf8_lossy(&o.stdout);
    // (The weak compare-exchange: its choice, then the strong `cas`.)
    assert!(out.contains("  // 27: if atomicCompareExchangeWeak(&lock, 0u, 1u).exchanged {\n  0: choose finitely goto 4;\n  1: r0 = cas(lock, 0, 1);"), "{out}");
    let steps: Vec<&str> = out.lines().filter(|l| l.contains(" -> ")).collect();
    assert!(steps.len() >= 3, "{out}");
    for s in steps {
        assert!(s.contains("[suites/shaders/spinlock.wgsl:"), "{s}");
    }
    // The loop's back jump is the loop's line, not the `break` before it.
    assert!(
        !out.contains("goto 0;")
            || !out
                .lines()
                .any(|l| l.contains("goto 0;") && l.contains(":28: break;")),
        "{out}"
    );
}

/// naga panicking on a corrupt SPIR-V binary prints one error line and no
/// panic message, and the rest of the batch is decided.
#[test]
fn a_naga_panic_is_one_quiet_error_line() {
    let o = oracle(&[
        "classify",
        "tests/data/shaders/naga_panics.spv",
        "suites/shaders/spinlock.wgsl",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim(), "error: tests/data/shaders/naga_panics.spv: internal error: the shader frontend (naga) panicked on this input (called `Option::unwrap()` on a `None` value, at front/spv/mod.rs:1826); naga's SPIR-V reader assumes a valid module: `spirv-val` names what is wrong in it; please report it");
    assert!(String::from_utf8_lossy(&o.stdout).contains("spinlock "));
}

/// The translation computes what the shader means: each shader of
/// `tests/data/shaders/semantics/` compares its values with the intended
/// ones and spins forever on a wrong one, so it terminates under every
/// scheduler (UNFAIR: P) iff every value is right; a wrong expectation
/// written into one of them turns the verdict to F (the check can fail).
#[test]
fn translated_values_are_the_shaders() {
    let dir = root().join("tests/data/shaders/semantics");
    let mut w = Vec::new();
    let (items, errors) = load_all_with(&[dir], &Launch::default(), &mut w);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(items.len() >= 4);
    for i in &items {
        let Item::Kernel(p) = i else { panic!() };
        let wrong = check_expectations(
            p,
            Options {
                max_states: 1_000_000,
                ..Options::default()
            },
        );
        assert!(wrong.is_empty(), "{}: {wrong:?}", p.name);
    }
    let src =
        std::fs::read_to_string(root().join("tests/data/shaders/semantics/control.wgsl")).unwrap();
    let bad = Scratch::new("sem", "bad");
    let f = bad.join("control.wgsl");
    std::fs::write(&f, src.replace("if n != 4u", "if n != 5u")).unwrap();
    let (items, _) = load_all_with(&[f], &Launch::default(), &mut w);
    let Item::Kernel(p) = &items[0] else { panic!() };
    assert_eq!(check_expectations(p, Options::default()).len(), 1);
    let _ = std::fs::remove_dir_all(&bad);
}

/// Two storage blocks on one binding are one buffer (issue 42): each
/// member at its std430 word, overlapping words one location. The rows
/// are derived by hand in each file; read as two buffers, `message` and
/// `cell_in_array` would be F under every model. (WGSL forbids two
/// variables on one binding: `bad/two_on_one_binding.wgsl`.)
#[test]
fn two_blocks_on_one_binding_are_one_buffer() {
    let dir = "tests/data/shaders/aliased";
    refused_at(dir, &[
        ("in_part.comp", ":5:36: `a` (words 0..2) and `b` (words 1..3) of one buffer overlap in part"),
        ("signedness.comp", ":5:36: `a` (words 0..1) and `b` (words 0..1) of one buffer overlap as signed and unsigned integers"),
        ("init_twice.comp", ":5:1: init `ready`: memory the init line at line 4 sets already (one variable, or two views of one buffer)"),
        ("init_cell_values.comp", ":4:1: init `first`: 4 values for 1 cell"),
        ("std140_array.comp", ":4:36: `a`: an array whose elements are 16 bytes apart (std140 pads them to 16), in a buffer bound with another (aliased)"),
        ("uniform_and_storage.comp", ":5:36: `U` and `S` are both at binding 0 of group 0 (aliased): a storage buffer and another kind of resource: one binding holds one kind of descriptor"),
    ]);
    let decided = [
        "cell_in_array.comp",
        "init_views.comp",
        "message.comp",
        "one_word.comp",
        "other_cell.comp",
        "unused_views.comp",
    ];
    let paths: Vec<PathBuf> = decided.iter().map(|f| root().join(dir).join(f)).collect();
    stated_verdicts_hold(&paths, 6);
    // The same shader through glslang (SPIR-V has no `expect` lines).
    let csv = stdout_of(&[
        "classify",
        "--format",
        "csv",
        "--workgroups",
        "2",
        &format!("{dir}/message.spv"),
    ]);
    assert_eq!(
        csv.lines().nth(1),
        Some("message,P,F,P,P,P,F,P,P,P,P,F"),
        "{csv}"
    );
    // One location, named after both views.
    let text = stdout_of(&["translate", &format!("{dir}/message.comp")]);
    assert!(text.contains("global flag_ready;"), "{text}");
    let text = stdout_of(&["translate", &format!("{dir}/cell_in_array.comp")]);
    assert!(text.contains("global flags_first_second[4];"), "{text}");
}

/// Issue 42: a workgroup barrier in non-uniform control flow was decided
/// with the kernel language's barrier (matched by instruction), picking an
/// answer where every source language says the behaviour is undefined (or,
/// in WGSL, the shader invalid). A barrier some invocation passes by is a
/// deadlock of the kernel program: F under every model (stated in the
/// files), and in GLSL and SPIR-V the launch line names it as undefined
/// behaviour; WGSL refuses it. A barrier two invocations reach in
/// different iterations of its loop is refused, as is a loop the check
/// cannot follow; barriers in uniform loops get no note.
#[test]
fn barriers_in_non_uniform_control_flow_are_undefined() {
    let dir = "tests/data/shaders/barriers";
    refused_at(dir, &[
        ("skipped.wgsl", ":9:5: a workgroup barrier in non-uniform control flow: it stands under the condition at line 8, which reads the built-in local_invocation_index, non-uniform to WGSL's uniformity analysis; WGSL rejects such a shader at creation (naga does not check it), so no GPU runs it"),
            ("atomic_condition.wgsl", ":12:5: a workgroup barrier in non-uniform control flow: it stands under the condition at line 11, which reads `c` (memory other invocations may write), non-uniform to WGSL's uniformity analysis"),
            ("after_return.wgsl", ":13:3: a workgroup barrier in non-uniform control flow: it follows a return, break or continue taken by some invocations only (it stands under the condition at line 10, which reads the built-in local_invocation_index)"),
            ("short_circuit.wgsl", ":13:5: a workgroup barrier in non-uniform control flow: it stands under the condition at line 12, which reads a variable set from the built-in local_invocation_index"),
            ("loop_break.wgsl", ":11:5: a workgroup barrier in non-uniform control flow: it follows a return, break or continue taken by some invocations only (it stands under the condition at line 10"),
            ("iterations.comp", ":15:7: a workgroup barrier in non-uniform control flow: on some schedule invocations 0.0 and 0.1 reach it in different iterations of its loop (line 13, column 3); GLSL requires barrier() in uniform control flow"),
            ("inner_loop_split.comp", ":17:7: a workgroup barrier in non-uniform control flow: on some schedule invocations 0.0 and 0.1 reach it in different iterations of its loop (line 20, column 12)"),
            ("continued.comp", ":10:5: a workgroup barrier in non-uniform control flow: on some schedule invocations 0.0 and 0.1 reach it in different iterations of its loop (line 8, column 3)"),
            ("too_many_rounds.comp", ":9:3: the check cannot follow this loop: invocation 0.0 may go around it more than 15 times between two barriers"),
    ]);
    let decided = [
        "skipped.comp",
        "skipped.spv",
        "other_barrier.comp",
        "early_exit.comp",
        "uniform_loops.comp",
        "inner_loop_first.comp",
        "reconverged.comp",
        "uniform_conditions.wgsl",
    ];
    let paths: Vec<PathBuf> = decided.iter().map(|f| root().join(dir).join(f)).collect();
    // (The `.spv` is `skipped.comp` through glslang: its verdicts are
    // checked below, as SPIR-V has no `expect` lines.)
    stated_verdicts_hold(&[paths[0].clone()], 1);
    stated_verdicts_hold(&paths[2..], 6);
    let run = |file: &str| {
        let o = oracle(&["classify", "--format", "csv", &format!("{dir}/{file}")]);
        assert!(o.status.success(), "{file}: {o:?}");
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        let o = oracle(&["classify", &format!("{dir}/{file}")]);
        let launch = String::from_utf8_lossy(&o.stdout)
            .lines()
            .find(|l| l.starts_with("(launch of "))
            .unwrap()
            .to_string();
        (out.lines().nth(1).unwrap().to_string(), launch)
    };
    let undefined = "undefined behaviour, under which no model guarantees termination: a workgroup barrier in non-uniform control flow";
    for (file, at, apart, rule) in [
        ("skipped.comp", " at line 16, column 5", "invocation 0.0 waits there while 0.1 has finished without reaching it", "GLSL requires barrier() in uniform control flow and leaves any other call undefined"),
        ("skipped.spv", "", "invocation 0.0 waits there while 0.1 has finished without reaching it", "SPIR-V leaves a barrier undefined unless every invocation of the workgroup executes the same dynamic instance of it"),
        ("other_barrier.comp", " at line 13, column 5", "invocation 0.0 waits there while 0.1 waits at another barrier (line 15, column 5)", "GLSL requires"),
        ("early_exit.comp", " at line 14, column 5", "invocation 0.1 waits there while 0.0 has finished without reaching it", "GLSL requires"),
    ] {
        let (row, launch) = run(file);
        let name = file.split('.').next().unwrap();
        assert_eq!(row, format!("{name},F,F,F,F,F,F,F,F,F,F,F"), "{file}");
        let want = format!("{undefined}{at} (on some schedule {apart}; {rule}");
        assert!(launch.contains(&want), "{file}: {launch}\nwant {want}");
    }
    let (row, launch) = run("uniform_loops.comp");
    assert_eq!(row, "uniform_loops,P,P,P,P,P,P,P,P,P,P,P");
    assert!(!launch.contains("undefined behaviour"), "{launch}");
    // Lockstep's own deadlock is no undefined behaviour of the shader.
    let (row, launch) = run("reconverged.comp");
    assert_eq!(row, "reconverged,F,F,F,F,F,F,F,F,F,F,F");
    assert!(!launch.contains("undefined behaviour"), "{launch}");
}

/// Issue 42: a plain variable published by relaxed atomics, or written
/// and read with no barrier between, was decided as sequentially
/// consistent with only a warning on standard error (also for accesses a
/// barrier orders, which do not race). The value check now names, on the
/// launch line, each plain access that meets a conflicting access of
/// another invocation with no barrier of their workgroup between, and
/// nothing where a barrier orders them.
#[test]
fn plain_accesses_no_barrier_orders_are_named() {
    let dir = "tests/data/shaders/races";
    let races = "; data races in the Vulkan memory model, decided as sequentially consistent: ";
    let unless =
        ": a race unless memory barriers or release-acquire atomics order them, which are not read";
    for (file, row, named) in [
        ("message_passing.wgsl", "P,F,P,P,P,F,P,P,P,P,F", "`data` at line 22: plain read and another workgroup's plain write, which no barrier orders)".to_string()),
        ("fenced.comp", "P,F,P,P,P,F,P,P,P,P,F", format!("`data` at line 19: plain read and another workgroup's plain write, which no barrier orders{unless})")),
        ("unordered.wgsl", "P,P,P,P,P,P,P,P,P,P,P", "`s` at line 11: plain write and another invocation's plain read, which no barrier orders; `s` at line 13: plain read and another invocation's plain write, which no barrier orders)".to_string()),
        ("barrier_ordered.wgsl", "P,P,P,P,P,P,P,P,P,P,P", String::new()),
    ] {
        let path = format!("{dir}/{file}");
        let o = oracle(&["classify", "--format", "csv", &path]);
        assert!(o.status.success(), "{file}: {o:?}");
        let name = file.split('.').next().unwrap();
        assert!(String::from_utf8_lossy(&o.stdout).ends_with(&format!("\n{name},{row}\n")), "{file}: {o:?}");
        let o = oracle(&["classify", &path]);
        // No warning on standard error any more: the launch line says it.
        assert!(o.stderr.is_empty(), "{file}: {o:?}");
        let out = String::from_utf8_lossy(&o.stdout);
        let launch = out.lines().find(|l| l.starts_with("(launch of ")).unwrap();
        if named.is_empty() {
            assert!(!launch.contains("data races"), "{file}: {launch}");
        } else {
            assert!(launch.ends_with(&format!("{races}{named}")), "{file}: {launch}");
        }
    }
    let decided: Vec<PathBuf> = [
        "message_passing.wgsl",
        "fenced.comp",
        "unordered.wgsl",
        "barrier_ordered.wgsl",
    ]
    .iter()
    .map(|f| root().join(dir).join(f))
    .collect();
    stated_verdicts_hold(&decided, 4);
}

/// Issue 42: GLSL and SPIR-V leave workgroup memory and locals without an
/// initializer undefined, and a read of one before any write was decided
/// as a read of 0 (a shader spinning `while (flag != 0u)` on an unwritten
/// `shared` flag got P everywhere). Such a read is refused at its place,
/// naming the variable; memory written before it is read on every
/// schedule is decided, and the verdict line says what memory started
/// with; `--workgroup-memory zero` states a launch that zeroes it.
#[test]
fn undefined_initial_values_are_never_read_as_zero() {
    let dir = "tests/data/shaders/undefined";
    let refused = [
        ("shared_read_first.comp", ":8:10: `flag` may be read before it is written (invocation 0.0, on some schedule): GLSL leaves workgroup memory's initial value undefined"),
        ("shared_read_first.spv", ": `flag` may be read before it is written (invocation 0.0, on some schedule): SPIR-V leaves workgroup memory's initial value undefined"),
        ("shared_plain_read.comp", ":10:12: `s` may be read before it is written (invocation 0.0, on some schedule): GLSL leaves workgroup memory's initial value undefined"),
        ("local_read_first.comp", ":9:33: `x` may be read before it is written: GLSL leaves a local variable without an initializer undefined"),
        ("local_read_first.spv", ": `x` may be read before it is written: SPIR-V leaves a local variable without an initializer undefined"),
    ];
    refused_at(dir, &refused);
    // The stated verdicts of the ones decided hold.
    let decided: Vec<PathBuf> = [
        "shared_written_first.comp",
        "shared_race.comp",
        "shared_init_line.comp",
        "local_written_first.comp",
    ]
    .iter()
    .map(|f| root().join(dir).join(f))
    .collect();
    stated_verdicts_hold(&decided, 4);
    // What memory started with is on the verdict line.
    let launch_line = |args: &[&str]| {
        let o = oracle(args);
        assert!(o.status.success(), "{args:?}: {o:?}");
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        out.lines()
            .find(|l| l.starts_with("(launch of "))
            .unwrap_or_else(|| panic!("{out}"))
            .to_string()
    };
    let written = format!("{dir}/shared_written_first.comp");
    // (`flag = 0u;` is a plain store, ordered by the barrier: no race.)
    let line = launch_line(&["classify", &written]);
    assert!(
        line.ends_with("; storage buffers start at 0, workgroup memory undefined (GLSL) and written before it is read on every schedule (checked))"),
        "{line}"
    );
    let spv = format!("{dir}/shared_written_first.spv");
    assert!(launch_line(&["classify", &spv]).contains("workgroup memory undefined (SPIR-V)"));
    let first = format!("{dir}/shared_read_first.comp");
    let zero = launch_line(&["classify", "--workgroup-memory", "zero", &first]);
    // (Its workgroup of 2 is one subgroup: the launch line goes on.)
    assert!(
        zero.contains(
            "; storage buffers start at 0, workgroup memory at 0 (--workgroup-memory zero); inside a subgroup"
        ),
        "{zero}"
    );
    let line = format!("{dir}/shared_init_line.comp");
    assert!(launch_line(&["classify", &line])
        .contains("; storage buffers start at 0, workgroup memory where `// init` lines say"));
    let o = oracle(&["classify", "--workgroup-memory", "zero", &first]);
    let out = String::from_utf8_lossy(&o.stdout);
    let row = out.lines().nth(1).unwrap();
    assert!(row.split_whitespace().skip(1).all(|v| v == "P"), "{out}");
    // WGSL zero-initialises: said so, and nothing is refused.
    let wgsl = launch_line(&["classify", "suites/shaders/message_passing.wgsl"]);
    assert!(
        wgsl.contains("workgroup memory at 0 (WGSL zero-initialises it)"),
        "{wgsl}"
    );
}

/// Issue 42: GLSL as the peers publish it, decided unchanged: `#version
/// 430`, `volatile`/`coherent` blocks, a block instance named like its
/// member (naga declares block members globally, hiding the instance),
/// and the TLA+ project's launch lines, read as the launch and named so.
#[test]
fn glsl_in_the_published_forms_is_decided_unchanged() {
    let file = "tests/data/shaders/published/tla_form.comp";
    let mut warnings = Vec::new();
    let (items, errors) = load_all_with(&[root().join(file)], &Launch::default(), &mut warnings);
    assert!(errors.is_empty(), "{errors:?}");
    let Some(Item::Kernel(p)) = items.first() else {
        panic!("a shader is a kernel program")
    };
    assert_eq!(p.program.expect.len(), 4);
    assert_eq!(check_expectations(p, Options::default()), vec![]);
    // The instance's own name, not the alias naga was given.
    let names: Vec<&str> = p
        .program
        .locations
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    assert_eq!(names, ["flag", "counter"]);
    assert_eq!(
        p.launch.as_deref(),
        Some("2 workgroups (its `layout(tla_num_workgroups = W) in;` line) of 1 invocation (the shader's size), subgroups of 1 invocation (its `layout(tla_subgroup_size = S) in;` line); storage buffers start at 0")
    );
    // `#pragma scheduler(HSA)` is the program's model, as `// model` is.
    let o = oracle(&["explain", file]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("tla_form under weak HSA "), "{out}");
    // A flag still wins over a launch line.
    let o = oracle(&["classify", "--workgroups", "3", file]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("(launch of tla_form: 3 workgroups (--workgroups) of"),
        "{out}"
    );
}

/// Issue 42: atomic scopes are carried, not dropped. GLSL's scoped atomics
/// (GL_KHR_memory_scope_semantics: `atomicLoad`, `atomicStore` and the
/// scoped forms of the others) are read; one whose scope does not hold
/// every invocation that may access its memory is a data race in the
/// Vulkan memory model, named with its variable and line on the launch
/// line; so are plain accesses to memory that is written. A scope that is
/// not a constant is refused.
#[test]
fn atomic_scopes_name_their_races() {
    let dir = root().join("tests/data/shaders/scopes");
    let mut warnings = Vec::new();
    let files = [
        dir.join("device_scope.comp"),
        dir.join("workgroup_scope.comp"),
    ];
    let (items, errors) = load_all_with(&files, &Launch::default(), &mut warnings);
    assert!(errors.is_empty(), "{errors:?}");
    let launch: Vec<String> = items
        .iter()
        .map(|i| {
            let Item::Kernel(p) = i else {
                panic!("a shader is a kernel program")
            };
            assert_eq!(p.program.expect.len(), 3, "{}", p.name);
            assert_eq!(
                check_expectations(p, Options::default()),
                vec![],
                "{}",
                p.name
            );
            p.launch.clone().unwrap()
        })
        .collect();
    assert!(
        launch[0].ends_with("; storage buffers start at 0"),
        "{}",
        launch[0]
    );
    assert!(
        launch[1].ends_with("; storage buffers start at 0; data races in the Vulkan memory model, decided as sequentially consistent: `msg` at line 16: atomicStore with workgroup scope, narrower than the invocations that may access it"),
        "{}",
        launch[1]
    );
    // One workgroup: workgroup scope holds every invocation, no race.
    let one = Launch {
        workgroups: Some(1),
        ..Launch::default()
    };
    let (items, _) = load_all_with(&files[1..], &one, &mut warnings);
    let Some(Item::Kernel(p)) = items.first() else {
        panic!("a kernel program")
    };
    assert!(
        !p.launch.as_deref().unwrap().contains("race"),
        "{:?}",
        p.launch
    );
    // Plain loads in a spin loop of memory another invocation writes
    // (Peterson's `flag` and `turn`); its plain `counter` increment, in
    // no loop, is not this race, but one no barrier orders: Peterson's
    // lock orders it under sequential consistency only.
    let o = oracle(&["classify", "suites/shaders/peterson_glsl.comp"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("decided as sequentially consistent: `flag`: read by plain (non-atomic) loads in a loop while it is written (a compiler may hoist the load out of the loop); `turn`: read by plain (non-atomic) loads in a loop while it is written (a compiler may hoist the load out of the loop); `counter` at line 36: plain read and another workgroup's plain write, which no barrier orders: a race unless memory barriers or release-acquire atomics order them, which are not read)"),
        "{out}"
    );
    let o = oracle(&[
        "classify",
        "tests/data/shaders/scopes/scope_not_constant.comp",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: tests/data/shaders/scopes/scope_not_constant.comp:7:3: an atomic's scope that is not a constant gl_Scope* value (1 to 5): the scope decides whether the access races\n"
    );
}

/// Issue 42: SPIR-V's atomics carry their scope in an operand that naga's
/// reader drops: it is read before naga, a race named with the
/// instruction's place, and a scope that is not the id of a constant (an
/// undefined id was accepted) refused.
#[test]
fn spirv_atomic_scopes_are_read() {
    let spv = "tests/data/shaders/scopes/workgroup_scope.spv";
    let o = oracle(&["classify", spv]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("data races in the Vulkan memory model, decided as sequentially consistent: `msg` at instruction 50 (byte 828): OpAtomicStore with workgroup scope, narrower than the invocations that may access it)"),
        "{out}"
    );
    // The same store with an undefined id for its scope.
    let mut words: Vec<u32> = std::fs::read(root().join(spv))
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let store = 828 / 4;
    assert_eq!(words[store] & 0xffff, 228, "OpAtomicStore");
    words[store + 2] = 9999;
    let dir = Scratch::new("axb-scope", "dir");
    let bad = dir.join("undefined_scope.spv");
    std::fs::write(
        &bad,
        words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let o = oracle(&["classify", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.ends_with("undefined_scope.spv: SPIR-V: OpAtomicStore at instruction 50 (byte 828): its scope, %9999, is not the id of a constant scope (an OpConstant from 0, CrossDevice, to 5, QueueFamily: SPIR-V requires one; the scope decides whether the access races)\n"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The adversarial pass over issue 42's changes: each reproducer, as
/// found, gives the answer it should (tests/data/shaders/adversarial42).
#[test]
fn the_adversarial_findings_stay_fixed() {
    let dir = "tests/data/shaders/adversarial42";
    let refused = [
        ("d_private.comp", ":6:33: `g` may be read before it is written: GLSL leaves a private global variable without an initializer undefined"),
        ("y2.comp", ":2:1: init `b_x`: the name of more than one variable (`b_x`, `b_x_1`): ambiguous"),
        ("f_undef_opt.spv", ": SPIR-V: instruction 40 (byte 656) uses %39, an OpUndef"),
    ];
    refused_at(dir, &refused);
    let race_of = |file: &str, extra: &[&str]| {
        let path = format!("{dir}/{file}");
        let mut args = vec!["classify"];
        args.extend(extra);
        args.push(&path);
        let o = oracle(&args);
        assert!(o.status.success(), "{file}: {o:?}");
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        out.lines()
            .find(|l| l.starts_with("(launch of "))
            .and_then(|l| l.split_once("; data races").map(|(_, r)| r.to_string()))
    };
    assert_eq!(race_of("red.comp", &["--values", "16"]), None);
    assert!(race_of("spinvar.comp", &[])
        .unwrap()
        .contains("`flag`: read by plain"));
    // `tla_form.comp` with CR-only line ends: the same verdicts.
    let cr = oracle(&["classify", "--format", "csv", &format!("{dir}/tla_cr.comp")]);
    let lf = oracle(&[
        "classify",
        "--format",
        "csv",
        "tests/data/shaders/published/tla_form.comp",
    ]);
    let row = |o: &std::process::Output| {
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        out.lines()
            .nth(1)
            .map(|l| l.split_once(',').unwrap().1.to_string())
    };
    assert!(cr.status.success(), "{cr:?}");
    assert_eq!(row(&cr), row(&lf));
    for f in ["rn.comp", "rn.spv"] {
        let r = race_of(f, &[]).unwrap();
        assert!(r.contains(": `b` at ") && !r.contains("`a`"), "{f}: {r}");
    }
}

/// WGSL's `atomicCompareExchangeWeak` may fail spuriously (issue 42,
/// docs/KERNEL.md §2.11): a one-shot attempt can hang, a retry loop ends
/// only where spurious failures are finitely many (the default, named on
/// the verdict line), GLSL's `atomicCompSwap` is strong. The expected
/// verdicts are derived in each file's comment.
#[test]
fn weak_compare_exchange_may_fail_spuriously() {
    stated_verdicts_hold(&[root().join("tests/data/shaders/weak_cas")], 5);
    let out = stdout_of;
    let retry = "tests/data/shaders/weak_cas/retry.wgsl";
    // Finitely often: P everywhere, and the line says what it rests on.
    let default = out(&["classify", retry]);
    assert!(default.contains("retry          P    P    P        P     P             P    P    P        P     P     P"), "{default}");
    assert!(default.contains("; atomicCompareExchangeWeak may fail spuriously, finitely often on a run (assumed, as C++ recommends; WGSL does not promise it; --spurious-failures unbounded drops it))"), "{default}");
    // Any number of times: the loop may fail forever, under every model.
    let unbounded = out(&["classify", "--spurious-failures", "unbounded", retry]);
    assert!(unbounded.contains("retry          F    F    F        F     F             F    F    F        F     F     F"), "{unbounded}");
    assert!(
        unbounded
            .contains("may fail spuriously any number of times (--spurious-failures unbounded)"),
        "{unbounded}"
    );
    // The translation says how.
    assert!(out(&["translate", retry]).contains("choose finitely goto"));
    let t = out(&["translate", "--spurious-failures", "unbounded", retry]);
    assert!(t.contains("choose goto") && !t.contains("finitely"), "{t}");
    // GLSL's compare-exchange is strong: no choice, no note.
    let glsl = out(&["classify", "tests/data/shaders/weak_cas/one_shot.comp"]);
    assert!(!glsl.contains("spuriously"), "{glsl}");
    assert!(!out(&["translate", "tests/data/shaders/weak_cas/one_shot.comp"]).contains("choose"));
    // The explanation says where the schedule failed spuriously.
    let e = out(&[
        "explain",
        "--model",
        "OBE",
        "tests/data/shaders/weak_cas/one_shot.wgsl",
    ]);
    assert!(e.contains("On this schedule the weak compare-exchange at line 15 fails spuriously (its translation's `choose` jumps), as the launch line allows."), "{e}");
}

/// Inside a subgroup a shader's verdict holds for what GPUs do (issue 42,
/// docs/KERNEL.md §10.6): P only if P both in lockstep and under fair
/// independent scheduling; `--subgroup-scheduling fair` asks for the
/// latter alone; `explain` shows the lockstep witness where only it fails.
#[test]
fn inside_a_subgroup_a_verdict_holds_for_lockstep_and_independent_scheduling() {
    stated_verdicts_hold(&[root().join("tests/data/shaders/subgroups")], 5);
    let out = stdout_of;
    for f in ["simt_deadlock", "simt_done"] {
        let path = format!("tests/data/shaders/subgroups/{f}.wgsl");
        let fair = out(&["classify", "--subgroup-scheduling", "fair", &path]);
        let row = format!(
            "{f}          P    P    P        P     P             P    P    P        P     P     P"
        );
        assert!(fair.contains(&row), "{fair}");
        assert!(fair.contains("; inside a subgroup, invocations are scheduled fairly (--subgroup-scheduling fair, as CUDA's independent thread scheduling))"), "{fair}");
        let default = out(&["classify", &path]);
        assert!(default.contains("; inside a subgroup, a verdict is P only if it holds both in lockstep (reconvergence at the immediate post-dominator) and under fair independent scheduling)"), "{default}");
        // The witness is the lockstep one, and says so.
        let e = out(&["explain", "--model", "OBE", &path]);
        assert!(
            e.contains("under weak OBE between workgroups, lockstep inside subgroups"),
            "{e}"
        );
        assert!(
            e.contains("in a lockstep subgroup that only ever runs its other lanes"),
            "{e}"
        );
    }
    // Lockstep takes subgroups of at most 4: a larger one is refused with
    // the way out, which decides it.
    let sg8 = "@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;\n@compute @workgroup_size(8)\nfn main() {\n  atomicAdd(&x, 1u);\n}\n";
    let d = Scratch::new("oracle-sg8", "d");
    let f = d.join("sg8.wgsl");
    std::fs::write(&f, sg8).unwrap();
    let f = f.to_str().unwrap();
    let o = oracle(&["classify", "--workgroups", "1", "--subgroup-size", "8", f]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("subgroups of 8 invocations: lockstep supports at most 4 (each step tries every order of the lanes' atomics): a shader's verdict must also hold for lockstep subgroups (docs/KERNEL.md §10.6); --subgroup-scheduling fair decides for independent fair scheduling alone"), "{err}");
    let fair = out(&[
        "classify",
        "--workgroups",
        "1",
        "--subgroup-size",
        "8",
        "--subgroup-scheduling",
        "fair",
        f,
    ]);
    assert!(fair.contains("sg8           P    P"), "{fair}");
    // Subgroups of one: nothing to add, and nothing said.
    let one = out(&["classify", "suites/shaders/spinlock.wgsl"]);
    assert!(!one.contains("inside a subgroup"), "{one}");
}

/// With no subgroup size named, a workgroup's invocations form one
/// subgroup (docs/KERNEL.md §10.1), up to the lockstep machine's 4 lanes,
/// and the launch line says so; a named width wider than the workgroup
/// puts it in one subgroup. Before, the default was subgroups of one
/// invocation: the SIMT deadlock and a one-leader-per-subgroup wait were
/// P under every model, `unfair` included (found by an audit of issue 42).
#[test]
fn by_default_a_workgroup_is_one_subgroup() {
    let out = stdout_of;
    let path = "tests/data/shaders/subgroups/default_width.wgsl";
    let default = out(&["classify", path]);
    assert!(default.contains("of 2 invocations (the shader's size), subgroups of 2 invocations (default: the workgroup is one subgroup, as on every GPU whose subgroups hold 2 or more; --subgroup-size S decides another)"), "{default}");
    // The old default, named: each invocation its own subgroup.
    let one = out(&["classify", "--subgroup-size", "1", path]);
    let row = "default_width          P    P    P        P     P             P    P    P        P     P     P";
    assert!(one.contains(row), "{one}");
    // A device's width, wider than the workgroup: one subgroup of 2.
    let wide = out(&["classify", "--format", "csv", "--subgroup-size", "32", path]);
    assert!(
        wide.contains("default_width,F,F,F,F,F,F,F,F,F,F,F"),
        "{wide}"
    );
    let wide = out(&["classify", "--subgroup-size", "32", path]);
    assert!(wide.contains("subgroups of 2 invocations (--subgroup-size: subgroups of 32, which one workgroup of 2 fills, the lanes past it inactive)"), "{wide}");
    // Past 4 lanes, no width the lockstep machine takes stands for the
    // GPUs' one subgroup: a shader whose verdicts no width changes (no
    // loop, no subgroup operation) is decided with subgroups of 1.
    let d = Scratch::new("oracle-sg-default", "d");
    for n in [8, 5] {
        let f = d.join(format!("wg{n}.wgsl"));
        let src = format!("@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;\n@compute @workgroup_size({n})\nfn main() {{\n  atomicAdd(&x, 1u);\n}}\n");
        std::fs::write(&f, src).unwrap();
        let o = out(&["classify", "--workgroups", "1", f.to_str().unwrap()]);
        let why = "subgroups of 1 invocation (default: no subgroup width changes this shader's verdicts (no subgroup operation, and --subgroup-scheduling fair or neither a loop nor a branch with a barrier), so lanes are decided one by one;";
        assert!(o.contains(why), "{o}");
    }
}

/// A workgroup wider than the lockstep machine's 4 lanes is one subgroup
/// on most GPUs; the default used to decide a narrower width, another
/// device (found by an audit of issue 42): the SIMT deadlock of 5
/// invocations was P under all 11 models with subgroups of 1, and two
/// leaders of a workgroup of 8 (lanes 0 and 4) spinning on one lock were
/// P with subgroups of 4; an early return never taken before a barrier
/// was P with subgroups of 1 and is F in lockstep. Such a shader with a
/// loop, a subgroup operation or a branch and a barrier is refused at
/// its entry point until a width is named (or fair scheduling, but for
/// a subgroup operation); with one, it is decided for it.
#[test]
fn a_workgroup_wider_than_the_lockstep_machine_needs_a_named_width() {
    let dir = "tests/data/shaders/wide";
    let lockstep = "the lockstep machine takes at most 4 lanes: give --subgroup-size S";
    for (file, at, n, fair) in [
        ("wide_simt_deadlock.wgsl", ":14:3:", 5, true),
        ("wide_two_lanes.wgsl", ":13:3:", 8, true),
        ("wide_vote.wgsl", ":11:6:", 8, false),
        // GLSL statements carry no place in naga: the size's declaration.
        ("wide_early_return.comp", ":12:8:", 8, true),
    ] {
        let path = format!("{dir}/{file}");
        let o = oracle(&["classify", "--workgroups", "1", &path]);
        assert_eq!(o.status.code(), Some(2), "{file}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        let head = format!("{path}{at} a workgroup of {n} invocations is one subgroup on GPUs whose subgroups hold {n} or more (most: 32 or 64), ");
        assert!(err.starts_with(&format!("error: {head}")), "{err}");
        assert!(err.contains(lockstep), "{err}");
        assert_eq!(
            err.contains("or --subgroup-scheduling fair for independent fair scheduling"),
            fair,
            "{err}"
        );
    }
    // A size past the kernel's 8, at its `local_size_x` (not one in a
    // comment above it).
    let o = oracle(&["classify", "tests/data/shaders/bad/workgroup_of_16.comp"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(
            "error: tests/data/shaders/bad/workgroup_of_16.comp:5:26: workgroup size 16"
        ),
        "{err}"
    );
    let csv = |args: &[&str]| {
        let mut all = vec!["classify", "--format", "csv", "--workgroups", "1"];
        all.extend(args);
        stdout_of(&all).lines().nth(1).unwrap().to_string()
    };
    let path = format!("{dir}/wide_two_lanes.wgsl");
    // Subgroups of 4 (a device of that width): lanes 0 and 4 apart.
    let row = csv(&["--subgroup-size", "4", &path]);
    assert_eq!(row, "wide_two_lanes,P,P,P,P,P,P,P,P,P,P,P");
    let path = format!("{dir}/wide_simt_deadlock.wgsl");
    let row = csv(&["--subgroup-scheduling", "fair", &path]);
    assert_eq!(row, "wide_simt_deadlock,P,P,P,P,P,P,P,P,P,P,P");
    // No loop, no subgroup operation, yet the width matters: in lockstep
    // an early return never taken holds lane 0 at the end while lane 1
    // waits at the barrier.
    let path = format!("{dir}/wide_early_return.comp");
    let row = csv(&["--subgroup-size", "1", &path]);
    assert_eq!(row, "wide_early_return,P,P,P,P,P,P,P,P,P,P,P");
    let row = csv(&["--subgroup-size", "2", &path]);
    assert_eq!(row, "wide_early_return,F,F,F,F,F,F,F,F,F,F,F");
}

/// Subgroup operations act on the lanes that execute them together
/// (issue 42, docs/KERNEL.md §10.6): in divergent control flow a vote is
/// the vote of its dynamic block, not a rendezvous of the whole
/// subgroup. The TLA+ project's four tangles, as our own shaders,
/// terminate under every model; a vote taken alone steers a wait, with
/// the hand-derived rows of `divergent_vote.wgsl`; the SIMT-Step models
/// take shaders, whose structured control flow the translation keeps.
#[test]
fn subgroup_operations_act_on_the_lanes_that_execute_them_together() {
    let dir = root().join("tests/data/shaders/tangles");
    stated_verdicts_hold(&[dir], 6);
    let path = "tests/data/shaders/tangles/divergent_vote.wgsl";
    let fair = stdout_of(&["classify", "--subgroup-scheduling", "fair", path]);
    let row = "divergent_vote          P    P    P        P     P             P    P    P        P     P     P";
    assert!(fair.contains(row), "{fair}");
    assert!(fair.contains("a subgroup operation is executed by the lanes that execute it together: the active lanes in lockstep, else the lanes of its dynamic block"), "{fair}");
    let e = stdout_of(&[
        "explain",
        "--subgroup-scheduling",
        "fair",
        "--model",
        "OBE, subgroup=unfair",
        path,
    ]);
    assert!(e.contains(": F: termination is NOT guaranteed"), "{e}");
    assert!(
        e.contains("Invocation 1 of workgroup 0 spins at line 28"),
        "{e}"
    );
    // The SIMT-Step models and interleaved lanes of every kind: the
    // tangles terminate under each. `divergent_vote` fails where
    // invocation 0 may never run: lockstep (the SIMT deadlock), unfair
    // lanes, OBE lanes (it may never start), and `fair`, which a shader
    // must also pass in lockstep; the SIMT-Step models run the two arms'
    // dynamic blocks fairly, and HSA lanes always run invocation 0.
    let tangles = "tests/data/shaders/tangles/";
    for (m, failing) in [
        ("scf", 0),
        ("cm", 0),
        ("sm", 0),
        ("sso", 0),
        ("hsa", 0),
        ("lockstep", 1),
        ("unfair", 1),
        ("obe", 1),
        ("fair", 1),
    ] {
        let model = format!("OBE, subgroup={m}");
        let o = oracle(&["check", "--require", &model, tangles]);
        let out = String::from_utf8_lossy(&o.stdout);
        let tally = format!("checked 6 programs under 1 model: {failing} not guaranteed");
        assert!(out.contains(&tally), "{m}: {out}");
        let named = out.contains("divergent_vote.wgsl:28:24: ");
        assert_eq!(named, failing == 1, "{m}: {out}");
    }
    // A shader without subgroup operations under a SIMT-Step model: the
    // run keeps its structure. The SIMT deadlock's lanes run fairly
    // there (no reconvergence stack), so the lock is passed on: P.
    let deadlock = "tests/data/shaders/subgroups/simt_deadlock.wgsl";
    for m in ["scf", "cm", "sm", "sso"] {
        let model = format!("OBE, subgroup={m}");
        let out = stdout_of(&["check", "--require", &model, deadlock]);
        assert!(
            out.contains("checked 1 program under 1 model: 0 not guaranteed"),
            "{m}: {out}"
        );
    }
    // A run that requires a SIMT-Step model and a model whose verdict
    // rests on lockstep gives the latter no verdict for a shader whose
    // structure would change it (simt_done: F threaded, P structured):
    // one error line, exit 2, and the guaranteed line names only the
    // model it was decided under.
    let done = "tests/data/shaders/subgroups/simt_done.wgsl";
    let o = oracle(&[
        "check",
        "--require",
        "OBE",
        "--require",
        "OBE, subgroup=scf",
        done,
    ]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("test `simt_done` under OBE: a SIMT-Step model required in the same run has the shader translated with its structure kept"), "{err}");
    assert!(
        out.contains("simt_done.wgsl: guaranteed under OBE, subgroup=scf on this launch"),
        "{out}"
    );
    let alone = oracle(&["check", "--require", "OBE", done]);
    assert_eq!(alone.status.code(), Some(1), "{alone:?}");
    // `translate` writes what is decided: the constructs and the line
    // `collectives tangled;`, which reads back as the same program.
    let t = stdout_of(&["translate", "tests/data/shaders/tangles/loop_peeling.comp"]);
    assert!(t.contains("collectives tangled;\n"), "{t}");
    assert!(t.contains("loop_merge"), "{t}");
    let d = Scratch::new("oracle-tangle", "d");
    let f = d.join("loop_peeling.litmus");
    std::fs::write(&f, &t).unwrap();
    let f = f.to_str().unwrap();
    let back = stdout_of(&["classify", f]);
    let shader = stdout_of(&["classify", "tests/data/shaders/tangles/loop_peeling.comp"]);
    let row = |s: &str| s.lines().nth(1).unwrap().to_string();
    assert_eq!(row(&back), row(&shader));
    // A weak compare-exchange (a `choose`: a lane's own branch, which
    // SSO's machine takes) keeps the operations tangled: the vote in
    // uniform control flow is both lanes', and the lock is released: P.
    // (Before, the choice kept them a rendezvous.)
    let weak = d.join("weak_vote.wgsl");
    let src = "@group(0) @binding(0) var<storage, read_write> lock: atomic<u32>;\n@compute @workgroup_size(2)\nfn main() {\n  let r = atomicCompareExchangeWeak(&lock, 0u, 1u);\n  if (subgroupAll(true)) {\n    atomicStore(&lock, 0u);\n  }\n}\n";
    std::fs::write(&weak, src).unwrap();
    let w = stdout_of(&[
        "classify",
        "--workgroups",
        "1",
        "--subgroup-size",
        "2",
        weak.to_str().unwrap(),
    ]);
    assert!(
        w.contains("executed by the lanes that execute it together"),
        "{w}"
    );
    let row = "weak_vote          P    P    P        P     P             P    P    P        P     P     P";
    assert!(w.contains(row), "{w}");
    // A `continue` in a selection of a loop with a continuing block is
    // outside the structure: refused, at the `continue`.
    let cont = d.join("continue.wgsl");
    let src = "@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;\n@compute @workgroup_size(2)\nfn main(@builtin(local_invocation_index) lid: u32) {\n  for (var i = 0u; i < 2u; i++) {\n    if (i == lid) { continue; }\n    let b = subgroupBroadcastFirst(i);\n  }\n}\n";
    std::fs::write(&cont, src).unwrap();
    let o = oracle(&[
        "classify",
        "--workgroups",
        "1",
        "--subgroup-size",
        "2",
        cont.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(": the translated program: 5:21: unstructured control flow: the jump at 5:21 to 4:28 leaves the selection at 5:5"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The structured translation under attack (issue 42's adversarial pass):
/// 30 nested `if`s and 12 nested loops around a subgroup operation are
/// decided; a switch of 80 cases each with one is one error line at its
/// place (past the kernel language's 63 instructions), never a panic.
#[test]
fn deep_and_wide_structure_around_subgroup_operations() {
    let d = Scratch::new("oracle-structure", "d");
    let head = "@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;\n@compute @workgroup_size(2)\nfn main(@builtin(local_invocation_index) lid: u32) {\n";
    let mut deep = head.to_string();
    for i in 0..30 {
        deep += &format!("if (lid != {}u) {{\n", i + 5);
    }
    deep += "let a = subgroupAll(true);\n";
    deep += &"}\n".repeat(31);
    let mut loops = head.to_string();
    for i in 0..12 {
        loops += &format!("loop {{ if (atomicLoad(&x) > {i}u) {{ break; }}\n");
    }
    loops += "let a = subgroupAny(true); atomicAdd(&x, 1u);\n";
    loops += &"}\n".repeat(13);
    let mut wide = format!("{head}switch (lid) {{\n");
    for i in 0..80 {
        wide += &format!("case {i}u: {{ let a = subgroupAll(true); }}\n");
    }
    wide += "default: { }\n}\n}\n";
    let run = |name: &str, src: &str| {
        let f = d.join(name);
        std::fs::write(&f, src).unwrap();
        let f = f.to_str().unwrap().to_string();
        let o = oracle(&["classify", "--workgroups", "1", "--subgroup-size", "2", &f]);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    for (name, src) in [("deep.wgsl", &deep), ("loops.wgsl", &loops)] {
        let (code, out, err) = run(name, src);
        assert_eq!(code, Some(0), "{name}: {err}");
        assert!(
            out.contains("executed by the lanes that execute it together"),
            "{name}: {out}"
        );
    }
    let (code, _, err) = run("wide.wgsl", &wide);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "instructions: the kernel language allows 63 per block (this is where it overflows)"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A module with several compute entry points and no `--entry` is one
/// program per entry point, `FILE.ENTRY`, each a dispatch decided on its
/// own (issue 49: GPUPrefixSums' reduce-then-scan is three); `explain`
/// asks which, `--test` or `--entry` names it; an entry point that cannot
/// be translated is the file's error, naming it.
#[test]
fn each_entry_point_of_a_module_is_a_program() {
    let file = "tests/data/shaders/semantics/two_entries.wgsl";
    assert_eq!(
        stdout_of(&["classify", "--format", "csv", file]),
        "test,HSA,OBE,LOBE,WEAK_FAIR,HSA_STRONG,OBE_STRONG,LOBE_STRONG,STRONG_FAIR,HSA_OBE,HSA_OBE_STRONG,UNFAIR\n\
         two_entries.publish,P,P,P,P,P,P,P,P,P,P,P\n\
         two_entries.wait,F,F,F,P,F,F,F,P,F,F,F\n"
    );
    let o = oracle(&["explain", "--model", "HSA", file]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!("error: {file}: the shader has 2 compute entry points (two_entries.publish, two_entries.wait): name one with --test NAME (or its entry point with --entry)\n")
    );
    for args in [["--test", "two_entries.wait"], ["--entry", "wait"]] {
        let mut all = vec!["explain", "--model", "HSA"];
        all.extend(args);
        all.push(file);
        let out = stdout_of(&all);
        assert!(out.contains(": F: termination is NOT guaranteed"), "{out}");
        assert!(out.contains("Workgroup 0 spins at line 19"), "{out}");
    }
    // A module of many entry points is refused, not decided at the square
    // of its size.
    let mut many = String::from("@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;\n");
    for i in 0..65 {
        many.push_str(&format!(
            "@compute @workgroup_size(1)\nfn e{i}() {{ atomicStore(&x, 1u); }}\n"
        ));
    }
    let d = Scratch::new("oracle-many-entries", "d");
    let path = d.join("many.wgsl");
    std::fs::write(&path, &many).unwrap();
    let o = oracle(&["classify", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "error: {}: the module has 65 compute entry points: at most 64 are decided one by one; name one with --entry\n",
            path.display()
        )
    );
    let o = oracle(&["classify", "--entry", "e64", path.to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    // As GPUPrefixSums' rts.wgsl is refused: its first entry point runs
    // 256 invocations a workgroup.
    let d = Scratch::new("oracle-entries", "d");
    let wide = d.join("wide.wgsl");
    let src = std::fs::read_to_string(root().join(file))
        .unwrap()
        .replacen("@workgroup_size(1)", "@workgroup_size(256)", 1);
    std::fs::write(&wide, src).unwrap();
    let o = oracle(&["classify", wide.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "error: {}:12:5: entry point `publish`: workgroup size 256: at most 8 invocations per workgroup\n",
            wide.display()
        )
    );
}

/// Under an address space too small for the tables `--max-states` allows
/// (here 700 MB against a bound of 100,000,000 states), a shader whose
/// value check keeps growing is one error line, naming what to do, and
/// the rest of the batch is decided: the process never aborts on a
/// refused allocation (issue 43 item 3: once, a 2x8 shader with two
/// `atomicAdd`s aborted a whole batch under a 3 GB address space).
#[test]
fn a_refused_allocation_is_one_error_line_and_the_batch_goes_on() {
    if !cfg!(target_os = "linux") || cfg!(debug_assertions) {
        // Release builds only: a debug build takes minutes to get there.
        return;
    }
    let dir = Scratch::new("oracle-as", "dir");
    let boom = dir.join("boom.wgsl");
    std::fs::write(&boom, "// workgroups 4;\n// values 256;\n@group(0) @binding(0) var<storage, read_write> m: array<atomic<u32>, 8>;\n@compute @workgroup_size(2)\nfn main() {\n  for (var i = 0u; i < 30u; i++) {\n    atomicAdd(&m[0], 1u);\n  }\n}\n").unwrap();
    let o = Command::new("sh")
        .current_dir(root())
        .args(["-c", "ulimit -v 700000 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_oracle"))
        .args(["classify", "--format", "csv", "--max-states", "100000000"])
        .arg(&boom)
        .arg("suites/shaders/spinlock.wgsl")
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(out.contains("\nspinlock,F,P,P,P,F,P,P,P,P,P,F\n"), "{out}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains(
            "boom.wgsl: the value check's tables could not grow: the system refused the memory"
        ) && errors[0]
            .ends_with("lower --max-states, run fewer inputs at once, or shrink the program"),
        "{err}"
    );
}

/// Issue 42: signed 32-bit integers. Where unsigned values cannot hold
/// what a shader computes (a negative `i32`, `~0u`, `0u - 1u`), the
/// translation takes two's complement values (docs/KERNEL.md §10.3): the
/// shaders of `tests/data/shaders/signed/` get their hand-derived
/// verdicts; a look-back over signed indices gets the verdicts of its
/// unsigned rewrite; the launch line and `translate` say how to read
/// values; a `--values` too small for them is refused, naming why.
#[test]
fn signed_integers_are_two_s_complement_values() {
    let dir = root().join("tests/data/shaders/signed");
    stated_verdicts_hold(&[dir], 6);
    let row = |file: &str| {
        let path = format!("tests/data/shaders/signed/{file}");
        let csv = stdout_of(&["classify", "--format", "csv", &path]);
        let line = csv.lines().nth(1).unwrap().to_string();
        line.split_once(',').unwrap().1.to_string()
    };
    assert_eq!(row("signed_loop.comp"), row("unsigned_loop.comp"));
    let out = stdout_of(&["classify", "tests/data/shaders/signed/negative.wgsl"]);
    assert!(
        out.contains("; values are two's complement: 4 to 7 stand for -4 to -1 (in outcomes and witnesses too)"),
        "{out}"
    );
    let unsigned = stdout_of(&["classify", "tests/data/shaders/signed/unsigned_loop.comp"]);
    assert!(!unsigned.contains("two's complement"), "{unsigned}");
    let listing = stdout_of(&["translate", "tests/data/shaders/signed/signed_loop.comp"]);
    assert!(
        listing.contains("// values are two's complement: 4 to 7 stand for -4 to -1"),
        "{listing}"
    );
    // A signed `<` compares the values with their top bit flipped.
    assert!(listing.contains(" ^ 4;"), "{listing}");
    // Outcomes say how to read their values (x = 5 is -3).
    let json = stdout_of(&[
        "outcomes",
        "--format",
        "json",
        "--model",
        "OBE",
        "tests/data/shaders/signed/negative.wgsl",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let launch = v["launch"].as_str().unwrap();
    assert!(launch.ends_with("values are two's complement: 4 to 7 stand for -4 to -1 (in outcomes and witnesses too)"), "{launch}");
    assert!(json.contains("\"x\": 5"), "{json}");
    let o = oracle(&[
        "classify",
        "--values",
        "4",
        "tests/data/shaders/signed/signed_loop.comp",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--values 4: the shader's constants, ids or arrays need two's complement values up to 4"),
        "{err}"
    );
}
