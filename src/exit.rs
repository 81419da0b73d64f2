//! How a command of the three tools ends when it fails: one error line on
//! stderr, escaped, and the documented exit status (2 for bad input or
//! usage, 1 for anything else; [`crate::error::exit_status_help`] is the
//! paragraph every `--help` shows). One type for `oracle`, `synth` and
//! `backends`, so that a message is printed, escaped and mapped to its
//! status the same way everywhere.

use crate::error::printable;
use std::path::Path;
use std::process::ExitCode;

/// Why a command stopped: its exit status, its message (none for a
/// failure whose output already said everything, or for a quiet stop) and
/// what a tool it ran printed (a compiler's diagnostics), shown line by
/// line after the error line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: u8,
    pub msg: String,
    pub detail: Option<String>,
}

/// The exit status of bad input or usage.
pub const INPUT: u8 = 2;
/// The exit status of anything else: an output that cannot be written, a
/// tool that failed, a bug.
pub const OTHER: u8 = 1;

impl Failure {
    /// A failure with status `code` and message `msg`.
    pub fn new(code: u8, msg: impl Into<String>) -> Failure {
        Failure {
            code,
            msg: msg.into(),
            detail: None,
        }
    }

    /// Bad input or usage (exit status 2).
    pub fn input(msg: impl Into<String>) -> Failure {
        Failure::new(INPUT, msg)
    }

    /// Anything else (exit status 1).
    pub fn other(msg: impl Into<String>) -> Failure {
        Failure::new(OTHER, msg)
    }

    /// A stop with status `code` and nothing to print: standard output's
    /// reader went away (status 0), or the output already says why (`oracle
    /// check` found programs not guaranteed to terminate: status 1).
    pub fn quiet(code: u8) -> Failure {
        Failure::new(code, "")
    }

    /// An output that could not be written (status 1), naming standard
    /// output as such rather than `-`.
    pub fn cannot_write(out: &Path, e: std::io::Error) -> Failure {
        if crate::io::is_stdout(out) {
            Failure::other(format!("cannot write to standard output: {e}"))
        } else {
            Failure::other(format!("cannot write {}: {e}", out.display()))
        }
    }

    /// The same failure with a tool's output to show after its line.
    pub fn with_detail(self, detail: impl Into<String>) -> Failure {
        Failure {
            detail: Some(detail.into()),
            ..self
        }
    }

    /// Prints the failure on stderr: `error: MESSAGE` on one line, then the
    /// detail line by line, every line escaped ([`printable`]): a message
    /// may quote a file (a path, a result line's `message`) whose newlines
    /// would otherwise forge lines and whose escape sequences would drive
    /// the terminal. A quiet failure prints nothing.
    pub fn print(&self) {
        if !self.msg.is_empty() {
            eprintln!("error: {}", printable(&self.msg));
        }
        if let Some(detail) = &self.detail {
            for line in detail.lines() {
                eprintln!("{}", printable(line));
            }
        }
    }

    /// [`Failure::print`], then the exit status.
    pub fn exit(&self) -> ExitCode {
        self.print();
        ExitCode::from(self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_standard_output_are_named() {
        assert_eq!(Failure::input("x").code, 2);
        assert_eq!(Failure::other("x").code, 1);
        assert_eq!(Failure::quiet(0).msg, "");
        let e = || std::io::Error::other("full");
        assert_eq!(
            Failure::cannot_write(Path::new("-"), e()).msg,
            "cannot write to standard output: full"
        );
        assert_eq!(
            Failure::cannot_write(Path::new("a\nb"), e()).msg,
            "cannot write a\nb: full"
        );
        let f = Failure::other("m").with_detail("d");
        assert_eq!((f.code, f.detail.as_deref()), (1, Some("d")));
    }
}
