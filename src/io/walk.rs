//! Expanding the paths a command is given into the files it reads: a
//! directory walk that lists each file once and always ends.

use super::input::not_regular;
use crate::error::FileError;
use std::collections::HashSet;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// Expands paths into the files to read, in order: a file stands for
/// itself; a directory for every file below it, recursively, that `accept`
/// takes (by name), each directory's entries in sorted order. A path that
/// does not exist is an error in the list.
///
/// Within the walk of one path, files and directories are identified by
/// device and inode, so a file reached twice (through a symbolic or hard
/// link, or through a linked directory) is listed once, at its first
/// occurrence, and a symbolic link to a directory already being walked
/// (`ln -s . x`, a link to a parent) is not followed again: the walk always
/// ends. Paths given separately are expanded separately: a file named
/// twice is listed twice, as it was asked for (and the tools that need
/// unique names say so). An accepted entry that is not a regular file (a
/// FIFO, a device, a socket) is an error in the list and is never opened.
pub fn expand_paths_with(
    paths: &[PathBuf],
    accept: fn(&Path) -> bool,
) -> Vec<Result<PathBuf, FileError>> {
    let mut out = Vec::new();
    for p in paths {
        let mut w = Walk {
            seen: HashSet::new(),
            out: Vec::new(),
            accept,
        };
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => w.walk(p, &m),
            Ok(m) => w.file(p, &m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let msg = if p.symlink_metadata().is_ok() {
                    "a symbolic link to nothing"
                } else {
                    "no such file or directory"
                };
                w.out.push(Err(FileError::whole(p, msg)));
            }
            Err(e) => w
                .out
                .push(Err(FileError::whole(p, format!("cannot read: {e}")))),
        }
        out.append(&mut w.out);
    }
    out
}

/// The walk of one path of [`expand_paths_with`]: what was seen, what was found.
struct Walk {
    /// `(device, inode)` of every directory entered and file listed.
    seen: HashSet<(u64, u64)>,
    out: Vec<Result<PathBuf, FileError>>,
    /// Which files in a directory are inputs.
    accept: fn(&Path) -> bool,
}

impl Walk {
    fn first_visit(&mut self, m: &Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        self.seen.insert((m.dev(), m.ino()))
    }

    /// A file named on the command line, or found in a walk.
    fn file(&mut self, p: &Path, m: &Metadata) {
        if !m.is_file() {
            self.out.push(Err(not_regular(p, m)));
        } else if self.first_visit(m) {
            self.out.push(Ok(p.to_path_buf()));
        }
    }

    /// Walks the directory `root` depth first, entries in sorted order,
    /// with an explicit stack (a deep tree cannot overflow the call stack).
    fn walk(&mut self, root: &Path, m: &Metadata) {
        if !self.first_visit(m) {
            return;
        }
        let mut stack: Vec<std::vec::IntoIter<PathBuf>> = vec![self.entries(root).into_iter()];
        while let Some(top) = stack.last_mut() {
            let Some(p) = top.next() else {
                stack.pop();
                continue;
            };
            // Follows symbolic links: a link is walked as what it names.
            let meta = match std::fs::metadata(&p) {
                Ok(meta) => meta,
                Err(e) => {
                    if (self.accept)(&p) {
                        let msg = if e.kind() == std::io::ErrorKind::NotFound {
                            "a symbolic link to nothing".to_string()
                        } else {
                            format!("cannot read: {e}")
                        };
                        self.out.push(Err(FileError::whole(&p, msg)));
                    }
                    continue;
                }
            };
            if meta.is_dir() {
                if self.first_visit(&meta) {
                    let children = self.entries(&p);
                    stack.push(children.into_iter());
                }
            } else if (self.accept)(&p) {
                self.file(&p, &meta);
            }
        }
    }

    /// The entries of a directory, sorted by name (compared as bytes, not
    /// as paths: a tenth of the cost).
    fn entries(&mut self, dir: &Path) -> Vec<PathBuf> {
        match std::fs::read_dir(dir) {
            Ok(rd) => {
                let mut names: Vec<std::ffi::OsString> =
                    rd.filter_map(|e| e.ok().map(|e| e.file_name())).collect();
                names.sort_unstable();
                names.into_iter().map(|n| dir.join(n)).collect()
            }
            Err(e) => {
                self.out.push(Err(FileError::whole(
                    dir,
                    format!("cannot read directory: {e}"),
                )));
                Vec::new()
            }
        }
    }
}
