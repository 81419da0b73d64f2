//! Dat3M's SPIR-V liveness tests (issue 21, "Peers' own shaders"): each
//! vendored `.spvasm` of `tests/data/dat3m/` is assembled with `spirv-as`,
//! translated by the frontend with the launch of its `@Config` line, and
//! decided under the model that corresponds to Dat3M's progress model;
//! every verdict Dat3M's `SpirvLivenessTest` states must be ours
//! (`PROVENANCE.md` there says where the files come from and how the
//! models map).
//!
//! `spirv-as` is Debian's `spirv-tools`. Without it the test fails under
//! `CI=true` (CI installs it, `.ci/run`) and is skipped with a printed
//! reason elsewhere.

#[path = "../../tests/support/scratch.rs"]
#[allow(dead_code)]
mod scratch;
use oracle::kernel::{decide, Options};
use progress_litmus::kernel::shader::{translate, Launch};
use progress_litmus::kernel::ScopedModel;
use progress_litmus::Verdict;
use scratch::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/dat3m")
}

/// One row of `expected.csv`.
struct Row {
    file: String,
    dat3m: String,
    model: String,
    pass: bool,
}

/// Splits a CSV line of plain and double-quoted fields.
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

fn rows() -> Vec<Row> {
    let text = std::fs::read_to_string(data().join("expected.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("file,dat3m_progress,model,dat3m_result"));
    lines
        .map(|l| {
            let f = fields(l);
            assert_eq!(f.len(), 4, "{l}");
            assert!(f[3] == "PASS" || f[3] == "FAIL", "{l}");
            Row {
                file: f[0].clone(),
                dat3m: f[1].clone(),
                model: f[2].clone(),
                pass: f[3] == "PASS",
            }
        })
        .collect()
}

/// The launch of a file's `; @Config: T, S, W` line (T threads a subgroup,
/// S subgroups a workgroup, W workgroups: Dat3M's `ThreadGrid`), after
/// checking that every `; @Input:` starts memory at 0, as the frontend
/// takes storage buffers. Dat3M's inputs also start the kernels' `local`
/// (Workgroup) arguments at 0, which SPIR-V leaves undefined: the launch
/// says so (`--workgroup-memory zero`), and every verdict line names it.
fn launch_of(src: &str) -> Launch {
    for l in src.lines().filter(|l| l.starts_with("; @Input:")) {
        let values = l.split_once('=').unwrap().1;
        assert!(
            values.chars().all(|c| "{}0, ".contains(c)),
            "non-zero initial memory (give it as `init`): {l}"
        );
    }
    let config = src
        .lines()
        .find_map(|l| l.strip_prefix("; @Config:"))
        .expect("a @Config line");
    let n: Vec<u8> = config
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    assert_eq!(n.len(), 3, "{config}");
    Launch {
        workgroups: Some(n[2]),
        workgroup_size: Some(n[0] * n[1]),
        subgroup_size: Some(n[0]),
        zero_workgroup_memory: true,
        ..Launch::default()
    }
}

/// `spirv-as`, or `None` with the reason printed (a failure under CI).
fn spirv_as() -> Option<&'static str> {
    let ok = Command::new("spirv-as")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some("spirv-as");
    }
    let why = "spirv-as not found: install Debian's spirv-tools (`.ci/run` does)";
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{why}: under CI this test must run"
    );
    eprintln!("skipped: {why}");
    None
}

/// Assembles a vendored file into `dir` (the one edit: `OpSource Slang`,
/// debug information the bookworm assembler does not know, becomes
/// `Unknown`).
fn assemble(tool: &str, src_path: &Path, dir: &Path) -> Vec<u8> {
    let src = std::fs::read_to_string(src_path).unwrap();
    let stem = src_path.file_stem().unwrap().to_str().unwrap();
    let asm = dir.join(format!("{stem}.spvasm"));
    std::fs::write(&asm, src.replace("OpSource Slang 1", "OpSource Unknown 0")).unwrap();
    let spv = dir.join(format!("{stem}.spv"));
    let out = Command::new(tool)
        .args(["--target-env", "vulkan1.3", "-o"])
        .arg(&spv)
        .arg(&asm)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "spirv-as {}: {}",
        src_path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&spv).unwrap()
}

#[test]
fn dat3m_liveness_verdicts_hold() {
    let Some(tool) = spirv_as() else { return };
    let dir = Scratch::new("axb-dat3m", "dir");
    let rows = rows();
    assert_eq!(rows.len(), 23, "SpirvLivenessTest has 23 rows");
    let (mut translating, mut deciding) = (Duration::ZERO, Duration::ZERO);
    let mut wrong = Vec::new();
    for r in &rows {
        let src_path = data().join(&r.file);
        let launch = launch_of(&std::fs::read_to_string(&src_path).unwrap());
        let bytes = assemble(tool, &src_path, &dir);
        let spv = dir.join(&r.file).with_extension("spv");
        let t0 = Instant::now();
        let t = translate(&spv, &bytes, &launch).unwrap_or_else(|e| panic!("{e}"));
        translating += t0.elapsed();
        // Weak fairness is Dat3M's (PROVENANCE.md); the strong models agree.
        let strong = r.model.replacen("WEAK_FAIR", "STRONG_FAIR", 1);
        let strong = match strong.split_once(',') {
            _ if strong.starts_with("STRONG_FAIR") => strong,
            Some((dev, rest)) => format!("{dev}_STRONG,{rest}"),
            None => format!("{strong}_STRONG"),
        };
        for m in [&r.model, &strong] {
            let model = ScopedModel::parse(m).unwrap();
            let t1 = Instant::now();
            let d = decide(&t.program, &model, Options::default()).unwrap();
            deciding += t1.elapsed();
            if (d.verdict == Verdict::P) != r.pass {
                wrong.push(format!(
                    "{} under {m} (Dat3M {}): {:?}, Dat3M says {}",
                    r.file,
                    r.dat3m,
                    d.verdict,
                    if r.pass { "PASS" } else { "FAIL" }
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "{} Dat3M rows decided (weak and strong), {} disagree; translating {:.1} ms, deciding {:.1} ms",
        rows.len(),
        wrong.len(),
        translating.as_secs_f64() * 1e3,
        deciding.as_secs_f64() * 1e3
    );
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The mapping is not vacuous: each file's verdicts differ between the
/// models Dat3M lists for it (a frontend that lost the spin loops, or the
/// barrier, would pass or fail everywhere).
#[test]
fn each_file_is_distinguished_by_its_models() {
    let rows = rows();
    let mut files: Vec<&str> = rows.iter().map(|r| r.file.as_str()).collect();
    files.dedup();
    for f in files {
        let verdicts: Vec<bool> = rows
            .iter()
            .filter(|r| r.file == f)
            .map(|r| r.pass)
            .collect();
        let single = verdicts.len() == 1;
        assert!(
            single || verdicts.contains(&true) && verdicts.contains(&false),
            "{f}: {verdicts:?}"
        );
    }
}

/// Issue 42: a clspv module's workgroup size is a specialization constant
/// (`BuiltIn WorkgroupSize` of `OpSpecConstant`s) whose default, 1, was
/// used without a word, making Dat3M's `mp-wg_*` modules F everywhere.
/// Without `--workgroup-size` the default is still taken, but with a
/// warning, and the launch says where the size came from; the flag sets
/// it (a specialization constant is the host's to set).
#[test]
fn a_specialization_constant_size_is_named() {
    let Some(tool) = spirv_as() else { return };
    let dir = Scratch::new("axb-dat3m-spec", "dir");
    let file = "mp-wg_obe-t_obe.spvasm";
    let bytes = assemble(tool, &data().join(file), &dir);
    let spv = dir.join(file).with_extension("spv");
    // Its `local` arguments are read before they are written: SPIR-V
    // leaves them undefined, Dat3M's `@Input` lines start them at 0.
    let e = translate(&spv, &bytes, &Launch::default()).unwrap_err();
    assert!(
        e.msg.contains("may be read before it is written")
            && e.msg.contains("--workgroup-memory zero"),
        "{e}"
    );
    let zero = Launch {
        zero_workgroup_memory: true,
        ..Launch::default()
    };
    let t = translate(&spv, &bytes, &zero).unwrap();
    assert!(t
        .launch
        .describe()
        .ends_with("workgroup memory at 0 (--workgroup-memory zero)"));
    assert_eq!(t.program.workgroup_size, 1);
    assert!(
        t.warnings.iter().any(|w| w.starts_with(
            "the workgroup size 1 is the default of specialization constant SpecId 0, which the host may replace"
        )),
        "{:?}",
        t.warnings
    );
    assert!(
        t.launch
            .describe()
            .contains("of 1 invocation (the default of specialization constant SpecId 0)"),
        "{}",
        t.launch.describe()
    );
    let l = Launch {
        workgroup_size: Some(2),
        ..zero
    };
    let t = translate(&spv, &bytes, &l).unwrap();
    assert_eq!(t.program.workgroup_size, 2);
    assert!(!t
        .warnings
        .iter()
        .any(|w| w.contains("specialization constant")));
    assert!(t
        .launch
        .describe()
        .contains("of 2 invocations (--workgroup-size)"));
    let _ = std::fs::remove_dir_all(&dir);
}
