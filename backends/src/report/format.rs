//! The two things every command's output shares: the `--format` choice
//! (text for people, JSON for tools) and writing to stdout.
//!
//! They live in the library, below the command line, because the options
//! of `run` and `import` ([`crate::campaign`]) name the format and a
//! campaign's summary is printed the same way a report is.

use clap::ValueEnum;

/// `--format`: text for people (the default) or JSON for tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Writes `text` to stdout. A closed pipe (`| head`) is not an error worth
/// a message; anything else is, for the caller to report (exit 1).
pub fn print(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("writing to stdout: {e}"))
        }
        _ => Ok(()),
    }
}
