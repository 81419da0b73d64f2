//! WGSL as a SPIR-V binary, for tests of the SPIR-V reader (there is no
//! SPIR-V assembler in the build): naga's writer, with names (`OpName`,
//! as `glslangValidator -g` writes them: naga's default has them only in
//! debug builds of the writer) and without the loop bound naga adds for
//! browsers (the program as written). Shared by the core's and the
//! oracle's tests.

/// `src`, WGSL, as SPIR-V bytes (little-endian words).
pub fn spirv_of_wgsl(src: &str) -> Vec<u8> {
    let module = naga::front::wgsl::parse_str(src).unwrap();
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .unwrap();
    let options = naga::back::spv::Options {
        force_loop_bounding: false,
        flags: naga::back::spv::WriterFlags::DEBUG
            | naga::back::spv::WriterFlags::ADJUST_COORDINATE_SPACE
            | naga::back::spv::WriterFlags::LABEL_VARYINGS
            | naga::back::spv::WriterFlags::CLAMP_FRAG_DEPTH,
        ..naga::back::spv::Options::default()
    };
    let words = naga::back::spv::write_vec(&module, &info, &options, None).unwrap();
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
