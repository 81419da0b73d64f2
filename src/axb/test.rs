//! AXB instructions, threads and tests, and their validation.
//!
//! The AXB language has one instruction, the atomic exchange-and-branch
//! (SPEC §1). A test is a list of threads; the position of a thread is its
//! id, and ids matter because several progress models favour low ids.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Hard limits of the representation. They keep a whole program state in one
/// `u64` (see [`crate::axb::machine`]) and are far above anything the synthesizer
/// or the published suites need.
pub const MAX_THREADS: usize = 8;
/// At most this many instructions per thread (END is one more pc value).
pub const MAX_THREAD_LEN: usize = 14;
/// Locations are numbered `0..MAX_LOCS`.
pub const MAX_LOCS: usize = 8;
/// Values are `0..MAX_VALUES`.
pub const MAX_VALUES: usize = 16;

/// Where a branch goes: an instruction of the same thread, or END.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Target {
    /// Instruction index within the thread.
    At(u8),
    /// One past the last instruction: the thread has finished.
    End,
}

impl Target {
    /// The pc this target denotes in a thread of `len` instructions.
    pub fn pc(self, len: usize) -> usize {
        match self {
            Target::At(i) => i as usize,
            Target::End => len,
        }
    }

    /// The target for pc `pc` in a thread of `len` instructions.
    pub fn from_pc(pc: usize, len: usize) -> Target {
        if pc >= len {
            Target::End
        } else {
            Target::At(pc as u8)
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::At(i) => write!(f, "{i}"),
            Target::End => f.write_str("END"),
        }
    }
}

/// `AXB(loc, check, jump, exch)`: atomically `old = Mem[loc]`; if `exch` is
/// present, `Mem[loc] = exch`; then `pc = old == check ? jump : pc + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename = "AXB", deny_unknown_fields)]
pub struct Instr {
    pub loc: u8,
    pub check: u8,
    pub jump: Target,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exch: Option<u8>,
}

impl Instr {
    /// A plain store `Mem[loc] = val` (check 0, jump to the next instruction).
    pub fn store(loc: u8, val: u8, pc: usize, len: usize) -> Instr {
        Instr {
            loc,
            check: 0,
            jump: Target::from_pc(pc + 1, len),
            exch: Some(val),
        }
    }

    /// Whether this instruction, at `pc` in a thread of `len`, behaves as a
    /// store: both outcomes of the comparison go to the next instruction.
    pub fn is_store_like(&self, pc: usize, len: usize) -> bool {
        self.jump.pc(len) == pc + 1
    }

    /// The opposite of [`Instr::is_store_like`]: the comparison matters.
    pub fn is_branching(&self, pc: usize, len: usize) -> bool {
        !self.is_store_like(pc, len)
    }
}

/// A thread: its instructions, pc 0 first.
pub type Thread = Vec<Instr>;

/// A progress litmus test: threads in id order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Test {
    pub threads: Vec<Thread>,
}

/// Why a test is not well formed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvalidTest {
    NoThreads,
    TooManyThreads(usize),
    EmptyThread(usize),
    ThreadTooLong {
        thread: usize,
        len: usize,
    },
    LocOutOfRange {
        thread: usize,
        pc: usize,
        loc: u8,
    },
    ValueOutOfRange {
        thread: usize,
        pc: usize,
        value: u8,
    },
    JumpOutOfRange {
        thread: usize,
        pc: usize,
        jump: u8,
        len: usize,
    },
}

impl fmt::Display for InvalidTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidTest::NoThreads => write!(f, "a test needs at least one thread"),
            InvalidTest::TooManyThreads(n) => {
                write!(f, "{n} threads: at most {MAX_THREADS} are supported")
            }
            InvalidTest::EmptyThread(t) => write!(f, "thread {t} has no instruction"),
            InvalidTest::ThreadTooLong { thread, len } => write!(
                f,
                "thread {thread} has {len} instructions: at most {MAX_THREAD_LEN} are supported"
            ),
            InvalidTest::LocOutOfRange { thread, pc, loc } => write!(
                f,
                "thread {thread} instruction {pc}: location {loc} out of range (0..{MAX_LOCS})"
            ),
            InvalidTest::ValueOutOfRange { thread, pc, value } => write!(
                f,
                "thread {thread} instruction {pc}: value {value} out of range (0..{MAX_VALUES})"
            ),
            InvalidTest::JumpOutOfRange {
                thread,
                pc,
                jump,
                len,
            } => write!(
                f,
                "thread {thread} instruction {pc}: jump target {jump} is past END ({len})"
            ),
        }
    }
}

impl std::error::Error for InvalidTest {}

impl Test {
    /// Builds a test and checks it is well formed.
    pub fn new(threads: Vec<Thread>) -> Result<Test, InvalidTest> {
        let t = Test { threads };
        t.validate()?;
        Ok(t)
    }

    /// Checks the structural rules every tool relies on: at least one
    /// thread, no empty thread, locations, values and jump targets in range.
    /// A jump target equal to the thread length is normalised to END by the
    /// parsers, so `At(len)` is rejected here as past END only if above it.
    pub fn validate(&self) -> Result<(), InvalidTest> {
        validate_threads(&self.threads)
    }

    /// Replaces `At(len)` targets by `End`, so equal programs compare equal.
    pub fn normalize(&mut self) {
        for th in &mut self.threads {
            let len = th.len();
            for i in th.iter_mut() {
                i.jump = Target::from_pc(i.jump.pc(len), len);
            }
        }
    }

    pub fn num_threads(&self) -> usize {
        self.threads.len()
    }

    /// Total number of instructions.
    pub fn num_instrs(&self) -> usize {
        self.threads.iter().map(Vec::len).sum()
    }

    /// One more than the highest location used (0 for no instruction).
    pub fn num_locs(&self) -> usize {
        self.instrs()
            .map(|(_, _, i)| i.loc as usize + 1)
            .max()
            .unwrap_or(0)
    }

    /// One more than the highest value mentioned, at least 2 (values 0 and 1
    /// are always possible: memory starts at 0).
    pub fn num_values(&self) -> usize {
        self.instrs()
            .flat_map(|(_, _, i)| std::iter::once(i.check).chain(i.exch))
            .map(|v| v as usize + 1)
            .max()
            .unwrap_or(0)
            .max(2)
    }

    /// `(thread, pc, instruction)` for every instruction.
    pub fn instrs(&self) -> impl Iterator<Item = (usize, usize, &Instr)> {
        self.threads
            .iter()
            .enumerate()
            .flat_map(|(t, th)| th.iter().enumerate().map(move |(pc, i)| (t, pc, i)))
    }

    /// The configuration name used throughout: `<N>t<M>i`, e.g. `2t3i`.
    pub fn config(&self) -> String {
        format!("{}t{}i", self.num_threads(), self.num_instrs())
    }

    /// The test with its locations renamed by `perm` (`new = perm[old]`).
    pub fn rename_locs(&self, perm: &[u8]) -> Test {
        Test {
            threads: self
                .threads
                .iter()
                .map(|th| {
                    th.iter()
                        .map(|i| Instr {
                            loc: perm[i.loc as usize],
                            ..*i
                        })
                        .collect()
                })
                .collect(),
        }
    }

    /// The canonical representative of the test up to renaming of
    /// locations: locations renumbered in order of first use (thread 0 first,
    /// pc order). Two tests are the same up to location renaming iff their
    /// canonical forms are equal.
    pub fn canonical_locs(&self) -> Test {
        let mut perm = [u8::MAX; MAX_LOCS];
        let mut next = 0u8;
        for (_, _, i) in self.instrs() {
            let p = &mut perm[i.loc as usize];
            if *p == u8::MAX {
                *p = next;
                next += 1;
            }
        }
        self.rename_locs(&perm)
    }
}

/// [`Test::validate`] on threads not yet made into a test (the loaders
/// check what they read before building anything from it).
pub fn validate_threads(threads: &[Thread]) -> Result<(), InvalidTest> {
    if threads.is_empty() {
        return Err(InvalidTest::NoThreads);
    }
    if threads.len() > MAX_THREADS {
        return Err(InvalidTest::TooManyThreads(threads.len()));
    }
    for (t, th) in threads.iter().enumerate() {
        if th.is_empty() {
            return Err(InvalidTest::EmptyThread(t));
        }
        if th.len() > MAX_THREAD_LEN {
            return Err(InvalidTest::ThreadTooLong {
                thread: t,
                len: th.len(),
            });
        }
        for (pc, i) in th.iter().enumerate() {
            if i.loc as usize >= MAX_LOCS {
                return Err(InvalidTest::LocOutOfRange {
                    thread: t,
                    pc,
                    loc: i.loc,
                });
            }
            for value in std::iter::once(i.check).chain(i.exch) {
                if value as usize >= MAX_VALUES {
                    return Err(InvalidTest::ValueOutOfRange {
                        thread: t,
                        pc,
                        value,
                    });
                }
            }
            if let Target::At(j) = i.jump {
                if j as usize > th.len() {
                    return Err(InvalidTest::JumpOutOfRange {
                        thread: t,
                        pc,
                        jump: j,
                        len: th.len(),
                    });
                }
            }
        }
    }
    Ok(())
}

/// The longest test or suite name, in bytes (names are ASCII).
pub const MAX_NAME_LEN: usize = 64;

/// Why a string is not a valid test or suite name (see [`check_name`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadName {
    Empty,
    TooLong(usize),
    /// A character outside the set, at this character index.
    Char(char, usize),
    /// A name may not start with `.`, `+` or `-`.
    Start(char),
}

impl fmt::Display for BadName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadName::Empty => f.write_str("the name is empty"),
            BadName::TooLong(n) => write!(f, "the name is {n} characters long"),
            BadName::Char(c, at) if c.is_ascii_graphic() || *c == ' ' => {
                write!(f, "character {} (`{c}`) is not allowed", at + 1)
            }
            BadName::Char(c, at) => write!(
                f,
                "character {} ({}) is not allowed",
                at + 1,
                c.escape_default()
            ),
            BadName::Start(c) => write!(f, "a name may not start with `{c}`"),
        }?;
        write!(f, "; {NAME_RULE}")
    }
}

impl std::error::Error for BadName {}

/// The name rule in words, for error messages and `--help`.
pub const NAME_RULE: &str =
    "names are 1 to 64 characters from A-Z a-z 0-9 _ . + - and start with a letter, a digit or _";

/// `<what> name `x` is not valid: <why>`, the name quoted short (it may be
/// long or hold a newline).
pub fn bad_name_msg(what: &str, name: &str, e: &BadName) -> String {
    format!(
        "{what} name `{}` is not valid: {e}",
        crate::error::excerpt(name)
    )
}

/// Checks the one rule for test and suite names that every tool enforces
/// where tests are loaded: 1 to [`MAX_NAME_LEN`] characters from
/// `[A-Za-z0-9_.+-]`, not starting with `.`, `+` or `-`.
///
/// Names travel everywhere: CSV cells, JSON, C string literals and comments,
/// `--test` lists separated by commas, file names of generated programs and
/// shell command lines. A conservative set makes each of those safe without
/// escaping (no quote, comma, space, slash, newline or control character),
/// the leading-character rule keeps a name from reading as a command-line
/// flag or a hidden or `..` file, and the length keeps table columns and file
/// names sane. Every published and generated name (`2t3i_17`,
/// `axb-canary`, `oopsla21`) fits with room to spare.
pub fn check_name(name: &str) -> Result<(), BadName> {
    let Some(first) = name.chars().next() else {
        return Err(BadName::Empty);
    };
    for (at, c) in name.chars().enumerate() {
        if !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-')) {
            return Err(BadName::Char(c, at));
        }
    }
    if matches!(first, '.' | '+' | '-') {
        return Err(BadName::Start(first));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(BadName::TooLong(name.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axb(loc: u8, check: u8, jump: Target, exch: Option<u8>) -> Instr {
        Instr {
            loc,
            check,
            jump,
            exch,
        }
    }

    #[test]
    fn validation_rejects_malformed_tests() {
        assert_eq!(Test::new(vec![]), Err(InvalidTest::NoThreads));
        assert_eq!(
            Test::new(vec![vec![], vec![]]),
            Err(InvalidTest::EmptyThread(0))
        );
        let past_end = vec![vec![axb(0, 0, Target::At(2), None)]];
        assert!(matches!(
            Test::new(past_end),
            Err(InvalidTest::JumpOutOfRange { jump: 2, .. })
        ));
        let big_loc = vec![vec![axb(9, 0, Target::End, None)]];
        assert!(matches!(
            Test::new(big_loc),
            Err(InvalidTest::LocOutOfRange { loc: 9, .. })
        ));
    }

    #[test]
    fn the_name_rule() {
        for ok in [
            "2t2i_0",
            "axb-canary",
            "oopsla21",
            "a.b+c-d",
            "_x",
            &"n".repeat(64),
        ] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        assert_eq!(check_name(""), Err(BadName::Empty));
        assert_eq!(check_name(&"n".repeat(65)), Err(BadName::TooLong(65)));
        assert_eq!(check_name("a\"b"), Err(BadName::Char('"', 1)));
        assert_eq!(check_name("a\nb"), Err(BadName::Char('\n', 1)));
        assert_eq!(check_name("a,b"), Err(BadName::Char(',', 1)));
        assert_eq!(check_name("a b"), Err(BadName::Char(' ', 1)));
        assert_eq!(check_name("a/b"), Err(BadName::Char('/', 1)));
        assert_eq!(check_name("é"), Err(BadName::Char('é', 0)));
        assert_eq!(check_name("-x"), Err(BadName::Start('-')));
        assert_eq!(check_name(".."), Err(BadName::Start('.')));
        let msg = check_name("a\nb").unwrap_err().to_string();
        assert!(!msg.contains('\n'), "{msg}");
        assert!(msg.contains("character 2 (\\n)"), "{msg}");
        let msg = check_name("a,b").unwrap_err().to_string();
        assert!(msg.contains("character 2 (`,`) is not allowed"), "{msg}");
    }

    #[test]
    fn canonical_locs_identifies_renamings() {
        let a = Test::new(vec![
            vec![axb(1, 0, Target::At(0), Some(1))],
            vec![axb(0, 0, Target::End, None), axb(1, 0, Target::End, None)],
        ])
        .unwrap();
        let b = a.rename_locs(&[1, 0]);
        assert_ne!(a, b);
        assert_eq!(a.canonical_locs(), b.canonical_locs());
        assert_eq!(b.canonical_locs().threads[0][0].loc, 0);
    }
}
