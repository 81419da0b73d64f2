//! Tests up to location renaming (SPEC §4.7): canonical sets, canonical
//! order and names, and duplicate detection in existing suites.

use progress_litmus::axb::suite::Entry;
use progress_litmus::axb::test::Test;
use std::collections::BTreeMap;

/// The canonical representative of `test`: jumps normalised, locations in
/// first-use order.
pub fn canonical(test: &Test) -> Test {
    let mut t = test.canonical_locs();
    t.normalize();
    t
}

/// `tests` as a set up to location renaming: canonical representatives,
/// sorted (the derived order of [`Test`]), each once. This order is the
/// order of the output, so it depends on nothing but the set.
pub fn canonical_set(tests: impl IntoIterator<Item = Test>) -> Vec<Test> {
    let mut v: Vec<Test> = tests.into_iter().map(|t| canonical(&t)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The test names of a configuration's output: `<config>_<k>`, `k` from 0 in
/// the order given.
pub fn name_tests(config: &str, tests: Vec<Test>) -> Vec<Entry> {
    tests
        .into_iter()
        .enumerate()
        .map(|(k, t)| Entry::new(format!("{config}_{k}"), t))
        .collect()
}

/// Groups of names whose tests are the same up to location renaming (only
/// groups of two or more), each group in input order, groups ordered by
/// their first member's position.
pub fn duplicate_groups<'a>(
    tests: impl IntoIterator<Item = (&'a str, &'a Test)>,
) -> Vec<Vec<String>> {
    let mut by_canon: BTreeMap<Test, (usize, Vec<String>)> = BTreeMap::new();
    for (k, (name, t)) in tests.into_iter().enumerate() {
        by_canon
            .entry(canonical(t))
            .or_insert_with(|| (k, Vec::new()))
            .1
            .push(name.to_string());
    }
    let mut groups: Vec<(usize, Vec<String>)> = by_canon
        .into_values()
        .filter(|(_, g)| g.len() > 1)
        .collect();
    groups.sort();
    groups.into_iter().map(|(_, g)| g).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use progress_litmus::axb::text::parse;

    #[test]
    fn renamings_collapse() {
        let a = parse(
            "THREAD0\natomic_chk_branch(1,0,0)\nTHREAD1\natomic_store(1,1)\natomic_store(0,1)\n",
        )
        .unwrap();
        let b = a.rename_locs(&[1, 0]);
        let set = canonical_set([a.clone(), b.clone()]);
        assert_eq!(set.len(), 1);
        assert_eq!(set[0].threads[0][0].loc, 0);
        let groups = duplicate_groups([("a", &a), ("c", &set[0]), ("b", &b)]);
        assert_eq!(groups, vec![vec!["a".to_string(), "c".into(), "b".into()]]);
    }
}
