//! The 483 published tests of the OOPSLA 2021 artifact, compiled in.
//!
//! They live in the repository as `data/oopsla21/tests/<config>_<id>.txt`
//! (see `data/README.md` for provenance and licence); the build script
//! embeds them so that `synth suites` and `backends report` work from any
//! directory, on a machine that has only the binary.

use crate::axb::load::NamedTest;
use crate::axb::suite::Entry;
use crate::axb::text;
use crate::error::FileError;
use std::path::PathBuf;

/// Where the files are in the repository; embedded tests name their source
/// `data/oopsla21/tests/<file>` so error messages and reports read the same
/// as for files on disk.
pub const DIR: &str = "data/oopsla21/tests";

/// `(file name, artifact text)` of every published test, in file-name order.
pub const FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/published.rs"));

/// The published tests, parsed, in file-name order, each named by its file
/// stem as [`crate::axb::load::load_all`] would name it.
pub fn tests() -> Result<Vec<NamedTest>, FileError> {
    FILES
        .iter()
        .map(|(file, src)| {
            let source = PathBuf::from(DIR).join(file);
            let test = text::parse(src).map_err(|e| e.in_file(&source))?;
            let name = file.trim_end_matches(".txt").to_string();
            Ok(NamedTest {
                entry: Entry::new(name.clone(), test),
                name,
                source,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_483_published_tests_are_embedded_and_parse() {
        let ts = tests().unwrap();
        assert_eq!(ts.len(), 483);
        assert_eq!(ts[0].name, "2t2i_0");
        assert_eq!(
            ts[0].source,
            PathBuf::from("data/oopsla21/tests/2t2i_0.txt")
        );
    }

    #[test]
    fn the_embedded_tests_are_the_files_in_the_repository() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DIR);
        let (on_disk, errors) = crate::axb::load::load_all(&[dir]);
        assert!(errors.is_empty(), "{errors:?}");
        let embedded = tests().unwrap();
        let key = |t: &NamedTest| (t.name.clone(), t.entry.test.clone());
        assert_eq!(
            on_disk.iter().map(key).collect::<Vec<_>>(),
            embedded.iter().map(key).collect::<Vec<_>>()
        );
    }
}
