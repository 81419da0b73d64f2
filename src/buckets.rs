//! Distinguishing and conformance tests (SPEC §5, the paper's Table 4).
//!
//! A test is *conformance* for a model if it is guaranteed to terminate
//! under it. It is *distinguishing* for the least fair model of the chain
//! HSA / OBE, LOBE, fair (of its fairness) under which it passes: a weak
//! test (one that passes weak fair) goes to the first of weak HSA, weak
//! OBE, weak LOBE under which it passes, else to weak fair; a strong test
//! (fails weak fair, passes strong fair) likewise with the strong variants.

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

/// Whether the test counts among the conformance tests of a Table 4 row
/// (SPEC §5: HSA = D(HSA), OBE = D(OBE), LOBE = D(HSA)+D(OBE)+D(LOBE),
/// fair = every test of that fairness).
pub fn conformance_row(v: &Verdicts, row: Model) -> bool {
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

/// Table 4: distinguishing (D) and conformance (C) counts per row and
/// fairness.
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
                    if conformance_row(v, row) {
                        t.c[fi][ri] += 1;
                    }
                }
            }
        }
        t
    }
}

impl fmt::Display for Table4 {
    /// The paper's layout, in words a newcomer reads (issue 23 item 5):
    /// the paper's "D. Tests / C. Tests" columns are spelled out and its
    /// `full` row is `fair`, with a legend below.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "model  weak fairness                strong fairness")?;
        writeln!(
            f,
            "       distinguishing  conformance  distinguishing  conformance"
        )?;
        for (ri, name) in ["HSA", "OBE", "LOBE", "fair"].iter().enumerate() {
            writeln!(
                f,
                "{:<6} {:>14}  {:>11}  {:>14}  {:>11}",
                name, self.d[0][ri], self.c[0][ri], self.d[1][ri], self.c[1][ri]
            )?;
        }
        writeln!(f, "conformance: tests that terminate under the model, so a device with it never hangs on them;")?;
        writeln!(f, "distinguishing: those of them that hang under every model above it (they tell it apart).")?;
        writeln!(f, "(The paper's Table 4, whose columns are D. Tests and C. Tests and whose fair row is `full`.)")
    }
}
