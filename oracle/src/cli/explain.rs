//! `oracle explain`: why one test passes or fails under one model, with a
//! witness schedule. An AXB test under one of the eleven models goes to
//! the AXB engine (the paper's tool's output); anything else to the kernel
//! checker.

use super::{
    axb_case, batch_options, emit, item_failed, json_bytes, one_item, parse_model, scoped_model,
    too_large, Failure, Out, TextFormat,
};
use crate::kernel::KernelError;
use progress_litmus::kernel::load::Item;
use progress_litmus::kernel::shader::launch;
use progress_litmus::kernel::ScopedModel;
use progress_litmus::Model;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A test file, or a suite with --test.
    path: PathBuf,
    /// The model: HSA, OBE, LOBE, WEAK_FAIR, HSA_STRONG, ..., UNFAIR (or `strong-lobe`, `hsa+obe`, ...),
    /// or a scoped model such as "OBE, subgroup=unfair" (docs/KERNEL.md). A kernel
    /// program's own `model` line is the default.
    #[arg(long, value_parser = parse_model)]
    pub(super) model: Option<ScopedModel>,
    /// The test's name, when PATH is a suite.
    #[arg(long)]
    test: Option<String>,
    /// At most K workgroups resident at once (the occupancy-bound model).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u8).range(1..))]
    occupancy: Option<u8>,
    /// `text` for people; `json`: verdict, model and the witness schedule step by step.
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    format: TextFormat,
    #[command(flatten)]
    out: Out,
}

/// `oracle explain`: one test, one model, one explanation.
pub(super) fn run(args: &Args, max_states: usize) -> Result<bool, Failure> {
    let item = one_item(&args.path, args.test.as_deref())?;
    let m = scoped_model(&item, args.model, args.occupancy)?;
    let bytes = match axb_case(&item, &m) {
        Some((t, model)) => explain_axb(&t, model, args.format, max_states)?,
        None => explain_kernel(&item, &m, args.format, max_states)?,
    };
    emit(&args.out, &bytes)?;
    Ok(true)
}

/// `explain` by the AXB engine: the product with the model's fair set and
/// a witness on it, as text or JSON.
fn explain_axb(
    t: &progress_litmus::axb::load::NamedTest,
    model: Model,
    format: TextFormat,
    max_states: usize,
) -> Result<Vec<u8>, Failure> {
    let a = crate::try_analyse(&t.entry.test, model, max_states)
        .map_err(|e| Failure::input(too_large(t, e, crate::PRODUCT_BYTES_PER_STATE)))?;
    Ok(match format {
        TextFormat::Text => crate::axb::explain::explain(&t.entry.test, &t.name, &a).into_bytes(),
        TextFormat::Json => json_bytes(&crate::axb::explain::explain_json(
            &t.entry.test,
            &t.name,
            &a,
        )),
    })
}

/// `explain` by the kernel checker: the text, or JSON with the verdict,
/// the state count, the plain sentence (`summary`) and the text.
fn explain_kernel(
    item: &Item,
    m: &ScopedModel,
    format: TextFormat,
    max_states: usize,
) -> Result<Vec<u8>, Failure> {
    let program = item.program();
    let opts = batch_options(max_states);
    let fail = |e: KernelError| match e.is_internal() {
        true => Failure::other(item_failed(item, &e)),
        false => Failure::input(item_failed(item, &e)),
    };
    let asked = m.subgroup;
    // A shader's lockstep subgroups, where only they fail (§10.6).
    let m = &crate::kernel::explained_model(&program, m, opts).map_err(fail)?;
    let places = super::shader::places(item);
    let explained = crate::kernel::explain::explain_with(
        &program,
        item.name(),
        m,
        opts,
        crate::kernel::explain::Show::Program,
        &places,
    )
    .map_err(fail)?;
    let text = super::shader::in_shader_terms(item.source(), explained.text);
    // A shader's verdict names the launch it is for (its first line is
    // the verdict line).
    let launch = match item {
        Item::Kernel(p) => p.launch.as_deref().map(|l| launch::under(l, asked)),
        Item::Axb(_) => None,
    };
    let text = match &launch {
        Some(l) => match text.split_once('\n') {
            Some((first, rest)) => format!("{first}\nLaunch: {l}\n{rest}"),
            None => format!("{text}\nLaunch: {l}\n"),
        },
        None => text,
    };
    Ok(match format {
        TextFormat::Text => text.into_bytes(),
        TextFormat::Json => {
            // The explanation's own verdict and product, not a second
            // decision.
            let verdict = if explained.summary.is_some() {
                "F"
            } else {
                "P"
            };
            let summary = match explained.summary {
                Some(s) => s.text,
                None => format!("guaranteed to terminate under {m}"),
            };
            let mut v = serde_json::json!({
                "test": item.name(),
                "source": item.source().display().to_string(),
                "model": m.to_string(),
                "memory": "sequentially consistent",
                "verdict": verdict,
                "deadlock": explained.deadlock,
                "states": explained.states,
                "transitions": explained.transitions,
                "summary": summary,
                "explanation": text,
            });
            if let Some(l) = launch {
                v["launch"] = l.into();
            }
            json_bytes(&v)
        }
    })
}
