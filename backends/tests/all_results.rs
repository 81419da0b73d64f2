//! Every committed result folder in one results database
//! (`results/database/import.sh`, then the complete weak-fair suites'
//! campaigns): `report --db`, `site` and `db export` judge each
//! campaign against the tests it ran (issue 44 item 1). The published
//! suite and the complete weak-fair suites share test names for other
//! programs; the H200's and the CPU's campaigns of both are one device
//! each, their tests told apart by content.

#[path = "../../tests/support/scratch.rs"]
#[allow(dead_code)]
mod scratch;
use scratch::Scratch;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_backends");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The database of every committed result folder, built once per run of
/// this file's tests in a folder of its own.
fn database(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("all-results-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("results.sqlite");
    ok(Command::new("sh")
        .arg(root().join("results/database/import.sh"))
        .arg(&db)
        .env("BACKENDS", BIN)
        .output()
        .unwrap());
    // The complete weak-fair suites' campaigns, beside the published
    // suite's of the same devices.
    let import = |args: &[&str]| {
        ok(Command::new(BIN)
            .current_dir(root())
            .args(["db", "import", "--db", db.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap())
    };
    import(&[
        "--vendor",
        "CPU",
        "--architecture",
        "x86_64, C++ threads",
        "results/cpu-complete",
    ]);
    // The H200's campaigns of the complete suites, as setups of the GPU
    // the import script records.
    for (name, setup) in [
        ("h200", "CUDA, normal launch"),
        ("h200-cooperative", "CUDA, cooperative launch"),
    ] {
        let files: Vec<String> = ["2t2i", "2t3i", "2t4i", "3t3i", "3t4i"]
            .iter()
            .map(|c| {
                let (n, m) = (&c[0..1], &c[2..3]);
                format!("results/h200-complete/{n}_thread_{m}_instruction/CUDA/{name}.csv")
            })
            .collect();
        let mut args = vec!["--gpu", "NVIDIA H200", "--setup", setup];
        args.extend(files.iter().map(String::as_str));
        import(&args);
    }
    db
}

/// The violating tests of `device` under `model` in a JSON report.
fn violators(report: &serde_json::Value, device: &str, model: &str) -> Vec<String> {
    let finding = report
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["device"] == device && f["model"] == model)
        .unwrap_or_else(|| panic!("no finding for {device} {model}"));
    let mut tests: Vec<String> = finding["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["test"].as_str().unwrap().to_string())
        .collect();
    tests.dedup();
    tests
}

#[test]
fn every_committed_folder_reports_from_one_database() {
    let db = database("report");
    let db_s = db.to_str().unwrap();
    let run = |args: &[&str]| {
        ok(Command::new(BIN)
            .current_dir(root())
            .args(args)
            .output()
            .unwrap())
    };
    let text = run(&["report", "--db", db_s]);
    // 483 published tests and 5,231 of the complete suites: one program is
    // in both under one name, the others are told apart.
    for (device, campaigns) in [
        ("NVIDIA H200 (CUDA, normal launch)", 3),
        ("NVIDIA H200 (CUDA, cooperative launch)", 2),
        ("cpu-2threads-full", 2),
    ] {
        let line =
            format!("== {device} (5713 tests observed, k of n summed over {campaigns} campaigns)");
        assert!(text.contains(&line), "{line}\n{text}");
    }
    // One GPU: its combined row, its five setups beneath.
    assert!(text.contains("\nNVIDIA H200 (every setup) "), "{text}");
    assert_eq!(text.matches("\n  NVIDIA H200 (").count(), 5, "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&run(&["report", "--db", db_s, "--format", "json"])).unwrap();
    // The published analysis holds: A12 and Mali-G77 violate weak LOBE on
    // the same 11 tests, named as the paper names them.
    let a12 = violators(&json, "ipad_air_3_a12-inter-workgroup", "LOBE");
    let mali = violators(&json, "galaxy-s20-mali-2021-02-07", "LOBE");
    assert_eq!(a12.len(), 11, "{a12:?}");
    assert_eq!(a12, mali);
    assert!(a12.contains(&"3t3i_7".to_string()), "{a12:?}");
    // The H200 is consistent with weak fairness under the cooperative
    // launch on both suites.
    assert!(violators(&json, "NVIDIA H200 (CUDA, cooperative launch)", "WEAK_FAIR").is_empty());

    // The database holds the programs of its suites: copied where no suite
    // file is in reach, it reports the same.
    let away = Scratch::new("all-results-away", "away");
    let copy = away.join("copy.sqlite");
    std::fs::copy(&db, &copy).unwrap();
    let moved = ok(Command::new(BIN)
        .current_dir(&away)
        .args(["report", "--db", "copy.sqlite"])
        .output()
        .unwrap());
    let _ = std::fs::remove_dir_all(&away);
    assert!(
        moved.contains("the programs stored in the results database"),
        "{moved}"
    );
    assert_eq!(
        moved.lines().skip(1).collect::<Vec<_>>(),
        text.lines().skip(1).collect::<Vec<_>>()
    );

    let site = db.parent().unwrap().join("site");
    let out = run(&["site", "--db", db_s, "--out", site.to_str().unwrap()]);
    assert!(out.contains("pages written"), "{out}");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(
        index.contains("<tr class=\"gpu\"><td>NVIDIA H200</td>"),
        "one bold row for the GPU"
    );
    assert_eq!(index.matches("<tr class=\"setup\">").count(), 5);
}

/// A result folder records its suite: reported from another working
/// folder, it is found from the folders above its device files.
#[test]
fn a_result_folder_needs_no_tests_flag_from_anywhere() {
    let elsewhere = std::env::temp_dir();
    let folder = root().join("results/h200-complete");
    let out = ok(Command::new(BIN)
        .current_dir(&elsewhere)
        .arg("report")
        .arg(&folder)
        .output()
        .unwrap());
    assert!(out.contains("verdicts of 5231 tests from"), "{out}");
    assert!(out.contains("2t4i.ron"), "{out}");
}
