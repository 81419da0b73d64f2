//! `synth table`: Table 4 and the distinguishing tests of a packed suite of
//! any size, streaming (issue 24).
//!
//! A complete 6-instruction suite holds tens of millions of tests: more
//! than a suite read whole may hold ([`progress_litmus::axb::packed::max_tests`]).
//! [`run`] reads it test by test, decides a batch of [`BATCH`] tests at a
//! time with the oracle's shared-space engine (every core), counts Table 4
//! (SPEC §5, [`progress_litmus::buckets`]) and appends each test to the
//! packed list of the row it is distinguishing for, in input order. Memory
//! is one batch and the eight gzip streams, whatever the suite's size.
//!
//! The folder it writes (the committed form, `suites/table4/<config>/`):
//!
//! ```text
//! table4.json                       the suite, its number of tests, Table 4
//! table4.txt                        the same in the paper's layout
//! distinguishing/<MODEL>.axb.gz     the tests distinguishing for each row
//! ```
//!
//! `<MODEL>` is the CSV name of a Table 4 row (`HSA`, `OBE`, `LOBE`,
//! `WEAK_FAIR`, `HSA_STRONG`, `OBE_STRONG`, `LOBE_STRONG`, `STRONG_FAIR`).
//! The lists are written as `.part` files and renamed once complete, and
//! `table4.json` last: a run that fails leaves no `.part` file and no new
//! `table4.json`.
//!
//! Every bucketed test is distinguishing for exactly one row, so the eight
//! lists partition the suite (less the tests in no bucket, which a
//! synthesized suite has none of); the bucket C counts follow from the
//! distinguishing ones (C(HSA) = D(HSA), C(OBE) = D(OBE), C(LOBE) = D(HSA) +
//! D(OBE) + D(LOBE), C(fair) = every test of the fairness), which
//! `synth/tests/table4.rs` checks on every committed folder, with a sample of
//! each list decided again.

use progress_litmus::axb::packed::{Reader, Writer};
use progress_litmus::axb::test::Test;
use progress_litmus::buckets::{distinguishing_for, Table4, ROWS};
use progress_litmus::model::{Fairness, Model};
use std::fs::File;
use std::io::{BufRead, BufWriter};
use std::path::{Path, PathBuf};

/// Tests decided at once: enough to keep every core busy, few enough that
/// memory stays a few megabytes.
pub const BATCH: usize = 1 << 15;

/// The eight rows of Table 4 in list order: weak HSA, OBE, LOBE, fair, then
/// the strong ones (the order of [`Table4`]'s `[fairness][row]`).
pub fn rows() -> [Model; 8] {
    let f = |k: usize| {
        if k < 4 {
            Fairness::Weak
        } else {
            Fairness::Strong
        }
    };
    std::array::from_fn(|k| Model::new(ROWS[k % 4], f(k)))
}

/// The file of a row's distinguishing tests, relative to the folder.
pub fn list_path(row: Model) -> String {
    format!("distinguishing/{}.axb.gz", row.name())
}

/// What [`run`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub suite: String,
    pub tests: usize,
    pub table: Table4,
    /// The rows whose lists were written.
    pub lists: Vec<Model>,
}

/// Why [`run`] stopped: bad input (a line of the suite, exit status 2) or
/// an output that could not be written or a test too large to decide
/// (exit status 1).
#[derive(Debug)]
pub enum Error {
    Input(String),
    Output(String),
}

/// The lists being written: a temporary file each, renamed into place
/// once every test is in.
struct Lists {
    /// One per row of [`rows`]; `None` for a row whose list is not kept.
    writers: Vec<Option<Writer<BufWriter<File>>>>,
    tmp: Vec<PathBuf>,
    done: Vec<PathBuf>,
}

impl Lists {
    fn create(dir: &Path, suite: &str, keep: &[Model]) -> Result<Lists, Error> {
        let out = |e: std::io::Error, p: &Path| {
            Error::Output(format!("cannot write {}: {e}", p.display()))
        };
        let sub = dir.join("distinguishing");
        std::fs::create_dir_all(&sub).map_err(|e| out(e, &sub))?;
        let mut lists = Lists {
            writers: Vec::new(),
            tmp: Vec::new(),
            done: Vec::new(),
        };
        for row in rows() {
            if !keep.contains(&row) {
                lists.writers.push(None);
                continue;
            }
            let done = dir.join(list_path(row));
            let tmp = done.with_extension("gz.part");
            let f = File::create(&tmp).map_err(|e| out(e, &tmp))?;
            let note = format!(
                "the tests of {suite} distinguishing for {} (SPEC §5), in the suite's order; written by synth table",
                row.pretty()
            );
            let w = Writer::new(BufWriter::new(f), suite, &note).map_err(|e| out(e, &tmp))?;
            lists.writers.push(Some(w));
            lists.tmp.push(tmp);
            lists.done.push(done);
        }
        Ok(lists)
    }

    fn finish(self) -> Result<(), Error> {
        let kept = self.writers.into_iter().flatten();
        for ((w, tmp), done) in kept.zip(&self.tmp).zip(&self.done) {
            let out =
                |e: std::io::Error| Error::Output(format!("cannot write {}: {e}", tmp.display()));
            let mut f = w.finish().map_err(out)?;
            std::io::Write::flush(&mut f).map_err(out)?;
            f.get_ref().sync_all().map_err(out)?;
            std::fs::rename(tmp, done).map_err(out)?;
        }
        Ok(())
    }
}

/// Decides `batch`, counts it into `table` and appends each test to the
/// list of its row.
fn flush(
    batch: &mut Vec<(String, Test)>,
    table: &mut Table4,
    lists: &mut Lists,
    max_states: usize,
) -> Result<(), Error> {
    let tests: Vec<&Test> = batch.iter().map(|(_, t)| t).collect();
    let verdicts = oracle::try_verdicts_all(&tests, max_states);
    let all = rows();
    for ((name, test), v) in batch.iter().zip(verdicts) {
        let v = v.map_err(|e| {
            Error::Output(format!(
                "test {name}: a state space of more than {} states (raise --max-states)",
                e.bound
            ))
        })?;
        let t = Table4::from_verdicts([&v]);
        add(table, &t);
        if let Some(d) = distinguishing_for(&v) {
            let k = all.iter().position(|&r| r == d).expect("a Table 4 row");
            if let Some(w) = lists.writers[k].as_mut() {
                w.push(name, test).map_err(|e| {
                    Error::Output(format!("cannot write the list of {}: {e}", d.name()))
                })?;
            }
        }
    }
    batch.clear();
    Ok(())
}

fn add(sum: &mut Table4, t: &Table4) {
    for f in 0..2 {
        for r in 0..4 {
            sum.d[f][r] += t.d[f][r];
            sum.c[f][r] += t.c[f][r];
        }
    }
    sum.unbucketed += t.unbucketed;
}

/// Streams the packed suite `reader` (shown as `shown` in errors) into
/// `dir`: the distinguishing lists of the rows in `keep` (the others are
/// counted, not written), `table4.json` and `table4.txt`.
pub fn run<R: BufRead>(
    reader: &mut Reader<R>,
    shown: &str,
    dir: &Path,
    keep: &[Model],
    max_states: usize,
) -> Result<Summary, Error> {
    let suite = reader.name.clone();
    let mut lists = Lists::create(dir, &suite, keep)?;
    let parts = lists.tmp.clone();
    let mut table = Table4::default();
    let mut tests = 0usize;
    let mut stream = || -> Result<(), Error> {
        let mut batch = Vec::with_capacity(BATCH);
        while let Some(entry) = reader
            .next_test()
            .map_err(|e| Error::Input(format!("{shown}:{e}")))?
        {
            batch.push(entry);
            tests += 1;
            if batch.len() == BATCH {
                flush(&mut batch, &mut table, &mut lists, max_states)?;
            }
        }
        flush(&mut batch, &mut table, &mut lists, max_states)
    };
    let streamed = stream();
    if let Err(e) = streamed.and_then(|()| lists.finish()) {
        // No half-written list is left behind (finished ones are whole).
        for p in &parts {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
    // Lists of rows not kept, left by an earlier run into the same folder,
    // would contradict `"file": null`: removed.
    for row in rows().into_iter().filter(|r| !keep.contains(r)) {
        let p = dir.join(list_path(row));
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::Output(format!("cannot remove {}: {e}", p.display())));
            }
            _ => {}
        }
    }
    let summary = Summary {
        suite,
        tests,
        table,
        lists: keep.to_vec(),
    };
    write_summary(dir, &summary)?;
    Ok(summary)
}

/// `table4.json` and `table4.txt` for `s`.
fn write_summary(dir: &Path, s: &Summary) -> Result<(), Error> {
    let json = summary_json(s);
    let mut text = format!(
        "{}: {} tests (memory: sequentially consistent)\n",
        s.suite, s.tests
    );
    text.push_str(&s.table.to_string());
    if s.table.unbucketed > 0 {
        text.push_str(&format!(
            "({} tests fail even under strong fairness and are in no bucket)\n",
            s.table.unbucketed
        ));
    }
    for (name, bytes) in [
        ("table4.json", json.into_bytes()),
        ("table4.txt", text.into_bytes()),
    ] {
        let p = dir.join(name);
        progress_litmus::io::write_atomically(&p, &bytes)
            .map_err(|e| Error::Output(format!("cannot write {}: {e}", p.display())))?;
    }
    Ok(())
}

/// The JSON form: suite, tests, tests in no bucket, and per row its weak
/// and strong counts (bucket D, `distinguishing`, and bucket C,
/// `bucket_c`; not conformance lists) and the file of its distinguishing tests (`null`
/// where the list was not kept: `synth table --lists`).
pub fn summary_json(s: &Summary) -> String {
    let all = rows();
    let rows: Vec<serde_json::Value> = (0..4)
        .map(|r| {
            let side = |f: usize| {
                serde_json::json!({
                    "distinguishing": s.table.d[f][r],
                    "bucket_c": s.table.c[f][r],
                    "file": s.lists.contains(&all[4 * f + r]).then(|| list_path(all[4 * f + r])),
                })
            };
            let model = ["HSA", "OBE", "LOBE", "fair"][r];
            serde_json::json!({
                "model": model,
                "weak": side(0),
                "strong": side(1),
            })
        })
        .collect();
    let v = serde_json::json!({
        "suite": s.suite,
        "tests": s.tests,
        "unbucketed": s.table.unbucketed,
        "memory": "sequentially consistent",
        "rows": rows,
    });
    let mut out = oracle::json::to_string_pretty(&v).expect("JSON of plain values");
    out.push('\n');
    out
}
