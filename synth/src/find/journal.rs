//! The journal of a `find` run: every finished piece (a split of a
//! configuration) with its answers, so that a run stopped by Ctrl-C,
//! kill -9 or `--timeout` continues with `--resume` where it stopped.
//!
//! JSON lines, synced per line, beside the output (`<out>.journal`); the
//! first line records the run, and resuming with other options is an
//! error. A torn last line (a write cut short by a kill) is dropped and
//! its piece searched again. The file is held with an exclusive lock
//! (`File::try_lock`, as `backends/src/campaign/journal.rs` does) for the
//! whole run, so a second process on the same output is refused at once.
//! The searches are deterministic (varisat is), so a resumed run writes
//! the same bytes as an uninterrupted one.

use progress_litmus::axb::test::Test;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One finished piece.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Done {
    pub piece: String,
    /// The answers the piece was searched for (`None`: all); a piece that
    /// found that many may hold more.
    pub want: Option<usize>,
    pub answers: Vec<Test>,
    pub candidates: u64,
}

/// An open, locked journal.
pub struct Journal {
    path: PathBuf,
    done: BTreeMap<String, Done>,
    file: Mutex<File>,
}

fn lock(file: &File, path: &Path) -> Result<(), String> {
    file.try_lock().map_err(|e| match e {
        TryLockError::WouldBlock => format!(
            "{}: another synth find is working on this output (it holds the journal's lock): wait for it to end, or stop it",
            path.display()
        ),
        TryLockError::Error(e) => format!("{}: cannot lock the journal: {e}", path.display()),
    })
}

impl Journal {
    /// Opens the journal at `path` for a run described by `header`: a new
    /// one, or with `resume` the one an interrupted run left (a new one if
    /// there is none). An existing journal without `resume` is an error.
    pub fn open(path: &Path, header: &str, resume: bool) -> Result<Journal, String> {
        let exists = path.exists();
        if exists && !resume {
            return Err(format!(
                "{} exists: an earlier find was interrupted; pass --resume to continue it, or delete the file to start over",
                path.display()
            ));
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        lock(&file, path)?;
        let mut text = String::new();
        file.read_to_string(&mut text)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut done = BTreeMap::new();
        let mut keep = 0;
        if text.is_empty() {
            writeln!(file, "{header}")
                .and_then(|_| file.sync_all())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        } else {
            let mut lines = text.split_inclusive('\n').enumerate();
            let at = |k: usize| format!("{}:{}", path.display(), k + 1);
            match lines.next() {
                Some((_, l)) if l.trim_end() == header => keep += l.len(),
                Some((k, l)) => {
                    return Err(format!(
                        "{}: the journal is of another run ({}); resume with the same options, or delete it",
                        at(k),
                        l.trim_end()
                    ))
                }
                None => unreachable!("non-empty text has a line"),
            }
            for (k, l) in lines {
                if !l.ends_with('\n') {
                    break; // torn by the interruption: searched again
                }
                let d: Done = serde_json::from_str(l)
                    .map_err(|e| format!("{}: corrupt journal line: {e}", at(k)))?;
                // A piece searched again for more answers: the later line wins.
                keep += l.len();
                done.insert(d.piece.clone(), d);
            }
            file.set_len(keep as u64)
                .and_then(|_| file.seek(SeekFrom::End(0)).map(|_| ()))
                .map_err(|e| format!("cannot reopen {}: {e}", path.display()))?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            done,
            file: Mutex::new(file),
        })
    }

    /// The record of `piece` if an earlier run finished it.
    pub fn done(&self, piece: &str) -> Option<&Done> {
        self.done.get(piece)
    }

    /// How many pieces earlier runs finished.
    pub fn pieces_done(&self) -> usize {
        self.done.len()
    }

    /// Records a finished piece durably before returning.
    pub fn record(&self, d: &Done) -> Result<(), String> {
        let line = serde_json::to_string(d).expect("tests serialize");
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        writeln!(f, "{line}")
            .and_then(|_| f.sync_data())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// Removes the journal once the output is written.
    pub fn finish(self) -> Result<(), String> {
        drop(self.file);
        std::fs::remove_file(&self.path)
            .map_err(|e| format!("cannot remove {}: {e}", self.path.display()))
    }
}
