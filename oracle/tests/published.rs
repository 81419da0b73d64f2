//! The oracle against the published data (data/oopsla21).

use progress_litmus::buckets::Table4;
use progress_litmus::{axb::text, Model, Test, Verdict};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21")
}

fn published_tests() -> BTreeMap<String, Test> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(data().join("tests")).expect("data/oopsla21/tests") {
        let p = e.unwrap().path();
        let src = std::fs::read_to_string(&p).unwrap();
        let t = text::parse(&src).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        out.insert(p.file_stem().unwrap().to_string_lossy().into_owned(), t);
    }
    out
}

#[test]
fn all_483_published_tests_parse_and_print_back_byte_for_byte() {
    let tests = published_tests();
    assert_eq!(tests.len(), 483);
    for (name, t) in &tests {
        let src =
            std::fs::read_to_string(data().join("tests").join(format!("{name}.txt"))).unwrap();
        assert_eq!(text::print(t), src, "{name}");
    }
}

#[test]
fn reproduces_every_published_cadp_verdict() {
    let tests = published_tests();
    let csv = std::fs::read_to_string(data().join("verdicts-2t2i-2t3i.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let models: Vec<Model> = header[1..]
        .iter()
        .map(|h| Model::parse(h).unwrap_or_else(|| panic!("model {h}")))
        .collect();
    let mut rows = 0;
    let mut wrong = Vec::new();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let cells: Vec<&str> = line.split(',').collect();
        let test = &tests[cells[0]];
        let v = oracle::verdicts(test);
        for (m, cell) in models.iter().zip(&cells[1..]) {
            let want = if *cell == "P" { Verdict::P } else { Verdict::F };
            if v.get(*m) != want {
                wrong.push(format!(
                    "{} {}: published {cell}, got {:?}",
                    cells[0],
                    m,
                    v.get(*m)
                ));
            }
            // The single-model entry point agrees with the batch one.
            assert_eq!(oracle::verdict(test, *m), v.get(*m));
        }
        rows += 1;
    }
    assert_eq!(rows, 184);
    assert!(
        wrong.is_empty(),
        "{} wrong verdicts:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn unfair_fails_every_published_test() {
    for (name, t) in published_tests() {
        assert_eq!(
            oracle::verdict(&t, Model::parse("UNFAIR").unwrap()),
            Verdict::F,
            "{name}"
        );
    }
}

#[test]
fn table_4_of_the_paper() {
    let tests = published_tests();
    let refs: Vec<&Test> = tests.values().collect();
    let vs = oracle::verdicts_all(&refs);
    let t = Table4::from_verdicts(&vs);
    assert_eq!(t.d, [[90, 12, 20, 201], [94, 0, 16, 50]]);
    assert_eq!(t.c, [[90, 12, 122, 323], [94, 0, 110, 160]]);
    assert_eq!(t.unbucketed, 0);
}
