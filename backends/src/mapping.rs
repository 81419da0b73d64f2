//! Where each test thread runs (SPEC §6, paper §6.1).
//!
//! Every test thread gets a workgroup of its own. A kernel launch holds
//! `instances` copies of the test, each on disjoint memory; the mapping decides
//! which workgroup runs thread `i` of instance `m`. All mappings keep the
//! relative order of thread ids inside an instance (`i < j` implies
//! `w(i, m) < w(j, m)`), so the id-sensitive progress models apply unchanged.
//!
//! The generated programs compute the inverse ([`Layout::locate`]) from the
//! workgroup id; the C-like expressions for it are produced here too
//! ([`Mapping::locate_exprs`]) so the formulas exist in exactly one place.

use std::fmt;
use std::str::FromStr;

/// The published campaign launched `floor(65535 / N)` instances: the largest
/// workgroup count every Vulkan device must support in one dimension.
pub const MAX_WORKGROUPS: u32 = 65535;

/// Refuses a layout with more workgroups than one dispatch dimension is
/// guaranteed (`api`: "Vulkan", "WebGPU"); the shaders read the workgroup
/// id from x alone.
pub fn check_dispatch(layout: &Layout, api: &str) -> Result<(), String> {
    if layout.workgroups() > MAX_WORKGROUPS as u64 {
        return Err(format!(
            "{} workgroups ({} threads x {} instances) exceed the {MAX_WORKGROUPS} a {api} dispatch is guaranteed in one dimension: lower --instances",
            layout.workgroups(),
            layout.threads,
            layout.instances
        ));
    }
    Ok(())
}

/// How test threads are spread over workgroups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mapping {
    /// One instance on N workgroups: thread `i` on workgroup `i`.
    Plain,
    /// Thread `i` of instance `m` on workgroup `N*m + i`: an instance's
    /// threads are neighbours, so high ids of one instance may be scheduled
    /// before low ids of later ones.
    RoundRobin,
    /// Thread `i` of instance `m` on workgroup `M*i + m`: all thread-0s first,
    /// then all thread-1s, so a linear-order, occupancy-bound scheduler
    /// starves the higher ids (paper §6.1).
    Chunked,
}

impl Mapping {
    /// All mappings, in the order of the artifact's result columns.
    pub const ALL: [Mapping; 3] = [Mapping::Plain, Mapping::RoundRobin, Mapping::Chunked];

    /// The name used on command lines, in file names and in result lines.
    pub fn name(self) -> &'static str {
        match self {
            Mapping::Plain => "plain",
            Mapping::RoundRobin => "round-robin",
            Mapping::Chunked => "chunked",
        }
    }

    /// The number the generated C++/CUDA programs use for the mapping.
    pub fn code(self) -> u32 {
        match self {
            Mapping::Plain => 0,
            Mapping::RoundRobin => 1,
            Mapping::Chunked => 2,
        }
    }

    /// C-like expressions `(thread, instance)` for workgroup `w` of a test of
    /// `n` threads with `m` instances, where `w`, `n`, `m` are expressions of
    /// an unsigned type (literals or variables). Shared by all targets.
    pub fn locate_exprs(self, w: &str, n: &str, m: &str) -> (String, String) {
        match self {
            Mapping::Plain => (w.to_string(), "0u".to_string()),
            Mapping::RoundRobin => (format!("{w} % {n}"), format!("{w} / {n}")),
            Mapping::Chunked => (format!("{w} / {m}"), format!("{w} % {m}")),
        }
    }
}

impl fmt::Display for Mapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mapping {
    type Err = String;
    fn from_str(s: &str) -> Result<Mapping, String> {
        Mapping::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown mapping `{s}`: expected plain, round-robin or chunked"))
    }
}

/// A list of mappings as a command line gives it: names separated by
/// commas (`plain,chunked`), or `all` for [`Mapping::ALL`]; in the order
/// given. The same spelling for `backends emit --mapping` and `backends run
/// --mappings`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappingList(pub Vec<Mapping>);

impl FromStr for MappingList {
    type Err = String;
    fn from_str(s: &str) -> Result<MappingList, String> {
        let mut out = Vec::new();
        for part in s.split(',') {
            match part.trim() {
                "all" => out.extend(Mapping::ALL),
                name => out.push(name.parse().map_err(|_| {
                    format!("unknown mapping `{name}`: expected plain, round-robin, chunked or all, comma-separated")
                })?),
            }
        }
        Ok(MappingList(out))
    }
}

/// The default number of instances for an `n`-thread test: `floor(65535 / n)`.
pub fn default_instances(threads: usize) -> u32 {
    MAX_WORKGROUPS / threads.max(1) as u32
}

/// A mapping made concrete for one test: thread count and instance count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    pub mapping: Mapping,
    /// N: threads of the test.
    pub threads: u32,
    /// M: copies of the test in one launch (always 1 for plain).
    pub instances: u32,
}

impl Layout {
    /// The layout of an `threads`-thread test under `mapping`. `instances`
    /// defaults to [`default_instances`]; plain always has one instance.
    /// Zero instances is treated as one: a launch needs at least one copy.
    pub fn new(mapping: Mapping, threads: usize, instances: Option<u32>) -> Layout {
        let instances = match mapping {
            Mapping::Plain => 1,
            _ => instances
                .unwrap_or_else(|| default_instances(threads))
                .max(1),
        };
        Layout {
            mapping,
            threads: threads as u32,
            instances,
        }
    }

    /// Workgroups of the launch: N for plain, N*M otherwise.
    pub fn workgroups(&self) -> u64 {
        self.threads as u64 * self.instances as u64
    }

    /// The workgroup that runs thread `thread` of instance `instance`.
    pub fn workgroup_of(&self, thread: u32, instance: u32) -> u64 {
        let (n, m) = (self.threads as u64, self.instances as u64);
        let (i, k) = (thread as u64, instance as u64);
        match self.mapping {
            Mapping::Plain => i,
            Mapping::RoundRobin => n * k + i,
            Mapping::Chunked => m * i + k,
        }
    }

    /// `(thread, instance)` run by workgroup `w`: the inverse of
    /// [`Layout::workgroup_of`].
    pub fn locate(&self, w: u64) -> (u32, u32) {
        let (n, m) = (self.threads as u64, self.instances as u64);
        let (t, k) = match self.mapping {
            Mapping::Plain => (w, 0),
            Mapping::RoundRobin => (w % n, w / n),
            Mapping::Chunked => (w / m, w % m),
        };
        (t as u32, k as u32)
    }

    /// [`Mapping::locate_exprs`] with N and M as unsigned literals.
    pub fn locate_exprs(&self, w: &str) -> (String, String) {
        self.mapping.locate_exprs(
            w,
            &format!("{}u", self.threads),
            &format!("{}u", self.instances),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings_follow_the_spec_formulas() {
        let rr = Layout::new(Mapping::RoundRobin, 3, Some(4));
        assert_eq!(rr.workgroup_of(2, 1), 5);
        let ch = Layout::new(Mapping::Chunked, 3, Some(4));
        assert_eq!(ch.workgroup_of(2, 1), 9);
        let plain = Layout::new(Mapping::Plain, 3, Some(4));
        assert_eq!(plain.instances, 1);
        assert_eq!(plain.workgroups(), 3);
        assert_eq!(Layout::new(Mapping::Chunked, 2, None).instances, 32767);
        assert_eq!(Layout::new(Mapping::Chunked, 3, None).workgroups(), 65535);
    }

    #[test]
    fn every_workgroup_runs_exactly_one_thread_and_ids_keep_their_order() {
        for mapping in Mapping::ALL {
            for n in 1..=4usize {
                for m in [1u32, 2, 5] {
                    let l = Layout::new(mapping, n, Some(m));
                    let mut seen = vec![false; l.workgroups() as usize];
                    for k in 0..l.instances {
                        for i in 0..l.threads {
                            let w = l.workgroup_of(i, k);
                            assert!(!seen[w as usize], "{mapping} n={n} m={m}: {w} twice");
                            seen[w as usize] = true;
                            assert_eq!(l.locate(w), (i, k));
                            if i > 0 {
                                assert!(w > l.workgroup_of(i - 1, k));
                            }
                        }
                    }
                    assert!(seen.iter().all(|&s| s));
                }
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for m in Mapping::ALL {
            assert_eq!(m.name().parse::<Mapping>(), Ok(m));
        }
        assert!("diagonal".parse::<Mapping>().is_err());
    }
}
