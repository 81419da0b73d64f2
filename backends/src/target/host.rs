//! What the C++ and CUDA programs share: program options, the test table,
//! the command line and the result lines (`templates/host_util.inc`,
//! `templates/host_common.inc`).
//!
//! Both programs hold every test of a suite, selected at run time by name, so
//! a campaign compiles once. Their command line:
//!
//! ```text
//! --test NAME[,NAME...]   tests to run (repeatable; default: all, in program order;
//!                         `\,` is a comma in a name, `\\` a backslash)
//! --mapping LIST          plain, round-robin, chunked or all, comma-separated (repeatable)
//! --instances M           instances for round-robin and chunked (default floor(65535 / N))
//! --iterations K          runs of each test x mapping (default 1)
//! --deadline-ms D         a run not finished after D ms is stopped and reported non-terminating
//! --list                  print `name<TAB>threads` for each selected test and exit
//! ```
//!
//! and one JSON line per run on stdout, flushed as soon as it is known:
//!
//! ```text
//! {"test":"2t2i_0","target":"cpp","mapping":"chunked","instances":32767,"workgroups":65534,
//!  "iteration":0,"terminated":true,"elapsed_ms":1.234,...target-specific fields}
//! ```
//!
//! Exit status: 0 when every requested run happened (whatever its outcome),
//! 2 for a bad command line, 1 for a device or runtime error.

use crate::mapping::Mapping;
use crate::target::codegen::{self, Shape};
use crate::target::templates;
use progress_litmus::axb::load::NamedTest;
use std::collections::BTreeMap;
use std::fmt::{self, Write};

/// Options baked into a generated C++ or CUDA program. Everything except the
/// shape is only a default: the program's command line overrides it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub shape: Shape,
    /// Mappings run when the command line names none.
    pub mappings: Vec<Mapping>,
    /// Instances when the command line gives none; `None`: floor(65535 / N).
    pub instances: Option<u32>,
    /// Deadline of a run when the command line gives none.
    pub deadline_ms: u64,
}

/// The longest deadline of a run, a day: the generated programs add it to
/// a nanosecond steady clock and `backends run` doubles it for its own
/// patience, so without a bound `--deadline-ms 18446744073709551615`
/// overflowed (a panic in a debug build, a wrapped deadline in release, a
/// usage error from the program only after compiling it).
pub const MAX_DEADLINE_MS: u64 = 86_400_000;

impl Default for Options {
    fn default() -> Options {
        Options {
            shape: Shape::Switch,
            mappings: Mapping::ALL.to_vec(),
            instances: None,
            // The published campaign's CPU and CUDA timeout (paper §6.2).
            deadline_ms: 20_000,
        }
    }
}

/// Why a set of tests cannot become one program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProgramError {
    /// No test to put in it.
    Empty,
    /// Two tests share a name, so one could not be selected by it.
    DuplicateName {
        name: String,
        first: String,
        second: String,
    },
    /// A name the programs cannot carry (see [`crate::target::names`]).
    BadName { source: String, msg: String },
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgramError::Empty => f.write_str("no test to emit"),
            ProgramError::DuplicateName {
                name,
                first,
                second,
            } => write!(
                f,
                "two tests are named `{}` ({first} and {second}): a program selects tests by name, so names must be unique",
                crate::excerpt::excerpt(name)
            ),
            ProgramError::BadName { source, msg } => write!(f, "{source}: {msg}"),
        }
    }
}

impl std::error::Error for ProgramError {}

/// Checks that `tests` can share a program: at least one, every name one
/// a program can carry ([`crate::target::names::check`]), names unique.
pub fn check_names(tests: &[NamedTest]) -> Result<(), ProgramError> {
    if tests.is_empty() {
        return Err(ProgramError::Empty);
    }
    let mut seen: BTreeMap<&str, &NamedTest> = BTreeMap::new();
    for t in tests {
        crate::target::names::check(&t.name).map_err(|msg| ProgramError::BadName {
            source: t.source.display().to_string(),
            msg,
        })?;
        if let Some(first) = seen.insert(&t.name, t) {
            return Err(ProgramError::DuplicateName {
                name: t.name.clone(),
                first: first.source.display().to_string(),
                second: t.source.display().to_string(),
            });
        }
    }
    Ok(())
}

/// `s` as a C string literal (octal escapes, which unlike `\x` cannot run
/// into a following digit).
pub fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'?' => out.push_str("\\?"), // no trigraphs
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out.push('"');
    out
}

/// The canary's test name (see [`canary_test`]).
pub const CANARY: &str = "axb-canary";

/// The canary: one thread spinning until `Mem[0]` is nonzero, which no
/// thread ever writes, so no scheduler ends it. A device host runs it
/// before any test: if it ends by itself, the device leaves loops on its
/// own and cannot show non-termination; if the stop flag does not end it,
/// the flag does not reach the device and no deadline could be kept.
pub fn canary_test() -> NamedTest {
    let test = progress_litmus::axb::text::parse("THREAD0\natomic_chk_branch(0,0,0)\n")
        .expect("the canary is a valid test");
    NamedTest {
        name: CANARY.to_string(),
        entry: progress_litmus::axb::suite::Entry::new(CANARY, test),
        source: std::path::PathBuf::from("(built in)"),
    }
}

/// The name of the generated function or kernel of test number `index`.
pub fn fn_name(index: usize) -> String {
    format!("axb_test_{index}")
}

/// The comment block above a test's code: name, source, shape, pseudo-code.
pub fn test_comment(index: usize, t: &NamedTest) -> String {
    let test = &t.entry.test;
    format!(
        "// Test {index}: {} ({}, {} threads, words per instance: {}), from {}\n{}",
        codegen::comment_safe(&t.name),
        test.config(),
        test.num_threads(),
        codegen::stride(test),
        codegen::comment_safe(&t.source.display().to_string()),
        codegen::pseudo_comment(test, "//")
    )
}

/// The fields every `TestInfo` initializer starts with: C name, JSON name
/// (escaped now so the program never has to), threads, words per instance.
pub fn info_fields(t: &NamedTest) -> String {
    let json = oracle::json::to_string(&t.name).expect("a string serializes");
    format!(
        "{}, {}, {}u, {}u",
        c_string(&t.name),
        c_string(&json),
        t.entry.test.num_threads(),
        codegen::stride(&t.entry.test)
    )
}

/// The C function `axb_locate(mapping, n, m, w, &thread, &instance)`, the
/// run-time form of [`crate::mapping::Layout::locate`]; `qualifiers` is
/// e.g. `static inline` or `static __host__ __device__ inline`.
pub fn locate_fn(qualifiers: &str) -> String {
    let mut out = format!(
        "// Which thread of which instance workgroup `w` runs (SPEC 6).\n\
         {qualifiers} void axb_locate(uint32_t mapping, uint32_t n, uint32_t m, uint32_t w, uint32_t* thread, uint32_t* instance) {{\n    \
         (void)n;\n    (void)m;\n    switch (mapping) {{\n"
    );
    for mapping in Mapping::ALL {
        let (t, i) = mapping.locate_exprs("w", "n", "m");
        let _ = writeln!(
            out,
            "    case {}u: // {}\n        *thread = {t};\n        *instance = {i};\n        return;",
            mapping.code(),
            mapping.name()
        );
    }
    out.push_str(
        "    default:\n        *thread = 0u;\n        *instance = 0u;\n        return;\n    }\n}\n",
    );
    out
}

/// The defaults block and the shared command-line/result code
/// ([`templates::HOST_UTIL`], [`templates::HOST_COMMON`]). `usage` is the
/// target's usage text.
pub fn common_tail(tests: usize, opts: &Options, usage: &str) -> String {
    let mappings: Vec<&str> = opts.mappings.iter().map(|m| m.name()).collect();
    let mappings = if mappings.is_empty() {
        "all".to_string()
    } else {
        mappings.join(",")
    };
    format!(
        "static const uint32_t kNumTests = {tests}u;\n\
         static const char kDefaultMappings[] = {};\n\
         static const long kDefaultInstances = {}; // 0: floor(65535 / N)\n\
         static const long kDefaultDeadlineMs = {};\n\
         static const char kUsage[] =\n{};\n\n{}\n{}",
        c_string(&mappings),
        opts.instances.unwrap_or(0),
        opts.deadline_ms,
        usage
            .lines()
            .map(|l| format!("    {}", c_string(&format!("{l}\n"))))
            .collect::<Vec<_>>()
            .join("\n"),
        templates::HOST_UTIL,
        templates::HOST_COMMON
    )
}

/// The usage text of a generated program: the shared flags, then the
/// target's own.
pub fn usage(program: &str, own_flags: &str, opts: &Options) -> String {
    format!(
        "usage: {program} [options]\n\
         Runs progress litmus tests and prints one JSON line per run.\n\
         \x20 --test NAME[,NAME]   tests to run (default: all; see --list; `\\,` is a comma in a name)\n\
         \x20 --mapping LIST       plain, round-robin, chunked, all (default: {})\n\
         \x20 --instances M        instances for round-robin and chunked (default: {})\n\
         \x20 --iterations K       runs of each test and mapping (default: 1)\n\
         \x20 --deadline-ms D      stop a run after D ms, reported non-terminating (default: {})\n\
         \x20 --list               print the selected tests, name and thread count\n\
         {own_flags}",
        opts.mappings
            .iter()
            .map(|m| m.name())
            .collect::<Vec<_>>()
            .join(","),
        opts.instances
            .map_or_else(|| "floor(65535 / threads)".to_string(), |m| m.to_string()),
        opts.deadline_ms
    )
}

/// What distinguishes the C++ and CUDA programs; [`assemble`] does the rest.
pub struct Harness<'a> {
    /// The target's name in result lines and comments: `cpp`, `cuda`.
    pub target: &'a str,
    /// How to build the file, for its header comment.
    pub build: &'a str,
    /// `#include` lines and any prelude before the tests.
    pub prelude: &'a str,
    /// Qualifiers of the generated `axb_locate`.
    pub locate_qualifiers: &'a str,
    /// The function (or kernel) of test `k`, without the comment above it.
    pub function: &'a dyn Fn(usize, &NamedTest) -> String,
    /// `typedef`s and `struct TestInfo`, whose first four fields must be
    /// those of [`info_fields`].
    pub info_struct: &'a str,
    /// The initializer fields of test `k` after [`info_fields`].
    pub info_extra: &'a dyn Fn(usize, &NamedTest) -> String,
    /// Usage lines of the target's own flags.
    pub own_flags: &'a str,
    /// The target's `main` (a template).
    pub main: &'a str,
}

/// A whole program: header, prelude, tests, test table, shared command line
/// and result code, target main.
pub fn assemble(h: &Harness, tests: &[NamedTest], opts: &Options) -> Result<String, ProgramError> {
    check_names(tests)?;
    let mut out = format!(
        "// Progress litmus tests: {} tests, generated by `backends emit --target {}` (code shape: {}).\n\
         // Build: {}\n\
         // Run `./tests --help` for the options; one JSON line per run on stdout.\n\n{}\n",
        tests.len(),
        h.target,
        opts.shape.name(),
        h.build,
        h.prelude
    );
    out.push_str(&locate_fn(h.locate_qualifiers));
    out.push('\n');
    for (k, t) in tests.iter().enumerate() {
        out.push_str(&test_comment(k, t));
        out.push_str(&(h.function)(k, t));
        out.push('\n');
    }
    out.push_str(h.info_struct);
    out.push_str("\nstatic const TestInfo kTests[] = {\n");
    for (k, t) in tests.iter().enumerate() {
        let _ = writeln!(out, "    {{{}, {}}},", info_fields(t), (h.info_extra)(k, t));
    }
    out.push_str("};\n");
    out.push_str(&common_tail(
        tests.len(),
        opts,
        &usage("tests", h.own_flags, opts),
    ));
    out.push('\n');
    out.push_str(h.main);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_strings_escape_everything_risky() {
        assert_eq!(c_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(c_string("é1"), "\"\\303\\2511\"");
        assert_eq!(c_string("??="), "\"\\?\\?=\"");
    }
}
