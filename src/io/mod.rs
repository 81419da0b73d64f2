//! Files and streams, the same for every tool: inputs read within limits,
//! directory walks that end, outputs that are never half written, and
//! standard output that a closed pipe ends quietly.
//!
//! Generic, knowing no program format: [`crate::axb::load`] and
//! [`crate::kernel::load`] read programs through [`input`] and [`walk`];
//! every command writes through [`output`]; [`crate::tree`] writes the
//! many files of an output folder; [`journal`] locks the journal of a long
//! run.
//!
//! The defences live here once: only regular files are read, never a FIFO
//! or a device, and none larger than [`input::max_input_bytes`]; a
//! directory walk visits each file once and never loops on symbolic links;
//! an output replaces its file atomically, follows a link at its name,
//! writes through a device or a FIFO and refuses a folder.

pub mod input;
pub mod journal;
pub mod output;
pub mod walk;

pub use input::{
    kind_of, max_input_bytes, not_an_input, open_input, read_bytes_limited, read_input,
    read_input_limited, read_open_limited, DEFAULT_MAX_INPUT_BYTES, MAX_INPUT_ENV,
};
pub use output::{
    is_stdout, output_target, write_atomically, write_atomically_with, write_output, write_stdout,
};
pub use walk::expand_paths_with;
