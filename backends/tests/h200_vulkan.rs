//! The second H200 session (`results/h200-vulkan`, `results/h200-complete`):
//! the findings its README states, checked on the committed results and
//! the CUDA campaign of the first session (`results/h200`).

mod common;

use backends::mapping::Mapping;
use backends::report::observations::Device;
use backends::report::results::Cell;
use common::{analysed, repo, Analysed as Data};
use progress_litmus::{Base, Fairness, Model};
use std::collections::BTreeSet;

fn published() -> Data {
    analysed(
        &["results/h200-vulkan", "results/h200"],
        &["data/oopsla21/tests"],
    )
}

/// The tests under `m` that terminated in every run, and those that did
/// not in some run.
fn observed(d: &Device, m: Mapping) -> (BTreeSet<&str>, BTreeSet<&str>) {
    let run = |want_fail: bool| {
        d.tests
            .iter()
            .filter(|(_, o)| match o.cell(m) {
                Cell::NotRun => false,
                Cell::Pass => !want_fail,
                Cell::Fail { .. } => want_fail,
            })
            .map(|(t, _)| t.as_str())
            .collect()
    };
    (run(false), run(true))
}

const WEAK: [Base; 4] = [Base::Hsa, Base::Obe, Base::Lobe, Base::HsaObe];

/// Through Vulkan (the stop flag in device-local memory) the H200 is
/// consistent with weak HSA, OBE, LOBE and HSA+OBE; weak fairness fails
/// only under chunked, on 84 tests; under chunked Vulkan hangs on exactly
/// the tests CUDA hangs on (of the 134 run); plain and round-robin hang
/// less often than with CUDA (15 and 62 tests against 34 and 77).
#[test]
fn vulkan_holds_every_weak_model_but_fair_and_agrees_with_cuda_under_chunked() {
    let d = published();
    let vk = d.device("h200-vulkan");
    let cuda = d.device("h200");
    for b in WEAK {
        let v = d.violators("h200-vulkan", Model::new(b, Fairness::Weak));
        assert!(v.is_empty(), "{b:?}: {v:?}");
    }
    let fair = d.violators("h200-vulkan", Model::new(Base::Fair, Fairness::Weak));
    assert_eq!(fair.len(), 84);
    assert!(fair.iter().all(|(_, m)| *m == Mapping::Chunked), "{fair:?}");
    let (run, hung) = observed(vk, Mapping::Chunked);
    assert_eq!(run.len() + hung.len(), 134);
    assert_eq!(hung.len(), 87);
    let (_, cuda_hung) = observed(cuda, Mapping::Chunked);
    let cuda_on_these: BTreeSet<&str> = cuda_hung
        .iter()
        .copied()
        .filter(|t| run.contains(t) || hung.contains(t))
        .collect();
    assert_eq!(hung, cuda_on_these);
    for (m, vk_n, cuda_n) in [(Mapping::Plain, 15, 34), (Mapping::RoundRobin, 62, 77)] {
        let (run, hung) = observed(vk, m);
        assert_eq!(run.len() + hung.len(), 483, "{m:?}");
        assert_eq!(hung.len(), vk_n, "{m:?}");
        assert_eq!(observed(cuda, m).1.len(), cuda_n, "{m:?}");
    }
}

/// Through wgpu (the WGSL shaders, plain only) 5 of the 483 tests hung,
/// none of them guaranteed by any weak model.
#[test]
fn wgpu_plain_hangs_on_five_tests_no_weak_model_guarantees() {
    let d = published();
    let wgpu = d.device("h200-wgpu");
    let (run, hung) = observed(wgpu, Mapping::Plain);
    assert_eq!((run.len(), hung.len()), (478, 5));
    for m in [Mapping::RoundRobin, Mapping::Chunked] {
        let (run, hung) = observed(wgpu, m);
        assert!(run.is_empty() && hung.is_empty(), "{m:?}");
    }
    for b in WEAK.into_iter().chain([Base::Fair]) {
        let v = d.violators("h200-wgpu", Model::new(b, Fairness::Weak));
        assert!(v.is_empty(), "{b:?}: {v:?}");
    }
    let strong = d.violators("h200-wgpu", Model::new(Base::Fair, Fairness::Strong));
    assert_eq!(strong.len(), 5);
}

/// All 5,231 weak-fair conformance tests of the five complete
/// configurations terminated with CUDA: plain (every run) and, with a
/// cooperative launch, chunked: no weak model is violated.
#[test]
fn the_complete_weak_fair_suites_terminate_plain_and_cooperative() {
    let suites = [
        "suites/2t2i/2t2i.ron",
        "suites/2t3i/2t3i.ron",
        "suites/2t4i/2t4i.ron",
        "suites/3t3i/3t3i.ron",
        "suites/3t4i/3t4i.ron",
    ];
    let d = analysed(&["results/h200-complete"], &suites);
    let weak_fair: usize = suites
        .iter()
        .map(|s| {
            let list = s.rsplit_once('/').unwrap().0.to_string() + "/conformance/WEAK_FAIR.txt";
            std::fs::read_to_string(repo(&list))
                .unwrap()
                .lines()
                .count()
        })
        .sum();
    assert_eq!(weak_fair, 5231);
    for (name, m) in [
        ("h200", Mapping::Plain),
        ("h200-cooperative", Mapping::Chunked),
    ] {
        let dev = d.device(name);
        assert_eq!(dev.tests.len(), 5231, "{name}");
        let (run, hung) = observed(dev, m);
        assert_eq!((run.len(), hung.len()), (5231, 0), "{name}");
        for b in WEAK.into_iter().chain([Base::Fair]) {
            let v = d.violators(name, Model::new(b, Fairness::Weak));
            assert!(v.is_empty(), "{name} {b:?}: {v:?}");
        }
    }
}
