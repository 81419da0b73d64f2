//! `backends import`: the results of a generated program that ran on another
//! machine, as if `backends run` had run it here.
//!
//! GPU machines often have a compiler and a driver but no Rust toolchain
//! (a cluster node, a colleague's workstation, a phone's host). There one
//! builds the program of `backends emit --target cpp|cuda|vulkan`, runs it
//! with the options wanted, keeps its standard output (one JSON result line
//! per run) and its `--info` line, and brings both back:
//!
//! ```text
//! remote$ nvcc -O2 -arch=sm_90 -o tests tests.cu
//! remote$ ./tests --info > info.json
//! remote$ ./tests --iterations 20 --deadline-ms 1000 > runs.jsonl
//! local$  backends import --target cuda SUITE --lines runs.jsonl --info info.json --out results/h100 --name h100
//! ```
//!
//! Every line is checked as `backends run` checks the program's output
//! (errors name the file and line), against the suite's test names and the
//! mappings. Several files may be given, in the order they were produced:
//! each program invocation numbers its iterations from 0, so the runs of a
//! test and mapping are numbered again in file order; a run repeated within
//! one file is an error. The result is the same journal, artifact CSVs and
//! device JSON as a campaign run here (the journal records where the lines
//! came from), so `backends report` reads it like any other.
//!
//! The page of `backends emit --target webgpu` gives one file holding
//! everything: a header (target, suite fingerprint, device), session and
//! event lines, and the run lines (format in [`crate::target::webgpu`]).
//! Its header must match the target and the suite given (the same tests,
//! by name and program), and every event it reports (a lost device, an
//! out-of-memory dispatch, a refused canary) is shown and kept in the
//! device file:
//!
//! ```text
//! local$  backends import --target webgpu SUITE --lines oopsla21.webgpu.jsonl --out results/my-gpu --name my-gpu
//! ```

use crate::campaign::execute::{check_launch, parse_result_line};
use crate::campaign::journal::{self, Entry, RunRecord, Session};
use crate::campaign::options::RunTarget;
use crate::campaign::output::{check_name, paths, write_results};
use crate::campaign::suite::{check_tests, load_suite, show_paths, suite_json};
use crate::campaign::timing;
use crate::campaign::{env, finish, input, Failure};
use crate::excerpt::{excerpt, message, printable};
use crate::mapping::Mapping;
use crate::report::format::Format;
use crate::target::webgpu::{self, ResultLine};
use clap::Args;
use progress_litmus::axb::load::NamedTest;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    /// The target whose program produced the lines (names the results'
    /// framework directory: cpp, CUDA, Vulkan, WebGPU or wgpu).
    #[arg(long, value_enum)]
    pub target: RunTarget,
    /// The suite the program was emitted from (several paths: as for `run`).
    #[arg(required = true, value_name = "SUITE")]
    pub suite: Vec<PathBuf>,
    /// A file of the program's result lines (its standard output);
    /// repeatable, in the order the files were produced.
    #[arg(long = "lines", required = true, value_name = "FILE")]
    pub lines: Vec<PathBuf>,
    /// The program's `--info` output, describing the device (not for
    /// webgpu, whose result file holds its device).
    #[arg(long, value_name = "FILE")]
    pub info: Option<PathBuf>,
    /// The device's name: the stem of the result files (default: the target).
    #[arg(long)]
    pub name: Option<String>,
    /// Results directory (created; as for `run`).
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: PathBuf,
    /// `json`: the summary as one JSON object on stdout (default: a line
    /// on stderr).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// The lines are runs of SIMT form programs (`backends emit` of kernel
    /// programs with outcome assertions; one outcome a run): tally them
    /// into `OUT/<name>.simt.csv`; SUITE is the programs (e.g. suites/simt).
    #[arg(long)]
    pub simt: bool,
}

/// What an import wrote.
pub struct Summary {
    pub name: String,
    pub runs: usize,
    pub non_terminating: usize,
    pub files: Vec<PathBuf>,
    /// Mappings whose deadline may have cut slow runs short
    /// ([`crate::campaign::timing`]).
    pub warnings: Vec<String>,
}

/// Reads the `--info` file: one JSON object (the first non-empty line).
fn read_info(path: &Path) -> Result<Value, Failure> {
    let (_, text) = read_text(path)?;
    let (n, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty())
        .ok_or_else(|| {
            input(format!(
                "{}: empty, expected the program's --info line",
                path.display()
            ))
        })?;
    match crate::json::parse(line) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(input(format!(
            "{}:{}: not a JSON object",
            path.display(),
            n + 1
        ))),
        Err(e) => Err(input(format!("{}:{}: {e}", path.display(), n + 1))),
    }
}

/// A line as its content: a JSON line with its objects' keys sorted and
/// nothing but its values ([`canonical_json`]), anything else trimmed. Two
/// spellings of one result (re-indented, keys reordered, `1.50` for `1.5`)
/// are one line.
fn canonical(line: &str) -> String {
    let line = line.trim();
    match serde_json::from_str::<Value>(line) {
        Ok(v) => canonical_json(&v),
        Err(_) => line.to_string(),
    }
}

/// `v` as compact JSON with every object's keys in order.
fn canonical_json(v: &Value) -> String {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&o[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(canonical_json).collect();
            format!("[{}]", items.join(","))
        }
        v => v.to_string(),
    }
}

/// The texts of the `--lines` files, refusing the same runs given twice:
/// a file named twice (also through another path or a link), two files
/// with the same contents (a copy, also re-formatted), or a file every
/// result line of which is also in the other files (a part of another, or
/// a concatenation of others). Lines are compared by content
/// ([`canonical`]), not bytes. Two different runs never print the same
/// line in practice (the line holds the run's time to the microsecond),
/// so whole files are compared; lines are only compared with lines of
/// other files: within a file, a repeated run is caught by its (test,
/// mapping, iteration).
fn read_lines(files: &[PathBuf]) -> Result<Vec<String>, Failure> {
    use std::os::unix::fs::MetadataExt;
    let mut texts = Vec::new();
    let mut ids: Vec<(u64, u64)> = Vec::new();
    let mut digests: Vec<String> = Vec::new();
    for file in files {
        let (meta, text) = read_text(file)?;
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(canonical)
            .collect();
        let digest = crate::campaign::cache::sha256(lines.join("\n").as_bytes());
        let twice = |j: usize, how: &str| {
            input(format!(
                "--lines {} {how} --lines {}: its runs would be counted twice",
                file.display(),
                files[j].display()
            ))
        };
        if let Some(j) = ids.iter().position(|&id| id == (meta.dev(), meta.ino())) {
            return Err(twice(j, "is the same file as"));
        }
        let has_lines = !lines.is_empty();
        if let Some(j) = digests.iter().position(|d| has_lines && *d == digest) {
            return Err(twice(j, "has the same contents as"));
        }
        ids.push((meta.dev(), meta.ino()));
        digests.push(digest);
        texts.push(text);
    }
    check_not_contained(files, &texts)?;
    Ok(texts)
}

/// One `--lines` file's metadata (which names the file itself, whatever
/// path reached it) and its text, which must be UTF-8: the error names the
/// line of the first bad byte, so that a binary or mis-encoded file is
/// found where it goes wrong.
fn read_text(file: &Path) -> Result<(std::fs::Metadata, String), Failure> {
    let meta = std::fs::metadata(file)
        .map_err(|e| input(format!("{}: cannot read: {e}", file.display())))?;
    if !meta.is_file() {
        return Err(input(format!("{}: not a file", file.display())));
    }
    // At most the input limit: a run's output can be huge (a program
    // that printed in a loop), and is read whole.
    let limit = progress_litmus::io::max_input_bytes()
        .map_err(|e| input(format!("{}: {e}", file.display())))?;
    let bytes =
        progress_litmus::io::read_bytes_limited(file, limit).map_err(|e| input(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let bad = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..bad].iter().filter(|&&b| b == b'\n').count() + 1;
        input(format!("{}:{line}: not UTF-8 text", file.display()))
    })?;
    Ok((meta, text))
}

/// Refuses a `--lines` file every result line of which is also in the
/// other files (a part of another, or a concatenation of others), naming
/// its first such line and where that line is found elsewhere. Separate
/// from [`read_lines`]' whole-file checks because it needs every file's
/// lines at once.
fn check_not_contained(files: &[PathBuf], texts: &[String]) -> Result<(), Failure> {
    // Each file's non-empty lines by content, with their line numbers.
    let contents: Vec<Vec<(usize, String)>> = texts
        .iter()
        .map(|text| {
            text.lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(n, l)| (n + 1, canonical(l)))
                .collect()
        })
        .collect();
    // Where each result line occurs: (file, line) of its first occurrence
    // in each file.
    let mut occurs: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for (k, lines) in contents.iter().enumerate() {
        for (n, line) in lines {
            let at = occurs.entry(line.as_str()).or_default();
            if !at.iter().any(|&(f, _)| f == k) {
                at.push((k, *n));
            }
        }
    }
    for (k, lines) in contents.iter().enumerate() {
        let mut first_shared = None;
        let mut all_shared = true;
        for (_, line) in lines {
            let line = line.as_str();
            match occurs[line].iter().find(|&&(f, _)| f != k) {
                Some(&other) => {
                    let own = occurs[line].iter().find(|&&(f, _)| f == k).expect("seen");
                    first_shared.get_or_insert((own.1, other));
                }
                None => {
                    all_shared = false;
                    break;
                }
            }
        }
        if let (true, Some((n, (j, m)))) = (all_shared, first_shared) {
            return Err(input(format!(
                "{}:{n}: every result line of this file is also in {} (this one at line {m}): its runs would be counted twice; give each run once",
                files[k].display(),
                files[j].display()
            )));
        }
    }
    Ok(())
}

/// An event's kind as shown: its string escaped, or other JSON as JSON.
fn event_text(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{}\"", excerpt(s)),
        v => excerpt(&v.to_string()),
    }
}

/// What the `--lines` files hold: the runs, renumbered in file order, and
/// (webgpu) the device, sessions and events the page recorded beside them.
struct ReadRuns {
    runs: Vec<RunRecord>,
    /// Runs per (test, mapping): the next iteration number of each.
    count: BTreeMap<(String, String), u32>,
    device: Option<Value>,
    sessions: Vec<Value>,
    events: Vec<Value>,
}

/// The whole command; see the module doc.
pub fn import(args: &ImportArgs) -> Result<Summary, Failure> {
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| args.target.name().to_string());
    check_name(&name)?;
    if progress_litmus::io::is_stdout(&args.out) {
        return Err(input(
            "--out -: import writes a directory of results (CSVs, journal, device file), not one stream; give a directory",
        ));
    }
    let tests = load_suite(&args.suite)?;
    check_tests(&tests, &args.suite)?;
    let p = paths(&args.out, &name);
    if p.journal.exists() {
        return Err(input(format!(
            "{}: results named `{name}` are already here: choose another --name or --out",
            p.journal.display()
        )));
    }
    let device = match &args.info {
        Some(_) if args.target == RunTarget::Webgpu => {
            return Err(input(
                "--info is not for webgpu: the page's result file holds its device",
            ))
        }
        Some(path) => Some(read_info(path)?),
        None => None,
    };
    let imported_at = journal::now_unix_ms();
    let texts = read_lines(&args.lines)?;
    let read = read_runs(args, &tests, &texts, device, imported_at)?;
    if read.runs.is_empty() {
        return Err(no_runs(args, &read.events));
    }
    write_import(args, name, &tests, &p.journal, read, imported_at)
}

/// Reads every run of the `--lines` files (`texts`, in their order),
/// checking each line against the suite's tests and numbering the runs of
/// a test and mapping again across files (each program invocation counts
/// its iterations from 0).
fn read_runs(
    args: &ImportArgs,
    tests: &[NamedTest],
    texts: &[String],
    device: Option<Value>,
    imported_at: u64,
) -> Result<ReadRuns, Failure> {
    let threads: BTreeMap<&str, usize> = tests
        .iter()
        .map(|t| (t.name.as_str(), t.entry.test.num_threads()))
        .collect();
    let mut read = ReadRuns {
        runs: Vec::new(),
        count: BTreeMap::new(),
        device,
        sessions: Vec::new(),
        events: Vec::new(),
    };
    for (file, text) in args.lines.iter().zip(texts) {
        let mut seen: BTreeSet<(String, String, u32)> = BTreeSet::new();
        let mut header_seen = false;
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = |msg: String| input(format!("{}:{}: {msg}", file.display(), n + 1));
            if args.target == RunTarget::Webgpu {
                let here = (file.as_path(), n + 1);
                let is_run = page_line(line, here, &at, tests, &mut header_seen, &mut read)?;
                if !is_run {
                    continue;
                }
            }
            let mut r = parse_result_line(line, args.target.name(), imported_at).map_err(at)?;
            let Some(&n_threads) = threads.get(r.test.as_str()) else {
                return Err(at(format!(
                    "test `{}` is not in the suite {}",
                    excerpt(&r.test),
                    show_paths(&args.suite)
                )));
            };
            let mapping = r
                .mapping
                .parse::<Mapping>()
                .map_err(|e: String| at(excerpt(&e)))?;
            check_launch(&r, mapping, n_threads).map_err(at)?;
            if !seen.insert((r.test.clone(), r.mapping.clone(), r.iteration)) {
                return Err(at(format!(
                    "run {} of {} under {} appears twice in this file",
                    r.iteration,
                    excerpt(&r.test),
                    r.mapping
                )));
            }
            let k = read
                .count
                .entry((r.test.clone(), r.mapping.clone()))
                .or_default();
            r.iteration = *k;
            *k += 1;
            read.runs.push(r);
        }
    }
    Ok(read)
}

/// One non-empty line of a webgpu page's result file (at `here`: file and
/// 1-based line): the header (once, first, matching the target, suite and
/// any earlier file's device), a session or an event (kept in `read`; an
/// event is shown as a warning), or a run. Returns whether it is a run,
/// which the caller checks as any target's run line.
fn page_line(
    line: &str,
    here: (&Path, usize),
    at: &dyn Fn(String) -> Failure,
    tests: &[NamedTest],
    header_seen: &mut bool,
    read: &mut ReadRuns,
) -> Result<bool, Failure> {
    match webgpu::classify(line).map_err(at)? {
        ResultLine::Header(_) if *header_seen => {
            Err(at("a second header: one result file per download".into()))
        }
        ResultLine::Header(h) => {
            let d = webgpu::check_header(&h, RunTarget::Webgpu.name(), tests).map_err(at)?;
            if read.device.as_ref().is_some_and(|first| *first != d) {
                return Err(at("the results of another device than the first file's: import each device under its own --name".into()));
            }
            read.device = Some(d);
            *header_seen = true;
            Ok(false)
        }
        _ if !*header_seen => Err(at(format!(
            "not a result file of the webgpu page: its first line must be the header (`{{\"axb\":\"{}\",...}}`)",
            webgpu::RESULT_FILE_KIND
        ))),
        ResultLine::Event(e) if e["event"] == "session" => {
            read.sessions.push(e);
            Ok(false)
        }
        ResultLine::Event(e) => {
            // The event and its message are the page's text (a browser's
            // error message): escaped, so that they cannot forge lines or
            // drive the terminal.
            eprintln!(
                "warning: {}:{}: the page reported {}: {}",
                printable(&here.0.display().to_string()),
                here.1,
                event_text(&e["event"]),
                e["message"]
                    .as_str()
                    .map_or("(no message)".into(), message)
            );
            read.events.push(e);
            Ok(false)
        }
        ResultLine::Run => Ok(true),
    }
}

/// The error of `--lines` files without a single run, naming the events a
/// webgpu page reported instead (a lost device is why a page ran nothing).
fn no_runs(args: &ImportArgs, events: &[Value]) -> Failure {
    let reported: Vec<String> = events
        .iter()
        .map(|e| {
            format!(
                "{}: {}",
                event_text(&e["event"]),
                message(e["message"].as_str().unwrap_or(""))
            )
        })
        .collect();
    input(format!(
        "no result lines in {}{}",
        args.lines
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        if reported.is_empty() {
            String::new()
        } else {
            format!(" (the page reported {})", reported.join("; "))
        }
    ))
}

/// Writes what was read as a campaign run here writes it: the journal
/// (campaign, one session, the runs), then the CSVs and device file from
/// the journal as read back, so that `backends report` sees what a run
/// would have left.
fn write_import(
    args: &ImportArgs,
    name: String,
    tests: &[NamedTest],
    journal_path: &Path,
    read: ReadRuns,
    imported_at: u64,
) -> Result<Summary, Failure> {
    let mappings: BTreeSet<Mapping> = read
        .runs
        .iter()
        .map(|r| r.mapping.parse().expect("checked above"))
        .collect();
    let mut campaign = json!({
        "name": name,
        "target": args.target.name(),
        "suite": suite_json(&args.suite),
        "tests": tests.len(),
        "imported_from": args.lines.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "mappings": mappings.iter().map(|m| m.name()).collect::<Vec<_>>(),
        "iterations": read.count.values().max(),
    });
    if args.target == RunTarget::Webgpu {
        // The page's own record of when it ran: what identifies this
        // campaign in the results database, whichever import brought it
        // (crate::report::db_campaign).
        let started = read
            .sessions
            .iter()
            .find_map(|s| s.get("at_unix_ms").and_then(|t| t.as_u64()));
        campaign["page"] = json!({"device": read.device, "started_unix_ms": started});
    } else {
        // What the runs were, not when or from where they were imported:
        // the results database's identity of this campaign.
        campaign["lines"] = lines_identity(&read.runs);
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| env(format!("{}: cannot create: {e}", args.out.display())))?;
    let mut writer = journal::Writer::create(journal_path, &campaign).map_err(env)?;
    writer
        .append(&Entry::Session(Session {
            started_unix_ms: imported_at,
        }))
        .map_err(env)?;
    let entries: Vec<Entry> = read.runs.into_iter().map(Entry::Result).collect();
    writer.append_all(&entries).map_err(env)?;
    let contents = journal::read(journal_path).map_err(input)?;
    let key = args.target.facts().imported_device;
    let mut description = json!({ "imported": true, key: read.device });
    if args.target == RunTarget::Webgpu {
        description["sessions"] = Value::Array(read.sessions);
        description["events"] = Value::Array(read.events);
    }
    let files = write_results(&args.out, args.target, &name, tests, &contents, description)?;
    drop(writer);
    Ok(Summary {
        warnings: timing::warnings(&name, &timing::per_mapping(&contents)),
        name,
        runs: contents.results().count(),
        non_terminating: contents.results().filter(|r| !r.terminated).count(),
        files,
    })
}

/// The content identity of imported runs: the SHA-256 of every run as
/// read (test, mapping, iteration, outcome, time, launch and the program's
/// own fields), one canonical JSON line each, in order, and their count.
/// An import is stamped with the time it was made, so without this the
/// same lines imported again (the same campaign's `import.sh` run twice)
/// would be a second campaign in the results database, counting every run
/// twice; with it the database knows them for one
/// (crate::report::db_campaign), from any path, at any time.
fn lines_identity(runs: &[RunRecord]) -> Value {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    for r in runs {
        // serde_json's objects keep their keys sorted: one text per run.
        let run = json!({
            "test": r.test,
            "mapping": r.mapping,
            "iteration": r.iteration,
            "terminated": r.terminated,
            "elapsed_ms": r.elapsed_ms,
            "instances": r.instances,
            "workgroups": r.workgroups,
            "extra": r.extra,
        });
        hash.update(run.to_string().as_bytes());
        hash.update(b"\n");
    }
    let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    json!({ "sha256": hex, "runs": runs.len() })
}

/// `backends import`.
pub fn main(args: &ImportArgs) -> ExitCode {
    summarise(
        if args.simt {
            Err(input(
                "--simt: run through `backends import`, which reads SIMT lines",
            ))
        } else {
            import(args)
        },
        args,
    )
}

/// The summary line of an import, plain or SIMT (stderr, or one JSON
/// object on stdout with `--format json`), and its exit status.
pub(crate) fn summarise(result: Result<Summary, Failure>, args: &ImportArgs) -> ExitCode {
    if let Ok(s) = &result {
        timing::print(&s.warnings);
    }
    finish(
        result,
        args.format,
        |s| {
            format!(
                "{}: imported {} runs, {} did not terminate; wrote {} files under {}",
                s.name,
                s.runs,
                s.non_terminating,
                s.files.len(),
                args.out.display()
            )
        },
        |s| {
            json!({
                "name": s.name,
                "runs": s.runs,
                "non_terminating": s.non_terminating,
                "warnings": s.warnings,
                "out": args.out.display().to_string(),
                "files": s.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            })
        },
    )
}
