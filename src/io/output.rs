//! Writing a command's output: a file replaced atomically (never half
//! written, never two writers' bytes mixed), or standard output.

use super::input::kind_of;
use std::path::{Path, PathBuf};

/// Writes a file atomically: to a temporary file beside it, then renamed
/// over it, so an interrupted run never leaves a half-written file and two
/// processes writing the same output never mix their bytes (the last
/// rename wins whole).
///
/// The temporary file is created exclusively (`O_EXCL`: never through a
/// symbolic link or into someone else's file planted under that name, which
/// matters in a shared directory such as /tmp), flushed to disk before the
/// rename, and removed when anything fails.
///
/// What is already at `path` is respected, never destroyed (see
/// [`write_atomically_with`]): a symbolic link is followed, a character
/// device (`/dev/null`) or a FIFO is written through.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    write_atomically_with(path, |f| f.write_all(bytes))
}

/// [`write_atomically`] for output made piece by piece: `write` fills the
/// temporary file (through a buffer), which then replaces `path`.
///
/// A rename replaces whatever is at its target, so the target is looked at
/// first: a symbolic link is followed (its target is replaced atomically, the
/// link kept: a link to a shared location stays a link); a character device
/// or a FIFO is written through (`-o /dev/null` as root must not turn the
/// system's `/dev/null` into a regular file, and a FIFO's reader must get
/// the bytes); a directory, a block device or a socket is an error; a
/// regular file or nothing gets the atomic replace.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<&std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write;
    let target = output_target(path)?;
    if let Some(m) = std::fs::metadata(&target).ok().filter(|m| !m.is_file()) {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if !(t.is_char_device() || t.is_fifo()) {
            let via = if target == path {
                String::new()
            } else {
                format!(" (the target of the link, {})", target.display())
            };
            return Err(std::io::Error::other(format!(
                "is {}{via}: give a regular file, a character device or a FIFO",
                kind_of(&m)
            )));
        }
        // Written through; no fsync (a device or a pipe has no disk copy).
        let file = std::fs::OpenOptions::new().write(true).open(&target)?;
        let mut w = std::io::BufWriter::new(&file);
        return write(&mut w).and_then(|()| w.flush());
    }
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let (tmp, file) = create_temporary(&target)?;
    let written = {
        let mut w = std::io::BufWriter::new(&file);
        write(&mut w).and_then(|()| w.flush())
    }
    .and_then(|()| file.sync_all())
    .and_then(|()| std::fs::rename(&tmp, &target));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// How many symbolic links an output path may go through (Linux's own
/// limit, `ELOOP`), so a link cycle is an error rather than a hang.
const MAX_LINK_HOPS: usize = 40;

/// The file an output to `path` must land in: `path` with every symbolic
/// link at its end followed (a relative link is relative to its own
/// folder), also when the last link dangles (the output then creates its
/// target, as writing through the link would).
pub fn output_target(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINK_HOPS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINK_HOPS} symbolic links (a cycle?)"
    )))
}

/// A new file `PATH.tmp<pid>[.<n>]` beside `path`, created exclusively.
fn create_temporary(path: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut attempt = 0u32;
    loop {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".tmp{}", std::process::id()));
        if attempt > 0 {
            tmp.push(format!(".{attempt}"));
        }
        let tmp = PathBuf::from(tmp);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1
            }
            Err(e) => return Err(e),
        }
    }
}

/// Whether an output path means standard output: `-o -`, the same in
/// every command of the three tools.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Writes a command's complete output to `out`: standard output for `-`
/// ([`write_stdout`]), else a file replaced atomically
/// ([`write_atomically`]), so that an interrupted command never leaves half
/// a file. `Ok(false)` when standard output's reader had gone away.
pub fn write_output(out: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    if is_stdout(out) {
        write_stdout(bytes)
    } else {
        write_atomically(out, bytes).map(|()| true)
    }
}

/// Writes `bytes` to standard output: `Ok(true)` once they are written and
/// flushed, `Ok(false)` when the reader had gone away (`oracle classify DIR
/// | head -1`), which is not an error: what it wanted it has, so the
/// command ends quietly, with status 0. Any other failure (`> /dev/full`)
/// is returned, to be reported as one error line. The one stdout writer of
/// the three tools.
pub fn write_stdout(bytes: &[u8]) -> std::io::Result<bool> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        r => r.map(|()| true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh scratch folder for the output tests.
    fn out_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("axb-out-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_output_through_a_symlink_replaces_the_target_and_keeps_the_link() {
        let d = out_dir("link");
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/real"), "old").unwrap();
        // A relative link is relative to its own folder; links may chain.
        std::os::unix::fs::symlink("sub/real", d.join("link1")).unwrap();
        std::os::unix::fs::symlink("link1", d.join("link2")).unwrap();
        write_atomically(&d.join("link2"), b"new").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("sub/real")).unwrap(), "new");
        for l in ["link1", "link2"] {
            let m = std::fs::symlink_metadata(d.join(l)).unwrap();
            assert!(m.file_type().is_symlink(), "{l} was replaced");
        }
        // A dangling link: its target is created.
        std::os::unix::fs::symlink("made", d.join("dangling")).unwrap();
        write_atomically(&d.join("dangling"), b"x").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("made")).unwrap(), "x");
        // A cycle is an error, not a hang.
        std::os::unix::fs::symlink("b", d.join("a")).unwrap();
        std::os::unix::fs::symlink("a", d.join("b")).unwrap();
        let e = write_atomically(&d.join("a"), b"x").unwrap_err();
        assert!(e.to_string().contains("symbolic links"), "{e}");
        // Nothing temporary left beside anything.
        let mut names: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .chain(std::fs::read_dir(d.join("sub")).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["a", "b", "dangling", "link1", "link2", "made", "real", "sub"]
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_output_to_a_fifo_is_written_through() {
        let d = out_dir("fifo");
        let fifo = d.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("SKIPPED: mkfifo is not available");
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_atomically(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_output_to_a_device_is_written_through_and_a_folder_refused() {
        use std::os::unix::fs::FileTypeExt;
        write_atomically(Path::new("/dev/null"), b"gone").unwrap();
        let m = std::fs::symlink_metadata("/dev/null").unwrap();
        assert!(m.file_type().is_char_device(), "/dev/null was replaced");
        if Path::new("/dev/full").exists() {
            let e = write_atomically(Path::new("/dev/full"), b"x").unwrap_err();
            assert_eq!(e.raw_os_error(), Some(28), "{e}"); // ENOSPC
        }
        let d = out_dir("dir");
        let e = write_atomically(&d, b"x").unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        assert!(d.is_dir() && std::fs::read_dir(&d).unwrap().next().is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
