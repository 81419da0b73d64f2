//! The build cache of `backends run`: a compiled program is kept, so a
//! re-run or a resumed campaign does not compile the suite again, and is
//! run only if it is exactly what this user built.
//!
//! Where: `$XDG_CACHE_HOME/axb/backends-run`, else `~/.cache/axb/backends-run`.
//! A cache in a shared, predictable place (the old `$TMPDIR/axb-backends-run`
//! in world-writable `/tmp`) let another local user plant a program that
//! the next campaign executed. So, before any use:
//!
//! - the two directories `axb` and `backends-run` must be real directories
//!   (not symbolic links), owned by this user, with no access for group or
//!   others (mode 0700; they are created so); the directory holding them
//!   must not be writable by others unless sticky (so that nobody can swap
//!   them). Anything else is refused with the fix in the message, never
//!   repaired silently;
//! - an entry is used only if its manifest names the key asked for (the
//!   SHA-256 of the program's sources and build flags, see [`key`]) and
//!   every file of the entry, the executable included, has the SHA-256 the
//!   manifest recorded when it was built, and no file is missing or added.
//!   An entry that fails is removed and built again (a note says so).
//!
//! An entry is built in a work directory inside the cache and renamed into
//! place whole, so it is complete or absent, also when two campaigns build
//! the same program at once.

use crate::campaign::{env, Failure};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The manifest of an entry.
const MANIFEST: &str = "manifest.json";

/// Raised when the manifest format or what a key covers changes.
const VERSION: u32 = 1;

/// SHA-256 of `bytes`, in hex.
pub fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The key of a build: SHA-256 over the cache version and `parts` (the
/// target, the source files' names and contents, the compiler flags),
/// each length-prefixed so that no two lists of parts collide.
pub fn key(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    h.update(VERSION.to_le_bytes());
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The effective user id.
fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The cache directory of this user, checked (see the module doc), with
/// its two private levels created if missing.
pub fn root() -> Result<PathBuf, Failure> {
    let from_env = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let base = from_env("XDG_CACHE_HOME")
        .or_else(|| from_env("HOME").map(|h| h.join(".cache")))
        .ok_or_else(|| {
            env("no cache directory for the compiled programs: set XDG_CACHE_HOME or HOME to an absolute path")
        })?;
    std::fs::create_dir_all(&base).map_err(|e| {
        env(format!(
            "{}: cannot create the cache directory: {e}",
            base.display()
        ))
    })?;
    let meta = std::fs::metadata(&base).map_err(|e| env(format!("{}: {e}", base.display())))?;
    if meta.mode() & 0o002 != 0 && meta.mode() & 0o1000 == 0 {
        return Err(env(format!(
            "{}: the cache directory is writable by every user and not sticky, so another user could replace what is cached in it: set XDG_CACHE_HOME to a directory of your own",
            base.display()
        )));
    }
    let axb = base.join("axb");
    let root = axb.join("backends-run");
    for dir in [&axb, &root] {
        private_dir(dir)?;
    }
    Ok(root)
}

/// Creates `dir` with mode 0700 if it is missing, then checks that it is a
/// directory (not a link), of this user, closed to everyone else.
fn private_dir(dir: &Path) -> Result<(), Failure> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(env(format!("{}: cannot create: {e}", dir.display()))),
    }
    let meta =
        std::fs::symlink_metadata(dir).map_err(|e| env(format!("{}: {e}", dir.display())))?;
    let refuse = |why: String| {
        Err(env(format!(
            "{}: {why}, so a program cached there could have been planted by someone else: refusing to use it (remove it, or set XDG_CACHE_HOME to a directory of your own)",
            dir.display()
        )))
    };
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return refuse("the cache directory is not a plain directory".into());
    }
    if meta.uid() != euid() {
        return refuse(format!(
            "the cache directory belongs to user {}, not to you ({})",
            meta.uid(),
            euid()
        ));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(env(format!(
            "{}: the cache directory has mode {:04o}, open to other users: `chmod 700 {}` (or remove it) before running",
            dir.display(),
            meta.mode() & 0o7777,
            dir.display()
        )));
    }
    Ok(())
}

/// The files of an entry (relative path to SHA-256), manifest excluded;
/// `None` if it holds anything but plain files and directories.
fn digest_tree(dir: &Path) -> Option<BTreeMap<String, String>> {
    fn walk(dir: &Path, rel: &str, out: &mut BTreeMap<String, String>) -> Option<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .ok()?
            .collect::<Result<_, _>>()
            .ok()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().into_string().ok()?;
            let path = format!("{rel}{name}");
            let t = e.file_type().ok()?;
            if t.is_dir() {
                walk(&e.path(), &format!("{path}/"), out)?;
            } else if t.is_file() {
                if path != MANIFEST {
                    out.insert(path, sha256(&std::fs::read(e.path()).ok()?));
                }
            } else {
                return None;
            }
        }
        Some(())
    }
    let mut out = BTreeMap::new();
    walk(dir, "", &mut out)?;
    Some(out)
}

/// Why the entry `dir` cannot be used for `key`, if it cannot.
fn verify(dir: &Path, key: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(dir.join(MANIFEST)).map_err(|e| format!("manifest: {e}"))?;
    let m: Value = serde_json::from_str(&text).map_err(|e| format!("manifest: {e}"))?;
    if m["version"] != VERSION || m["key"] != key {
        return Err("the manifest is of another build".into());
    }
    let recorded: BTreeMap<String, String> =
        serde_json::from_value(m["files"].clone()).map_err(|e| format!("manifest: {e}"))?;
    let now = digest_tree(dir).ok_or("it holds something that is not a plain file")?;
    if now != recorded {
        let differ = recorded
            .keys()
            .chain(now.keys())
            .find(|f| recorded.get(*f) != now.get(*f))
            .cloned()
            .unwrap_or_default();
        return Err(format!(
            "`{differ}` is not what was built (its SHA-256 differs from the manifest's, or it is missing or added)"
        ));
    }
    Ok(())
}

/// The entry of `key`, verified; an entry that fails verification is
/// removed (with a note), and `None` means: build it.
pub fn lookup(root: &Path, key: &str) -> Option<PathBuf> {
    let dir = root.join(key);
    if !dir.exists() {
        return None;
    }
    match verify(&dir, key) {
        Ok(()) => Some(dir),
        Err(why) => {
            eprintln!(
                "note: {}",
                crate::excerpt::printable(&format!(
                    "{}: not using this cached build: {why}; building again",
                    dir.display()
                ))
            );
            let _ = std::fs::remove_dir_all(&dir);
            None
        }
    }
}

/// A new, empty work directory in the cache for a build.
pub fn work_dir(root: &Path) -> Result<PathBuf, Failure> {
    static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let work = root.join(format!(
        "build-{}-{}",
        std::process::id(),
        BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&work)
        .map_err(|e| env(format!("{}: cannot create: {e}", work.display())))?;
    Ok(work)
}

/// Records the SHA-256 of every file of the finished build `work` in its
/// manifest and moves it into place as the entry of `key`; returns the
/// entry. If another campaign put a good entry there first, that one is
/// used and `work` removed.
pub fn commit(root: &Path, work: &Path, key: &str) -> Result<PathBuf, Failure> {
    let files = digest_tree(work).ok_or_else(|| {
        env(format!(
            "{}: the build left something that is not a plain file",
            work.display()
        ))
    })?;
    let manifest = json!({ "version": VERSION, "key": key, "files": files });
    let mut text = oracle::json::to_string_pretty(&manifest).expect("serializable");
    text.push('\n');
    std::fs::write(work.join(MANIFEST), text).map_err(|e| {
        env(format!(
            "{}: cannot write the manifest: {e}",
            work.display()
        ))
    })?;
    let entry = root.join(key);
    if let Some(theirs) = lookup(root, key) {
        let _ = std::fs::remove_dir_all(work);
        return Ok(theirs);
    }
    if let Err(e) = std::fs::rename(work, &entry) {
        let _ = std::fs::remove_dir_all(work);
        // Another campaign may have moved the same build into place.
        return lookup(root, key).ok_or_else(|| {
            env(format!(
                "{}: cannot move the build into place: {e}",
                entry.display()
            ))
        });
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_separate_their_parts_and_hashes_are_sha256() {
        assert_eq!(
            sha256(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_eq!(key(&[b"x"]).len(), 64);
    }
}
