//! The layout of `backends/src` keeps its promises (see `src/lib.rs`):
//! dependencies between its parts run one way, no two files import each
//! other (directly or around a circle), and `synth` uses only the small API
//! of `backends::target`.
//!
//! The files are read as text: every `crate::` path outside comments
//! (grouped `use crate::a::{b, c::{d}}` included) is resolved to the file
//! of the longest module prefix it names. A `super::` path would hide a
//! dependency from this check, so the only one allowed is a test module's
//! `use super::*`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Which parts each part may use (besides itself). `mapping`,
/// `toolchain`, `excerpt` and `json` are the shared ground below the three parts;
/// `cli`, the command line, is above them all, and no part may use it.
const ALLOWED: [(&str, &[&str]); 10] = [
    (
        "cli",
        &[
            "serve",
            "campaign",
            "target",
            "report",
            "mapping",
            "toolchain",
            "excerpt",
            "glossary",
            "json",
        ],
    ),
    (
        "serve",
        &[
            "campaign", "target", "report", "mapping", "excerpt", "glossary", "json",
        ],
    ),
    (
        "campaign",
        &[
            "target",
            "report",
            "mapping",
            "toolchain",
            "excerpt",
            "glossary",
            "json",
        ],
    ),
    (
        "target",
        &["mapping", "toolchain", "excerpt", "glossary", "json"],
    ),
    ("report", &["mapping", "excerpt", "glossary", "json"]),
    ("mapping", &[]),
    ("toolchain", &[]),
    ("excerpt", &[]),
    ("glossary", &[]),
    ("json", &["excerpt"]),
];

/// What another crate may use of `backends` (see `backends::target`).
const PUBLIC_API: [&str; 8] = [
    "target::test_sources",
    "target::Source",
    "target::Shape",
    "target::runner_script",
    // The explorer's kernel programs: their code per language.
    "target::kernel::emit",
    "target::kernel::Lang",
    // The words of every page (the explorer's too).
    "glossary::html",
    // The clap command line, for synth/tests/interface.rs, which walks
    // every command of the three tools (issue 23 item 7).
    "cli::command",
];

/// The source without comment lines (doc comments name modules in links
/// without depending on them).
fn code(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Parses a path tail at `s` (after `prefix::`): segments, maybe ending in
/// a `{...}` group; pushes every full path (segments joined by `::`).
fn paths_at(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut segs = prefix.to_vec();
    let mut i = 0;
    let b = s.as_bytes();
    loop {
        let start = i;
        while i < s.len() && is_ident(b[i] as char) {
            i += 1;
        }
        if i > start {
            segs.push(s[start..i].to_string());
        }
        if s[i..].starts_with("::") {
            i += 2;
            if s[i..].starts_with('{') {
                i += 1;
                loop {
                    while i < s.len() && (b[i] as char).is_whitespace() {
                        i += 1;
                    }
                    if i >= s.len() {
                        return i;
                    }
                    if b[i] == b'}' {
                        return i + 1;
                    }
                    if b[i] == b',' {
                        i += 1;
                        continue;
                    }
                    let word_at = |i: usize, w: &str| {
                        s[i..].starts_with(w)
                            && !is_ident(*b.get(i + w.len()).unwrap_or(&b' ') as char)
                    };
                    if word_at(i, "self") {
                        out.push(segs.clone());
                        i += 4;
                        continue;
                    }
                    if word_at(i, "as") {
                        // `Name as Other`: the name is the path, not the alias.
                        i += 2;
                        while i < s.len() && (b[i] as char).is_whitespace() {
                            i += 1;
                        }
                        while i < s.len() && is_ident(b[i] as char) {
                            i += 1;
                        }
                        continue;
                    }
                    let used = paths_at(&s[i..], &segs, out);
                    if used == 0 {
                        // `*`: skip it.
                        i += 1;
                    }
                    i += used;
                }
            }
            continue;
        }
        if segs.len() > prefix.len() {
            out.push(segs);
        }
        return i;
    }
}

/// Every path that follows `root::` in `text` (outside comment lines), as
/// segments after `root`.
fn paths_after(text: &str, root: &str) -> Vec<Vec<String>> {
    let text = code(text);
    let needle = format!("{root}::");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(k) = text[from..].find(&needle) {
        let at = from + k;
        let before = text[..at].chars().next_back();
        from = at + needle.len();
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        // Back up over the `::` so the parser sees `root` as a prefix.
        let mut v = Vec::new();
        paths_at(&text[from - 2..], &[], &mut v);
        out.extend(v);
    }
    out
}

/// The `super::` uses other than `use super::*`.
fn super_uses(text: &str) -> Vec<String> {
    code(text)
        .lines()
        .filter(|l| l.contains("super::") && l.trim() != "use super::*;")
        .map(|l| l.trim().to_string())
        .collect()
}

/// The module of each file under `src` (`target/mod.rs`: `target`,
/// `target/glsl.rs`: `target::glsl`, `lib.rs`: `lib`) and its text.
fn modules(src: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<String, String>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, src, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(src).unwrap().with_extension("");
                let mut segs: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if segs.last().is_some_and(|s| s == "mod") {
                    segs.pop();
                }
                out.insert(segs.join("::"), std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The module of `modules` a path names: its longest prefix that is one.
fn resolve(path: &[String], modules: &BTreeSet<&str>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|k| path[..k].join("::"))
        .find(|m| modules.contains(m.as_str()))
}

/// Every broken promise of a crate made of `files` (module, text).
fn violations(files: &BTreeMap<String, String>) -> Vec<String> {
    let names: BTreeSet<&str> = files.keys().map(String::as_str).collect();
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.into_iter().collect();
    let mut errors = Vec::new();
    let mut graph: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in files {
        for s in super_uses(text) {
            errors.push(format!(
                "{module}: `{s}`: use a crate:: path, which this check can see"
            ));
        }
        let part = module.split("::").next().unwrap();
        let Some(may) = allowed.get(part) else {
            errors.push(format!(
                "{module}: not in a known part ({:?}): add it to ALLOWED",
                allowed.keys().collect::<Vec<_>>()
            ));
            continue;
        };
        let deps = graph.entry(module).or_default();
        for path in paths_after(text, "crate") {
            let Some(dep) = resolve(&path, &names) else {
                continue;
            };
            let dep_part = dep.split("::").next().unwrap();
            if dep_part != part && !may.contains(&dep_part) {
                errors.push(format!(
                    "{module} uses crate::{}: {part} must not depend on {dep_part}",
                    path.join("::")
                ));
            }
            // A folder's mod.rs declares its files; that is not a use.
            if dep != *module {
                deps.insert(dep);
            }
        }
    }
    // Circles: a depth-first search that reports each back edge's circle.
    fn visit<'a>(
        m: &'a str,
        graph: &'a BTreeMap<&'a str, BTreeSet<String>>,
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
        errors: &mut Vec<String>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(at) = stack.iter().position(|s| *s == m) {
            let mut circle: Vec<&str> = stack[at..].to_vec();
            circle.push(m);
            errors.push(format!("import circle: {}", circle.join(" -> ")));
            return;
        }
        stack.push(m);
        for d in graph.get(m).into_iter().flatten() {
            visit(d, graph, stack, done, errors);
        }
        stack.pop();
        done.insert(m);
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done, &mut errors);
    }
    errors
}

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn parts_depend_one_way_and_files_form_no_circle() {
    // The crate root and the binaries see every part; they are not parts.
    let mut files = modules(&src());
    files.remove("lib");
    files.remove("main");
    files.remove("wgpu_main");
    for m in [
        "mapping",
        "toolchain",
        "excerpt",
        "target::emit",
        "campaign::run",
        "report::analysis",
        "cli::emit",
    ] {
        assert!(files.contains_key(m), "{m} not found: is the layout moved?");
    }
    let errors = violations(&files);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn synth_uses_only_the_public_emit_api() {
    let synth = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../synth");
    let mut used = BTreeSet::new();
    for dir in ["src", "tests"] {
        let files = modules(&synth.join(dir));
        for (m, text) in &files {
            for p in paths_after(text, "backends") {
                used.insert((p.join("::"), format!("synth/{dir} {m}")));
            }
        }
    }
    assert!(
        used.iter().any(|(p, _)| p == "target::test_sources"),
        "the explorer no longer shows emitted code? {used:?}"
    );
    let stray: Vec<_> = used
        .iter()
        .filter(|(p, _)| {
            // A variant or method of an API type, e.g. `target::Shape::Switch`.
            !PUBLIC_API
                .iter()
                .any(|api| p == api || p.starts_with(&format!("{api}::")))
        })
        .collect();
    assert!(
        stray.is_empty(),
        "synth uses backends beyond {PUBLIC_API:?}: {stray:?}"
    );
}

/// The check itself: each promise, broken on purpose, is caught.
#[test]
fn the_check_catches_each_broken_promise() {
    let crate_of = |files: &[(&str, &str)]| -> BTreeMap<String, String> {
        files
            .iter()
            .map(|(m, t)| (m.to_string(), t.to_string()))
            .collect()
    };
    let ok = crate_of(&[
        ("mapping", ""),
        ("toolchain", ""),
        ("target", "pub mod emit;\npub mod glsl;"),
        ("target::glsl", "use crate::mapping::Layout;"),
        (
            "target::emit",
            "use crate::target::{\n    glsl,\n    File,\n};\nuse crate::toolchain;",
        ),
        ("report::results", "use crate::mapping::Mapping;"),
        (
            "campaign::run",
            "use crate::{mapping::Mapping, report::results::{self, Cell}};\nfn f() { crate::target::emit::files(); }",
        ),
    ]);
    assert_eq!(violations(&ok), Vec::<String>::new());

    let mut upward = ok.clone();
    upward.insert(
        "report::chart".into(),
        "// crate::campaign in a comment is fine\nuse crate::{mapping, campaign::run::{self}};"
            .into(),
    );
    let e = violations(&upward);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].contains("report must not depend on campaign"), "{e:?}");

    let mut sideways = ok.clone();
    sideways.insert(
        "target::cuda".into(),
        "fn f() { crate::report::results::write(); }".into(),
    );
    assert!(violations(&sideways)
        .iter()
        .any(|e| e.contains("target must not depend on report")));

    let mut circle = ok.clone();
    circle.insert(
        "target::glsl".into(),
        "use crate::mapping::Layout;\nuse crate::target::emit::File;".into(),
    );
    let e = violations(&circle);
    assert!(
        e.iter().any(|e| e.contains("import circle")
            && e.contains("target::emit")
            && e.contains("target::glsl")),
        "{e:?}"
    );

    let mut hidden = ok.clone();
    hidden.insert("target::amber".into(), "use super::glsl;".into());
    assert!(violations(&hidden)
        .iter()
        .any(|e| e.contains("use super::glsl")));

    // The command line uses every part; no part uses it.
    let mut top = ok.clone();
    top.insert(
        "cli::emit".into(),
        "use crate::target::emit;\nuse crate::{campaign::run, report::results};".into(),
    );
    assert_eq!(violations(&top), Vec::<String>::new());
    top.insert(
        "target::cuda".into(),
        "fn f() { crate::cli::emit::run(); }".into(),
    );
    let e = violations(&top);
    assert!(
        e.iter()
            .any(|e| e.contains("target must not depend on cli")),
        "{e:?}"
    );

    let mut stranger = ok;
    stranger.insert("extra".into(), String::new());
    assert!(violations(&stranger)
        .iter()
        .any(|e| e.contains("extra: not in a known part")));
}

#[test]
fn paths_are_read_through_groups() {
    let p = paths_after(
        "use crate::a::{self, b::{c, D as E}, *, e};\nlet x = crate::f::g(1);\nmycrate::h::i;\nuse crate::j::*;",
        "crate",
    );
    let p: Vec<String> = p.iter().map(|s| s.join("::")).collect();
    assert_eq!(p, ["a", "a::b::c", "a::b::D", "a::e", "f::g", "j"]);
}
