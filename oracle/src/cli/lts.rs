//! `oracle lts`: a test's state space, or its product with one model's
//! fair set, as Graphviz DOT or JSON. AXB tests under the eleven models
//! are drawn by the AXB engine; kernel programs and scoped models by the
//! kernel checker (DOT only).

use super::{
    axb_case, emit, item_failed, json_bytes, one_item, parse_model, scoped_model, shown, too_large,
    witness_options, Failure, LtsFormat, Out,
};
use progress_litmus::axb::load::NamedTest;
use progress_litmus::kernel::load::Item;
use progress_litmus::kernel::ScopedModel;
use progress_litmus::Model;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A test file, or a suite with --test.
    path: PathBuf,
    /// Show the product with this model's fair set; without it, the test's own space.
    #[arg(long, value_parser = parse_model)]
    pub(super) model: Option<ScopedModel>,
    /// The test's name, when PATH is a suite.
    #[arg(long)]
    test: Option<String>,
    /// At most K workgroups resident at once (with --model).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u8).range(1..), requires = "model")]
    occupancy: Option<u8>,
    /// `dot` (Graphviz) or `json` (states and transitions; AXB tests only).
    #[arg(long, value_enum, default_value_t = LtsFormat::Dot)]
    format: LtsFormat,
    /// The same as --format dot (the old spelling; DOT is the default).
    #[arg(long, conflicts_with = "format")]
    dot: bool,
    #[command(flatten)]
    out: Out,
}

/// `oracle lts`: one test, drawn by the engine that owns its case.
pub(super) fn run(args: &Args, max_states: usize) -> Result<bool, Failure> {
    let item = one_item(&args.path, args.test.as_deref())?;
    let model = match args.model {
        Some(m) => Some(scoped_model(&item, Some(m), args.occupancy)?),
        None => None,
    };
    let bytes = match (&item, model) {
        (Item::Axb(t), None) => axb_space(t, args.format, max_states)?,
        (_, Some(m)) if axb_case(&item, &m).is_some() => {
            let (t, model) = axb_case(&item, &m).expect("an AXB case");
            axb_product(&t, model, args.format, max_states)?
        }
        (_, m) => kernel_space(&item, m.as_ref(), args.format, max_states)?,
    };
    emit(&args.out, &bytes)?;
    Ok(true)
}

/// An AXB test's own space (no model).
fn axb_space(t: &NamedTest, format: LtsFormat, max_states: usize) -> Result<Vec<u8>, Failure> {
    let test = &t.entry.test;
    let lts = progress_litmus::axb::space::program_space_bounded(test, max_states)
        .map_err(|e| Failure::input(too_large(t, e, crate::PRODUCT_BYTES_PER_STATE)))?;
    Ok(match format {
        LtsFormat::Dot => crate::axb::lts::program_dot(test, &t.name, &lts).into_bytes(),
        LtsFormat::Json => json_bytes(&crate::axb::lts::program_json(test, &t.name, &lts)),
    })
}

/// An AXB test's product with one of the eleven models' fair sets.
fn axb_product(
    t: &NamedTest,
    model: Model,
    format: LtsFormat,
    max_states: usize,
) -> Result<Vec<u8>, Failure> {
    let test = &t.entry.test;
    let p = crate::axb::product::Product::build_bounded(test, model.base, max_states)
        .map_err(|e| Failure::input(too_large(t, e, crate::PRODUCT_BYTES_PER_STATE)))?;
    Ok(match format {
        LtsFormat::Dot => crate::axb::dot::to_dot(test, &t.name, &p).into_bytes(),
        LtsFormat::Json => json_bytes(&crate::axb::lts::product_json(test, &t.name, model, &p)),
    })
}

/// A kernel program (or an AXB test under a scoped model) drawn by the
/// kernel checker, with the model's fair set when one is given; DOT only.
fn kernel_space(
    item: &Item,
    m: Option<&ScopedModel>,
    format: LtsFormat,
    max_states: usize,
) -> Result<Vec<u8>, Failure> {
    if format == LtsFormat::Json {
        return Err(Failure::input(format!(
            "{}: lts --format json is for AXB tests under the eleven models; kernel programs and scoped models are drawn as DOT",
            shown(item.source())
        )));
    }
    let program = item.program();
    Ok(
        crate::kernel::dot::to_dot(&program, item.name(), m, witness_options(max_states))
            .map_err(|e| Failure::input(item_failed(item, &e)))?
            .into_bytes(),
    )
}
