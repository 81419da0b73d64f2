//! Scratch folders for tests, shared by the crates' test files
//! (`#[path = ".../tests/support/scratch.rs"] mod scratch;`).
//!
//! Each test run used to leave its folders in the system's temporary folder
//! (40 MB a run, a 21 MB file among them), which filled the disk of a
//! machine that ran the tests often.

use std::path::{Path, PathBuf};

/// A fresh, empty folder `<temp>/<prefix>-<process id>-<name>`, removed
/// when dropped, unless its test is failing: what a failing test wrote is
/// kept to look at.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(prefix: &str, name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}
