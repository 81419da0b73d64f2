//! The one loader of the commands that accept both AXB tests and kernel
//! programs (docs/KERNEL.md §7): each file gives [`Item`]s of either kind.
//!
//! A `.litmus` file is one kernel program; a `.ron` file is a kernel
//! program (`Kernel(...)`), a suite of them (`KernelSuite(...)`), or an AXB
//! test or suite; a `.txt` file is an AXB test in the artifact format.
//! A `.wgsl`, `.comp` (GLSL) or `.spv` file is a compute shader, translated
//! into a kernel program under a [`Launch`] ([`crate::kernel::shader`]).
//! Files are read and directories walked by [`crate::axb::load`]'s rules (one
//! size limit, regular files only, link loops walked once), so an AXB
//! input loads here exactly as it does there.

use crate::axb::load::{self as axb_load, NamedTest};
use crate::error::FileError;
use crate::kernel::program::Program;
pub use crate::kernel::shader::Launch;
use crate::kernel::{litmus, ron};
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
    /// For a shader: the launch it was translated for, with where each
    /// number came from ([`crate::kernel::shader::launch::Taken::describe`]),
    /// which every verdict of it names.
    pub launch: Option<String>,
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

/// The first identifier of a RON document (see [`axb_load::leading_ident`]).
pub fn ron_kind(src: &str) -> &str {
    axb_load::leading_ident(src)
}

fn ext(path: &Path) -> &str {
    path.extension().and_then(|e| e.to_str()).unwrap_or("")
}

/// Whether a directory walk reads `path`: AXB tests, suites (packed ones
/// included) and kernel programs, by extension.
pub fn is_input_file(path: &Path) -> bool {
    matches!(ext(path), "litmus" | "ron" | "txt")
        || crate::kernel::shader::is_shader_ext(ext(path))
        || crate::axb::packed::is_packed(path)
}

/// The name of a single program: its file's stem, which must follow the
/// one name rule ([`crate::axb::test::check_name`]).
fn stem_name(path: &Path) -> Result<String, FileError> {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    crate::axb::test::check_name(&stem).map_err(|e| {
        FileError::whole(
            path,
            format!(
                "test name `{}` (from the file name) is not valid: {e}; rename the file",
                crate::error::excerpt(&stem)
            ),
        )
    })?;
    Ok(stem.into_owned())
}

/// The name of the shader `path`: its file's stem, made to follow the
/// name rule ([`crate::axb::test::check_name`]) rather than refused: a
/// shader is the user's own file, whose name this tool does not choose
/// (a repository's `my shader.wgsl` or `-x.comp` must still be checked).
/// Every character the rule does not allow becomes `_`, a name that may
/// not start as it does gets `_` before it, and it is cut to the rule's
/// 64 characters. Messages name the file by its path, not by this name.
fn shader_name(path: &Path) -> String {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let mut name: String = (stem.chars())
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-') => c,
            _ => '_',
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        name.insert(0, '_');
    }
    name.truncate(crate::axb::test::MAX_NAME_LEN);
    name
}

/// The name of one of several entry points of the shader `path`:
/// `STEM.ENTRY`, a valid test name.
fn entry_name(path: &Path, stem: &str, entry: &str) -> Result<String, FileError> {
    let name = format!("{stem}.{entry}");
    crate::axb::test::check_name(&name).map_err(|e| {
        FileError::whole(
            path,
            format!(
                "entry point `{}`: its test name `{}` is not valid: {e}; choose an entry point with --entry",
                crate::error::excerpt(entry),
                crate::error::excerpt(&name)
            ),
        )
    })?;
    Ok(name)
}

/// Parses the text of one file already read, by its extension and (for
/// `.ron`) its first identifier: `Kernel` and `KernelSuite` are kernel
/// programs, anything else an AXB test or suite.
fn parse_file(path: &Path, src: &str) -> Result<Vec<Item>, FileError> {
    let one = |program: Program| -> Result<Vec<Item>, FileError> {
        Ok(vec![Item::Kernel(NamedProgram {
            name: stem_name(path)?,
            program,
            verdicts: None,
            source: path.to_path_buf(),
            launch: None,
        })])
    };
    match (ext(path), ron_kind(src)) {
        ("litmus", _) => one(litmus::parse(src).map_err(|e| e.in_file(path))?),
        ("ron", "Kernel") => one(ron::parse_program(src).map_err(|e| e.in_file(path))?),
        ("ron", "KernelSuite") => {
            let suite = ron::parse_suite(src).map_err(|e| e.in_file(path))?;
            suite
                .tests
                .into_iter()
                .map(|e| {
                    crate::axb::test::check_name(&e.name).map_err(|err| {
                        FileError::whole(
                            path,
                            format!(
                                "test name `{}` is not valid: {err}",
                                crate::error::excerpt(&e.name)
                            ),
                        )
                    })?;
                    Ok(Item::Kernel(NamedProgram {
                        name: e.name,
                        program: e.program,
                        verdicts: e.verdicts,
                        source: path.to_path_buf(),
                        launch: None,
                    }))
                })
                .collect()
        }
        _ => Ok(
            axb_load::named_tests(path, axb_load::parse_document(path, src)?)?
                .into_iter()
                .map(Item::Axb)
                .collect(),
        ),
    }
}

/// Reads one file of either kind, with the input rules of
/// [`crate::io::read_input`] (regular files only, the size limit, UTF-8).
/// A packed `.axb.gz` suite is AXB only, read by [`axb_load::load_document`].
pub fn load_file(path: &Path) -> Result<Vec<Item>, FileError> {
    load_file_with(path, &Launch::default(), &mut Vec::new())
}

/// [`load_file`] with the launch of shader files; a shader's translation
/// warnings are appended to `warnings` as `file: message`.
pub fn load_file_with(
    path: &Path,
    launch: &Launch,
    warnings: &mut Vec<String>,
) -> Result<Vec<Item>, FileError> {
    if crate::kernel::shader::is_shader_ext(ext(path)) {
        let stem = shader_name(path);
        let entries = crate::kernel::shader::load_entries(path, launch, warnings)?;
        return entries
            .into_iter()
            .map(|(entry, program, assumptions)| {
                // Several entry points: `rts.reduce`, `rts.downsweep`.
                let name = match entry {
                    None => stem.clone(),
                    Some(e) => entry_name(path, &stem, &e)?,
                };
                Ok(Item::Kernel(NamedProgram {
                    name,
                    program,
                    verdicts: None,
                    source: path.to_path_buf(),
                    launch: Some(assumptions),
                }))
            })
            .collect();
    }
    if crate::axb::packed::is_packed(path) {
        let doc = axb_load::load_document(path)?;
        return Ok(axb_load::named_tests(path, doc)?
            .into_iter()
            .map(Item::Axb)
            .collect());
    }
    if !is_input_file(path) || path.is_dir() {
        return Err(crate::io::not_an_input(
            path,
            "a `.litmus` program, a `.ron` program, test or suite, a `.txt` test in the artifact format, a packed `.axb.gz` suite, or a `.wgsl`, `.comp` or `.spv` compute shader",
        ));
    }
    parse_file(path, &crate::io::read_input(path)?)
}

/// Expands paths into files as [`axb_load::expand_paths`] does (sorted,
/// links followed once, never a hang), listing `.litmus` files as well.
pub fn expand_paths(paths: &[PathBuf]) -> Vec<Result<PathBuf, FileError>> {
    crate::io::expand_paths_with(paths, is_input_file)
}

/// Loads everything under `paths`, in input order (a directory's files
/// sorted, a suite's entries in suite order); bad files do not stop the
/// others: their errors are returned beside what did load.
pub fn load_all(paths: &[PathBuf]) -> (Vec<Item>, Vec<FileError>) {
    load_all_with(paths, &Launch::default(), &mut Vec::new())
}

/// [`load_all`] with the launch of shader files (see [`load_file_with`]).
pub fn load_all_with(
    paths: &[PathBuf],
    launch: &Launch,
    warnings: &mut Vec<String>,
) -> (Vec<Item>, Vec<FileError>) {
    let mut items = Vec::new();
    let mut errors = Vec::new();
    let mut taken = std::collections::HashSet::new();
    for p in expand_paths(paths) {
        match p.and_then(|p| load_file_with(&p, launch, warnings).map(|v| (p, v))) {
            Ok((path, v)) => {
                for mut item in v {
                    if let Item::Kernel(k) = &mut item {
                        if let Some(new) = unique_shader_name(&path, &k.name, &taken) {
                            warnings.push(format!(
                                "{}: named `{new}`: `{}`, the name its file gives, is taken by an earlier input",
                                path.display(),
                                k.name
                            ));
                            k.name = new;
                        }
                    }
                    taken.insert(item.name().to_string());
                    items.push(item);
                }
            }
            Err(e) => errors.push(e),
        }
    }
    (items, errors)
}

/// A name for a shader's program (from `path`) whose file-given `name`
/// an earlier input of the batch took (`skipped.comp`, `skipped.spv`;
/// `a b.wgsl`, `a_b.wgsl`; one file name in two folders): `NAME.EXT`, else
/// `NAME_2`, `NAME_3`, ... (`None`: the name is free, or the input is not
/// a shader, whose names are its own). Rows and suites then tell them apart.
fn unique_shader_name(
    path: &Path,
    name: &str,
    taken: &std::collections::HashSet<String>,
) -> Option<String> {
    let ext = path.extension().and_then(|e| e.to_str())?;
    if !crate::kernel::shader::is_shader_ext(ext) || !taken.contains(name) {
        return None;
    }
    let cut = |s: String| -> String { s.chars().take(crate::axb::test::MAX_NAME_LEN).collect() };
    std::iter::once(cut(format!("{name}.{ext}")))
        .chain((2..).map(|k| {
            let suffix = format!("_{k}");
            let keep = crate::axb::test::MAX_NAME_LEN - suffix.len();
            format!("{}{suffix}", name.chars().take(keep).collect::<String>())
        }))
        .find(|n| !taken.contains(n))
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

    /// Regression: after the one loader replaced the AXB one in the
    /// oracle, `oracle classify runs/3t4i/3t4i.axb.gz` (a packed suite of
    /// `synth plan`'s merge) was refused as an unknown format `.gz`.
    #[test]
    fn packed_suites_are_read_and_walked() {
        use crate::axb::suite::{Entry, Suite};
        let published = crate::axb::published::tests().unwrap();
        let suite = Suite {
            name: "p".into(),
            note: String::new(),
            tests: published
                .iter()
                .take(20)
                .map(|t| Entry::new(t.name.clone(), t.entry.test.clone()))
                .collect(),
        };
        let dir = std::env::temp_dir().join(format!("axb-packed-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.axb.gz");
        std::fs::write(&path, crate::axb::packed::suite_to_packed(&suite)).unwrap();
        assert!(is_input_file(&path));
        let items = load_file(&path).unwrap();
        let names: Vec<&str> = items
            .iter()
            .map(|i| match i {
                Item::Axb(t) => t.name.as_str(),
                Item::Kernel(_) => panic!("a packed suite holds AXB tests"),
            })
            .collect();
        let want: Vec<&str> = published.iter().take(20).map(|t| t.name.as_str()).collect();
        assert_eq!(names, want);
        assert_eq!(expand_paths(std::slice::from_ref(&dir)).len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
