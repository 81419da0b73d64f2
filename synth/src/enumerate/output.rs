//! Writing a run's tests: one RON suite, or a directory of artifact-format
//! files. Both are pure functions of the test set, so a run's output has the
//! same bytes whatever the engine, the core count or the sharding.

use crate::enumerate::canon::name_tests;
use crate::enumerate::config::Config;
use crate::enumerate::shard::{note, Shard};
use progress_litmus::axb::suite::Suite;
use progress_litmus::axb::test::Test;
use std::path::Path;

/// The note of a suite (defined beside [`Config`], which the shard notes
/// of [`crate::enumerate::shard`] are checked against too).
pub use crate::enumerate::config::describe;

/// The suite `<N>t<M>i` of sorted canonical `tests`, named `<N>t<M>i_<k>`;
/// a shard's note records the run, the test count and their checksum
/// ([`crate::enumerate::shard::Record`]) for `synth merge` to check.
pub fn to_suite(cfg: &Config, tests: Vec<Test>, shard: Option<Shard>) -> Suite {
    let name = cfg.name();
    let tests = name_tests(&name, tests);
    Suite {
        note: note(&describe(cfg), cfg, shard, &tests),
        tests,
        name,
    }
}

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One RON suite file.
    Ron,
    /// A directory with one artifact-format `.txt` file per test.
    Txt,
    /// One packed suite (`.axb.gz`, [`progress_litmus::axb::packed`]): a few bytes per test,
    /// for suites of millions of tests.
    Packed,
}

impl Format {
    /// The format an output path implies when none is given: `.axb.gz` is
    /// packed, a path ending in `/` is a directory of `.txt` files, anything
    /// else (`-` included) one RON suite.
    pub fn infer(path: &Path) -> Format {
        if progress_litmus::axb::packed::is_packed(path) {
            Format::Packed
        } else if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
            Format::Txt
        } else {
            Format::Ron
        }
    }
}

/// Whether `path` is (or links to) a character device or a FIFO: an output
/// is written through to those (see [`progress_litmus::io::write_atomically_with`]),
/// and no journal goes beside one (`-o /dev/null` must not create
/// `/dev/null.journal`): like standard output, it is not a file to resume.
pub fn writes_through(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| {
        let t = m.file_type();
        t.is_char_device() || t.is_fifo()
    })
}

pub use progress_litmus::io::is_stdout;

/// Checks, before any work, that `format` can be written to `path`: a
/// directory for `Txt` (created if missing), otherwise a file whose folder
/// exists or can be created, is writable, and which is not a directory.
/// Creates missing folders; leaves no other trace. The error is one line
/// naming the path.
pub fn prepare(path: &Path, format: Format) -> Result<(), String> {
    let shown = path.display();
    if is_stdout(path) {
        return match format {
            Format::Txt => Err(
                "--out -: the txt format writes one file per test; give a directory".to_string(),
            ),
            _ => Ok(()),
        };
    }
    let dir = match format {
        Format::Txt => {
            if path.exists() && !path.is_dir() {
                return Err(format!("--out {shown}: exists and is not a directory"));
            }
            path.to_path_buf()
        }
        Format::Ron | Format::Packed => {
            if path.as_os_str().as_encoded_bytes().ends_with(b"/") || path.is_dir() {
                return Err(format!(
                    "--out {shown}: is a directory; give a file (or --format txt for a directory of tests)"
                ));
            }
            if writes_through(path) {
                return Ok(()); // opened for writing at the end, never replaced
            }
            // The file written is the one a symbolic link points to.
            let target = progress_litmus::io::output_target(path)
                .map_err(|e| format!("--out {shown}: {e}"))?;
            let dir = match target.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            };
            // A link's folders are the link's owner's business: a link
            // into a folder that does not exist is refused, not made real
            // (`-o` a dangling link to /nonexist/x created /nonexist).
            if target.as_path() != path && !dir.is_dir() {
                return Err(format!(
                    "--out {shown}: a symbolic link to {}, whose folder does not exist",
                    target.display()
                ));
            }
            dir
        }
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("--out {shown}: cannot create {}: {e}", dir.display()))?;
    // Writable: create and remove a probe file.
    let probe = dir.join(format!(".synth-probe-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .and_then(|_| std::fs::remove_file(&probe))
        .map_err(|e| format!("--out {shown}: cannot write in {}: {e}", dir.display()))
}

/// Writes `suite` to `path` in `format` (`-`: standard output, for `Ron`
/// and `Packed`). Files are written atomically. For `Txt`, `path` is a
/// directory, created if needed; stale `<suite>_<k>.txt` files of an
/// earlier, larger run are removed so the directory holds exactly this
/// suite (no other file is touched).
pub fn write(suite: &Suite, path: &Path, format: Format) -> std::io::Result<()> {
    let bytes = match format {
        Format::Ron => progress_litmus::axb::load::suite_to_ron(suite).into_bytes(),
        Format::Packed => progress_litmus::axb::packed::suite_to_packed(suite),
        Format::Txt => return write_txt(suite, path),
    };
    progress_litmus::io::write_output(path, &bytes).map(drop)
}

fn write_txt(suite: &Suite, path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path)?;
    let prefix = format!("{}_", suite.name);
    for e in std::fs::read_dir(path)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = name
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".txt"))
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
        if ours
            && !suite
                .tests
                .iter()
                .any(|t| format!("{}.txt", t.name) == name)
        {
            std::fs::remove_file(e.path())?;
        }
    }
    for t in &suite.tests {
        std::fs::write(
            path.join(format!("{}.txt", t.name)),
            progress_litmus::axb::text::print(&t.test),
        )?;
    }
    Ok(())
}
