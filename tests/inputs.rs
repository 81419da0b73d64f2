//! Hostile inputs on disk: symbolic-link loops, devices, FIFOs, huge files,
//! odd names. Each case is a reproducer from issue 10 or one of its kin.

#[path = "support/scratch.rs"]
#[allow(dead_code)]
mod scratch;
use scratch::Scratch;

use progress_litmus::axb::load::{self, expand_paths, load_all};
use progress_litmus::io::{self, read_input_limited};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

const TEST: &str = "THREAD0\natomic_store(0,1)\n";

fn scratch(name: &str) -> Scratch {
    Scratch::new("axb-inputs", name)
}

/// Runs `f` on another thread and fails the test if it has not finished
/// within `secs`: a hang becomes a failure, not a stuck test run.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("did not finish in time: a hang")
}

fn names(dir: &Path) -> (Vec<String>, Vec<String>) {
    let (tests, errors) = load_all(&[dir.to_path_buf()]);
    (
        tests.into_iter().map(|t| t.name).collect(),
        errors.into_iter().map(|e| e.to_string()).collect(),
    )
}

#[test]
fn two_links_to_the_directory_itself_end_and_list_each_file_once() {
    // Reproducer: `ln -s . x; ln -s . y` made `oracle classify DIR` hang
    // with memory growing; one link gave duplicate rows.
    let d = scratch("dotlinks");
    std::fs::write(d.join("a.txt"), TEST).unwrap();
    std::fs::write(d.join("b.txt"), TEST).unwrap();
    symlink(".", d.join("x")).unwrap();
    let dd = d.to_path_buf();
    assert_eq!(within(10, move || names(&dd)).0, ["a", "b"]);
    symlink(".", d.join("y")).unwrap();
    let dd = d.to_path_buf();
    let (found, errors) = within(10, move || names(&dd));
    assert_eq!(found, ["a", "b"]);
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn links_to_parents_and_link_cycles_end() {
    let d = scratch("parents");
    std::fs::create_dir_all(d.join("sub/deeper")).unwrap();
    std::fs::write(d.join("sub/deeper/t.txt"), TEST).unwrap();
    symlink("../..", d.join("sub/deeper/up")).unwrap();
    symlink(&*d, d.join("sub/abs")).unwrap();
    // A cycle of links (ELOOP) and a dangling link.
    symlink("l2.txt", d.join("l1.txt")).unwrap();
    symlink("l1.txt", d.join("l2.txt")).unwrap();
    symlink("nowhere", d.join("dangling.ron")).unwrap();
    symlink("nowhere", d.join("ignored.md")).unwrap();
    let dd = d.to_path_buf();
    let (found, errors) = within(10, move || names(&dd));
    assert_eq!(found, ["t"]);
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].contains("dangling.ron: a symbolic link to nothing"));
    assert!(errors[1].contains("l1.txt: cannot read"), "{errors:?}");
    // Paths given separately are expanded separately: asked for three
    // times, listed three times (each walk on its own lists it once).
    let (tests, _) = load_all(&[
        d.to_path_buf(),
        d.join("sub/abs"),
        d.join("sub/deeper/t.txt"),
    ]);
    assert_eq!(tests.len(), 3);
    // Within one walk, a hard link is the same file too.
    std::fs::hard_link(d.join("sub/deeper/t.txt"), d.join("sub/hard.txt")).unwrap();
    let (tests, _) = load_all(&[d.to_path_buf()]);
    assert_eq!(tests.len(), 1);
}

#[test]
fn a_link_to_dev_zero_is_refused_unread() {
    // Reproducer: a symbolic link to /dev/zero read 3.6 GB.
    let d = scratch("zero");
    symlink("/dev/zero", d.join("zero.txt")).unwrap();
    std::fs::write(d.join("ok.txt"), TEST).unwrap();
    let dd = d.to_path_buf();
    let (found, errors) = within(10, move || names(&dd));
    assert_eq!(found, ["ok"]);
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].ends_with(
            "zero.txt: a character device, not a regular file: only regular files are read"
        ),
        "{errors:?}"
    );
    // Named directly, too.
    let e = load::load_file(&d.join("zero.txt")).unwrap_err();
    assert!(e.msg.contains("character device"), "{e}");
    let e = within(10, || io::read_input(Path::new("/dev/zero"))).unwrap_err();
    assert!(e.msg.contains("character device"), "{e}");
}

#[test]
fn a_fifo_does_not_hang() {
    let d = scratch("fifo");
    let fifo = d.join("pipe.ron");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let dd = d.to_path_buf();
    let (found, errors) = within(10, move || names(&dd));
    assert!(found.is_empty());
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].contains("pipe.ron: a FIFO (named pipe), not a regular file"),
        "{errors:?}"
    );
    let e = within(10, move || io::read_input(&fifo)).unwrap_err();
    assert!(e.msg.contains("FIFO"), "{e}");
}

#[test]
fn files_over_the_limit_are_refused_before_reading() {
    let d = scratch("huge");
    // A sparse file just over the default limit: refused by its size alone
    // (reading it would take a second and a gigabyte).
    let big = d.join("big.ron");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(io::DEFAULT_MAX_INPUT_BYTES + 1).unwrap();
    let e = within(10, move || {
        read_input_limited(&big, io::DEFAULT_MAX_INPUT_BYTES).unwrap_err()
    });
    assert!(
        e.msg
            == "1.0 GiB (1073741825 bytes) is over the input limit of 1 GiB (set AXB_MAX_INPUT_BYTES to raise it)",
        "{e}"
    );
    let small = d.join("small.txt");
    std::fs::write(&small, TEST).unwrap();
    assert!(read_input_limited(&small, 10)
        .unwrap_err()
        .msg
        .contains("over the input limit of 10 bytes"));
    assert_eq!(read_input_limited(&small, TEST.len() as u64).unwrap(), TEST);
}

#[test]
fn bad_utf8_is_reported_at_its_byte_and_a_bom_is_dropped() {
    let d = scratch("utf8");
    let p = d.join("bad.txt");
    std::fs::write(&p, b"THREAD0\natomic_store(0,\xff1)\n").unwrap();
    let e = load::load_file(&p).unwrap_err();
    assert_eq!((e.line, e.col), (2, 16), "{e}");
    assert!(e.msg.contains("not UTF-8"), "{e}");
    let p = d.join("bom.txt");
    std::fs::write(&p, format!("\u{feff}{TEST}")).unwrap();
    assert_eq!(load::load_file(&p).unwrap().len(), 1);
}

#[test]
fn file_names_obey_the_name_rule() {
    // Reproducer: names with `"`, a newline or `,` were accepted and broke
    // CSVs and `--test` lists downstream.
    let d = scratch("names");
    for bad in ["a\"b", "a\nb", "a,b", "a b", "-x"] {
        let p = d.join(format!("{bad}.txt"));
        std::fs::write(&p, TEST).unwrap();
        let e = load::load_file(&p).unwrap_err();
        assert!(e.msg.contains("(from the file name) is not valid"), "{e}");
        assert!(e.msg.ends_with("rename the file"), "{e}");
        assert!(!e.msg.contains('\n'), "{e}");
        std::fs::remove_file(&p).unwrap();
    }
    // A RON test's own name wins over its file's.
    let p = d.join("a,b.ron");
    std::fs::write(
        &p,
        "Test(name: \"fine\", threads: [[(loc: 0, check: 0, jump: End)]])",
    )
    .unwrap();
    assert_eq!(load::load_file(&p).unwrap()[0].name, "fine");
    std::fs::write(&p, "Test(threads: [[(loc: 0, check: 0, jump: End)]])").unwrap();
    let e = load::load_file(&p).unwrap_err();
    assert!(
        e.msg
            .ends_with("rename the file or give the test a `name:`"),
        "{e}"
    );
}

#[test]
fn files_come_in_the_order_given_and_directories_sorted() {
    let d = scratch("order");
    std::fs::create_dir_all(d.join("dir/m")).unwrap();
    for (f, name) in [
        ("dir/b.txt", ""),
        ("dir/a.ron", "z_first"),
        ("dir/m/c.txt", ""),
        ("dir/n.txt", ""),
        ("last.txt", ""),
    ] {
        let body = if name.is_empty() {
            TEST.to_string()
        } else {
            format!("Test(name: \"{name}\", threads: [[(loc: 0, check: 0, jump: End)]])")
        };
        std::fs::write(d.join(f), body).unwrap();
    }
    let (tests, errors) = load_all(&[d.join("last.txt"), d.join("dir")]);
    assert!(errors.is_empty());
    let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["last", "z_first", "b", "c", "n"]);
    let files: Vec<PathBuf> = expand_paths(&[d.join("dir")])
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(files[2], d.join("dir/m/c.txt"));
}

#[test]
fn write_atomically_never_follows_a_planted_link_and_cleans_up() {
    let d = scratch("atomic");
    let out = d.join("out.csv");
    let victim = d.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    // Someone plants the temporary name as a link to a file of ours.
    symlink(
        &victim,
        d.join(format!("out.csv.tmp{}", std::process::id())),
    )
    .unwrap();
    io::write_atomically(&out, b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
    // A rename that fails (onto a non-empty directory) leaves nothing behind.
    let dir_out = d.join("taken");
    std::fs::create_dir_all(dir_out.join("inside")).unwrap();
    assert!(io::write_atomically(&dir_out, b"x").is_err());
    let left: Vec<String> = std::fs::read_dir(&*d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("taken.tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
