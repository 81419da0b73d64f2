//! `synth suites`: the published import, the conformance lists and Table
//! 4's buckets, determinism, and that the committed `suites/` directory is
//! what the code generates.

#[path = "../../tests/support/scratch.rs"]
#[allow(dead_code)]
mod scratch;
use scratch::Scratch;

use progress_litmus::axb::test::Test;
use progress_litmus::buckets::{distinguishing_for, in_bucket_c};
use progress_litmus::model::{Base, Model};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use synth::suites::{
    bucket_list, conformance_list, conformance_models, generate, import_published, manifest,
    table4, table4_models, write, Bucket, Generated, MANIFEST, PUBLISHED,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn published_dir() -> PathBuf {
    root().join("data/oopsla21/tests")
}

fn generated() -> Generated {
    generate(None).unwrap()
}

/// A folder that does not exist yet (the command creates it), removed
/// when dropped.
fn scratch(what: &str) -> Scratch {
    let d = Scratch::new("synth-suites-test", what);
    std::fs::remove_dir(&d).unwrap();
    d
}

#[test]
fn published_tests_keep_their_names_and_duplicates_are_noted() {
    let s = import_published(None).unwrap();
    assert_eq!(
        import_published(Some(&published_dir())).unwrap(),
        s,
        "the compiled-in tests are the files of data/oopsla21/tests"
    );
    assert_eq!(s.name, PUBLISHED);
    assert_eq!(s.tests.len(), 483);
    let names: Vec<&str> = s.tests.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        &names[..9],
        [
            "2t2i_0", "2t2i_1", "2t2i_2", "2t2i_3", "2t2i_4", "2t2i_5", "2t2i_6", "2t2i_7",
            "2t3i_0"
        ]
    );
    assert_eq!(names[10], "2t3i_2", "numeric order within a configuration");
    let pos: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let dups: Vec<_> = s
        .tests
        .iter()
        .filter(|e| e.duplicate_of.is_some())
        .collect();
    assert_eq!(dups.len(), 20);
    let mut identical = 0;
    for e in dups {
        let first = e.duplicate_of.as_deref().unwrap();
        assert!(pos[first] < pos[e.name.as_str()]);
        let other = &s.tests[pos[first]];
        assert!(other.duplicate_of.is_none());
        identical += (other.test == e.test) as usize;
        assert_eq!(other.test.canonical_locs(), e.test.canonical_locs());
    }
    // Six of the published duplicates are even the same text.
    assert_eq!(identical, 6);
}

#[test]
fn generation_is_deterministic_and_matches_the_paper() {
    let a = generated();
    let b = generated();
    assert_eq!(a.files, b.files);

    // SPEC §5: the published Table 4.
    let t = table4(&a.suites[0]);
    assert_eq!(t.d, [[90, 12, 20, 201], [94, 0, 16, 50]]);
    assert_eq!(t.c, [[90, 12, 122, 323], [94, 0, 110, 160]]);
    assert_eq!(t.unbucketed, 0);

    // Every published test is in the complete suite of its configuration.
    let map =
        String::from_utf8(a.files[&PathBuf::from("oopsla21/in-complete.txt")].clone()).unwrap();
    assert_eq!(map.lines().count(), 483);
    for line in map.lines() {
        let (p, c) = line.split_once(' ').unwrap();
        assert_ne!(c, "-", "{p} is missing from the complete suites");
        assert_eq!(p.split('_').next(), c.split('_').next());
    }

    // The complete 2t2i and 2t3i suites are the published ones (issue 3).
    let names: Vec<&str> = a.suites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, [PUBLISHED, "2t2i", "2t3i", "2t4i", "3t3i", "3t4i"]);
    assert_eq!(a.suites[1].tests.len(), 8);
    assert_eq!(a.suites[2].tests.len(), 176);

    // The exchange-lock mutex the paper could not find is in complete 2t4i.
    let mutex = |s: &progress_litmus::axb::suite::Suite| {
        s.tests
            .iter()
            .filter(|e| e.idioms.iter().any(|i| i == "mutex-exchange"))
            .count()
    };
    assert_eq!(mutex(&a.suites[0]), 0);
    assert!(mutex(&a.suites[3]) >= 1);
    let readme = String::from_utf8(a.files[&PathBuf::from("README.md")].clone()).unwrap();
    assert!(readme.contains("| HSA | 90 | 90 |"), "{readme}");
}

#[test]
fn bucket_lists_are_the_table_4_buckets() {
    let g = generated();
    for s in &g.suites {
        let t = table4(s);
        let mut seen = BTreeSet::new();
        for (k, m) in table4_models().into_iter().enumerate() {
            let (f, r) = (k / 4, k % 4);
            let d = bucket_list(s, m, Bucket::D);
            let c = bucket_list(s, m, Bucket::C);
            assert_eq!((d.len(), c.len()), (t.d[f][r], t.c[f][r]), "{} {m}", s.name);
            for n in &d {
                assert!(seen.insert(n.to_string()), "{n} distinguishing twice");
                assert!(c.contains(n), "bucket D is in bucket C");
            }
            for (b, names) in [(Bucket::D, &d), (Bucket::C, &c)] {
                assert_eq!(
                    list_file(&g, &s.name, b.folder(), m),
                    names.iter().map(|n| format!("{n}\n")).collect::<String>()
                );
            }
        }
        // Every test is distinguishing for exactly one model.
        assert_eq!(seen.len(), s.tests.len());
        for e in &s.tests {
            assert!(distinguishing_for(e.verdicts.as_ref().unwrap()).is_some());
        }
    }
}

/// A generated list file, as text.
fn list_file(g: &Generated, suite: &str, folder: &str, m: Model) -> String {
    let rel = Path::new(suite)
        .join(folder)
        .join(format!("{}.txt", m.name()));
    String::from_utf8(g.files[&rel].clone()).unwrap()
}

/// FNV-1a 64 of `bytes`, continuing from `h`.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    h
}

/// Issue 44 item 4: a model's conformance list is every test of the suite
/// that must terminate under it, decided here again by the oracle library
/// (not read from the suite's labels or the committed lists), for every
/// suite and every model, weak and strong; unfair, under which nothing
/// must terminate, has none. The committed files are those lists, and
/// Table 4's buckets, decided again too, are in `buckets/D/` and
/// `buckets/C/` with the bytes the folders `distinguishing/` and
/// `conformance/` held before (their hashes, taken then).
#[test]
fn conformance_lists_are_what_the_oracle_passes() {
    const BEFORE: [(&str, u64); 6] = [
        ("oopsla21", 0x4be6d30fa6ae3c3b),
        ("2t2i", 0x1c8f28c1d6a7503d),
        ("2t3i", 0xfbccb1df0730ae75),
        ("2t4i", 0x6d298df410424f83),
        ("3t3i", 0x7113262595f3afe2),
        ("3t4i", 0xd66c67d7ebe04f66),
    ];
    let g = generated();
    let committed = root().join("suites");
    let read = |rel: &Path| std::fs::read_to_string(committed.join(rel)).ok();
    assert_eq!(g.suites.len(), BEFORE.len());
    for (s, (name, before)) in g.suites.iter().zip(BEFORE) {
        assert_eq!(s.name, name);
        let tests: Vec<&Test> = s.tests.iter().map(|e| &e.test).collect();
        let verdicts = oracle::verdicts_all(&tests);
        let names_where = |keep: &dyn Fn(&progress_litmus::model::Verdicts) -> bool| -> String {
            s.tests
                .iter()
                .zip(&verdicts)
                .filter(|(_, v)| keep(v))
                .map(|(e, _)| format!("{}\n", e.name))
                .collect()
        };
        for m in Model::ALL {
            let rel = Path::new(name)
                .join("conformance")
                .join(format!("{}.txt", m.name()));
            let expected = names_where(&|v| v.passes(m));
            if m.base == Base::Unfair {
                assert_eq!(expected, "", "{name}: a test passes under unfair");
                assert!(!g.files.contains_key(&rel) && read(&rel).is_none());
                continue;
            }
            assert!(conformance_models().contains(&m));
            assert_eq!(conformance_list(s, m).len(), expected.lines().count());
            assert_eq!(
                list_file(&g, name, "conformance", m),
                expected,
                "{name} {m}"
            );
            assert_eq!(read(&rel).as_deref(), Some(&*expected), "{}", rel.display());
        }
        let mut h = 0xcbf29ce484222325;
        for (b, letter) in [(Bucket::D, "D"), (Bucket::C, "C")] {
            for m in table4_models() {
                let expected = names_where(&|v| match b {
                    Bucket::D => distinguishing_for(v) == Some(m),
                    Bucket::C => in_bucket_c(v, m),
                });
                let rel = Path::new(name)
                    .join(b.folder())
                    .join(format!("{}.txt", m.name()));
                assert_eq!(read(&rel).as_deref(), Some(&*expected), "{}", rel.display());
                h = fnv(h, format!("{letter}/{}\n", m.name()).as_bytes());
                h = fnv(h, expected.as_bytes());
            }
        }
        assert_eq!(h, before, "{name}: the buckets are not the lists they were");
    }
}

#[test]
fn writing_twice_changes_nothing_and_prunes_only_what_it_wrote() {
    let g = generated();
    let out = scratch("write");
    // A first run that also wrote a list the second one no longer writes
    // (a suite that shrank), and one in a folder it no longer writes at
    // all (bucket D was `distinguishing/` before issue 44).
    let mut before = g.files.clone();
    before.insert(PathBuf::from("2t2i/conformance/OLD.txt"), b"x\n".to_vec());
    before.insert(
        PathBuf::from("2t2i/distinguishing/HSA.txt"),
        b"y\n".to_vec(),
    );
    before.insert(PathBuf::from(MANIFEST), manifest(&before));
    let first = write(&out, &before).unwrap();
    assert_eq!(first.written, before.len());
    let second = write(&out, &g.files).unwrap();
    assert_eq!(
        second.removed,
        [
            PathBuf::from("2t2i/conformance/OLD.txt"),
            PathBuf::from("2t2i/distinguishing/HSA.txt")
        ]
    );
    assert!(
        !out.join("2t2i/distinguishing").exists(),
        "the emptied folder stays"
    );
    assert_eq!(
        (second.written, second.unchanged),
        (1, g.files.len() - 1),
        "the manifest"
    );
    let third = write(&out, &g.files).unwrap();
    assert_eq!((third.written, third.unchanged), (0, g.files.len()));
    std::fs::write(out.join("keep.txt"), "mine\n").unwrap();
    // Files a person put in a configuration folder are theirs (issue 10:
    // `synth suites --out` deleted them).
    std::fs::write(out.join("2t2i/notes.md"), "mine\n").unwrap();
    std::fs::write(out.join("2t2i/mine.txt"), "mine\n").unwrap();
    std::fs::write(out.join("2t2i/conformance/script.sh"), "mine\n").unwrap();
    let fourth = write(&out, &g.files).unwrap();
    assert!(fourth.removed.is_empty());
    for mine in [
        "keep.txt",
        "2t2i/notes.md",
        "2t2i/mine.txt",
        "2t2i/conformance/script.sh",
    ] {
        assert!(out.join(mine).exists(), "{mine} was removed");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// Issue 46, item 2: `synth suites -o DIR` with a list folder that is a
/// symbolic link deleted `*.txt` in the link's target ("1 stale
/// removed"). Now any link below DIR on the way to an output refuses the
/// run before anything is written or removed; a list in a list folder
/// the tool did not write (or one changed since it wrote it) is never
/// removed: the run refuses, naming it.
#[test]
fn no_file_outside_the_output_and_no_file_it_did_not_write_is_touched() {
    let g = generated();
    let out = scratch("links");
    write(&out, &g.files).unwrap();
    let outside = scratch("links-outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("precious.txt"), "mine\n").unwrap();
    let link = out.join("2t2i/conformance");
    std::fs::remove_dir_all(&link).unwrap();
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let files_before = |d: &Path| -> BTreeSet<PathBuf> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    };
    let outside_before = files_before(&outside);
    let e = write(&out, &g.files).unwrap_err().to_string();
    assert!(
        e.contains("2t2i/conformance: a symbolic link inside the output folder"),
        "{e}"
    );
    assert_eq!(
        files_before(&outside),
        outside_before,
        "nothing written or removed there"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("precious.txt")).unwrap(),
        "mine\n"
    );
    // A file that is a link, too (writing would replace its target).
    std::fs::remove_file(&link).unwrap();
    write(&out, &g.files).unwrap();
    let list = out.join("2t2i/conformance/HSA.txt");
    std::fs::remove_file(&list).unwrap();
    std::os::unix::fs::symlink(outside.join("precious.txt"), &list).unwrap();
    let e = write(&out, &g.files).unwrap_err().to_string();
    assert!(e.contains("HSA.txt: a symbolic link"), "{e}");
    assert_eq!(
        std::fs::read_to_string(outside.join("precious.txt")).unwrap(),
        "mine\n"
    );
    std::fs::remove_file(&list).unwrap();
    // A list the tool did not write, and one it wrote but a person edited.
    write(&out, &g.files).unwrap();
    for (name, bytes) in [("MINE.txt", None), ("HSA.txt", Some(b"edited\n"))] {
        let mut fewer = g.files.clone();
        let rel = PathBuf::from("2t2i/conformance").join(name);
        fewer.remove(&rel);
        fewer.insert(PathBuf::from(MANIFEST), manifest(&fewer));
        let path = out.join(&rel);
        std::fs::write(&path, bytes.map_or(b"mine\n".to_vec(), |b| b.to_vec())).unwrap();
        let before = std::fs::read(out.join(MANIFEST)).unwrap();
        let e = write(&out, &fewer).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "{name}: a list `synth suites` would remove as stale, but it did not write it"
            )),
            "{e}"
        );
        assert!(path.exists(), "{name} removed");
        assert_eq!(
            std::fs::read(out.join(MANIFEST)).unwrap(),
            before,
            "nothing written"
        );
        std::fs::remove_file(&path).unwrap();
        write(&out, &g.files).unwrap();
    }
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_dir_all(&outside).unwrap();
}

/// Adversarial finding 07: a FIFO at an output path (`README.md`, or the
/// `MANIFEST` the run reads first) blocked `synth suites -o DIR` forever:
/// only symbolic links were refused. Every output path below DIR must be
/// a regular file (a folder on the way a folder); anything else is
/// refused, naming the path and what it is, before anything is written.
#[test]
fn an_output_path_that_is_not_a_regular_file_is_refused_not_opened() {
    let g = generated();
    let out = scratch("fifo");
    write(&out, &g.files).unwrap();
    let mkfifo = |p: &Path| {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    };
    let cases: [(&str, &str); 4] = [
        ("README.md", "a FIFO (named pipe), not a regular file"),
        (MANIFEST, "a FIFO (named pipe), not a regular file"),
        (
            "2t2i/conformance/HSA.txt",
            "a directory, not a regular file",
        ),
        ("2t2i/conformance", "a FIFO (named pipe), not a folder"),
    ];
    for (rel, why) in cases {
        let path = out.join(rel);
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
        if why.starts_with("a directory") {
            std::fs::create_dir(&path).unwrap();
        } else {
            mkfifo(&path);
        }
        let before = std::fs::read(out.join("2t2i/2t2i.ron")).ok();
        // A hang here is the bug: the write runs on a thread the test
        // gives up on after a minute.
        let (tx, rx) = std::sync::mpsc::channel();
        let (o, files) = (out.clone(), g.files.clone());
        std::thread::spawn(move || tx.send(write(&o, &files).map_err(|e| e.to_string())));
        let e = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{rel}: the write hung"))
            .unwrap_err();
        assert!(e.contains(&format!("{rel}: {why}")), "{rel}: {e}");
        assert_eq!(std::fs::read(out.join("2t2i/2t2i.ron")).ok(), before);
        if path.is_dir() {
            std::fs::remove_dir(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
        write(&out, &g.files).unwrap();
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// The committed `suites/` is exactly what `synth suites` generates: run
/// `cargo run --release -p synth -- suites` after changing the synthesizer,
/// the oracle or the idioms.
#[test]
fn committed_suites_are_up_to_date() {
    let dir = root().join("suites");
    let g = generated();
    let mut stale = Vec::new();
    for (rel, bytes) in &g.files {
        if std::fs::read(dir.join(rel)).ok().as_ref() != Some(bytes) {
            stale.push(rel.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "suites/ is out of date ({} files differ, e.g. {}); regenerate with `cargo run --release -p synth -- suites`",
        stale.len(),
        stale[0]
    );
    // And no list is left over that it no longer writes (the old
    // `distinguishing/` folder, issue 44).
    let mut extra = Vec::new();
    for s in &g.suites {
        for sub in [
            "conformance",
            "distinguishing",
            "buckets/D",
            "buckets/C",
            "idioms",
        ] {
            let Ok(rd) = std::fs::read_dir(dir.join(&s.name).join(sub)) else {
                continue;
            };
            for e in rd {
                let rel = Path::new(&s.name).join(sub).join(e.unwrap().file_name());
                if !g.files.contains_key(&rel) {
                    extra.push(rel.display().to_string());
                }
            }
        }
    }
    assert!(
        extra.is_empty(),
        "suites/ has lists it no longer writes: {extra:?}"
    );
}

/// A file beside the lists is never read unless it is named like a list,
/// and a list-named file larger than any list the tool writes is refused
/// unread (a 2.5 GB sparse `notes.bin` once took 28 s and 2.5 GB, a 4 GB
/// one ran out of memory). Sparse files: no disk is used.
#[test]
fn large_files_beside_the_lists_are_not_read() {
    let g = generated();
    let out = scratch("large");
    write(&out, &g.files).unwrap();
    let notes = out.join("2t2i/conformance/notes.bin");
    std::fs::File::create(&notes)
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    write(&out, &g.files).unwrap();
    assert_eq!(
        std::fs::metadata(&notes).unwrap().len(),
        8 << 30,
        "left alone"
    );
    let big_list = out.join("2t2i/conformance/MINE.txt");
    std::fs::File::create(&big_list)
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let e = write(&out, &g.files).unwrap_err().to_string();
    assert!(
        e.contains(
            "MINE.txt: a list `synth suites` would remove as stale, but it did not write it"
        ),
        "{e}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

/// The status line names the output folder escaped (an escape sequence in
/// a path once reached the terminal raw).
#[test]
fn the_status_line_escapes_the_folder() {
    let base = scratch("status");
    std::fs::create_dir_all(&base).unwrap();
    let out = base.join("s\u{1b}[31m\u{9b}2J");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_synth"))
        .args(["suites", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for text in [&o.stdout, &o.stderr] {
        let text = String::from_utf8_lossy(text);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{9b}'),
            "{text:?}"
        );
        assert!(text.is_empty() || text.contains("\\u{1b}[31m"), "{text:?}");
    }
    std::fs::remove_dir_all(&base).unwrap();
}
