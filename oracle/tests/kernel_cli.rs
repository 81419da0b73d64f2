//! The `oracle` binary on kernel programs: every command accepts `.litmus`
//! files (alone, mixed with AXB tests, in directories), bad input gets one
//! positioned error line and exit status 2 without stopping the batch.

#[path = "../../tests/support/scratch.rs"]
#[allow(dead_code)]
mod scratch;
use scratch::Scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn oracle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oracle"))
        .args(args)
        .output()
        .expect("run oracle")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn idiom(name: &str) -> PathBuf {
    root().join("suites/idioms").join(format!("{name}.litmus"))
}

fn scratch(name: &str) -> Scratch {
    Scratch::new("oracle-kernel-cli", name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

#[test]
fn classify_mixes_litmus_programs_and_axb_tests() {
    let axb = root().join("data/oopsla21/tests/2t2i_3.txt");
    let out = oracle(&["classify", "--format", "csv", s(&idiom("mutex")), s(&axb)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], progress_litmus::model::csv_header());
    // Rows in input order, as for AXB tests.
    assert_eq!(lines[1], "mutex,F,P,P,P,F,P,P,P,P,P,F");
    assert_eq!(lines[2], "2t2i_3,P,F,P,P,P,F,P,P,P,P,F");
    let out = oracle(&["classify", s(&root().join("suites/idioms"))]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.contains("sequentially consistent"), "{table}");
    assert!(table.lines().count() >= 22, "{table}");
    assert!(
        out.stderr.is_empty(),
        "expectations disagree: {}",
        text(&out.stderr)
    );
}

#[test]
fn classify_json_reports_expectations_and_deadlocks() {
    let out = oracle(&[
        "classify",
        "--format",
        "json",
        s(&idiom("barrier-nonuniform-2")),
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["test"], "barrier-nonuniform-2");
    assert_eq!(v[0]["deadlock"], true);
    assert_eq!(v[0]["verdicts"]["STRONG_FAIR"], "F");
    assert_eq!(v[0]["memory"], "sequentially consistent");
    assert_eq!(v[0]["expect"][0]["agrees"], true);
}

#[test]
fn explain_uses_the_given_or_the_files_model() {
    let out = oracle(&["explain", s(&idiom("mutex")), "--model", "HSA"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(
        t.starts_with("mutex under weak HSA (memory sequentially consistent): F"),
        "{t}"
    );
    assert!(t.contains("repeats forever"), "{t}");
    // The file has no model line: it must be named.
    let out = oracle(&["explain", s(&idiom("mutex"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--model"),
        "{}",
        text(&out.stderr)
    );
    let d = scratch("explain");
    let f = d.join("p.litmus");
    std::fs::write(
        &f,
        "values 2;\nworkgroups 3;\nglobal n;\nmodel WEAK_FAIR, occupancy=2;\n\nkernel {\n  0: fetch_add(n, 1);\n  1: if (n != 1) goto 1;\n}\n",
    )
    .unwrap();
    let out = oracle(&["explain", s(&f)]);
    let t = text(&out.stdout);
    assert!(t.contains("at most 2 workgroups resident"), "{t}");
    assert!(t.contains("F: termination is NOT guaranteed"), "{t}");
    // --occupancy overrides the file's bound.
    let out = oracle(&[
        "explain",
        s(&f),
        "--occupancy",
        "3",
        "-o",
        s(&d.join("e.txt")),
    ]);
    assert!(out.status.success());
    let t = std::fs::read_to_string(d.join("e.txt")).unwrap();
    assert!(t.contains("at most 3 workgroups resident"), "{t}");
    let out = oracle(&[
        "explain",
        s(&idiom("barrier-nonuniform-2")),
        "--model",
        "STRONG_FAIR",
    ]);
    assert!(text(&out.stdout).contains("a schedule deadlocks"));
}

#[test]
fn lts_draws_the_program_and_the_product() {
    let out = oracle(&["lts", s(&idiom("mutex")), "--dot"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dot = text(&out.stdout);
    assert!(dot.starts_with("digraph \"mutex\" {"), "{dot}");
    assert!(dot.contains("lock=0 pc=[0,0]"), "{dot}");
    let out = oracle(&["lts", s(&idiom("mutex")), "--dot", "--model", "OBE"]);
    let dot = text(&out.stdout);
    assert!(dot.contains("F: dev={"), "{dot}");
    assert!(dot.contains("peripheries=2"), "{dot}");
}

#[test]
fn label_writes_a_kernel_suite_that_classifies_back() {
    let d = scratch("label");
    let suite = d.join("idioms.ron");
    let out = oracle(&[
        "label",
        "--name",
        "idioms",
        "-o",
        s(&suite),
        s(&idiom("mutex")),
        s(&idiom("ticket-lock")),
        s(&root().join("data/oopsla21/tests/2t2i_3.txt")),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ron = std::fs::read_to_string(&suite).unwrap();
    assert!(ron.starts_with("KernelSuite("), "{ron}");
    let a = oracle(&["classify", "--format", "csv", s(&suite)]);
    assert!(a.status.success(), "{}", text(&a.stderr));
    let csv = text(&a.stdout);
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(csv.contains("mutex,F,P,P,P,F,P,P,P,P,P,F"), "{csv}");
    let out = oracle(&[
        "explain",
        s(&suite),
        "--test",
        "ticket-lock",
        "--model",
        "OBE",
    ]);
    assert!(text(&out.stdout).contains("P: termination is guaranteed"));
}

#[test]
fn bad_programs_get_one_positioned_error_and_the_batch_goes_on() {
    let d = scratch("bad");
    std::fs::copy(idiom("mutex"), d.join("mutex.litmus")).unwrap();
    let cases: [(&str, &str, &str); 6] = [
        (
            "syntax.litmus",
            "values 2;\nworkgroups 1;\nkernel {\n  goto;\n}\n",
            "syntax.litmus:4:7: expected a label",
        ),
        (
            "domain.litmus",
            "values 2;\nworkgroups 1;\nglobal x;\nkernel {\n  x = 5;\n}\n",
            "domain.litmus:5:3: value 5 is outside the domain 0..2",
        ),
        (
            "shape.litmus",
            "values 2;\nworkgroups 12;\nkernel {\n}\n",
            "shape.litmus:1:1: 12 workgroups",
        ),
        (
            "unknown.litmus",
            "values 2;\nworkgroups 1;\nkernel {\n  spin(x);\n}\n",
            "unknown.litmus:4:3: expected an instruction, found `spin`",
        ),
        (
            "model.litmus",
            "values 2;\nworkgroups 1;\nmodel OBE, wg=lockstep;\nkernel {\n}\n",
            "model.litmus:3:7: lockstep is a subgroup-scope model",
        ),
        (
            "bytes.litmus",
            "values 2;\u{1}\n",
            "bytes.litmus:1:10: unexpected character",
        ),
    ];
    for (name, body, _) in &cases {
        std::fs::write(d.join(name), body).unwrap();
    }
    let out = oracle(&["classify", "--format", "csv", s(&d)]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), cases.len(), "{err}");
    for (name, _, want) in &cases {
        assert!(err.contains(want), "{name}: {err}");
    }
    assert!(!err.contains("panicked"));
    let csv = text(&out.stdout);
    assert_eq!(
        csv.lines().count(),
        2,
        "the good program is still classified: {csv}"
    );
    // A single bad file: one line, exit 2, no empty table.
    let out = oracle(&["classify", s(&d.join("syntax.litmus"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(text(&out.stderr).lines().count(), 1);
}

#[test]
fn the_state_bound_and_run_time_faults_are_errors_of_one_test() {
    let d = scratch("bound");
    std::fs::copy(idiom("mutex"), d.join("a.litmus")).unwrap();
    std::fs::copy(idiom("discovery-barrier"), d.join("b.litmus")).unwrap();
    std::fs::write(
        d.join("c.litmus"),
        "values 4;\nworkgroups 2;\nglobal a[2];\nkernel {\n  0: r = wg_id + 1;\n  1: a[r] = 1;\n}\n",
    )
    .unwrap();
    let out = oracle(&["classify", "--format", "csv", "--max-states", "100", s(&d)]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(
        err.contains("b.litmus: test `b`: the state space exceeds --max-states 100"),
        "{err}"
    );
    assert!(err.contains("c.litmus: test `c`: a schedule goes wrong: invocation 1.0 at instruction 1: index 2 is out of bounds: `a` has 2 cells"), "{err}");
    let csv = text(&out.stdout);
    assert!(csv.contains("\na,"), "{csv}");
    assert_eq!(csv.lines().count(), 2, "{csv}");
}

/// Issue 20 item 11: CR-only files got wrong positions (all on line 1, or
/// a `//` comment swallowing the rest). Every format's error is at the
/// same line and column whichever of `\n`, `\r\n`, `\r` ends its lines.
#[test]
fn positions_are_the_same_for_every_line_end() {
    let d = scratch("line-ends");
    let cases = [
        (
            "k.litmus",
            "values 2;\n// c\nworkgroups 1;\nkernel {\n  x = ;\n}\n",
            "k.litmus:5:7: ",
        ),
        (
            "t.txt",
            "THREAD0\n\natomic_store(0,1)\natomic_store(0,1\n",
            "t.txt:4:17: ",
        ),
        (
            "r.ron",
            "Test(\n  threads: [\n    [(loc: 0, check: 0, jump: End, bogus: 1)],\n  ],\n)\n",
            "r.ron:3:36: ",
        ),
        (
            "p.ron",
            "Kernel(\n  values: 2,\n  workgroups: nope,\n)\n",
            "p.ron:3:15: ",
        ),
    ];
    for (name, src, want) in cases {
        for nl in ["\n", "\r\n", "\r"] {
            let f = d.join(name);
            std::fs::write(&f, src.replace('\n', nl)).unwrap();
            let out = oracle(&["classify", s(&f)]);
            assert_eq!(out.status.code(), Some(2), "{name} {nl:?}");
            let err = text(&out.stderr);
            assert!(err.contains(want), "{name} {nl:?}: {err}");
        }
    }
}

/// Issue 20 item 11: `oracle explain DIR` said "unknown format `.`".
#[test]
fn a_one_file_command_given_a_directory_says_so() {
    let d = scratch("onefile");
    std::fs::copy(idiom("mutex"), d.join("mutex.litmus")).unwrap();
    std::fs::write(d.join("README"), "x").unwrap();
    for cmd in ["explain", "lts"] {
        let out = oracle(&[cmd, s(&d)]);
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!(
                "error: {}: is a directory: this command takes one file, a `.litmus` program",
                d.display()
            )),
            "{err}"
        );
    }
    let out = oracle(&["explain", s(&d.join("README"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr)
        .contains("README: unknown format (no extension): expected a `.litmus` program"));
}

/// Issue 20 item 11: an `expect` the oracle cannot decide was reported as
/// `"agrees": false`; it is `null`, with the reason, and the warning says
/// it is undecided rather than contradicted.
#[test]
fn an_undecided_expectation_is_neither_agreed_nor_contradicted() {
    let d = scratch("undecided");
    let f = d.join("und.litmus");
    std::fs::write(
        &f,
        "values 2;\nworkgroups 1;\nworkgroup_size 8;\nsubgroup_size 8;\nexpect OBE, subgroup=lockstep: P;\nexpect OBE: P;\nexpect OBE: F;\nkernel {\n  0: barrier();\n}\n",
    )
    .unwrap();
    let out = oracle(&["classify", "--format", "json", s(&f)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &v[0]["expect"];
    assert_eq!(e[0]["agrees"], serde_json::Value::Null, "{e}");
    assert!(e[0]["undecided"]
        .as_str()
        .unwrap()
        .contains("lockstep supports at most 4"));
    assert_eq!(e[1]["agrees"], true, "{e}");
    assert_eq!(e[2]["agrees"], false, "{e}");
    assert!(e[1].get("undecided").is_none(), "{e}");
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(err.contains("expect OBE, subgroup=lockstep: P is undecided: the oracle gives no verdict (subgroups of 8"), "{err}");
    assert!(err.contains("expect OBE: F but the oracle says P"), "{err}");
}

/// Each model of a program's `expect` lines is decided once (thousands of
/// lines naming one model took a decision each: 20 s for 20,000), and
/// every line still gets its own answer.
#[test]
fn many_expect_lines_share_their_models_decisions() {
    let d = scratch("many-expect");
    let f = d.join("many.litmus");
    let mut src = String::from("values 2;\nworkgroups 2;\nglobal x;\n");
    for i in 0..3000 {
        let (m, o) = [("OBE", "P"), ("OBE", "F"), ("HSA", "deadlock")][i % 3];
        src.push_str(&format!("expect {m}: {o};\n"));
    }
    src.push_str("kernel {\n  0: x = 1;\n}\n");
    std::fs::write(&f, src).unwrap();
    let out = oracle(&["classify", "--format", "json", s(&f)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = v[0]["expect"].as_array().unwrap();
    assert_eq!(e.len(), 3000);
    for (i, x) in e.iter().enumerate() {
        assert_eq!(x["agrees"], i % 3 == 0, "{i}: {x}");
    }
    assert_eq!(text(&out.stderr).lines().count(), 2000);
}

/// Issue 20 item 3: one instruction in 2 workgroups of 8 invocations
/// aborted the process at 3.4 GB under the default bound, taking the batch
/// with it. The bound is a memory budget now: the program is one error
/// line naming the budget, and the program after it is still decided.
/// (Each invocation stores its own id: since issue 24 invocations that
/// cannot be told apart are interchangeable, and the same store of 1 by
/// all sixteen takes a few hundred states.)
#[test]
fn a_space_past_the_memory_budget_is_an_error_of_one_test() {
    let d = scratch("budget");
    std::fs::write(
        d.join("a-big.litmus"),
        "values 16;\nworkgroups 2;\nworkgroup_size 8;\nglobal x;\nkernel {\n  0: x = local_id;\n}\n",
    )
    .unwrap();
    std::fs::copy(idiom("mutex"), d.join("b-mutex.litmus")).unwrap();
    let out = oracle(&[
        "classify",
        "--format",
        "csv",
        "--max-states",
        "200000",
        s(&d),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("a-big.litmus: test `a-big`: the state space exceeds --max-states 200000: its tables outgrew the 20 MB that bound allows"),
        "{err}"
    );
    let csv = text(&out.stdout);
    assert_eq!(csv.lines().count(), 2, "{csv}");
    assert!(csv.contains("\nb-mutex,F,P,"), "{csv}");
}

/// The budget holds for the process: programs decided in parallel get a
/// share of it each, and one that outgrows its share is decided again
/// alone under the whole bound, so its answer does not depend on the
/// number of cores (this one needs more than 16 MiB within 150,000 states,
/// less than 40 MB; it spins, so that the unfair product does not decide
/// it alone; 3 workgroups of 3 fitted 16 MiB once the tables were lean,
/// and 2 of 5 once pending Terminates went first; it reads `local_id`, so
/// that its invocations are not interchangeable).
#[test]
fn a_program_over_its_share_of_the_budget_is_decided_alone() {
    let d = scratch("share");
    let f = d.join("m3.litmus");
    std::fs::write(
        &f,
        "values 8;\nworkgroups 2;\nworkgroup_size 7;\nglobal x;\nkernel {\n  0: r = local_id;\n  1: if (exch(x, 1) == 1) goto 1;\n  2: x = 0;\n}\n",
    )
    .unwrap();
    let run = |threads: &str, bound: &str| {
        Command::new(env!("CARGO_BIN_EXE_oracle"))
            .args(["classify", "--format", "csv", "--max-states", bound, s(&f)])
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap()
    };
    let alone = run("1", "150000");
    assert_eq!(alone.status.code(), Some(2), "needs more than the minimum");
    assert!(text(&alone.stderr).contains("its tables outgrew the 16 MB"));
    let shared = run("4", "400000");
    assert!(shared.status.success(), "{}", text(&shared.stderr));
    assert!(text(&shared.stdout).contains("\nm3,F,P,P,P,F,P,P,P,P,P,F\n"));
}

#[cfg(unix)]
#[test]
fn directories_with_link_loops_are_walked_once() {
    let d = scratch("loop");
    std::fs::copy(idiom("mutex"), d.join("mutex.litmus")).unwrap();
    std::os::unix::fs::symlink(&d, d.join("again")).unwrap();
    let out = oracle(&["classify", "--format", "csv", s(&d)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 2);
}

#[test]
fn huge_inputs_fail_fast() {
    let d = scratch("huge");
    let f = d.join("big.litmus");
    let mut src = String::from("values 2;\nworkgroups 1;\nkernel {\n");
    for _ in 0..200_000 {
        src.push_str("  barrier();\n");
    }
    src.push_str("}\n");
    std::fs::write(&f, src).unwrap();
    let out = oracle(&["classify", s(&f)]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("big.litmus:67:3: more than 63 instructions in a block: at most 63"),
        "{err}"
    );
    let g = d.join("deep.litmus");
    std::fs::write(&g, "{".repeat(100_000)).unwrap();
    let out = oracle(&["classify", s(&g)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("deep.litmus:1:1:"));
}

#[test]
fn one_command_line_for_both_kinds() {
    // A directory of both kinds with a bad file of each: every good input
    // is still classified, in sorted order, each bad one is one error line.
    let d = scratch("mixed");
    std::fs::copy(idiom("mutex"), d.join("b-mutex.litmus")).unwrap();
    std::fs::copy(
        root().join("data/oopsla21/tests/2t2i_3.txt"),
        d.join("a-axb.txt"),
    )
    .unwrap();
    std::fs::write(
        d.join("c-bad.litmus"),
        "values 2;\nworkgroups 1;\nkernel {\n  x = ;\n}\n",
    )
    .unwrap();
    std::fs::write(d.join("d-bad.txt"), "THREAD0\natomic_store(0,1\n").unwrap();
    let out = oracle(&["classify", "--format", "csv", s(&d)]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(err.contains("c-bad.litmus:4:"), "{err}");
    assert!(err.contains("d-bad.txt:2:"), "{err}");
    let csv = text(&out.stdout);
    let names: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(names, ["a-axb", "b-mutex"], "{csv}");
    // Table 4 over both kinds says how memory behaves; over AXB tests
    // alone it is the paper's table, byte for byte (tests/cli.rs).
    let (a, b) = (d.join("a-axb.txt"), d.join("b-mutex.litmus"));
    let out = oracle(&["table", s(&a), s(&b)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("memory is sequentially consistent"));
    let out = oracle(&["table", "--format", "json", s(&b)]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["memory"], "sequentially consistent");
    assert_eq!(v["tests"], 1);
}

#[test]
fn axb_tests_take_scoped_models_through_the_kernel_checker() {
    let t = root().join("data/oopsla21/tests/2t2i_3.txt");
    // A model of the eleven: the AXB engine's explanation.
    let out = oracle(&["explain", s(&t), "--model", "OBE"]);
    assert!(out.status.success());
    assert!(!text(&out.stdout).contains("memory sequentially consistent"));
    // An occupancy bound: the kernel checker, on the embedded program.
    let out = oracle(&["explain", s(&t), "--model", "WEAK_FAIR", "--occupancy", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let e = text(&out.stdout);
    assert!(e.contains("memory sequentially consistent"), "{e}");
    assert!(e.contains("at most 1 workgroup resident"), "{e}");
    // No model for an AXB test: exit 2, one line.
    let out = oracle(&["explain", s(&t)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("name a model with --model"));
    // A bad scoped model names the bad part.
    let out = oracle(&["explain", s(&t), "--model", "OBE, subgroup=sometimes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown scheduler `sometimes`"));
    // lts --format json is the AXB engine's: a kernel program is refused.
    let out = oracle(&["lts", s(&idiom("mutex")), "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("drawn as DOT"),
        "{}",
        text(&out.stderr)
    );
    let out = oracle(&["lts", s(&idiom("mutex")), "--model", "OBE", "-o", "-"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).starts_with("digraph"));
}

#[test]
fn label_of_a_kernel_program_over_the_bound_needs_partial() {
    let d = scratch("partial");
    let suite = d.join("s.ron");
    let (m, b) = (idiom("mutex"), idiom("discovery-barrier"));
    let args = [
        "label",
        "--max-states",
        "100",
        "-o",
        s(&suite),
        s(&m),
        s(&b),
    ];
    let out = oracle(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(!suite.exists());
    let mut with = args.to_vec();
    with.push("--partial");
    let out = oracle(&with);
    assert_eq!(out.status.code(), Some(2), "some input had no verdict");
    let ron = std::fs::read_to_string(&suite).unwrap();
    assert!(ron.starts_with("KernelSuite("), "{ron}");
    assert!(ron.contains("discovery-barrier."), "{ron}");
    assert!(ron.contains("name: \"mutex\""), "{ron}");
}

/// `classify --stats` (issue 24 item 1): the states and transitions it
/// reports are those of the six products the checker builds, and without
/// reductions those of the products `oracle lts` draws (counted here from
/// the DOT, another path through the product); AXB tests get no figures.
#[test]
fn classify_stats_count_the_products_states() {
    use oracle::kernel::product::Reductions;
    use oracle::kernel::{flat_verdicts_stats, Options};
    let prog = idiom("mp-groupid");
    let out = oracle(&["classify", "--stats", "--format", "json", s(&prog)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let st = &rows[0]["stats"];
    let src = std::fs::read_to_string(&prog).unwrap();
    let p = progress_litmus::kernel::litmus::parse(&src).unwrap();
    let opts = |reductions| Options {
        max_states: 1_000_000,
        reductions,
    };
    let (_, _, all) = flat_verdicts_stats(&p, opts(Reductions::ALL)).unwrap();
    assert_eq!(st["products"], 6);
    assert_eq!(st["states"], all.states);
    assert_eq!(st["transitions"], all.transitions);
    let bps = st["bytes_per_state"].as_f64().unwrap();
    assert!((8.0..1000.0).contains(&bps), "{st}");
    // The unreduced products, against the drawings.
    let (_, _, none) = flat_verdicts_stats(&p, opts(Reductions::NONE)).unwrap();
    let (mut nodes, mut edges) = (0, 0);
    for m in ["UNFAIR", "HSA", "OBE", "HSA_OBE", "LOBE", "WEAK_FAIR"] {
        let dot = text(&oracle(&["lts", "--model", m, s(&prog)]).stdout);
        // A node is declared once, and a final one restated with two
        // peripheries.
        let ids: std::collections::BTreeSet<&str> = dot
            .lines()
            .filter(|l| l.starts_with("  s") && !l.contains("->"))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        nodes += ids.len();
        edges += dot.lines().filter(|l| l.contains("->")).count();
    }
    assert_eq!((none.states, none.transitions), (nodes, edges));
    assert!(all.states < none.states, "the reductions reduce");
    // Table and CSV carry the same figures; an AXB test has none.
    let axb = root().join("data/oopsla21/tests/2t2i_3.txt");
    let out = oracle(&["classify", "--stats", "--format", "csv", s(&prog), s(&axb)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].ends_with(",states,transitions,seconds,bytes_per_state"));
    let want = format!(",{},{},", all.states, all.transitions);
    assert!(lines[1].contains(&want), "{csv}");
    assert!(lines[2].ends_with(",,,,"), "{csv}");
    let out = oracle(&["classify", "--stats", s(&prog), s(&axb)]);
    let table = text(&out.stdout);
    assert!(table.contains("bytes/state"), "{table}");
    assert!(table.contains(&format!(" {} ", all.states)), "{table}");
    // Without --stats the outputs are as they were.
    let out = oracle(&["classify", "--format", "json", s(&prog)]);
    assert!(!text(&out.stdout).contains("\"stats\""));
}

/// A long run says how far it got (issue 43 item 5): with `--progress
/// always`, a line on standard error every 2 s (states stored, states a
/// second, resident memory); with `never`, and by default when standard
/// error is not a terminal (as here), none. The run: `explain` of the
/// seqlock under weak fairness, which passes 1.2 GB (`--max-states
/// 12000000`) after about 3 s on the 2-core machine and is then refused.
/// Release builds only: a debug build runs it 10 times slower.
#[test]
#[cfg_attr(debug_assertions, ignore)]
fn a_long_run_prints_progress_lines_when_asked() {
    let seqlock = root().join("oracle/benches/data/seqlock.litmus");
    let run = |progress: &str| {
        let start = std::time::Instant::now();
        let o = oracle(&[
            "--progress",
            progress,
            "--max-states",
            "12000000",
            // The full product (`explain` now decides this one in
            // 0.02 s on the reduced product: docs/KERNEL.md §8.9).
            "lts",
            "--model",
            "WEAK_FAIR",
            s(&seqlock),
        ]);
        (text(&o.stderr), start.elapsed())
    };
    let (err, took) = run("always");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("oracle: ")).collect();
    // One line each 2 s, the first after 2 s (none in a shorter run).
    assert!(
        lines.len() as f64 <= took.as_secs_f64() / 2.0,
        "{took:?}: {err}"
    );
    for l in &lines {
        assert!(
            l.contains(" states stored (") && l.contains(" a second)"),
            "{l}"
        );
        assert!(l.contains(" MiB resident, "), "{l}");
    }
    assert!(
        took.as_secs_f64() < 2.3 || !lines.is_empty(),
        "{took:?}: {err}"
    );
    for quiet in ["never", "auto"] {
        let (err, _) = run(quiet);
        assert!(!err.contains("states stored"), "{quiet}: {err}");
        assert!(err.contains("exceeds --max-states 12000000"), "{err}");
    }
}
