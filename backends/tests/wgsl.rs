//! The WGSL target and the webgpu page, without a browser: every published
//! test x mapping x shape validates with naga in-process (WGSL's uniformity
//! rules included, see `backends::target::wgsl::validate`), the page embeds
//! exactly the shaders `emit --target wgsl` writes, and `emit --check`
//! catches a broken shader or page.

use backends::target::emit::{files, EmitOptions, Target};
use backends::target::{webgpu, wgsl};
use backends::{Mapping, Shape};
use progress_litmus::axb::load::{load_all, NamedTest};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn published() -> Vec<NamedTest> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests");
    let (tests, errors) = load_all(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(tests.len(), 483);
    tests
}

fn opts(target: Target, shape: Shape) -> EmitOptions {
    EmitOptions {
        target,
        mappings: Mapping::ALL.to_vec(),
        instances: None,
        shape,
        deadline_ms: 20_000,
        program_name: "oopsla21".into(),
        bare: false,
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("wgsl-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn every_published_test_validates_with_naga_under_every_mapping_and_shape() {
    let tests = published();
    for shape in [Shape::Switch, Shape::IfChain] {
        let out = files(&tests, &opts(Target::Wgsl, shape)).unwrap();
        assert_eq!(out.len(), 483 * 3);
        let failures: Vec<String> = out
            .par_iter()
            .filter_map(|f| {
                wgsl::validate(&f.contents)
                    .err()
                    .map(|e| format!("{}: {e}", f.path.display()))
            })
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        // Same instance counts and memory as the GLSL shaders: the same
        // `axb-run:` line, test by test.
        let glsl = files(&tests, &opts(Target::Glsl, shape)).unwrap();
        for (w, g) in out.iter().zip(&glsl) {
            assert_eq!(w.path.with_extension(""), g.path.with_extension(""));
            // (GLSL starts with `#version`, then the same line.)
            assert_eq!(w.contents.lines().next(), g.contents.lines().nth(1));
        }
    }
}

#[test]
fn every_spin_loop_spends_the_budget_and_every_thread_is_counted_once() {
    let tests = published();
    for f in files(&tests, &opts(Target::Wgsl, Shape::Switch)).unwrap() {
        let s = &f.contents;
        // One loop per thread, each starting with the budget check.
        assert_eq!(
            s.matches("while (pc != ").count(),
            s.matches("if (axb_leave(&left, &why)) { break; }").count(),
            "{}",
            f.path.display()
        );
        assert!(!s.contains("loop {"), "{}", f.path.display());
        // The threads' end is counted after the dispatch, once.
        assert_eq!(s.matches("atomicAdd(&ends.finished, 1u)").count(), 1);
    }
}

#[test]
fn the_page_embeds_the_wgsl_shaders_and_validates() {
    let tests: Vec<NamedTest> = published().into_iter().take(40).collect();
    let page = files(&tests, &opts(Target::Webgpu, Shape::Switch)).unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].path, PathBuf::from("oopsla21.html"));
    let html = &page[0].contents;
    let e = webgpu::embedded(html).unwrap();
    let shaders = files(&tests, &opts(Target::Wgsl, Shape::Switch)).unwrap();
    let flat: Vec<&String> = e.shaders.iter().flatten().collect();
    assert_eq!(flat.len(), shaders.len());
    for (embedded, emitted) in flat.iter().zip(&shaders) {
        // The same shader, but for the emitting target named in line 2.
        assert_eq!(
            embedded.replacen("--target webgpu", "--target wgsl", 1),
            emitted.contents
        );
    }
    assert_eq!(e.data["suite"]["fnv64"], webgpu::suite_fingerprint(&tests));
    assert_eq!(e.data["tests"][0][0], tests[0].name);
    webgpu::check_page(html).unwrap();
    // The canaries: one thread, one and 65535 workgroups.
    assert!(e.canaries[0]
        .starts_with("// axb-run: mapping=plain instances=1 workgroups=1 words=1 test=axb-canary"));
    assert!(e.canaries[1]
        .starts_with("// axb-run: mapping=round-robin instances=65535 workgroups=65535"));
    // Self-contained: nothing is fetched, but for "Send my results", which
    // posts to the server the page came from (`backends serve`), nowhere
    // else.
    assert_eq!(html.matches("fetch(").count(), 1);
    assert!(html.contains("fetch(\"upload\", {"));
    for bad in [
        "<link",
        " src=",
        "@import",
        "XMLHttpRequest",
        "http://",
        "https://",
    ] {
        assert!(!html.contains(bad), "the page refers to `{bad}`");
    }
}

/// Issue 46, item 5: `emit --check` read the page's gzip with a
/// single-member decoder, so a second member appended to the embedded
/// shaders (here: a shader that does not validate) went unchecked. Now
/// any byte after the first member is refused (a bomb that unpacks past
/// the input limit too: `webgpu.rs`'s unit test).
#[test]
fn a_page_with_more_than_its_gzip_member_fails_the_check() {
    use base64::Engine;
    use std::io::Write;
    let tests: Vec<NamedTest> = published().into_iter().take(2).collect();
    let page = files(&tests, &opts(Target::Webgpu, Shape::Switch)).unwrap();
    let html = &page[0].contents;
    webgpu::check_page(html).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD;
    let data = webgpu::embedded(html).unwrap().data;
    let packed = data["shaders"].as_str().unwrap().to_string();
    let gz = |text: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text).unwrap();
        e.finish().unwrap()
    };
    let mut two = b64.decode(&packed).unwrap();
    two.extend(gz(br#"[["@compute fn broken( {"]]"#));
    let forged = html.replace(&packed, &b64.encode(&two));
    let e = webgpu::check_page(&forged).unwrap_err();
    assert!(
        e.contains("bytes after the end of their gzip stream"),
        "{e}"
    );
}

#[test]
fn emit_check_validates_wgsl_and_pages_and_names_a_broken_file() {
    let dir = scratch("check");
    let test = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests/2t2i_0.txt");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_backends"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = dir.join("wgsl");
    let o = run(&[
        "emit",
        "--target",
        "wgsl",
        "--check",
        test.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("2t2i_0.chunked.wgsl").is_file());
    let page = dir.join("page");
    let o = run(&[
        "emit",
        "--target",
        "webgpu",
        "--check",
        test.to_str().unwrap(),
        "--out",
        page.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(page.join("2t2i_0.html").is_file());

    // A shader with a barrier in non-uniform control flow: refused.
    let f = out.join("2t2i_0.plain.wgsl");
    let src = std::fs::read_to_string(&f).unwrap();
    let broken = src.replacen(
        "var pc: u32 = 0u;",
        "var pc: u32 = 0u;\n    if (atomicLoad(&mem[0]) == 0u) { storageBarrier(); }",
        1,
    );
    assert!(wgsl::validate(&broken).unwrap_err().contains("a barrier"));
    let typo = src.replacen("atomicExchange", "atomicExchnge", 1);
    let e = wgsl::validate(&typo).unwrap_err();
    assert!(e.contains("atomicExchnge"), "{e}");
}
