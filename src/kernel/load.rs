//! Reading kernel programs and AXB tests from files and directories, for
//! the commands that accept both (docs/KERNEL.md §7).
//!
//! A `.litmus` file is one kernel program; a `.ron` file is a kernel
//! program (`Kernel(...)`), a suite of them (`KernelSuite(...)`), or an AXB
//! test or suite; a `.txt` file is an AXB test in the artifact format.
//! Directories are walked without following symbolic links, iteratively, so
//! neither a link loop nor a deep tree can make loading hang or overflow
//! the stack.

use crate::error::FileError;
use crate::kernel::program::Program;
use crate::kernel::{litmus, ron};
use crate::load::{self as axb_load, NamedTest};
use crate::model::Verdicts;
use std::path::{Path, PathBuf};

/// A kernel program read from somewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedProgram {
    /// The file stem for a single program; the entry name in a suite.
    pub name: String,
    pub program: Program,
    /// Stored verdicts, for suite entries that have them.
    pub verdicts: Option<Verdicts>,
    pub source: PathBuf,
}

/// One input of a command: an AXB test or a kernel program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Axb(NamedTest),
    Kernel(NamedProgram),
}

impl Item {
    pub fn name(&self) -> &str {
        match self {
            Item::Axb(t) => &t.name,
            Item::Kernel(p) => &p.name,
        }
    }

    pub fn source(&self) -> &Path {
        match self {
            Item::Axb(t) => &t.source,
            Item::Kernel(p) => &p.source,
        }
    }

    /// The item as a kernel program (AXB tests through the embedding).
    pub fn program(&self) -> Program {
        match self {
            Item::Axb(t) => crate::kernel::embed::from_axb(&t.entry.test),
            Item::Kernel(p) => p.program.clone(),
        }
    }
}

/// The first identifier of a RON document, skipping blanks, comments and
/// `#![enable(..)]` attributes.
pub fn ron_kind(src: &str) -> &str {
    let mut s = src;
    loop {
        s = s.trim_start();
        if let Some(r) = s.strip_prefix("//") {
            s = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = s.strip_prefix("/*") {
            s = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else if s.starts_with("#!") {
            s = s.find(']').map_or("", |i| &s[i + 1..]);
        } else {
            break;
        }
    }
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

fn ext(path: &Path) -> &str {
    path.extension().and_then(|e| e.to_str()).unwrap_or("")
}

/// The largest input file read (a litmus program is a few kilobytes; a
/// suite of ten thousand tests a few megabytes).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

fn read(path: &Path) -> Result<String, FileError> {
    let meta =
        std::fs::metadata(path).map_err(|e| FileError::whole(path, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(FileError::whole(path, "not a regular file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(FileError::whole(
            path,
            format!(
                "{} bytes: larger than the {MAX_FILE_BYTES}-byte limit for inputs",
                meta.len()
            ),
        ));
    }
    let bytes =
        std::fs::read(path).map_err(|e| FileError::whole(path, format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| FileError::whole(path, format!("not UTF-8 text: {e}")))
}

/// Whether a file holds kernel programs (rather than AXB tests). A RON
/// file is told by its first identifier, so only its beginning is read.
pub fn is_kernel_file(path: &Path) -> bool {
    use std::io::Read;
    match ext(path) {
        "litmus" => true,
        "ron" => {
            let Ok(f) = std::fs::File::open(path) else {
                return false;
            };
            let mut head = Vec::new();
            if f.take(64 << 10).read_to_end(&mut head).is_err() {
                return false;
            }
            let text = String::from_utf8_lossy(&head);
            matches!(ron_kind(&text), "Kernel" | "KernelSuite")
        }
        _ => false,
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Reads the kernel programs of one `.litmus` or kernel `.ron` file.
pub fn load_kernel_file(path: &Path) -> Result<Vec<NamedProgram>, FileError> {
    let src = read(path)?;
    let one = |program: Program| {
        vec![NamedProgram {
            name: stem(path),
            program,
            verdicts: None,
            source: path.to_path_buf(),
        }]
    };
    match ext(path) {
        "litmus" => litmus::parse(&src).map(one).map_err(|e| e.in_file(path)),
        "ron" => match ron_kind(&src) {
            "KernelSuite" => ron::parse_suite(&src)
                .map(|s| {
                    s.tests
                        .into_iter()
                        .map(|e| NamedProgram {
                            name: e.name,
                            program: e.program,
                            verdicts: e.verdicts,
                            source: path.to_path_buf(),
                        })
                        .collect()
                })
                .map_err(|e| e.in_file(path)),
            _ => ron::parse_program(&src)
                .map(one)
                .map_err(|e| e.in_file(path)),
        },
        e => Err(FileError::whole(
            path,
            format!(
                "unknown format `.{e}`: expected a `.litmus` program or a `.ron` kernel program"
            ),
        )),
    }
}

/// Reads one file of either kind.
pub fn load_file(path: &Path) -> Result<Vec<Item>, FileError> {
    if is_kernel_file(path) {
        Ok(load_kernel_file(path)?
            .into_iter()
            .map(Item::Kernel)
            .collect())
    } else if matches!(ext(path), "ron" | "txt") {
        Ok(axb_load::load_file(path)?
            .into_iter()
            .map(Item::Axb)
            .collect())
    } else {
        Err(FileError::whole(
            path,
            format!(
                "unknown format `.{}`: expected a `.litmus` program, a `.ron` program, test or suite, or a `.txt` test in the artifact format",
                ext(path)
            ),
        ))
    }
}

/// Expands paths into files: a file stands for itself, a directory for
/// every `.litmus`, `.ron` and `.txt` file below it, in sorted order.
/// Symbolic links inside directories are not followed.
pub fn expand_paths(paths: &[PathBuf]) -> Vec<Result<PathBuf, FileError>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut stack = vec![p.clone()];
            let mut found = Vec::new();
            while let Some(dir) = stack.pop() {
                let entries = match std::fs::read_dir(&dir) {
                    Ok(rd) => rd,
                    Err(e) => {
                        out.push(Err(FileError::whole(
                            &dir,
                            format!("cannot read directory: {e}"),
                        )));
                        continue;
                    }
                };
                for e in entries.flatten() {
                    let Ok(ft) = e.file_type() else { continue };
                    let path = e.path();
                    if ft.is_dir() {
                        stack.push(path);
                    } else if ft.is_file() && matches!(ext(&path), "litmus" | "ron" | "txt") {
                        found.push(path);
                    }
                }
            }
            found.sort();
            out.extend(found.into_iter().map(Ok));
        } else if p.exists() {
            out.push(Ok(p.clone()));
        } else {
            out.push(Err(FileError::whole(p, "no such file or directory")));
        }
    }
    out
}

/// Whether any of the paths is, or (for directories) contains, a file of
/// kernel programs.
pub fn mentions_kernel(paths: &[PathBuf]) -> bool {
    expand_paths(paths)
        .into_iter()
        .flatten()
        .any(|p| is_kernel_file(&p))
}

/// Loads everything under `paths`; bad files do not stop the others.
pub fn load_all(paths: &[PathBuf]) -> (Vec<Item>, Vec<FileError>) {
    let mut items = Vec::new();
    let mut errors = Vec::new();
    for p in expand_paths(paths) {
        match p.and_then(|p| load_file(&p)) {
            Ok(mut v) => items.append(&mut v),
            Err(e) => errors.push(e),
        }
    }
    (items, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ron_kind_skips_comments_and_attributes() {
        assert_eq!(
            ron_kind("// c\n#![enable(x)]\n Kernel(values: 2)"),
            "Kernel"
        );
        assert_eq!(ron_kind("/* a */KernelSuite("), "KernelSuite");
        assert_eq!(ron_kind("Suite("), "Suite");
    }
}
