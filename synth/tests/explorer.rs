//! The HTML explorer, checked the way a user sees it: the page is opened in
//! headless Chromium (Debian package `chromium`), a test and a model are
//! selected through the URL fragment, and the DOM the page's script built is
//! compared with what the Rust side computes for that test (verdicts from
//! the oracle, the program state space from axb, the witness from
//! `oracle::analyse`).
//!
//! Without Chromium the browser tests fail with a message naming the
//! package, unless `SYNTH_SKIP_BROWSER_TESTS=1`.

#[path = "../../tests/support/scratch.rs"]
#[allow(dead_code)]
mod scratch;
use scratch::Scratch;

use progress_litmus::axb::machine::Machine;
use progress_litmus::axb::pseudo;
use progress_litmus::axb::space::program_space;
use progress_litmus::axb::suite::Suite;
use progress_litmus::model::Model;
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use synth::explorer::{highlighted, render};
use synth::idioms::Recogniser;
use synth::suites::{import_published, label};

fn published() -> Suite {
    let mut s = import_published(None).unwrap();
    label(&mut s, &Recogniser::default());
    s
}

/// The page for the published suite, written once per test binary.
fn page() -> (Suite, Scratch, PathBuf) {
    let suite = published();
    let html = render(&suite.name, &suite.note, &suite.tests);
    let dir = scratch("page");
    let path = dir.join("oopsla21.html");
    std::fs::write(&path, html).unwrap();
    (suite, dir, path)
}

static SCRATCH: AtomicUsize = AtomicUsize::new(0);

/// A fresh directory under the system temp dir, removed when dropped.
fn scratch(what: &str) -> Scratch {
    let n = SCRATCH.fetch_add(1, Ordering::Relaxed);
    Scratch::new("synth-explorer-test", &format!("{what}-{n}"))
}

fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SYNTH_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Chromium, or `None` when browser tests are explicitly skipped.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = find_chromium() {
        return Some(p);
    }
    if std::env::var("SYNTH_SKIP_BROWSER_TESTS").as_deref() == Ok("1") {
        eprintln!("skipped: no chromium and SYNTH_SKIP_BROWSER_TESTS=1");
        return None;
    }
    panic!(
        "headless Chromium not found on PATH: install the Debian package `chromium` \
         (apt-get install -y chromium), or set SYNTH_SKIP_BROWSER_TESTS=1 to skip the browser tests"
    );
}

/// The DOM of `page#fragment` after the page's script ran, killing the
/// browser after 60 s.
fn dump_dom(chromium: &Path, page: &Path, fragment: &str) -> String {
    dump_dom_with(chromium, page, fragment, &[])
}

/// [`dump_dom`] with more browser flags (a window size).
fn dump_dom_with(chromium: &Path, page: &Path, fragment: &str, flags: &[&str]) -> String {
    let profile = scratch("profile");
    let url = format!("file://{}#{fragment}", page.display());
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        // Chromium puts its singleton socket folder under TMPDIR: in the
        // profile, it goes when the profile does.
        .env("TMPDIR", profile.as_path())
        .args(flags)
        // Let the page's asynchronous work (decompressing code) finish.
        .arg("--virtual-time-budget=10000")
        .arg("--dump-dom")
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).map(|_| s)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_dir_all(&profile);
            panic!("chromium did not finish within 60 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let dom = reader.join().unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    assert!(status.success(), "chromium failed ({status}) on {url}");
    assert!(
        dom.contains("data-ready=\"1\""),
        "the page's script did not finish on {url}"
    );
    dom
}

/// Every start tag `<name ...>` whose text contains `marker`.
fn tags<'a>(dom: &'a str, name: &str, marker: &str) -> Vec<&'a str> {
    let open = format!("<{name} ");
    let mut out = Vec::new();
    let mut rest = dom;
    while let Some(i) = rest.find(&open) {
        let tail = &rest[i..];
        let end = tail.find('>').expect("a closed tag");
        let tag = &tail[..=end];
        if tag.contains(marker) {
            out.push(tag);
        }
        rest = &tail[end..];
    }
    out
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    let j = tag[i..].find('"')?;
    Some(&tag[i..i + j])
}

/// The text of the element with `id` (no nested markup expected).
fn text_of<'a>(dom: &'a str, id: &str) -> &'a str {
    let key = format!("id=\"{id}\"");
    let i = dom.find(&key).unwrap_or_else(|| panic!("no #{id}"));
    let start = i + dom[i..].find('>').unwrap() + 1;
    let end = start + dom[start..].find('<').unwrap();
    &dom[start..end]
}

/// Checks what the page shows for `name` with `model` selected.
fn check_test_view(chromium: &Path, page: &Path, suite: &Suite, name: &str, model: Model) {
    let entry = suite.tests.iter().find(|e| e.name == name).unwrap();
    let test = &entry.test;
    let dom = dump_dom(
        chromium,
        page,
        &format!("test={name}&model={}", model.name()),
    );

    // The title and the pseudo-code are this test's.
    assert_eq!(text_of(&dom, "title"), name);
    let code = text_of(&dom, "code");
    for line in pseudo::print(test).lines() {
        assert!(code.contains(line), "pseudo-code lacks `{line}`:\n{code}");
    }

    // The verdict table: one row per model, with the oracle's verdict.
    let verdicts = oracle::verdicts(test);
    let rows = tags(&dom, "tr", "data-model=");
    assert_eq!(rows.len(), 11);
    for m in Model::ALL {
        let row = rows
            .iter()
            .find(|r| attr(r, "data-model") == Some(m.name()))
            .unwrap_or_else(|| panic!("no row for {m}"));
        let shown = attr(row, "data-verdict").unwrap();
        assert_eq!(shown, verdicts.get(m).as_char().to_string(), "{name} {m}");
        assert_eq!(attr(row, "class") == Some("sel"), m == model, "{row}");
    }

    // The picture: exactly the program state space of this test.
    let svg = tags(&dom, "svg", "id=\"lts\"");
    assert_eq!(svg.len(), 1);
    assert_eq!(attr(svg[0], "data-test"), Some(name));
    let lts = program_space(test);
    let machine = Machine::new(test);
    let locs = test.num_locs().max(1);
    let nodes = tags(&dom, "g", "data-state=");
    assert_eq!(nodes.len(), lts.num_states());
    let shown_states: BTreeSet<(usize, String)> = nodes
        .iter()
        .map(|g| {
            (
                attr(g, "data-node").unwrap().parse().unwrap(),
                attr(g, "data-state").unwrap().to_string(),
            )
        })
        .collect();
    let states: BTreeSet<(usize, String)> = lts
        .graph
        .node_indices()
        .map(|n| (n.index(), machine.describe(lts.graph[n], locs)))
        .collect();
    assert_eq!(shown_states, states);
    let edges = tags(&dom, "path", "data-thread=");
    assert_eq!(edges.len(), lts.num_transitions());
    let shown_edges: BTreeSet<(usize, usize, usize)> = edges
        .iter()
        .map(|p| {
            let n = |k| attr(p, k).unwrap().parse::<usize>().unwrap();
            (n("data-src"), n("data-dst"), n("data-thread"))
        })
        .collect();
    let space_edges: BTreeSet<(usize, usize, usize)> = lts
        .graph
        .raw_edges()
        .iter()
        .map(|e| {
            (
                e.source().index(),
                e.target().index(),
                e.weight.thread as usize,
            )
        })
        .collect();
    assert_eq!(shown_edges, space_edges);

    // The witness of the selected model is highlighted: the repeated part
    // in red (`wc`), the way there in orange (`wp`).
    let (pre, cyc) = highlighted(test, model).expect("the model fails this test");
    let cyc: BTreeSet<(usize, usize)> = cyc.into_iter().collect();
    let pre: BTreeSet<(usize, usize)> = pre.into_iter().filter(|s| !cyc.contains(s)).collect();
    let with_class = |c: &str| -> BTreeSet<(usize, usize)> {
        edges
            .iter()
            .filter(|p| attr(p, "class").is_some_and(|k| k.split(' ').any(|x| x == c)))
            .map(|p| {
                let n = |k| attr(p, k).unwrap().parse::<usize>().unwrap();
                (n("data-src"), n("data-thread"))
            })
            .collect()
    };
    assert!(!cyc.is_empty() || !pre.is_empty());
    assert_eq!(with_class("wc"), cyc, "{name} {model}: cycle edges");
    assert_eq!(with_class("wp"), pre, "{name} {model}: prefix edges");

    // The schedule has one row per event of the oracle's witness.
    let a = oracle::analyse(test, model);
    let events = match a.witness.unwrap() {
        oracle::axb::check::Witness::Lasso(l) => l.prefix.len() + l.cycle.len(),
        oracle::axb::check::Witness::Trap { reach, stay, .. } => {
            reach.len() + stay.prefix.len() + stay.cycle.len()
        }
    };
    assert_eq!(tags(&dom, "tr", "class=\"ev\"").len(), events);
    assert!(text_of(&dom, "witness-title").contains("NOT guaranteed"));
}

#[test]
fn the_page_shows_the_chosen_test_its_verdicts_and_its_witness() {
    let Some(chromium) = chromium() else { return };
    let (suite, _dir, page) = page();
    // A weak witness (a lasso) on the simplified mutex...
    let hsa = Model::parse("HSA").unwrap();
    check_test_view(&chromium, &page, &suite, "2t3i_22", hsa);
    // ...and a strong one (a trap) on a three-thread test.
    let strong_hsa = Model::parse("HSA_STRONG").unwrap();
    let strong = suite
        .tests
        .iter()
        .find(|e| e.test.num_threads() == 3 && !e.verdicts.unwrap().passes(strong_hsa))
        .expect("a three-thread test that fails strong HSA");
    check_test_view(&chromium, &page, &suite, &strong.name, strong_hsa);
    let _ = std::fs::remove_dir_all(page.parent().unwrap());
}

#[test]
fn the_filters_select_what_they_say() {
    let Some(chromium) = chromium() else { return };
    let (suite, _dir, page) = page();
    let count = |dom: &str| -> usize { text_of(dom, "count").parse().unwrap() };
    let dom = dump_dom(&chromium, &page, "");
    assert_eq!(count(&dom), 483);
    assert_eq!(text_of(&dom, "count-word"), "tests");
    // No fragment: the first test is shown.
    assert_eq!(text_of(&dom, "title"), "2t2i_0");
    // A page of AXB tests has their filters, not those of kernel programs.
    assert_eq!(hidden_filters(&dom), ["Launch", "Literature"]);
    assert!(dom.contains("placeholder=\"e.g. 2t2i_0\""));

    let hsa = Model::parse("HSA").unwrap();
    let dom = dump_dom(&chromium, &page, "config=2t3i&vm=HSA&vv=P");
    let expected = suite
        .tests
        .iter()
        .filter(|e| e.test.config() == "2t3i" && e.verdicts.unwrap().passes(hsa))
        .count();
    assert!(expected > 0);
    assert_eq!(count(&dom), expected);
    let listed = tags(&dom, "li", "data-name=");
    assert_eq!(listed.len(), expected);

    // SPEC §5: 12 weak OBE distinguishing tests in the published suite.
    let dom = dump_dom(&chromium, &page, "bucket=D%3AOBE");
    assert_eq!(count(&dom), 12);
    let dom = dump_dom(&chromium, &page, "idiom=prodcons-increasing");
    let names: Vec<&str> = tags(&dom, "li", "data-name=")
        .iter()
        .map(|t| attr(t, "data-name").unwrap())
        .collect();
    assert!(names.contains(&"2t2i_5"), "{names:?}");
    assert!(names.iter().all(|n| suite
        .tests
        .iter()
        .any(|e| e.name == *n && e.idioms.contains(&"prodcons-increasing".to_string()))));
    let _ = std::fs::remove_dir_all(page.parent().unwrap());
}

/// The labels of the filters the page hides, in page order.
fn hidden_filters(dom: &str) -> Vec<&str> {
    let i = dom.find("id=\"filters\"").expect("the filters");
    let j = i + dom[i..].find("</div>").unwrap();
    let mut out = Vec::new();
    let mut rest = &dom[i..j];
    while let Some(k) = rest.find("<label") {
        let tag_end = k + rest[k..].find('>').unwrap();
        let text_end = tag_end + rest[tag_end..].find('<').unwrap();
        if rest[k..tag_end].contains(" hidden") {
            out.push(rest[tag_end + 1..text_end].trim());
        }
        rest = &rest[text_end..];
    }
    out
}

/// Text of a `<pre>` as the DOM dump escapes it, unescaped.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[test]
fn the_page_shows_the_code_backends_emit_writes() {
    let Some(chromium) = chromium() else { return };
    let (suite, _dir, page) = page();
    // A test in a later code chunk, so the chunk arithmetic is exercised.
    let name = "3t4i_34";
    let index = suite.tests.iter().position(|e| e.name == name).unwrap();
    assert!(index >= synth::explorer::CODE_CHUNK, "{index}");
    let named = progress_litmus::axb::load::NamedTest {
        name: name.to_string(),
        entry: suite.tests[index].clone(),
        source: PathBuf::new(),
    };
    let sources = backends::target::test_sources(&named, backends::target::Shape::Switch).unwrap();
    for (target, mapping) in [
        ("glsl", "chunked"),
        ("metal", "round-robin"),
        ("amber", "plain"),
        ("cuda", ""),
        ("cpp", ""),
    ] {
        let fragment = format!(
            "test={name}&target={target}&mapping={}",
            if mapping.is_empty() { "plain" } else { mapping }
        );
        let dom = dump_dom(&chromium, &page, &fragment);
        assert!(
            dom.contains(&format!("data-code=\"{name}/{target}/{mapping}\"")),
            "the code of {name} for {target} {mapping} was not shown"
        );
        let want = sources
            .iter()
            .find(|s| s.target.name() == target && s.mapping.map_or("", |m| m.name()) == mapping)
            .unwrap();
        assert_eq!(
            unescape(text_of(&dom, "emitted")),
            want.text,
            "{target} {mapping}"
        );
    }
    let _ = std::fs::remove_dir_all(page.parent().unwrap());
}

#[test]
fn without_code_the_page_has_no_code_section() {
    let suite = published();
    let opts = synth::explorer::PageOptions {
        code: false,
        ..Default::default()
    };
    let html = synth::explorer::render_with(&suite.name, &suite.note, &suite.tests[..20], opts);
    assert!(html.contains("\"code\":[]"));
    assert!(html.len() < render(&suite.name, &suite.note, &suite.tests[..20]).len());
}

#[test]
fn the_page_is_self_contained() {
    let suite = published();
    let html = render(&suite.name, &suite.note, &suite.tests[..20]);
    for bad in [
        "<link",
        " src=",
        "@import",
        "url(http",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(!html.contains(bad), "the page refers to `{bad}`");
    }
    // The only URL is the SVG namespace, which is never fetched.
    assert_eq!(
        html.matches("http").count(),
        html.matches("http://www.w3.org/2000/svg").count()
    );
    // Unlabelled entries are labelled on the way.
    let mut bare = suite.tests[..3].to_vec();
    for e in &mut bare {
        e.verdicts = None;
        e.idioms.clear();
    }
    assert_eq!(render("x", "", &bare), render("x", "", &suite.tests[..3]));
}

/// "Run this test on my GPU", in Chromium with WebGPU on SwiftShader (its
/// CPU implementation of Vulkan). The page is opened with `#...&gpu=run`,
/// runs the test's WGSL shaders with the webgpu page's runner and logs the
/// outcome with `console.log`, which Chromium writes to stderr
/// (`--enable-logging=stderr`): the same launch as `dump_dom`, reading the
/// console instead of the DOM, since the DOM dump does not wait for the GPU.
#[test]
fn the_page_runs_the_test_on_the_gpu_per_mapping() {
    let Some(chromium) = chromium() else { return };
    let suite = published();
    let picked: Vec<_> = suite
        .tests
        .iter()
        .filter(|e| ["2t2i_0", "2t4i_100"].contains(&e.name.as_str()))
        .cloned()
        .collect();
    let dir = scratch("gpu");
    let page = dir.join("gpu.html");
    std::fs::write(&page, render(&suite.name, &suite.note, &picked)).unwrap();
    let profile = scratch("gpu-profile");
    let url = format!(
        "file://{}#test=2t4i_100&gpu=run&runs=2&ms=50",
        page.display()
    );
    let mut child = Command::new(&chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--enable-unsafe-webgpu",
            "--ignore-gpu-blocklist",
            "--enable-features=Vulkan",
            "--use-vulkan=swiftshader",
            "--use-webgpu-adapter=swiftshader",
            "--disable-vulkan-surface",
            "--enable-unsafe-swiftshader",
            "--enable-logging=stderr",
            "--v=0",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        // Chromium puts its singleton socket folder under TMPDIR: in the
        // profile, it goes when the profile does.
        .env("TMPDIR", profile.as_path())
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(i) = line.find("\"axb-gpu: ") {
                let end = line.rfind("\", source: ").unwrap_or(line.len());
                let _ = tx.send(line[i + 10..end].to_string());
                return;
            }
        }
    });
    let got = rx.recv_timeout(Duration::from_secs(180));
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&profile);
    let got = got.expect("the page logged no GPU outcome within 180 s");
    let v: serde_json::Value = serde_json::from_str(&got).unwrap();
    assert!(v.get("error").is_none(), "{v}");
    assert_eq!(v["test"], "2t4i_100");
    assert_eq!(v["device"]["architecture"], "swiftshader");
    for m in ["plain", "round-robin", "chunked"] {
        let r = &v["mappings"][m];
        assert_eq!(
            r["terminated"].as_u64().unwrap() + r["exhausted"].as_u64().unwrap(),
            2,
            "{m}: {v}"
        );
    }
    // SwiftShader runs a few workgroups at a time, in order: under chunked
    // the thread 0s of this test come first and wait for thread 1s that
    // never start, so the budget runs out. (Whether the two workgroups of
    // plain end in 50 ms depends on the machine's load: not asserted.)
    assert_eq!(v["mappings"]["chunked"]["exhausted"], 2, "{v}");
    // The answer (issue 23 item 1): the hang violates exactly the models
    // 2t4i_100 is a conformance test of, by the suite's verdicts.
    let t = picked.iter().find(|e| e.name == "2t4i_100").unwrap();
    let verdicts = t.verdicts.expect("the suite stores verdicts");
    let conformance: Vec<&str> = progress_litmus::Model::ALL
        .iter()
        .filter(|m| verdicts.passes(**m))
        .map(|m| m.name())
        .collect();
    assert!(!conformance.is_empty());
    assert_eq!(
        v["answer"]["violated"],
        serde_json::json!(conformance),
        "{v}"
    );
    assert!(v["answer"]["sentence"]
        .as_str()
        .unwrap()
        .contains("not consistent with"));
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- kernel programs: the idiom library ------------------------------------

fn idioms_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms")
}

/// The data the page embeds (the JSON of `<script id="data">`).
fn page_data(html: &str) -> serde_json::Value {
    let open = "<script id=\"data\" type=\"application/json\">";
    let i = html.find(open).expect("the data script") + open.len();
    let j = i + html[i..].find("</script>").unwrap();
    serde_json::from_str(&html[i..j]).unwrap()
}

/// The page for suites/idioms as `synth explorer suites/idioms` makes it.
fn idioms_page() -> (synth::explorer::Loaded, String) {
    let loaded = synth::explorer::load(&[idioms_dir()]).unwrap();
    let html = synth::explorer::render_all(
        &loaded.name,
        &loaded.note,
        &loaded.entries,
        &loaded.programs,
        Default::default(),
    );
    (loaded, html)
}

/// Every idiom is on the page with its program as the kernel printer writes
/// it, its leading comment, the oracle's verdicts under the eleven models
/// (checked against `flat_verdicts`, which decides them another way: six
/// products for eleven) and under every model its `expect` lines name, the
/// literature's verdict with agreement (checked against
/// `check_expectations`), the explanation per model, and the code of each
/// target (checked against `backends emit`).
/// (Release builds only: it decides every idiom a second and third way.)
#[test]
#[cfg_attr(debug_assertions, ignore)]
fn the_idioms_page_shows_every_idiom_with_its_verdicts() {
    use backends::target::kernel::{emit, Lang};
    use oracle::kernel::{check_expectations, flat_verdicts, Options};
    use progress_litmus::kernel::litmus;
    let (loaded, html) = idioms_page();
    let files = std::fs::read_dir(idioms_dir())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .and_then(|x| x.to_str())
                == Some("litmus")
        })
        .count();
    assert!(files >= 23, "{files} idiom files");
    assert_eq!(loaded.programs.len(), files);
    assert!(loaded.entries.is_empty());
    let data = page_data(&html);
    let kernels = data["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), files);
    let mut stated_total = 0;
    for (p, k) in loaded.programs.iter().zip(kernels) {
        let name = &p.name;
        assert_eq!(k["n"], name.as_str());
        assert_eq!(k["c"], "kernel");
        assert_eq!(k["src"], litmus::print(&p.program).as_str(), "{name}");
        let lit = k["lit"].as_str().unwrap();
        assert!(
            lit.contains("Source") || lit.contains("source"),
            "{name}: the comment naming the source is missing: {lit}"
        );
        let rows = k["r"].as_array().unwrap();
        let models = synth::explorer::kernel::models_of(p);
        assert_eq!(rows.len(), models.len(), "{name}");
        // The eleven, then every model the file names, each once.
        assert!(rows.len() >= 11);
        for (r, m) in rows.iter().zip(&models) {
            assert_eq!(r["m"], m.to_string().as_str());
        }
        for e in &p.program.expect {
            assert!(
                models.iter().any(|m| m == &e.model
                    || (m.as_flat().is_some() && m.as_flat() == e.model.as_flat())),
                "{name}: {} has no row",
                e.model
            );
        }

        // Flat verdicts, decided another way.
        let (flat, _) = flat_verdicts(&p.program, Options::default()).unwrap();
        let letters: String = flat.0.iter().map(|v| v.as_char()).collect();
        assert_eq!(k["v"], letters.as_str(), "{name}");
        for r in &rows[..11] {
            let m = progress_litmus::model::Model::parse(r["m"].as_str().unwrap()).unwrap();
            let v = r["v"].as_str().unwrap();
            let want = flat.get(m).as_char().to_string();
            assert_eq!(if v == "deadlock" { "F" } else { v }, want, "{name} {m}");
        }

        // The literature's verdicts and agreement, as check_expectations.
        let bad = check_expectations(p, Options::default());
        let stated: Vec<&serde_json::Value> = rows.iter().filter(|r| r["x"] != "").collect();
        assert_eq!(
            stated.len(),
            p.program
                .expect
                .iter()
                .map(|e| e.model.to_string())
                .collect::<BTreeSet<_>>()
                .len(),
            "{name}"
        );
        for e in &p.program.expect {
            let r = rows
                .iter()
                .find(|r| {
                    let m = progress_litmus::kernel::ScopedModel::parse(r["m"].as_str().unwrap())
                        .unwrap();
                    m == e.model || (m.as_flat().is_some() && m.as_flat() == e.model.as_flat())
                })
                .unwrap();
            assert!(
                r["x"].as_str().unwrap().contains(e.outcome.word()),
                "{name} {}",
                e.model
            );
            let want = match bad.iter().find(|(m, ..)| *m == e.model) {
                None => "yes",
                Some((.., got)) if got.starts_with("no verdict") => "undecided",
                Some(_) => "no",
            };
            assert_eq!(r["a"], want, "{name} {}", e.model);
            stated_total += 1;
        }
        for r in rows {
            if r["x"] == "" {
                assert_eq!(r["a"], "", "{name}");
            }
        }

        // The explanation of each row says its verdict: a witness schedule
        // for F, the reason for P.
        for r in rows {
            let w = r["w"].as_str().unwrap();
            let head = format!("{name} under ");
            assert!(w.starts_with(&head), "{name}: {w}");
            assert!(w.contains("(memory sequentially consistent)"), "{w}");
            assert!(
                !w.contains(&litmus::print(&p.program)),
                "the program is shown once"
            );
            match r["v"].as_str().unwrap() {
                "P" => assert!(
                    w.contains(": P: termination is guaranteed") && w.contains("Why:"),
                    "{w}"
                ),
                "deadlock" => assert!(
                    w.contains("a schedule deadlocks") && w.contains("Stuck in:"),
                    "{w}"
                ),
                "F" => assert!(
                    w.contains(": F: termination is NOT guaranteed")
                        && w.contains("--- repeats forever from here ---"),
                    "{w}"
                ),
                v => panic!("{name}: verdict {v}"),
            }
        }

        // The code of every target, or its refusal.
        let code = k["code"].as_array().unwrap();
        for (lang, target) in [
            (Lang::Cuda, "cuda"),
            (Lang::Glsl, "glsl"),
            (Lang::Wgsl, "wgsl"),
        ] {
            let cell = code
                .iter()
                .find(|c| c[0] == target)
                .unwrap_or_else(|| panic!("{name}: no {target}"));
            match emit(p, lang) {
                Ok(text) => {
                    assert_eq!(cell[1][0], text.as_str());
                    assert_eq!(cell[1][1], "");
                }
                Err(why) => {
                    assert_eq!(cell[1][0], "");
                    assert_eq!(cell[1][1], why.as_str());
                }
            }
        }
    }
    assert!(stated_total >= 100, "{stated_total} stated verdicts");
    // Deterministic: the same bytes again.
    assert_eq!(idioms_page().1, html);
    // Offline, as the AXB page.
    for bad in [
        "<link",
        " src=",
        "@import",
        "url(http",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(!html.contains(bad), "the page refers to `{bad}`");
    }
}

/// A suite and kernel programs on one page: the tests first, then the
/// programs, each as it would be alone.
#[test]
fn a_suite_and_the_idioms_share_one_page() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let suite = root.join("suites/2t2i/2t2i.ron");
    let mixed = synth::explorer::load(&[suite.clone(), idioms_dir()]).unwrap();
    let alone = synth::explorer::load(&[suite]).unwrap();
    assert_eq!(mixed.name, "2t2i + idioms");
    assert_eq!(mixed.entries, alone.entries);
    assert_eq!(mixed.entries.len(), 8);
    assert!(mixed.programs.len() >= 23);
    let opts = synth::explorer::PageOptions {
        code: false,
        ..Default::default()
    };
    let html = synth::explorer::render_all(
        &mixed.name,
        &mixed.note,
        &mixed.entries,
        &mixed.programs,
        opts,
    );
    let data = page_data(&html);
    assert_eq!(data["tests"].as_array().unwrap().len(), 8);
    assert_eq!(
        data["kernels"].as_array().unwrap().len(),
        mixed.programs.len()
    );
    // Without code, no kernel code either.
    assert!(data["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .all(|k| k["code"].as_array().unwrap().is_empty()));
    // An AXB-only page is what it was: no kernel programs.
    let only = synth::explorer::render_with(&alone.name, &alone.note, &alone.entries, opts);
    assert_eq!(page_data(&only)["kernels"].as_array().unwrap().len(), 0);
}

/// Console lines Chromium logged (`--enable-logging=stderr`) for `page`,
/// with the DOM after the page's script ran.
fn dump_dom_and_console(chromium: &Path, page: &Path, fragment: &str) -> (String, Vec<String>) {
    let profile = scratch("profile");
    let url = format!("file://{}#{fragment}", page.display());
    let out = Command::new("timeout")
        .arg("60")
        .arg(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        // Chromium puts its singleton socket folder under TMPDIR: in the
        // profile, it goes when the profile does.
        .env("TMPDIR", profile.as_path())
        .arg(&url)
        .stdin(Stdio::null())
        .output()
        .expect("chromium starts");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        out.status.success(),
        "chromium failed ({}) on {url}",
        out.status
    );
    let dom = String::from_utf8(out.stdout).unwrap();
    assert!(
        dom.contains("data-ready=\"1\""),
        "the page's script did not finish on {url}"
    );
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(str::to_string)
        .collect();
    (dom, console)
}

/// The idioms page in Chromium: it loads without a console message, lists
/// every idiom, and shows the chosen one with its program, its verdict
/// table, the witness of the chosen model and the emitted code (a WGSL
/// refusal where WGSL refuses).
#[test]
fn the_idioms_page_shows_an_idiom_in_the_browser() {
    let Some(chromium) = chromium() else { return };
    let (loaded, html) = idioms_page();
    let dir = scratch("idioms");
    let page = dir.join("idioms.html");
    std::fs::write(&page, &html).unwrap();

    let (dom, console) = dump_dom_and_console(&chromium, &page, "");
    assert!(console.is_empty(), "console messages: {console:?}");
    let listed: Vec<&str> = tags(&dom, "li", "data-name=")
        .iter()
        .map(|t| attr(t, "data-name").unwrap())
        .collect();
    let want: Vec<String> = loaded
        .programs
        .iter()
        .map(|p| format!("k:{}", p.name))
        .collect();
    assert_eq!(listed, want);
    assert_eq!(text_of(&dom, "count"), want.len().to_string());
    // No fragment: the first idiom is shown.
    assert_eq!(text_of(&dom, "title"), loaded.programs[0].name);
    assert!(dom.contains("data-kind=\"kernel\""));

    // A scoped model named by an `expect` line, by its plain name.
    let gb = loaded
        .programs
        .iter()
        .find(|p| p.name == "global-barrier")
        .unwrap();
    let model = "WEAK_FAIR, occupancy=2";
    let (dom, console) = dump_dom_and_console(
        &chromium,
        &page,
        &format!(
            "test=global-barrier&model={}&target=cuda",
            model.replace(' ', "%20")
        ),
    );
    assert!(console.is_empty(), "console messages: {console:?}");
    assert_eq!(text_of(&dom, "title"), "global-barrier");
    assert_eq!(
        unescape(text_of(&dom, "code")),
        progress_litmus::kernel::litmus::print(&gb.program)
    );
    let rows = tags(&dom, "tr", "data-model=");
    let models = synth::explorer::kernel::models_of(gb);
    assert_eq!(rows.len(), models.len());
    let sel: Vec<&&str> = rows
        .iter()
        .filter(|r| attr(r, "class").is_some_and(|c| c.contains("sel")))
        .collect();
    assert_eq!(sel.len(), 1);
    assert_eq!(attr(sel[0], "data-model"), Some(model));
    assert_eq!(attr(sel[0], "data-verdict"), Some("F"));
    assert_eq!(attr(sel[0], "data-expected"), Some("F"));
    assert_eq!(attr(sel[0], "data-agree"), Some("yes"));
    assert!(text_of(&dom, "witness-title").contains("NOT guaranteed"));
    let m = progress_litmus::kernel::ScopedModel::parse(model).unwrap();
    let want = oracle::kernel::explain::explain(
        &gb.program,
        "global-barrier",
        &m,
        oracle::kernel::Options::default(),
        oracle::kernel::explain::Show::VerdictOnly,
    )
    .unwrap();
    assert_eq!(unescape(text_of(&dom, "k-witness")), want);
    assert!(dom.contains("data-code=\"k:global-barrier/cuda/\""));
    let cuda = backends::target::kernel::emit(gb, backends::target::kernel::Lang::Cuda).unwrap();
    assert_eq!(unescape(text_of(&dom, "emitted")), cuda);

    // WGSL refuses a barrier in divergent code: the page shows why.
    let refused = loaded
        .programs
        .iter()
        .find(|p| backends::target::kernel::emit(p, backends::target::kernel::Lang::Wgsl).is_err())
        .expect("an idiom WGSL refuses");
    let why =
        backends::target::kernel::emit(refused, backends::target::kernel::Lang::Wgsl).unwrap_err();
    let (dom, console) = dump_dom_and_console(
        &chromium,
        &page,
        &format!("test=k%3A{}&target=wgsl", refused.name),
    );
    assert!(console.is_empty(), "console messages: {console:?}");
    assert!(dom.contains(&format!("data-code=\"k:{}/wgsl/refused\"", refused.name)));
    assert_eq!(unescape(text_of(&dom, "emitted")), why);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A packed suite `s` of `n` one-instruction tests (what a gzip bomb
/// inflates to: the shortest lines, millions of them).
fn tiny_packed(n: usize) -> Vec<u8> {
    use std::io::Write;
    let mut text = String::from("axb-packed 1\nsuite s\nnote n\n");
    for k in 0..n {
        text += &format!("s_{k}\t00.-\n");
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap()
}

/// Regression (issue 20 item 4): a 204 KB gzip bomb of one-instruction
/// tests took `synth explorer` down after 79 s. What the loader holds is
/// bounded (one test per 256 bytes of the input limit, an error naming
/// the file and line), and a page holds at most `MAX_TESTS` tests, refused
/// before any page is made.
#[test]
fn a_page_of_too_many_tests_is_refused_up_front() {
    let dir = scratch("bomb");
    let f = dir.join("bomb.axb.gz");
    std::fs::write(&f, tiny_packed(11)).unwrap();
    let e = synth::explorer::load_at_most(std::slice::from_ref(&f), 10)
        .err()
        .expect("over the bound");
    assert!(e.contains("more than 10 tests"), "{e}");
    assert_eq!(
        synth::explorer::load_at_most(std::slice::from_ref(&f), 11)
            .unwrap()
            .entries
            .len(),
        11
    );
    assert_eq!(synth::explorer::MAX_TESTS, 1 << 19);
    // The loader's bound, through the command line: 64 KiB allows 256 tests.
    std::fs::write(&f, tiny_packed(1000)).unwrap();
    let page = dir.join("page.html");
    let o = Command::new(env!("CARGO_BIN_EXE_synth"))
        .args([
            "explorer",
            f.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ])
        .env("AXB_MAX_INPUT_BYTES", "64K")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}:260:1: more than 256 tests", f.display())),
        "{err}"
    );
    assert!(!page.exists());
}

/// Every page explains its words (issue 23 item 5): the glossary that the
/// results site and the WebGPU page show is in the explorer too.
#[test]
fn the_explorer_explains_its_words() {
    let (_, html) = idioms_page();
    for term in [
        "HSA",
        "OBE",
        "HSA+OBE",
        "LOBE",
        "weak fairness",
        "strong fairness",
        "unfair",
    ] {
        assert!(html.contains(&format!("<dt>{term}</dt>")), "{term}");
    }
    assert!(
        html.contains("<dt>conformance test</dt>") && html.contains("<dt>distinguishing test</dt>")
    );
}

/// `page#fragment` in a window `width` pixels wide, with a script run after
/// the page's that measures what a reader would see: the attribute
/// `data-fits` is `yes`, or says which element sticks out of the window
/// on the right (so that part of it cannot be read without scrolling the
/// whole page), which two boxes of the view or entries of the list overlap.
fn measured(chromium: &Path, page: &Path, fragment: &str, width: u32) -> String {
    let html = std::fs::read_to_string(page).unwrap();
    let probe = r##"<script>
(function () {
  const W = document.documentElement.clientWidth, bad = [];
  for (const id of ["test-head", "code-box", "lit-box", "verdict-box", "witness-box", "k-witness", "emitted-box"]) {
    const e = document.getElementById(id);
    if (!e || !e.getClientRects().length) continue;
    const r = e.getBoundingClientRect();
    if (r.right > W + 1) bad.push(id + " ends at " + Math.round(r.right) + " of " + W);
  }
  const boxes = [...document.querySelectorAll("#view > section")].filter((e) => e.getClientRects().length);
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i].getBoundingClientRect(), b = boxes[j].getBoundingClientRect();
    const aw = Math.max(a.width, boxes[i].scrollWidth), bw = Math.max(b.width, boxes[j].scrollWidth);
    if (a.left < b.left + bw - 1 && b.left < a.left + aw - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) bad.push("#" + boxes[i].id + " and #" + boxes[j].id + " overlap");
  }
  if (document.getElementById("view").scrollWidth > document.getElementById("view").clientWidth + 1) bad.push("the view scrolls sideways");
  const items = [...document.querySelectorAll("#list li span")].map((e) => e.getBoundingClientRect());
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
    const a = items[i], b = items[j];
    if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) bad.push("list entries " + i + " and " + j + " overlap");
  }
  document.body.setAttribute("data-fits", bad.length ? bad.join("; ") : "yes");
})();
</script>
</body>"##;
    let dir = scratch("measured");
    let copy = dir.join("page.html");
    std::fs::write(&copy, html.replacen("</body>", probe, 1)).unwrap();
    let dom = dump_dom_with(
        chromium,
        &copy,
        fragment,
        &[&format!("--window-size={width},1200")],
    );
    let _ = std::fs::remove_dir_all(&dir);
    let i = dom.find("data-fits=\"").expect("the probe ran") + "data-fits=\"".len();
    dom[i..i + dom[i..].find('"').unwrap()].to_string()
}

/// Issue 23 item 6: the explorer fits kernel programs. A page of them has
/// filters that select among them (launch, the literature's verdicts; not
/// AXB configurations, Table 4 buckets or idioms, which would select none),
/// counts "kernel programs", suggests a kernel name, says so when a link
/// names a program it does not hold, and shows long explanations and the
/// literature's comment inside the window, narrow or wide.
#[test]
fn the_explorer_fits_kernel_programs() {
    let Some(chromium) = chromium() else { return };
    let (loaded, html) = idioms_page();
    let data = page_data(&html);
    let kernels = data["kernels"].as_array().unwrap().clone();
    let dir = scratch("kernel-fit");
    let page = dir.join("idioms.html");
    std::fs::write(&page, &html).unwrap();
    let count = |dom: &str| -> usize { text_of(dom, "count").parse().unwrap() };

    let dom = dump_dom(&chromium, &page, "");
    assert_eq!(count(&dom), loaded.programs.len());
    assert_eq!(text_of(&dom, "count-word"), "kernel programs");
    assert_eq!(hidden_filters(&dom), ["Configuration", "Bucket", "Idiom"]);
    let first = &loaded.programs[0].name;
    assert!(
        dom.contains(&format!("placeholder=\"e.g. {first}\"")),
        "placeholder"
    );
    assert!(
        dom.contains("id=\"notice\" hidden"),
        "no notice without a link"
    );

    // The launch filter: the programs of one launch.
    let launch = kernels[0]["launch"].as_str().unwrap();
    let want = kernels.iter().filter(|k| k["launch"] == launch).count();
    let dom = dump_dom(
        &chromium,
        &page,
        &format!("launch={}", launch.replace(' ', "%20")),
    );
    assert_eq!(count(&dom), want);
    assert!(want >= 1 && want < kernels.len(), "{launch}: {want}");

    // The literature filter: every stated verdict agrees / none stated.
    let agrees = |k: &serde_json::Value| {
        let stated: Vec<&str> = k["r"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["a"].as_str().filter(|a| !a.is_empty()))
            .collect();
        (
            !stated.is_empty() && stated.iter().all(|a| *a == "yes"),
            stated.is_empty(),
        )
    };
    let all_agree = kernels.iter().filter(|k| agrees(k).0).count();
    let none = kernels.iter().filter(|k| agrees(k).1).count();
    assert!(all_agree > 0);
    assert_eq!(count(&dump_dom(&chromium, &page, "lit=agrees")), all_agree);
    assert_eq!(count(&dump_dom(&chromium, &page, "lit=none")), none);
    assert_eq!(count(&dump_dom(&chromium, &page, "lit=disagrees")), 0);
    let one = dump_dom(&chromium, &page, "q=mutex-simplified");
    assert_eq!(
        (count(&one), text_of(&one, "count-word")),
        (1, "kernel program")
    );

    // A link to a program the page does not hold says so.
    let dom = dump_dom(&chromium, &page, "test=no-such-idiom");
    assert!(dom.contains("data-missing=\"no-such-idiom\""));
    let notice = text_of(&dom, "notice");
    assert!(
        notice.contains("no-such-idiom") && notice.contains(first.as_str()),
        "{notice}"
    );
    assert_eq!(text_of(&dom, "title"), first);

    // The literature's comment is reflowed: a paragraph is one line.
    let lit = unescape(text_of(
        &dump_dom(&chromium, &page, "test=decoupled-lookback"),
        "k-lit",
    ));
    assert!(lit.starts_with("Decoupled look-back, single invocation per workgroup: each workgroup takes its partition"), "{lit}");

    // Nothing sticks out of the window, narrow or wide, with the longest
    // explanation shown.
    let longest = kernels
        .iter()
        .flat_map(|k| k["r"].as_array().unwrap().iter().map(move |r| (k, r)))
        .max_by_key(|(_, r)| {
            r["w"]
                .as_str()
                .unwrap()
                .lines()
                .map(str::len)
                .max()
                .unwrap_or(0)
        })
        .unwrap();
    let fragment = format!(
        "test={}&model={}",
        longest.0["n"].as_str().unwrap(),
        longest.1["m"]
            .as_str()
            .unwrap()
            .replace(' ', "%20")
            .replace(',', "%2C")
    );
    for width in [900, 1400] {
        assert_eq!(
            measured(&chromium, &page, &fragment, width),
            "yes",
            "{width} px, #{fragment}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
