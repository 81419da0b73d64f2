//! Scoped progress models (docs/KERNEL.md §3): one scheduler per scope
//! (device over workgroups, workgroup over subgroups, subgroup over
//! invocations), one fairness strength, and an optional occupancy bound.
//!
//! This module only names and parses them; their semantics is in the
//! oracle. The text form is the one users type after `--model` and in a
//! litmus file's `model` and `expect` lines:
//!
//! ```text
//! OBE                                   device OBE, the rest fair, weak
//! HSA_STRONG, subgroup=unfair           strong HSA between workgroups
//! WEAK_FAIR, occupancy=2                at most 2 workgroups resident
//! OBE, workgroup=hsa, subgroup=lockstep
//! ```
//!
//! The first item is one of the eleven model names of the published CSVs
//! (and the forms `Model::parse` accepts), or `PRIORITY` (the HSA priority
//! scheduler), with `_STRONG`/`strong-` for strong fairness; it sets the
//! device scope. The other scopes default to fair, as in Dat3M.

use crate::model::{Base, Fairness, Model};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The scheduler of one scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sched {
    Unfair,
    Hsa,
    Obe,
    HsaObe,
    Lobe,
    Fair,
    /// The HSA priority scheduler: only the lowest-id child that can run
    /// runs, and it is guaranteed (F as HSA).
    Priority,
    /// Subgroup scope only: the lanes execute in lockstep (SIMT), with
    /// divergence and reconvergence at immediate post-dominators.
    Lockstep,
    /// Subgroup scope only: the SIMT-Step direct models (docs/KERNEL.md
    /// §2.9), lanes scheduled fairly. Collective Memory,
    Cm,
    /// Synchronous Memory,
    Sm,
    /// Synchronous Control Flow,
    Scf,
    /// Synchronous Subgroup Operations.
    Sso,
}

/// The SIMT-Step direct models, strongest first (the paper's Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direct {
    Cm,
    Sm,
    Scf,
    Sso,
}

/// How the lanes of a subgroup execute on the machine (docs/KERNEL.md §2):
/// the execution mode a subgroup scope names, one machine per mode
/// (`crate::kernel::machine`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Every invocation is an actor of its own: lanes interleave.
    Interleaved,
    /// Subgroups are the actors: the active lanes step together, diverge
    /// and reconverge at immediate post-dominators (SIMT).
    Lockstep,
    /// The lanes execute under a SIMT-Step direct model (§2.9).
    Simt(Direct),
}

impl Mode {
    /// The SIMT-Step direct model, if the mode is one.
    pub fn direct(self) -> Option<Direct> {
        match self {
            Mode::Simt(d) => Some(d),
            _ => None,
        }
    }
}

impl Sched {
    pub const ALL: [Sched; 12] = [
        Sched::Unfair,
        Sched::Hsa,
        Sched::Obe,
        Sched::HsaObe,
        Sched::Lobe,
        Sched::Fair,
        Sched::Priority,
        Sched::Lockstep,
        Sched::Cm,
        Sched::Sm,
        Sched::Scf,
        Sched::Sso,
    ];

    /// The SIMT-Step direct model a subgroup scope names, if it does.
    pub fn direct(self) -> Option<Direct> {
        Some(match self {
            Sched::Cm => Direct::Cm,
            Sched::Sm => Direct::Sm,
            Sched::Scf => Direct::Scf,
            Sched::Sso => Direct::Sso,
            _ => return None,
        })
    }

    /// The execution mode a subgroup scope names: lockstep, a direct
    /// model, or (every scheduler) interleaved lanes.
    pub fn mode(self) -> Mode {
        match (self, self.direct()) {
            (_, Some(d)) => Mode::Simt(d),
            (Sched::Lockstep, None) => Mode::Lockstep,
            _ => Mode::Interleaved,
        }
    }

    /// Whether the scope is one of the subgroup-only execution models
    /// (lockstep and the four direct models).
    pub fn subgroup_only(self) -> bool {
        self == Sched::Lockstep || self.direct().is_some()
    }

    /// The lower-case name used after `workgroup=` and `subgroup=`.
    pub fn word(self) -> &'static str {
        match self {
            Sched::Unfair => "unfair",
            Sched::Hsa => "hsa",
            Sched::Obe => "obe",
            Sched::HsaObe => "hsa+obe",
            Sched::Lobe => "lobe",
            Sched::Fair => "fair",
            Sched::Priority => "priority",
            Sched::Lockstep => "lockstep",
            Sched::Cm => "cm",
            Sched::Sm => "sm",
            Sched::Scf => "scf",
            Sched::Sso => "sso",
        }
    }

    pub fn from_base(b: Base) -> Sched {
        match b {
            Base::Unfair => Sched::Unfair,
            Base::Hsa => Sched::Hsa,
            Base::Obe => Sched::Obe,
            Base::HsaObe => Sched::HsaObe,
            Base::Lobe => Sched::Lobe,
            Base::Fair => Sched::Fair,
        }
    }

    /// The base of the fair-set family, if the scheduler is one.
    pub fn base(self) -> Option<Base> {
        Some(match self {
            Sched::Unfair => Base::Unfair,
            Sched::Hsa => Base::Hsa,
            Sched::Obe => Base::Obe,
            Sched::HsaObe => Base::HsaObe,
            Sched::Lobe => Base::Lobe,
            Sched::Fair => Base::Fair,
            Sched::Priority | Sched::Lockstep => return None,
            Sched::Cm | Sched::Sm | Sched::Scf | Sched::Sso => return None,
        })
    }

    fn parse_word(s: &str) -> Option<Sched> {
        let n = s.trim().to_ascii_lowercase().replace(['_', '-', ' '], "+");
        Some(match n.as_str() {
            "unfair" => Sched::Unfair,
            "hsa" => Sched::Hsa,
            "obe" => Sched::Obe,
            "hsa+obe" | "hsaobe" => Sched::HsaObe,
            "lobe" => Sched::Lobe,
            "fair" => Sched::Fair,
            "priority" | "hsa+priority" => Sched::Priority,
            "lockstep" | "simt" => Sched::Lockstep,
            "cm" => Sched::Cm,
            "sm" => Sched::Sm,
            "scf" => Sched::Scf,
            "sso" => Sched::Sso,
            _ => return None,
        })
    }

    /// Whether the scheduler's guarantees ignore ids, so that children with
    /// the same code are interchangeable (symmetry reduction).
    pub fn id_blind(self) -> bool {
        matches!(self, Sched::Unfair | Sched::Obe | Sched::Fair)
    }
}

/// A progress model per scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct ScopedModel {
    /// Between the workgroups of the device.
    pub device: Sched,
    /// Between the subgroups of a workgroup.
    pub workgroup: Sched,
    /// Between the invocations of a subgroup (or `Lockstep`).
    pub subgroup: Sched,
    pub fairness: Fairness,
    /// At most this many workgroups resident at once (admitted in id order).
    pub occupancy: Option<u8>,
}

impl ScopedModel {
    /// One of the eleven models at the device scope, fair inside
    /// workgroups: with one invocation per workgroup it is the model of
    /// docs/SPEC.md §2.
    pub fn flat(m: Model) -> ScopedModel {
        ScopedModel {
            device: Sched::from_base(m.base),
            workgroup: Sched::Fair,
            subgroup: Sched::Fair,
            fairness: m.fairness,
            occupancy: None,
        }
    }

    /// The eleven flat models, in [`Model::ALL`] order.
    pub fn all_flat() -> [ScopedModel; 11] {
        Model::ALL.map(ScopedModel::flat)
    }

    /// The AXB model this is, if it is flat.
    pub fn as_flat(&self) -> Option<Model> {
        if self.workgroup != Sched::Fair || self.subgroup != Sched::Fair || self.occupancy.is_some()
        {
            return None;
        }
        let base = self.device.base()?;
        let fairness = if base == Base::Unfair {
            Fairness::Weak
        } else {
            self.fairness
        };
        Some(Model::new(base, fairness))
    }

    /// Lockstep only makes sense between the lanes of a subgroup; an
    /// occupancy bound needs at least one slot.
    pub fn validate(&self) -> Result<(), String> {
        for s in [self.device, self.workgroup] {
            if s.subgroup_only() {
                let w = s.word();
                return Err(format!("{w} is a subgroup-scope model (subgroup={w})"));
            }
        }
        if self.occupancy == Some(0) {
            return Err("an occupancy bound must be at least 1".into());
        }
        Ok(())
    }

    /// Parses the text form (see the module documentation). The error
    /// quotes the input, which may be anything (a litmus `model` line runs
    /// to its `;`, across lines): quoted and escaped by
    /// [`crate::error::tidy_message`], so that it stays one short line.
    pub fn parse(s: &str) -> Result<ScopedModel, String> {
        Self::parse_unquoted(s).map_err(|e| crate::error::tidy_message(&e))
    }

    fn parse_unquoted(s: &str) -> Result<ScopedModel, String> {
        let mut parts = s.split(',');
        let head = parts.next().unwrap_or("").trim();
        let (device, fairness) = parse_head(head).ok_or_else(|| {
            format!(
                "unknown model `{head}`; expected one of HSA, OBE, LOBE, WEAK_FAIR, HSA_OBE, UNFAIR, PRIORITY (with _STRONG for strong fairness)"
            )
        })?;
        let mut m = ScopedModel {
            device,
            workgroup: Sched::Fair,
            subgroup: Sched::Fair,
            fairness,
            occupancy: None,
        };
        // Each scope once: a repeated one was silently last-wins (issue 20
        // item 11), so `subgroup=fair, subgroup=unfair` checked a model the
        // writer may not have meant.
        let mut given: [Option<&str>; 3] = [None; 3];
        for part in parts {
            let part = part.trim();
            let (k, v) = part.split_once('=').ok_or_else(|| {
                format!("`{part}`: expected workgroup=M, subgroup=M or occupancy=K")
            })?;
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            let scope = match k.as_str() {
                "workgroup" | "wg" => 0,
                "subgroup" | "sg" => 1,
                "occupancy" | "k" => 2,
                _ => 3,
            };
            if let Some(first) = given.get(scope).copied().flatten() {
                return Err(format!(
                    "`{}` is given twice (`{first}` and `{part}`): give each scope once",
                    ["workgroup", "subgroup", "occupancy"][scope]
                ));
            }
            if let Some(slot) = given.get_mut(scope) {
                *slot = Some(part);
            }
            match k.as_str() {
                "workgroup" | "wg" => {
                    m.workgroup = Sched::parse_word(v).ok_or_else(|| unknown_sched(v))?
                }
                "subgroup" | "sg" => {
                    m.subgroup = Sched::parse_word(v).ok_or_else(|| unknown_sched(v))?
                }
                "occupancy" | "k" => {
                    m.occupancy =
                        Some(v.parse::<u8>().map_err(|_| {
                            format!("occupancy `{v}`: expected a number from 1 to 255")
                        })?)
                }
                _ => {
                    return Err(format!(
                        "unknown scope `{k}`; expected workgroup, subgroup or occupancy"
                    ))
                }
            }
        }
        m.validate()?;
        Ok(m)
    }

    /// A description for people: `weak OBE between workgroups, unfair
    /// inside subgroups, at most 2 resident`.
    pub fn pretty(&self) -> String {
        let f = match self.fairness {
            Fairness::Weak => "weak",
            Fairness::Strong => "strong",
        };
        let mut s = match self.device {
            Sched::Unfair => "unfair".to_string(),
            Sched::Priority => format!("{f} HSA priority scheduler"),
            d => format!(
                "{f} {}",
                Model::new(d.base().unwrap_or(Base::Fair), self.fairness)
                    .pretty()
                    .split_once(' ')
                    .map(|x| x.1.to_string())
                    .unwrap_or_default()
            ),
        };
        if self.device == Sched::Unfair && self.fairness == Fairness::Strong {
            s = "unfair (strong fairness inside workgroups)".into();
        }
        if self.workgroup != Sched::Fair || self.subgroup != Sched::Fair {
            s.push_str(" between workgroups");
            if self.workgroup != Sched::Fair {
                s.push_str(&format!(", {} between subgroups", self.workgroup.word()));
            }
            if self.subgroup != Sched::Fair {
                s.push_str(&format!(", {} inside subgroups", self.subgroup.word()));
            }
        }
        if let Some(k) = self.occupancy {
            s.push_str(&format!(
                ", at most {k} workgroup{} resident",
                if k == 1 { "" } else { "s" }
            ));
        }
        s
    }
}

fn unknown_sched(v: &str) -> String {
    format!(
        "unknown scheduler `{v}`; expected unfair, hsa, obe, hsa+obe, lobe, fair, priority, lockstep, or one of the SIMT-Step models cm, sm, scf, sso (subgroup scope)"
    )
}

fn parse_head(head: &str) -> Option<(Sched, Fairness)> {
    let norm: String = head
        .to_ascii_uppercase()
        .chars()
        .map(|c| if matches!(c, '-' | ' ' | '+') { '_' } else { c })
        .collect();
    let mut fairness = Fairness::Weak;
    let parts: Vec<&str> = norm
        .split('_')
        .filter(|p| !p.is_empty())
        .filter(|p| match *p {
            "STRONG" => {
                fairness = Fairness::Strong;
                false
            }
            "WEAK" => false,
            _ => true,
        })
        .collect();
    let sched = match parts.as_slice() {
        ["UNFAIR"] => Sched::Unfair,
        ["HSA"] => Sched::Hsa,
        ["OBE"] => Sched::Obe,
        ["LOBE"] => Sched::Lobe,
        ["FAIR"] => Sched::Fair,
        ["HSA", "OBE"] | ["HSAOBE"] => Sched::HsaObe,
        ["PRIORITY"] | ["HSA", "PRIORITY"] => Sched::Priority,
        _ => return None,
    };
    Some((sched, fairness))
}

impl fmt::Display for ScopedModel {
    /// The canonical text form: the CSV name for the device scope, then the
    /// scopes that are not fair, then the occupancy bound.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let strong = self.fairness == Fairness::Strong;
        let head = match (self.device, strong) {
            (Sched::Unfair, false) => "UNFAIR".to_string(),
            (Sched::Unfair, true) => "UNFAIR_STRONG".to_string(),
            (Sched::Priority, false) => "PRIORITY".to_string(),
            (Sched::Priority, true) => "PRIORITY_STRONG".to_string(),
            (d, _) if d.subgroup_only() => d.word().to_ascii_uppercase(),
            (d, _) => Model::new(d.base().expect("a base"), self.fairness)
                .name()
                .to_string(),
        };
        f.write_str(&head)?;
        if self.workgroup != Sched::Fair {
            write!(f, ", workgroup={}", self.workgroup.word())?;
        }
        if self.subgroup != Sched::Fair {
            write!(f, ", subgroup={}", self.subgroup.word())?;
        }
        if let Some(k) = self.occupancy {
            write!(f, ", occupancy={k}")?;
        }
        Ok(())
    }
}

impl From<ScopedModel> for String {
    fn from(m: ScopedModel) -> String {
        m.to_string()
    }
}

impl TryFrom<String> for ScopedModel {
    type Error = String;
    fn try_from(s: String) -> Result<ScopedModel, String> {
        ScopedModel::parse(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eleven_names_round_trip_and_are_flat() {
        for m in Model::ALL {
            let s = ScopedModel::flat(m);
            assert_eq!(s.to_string(), m.name());
            assert_eq!(ScopedModel::parse(m.name()), Ok(s));
            assert_eq!(s.as_flat(), Some(m));
        }
    }

    #[test]
    fn scoped_forms_parse_and_print_canonically() {
        let m = ScopedModel::parse("strong-obe, sg=unfair, wg=hsa, k=2").unwrap();
        assert_eq!(
            m.to_string(),
            "OBE_STRONG, workgroup=hsa, subgroup=unfair, occupancy=2"
        );
        assert_eq!(ScopedModel::parse(&m.to_string()), Ok(m));
        let p = ScopedModel::parse("priority").unwrap();
        assert_eq!(p.device, Sched::Priority);
        assert_eq!(p.to_string(), "PRIORITY");
        let u = ScopedModel::parse("unfair-strong, subgroup=hsa").unwrap();
        assert_eq!(u.to_string(), "UNFAIR_STRONG, subgroup=hsa");
        assert_eq!(ScopedModel::parse(&u.to_string()), Ok(u));
        // Issue 20 item 11: a repeated scope is refused, not last-wins.
        let e = ScopedModel::parse("LOBE, subgroup=fair, subgroup=unfair").unwrap_err();
        assert_eq!(
            e,
            "`subgroup` is given twice (`subgroup=fair` and `subgroup=unfair`): give each scope once"
        );
        assert!(ScopedModel::parse("OBE, wg=hsa, workgroup=hsa")
            .unwrap_err()
            .contains("`workgroup` is given twice"));
        assert!(ScopedModel::parse("OBE, k=2, occupancy=2").is_err());
        assert!(ScopedModel::parse("OBE, bogus=1, bogus=2")
            .unwrap_err()
            .contains("unknown scope `bogus`"));
        assert!(ScopedModel::parse("OBE, workgroup=lockstep").is_err());
        assert!(ScopedModel::parse("OBE, occupancy=0").is_err());
        assert!(ScopedModel::parse("LOBSTER").is_err());
        assert!(ScopedModel::parse("OBE, colour=red").is_err());
        assert_eq!(
            ScopedModel::parse("OBE, subgroup=lockstep")
                .unwrap()
                .subgroup,
            Sched::Lockstep
        );
    }
}
