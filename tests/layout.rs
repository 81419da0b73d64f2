//! The layout of the workspace keeps its promises (ARCHITECTURE.md):
//!
//! - the crates depend one way: `progress_litmus` <- `oracle` <- `backends` <- `synth`
//!   (each crate's `[dependencies]` name only crates to its left);
//! - inside every crate, no two files import each other, directly or
//!   around a circle;
//! - every JSON writer goes through `oracle::json`, which escapes what a
//!   terminal would act on;
//! - standard output is written through one writer
//!   (`progress_litmus::io::write_stdout`), and Tarjan's algorithm, the
//!   attractor and the breadth-first search are written once for the
//!   engines (`progress_litmus::graph`).
//!
//! Files are read as text. Every `crate::`, `super::` and `self::` path
//! outside comments and test modules is resolved to the file of the longest
//! module prefix it names, and a bare path in a `use` of a `lib.rs`,
//! `main.rs` or `mod.rs` to its child module. A use of an ancestor module
//! (a `mod.rs` or `lib.rs`, the facade of the files below it) is not an
//! edge: a child may name what its parent declares. Test modules
//! (`#[cfg(test)]` to the end of the file) are left out: a test may reach
//! anywhere. `backends/tests/layout.rs` checks the finer rules of
//! `backends` (which of its parts may use which).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates in their one order: each may depend only on those before it.
const CRATES: [(&str, &str); 4] = [
    ("progress_litmus", "."),
    ("oracle", "oracle"),
    ("backends", "backends"),
    ("synth", "synth"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The source without comments and without the test module at the end.
fn code(text: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        let t = l.trim_start();
        let next = lines.peek().map_or("", |n| n.trim_start());
        if t.starts_with("#[cfg(test)]") && next.starts_with("mod ") {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push(l.split(" //").next().unwrap_or(l));
    }
    out.join("\n")
}

/// Every `.rs` file under `dir`, with its module path (`a/b.rs` and
/// `a/b/mod.rs` are `["a", "b"]`; `lib.rs` and `main.rs` are `[]`).
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<Vec<String>, PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let name = e.file_name().into_string().unwrap();
        if path.is_dir() {
            let mut p = prefix.to_vec();
            p.push(name);
            modules(&path, &p, out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let mut p = prefix.to_vec();
            if !matches!(stem, "mod" | "lib" | "main") {
                p.push(stem.to_string());
            }
            // A second binary's `*_main.rs` sits beside `main.rs`: keep both.
            if p.is_empty() && stem == "main" {
                p.push("<main>".into());
            }
            out.insert(p, path);
        }
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The paths starting at `s` (after `crate::` and the like): segments,
/// maybe ending in a `{...}` group, each pushed whole.
fn paths_at(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let b = s.as_bytes();
    let mut segs = prefix.to_vec();
    let mut i = 0;
    loop {
        let start = i;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        if i > start {
            segs.push(s[start..i].to_string());
        }
        if s[i..].starts_with("::{") {
            i += 3;
            loop {
                while i < b.len() && (b[i] as char).is_whitespace() {
                    i += 1;
                }
                if i >= b.len() {
                    return i;
                }
                match b[i] {
                    b'}' => return i + 1,
                    b',' => i += 1,
                    // A glob or anything else that is not a path: skip it.
                    _ => i += paths_at(&s[i..], &segs, out).max(1),
                }
            }
        } else if s[i..].starts_with("::") {
            i += 2;
        } else {
            out.push(segs);
            return i;
        }
    }
}

/// The module paths `file` (module `me`) refers to.
fn references(text: &str, me: &[String], is_facade: bool) -> Vec<Vec<String>> {
    let code = code(text);
    let mut out = Vec::new();
    let b = code.as_bytes();
    for (at, _) in code.match_indices("::") {
        // The word before `::`, if it starts a path.
        let mut s = at;
        while s > 0 && is_ident(b[s - 1]) {
            s -= 1;
        }
        if s > 0 && (b[s - 1] == b':' || is_ident(b[s - 1])) {
            continue; // inside a longer path
        }
        let word = &code[s..at];
        let base: Vec<String> = match word {
            "crate" => vec![],
            "self" => me.to_vec(),
            "super" => {
                let mut p = me.to_vec();
                let mut rest = &code[at + 2..];
                p.pop();
                while let Some(r) = rest.strip_prefix("super::") {
                    p.pop();
                    rest = r;
                }
                let skip = code.len() - rest.len();
                paths_at(&code[skip..], &p, &mut out);
                continue;
            }
            _ => continue,
        };
        paths_at(&code[at + 2..], &base, &mut out);
    }
    if is_facade {
        // `use child::Item;` in a lib.rs, main.rs or mod.rs.
        for line in code.lines() {
            let t = line.trim_start();
            let t = t.strip_prefix("pub ").unwrap_or(t);
            if let Some(rest) = t.strip_prefix("use ") {
                if !rest.starts_with("crate::")
                    && !rest.starts_with("super::")
                    && !rest.starts_with("self::")
                {
                    let mut paths = Vec::new();
                    paths_at(rest, me, &mut paths);
                    out.extend(paths);
                }
            }
        }
    }
    out
}

/// The import graph of one crate's `src/`: file -> files it uses.
fn graph(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut mods = BTreeMap::new();
    modules(src, &[], &mut mods);
    let mut g: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (me, file) in &mods {
        let me_path: Vec<String> = me.iter().filter(|s| *s != "<main>").cloned().collect();
        let name = file.file_name().unwrap().to_str().unwrap();
        let facade = matches!(name, "lib.rs" | "main.rs" | "mod.rs");
        let text = std::fs::read_to_string(file).unwrap();
        let edges = g.entry(file.clone()).or_default();
        for path in references(&text, &me_path, facade) {
            // The longest prefix that is a module file.
            let target = (1..=path.len())
                .rev()
                .find_map(|n| mods.get(&path[..n]).map(|f| (n, f)));
            let Some((n, target)) = target else { continue };
            let is_ancestor = n <= me_path.len() && path[..n] == me_path[..n];
            if target != file && !is_ancestor {
                edges.insert(target.clone());
            }
        }
    }
    g
}

/// A circle in `g`, if there is one, as the files around it.
fn circle(g: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    // 0 unvisited, 1 on the stack, 2 done.
    fn visit(
        n: &PathBuf,
        g: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        state: &mut BTreeMap<PathBuf, u8>,
        stack: &mut Vec<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        state.insert(n.clone(), 1);
        stack.push(n.clone());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m).copied().unwrap_or(0) {
                1 => {
                    let i = stack.iter().position(|x| x == m).unwrap();
                    let mut c = stack[i..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut found = Vec::new();
    for (name, dir) in CRATES {
        let src = root().join(dir).join("src");
        if let Some(c) = circle(&graph(&src)) {
            let files: Vec<String> = c
                .iter()
                .map(|p| p.strip_prefix(root()).unwrap().display().to_string())
                .collect();
            found.push(format!("{name}: {}", files.join(" -> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// The checker itself finds the circles it must: the two the oracle had
/// (issue 19), rebuilt in a scratch tree.
#[test]
fn a_circle_is_found() {
    let dir = std::env::temp_dir().join(format!("axb-layout-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("kernel")).unwrap();
    let w = |p: &str, s: &str| std::fs::write(dir.join(p), s).unwrap();
    w(
        "lib.rs",
        "pub mod decide;\npub mod shared_space;\npub mod kernel;\n",
    );
    w("decide.rs", "use crate::shared_space::{Info, Space};\n");
    w(
        "shared_space.rs",
        "/// see crate::decide\npub struct S { w: crate::decide::Work }\n",
    );
    w(
        "kernel/mod.rs",
        "pub mod check;\npub mod product;\npub mod symmetry;\n",
    );
    w(
        "kernel/check.rs",
        "use super::product::{Kernel, Product};\n",
    );
    w(
        "kernel/product.rs",
        "use super::symmetry::Symmetry;\nuse super::KernelError;\n",
    );
    w("kernel/symmetry.rs", "use super::check;\n");
    let g = graph(&dir);
    let c = circle(&g).expect("a circle");
    let names: Vec<_> = c
        .iter()
        .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
        .collect();
    assert!(
        names.contains(&"decide.rs".to_string()) || names.contains(&"kernel/check.rs".to_string()),
        "{names:?}"
    );
    // Break the first: the second is still found.
    w("shared_space.rs", "/// see crate::decide\npub struct S;\n");
    let c = circle(&graph(&dir)).expect("the kernel circle");
    assert_eq!(c.len(), 4, "{c:?}");
    // Break the second: none is left; the facade (`super::KernelError`)
    // and the comment are not edges.
    w("kernel/symmetry.rs", "pub struct Symmetry;\n");
    let left = circle(&graph(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(left, None);
}

/// The `[dependencies]` of each crate name only crates before it in
/// [`CRATES`].
#[test]
fn crates_depend_one_way() {
    let names: Vec<&str> = CRATES.iter().map(|(n, _)| *n).collect();
    for (i, (name, dir)) in CRATES.iter().enumerate() {
        let manifest = std::fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap();
        let mut section = String::new();
        for line in manifest.lines() {
            let t = line.trim();
            if t.starts_with('[') {
                section = t.to_string();
                continue;
            }
            if section != "[dependencies]" {
                continue;
            }
            let dep = t.split(['.', ' ', '=']).next().unwrap_or("");
            if let Some(j) = names.iter().position(|n| *n == dep) {
                assert!(
                    j < i,
                    "{name} depends on {dep}: crates depend one way, {}",
                    names.join(" <- ")
                );
            }
        }
    }
}

/// Adversarial finding 12: serde_json escapes only characters below
/// U+0020, so C1 controls and bidi marks of an input went out raw in every
/// JSON output. Every JSON writer of the three tools goes through
/// `oracle::json` (serde_json, then `progress_litmus::json::escape_unprintable`):
/// no crate's code outside that file calls serde_json's writers.
#[test]
fn every_json_writer_goes_through_oracle_json() {
    let mut found = Vec::new();
    for (_, dir) in CRATES {
        let mut mods = BTreeMap::new();
        modules(&root().join(dir).join("src"), &[], &mut mods);
        for file in mods.values() {
            if file.ends_with("oracle/src/json.rs") {
                continue;
            }
            let text = code(&std::fs::read_to_string(file).unwrap());
            for writer in [
                "serde_json::to_string",
                "serde_json::to_vec",
                "serde_json::to_writer",
            ] {
                if text.contains(writer) {
                    found.push(format!("{}: {writer}", file.display()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "use oracle::json instead (it escapes what a terminal would act on): {found:#?}"
    );
}

/// Issue 45: the plumbing and the graph algorithms are written once. Where
/// code names one of these markers, it is one of the files allowed to,
/// each for the reason given.
#[test]
fn plumbing_and_graph_algorithms_are_written_once() {
    let allowed: [(&str, &[(&str, &str)]); 5] = [
        (
            "std::io::stdout()",
            &[
                ("src/io/output.rs", "the one stdout writer"),
                (
                    "synth/src/cli/merge.rs",
                    "streams a merge too large to hold",
                ),
                ("backends/src/serve/mod.rs", "flushes its address line"),
            ],
        ),
        (
            "BrokenPipe",
            &[
                ("src/io/output.rs", "the one stdout writer"),
                (
                    "synth/src/cli/merge.rs",
                    "streams a merge too large to hold",
                ),
            ],
        ),
        (
            "low[v]",
            &[
                ("src/graph.rs", "the one Tarjan"),
                ("oracle/src/axb/decide.rs", "the independent cross-check"),
            ],
        ),
        // Attractors and backward reachability walk incoming edges.
        (
            "Incoming",
            &[("src/graph.rs", "the one attractor (its work list)")],
        ),
        // A breadth-first search records each node's tree edge.
        (
            "parent[",
            &[("src/graph.rs", "the one breadth-first search")],
        ),
    ];
    let mut found = Vec::new();
    for (_, dir) in CRATES {
        let mut mods = BTreeMap::new();
        modules(&root().join(dir).join("src"), &[], &mut mods);
        for file in mods.values() {
            let rel = file
                .strip_prefix(root())
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let text = code(&std::fs::read_to_string(file).unwrap());
            for (marker, files) in &allowed {
                if text.contains(marker) && !files.iter().any(|(f, _)| *f == rel) {
                    found.push(format!("{rel}: {marker}"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "write through progress_litmus::io (standard output) or progress_litmus::graph (components, attractors, breadth-first search): {found:#?}"
    );
}
