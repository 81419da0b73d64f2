//! Campaigns: a suite run on a device, every run journaled the moment it
//! is known and resumable, or imported from a program run elsewhere, and
//! written as artifact-format result CSVs.
//!
//! - [`run`]: `backends run`, a campaign on this machine.
//! - [`journal`]: the append-only record of a campaign.
//! - [`import`]: `backends import`, the result lines of a program that ran
//!   on another machine, turned into the same journal and results.
//!
//! Dependencies run one way: a campaign builds its program with
//! [`crate::target`] and writes its results in the format of
//! [`crate::report::results`]; neither part knows of campaigns.

pub mod import;
pub mod journal;
pub mod run;
