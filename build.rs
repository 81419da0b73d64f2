//! Compiles the 483 published tests (`data/oopsla21/tests`) into the
//! library (see `src/axb/published.rs`), so the tools need no path to them.

use std::path::Path;

fn main() {
    // Read at run time, not with `env!`: a build script compiled for one
    // checkout is reused by cargo for another that shares the target
    // directory (a clone built with `CARGO_TARGET_DIR`, the README test), and
    // a compile-time path would point at the first checkout, perhaps deleted.
    let root = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&root).join("data/oopsla21/tests");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .into_string()
                .expect("an ASCII name")
        })
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    let mut out = String::from("&[\n");
    for n in &names {
        let path = dir.join(n);
        println!("cargo:rerun-if-changed={}", path.display());
        out.push_str(&format!(
            "    ({:?}, include_str!({:?})),\n",
            n,
            path.display().to_string()
        ));
    }
    out.push_str("]\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("published.rs");
    std::fs::write(dest, out).expect("write published.rs");
}
