//! `oracle check` (issue 42 item 4) and the plain sentence of `explain`
//! (item 3), through the binary, run from the repository root so that
//! paths are the relative ones a CI job gives: exit statuses 0, 1 and 2 on
//! mixes of inputs, `FILE:LINE:COL` lines that point at the stuck
//! instruction, the sentences of the suites' shaders and idioms (derived
//! by hand in the comments), and SARIF with what GitHub code scanning
//! requires, byte for byte the same run after run.

#[path = "../../tests/support/scratch.rs"]
#[allow(dead_code)]
mod scratch;
use scratch::Scratch;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `oracle ARGS` in the repository root.
fn oracle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oracle"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run oracle")
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

fn scratch(name: &str) -> Scratch {
    Scratch::new("oracle-check", name)
}

const SPINLOCK: &str = "suites/shaders/spinlock.wgsl";
const MP: &str = "suites/shaders/message_passing.wgsl";
const MUTEX: &str = "suites/idioms/mutex.litmus";
const BARRIER: &str = "suites/idioms/barrier-nonuniform-2.litmus";

/// spinlock.wgsl under HSA (two workgroups of one invocation): in the
/// shortest schedule workgroup 1 takes the lock (its compare-exchange at
/// line 27 succeeds, and it stops before the branch of the same line);
/// workgroup 0's compare-exchange then fails and it loops on line 27
/// reading `lock`. Only workgroup 1 can still write `lock` (its
/// `atomicStore(&lock, 0u)` at line 34), and HSA guarantees only the
/// lowest-numbered live workgroup, 0: workgroup 1, which has run, may
/// never run again.
const SPINLOCK_HSA: &str = "Workgroup 0 spins at line 27 (`if atomicCompareExchangeWeak(&lock, 0u, 1u).exchanged {`) waiting for `lock`; of the other invocations still running, only workgroup 1 (at line 40) can write it, and under HSA only the lowest-numbered workgroup still running is guaranteed to be scheduled (here workgroup 0), so workgroup 1 may never be scheduled again.";

/// Unfair: the same lock, the roles swapped (workgroup 0 takes it first),
/// and nothing guaranteed.
const SPINLOCK_UNFAIR: &str = "Workgroup 1 spins at line 27 (`if atomicCompareExchangeWeak(&lock, 0u, 1u).exchanged {`) waiting for `lock`; of the other invocations still running, only workgroup 0 (at line 40) can write it, and under UNFAIR no workgroup is guaranteed to be scheduled, so workgroup 0 may never be scheduled again.";

/// message_passing.wgsl under OBE (two workgroups of two): workgroup 1
/// runs alone. Both its invocations pass the barrier (line 38) with
/// `gid` = 1; invocation 1 returns (line 41) and terminates; invocation 0
/// is a consumer and loops on line 47 reading `flag`. Only invocation 0
/// of workgroup 0 can raise `flag` (line 44): invocation 1 returns on its
/// `local_id`. Workgroup 0 has taken no step, and OBE guarantees only
/// workgroups that have started: it may never start. Its invocation 1,
/// at the first line of `main` (35), never finishes either.
const MP_OBE: &str = "Invocation 0 of workgroup 1 spins at line 47 (`if atomicLoad(&flag) != 0u { break; }`) waiting for `flag`; of the other invocations still running, only invocation 0 of workgroup 0 (at line 35) can write it, and under OBE only workgroups that have started are guaranteed to be scheduled (here workgroup 1), and workgroup 0 has not started, so invocation 0 of workgroup 0 may never be scheduled. Invocation 1 of workgroup 0 (at line 35) never finishes either.";

/// mutex.litmus under HSA: as the spin lock, its instructions at lines
/// 23 (`0:`) and 24 (`1: lock = 0;`).
const MUTEX_HSA: &str = "Workgroup 0 spins at line 23, instruction 0 (`if (exch(lock, 1) == 1) goto acquire;`) waiting for `lock`; of the other invocations still running, only workgroup 1 (at line 24) can write it, and under HSA only the lowest-numbered workgroup still running is guaranteed to be scheduled (here workgroup 0), so workgroup 1 may never be scheduled again.";

/// barrier-nonuniform-2.litmus (one workgroup of two): invocation 1 leaves
/// at instruction 0, invocation 0 waits at the barrier of line 18 for it.
const BARRIER_DEADLOCK: &str = "Invocation 0 of workgroup 0 waits at the barrier at line 18, instruction 1 (`barrier();`), which invocation 1 of workgroup 0 never reaches (it has finished); a barrier completes only when every invocation of its workgroup arrives at it, so the schedule ends in a deadlock, which no scheduler can undo.";

#[test]
fn explain_opens_with_the_sentence_in_the_users_words() {
    let out = oracle(&["explain", "--model", "HSA", SPINLOCK]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    let lines: Vec<&str> = t.lines().collect();
    assert!(
        lines[0].ends_with("F: termination is NOT guaranteed"),
        "{t}"
    );
    assert!(lines[1].starts_with("Launch: "), "{t}");
    assert_eq!(lines[2], SPINLOCK_HSA);
    // The formal text stays below it.
    assert!(t.contains("guaranteed are {w0}"), "{t}");
    for (model, file, want) in [
        ("UNFAIR", SPINLOCK, SPINLOCK_UNFAIR),
        ("OBE", MP, MP_OBE),
        ("HSA", MUTEX, MUTEX_HSA),
        ("WEAK_FAIR", BARRIER, BARRIER_DEADLOCK),
    ] {
        let out = oracle(&["explain", "--model", model, "--format", "json", file]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["verdict"], "F");
        assert_eq!(v["summary"], want, "{file} under {model}");
        let explanation = v["explanation"].as_str().unwrap();
        assert!(explanation.contains(want));
        // The counts are those of the product the explanation shows.
        let space = format!(
            "Product space: {} states, {} transitions",
            v["states"], v["transitions"]
        );
        assert!(explanation.contains(&space), "{space}\n{explanation}");
    }
    let out = oracle(&["explain", "--model", "OBE", "--format", "json", SPINLOCK]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"], "guaranteed to terminate under OBE");
    // A passing verdict's text has no sentence: the verdict line says it.
    let out = oracle(&["explain", "--model", "OBE", SPINLOCK]);
    assert!(text(&out.stdout)
        .lines()
        .nth(2)
        .unwrap()
        .starts_with("Model: "));
}

/// The text line's FILE:LINE:COL is the place of the instruction the
/// sentence is about, in the file as the user has it.
fn points_at(line: &str, want_text: &str) {
    let mut parts = line.splitn(4, ':');
    let (file, l, c) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let (l, c): (usize, usize) = (l.parse().unwrap(), c.parse().unwrap());
    let src = std::fs::read_to_string(root().join(file)).unwrap();
    let at: String = src
        .lines()
        .nth(l - 1)
        .unwrap()
        .chars()
        .skip(c - 1)
        .collect();
    assert!(at.starts_with(want_text), "{line}: {at:?}");
}

#[test]
fn check_exits_0_when_every_program_is_guaranteed() {
    let out = oracle(&["check", "--require", "OBE", SPINLOCK, MUTEX]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The shader's verdict names what it rests on (its launch, memory);
    // a `.litmus` program states its launch itself.
    assert_eq!(
        text(&out.stdout),
        format!(
            "{SPINLOCK}: guaranteed under OBE on this launch: 2 workgroups (default) of 1 invocation (the shader's size), subgroups of 1 invocation (default); storage buffers start at 0; atomicCompareExchangeWeak may fail spuriously, finitely often on a run (assumed, as C++ recommends; WGSL does not promise it; --spurious-failures unbounded drops it); memory sequentially consistent\nchecked 2 programs under 1 model: 0 not guaranteed\n"
        )
    );
    // A scoped model, spelled as --model takes it.
    let out = oracle(&["check", "--require", "OBE, subgroup=lockstep", SPINLOCK]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn check_exits_1_with_a_finding_per_program_and_model() {
    let out = oracle(&[
        "check",
        "--require",
        "OBE",
        "--require",
        "HSA",
        SPINLOCK,
        MP,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    let heads: Vec<&str> = t.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(
        heads,
        [
            format!("{SPINLOCK}:27:12: HSA: {SPINLOCK_HSA}").as_str(),
            format!("{MP}:47:28: OBE: {MP_OBE}").as_str(),
            "checked 2 programs under 2 models: 2 not guaranteed",
        ],
        "{t}"
    );
    points_at(heads[0], "atomicCompareExchangeWeak(&lock");
    points_at(heads[1], "flag) != 0u");
    // The launch and the witness, indented, with the shader's lines.
    assert!(
        t.contains("\n    launch: 2 workgroups (default) of 1 invocation"),
        "{t}"
    );
    assert!(
        t.contains("\n    --- repeats forever from here ---\n"),
        "{t}"
    );
    assert!(
        t.contains("  [suites/shaders/spinlock.wgsl:27: if atomicCompareExchangeWeak(&lock, 0u, 1u).exchanged {]\n"),
        "{t}"
    );
    // A .litmus program points at its instruction; an AXB test has no
    // positions: the file alone.
    let axb = "data/oopsla21/tests/2t2i_3.txt";
    let out = oracle(&[
        "check",
        "--require",
        "HSA",
        "--require",
        "OBE",
        MUTEX,
        BARRIER,
        axb,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out.stdout);
    let heads: Vec<&str> = t.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(heads[0], format!("{MUTEX}:23:6: HSA: {MUTEX_HSA}"));
    assert_eq!(heads[1], format!("{BARRIER}:18:6: HSA: {BARRIER_DEADLOCK}"));
    assert_eq!(heads[2], format!("{BARRIER}:18:6: OBE: {BARRIER_DEADLOCK}"));
    assert!(
        heads[3].starts_with(&format!(
            "{axb}: OBE: Workgroup 1 spins at instruction 0 (`if (exch(Mem[0], 0) == 0) goto 0;`)"
        )),
        "{t}"
    );
    assert_eq!(
        heads[4],
        "checked 3 programs under 2 models: 4 not guaranteed"
    );
    points_at(heads[0], "if (exch(lock, 1) == 1)");
    points_at(heads[1], "barrier();");
}

#[test]
fn check_exits_2_on_bad_input_and_still_checks_the_rest() {
    let d = scratch("bad");
    let bad = d.join("bad.litmus");
    std::fs::write(
        &bad,
        "values 2;\nworkgroups 1;\nkernel {\n  0: frobnicate;\n}\n",
    )
    .unwrap();
    let out = oracle(&["check", "--require", "OBE", MP, bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let t = text(&out.stdout);
    assert!(t.starts_with(&format!("{MP}:47:28: OBE: ")), "{t}");
    assert!(
        t.ends_with(
            "checked 1 program under 1 model: 1 not guaranteed; 1 error (on standard error)\n"
        ),
        "{t}"
    );
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("error: {}:4:", bad.display())),
        "{err}"
    );
    // A program the checker cannot decide within --max-states.
    let out = oracle(&[
        "check",
        "--max-states",
        "10",
        "--require",
        "OBE",
        MP,
        SPINLOCK,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("error: {MP}: test `message_passing` under OBE: the state space exceeds --max-states 10")),
        "{err}"
    );
    // Unknown models and a missing --require are usage errors.
    for args in [
        &["check", "--require", "SOMETIMES", MP][..],
        &["check", MP][..],
    ] {
        let out = oracle(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
    }
    let out = oracle(&["check", "--require", "OBE", "/nonexistent/x.wgsl"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stdout),
        "checked 0 programs under 1 model: 0 not guaranteed; 1 error (on standard error)\n"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn check_json_gives_every_verdict() {
    let out = oracle(&[
        "check",
        "--require",
        "OBE",
        "--require",
        "HSA",
        "--format",
        "json",
        SPINLOCK,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["models"], serde_json::json!(["OBE", "HSA"]));
    let r = v["results"].as_array().unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(
        (r[0]["model"].as_str(), r[0]["verdict"].as_str()),
        (Some("OBE"), Some("P"))
    );
    assert_eq!(r[1]["verdict"], "F");
    assert_eq!(r[1]["summary"], SPINLOCK_HSA);
    assert_eq!(
        (r[1]["line"].as_u64(), r[1]["column"].as_u64()),
        (Some(27), Some(12))
    );
    let w = r[1]["witness"].as_array().unwrap();
    // w1 takes the lock (5 steps), then w0 fails to, once before the
    // repeated part (where its dead registers still held the start's
    // values: docs/KERNEL.md §8.9) and once in it.
    assert_eq!(w.len(), 15);
    assert_eq!(w[0]["actor"], "w1");
    assert_eq!(w[10]["repeats_from_here"], true);
    assert_eq!(w[0]["line"], 27);
}

/// The SARIF properties GitHub code scanning requires (its upload rules,
/// as the SARIF SDK's GH rules check them: required log, run, tool,
/// rule, result, location and region properties; relative or `file`
/// URIs; thread-flow locations inline), checked by hand: no schema
/// validator is available offline.
fn github_accepts(log: &Value) {
    assert_eq!(
        log["$schema"],
        "https://json.schemastore.org/sarif-2.1.0.json"
    );
    assert_eq!(log["version"], "2.1.0");
    let runs = log["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "oracle");
    assert!(driver["version"].is_string());
    let rules = driver["rules"].as_array().expect("rules");
    let ids: Vec<&str> = rules
        .iter()
        .map(|r| r["id"].as_str().expect("rule id"))
        .collect();
    for r in rules {
        for k in ["shortDescription", "fullDescription", "help"] {
            assert!(!r[k]["text"].as_str().unwrap().is_empty(), "{k}");
        }
    }
    assert!(run["invocations"][0]["executionSuccessful"].is_boolean());
    let location = |l: &Value| {
        let p = &l["physicalLocation"];
        let uri = p["artifactLocation"]["uri"].as_str().expect("uri");
        assert!(!uri.contains('\\') && !uri.contains(' '), "{uri}");
        assert!(!uri.contains(':') || uri.starts_with("file:///"), "{uri}");
        assert!(p["region"]["startLine"].as_u64().unwrap() >= 1);
        if let Some(c) = p["region"].get("startColumn") {
            assert!(c.as_u64().unwrap() >= 1);
        }
    };
    for r in run["results"].as_array().expect("results") {
        assert!(ids.contains(&r["ruleId"].as_str().unwrap()));
        assert!(!r["message"]["text"].as_str().unwrap().is_empty());
        let locs = r["locations"].as_array().unwrap();
        assert!(!locs.is_empty() && locs.len() <= 10);
        locs.iter().for_each(location);
        assert!(r["partialFingerprints"].is_object());
        if r["ruleId"] == "progress/data-race" {
            assert_eq!(r["level"], "warning");
            continue;
        }
        assert_eq!(r["level"], "error");
        let steps = r["codeFlows"][0]["threadFlows"][0]["locations"]
            .as_array()
            .unwrap();
        assert!(!steps.is_empty());
        for s in steps {
            assert!(s.get("index").is_none());
            location(&s["location"]);
            assert!(!s["location"]["message"]["text"]
                .as_str()
                .unwrap()
                .is_empty());
        }
    }
}

#[test]
fn check_sarif_is_what_code_scanning_reads_and_is_deterministic() {
    let args = [
        "check",
        "--require",
        "HSA",
        "--require",
        "OBE",
        "--format",
        "sarif",
        MP,
        SPINLOCK,
        MUTEX,
    ];
    let out = oracle(&args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(oracle(&args).stdout, out.stdout, "the same bytes each run");
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    github_accepts(&log);
    let run = &log["runs"][0];
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["progress/HSA", "progress/OBE"]);
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    // In input order: message passing fails under OBE only, the spin lock
    // and the mutex under HSA only.
    let results = run["results"].as_array().unwrap();
    let got: Vec<(&str, &str, u64, u64)> = results
        .iter()
        .map(|r| {
            let p = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap(),
                p["artifactLocation"]["uri"].as_str().unwrap(),
                p["region"]["startLine"].as_u64().unwrap(),
                p["region"]["startColumn"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("progress/OBE", MP, 47, 28),
            ("progress/HSA", SPINLOCK, 27, 12),
            ("progress/HSA", MUTEX, 23, 6),
        ]
    );
    assert_eq!(results[0]["message"]["text"], MP_OBE);
    assert_eq!(results[1]["message"]["text"], SPINLOCK_HSA);
    // The code flow is the witness: spinlock's fifteen steps, all at line 27.
    let steps = results[1]["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .unwrap();
    // (Each attempt of the weak compare-exchange is its choice, not
    // taken here, then the strong `cas`: docs/KERNEL.md §2.11.)
    assert_eq!(steps.len(), 15);
    assert_eq!(
        steps[0]["location"]["message"]["text"],
        "1 w1: 0: choose finitely goto 4;  (not taken)"
    );
    assert_eq!(
        steps[1]["location"]["message"]["text"],
        "2 w1: 1: r0 = cas(lock, 0, 1);"
    );
    assert_eq!(steps[10]["properties"]["repeatsFromHere"], true);

    // Inputs that could not be read: notifications, and no success.
    let d = scratch("sarif");
    let bad = d.join("bad.wgsl");
    std::fs::write(&bad, "fn main( {").unwrap();
    let out = oracle(&[
        "check",
        "--require",
        "HSA",
        "--format",
        "sarif",
        SPINLOCK,
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    github_accepts(&log);
    let inv = &log["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false);
    let notes = inv["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notes.len(), 1);
    assert!(notes[0]["message"]["text"]
        .as_str()
        .unwrap()
        .contains("bad.wgsl:1:"));
    assert_eq!(log["runs"][0]["results"].as_array().unwrap().len(), 1);
    let _ = std::fs::remove_dir_all(&d);
}

/// A program that passes but whose verdict rests on sequentially
/// consistent memory where the Vulkan memory model sees a race gets a
/// SARIF warning, so CI shows it; the exit status is the termination
/// check's (found by an audit of issue 42: before, a passing racy shader
/// gave no result at all).
#[test]
fn check_sarif_warns_of_the_races_a_passing_verdict_rests_on() {
    let out = oracle(&[
        "check",
        "--require",
        "OBE",
        "--format",
        "sarif",
        "suites/shaders/peterson_glsl.comp",
        "suites/shaders/spinlock.wgsl",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    github_accepts(&log);
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    let r = &results[0];
    assert_eq!(r["ruleId"], "progress/data-race");
    assert_eq!(r["level"], "warning");
    let m = r["message"]["text"].as_str().unwrap();
    assert!(m.starts_with("`peterson_glsl`: decided on sequentially consistent memory, but in the Vulkan memory model these accesses race: `flag`: read by plain (non-atomic) loads in a loop"), "{m}");
    let uri = &r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
    assert_eq!(uri, "suites/shaders/peterson_glsl.comp");
}

/// A shader whose barrier some invocation passes by fails every
/// requirement (the program deadlocks there), and its finding, in text and
/// in SARIF, also says that the shader's behaviour is undefined there, as
/// its launch line does (docs/KERNEL.md §10.3), so that a code review
/// shows the cause, not only the deadlock.
#[test]
fn check_says_a_barrier_in_non_uniform_control_flow_is_undefined() {
    let file = "tests/data/shaders/barriers/skipped.comp";
    let ub = " The shader's behaviour is undefined there: a workgroup barrier in non-uniform control flow at line 16, column 5 (on some schedule invocation 0.0 waits there while 0.1 has finished without reaching it; GLSL requires barrier() in uniform control flow and leaves any other call undefined).";
    let out = oracle(&["check", "--require", "OBE", file]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let first = text(&out.stdout).lines().next().unwrap().to_string();
    assert!(
        first.starts_with(&format!(
            "{file}:16:5: OBE: Invocation 0 of workgroup 0 waits at the barrier at line 16"
        )),
        "{first}"
    );
    assert!(first.ends_with(ub), "{first}");
    let out = oracle(&["check", "--require", "OBE", "--format", "sarif", file]);
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    github_accepts(&log);
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    let m = results[0]["message"]["text"].as_str().unwrap();
    assert!(m.ends_with(ub), "{m}");
    // A shader without one says nothing of it.
    let out = oracle(&["check", "--require", "OBE", SPINLOCK]);
    assert!(!text(&out.stdout).contains("undefined there"));
}

/// A repository's shader named as the name rule does not allow (a space,
/// a leading `-`, more than 64 characters) is checked, not refused with
/// "rename the file" (found by an audit of issue 42: one such file made
/// a CI step exit 2): its program takes the stem with `_` for what the
/// rule refuses, and findings name the file by its path.
#[test]
fn check_takes_shaders_whatever_their_file_names() {
    let d = scratch("names");
    let src = std::fs::read(root().join(SPINLOCK)).unwrap();
    let ext = Path::new(SPINLOCK).extension().unwrap().to_str().unwrap();
    let long = format!("{}.{ext}", "x".repeat(70));
    for name in [format!("my shader.{ext}"), format!("-x.{ext}"), long] {
        std::fs::write(d.join(&name), &src).unwrap();
    }
    let out = oracle(&["check", "--require", "HSA", d.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("checked 3 programs under 1 model: 3 not guaranteed"),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("/my shader.{ext}:")), "{stdout}");
    let out = oracle(&["classify", "--format", "csv", d.to_str().unwrap()]);
    let names: Vec<String> = (text(&out.stdout).lines().skip(1))
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    let want = ["_-x", "my_shader", &"x".repeat(64)];
    assert_eq!(names, want, "{}", text(&out.stderr));
    // Names that two files give alike are told apart, the later one
    // named with its extension, then numbered, each with a warning: a
    // suite `label` writes names each program once.
    std::fs::write(d.join(format!("my_shader.{ext}")), &src).unwrap();
    std::fs::write(
        d.join("my shader.comp"),
        b"#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
    )
    .unwrap();
    let sub = d.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join(format!("my shader.{ext}")), &src).unwrap();
    let out = oracle(&["classify", "--format", "csv", d.to_str().unwrap()]);
    let names: Vec<String> = (text(&out.stdout).lines().skip(1))
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    // In the walk's order: `my shader.comp`, `my shader.wgsl`,
    // `my_shader.wgsl`, `sub/my shader.wgsl`.
    let dotted = format!("my_shader.{ext}");
    let want = [
        "_-x",
        "my_shader",
        &dotted,
        "my_shader_2",
        "my_shader_3",
        &"x".repeat(64),
    ];
    assert_eq!(names, want, "{}", text(&out.stderr));
    let warned = text(&out.stderr)
        .matches("the name its file gives, is taken by an earlier input")
        .count();
    assert_eq!(warned, 3, "{}", text(&out.stderr));
}

/// `-o FILE` as every command: the file holds the output, replaced whole.
#[test]
fn check_writes_its_output_with_dash_o() {
    let d = scratch("out");
    let f = d.join("oracle.sarif");
    let out = oracle(&[
        "check",
        "--require",
        "OBE",
        "--format",
        "sarif",
        "-o",
        f.to_str().unwrap(),
        SPINLOCK,
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let log: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
    github_accepts(&log);
    assert!(log["runs"][0]["results"].as_array().unwrap().is_empty());
    assert!(Path::new(&f).exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// `-o -` is standard output: the same bytes as without `-o`; text and
/// JSON, like SARIF, are the same bytes run after run.
#[test]
fn check_dash_o_dash_is_standard_output_and_every_format_is_deterministic() {
    for format in ["text", "json", "sarif"] {
        let args = [
            "check",
            "--require",
            "HSA",
            "--format",
            format,
            SPINLOCK,
            MP,
        ];
        let plain = oracle(&args);
        assert_eq!(plain.status.code(), Some(1), "{format}");
        let mut dash = args.to_vec();
        dash.extend(["-o", "-"]);
        let dashed = oracle(&dash);
        assert_eq!(dashed.status.code(), Some(1), "{format}");
        assert_eq!(dashed.stdout, plain.stdout, "{format}");
        assert_eq!(oracle(&args).stdout, plain.stdout, "{format}");
    }
    // A model required twice is one model.
    let out = oracle(&["check", "--require", "HSA", "--require", "hsa", SPINLOCK]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).ends_with("checked 1 program under 1 model: 1 not guaranteed\n"));
}

/// `oracle ARGS` in `dir`.
fn oracle_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oracle"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run oracle")
}

/// A folder name is the user's, untrusted: quotes, a line break, a
/// terminal escape, `%`, `#` and a space. Text output shows it escaped
/// (one line per finding, no control character), JSON carries it exactly
/// (JSON-escaped), SARIF as a relative, percent-encoded URI.
#[test]
fn check_escapes_untrusted_file_names_in_every_format() {
    let d = scratch("names");
    let hostile = "a\"b\nc\u{1b}[31m x%#";
    std::fs::create_dir_all(d.join(hostile)).unwrap();
    let shader = d.join(hostile).join("spinlock.wgsl");
    std::fs::copy(root().join(SPINLOCK), &shader).unwrap();
    let rel = format!("{hostile}/spinlock.wgsl");

    let out = oracle_in(&d, &["check", "--require", "HSA", &rel]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "{t:?}");
    let first = t.lines().next().unwrap();
    assert_eq!(
        first,
        format!("a\"b\\nc\\u{{1b}}[31m x%#/spinlock.wgsl:27:12: HSA: {SPINLOCK_HSA}")
    );
    assert!(
        t.contains("  [a\"b\\nc\\u{1b}[31m x%#/spinlock.wgsl:27: if atomicCompareExchangeWeak"),
        "{t}"
    );

    let out = oracle_in(&d, &["check", "--require", "HSA", "--format", "json", &rel]);
    assert_eq!(out.status.code(), Some(1));
    let raw = text(&out.stdout);
    assert!(!raw.chars().any(|c| c.is_control() && c != '\n' && c != ' '));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"][0]["source"], rel.as_str());
    assert_eq!(v["results"][0]["summary"], SPINLOCK_HSA);

    let out = oracle_in(
        &d,
        &["check", "--require", "HSA", "--format", "sarif", &rel],
    );
    assert_eq!(out.status.code(), Some(1));
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    github_accepts(&log);
    let want = "a%22b%0Ac%1B%5B31m%20x%25%23/spinlock.wgsl";
    let r = &log["runs"][0]["results"][0];
    assert_eq!(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        want
    );
    for s in r["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .unwrap()
    {
        assert_eq!(
            s["location"]["physicalLocation"]["artifactLocation"]["uri"],
            want
        );
    }
    // An absolute path inside the working directory is made relative.
    let abs = d.canonicalize().unwrap().join(&rel);
    let out = oracle_in(
        &d,
        &[
            "check",
            "--require",
            "HSA",
            "--format",
            "sarif",
            abs.to_str().unwrap(),
        ],
    );
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        want
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The CI case: a folder of shaders with one that cannot be read. The
/// others are still checked and their findings reported (in sorted
/// order), the bad one is an error, and the status is 2. A folder with no
/// program at all is an error too: a check of nothing must not pass.
#[test]
fn check_a_folder_with_a_bad_file_checks_the_others() {
    let d = scratch("folder");
    let shaders = d.join("shaders");
    std::fs::create_dir_all(&shaders).unwrap();
    std::fs::copy(root().join(MP), shaders.join("b_mp.wgsl")).unwrap();
    std::fs::copy(root().join(SPINLOCK), shaders.join("a_lock.wgsl")).unwrap();
    std::fs::write(shaders.join("c_bad.wgsl"), "@compute fn main( {").unwrap();
    std::fs::write(shaders.join("notes.md"), "not a program").unwrap();

    let out = oracle_in(
        &d,
        &["check", "--require", "OBE", "--require", "HSA", "shaders"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    let heads: Vec<&str> = t.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(
        heads,
        [
            format!("shaders/a_lock.wgsl:27:12: HSA: {SPINLOCK_HSA}").as_str(),
            format!("shaders/b_mp.wgsl:47:28: OBE: {MP_OBE}").as_str(),
            "checked 2 programs under 2 models: 2 not guaranteed; 1 error (on standard error)",
        ],
        "{t}"
    );
    let err = text(&out.stderr);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].starts_with("error: shaders/c_bad.wgsl:1:"),
        "{err}"
    );
    // Without the bad file: findings only, status 1.
    std::fs::remove_file(shaders.join("c_bad.wgsl")).unwrap();
    let out = oracle_in(
        &d,
        &["check", "--require", "OBE", "--require", "HSA", "shaders"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        !text(&out.stderr).contains("error:"),
        "{}",
        text(&out.stderr)
    );

    std::fs::create_dir_all(d.join("empty")).unwrap();
    let out = oracle_in(&d, &["check", "--require", "OBE", "empty"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("error: no programs to check"));
    let _ = std::fs::remove_dir_all(&d);
}

/// A file of several programs (an AXB suite): each finding names its
/// test, in text and in the SARIF message; with no source positions the
/// result points at the file's first line.
#[test]
fn check_names_the_test_of_a_suite() {
    let suite = "suites/2t2i/2t2i.ron";
    let out = oracle(&["check", "--require", "OBE", suite]);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out.stdout);
    // 2t2i_0: thread 0 spins on Mem[0] == 0 for thread 1's store; OBE
    // guarantees only started threads, and thread 1 has not started.
    assert!(
        t.starts_with(&format!(
            "{suite}: OBE: test `2t2i_0`: Workgroup 0 spins at instruction 0 (`if (Mem[0] == 0) goto 0;`) waiting for `Mem[0]`"
        )),
        "{t}"
    );
    let out = oracle(&["check", "--require", "OBE", "--format", "sarif", suite]);
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    github_accepts(&log);
    let r = &log["runs"][0]["results"][0];
    assert!(r["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("test `2t2i_0`: Workgroup 0 spins"));
    assert_eq!(r["properties"]["test"], "2t2i_0");
    let region = &r["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 1);
    assert!(region.get("startColumn").is_none());
}
