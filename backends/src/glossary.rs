//! The words a newcomer meets in reports, on the results site and on the
//! WebGPU page, one sentence each (issue 23 item 5), kept in one place so
//! that every page and `--help` say the same thing.

/// `(term, one sentence)`, in the order a reader needs them.
pub const TERMS: [(&str, &str); 14] = [
    ("progress model", "What a GPU's scheduler promises about which threads (workgroups) keep getting to run; a test that needs more than the promise may hang."),
    ("HSA", "Only the lowest-numbered thread that has not finished is guaranteed to keep running (the Heterogeneous System Architecture's rule)."),
    ("OBE", "Occupancy-bound execution: a thread that has run once is guaranteed to keep running until it finishes."),
    ("HSA+OBE", "Both guarantees at once: the lowest-numbered unfinished thread, and every thread that has started."),
    ("LOBE", "Linear OBE: once a thread has run, it and every lower-numbered thread are guaranteed to keep running."),
    ("fair", "Every unfinished thread is guaranteed to keep running (what a CPU's OS scheduler gives)."),
    ("weak fairness", "A guaranteed thread gets infinitely many steps, nothing more: a test may hang if some endless schedule gives every guaranteed thread steps."),
    ("strong fairness", "Stronger: whatever state is reached, if the guaranteed threads can still bring the test to its end, they eventually do."),
    ("unfair", "No thread is guaranteed anything: any loop may run forever, so every test here may hang."),
    ("plain, round-robin, chunked", "How copies of a test are laid out on workgroups: plain runs one copy; round-robin puts each copy's threads side by side; chunked puts every copy's thread 0 first, then every thread 1, which starves higher-numbered threads under LOBE-like schedulers."),
    ("conformance test", "A test that terminates under the model (verdict P): a device consistent with the model never hangs on it, so one hang is a violation. All of a suite's make the model's conformance list (synth suites: conformance/MODEL.txt)."),
    ("distinguishing test", "A conformance test of this model that hangs under every model before it in the order HSA, OBE, LOBE, fair (same fairness): it tells this model apart from them. The paper's Table 4 counts them (bucket D)."),
    ("NAME@FINGERPRINT", "A test whose name means two programs in these results (suites reuse names): the published test keeps its plain name, the other is shown with the first 8 hex digits of its program's fingerprint."),
    ("k of n runs", "The test hung in k of the n runs made; n of n means it hung every time, fewer means it hangs only sometimes."),
];

/// The terms as an HTML definition list (for the site and the page).
pub fn html() -> String {
    let mut out = String::from("<dl class=\"glossary\">\n");
    for (t, d) in TERMS {
        out.push_str(&format!("<dt>{t}</dt><dd>{d}</dd>\n"));
    }
    out.push_str("</dl>\n");
    out
}

/// The terms as plain text, for `--help`.
pub fn text() -> String {
    TERMS
        .iter()
        .map(|(t, d)| format!("  {t}: {d}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The model names of reports (`HSA`, `WEAK_FAIR`, ...) in words.
pub fn model_words(name: &str) -> String {
    let strong = name.ends_with("_STRONG") || name == "STRONG_FAIR";
    let base = match name {
        "WEAK_FAIR" | "STRONG_FAIR" => "fair",
        "UNFAIR" => return "unfair".into(),
        n => n.trim_end_matches("_STRONG"),
    };
    let base = if base == "HSA_OBE" { "HSA+OBE" } else { base };
    format!(
        "{base}, {} fairness",
        if strong { "strong" } else { "weak" }
    )
}

/// The exit statuses, as every `--help` of `backends` shows them (in the
/// form of every tool's, [`progress_litmus::error::exit_status_help`]),
/// and where messages and data go. Here, in the shared ground, so that
/// the subcommands defined in the library parts (`db`, `site`) show it
/// too.
pub fn exit_status() -> String {
    format!(
        "{} Errors are one `error:` line per problem on stderr, naming the file and line where there is one; progress and status go to stderr, data (`--format json`, `report`, `emit -o -`) to stdout.",
        progress_litmus::error::exit_status_help(
            "arguments, test files, suites, journals, result files",
            "a missing or failing compiler, device or program, a file that cannot be written",
        )
    )
}
