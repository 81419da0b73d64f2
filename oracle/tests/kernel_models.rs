//! The scheduler variants beyond the eleven models, on small programs whose
//! verdicts follow from the definitions of docs/KERNEL.md §2.6 and §3.

use oracle::kernel::{decide, outcome, Options};
use progress_litmus::kernel::{litmus, ScopedModel};

fn verdict(src: &str, model: &str) -> &'static str {
    let p = litmus::parse(src).unwrap();
    let m = ScopedModel::parse(model).unwrap();
    outcome(&decide(&p, &m, Options::default()).unwrap()).word()
}

fn idiom(name: &str) -> String {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../suites/idioms")
        .join(format!("{name}.litmus"));
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_priority_scheduler_runs_the_lowest_id_that_can_run() {
    // Workgroup 0 takes and releases the lock before workgroup 1 may move:
    // the mutex HSA fails passes under this implementation of HSA.
    assert_eq!(verdict(&idiom("mutex"), "HSA"), "F");
    assert_eq!(verdict(&idiom("mutex"), "PRIORITY"), "P");
    // Workgroup 0 spins and is always the one to run: even strong
    // fairness cannot help.
    assert_eq!(
        verdict(&idiom("prodcons-decreasing"), "PRIORITY_STRONG"),
        "F"
    );
    assert_eq!(verdict(&idiom("prodcons-increasing"), "PRIORITY"), "P");
    // Inside a workgroup: invocation 0 waits for invocation 1.
    let src = "values 2;\nworkgroups 1;\nworkgroup_size 2;\nglobal f;\n\nkernel {\n  0: if (local_id == 0) goto 2;\n  1: f = 1;\n  2: if (f == 0) goto 2;\n}\n";
    assert_eq!(verdict(src, "WEAK_FAIR"), "P");
    assert_eq!(verdict(src, "WEAK_FAIR, workgroup=priority"), "F");
    assert_eq!(verdict(src, "WEAK_FAIR, workgroup=hsa"), "F");
    // Invocation 1 (the producer) may never start: only fair helps.
    assert_eq!(verdict(src, "WEAK_FAIR, workgroup=obe"), "F");
    assert_eq!(verdict(src, "WEAK_FAIR, workgroup=lobe"), "F");
}

#[test]
fn occupancy_admits_workgroups_in_id_order() {
    // Each workgroup waits for the one before: in-order admission runs them
    // one after the other even with a single slot.
    assert_eq!(
        verdict(&idiom("lookback-static"), "WEAK_FAIR, occupancy=1"),
        "P"
    );
    assert_eq!(
        verdict(&idiom("decoupled-lookback"), "WEAK_FAIR, occupancy=1"),
        "P"
    );
    // Workgroup 0 waits for workgroup 1, which needs a second slot.
    assert_eq!(
        verdict(&idiom("prodcons-decreasing"), "WEAK_FAIR, occupancy=1"),
        "F"
    );
    assert_eq!(
        verdict(&idiom("prodcons-decreasing"), "WEAK_FAIR, occupancy=2"),
        "P"
    );
    // The bound restricts who runs; the device scheduler still decides
    // who is guaranteed among the resident.
    assert_eq!(verdict(&idiom("mutex"), "OBE, occupancy=1"), "P");
    // One resident workgroup at a time: nobody contends for the lock.
    assert_eq!(verdict(&idiom("mutex"), "UNFAIR, occupancy=1"), "P");
    assert_eq!(verdict(&idiom("mutex"), "UNFAIR, occupancy=2"), "F");
}

#[test]
fn lockstep_tries_both_orders_of_a_divergence() {
    // Lane 0 raises a flag, lane 1 waits for it: if lane 1's side runs
    // first it spins forever, as the stack never switches to lane 0.
    let src = "values 2;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal f;\n\nkernel {\n  0: if (lane_id == 0) goto 3;\nwait:\n  1: if (f == 0) goto wait;\n  2: goto END;\n  3: f = 1;\n}\n";
    assert_eq!(verdict(src, "STRONG_FAIR"), "P");
    assert_eq!(verdict(src, "WEAK_FAIR, subgroup=lockstep"), "F");
    // The same with the waiting lane jumping: the order still matters.
    let src2 = "values 2;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal f;\n\nkernel {\n  0: if (lane_id != 0) goto wait;\n  1: f = 1;\n  2: goto END;\nwait:\n  3: if (f == 0) goto wait;\n}\n";
    assert_eq!(verdict(src2, "WEAK_FAIR, subgroup=lockstep"), "F");
    assert_eq!(verdict(src2, "WEAK_FAIR, subgroup=unfair"), "F");
    assert_eq!(verdict(src2, "WEAK_FAIR, subgroup=obe"), "F");
    assert_eq!(verdict(src2, "WEAK_FAIR, subgroup=hsa"), "P");
}

#[test]
fn a_guaranteed_group_makes_some_invocation_progress() {
    // Workgroup 0 is guaranteed (HSA) while its invocations are unfair: it
    // still steps, so when only invocation 0 can move it must.
    let src = "values 2;\nworkgroups 2;\nworkgroup_size 2;\nglobal f;\n\nworkgroup 0 {\n  0: if (local_id == 1) goto END;\n  1: f = 1;\n}\n\nworkgroup 1 {\nwait:\n  0: if (f == 0) goto wait;\n}\n";
    assert_eq!(verdict(src, "HSA, workgroup=unfair"), "P");
    // Without the device guarantee nothing forces workgroup 0 to start.
    assert_eq!(verdict(src, "OBE, workgroup=unfair"), "F");
    assert_eq!(verdict(src, "UNFAIR"), "F");
}
