//! Reading an input file defensively: a regular file only (a FIFO would
//! block, `/dev/zero` never ends), checked before and after it is opened,
//! read through a size cap ([`max_input_bytes`], `AXB_MAX_INPUT_BYTES`).

use crate::error::{excerpt, FileError, ParseError};
use std::fs::Metadata;
use std::io::Read;
use std::path::Path;

/// The largest input file read when [`MAX_INPUT_ENV`] is not set: 1 GiB.
///
/// The largest real input is the 2t5i suite, 137 MB of RON; a limit 7 times
/// that leaves room for bigger configurations, while a runaway input (a
/// symbolic link to a huge log, a generated file gone wrong) is refused at
/// once instead of being read into memory, parsed for minutes and then
/// failing. Reading and parsing a suite takes a few times its size in
/// memory, so 1 GiB stays well inside the 24 GiB of the team's machines.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 1 << 30;

/// The environment variable that overrides [`DEFAULT_MAX_INPUT_BYTES`]:
/// a number of bytes, optionally with a binary suffix `K`, `M` or `G`
/// (`AXB_MAX_INPUT_BYTES=4G`). An environment variable rather than a flag so
/// that every tool (oracle, synth, backends) honours the same setting.
pub const MAX_INPUT_ENV: &str = "AXB_MAX_INPUT_BYTES";

/// The input size limit in force: [`MAX_INPUT_ENV`] if set, else
/// [`DEFAULT_MAX_INPUT_BYTES`]; an error message if the variable is not a
/// size.
pub fn max_input_bytes() -> Result<u64, String> {
    match std::env::var(MAX_INPUT_ENV) {
        Err(std::env::VarError::NotPresent) => Ok(DEFAULT_MAX_INPUT_BYTES),
        Err(std::env::VarError::NotUnicode(v)) => Err(format!(
            "{MAX_INPUT_ENV}=`{}` is not a size (bytes, or a number with K, M or G)",
            excerpt(&v.to_string_lossy())
        )),
        Ok(v) => parse_size(&v).ok_or_else(|| {
            format!(
                "{MAX_INPUT_ENV}=`{}` is not a size (bytes, or a number with K, M or G)",
                excerpt(&v)
            )
        }),
    }
}

/// `123`, `64K`, `512M`, `2G` (binary multiples; `KiB`, `MB` and the like
/// read the same).
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..digits].parse().ok()?;
    let shift = match s[digits..].trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// `1 GiB`, `137.4 MiB`, `12 bytes`.
fn show_size(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if n >= size {
            return if n & (size - 1) == 0 {
                format!("{} {unit}", n / size)
            } else {
                format!("{:.1} {unit}", n as f64 / size as f64)
            };
        }
    }
    format!("{n} bytes")
}

/// What a file that is not a regular one is, for messages: "a directory",
/// "a FIFO (named pipe)", "a character device"... (from metadata that
/// followed links; a symbolic link's own metadata says "not a regular
/// file").
pub fn kind_of(m: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

pub(super) fn not_regular(path: &Path, m: &Metadata) -> FileError {
    FileError::whole(
        path,
        format!(
            "{}, not a regular file: only regular files are read",
            kind_of(m)
        ),
    )
}

fn too_large(path: &Path, size: u64, limit: u64) -> FileError {
    FileError::whole(
        path,
        format!(
            "{} ({size} bytes) is over the input limit of {} (set {MAX_INPUT_ENV} to raise it)",
            show_size(size),
            show_size(limit)
        ),
    )
}

/// Reads an input file as text, defensively: only a regular file (a FIFO
/// would block, `/dev/zero` never ends), at most [`max_input_bytes`], valid
/// UTF-8 (an error names the line and column of the first bad byte), a
/// leading byte-order mark dropped.
///
/// The file is checked before it is opened (opening a device can have
/// effects of its own), opened without blocking and without becoming a
/// controlling terminal, checked again (it may have been swapped in between)
/// and read through a cap (it may grow while being read).
pub fn read_input(path: &Path) -> Result<String, FileError> {
    let limit = max_input_bytes().map_err(|e| FileError::whole(path, e))?;
    read_input_limited(path, limit)
}

/// [`read_input`] with an explicit size limit in bytes.
pub fn read_input_limited(path: &Path, limit: u64) -> Result<String, FileError> {
    let bytes = read_bytes_limited(path, limit)?;
    let mut text = String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let prefix = std::str::from_utf8(&e.as_bytes()[..good]).unwrap_or("");
        let (line, col) = crate::locate::line_col(prefix, good);
        ParseError::new(line, col, "not UTF-8 text: invalid byte sequence").in_file(path)
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// Opens an input file with the defences of [`read_input`] but no size
/// limit, for readers that stream (`synth merge` reads packed shards line
/// by line): a regular file only, checked before it is opened (a FIFO
/// would block, a device can have effects of its own), opened without
/// blocking and without becoming a controlling terminal, and checked again.
pub fn open_input(path: &Path) -> Result<std::fs::File, FileError> {
    use std::os::unix::fs::OpenOptionsExt;
    let cannot = |e: std::io::Error| FileError::whole(path, format!("cannot read: {e}"));
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    Ok(file)
}

/// The bytes of an input file, with the defences of [`read_input`] but no
/// text decoding (a packed suite is gzip).
pub fn read_bytes_limited(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let cannot = |e: std::io::Error| FileError::whole(path, format!("cannot read: {e}"));
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(path, meta.len(), limit));
    }
    let file = open_input(path)?;
    let meta = file.metadata().map_err(cannot)?;
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, bytes.len() as u64, limit));
    }
    Ok(bytes)
}

/// The rest of an open file (a journal, read through the handle that
/// holds its lock), at most [`max_input_bytes`]: a journal is input like
/// any other, and one grown huge (or forged) must be one error, not
/// memory exhausted.
pub fn read_open_limited(file: &mut impl Read, path: &Path) -> Result<Vec<u8>, FileError> {
    let limit = max_input_bytes().map_err(|e| FileError::whole(path, e))?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::whole(path, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(FileError::whole(
            path,
            format!(
                "over the input limit of {} (set {MAX_INPUT_ENV} to raise it)",
                show_size(limit)
            ),
        ));
    }
    Ok(bytes)
}

/// The error for a path a one-file command cannot read by its name: a
/// directory (where a walk was not asked for: `oracle explain DIR` said
/// "unknown format `.`", issue 20 item 11), a name without an extension,
/// or an extension no reader knows. `expected` lists what is read.
pub fn not_an_input(path: &Path, expected: &str) -> FileError {
    let msg = if path.is_dir() {
        format!("is a directory: this command takes one file, {expected}")
    } else {
        match path.extension().map(|e| e.to_string_lossy()) {
            None => format!("unknown format (no extension): expected {expected}"),
            Some(ext) => format!("unknown format `.{}`: expected {expected}", excerpt(&ext)),
        }
    };
    FileError::whole(path, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("512 MiB"), Some(512 << 20));
        assert_eq!(parse_size("1.5G"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("99999999999T"), None);
        assert_eq!(show_size(1 << 30), "1 GiB");
        assert_eq!(show_size(137_400_000), "131.0 MiB");
    }
}
