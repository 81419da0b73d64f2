//! WGSL in: naga's `wgsl-in` frontend, its error at its position.

use crate::error::FileError;
use std::borrow::Cow;
use std::path::Path;

/// Parses WGSL text into naga's IR; a syntax or type error is one error at
/// its line and column.
pub fn parse(path: &Path, src: &str) -> Result<naga::Module, FileError> {
    let src = &*without_subgroups_enable(src);
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

/// `src` with its `enable subgroups;` directives blanked out (each byte a
/// space, line breaks kept, so positions stay): WGSL requires the
/// directive before the subgroup built-ins, and naga reads the built-ins
/// without it but refuses the directive ("not yet supported"). A
/// directive that also enables something else is left for naga to judge.
pub fn without_subgroups_enable(src: &str) -> Cow<'_, str> {
    let b = src.as_bytes();
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    loop {
        i = skip_trivia(b, i);
        let word: String = (b[i..].iter())
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .map(|&c| c as char)
            .collect();
        if !matches!(word.as_str(), "enable" | "requires" | "diagnostic") {
            break;
        }
        let Some(end) = src[i..].find(';').map(|k| i + k + 1) else {
            break;
        };
        let list = &src[i + word.len()..end - 1];
        let all_subgroups = list
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .all(|x| x == "subgroups");
        if word == "enable" && all_subgroups && !list.trim().is_empty() {
            blank.push((i, end));
        }
        i = end;
    }
    if blank.is_empty() {
        return Cow::Borrowed(src);
    }
    let mut out = b.to_vec();
    for (a, z) in blank {
        for c in &mut out[a..z] {
            if *c != b'\n' && *c != b'\r' {
                *c = b' ';
            }
        }
    }
    Cow::Owned(String::from_utf8(out).expect("only ASCII bytes were replaced"))
}

/// The position after the whitespace and comments from `i`.
fn skip_trivia(b: &[u8], mut i: usize) -> usize {
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            // Block comments nest in WGSL.
            i = super::shape::comment_end(b, i);
        } else {
            return i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::without_subgroups_enable as strip;

    #[test]
    fn the_subgroups_enable_is_blanked_in_place_and_nothing_else() {
        let src = "// c\n/* a /* nested */ b */ enable subgroups;\nenable f16;\nfn f() {}\n";
        let out = strip(src);
        assert_eq!(out.len(), src.len());
        assert!(!out.contains("subgroups"), "{out}");
        assert!(out.contains("enable f16;"), "{out}");
        assert_eq!(out.lines().count(), src.lines().count());
        for s in [
            "fn f() {}",
            "enable subgroups, f16;",
            "enable subgroups",
            "",
        ] {
            assert_eq!(strip(s), s);
        }
        assert_eq!(strip("enable subgroups,;"), "                  ");
        // After the first declaration, nothing is a directive.
        let late = "fn f() {}\nenable subgroups;";
        assert_eq!(strip(late), late);
    }
}
