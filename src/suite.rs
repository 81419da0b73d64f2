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

use crate::model::{Model, Verdict, Verdicts};
use crate::test::{Test, Thread};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A named collection of tests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename = "Suite")]
pub struct Suite {
    pub name: String,
    /// Free text: where the suite comes from, how it was made.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    pub tests: Vec<Entry>,
}

/// One test of a suite.
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

/// The on-disk shape of an [`Entry`]: threads inline, verdicts keyed by
/// their CSV column names.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename = "Test")]
struct RawEntry {
    name: String,
    threads: Vec<Thread>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    verdicts: BTreeMap<String, Verdict>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    idioms: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duplicate_of: Option<String>,
}

impl TryFrom<RawEntry> for Entry {
    type Error = String;

    fn try_from(raw: RawEntry) -> Result<Entry, String> {
        let mut test = Test {
            threads: raw.threads,
        };
        test.validate()
            .map_err(|e| format!("test `{}`: {e}", raw.name))?;
        test.normalize();
        let verdicts = if raw.verdicts.is_empty() {
            None
        } else {
            let mut v = [Verdict::F; 11];
            let mut seen = [false; 11];
            for (k, val) in &raw.verdicts {
                let m = Model::parse(k)
                    .filter(|m| m.name() == k)
                    .ok_or_else(|| format!("test `{}`: unknown model `{k}` in verdicts (expected one of the CSV names, e.g. HSA_STRONG)", raw.name))?;
                v[m.index()] = *val;
                seen[m.index()] = true;
            }
            if let Some(i) = seen.iter().position(|s| !s) {
                return Err(format!(
                    "test `{}`: verdicts lack model {}",
                    raw.name,
                    Model::ALL[i].name()
                ));
            }
            Some(Verdicts(v))
        };
        Ok(Entry {
            name: raw.name,
            test,
            verdicts,
            idioms: raw.idioms,
            duplicate_of: raw.duplicate_of,
        })
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
