//! An output folder read and written through file descriptors, so that
//! no path below it is ever resolved twice: for every command that writes
//! many files under `-o DIR` (`synth suites`, `backends db export`,
//! `backends site`).
//!
//! `synth suites` refuses a run when a folder or file below the output
//! folder is a symbolic link, but a check made once cannot hold while the
//! run writes: the adversarial pass of issue 46 swapped a list folder for
//! a link to another folder between the check and the writes, and the
//! run wrote (and removed recorded stale lists) there. Here the output
//! folder is opened once, and every folder below it is opened from its
//! parent's descriptor one component at a time with `O_NOFOLLOW`; files
//! are opened, created (under a fresh temporary name, `O_EXCL`), renamed
//! and removed relative to their folder's descriptor. A link met on the
//! way is an error (`ELOOP`/`ENOTDIR`), never followed; a link put at a
//! file's name is replaced by the rename, not written through. A folder
//! moved away after it was opened keeps receiving the run's files: only a
//! folder that was below the output folder, by someone able to move it.

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, CWD};
use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// An open output folder.
pub struct Tree {
    root: OwnedFd,
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

impl Tree {
    /// Opens `out` (created if missing; `out` itself may be a link, the
    /// user's choice).
    pub fn open(out: &Path) -> io::Result<Tree> {
        std::fs::create_dir_all(out)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(Tree {
            root: rfs::openat(CWD, out, flags, Mode::empty())?,
        })
    }

    /// The folder `rel` below the root, opened component by component
    /// without following links; created where `create`, else `None` when
    /// some component is missing.
    fn dir(&self, rel: &Path, create: bool) -> io::Result<Option<OwnedFd>> {
        let mut cur: Option<OwnedFd> = None;
        for c in rel.components() {
            let Component::Normal(name) = c else {
                return Err(io::Error::other("not a plain relative path"));
            };
            let at = cur.as_ref().map_or(self.root.as_fd(), |f| f.as_fd());
            let next = match rfs::openat(at, name, DIR_FLAGS, Mode::empty()) {
                Err(rustix::io::Errno::NOENT) if create => {
                    match rfs::mkdirat(at, name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    rfs::openat(at, name, DIR_FLAGS, Mode::empty())
                }
                Err(rustix::io::Errno::NOENT) => return Ok(None),
                other => other,
            };
            cur = Some(next.map_err(not_through_links)?);
        }
        Ok(Some(match cur {
            Some(fd) => fd,
            None => rustix::io::fcntl_dupfd_cloexec(&self.root, 0)?,
        }))
    }

    /// The bytes of the regular file `rel`; `None` when it (or a folder on
    /// the way) is not there. Anything else at its name, or a file of more
    /// than `max` bytes, is an error (opened without blocking: a FIFO is
    /// refused, not waited on; a large file is not read).
    pub fn read(&self, rel: &Path, max: u64) -> io::Result<Option<Vec<u8>>> {
        let (dir, name) = split(rel)?;
        let Some(d) = self.dir(dir, false)? else {
            return Ok(None);
        };
        read_in(d.as_fd(), name, max)
    }

    /// Whether the regular file `rel` holds exactly `bytes` (its size is
    /// compared first: a large file is not read).
    pub fn holds(&self, rel: &Path, bytes: &[u8]) -> io::Result<bool> {
        match self.read(rel, bytes.len() as u64) {
            Ok(old) => Ok(old.is_some_and(|old| old == bytes)),
            Err(e) if e.kind() == io::ErrorKind::FileTooLarge => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Replaces (or creates) the file `rel` with `bytes`: written to a
    /// fresh temporary file in its folder, synced, renamed over the name.
    pub fn write(&self, rel: &Path, bytes: &[u8]) -> io::Result<()> {
        let (dir, name) = split(rel)?;
        let d = self.dir(dir, true)?.expect("created");
        let mut tmp = OsString::from(".");
        tmp.push(name);
        tmp.push(format!(".{}.tmp", std::process::id()));
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rfs::openat(&d, &tmp, flags, Mode::from_raw_mode(0o644)) {
            Err(rustix::io::Errno::EXIST) => {
                // A temporary file of an earlier run of this process id.
                rfs::unlinkat(&d, &tmp, AtFlags::empty())?;
                rfs::openat(&d, &tmp, flags, Mode::from_raw_mode(0o644))?
            }
            other => other?,
        };
        let mut f = std::fs::File::from(fd);
        let written = f
            .write_all(bytes)
            .and_then(|()| f.sync_all())
            .and_then(|()| rfs::renameat(&d, &tmp, &d, name).map_err(io::Error::from));
        if written.is_err() {
            let _ = rfs::unlinkat(&d, &tmp, AtFlags::empty());
        }
        written
    }

    /// Removes the file `rel` (a link there is removed, not followed).
    pub fn remove(&self, rel: &Path) -> io::Result<()> {
        let (dir, name) = split(rel)?;
        match self.dir(dir, false)? {
            Some(d) => Ok(rfs::unlinkat(&d, name, AtFlags::empty())?),
            None => Err(io::Error::from(io::ErrorKind::NotFound)),
        }
    }

    /// Removes the folder `rel` if it is empty (a link there is not a
    /// folder and stays); `Ok(false)` when it is not empty or not there.
    pub fn remove_empty_dir(&self, rel: &Path) -> io::Result<bool> {
        let (dir, name) = split(rel)?;
        let Some(d) = self.dir(dir, false)? else {
            return Ok(false);
        };
        match rfs::unlinkat(&d, name, AtFlags::REMOVEDIR) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::NOTEMPTY | rustix::io::Errno::NOENT) => Ok(false),
            Err(rustix::io::Errno::NOTDIR) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The names of the regular files directly in the folder `rel` (links
    /// and anything else left out; nothing is read); empty when it is not
    /// there.
    pub fn files_in(&self, rel: &Path) -> io::Result<Vec<OsString>> {
        let Some(d) = self.dir(rel, false)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for entry in rfs::Dir::read_from(&d)? {
            let entry = entry?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let st = rfs::statat(&d, name, AtFlags::SYMLINK_NOFOLLOW)?;
            if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile {
                out.push(name.to_os_string());
            }
        }
        Ok(out)
    }
}

/// The bytes of the regular file `name` in the folder `d`.
fn read_in(d: BorrowedFd<'_>, name: &OsStr, max: u64) -> io::Result<Option<Vec<u8>>> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rfs::openat(d, name, flags, Mode::empty()) {
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        other => other.map_err(not_through_links)?,
    };
    let st = rfs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(io::Error::other("not a regular file"));
    }
    if st.st_size as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {max} bytes"),
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd).read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// A relative path's folder and file name.
fn split(rel: &Path) -> io::Result<(&Path, &OsStr)> {
    match (rel.parent(), rel.file_name()) {
        (Some(dir), Some(name)) => Ok((dir, name)),
        _ => Err(io::Error::other("not a file's relative path")),
    }
}

/// An error opening a component: a link met there says so.
fn not_through_links(e: rustix::io::Errno) -> io::Error {
    if e == rustix::io::Errno::LOOP || e == rustix::io::Errno::NOTDIR {
        io::Error::other("a symbolic link (or a file) where a folder or file of the output was: files are never written through a link inside an output folder")
    } else {
        e.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The adversarial pass's race, made deterministic: a list folder is
    /// swapped for a link to a folder outside after the tree is opened
    /// (after `output.rs` checked for links). Writing, reading and
    /// removing through it are errors; the folder outside is untouched.
    #[test]
    fn a_folder_swapped_for_a_link_is_never_followed() {
        let base = std::env::temp_dir().join(format!("synth_tree_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (out, victim) = (base.join("out"), base.join("victim"));
        std::fs::create_dir_all(out.join("2t2i/conformance")).unwrap();
        std::fs::create_dir_all(&victim).unwrap();
        std::fs::write(victim.join("keep.txt"), "precious").unwrap();
        std::fs::write(out.join("2t2i/conformance/OBE.txt"), "old").unwrap();
        let tree = Tree::open(&out).unwrap();
        tree.write(Path::new("2t2i/conformance/HSA.txt"), b"new")
            .unwrap();
        std::fs::rename(out.join("2t2i/conformance"), base.join("moved")).unwrap();
        std::os::unix::fs::symlink(&victim, out.join("2t2i/conformance")).unwrap();
        let keep = Path::new("2t2i/conformance/keep.txt");
        let e = tree.write(keep, b"overwritten").unwrap_err();
        assert!(
            e.to_string().contains("never written through a link"),
            "{e}"
        );
        assert!(tree
            .write(Path::new("2t2i/conformance/new.txt"), b"x")
            .is_err());
        assert!(tree.remove(keep).is_err());
        assert!(tree.read(keep, 1 << 20).is_err());
        assert!(tree.files_in(Path::new("2t2i/conformance")).is_err());
        let mut left: Vec<_> = std::fs::read_dir(&victim)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["keep.txt"]);
        assert_eq!(std::fs::read(victim.join("keep.txt")).unwrap(), b"precious");
        // A link put at a file's name is replaced, not written through.
        std::fs::remove_file(out.join("2t2i/conformance")).unwrap();
        std::os::unix::fs::symlink(victim.join("keep.txt"), out.join("2t2i/README.md")).unwrap();
        tree.write(Path::new("2t2i/README.md"), b"readme").unwrap();
        assert_eq!(std::fs::read(victim.join("keep.txt")).unwrap(), b"precious");
        assert!(!out.join("2t2i/README.md").is_symlink());
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// Only an empty folder is removed; a folder with a file in it, a
    /// link and a missing folder are left as they are.
    #[test]
    fn only_empty_folders_are_removed() {
        let base = std::env::temp_dir().join(format!("synth_tree_rmdir_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("s/empty")).unwrap();
        std::fs::create_dir_all(base.join("s/full")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere")).unwrap();
        std::fs::write(base.join("s/full/mine.txt"), "mine").unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), base.join("s/link")).unwrap();
        let tree = Tree::open(&base).unwrap();
        assert!(tree.remove_empty_dir(Path::new("s/empty")).unwrap());
        assert!(!tree.remove_empty_dir(Path::new("s/full")).unwrap());
        assert!(!tree.remove_empty_dir(Path::new("s/link")).unwrap());
        assert!(!tree.remove_empty_dir(Path::new("s/missing")).unwrap());
        assert!(!base.join("s/empty").exists());
        assert!(base.join("s/full/mine.txt").is_file());
        assert!(base.join("s/link").is_symlink() && base.join("elsewhere").is_dir());
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A file larger than asked for is refused unread, and compared by its
    /// size first (sparse: no disk is used).
    #[test]
    fn large_files_are_not_read() {
        let base = std::env::temp_dir().join(format!("synth_tree_large_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        std::fs::File::create(base.join("big"))
            .unwrap()
            .set_len(8 << 30)
            .unwrap();
        let tree = Tree::open(&base).unwrap();
        let e = tree.read(Path::new("big"), 1 << 20).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge, "{e}");
        assert!(!tree.holds(Path::new("big"), b"small").unwrap());
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A FIFO at a file's name is refused at once, not waited on.
    #[test]
    fn a_fifo_is_refused_not_opened_for_long() {
        let base = std::env::temp_dir().join(format!("synth_tree_fifo_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let ok = std::process::Command::new("mkfifo")
            .arg(base.join("MANIFEST"))
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            let tree = Tree::open(&base).unwrap();
            assert!(tree.read(Path::new("MANIFEST"), 1 << 20).is_err());
        }
        std::fs::remove_dir_all(&base).unwrap();
    }
}
