//! The results site (issue 23 item 4): `backends site --db FILE --out DIR`
//! writes static HTML from the results database: `index.html` with the
//! device x model matrix, and `devices/<page>.html` per device ([`page_name`]) with its
//! chart of non-terminating tests (after the paper's Fig. 12) and the tests
//! that violate each model. Plain files with relative links and inline SVG,
//! no script: it works from `file://` and from any static host.

use crate::excerpt::markup;
use crate::glossary;
use crate::report::analysis::{self, Caveat, DeviceReport, Report, Row, Violation};
use crate::report::db::{self, CampaignInfo, DeviceInfo};
use crate::report::out_dir::{self, OutDir, WriteError};
use clap::Args;
use progress_litmus::exit::Failure;
use progress_litmus::Model;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct SiteArgs {
    /// The SQLite results database (`backends db import`).
    #[arg(long, value_name = "FILE")]
    pub db: PathBuf,
    /// The directory to write the site into (created; its `index.html`
    /// and `devices/` are replaced).
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
    /// The tests the runs are judged against, as for `backends report`
    /// (default: the 483 published tests).
    #[arg(long, value_name = "TESTS")]
    pub tests: Vec<PathBuf>,
    /// The test explorer page (`synth explorer SUITE -o FILE.html`) to link
    /// each violating test to, as `URL#test=NAME`: a URL, or a path
    /// relative to the site's directory (e.g. `explorer.html`).
    #[arg(long, value_name = "URL")]
    pub explorer: Option<String>,
}

const STYLE: &str =
    "body{font-family:sans-serif;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}
td.ok{background:#e6f4e6}td.bad{background:#fbe3e3}td.close{background:#fdf0d0}td.vac{color:#888}
dl.glossary dt{font-weight:bold;margin-top:.4em}svg{max-width:100%;height:auto}
div.wide{overflow-x:auto;max-width:100%}tr.gpu td{font-weight:bold;border-top:2px solid #888}tr.setup td:first-child{padding-left:1.5em}";

/// `backends site`: exit 0 with the site written, 2 for a bad database or
/// tests or a symbolic link (or another file) in the way below `-o`, 1
/// when a file cannot be written.
pub fn main(args: &SiteArgs) -> ExitCode {
    let (report, info, campaigns) = match gather(&args.db, &args.tests) {
        Ok(b) => b,
        Err(e) => return Failure::input(e).exit(),
    };
    match write(
        &report,
        &info,
        &campaigns,
        args.explorer.as_deref(),
        &args.out,
    ) {
        Ok(n) => {
            println!("{n} pages written under {}", out_dir::shown(&args.out));
            if let Some(w) = missing_explorer(args.explorer.as_deref(), &args.out) {
                eprintln!("warning: {}", crate::excerpt::printable(&w));
            }
            ExitCode::SUCCESS
        }
        Err(e) => Failure::new(e.exit_code(), e.message()).exit(),
    }
}

/// What a site shows: the report of database `db` (`tests`: `--tests`),
/// what is known of its devices, its campaigns.
pub type Gathered = (Report, BTreeMap<String, DeviceInfo>, Vec<CampaignInfo>);

/// Reads what the site of database `db` shows.
pub fn gather(db: &Path, tests: &[PathBuf]) -> Result<Gathered, String> {
    Ok((
        crate::report::build::report(&[], Some(db), tests)?,
        db::device_info(db)?,
        db::campaigns(db)?,
    ))
}

/// Writes the site; returns the number of pages. Every page is written
/// inside `out`, never through a symbolic link below it ([`OutDir`]).
pub fn write(
    report: &Report,
    info: &BTreeMap<String, DeviceInfo>,
    campaigns: &[CampaignInfo],
    explorer: Option<&str>,
    out: &Path,
) -> Result<usize, WriteError> {
    let mut taken: BTreeMap<String, &str> = BTreeMap::new();
    for d in &report.devices {
        if let Some(other) = taken.insert(page_name(&d.device), &d.device) {
            return Err(WriteError::Refused(format!(
                "devices {} and {} have the same page name {}: rename one",
                crate::excerpt::printable(other),
                crate::excerpt::printable(&d.device),
                page_name(&d.device)
            )));
        }
    }
    let pages: Vec<PathBuf> = std::iter::once(PathBuf::from("index.html"))
        .chain(
            taken
                .keys()
                .map(|p| Path::new("devices").join(format!("{p}.html"))),
        )
        .collect();
    let dir = OutDir::open(out, pages.iter().map(PathBuf::as_path), "site")?;
    dir.write(&pages[0], index(report, info, campaigns).as_bytes())?;
    for d in &report.devices {
        let page = Path::new("devices").join(format!("{}.html", page_name(&d.device)));
        let mine: Vec<CampaignInfo> = campaigns
            .iter()
            .filter(|c| c.read_as() == d.device)
            .cloned()
            .collect();
        let html = device_page(report, d, info.get(&d.device), &mine, explorer);
        dir.write(&page, html.as_bytes())?;
    }
    Ok(1 + report.devices.len())
}

/// The page file name (without `.html`) of a device: [`out_dir::stem`]
/// with lower-case letters, digits, `.`, `_` and `-` as its plain
/// characters. Names that differ only in other characters (`dev<1`, `dev
/// 1`, `dev_1`) or in case (for case-insensitive file systems) get
/// different pages.
pub fn page_name(name: &str) -> String {
    out_dir::stem(name, |c| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c)
    })
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head><body>\n<h1>{t}</h1>\n{body}<h2>Words</h2>\n{}</body></html>\n",
        glossary::html(),
        t = markup(title)
    )
}

/// What is known of a device, in one line.
fn describe(info: Option<&DeviceInfo>) -> String {
    let Some(i) = info else { return String::new() };
    [&i.vendor, &i.architecture, &i.driver, &i.host]
        .into_iter()
        .flatten()
        .map(|s| markup(s))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One cell of the matrix: the verdict with its counts. Violations that
/// are all qualified ([`analysis::Caveat`]) are not shown as plain
/// violations: all settled as slow runs, consistent; some too close to
/// call, amber, with the deadline figures of its mappings.
fn cell(d: &DeviceReport, i: usize) -> (&'static str, String) {
    let vs = &d.violations[i];
    let tests = analysis::distinct_tests(vs);
    let c = d.conformance[i];
    let plain: Vec<Violation> = vs.iter().filter(|v| v.caveat.is_none()).cloned().collect();
    let settled = vs
        .iter()
        .filter(|v| matches!(v.caveat, Some(Caveat::Settled(_))))
        .count();
    if c == 0 {
        ("vac", "nothing to judge".into())
    } else if tests == 0 {
        ("ok", format!("consistent 0/{c}"))
    } else if !plain.is_empty() {
        (
            "bad",
            format!("violated {}/{c}", analysis::distinct_tests(&plain)),
        )
    } else if settled == vs.len() {
        (
            "ok",
            format!("consistent 0/{c} ({tests} settled as slow runs)"),
        )
    } else {
        let figures: Vec<String> = d
            .close_calls
            .iter()
            .filter(|k| vs.iter().any(|v| v.mapping == k.mapping))
            .map(|k| {
                format!(
                    "{}: a run took {:.1} ms, runs stopped from {:.1} ms",
                    k.mapping.name(),
                    k.slowest_terminated_ms,
                    k.quickest_stopped_ms
                )
            })
            .collect();
        (
            "close",
            format!(
                "too close to call {tests}/{c} ({})",
                markup(&figures.join("; "))
            ),
        )
    }
}

/// What the device's campaigns record, one line each: date, driver,
/// deadline, runs per test, launch (`unknown` where not recorded).
fn campaigns_list(campaigns: &[CampaignInfo]) -> String {
    let mut b = String::from("<h2>Campaigns</h2>\n<ul id=\"campaigns\">\n");
    for c in campaigns {
        let _ = writeln!(b, "<li>{}</li>", markup(&c.summary()));
    }
    b.push_str("</ul>\n");
    b
}

/// When and how a device's data were measured, from its campaigns: the
/// UTC dates they started (or "date not recorded": the published
/// artifact's CSVs), the targets that ran them, how many campaigns.
fn measured(device: &str, campaigns: &[CampaignInfo]) -> String {
    let mine: Vec<&CampaignInfo> = campaigns.iter().filter(|c| c.read_as() == device).collect();
    let mut dates: Vec<String> = mine
        .iter()
        .filter_map(|c| {
            let d = c.started_utc.as_ref()?.chars().take(10).collect::<String>();
            Some(if c.imported {
                format!("{d} (imported)")
            } else {
                d
            })
        })
        .collect();
    dates.sort();
    dates.dedup();
    let mut targets: Vec<&str> = mine.iter().filter_map(|c| c.target.as_deref()).collect();
    targets.sort();
    targets.dedup();
    let when = match (dates.first(), dates.last()) {
        (Some(a), Some(b)) if a != b => format!("{a} to {b}"),
        (Some(a), _) => a.clone(),
        _ => "date not recorded".to_string(),
    };
    let how = if targets.is_empty() {
        "an unrecorded target".to_string()
    } else {
        targets.join(", ")
    };
    let n = mine.len();
    format!(
        "measured {when} with {how} ({n} campaign{})",
        if n == 1 { "" } else { "s" }
    )
}

fn index(
    report: &Report,
    info: &BTreeMap<String, DeviceInfo>,
    campaigns: &[CampaignInfo],
) -> String {
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<p>Which progress models each device's observed behaviour is consistent with: {} devices, judged against the verdicts of {} tests ({}). A physical GPU driven several ways (APIs, launches) is one bold row, combining its setups, each beneath it.</p>",
        report.devices.len(),
        report.tests,
        markup(&report.tests_source)
    );
    b.push_str("<p>Legend: <b>consistent 0/C</b>: none of the C conformance tests of the model that were run on the device ever hung; <b>violated k/C</b>: k of them hung at least once (the device does not give the model's guarantee); <b>too close to call k/C</b> (amber): the k hung only under mappings whose deadline was too close to call (a run that terminated took over half as long as the quickest stopped one), so the hangs may have been slow runs; <b>settled as slow runs</b>: every run of them terminated in a campaign of the device whose runs went on longer; <b>nothing to judge</b>: no conformance test of the model was run (consistent, vacuously). Hover a model name for its words.</p>\n");
    // Eleven model columns do not fit a narrow window: the matrix scrolls
    // sideways inside its box instead of running off the page.
    b.push_str("<div class=\"wide\"><table id=\"matrix\"><tr><th>device</th><th>what it is</th>");
    for m in Model::ALL {
        let _ = write!(
            b,
            "<th title=\"{}\">{}</th>",
            glossary::model_words(m.name()),
            m.name()
        );
    }
    b.push_str("</tr>\n");
    for row in report.rows() {
        let d = row.report();
        if let Row::Gpu(g) = &row {
            let _ = write!(
                b,
                "<tr class=\"gpu\"><td>{}</td><td>one GPU: its setups below, combined (violated where any setup violates)</td>",
                markup(&g.device)
            );
            matrix_cells(&mut b, g);
            continue;
        }
        let _ = write!(
            b,
            "<tr{}><td><a href=\"devices/{}.html\">{}</a></td><td>{}; {}</td>",
            if matches!(row, Row::Setup(_)) {
                " class=\"setup\""
            } else {
                ""
            },
            page_name(&d.device),
            markup(&d.device),
            describe(info.get(&d.device)),
            markup(&measured(&d.device, campaigns))
        );
        matrix_cells(&mut b, d);
    }
    b.push_str("</table></div>\n");
    page("Progress models per device", &b)
}

/// The model cells of one matrix row, and the row's end.
fn matrix_cells(b: &mut String, d: &DeviceReport) {
    for i in 0..Model::ALL.len() {
        let (class, text) = cell(d, i);
        let _ = write!(b, "<td class=\"{class}\">{text}</td>");
    }
    b.push_str("</tr>\n");
}

/// Why the site's test links will not resolve, if they will not: the
/// explorer given as a path relative to the site is not in its folder
/// (issue 44 item 6; a URL or an absolute path is the user's to serve).
fn missing_explorer(explorer: Option<&str>, out: &Path) -> Option<String> {
    let e = explorer?;
    if e.contains("://") || e.starts_with('/') || out.join(e).is_file() {
        return None;
    }
    Some(format!(
        "the explorer page `{e}` is not in {}: the site's test links will not resolve until it is; write it with `synth explorer SUITE... -o {}`",
        out_dir::shown(out),
        out_dir::shown(&out.join(e))
    ))
}

/// `test`, linked to its page in the explorer where there is one. The
/// device pages are one directory down: a relative explorer path gets `../`.
/// A `NAME@FINGERPRINT` test is not linked: the explorer's test of that
/// name is the other program.
fn test_link(test: &str, explorer: Option<&str>) -> String {
    let Some(e) = explorer.filter(|_| !test.contains('@')) else {
        return markup(test);
    };
    let base = if e.contains("://") || e.starts_with('/') {
        e.to_string()
    } else {
        format!("../{e}")
    };
    let enc: String = test
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    format!(
        "<a href=\"{}#test={enc}\">{}</a>",
        markup(&base),
        markup(test)
    )
}

fn device_page(
    report: &Report,
    d: &DeviceReport,
    info: Option<&DeviceInfo>,
    campaigns: &[CampaignInfo],
    explorer: Option<&str>,
) -> String {
    let mut b = String::from("<p><a href=\"../index.html\">all devices</a></p>\n");
    let _ = writeln!(
        b,
        "<p>{}</p><p>{} tests observed; {} (each campaign below).</p>",
        describe(info),
        d.observed,
        markup(&measured(&d.device, campaigns))
    );
    let one = Report {
        devices: vec![d.clone()],
        tests: report.tests,
        tests_source: report.tests_source.clone(),
    };
    b.push_str("<h2>Tests that did not always terminate, per mapping</h2>\n<p>Dark bars: tests that hung in every run; light bars: in some runs only (logarithmic axis).</p>\n");
    b.push_str(&crate::report::chart::svg(&one));
    b.push_str(&campaigns_list(campaigns));
    b.push_str("<h2>Verdicts</h2>\n<table id=\"verdicts\"><tr><th>model</th><th>in words</th><th>verdict</th><th>violating tests: mapping, k of n runs hung</th></tr>\n");
    for (i, m) in Model::ALL.iter().enumerate() {
        let (class, text) = cell(d, i);
        let list: Vec<String> = d.violations[i]
            .iter()
            .map(|v| {
                format!(
                    "{} ({}, {} of {}{})",
                    test_link(&v.test, explorer),
                    v.mapping.name(),
                    v.failed,
                    v.runs,
                    v.caveat
                        .as_ref()
                        .map_or(String::new(), |c| format!("; {}", markup(&c.words())))
                )
            })
            .collect();
        let _ = writeln!(
            b,
            "<tr><td>{}</td><td>{}</td><td class=\"{class}\">{text}</td><td>{}</td></tr>",
            m.name(),
            glossary::model_words(m.name()),
            list.join(", ")
        );
    }
    b.push_str("</table>\n");
    page(&d.device, &b)
}
