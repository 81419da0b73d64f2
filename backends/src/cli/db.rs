//! The `backends db` command: result files and campaign journals into the
//! results database ([`crate::report::db`]), its campaigns listed with
//! their provenance, and the database back out as result CSVs.

use crate::campaign::db_journal;
use crate::report::db::{self, DeviceInfo, Imported};
use crate::report::db_import;
use crate::report::format::{print, Format};
use crate::report::out_dir::shown;
use clap::{Args, Subcommand};
use progress_litmus::exit::Failure;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(Subcommand, Debug)]
pub enum DbCommand {
    /// Import result CSV files and campaign journals (`NAME.journal.jsonl`:
    /// one row per run), or directories of them, into the database, one
    /// transaction per file. A run already in it (in any formatting, or
    /// as a journal's CSV export) is counted once. A file refused or a
    /// path that cannot be read (missing, a FIFO, a device, a directory
    /// without result files) is one error line each; the others are still
    /// imported, and the exit status is 2.
    #[command(after_help = crate::glossary::exit_status())]
    Import(ImportDbArgs),
    /// List the campaigns of the database with their provenance: device,
    /// target, suite, start (a UTC date), label, driver, host, deadline,
    /// runs per test, launch, runs, the files they were imported from,
    /// and the mappings whose deadline was too close to call; `unknown`
    /// where the campaign did not record it.
    #[command(after_help = crate::glossary::exit_status())]
    List(ListDbArgs),
    /// Write every device of the database as result CSVs in the artifact
    /// layout (`<N>_thread_<M>_instruction/db/<device>.csv`), k and n
    /// summed over a device's campaigns. A device name that is not a plain
    /// file name (a control or bidi character, `/`, `~`, a leading `.`,
    /// empty, over 200 bytes) gets the file `<slug>~<hash>.csv`, named in
    /// the status line.
    #[command(after_help = crate::glossary::exit_status())]
    Export(ExportDbArgs),
}

#[derive(Args, Debug)]
pub struct ImportDbArgs {
    /// The SQLite results database (created if missing or empty; a version
    /// 1 database is upgraded; another program's SQLite file is refused).
    #[arg(long, value_name = "FILE")]
    pub db: PathBuf,
    /// Result CSV files, campaign journals (`*.journal.jsonl`), or
    /// directories: every CSV under one, and the journals directly in it.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// The vendor of the devices of these files (e.g. `Apple`).
    #[arg(long)]
    pub vendor: Option<String>,
    /// Their GPU architecture or model (e.g. `A12`, `Mali-G77`).
    #[arg(long)]
    pub architecture: Option<String>,
    /// Their driver and version (kept per campaign).
    #[arg(long)]
    pub driver: Option<String>,
    /// The browser or host they ran in (default: the host a campaign's
    /// `device.json` records).
    #[arg(long)]
    pub host: Option<String>,
    /// The physical GPU the devices of these files are (e.g. `NVIDIA
    /// H200`), with --setup: the report and the site show one row per
    /// GPU, combining its setups, and read the devices of one GPU and
    /// setup as one device (a re-run under another name is another
    /// campaign of it).
    #[arg(long, value_name = "NAME", requires = "setup")]
    pub gpu: Option<String>,
    /// How the GPU was driven in these files: the API and the launch (e.g.
    /// `CUDA, cooperative launch`); with --gpu.
    #[arg(long, value_name = "TEXT", requires = "gpu")]
    pub setup: Option<String>,
    /// A label naming the campaign of result CSVs that have no device file
    /// (the artifact's): without one, all such files of a device and
    /// target are one campaign; another label makes another campaign
    /// (e.g. `2026-11-20`). Journals and CSVs with a device file are
    /// identified by their options and start.
    #[arg(long, value_name = "LABEL")]
    pub campaign: Option<String>,
    /// The suite the journals' runs were run from (several paths: as for
    /// `run`), for journals without their device file whose campaign line
    /// names no suite or one not found; checked against the suite a
    /// device file records.
    #[arg(long, value_name = "PATH")]
    pub suite: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ListDbArgs {
    /// The SQLite results database.
    #[arg(long, value_name = "FILE")]
    pub db: PathBuf,
    /// `text`: one line per campaign; `json`: a list of objects.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
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
/// in), 2 when a file was refused or a path could not be read (missing,
/// a FIFO, a device, a directory without result files): each is one
/// error line, and the other files are still imported.
pub fn main(args: &DbArgs) -> ExitCode {
    match &args.command {
        DbCommand::Import(a) => import(a),
        DbCommand::List(a) => list(a),
        DbCommand::Export(a) => export(a),
    }
}

fn fail(e: &str) -> ExitCode {
    Failure::input(e).exit()
}

/// The journals directly in the directory `dir`, sorted.
fn journals_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: cannot read directory: {e}", dir.display()))?;
    let mut found: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| db_journal::is_journal(p) && p.is_file())
        .collect();
    found.sort();
    Ok(found)
}

/// The files of `paths`: every result CSV (as `report` reads them), and
/// the journals given or directly in a directory given, after them; and
/// an error for each path that cannot be read (missing, a FIFO, a
/// device) or is a directory with neither, so that one bad path does not
/// stop the others.
fn files(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<String>) {
    let (journals, rest): (Vec<PathBuf>, Vec<PathBuf>) = paths
        .iter()
        .cloned()
        .partition(|p| db_journal::is_journal(p));
    let (mut out, mut in_dirs, mut bad) = (Vec::new(), Vec::new(), Vec::new());
    for (p, found) in rest
        .iter()
        .zip(crate::report::observations::expand_each(&rest))
    {
        let found = match found {
            Ok(f) => f,
            Err(e) => {
                bad.push(e);
                continue;
            }
        };
        if p.is_dir() {
            match journals_in(p) {
                Ok(j) if j.is_empty() && found.is_empty() => bad.push(format!(
                    "{}: no result CSV files or journals in this directory",
                    p.display()
                )),
                Ok(j) => in_dirs.extend(j),
                Err(e) => bad.push(e),
            }
        }
        out.extend(found);
    }
    out.extend(journals);
    out.extend(in_dirs);
    (out, bad)
}

fn import_one(
    conn: &mut rusqlite::Connection,
    f: &Path,
    a: &ImportDbArgs,
    info: &DeviceInfo,
) -> Result<Imported, String> {
    if db_journal::is_journal(f) {
        if a.campaign.is_some() {
            return Err(format!(
                "{}: --campaign is for result CSVs without a device file; a journal's campaign is identified by its campaign line and start",
                f.display()
            ));
        }
        let suite = (!a.suite.is_empty()).then_some(a.suite.as_slice());
        let src = db_journal::runs_source(f, suite)?;
        db_import::import_runs(conn, &src, info)
    } else if !a.suite.is_empty() {
        Err(format!(
            "{}: --suite is for campaign journals; a result CSV's suite is what its device file records",
            f.display()
        ))
    } else {
        db_import::import_csv(conn, f, info, a.campaign.as_deref())
    }
}

/// `--gpu` and `--setup` as given: printable, not empty, and a GPU name
/// without parentheses (`GPU (SETUP)` is how its devices are read).
fn check_gpu(a: &ImportDbArgs) -> Result<(), String> {
    for (flag, v) in [("--gpu", &a.gpu), ("--setup", &a.setup)] {
        let Some(v) = v else { continue };
        if v.trim().is_empty() || v.chars().any(progress_litmus::error::unprintable) {
            return Err(format!(
                "{flag} {}: give a name of printable characters",
                crate::excerpt::printable(v)
            ));
        }
    }
    if a.gpu.as_ref().is_some_and(|g| g.contains(['(', ')'])) {
        return Err(
            "--gpu: a GPU name without parentheses (its setups are read as `GPU (SETUP)`)".into(),
        );
    }
    Ok(())
}

fn import(a: &ImportDbArgs) -> ExitCode {
    if let Err(e) = check_gpu(a) {
        return fail(&e);
    }
    let (files, bad) = files(&a.results);
    for e in &bad {
        eprintln!("error: {}", crate::excerpt::printable(e));
    }
    if files.is_empty() {
        return ExitCode::from(2);
    }
    let mut conn = match db::open_import(&a.db) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let info = DeviceInfo {
        vendor: a.vendor.clone(),
        architecture: a.architecture.clone(),
        driver: a.driver.clone(),
        host: a.host.clone(),
        gpu: a.gpu.clone().zip(a.setup.clone()),
    };
    let (mut new, mut already, mut refused) = (0, 0, 0);
    for f in &files {
        match import_one(&mut conn, f, a, &info) {
            Ok(Imported::New(_)) => new += 1,
            Ok(Imported::Already(from)) => {
                already += 1;
                eprintln!(
                    "{}: already in the database (the same runs, from {})",
                    shown(f),
                    crate::excerpt::printable(&from)
                );
            }
            Err(e) => {
                refused += 1;
                eprintln!("error: {}", crate::excerpt::printable(&e));
            }
        }
    }
    let unread = match bad.len() {
        0 => String::new(),
        n => format!(", {n} paths not read"),
    };
    println!(
        "{}: {new} files imported, {already} already in, {refused} refused{unread}",
        shown(&a.db)
    );
    if refused > 0 || !bad.is_empty() {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The close calls of a campaign, `; deadline too close to call under
/// MAPPING (...)`, as `report` words them.
fn close_calls(c: &db::CampaignInfo) -> String {
    c.close_calls
        .iter()
        .map(|k| {
            format!(
                "; deadline too close to call under {}: a run that terminated took {:.1} ms, the quickest non-terminating run was stopped after {:.1} ms",
                k.mapping.name(),
                k.slowest_terminated_ms,
                k.quickest_stopped_ms
            )
        })
        .collect()
}

/// One campaign as a line of `db list`: what is not known says `unknown`.
fn campaign_line(c: &db::CampaignInfo) -> String {
    let show = |o: Option<&str>| crate::excerpt::printable(o.unwrap_or(db::UNKNOWN));
    let held = if c.runs > 0 {
        format!(
            "{} runs ({} not terminating)",
            c.runs, c.non_terminating_runs
        )
    } else {
        format!("{} k-of-n cells", c.summaries)
    };
    let started = match (&c.started_utc, c.imported) {
        (Some(d), true) => format!("{d} (when imported)"),
        (Some(d), false) => d.clone(),
        (None, _) => db::UNKNOWN.to_string(),
    };
    let device = match (&c.gpu, &c.setup) {
        (Some(g), Some(s)) => format!("{} (GPU {g}, setup {s})", c.device),
        _ => c.device.clone(),
    };
    format!(
        "{} {} target {} suite {} started {started} label {} driver {} host {} deadline {} runs per test {} launch {}: {held}, from {} file(s){}\n",
        c.campaign.chars().take(12).collect::<String>(),
        crate::excerpt::printable(&device),
        show(c.target.as_deref()),
        show(c.suite.as_deref()),
        c.label.as_deref().map_or("none".to_string(), crate::excerpt::printable),
        show(c.driver.as_deref().or(c.reported_driver.as_deref())),
        show(c.host.as_deref()),
        c.deadline(),
        c.runs_per_test(),
        show(c.launch.as_deref()),
        c.imports.len(),
        close_calls(c)
    )
}

fn list(a: &ListDbArgs) -> ExitCode {
    let campaigns = match db::campaigns(&a.db) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let text = match a.format {
        Format::Json => {
            let mut s = oracle::json::to_string_pretty(&campaigns).expect("serializable");
            s.push('\n');
            s
        }
        Format::Text => campaigns.iter().map(campaign_line).collect(),
    };
    match print(&text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => Failure::other(e).exit(),
    }
}

/// The status line of `db export`: how many files, and the devices whose
/// file is not named after them (their names are not plain file names).
fn export_status(done: &db::Exported, out: &Path) -> String {
    let mut line = format!("{} files written under {}", done.files.len(), shown(out));
    if !done.renamed.is_empty() {
        let each: Vec<String> = done
            .renamed
            .iter()
            .map(|(name, stem)| format!("{} as {stem}.csv", crate::excerpt::printable(name)))
            .collect();
        line.push_str(&format!(
            "; {} devices whose names are not plain file names are written under another name (a re-import names them after the file): {}",
            each.len(),
            each.join(", ")
        ));
    }
    line
}

fn export(a: &ExportDbArgs) -> ExitCode {
    // Keyed by the program each test is: the same program recorded under
    // two suites is one row.
    let (devices, tests) = match db::load(&a.db).and_then(|mut l| {
        let tests = crate::report::programs::resolve(&mut l.devices, &[], &l.leads)?;
        Ok((l.devices, tests))
    }) {
        Ok(d) => d,
        Err(e) => return fail(&e),
    };
    match db::export(&devices, &tests.programs, &a.out) {
        Ok(done) => {
            println!("{}", export_status(&done, &a.out));
            ExitCode::SUCCESS
        }
        Err(e) => Failure::new(e.exit_code(), e.message()).exit(),
    }
}
