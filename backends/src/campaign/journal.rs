//! The campaign journal: one JSON line per event, appended and fsync'd the
//! moment it is known, so that an interrupted campaign (Ctrl-C, `kill -9`,
//! a lost machine) loses at most the run in flight.
//!
//! ```text
//! {"campaign":{...the options that define the campaign...}}
//! {"session":{"started_unix_ms":1700000000000}}
//! {"result":{"test":"2t2i_0","mapping":"plain","iteration":0,"terminated":true,...}}
//! ```
//!
//! The first line says what the campaign is; `--resume` refuses a journal
//! of a different campaign. A line is complete only with its newline: a
//! kill in the middle of a write leaves a *torn* last line without one,
//! which [`read`] reports separately so the runner can cut it off and redo
//! that run. Any complete line that does not parse (a key given twice in
//! an object included, [`crate::json`]), and any run recorded
//! twice, is an error naming the file and line: the journal is the record
//! of the campaign and is never silently repaired. (What a resumed
//! campaign checks beyond that, each run against the campaign, is in
//! `execute::recorded` in [`crate::campaign::execute`].)
//!
//! A process working on a journal holds an exclusive lock on it
//! ([`Locked`], `flock` on Unix) for as long as it runs, so a second
//! process on the same campaign (`backends run --resume` twice on one
//! `--out`) is refused at once instead of interleaving its lines.

use crate::excerpt::excerpt;
use progress_litmus::io::journal::Holder;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One run of one test under one mapping.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    pub test: String,
    pub mapping: String,
    /// 0-based, per test and mapping, over the whole campaign.
    pub iteration: u32,
    pub terminated: bool,
    pub elapsed_ms: f64,
    pub instances: u32,
    pub workgroups: u64,
    /// When the result was journaled.
    pub at_unix_ms: u64,
    /// The program's target-specific fields (threads, device, launch...).
    #[serde(
        default,
        skip_serializing_if = "serde_json::Map::is_empty",
        deserialize_with = "crate::json::strict_map"
    )]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The start of a runner process on the campaign.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    pub started_unix_ms: u64,
}

/// One line of the journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Entry {
    Campaign(#[serde(deserialize_with = "crate::json::strict_value")] serde_json::Value),
    Session(Session),
    Result(RunRecord),
}

/// What [`read`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Contents {
    pub entries: Vec<Entry>,
    /// The line of each entry (from 1).
    pub lines: Vec<usize>,
    /// Length in bytes of the complete lines: where to cut a torn tail.
    pub complete_len: u64,
    /// The bytes of a torn last line (no newline), if any.
    pub torn: Option<String>,
}

impl Contents {
    /// The campaign line (always the first entry of a valid journal).
    pub fn campaign(&self) -> &serde_json::Value {
        match &self.entries[0] {
            Entry::Campaign(c) => c,
            _ => unreachable!("read checks the first line"),
        }
    }

    pub fn results(&self) -> impl Iterator<Item = &RunRecord> {
        self.results_at().map(|(_, r)| r)
    }

    /// The results with their lines.
    pub fn results_at(&self) -> impl Iterator<Item = (usize, &RunRecord)> {
        self.lines
            .iter()
            .zip(&self.entries)
            .filter_map(|(&n, e)| match e {
                Entry::Result(r) => Some((n, r)),
                _ => None,
            })
    }
}

/// Reads a journal; see the module doc for what is an error.
pub fn read(path: &Path) -> Result<Contents, String> {
    let limit =
        progress_litmus::io::max_input_bytes().map_err(|e| format!("{}: {e}", path.display()))?;
    let bytes = progress_litmus::io::read_bytes_limited(path, limit).map_err(|e| e.to_string())?;
    let complete_len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let torn = (complete_len < bytes.len())
        .then(|| String::from_utf8_lossy(&bytes[complete_len..]).into_owned());
    let mut entries = Vec::new();
    let mut at = Vec::new();
    let mut seen: BTreeMap<(String, String, u32), usize> = BTreeMap::new();
    let mut lines: Vec<&[u8]> = bytes[..complete_len].split(|&b| b == b'\n').collect();
    lines.pop(); // what follows the last newline: nothing
    for (i, line) in lines.into_iter().enumerate() {
        let n = i + 1;
        let corrupt = |why: String| {
            format!(
                "{}:{n}: corrupt journal line ({why}); the journal is the campaign's record and is not repaired automatically: fix or remove the line, or start a new campaign in another --out directory",
                path.display()
            )
        };
        let text = std::str::from_utf8(line).map_err(|e| corrupt(format!("not UTF-8: {e}")))?;
        let entry: Entry = serde_json::from_str(text).map_err(|e| corrupt(e.to_string()))?;
        match (&entry, n) {
            (Entry::Campaign(_), 1) => {}
            (Entry::Campaign(_), _) => return Err(corrupt("a second campaign line".into())),
            (_, 1) => return Err(corrupt("the first line must describe the campaign".into())),
            (Entry::Result(r), _) => {
                let key = (r.test.clone(), r.mapping.clone(), r.iteration);
                if let Some(first) = seen.insert(key, n) {
                    return Err(corrupt(format!(
                        "run {} of {} under {} is recorded twice (first at line {first})",
                        r.iteration,
                        excerpt(&r.test),
                        excerpt(&r.mapping)
                    )));
                }
            }
            (Entry::Session(_), _) => {}
        }
        entries.push(entry);
        at.push(n);
    }
    if entries.is_empty() {
        return Err(format!(
            "{}: the journal has no complete line{}: nothing was recorded, remove it to start the campaign again",
            path.display(),
            if torn.is_some() {
                " (only a torn one)"
            } else {
                ""
            }
        ));
    }
    Ok(Contents {
        entries,
        lines: at,
        complete_len: complete_len as u64,
        torn,
    })
}

/// Opens the journal at `path` with `options` and locks it, as every
/// tool's journal is ([`progress_litmus::io::journal::open_locked`]: the
/// holder named, the file still at `path`, a regular file).
fn open_locked(path: &Path, options: &OpenOptions) -> Result<File, String> {
    let who = Holder {
        process: "backends",
        work: "campaign",
    };
    progress_litmus::io::journal::open_locked(path, options, who)
}

/// A journal held with an exclusive lock, not yet written to by this
/// process: opened (created empty if missing) before a campaign does any
/// work, so a second process is refused at once. An empty journal is a
/// campaign not started (a process that died while building its program
/// leaves one).
pub struct Locked {
    file: File,
    path: PathBuf,
}

impl Locked {
    pub fn open(path: &Path) -> Result<Locked, String> {
        let file = open_locked(
            path,
            OpenOptions::new().read(true).append(true).create(true),
        )?;
        Ok(Locked {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Whether nothing was ever written to it.
    pub fn is_empty(&self) -> Result<bool, String> {
        self.file
            .metadata()
            .map(|m| m.len() == 0)
            .map_err(|e| format!("{}: {e}", self.path.display()))
    }

    /// Removes an empty journal (a campaign that did not start: its
    /// program could not be built), releasing the lock.
    pub fn discard_if_empty(self) {
        if self.is_empty().unwrap_or(false) {
            let _ = std::fs::remove_file(&self.path);
        }
    }

    /// Starts the campaign in an empty journal: its first line.
    pub fn start(self, campaign: &serde_json::Value) -> Result<Writer, String> {
        let mut w = Writer {
            file: self.file,
            path: self.path,
        };
        w.append(&Entry::Campaign(campaign.clone()))?;
        Ok(w)
    }

    /// Continues the journal after its first `complete_len` bytes, cutting
    /// off a torn last line.
    pub fn resume(self, complete_len: u64) -> Result<Writer, String> {
        self.file
            .set_len(complete_len)
            .and_then(|_| self.file.sync_all())
            .map_err(|e| {
                format!(
                    "{}: cannot cut the torn last line: {e}",
                    self.path.display()
                )
            })?;
        Ok(Writer {
            file: self.file,
            path: self.path,
        })
    }
}

/// An open journal, appending, its lock held until it is dropped.
pub struct Writer {
    file: File,
    path: PathBuf,
}

impl Writer {
    /// Creates a new journal whose first line is `campaign`; an existing
    /// file is an error (that campaign must be resumed or moved away).
    pub fn create(path: &Path, campaign: &serde_json::Value) -> Result<Writer, String> {
        let file = open_locked(path, OpenOptions::new().append(true).create_new(true))?;
        Locked {
            file,
            path: path.to_path_buf(),
        }
        .start(campaign)
    }

    /// Opens an existing journal for appending after its first
    /// `complete_len` bytes, cutting off a torn last line.
    pub fn resume(path: &Path, complete_len: u64) -> Result<Writer, String> {
        let file = open_locked(path, OpenOptions::new().append(true))?;
        Locked {
            file,
            path: path.to_path_buf(),
        }
        .resume(complete_len)
    }

    /// Appends one line and waits until it is on disk.
    pub fn append(&mut self, entry: &Entry) -> Result<(), String> {
        self.append_all(std::slice::from_ref(entry))
    }

    /// Appends lines and waits until they are on disk (one sync for all:
    /// an import journals thousands of runs known at once).
    pub fn append_all(&mut self, entries: &[Entry]) -> Result<(), String> {
        let mut text = String::new();
        for e in entries {
            text.push_str(&oracle::json::to_string(e).expect("serializable"));
            text.push('\n');
        }
        self.file
            .write_all(text.as_bytes())
            .and_then(|_| self.file.sync_data())
            .map_err(|e| format!("{}: cannot append to journal: {e}", self.path.display()))
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(test: &str, iteration: u32) -> Entry {
        Entry::Result(RunRecord {
            test: test.into(),
            mapping: "plain".into(),
            iteration,
            terminated: true,
            elapsed_ms: 1.5,
            instances: 1,
            workgroups: 2,
            at_unix_ms: 7,
            extra: serde_json::Map::new(),
        })
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("axb-journal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("j.jsonl")
    }

    #[test]
    fn lines_round_trip_and_a_torn_tail_is_reported_and_cut() {
        let p = scratch("torn");
        let mut w = Writer::create(&p, &serde_json::json!({"k": 1})).unwrap();
        w.append(&record("a", 0)).unwrap();
        w.append(&record("a", 1)).unwrap();
        drop(w);
        let full = std::fs::read(&p).unwrap();
        let mut torn = full.clone();
        torn.extend_from_slice(b"{\"result\":{\"test\":\"a\",\"mapp");
        std::fs::write(&p, &torn).unwrap();
        let c = read(&p).unwrap();
        assert_eq!(c.entries.len(), 3);
        assert_eq!(c.entries[2], record("a", 1));
        assert_eq!(c.complete_len, full.len() as u64);
        assert_eq!(
            c.torn.as_deref(),
            Some("{\"result\":{\"test\":\"a\",\"mapp")
        );
        let mut w = Writer::resume(&p, c.complete_len).unwrap();
        w.append(&record("a", 2)).unwrap();
        let c = read(&p).unwrap();
        assert_eq!(c.torn, None);
        assert_eq!(c.results().count(), 3);
        let _ = std::fs::remove_dir_all(p.parent().unwrap());
    }

    #[test]
    fn corrupt_lines_and_double_counts_are_errors_naming_the_line() {
        let p = scratch("corrupt");
        let mut w = Writer::create(&p, &serde_json::json!({})).unwrap();
        w.append(&record("a", 0)).unwrap();
        w.append(&record("b", 0)).unwrap();
        drop(w);
        let good = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = good.lines().collect();
        let cases = [
            (
                format!("{}\n{{oops\n{}\n", lines[0], lines[2]),
                ":2: corrupt journal line",
            ),
            (
                format!("{}\n\n{}\n", lines[0], lines[2]),
                ":2: corrupt journal line",
            ),
            (
                format!("{}\n{}\n", lines[1], lines[2]),
                ":1: corrupt journal line",
            ),
            (format!("{good}{}\n", lines[1]), "recorded twice"),
            (format!("{good}{}\n", lines[0]), "a second campaign line"),
            (
                good.replace("\"terminated\":true", "\"terminated\":\"yes\""),
                ":2: corrupt journal line",
            ),
            // A key given twice, in the record, in its `extra` map, in
            // the campaign: never the last one silently.
            (
                good.replace("\"terminated\":true", "\"terminated\":false,\"terminated\":true"),
                "duplicate field `terminated`",
            ),
            (
                good.replace(
                    "\"terminated\":true",
                    "\"terminated\":true,\"extra\":{\"device\":\"a\",\"device\":\"b\"}",
                ),
                ":2: corrupt journal line (the key `device` is given twice in one object at line 1 column",
            ),
            (
                good.replacen("{\"campaign\":{}", "{\"campaign\":{\"suite\":\"a\",\"suite\":\"b\"}", 1),
                ":1: corrupt journal line (the key `suite` is given twice in one object at line 1",
            ),
        ];
        for (text, needle) in cases {
            std::fs::write(&p, &text).unwrap();
            let e = read(&p).unwrap_err();
            assert!(e.contains(needle), "{text:?}: {e}");
            assert!(e.contains(&p.display().to_string()), "{e}");
        }
        assert!(Writer::create(&p, &serde_json::json!({})).is_err());
        let _ = std::fs::remove_dir_all(p.parent().unwrap());
    }
}
