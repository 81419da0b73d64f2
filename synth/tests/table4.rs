//! The committed Table 4 folders (`suites/table4/<config>/`, written by
//! `synth table`) checked again: for every folder present, the counts are
//! consistent (SPEC §5, bucket C: C(HSA) = D(HSA), C(OBE) = D(OBE), C(LOBE) = D(HSA) +
//! D(OBE) + D(LOBE), C(fair) = every test of the fairness; the lists and
//! the tests in no bucket add up to the suite), each list holds as many
//! tests as its count says (lists over [`FULL_READ`] compressed bytes, such
//! as the 6-instruction ones, are checked on their first [`HEAD`] tests
//! only, to stay fast), and a sample of each list is decided again by the
//! oracle: every sampled test is distinguishing for its list's row. Where
//! the committed suite of the configuration has name lists
//! (bucket D, `suites/<config>/buckets/D/<MODEL>.txt`), the names are the
//! same.
//! Also `synth table` itself: deterministic bytes, errors with exit 2.

mod common;
use common::{ok, scratch, stderr, synth};
use progress_litmus::axb::packed::{decoder, Reader};
use progress_litmus::axb::test::Test;
use progress_litmus::buckets::distinguishing_for;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Lists up to this many compressed bytes are read whole.
const FULL_READ: u64 = 2 << 20;
/// Tests read from a larger list.
const HEAD: usize = 20_000;
/// At most this many tests of a list are decided again.
const SAMPLE: usize = 400;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn folders() -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(root().join("suites/table4")) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("table4.json").is_file())
        .collect();
    v.sort();
    v
}

/// The tests of a list (all, or the first [`HEAD`] of a large one), and
/// whether that is all of them.
fn read_list(path: &Path, suite: &str) -> (Vec<(String, Test)>, bool) {
    let whole = std::fs::metadata(path).unwrap().len() <= FULL_READ;
    let f = std::fs::File::open(path).unwrap();
    let mut r = Reader::new(std::io::BufReader::new(decoder(std::io::BufReader::new(f))))
        .unwrap_or_else(|e| panic!("{}:{e}", path.display()));
    assert_eq!(r.name, suite, "{}", path.display());
    let mut out = Vec::new();
    while let Some(e) = r
        .next_test()
        .unwrap_or_else(|e| panic!("{}:{e}", path.display()))
    {
        out.push(e);
        if !whole && out.len() == HEAD {
            return (out, false);
        }
    }
    (out, true)
}

/// Table 4 `[fairness][row]` of the JSON: (distinguishing, bucket C,
/// file; `None` for a list not kept, `synth table --lists`).
fn counts(j: &serde_json::Value) -> Vec<Vec<(u64, u64, Option<String>)>> {
    ["weak", "strong"]
        .iter()
        .map(|f| {
            (0..4)
                .map(|r| {
                    let c = &j["rows"][r][f];
                    (
                        c["distinguishing"].as_u64().unwrap(),
                        c["bucket_c"].as_u64().unwrap(),
                        c["file"].as_str().map(str::to_string),
                    )
                })
                .collect()
        })
        .collect()
}

fn check_folder(dir: &Path) {
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("table4.json")).unwrap()).unwrap();
    let suite = j["suite"].as_str().unwrap();
    let tests = j["tests"].as_u64().unwrap();
    let rows = counts(&j);
    let models = synth::table::rows();
    let mut total = j["unbucketed"].as_u64().unwrap();
    let mut names = HashSet::new();
    for (f, side) in rows.iter().enumerate() {
        let d: Vec<u64> = side.iter().map(|c| c.0).collect();
        let c: Vec<u64> = side.iter().map(|c| c.1).collect();
        assert_eq!(
            c,
            vec![d[0], d[1], d[0] + d[1] + d[2], d.iter().sum()],
            "{suite} {f}"
        );
        total += c[3];
        for (r, (count, _, file)) in side.iter().enumerate() {
            let model = models[4 * f + r];
            let Some(file) = file else {
                // Not kept: counted above, nothing to read.
                assert!(
                    !dir.join(synth::table::list_path(model)).exists(),
                    "{suite}: {} is there but table4.json says it was not kept",
                    model.name()
                );
                continue;
            };
            assert_eq!(*file, synth::table::list_path(model));
            let (list, whole) = read_list(&dir.join(file), suite);
            if whole {
                assert_eq!(list.len() as u64, *count, "{suite} {file}");
            } else {
                assert!(list.len() as u64 <= *count, "{suite} {file}");
            }
            for (name, _) in &list {
                assert!(names.insert(name.clone()), "{suite}: {name} in two lists");
            }
            let step = (list.len() / SAMPLE).max(1);
            let sample: Vec<&(String, Test)> = list.iter().step_by(step).collect();
            let tests: Vec<&Test> = sample.iter().map(|(_, t)| t).collect();
            for ((name, _), v) in sample.iter().zip(oracle::verdicts_all(&tests)) {
                assert_eq!(distinguishing_for(&v), Some(model), "{suite} {name}");
            }
            let committed = root().join(format!("suites/{suite}/buckets/D/{}.txt", model.name()));
            // A configuration with a committed suite has its bucket D lists
            // (a renamed folder once made this comparison skip silently).
            let suite_ron = root().join(format!("suites/{suite}/{suite}.ron"));
            assert!(
                !suite_ron.is_file() || committed.is_file(),
                "{} is missing",
                committed.display()
            );
            if let (Ok(txt), true) = (std::fs::read_to_string(&committed), whole) {
                let listed: Vec<&str> = list.iter().map(|(n, _)| n.as_str()).collect();
                assert_eq!(
                    listed,
                    txt.lines().collect::<Vec<_>>(),
                    "{}",
                    committed.display()
                );
            }
        }
    }
    assert_eq!(
        total, tests,
        "{suite}: lists and unbucketed add up to the suite"
    );
}

#[test]
fn committed_table4_folders_check_again() {
    let dirs = folders();
    // The first data: the published configurations up to 2t5i.
    assert!(dirs.len() >= 3, "suites/table4 has {dirs:?}");
    for d in &dirs {
        check_folder(d);
    }
}

#[test]
fn synth_table_is_deterministic_and_checks_its_input() {
    let dir = scratch("table");
    ok(synth(&dir, &["-t", "2", "-i", "3", "-o", "s.axb.gz"]));
    ok(synth(&dir, &["table", "s.axb.gz", "--dir", "a"]));
    ok(synth(&dir, &["table", "s.axb.gz", "--dir", "b"]));
    for f in [
        "table4.json",
        "table4.txt",
        "distinguishing/HSA.axb.gz",
        "distinguishing/STRONG_FAIR.axb.gz",
    ] {
        assert_eq!(
            std::fs::read(dir.join("a").join(f)).unwrap(),
            std::fs::read(dir.join("b").join(f)).unwrap(),
            "{f}"
        );
    }
    check_folder(&dir.join("a"));
    let txt = std::fs::read_to_string(dir.join("a/table4.txt")).unwrap();
    // 2t3i: the committed Table 4 counts (suites/README.md).
    assert!(txt.starts_with("2t3i: 176 tests"), "{txt}");
    assert!(
        txt.contains("HSA          40        40        86        86"),
        "{txt}"
    );
    // Not packed, a bad line, a file where the folder goes: exit 2.
    std::fs::write(dir.join("x.ron"), "()").unwrap();
    let o = synth(&dir, &["table", "x.ron", "--dir", "c"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let mut w = progress_litmus::axb::packed::Writer::new(Vec::new(), "bad", "n").unwrap();
    w.push(
        "t0",
        &progress_litmus::axb::text::parse(
            "THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(0,1)\n",
        )
        .unwrap(),
    )
    .unwrap();
    let mut bytes = w.finish().unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut decoder(&bytes[..]), &mut text).unwrap();
    text.push_str("t1\tzz\n");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
    bytes = gz.finish().unwrap();
    std::fs::write(dir.join("bad.axb.gz"), bytes).unwrap();
    let o = synth(&dir, &["table", "bad.axb.gz", "--dir", "c"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.axb.gz:5:"), "{}", stderr(&o));
    // A failed run leaves no half-written list and no table.
    let left: Vec<_> = std::fs::read_dir(dir.join("c/distinguishing"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(!dir.join("c/table4.json").exists());
    // --lists keeps some rows' lists; the others are counted, `"file": null`.
    ok(synth(
        &dir,
        &[
            "table",
            "s.axb.gz",
            "--dir",
            "k",
            "--lists",
            "OBE,LOBE_STRONG",
        ],
    ));
    let kept: Vec<_> = std::fs::read_dir(dir.join("k/distinguishing"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(kept, ["LOBE_STRONG.axb.gz", "OBE.axb.gz"]);
    let j = std::fs::read_to_string(dir.join("k/table4.json")).unwrap();
    assert_eq!(j.matches("\"file\": null").count(), 6, "{j}");
    assert_eq!(
        std::fs::read(dir.join("k/table4.txt")).unwrap(),
        std::fs::read(dir.join("a/table4.txt")).unwrap()
    );
    check_folder(&dir.join("k"));
    // A rerun keeping fewer lists removes the others' stale files (the
    // adversarial pass found HSA.axb.gz of another run left beside
    // `"file": null`).
    ok(synth(
        &dir,
        &["table", "s.axb.gz", "--dir", "k", "--lists", "OBE"],
    ));
    assert!(!dir.join("k/distinguishing/LOBE_STRONG.axb.gz").exists());
    check_folder(&dir.join("k"));
    // Two processes on one folder: the second exits 2 at once (it mixed
    // the two suites' lists before).
    let held = std::fs::File::open(dir.join("k")).unwrap();
    held.try_lock().unwrap();
    let o = synth(&dir, &["table", "s.axb.gz", "--dir", "k"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("locked by another synth table"),
        "{}",
        stderr(&o)
    );
    drop(held);
    for bad in ["FOO", "OBE,OBE", "HSA_OBE", "", ","] {
        let o = synth(&dir, &["table", "s.axb.gz", "--dir", "m", "--lists", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("--lists"), "{}", stderr(&o));
    }
    std::fs::write(dir.join("f"), "").unwrap();
    let o = synth(&dir, &["table", "s.axb.gz", "--dir", "f"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
