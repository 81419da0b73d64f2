//! The lock of a journal: a file that records a long run as it goes
//! (`synth`'s enumeration and `find` journals, `backends`' campaign
//! journals) is held with an exclusive OS lock (`flock`) for the life of
//! the process that writes it, so that a second process on the same
//! output is refused at once, naming the process that holds it where the
//! system says, instead of interleaving its lines with the first.
//!
//! What the journal's lines hold, and how each tool checks them, is each
//! tool's; the lock, its message and the guarantees of [`open_locked`] are
//! the same for all.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

/// Who would be refused: the kind of process (`synth`, `synth find`,
/// `backends`) and what it works on (`output`, `campaign`), for the
/// message.
#[derive(Clone, Copy, Debug)]
pub struct Holder<'a> {
    pub process: &'a str,
    pub work: &'a str,
}

/// Takes the exclusive lock on an open journal, or says that another
/// process holds it, naming that process when the system says which
/// (`/proc/locks`).
///
/// A holder that is this very process is a child being forked by another
/// of its threads: between its fork and its exec the child shares our open
/// files, this lock included, which exec then closes. So that lock is
/// waited for, up to a second, instead of refused (it failed the test
/// suite under load, each test's children starting beside the others').
pub fn lock(file: &File, path: &Path, who: Holder) -> Result<(), String> {
    let mut tries = 0;
    let got = loop {
        match file.try_lock() {
            Err(TryLockError::WouldBlock)
                if tries < 100
                    && lock_holder(file).is_some_and(|(pid, _)| pid == std::process::id()) =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            r => break r,
        }
    };
    got.map_err(|e| match e {
        TryLockError::WouldBlock => format!(
            "{}: locked by another {} process{} working on this {} (it holds the journal's lock): wait for it to end, or stop it, first",
            path.display(),
            who.process,
            lock_holder(file).map_or(String::new(), |(pid, name)| format!(
                " (pid {pid}{})",
                name.map_or(String::new(), |n| format!(", `{n}`"))
            )),
            who.work,
        ),
        TryLockError::Error(e) => format!("{}: cannot lock the journal: {e}", path.display()),
    })
}

/// The process holding the `flock` on `file`, from `/proc/locks` (Linux),
/// with its command name if visible: `None` where the system does not say
/// (another OS, another PID namespace). Only for the message.
fn lock_holder(file: &File) -> Option<(u32, Option<String>)> {
    use std::os::unix::fs::MetadataExt;
    let m = file.metadata().ok()?;
    let dev = m.dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let id = format!("{major:02x}:{minor:02x}:{}", m.ino());
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let pid: u32 = locks.lines().find_map(|l| {
        // `1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF`; waiters (`->`) skipped.
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(1) == Some(&"FLOCK") && f.get(5) == Some(&id.as_str()))
            .then(|| f.get(4)?.parse().ok())
            .flatten()
    })?;
    if pid == 0 {
        return None;
    }
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|n| crate::error::excerpt(n.trim_end()));
    Some((pid, name))
}

/// Opens the journal at `path` with `options` and locks it ([`lock`]).
/// The lock is taken on the file that is still at `path` afterwards: a
/// process that finished and removed its journal between our open and our
/// lock leaves us an unlinked file, so we open again. A journal is
/// written, checked and removed, so it must be a regular file, never a
/// device or a FIFO (`--journal /dev/null` as root).
pub fn open_locked(path: &Path, options: &OpenOptions, who: Holder) -> Result<File, String> {
    use std::os::unix::fs::MetadataExt;
    for _ in 0..10 {
        let file = options
            .open(path)
            .map_err(|e| format!("{}: cannot open the journal: {e}", path.display()))?;
        lock(&file, path, who)?;
        let held = file
            .metadata()
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if !held.is_file() {
            return Err(format!(
                "{}: not a regular file: a journal is written, checked and removed, so it must be a file",
                path.display()
            ));
        }
        match std::fs::metadata(path) {
            Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => return Ok(file),
            _ => continue,
        }
    }
    Err(format!(
        "{}: the journal keeps being replaced by another process",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_open_is_refused_naming_the_holder_and_a_fifo_is_refused() {
        let dir = std::env::temp_dir().join(format!("axb-journal-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("j");
        let mut o = OpenOptions::new();
        o.read(true).write(true).create(true).truncate(false);
        let who = Holder {
            process: "test",
            work: "output",
        };
        let first = open_locked(&p, &o, who).unwrap();
        let e = open_locked(&p, &o, who).unwrap_err();
        assert!(
            e.contains("locked by another test process") && e.contains("working on this output"),
            "{e}"
        );
        // This process holds the lock: /proc/locks names it, where there is one.
        if Path::new("/proc/locks").exists() {
            assert!(e.contains(&format!("(pid {}", std::process::id())), "{e}");
        }
        drop(first);
        assert!(open_locked(&p, &o, who).is_ok());
        let fifo = dir.join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success()));
        let mut nb = OpenOptions::new();
        std::os::unix::fs::OpenOptionsExt::custom_flags(
            nb.read(true).write(true),
            libc::O_NONBLOCK,
        );
        let e = open_locked(&fifo, &nb, who).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
