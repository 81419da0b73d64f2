//! Writing the suites directory, and nothing else.
//!
//! `synth suites -o DIR` regenerates files a person may also keep notes,
//! scripts or lists of their own beside, in a folder that may hold links.
//! Issue 46 found it deleting `*.txt` outside DIR: a list folder inside DIR
//! was a symbolic link, and the clean-up of stale lists followed it. The
//! rules here:
//!
//! - **Nothing through a link.** Below DIR (DIR itself is the user's
//!   choice), no folder or file on the way to an output may be a symbolic
//!   link: such a run is refused before anything is written or removed.
//!   And none is followed while the run writes: every file is read,
//!   written and removed through its folder's descriptor, each folder
//!   opened from its parent's without following links
//!   ([`progress_litmus::tree`]),
//!   so a folder swapped for a link after the check stops the run there.
//! - **Only regular files are read or replaced.** An output path that
//!   holds a FIFO, a device, a socket or a folder (a FIFO at `README.md`
//!   or `MANIFEST` would block the run forever: both are read first) is
//!   refused the same way, naming the path and what it is.
//! - **Only what the tool wrote is removed.** Every run records the files
//!   it wrote, with their FNV-1a hashes, in [`MANIFEST`]. A list that is no
//!   longer part of the output (a suite that shrank, a renamed model) is
//!   removed only if the manifest lists it with the bytes it still has;
//!   any other such file (a person's, or one edited since) makes the run
//!   refuse, naming it, before anything is written.

use progress_litmus::fingerprint::fnv64;
use progress_litmus::io::kind_of;
use progress_litmus::tree::Tree;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

/// The record of what `synth suites` wrote, at the top of its directory.
pub const MANIFEST: &str = "MANIFEST";

/// What [`write()`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteStats {
    pub written: usize,
    pub unchanged: usize,
    pub removed: Vec<PathBuf>,
}

/// Why [`write()`] did nothing (a refusal: the output folder is not one the
/// tool may write as asked) or stopped (an I/O error).
#[derive(Debug)]
pub enum WriteError {
    Refused(String),
    Io(std::io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Refused(m) => f.write_str(m),
            WriteError::Io(e) => e.fmt(f),
        }
    }
}

impl From<std::io::Error> for WriteError {
    fn from(e: std::io::Error) -> WriteError {
        WriteError::Io(e)
    }
}

/// Whether `rel` (relative to the suites directory) is a list that
/// `synth suites` writes or once wrote: `<suite>/{conformance,idioms}/*.txt`,
/// `<suite>/buckets/{D,C}/*.txt`, and `<suite>/distinguishing/*.txt`, where
/// bucket D was before it had a folder of its own (issue 44). Only such
/// files are ever looked at as stale: a note, a script or anything else a
/// person put in a suite folder is theirs.
fn is_list(rel: &Path) -> bool {
    let parts: Vec<&std::ffi::OsStr> = rel.iter().collect();
    let folder = match parts.len() {
        3 => ["conformance", "distinguishing", "idioms"]
            .iter()
            .any(|d| parts[1] == *d),
        4 => parts[1] == "buckets" && (parts[2] == "D" || parts[2] == "C"),
        _ => false,
    };
    folder && rel.extension().is_some_and(|e| e == "txt")
}

/// The manifest's text for `files` (every output but the manifest).
pub fn manifest(files: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<u8> {
    let mut o = String::from(
        "# The files `synth suites` wrote in this folder, each with the FNV-1a 64 hash of its bytes.\n\
         # A list no longer written is removed only if it is here with the same bytes. Do not edit.\n",
    );
    for (rel, bytes) in files.iter().filter(|(r, _)| *r != Path::new(MANIFEST)) {
        let _ = writeln!(o, "{}\t{}", fnv64(bytes), slashed(rel));
    }
    o.into_bytes()
}

/// `rel` with `/` between its parts, whatever the platform.
fn slashed(rel: &Path) -> String {
    rel.iter()
        .map(|p| p.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The previous run's manifest: relative path -> hash. Absent or
/// unreadable: empty (then nothing is removed). Lines that are not
/// `HASH<TAB>PATH` with a plain relative path are ignored: a forged line
/// can only name a list inside the folder with bytes it already has.
fn previous(tree: &Tree) -> BTreeMap<PathBuf, String> {
    // Never a FIFO or a device (reading one could block): the tree reads
    // regular files only.
    let Ok(Some(bytes)) = tree.read(Path::new(MANIFEST), MAX_LIST_BYTES) else {
        return BTreeMap::new();
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(h, p)| (PathBuf::from(p), h.to_string()))
        .filter(|(p, _)| p.components().all(|c| matches!(c, Component::Normal(_))))
        .collect()
}

/// Refuses when some path below `out` on the way to an output is a
/// symbolic link (checked without following it), or is there but not
/// what the run needs: a folder on the way, a regular file at the output
/// itself (a FIFO at `README.md` or `MANIFEST`, which the run reads
/// before replacing, would block it forever; a device, a socket or a
/// folder cannot be replaced). `out` itself, the user's choice, may be a
/// link, but must be a folder if it is there.
fn check_paths(out: &Path, files: &BTreeMap<PathBuf, Vec<u8>>) -> Result<(), WriteError> {
    let shown = |p: &Path| progress_litmus::error::printable(&p.display().to_string());
    if let Some(m) = std::fs::metadata(out).ok().filter(|m| !m.is_dir()) {
        return Err(WriteError::Refused(format!(
            "{}: {}, not a folder: `synth suites -o` writes a folder",
            shown(out),
            kind_of(&m)
        )));
    }
    let mut seen = BTreeSet::new();
    for rel in files.keys() {
        let mut at = out.to_path_buf();
        let parts = rel.iter().count();
        for (i, part) in rel.iter().enumerate() {
            at.push(part);
            if !seen.insert(at.clone()) {
                continue;
            }
            let Ok(m) = std::fs::symlink_metadata(&at) else {
                break;
            };
            let last = i + 1 == parts;
            let why = if m.file_type().is_symlink() {
                format!(
                    "a symbolic link inside the output folder: `synth suites` writes and removes files only inside {} and never through a link; replace the link with a folder (or file) of its own",
                    shown(out)
                )
            } else if last && !m.is_file() {
                format!("{}, not a regular file: `synth suites` reads and replaces only regular files here; move it away", kind_of(&m))
            } else if !last && !m.is_dir() {
                format!(
                    "{}, not a folder: `synth suites` writes files in it; move it away",
                    kind_of(&m)
                )
            } else {
                continue;
            };
            return Err(WriteError::Refused(format!("{}: {why}", shown(&at))));
        }
    }
    Ok(())
}

/// The lists in the list folders of `files`, and in those of the lists
/// the manifest records (a folder the tool no longer writes, such as
/// `distinguishing/` before the buckets had a folder of their own), that
/// are not part of the output: each is removable if the manifest recorded
/// it with the bytes it has now; else the run is refused, naming it.
fn stale_lists(
    out: &Path,
    tree: &Tree,
    files: &BTreeMap<PathBuf, Vec<u8>>,
) -> Result<Vec<PathBuf>, WriteError> {
    let recorded = previous(tree);
    let dirs: BTreeSet<PathBuf> = files
        .keys()
        .filter(|p| p.components().count() > 1)
        .chain(recorded.keys().filter(|p| is_list(p)))
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    let mut stale = Vec::new();
    for dir in dirs {
        // Regular files only: a link is never a list.
        for name in tree.files_in(&dir)? {
            let rel = dir.join(name);
            if files.contains_key(&rel) || !is_list(&rel) {
                continue;
            }
            // A list larger than any the tool writes was not written by it.
            let bytes = match tree.read(&rel, MAX_LIST_BYTES) {
                Ok(bytes) => bytes.unwrap_or_default(),
                Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
                    return Err(not_ours(out, &rel));
                }
                Err(e) => return Err(e.into()),
            };
            if recorded.get(&rel) != Some(&fnv64(&bytes)) {
                return Err(not_ours(out, &rel));
            }
            stale.push(rel);
        }
    }
    Ok(stale)
}

/// The largest list (or manifest) the tool reads back: its lists are a few
/// KB; a larger file is not one it wrote, and is not read (a 2.5 GB
/// sparse file beside the lists once took 28 s and 2.5 GB).
const MAX_LIST_BYTES: u64 = 64 << 20;

/// The refusal for a stale list the tool did not write.
fn not_ours(out: &Path, rel: &Path) -> WriteError {
    WriteError::Refused(format!(
        "{}: a list `synth suites` would remove as stale, but it did not write it (it is not in {MANIFEST}, or has changed since): move or remove it yourself, then run again",
        progress_litmus::error::printable(&out.join(rel).display().to_string())
    ))
}

/// Writes `files` under `out`: each atomically, and only if its bytes
/// differ. Lists of the list folders (`out/<suite>/conformance/`,
/// `buckets/D/`, `buckets/C/`, `idioms/`, and those of the manifest's
/// lists) that are not part of the output are
/// removed, so a suite that shrinks leaves no stale list behind, but only
/// those the manifest says the tool wrote; no other file is ever removed.
/// Everything is checked first: a refusal writes and removes nothing.
pub fn write(out: &Path, files: &BTreeMap<PathBuf, Vec<u8>>) -> Result<WriteStats, WriteError> {
    check_paths(out, files)?;
    let tree = Tree::open(out)?;
    let mut stale = stale_lists(out, &tree, files)?;
    let mut stats = WriteStats::default();
    // The manifest last: until it is replaced, the previous one still
    // vouches for the lists this run has not removed yet.
    let manifest = Path::new(MANIFEST);
    let others = files.iter().filter(|(r, _)| *r != manifest);
    for (rel, bytes) in others.chain(files.get_key_value(manifest)) {
        if rel == manifest {
            for rel in std::mem::take(&mut stale) {
                tree.remove(&rel)?;
                stats.removed.push(rel);
            }
        }
        if tree.holds(rel, bytes)? {
            stats.unchanged += 1;
        } else {
            tree.write(rel, bytes)?;
            stats.written += 1;
        }
    }
    for rel in stale {
        tree.remove(&rel)?;
        stats.removed.push(rel);
    }
    remove_emptied_folders(&tree, files, &stats.removed)?;
    Ok(stats)
}

/// The list folders this run no longer writes (such as `distinguishing/`,
/// issue 44) whose last list it removed: removed too, when empty. A
/// folder that holds anything else, or a link, stays.
fn remove_emptied_folders(
    tree: &Tree,
    files: &BTreeMap<PathBuf, Vec<u8>>,
    removed: &[PathBuf],
) -> std::io::Result<()> {
    let written: BTreeSet<&Path> = files.keys().filter_map(|p| p.parent()).collect();
    let emptied: BTreeSet<&Path> = removed
        .iter()
        .filter_map(|p| p.parent())
        .filter(|d| !written.contains(d))
        .collect();
    for dir in emptied {
        tree.remove_empty_dir(dir)?;
    }
    Ok(())
}
