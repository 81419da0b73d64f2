//! The output folder of `backends db export -o DIR` and `backends site -o
//! DIR`: every file is written through the core's
//! [`progress_litmus::tree::Tree`], by folder descriptors opened without
//! following links, so nothing is ever written outside DIR (adversarial
//! finding 03 of the third pass: a link `DIR/devices -> elsewhere` had the
//! pages written there, a link at a CSV's name had its target replaced).
//!
//! Before anything is written, every path on the way to an output is
//! checked: a symbolic link below DIR, a folder on the way that is not a
//! folder, or an output name held by something other than a regular file
//! (a FIFO, a device, a folder) is one error naming it, exit 2, and
//! nothing is written. A link put there after the check is still never
//! followed ([`Tree`] refuses it); that write is then the same error. DIR
//! itself may be a link (the user's choice) and is created if missing.
//!
//! A file named after a device takes its name from [`stem`]: the device
//! name itself when it is a plain file name, else a slug with a hash that
//! no plain name can have (finding 04: a device name with an escape
//! sequence, a newline or a NUL became a raw file name, and `a/b` and
//! `a_b` were written to one file).

use progress_litmus::io::kind_of;
use progress_litmus::tree::Tree;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The longest name (in bytes) kept as its own file name: with an
/// extension, well under the 255 bytes a file name may have.
pub const MAX_PLAIN_BYTES: usize = 200;

/// How many characters of a [`slug`] a hashed file name keeps.
const SLUG_CHARS: usize = 64;

/// The file name (without its extension) of a device named `name`, the
/// one rule of `db export` (CSV files) and `site` (pages): the name
/// itself when it is plain, that is non-empty, not starting with `.`, at
/// most [`MAX_PLAIN_BYTES`], without `~`, and every character
/// `plain_char`; else its [`slug`] (at most 64 characters, a leading `.`
/// made `_`), `~` and the low 8 hex digits of the FNV-1a hash of the
/// exact name (the low bits: names that differ in their last byte always
/// differ there). `~` is in no plain name, so a hashed name is never a
/// plain one; two hashed names may still meet, which each command checks.
pub fn stem(name: &str, plain_char: impl Fn(char) -> bool) -> String {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && name.len() <= MAX_PLAIN_BYTES
        && name.chars().all(|c| c != '~' && plain_char(c));
    if plain {
        return name.to_string();
    }
    let hash = progress_litmus::fingerprint::fnv64(name.as_bytes());
    let mut slug: String = slug(name).chars().take(SLUG_CHARS).collect();
    if slug.starts_with('.') {
        slug.replace_range(..1, "_");
    }
    format!("{slug}~{}", &hash[8..])
}

/// A file name for a device name: its ASCII letters, digits, `.`, `_`,
/// `-`, every other character `_`.
pub fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Why an output folder was not written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteError {
    /// Something below DIR the command will not write through or over:
    /// bad input, exit 2.
    Refused(String),
    /// The system refused a write (permissions, a full disk): exit 1.
    Failed(String),
}

impl WriteError {
    /// The message, one line (paths escaped).
    pub fn message(&self) -> &str {
        match self {
            WriteError::Refused(m) | WriteError::Failed(m) => m,
        }
    }

    /// The exit status: 2 for a refused folder, 1 for a failed write.
    pub fn exit_code(&self) -> u8 {
        match self {
            WriteError::Refused(_) => 2,
            WriteError::Failed(_) => 1,
        }
    }
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for WriteError {}

/// What a file is, for messages ("a regular file", "a directory", "a
/// FIFO (named pipe)"...).
fn what(m: &std::fs::Metadata) -> &'static str {
    if m.is_file() {
        "a regular file"
    } else {
        kind_of(m)
    }
}

/// `p` for a message: escaped onto one line.
pub fn shown(p: &Path) -> String {
    progress_litmus::error::printable(&p.display().to_string())
}

/// An output folder opened for `command` (`db export`, `site`), its files
/// given relative to it.
pub struct OutDir {
    out: PathBuf,
    tree: Tree,
    command: &'static str,
}

impl OutDir {
    /// Checks the paths of `files` (relative to `out`) and opens `out`
    /// (created if missing).
    pub fn open<'a>(
        out: &Path,
        files: impl IntoIterator<Item = &'a Path>,
        command: &'static str,
    ) -> Result<OutDir, WriteError> {
        if let Some(m) = std::fs::metadata(out).ok().filter(|m| !m.is_dir()) {
            return Err(WriteError::Refused(format!(
                "{}: {}, not a folder: `backends {command} -o` writes a folder",
                shown(out),
                what(&m)
            )));
        }
        let mut seen = BTreeSet::new();
        for rel in files {
            check(out, rel, command, &mut seen)?;
        }
        let tree = Tree::open(out)
            .map_err(|e| WriteError::Failed(format!("{}: cannot create: {e}", shown(out))))?;
        Ok(OutDir {
            out: out.to_path_buf(),
            tree,
            command,
        })
    }

    /// Replaces (or creates) the file `rel` with `bytes`, never through a
    /// link below the folder.
    pub fn write(&self, rel: &Path, bytes: &[u8]) -> Result<(), WriteError> {
        self.tree.write(rel, bytes).map_err(|e| {
            // A link (or another file) put on the way since the check.
            match check(&self.out, rel, self.command, &mut BTreeSet::new()) {
                Err(refused) => refused,
                Ok(()) => {
                    WriteError::Failed(format!("{}: cannot write: {e}", shown(&self.out.join(rel))))
                }
            }
        })
    }
}

/// Refuses when some path below `out` on the way to `rel` is a symbolic
/// link (looked at without following it), a folder on the way is not a
/// folder, or `rel` itself is there but not a regular file. `seen` skips
/// the folders an earlier file's check looked at.
fn check(
    out: &Path,
    rel: &Path,
    command: &str,
    seen: &mut BTreeSet<PathBuf>,
) -> Result<(), WriteError> {
    let mut at = out.to_path_buf();
    let parts = rel.iter().count();
    for (i, part) in rel.iter().enumerate() {
        at.push(part);
        let last = i + 1 == parts;
        if !last && !seen.insert(at.clone()) {
            continue;
        }
        let Ok(m) = std::fs::symlink_metadata(&at) else {
            break;
        };
        let why = if m.file_type().is_symlink() {
            format!(
                "a symbolic link inside the output folder: `backends {command}` writes files only inside {} and never through a link; replace the link with a folder (or file) of its own",
                shown(out)
            )
        } else if last && !m.is_file() {
            format!(
                "{}, not a regular file: `backends {command}` replaces only regular files here; move it away",
                kind_of(&m)
            )
        } else if !last && !m.is_dir() {
            format!(
                "{}, not a folder: `backends {command}` writes files in it; move it away",
                what(&m)
            )
        } else {
            continue;
        };
        return Err(WriteError::Refused(format!("{}: {why}", shown(&at))));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder checked and then swapped for a link to a folder outside
    /// (the race the check alone cannot close): the write is refused,
    /// naming the link, exit 2, and nothing lands outside.
    #[test]
    fn a_folder_swapped_for_a_link_after_the_check_is_refused() {
        let base = std::env::temp_dir().join(format!("backends_out_dir_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (out, victim) = (base.join("out"), base.join("victim"));
        std::fs::create_dir_all(out.join("devices")).unwrap();
        std::fs::create_dir_all(&victim).unwrap();
        let page = Path::new("devices/a.html");
        let dir = OutDir::open(&out, [page], "site").unwrap();
        std::fs::remove_dir(out.join("devices")).unwrap();
        std::os::unix::fs::symlink(&victim, out.join("devices")).unwrap();
        let e = dir.write(page, b"page").unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e:?}");
        assert!(
            e.message()
                .contains("devices: a symbolic link inside the output folder"),
            "{e:?}"
        );
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A plain name is kept; an empty one, a hidden one, one with `~`,
    /// or one too long for a file name gets a bounded hashed stem that
    /// starts with no `.` and holds a `~`, which no plain name does.
    #[test]
    fn stems_of_names_that_are_not_plain() {
        let any = |_: char| true;
        assert_eq!(stem("Apple A12", any), "Apple A12");
        let long = "x".repeat(MAX_PLAIN_BYTES + 1);
        assert_eq!(stem(&long[1..], any), long[1..]);
        for name in ["", ".", "..", ".hidden", "a~b", long.as_str()] {
            let s = stem(name, any);
            assert!(s.contains('~') && !s.starts_with('.'), "{name}: {s}");
            assert!(s.len() <= SLUG_CHARS + 9, "{name}: {s}");
        }
        assert_ne!(stem("a~b", any), stem("a_b", any));
    }
}
