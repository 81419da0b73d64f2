//! The buckets of the paper's Table 4 (SPEC §5): bucket D (the
//! distinguishing tests) and bucket C (the paper's "C. Tests").
//!
//! A test is *distinguishing* for the least fair model of the chain
//! HSA / OBE, LOBE, fair (of its fairness) under which it passes: a weak
//! test (one that passes weak fair) goes to the first of weak HSA, weak
//! OBE, weak LOBE under which it passes, else to weak fair; a strong test
//! (fails weak fair, passes strong fair) likewise with the strong variants.
//! Bucket C of a row is a union of D buckets of the same fairness (see
//! [`in_bucket_c`]).
//!
//! Neither bucket is a model's *conformance list*: that is every test that
//! terminates under the model (verdict P, [`crate::model::Verdicts::passes`]),
//! what a device with the model must never hang on. Bucket C is smaller:
//! weak OBE's holds only the tests that fail weak HSA, and no test of the
//! other fairness is in any bucket of a row.

use crate::model::{Base, Fairness, Model, Verdicts};
use std::fmt;

/// The rows of Table 4, in order.
pub const ROWS: [Base; 4] = [Base::Hsa, Base::Obe, Base::Lobe, Base::Fair];

/// The model a test is distinguishing for, if any (`None` when it fails
/// even under strong fair, which a well-formed synthesized test never does).
pub fn distinguishing_for(v: &Verdicts) -> Option<Model> {
    let fairness = if v.passes(Model::new(Base::Fair, Fairness::Weak)) {
        Fairness::Weak
    } else if v.passes(Model::new(Base::Fair, Fairness::Strong)) {
        Fairness::Strong
    } else {
        return None;
    };
    ROWS.iter()
        .map(|&b| Model::new(b, fairness))
        .find(|&m| m.base == Base::Fair || v.passes(m))
}

/// Whether the test is in bucket C of a Table 4 row, the paper's
/// "C. Tests" (SPEC §5: HSA = D(HSA), OBE = D(OBE), LOBE =
/// D(HSA)+D(OBE)+D(LOBE), fair = every test of that fairness). Not the
/// row's conformance list (every test that passes under the model).
pub fn in_bucket_c(v: &Verdicts, row: Model) -> bool {
    let Some(d) = distinguishing_for(v) else {
        return false;
    };
    if d.fairness != row.fairness {
        return false;
    }
    match row.base {
        Base::Hsa | Base::Obe => d.base == row.base,
        Base::Lobe => d.base != Base::Fair,
        Base::Fair => true,
        Base::HsaObe | Base::Unfair => false,
    }
}

/// Table 4: the sizes of bucket D (distinguishing) and bucket C per row
/// and fairness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Table4 {
    /// `d[fairness][row]`, fairness 0 = weak, 1 = strong.
    pub d: [[usize; 4]; 2],
    pub c: [[usize; 4]; 2],
    /// Tests that fail even under strong fairness (in no bucket).
    pub unbucketed: usize,
}

impl Table4 {
    pub fn from_verdicts<'a>(vs: impl IntoIterator<Item = &'a Verdicts>) -> Table4 {
        let mut t = Table4::default();
        for v in vs {
            let Some(d) = distinguishing_for(v) else {
                t.unbucketed += 1;
                continue;
            };
            for (fi, f) in [Fairness::Weak, Fairness::Strong].into_iter().enumerate() {
                for (ri, &b) in ROWS.iter().enumerate() {
                    let row = Model::new(b, f);
                    if d == row {
                        t.d[fi][ri] += 1;
                    }
                    if in_bucket_c(v, row) {
                        t.c[fi][ri] += 1;
                    }
                }
            }
        }
        t
    }
}

impl fmt::Display for Table4 {
    /// The paper's layout, in words a newcomer reads (issue 23 item 5,
    /// issue 44 item 4): the paper's "D. Tests / C. Tests" columns are
    /// bucket D and bucket C, its `full` row is `fair`, and the legend
    /// says how the buckets differ from a model's conformance list.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "model  weak fairness       strong fairness")?;
        writeln!(f, "       bucket D  bucket C  bucket D  bucket C")?;
        for (ri, name) in ["HSA", "OBE", "LOBE", "fair"].iter().enumerate() {
            writeln!(
                f,
                "{:<6} {:>8}  {:>8}  {:>8}  {:>8}",
                name, self.d[0][ri], self.c[0][ri], self.d[1][ri], self.c[1][ri]
            )?;
        }
        f.write_str(LEGEND)
    }
}

/// The legend under every printed Table 4 (`oracle table`, `synth table`).
pub const LEGEND: &str = "\
bucket D (distinguishing): tests that terminate under the row's model and hang under every row above it;
bucket C: HSA = D(HSA), OBE = D(OBE), LOBE = D(HSA)+D(OBE)+D(LOBE), fair = every test of that fairness;
weak: the tests that pass weak fair; strong: the others. (The paper's Table 4: D. Tests, C. Tests, row `full`.)
Neither bucket is a conformance list (every test that terminates under the model: verdict P).
";
