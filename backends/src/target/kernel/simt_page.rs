//! The SIMT-Step page (`simt.html`, written beside the WGSL files of
//! `backends emit --target wgsl` when some program has outcome
//! assertions): runs every SIMT form shader in a browser whose WebGPU
//! adapter offers the `subgroups` feature, prints the result lines that
//! `backends import --simt` reads, and answers the four-model question in
//! the page, from the outcome sets the oracle allows (computed here, at
//! emit time). Its script is `templates/simt_page.js`.

use crate::target::kernel::simt::{emit_simt, observed, Source};
use crate::target::kernel::{init_words, layout, Lang};
use oracle::kernel::outcomes::observed_outcomes;
use progress_litmus::kernel::load::NamedProgram;
use progress_litmus::kernel::ScopedModel;
use serde_json::{json, Value};

/// The file name of the page.
pub const PAGE: &str = "simt.html";

/// One test's entry in the page's `TESTS`.
fn entry(p: &NamedProgram) -> Result<Value, String> {
    let prog = &p.program;
    let lay = layout(prog);
    let wgsl = emit_simt(p, Lang::Wgsl)?;
    let at = format!("{}: program `{}`", p.source.display(), p.name);
    let observe: Vec<Value> = observed(prog, &lay)
        .map_err(|e| format!("{at}: {e}"))?
        .into_iter()
        .map(|(name, src)| match src {
            Source::Mem(k) => json!({"name": name, "regs": false, "index": k}),
            Source::Reg(k) => json!({"name": name, "regs": true, "index": k}),
        })
        .collect();
    let mut allowed = serde_json::Map::new();
    for m in ["cm", "sm", "scf", "sso"] {
        let model = ScopedModel::parse(&format!("WEAK_FAIR, subgroup={m}"))?;
        let (_, set) = observed_outcomes(prog, &model, oracle::kernel::DEFAULT_MAX_STATES)
            .map_err(|e| format!("{at}: subgroup={m}: {e}"))?;
        allowed.insert(m.to_uppercase(), json!(set.into_iter().collect::<Vec<_>>()));
    }
    let init: Vec<u64> = init_words(prog, &lay)
        .iter()
        .map(|w| w.trim_end_matches('u').parse().expect("a number"))
        .collect();
    let regs = prog
        .codes
        .iter()
        .map(|c| c.regs.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let invocations = usize::from(prog.workgroup_size);
    Ok(json!({
        "name": p.name,
        "wgsl": wgsl,
        "workgroups": prog.workgroups,
        "invocations": invocations,
        "values": prog.values,
        "init": init,
        "regWords": usize::from(prog.workgroups) * invocations * regs,
        "observe": observe,
        "allowed": Value::Object(allowed),
    }))
}

/// The page for `programs` (each with outcome assertions and a SIMT form).
pub fn page(programs: &[&NamedProgram]) -> Result<String, String> {
    let tests = programs
        .iter()
        .map(|p| entry(p))
        .collect::<Result<Vec<_>, _>>()?;
    // `</` would end the script element early.
    let data = oracle::json::to_string(&tests)
        .expect("JSON")
        .replace("</", "<\\/");
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>SIMT-Step tests on WebGPU</title>\n</head>\n<body>\n\
         <h1>SIMT-Step tests on WebGPU</h1>\n\
         <p>{} tests of kernel programs with outcome assertions (docs/KERNEL.md §2.10): each runs \
         many times; the outcomes seen say which of the SIMT-Step models CM, SM, SCF, SSO this \
         browser's GPU is consistent with. Open with <code>#runs=N</code> to set the runs.</p>\n\
         <div id=\"log\"></div>\n<pre id=\"lines\"></pre>\n\
         <script>\nconst TESTS = {data};\n</script>\n<script>\n{}</script>\n</body>\n</html>\n",
        tests.len(),
        crate::target::templates::SIMT_PAGE_JS
    ))
}
