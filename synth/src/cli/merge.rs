//! `synth merge`: the suites of shards 1/N..N/N joined into the output of
//! the unsharded run (packed suites streamed, in constant memory).

use super::{bad_input, cannot_write, format_of, Failure, FormatArg};
use crate::enumerate::output::{self, Format};
use crate::enumerate::shard::{self, Part};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct MergeArgs {
    /// The shard suites made by `synth --shard K/N` (RON or packed
    /// `.axb.gz`; packed ones are merged streaming, in constant memory).
    #[arg(required = true)]
    parts: Vec<PathBuf>,
    /// The merged suite (`-`: standard output).
    #[arg(long, short = 'o')]
    out: PathBuf,
    /// The output format (default: from `--out`, as for `synth gen`).
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
}

/// Runs `synth merge`: checks the output and opens every part before
/// merging, then one status line on stderr.
pub fn run(m: MergeArgs) -> Result<(), Failure> {
    let format = format_of(m.format, &m.out);
    output::prepare(&m.out, format).map_err(bad_input)?;
    let parts = m
        .parts
        .iter()
        .map(|p| Part::open(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad_input)?;
    let n = parts.len();
    let (name, note) = shard::merged_header(&parts).map_err(bad_input)?;
    let count = if format == Format::Packed {
        // Streaming: a packed merge holds one test per shard at a time.
        match packed_to(parts, &name, &note, &m.out)? {
            Some(count) => count,
            // The reader of standard output went away: nothing to say.
            None => return Ok(()),
        }
    } else {
        in_memory(parts, name.clone(), note, &m.out, format)?
    };
    // The name is the shards' text: escaped, as every status line.
    eprintln!(
        "{}",
        progress_litmus::error::printable(&format!(
            "synth: merged {n} shards of {name}: {count} tests -> {}",
            m.out.display()
        ))
    );
    Ok(())
}

/// Merges `parts` into a packed suite at `out` (standard output or a file
/// written atomically); the number of tests, or `None` when the reader of
/// standard output went away (`| head`), which ends quietly as every other
/// output to standard output does.
fn packed_to(
    parts: Vec<Part>,
    name: &str,
    note: &str,
    out: &Path,
) -> Result<Option<usize>, Failure> {
    if output::is_stdout(out) {
        let mut w = PipeAware {
            inner: std::io::stdout().lock(),
            closed: false,
        };
        return match merge_packed(parts, name, note, &mut w) {
            Err(_) if w.closed => Ok(None),
            r => r.map(Some),
        };
    }
    let mut res = None;
    let written = progress_litmus::io::write_atomically_with(out, |f| {
        let r = merge_packed(parts, name, note, f);
        let ok = r.is_ok();
        res = Some(r);
        if ok {
            Ok(())
        } else {
            Err(std::io::Error::other("merge failed"))
        }
    });
    match (res, written) {
        (Some(Err(e)), _) => Err(e),
        (_, Err(e)) => Err(cannot_write(out, e)),
        (Some(Ok(r)), Ok(())) => Ok(Some(r)),
        (None, Ok(())) => unreachable!("the writer ran"),
    }
}

/// Merges `parts` in memory and writes the suite `name` in `format` (RON
/// or a directory of `.txt` files, which are not streamed); the number of
/// tests.
fn in_memory(
    parts: Vec<Part>,
    name: String,
    note: String,
    out: &Path,
    format: Format,
) -> Result<usize, Failure> {
    let mut tests = Vec::new();
    let count = shard::merge_streaming(parts, |name, t| {
        tests.push(progress_litmus::axb::suite::Entry::new(name, t.clone()));
        Ok(())
    })
    .map_err(bad_input)?;
    let suite = progress_litmus::axb::suite::Suite { name, note, tests };
    output::write(&suite, out, format).map_err(|e| cannot_write(out, e))?;
    Ok(count)
}

/// A writer that remembers whether its reader went away (`EPIPE`), so that
/// a streaming merge to a closed pipe can end quietly, not with an error.
struct PipeAware<W> {
    inner: W,
    closed: bool,
}

impl<W: std::io::Write> PipeAware<W> {
    fn note<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        if r.as_ref()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
        {
            self.closed = true;
        }
        r
    }
}

impl<W: std::io::Write> std::io::Write for PipeAware<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

/// Merges `parts` into one packed suite `name` written to `w`; the number
/// of tests.
fn merge_packed(
    parts: Vec<Part>,
    name: &str,
    note: &str,
    w: &mut dyn std::io::Write,
) -> Result<usize, Failure> {
    let io = |e: std::io::Error| Failure::other(format!("cannot write: {e}"));
    let mut packed = progress_litmus::axb::packed::Writer::new(w, name, note).map_err(io)?;
    let count = shard::merge_streaming(parts, |name, t| packed.push(name, t)).map_err(|e| {
        // An error reading a part is bad input; one writing is not.
        let code = if e.starts_with("cannot write") { 1 } else { 2 };
        Failure::new(code, e)
    })?;
    packed.finish().map_err(io)?;
    Ok(count)
}
