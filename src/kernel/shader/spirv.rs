//! SPIR-V in: naga's `spv-in` frontend (binary modules, `.spv`). SPIR-V has
//! no source text, so its errors name the file only.

use crate::error::FileError;
use std::path::Path;

/// Parses a SPIR-V binary into naga's IR (structured control flow is
/// recovered by naga).
pub fn parse(path: &Path, bytes: &[u8]) -> Result<naga::Module, FileError> {
    if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
        return Err(FileError::whole(
            path,
            "SPIR-V: not a SPIR-V binary (its length is not a multiple of 4 words of header)",
        ));
    }
    let options = naga::front::spv::Options::default();
    // naga's message may quote the module's own strings (an extension's
    // name), which may hold any byte: escaped, so that it stays one line.
    naga::front::spv::parse_u8_slice(bytes, &options).map_err(|e| {
        let msg = crate::error::printable(&e.to_string());
        FileError::whole(path, format!("SPIR-V: {msg}"))
    })
}
