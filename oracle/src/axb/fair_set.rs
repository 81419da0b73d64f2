//! How each progress model maintains its set F of threads guaranteed fair
//! execution (SPEC §2).
//!
//! | model   | F initially | after Step(t)                 | after Terminate(t)                       |
//! |---------|-------------|-------------------------------|------------------------------------------|
//! | unfair  | {}          | unchanged                     | unchanged                                |
//! | fair    | all threads | unchanged                     | remove t                                 |
//! | HSA     | {0}         | unchanged                     | {smallest id not yet terminated} or {}   |
//! | OBE     | {}          | add t                         | remove t                                 |
//! | HSA+OBE | {0}         | add t                         | remove t, add smallest non-terminated id |
//! | LOBE    | {}          | add non-terminated u <= t     | remove t                                 |
//!
//! F is a bit set of thread ids held in one machine word (bit t for thread
//! t): tests have at most eight threads, and F is part of every state of the
//! product space, so it must be cheap to hash and copy.

use progress_litmus::Base;

/// A set of thread ids, bit t for thread t.
pub type ThreadSet = u8;

/// The ids in a set, ascending.
pub fn members(set: ThreadSet) -> impl Iterator<Item = usize> {
    (0..8).filter(move |t| set & (1 << t) != 0)
}

/// `{0, 2}` style rendering.
pub fn show(set: ThreadSet) -> String {
    let ids: Vec<String> = members(set).map(|t| t.to_string()).collect();
    format!("{{{}}}", ids.join(","))
}

/// The smallest thread of `n` not in `terminated`, as a set (empty if all
/// have terminated).
fn smallest_live(n: usize, terminated: ThreadSet) -> ThreadSet {
    (0..n)
        .find(|&t| terminated & (1 << t) == 0)
        .map_or(0, |t| 1 << t)
}

/// F when no thread has started.
pub fn initial(base: Base, n: usize) -> ThreadSet {
    match base {
        Base::Unfair | Base::Obe | Base::Lobe => 0,
        Base::Fair => ((1u16 << n) - 1) as ThreadSet,
        Base::Hsa | Base::HsaObe => 1,
    }
}

/// F after thread `t` steps; `terminated` is the set of threads that have
/// signalled Terminate.
pub fn after_step(base: Base, f: ThreadSet, t: usize, terminated: ThreadSet) -> ThreadSet {
    match base {
        Base::Unfair | Base::Fair | Base::Hsa => f,
        Base::Obe | Base::HsaObe => f | 1 << t,
        Base::Lobe => f | (((1u16 << (t + 1)) - 1) as ThreadSet & !terminated),
    }
}

/// F after thread `t` signals Terminate; `terminated` already includes `t`.
pub fn after_terminate(
    base: Base,
    f: ThreadSet,
    t: usize,
    n: usize,
    terminated: ThreadSet,
) -> ThreadSet {
    match base {
        Base::Unfair => f,
        Base::Fair | Base::Obe | Base::Lobe => f & !(1 << t),
        Base::Hsa => smallest_live(n, terminated),
        Base::HsaObe => (f & !(1 << t)) | smallest_live(n, terminated),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_of_spec_section_2() {
        assert_eq!(initial(Base::Fair, 3), 0b111);
        assert_eq!(initial(Base::Hsa, 3), 0b001);
        assert_eq!(initial(Base::Lobe, 3), 0);
        // LOBE: a step of thread 2 guarantees 0, 1, 2 except the terminated 0.
        assert_eq!(after_step(Base::Lobe, 0, 2, 0b001), 0b110);
        assert_eq!(after_step(Base::Obe, 0b001, 2, 0), 0b101);
        assert_eq!(after_step(Base::Hsa, 0b001, 2, 0), 0b001);
        // HSA: after 0 terminates, 1 is the smallest live thread.
        assert_eq!(after_terminate(Base::Hsa, 0b001, 0, 3, 0b001), 0b010);
        assert_eq!(after_terminate(Base::Hsa, 0b100, 2, 3, 0b111), 0);
        // HSA+OBE keeps started threads and adds the smallest live one.
        assert_eq!(after_terminate(Base::HsaObe, 0b101, 0, 3, 0b001), 0b110);
        assert_eq!(after_terminate(Base::Fair, 0b111, 1, 3, 0b010), 0b101);
        assert_eq!(show(0b101), "{0,2}");
    }
}
