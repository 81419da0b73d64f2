//! The journal of a `find` run: every finished piece (a split of a
//! configuration) with its answers, so that a run stopped by Ctrl-C,
//! kill -9 or `--timeout` continues with `--resume` where it stopped.
//!
//! JSON lines, synced per line, beside the output (`<out>.journal`), in
//! the line format of the enumeration journal ([`crate::enumerate::checkpoint`]:
//! `<FNV-1a checksum> <JSON>`); the first line records the run, and
//! resuming with other options is an error. A torn last line (a write cut
//! short by a kill) is dropped and its piece searched again. The file is
//! held with an exclusive lock for the whole run, taken before anything
//! else is looked at, so a second process on the same output is refused
//! at once with a message naming the lock (and the process holding it,
//! where the system says). The searches are deterministic (varisat is), so
//! a resumed run writes the same bytes as an uninterrupted one.
//!
//! What the journal holds goes into the answer unexamined by the search,
//! so it is trusted with nothing, as the enumeration journal is not: every
//! line's checksum must match; every piece must be one of this run's, named
//! once (a later line may only search a piece again for more answers than
//! it stopped at); its answer and candidate counts must be possible for the
//! piece and the run's `--limit`; and every answer is decided again: a test
//! of the piece's configuration and split, canonical, satisfying SPEC §4,
//! and answering the query under the oracle. A checksum can be recomputed
//! by hand; these checks cannot be fooled into a wrong answer. Any failure
//! is one `file:line: ...` error before any search.

use super::search::Piece;
use super::Query;
use crate::enumerate::checkpoint::{body, line, open_locked};
use crate::enumerate::config::check_shape;
use progress_litmus::axb::test::Test;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One finished piece.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Done {
    pub piece: String,
    /// The answers the piece was searched for (`None`: all); a piece that
    /// found that many may hold more.
    pub want: Option<usize>,
    pub answers: Vec<Test>,
    pub candidates: u64,
}

/// The run a journal must belong to: its header line, every piece it may
/// search, and what an answer must be.
pub struct Run<'a> {
    /// The first line's body (options that must match on resume).
    pub header: String,
    /// Every piece of every configuration the run may search.
    pub pieces: Vec<Piece>,
    pub query: &'a Query,
    /// `--limit` (`None`: all answers).
    pub limit: Option<usize>,
}

impl Run<'_> {
    /// Why `d` cannot be a record of `piece` in this run.
    fn check(&self, piece: &Piece, d: &Done) -> Result<(), String> {
        match (self.limit, d.want) {
            (None, None) => {}
            (Some(limit), Some(w)) if (1..=limit).contains(&w) => {}
            (limit, w) => {
                return Err(format!(
                    "piece {}: searched for {} answers, impossible with --limit {}",
                    d.piece,
                    w.map_or("all".into(), |w| w.to_string()),
                    limit.map_or("all".into(), |l| l.to_string())
                ))
            }
        }
        if d.want.is_some_and(|w| d.answers.len() > w) {
            return Err(format!(
                "piece {}: {} answers, more than the {} it was searched for",
                d.piece,
                d.answers.len(),
                d.want.unwrap_or(0)
            ));
        }
        let programs: f64 = crate::enumerate::program::units(&piece.cfg)
            .iter()
            .filter(|u| u.lens == piece.lens)
            .map(|u| crate::enumerate::program::unit_size(u, &piece.cfg))
            .sum();
        if (d.candidates as f64) > programs || d.candidates < d.answers.len() as u64 {
            return Err(format!(
                "piece {}: {} candidates checked, impossible for {} answers among {programs} programs",
                d.piece,
                d.candidates,
                d.answers.len()
            ));
        }
        let mut seen = HashSet::new();
        for (n, t) in d.answers.iter().enumerate() {
            self.decide(piece, t)
                .map_err(|e| format!("piece {}, answer {}: {e}", d.piece, n + 1))?;
            if !seen.insert(t) {
                return Err(format!(
                    "piece {}, answer {}: the same test twice",
                    d.piece,
                    n + 1
                ));
            }
        }
        Ok(())
    }

    /// Why `t` is not an answer the search of `piece` could give: decided
    /// again from scratch, the oracle included.
    fn decide(&self, piece: &Piece, t: &Test) -> Result<(), String> {
        let cfg = &piece.cfg;
        check_shape(t, cfg)?;
        let lens: Vec<usize> = t.threads.iter().map(Vec::len).collect();
        if lens != piece.lens {
            return Err(format!(
                "thread lengths {lens:?}, not the piece's {:?}",
                piece.lens
            ));
        }
        if piece.exact_locs && t.num_locs() != cfg.locs {
            return Err(format!(
                "{} locations, not the piece's {}",
                t.num_locs(),
                cfg.locs
            ));
        }
        if crate::enumerate::canon::canonical(t) != *t {
            return Err("not in canonical form, as the search writes answers".into());
        }
        crate::enumerate::constraints::check(t, cfg)
            .map_err(|v| format!("not a test of SPEC §4: {v}"))?;
        let v = oracle::verdicts(t);
        if !self.query.accepts(&v) {
            return Err(format!(
                "does not answer the query ({}): the oracle says {}",
                self.query.describe(),
                progress_litmus::Model::ALL
                    .iter()
                    .map(|&m| format!("{} {}", m.name(), v.get(m).as_char()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(())
    }
}

/// Whether `d` may follow `earlier`, a record of the same piece: only a
/// search of it again for more answers than it stopped at (it had found
/// all it was searched for) records a piece twice.
fn searched_again(earlier: &Done, d: &Done) -> bool {
    let stopped_full = earlier.want.is_some_and(|had| earlier.answers.len() >= had);
    let more = match (earlier.want, d.want) {
        (Some(had), Some(now)) => now > had,
        (Some(_), None) => true,
        (None, _) => false,
    };
    stopped_full && more
}

/// An open, locked journal.
pub struct Journal {
    path: PathBuf,
    done: BTreeMap<String, Done>,
    file: Mutex<File>,
}

impl Journal {
    /// Opens the journal at `path` for `run`: a new one, or with `resume`
    /// the one an interrupted run left (a new one if there is none). The
    /// lock is taken first, so a running find is named as such; an
    /// existing journal without `resume` is an error; every line is
    /// checked (module documentation) before any search.
    pub fn open(path: &Path, run: &Run, resume: bool) -> Result<Journal, String> {
        let mut file = open_locked(path, "synth find")?;
        let bytes =
            progress_litmus::io::read_open_limited(&mut file, path).map_err(|e| e.to_string())?;
        if !bytes.is_empty() && !resume {
            return Err(format!(
                "{} exists: an earlier find was interrupted; pass --resume to continue it, or delete the file to start over",
                path.display()
            ));
        }
        let mut done = BTreeMap::new();
        if bytes.is_empty() {
            file.write_all(line(&run.header).as_bytes())
                .and_then(|_| file.sync_all())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        } else {
            let text = String::from_utf8(bytes)
                .map_err(|e| format!("{}: not a synth find journal: {e}", path.display()))?;
            let keep = read_lines(path, &text, run, &mut done)?;
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
        let body = oracle::json::to_string(d).expect("tests serialize");
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(line(&body).as_bytes())
            .and_then(|_| f.sync_data())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// Removes the journal once the output is written (still holding the
    /// lock, so no other process can have it in between).
    pub fn finish(self) -> Result<(), String> {
        let removed = std::fs::remove_file(&self.path)
            .map_err(|e| format!("cannot remove {}: {e}", self.path.display()));
        drop(self.file);
        removed
    }
}

/// Reads and checks the lines of a journal's `text` into `done`; returns
/// the length of the complete lines (a torn last line is dropped).
fn read_lines(
    path: &Path,
    text: &str,
    run: &Run,
    done: &mut BTreeMap<String, Done>,
) -> Result<usize, String> {
    let at = |k: usize| format!("{}:{}", path.display(), k + 1);
    let mut lines = text.split_inclusive('\n').enumerate();
    let mut keep = 0;
    match lines.next() {
        Some((_, l)) if l.ends_with('\n') && body(l).is_ok_and(|b| b == run.header) => {
            keep += l.len();
        }
        Some((k, l)) => {
            return Err(match body(l) {
                Ok(b) => format!(
                    "{}: the journal is of another run ({}); resume with the same options, or delete it",
                    at(k),
                    progress_litmus::error::excerpt(b)
                ),
                Err(e) => format!(
                    "{}: not a synth find journal header: {e} (an older synth's journal? delete it to start over)",
                    at(k)
                ),
            })
        }
        None => unreachable!("non-empty text has a line"),
    }
    let pieces: HashMap<String, &Piece> = run.pieces.iter().map(|p| (p.key(), p)).collect();
    let mut first_at: HashMap<String, usize> = HashMap::new();
    for (k, l) in lines {
        if !l.ends_with('\n') {
            break; // torn by the interruption: searched again
        }
        let d: Done = body(l)
            .and_then(|b| serde_json::from_str(b).map_err(|e| e.to_string()))
            .map_err(|e| format!("{}: corrupt journal line: {e}", at(k)))?;
        let Some(piece) = pieces.get(&d.piece) else {
            return Err(format!(
                "{}: unknown piece `{}`: not a piece of this run",
                at(k),
                progress_litmus::error::excerpt(&d.piece)
            ));
        };
        if done.get(&d.piece).is_some_and(|e| !searched_again(e, &d)) {
            return Err(format!(
                "{}: piece {} recorded twice (first at line {})",
                at(k),
                d.piece,
                first_at[&d.piece]
            ));
        }
        run.check(piece, &d)
            .map_err(|e| format!("{}: {e}", at(k)))?;
        first_at.entry(d.piece.clone()).or_insert(k + 1);
        keep += l.len();
        done.insert(d.piece.clone(), d);
    }
    Ok(keep)
}
