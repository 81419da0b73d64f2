//! Test names as the generated programs carry them: which names a program
//! can hold ([`check`]), and how a list of names is passed to its `--test`
//! flag ([`test_list`]).
//!
//! A name travels far: into C string literals, JSON result lines, the
//! `axb-run:` header comment of every shader (read back by the Vulkan host
//! and the Metal harness to the end of the line), the `--test` list of a
//! program's command line, journals, result CSVs and lists of names
//! (`backends run --only`). There is one rule for test names in the whole
//! toolchain, [`progress_litmus::axb::test::check_name`] (1 to 64 characters from
//! `A-Z a-z 0-9 _ . + -`), enforced where tests are loaded; a name that
//! passes it needs no escaping anywhere. [`check`] applies that same rule
//! again before anything is emitted or run, so that a test built in memory
//! by a library caller cannot slip through, and the generated programs
//! still escape `,` and `\` in `--test` lists (`a\,b` names `a,b`) and
//! quote CSV cells, as a second line of defence.

use crate::excerpt::excerpt;

/// Why `name` cannot be carried by a program, if it cannot: the one name
/// rule of [`progress_litmus::axb::test::check_name`].
pub fn check(name: &str) -> Result<(), String> {
    progress_litmus::axb::test::check_name(name).map_err(|why| {
        format!(
            "the test name `{}` cannot be carried by the generated programs: {why}; rename the test",
            excerpt(name)
        )
    })
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
    fn names_outside_the_one_rule_are_refused_with_the_reason() {
        for ok in ["2t2i_0", "axb-canary", "a.b+c", &"x".repeat(64)] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for bad in ["", "a,b", "a\"b", "a\\", "a\nb", "a\0b", " a", "-a", "é"] {
            let e = check(bad).unwrap_err();
            assert!(e.contains("cannot be carried"), "{bad:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = check(&"x".repeat(10_000_000)).unwrap_err();
        assert!(e.len() < 400, "{e}");
    }

    #[test]
    fn test_lists_escape_commas_and_backslashes() {
        assert_eq!(test_list(&["a", "b"]), "a,b");
        assert_eq!(test_list(&["a,b", "c\\d", "e"]), "a\\,b,c\\\\d,e");
    }
}
