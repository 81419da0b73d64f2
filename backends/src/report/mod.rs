//! Reports: which progress models a device's observations are consistent
//! with, from result CSVs (the published ones or a campaign's), as text,
//! JSON and SVG.
//!
//! - [`results`]: the artifact's result CSV format, read and written.
//! - [`observations`]: result files gathered into per-device observations.
//! - [`programs`]: which program each observation is of (tests are
//!   identified by content; a name is kept for display).
//! - [`analysis`]: observations against each model's conformance tests;
//!   [`build`]: a report from result folders and a database together.
//! - [`chart`]: the non-terminating tests per device and mapping as SVG.
//! - [`format`](mod@format): `--format` and stdout, shared by every command's output.
//! - [`db`]: the results database (SQLite), the runs of every device's
//!   campaigns in one file: [`db_schema`] (its tables, the upgrade from
//!   version 1), [`db_open`] (opening it: read-only for the commands that
//!   read, creating only a new or empty file), [`db_campaign`] (what identifies a
//!   campaign), [`db_facts`] (what a campaign records beyond its runs:
//!   options, driver, run times), [`db_gpus`] (the physical GPU a device
//!   is a setup of), [`db_programs`] (the programs of the tests), [`db_import`] (files into it); reading
//!   it back, the
//!   aggregate per device and `db list` in [`db`].
//! - [`site`]: the static results site from the database (`backends site`).
//! - [`out_dir`]: the output folder of `db export` and `site`, written
//!   never through a symbolic link below it.
//! - [`simt`]: SIMT-Step results (`.simt.csv`) against the four direct
//!   models (`backends report --simt`).
//!
//! Dependencies run one way: a report needs only the results and the
//! shared [`crate::mapping`]; nothing here knows of targets
//! ([`crate::target`]) or campaigns ([`crate::campaign`]), so the published
//! data and a campaign's results are read alike.

pub mod analysis;
pub mod build;
pub mod chart;
pub mod db;
pub mod db_campaign;
pub mod db_facts;
pub mod db_gpus;
pub mod db_import;
pub mod db_open;
pub mod db_programs;
pub mod db_schema;
pub mod format;
pub mod observations;
pub mod out_dir;
pub mod programs;
pub mod results;
pub mod simt;
pub mod site;
