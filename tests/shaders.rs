//! The shader frontend (issue 21, docs/KERNEL.md §10): translations of the
//! shaders in `suites/shaders/`, the refusal corpus, the value rule, and
//! mutated shaders.

use axb::kernel::shader::{translate, Launch};
use std::path::Path;

fn tr(path: &str) -> axb::kernel::shader::Translation {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let bytes = std::fs::read(&p).unwrap();
    match translate(&p, &bytes, &Launch::default()) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn spin_locks_translate() {
    for f in [
        "suites/shaders/spinlock.wgsl",
        "suites/shaders/peterson_glsl.comp",
    ] {
        let t = tr(f);
        eprintln!("{}", axb::kernel::shader::print::annotated(&t, f));
    }
}
