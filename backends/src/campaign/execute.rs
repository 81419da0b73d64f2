//! Running the pending runs, the second stage of `backends run`. The
//! program prints one JSON result line per run (format in
//! [`crate::target::host`]); each line is checked and appended to the
//! journal ([`crate::campaign::journal`], fsync'd) the moment it arrives,
//! with progress on stderr. Pending runs are grouped so that one program
//! process does as many as possible (a CUDA context costs a fraction of a
//! second to create); a resumed campaign runs only what the journal lacks,
//! numbering iterations after the recorded ones, so nothing is lost or
//! counted twice.

use crate::campaign::build::shader_dir;
use crate::campaign::journal::{self, Entry, RunRecord};
use crate::campaign::options::{hardware_threads, RunArgs};
use crate::campaign::{env, input, Failure};
use crate::excerpt::excerpt;
use crate::mapping::{Layout, Mapping};
use crate::target::names;
use progress_litmus::axb::load::NamedTest;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest a run can have lasted: the longest deadline
/// ([`crate::target::host::MAX_DEADLINE_MS`]) and as long again to stop.
/// A longer `elapsed_ms` is refused, not carried into the device file's
/// figures (where 1e306 once rounded to infinity, written as null).
pub const MAX_ELAPSED_MS: f64 = 2.0 * crate::target::host::MAX_DEADLINE_MS as f64;

/// The arguments of one program invocation (without the executable).
pub fn program_command(
    args: &RunArgs,
    tests: &[&str],
    mappings: &[Mapping],
    iterations: u32,
) -> Vec<String> {
    let mut v = vec![
        format!("--test={}", names::test_list(tests)),
        format!(
            "--mapping={}",
            mappings
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(",")
        ),
        format!("--iterations={iterations}"),
        format!("--deadline-ms={}", args.deadline_ms),
    ];
    if let Some(m) = args.instances {
        v.push(format!("--instances={m}"));
    }
    if args.target.facts().os_threads {
        v.push(format!(
            "--threads={}",
            args.os_threads.unwrap_or_else(hardware_threads)
        ));
    }
    v.extend(args.program_args.iter().cloned());
    v
}

/// One result line of a program of `target` (`cpp`, `cuda`, `vulkan`),
/// checked field by field; errors quote a short excerpt of the line.
pub fn parse_result_line(line: &str, target: &str, at_unix_ms: u64) -> Result<RunRecord, String> {
    let shown = || excerpt(line);
    let v: Value = crate::json::parse(line).map_err(|e| match e {
        crate::json::Error::Syntax(e) => format!("not a JSON result line ({e}): `{}`", shown()),
        dup => format!("{dup}: `{}`", shown()),
    })?;
    let Value::Object(mut o) = v else {
        return Err(format!("not a JSON object: `{}`", shown()));
    };
    // Lines of programs of every target say which they are; checked
    // first, so a line of another kind of file (a webgpu header) is named
    // as such rather than as a line lacking fields.
    match o.remove("target") {
        None => {}
        Some(Value::String(t)) if t == target => {}
        Some(t) => {
            let t = match t {
                Value::String(t) => format!("\"{}\"", excerpt(&t)),
                t => excerpt(&t.to_string()),
            };
            return Err(format!(
                "a result of target {t}, not {target}: `{}`",
                shown()
            ));
        }
    }
    let mut take = |k: &str| {
        o.remove(k)
            .ok_or_else(|| format!("result line without `{k}`: `{}`", shown()))
    };
    let str_of = |v: Value, k: &str| match v {
        Value::String(s) => Ok(s),
        _ => Err(format!("`{k}` is not a string in `{}`", shown())),
    };
    let u64_of = |v: Value, k: &str| {
        v.as_u64()
            .ok_or_else(|| format!("`{k}` is not an unsigned integer in `{}`", shown()))
    };
    let test = str_of(take("test")?, "test")?;
    let mapping = str_of(take("mapping")?, "mapping")?;
    let iteration = u64_of(take("iteration")?, "iteration")?;
    let terminated = take("terminated")?
        .as_bool()
        .ok_or_else(|| format!("`terminated` is not a boolean in `{}`", shown()))?;
    let elapsed_ms = take("elapsed_ms")?
        .as_f64()
        .filter(|t| (0.0..=MAX_ELAPSED_MS).contains(t))
        // -0.0 reads as 0.
        .map(|t| t + 0.0)
        .ok_or_else(|| {
            format!(
                "`elapsed_ms` is not a time in ms (0 to {MAX_ELAPSED_MS}: the longest deadline and as long again to stop) in `{}`",
                shown()
            )
        })?;
    let instances = u64_of(take("instances")?, "instances")?;
    let workgroups = u64_of(take("workgroups")?, "workgroups")?;
    Ok(RunRecord {
        test,
        mapping,
        iteration: u32::try_from(iteration)
            .map_err(|_| format!("iteration too large in `{}`", shown()))?,
        terminated,
        elapsed_ms,
        instances: u32::try_from(instances)
            .map_err(|_| format!("instances too large in `{}`", shown()))?,
        workgroups,
        at_unix_ms,
        extra: o,
    })
}

/// Progress on stderr: a rewritten line on a terminal, else a line every
/// 5% so logs stay short.
pub(crate) struct Progress {
    total: usize,
    done: usize,
    start_done: usize,
    started: Instant,
    tty: bool,
    last_pct: usize,
    hung: usize,
}

impl Progress {
    pub(crate) fn new(total: usize, done: usize) -> Progress {
        Progress {
            total,
            done,
            start_done: done,
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
            last_pct: usize::MAX,
            hung: 0,
        }
    }

    fn tick(&mut self, r: &RunRecord) {
        self.done += 1;
        self.hung += !r.terminated as usize;
        let pct = self.done * 100 / self.total.max(1);
        let secs = self.started.elapsed().as_secs_f64();
        let rate = (self.done - self.start_done) as f64 / secs.max(1e-9);
        let eta = (self.total - self.done) as f64 / rate.max(1e-9);
        let msg = format!(
            "[{}/{}] {pct:3}%  {} {:<11} #{}  non-terminating so far: {}  elapsed {:.0}s  eta {:.0}s",
            self.done, self.total, r.test, r.mapping, r.iteration, self.hung, secs, eta
        );
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{msg}");
            if self.done == self.total {
                let _ = writeln!(err);
            }
        } else if pct / 5 != self.last_pct / 5 || self.done == self.total {
            let _ = writeln!(err, "{msg}");
        }
        self.last_pct = pct;
    }
}

/// Checks one run against the campaign that asked for it (`threads`: its
/// test's): the instance count the campaign's options give (unless
/// program arguments, which may change the launch, were passed), and a
/// real, non-negative time.
pub(crate) fn check_run(
    r: &RunRecord,
    mapping: Mapping,
    threads: usize,
    args: &RunArgs,
) -> Result<(), String> {
    if args.program_args.is_empty() {
        let want = Layout::new(mapping, threads, args.instances).instances;
        if r.instances != want {
            return Err(format!(
                "{} instances for test {} under {}, but this campaign runs {want}",
                r.instances,
                excerpt(&r.test),
                mapping
            ));
        }
    }
    if !(0.0..=MAX_ELAPSED_MS).contains(&r.elapsed_ms) {
        return Err(format!("elapsed_ms {} is not a time", r.elapsed_ms));
    }
    check_launch(r, mapping, threads)
}

/// The counters of how a run's threads ended (the wgpu and webgpu
/// programs' lines): each one a count of workgroups.
const ENDS: [&str; 4] = ["finished", "stopped", "exhausted", "early"];

/// Checks that a run line describes a launch its program can make of its
/// test (`threads`) under `mapping`, whatever options it ran with: plain
/// has one instance; the launch has `threads * instances` workgroups (a
/// CUDA intra-warp run: one block per instance); each counter of how the
/// threads ended ([`ENDS`]) is at most the workgroups, all four add up to
/// them, and the run terminated iff every workgroup finished. A line that
/// fails is not a run of this test (an edited or forged line), and would
/// count as one in the results.
pub(crate) fn check_launch(r: &RunRecord, mapping: Mapping, threads: usize) -> Result<(), String> {
    let test = excerpt(&r.test);
    if r.instances == 0 || (mapping == Mapping::Plain && r.instances != 1) {
        return Err(format!(
            "{} instances for test {test} under {mapping}, which runs {}",
            r.instances,
            if mapping == Mapping::Plain {
                "one"
            } else {
                "at least one"
            }
        ));
    }
    let intra_warp = r.extra.get("intra_warp") == Some(&Value::Bool(true));
    let want = if intra_warp {
        u64::from(r.instances)
    } else {
        threads as u64 * u64::from(r.instances)
    };
    if r.workgroups != want {
        return Err(format!(
            "{} workgroups for {} instances of the {threads}-thread test {test} under {mapping}, whose launch has {want}",
            r.workgroups, r.instances
        ));
    }
    let mut sum = 0u64;
    let mut all = true;
    for k in ENDS {
        let Some(v) = r.extra.get(k) else {
            all = false;
            continue;
        };
        sum += v.as_u64().filter(|&n| n <= r.workgroups).ok_or_else(|| {
            format!(
                "`{k}` {} is not a count of the run's {} workgroups",
                excerpt(&v.to_string()),
                r.workgroups
            )
        })?;
    }
    if all && sum != r.workgroups {
        return Err(format!(
            "{} is {sum}, not the run's {} workgroups",
            ENDS.join(" + "),
            r.workgroups
        ));
    }
    if let Some(f) = r.extra.get("finished").and_then(Value::as_u64) {
        if r.terminated != (f == r.workgroups) {
            return Err(format!(
                "`terminated` is {} but {f} of {} workgroups finished",
                r.terminated, r.workgroups
            ));
        }
    }
    Ok(())
}

/// The runs the journal holds per test and mapping, each checked against
/// the campaign before any work is done: of one of its `tests`, under one
/// of its `mappings`, iteration below `args.iterations`, as
/// [`check_run`] says; and the iterations of each test and mapping are
/// 0..n. Errors name the journal `path` and the line.
pub(crate) fn recorded<'t>(
    contents: &journal::Contents,
    path: &Path,
    args: &RunArgs,
    tests: &'t [NamedTest],
    mappings: &[Mapping],
) -> Result<BTreeMap<(&'t str, Mapping), u32>, Failure> {
    let by_name: BTreeMap<&str, &NamedTest> = tests.iter().map(|t| (t.name.as_str(), t)).collect();
    // (runs, highest iteration, its line) per test and mapping. The journal
    // has no run twice, so the iterations are 0..runs iff the highest is
    // runs - 1.
    let mut seen: BTreeMap<(&str, Mapping), (u32, u32, usize)> = BTreeMap::new();
    for (n, r) in contents.results_at() {
        let at = |msg: String| {
            input(format!(
                "{}:{n}: {msg}; the journal is not of this campaign or was edited: fix or remove the line, or start a new campaign in another --out directory",
                path.display()
            ))
        };
        let m: Mapping = r.mapping.parse().map_err(|e: String| at(excerpt(&e)))?;
        if !mappings.contains(&m) {
            return Err(at(format!(
                "a run under {m}, which this campaign does not run"
            )));
        }
        let Some(t) = by_name.get(r.test.as_str()) else {
            return Err(at(format!(
                "a run of test `{}`, which is not in this campaign's suite",
                excerpt(&r.test)
            )));
        };
        if r.iteration >= args.iterations {
            return Err(at(format!(
                "run {} of {} under {m}, but this campaign runs {} iterations",
                r.iteration,
                excerpt(&r.test),
                args.iterations
            )));
        }
        check_run(r, m, t.entry.test.num_threads(), args).map_err(at)?;
        let e = seen.entry((t.name.as_str(), m)).or_default();
        e.0 += 1;
        if r.iteration >= e.1 {
            (e.1, e.2) = (r.iteration, n);
        }
    }
    let mut done: BTreeMap<(&str, Mapping), u32> = BTreeMap::new();
    for ((t, m), (runs, max, line)) in seen {
        if max + 1 != runs {
            return Err(input(format!(
                "{}:{line}: run {max} of {} under {m}, but only {runs} runs of it are journaled: the iterations are not 0..{runs} (a line was removed?)",
                path.display(),
                excerpt(t)
            )));
        }
        done.insert((t, m), runs);
    }
    Ok(done)
}

/// Pending work, grouped: tests with the same pending mappings (in the
/// order of `mappings`) and the same number of recorded runs share one
/// program invocation. Keyed by (mappings, runs recorded).
pub(crate) fn pending<'t>(
    tests: &'t [NamedTest],
    mappings: &[Mapping],
    iterations: u32,
    done: &BTreeMap<(&str, Mapping), u32>,
) -> BTreeMap<(Vec<Mapping>, u32), Vec<&'t str>> {
    let mut groups: BTreeMap<(Vec<Mapping>, u32), Vec<&str>> = BTreeMap::new();
    for t in tests {
        let mut by_done: BTreeMap<u32, Vec<Mapping>> = BTreeMap::new();
        for &m in mappings {
            let d = done.get(&(t.name.as_str(), m)).copied().unwrap_or(0);
            if d < iterations {
                by_done.entry(d).or_default().push(m);
            }
        }
        for (d, ms) in by_done {
            groups.entry((ms, d)).or_default().push(&t.name);
        }
    }
    groups
}

/// The tests of a group in chunks of at most 200 tests and 64 KiB of
/// names, so that a program's command line stays well inside the system's
/// limits (128 KiB per argument on Linux; names are at most
/// [`progress_litmus::axb::test::MAX_NAME_LEN`] long, see [`names::check`]).
fn chunks<'a, 't>(group: &'a [&'t str]) -> Vec<&'a [&'t str]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (k, name) in group.iter().enumerate() {
        let len = 2 * name.len() + 1;
        if k > start && (k - start == 200 || bytes + len > 64 * 1024) {
            out.push(&group[start..k]);
            (start, bytes) = (k, 0);
        }
        bytes += len;
    }
    if start < group.len() {
        out.push(&group[start..]);
    }
    out
}

/// Runs the `pending` groups with the program `exe`, a [`chunks`] per
/// invocation, journaling each result as it arrives.
pub(crate) fn run_pending(
    args: &RunArgs,
    exe: &Path,
    tests: &[NamedTest],
    pending: &BTreeMap<(Vec<Mapping>, u32), Vec<&str>>,
    writer: &mut journal::Writer,
    progress: &mut Progress,
) -> Result<(), Failure> {
    let threads: BTreeMap<&str, usize> = tests
        .iter()
        .map(|t| (t.name.as_str(), t.entry.test.num_threads()))
        .collect();
    for ((ms, d), group) in pending {
        for chunk in chunks(group) {
            let group = Group {
                tests: chunk,
                threads: &threads,
                mappings: ms,
                offset: *d,
                count: args.iterations - d,
            };
            run_group(args, exe, &group, writer, progress)?;
        }
    }
    Ok(())
}

/// One program invocation: `count` runs of each of `tests` under each of
/// `mappings`, journaled as iterations `offset..offset + count`.
struct Group<'a> {
    tests: &'a [&'a str],
    threads: &'a BTreeMap<&'a str, usize>,
    mappings: &'a [Mapping],
    offset: u32,
    count: u32,
}

/// Runs one program invocation, checking each result ([`check_run`]) and
/// journaling it as it arrives.
fn run_group(
    args: &RunArgs,
    exe: &Path,
    g: &Group,
    writer: &mut journal::Writer,
    progress: &mut Progress,
) -> Result<(), Failure> {
    let (tests, mappings, count) = (g.tests, g.mappings, g.count);
    let mut argv = program_command(args, tests, mappings, count);
    if args.target.facts().shaders {
        argv.insert(0, format!("--shaders={}", shader_dir(exe).display()));
    }
    let Running {
        mut child,
        lines: rx,
        reader,
    } = spawn(exe, &argv)?;
    let expected: BTreeMap<(&str, &str), Mapping> = tests
        .iter()
        .flat_map(|t| mappings.iter().map(move |m| ((*t, m.name()), *m)))
        .collect();
    let mut seen: BTreeSet<(String, String, u32)> = BTreeSet::new();
    let want = expected.len() * count as usize;
    // A run ends by the deadline at the latest; allow for set-up and a slow
    // machine before calling the program stuck.
    // (A Vulkan host allows 30 s plus 1 ms per workgroup after the stop flag.)
    let patience = Duration::from_millis(2 * args.deadline_ms + 180_000);
    let shown = format!("{} {}", exe.display(), argv.join(" "));
    let fail = |child: &mut Child, msg: String| {
        let _ = child.kill();
        let _ = child.wait();
        env(format!("{msg}\n  command: {shown}"))
    };
    loop {
        let line = match rx.recv_timeout(patience) {
            Ok(Ok(line)) => line,
            Ok(Err(e)) => return Err(fail(&mut child, format!("reading the program's output: {e}"))),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(fail(
                    &mut child,
                    format!(
                        "no result for {} s although every run has a {} ms deadline: the program seems stuck",
                        patience.as_secs(),
                        args.deadline_ms
                    ),
                ))
            }
        };
        let r = match accept(&line, args, g, &expected, &mut seen) {
            Ok(r) => r,
            Err(e) => return Err(fail(&mut child, e)),
        };
        writer.append(&Entry::Result(r.clone())).map_err(env)?;
        progress.tick(&r);
    }
    let _ = reader.join();
    finish_group(&mut child, exe, &shown, seen.len(), want)
}

/// A started program invocation: its stdout arrives line by line on
/// `lines`, read by the `reader` thread.
struct Running {
    child: Child,
    lines: Receiver<std::io::Result<String>>,
    reader: JoinHandle<()>,
}

/// The program started with its stdout read line by line on a thread, so
/// that the caller can wait for each line with a timeout (a stuck program
/// must not hang the campaign).
fn spawn(exe: &Path, argv: &[String]) -> Result<Running, Failure> {
    let mut child = Command::new(exe)
        .args(argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| env(format!("cannot run {}: {e}", exe.display())))?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    Ok(Running {
        child,
        lines: rx,
        reader,
    })
}

/// One result line, checked before it is journaled: well formed, of a
/// test and mapping this invocation asked for and an iteration inside its
/// count, consistent with the test ([`check_run`]) and not seen before;
/// its iteration moved by the group's offset. The error is the message.
fn accept(
    line: &str,
    args: &RunArgs,
    g: &Group,
    expected: &BTreeMap<(&str, &str), Mapping>,
    seen: &mut BTreeSet<(String, String, u32)>,
) -> Result<RunRecord, String> {
    let (offset, count) = (g.offset, g.count);
    let mut r = parse_result_line(line, args.target.name(), journal::now_unix_ms())?;
    let Some(&m) = expected
        .get(&(r.test.as_str(), r.mapping.as_str()))
        .filter(|_| r.iteration < count)
    else {
        return Err(format!(
            "unexpected result (test {}, mapping {}, iteration {}) for a request of {count} iterations",
            excerpt(&r.test),
            excerpt(&r.mapping),
            r.iteration
        ));
    };
    let threads = g.threads.get(r.test.as_str()).copied().unwrap_or(0);
    check_run(&r, m, threads, args)?;
    r.iteration += offset;
    if !seen.insert((r.test.clone(), r.mapping.clone(), r.iteration)) {
        return Err(format!(
            "the program reported run {} of {} under {} twice",
            r.iteration - offset,
            excerpt(&r.test),
            r.mapping
        ));
    }
    Ok(r)
}

/// The invocation's end: the program must exit successfully having
/// reported every run it was asked for (a crash after some results is
/// still a failure, the results so far kept in the journal).
fn finish_group(
    child: &mut Child,
    exe: &Path,
    shown: &str,
    seen: usize,
    want: usize,
) -> Result<(), Failure> {
    let status = child
        .wait()
        .map_err(|e| env(format!("waiting for {}: {e}", exe.display())))?;
    if !status.success() {
        return Err(env(format!(
            "the program failed ({status})\n  command: {shown}"
        )));
    }
    if seen != want {
        return Err(env(format!(
            "the program reported {seen} of {want} runs and exited\n  command: {shown}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    fn parse(argv: &[&str]) -> RunArgs {
        Cli::try_parse_from(std::iter::once("run").chain(argv.iter().copied()))
            .unwrap()
            .run
    }

    #[test]
    fn cuda_command_lines_carry_the_options_and_no_cpu_threads() {
        let a = parse(&[
            "--target",
            "cuda",
            "suite.ron",
            "--out",
            "o",
            "--deadline-ms",
            "500",
            "--instances",
            "64",
            "--program-arg=--cooperative",
            "--nvcc-flag=-arch=sm_90",
        ]);
        assert_eq!(
            program_command(
                &a,
                &["2t2i_0", "2t2i_1"],
                &[Mapping::Plain, Mapping::Chunked],
                7
            ),
            [
                "--test=2t2i_0,2t2i_1",
                "--mapping=plain,chunked",
                "--iterations=7",
                "--deadline-ms=500",
                "--instances=64",
                "--cooperative"
            ]
        );
        assert_eq!(a.nvcc_flags, ["-arch=sm_90"]);
        let c = parse(&["--target", "cpp", "s", "--out", "o", "--os-threads", "200"]);
        assert_eq!(c.iterations, 20);
        assert_eq!(c.mapping_list(), Mapping::ALL);
        assert!(program_command(&c, &["a"], &[Mapping::Plain], 1)
            .contains(&"--threads=200".to_string()));
    }

    #[test]
    fn cuda_result_lines_parse_with_their_own_fields() {
        let line = r#"{"test":"2t2i_0","target":"cuda","mapping":"chunked","instances":32767,"workgroups":65534,"iteration":3,"terminated":false,"elapsed_ms":1000.5,"launch":"normal","intra_warp":false,"device":"NVIDIA H100 80GB HBM3"}"#;
        let r = parse_result_line(line, "cuda", 42).unwrap();
        assert_eq!(r.test, "2t2i_0");
        assert_eq!(r.mapping, "chunked");
        assert_eq!(r.iteration, 3);
        assert!(!r.terminated);
        assert_eq!(r.workgroups, 65534);
        assert_eq!(r.extra["device"], "NVIDIA H100 80GB HBM3");
        assert!(!r.extra.contains_key("target"));
        for bad in [
            "garbage",
            "[1]",
            r#"{"test":"a","mapping":"plain","iteration":0,"elapsed_ms":1,"instances":1,"workgroups":2}"#,
            r#"{"test":"a","mapping":"plain","iteration":-1,"terminated":true,"elapsed_ms":1,"instances":1,"workgroups":2}"#,
        ] {
            assert!(parse_result_line(bad, "cuda", 0).is_err(), "{bad}");
        }
    }
}
