//! `synth table`: Table 4 and the distinguishing tests of a packed suite,
//! streaming (the work: [`crate::table`]).

use super::{bad_input, Failure};
use crate::table::{self, Error};
use std::path::PathBuf;

/// The arguments of `synth table`.
#[derive(clap::Args, Debug)]
pub struct TableArgs {
    /// A packed suite (`.axb.gz`, e.g. the merged output of `synth plan`'s
    /// jobs), read test by test in bounded memory, whatever its size.
    pub suite: PathBuf,
    /// The folder to write `table4.json`, `table4.txt` and
    /// `distinguishing/<MODEL>.axb.gz` into (made if missing).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// The rows whose distinguishing tests are written, comma-separated
    /// list names (HSA, OBE, LOBE, WEAK_FAIR, HSA_STRONG, OBE_STRONG,
    /// LOBE_STRONG, STRONG_FAIR); default all eight. The other rows are
    /// counted in Table 4, their lists not written (`"file": null`): the
    /// eight lists together are the whole suite, too large to keep for the
    /// 6-instruction configurations.
    #[arg(long, value_name = "MODELS")]
    pub lists: Option<String>,
    /// Refuse a test whose state space has more than this many states.
    #[arg(long, default_value_t = oracle::axb::shared_space::MAX_STATES_LIMIT)]
    pub max_states: usize,
}

/// Runs `synth table`, then one status line on stderr.
pub fn run(a: TableArgs) -> Result<(), Failure> {
    let shown = a.suite.display().to_string();
    if !progress_litmus::axb::packed::is_packed(&a.suite) {
        return Err(bad_input(format!(
            "{shown}: not a packed suite (`.axb.gz`); write one with `synth gen -o X.axb.gz` or `synth merge -o X.axb.gz`"
        )));
    }
    if a.dir.exists() && !a.dir.is_dir() {
        return Err(bad_input(format!(
            "--dir {}: not a folder",
            a.dir.display()
        )));
    }
    let keep = match &a.lists {
        None => table::rows().to_vec(),
        Some(l) => {
            let ms = crate::find::query::parse_models("--lists", l).map_err(bad_input)?;
            if ms.is_empty() {
                return Err(bad_input(
                    "--lists: name at least one row (leave --lists out to write all eight)",
                ));
            }
            if let Some(m) = ms.iter().find(|m| !table::rows().contains(m)) {
                return Err(bad_input(format!(
                    "--lists: {} is not a row of Table 4: expected some of {}",
                    m.name(),
                    table::rows().map(|m| m.name()).join(", ")
                )));
            }
            ms
        }
    };
    let _lock = lock_dir(&a.dir)?;
    let file = progress_litmus::io::open_input(&a.suite).map_err(|e| bad_input(e.to_string()))?;
    let gz = progress_litmus::axb::packed::decoder(std::io::BufReader::new(file));
    let mut reader = progress_litmus::axb::packed::Reader::new(std::io::BufReader::new(gz))
        .map_err(|e| bad_input(format!("{shown}:{e}")))?;
    let s = table::run(&mut reader, &shown, &a.dir, &keep, a.max_states).map_err(|e| match e {
        Error::Input(m) => bad_input(m),
        Error::Output(m) => Failure::other(m),
    })?;
    eprintln!(
        "{}",
        progress_litmus::error::printable(&format!(
            "synth: {} tests of {}: Table 4 and distinguishing lists -> {}",
            s.tests,
            s.suite,
            a.dir.display()
        ))
    );
    Ok(())
}

/// Makes `dir` and takes an exclusive lock on it for the run: a second
/// `synth table` on the same folder exits 2 at once instead of mixing its
/// lists with the first one's. The lock (`flock` on the folder itself, so
/// no lock file is left behind) ends with the process.
fn lock_dir(dir: &std::path::Path) -> Result<std::fs::File, Failure> {
    let shown = dir.display();
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::other(format!("cannot make --dir {shown}: {e}")))?;
    let f = std::fs::File::open(dir)
        .map_err(|e| Failure::other(format!("cannot open --dir {shown}: {e}")))?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => Err(bad_input(format!(
            "--dir {shown}: locked by another synth table writing there: wait for it to end, or stop it, first"
        ))),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(Failure::other(format!("cannot lock --dir {shown}: {e}")))
        }
    }
}
