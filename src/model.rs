//! The names of the eleven progress models and their verdicts.
//!
//! The semantics (how each model updates its fair set F) live in the
//! `oracle` crate; this module only names the models, so that every tool and
//! every file format (suite files, CSVs, reports) agrees on them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A scheduler guarantee, without its fairness strength.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Base {
    Unfair,
    Hsa,
    Obe,
    HsaObe,
    Lobe,
    Fair,
}

/// Weak fairness: a thread continuously guaranteed eventually steps. Strong
/// fairness: a thread guaranteed infinitely often eventually steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fairness {
    Weak,
    Strong,
}

/// One of the eleven models: a base with a fairness (unfair has only one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Model {
    pub base: Base,
    pub fairness: Fairness,
}

impl Model {
    pub const fn new(base: Base, fairness: Fairness) -> Model {
        Model { base, fairness }
    }

    /// All eleven, in the column order of the published CSVs (and of
    /// `oracle classify --format csv`).
    pub const ALL: [Model; 11] = [
        Model::new(Base::Hsa, Fairness::Weak),
        Model::new(Base::Obe, Fairness::Weak),
        Model::new(Base::Lobe, Fairness::Weak),
        Model::new(Base::Fair, Fairness::Weak),
        Model::new(Base::Hsa, Fairness::Strong),
        Model::new(Base::Obe, Fairness::Strong),
        Model::new(Base::Lobe, Fairness::Strong),
        Model::new(Base::Fair, Fairness::Strong),
        Model::new(Base::HsaObe, Fairness::Weak),
        Model::new(Base::HsaObe, Fairness::Strong),
        Model::new(Base::Unfair, Fairness::Weak),
    ];

    /// Position in [`Model::ALL`].
    pub fn index(self) -> usize {
        Model::ALL
            .iter()
            .position(|&m| m == self)
            .expect("a known model")
    }

    /// The CSV column name, e.g. `HSA_STRONG`, `WEAK_FAIR`, `UNFAIR`.
    pub fn name(self) -> &'static str {
        use Base::*;
        use Fairness::*;
        match (self.base, self.fairness) {
            (Unfair, _) => "UNFAIR",
            (Hsa, Weak) => "HSA",
            (Obe, Weak) => "OBE",
            (Lobe, Weak) => "LOBE",
            (Fair, Weak) => "WEAK_FAIR",
            (HsaObe, Weak) => "HSA_OBE",
            (Hsa, Strong) => "HSA_STRONG",
            (Obe, Strong) => "OBE_STRONG",
            (Lobe, Strong) => "LOBE_STRONG",
            (Fair, Strong) => "STRONG_FAIR",
            (HsaObe, Strong) => "HSA_OBE_STRONG",
        }
    }

    /// A name for people: `weak HSA+OBE`, `strong fair`, `unfair`.
    pub fn pretty(self) -> String {
        if self.base == Base::Unfair {
            return "unfair".into();
        }
        let f = match self.fairness {
            Fairness::Weak => "weak",
            Fairness::Strong => "strong",
        };
        let b = match self.base {
            Base::Hsa => "HSA",
            Base::Obe => "OBE",
            Base::HsaObe => "HSA+OBE",
            Base::Lobe => "LOBE",
            Base::Fair => "fair",
            Base::Unfair => unreachable!(),
        };
        format!("{f} {b}")
    }

    /// Parses a model name: the CSV names (`HSA_STRONG`, `WEAK_FAIR`), and
    /// the forms people type (`hsa-strong`, `strong-hsa`, `weak-lobe`,
    /// `hsa+obe`, `fair`, `unfair`); case is ignored. A base without a
    /// fairness means weak.
    pub fn parse(s: &str) -> Option<Model> {
        // The CSV names as written in suites: no allocation (suites have
        // eleven per test).
        if let Some(&m) = Model::ALL.iter().find(|m| m.name() == s) {
            return Some(m);
        }
        let norm: String = s
            .trim()
            .to_ascii_uppercase()
            .chars()
            .map(|c| {
                if c == '-' || c == ' ' || c == '+' {
                    '_'
                } else {
                    c
                }
            })
            .collect();
        let mut parts: Vec<&str> = norm.split('_').filter(|p| !p.is_empty()).collect();
        let mut fairness = Fairness::Weak;
        parts.retain(|p| match *p {
            "STRONG" => {
                fairness = Fairness::Strong;
                false
            }
            "WEAK" => false,
            _ => true,
        });
        let base = match parts.as_slice() {
            ["UNFAIR"] => return Some(Model::new(Base::Unfair, Fairness::Weak)),
            ["HSA"] => Base::Hsa,
            ["OBE"] => Base::Obe,
            ["LOBE"] => Base::Lobe,
            ["FAIR"] => Base::Fair,
            ["HSA", "OBE"] | ["HSAOBE"] => Base::HsaObe,
            _ => return None,
        };
        Some(Model::new(base, fairness))
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Pass: termination is guaranteed under the model. Fail: some schedule the
/// model allows runs forever.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Verdict {
    P,
    F,
}

impl Verdict {
    pub fn passes(self) -> bool {
        self == Verdict::P
    }

    pub fn from_pass(pass: bool) -> Verdict {
        if pass {
            Verdict::P
        } else {
            Verdict::F
        }
    }

    pub fn as_char(self) -> char {
        match self {
            Verdict::P => 'P',
            Verdict::F => 'F',
        }
    }
}

/// A test's verdicts under all eleven models, indexed like [`Model::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Verdicts(pub [Verdict; 11]);

impl Verdicts {
    pub fn get(&self, m: Model) -> Verdict {
        self.0[m.index()]
    }

    pub fn passes(&self, m: Model) -> bool {
        self.get(m).passes()
    }

    /// `P`/`F` letters in CSV column order, comma separated.
    pub fn csv(&self) -> String {
        let mut s = String::with_capacity(2 * self.0.len());
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push(v.as_char());
        }
        s
    }
}

/// The CSV header of `oracle classify --format csv`.
pub fn csv_header() -> String {
    let mut h = String::from("test");
    for m in Model::ALL {
        h.push(',');
        h.push_str(m.name());
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_people_forms_parse() {
        for m in Model::ALL {
            assert_eq!(Model::parse(m.name()), Some(m));
        }
        assert_eq!(
            Model::parse("hsa-strong"),
            Some(Model::new(Base::Hsa, Fairness::Strong))
        );
        assert_eq!(
            Model::parse("strong hsa+obe"),
            Some(Model::new(Base::HsaObe, Fairness::Strong))
        );
        assert_eq!(
            Model::parse("fair"),
            Some(Model::new(Base::Fair, Fairness::Weak))
        );
        assert_eq!(Model::parse("lobster"), None);
        assert_eq!(
            csv_header(),
            "test,HSA,OBE,LOBE,WEAK_FAIR,HSA_STRONG,OBE_STRONG,LOBE_STRONG,STRONG_FAIR,HSA_OBE,HSA_OBE_STRONG,UNFAIR"
        );
    }
}
