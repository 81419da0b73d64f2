//! The artifact text parser on arbitrary input: a valid test that prints
//! and parses back to itself, or an error inside the input. Never a panic.
#![no_main]

#[path = "../../tests/support/checks.rs"]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The loader refuses invalid UTF-8 before any parser sees it.
    checks::check_text(&String::from_utf8_lossy(data));
});
