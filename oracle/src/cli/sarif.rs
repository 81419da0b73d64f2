//! SARIF 2.1.0 (the Static Analysis Results Interchange Format, an OASIS
//! standard: the JSON that code-review tools read, GitHub code scanning
//! among them) for `oracle check --format sarif` (issue 42 item 4).
//!
//! One run: the tool `oracle` with one rule per required model
//! (`progress/OBE`), one result per program not guaranteed to terminate
//! under one of them (level `error`, the plain sentence as its message,
//! the stuck instruction as its location, the witness schedule as its code
//! flow, each step a thread-flow location), and the inputs that could not
//! be read or decided as tool-execution notifications. A program whose
//! verdicts rest on sequentially consistent memory where the Vulkan
//! memory model sees a data race gets a result of level `warning` under
//! the rule `progress/data-race`, passing or not, so that a CI run shows
//! it. What GitHub
//! requires of a result is kept: a message text, a physical location with
//! a relative URI (or a `file` one) and a region with a start line, rules
//! with ids, thread-flow locations inline, partial fingerprints
//! (`oracle/tests/check.rs` checks the structure). The output is a
//! function of the findings alone: the same inputs give the same bytes.

use serde_json::{json, Value};
use std::path::{Component, Path};

/// The `$schema` of the log.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// A rule: one required model.
pub struct Rule {
    /// The model's canonical text (`OBE`, `OBE, subgroup=lockstep`).
    pub model: String,
}

impl Rule {
    /// `progress/OBE`, `progress/OBE,subgroup=lockstep`: the model's text
    /// without spaces.
    pub fn id(&self) -> String {
        format!("progress/{}", self.model.replace(' ', ""))
    }
}

/// A place in a file: its URI and a region (line, and column when known).
#[derive(Clone)]
pub struct Loc {
    pub uri: String,
    pub line: usize,
    pub col: Option<usize>,
}

/// One step of a witness schedule.
pub struct FlowStep {
    pub message: String,
    pub loc: Loc,
    /// The step's number, the fair sets before it, the state after it,
    /// and whether the repeated part starts there.
    pub properties: Value,
}

/// A program not guaranteed to terminate under a rule's model.
pub struct Finding {
    /// Index into the rules.
    pub rule: usize,
    pub message: String,
    pub loc: Loc,
    pub steps: Vec<FlowStep>,
    /// What else the result carries (test name, launch, deadlock).
    pub properties: Value,
}

/// A program whose verdicts were decided on sequentially consistent
/// memory although its accesses race in the Vulkan memory model.
pub struct Race {
    pub loc: Loc,
    /// The races, as the launch line names them.
    pub message: String,
}

/// The rule of [`Race`] results.
const RACE_RULE: &str = "progress/data-race";

fn race_rule_json() -> Value {
    json!({
        "id": RACE_RULE,
        "name": "DataRaceDecidedAsSequentiallyConsistent",
        "shortDescription": {"text": "Decided on sequentially consistent memory, but the accesses race"},
        "fullDescription": {"text": "The oracle decides termination on sequentially consistent memory. In the Vulkan memory model (which SPIR-V, GLSL and WGSL run under) these accesses race: a plain load a compiler may hoist out of a spin loop, or an atomic whose scope does not hold every invocation that accesses its memory. The verdicts rest on sequential consistency."},
        "help": {"text": "Make the accesses atomic with a scope that holds every invocation that accesses the memory (docs/KERNEL.md section 10.2, Races)."},
        "defaultConfiguration": {"level": "warning"},
    })
}

fn race_json(r: &Race) -> Value {
    json!({
        "ruleId": RACE_RULE,
        "level": "warning",
        "message": {"text": r.message},
        "locations": [location_json(&r.loc, None)],
        "partialFingerprints": {"oracleFinding/v1": fingerprint(&[RACE_RULE, &r.loc.uri, &r.message])},
    })
}

/// The log: rules, results (findings, then races), and the errors of
/// inputs that got no verdict.
pub fn log(rules: &[Rule], findings: &[Finding], races: &[Race], errors: &[String]) -> Value {
    let mut rules_json: Vec<Value> = rules.iter().map(rule_json).collect();
    if !races.is_empty() {
        rules_json.push(race_rule_json());
    }
    let mut results: Vec<Value> = findings
        .iter()
        .map(|f| result_json(f, &rules[f.rule]))
        .collect();
    results.extend(races.iter().map(race_json));
    let notes: Vec<Value> = errors
        .iter()
        .map(|e| json!({"level": "error", "message": {"text": e}}))
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "oracle",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules_json,
            }},
            "invocations": [{
                "executionSuccessful": errors.is_empty(),
                "toolExecutionNotifications": notes,
            }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

fn rule_json(r: &Rule) -> Value {
    let m = &r.model;
    json!({
        "id": r.id(),
        "name": format!("TerminationUnder{}", m.split(|c: char| !c.is_ascii_alphanumeric()).map(capitalised).collect::<String>()),
        "shortDescription": {"text": format!("Not guaranteed to terminate under {m}")},
        "fullDescription": {"text": format!(
            "Some schedule that the progress model {m} allows never lets this program finish: an invocation spins forever on memory that only unscheduled invocations would write, or waits at a barrier or collective that some invocation never reaches. Memory is sequentially consistent."
        )},
        "help": {"text": format!(
            "oracle check --require \"{m}\" decides whether every schedule that the progress model {m} allows terminates (docs/KERNEL.md, sections 3, 4 and 10). The message says which invocation waits where, for what, and why the model lets it wait forever; the code flow is the witness schedule (`oracle explain --model \"{m}\" FILE` shows it with the program and every state). Fix the program, or require a model that guarantees the invocations it waits for."
        )},
        "defaultConfiguration": {"level": "error"},
        "properties": {"model": m},
    })
}

/// `OBE` -> `OBE`, `subgroup` -> `Subgroup`.
fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn location_json(l: &Loc, message: Option<&str>) -> Value {
    let mut region = json!({"startLine": l.line});
    if let Some(c) = l.col {
        region["startColumn"] = c.into();
    }
    let mut v = json!({"physicalLocation": {
        "artifactLocation": {"uri": l.uri},
        "region": region,
    }});
    if let Some(m) = message {
        v["message"] = json!({ "text": m });
    }
    v
}

fn result_json(f: &Finding, rule: &Rule) -> Value {
    let steps: Vec<Value> = f
        .steps
        .iter()
        .map(|s| {
            json!({
                "location": location_json(&s.loc, Some(&s.message)),
                "properties": s.properties,
            })
        })
        .collect();
    json!({
        "ruleId": rule.id(),
        "level": "error",
        "message": {"text": f.message},
        "locations": [location_json(&f.loc, None)],
        "codeFlows": [{
            "message": {"text": format!("A schedule that {} allows and that never finishes", rule.model)},
            "threadFlows": [{"locations": steps}],
        }],
        "partialFingerprints": {"oracleFinding/v1": fingerprint(&[&rule.id(), &f.loc.uri, &f.message])},
        "properties": f.properties,
    })
}

/// A stable hash of the parts (64-bit FNV-1a, hexadecimal): the same
/// finding gets the same fingerprint run after run.
fn fingerprint(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// A path as a SARIF artifact URI: relative paths as given (forward
/// slashes, `.` components dropped), absolute ones relative to the
/// working directory when inside it, else a `file://` URI; every byte but
/// the unreserved characters of RFC 3986 and `/` percent-encoded.
pub fn uri(path: &Path) -> String {
    let inside = relative_to_cwd(path);
    let rel = inside.as_deref().unwrap_or(path);
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => parts.push(String::new()),
            Component::ParentDir => parts.push("..".into()),
            Component::Normal(s) => parts.push(encode(s.as_encoded_bytes())),
        }
    }
    let joined = parts.join("/");
    if rel.is_absolute() {
        format!("file://{joined}")
    } else {
        joined
    }
}

/// An absolute `path` inside the working directory, relative to it: as
/// given, else with both resolved (symbolic links, `..`), as a path
/// through a link to the checkout is.
fn relative_to_cwd(path: &Path) -> Option<std::path::PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    if let Ok(r) = path.strip_prefix(&cwd) {
        if !r.components().any(|c| c == Component::ParentDir) {
            return Some(r.to_path_buf());
        }
    }
    let (p, c) = (path.canonicalize().ok()?, cwd.canonicalize().ok()?);
    p.strip_prefix(c).ok().map(Path::to_path_buf)
}

/// Percent-encodes every byte but `A-Z a-z 0-9 - . _ ~`.
fn encode(bytes: &[u8]) -> String {
    let mut out = String::new();
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_forward_slashed_and_escaped() {
        assert_eq!(uri(Path::new("shaders/spin.wgsl")), "shaders/spin.wgsl");
        assert_eq!(uri(Path::new("./a b/c#1.wgsl")), "a%20b/c%231.wgsl");
        assert_eq!(uri(Path::new("../x/ü.comp")), "../x/%C3%BC.comp");
        // Untrusted names: quotes, line breaks, escapes, `%`, `?`.
        assert_eq!(
            uri(Path::new("d\"q/a\nb\u{1b}[1m%?.wgsl")),
            "d%22q/a%0Ab%1B%5B1m%25%3F.wgsl"
        );
        assert_eq!(
            uri(Path::new("/nowhere/x y.wgsl")),
            "file:///nowhere/x%20y.wgsl"
        );
        let here = std::env::current_dir().unwrap().join("in/here.wgsl");
        assert_eq!(uri(&here), "in/here.wgsl");
        // An existing file through `..`: resolved into the working
        // directory.
        let cwd = std::env::current_dir().unwrap();
        let name = cwd.file_name().unwrap().to_str().unwrap();
        let round = cwd.join("..").join(name).join("Cargo.toml");
        assert_eq!(uri(&round), "Cargo.toml");
    }

    #[test]
    fn rule_ids_are_the_models_without_spaces() {
        let r = Rule {
            model: "OBE, subgroup=lockstep".into(),
        };
        assert_eq!(r.id(), "progress/OBE,subgroup=lockstep");
        assert_eq!(fingerprint(&["a", "b"]), fingerprint(&["a", "b"]));
        assert_ne!(fingerprint(&["ab", ""]), fingerprint(&["a", "b"]));
    }
}
