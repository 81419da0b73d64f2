//! No function outside test code is over [`LIMIT`] lines (issue 19: "no
//! giant functions"): a long function is split into helpers whose names
//! and doc comments say what each part does.
//!
//! Every `.rs` file of `src/`, `oracle/src/`, `backends/src/` and
//! `synth/src/` is read as text. Comments, string and character literals
//! are blanked first (so a `{` or a `fn` inside them counts for nothing);
//! then every `fn NAME` that has a body is measured from the line of its
//! `fn` to the line of its closing brace, wherever it stands (at the top
//! level, in an `impl` or `trait` block, nested in another function or a
//! module), whatever its qualifiers (`pub(crate)`, `const`, `async`,
//! `unsafe`, `extern "C"`) and however its signature is spread over lines
//! (generics, `where` clauses, `->` return types). Test code is skipped:
//! an item under `#[cfg(test)]` or `#[test]` (a `mod tests { ... }`, or a
//! `mod tests;` and its file), a file under `#![cfg(test)]`, and the
//! `tests/` and `benches/` folders, which are not walked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The most lines a function may take.
const LIMIT: usize = 80;

/// The source folders of the crates, from the workspace root.
const SOURCES: [&str; 4] = ["src", "oracle/src", "backends/src", "synth/src"];

/// A function with a body: its name, the 1-based line of its `fn` and its
/// length in lines (from that line to its closing brace's, both counted).
#[derive(Debug, PartialEq, Eq)]
struct Function {
    name: String,
    line: usize,
    lines: usize,
}

/// What a file holds beside its functions: the child modules that are
/// test code (`#[cfg(test)] mod NAME;`), whose files are skipped.
#[derive(Debug, Default, PartialEq, Eq)]
struct Scan {
    functions: Vec<Function>,
    test_modules: Vec<String>,
    /// `#![cfg(test)]`: the whole file is test code.
    test_file: bool,
}

/// `src` with comments and the contents of string and character literals
/// replaced by spaces, line breaks kept (so line numbers stay true) and
/// lifetimes (`'a`) kept as they are.
fn blank(src: &str) -> Vec<char> {
    let s: Vec<char> = src.chars().collect();
    let mut out = s.clone();
    let mut i = 0;
    let wipe = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut out[from..to.min(s.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    while i < s.len() {
        let at = |k: usize| s.get(i + k).copied().unwrap_or('\0');
        let ident_before = i > 0 && (s[i - 1].is_alphanumeric() || s[i - 1] == '_');
        if at(0) == '/' && at(1) == '/' {
            let end = s[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(s.len(), |p| i + p);
            wipe(&mut out, i, end);
            i = end;
        } else if at(0) == '/' && at(1) == '*' {
            let end = block_comment_end(&s, i);
            wipe(&mut out, i, end);
            i = end;
        } else if !ident_before && raw_string_start(&s, i).is_some() {
            let (open, hashes) = raw_string_start(&s, i).unwrap();
            let end = raw_string_end(&s, open + 1, hashes);
            wipe(&mut out, i, end);
            i = end;
        } else if at(0) == '"' || (at(0) == 'b' && at(1) == '"' && !ident_before) {
            let open = if at(0) == '"' { i } else { i + 1 };
            let end = quoted_end(&s, open + 1, '"');
            wipe(&mut out, i, end);
            i = end;
        } else if at(0) == '\'' && (at(1) == '\\' || (at(1) != '\0' && at(2) == '\'')) {
            let end = quoted_end(&s, i + 1, '\'');
            wipe(&mut out, i, end);
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// The index after the `*/` that closes the (nestable) comment at `i`.
fn block_comment_end(s: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < s.len() {
        if s[i] == '/' && s.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    s.len()
}

/// At a raw string (`r"`, `r#"`, `br##"`, ...): the index of its opening
/// quote and its number of `#`.
fn raw_string_start(s: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if s.get(j) == Some(&'b') {
        j += 1;
    }
    if s.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = s[j..].iter().take_while(|&&c| c == '#').count();
    (s.get(j + hashes) == Some(&'"')).then_some((j + hashes, hashes))
}

/// The index after the `"` and `hashes` `#` that close a raw string whose
/// contents start at `i`.
fn raw_string_end(s: &[char], mut i: usize, hashes: usize) -> usize {
    while i < s.len() {
        if s[i] == '"'
            && s[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return i + 1 + hashes;
        }
        i += 1;
    }
    s.len()
}

/// The index after the unescaped `close` that ends a literal whose
/// contents start at `i`.
fn quoted_end(s: &[char], mut i: usize, close: char) -> usize {
    while i < s.len() {
        match s[i] {
            '\\' => i += 2,
            c if c == close => return i + 1,
            _ => i += 1,
        }
    }
    s.len()
}

/// A word or a punctuation character of blanked code, with its position.
#[derive(Debug)]
struct Token {
    text: String,
    line: usize,
}

fn tokens(code: &[char]) -> Vec<Token> {
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < code.len() {
        let c = code[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < code.len() && (code[i].is_alphanumeric() || code[i] == '_') {
                i += 1;
            }
            let text = code[start..i].iter().collect();
            out.push(Token { text, line });
        } else if c == '-' && code.get(i + 1) == Some(&'>') {
            out.push(Token {
                text: "->".into(),
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                text: c.to_string(),
                line,
            });
            i += 1;
        }
    }
    out
}

/// The index of the `}` that closes the `{` at `open`.
fn closing(t: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, tok) in t.iter().enumerate().skip(open) {
        match tok.text.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    t.len() - 1
}

/// The index of the `{` that opens the body of the item whose signature
/// starts at `from`, or `None` when the item ends first (a `;`: a trait
/// method without a body, `mod name;`). Braces inside `()`, `[]` and `<>`
/// (a const generic argument) are not the body.
fn body(t: &[Token], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, tok) in t.iter().enumerate().skip(from) {
        match tok.text.as_str() {
            "(" | "[" | "<" => depth += 1,
            ")" | "]" | ">" => depth -= 1,
            "{" if depth <= 0 => return Some(k),
            ";" if depth <= 0 => return None,
            _ => {}
        }
    }
    None
}

/// The attribute `#[...]` or `#![...]` at `k`, as its words and marks
/// without spaces, and the index after it.
fn attribute(t: &[Token], k: usize) -> Option<(String, usize)> {
    let open = if t.get(k + 1)?.text == "!" {
        k + 2
    } else {
        k + 1
    };
    if t.get(open)?.text != "[" {
        return None;
    }
    let mut depth = 0;
    for (j, tok) in t.iter().enumerate().skip(open) {
        match tok.text.as_str() {
            "[" => depth += 1,
            "]" => {
                depth -= 1;
                if depth == 0 {
                    let text = t[open + 1..j].iter().map(|t| t.text.as_str()).collect();
                    return Some((text, j + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// Is this attribute's text (`cfg(test)`, `test`) a mark of test code?
fn marks_test(attr: &str) -> bool {
    attr == "test" || attr == "cfg(test)" || attr.starts_with("cfg(all(test,")
}

/// The functions of a source file, and its test modules.
fn scan(src: &str) -> Scan {
    let t = tokens(&blank(src));
    let mut out = Scan::default();
    let mut k = 0;
    while k < t.len() {
        if t[k].text == "#" {
            if let Some((attr, next)) = attribute(&t, k) {
                let inner = t[k + 1].text == "!";
                if inner && marks_test(&attr) {
                    out.test_file = true;
                    return out;
                }
                k = if marks_test(&attr) {
                    skip_test_item(&t, next, &mut out)
                } else {
                    next
                };
                continue;
            }
        }
        let named = t.get(k + 1).filter(|n| {
            let first = n.text.chars().next().unwrap_or('0');
            first.is_alphabetic() || first == '_'
        });
        if let (true, Some(name)) = (t[k].text == "fn", named) {
            if let Some(open) = body(&t, k + 2) {
                let close = closing(&t, open);
                out.functions.push(Function {
                    name: name.text.clone(),
                    line: t[k].line,
                    lines: t[close].line - t[k].line + 1,
                });
            }
        }
        k += 1;
    }
    out
}

/// Skips the test item whose attributes end at `k` (further attributes,
/// then the item to its `;` or its body's closing brace), noting a
/// `mod NAME;` as a test module; returns the index after it.
fn skip_test_item(t: &[Token], mut k: usize, out: &mut Scan) -> usize {
    while t.get(k).is_some_and(|tok| tok.text == "#") {
        match attribute(t, k) {
            Some((_, next)) => k = next,
            None => break,
        }
    }
    let Some(open) = body(t, k) else {
        let end = t[k..]
            .iter()
            .position(|tok| tok.text == ";")
            .map_or(t.len(), |p| k + p);
        if let Some(m) = t[k..end].iter().position(|tok| tok.text == "mod") {
            if let Some(name) = t.get(k + m + 1) {
                out.test_modules.push(name.text.clone());
            }
        }
        return end + 1;
    };
    closing(t, open) + 1
}

/// Every `.rs` file under `dir`, sorted, leaving out the files of test
/// modules.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The folder of the child modules of the module in `file`.
fn children_dir(file: &Path) -> PathBuf {
    let dir = file.parent().expect("a file is in a folder");
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib" | "main") => dir.to_path_buf(),
        Some(stem) => dir.join(stem),
        None => dir.to_path_buf(),
    }
}

/// The functions over [`LIMIT`], one message each (`FILE:LINE: fn NAME is N lines ...`), in file order.
/// `files` are (path from the root, text).
fn violations(files: &[(String, String)]) -> Vec<String> {
    let scans: Vec<Scan> = files.iter().map(|(_, text)| scan(text)).collect();
    let mut skipped: BTreeSet<PathBuf> = BTreeSet::new();
    for ((path, _), s) in files.iter().zip(&scans) {
        let dir = children_dir(Path::new(path));
        for m in &s.test_modules {
            skipped.insert(dir.join(format!("{m}.rs")));
            skipped.insert(dir.join(m).join("mod.rs"));
        }
    }
    let mut out = Vec::new();
    for ((path, _), s) in files.iter().zip(&scans) {
        if s.test_file || skipped.contains(Path::new(path)) {
            continue;
        }
        for f in s.functions.iter().filter(|f| f.lines > LIMIT) {
            out.push(format!(
                "{path}:{}: fn {} is {} lines, over {LIMIT}: split it into named helpers",
                f.line, f.name, f.lines
            ));
        }
    }
    out
}

#[test]
fn no_function_is_over_the_limit() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for dir in SOURCES {
        files(&root.join(dir), &mut paths);
    }
    assert!(paths.len() > 50, "the crates' sources were not found");
    let texts: Vec<(String, String)> = paths
        .iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    let bad = violations(&texts);
    assert!(bad.is_empty(), "functions too long:\n{}", bad.join("\n"));
}

// ---- the scanner itself, on sources written here ----

/// A function `name` of `n` lines in all, at `indent`, with `header`
/// before `fn` and `sig` after the name.
fn function(indent: &str, header: &str, name: &str, sig: &str, n: usize) -> String {
    let mut s = format!("{indent}{header}fn {name}{sig} {{\n");
    for k in 0..n - 2 {
        s.push_str(&format!("{indent}    let _x{k} = {k};\n"));
    }
    s.push_str(&format!("{indent}}}\n"));
    s
}

fn lengths(src: &str) -> Vec<(String, usize, usize)> {
    scan(src)
        .functions
        .into_iter()
        .map(|f| (f.name, f.line, f.lines))
        .collect()
}

#[test]
fn a_function_over_the_limit_fails_naming_file_line_and_function() {
    let src = format!(
        "use x;\n{}{}",
        function("", "pub ", "short", "()", 80),
        function("", "", "long", "()", 81)
    );
    let files = vec![("src/a.rs".to_string(), src)];
    assert_eq!(
        violations(&files),
        ["src/a.rs:82: fn long is 81 lines, over 80: split it into named helpers"]
    );
}

#[test]
fn qualifiers_impl_blocks_and_long_signatures_are_measured() {
    let mut src = String::from("impl<T: Clone> Thing<T>\nwhere\n    T: Default,\n{\n");
    src += &function("    ", "pub(crate) const ", "a", "()", 5);
    src += &function("    ", "pub(super) async unsafe ", "b", "(&self)", 6);
    src += "    pub fn c<F>(\n        f: F,\n        g: fn(u32) -> u32,\n    ) -> Result<[u8; 4], E>\n    where\n        F: Fn() -> u32,\n    {\n        f()\n    }\n";
    src += "    fn d(&self) -> Foo<{ N + 1 }> {\n        x\n    }\n";
    src += "    fn declared(&self);\n";
    src += "    pub extern \"C\" fn e() {\n        mod_inner();\n        fn nested() {\n            1\n        }\n    }\n";
    src += "}\n";
    assert_eq!(
        lengths(&src),
        [
            ("a".into(), 5, 5),
            ("b".into(), 10, 6),
            ("c".into(), 16, 9),
            ("d".into(), 25, 3),
            ("e".into(), 29, 6),
            ("nested".into(), 31, 3),
        ]
    );
}

#[test]
fn braces_and_fns_in_comments_and_literals_count_for_nothing() {
    let src = "fn f() {\n    let s = \"}\\\" fn g() {\";\n    let r = r#\"\"} fn h() {\"#;\n    let c = '}';\n    let d = '\\'';\n    let b = b'{';\n    // fn i() { }\n    /* } /* nested } */ fn j() {} */\n    let l: &'static str = x::<'a>();\n    0\n}\nfn after() {}\n";
    assert_eq!(lengths(src), [("f".into(), 1, 11), ("after".into(), 12, 1)]);
}

#[test]
fn test_code_is_skipped() {
    let long = function("    ", "", "long_test", "()", 90);
    let src = format!(
        "fn kept() {{}}\n#[cfg(test)]\nmod tests {{\n{long}}}\n#[test]\n{}#[cfg(test)]\n#[allow(dead_code)]\nmod more;\nfn last() {{}}\n",
        function("", "", "also_test", "()", 85)
    );
    let s = scan(&src);
    let names: Vec<&str> = s.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["kept", "last"]);
    assert_eq!(s.test_modules, ["more"]);
    // The file of a test module, and a file marked as test code, are left out.
    let big = function("", "", "big", "()", 81);
    let files = vec![
        ("src/kernel/mod.rs".to_string(), src.clone()),
        ("src/kernel/more.rs".to_string(), big.clone()),
        ("src/t.rs".to_string(), format!("#![cfg(test)]\n{big}")),
    ];
    assert!(violations(&files).is_empty());
    let files = vec![("src/kernel/other.rs".to_string(), big)];
    assert_eq!(violations(&files).len(), 1);
}
