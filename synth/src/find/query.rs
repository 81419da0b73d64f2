//! What `find` looks for: a required verdict vector (models that must pass,
//! models that must fail), and why some vectors are impossible.
//!
//! The model hierarchy (docs/RESULTS.md, "What the tests reproduce";
//! checked on random programs by `oracle/tests/properties.rs`) says which
//! passes imply which: weak X
//! implies strong X; HSA and OBE imply HSA+OBE, which implies LOBE, which
//! implies fair (at either fairness); unfair implies weak HSA and weak OBE.
//! And every synthesized test fails unfair (it has a cycle, SPEC §4.6).
//! A query that asks a model to pass and a model it implies to fail has no
//! answer; [`Query::check`] refuses it with the chain of implications.

use crate::enumerate::sat::Failures;
use petgraph::graph::{DiGraph, NodeIndex};
use progress_litmus::graph::shortest_path;
use progress_litmus::{Base, Fairness, Model, Verdicts};

/// Models that must pass and models that must fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    pub passes: Vec<Model>,
    pub fails: Vec<Model>,
}

/// The direct implications "passes `a` implies passes `b`".
pub fn implications() -> Vec<(Model, Model)> {
    use Base::*;
    use Fairness::*;
    let m = Model::new;
    let mut out = Vec::new();
    for b in [Hsa, Obe, HsaObe, Lobe, Fair] {
        out.push((m(b, Weak), m(b, Strong)));
    }
    for f in [Weak, Strong] {
        out.push((m(Hsa, f), m(HsaObe, f)));
        out.push((m(Obe, f), m(HsaObe, f)));
        out.push((m(HsaObe, f), m(Lobe, f)));
        out.push((m(Lobe, f), m(Fair, f)));
    }
    out.push((m(Unfair, Weak), m(Hsa, Weak)));
    out.push((m(Unfair, Weak), m(Obe, Weak)));
    out
}

/// The shortest chain of direct implications from `a` to `b` (`[a, .., b]`),
/// if passing `a` implies passing `b` (breadth first, implications in
/// the order [`implications`] lists them).
pub fn chain(a: Model, b: Model) -> Option<Vec<Model>> {
    let mut g: DiGraph<Model, ()> = DiGraph::new();
    let nodes: Vec<NodeIndex> = Model::ALL.iter().map(|&m| g.add_node(m)).collect();
    // petgraph walks a node's edges latest first.
    for (x, y) in implications().into_iter().rev() {
        g.add_edge(nodes[x.index()], nodes[y.index()], ());
    }
    let path = shortest_path(&g, nodes[a.index()], |n| n == nodes[b.index()], |_, _| true)?;
    let mut chain = vec![a];
    chain.extend(
        path.iter()
            .map(|&e| g[g.edge_endpoints(e).expect("an edge").1]),
    );
    Some(chain)
}

/// Parses a comma-separated list of model names ([`Model::parse`]); an
/// empty string is the empty list.
pub fn parse_models(flag: &str, list: &str) -> Result<Vec<Model>, String> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let m = Model::parse(name).ok_or_else(|| {
            format!(
                "{flag}: unknown model `{name}`: expected one of {}",
                Model::ALL.map(|m| m.name()).join(", ")
            )
        })?;
        if out.contains(&m) {
            return Err(format!("{flag}: {} is named twice", m.name()));
        }
        out.push(m);
    }
    Ok(out)
}

impl Query {
    /// The query of `--passes` and `--fails`, checked ([`Query::check`]),
    /// each list sorted by model name: the same question asked in another
    /// order (`--fails OBE,HSA`, `--fails HSA,OBE`) is the same query, so
    /// the same journal header, note and output bytes.
    pub fn parse(passes: &str, fails: &str) -> Result<Query, String> {
        let sorted = |mut ms: Vec<Model>| {
            ms.sort_by_key(|m| m.name());
            ms
        };
        let q = Query {
            passes: sorted(parse_models("--passes", passes)?),
            fails: sorted(parse_models("--fails", fails)?),
        };
        q.check()?;
        Ok(q)
    }

    /// Refuses a query no test can answer, naming the reason: a model both
    /// required to pass and to fail, a pass under unfair, or a pass that
    /// implies a required failure.
    pub fn check(&self) -> Result<(), String> {
        if self.passes.is_empty() && self.fails.is_empty() {
            return Err("give at least one model in --passes or --fails".into());
        }
        if let Some(m) = self.passes.iter().find(|m| self.fails.contains(m)) {
            return Err(format!("{} is in both --passes and --fails", m.name()));
        }
        if let Some(m) = self.passes.iter().find(|m| m.base == Base::Unfair) {
            return Err(format!(
                "--passes {}: no synthesized test passes unfair (each has a cycle, SPEC §4.6)",
                m.name()
            ));
        }
        for &a in &self.passes {
            for &b in &self.fails {
                if let Some(path) = chain(a, b) {
                    let why: Vec<String> = path.iter().map(|m| m.pretty()).collect();
                    return Err(format!(
                        "unsatisfiable: passes {} but fails {}, and a pass under {} implies one under {} (the model hierarchy: {})",
                        a.name(),
                        b.name(),
                        a.pretty(),
                        b.pretty(),
                        why.join(" => ")
                    ));
                }
            }
        }
        Ok(())
    }

    /// The strong models every answer fails: those a required failure
    /// implies, i.e. each strong HSA, OBE or HSA+OBE whose pass implies the
    /// pass of a model in `fails` (strong HSA is implied by a failure of
    /// strong HSA, HSA+OBE, LOBE or fair). The search asks SAT for such tests
    /// only (`sat.rs`, the strong traps), instead of labelling and blocking
    /// one by one the many that pass them.
    pub fn required_failures(&self) -> Failures {
        let implied = |b: Base| {
            let m = Model::new(b, Fairness::Strong);
            self.fails.iter().any(|&f| chain(m, f).is_some())
        };
        Failures {
            strong_hsa: implied(Base::Hsa),
            strong_obe: implied(Base::Obe),
            strong_hsa_obe: implied(Base::HsaObe),
        }
    }

    /// Whether verdicts `v` answer the query.
    pub fn accepts(&self, v: &Verdicts) -> bool {
        self.passes.iter().all(|&m| v.passes(m)) && self.fails.iter().all(|&m| !v.passes(m))
    }

    /// `passes A,B fails C`, for notes and journal headers.
    pub fn describe(&self) -> String {
        let names = |ms: &[Model]| ms.iter().map(|m| m.name()).collect::<Vec<_>>().join(",");
        format!(
            "passes {} fails {}",
            if self.passes.is_empty() {
                "-".into()
            } else {
                names(&self.passes)
            },
            if self.fails.is_empty() {
                "-".into()
            } else {
                names(&self.fails)
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(p: &str, f: &str) -> Result<Query, String> {
        Query::parse(p, f)
    }

    #[test]
    fn impossible_vectors_name_the_implication() {
        let e = q("HSA", "WEAK_FAIR").unwrap_err();
        assert!(e.contains("passes HSA but fails WEAK_FAIR"), "{e}");
        assert!(
            e.contains("weak HSA => weak HSA+OBE => weak LOBE => weak fair"),
            "{e}"
        );
        let e = q("OBE", "OBE_STRONG").unwrap_err();
        assert!(e.contains("weak OBE => strong OBE"), "{e}");
        assert!(q("unfair", "").unwrap_err().contains("SPEC §4.6"));
        assert!(q("HSA", "hsa").unwrap_err().contains("both"));
        assert!(q("", "").is_err());
        assert!(q("lobster", "").unwrap_err().contains("unknown model"));
        assert!(q("HSA,HSA", "").unwrap_err().contains("twice"));
    }

    /// Regression (issue 20 item 11): `--fails OBE,HSA` and `HSA,OBE`
    /// were different runs (journal headers, notes).
    #[test]
    fn the_same_question_in_another_order_is_the_same_query() {
        let a = q("hsa-strong,OBE_STRONG", "WEAK_FAIR,HSA").unwrap();
        let b = q("OBE_STRONG,HSA_STRONG", "HSA,weak-fair").unwrap();
        assert_eq!(a, b);
        assert_eq!(
            a.describe(),
            "passes HSA_STRONG,OBE_STRONG fails HSA,WEAK_FAIR"
        );
        // The committed findings' notes are already in this order.
        assert_eq!(
            q("OBE_STRONG", "WEAK_FAIR,HSA_STRONG").unwrap().describe(),
            "passes OBE_STRONG fails HSA_STRONG,WEAK_FAIR"
        );
    }

    #[test]
    fn required_failures_are_the_implied_strong_failures() {
        let f = |fails: &str| {
            let r = q("", fails).unwrap().required_failures();
            (r.strong_hsa, r.strong_obe, r.strong_hsa_obe)
        };
        assert_eq!(f("HSA_STRONG"), (true, false, false));
        assert_eq!(f("OBE_STRONG"), (false, true, false));
        assert_eq!(f("HSA_OBE_STRONG"), (true, true, true));
        assert_eq!(f("LOBE_STRONG"), (true, true, true));
        assert_eq!(f("STRONG_FAIR"), (true, true, true));
        for weak in ["HSA", "OBE", "HSA_OBE", "LOBE", "WEAK_FAIR", "UNFAIR"] {
            assert_eq!(f(weak), (false, false, false), "{weak}");
        }
        assert_eq!(f("HSA_STRONG,OBE_STRONG"), (true, true, false));
    }

    #[test]
    fn incomparable_models_are_accepted() {
        q("OBE_STRONG", "HSA_STRONG").unwrap();
        q("HSA", "OBE").unwrap();
        q("LOBE_STRONG", "WEAK_FAIR").unwrap();
        q("", "STRONG_FAIR").unwrap();
    }

    /// Every implication the query refuses holds on the labelled complete
    /// suites of the repository: the refusals are never too eager there.
    #[test]
    fn implications_hold_on_the_committed_suites() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites");
        for c in ["2t2i", "2t3i", "3t3i"] {
            let src = std::fs::read_to_string(root.join(c).join(format!("{c}.ron"))).unwrap();
            let suite = progress_litmus::axb::load::parse_suite(&src).unwrap();
            for e in &suite.tests {
                let v = e.verdicts.expect("labelled");
                for a in Model::ALL {
                    for b in Model::ALL {
                        if chain(a, b).is_some() {
                            assert!(!v.passes(a) || v.passes(b), "{}: {a} => {b}", e.name);
                        }
                    }
                }
            }
        }
    }
}
