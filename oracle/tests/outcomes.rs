//! Outcome assertions and reachable final states (docs/KERNEL.md §5.4,
//! issue 22 item 3): the final memory of every AXB test against the AXB
//! engine's own state space (an independent implementation), the classic
//! sequential-consistency litmus results (store buffering, message
//! passing, load buffering: herd's SC model forbids exactly the outcomes
//! below), and the command line.

#[path = "../../tests/support/scratch.rs"]
#[allow(dead_code)]
mod scratch;
use scratch::Scratch;

use oracle::kernel::outcomes::{outcomes, Outcomes};
use progress_litmus::axb::space::program_space;
use progress_litmus::axb::test::Test;
use progress_litmus::kernel::assert::Probe;
use progress_litmus::kernel::{embed, litmus, ScopedModel};
use progress_litmus::{Base, Fairness, Model};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

fn unfair() -> ScopedModel {
    ScopedModel::flat(Model::new(Base::Unfair, Fairness::Weak))
}

/// The final memories of an AXB test by the AXB engine: the memory of
/// every state in which every thread has finished.
fn axb_finals(t: &Test) -> BTreeSet<Vec<u16>> {
    let m = progress_litmus::axb::machine::Machine::new(t);
    let lts = program_space(t);
    let locs = t.num_locs().max(1);
    lts.graph
        .node_weights()
        .filter(|&&s| m.all_finished(s))
        .map(|&s| (0..locs).map(|l| m.mem(s, l) as u16).collect())
        .collect()
}

/// The final memories by the kernel checker's outcomes.
fn kernel_finals(o: &Outcomes) -> BTreeSet<Vec<u16>> {
    let cells: Vec<usize> = (0..o.observables.names.len())
        .filter(|&k| !o.observables.names[k].contains(':'))
        .collect();
    o.finals
        .iter()
        .map(|f| cells.iter().map(|&k| f.values[k]).collect())
        .collect()
}

#[test]
fn every_published_test_has_the_axb_engines_final_memories() {
    let tests = progress_litmus::axb::published::tests().unwrap();
    let mut nonempty = 0;
    for t in &tests {
        let p = embed::from_axb(&t.entry.test);
        let o = outcomes(&p, &unfair(), 1_000_000).unwrap();
        let want = axb_finals(&t.entry.test);
        assert_eq!(kernel_finals(&o), want, "{}", t.name);
        // Fairness never changes which final states are reachable.
        for base in [Base::Hsa, Base::Obe, Base::Lobe, Base::Fair] {
            let m = ScopedModel::flat(Model::new(base, Fairness::Strong));
            assert_eq!(outcomes(&p, &m, 1_000_000).unwrap().finals, o.finals);
        }
        nonempty += usize::from(!want.is_empty());
    }
    // The comparison is not vacuous: most tests can finish.
    assert!(nonempty > 300, "{nonempty}");
}

const SB: &str = "values 2;
workgroups 2;
global x;
global y;
exists w0:r == 0 && w1:r == 0;
exists w0:r == 1 && w1:r == 1;
forall x == 1 && y == 1;
forall w0:r == 1;

workgroup 0 {
  0: x = 1;
  1: r = y;
}

workgroup 1 {
  0: y = 1;
  1: r = x;
}
";

fn answers(src: &str, model: &ScopedModel) -> Vec<bool> {
    let p = litmus::parse(src).unwrap();
    let o = outcomes(&p, model, 100_000).unwrap();
    p.asserts.iter().map(|a| o.holds(a, &p).unwrap()).collect()
}

#[test]
fn store_buffering_under_sequential_consistency() {
    assert_eq!(answers(SB, &unfair()), [false, true, true, false]);
    let p = litmus::parse(SB).unwrap();
    let o = outcomes(&p, &unfair(), 100_000).unwrap();
    assert_eq!(o.observables.names, ["x", "y", "w0:r", "w1:r"]);
    let got: Vec<Vec<u16>> = o.finals.iter().map(|f| f.values.clone()).collect();
    assert_eq!(got, [[1, 1, 0, 1], [1, 1, 1, 0], [1, 1, 1, 1]]);
    // The witness of `forall w0:r == 1` failing is the outcome with r = 0,
    // and its schedule runs workgroup 0 to the end first.
    let f = o.witness(&p.asserts[3], &p).unwrap();
    assert_eq!(f.values, [1, 1, 0, 1]);
    assert_eq!(f.schedule[..2], ["w0: 0: x = 1;", "w0: 1: r = y;"]);
    assert!(o.witness(&p.asserts[0], &p).is_none());
}

#[test]
fn message_passing_and_load_buffering_under_sequential_consistency() {
    let mp = "values 2;
workgroups 2;
global data;
global flag;
exists w1:f == 1 && w1:d == 0;
exists w1:f == 1 && w1:d == 1;
exists w1:f == 0 && w1:d == 0;

workgroup 0 {
  0: data = 1;
  1: flag = 1;
}

workgroup 1 {
  0: f = flag;
  1: d = data;
}
";
    assert_eq!(answers(mp, &unfair()), [false, true, true]);
    let lb = "values 2;
workgroups 2;
global x;
global y;
exists w0:r == 1 && w1:r == 1;
exists !(w0:r == 1) && !(w1:r == 1);

workgroup 0 {
  0: r = x;
  1: y = 1;
}

workgroup 1 {
  0: r = y;
  1: x = 1;
}
";
    assert_eq!(answers(lb, &unfair()), [false, true]);
}

/// A spin loop that can only finish after the other workgroup's store:
/// every final state has the flag set, so `forall` holds and its negation
/// is forbidden; shared memory and several invocations a workgroup are
/// named as the text says.
#[test]
fn shared_memory_registers_of_invocations_and_the_priority_scheduler() {
    let src = "values 4;
workgroups 2;
workgroup_size 2;
global flag;
shared s;
forall flag == 1;
exists flag == 0;
exists w1.1:r == 1 && w0:s == 1;
exists w0.1:r == 0;

kernel {
  0: r = local_id;
  1: s = r;
  2: flag = 1;
}
";
    assert_eq!(answers(src, &unfair()), [true, false, true, false]);
    let p = litmus::parse(src).unwrap();
    let o = outcomes(&p, &unfair(), 100_000).unwrap();
    let s1 = Probe::Mem {
        location: 1,
        copy: 1,
        element: 0,
    };
    assert_eq!(
        o.observables.names[o.observables.position(s1).unwrap()],
        "w1:s"
    );
    assert_eq!(
        o.observables.names,
        ["flag", "w0:s", "w1:s", "w0.0:r", "w0.1:r", "w1.0:r", "w1.1:r"]
    );
    // The last store to each shared copy decides it: 0 or 1 either way.
    assert_eq!(o.finals.len(), 4);
    // Under the priority scheduler inside workgroups, invocation 0 runs to
    // its end first, so invocation 1's store is the last one.
    let prio = ScopedModel::parse("UNFAIR, workgroup=priority, subgroup=priority").unwrap();
    let o = outcomes(&p, &prio, 100_000).unwrap();
    let shared: Vec<(u16, u16)> = o
        .finals
        .iter()
        .map(|f| (f.values[1], f.values[2]))
        .collect();
    assert_eq!(shared, [(1, 1)]);
}

fn oracle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oracle"))
        .args(args)
        .output()
        .expect("run oracle")
}

/// A scratch folder holding `src` as its file `name`, and that file.
fn scratch(name: &str, src: &str) -> (Scratch, PathBuf) {
    let d = Scratch::new("oracle-outcomes", name);
    let f = d.join(name);
    std::fs::write(&f, src).unwrap();
    (d, f)
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

#[test]
fn the_outcomes_command_lists_outcomes_schedules_and_answers() {
    let (_d, f) = scratch("sb.litmus", SB);
    let o = oracle(&["outcomes", f.to_str().unwrap(), "--model", "OBE"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.starts_with("sb under OBE: 3 reachable final states ("),
        "{out}"
    );
    assert!(
        out.contains("\noutcome 1: x=1 y=1 w0:r=0 w1:r=1\n  w0: 0: x = 1;\n"),
        "{out}"
    );
    assert!(
        out.contains("\nexists w0:r == 0 && w1:r == 0: forbidden\n"),
        "{out}"
    );
    assert!(
        out.contains("\nexists w0:r == 1 && w1:r == 1: allowed (outcome 3)\n"),
        "{out}"
    );
    assert!(
        out.ends_with("\nforall w0:r == 1: fails (outcome 1)\n"),
        "{out}"
    );
    let o = oracle(&[
        "outcomes",
        f.to_str().unwrap(),
        "--model",
        "OBE",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["outcomes"].as_array().unwrap().len(), 3);
    assert_eq!(v["outcomes"][2]["values"]["w1:r"], 1);
    assert_eq!(v["assertions"][1]["answer"], "allowed");
    assert_eq!(v["assertions"][1]["witness"], 3);
    assert_eq!(v["assertions"][0]["witness"], serde_json::Value::Null);
    // Without --model and without a `model` line: one clear error.
    let o = oracle(&["outcomes", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("has no `model` line"));
}

#[test]
fn classify_answers_assertions_per_model_and_keeps_other_output() {
    let (_d, f) = scratch("sb2.litmus", SB);
    let o = oracle(&["classify", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[1],
        "sb2           P    P    P        P     P             P    P    P        P     P     P"
    );
    assert_eq!(lines[2], "              n    n    n        n     n             n    n    n        n     n     n  exists w0:r == 0 && w1:r == 0");
    assert_eq!(lines[5], "              n    n    n        n     n             n    n    n        n     n     n  forall w0:r == 1");
    assert!(out.ends_with("(assertions: y = allowed (exists) or holds (forall) under the model's reachable final states, n = not)\n"));
    let o = oracle(&["classify", "--format", "json", f.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["assertions"][0]["answers"]["HSA"], "forbidden");
    assert_eq!(v[0]["assertions"][2]["answers"]["UNFAIR"], "holds");
    // A program without assertions: no assertion lines, no note, no field.
    let (_plain, plain) = scratch(
        "plain.litmus",
        "values 2;\nworkgroups 1;\nglobal x;\n\nkernel {\n  0: x = 1;\n}\n",
    );
    let out = text(&oracle(&["classify", plain.to_str().unwrap()]).stdout);
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(!out.contains("assertions"));
    let o = oracle(&["classify", "--format", "json", plain.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v[0].get("assertions").is_none());
}

#[test]
fn bad_assertions_get_one_positioned_error_and_the_batch_goes_on() {
    let (_good, good) = scratch("good.litmus", SB);
    let cases = [
        ("exists z == 1;", 5, 1, "`z` names no memory location"),
        ("exists w2:r == 1;", 5, 1, "workgroup 2 does not exist"),
        ("exists w0:q == 1;", 5, 1, "no register of workgroup 0"),
        ("exists x[0] == 1;", 5, 1, "not an array"),
        ("exists x == 2;", 5, 1, "outside the domain"),
        ("exists w0:x == 1;", 5, 1, "`x` is global"),
        ("exists w0.1:r == 1;", 5, 1, "invocation 1 does not exist"),
        ("exists x = 1;", 5, 10, "expected a comparison"),
        ("exists (x == 1;", 5, 15, "expected `)`"),
        (
            "exists v0:r == 1;",
            5,
            8,
            "expected an invocation such as `w0`",
        ),
        (
            "forall x == 1 &&;",
            5,
            17,
            "expected a location or register name",
        ),
    ];
    for (line, l, c, msg) in cases {
        let src = SB.replace("exists w0:r == 0 && w1:r == 0;", line);
        let (_bad, bad) = scratch("bad.litmus", &src);
        let e = litmus::parse(&src).unwrap_err();
        assert_eq!((e.line, e.col), (l, c), "{line}: {}", e.msg);
        assert!(e.msg.contains(msg), "{line}: {}", e.msg);
        let o = oracle(&["classify", bad.to_str().unwrap(), good.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        let err = text(&o.stderr);
        assert!(err.contains(&format!("bad.litmus:{l}:{c}: ")), "{err}");
        assert!(text(&o.stdout).contains("\ngood "), "the batch goes on");
    }
    let deep = format!("exists {}x == 1{};", "(".repeat(40), ")".repeat(40));
    let e = litmus::parse(&SB.replace("exists w0:r == 0 && w1:r == 0;", &deep)).unwrap_err();
    assert!(e.msg.contains("nested more than 16 deep"), "{}", e.msg);
}

mod conditions {
    use progress_litmus::kernel::assert::{Atom, Cond, Term};
    use progress_litmus::kernel::litmus;
    use progress_litmus::kernel::program::Cmp;
    use proptest::prelude::*;

    fn term() -> impl Strategy<Value = Term> {
        prop::sample::select(vec![
            ("x", None),
            ("y", None),
            ("r", Some(0u8)),
            ("r", Some(1)),
        ])
        .prop_map(|(name, workgroup)| Term {
            workgroup,
            local: None,
            name: name.into(),
            index: None,
        })
    }

    fn cond() -> impl Strategy<Value = Cond> {
        let atom = (term(), prop::sample::select(Cmp::ALL.to_vec()), 0u16..2)
            .prop_map(|(term, cmp, value)| Cond::Atom(Atom { term, cmp, value }));
        atom.prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(|c| Cond::Not(Box::new(c))),
                prop::collection::vec(inner.clone(), 1..4).prop_map(Cond::And),
                prop::collection::vec(inner, 1..4).prop_map(Cond::Or),
            ]
        })
    }

    fn program(c: &Cond) -> String {
        format!("values 2;\nworkgroups 2;\nglobal x;\nglobal y;\nexists {c};\n\nkernel {{\n  0: r = x;\n}}\n")
    }

    proptest! {
        /// Any condition tree, printed, parses to a condition with the same
        /// truth under every valuation, whose text is canonical: the
        /// printer's parentheses follow the parser's precedence.
        #[test]
        fn printed_conditions_parse_back_with_the_same_meaning(c in cond(), vals in prop::collection::vec(0u16..2, 4)) {
            let src = program(&c);
            let p = litmus::parse(&src).unwrap();
            prop_assert_eq!(litmus::print(&p), program(&p.asserts[0].cond));
            prop_assert_eq!(litmus::parse(&litmus::print(&p)).unwrap(), p.clone());
            let value = |t: &Term| match (t.name.as_str(), t.workgroup) {
                ("x", _) => vals[0],
                ("y", _) => vals[1],
                (_, Some(0)) => vals[2],
                _ => vals[3],
            };
            prop_assert_eq!(p.asserts[0].cond.eval(&mut |t| value(t)), c.eval(&mut |t| value(t)), "{}", src);
        }
    }
}
