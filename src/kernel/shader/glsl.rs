//! GLSL in: naga's `glsl-in` frontend for compute shaders (`.comp`), its
//! first error at its position.

use crate::error::FileError;
use std::path::Path;

/// Parses GLSL compute shader text into naga's IR; the first error is one
/// error at its line and column.
pub fn parse(path: &Path, src: &str) -> Result<naga::Module, FileError> {
    let options = naga::front::glsl::Options::from(naga::ShaderStage::Compute);
    naga::front::glsl::Frontend::default()
        .parse(&options, src)
        .map_err(|errs| {
            let first = errs.errors.first();
            let (line, col) = first
                .and_then(|e| e.meta.to_range())
                .map_or((0, 0), |r| super::line_col(src, r.start as u32));
            let msg = first.map_or("unknown error".to_string(), |e| e.kind.to_string());
            FileError {
                path: path.to_path_buf(),
                line,
                col,
                msg: format!("GLSL: {msg}"),
            }
        })
}
