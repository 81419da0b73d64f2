//! Errors that point at a place in an input file.

use std::fmt;
use std::path::{Path, PathBuf};

/// A syntax or validity error at a line and column (both from 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

impl ParseError {
    pub fn new(line: usize, col: usize, msg: impl Into<String>) -> ParseError {
        ParseError {
            line,
            col,
            msg: msg.into(),
        }
    }

    /// Attaches the file the error was found in.
    pub fn in_file(self, path: &Path) -> FileError {
        FileError {
            path: path.to_path_buf(),
            line: self.line,
            col: self.col,
            msg: self.msg,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.msg)
    }
}

impl std::error::Error for ParseError {}

/// An error in a named file, printed `path:line:col: message` as compilers
/// do, so editors can jump to it. Line 0 means the file as a whole (it could
/// not be read, or its kind is unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    pub path: PathBuf,
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

impl FileError {
    /// An error about the file as a whole.
    pub fn whole(path: &Path, msg: impl Into<String>) -> FileError {
        FileError {
            path: path.to_path_buf(),
            line: 0,
            col: 0,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path.display(), self.msg)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.path.display(),
                self.line,
                self.col,
                self.msg
            )
        }
    }
}

impl std::error::Error for FileError {}
