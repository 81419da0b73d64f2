//! The RON loader (tests and suites) on arbitrary input: a valid document
//! that serializes and parses back to itself, or an error inside the
//! input. Never a panic.
#![no_main]

#[path = "../../tests/support/checks.rs"]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    checks::check_ron(&String::from_utf8_lossy(data));
});
