//! The `backends db` command: result files into the results database, and
//! the database back out as result CSVs.

use crate::report::db::{self, DeviceInfo, Imported};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(Subcommand, Debug)]
pub enum DbCommand {
    /// Import result CSV files (or directories of them) into the database,
    /// one transaction per file. A file whose observations are already in
    /// it (in any formatting) is counted once.
    #[command(after_help = crate::glossary::exit_status())]
    Import(ImportDbArgs),
    /// Write every device of the database as result CSVs in the artifact
    /// layout (`<N>_thread_<M>_instruction/db/<device>.csv`).
    #[command(after_help = crate::glossary::exit_status())]
    Export(ExportDbArgs),
}

#[derive(Args, Debug)]
pub struct ImportDbArgs {
    /// The SQLite results database (created if missing).
    #[arg(long, value_name = "FILE")]
    pub db: PathBuf,
    /// Result CSV files or directories of them, as `backends report` reads.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// The vendor of the devices of these files (e.g. `Apple`).
    #[arg(long)]
    pub vendor: Option<String>,
    /// Their GPU architecture or model (e.g. `A12`, `Mali-G77`).
    #[arg(long)]
    pub architecture: Option<String>,
    /// Their driver and version.
    #[arg(long)]
    pub driver: Option<String>,
    /// The browser or host they ran in (default: the host a campaign's
    /// `device.json` records).
    #[arg(long)]
    pub host: Option<String>,
}

#[derive(Args, Debug)]
pub struct ExportDbArgs {
    /// The SQLite results database.
    #[arg(long, value_name = "FILE")]
    pub db: PathBuf,
    /// The directory to write the CSVs under.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
}

/// `backends db`: exit 0 when every file was imported (or was already
/// in), 2 when a file was refused (the others are still imported).
pub fn main(args: &DbArgs) -> ExitCode {
    match &args.command {
        DbCommand::Import(a) => import(a),
        DbCommand::Export(a) => export(a),
    }
}

fn fail(e: &str) -> ExitCode {
    eprintln!("error: {}", crate::excerpt::printable(e));
    ExitCode::from(2)
}

fn import(a: &ImportDbArgs) -> ExitCode {
    let files = match crate::report::observations::expand(&a.results) {
        Ok(f) => f,
        Err(e) => return fail(&e),
    };
    let mut conn = match db::open(&a.db) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let info = DeviceInfo {
        vendor: a.vendor.clone(),
        architecture: a.architecture.clone(),
        driver: a.driver.clone(),
        host: a.host.clone(),
    };
    let (mut new, mut already, mut refused) = (0, 0, 0);
    for f in &files {
        match db::import_file(&mut conn, f, &info) {
            Ok(Imported::New(_)) => new += 1,
            Ok(Imported::Already(from)) => {
                already += 1;
                eprintln!(
                    "{}: already in the database (the same observations, from {})",
                    f.display(),
                    crate::excerpt::printable(&from)
                );
            }
            Err(e) => {
                refused += 1;
                eprintln!("error: {}", crate::excerpt::printable(&e));
            }
        }
    }
    println!(
        "{}: {new} files imported, {already} already in, {refused} refused",
        a.db.display()
    );
    if refused > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

fn export(a: &ExportDbArgs) -> ExitCode {
    let devices = match db::load(&a.db) {
        Ok((d, _)) => d,
        Err(e) => return fail(&e),
    };
    match db::export(&devices, &a.out) {
        Ok(files) => {
            println!("{} files written under {}", files.len(), a.out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}", crate::excerpt::printable(&e));
            ExitCode::from(1)
        }
    }
}
