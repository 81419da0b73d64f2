//! The WebGPU target: one self-contained HTML page that runs a suite's WGSL
//! shaders ([`crate::target::wgsl`]) on the visitor's GPU and offers the
//! results as a file for `backends import --target webgpu`.
//!
//! The page needs no server and no network: it works from `file://` and
//! from any static host. It embeds the suite's shaders exactly as `backends
//! emit --target wgsl` writes them (gzip-compressed, unpacked by the
//! browser's `DecompressionStream`), the runner ([`runner_script`], shared
//! with `synth explorer`'s "run this test on my GPU") and the page's own
//! script (`templates/webgpu_page.js`). It shows the adapter, calibrates
//! the iteration budget into a time per run (default 100 ms, the deadline
//! the README once gave for a CUDA campaign of the published suite; a browser
//! must stay far below the seconds after which operating systems reset a
//! GPU), runs the canary (one thread waiting for a write nobody makes must
//! spend its budget) and refuses a device that fails it; then it runs
//! every test x mapping x iteration with a progress bar and live counts,
//! each result kept in the browser's storage (IndexedDB) the moment it is
//! known, so a stopped or reloaded page continues where it was.
//!
//! **The result file** (`<suite>.webgpu.jsonl`), one JSON object per line:
//!
//! ```text
//! {"axb":"webgpu-results","format":1,"target":"webgpu","suite":{"name":"oopsla21","tests":483,"fnv64":"..."},
//!  "shape":"switch","mappings":[...],"device":{"vendor":"...","architecture":"...",...},"settings":{...}}
//! {"event":"session","device":{...},"calibration":{"budget":...,"run_ms":...},"canary":{"ok":true,...},...}
//! {"test":"2t2i_0","target":"webgpu","mapping":"chunked","instances":32767,"workgroups":65534,"iteration":0,
//!  "terminated":false,"elapsed_ms":103.2,"budget":812345,"exhausted":1,"stopped":65533,"finished":0,"early":0}
//! {"event":"out-of-memory","message":"...","test":"...","mapping":"..."}
//! ```
//!
//! The header comes first; then, in the order they happened, a `session`
//! line per start (device, calibration, canary), the run lines (those of
//! the CUDA program, [`crate::target::host`], plus the budget and how the
//! threads ended) and `event` lines for anything that went wrong (no
//! WebGPU, a lost device, an out-of-memory or invalid dispatch, a refused
//! canary), so nothing is silently dropped. `import` checks the header's
//! target and suite fingerprint ([`suite_fingerprint`]) against the suite
//! it is given, and reports the events.

use crate::mapping::{Layout, Mapping};
use crate::target::codegen::Shape;
use crate::target::emitter::{Clash, Emitter, Suite};
use crate::target::File;
use crate::target::{host, templates, wgsl};
use crate::toolchain::ToolError;
use base64::Engine;
use progress_litmus::axb::load::NamedTest;
use progress_litmus::Model;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The least budget the canary runs with, whatever the calibration says: a
/// device that ends loops after a fixed count (llvmpipe: 65535 iterations)
/// shows it only to a canary that would spin longer. Also in
/// `templates/webgpu_runner.js`.
pub const CANARY_MIN_BUDGET: u32 = 1 << 20;

/// The `axb` value of a result file's header.
pub const RESULT_FILE_KIND: &str = "webgpu-results";

/// The identity of a suite: FNV-1a 64 of its tests' names and programs (in
/// the artifact's text format), sorted by name, so the same tests give the
/// same fingerprint whichever files or order they came in.
pub fn suite_fingerprint(tests: &[NamedTest]) -> String {
    progress_litmus::fingerprint::suite(tests)
}

/// The canary shaders: one workgroup (`plain`) and 65535 (`wide`,
/// round-robin), as `backends emit --target wgsl` writes them.
pub fn canaries(shape: Shape) -> (String, String) {
    let t = host::canary_test();
    let shader = |mapping| {
        wgsl::shader(&t, &Layout::new(mapping, 1, None), shape, "wgsl")
            .expect("the canary fits any WebGPU device")
    };
    (shader(Mapping::Plain), shader(Mapping::RoundRobin))
}

/// JSON for inside a `<script>`: `<` escaped so no string can end it.
fn script_json(v: &Value) -> String {
    oracle::json::to_string(v)
        .expect("JSON serializes")
        .replace('<', "\\u003c")
}

/// The runner script (`templates/webgpu_runner.js`) with the canary
/// shaders in `shape`: defines `AxbGpu`. The webgpu page and `synth
/// explorer` embed it, so both run shaders the same way.
pub fn runner_script(shape: Shape) -> String {
    let (plain, wide) = canaries(shape);
    templates::WEBGPU_RUNNER.replace(
        "/*@CANARY@*/ null",
        &script_json(&json!({ "plain": plain, "wide": wide })),
    )
}

fn gzip_base64(bytes: &[u8]) -> String {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(bytes).expect("in-memory gzip");
    base64::engine::general_purpose::STANDARD.encode(gz.finish().expect("in-memory gzip"))
}

/// Text for the page: `<>&"'` and control characters escaped (one rule
/// for every page of the three tools).
fn html_escape(s: &str) -> String {
    progress_litmus::error::html_escape(s)
}

/// The page for `tests` under `mappings`, named `name`; `shaders` are the
/// WGSL shaders in test order, each test's mappings in the order given.
pub fn page(
    name: &str,
    tests: &[NamedTest],
    mappings: &[Mapping],
    shaders: &[String],
    shape: Shape,
) -> String {
    assert_eq!(shaders.len(), tests.len() * mappings.len());
    let per_test: Vec<&[String]> = shaders.chunks(mappings.len().max(1)).collect();
    let packed = gzip_base64(
        &oracle::json::to_string(&per_test)
            .expect("JSON serializes")
            .into_bytes(),
    );
    let data = json!({
        "suite": {
            "name": name,
            "tests": tests.len(),
            "fnv64": suite_fingerprint(tests),
        },
        "shape": shape.name(),
        "mappings": mappings.iter().map(|m| m.name()).collect::<Vec<_>>(),
        "tests": tests.iter().map(|t| json!([t.name, t.entry.test.num_threads()])).collect::<Vec<_>>(),
        "models": Model::ALL.iter().map(|m| json!([m.name(), crate::glossary::model_words(m.name())])).collect::<Vec<_>>(),
        "conformance": conformance(tests),
        "import": import_command(name, tests),
        "shaders": packed,
    });
    templates::WEBGPU_PAGE
        .replace(
            "@TITLE@",
            &html_escape(&format!("{name}: progress litmus tests on your GPU")),
        )
        .replace("@CSS@", templates::WEBGPU_CSS)
        .replace("@GLOSSARY@", &crate::glossary::html())
        .replace("@DATA@", &script_json(&data))
        .replace("@RUNNER@", &runner_script(shape))
        .replace("@PAGE@", templates::WEBGPU_PAGE_JS)
}

/// Per test, the indexes in [`Model::ALL`] of the models it is a
/// conformance test of (it terminates under them), so that the page can
/// judge its own runs; `null` where the oracle cannot decide the test
/// within its default bound (the page then leaves it out of the answer).
/// A suite's stored verdicts are used, else computed.
fn conformance(tests: &[NamedTest]) -> Vec<Value> {
    let missing: Vec<&progress_litmus::Test> = tests
        .iter()
        .filter(|t| t.entry.verdicts.is_none())
        .map(|t| &t.entry.test)
        .collect();
    let mut computed = oracle::try_verdicts_all(&missing, oracle::DEFAULT_MAX_STATES).into_iter();
    tests
        .iter()
        .map(|t| {
            let v = match t.entry.verdicts {
                Some(v) => Some(v),
                None => computed.next().and_then(Result::ok),
            };
            v.map_or(Value::Null, |v| {
                json!(Model::ALL
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| v.passes(**m))
                    .map(|(i, _)| i)
                    .collect::<Vec<_>>())
            })
        })
        .collect()
}

/// The most test files a suggested `import` command names one by one.
const MAX_NAMED_FILES: usize = 16;

/// The `backends import` command for this page's result file: the suite
/// paths are where the tests were read, so that `import` loads exactly the
/// page's tests (its fingerprint check refuses any other set): one suite
/// file; or the directory of the test files when the page holds every test
/// of it; else the files themselves (up to [`MAX_NAMED_FILES`]; past that,
/// `SUITE` for the user to fill in). A directory of which the page ran only
/// some files would be refused on the fingerprint.
fn import_command(name: &str, tests: &[NamedTest]) -> String {
    let sources: std::collections::BTreeSet<&std::path::Path> =
        tests.iter().map(|t| t.source.as_path()).collect();
    let parents: std::collections::BTreeSet<Option<&std::path::Path>> =
        sources.iter().map(|s| s.parent()).collect();
    let whole = |dir: &std::path::Path| {
        let (all, errors) = progress_litmus::axb::load::load_all(&[dir.to_path_buf()]);
        errors.is_empty()
            && all.len() == tests.len()
            && all.iter().all(|t| sources.contains(t.source.as_path()))
    };
    let suite: Vec<String> = match (sources.len(), parents.into_iter().next()) {
        (1, _) => sources.iter().map(|s| s.display().to_string()).collect(),
        (_, Some(Some(dir)))
            if tests.iter().all(|t| t.source.parent() == Some(dir)) && whole(dir) =>
        {
            vec![dir.display().to_string()]
        }
        (n, _) if n <= MAX_NAMED_FILES => sources.iter().map(|s| s.display().to_string()).collect(),
        _ => vec![],
    };
    let suite = match suite.iter().any(|s| s.is_empty()) || suite.is_empty() {
        true => vec!["SUITE".to_string()],
        false => suite,
    };
    let quote = |s: &str| {
        if s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b))
        {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    };
    let suite: Vec<String> = suite.iter().map(|s| quote(s)).collect();
    format!(
        "backends import --target webgpu {} --lines {} --out results/my-gpu --name my-gpu",
        suite.join(" "),
        quote(&format!("{name}.webgpu.jsonl"))
    )
}

/// What a page embeds: the shaders (per test, per mapping) and the
/// runner's canaries, read back from its HTML.
pub struct Embedded {
    pub data: Value,
    pub shaders: Vec<Vec<String>>,
    pub canaries: Vec<String>,
}

/// Reads back what [`page`] embedded; an error says what is missing.
pub fn embedded(html: &str) -> Result<Embedded, String> {
    let start_tag = "<script id=\"data\" type=\"application/json\">";
    let start = html
        .find(start_tag)
        .ok_or("no embedded data: not a page of `backends emit --target webgpu`")?
        + start_tag.len();
    let end = start + html[start..].find("</script>").ok_or("unterminated data")?;
    let data: Value =
        serde_json::from_str(&html[start..end]).map_err(|e| format!("the embedded data: {e}"))?;
    let packed = data["shaders"].as_str().ok_or("no shaders in the data")?;
    let gz = base64::engine::general_purpose::STANDARD
        .decode(packed)
        .map_err(|e| format!("the shaders: {e}"))?;
    let text = unpack(&gz, progress_litmus::io::max_input_bytes()?)?;
    let shaders: Vec<Vec<String>> =
        serde_json::from_str(&text).map_err(|e| format!("the shaders: {e}"))?;
    let marker = "const CANARY = ";
    let c = html.find(marker).ok_or("no canary in the runner")? + marker.len();
    let line_end = c + html[c..].find(";\n").ok_or("unterminated canary")?;
    let canary: Value =
        serde_json::from_str(&html[c..line_end]).map_err(|e| format!("the canary: {e}"))?;
    let canaries = ["plain", "wide"]
        .iter()
        .map(|k| canary[k].as_str().map(str::to_string).ok_or("no canary"))
        .collect::<Result<_, _>>()?;
    Ok(Embedded {
        data,
        shaders,
        canaries,
    })
}

/// The embedded shaders' JSON from their gzip bytes, as `emit` packed them:
/// one gzip member and nothing after it. A single-member reader stops at
/// the first member's end, so a second member (or any bytes) appended
/// would go unchecked while a browser's `DecompressionStream` fails on or
/// reads them: refused, as is text past the input limit (a gzip bomb).
fn unpack(gz: &[u8], limit: u64) -> Result<String, String> {
    let mut decoder = flate2::bufread::GzDecoder::new(gz);
    let mut text = String::new();
    (&mut decoder)
        .take(limit.saturating_add(1))
        .read_to_string(&mut text)
        .map_err(|e| format!("the shaders: {e}"))?;
    if text.len() as u64 > limit {
        return Err(format!(
            "the shaders: more than the input limit of {limit} bytes once unpacked"
        ));
    }
    let rest = decoder.into_inner();
    if !rest.is_empty() {
        return Err(format!(
            "the shaders: {} bytes after the end of their gzip stream (a second member?): not what `backends emit` writes",
            rest.len()
        ));
    }
    Ok(text)
}

/// `emit --check` for a page: every embedded shader and both canaries
/// validate ([`wgsl::validate`]), one per test and mapping.
pub fn check_page(html: &str) -> Result<(), String> {
    let e = embedded(html)?;
    let tests = e.data["tests"].as_array().map_or(0, Vec::len);
    let mappings = e.data["mappings"].as_array().map_or(0, Vec::len);
    if e.shaders.len() != tests || e.shaders.iter().any(|s| s.len() != mappings) {
        return Err(format!(
            "the page holds shaders for {} tests, not {tests} x {mappings} mappings",
            e.shaders.len()
        ));
    }
    for s in e.shaders.iter().flatten().chain(&e.canaries) {
        let first = s.lines().next().unwrap_or("");
        wgsl::validate(s).map_err(|err| format!("{first}: invalid WGSL:\n{err}"))?;
    }
    Ok(())
}

/// A line of a result file, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum ResultLine {
    /// The header: target, suite, device.
    Header(Value),
    /// A session start or an error (an object with `event`).
    Event(Value),
    /// A run, in the format of the CUDA program's result lines.
    Run,
}

/// Classifies one non-empty line of a result file.
pub fn classify(line: &str) -> Result<ResultLine, String> {
    let v: Value = crate::json::parse(line).map_err(|e| e.to_string())?;
    if !v.is_object() {
        return Err("not a JSON object".to_string());
    }
    if v.get("axb").is_some() {
        if v["axb"] != RESULT_FILE_KIND {
            return Err(format!(
                "a header of kind {}, not {RESULT_FILE_KIND}",
                v["axb"]
            ));
        }
        return Ok(ResultLine::Header(v));
    }
    if v.get("event").is_some() {
        return Ok(ResultLine::Event(v));
    }
    Ok(ResultLine::Run)
}

/// Checks a result file's header against the target and suite it is
/// imported with: `Ok(device)` or why it does not match.
pub fn check_header(header: &Value, target: &str, tests: &[NamedTest]) -> Result<Value, String> {
    if header["format"] != 1 {
        return Err(format!(
            "result file format {} is not known to this backends (1 is)",
            header["format"]
        ));
    }
    if header["target"] != target {
        return Err(format!(
            "the results are of target {}, not {target}",
            header["target"]
        ));
    }
    let fp = suite_fingerprint(tests);
    let suite = &header["suite"];
    if suite["fnv64"] != fp.as_str() {
        return Err(format!(
            "the results are of suite {} ({} tests, fingerprint {}), not of the suite given ({} tests, fingerprint {fp}): import them with the tests the page was emitted from",
            suite["name"],
            suite["tests"],
            suite["fnv64"],
            tests.len()
        ));
    }
    Ok(header["device"].clone())
}

/// The WebGPU target: one self-contained page holding every test's WGSL
/// shaders, run in a browser.
pub struct Page;

impl Emitter for Page {
    fn name(&self) -> &'static str {
        "webgpu"
    }

    fn extension(&self) -> &'static str {
        "html"
    }

    fn shader(
        &self,
        t: &NamedTest,
        layout: &Layout,
        shape: Shape,
        _: bool,
    ) -> Result<String, String> {
        wgsl::shader(t, layout, shape, "webgpu")
    }

    /// The page, with the shaders in test order and each test's mappings
    /// in order.
    fn finish(&self, shaders: Vec<File>, suite: &Suite) -> Result<Vec<File>, Clash> {
        let shaders: Vec<String> = shaders.into_iter().map(|f| f.contents).collect();
        let contents = page(
            suite.name,
            suite.tests,
            suite.mappings,
            &shaders,
            suite.shape,
        );
        Ok(vec![File {
            path: suite.program_path.clone(),
            contents,
        }])
    }

    /// The page's embedded shaders, through naga.
    fn check(
        &self,
        _: &Path,
        files: &[File],
        paths: &[PathBuf],
        _: &Path,
    ) -> Result<(), ToolError> {
        check_page(&files[0].contents)
            .map_err(|e| ToolError::Io(format!("{}: {e}", paths[0].display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gzip bomb (4 MiB of spaces, about 4 KiB packed) is refused once
    /// unpacking passes the limit, not held whole; the same text within
    /// the limit unpacks.
    #[test]
    fn unpacking_stops_at_the_limit() {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(&vec![b' '; 4 << 20]).unwrap();
        let gz = e.finish().unwrap();
        assert!(gz.len() < 64 << 10, "{}", gz.len());
        let err = unpack(&gz, 1 << 20).unwrap_err();
        assert!(
            err.contains("more than the input limit of 1048576 bytes"),
            "{err}"
        );
        assert_eq!(unpack(&gz, 4 << 20).unwrap().len(), 4 << 20);
    }

    fn named(name: &str, src: &str) -> NamedTest {
        NamedTest {
            name: name.into(),
            entry: progress_litmus::axb::suite::Entry::new(
                name,
                progress_litmus::axb::text::parse(src).unwrap(),
            ),
            source: "x".into(),
        }
    }

    #[test]
    fn fingerprints_depend_on_names_and_programs_not_order() {
        let a = named("a", "THREAD0\natomic_store(0,1)\n");
        let b = named("b", "THREAD0\natomic_chk_branch(0,0,0)\n");
        let b2 = named("b", "THREAD0\natomic_chk_branch(0,1,0)\n");
        let fp = suite_fingerprint(&[a.clone(), b.clone()]);
        assert_eq!(fp, suite_fingerprint(&[b.clone(), a.clone()]));
        assert_ne!(fp, suite_fingerprint(&[a.clone(), b2]));
        assert_ne!(fp, suite_fingerprint(&[a]));
    }

    #[test]
    fn result_lines_are_classified_and_headers_checked() {
        let t = [named("a", "THREAD0\natomic_store(0,1)\n")];
        let header = json!({"axb": RESULT_FILE_KIND, "format": 1, "target": "webgpu",
            "suite": {"name": "s", "tests": 1, "fnv64": suite_fingerprint(&t)}, "device": {"vendor": "v"}});
        let line = header.to_string();
        assert_eq!(classify(&line), Ok(ResultLine::Header(header.clone())));
        assert_eq!(check_header(&header, "webgpu", &t).unwrap()["vendor"], "v");
        assert!(check_header(&header, "wgpu", &t)
            .unwrap_err()
            .contains("target"));
        let other = [named("a", "THREAD0\natomic_store(0,0)\n")];
        assert!(check_header(&header, "webgpu", &other)
            .unwrap_err()
            .contains("fingerprint"));
        assert!(matches!(
            classify(r#"{"event":"lost","message":"m"}"#),
            Ok(ResultLine::Event(_))
        ));
        assert_eq!(classify(r#"{"test":"a"}"#), Ok(ResultLine::Run));
        assert!(classify("[1]").is_err());
        assert!(classify(r#"{"axb":"other"}"#).is_err());
        // A header whose kind is given twice: refused, not the last kept.
        let e = classify(r#"{"axb":"other","axb":"webgpu-results"}"#).unwrap_err();
        assert!(e.starts_with("the key `axb` is given twice"), "{e}");
    }

    #[test]
    fn the_page_knows_each_tests_models_and_its_import_command() {
        let mut a = named("a", "THREAD0\natomic_store(0,1)\n");
        let mut b = named("b", "THREAD0\natomic_chk_branch(0,0,0)\n");
        a.source = "my suite/a.txt".into();
        b.source = "my suite/b.txt".into();
        // `a` ends under every model, unfair included; `b` spins forever
        // under every model, so it is a conformance test of none.
        let c = conformance(&[a.clone(), b.clone()]);
        assert_eq!(c[0], json!((0..Model::ALL.len()).collect::<Vec<_>>()));
        assert_eq!(c[1], json!([]));
        // Not a directory the page holds whole (here: none on disk): the
        // files themselves.
        assert_eq!(
            import_command("s", &[a.clone(), b.clone()]),
            "backends import --target webgpu 'my suite/a.txt' 'my suite/b.txt' --lines s.webgpu.jsonl --out results/my-gpu --name my-gpu"
        );
        a.source = "suites/x.ron".into();
        assert!(import_command("s", &[a]).contains(" suites/x.ron "));
    }

    /// The reproducer: a page made from 2 of a directory's 3 test files
    /// suggested the directory, whose import is refused on the suite
    /// fingerprint. A page of the whole directory names the directory.
    #[test]
    fn the_import_command_names_the_directory_only_when_the_page_holds_all_of_it() {
        let dir = std::env::temp_dir().join(format!("webgpu-import-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (n, body) in [
            ("a", "atomic_store(0,1)"),
            ("b", "atomic_store(0,2)"),
            ("c", "atomic_store(1,1)"),
        ] {
            std::fs::write(dir.join(format!("{n}.txt")), format!("THREAD0\n{body}\n")).unwrap();
        }
        let (all, errors) = progress_litmus::axb::load::load_all(std::slice::from_ref(&dir));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(all.len(), 3);
        let shown = dir.display().to_string();
        let whole = import_command("s", &all);
        assert!(whole.contains(&format!(" {shown} --lines")), "{whole}");
        let some = import_command("s", &all[..2]);
        assert!(
            some.contains(&format!(" {shown}/a.txt {shown}/b.txt --lines")),
            "{some}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
