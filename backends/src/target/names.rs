//! Test names as the generated programs carry them: which names a program
//! can hold ([`check`]), and how a list of names is passed to its `--test`
//! flag ([`test_list`]).
//!
//! A name travels far: into C string literals (escaped, see
//! [`crate::target::host::c_string`]), JSON result lines (escaped), the
//! `axb-run:` header comment of every shader (read back by the Vulkan host
//! and the Metal harness to the end of the line), the `--test` list of a
//! program's command line, journals, result CSVs (RFC 4180-quoted) and
//! lists of names (`backends run --only`, one per line, trimmed). Most
//! characters survive all of these by escaping; these do not, and a name
//! holding one is refused before anything is emitted or run, never after a
//! campaign's work is done:
//!
//! - the empty name (an empty `--test` list means every test);
//! - control characters (newline, tab, NUL, escape...): a header comment
//!   ends at a newline, a command-line argument at NUL;
//! - a trailing backslash (it continues a `//` comment onto the next line);
//! - leading or trailing white space (lists of names are trimmed);
//! - more than [`MAX_BYTES`] bytes (a command line holds a few hundred
//!   names; file systems hold 255-byte file names).
//!
//! A `,` or `\` in a name is escaped in `--test` lists with a backslash
//! (`a\,b` names the test `a,b`), which the programs undo.

use crate::excerpt::excerpt;

/// The longest name a program can carry, in bytes.
pub const MAX_BYTES: usize = 1024;

/// Why `name` cannot be carried by a program, if it cannot.
pub fn check(name: &str) -> Result<(), String> {
    let why = if name.is_empty() {
        "it is empty".to_string()
    } else if let Some(c) = name.chars().find(|c| c.is_control()) {
        format!(
            "it holds the control character U+{:04X} (a header comment or a command-line argument cannot)",
            c as u32
        )
    } else if name.ends_with('\\') {
        "it ends in a backslash (it would continue the shaders' header comment)".to_string()
    } else if name.trim() != name {
        "it starts or ends with white space (lists of test names are trimmed)".to_string()
    } else if name.len() > MAX_BYTES {
        format!(
            "it is {} bytes long, more than the {MAX_BYTES} a command line can carry",
            name.len()
        )
    } else {
        return Ok(());
    };
    Err(format!(
        "the test name `{}` cannot be carried by the generated programs: {why}; rename the test",
        excerpt(name)
    ))
}

/// `names` as the value of a program's `--test` flag: comma-separated,
/// each `,` and `\` in a name escaped with a backslash.
pub fn test_list(names: &[&str]) -> String {
    let mut out = String::new();
    for (k, name) in names.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        for c in name.chars() {
            if c == ',' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_program_cannot_carry_are_refused_with_the_reason() {
        for ok in [
            "2t2i_0",
            "a,b",
            "a\"b",
            "a\\b",
            "é ü",
            "x".repeat(MAX_BYTES).as_str(),
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("a\nb", "U+000A"),
            ("a\0b", "U+0000"),
            ("a\u{1b}[2J", "U+001B"),
            ("a\\", "backslash"),
            (" a", "white space"),
            ("a\u{a0}", "white space"),
        ] {
            let e = check(bad).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = check(&"x".repeat(10_000_000)).unwrap_err();
        assert!(e.len() < 400 && e.contains("10000000 bytes"), "{e}");
    }

    #[test]
    fn test_lists_escape_commas_and_backslashes() {
        assert_eq!(test_list(&["a", "b"]), "a,b");
        assert_eq!(test_list(&["a,b", "c\\d", "e"]), "a\\,b,c\\\\d,e");
    }
}
