//! Suites: many named tests in one RON file, each optionally with its
//! verdicts under the eleven models and the idioms it was recognised as.
//!
//! ```ron
//! Suite(
//!     name: "2t2i",
//!     tests: [
//!         (
//!             name: "2t2i_0",
//!             threads: [
//!                 [(loc: 0, check: 0, jump: At(0), exch: Some(1))],
//!                 [(loc: 0, check: 1, jump: At(0), exch: Some(0))],
//!             ],
//!             verdicts: {"HSA": F, "HSA_STRONG": P, ...},
//!         ),
//!     ],
//! )
//! ```

use crate::axb::test::{bad_name_msg, check_name, validate_threads, Test, Thread};
use crate::error::excerpt;
use crate::locate::{invalid_test_path, Fault, Step};
use crate::model::{Model, Verdict, Verdicts};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A named collection of tests.
///
/// Reading one checks everything a tool relies on:
/// unknown fields, valid tests, the name rule ([`check_name`]) for the
/// suite and every test, and unique test names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename = "Suite", try_from = "RawSuite")]
pub struct Suite {
    pub name: String,
    /// Free text: where the suite comes from, how it was made.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    pub tests: Vec<Entry>,
}

/// One test of a suite. Reading one checks its name, its test and its
/// verdicts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawEntry", into = "RawEntry")]
pub struct Entry {
    pub name: String,
    pub test: Test,
    /// Verdicts under all eleven models, when the suite is labelled.
    pub verdicts: Option<Verdicts>,
    /// Idioms the test was recognised as (see the `synth` crate).
    pub idioms: Vec<String>,
    /// The name of an earlier test of the suite that is the same test up to
    /// location renaming, if any.
    pub duplicate_of: Option<String>,
}

impl Entry {
    pub fn new(name: impl Into<String>, test: Test) -> Entry {
        Entry {
            name: name.into(),
            test,
            verdicts: None,
            idioms: Vec::new(),
            duplicate_of: None,
        }
    }
}

/// The on-disk shape of a [`Suite`], before any check: the loader reads
/// this, finds the first fault with [`RawSuite::fault`] and points at it in
/// the file, then builds the suite.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename = "Suite", deny_unknown_fields)]
pub(crate) struct RawSuite {
    name: String,
    #[serde(default)]
    note: String,
    tests: Vec<RawEntry>,
}

impl RawSuite {
    /// The first fault of the suite: its name, then each test in order, then
    /// a test name used twice.
    pub(crate) fn fault(&self) -> Option<Fault<'_>> {
        if let Err(e) = check_name(&self.name) {
            let msg = bad_name_msg("suite", &self.name, &e);
            return Some(Fault::at(msg, vec![Step::Field("name")]));
        }
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(self.tests.len());
        for (k, e) in self.tests.iter().enumerate() {
            let within = |mut p: Vec<Step<'static>>| {
                let mut path = vec![Step::Field("tests"), Step::Index(k)];
                path.append(&mut p);
                path
            };
            if let Some(mut f) = e.fault() {
                let mut path = within(vec![]);
                path.append(&mut f.path);
                f.path = path;
                return Some(f);
            }
            if let Some(&first) = seen.get(e.name.as_str()) {
                return Some(Fault {
                    msg: format!("test name `{}` is used twice in the suite", e.name),
                    path: within(vec![Step::Field("name")]),
                    first: Some(vec![
                        Step::Field("tests"),
                        Step::Index(first),
                        Step::Field("name"),
                    ]),
                });
            }
            if let Some(d) = &e.duplicate_of {
                if !seen.contains_key(d.as_str()) {
                    let msg = format!(
                        "test `{}`: duplicate_of names `{}`, which is not an earlier test of the suite",
                        e.name,
                        excerpt(d)
                    );
                    return Some(Fault::at(msg, within(vec![Step::Field("duplicate_of")])));
                }
            }
            seen.insert(&e.name, k);
        }
        None
    }

    /// The suite, once [`RawSuite::fault`] found nothing.
    pub(crate) fn into_suite(self) -> Suite {
        Suite {
            name: self.name,
            note: self.note,
            tests: self.tests.into_iter().map(RawEntry::into_entry).collect(),
        }
    }
}

impl TryFrom<RawSuite> for Suite {
    type Error = String;

    fn try_from(raw: RawSuite) -> Result<Suite, String> {
        if let Some(f) = raw.fault() {
            return Err(f.msg);
        }
        Ok(raw.into_suite())
    }
}

/// The on-disk shape of an [`Entry`]: threads inline, verdicts keyed by
/// their CSV column names. Unknown fields are refused: a misspelt field
/// (`verdict:`, `idiom:`) must not silently read as a different entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename = "Test", deny_unknown_fields)]
pub(crate) struct RawEntry {
    name: String,
    threads: Vec<Thread>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    verdicts: BTreeMap<String, Verdict>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    idioms: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duplicate_of: Option<String>,
}

/// The model whose CSV name is exactly `k` (suites spell verdict keys as
/// the CSV columns do); a plain comparison, as a large suite has eleven
/// keys per test.
fn model_named(k: &str) -> Option<Model> {
    Model::ALL.into_iter().find(|m| m.name() == k)
}

impl RawEntry {
    /// The first fault of this entry (path inside the entry): its name, its
    /// test ([`validate_threads`]), its verdicts (known model names, all
    /// eleven present).
    pub(crate) fn fault(&self) -> Option<Fault<'_>> {
        if let Err(e) = check_name(&self.name) {
            let msg = bad_name_msg("test", &self.name, &e);
            return Some(Fault::at(msg, vec![Step::Field("name")]));
        }
        let name = &self.name;
        if let Err(e) = validate_threads(&self.threads) {
            let path = invalid_test_path(&self.threads, &e);
            return Some(Fault::at(format!("test `{name}`: {e}"), path));
        }
        if self.verdicts.is_empty() {
            return None;
        }
        let mut seen = [false; 11];
        for k in self.verdicts.keys() {
            match model_named(k) {
                Some(m) => seen[m.index()] = true,
                None => {
                    let msg = format!("test `{name}`: unknown model `{}` in verdicts (expected one of the CSV names, e.g. HSA_STRONG)", excerpt(k));
                    return Some(Fault::at(msg, vec![Step::Field("verdicts"), Step::Key(k)]));
                }
            }
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            let msg = format!(
                "test `{name}`: verdicts lack model {}",
                Model::ALL[i].name()
            );
            return Some(Fault::at(msg, vec![Step::Field("verdicts")]));
        }
        None
    }

    /// The entry, once [`RawEntry::fault`] found nothing: jump targets
    /// normalised, verdicts in model order.
    pub(crate) fn into_entry(self) -> Entry {
        let mut test = Test {
            threads: self.threads,
        };
        test.normalize();
        let verdicts = (!self.verdicts.is_empty()).then(|| {
            let mut v = [Verdict::F; 11];
            for (k, val) in &self.verdicts {
                if let Some(m) = model_named(k) {
                    v[m.index()] = *val;
                }
            }
            Verdicts(v)
        });
        Entry {
            name: self.name,
            test,
            verdicts,
            idioms: self.idioms,
            duplicate_of: self.duplicate_of,
        }
    }
}

impl TryFrom<RawEntry> for Entry {
    type Error = String;

    fn try_from(raw: RawEntry) -> Result<Entry, String> {
        if let Some(f) = raw.fault() {
            return Err(f.msg);
        }
        Ok(raw.into_entry())
    }
}

impl From<Entry> for RawEntry {
    fn from(e: Entry) -> RawEntry {
        RawEntry {
            name: e.name,
            threads: e.test.threads,
            verdicts: e
                .verdicts
                .map(|v| {
                    Model::ALL
                        .iter()
                        .map(|m| (m.name().to_string(), v.get(*m)))
                        .collect()
                })
                .unwrap_or_default(),
            idioms: e.idioms,
            duplicate_of: e.duplicate_of,
        }
    }
}
