//! The `backends emit` command line: outputs, determinism and bad input.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Output};

fn backends(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_backends"))
        .args(args)
        .output()
        .unwrap()
}

fn published(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/oopsla21/tests")
        .join(name)
        .display()
        .to_string()
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn emits_one_shader_per_test_and_mapping_and_the_same_bytes_twice() {
    let root = scratch("determinism");
    for target in ["glsl", "amber", "metal", "cpp", "cuda"] {
        let mut runs = Vec::new();
        for k in 0..2 {
            let out = root.join(format!("{target}-{k}"));
            let o = backends(&[
                "emit",
                "--target",
                target,
                "--mapping",
                "all",
                &published("2t2i_4.txt"),
                &published("3t4i_20.txt"),
                "--out",
                out.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{target}: {}", stderr(&o));
            runs.push(listing(&out));
        }
        assert_eq!(runs[0], runs[1], "{target} output differs between runs");
        let names: Vec<&str> = runs[0].iter().map(|(n, _)| n.as_str()).collect();
        match target {
            "cpp" => assert_eq!(names, ["tests.cpp"]),
            "cuda" => assert_eq!(names, ["tests.cu"]),
            "metal" => assert_eq!(names.len(), 7),
            _ => assert_eq!(names.len(), 6),
        }
    }
    let o = backends(&[
        "emit",
        "--target",
        "glsl",
        "--mapping",
        "chunked",
        "--instances",
        "5",
        "--shape",
        "if-chain",
        &published("2t2i_4.txt"),
        "--out",
        root.join("one").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(root.join("one/2t2i_4.chunked.comp")).unwrap();
    assert!(text
        .contains("// axb-run: mapping=chunked instances=5 workgroups=10 words=5 test=2t2i_4\n"));
    assert!(text.contains("uint tid = w / 5u;\n"));
    assert!(!text.contains("switch"));
}

#[test]
fn a_bad_test_file_is_reported_with_its_position_and_status_2() {
    let dir = scratch("bad");
    let bad = dir.join("bad.txt");
    std::fs::write(
        &bad,
        "THREAD0\natomic_store(0,1)\natomic_chk_branch(0,0,7)\n",
    )
    .unwrap();
    let o = backends(&[
        "emit",
        "--target",
        "cpp",
        bad.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains(&format!("{}:3:", bad.display())), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        !dir.join("out").exists(),
        "nothing is written for bad input"
    );
}

#[test]
fn unknown_targets_mappings_and_missing_inputs_are_refused() {
    let out = scratch("refused");
    let out = out.to_str().unwrap();
    let t = published("2t2i_4.txt");
    let o = backends(&["emit", "--target", "opencl", &t, "--out", out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("opencl"), "{}", stderr(&o));
    let o = backends(&[
        "emit",
        "--target",
        "glsl",
        "--mapping",
        "diagonal",
        &t,
        "--out",
        out,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("round-robin"), "{}", stderr(&o));
    let o = backends(&[
        "emit",
        "--target",
        "glsl",
        "/no/such/test.txt",
        "--out",
        out,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/no/such/test.txt"), "{}", stderr(&o));
    // More workgroups than a Vulkan dispatch is guaranteed in one dimension.
    let o = backends(&[
        "emit",
        "--target",
        "glsl",
        "--instances",
        "40000",
        &t,
        "--out",
        out,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("65535"), "{}", stderr(&o));
}

#[test]
fn duplicate_test_names_in_one_program_are_refused() {
    let dir = scratch("dup");
    for sub in ["a", "b"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        std::fs::copy(published("2t2i_4.txt"), dir.join(sub).join("same.txt")).unwrap();
    }
    let o = backends(&[
        "emit",
        "--target",
        "cpp",
        dir.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`same`"), "{}", stderr(&o));
}

#[test]
fn a_missing_compiler_is_named_with_its_package() {
    let out = scratch("nocompiler");
    let o = Command::new(env!("CARGO_BIN_EXE_backends"))
        .args([
            "emit",
            "--target",
            "cpp",
            "--check",
            &published("2t2i_4.txt"),
            "--out",
            out.to_str().unwrap(),
        ])
        .env("PATH", "")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("`g++` not found") && err.contains("apt-get install g++"),
        "{err}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_backends"))
        .args([
            "emit",
            "--target",
            "glsl",
            "--check",
            &published("2t2i_4.txt"),
            "--out",
            out.to_str().unwrap(),
        ])
        .env("PATH", "")
        .output()
        .unwrap();
    assert!(stderr(&o).contains("glslang-tools"), "{}", stderr(&o));
}

/// Issue 20 item 2: `report -o FILE` (and every other output) replaced a
/// FIFO, a symbolic link or, as root, `/dev/null` with a regular file.
#[test]
fn report_out_writes_through_devices_and_fifos_and_follows_links() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("special-out");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let report = |out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_backends"))
            .current_dir(&root)
            .args(["report", "results/cpu", "-o", s(out)])
            .output()
            .unwrap()
    };
    let plain = dir.join("plain.txt");
    assert!(report(&plain).status.success());
    let expected = std::fs::read(&plain).unwrap();
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|st| st.success()) {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let o = report(&fifo);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(reader.join().unwrap(), expected);
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
    }
    std::os::unix::fs::symlink("plain.txt", dir.join("link")).unwrap();
    std::fs::write(&plain, "old").unwrap();
    let o = report(&dir.join("link"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(dir.join("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&plain).unwrap(), expected);
    let o = report(Path::new("/dev/null"));
    assert!(o.status.success(), "{}", stderr(&o));
    let m = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device(), "/dev/null was replaced");
    if Path::new("/dev/full").exists() {
        assert_clean_failure(&report(Path::new("/dev/full")), 1, &["No space left"]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 20 item 7: `--deadline-ms 18446744073709551615` overflowed (a
/// panic in `run` after compiling, a program that refused it), and
/// `--os-threads 4294967295` aborted the program on allocation: both are
/// refused by the command line, before any work.
#[test]
fn deadlines_and_os_threads_are_bounded() {
    let dir = scratch("bounds");
    let out = dir.join("out");
    for args in [
        vec![
            "emit",
            "--target",
            "cpp",
            "--deadline-ms",
            "18446744073709551615",
        ],
        vec!["emit", "--target", "cpp", "--deadline-ms", "86400001"],
        vec![
            "run",
            "--target",
            "cpp",
            "--deadline-ms",
            "18446744073709551615",
        ],
        vec!["run", "--target", "cpp", "--os-threads", "4294967295"],
    ] {
        let mut a = args.clone();
        let test = published("2t2i_3.txt");
        a.extend(["-o", s(&out), &test]);
        let o = backends(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("is not in 1..="), "{}", stderr(&o));
        assert!(!out.exists());
    }
    // More workgroups than the cpp program counts: refused before the
    // compile (it failed after it, with exit 1).
    let o = backends(&[
        "run",
        "--target",
        "cpp",
        "--instances",
        "4294967295",
        "-o",
        s(&out),
        &published("2t2i_3.txt"),
    ]);
    assert_clean_failure(&o, 2, &["--instances 4294967295", "lower --instances"]);
    assert!(!out.exists());
    let o = backends(&[
        "emit",
        "--target",
        "cpp",
        "--deadline-ms",
        "86400000",
        "-o",
        "-",
        &published("2t2i_3.txt"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 20 item 7: standard output to a reader that went away (`| head`)
/// ends quietly with status 0; to a full disk, one error line and status 1.
#[test]
fn stdout_ends_quietly_on_a_closed_pipe_and_fails_once_on_a_full_disk() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let report = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_backends"));
        c.current_dir(&root)
            .args(["report", "results/cpu", "--format", "json"]);
        c
    };
    let mut child = report()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // gone before the report is written
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    if Path::new("/dev/full").exists() {
        let o = report()
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_clean_failure(&o, 1, &["No space left"]);
    }
}

/// Regression (issue 20 item 4): a test name used twice inside a packed
/// suite was refused here but accepted by `oracle`. Both now get the one
/// loader's error, at the repeat and naming the first line.
#[test]
fn a_packed_suite_with_a_name_twice_gets_the_loaders_error() {
    use std::io::Write;
    let dir = scratch("packed-dup");
    let f = dir.join("dup.axb.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"axb-packed 1\nsuite s\nnote n\na\t00.-\nb\t00.-\na\t01.-\n")
        .unwrap();
    std::fs::write(&f, gz.finish().unwrap()).unwrap();
    let o = backends(&[
        "emit",
        "--target",
        "cpp",
        f.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!(
            "{}:6:1: test name `a` is used twice in the suite (first at line 4)",
            f.display()
        )),
        "{}",
        stderr(&o)
    );
}
