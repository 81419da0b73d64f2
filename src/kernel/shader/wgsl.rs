//! WGSL in: naga's `wgsl-in` frontend, its error at its position.

use crate::error::FileError;
use std::path::Path;

/// Parses WGSL text into naga's IR; a syntax or type error is one error at
/// its line and column.
pub fn parse(path: &Path, src: &str) -> Result<naga::Module, FileError> {
    naga::front::wgsl::parse_str(src).map_err(|e| {
        let (line, col) = e
            .location(src)
            .map_or((0, 0), |l| super::line_col(src, l.offset));
        FileError {
            path: path.to_path_buf(),
            line,
            col,
            msg: format!("WGSL: {}", e.message()),
        }
    })
}
